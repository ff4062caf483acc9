//! `memctl copy` handed to real LangGraph: for every thread of the fixtures (both SqliteSaver
//! generations, DeltaChannel threads with version bumps and subgraphs, encrypted files of both
//! generations and a mixed one copied without their key, a LangGraph.js file), the copy's
//! `get_state_history` equals the source's at every checkpoint (messages, values, next, tasks,
//! interrupts, subgraph states, metadata but `thread_id`), a fork's `get_state` equals the
//! source's at `--at`, and the app continues the copy as it continues the source (the fake
//! model receives the same history). Also bad input: one line, non-zero, nothing written.

mod common;
mod copy_common;

use std::path::Path;

use common::{expected, fixture, run_parallel, s, temp_copy, Harness};
use copy_common::{
    js_states, memctl_env, memctl_ok, same, thread_ids as threads_of, value_types,
    without_delta_counters,
};
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

/// The fixtures the first copies were not tested on: DeltaChannel threads with snapshot
/// version bumps and subgraphs, the 2.x encrypted file and the mixed one.
fn more_fixtures() -> Vec<Fixture> {
    vec![
        Fixture {
            file: "delta-bump.sqlite",
            gen: "new",
            key: None,
            graph: |t| format!("delta:{t}"),
        },
        Fixture {
            file: "delta-subgraph.sqlite",
            gen: "new",
            key: None,
            graph: |t| format!("delta:{t}"),
        },
        Fixture {
            file: "encrypted-old.sqlite",
            gen: "old",
            key: key_of("encrypted-old"),
            graph: |t| t.to_owned(),
        },
        Fixture {
            file: "encrypted-mixed.sqlite",
            gen: "new",
            key: key_of("encrypted-mixed"),
            graph: |t| t.to_owned(),
        },
    ]
}

/// The AES key of an encrypted fixture (test data, in its expectations).
fn key_of(name: &str) -> Option<String> {
    expected(name)["encryption"]["key"]
        .as_str()
        .map(str::to_owned)
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

/// `j` with the ids of messages a graph makes anew on every run (a summary's `uuid4`, a
/// model's run id) blanked.
fn without_random_ids(mut j: Json) -> Json {
    fn random(id: &str) -> bool {
        // A model's run id (`lc_run--<uuid7>`), made anew on every run, or a uuid4.
        id.starts_with("lc_run--")
            || id.len() == 36
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
    copied_threads_are_the_same_threads(fixtures(), 30);
}

#[test]
#[cfg_attr(
    not(feature = "env-tests"),
    ignore = "needs scripts/test.sh's environment (--features env-tests)"
)]
fn more_copied_threads_are_the_same_threads_to_langgraph() {
    copied_threads_are_the_same_threads(more_fixtures(), 20);
}

/// Every thread of `fixtures` (at least `min` of them) copied into the same file and into a
/// new one: LangGraph reads each copy as the source, and the app continues it alike.
fn copied_threads_are_the_same_threads(fixtures: Vec<Fixture>, min: usize) {
    let mut cases = Vec::new();
    for (i, f) in fixtures.into_iter().enumerate() {
        let f = std::sync::Arc::new(f);
        let (dir, db) = temp_copy(&fixture(f.file));
        let dir = std::sync::Arc::new(dir);
        for thread in threads_of(&db) {
            cases.push((i, f.clone(), dir.clone(), db.clone(), thread));
        }
    }
    assert!(cases.len() >= min, "the fixtures' threads: {}", cases.len());
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
            // Overlapping patterns, the shorter first: the whole stretch goes (#43).
            "--redact",
            "sunny",
            "--redact",
            r"sunny and \d+°C",
        ];
        for t in threads {
            args.extend(["--thread", t]);
        }
        memctl_ok(&args, f.key.as_deref()).unwrap_or_else(|e| panic!("{e}"));
        for t in threads {
            cases.push((f, src.clone(), archive.clone(), t));
        }
    }
    // What LangGraph shows of the source, with every match replaced as the export replaces it
    // (the union of the patterns' matches: `sunny and 21°C` whole).
    let redacted = |j: Json| -> Json {
        let text = j.to_string();
        let text = ["sunny and 21°C", "Paris", "Berlin", "sunny"]
            .iter()
            .fold(text, |t, s| t.replace(s, "[erased]"));
        serde_json::from_str(&text).expect("JSON")
    };
    run_parallel(cases, |(f, src, archive, thread)| {
        let a = history(f, &src, thread, None)?;
        if thread == "tools" && !a.to_string().contains("sunny and 21°C") {
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

/// harness.py `history` of `thread` in `db` read by graph `graph` (new generation, no key).
fn history_graph(db: &Path, thread: &str, graph: &str) -> Result<Json, String> {
    Harness::new("new", "harness.py")
        .run(&[
            "history",
            "--db",
            s(db),
            "--thread",
            thread,
            "--graph",
            graph,
        ])
        .json()
}

/// harness.py `continue` (on a copy of `db`) with graph `graph`: what the fake model received.
fn carry_on_graph(db: &Path, thread: &str, graph: &str) -> Result<Json, String> {
    let r = Harness::new("new", "harness.py")
        .run(&[
            "continue",
            "--db",
            s(db),
            "--thread",
            thread,
            "--graph",
            graph,
            "--copy",
        ])
        .json()?;
    Ok(without_random_ids(r["model_received"].clone()))
}

/// harness.py `plain-check`: what of `thread` in `db` only a DeltaChannel graph reads (a
/// `_DeltaSnapshot`, a DeltaChannel left out, DeltaChannel counters in the metadata).
fn not_plain(db: &Path, thread: &str) -> Result<Vec<String>, String> {
    let r = Harness::new("new", "harness.py")
        .run(&[
            "plain-check",
            "--db",
            s(db),
            "--thread",
            thread,
            "--channels",
            "messages,files",
        ])
        .json()?;
    if r["checkpoints"].as_u64().unwrap_or(0) == 0 {
        return Err(format!("{}: no checkpoint of '{thread}'", db.display()));
    }
    Ok(r["problems"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|p| p.as_str().unwrap_or_default().to_owned())
        .collect())
}

/// The bytes of a thread's checkpoints in a SQLite file.
fn checkpoint_bytes(db: &Path, thread: &str) -> i64 {
    let c = rusqlite::Connection::open_with_flags(db, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)
        .expect("opens");
    c.query_row(
        "SELECT sum(length(checkpoint)) FROM checkpoints WHERE thread_id = ?",
        [thread],
        |r| r.get(0),
    )
    .expect("sums")
}

#[test]
#[cfg_attr(
    not(feature = "env-tests"),
    ignore = "needs scripts/test.sh's environment (--features env-tests)"
)]
fn a_materialized_delta_thread_is_a_plain_thread_langgraph_reads_the_same() {
    let dir = tempfile::tempdir().expect("tempdir");
    let delta = |t: &str| format!("delta:{t}");
    let mut cases = Vec::new();
    for (i, file) in ["delta.sqlite", "delta-bump.sqlite", "delta-subgraph.sqlite"]
        .into_iter()
        .enumerate()
    {
        let src = fixture(file);
        let target = dir.path().join(format!("plain-{i}.sqlite"));
        for thread in threads_of(&src) {
            let args = [
                "copy",
                "--db",
                s(&src),
                "--thread",
                &thread,
                "--to",
                s(&target),
                "--materialize",
            ];
            if thread == "notes" {
                // A DeltaChannel whose reducer memctl does not know: refused, nothing written.
                let before = target.exists().then(|| threads_of(&target));
                let e = memctl_ok(&args, None).expect_err("refused");
                assert!(e.contains("reducer memctl does not know"), "{e}");
                assert_eq!(e.trim().lines().count(), 1, "one line: {e}");
                assert_eq!(target.exists().then(|| threads_of(&target)), before);
                continue;
            }
            memctl_ok(&args, None).unwrap_or_else(|e| panic!("{e}"));
            cases.push((src.clone(), target.clone(), thread));
        }
    }
    assert!(cases.len() >= 10, "{} threads", cases.len());
    run_parallel(cases, |(src, target, thread)| {
        // The source is a DeltaChannel thread; the copy holds every value, snapshot-free.
        if not_plain(&src, &thread)?.is_empty() {
            return Err(format!("'{thread}': the source has nothing to materialize"));
        }
        let left = not_plain(&target, &thread)?;
        if !left.is_empty() {
            return Err(format!("'{thread}' materialized: {left:?}"));
        }
        if checkpoint_bytes(&target, &thread) <= checkpoint_bytes(&src, &thread) {
            return Err(format!("'{thread}': the materialized copy is not bigger"));
        }
        // get_state at every checkpoint (every namespace) of the copy: what the app (its
        // DeltaChannel graph) and the same graph with plain reducer channels read is what the
        // app reads of the source.
        let a = without_delta_counters(history_graph(&src, &thread, &delta(&thread))?);
        for graph in [delta(&thread), format!("plain:{}", delta(&thread))] {
            let b = without_delta_counters(history_graph(&target, &thread, &graph)?);
            same(
                &format!("'{thread}' materialized, read by {graph}"),
                a.clone(),
                b,
            )?;
        }
        // The app continues it as it continues the source.
        let c = carry_on_graph(&src, &thread, &delta(&thread))?;
        let d = carry_on_graph(&target, &thread, &delta(&thread))?;
        same(&format!("'{thread}' materialized, continued"), c, d)
    });
}

#[test]
#[cfg_attr(
    not(feature = "env-tests"),
    ignore = "needs scripts/test.sh's environment (--features env-tests)"
)]
fn a_materialized_fork_and_migration_are_the_source_to_langgraph() {
    let (dir, src) = temp_copy(&fixture("delta.sqlite"));
    let a = history_graph(&src, "1", "delta:1").expect("history");
    let ids: Vec<String> = a["history"]
        .as_array()
        .expect("history")
        .iter()
        .filter_map(|h| h["checkpoint_id"].as_str().map(str::to_owned))
        .collect();
    let at = ids[ids.len() / 2].clone();
    let fork = dir.path().join("fork.sqlite");
    memctl_ok(
        &[
            "copy",
            "--db",
            s(&src),
            "--thread",
            "1",
            "--to",
            s(&fork),
            "--at",
            &at,
            "--materialize",
        ],
        None,
    )
    .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(not_plain(&fork, "1").expect("checks"), Vec::<String>::new());
    let harness = |db: &Path, graph: &str| {
        Harness::new("new", "harness.py")
            .run(&[
                "history",
                "--db",
                s(db),
                "--thread",
                "1",
                "--graph",
                graph,
                "--at",
                &at,
            ])
            .json()
            .map(without_delta_counters)
            .unwrap_or_else(|e| panic!("{e}"))
    };
    let src_at = harness(&src, "delta:1");
    for graph in ["delta:1", "plain:delta:1"] {
        same(
            &format!("materialized fork at {at}, read by {graph}"),
            src_at["state"].clone(),
            harness(&fork, graph)["state"].clone(),
        )
        .unwrap_or_else(|e| panic!("{e}"));
    }
    // migrate --materialize: every thread plain, and a second run finds them there and equal.
    let (_d, bump) = temp_copy(&fixture("delta-bump.sqlite"));
    let target = dir.path().join("migrated.sqlite");
    let migrate = || -> Json {
        let out = memctl_ok(
            &[
                "migrate",
                "--db",
                s(&bump),
                "--to",
                s(&target),
                "--materialize",
                "--format",
                "json",
            ],
            None,
        )
        .unwrap_or_else(|e| panic!("{e}"));
        serde_json::from_str(&out).expect("JSON")
    };
    let first = migrate();
    assert_eq!(first["totals"]["copied"], 2, "{first}");
    assert!(
        first["threads"][0]["materialized"].as_u64() > Some(0),
        "{first}"
    );
    let again = migrate();
    assert_eq!(again["totals"]["skipped"], 2, "{again}");
    for thread in threads_of(&bump) {
        assert_eq!(
            not_plain(&target, &thread).expect("checks"),
            Vec::<String>::new()
        );
        let graph = format!("delta:{thread}");
        same(
            &format!("'{thread}' migrated, materialized"),
            without_delta_counters(history_graph(&bump, &thread, &graph).expect("history")),
            without_delta_counters(
                history_graph(&target, &thread, &format!("plain:{graph}")).expect("history"),
            ),
        )
        .unwrap_or_else(|e| panic!("{e}"));
    }
}

/// What LangGraph (the fixture's generation) shows of `thread` in `db` with `key` (none: a
/// plain serializer).
fn history_keyed(f: &Fixture, db: &Path, thread: &str, key: Option<&str>) -> Result<Json, String> {
    let graph = (f.graph)(thread);
    Harness::new(f.gen, "harness.py")
        .env("LANGGRAPH_AES_KEY", key)
        .run(&[
            "history",
            "--db",
            s(db),
            "--thread",
            thread,
            "--graph",
            &graph,
        ])
        .json()
}

#[test]
#[cfg_attr(
    not(feature = "env-tests"),
    ignore = "needs scripts/test.sh's environment (--features env-tests)"
)]
fn keys_on_the_way_decrypt_reencrypt_or_encrypt_a_copy() {
    const NEW_KEY: &str = "another-key-of-32-bytes-for-test";
    let all: Vec<Fixture> = fixtures().into_iter().chain(more_fixtures()).collect();
    let dir = tempfile::tempdir().expect("tempdir");
    let mut cases = Vec::new();
    // Decrypted (--key-env alone) and under a new key (--new-key-env), from the three
    // encrypted files (both generations, one mixed with plain values); a plain file encrypted.
    for (i, f) in all
        .iter()
        .filter(|f| f.file.starts_with("encrypted") || f.file == "new.sqlite")
        .enumerate()
    {
        let src = fixture(f.file);
        let key = f.key.clone().unwrap_or_default();
        let env = [("APP_KEY", key.as_str()), ("NEW_KEY", NEW_KEY)];
        let plain = dir.path().join(format!("plain-{i}.sqlite"));
        let rekeyed = dir.path().join(format!("rekeyed-{i}.sqlite"));
        let base = ["copy", "--db", s(&src), "--all"];
        if f.key.is_some() {
            let out = memctl_env(
                &[&base[..], &["--to", s(&plain), "--key-env", "APP_KEY"]].concat(),
                &env,
            )
            .unwrap_or_else(|e| panic!("{e}"));
            assert!(out.contains("decrypted"), "{out}");
            assert!(
                value_types(&plain).iter().all(|t| !t.contains('+')),
                "{}: {:?}",
                f.file,
                value_types(&plain)
            );
        }
        let mut args = base.to_vec();
        args.extend(["--to", s(&rekeyed), "--new-key-env", "NEW_KEY"]);
        if f.key.is_some() {
            args.extend(["--key-env", "APP_KEY"]);
        }
        let out = memctl_env(&args, &env).unwrap_or_else(|e| panic!("{e}"));
        assert!(out.contains("under the new key"), "{out}");
        assert!(
            value_types(&rekeyed).iter().all(|t| t.ends_with("+aes")),
            "{}: {:?}",
            f.file,
            value_types(&rekeyed)
        );
        for thread in threads_of(&src) {
            cases.push((f, src.clone(), plain.clone(), rekeyed.clone(), thread));
        }
    }
    run_parallel(cases, |(f, src, plain, rekeyed, thread)| {
        let a = history_keyed(f, &src, &thread, f.key.as_deref())?;
        if f.key.is_some() {
            let b = history_keyed(f, &plain, &thread, None)?;
            same(&format!("{} '{thread}' decrypted", f.file), a.clone(), b)?;
        }
        let c = history_keyed(f, &rekeyed, &thread, Some(NEW_KEY))?;
        same(&format!("{} '{thread}' under a new key", f.file), a, c)?;
        // The old key (or none) no longer reads it.
        match history_keyed(f, &rekeyed, &thread, f.key.as_deref()) {
            Ok(_) => Err(format!("{} '{thread}': read without the new key", f.file)),
            Err(_) => Ok(()),
        }
    });
}

#[test]
#[cfg_attr(
    not(feature = "env-tests"),
    ignore = "needs scripts/test.sh's environment (--features env-tests)"
)]
fn a_wrong_key_is_one_line_and_nothing_is_written() {
    let key = key_of("encrypted-new").expect("key");
    let wrong = "0123456789abcdef0123456789abcdef";
    let dir = tempfile::tempdir().expect("tempdir");
    let src = fixture("encrypted-new.sqlite");
    let env = [
        ("APP_KEY", wrong),
        ("NEW_KEY", "another-key-of-32-bytes-for-test"),
    ];
    let file = dir.path().join("t.sqlite");
    for args in [
        vec![
            "copy",
            "--db",
            s(&src),
            "--thread",
            "tools",
            "--to",
            s(&file),
            "--key-env",
            "APP_KEY",
        ],
        vec![
            "copy",
            "--db",
            s(&src),
            "--all",
            "--to",
            s(&file),
            "--key-env",
            "APP_KEY",
        ],
        vec![
            "migrate",
            "--db",
            s(&src),
            "--to",
            s(&file),
            "--key-env",
            "APP_KEY",
        ],
        vec![
            "migrate",
            "--db",
            s(&src),
            "--to",
            s(&file),
            "--key-env",
            "APP_KEY",
            "--new-key-env",
            "NEW_KEY",
        ],
        vec!["import", s(&src), "--db", s(&file), "--key-env", "APP_KEY"],
    ] {
        if args[0] == "import" {
            // import writes into an existing file: one with SqliteSaver's tables, no thread.
            memctl_ok(
                &[
                    "copy",
                    "--db",
                    s(&fixture("new.sqlite")),
                    "--thread",
                    "1",
                    "--to",
                    s(&file),
                ],
                None,
            )
            .unwrap_or_else(|e| panic!("{e}"));
            rusqlite::Connection::open(&file)
                .and_then(|c| c.execute_batch("DELETE FROM writes; DELETE FROM checkpoints"))
                .expect("empties");
        }
        let e = memctl_env(&args, &env).expect_err("refused");
        assert_eq!(e.trim().lines().count(), 1, "{args:?}: one line: {e}");
        assert!(e.contains("APP_KEY does not decrypt"), "{args:?}: {e}");
        assert!(
            !e.contains(wrong) && !e.contains(&key),
            "{args:?}: a key printed"
        );
        match args[0] {
            "import" => {
                assert_eq!(threads_of(&file), Vec::<String>::new(), "{args:?}");
                std::fs::remove_file(&file).expect("removes");
            }
            _ => assert!(!file.exists(), "{args:?}: nothing written"),
        }
    }
    // An unset key variable: one line, before anything is read.
    let e = memctl_env(
        &[
            "copy",
            "--db",
            s(&src),
            "--thread",
            "tools",
            "--to",
            s(&file),
            "--new-key-env",
            "NO_SUCH_VAR_H29",
        ],
        &[],
    )
    .expect_err("refused");
    assert!(
        e.contains("NO_SUCH_VAR_H29 (given with --new-key-env) is not set"),
        "{e}"
    );
    assert!(!file.exists());
    // A migration under a new key resumes: the second run finds every thread there, equal.
    let env = [
        ("APP_KEY", key.as_str()),
        ("NEW_KEY", "another-key-of-32-bytes-for-test"),
    ];
    let run = || -> Json {
        let out = memctl_env(
            &[
                "migrate",
                "--db",
                s(&src),
                "--to",
                s(&file),
                "--key-env",
                "APP_KEY",
                "--new-key-env",
                "NEW_KEY",
                "--format",
                "json",
            ],
            &env,
        )
        .unwrap_or_else(|e| panic!("{e}"));
        serde_json::from_str(&out).expect("JSON")
    };
    let n = threads_of(&src).len();
    assert_eq!(run()["totals"]["copied"], n);
    let again = run();
    assert_eq!(again["totals"]["skipped"], n, "{again}");
}

#[test]
#[cfg_attr(
    not(feature = "env-tests"),
    ignore = "needs scripts/test.sh's environment (--features env-tests)"
)]
fn a_langgraph_js_file_copied_or_migrated_is_the_same_to_langgraph_js() {
    let dir = tempfile::tempdir().expect("tempdir");
    let src = fixture("js-delta.sqlite");
    let copied = dir.path().join("copied.sqlite");
    let migrated = dir.path().join("migrated.sqlite");
    memctl_ok(
        &["copy", "--db", s(&src), "--all", "--to", s(&copied)],
        None,
    )
    .unwrap_or_else(|e| panic!("{e}"));
    memctl_ok(&["migrate", "--db", s(&src), "--to", s(&migrated)], None)
        .unwrap_or_else(|e| panic!("{e}"));
    // LangGraph.js reads every checkpoint of every thread alike and continues each the same
    // (each run on its own copy: --continue writes).
    let view = |db: &Path| {
        let (_d, c) = temp_copy(db);
        js_states(&c, true).unwrap_or_else(|e| panic!("{e}"))
    };
    let a = view(&src);
    assert!(
        a["continued"].as_object().is_some_and(|c| c.len() >= 3),
        "{a}"
    );
    same("js-delta.sqlite copied", a.clone(), view(&copied)).unwrap_or_else(|e| panic!("{e}"));
    same("js-delta.sqlite migrated", a, view(&migrated)).unwrap_or_else(|e| panic!("{e}"));
    // --materialize writes msgpack checkpoints (LangGraph Python's): a JSON checkpoint of
    // LangGraph.js is refused, one line, nothing written.
    let target = dir.path().join("plain.sqlite");
    let e = memctl_ok(
        &[
            "copy",
            "--db",
            s(&src),
            "--thread",
            "js-chat",
            "--to",
            s(&target),
            "--materialize",
        ],
        None,
    )
    .expect_err("refused");
    assert!(e.contains("LangGraph.js writes JSON"), "{e}");
    assert_eq!(e.trim().lines().count(), 1, "{e}");
    assert!(!target.exists());
}
