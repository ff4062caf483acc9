//! Interop: memctl rewrites a copy of a fixture, then real LangGraph (both saver generations,
//! pinned in .venv/new and .venv/old by scripts/pyenv.sh) reads it, compares it field by field
//! with what its own `update_state` writes for the same change, and continues the thread
//! (tests/interop/harness.py). These tests fail, never skip, when LangGraph is missing.

mod common;

use common::run_parallel;

use common::python;

use std::process::Command;

use common::{fixture, run_json, s, temp_copy};
use serde_json::{json, Value as Json};

fn harness(gen: &str, args: &[&str]) -> (bool, String) {
    let ran = common::Harness::new(gen, "harness.py").run(args);
    (ran.ok, ran.text())
}

/// Runs the harness's check-rewrite of `rewritten` against `original` with `expect`
/// (written to a file in `dir`).
fn check_rewrite(
    gen: &str,
    original: &std::path::Path,
    rewritten: &std::path::Path,
    thread: &str,
    expect: &Json,
    dir: &std::path::Path,
) -> (bool, String) {
    let ran = common::Harness::new(gen, "harness.py").check_rewrite(&common::Rewrite {
        original,
        rewritten,
        thread,
        graph: None,
        expect,
        dir,
    });
    (ran.ok, ran.text())
}

/// Rewrites a copy with memctl, then runs check-rewrite against the pristine fixture.
fn check(gen: &str, thread: &str, memctl_args: &[&str], expect: Json) -> Result<(), String> {
    let original = fixture(&format!("{gen}.sqlite"));
    let (dir, db) = temp_copy(&original);
    let mut args = memctl_args.to_vec();
    args.extend(["--db", s(&db), "--thread", thread, "--format", "json"]);
    let out = run_json(&args);
    let mut expect = expect;
    if out["threads"][0]["status"] == "rewritten" {
        expect["expect_write"] = json!(true);
    }
    let (ok, text) = check_rewrite(gen, &original, &db, thread, &expect, dir.path());
    if ok {
        Ok(())
    } else {
        Err(format!(
            "{gen}/{thread} memctl {memctl_args:?} ({}):\n{text}",
            out["threads"][0]["status"]
        ))
    }
}

/// Threads an idle thread rewrite must handle (all but the paused and the legacy-json ones).
const THREADS: [&str; 11] = [
    "1",
    "tools",
    "custom-state",
    "system",
    "unicode",
    "blocks",
    "usage",
    "summarized",
    "subgraph",
    "dict-input",
    "tuple-args",
];

/// Runs the cases two at a time (two cores) and reports every failure at once.
fn run_all(cases: Vec<(String, String, Vec<String>, Json)>) {
    run_parallel(cases, |(gen, thread, args, expect)| {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        check(&gen, &thread, &args, expect)
    });
}

#[test]
fn trim_is_what_langgraph_update_state_writes() {
    let mut cases = Vec::new();
    for gen in common::GENERATIONS {
        for thread in THREADS {
            let v = |a: &[&str]| a.iter().map(|x| (*x).to_owned()).collect::<Vec<_>>();
            cases.push((
                gen.into(),
                thread.into(),
                v(&["trim", "--keep", "4"]),
                json!({"mode": "trim", "max_tokens": 4, "counter": "len", "keep_first": false}),
            ));
            cases.push((gen.into(), thread.into(), v(&["trim", "--max-tokens", "60"]),
                json!({"mode": "trim", "max_tokens": 60, "counter": "approximate", "keep_first": false})));
            cases.push((
                gen.into(),
                thread.into(),
                v(&["trim", "--keep", "2", "--keep-first"]),
                json!({"mode": "trim", "max_tokens": 2, "counter": "len", "keep_first": true}),
            ));
        }
    }
    run_all(cases);
}

/// The batch path (`--all`: threads planned on all cores, written a batch per transaction,
/// WAL checkpoints on their own connection) leaves every thread of a WAL-mode file as
/// update_state would, and the WAL empty.
#[test]
fn trim_all_is_what_langgraph_update_state_writes_for_every_thread() {
    let mut cases = Vec::new();
    let mut dirs = Vec::new();
    for gen in common::GENERATIONS {
        let original = fixture(&format!("{gen}.sqlite"));
        let (dir, db) = temp_copy(&original);
        // In WAL mode, as SqliteSaver.setup() leaves a live app's file (the fixtures are
        // committed in rollback-journal mode).
        let conn = rusqlite::Connection::open(&db).expect("open copy");
        let mode: String = conn
            .query_row("PRAGMA journal_mode = WAL", [], |r| r.get(0))
            .expect("WAL mode");
        assert_eq!(mode, "wal");
        drop(conn);
        let out = run_json(&[
            "trim",
            "--all",
            "--keep",
            "2",
            "--db",
            s(&db),
            "--format",
            "json",
        ]);
        let rows = out["threads"].as_array().expect("one row per thread");
        let rewritten = rows.iter().filter(|r| r["status"] == "rewritten").count();
        assert!(
            rewritten >= 5,
            "{gen}: {rewritten} threads rewritten: {out}"
        );
        let wal = std::path::PathBuf::from(format!("{}-wal", db.display()));
        let wal_len = std::fs::metadata(&wal).map_or(0, |m| m.len());
        assert_eq!(wal_len, 0, "{gen}: memctl left {wal_len} bytes in the WAL");
        for thread in THREADS {
            let row = rows
                .iter()
                .find(|r| r["thread_id"] == thread)
                .unwrap_or_else(|| panic!("{gen}: no row for thread {thread}: {out}"));
            let expect = json!({"mode": "trim", "max_tokens": 2, "counter": "len",
                "keep_first": false, "expect_write": row["status"] == "rewritten", "batch": true});
            cases.push((
                gen,
                original.clone(),
                db.clone(),
                thread,
                expect,
                dir.path().to_owned(),
            ));
        }
        dirs.push(dir);
    }
    run_parallel(cases, |(gen, original, db, thread, expect, dir)| {
        let case_dir = dir.join(format!("check-{thread}"));
        std::fs::create_dir_all(&case_dir).map_err(|e| e.to_string())?;
        let (ok, text) = check_rewrite(gen, &original, &db, thread, &expect, &case_dir);
        ok.then_some(())
            .ok_or(format!("{gen}/{thread} after trim --all:\n{text}"))
    });
}

#[test]
fn rm_is_what_langgraph_update_state_writes() {
    let mut cases = Vec::new();
    for gen in common::GENERATIONS {
        let exp = common::expected(gen);
        for thread in ["1", "system", "tools", "unicode", "dict-input"] {
            let msgs = exp["threads"][thread]["state_messages"]
                .as_array()
                .expect("messages")
                .clone();
            // Remove the first human message (by index) — in "tools" that message opens a tool
            // exchange that stays, so nothing else goes.
            let ids: Vec<Json> = msgs[1..].iter().map(|m| m["id"].clone()).collect();
            cases.push((
                gen.into(),
                thread.into(),
                vec!["rm".into(), "--index".into(), "0".into()],
                json!({"mode": "ids", "ids": ids}),
            ));
        }
        // A tool answer takes its whole exchange with it.
        let msgs = exp["threads"]["tools"]["state_messages"]
            .as_array()
            .expect("messages")
            .clone();
        let tool_id = msgs.iter().find(|m| m["type"] == "tool").expect("tool")["id"]
            .as_str()
            .expect("id")
            .to_owned();
        let ids: Vec<Json> = msgs
            .iter()
            .enumerate()
            .filter(|(i, _)| ![1usize, 2, 3].contains(i))
            .map(|(_, m)| m["id"].clone())
            .collect();
        cases.push((
            gen.into(),
            "tools".into(),
            vec!["rm".into(), "--id".into(), tool_id],
            json!({"mode": "ids", "ids": ids}),
        ));
    }
    run_all(cases);
}

#[test]
fn purged_thread_still_loads_and_continues() {
    for gen in common::GENERATIONS {
        let (_dir, db) = temp_copy(&fixture(&format!("{gen}.sqlite")));
        let out = run_json(&[
            "rm",
            "--db",
            s(&db),
            "--thread",
            "dict-input",
            "--match",
            "hunter2",
            "--purge",
            "--format",
            "json",
        ]);
        assert_eq!(out["threads"][0]["status"], "purged");
        let bytes = std::fs::read(&db).expect("read");
        assert!(
            !bytes.windows(7).any(|w| w == b"hunter2"),
            "{gen}: secret gone"
        );
        let (ok, text) = harness(
            gen,
            &[
                "continue",
                "--db",
                s(&db),
                "--thread",
                "dict-input",
                "--copy",
            ],
        );
        assert!(ok, "{gen}: LangGraph continues the purged thread:\n{text}");
        // Every other thread still loads and continues too.
        for thread in ["1", "tools"] {
            let (ok, text) = harness(
                gen,
                &["continue", "--db", s(&db), "--thread", thread, "--copy"],
            );
            assert!(ok, "{gen}/{thread}: {text}");
        }
    }
}

#[test]
fn forced_rewrite_of_a_paused_thread_still_loads() {
    for gen in common::GENERATIONS {
        let (_dir, db) = temp_copy(&fixture(&format!("{gen}.sqlite")));
        let out = run_json(&[
            "rm",
            "--db",
            s(&db),
            "--thread",
            "interrupt",
            "--index",
            "-1",
            "--force",
            "--format",
            "json",
        ]);
        assert_eq!(out["threads"][0]["status"], "rewritten");
        let (ok, text) = harness(
            gen,
            &[
                "continue",
                "--db",
                s(&db),
                "--thread",
                "interrupt",
                "--copy",
            ],
        );
        assert!(ok, "{gen}: {text}");
    }
}

/// summarize with a real chat server, then LangGraph checks the result like any rewrite.
#[test]
fn summarize_is_what_langgraph_update_state_writes() {
    use common::chat_server::{ChatServer, Reply};
    let server = ChatServer::start(|_, n| {
        Reply::Summary(format!("The user introduced themselves; summary {n}."))
    });
    let mut failures = Vec::new();
    for gen in common::GENERATIONS {
        for (thread, extra) in [
            ("system", vec!["--keep", "3"]),
            ("tools", vec!["--keep", "4"]),
            ("summarized", vec!["--keep", "2"]),
            (
                "custom-state",
                vec!["--keep", "2", "--summary-key", "summary"],
            ),
        ] {
            let original = fixture(&format!("{gen}.sqlite"));
            let (dir, db) = temp_copy(&original);
            let mut args = vec![
                "summarize",
                "--db",
                s(&db),
                "--thread",
                thread,
                "--endpoint",
                &server.url,
                "--model",
                "m",
            ];
            args.extend(extra.iter().copied());
            args.extend(["--format", "json"]);
            let out = run_json(&args);
            assert_eq!(
                out["threads"][0]["status"], "summarized",
                "{gen}/{thread}: {out}"
            );
            let state = run_json(&["dump", "--db", s(&db), "--thread", thread]);
            let shown = run_json(&[
                "show",
                "--db",
                s(&db),
                "--thread",
                thread,
                "--format",
                "json",
            ]);
            // Expected list: original messages by id, the new summary message by its fields.
            let items: Vec<Json> = state
                .as_array()
                .expect("messages")
                .iter()
                .map(|m| {
                    if m["additional_kwargs"]["lc_source"] == "summarization" {
                        m.clone()
                    } else {
                        json!({"id": m["id"]})
                    }
                })
                .collect();
            let mut expect = json!({"mode": "messages", "messages": items, "expect_write": true});
            if thread == "custom-state" {
                expect["values"] = json!({"summary": shown["values"]["summary"]});
            }
            let (ok, text) = check_rewrite(gen, &original, &db, thread, &expect, dir.path());
            if !ok {
                failures.push(format!("{gen}/{thread}:\n{text}"));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

/// What LangGraph sees of a thread (harness `state`).
fn lg_state(gen: &str, db: &std::path::Path, thread: &str, graph: &str) -> Json {
    let (ok, text) = harness(
        gen,
        &["state", "--db", s(db), "--thread", thread, "--graph", graph],
    );
    assert!(ok, "{gen}/{thread}: state failed:\n{text}");
    let json_end = text.rfind('}').expect("json");
    serde_json::from_str(&text[..=json_end]).unwrap_or_else(|e| panic!("{e}: {text}"))
}

#[test]
fn gc_and_prune_leave_langgraph_threads_that_load_and_continue() {
    for gen in common::GENERATIONS {
        let (_dir, db) = temp_copy(&fixture(&format!("{gen}.sqlite")));
        let out = run_json(&[
            "gc",
            "--db",
            s(&db),
            "--all",
            "--keep-checkpoints",
            "1",
            "--min-idle",
            "0s",
            "--vacuum",
            "--format",
            "json",
        ]);
        assert!(
            out["deleted"]["checkpoints"].as_u64() > Some(50),
            "{gen}: {out}"
        );
        let out = run_json(&[
            "prune",
            "--db",
            s(&db),
            "--thread",
            "tools",
            "--min-idle",
            "0s",
            "--format",
            "json",
        ]);
        assert_eq!(out["deleted"]["threads"], 1);
        // Deleted threads return no state.
        let gone = lg_state(gen, &db, "tools", "tools");
        assert_eq!(gone["exists"], false, "{gen}: {gone}");
        assert_eq!(gone["messages"], json!([]));
        // Kept threads return the same state as before, with a history LangGraph can walk,
        // and continue.
        let exp = common::expected(gen);
        for thread in THREADS.iter().filter(|t| **t != "tools") {
            let st = lg_state(gen, &db, thread, thread);
            assert_eq!(
                st["messages"], exp["threads"][thread]["state_messages"],
                "{gen}/{thread}: same state"
            );
            assert!(st["history"].as_u64() >= Some(1));
            let (ok, text) = harness(
                gen,
                &["continue", "--db", s(&db), "--thread", thread, "--copy"],
            );
            assert!(ok, "{gen}/{thread}: continue after gc:\n{text}");
        }
        // The paused thread still waits on its interrupt, and resumes.
        let st = lg_state(gen, &db, "interrupt", "interrupt");
        assert_eq!(st["next"], json!(["review"]), "{gen}: {st}");
        assert_eq!(st["interrupts"].as_array().map(Vec::len), Some(1));
        let (ok, text) = harness(
            gen,
            &[
                "resume",
                "--db",
                s(&db),
                "--thread",
                "interrupt",
                "--value",
                "approved",
            ],
        );
        assert!(ok, "{gen}: resume after gc:\n{text}");
    }
}

#[test]
fn prune_and_gc_run_beside_a_live_langgraph_app() {
    let (dir, db) = temp_copy(&fixture("new.sqlite"));
    let stop = dir.path().join("stop");
    let app = Command::new(python("new"))
        .arg(common::root().join("tests/interop/harness.py"))
        .args([
            "live-app",
            "--db",
            s(&db),
            "--graph",
            "1",
            "--threads",
            "app-1,app-2",
            "--seconds",
            "120",
        ])
        .args(["--stop-file", s(&stop)])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("the app starts");
    // Wait until the app has written its threads.
    let started = std::time::Instant::now();
    loop {
        let listed = common::memctl()
            .args(["threads", "list", "--db", s(&db), "--format", "json"])
            .output()
            .expect("runs");
        if String::from_utf8_lossy(&listed.stdout).contains("app-2") {
            break;
        }
        assert!(
            started.elapsed().as_secs() < 90,
            "the app never wrote its threads"
        );
        std::thread::sleep(std::time::Duration::from_millis(200));
    }
    // Cron beside the app: gc and prune the old threads, several rounds, while it writes.
    for round in 0..3 {
        let gc = run_json(&[
            "gc",
            "--db",
            s(&db),
            "--all",
            "--keep-checkpoints",
            "1",
            "--min-idle",
            "1m",
            "--format",
            "json",
        ]);
        for t in gc["threads"].as_array().expect("rows") {
            let id = t["thread_id"].as_str().unwrap_or("");
            if id.starts_with("app-") {
                assert!(
                    t["status"] == "skipped"
                        && t["reason"]
                            .as_str()
                            .is_some_and(|why| why.contains("--min-idle")),
                    "round {round}: {t}"
                );
            }
        }
        if round == 0 {
            run_json(&[
                "prune",
                "--db",
                s(&db),
                "--thread",
                "tools",
                "--thread",
                "1",
                "--min-idle",
                "1m",
                "--format",
                "json",
            ]);
        }
    }
    let out = common::memctl()
        .args([
            "prune",
            "--db",
            s(&db),
            "--idle",
            "10m",
            "--min-idle",
            "1m",
            "--vacuum",
            "--batch",
            "3",
            "--format",
            "json",
        ])
        .output()
        .expect("runs");
    assert!(
        matches!(out.status.code(), Some(0 | 3)),
        "prune: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    // The app carries on after the last prune: one more checkpoint of its own first.
    let before = common::checkpoint_count(&db, "app-1");
    common::wait_for("the app's next checkpoint after the prune", || {
        common::checkpoint_count(&db, "app-1") > before
    });
    std::fs::write(&stop, b"stop").expect("stop file");
    let result = app.wait_with_output().expect("the app ends");
    let report = String::from_utf8_lossy(&result.stdout);
    assert!(
        result.status.success(),
        "the app saw errors:\n{report}\n{}",
        String::from_utf8_lossy(&result.stderr)
    );
    assert!(report.contains("\"invocations\""), "{report}");
    // The app's threads are intact and continue; the pruned ones are gone.
    let listed = run_json(&["threads", "list", "--db", s(&db), "--format", "json"]);
    let ids: Vec<&str> = listed
        .as_array()
        .expect("rows")
        .iter()
        .filter_map(|r| r["thread_id"].as_str())
        .collect();
    assert_eq!(
        ids.iter().filter(|t| t.starts_with("app-")).count(),
        2,
        "{ids:?}"
    );
    assert!(
        !ids.contains(&"tools") && !ids.contains(&"1") && !ids.contains(&"system"),
        "pruned: {ids:?}"
    );
    for t in ["app-1", "app-2"] {
        let (ok, text) = harness(
            "new",
            &[
                "continue",
                "--db",
                s(&db),
                "--thread",
                t,
                "--graph",
                "1",
                "--copy",
            ],
        );
        assert!(ok, "{t}: {text}");
    }
    let gone = lg_state("new", &db, "system", "system");
    assert_eq!(gone["exists"], false);
}

/// Issue #12: an app makes its checkpoint ids before it commits them, and its commit can queue
/// behind memctl's. Deterministic: the app's commits are held until memctl's edit has landed,
/// then released. The app's turn must be the thread's state and its next turn must see it;
/// memctl must report its edit superseded (exit 3), never as done.
fn race_case(gen: &str, memctl_args: &[&str]) -> Result<(), String> {
    let (dir, db) = temp_copy(&fixture(&format!("{gen}.sqlite")));
    let (hold, go) = (dir.path().join("held"), dir.path().join("go"));
    let app = Command::new(python(gen))
        .arg(common::root().join("tests/interop/harness.py"))
        .args(["held-app", "--db", s(&db), "--graph", "1", "--thread", "1"])
        .args(["--hold-file", s(&hold), "--go-file", s(&go)])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .map_err(|e| e.to_string())?;
    let wait_for = |what: &str, done: &dyn Fn() -> bool| -> Result<(), String> {
        let started = std::time::Instant::now();
        while !done() {
            if started.elapsed().as_secs() > 90 {
                return Err(format!("{gen}: timed out waiting for {what}"));
            }
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        Ok(())
    };
    wait_for("the app to make its checkpoint", &|| hold.exists())?;
    let count = || -> i64 {
        rusqlite::Connection::open_with_flags(&db, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)
            .and_then(|c| {
                c.query_row(
                    "SELECT COUNT(*) FROM checkpoints WHERE thread_id = '1' AND checkpoint_ns = ''",
                    [],
                    |r| r.get(0),
                )
            })
            .unwrap_or(-1)
    };
    let before = count();
    let mut args = memctl_args.to_vec();
    args.extend(["--db", s(&db), "--settle", "10s", "--format", "json"]);
    let mut memctl = common::memctl();
    memctl
        .args(&args)
        .timeout(std::time::Duration::from_secs(120));
    let edit = std::thread::spawn(move || memctl.output().expect("memctl runs"));
    // memctl's edit lands while the app's commits wait; then the app commits.
    wait_for("memctl's checkpoint", &|| count() == before + 1)?;
    std::fs::write(&go, b"go").map_err(|e| e.to_string())?;
    let edit = edit.join().map_err(|_| "memctl thread".to_string())?;
    let app = app.wait_with_output().map_err(|e| e.to_string())?;
    let app_out = String::from_utf8_lossy(&app.stdout);
    if !app.status.success() {
        return Err(format!(
            "{gen} {memctl_args:?}: the app lost its turn:\n{app_out}\n{}",
            String::from_utf8_lossy(&app.stderr)
        ));
    }
    let report: Json = serde_json::from_slice(&edit.stdout).map_err(|e| {
        format!(
            "{gen}: memctl output ({e}): {}",
            String::from_utf8_lossy(&edit.stderr)
        )
    })?;
    let row = report["threads"]
        .as_array()
        .and_then(|rows| rows.iter().find(|r| r["thread_id"] == "1"))
        .cloned()
        .unwrap_or(Json::Null);
    if row["status"] != "superseded" || edit.status.code() != Some(3) {
        return Err(format!(
            "{gen} {memctl_args:?}: memctl must report its edit superseded with exit 3, got {:?}: {row}",
            edit.status.code()
        ));
    }
    Ok(())
}

#[test]
fn a_live_apps_held_turn_wins_over_a_concurrent_rewrite() {
    let cases: Vec<(&str, Vec<&str>)> = vec![
        ("new", vec!["trim", "--keep", "2", "--thread", "1"]),
        ("old", vec!["trim", "--keep", "2", "--thread", "1"]),
        ("new", vec!["rm", "--index", "0", "--thread", "1"]),
        ("old", vec!["trim", "--keep", "2", "--all"]),
    ];
    run_parallel(cases, |(gen, args)| race_case(gen, &args));
}

#[test]
fn rm_purge_scrubs_a_match_that_only_the_history_holds() {
    // `rm --match X --purge` where X is not in the latest messages: only in older checkpoints
    // (a message a summarizer removed), in another channel (`summary`), or in a kept message's
    // additional_kwargs. --purge promises X is gone from the thread: it is scrubbed from the
    // history as forget --match scrubs it, the receipt says so, no byte of X is left in the
    // file, its -wal or -journal, and real LangGraph still reads the thread and continues.
    let cases = [
        ("summarized", "Weather in Rome", "Weather in Rome"),
        ("custom-state", r"turn\(s\) so far", "turn(s) so far"),
        ("summarized", "summarization", "summarization"),
    ];
    for gen in common::GENERATIONS {
        for (thread, pattern, text) in cases {
            let (dir, db) = temp_copy(&fixture(&format!("{gen}.sqlite")));
            let name = db.file_name().and_then(|n| n.to_str()).expect("name");
            let count = |suffix: &str| {
                std::fs::read(dir.path().join(format!("{name}{suffix}")))
                    .map(|b| {
                        b.windows(text.len())
                            .filter(|w| *w == text.as_bytes())
                            .count()
                    })
                    .unwrap_or(0)
            };
            assert!(count("") > 0, "{gen}/{thread}: the fixture holds {text:?}");
            let out = run_json(&[
                "rm",
                "--db",
                s(&db),
                "--thread",
                thread,
                "--match",
                pattern,
                "--purge",
                "--format",
                "json",
            ]);
            assert_eq!(
                out["threads"][0]["status"], "purged",
                "{gen}/{thread}/{text}: {out}"
            );
            let notes = out["threads"][0]["notes"].to_string();
            assert!(
                notes.contains("matching messages in its history") && notes.contains("scrubbed"),
                "{gen}/{thread}: {notes}"
            );
            for suffix in ["", "-wal", "-journal"] {
                assert_eq!(
                    count(suffix),
                    0,
                    "{gen}/{thread}: {text:?} left in {name}{suffix}"
                );
            }
            let (ok, report) = harness(
                gen,
                &["continue", "--db", s(&db), "--thread", thread, "--copy"],
            );
            assert!(
                ok,
                "{gen}/{thread}: LangGraph continues the purged thread:\n{report}"
            );
        }
    }
    // A match only where memctl changes nothing (an app's key in old metadata): exit 1,
    // naming the place, nothing written.
    let (_dir, db) = temp_copy(&fixture("new.sqlite"));
    let conn = rusqlite::Connection::open(&db).expect("open");
    conn.execute(
        "UPDATE checkpoints SET metadata = json_set(metadata, '$.note', 'zebra-secret-77') \
         WHERE thread_id = 'tools' AND checkpoint_id = (SELECT MIN(checkpoint_id) FROM checkpoints WHERE thread_id = 'tools')",
        [],
    )
    .expect("update");
    drop(conn);
    let before = std::fs::read(&db).expect("read");
    let out = common::memctl()
        .args([
            "rm",
            "--db",
            s(&db),
            "--thread",
            "tools",
            "--match",
            "zebra-secret",
            "--purge",
        ])
        .output()
        .expect("runs");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("metadata of checkpoint"), "{stderr}");
    assert!(
        before == std::fs::read(&db).expect("read"),
        "nothing written"
    );
}
