//! `memctl copy` handed to real LangGraph: for every thread of the fixtures (both SqliteSaver
//! generations, DeltaChannel threads, an encrypted file copied without its key), the copy's
//! `get_state_history` equals the source's at every checkpoint (messages, values, next, tasks,
//! interrupts, subgraph states, metadata but `thread_id`), a fork's `get_state` equals the
//! source's at `--at`, and the app continues the copy as it continues the source (the fake
//! model receives the same history). Also bad input: one line, non-zero, nothing written.

mod common;
mod copy_common;

use std::path::Path;

use common::{expected, fixture, run_parallel, s, temp_copy, Harness};
use copy_common::{memctl_ok, same, thread_ids as threads_of};
use serde_json::Value as Json;

/// One fixture: its file, the venv that reads it, the key its app sets, and the graph of a
/// thread.
struct Fixture {
    file: &'static str,
    gen: &'static str,
    key: Option<String>,
    graph: fn(&str) -> String,
}

fn fixtures() -> Vec<Fixture> {
    let key = expected("encrypted-new")["encryption"]["key"]
        .as_str()
        .map(str::to_owned);
    vec![
        Fixture {
            file: "new.sqlite",
            gen: "new",
            key: None,
            graph: |t| t.to_owned(),
        },
        Fixture {
            file: "old.sqlite",
            gen: "old",
            key: None,
            graph: |t| t.to_owned(),
        },
        Fixture {
            file: "delta.sqlite",
            gen: "new",
            key: None,
            graph: |t| format!("delta:{t}"),
        },
        Fixture {
            file: "encrypted-new.sqlite",
            gen: "new",
            key,
            graph: |t| t.to_owned(),
        },
    ]
}

/// harness.py `history`: what LangGraph shows of `thread` in `db` (with `get_state` at `at`).
fn history(f: &Fixture, db: &Path, thread: &str, at: Option<&str>) -> Result<Json, String> {
    let graph = (f.graph)(thread.split('~').next().unwrap_or(thread));
    let mut args = vec![
        "history",
        "--db",
        s(db),
        "--thread",
        thread,
        "--graph",
        &graph,
    ];
    if let Some(at) = at {
        args.extend(["--at", at]);
    }
    Harness::new(f.gen, "harness.py")
        .env("LANGGRAPH_AES_KEY", f.key.as_deref())
        .run(&args)
        .json()
}

/// harness.py `continue` (on a copy of `db`): what the fake model received.
fn carry_on(f: &Fixture, db: &Path, thread: &str) -> Result<Json, String> {
    let graph = (f.graph)(thread.split('~').next().unwrap_or(thread));
    let r = Harness::new(f.gen, "harness.py")
        .env("LANGGRAPH_AES_KEY", f.key.as_deref())
        .run(&[
            "continue",
            "--db",
            s(db),
            "--thread",
            thread,
            "--graph",
            &graph,
            "--copy",
        ])
        .json()?;
    Ok(r["model_received"].clone())
}

/// `j` with the ids of messages a graph makes anew on every run (a summary's `uuid4`) blanked.
fn without_random_ids(mut j: Json) -> Json {
    fn random(id: &str) -> bool {
        id.len() == 36
            && id.as_bytes().get(14) == Some(&b'4')
            && id.chars().filter(|c| *c == '-').count() == 4
    }
    fn strip(j: &mut Json) {
        match j {
            Json::Object(o) => {
                if let Some(Json::String(id)) = o.get_mut("id") {
                    if random(id) {
                        *id = "<random>".into();
                    }
                }
                o.values_mut().for_each(strip);
            }
            Json::Array(a) => a.iter_mut().for_each(strip),
            _ => {}
        }
    }
    strip(&mut j);
    j
}

fn copy(db: &Path, args: &[&str]) -> Result<(), String> {
    memctl_ok(&[&["copy", "--db", s(db)], args].concat(), None).map(drop)
}

#[test]
#[cfg_attr(
    not(feature = "env-tests"),
    ignore = "needs scripts/test.sh's environment (--features env-tests)"
)]
fn every_copied_thread_is_the_same_thread_to_langgraph() {
    let mut cases = Vec::new();
    for (i, f) in fixtures().into_iter().enumerate() {
        let f = std::sync::Arc::new(f);
        let (dir, db) = temp_copy(&fixture(f.file));
        let dir = std::sync::Arc::new(dir);
        for thread in threads_of(&db) {
            cases.push((i, f.clone(), dir.clone(), db.clone(), thread));
        }
    }
    assert!(cases.len() >= 30, "the fixtures' threads: {}", cases.len());
    // The copies into the same file go first, one at a time (one writer per file).
    for (_, _, _, db, thread) in &cases {
        copy(
            db,
            &["--thread", thread, "--to-thread", &format!("{thread}~copy")],
        )
        .unwrap_or_else(|e| panic!("{e}"));
    }
    run_parallel(cases, |(i, f, dir, db, thread)| {
        let src = history(&f, &db, &thread, None)?;
        let copied = history(&f, &db, &format!("{thread}~copy"), None)?;
        same(
            &format!("{} '{thread}' (same file)", f.file),
            src.clone(),
            copied,
        )?;
        // Into a new file: SqliteSaver's layout, the same id.
        let other = dir.path().join(format!(
            "other-{i}-{}.sqlite",
            thread.replace(|c: char| !c.is_ascii_alphanumeric(), "_")
        ));
        copy(&db, &["--thread", &thread, "--to", s(&other)])?;
        let moved = history(&f, &other, &thread, None)?;
        same(&format!("{} '{thread}' (new file)", f.file), src, moved)?;
        // The app continues the copy as it continues the source (old.sqlite's graphs are
        // new.sqlite's: continued there).
        if f.gen == "old" {
            return Ok(());
        }
        let a = without_random_ids(carry_on(&f, &db, &thread)?);
        let b = without_random_ids(carry_on(&f, &db, &format!("{thread}~copy"))?);
        same(&format!("{} '{thread}' continued", f.file), a, b)
    });
}

#[test]
#[cfg_attr(
    not(feature = "env-tests"),
    ignore = "needs scripts/test.sh's environment (--features env-tests)"
)]
fn a_fork_is_the_source_at_its_checkpoint() {
    let f = &fixtures()[0];
    let (_dir, db) = temp_copy(&fixture(f.file));
    let mut cases = Vec::new();
    for thread in ["tools", "subgraph", "interrupt", "summarized"] {
        let src = history(f, &db, thread, None).expect("history");
        let ids: Vec<String> = src["history"]
            .as_array()
            .expect("history")
            .iter()
            .filter_map(|h| h["checkpoint_id"].as_str().map(str::to_owned))
            .collect();
        assert!(ids.len() >= 3, "{thread}: {} checkpoints", ids.len());
        // A middle checkpoint and the first one.
        for (n, at) in [ids[ids.len() / 2].clone(), ids[ids.len() - 1].clone()]
            .into_iter()
            .enumerate()
        {
            let fork = format!("{thread}~fork{n}");
            copy(
                &db,
                &["--thread", thread, "--to-thread", &fork, "--at", &at],
            )
            .unwrap_or_else(|e| panic!("{e}"));
            cases.push((thread, fork, at));
        }
    }
    run_parallel(cases, |(thread, fork, at)| {
        let src = history(f, &db, thread, Some(&at))?;
        // Read as the source is read at `at`: with the checkpoint id in the config (LangGraph
        // applies the pending writes of the latest checkpoint only when none is given).
        let forked = history(f, &db, &fork, Some(&at))?;
        same(
            &format!("fork of '{thread}' at {at}"),
            src["state"].clone(),
            forked["state"].clone(),
        )?;
        // The fork's history is the source's from `at` back.
        let back: Vec<Json> = src["history"]
            .as_array()
            .cloned()
            .unwrap_or_default()
            .into_iter()
            .skip_while(|h| h["checkpoint_id"] != at.as_str())
            .collect();
        same(
            &format!("history of the fork of '{thread}' at {at}"),
            Json::Array(back),
            forked["history"].clone(),
        )
    });
}

fn export(db: &Path, args: &[&str]) -> Result<(), String> {
    memctl_ok(&[&["export", "--db", s(db)], args].concat(), None).map(drop)
}

/// `j` without the token estimates (a redacted text has another length).
fn without_token_counts(mut j: Json) -> Json {
    fn strip(j: &mut Json) {
        match j {
            Json::Object(o) => {
                o.remove("tokens_approx");
                o.values_mut().for_each(strip);
            }
            Json::Array(a) => a.iter_mut().for_each(strip),
            _ => {}
        }
    }
    strip(&mut j);
    j
}

#[test]
#[cfg_attr(
    not(feature = "env-tests"),
    ignore = "needs scripts/test.sh's environment (--features env-tests)"
)]
fn an_export_is_every_thread_to_langgraph_and_it_continues() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut cases = Vec::new();
    for (i, f) in fixtures().into_iter().enumerate() {
        let f = std::sync::Arc::new(f);
        let src = fixture(f.file);
        let archive = dir.path().join(format!("export-{i}.sqlite"));
        export(&src, &["--all", "-o", s(&archive)]).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(threads_of(&archive), threads_of(&src), "{}", f.file);
        for thread in threads_of(&src) {
            cases.push((f.clone(), src.clone(), archive.clone(), thread));
        }
    }
    run_parallel(cases, |(f, src, archive, thread)| {
        let a = history(&f, &src, &thread, None)?;
        let b = history(&f, &archive, &thread, None)?;
        same(&format!("{} '{thread}' exported", f.file), a, b)?;
        if f.gen == "old" {
            return Ok(());
        }
        let a = without_random_ids(carry_on(&f, &src, &thread)?);
        let b = without_random_ids(carry_on(&f, &archive, &thread)?);
        same(&format!("{} '{thread}' exported, continued", f.file), a, b)
    });
}

#[test]
#[cfg_attr(
    not(feature = "env-tests"),
    ignore = "needs scripts/test.sh's environment (--features env-tests)"
)]
fn a_redacted_export_is_the_thread_redacted_to_langgraph() {
    // A plain file, and an encrypted one (opened, redacted and sealed again with its key).
    let all = fixtures();
    let dir = tempfile::tempdir().expect("tempdir");
    let threads = ["tools", "subgraph", "unicode"];
    let mut cases = Vec::new();
    for (i, f) in [&all[0], &all[3]].into_iter().enumerate() {
        let src = fixture(f.file);
        let archive = dir.path().join(format!("redacted-{i}.sqlite"));
        let mut args = vec![
            "export",
            "--db",
            s(&src),
            "-o",
            s(&archive),
            "--redact",
            "Paris|Berlin",
            "--redact",
            "sunny",
        ];
        for t in threads {
            args.extend(["--thread", t]);
        }
        memctl_ok(&args, f.key.as_deref()).unwrap_or_else(|e| panic!("{e}"));
        for t in threads {
            cases.push((f, src.clone(), archive.clone(), t));
        }
    }
    // What LangGraph shows of the source, with every match replaced as the export replaces it.
    let redacted = |j: Json| -> Json {
        let text = j.to_string();
        let text = ["Paris", "Berlin", "sunny"]
            .iter()
            .fold(text, |t, s| t.replace(s, "[erased]"));
        serde_json::from_str(&text).expect("JSON")
    };
    run_parallel(cases, |(f, src, archive, thread)| {
        let a = history(f, &src, thread, None)?;
        if thread == "tools" && !a.to_string().contains("sunny") {
            return Err(format!("{}: the source has no match to redact", f.file));
        }
        let b = history(f, &archive, thread, None)?;
        same(
            &format!("{} '{thread}' redacted", f.file),
            without_token_counts(redacted(a)),
            without_token_counts(b),
        )?;
        // The app continues it: the model receives the same history, redacted.
        let a = without_random_ids(carry_on(f, &src, thread)?);
        let b = without_random_ids(carry_on(f, &archive, thread)?);
        same(
            &format!("{} '{thread}' redacted, continued", f.file),
            redacted(a),
            b,
        )
    });
}
