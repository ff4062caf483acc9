//! Interop on PostgreSQL: memctl rewrites (trim, rm, purge, gc, prune) a copy of the
//! `PostgresSaver` fixture on a real server (`MEMCTL_TEST_PG`); real LangGraph
//! (langgraph-checkpoint-postgres 3.2.0 in .venv/pg, tests/interop/harness_pg.py) makes the
//! same change on another copy and the rows are compared, then loads and continues the
//! threads. Plus the checkpoint-id race of issue #12 and a live app beside memctl. These tests
//! fail, never skip, when the server or LangGraph is missing.

mod common;

use common::run_parallel;

use common::python;

use std::process::Command;

use common::delta_states;
use common::pg::TestDb;
use common::{expected, memctl, run_json};
use serde_json::{json, Value as Json};

fn harness(args: &[&str]) -> (bool, String) {
    harness_with(&Fixture::Plain, args)
}

/// The harness with the fixture's key in LANGGRAPH_AES_KEY (LangGraph's EncryptedSerializer)
/// when it is the encrypted one.
fn harness_with(fixture: &Fixture, args: &[&str]) -> (bool, String) {
    let ran = common::Harness::new("pg", "harness_pg.py")
        .env("LANGGRAPH_AES_KEY", fixture.key().as_deref())
        .run(args);
    (ran.ok, ran.text())
}

fn harness_json(args: &[&str]) -> Json {
    let (ok, text) = harness(args);
    assert!(ok, "harness {args:?} failed:\n{text}");
    let end = text.rfind("\n}").map_or(text.len(), |i| i + 2);
    serde_json::from_str(&text[..end]).unwrap_or_else(|e| panic!("{e}: {text}"))
}

/// Which committed dump a test starts from.
enum Fixture {
    /// fixtures/postgres.sql.
    Plain,
    /// fixtures/postgres-encrypted.sql (EncryptedSerializer; its key in the expectations).
    Encrypted,
    /// fixtures/postgres-delta.sql (DeltaChannel threads, graphs `delta:<thread>`).
    Delta,
}

impl Fixture {
    fn expected(&self) -> Json {
        match self {
            Fixture::Plain => expected("postgres"),
            Fixture::Encrypted => expected("postgres-encrypted"),
            Fixture::Delta => expected("postgres-delta"),
        }
    }

    /// The app's LANGGRAPH_AES_KEY (test data committed with the fixture).
    fn key(&self) -> Option<String> {
        match self {
            Fixture::Plain | Fixture::Delta => None,
            Fixture::Encrypted => self.expected()["encryption"]["key"]
                .as_str()
                .map(str::to_owned),
        }
    }

    fn db(&self, hint: &str) -> TestDb {
        match self {
            Fixture::Plain => TestDb::fixture(hint),
            Fixture::Encrypted => TestDb::encrypted(hint),
            Fixture::Delta => TestDb::delta_fixture(hint),
        }
    }

    /// memctl with the app's key (none for the plain fixture).
    fn memctl(&self) -> assert_cmd::Command {
        let mut cmd = memctl();
        cmd.env_remove("LANGGRAPH_AES_KEY");
        if let Some(key) = self.key() {
            cmd.env("LANGGRAPH_AES_KEY", key);
        }
        cmd
    }

    /// memctl's JSON output (it must succeed).
    fn run_json(&self, args: &[&str]) -> Json {
        let out = self.memctl().args(args).output().expect("memctl runs");
        assert!(
            out.status.success(),
            "memctl {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {args:?}"))
    }
}

/// The scenario graph that wrote a thread.
fn graph_of(thread: &str) -> String {
    expected("postgres")["threads"][thread]["graph"]
        .as_str()
        .unwrap_or(thread)
        .to_owned()
}

/// memctl rewrites one copy, LangGraph's update_state the other; compare, load, continue.
fn check(thread: &str, memctl_args: &[&str], expect: Json) -> Result<(), String> {
    check_on(&Fixture::Plain, thread, memctl_args, expect)
}

/// [`check`] on a copy of `fixture`, memctl and LangGraph both with its key.
fn check_on(
    fixture: &Fixture,
    thread: &str,
    memctl_args: &[&str],
    expect: Json,
) -> Result<(), String> {
    let original = fixture.db(&format!("orig_{thread}"));
    let rewritten = fixture.db(&format!("new_{thread}"));
    let graph = match fixture {
        Fixture::Delta => format!("delta:{thread}"),
        _ => fixture.expected()["threads"][thread]["graph"]
            .as_str()
            .unwrap_or(thread)
            .to_owned(),
    };
    check_between(
        fixture,
        &original,
        &rewritten,
        thread,
        &graph,
        memctl_args,
        expect,
    )
}

/// memctl runs `memctl_args` on `rewritten`, LangGraph's update_state on `original` (two
/// copies of one database); the harness compares, loads and continues (with the fixture's
/// key).
fn check_between(
    fixture: &Fixture,
    original: &TestDb,
    rewritten: &TestDb,
    thread: &str,
    graph: &str,
    memctl_args: &[&str],
    expect: Json,
) -> Result<(), String> {
    let mut args = memctl_args.to_vec();
    args.extend([
        "--db",
        &rewritten.url,
        "--thread",
        thread,
        "--format",
        "json",
    ]);
    let out = fixture.run_json(&args);
    if !matches!(
        out["threads"][0]["status"].as_str(),
        Some("rewritten" | "purged")
    ) {
        return Err(format!(
            "{thread} {memctl_args:?}: memctl did not write: {out}"
        ));
    }
    let (ok, text) = harness_with(
        fixture,
        &[
            "check-rewrite",
            "--original",
            &original.url,
            "--rewritten",
            &rewritten.url,
            "--thread",
            thread,
            "--graph",
            graph,
            "--expect",
            &expect.to_string(),
        ],
    );
    if ok {
        Ok(())
    } else {
        let fails: Vec<&str> = text.lines().filter(|l| l.starts_with("FAIL")).collect();
        Err(format!("{thread} {memctl_args:?}:\n{}", fails.join("\n")))
    }
}

/// Threads a trim to two messages changes (single-turn threads like 'unicode' or 'blocks'
/// keep back to their only human message: nothing to write), both layouts.
const THREADS: [&str; 8] = [
    "1",
    "tools",
    "custom-state",
    "summarized",
    "subgraph",
    "tuple-args",
    "legacy-tools",
    "legacy-custom-state",
];

#[test]
fn trim_is_what_postgres_saver_update_state_writes() {
    let cases: Vec<&str> = THREADS.to_vec();
    run_parallel(cases, |thread| {
        check(
            thread,
            &["trim", "--keep", "2"],
            json!({"mode": "trim", "max_tokens": 2, "counter": "len"}),
        )
    });
}

fn message_ids(thread: &str) -> Vec<(String, Json)> {
    expected("postgres")["threads"][thread]["messages"]
        .as_array()
        .expect("messages")
        .iter()
        .map(|m| (m["id"].as_str().unwrap_or_default().to_owned(), m.clone()))
        .collect()
}

#[test]
fn rm_is_what_postgres_saver_update_state_writes() {
    let mut cases: Vec<(&str, Vec<&str>, Json)> = Vec::new();
    for thread in ["1", "custom-state", "legacy-custom-state", "dict-input"] {
        let ids: Vec<String> = message_ids(thread)
            .into_iter()
            .skip(1)
            .map(|(i, _)| i)
            .collect();
        cases.push((
            thread,
            vec!["rm", "--index", "0"],
            json!({"mode": "ids", "ids": ids}),
        ));
    }
    for thread in ["tools", "legacy-tools"] {
        // A tool message goes with the AI message that called it (and its other answers).
        let ids: Vec<String> = message_ids(thread)
            .into_iter()
            .filter(|(_, m)| {
                m["type"] != "tool"
                    && !(m["type"] == "ai"
                        && m["tool_calls"].as_array().is_some_and(|c| !c.is_empty()))
            })
            .map(|(i, _)| i)
            .collect();
        cases.push((
            thread,
            vec!["rm", "--type", "tool"],
            json!({"mode": "ids", "ids": ids}),
        ));
    }
    run_parallel(cases, |(thread, args, expect)| check(thread, &args, expect));
}

#[test]
fn purge_leaves_no_row_with_the_secret_and_the_thread_continues() {
    let ids: Vec<String> = message_ids("dict-input")
        .into_iter()
        .filter(|(_, m)| {
            !m["content"]
                .as_str()
                .unwrap_or_default()
                .contains("hunter2")
        })
        .map(|(i, _)| i)
        .collect();
    check(
        "dict-input",
        &["rm", "--match", "hunter2", "--purge"],
        json!({"mode": "ids", "ids": ids, "purge": true}),
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let db = TestDb::fixture("purge");
    let out = run_json(&[
        "rm",
        "--match",
        "hunter2",
        "--purge",
        "--thread",
        "dict-input",
        "--db",
        &db.url,
        "--format",
        "json",
    ]);
    assert_eq!(out["threads"][0]["status"], "purged", "{out}");
    let left = db.count(
        "SELECT (SELECT count(*) FROM checkpoints WHERE strpos(checkpoint::text || metadata::text, 'hunter2') > 0) \
              + (SELECT count(*) FROM checkpoint_blobs WHERE position('hunter2'::bytea in blob) > 0) \
              + (SELECT count(*) FROM checkpoint_writes WHERE position('hunter2'::bytea in blob) > 0)",
    );
    assert_eq!(left, 0, "rows still hold the secret");
    let r = harness_json(&[
        "continue",
        "--url",
        &db.url,
        "--thread",
        "dict-input",
        "--graph",
        "dict-input",
    ]);
    assert_eq!(r["messages_after"], 5, "{r}");
}

/// Blob rows no checkpoint names.
fn unreferenced_blobs(db: &TestDb) -> i64 {
    db.count(
        "SELECT count(*) FROM checkpoint_blobs b WHERE NOT EXISTS (SELECT 1 FROM checkpoints c \
           WHERE c.thread_id = b.thread_id AND c.checkpoint_ns = b.checkpoint_ns \
           AND c.checkpoint -> 'channel_versions' ->> b.channel = b.version)",
    )
}

#[test]
fn gc_keeps_every_thread_loadable_and_collects_blobs_by_reference() {
    let db = TestDb::fixture("gc");
    let garbage_before = unreferenced_blobs(&db);
    let blobs_before = db.count("SELECT count(*) FROM checkpoint_blobs");
    let out = run_json(&[
        "gc",
        "--all",
        "--keep-checkpoints",
        "2",
        "--db",
        &db.url,
        "--format",
        "json",
    ]);
    assert!(out.to_string().contains("checkpoints"), "{out}");
    assert!(
        db.count("SELECT count(*) FROM checkpoint_blobs") < blobs_before,
        "blobs were collected"
    );
    assert_eq!(
        unreferenced_blobs(&db),
        garbage_before,
        "gc leaves no blob nobody names"
    );
    // LangGraph loads every thread as before, then continues it (one process for all).
    let exp_path = common::root().join("fixtures/expected/postgres.json");
    let (ok, text) = harness(&[
        "check-all",
        "--url",
        &db.url,
        "--expected",
        common::s(&exp_path),
    ]);
    assert!(ok, "after gc:\n{text}");
}

/// Rows of the saver's tables as sorted keys (no values).
fn keys(db: &TestDb, sql: &str) -> Vec<String> {
    let mut v: Vec<String> = db
        .client()
        .query(sql, &[])
        .expect(sql)
        .iter()
        .map(|r| r.get::<_, String>(0))
        .collect();
    v.sort();
    v
}

#[test]
fn gc_keep_one_deletes_what_postgres_saver_prune_keep_latest_deletes() {
    let ours = TestDb::fixture("gc1");
    let theirs = TestDb::fixture("prune_keep_latest");
    let threads = [
        "1",
        "tools",
        "custom-state",
        "legacy-tools",
        "interrupt",
        "summarized",
    ];
    for t in threads {
        run_json(&[
            "gc",
            "--keep-checkpoints",
            "1",
            "--thread",
            t,
            "--db",
            &ours.url,
            "--format",
            "json",
        ]);
    }
    harness_json(&[
        "prune",
        "--url",
        &theirs.url,
        "--threads",
        &threads.join(","),
    ]);
    for sql in [
        "SELECT thread_id || '/' || checkpoint_ns || '/' || checkpoint_id || '/' || COALESCE(parent_checkpoint_id, '-') FROM checkpoints",
        "SELECT thread_id || '/' || checkpoint_ns || '/' || channel || '/' || version FROM checkpoint_blobs",
        "SELECT thread_id || '/' || checkpoint_id || '/' || task_id || '/' || idx FROM checkpoint_writes",
    ] {
        assert_eq!(keys(&ours, sql), keys(&theirs, sql), "{sql}");
    }
}

#[test]
fn prune_deletes_whole_threads_from_all_three_tables() {
    let db = TestDb::fixture("prune");
    let out = memctl()
        .args([
            "prune",
            "--idle",
            "0s",
            "--thread",
            "tools",
            "--thread",
            "legacy-tools",
        ])
        .args(["--db", &db.url, "--format", "json"])
        .output()
        .expect("runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    for t in ["tools", "legacy-tools"] {
        let n = db.count(&format!(
            "SELECT (SELECT count(*) FROM checkpoints WHERE thread_id = '{t}') \
                  + (SELECT count(*) FROM checkpoint_blobs WHERE thread_id = '{t}') \
                  + (SELECT count(*) FROM checkpoint_writes WHERE thread_id = '{t}')"
        ));
        assert_eq!(n, 0, "{t}: rows left");
        let st = harness_json(&["state", "--url", &db.url, "--thread", t, "--graph", "tools"]);
        assert_eq!(st["exists"], false, "{st}");
    }
    let st = harness_json(&["state", "--url", &db.url, "--thread", "1"]);
    assert_eq!(
        st["messages"],
        expected("postgres")["threads"]["1"]["messages"]
    );
}

/// Issue #12 on Postgres: the app makes its checkpoint ids before it commits them, and its
/// commit waits until memctl's edit has landed. The app's turn must be the thread's state and
/// its next turn must see it; memctl must report its edit superseded (exit 3).
#[test]
fn a_live_apps_held_turn_wins_over_a_concurrent_rewrite() {
    let cases: Vec<Vec<&str>> = vec![
        vec!["trim", "--keep", "2", "--thread", "1"],
        vec!["rm", "--index", "0", "--thread", "1"],
    ];
    run_parallel(cases, |memctl_args| {
        let db = TestDb::fixture("race");
        let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
        let (hold, go) = (dir.path().join("held"), dir.path().join("go"));
        let app = Command::new(python("pg"))
            .arg(common::root().join("tests/interop/harness_pg.py"))
            .args([
                "held-app", "--url", &db.url, "--graph", "1", "--thread", "1",
            ])
            .args(["--hold-file", common::s(&hold), "--go-file", common::s(&go)])
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .map_err(|e| e.to_string())?;
        let wait_for = |what: &str, done: &dyn Fn() -> bool| -> Result<(), String> {
            let started = std::time::Instant::now();
            while !done() {
                if started.elapsed().as_secs() > 90 {
                    return Err(format!("timed out waiting for {what}"));
                }
                std::thread::sleep(std::time::Duration::from_millis(20));
            }
            Ok(())
        };
        wait_for("the app to make its checkpoint", &|| hold.exists())?;
        let count = || {
            db.count(
                "SELECT count(*) FROM checkpoints WHERE thread_id = '1' AND checkpoint_ns = ''",
            )
        };
        let before = count();
        let mut args = memctl_args.clone();
        args.extend(["--db", &db.url, "--settle", "10s", "--format", "json"]);
        let mut cmd = memctl();
        cmd.args(&args).timeout(std::time::Duration::from_secs(120));
        let edit = std::thread::spawn(move || cmd.output().expect("memctl runs"));
        wait_for("memctl's checkpoint", &|| count() == before + 1)?;
        std::fs::write(&go, b"go").map_err(|e| e.to_string())?;
        let edit = edit.join().map_err(|_| "memctl thread".to_string())?;
        let app = app.wait_with_output().map_err(|e| e.to_string())?;
        if !app.status.success() {
            return Err(format!(
                "{memctl_args:?}: the app lost its turn:\n{}\n{}",
                String::from_utf8_lossy(&app.stdout),
                String::from_utf8_lossy(&app.stderr)
            ));
        }
        let report: Json = serde_json::from_slice(&edit.stdout).map_err(|e| {
            format!(
                "memctl output ({e}): {}",
                String::from_utf8_lossy(&edit.stderr)
            )
        })?;
        if report["threads"][0]["status"] != "superseded" || edit.status.code() != Some(3) {
            return Err(format!(
                "{memctl_args:?}: memctl must report its edit superseded with exit 3, got {:?}: {report}",
                edit.status.code()
            ));
        }
        Ok(())
    });
}

/// `trim --all` writes a batch of threads in a few statements: the app moves two threads of
/// the batch between memctl's read and its write (one gets a new checkpoint, the other a
/// pending write: a run started on it). The test holds a lock that lets memctl read but not
/// write, moves the two threads while memctl waits for it, then lets go. Only those two are
/// left alone and reported skipped; every other thread is trimmed, as real LangGraph's
/// update_state trims it.
#[test]
fn a_thread_the_app_moves_during_a_batch_is_the_only_one_left_alone() {
    let db = TestDb::fixture("batch_moved");
    let (moved, run_started) = ("tools", "custom-state");
    let latest = |c: &mut postgres::Client, t: &str| -> String {
        c.query_one(
            "SELECT max(checkpoint_id COLLATE \"C\") FROM checkpoints WHERE thread_id = $1 AND checkpoint_ns = ''",
            &[&t],
        )
        .expect("latest")
        .get(0)
    };
    let mut app = db.client();
    let before = latest(&mut app, moved);
    // memctl reads freely; its write lock (SHARE ROW EXCLUSIVE) waits for this one.
    app.batch_execute(
        "BEGIN; LOCK TABLE checkpoint_blobs, checkpoints, checkpoint_writes IN SHARE MODE",
    )
    .expect("lock");
    let mut cmd = memctl();
    cmd.args(["trim", "--all", "--keep", "2", "--db", &db.url])
        .args([
            "--busy-timeout",
            "60000",
            "--settle",
            "0s",
            "--format",
            "json",
        ])
        .timeout(std::time::Duration::from_secs(120));
    let run = std::thread::spawn(move || cmd.output().expect("memctl runs"));
    let watch = std::cell::RefCell::new(db.client());
    common::wait_for("memctl to wait for its write lock", || {
        watch
            .borrow_mut()
            .query_one(
                "SELECT count(*) FROM pg_locks l JOIN pg_class r ON r.oid = l.relation \
                 WHERE NOT l.granted AND l.mode = 'ShareRowExclusiveLock' \
                   AND r.relname IN ('checkpoint_blobs', 'checkpoints', 'checkpoint_writes')",
                &[],
            )
            .map(|r| r.get::<_, i64>(0) > 0)
            .unwrap_or(false)
    });
    // The app's new checkpoint on one thread (its latest one again, under a later id), and
    // a pending write on the latest checkpoint of another.
    let newer = later_id(&before);
    app.execute(
        "INSERT INTO checkpoints (thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, type, checkpoint, metadata) \
         SELECT thread_id, checkpoint_ns, $2, checkpoint_id, type, checkpoint, metadata FROM checkpoints \
         WHERE thread_id = $1 AND checkpoint_ns = '' AND checkpoint_id = $3",
        &[&moved, &newer, &before],
    )
    .expect("the app's checkpoint");
    let started_at = latest(&mut app, run_started);
    app.execute(
        "INSERT INTO checkpoint_writes (thread_id, checkpoint_ns, checkpoint_id, task_id, task_path, idx, channel, type, blob) \
         VALUES ($1, '', $2, 'app-task', '', 0, 'messages', 'msgpack', '\\x90'::bytea)",
        &[&run_started, &started_at],
    )
    .expect("the app's pending write");
    app.batch_execute("COMMIT").expect("commit");
    let out = run.join().expect("memctl thread");
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let report: Json = serde_json::from_slice(&out.stdout).expect("JSON report");
    let status = |t: &str| -> (String, String) {
        let row = report["threads"]
            .as_array()
            .expect("threads")
            .iter()
            .find(|r| r["thread_id"] == t)
            .unwrap_or_else(|| panic!("{t} is not in the report: {report}"));
        (
            row["status"].as_str().unwrap_or_default().to_owned(),
            row["notes"].to_string(),
        )
    };
    let (s, notes) = status(moved);
    assert_eq!(s, "skipped", "{report}");
    assert!(
        notes.contains(&format!("latest checkpoint is now {newer}")),
        "{notes}"
    );
    let (s, notes) = status(run_started);
    assert_eq!(s, "skipped", "{report}");
    assert!(notes.contains("a run started on it"), "{notes}");
    // Nothing of memctl's on the two: the app's rows are the newest.
    assert_eq!(latest(&mut app, moved), newer);
    assert_eq!(latest(&mut app, run_started), started_at);
    for t in THREADS.iter().filter(|t| ![moved, run_started].contains(t)) {
        assert_eq!(status(t).0, "rewritten", "{t}: {report}");
        // LangGraph makes its change on a copy of its own (one per thread).
        let original = TestDb::fixture(&format!("batch_moved_orig_{t}"));
        let (ok, text) = harness(&[
            "check-rewrite",
            "--original",
            &original.url,
            "--rewritten",
            &db.url,
            "--thread",
            t,
            "--graph",
            &graph_of(t),
            "--expect",
            &json!({"mode": "trim", "max_tokens": 2, "counter": "len"}).to_string(),
        ]);
        let fails: Vec<&str> = text.lines().filter(|l| l.starts_with("FAIL")).collect();
        assert!(ok, "{t}:\n{}", fails.join("\n"));
    }
}

/// A checkpoint id that sorts just after `id` (its last hex digit moved up, with carry).
fn later_id(id: &str) -> String {
    let mut chars: Vec<char> = id.chars().collect();
    for c in chars.iter_mut().rev() {
        match c.to_digit(16) {
            Some(15) => *c = '0',
            Some(d) => {
                *c = char::from_digit(d + 1, 16).unwrap_or('f');
                break;
            }
            None => {}
        }
    }
    chars.into_iter().collect()
}

/// An app writing through PostgresSaver on two threads while memctl gcs, prunes and trims the
/// others, several rounds: the app sees no error and loses no message.
#[test]
fn a_live_app_beside_gc_prune_and_trim_sees_no_error() {
    let db = TestDb::fixture("live");
    let dir = tempfile::tempdir().expect("temp dir");
    let stop = dir.path().join("stop");
    let app = Command::new(python("pg"))
        .arg(common::root().join("tests/interop/harness_pg.py"))
        .args([
            "live-app",
            "--url",
            &db.url,
            "--graph",
            "1",
            "--threads",
            "1,system",
        ])
        .args(["--seconds", "60", "--stop-file", common::s(&stop)])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("the app starts");
    // The app is running once it has added a checkpoint to each of its threads.
    let count = |t: &str| {
        db.count(&format!(
            "SELECT COUNT(*) FROM checkpoints WHERE thread_id = '{t}' AND checkpoint_ns = ''"
        ))
    };
    let before = (count("1"), count("system"));
    common::wait_for("the app's first checkpoints", || {
        count("1") > before.0 && count("system") > before.1
    });
    let others = [
        "tools",
        "custom-state",
        "unicode",
        "blocks",
        "usage",
        "tuple-args",
    ];
    for round in 0..3 {
        for t in others {
            let out = memctl()
                .args([
                    "trim", "--keep", "2", "--thread", t, "--db", &db.url, "--format", "json",
                ])
                .output()
                .expect("runs");
            assert!(
                matches!(out.status.code(), Some(0 | 3)),
                "round {round} trim {t}: {}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
        let out = memctl()
            .args([
                "gc",
                "--all",
                "--keep-checkpoints",
                "1",
                "--db",
                &db.url,
                "--format",
                "json",
            ])
            .output()
            .expect("runs");
        assert!(
            matches!(out.status.code(), Some(0 | 3)),
            "gc: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let out = memctl()
        .args([
            "prune", "--idle", "0s", "--thread", "blocks", "--thread", "usage",
        ])
        .args(["--db", &db.url, "--format", "json"])
        .output()
        .expect("runs");
    assert!(
        matches!(out.status.code(), Some(0 | 3)),
        "prune: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    std::fs::write(&stop, b"stop").expect("stop file");
    let result = app.wait_with_output().expect("the app ends");
    let report = String::from_utf8_lossy(&result.stdout);
    assert!(
        result.status.success(),
        "the app saw errors:\n{report}\n{}",
        String::from_utf8_lossy(&result.stderr)
    );
    assert!(report.contains("\"invocations\""), "{report}");
    for t in ["tools", "custom-state", "unicode"] {
        let r = harness_json(&[
            "continue",
            "--url",
            &db.url,
            "--thread",
            t,
            "--graph",
            &graph_of(t),
        ]);
        assert!(r["messages_after"].as_u64().is_some(), "{t}: {r}");
    }
}

/// Issue #16, gc beside a live app on DeltaChannel threads, through PostgresSaver: the app
/// (harness_pg.py live-app) runs turns on `live-1` (delta:1) and `live-sub` (the stateful
/// subgraph graph: DeltaChannels in the root and the `child` namespace) of a copy of the
/// delta fixture, recording every checkpoint and write it makes into a SQLite mirror, while
/// gc runs again and again ([`delta_states::gc_beside_a_live_app`]). The app saw no error
/// and lost no message; every checkpoint left shows LangGraph the state the mirror shows
/// there ([`delta_states::compare_with_record`]); both threads carry on.
#[test]
fn gc_beside_a_live_app_on_delta_threads_loses_nothing_on_postgres() {
    let db = TestDb::delta_fixture("live_delta");
    let dir = tempfile::tempdir().expect("temp dir");
    let (stop, mirror) = (dir.path().join("stop"), dir.path().join("mirror.sqlite"));
    let app = Command::new(python("pg"))
        .arg(common::root().join("tests/interop/harness_pg.py"))
        .args(["live-app", "--url", &db.url, "--graph", "delta:1"])
        .args(["--threads", "live-1,live-sub=delta:stateful-sub"])
        .args(["--seconds", "600", "--stop-file", common::s(&stop)])
        .args(["--mirror", common::s(&mirror)])
        // A bounded record: the comparison afterwards replays every checkpoint of it.
        .args(["--max-turns", "300", "--pause", "0.1"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("the app starts");
    let app_threads = ["live-1", "live-sub"];
    let (collected, mut failures) = delta_states::gc_beside_a_live_app(&db.url, &app_threads);
    std::fs::write(&stop, b"stop").expect("stop file");
    let result = app.wait_with_output().expect("the app ends");
    assert!(
        result.status.success() && failures.is_empty(),
        "{}\nthe app: {}\n{}",
        failures.join("\n"),
        String::from_utf8_lossy(&result.stdout),
        String::from_utf8_lossy(&result.stderr)
    );
    let graphs = "live-1=delta:1,live-sub=delta:stateful-sub";
    let now = harness_json(&["delta-states", "--url", &db.url, "--graphs", graphs]);
    // The mirror is a SqliteSaver file: harness.py reads it (in the same venv).
    let out = Command::new(python("pg"))
        .arg(common::root().join("tests/interop/harness.py"))
        .args([
            "delta-states",
            "--db",
            common::s(&mirror),
            "--graphs",
            graphs,
        ])
        .output()
        .expect("the harness runs");
    let record: Json = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!("{e}: {}", String::from_utf8_lossy(&out.stderr));
    });
    for t in app_threads {
        failures.extend(delta_states::compare_with_record(
            t,
            &now["threads"][t],
            &record["threads"][t],
        ));
    }
    for (t, graph) in [("live-1", "delta:1"), ("live-sub", "delta:stateful-sub")] {
        let cont = harness_json(&[
            "continue", "--url", &db.url, "--thread", t, "--graph", graph,
        ]);
        let had = delta_states::message_ids(&now["threads"][t]["latest_messages"]);
        let received = delta_states::message_ids(&cont["model_received"][0]);
        if received.get(..had.len()) != Some(&had[..]) {
            failures.push(format!("{t} does not carry on: {cont}"));
        }
    }
    assert!(
        failures.is_empty(),
        "{}\ncollected {collected:?}",
        failures.join("\n")
    );
}

/// summarize against the local test endpoint writes what update_state writes for the same
/// list (system message, the summary message, the kept ones), and the thread continues.
#[test]
fn summarize_is_what_postgres_saver_update_state_writes() {
    summarize_and_compare(&Fixture::Plain, "summarize");
}

/// summarize of DeltaChannel threads on Postgres (the local test endpoint) writes what
/// PostgresSaver's update_state writes for the same list; LangGraph loads, shows the history
/// and continues the thread; the other threads are untouched (#16).
#[test]
fn summarize_of_delta_threads_is_what_postgres_saver_update_state_writes() {
    let failures: Vec<String> = ["1", "files"]
        .iter()
        .filter_map(|t| {
            let original = Fixture::Delta.db(&format!("orig_sum_{t}"));
            let rewritten = Fixture::Delta.db(&format!("new_sum_{t}"));
            summarize_between(
                &Fixture::Delta,
                &original,
                &rewritten,
                t,
                &format!("delta:{t}"),
                "2",
            )
            .err()
        })
        .collect();
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

/// memctl summarizes thread 'system' of one copy of `fixture` through a local endpoint; the
/// list it wrote goes to LangGraph's own update_state on another copy (with the fixture's
/// key), and the rows are compared, loaded and continued.
fn summarize_and_compare(fixture: &Fixture, hint: &str) {
    let original = fixture.db(&format!("orig_{hint}"));
    let rewritten = fixture.db(&format!("new_{hint}"));
    if let Err(e) = summarize_between(fixture, &original, &rewritten, "system", "system", "3") {
        panic!("{e}");
    }
}

/// memctl summarizes `thread` of `rewritten` (keeping `keep` messages) through a local
/// endpoint; LangGraph's update_state writes the list memctl wrote on `original` (a copy of
/// the same database, with the fixture's key), and the harness compares the rows, loads the
/// thread and continues it.
fn summarize_between(
    fixture: &Fixture,
    original: &TestDb,
    rewritten: &TestDb,
    thread: &str,
    graph: &str,
    keep: &str,
) -> Result<(), String> {
    use common::chat_server::{ChatServer, Reply};
    let server =
        ChatServer::start(|_, _| Reply::Summary("Bob said hello; the bot was terse.".into()));
    let out = fixture
        .memctl()
        .env("MEMCTL_TEST_KEY", "sk-test")
        .args(["summarize", "--thread", thread, "--keep", keep])
        .args(["--endpoint", &server.url, "--model", "tiny"])
        .args(["--api-key-env", "MEMCTL_TEST_KEY", "--format", "json"])
        .args(["--db", &rewritten.url])
        .output()
        .expect("runs");
    let report: Json = serde_json::from_slice(&out.stdout).unwrap_or(Json::Null);
    if report["threads"][0]["status"] != "summarized" {
        return Err(format!(
            "{thread}: summarize: {report} {}",
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    let written = fixture.run_json(&["dump", "--thread", thread, "--db", &rewritten.url]);
    let expect = json!({"mode": "messages", "messages": written});
    let (ok, text) = harness_with(
        fixture,
        &[
            "check-rewrite",
            "--original",
            &original.url,
            "--rewritten",
            &rewritten.url,
            "--thread",
            thread,
            "--graph",
            graph,
            "--expect",
            &expect.to_string(),
        ],
    );
    if ok {
        Ok(())
    } else {
        Err(format!(
            "{thread} summarize:\n{}",
            text.lines()
                .filter(|l| l.starts_with("FAIL"))
                .collect::<Vec<_>>()
                .join("\n")
        ))
    }
}

/// The DeltaChannel threads of fixtures/postgres-delta.sql that are not paused.
const DELTA_THREADS: [&str; 7] = [
    "1", "edits", "files", "notes", "migrated", "subgraph", "exit",
];

/// trim and rm of DeltaChannel threads on Postgres write what PostgresSaver's `update_state`
/// writes (rows compared by the harness: the new checkpoint without a messages value, or a
/// snapshot as an inline `true` plus its blob row, the write rows on the parent), and
/// LangGraph loads and continues the thread.
#[test]
fn trim_and_rm_of_delta_threads_are_what_postgres_saver_update_state_writes() {
    let mut cases: Vec<(&str, Vec<&str>, Json)> = DELTA_THREADS
        .iter()
        .map(|t| {
            (
                *t,
                vec!["trim", "--keep", "2"],
                json!({"mode": "trim", "max_tokens": 2, "counter": "len", "keep_first": false}),
            )
        })
        .collect();
    for thread in ["1", "files", "migrated"] {
        let ids: Vec<Json> = expected("postgres-delta")["threads"][thread]["latest_messages"]
            .as_array()
            .expect("messages")[1..]
            .iter()
            .map(|m| m["id"].clone())
            .collect();
        cases.push((
            thread,
            vec!["rm", "--index", "0"],
            json!({"mode": "ids", "ids": ids}),
        ));
    }
    run_parallel(cases, |(thread, args, expect)| {
        check_on(&Fixture::Delta, thread, &args, expect)
    });
}

/// A PostgresSaver thread whose `files` DeltaChannel is one superstep short of LangGraph's
/// snapshot bound (graphs.DELTA_EXTRA["bump"], written by real LangGraph into a fresh
/// database): trim, rm and summarize must snapshot files without writing it, under a bumped
/// version and with the blob row `put` writes for it, as PostgresSaver's update_state does
/// (#16; memctl refused this before).
#[test]
fn an_update_that_snapshots_an_unwritten_delta_channel_on_postgres_is_update_states() {
    let src = TestDb::empty("bump_src");
    let loaded = harness_json(&["load-scenario", "--url", &src.url, "--graph", "delta:bump"]);
    assert_eq!(
        loaded["metadata"]["counters_since_delta_snapshot"]["files"][1], 4999,
        "{loaded}"
    );
    let ids: Vec<Json> = run_json(&["dump", "--db", &src.url, "bump"])
        .as_array()
        .expect("messages")[1..]
        .iter()
        .map(|m| m["id"].clone())
        .collect();
    let mut failures = Vec::new();
    let cases = [
        (
            vec!["trim", "--keep", "2"],
            json!({"mode": "trim", "max_tokens": 2, "counter": "len", "keep_first": false}),
        ),
        (
            vec!["rm", "--index", "0"],
            json!({"mode": "ids", "ids": ids}),
        ),
    ];
    for (i, (args, expect)) in cases.into_iter().enumerate() {
        let original = src.copy(&format!("bump_orig_{i}"));
        let rewritten = src.copy(&format!("bump_new_{i}"));
        if let Err(e) = check_between(
            &Fixture::Delta,
            &original,
            &rewritten,
            "bump",
            "delta:bump",
            &args,
            expect,
        ) {
            failures.push(e);
        }
        if i == 0 {
            assert_eq!(files_snapshot_of_update(&rewritten), 1);
        }
    }
    let original = src.copy("bump_orig_sum");
    let rewritten = src.copy("bump_new_sum");
    if let Err(e) = summarize_between(
        &Fixture::Delta,
        &original,
        &rewritten,
        "bump",
        "delta:bump",
        "2",
    ) {
        failures.push(e);
    }
    // `bump-unwritten`: files was never written (no version): at the bound LangGraph leaves it
    // out (no blob row) and its counters go on, and so must memctl.
    let unwritten = TestDb::empty("bump_unwritten_src");
    harness_json(&[
        "load-scenario",
        "--url",
        &unwritten.url,
        "--graph",
        "delta:bump-unwritten",
    ]);
    if let Err(e) = check_between(
        &Fixture::Delta,
        &unwritten.copy("bump_unwritten_orig"),
        &unwritten.copy("bump_unwritten_new"),
        "bump-unwritten",
        "delta:bump-unwritten",
        &["trim", "--keep", "2"],
        json!({"mode": "trim", "max_tokens": 2, "counter": "len", "keep_first": false}),
    ) {
        failures.push(e);
    }
    // rm --purge: the new checkpoint snapshots messages and files (files under a bumped
    // version); LangGraph loads the thread without the message and continues it.
    let purged = src.copy("bump_purge");
    let out = run_json(&[
        "rm",
        "--db",
        &purged.url,
        "--thread",
        "bump",
        "--index",
        "0",
        "--purge",
        "--format",
        "json",
    ]);
    assert_eq!(out["threads"][0]["status"], "purged", "{out}");
    assert_eq!(files_snapshot_of_update(&purged), 1);
    let state = harness_json(&[
        "state",
        "--url",
        &purged.url,
        "--thread",
        "bump",
        "--graph",
        "delta:bump",
    ]);
    let kept: Vec<Json> = ids[..].to_vec();
    assert_eq!(delta_states::message_ids(&state["messages"]), kept);
    let cont = harness_json(&[
        "continue",
        "--url",
        &purged.url,
        "--thread",
        "bump",
        "--graph",
        "delta:bump",
    ]);
    assert_eq!(
        delta_states::message_ids(&cont["model_received"][0])[..kept.len()],
        kept[..],
        "{cont}"
    );
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

/// How many `update` checkpoints of thread `bump` hold files as a snapshot (an inline `true`)
/// with the blob row of their files version, as `PostgresSaver.put` stores a snapshot.
fn files_snapshot_of_update(db: &TestDb) -> i64 {
    db.count(
        "SELECT count(*) FROM checkpoints c JOIN checkpoint_blobs b \
         ON b.thread_id = c.thread_id AND b.checkpoint_ns = c.checkpoint_ns \
         AND b.channel = 'files' AND b.version = c.checkpoint -> 'channel_versions' ->> 'files' \
         WHERE c.thread_id = 'bump' AND c.checkpoint -> 'channel_values' -> 'files' = 'true' \
         AND c.metadata ->> 'source' = 'update'",
    )
}

/// prune of DeltaChannel threads on Postgres deletes exactly what LangGraph's own
/// `delete_thread` deletes (every row of the three tables, compared row for row between two
/// copies); every other thread then shows LangGraph the same history as before (the
/// threads expected/postgres-delta.json names, but the pruned ones) and continues.
#[test]
fn prune_of_delta_threads_deletes_what_postgres_saver_delete_thread_deletes() {
    let ours = TestDb::delta_fixture("delta_prune_ours");
    let theirs = TestDb::delta_fixture("delta_prune_theirs");
    // What LangGraph shows of every thread before (live: the committed JSON keeps no
    // metadata or tasks, which the harness now compares too).
    let before = harness_json(&["delta-states", "--url", &ours.url]);
    let out = memctl()
        .args([
            "prune", "--idle", "0s", "--thread", "files", "--thread", "1",
        ])
        .args(["--db", &ours.url, "--format", "json"])
        .output()
        .expect("runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    harness_json(&[
        "delete-threads",
        "--url",
        &theirs.url,
        "--threads",
        "files,1",
    ]);
    assert_eq!(ours.rows_digest(), theirs.rows_digest());
    let n = ours.count(
        "SELECT (SELECT count(*) FROM checkpoints WHERE thread_id IN ('files', '1')) \
              + (SELECT count(*) FROM checkpoint_blobs WHERE thread_id IN ('files', '1')) \
              + (SELECT count(*) FROM checkpoint_writes WHERE thread_id IN ('files', '1'))",
    );
    assert_eq!(n, 0, "rows left");
    let states = harness_json(&["delta-states", "--url", &ours.url]);
    let want = expected("postgres-delta");
    let left: Vec<&String> = states["threads"]
        .as_object()
        .expect("threads")
        .keys()
        .collect();
    let want_left: Vec<&String> = want["threads"]
        .as_object()
        .expect("threads")
        .keys()
        .filter(|t| !["files", "1"].contains(&t.as_str()))
        .collect();
    assert_eq!(left, want_left);
    for t in want_left {
        assert_eq!(states["threads"][t], before["threads"][t], "{t}");
    }
    for t in ["files", "1"] {
        let st = harness_json(&[
            "state",
            "--url",
            &ours.url,
            "--thread",
            t,
            "--graph",
            &format!("delta:{t}"),
        ]);
        assert_eq!(st["exists"], false, "{t}: {st}");
    }
    let cont = harness_json(&[
        "continue",
        "--url",
        &ours.url,
        "--thread",
        "edits",
        "--graph",
        "delta:edits",
    ]);
    assert_eq!(
        cont["messages_after"].as_u64(),
        cont["messages_before"].as_u64().map(|n| n + 2),
        "{cont}"
    );
}

/// gc of DeltaChannel threads on Postgres: every checkpoint it keeps shows LangGraph exactly
/// the state it showed before (expected/postgres-delta.json), blob rows included.
#[test]
fn gc_keeps_every_kept_checkpoints_delta_state_on_postgres() {
    for keep in ["1", "3"] {
        let db = TestDb::delta_fixture(&format!("delta_gc_{keep}"));
        // LangGraph's view before, live (metadata and tasks included).
        let original = harness_json(&["delta-states", "--url", &db.url]);
        let (failures, report) = delta_states::check_gc(&db.url, keep, &[], &original, || {
            harness_json(&["delta-states", "--url", &db.url])
        });
        assert!(failures.is_empty(), "{}", failures.join("\n"));
        let snapshots = delta_states::snapshotted(&report);
        assert!(snapshots >= 3, "keep {keep}: {report}");
        // No blob row is left that no checkpoint names.
        let client = &mut db.client();
        let orphans: i64 = client
            .query_one(
                "SELECT count(*) FROM checkpoint_blobs b WHERE NOT EXISTS (SELECT 1 FROM checkpoints c \
                 WHERE c.thread_id = b.thread_id AND c.checkpoint_ns = b.checkpoint_ns \
                 AND c.checkpoint -> 'channel_versions' ->> b.channel = b.version)",
                &[],
            )
            .expect("counts")
            .get(0);
        assert_eq!(orphans, 0, "keep {keep}: blob rows nobody names");
    }
}

/// rm --purge of DeltaChannel threads on Postgres: no row holds the removed text any more, the
/// new checkpoint holds the kept list as a snapshot (inline `true` and its blob row: it needs
/// none of the scrubbed rows), and LangGraph loads exactly the kept list and continues.
#[test]
fn a_purged_delta_thread_on_postgres_keeps_no_removed_byte_and_continues() {
    for thread in ["1", "files"] {
        let db = TestDb::delta_fixture(&format!("delta_purge_{thread}"));
        let before = expected("postgres-delta")["threads"][thread]["latest_messages"].clone();
        let removed = before[0]["content"].as_str().expect("text").to_owned();
        let out = run_json(&[
            "rm", "--db", &db.url, "--thread", thread, "--index", "0", "--purge", "--format",
            "json",
        ]);
        assert_eq!(out["threads"][0]["status"], "purged", "{thread}: {out}");
        let left = db.count(&format!(
            "SELECT (SELECT count(*) FROM checkpoints WHERE strpos(checkpoint::text || metadata::text, {0}) > 0) \
                  + (SELECT count(*) FROM checkpoint_blobs WHERE position(convert_to({0}, 'UTF8') in blob) > 0) \
                  + (SELECT count(*) FROM checkpoint_writes WHERE position(convert_to({0}, 'UTF8') in blob) > 0)",
            format!("'{}'", removed.replace('\'', "''"))
        ));
        assert_eq!(left, 0, "{thread}: rows still hold '{removed}'");
        let raw = run_json(&["dump", "--raw", "--db", &db.url, thread]);
        assert_eq!(
            raw["delta_channels"]["messages"]["stored"], "snapshot",
            "{thread}"
        );
        let ids = delta_states::message_ids;
        let graph = format!("delta:{thread}");
        let state = harness_json(&[
            "state", "--url", &db.url, "--thread", thread, "--graph", &graph,
        ]);
        assert_eq!(ids(&state["messages"]), ids(&before)[1..], "{thread}");
        let cont = harness_json(&[
            "continue", "--url", &db.url, "--thread", thread, "--graph", &graph,
        ]);
        assert_eq!(
            ids(&cont["model_received"][0])[..ids(&before).len() - 1],
            ids(&before)[1..],
            "{thread}: {cont}"
        );
    }
}

// ---- encrypted (EncryptedSerializer) databases: fixtures/postgres-encrypted.sql -------------

/// The message ids of a thread of the encrypted fixture.
fn encrypted_ids(thread: &str) -> Vec<(String, Json)> {
    Fixture::Encrypted.expected()["threads"][thread]["messages"]
        .as_array()
        .expect("messages")
        .iter()
        .map(|m| (m["id"].as_str().unwrap_or_default().to_owned(), m.clone()))
        .collect()
}

/// trim and rm on encrypted threads write what LangGraph's update_state with the same
/// EncryptedSerializer writes (blob and write rows `msgpack+aes`, compared decrypted; the
/// inline values and metadata plain, as the saver keeps them), and LangGraph with the key
/// loads and continues them. 'system' was written plain and continued encrypted: its new
/// rows are encrypted, as the app's are now.
#[test]
fn encrypted_trim_and_rm_are_what_postgres_saver_with_the_key_writes() {
    let mut cases: Vec<(&str, Vec<&str>, Json)> = Vec::new();
    for thread in [
        "1",
        "tools",
        "custom-state",
        "subgraph",
        "summarized",
        "system",
    ] {
        cases.push((
            thread,
            vec!["trim", "--keep", "2"],
            json!({"mode": "trim", "max_tokens": 2, "counter": "len"}),
        ));
    }
    let ids: Vec<String> = encrypted_ids("1")
        .into_iter()
        .skip(1)
        .map(|(i, _)| i)
        .collect();
    cases.push((
        "1",
        vec!["rm", "--index", "0"],
        json!({"mode": "ids", "ids": ids}),
    ));
    run_parallel(cases, |(thread, args, expect)| {
        check_on(&Fixture::Encrypted, thread, &args, expect)
    });
}

/// `rm --purge` on an encrypted thread: LangGraph with the key agrees with the new rows, no
/// row holds the removed text in its decrypted value or its stored bytes, and the thread
/// continues.
#[test]
fn encrypted_purge_leaves_the_text_in_no_decrypted_value() {
    let secret = "capital of France";
    let ids: Vec<String> = encrypted_ids("1")
        .into_iter()
        .filter(|(_, m)| !m["content"].as_str().unwrap_or_default().contains(secret))
        .map(|(i, _)| i)
        .collect();
    assert_eq!(ids.len(), 2);
    let fx = Fixture::Encrypted;
    check_on(
        &fx,
        "1",
        &["rm", "--match", secret, "--purge"],
        json!({"mode": "ids", "ids": ids, "purge": true}),
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let db = fx.db("enc_purge");
    let (ok, text) = harness_with(&fx, &["find-text", "--url", &db.url, "--text", secret]);
    assert!(
        ok && text.contains("\"rows\": [\n"),
        "the fixture holds it: {text}"
    );
    let out = fx.run_json(&[
        "rm", "--match", secret, "--purge", "--thread", "1", "--db", &db.url, "--format", "json",
    ]);
    assert_eq!(out["threads"][0]["status"], "purged", "{out}");
    let (ok, text) = harness_with(&fx, &["find-text", "--url", &db.url, "--text", secret]);
    assert!(ok && text.contains("\"rows\": []"), "still there: {text}");
    let (ok, text) = harness_with(
        &fx,
        &[
            "continue", "--url", &db.url, "--thread", "1", "--graph", "1",
        ],
    );
    assert!(ok, "{text}");
}

/// gc on the encrypted fixture keeps every thread loadable by LangGraph with the key, and
/// continuable.
#[test]
fn encrypted_gc_keeps_every_thread_loadable_with_the_key() {
    let fx = Fixture::Encrypted;
    let db = fx.db("enc_gc");
    let before = db.count("SELECT count(*) FROM checkpoints");
    fx.run_json(&[
        "gc",
        "--all",
        "--keep-checkpoints",
        "2",
        "--db",
        &db.url,
        "--format",
        "json",
    ]);
    assert!(db.count("SELECT count(*) FROM checkpoints") < before);
    let exp = common::root().join("fixtures/expected/postgres-encrypted.json");
    let (ok, text) = harness_with(
        &fx,
        &["check-all", "--url", &db.url, "--expected", common::s(&exp)],
    );
    assert!(ok, "after gc:\n{text}");
}

/// rekey on Postgres: every blob and write value goes under the new key (the `empty` rows
/// and the inline values stay as the saver keeps them); LangGraph with the new key reads and
/// continues every thread, with the old key it cannot; a second run changes nothing.
#[test]
fn encrypted_rekey_rotates_every_value_and_langgraph_reads_them_with_the_new_key() {
    let fx = Fixture::Encrypted;
    let db = fx.db("enc_rekey");
    let old = fx.key().expect("key");
    let new = "memctl-rotated-key-for-postgres!";
    assert_eq!(new.len(), 32);
    let rekey = |dry: bool| {
        let mut cmd = memctl();
        cmd.env("OLD_KEY", &old).env("NEW_KEY", new).args([
            "rekey",
            "--old-key-env",
            "OLD_KEY",
            "--new-key-env",
            "NEW_KEY",
            "--db",
            &db.url,
            "--format",
            "json",
        ]);
        if dry {
            cmd.arg("--dry-run");
        }
        let out = cmd.output().expect("runs");
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        serde_json::from_slice::<Json>(&out.stdout).expect("json")
    };
    let values = db.count(
        "SELECT (SELECT count(*) FROM checkpoint_blobs WHERE type <> 'empty' AND blob IS NOT NULL) \
              + (SELECT count(*) FROM checkpoint_writes)",
    );
    let blobs_before: Vec<String> = keys(
        &db,
        "SELECT encode(blob, 'hex') FROM checkpoint_blobs WHERE blob IS NOT NULL",
    );
    let dry = rekey(true);
    assert_eq!(
        keys(
            &db,
            "SELECT encode(blob, 'hex') FROM checkpoint_blobs WHERE blob IS NOT NULL"
        ),
        blobs_before,
        "a dry run writes nothing: {dry}"
    );
    let report = rekey(false);
    let plain_left = db.count(
        "SELECT (SELECT count(*) FROM checkpoint_blobs WHERE type NOT LIKE '%+aes' AND type <> 'empty') \
              + (SELECT count(*) FROM checkpoint_writes WHERE type NOT LIKE '%+aes')",
    );
    assert_eq!(plain_left, 0, "plain values are encrypted too: {report}");
    assert_eq!(report["changed"], values, "every value rewritten: {report}");
    let exp = common::root().join("fixtures/expected/postgres-encrypted.json");
    let check_all = |key: &str| {
        let out = Command::new(python("pg"))
            .arg(common::root().join("tests/interop/harness_pg.py"))
            .args(["check-all", "--url", &db.url, "--expected", common::s(&exp)])
            .env("LANGGRAPH_AES_KEY", key)
            .output()
            .expect("the harness runs");
        (
            out.status.success(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };
    // With the old key LangGraph cannot read them (checked first: check-all continues threads).
    let (ok, text) = check_all(&old);
    assert!(!ok, "the old key still reads the database: {text}");
    let (ok, text) = check_all(new);
    assert!(ok, "after rekey, with the new key:\n{text}");
    // Run again: everything is under the new key already (the threads grew by one turn each).
    let again = rekey(false);
    assert_eq!(again["changed"], 0, "{again}");
}

/// summarize on an encrypted thread (through the local test endpoint) writes what
/// update_state with the key writes for the same list ('system': its older rows plain, its
/// newer ones encrypted; the new ones are encrypted).
#[test]
fn encrypted_summarize_is_what_postgres_saver_with_the_key_writes() {
    summarize_and_compare(&Fixture::Encrypted, "enc_summarize");
}

/// kill -9 at random points of a Postgres rotation (one value per transaction), then the same
/// command again: it finishes, every value is under the new key, and LangGraph with the new
/// key reads and continues every thread as the expectations say.
#[test]
fn a_killed_postgres_rotation_finishes_when_run_again() {
    let fx = Fixture::Encrypted;
    let old = fx.key().expect("key");
    let new = "memctl-rotated-key-for-postgres!";
    let exp = common::root().join("fixtures/expected/postgres-encrypted.json");
    let rekey = |url: &str| {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_memctl"));
        cmd.env_remove("LANGGRAPH_AES_KEY")
            .env("OLD_KEY", &old)
            .env("NEW_KEY", new)
            .args([
                "rekey",
                "--old-key-env",
                "OLD_KEY",
                "--new-key-env",
                "NEW_KEY",
            ])
            .args(["--batch", "1", "--format", "json", "--db", url]);
        cmd
    };
    // How long a whole run takes here.
    let db = fx.db("enc_kill_full");
    let started = std::time::Instant::now();
    let out = rekey(&db.url).output().expect("runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let full = started.elapsed();
    let mut seed = 0x9e37_79b9_7f4a_7c15u64;
    let mut killed = 0;
    for trial in 0..6 {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        let db = fx.db(&format!("enc_kill{trial}"));
        let mut child = rekey(&db.url)
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .expect("spawn");
        let wait = full.mul_f64((seed % 1000) as f64 / 1000.0 * 0.9);
        std::thread::sleep(wait.max(std::time::Duration::from_millis(5)));
        if child.try_wait().expect("poll").is_none() {
            child.kill().expect("kill -9");
            killed += 1;
        }
        let _ = child.wait();
        let again = rekey(&db.url).output().expect("runs");
        assert!(
            again.status.success(),
            "trial {trial}: {}",
            String::from_utf8_lossy(&again.stderr)
        );
        let checked = Command::new(python("pg"))
            .arg(common::root().join("tests/interop/harness_pg.py"))
            .args(["check-all", "--url", &db.url, "--expected", common::s(&exp)])
            .env("LANGGRAPH_AES_KEY", new)
            .output()
            .expect("the harness runs");
        assert!(
            checked.status.success(),
            "trial {trial}: after the kill and a second run, with the new key:\n{}",
            String::from_utf8_lossy(&checked.stderr)
        );
    }
    assert!(killed >= 2, "only {killed} of 6 runs were killed mid-way");
}

/// `forget --match` on an encrypted Postgres database, with the app's key: no row holds the
/// text in its decrypted value or its stored bytes afterwards, and LangGraph with the key
/// loads and continues the thread it was scrubbed from.
#[test]
fn encrypted_forget_on_postgres_leaves_the_text_in_no_decrypted_value() {
    let fx = Fixture::Encrypted;
    let db = fx.db("enc_forget");
    let secret = "capital of France";
    let (ok, text) = harness_with(&fx, &["find-text", "--url", &db.url, "--text", secret]);
    assert!(
        ok && text.contains("\"rows\": [\n"),
        "the fixture holds it: {text}"
    );
    let out = fx
        .memctl()
        .args([
            "forget", "--match", secret, "--settle", "0s", "--db", &db.url,
        ])
        .output()
        .expect("memctl runs");
    let receipt = String::from_utf8_lossy(&out.stdout);
    assert!(
        receipt.contains("result: clean"),
        "exit {:?}: {receipt}\n{}",
        out.status.code(),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(!receipt.contains(secret), "the receipt names the text");
    let (ok, text) = harness_with(&fx, &["find-text", "--url", &db.url, "--text", secret]);
    assert!(ok && text.contains("\"rows\": []"), "still there: {text}");
    let (ok, text) = harness_with(
        &fx,
        &[
            "continue", "--url", &db.url, "--thread", "1", "--graph", "1",
        ],
    );
    assert!(ok, "{text}");
}

/// `forget --match` on the DeltaChannel threads of a Postgres database: the matching message
/// leaves the latest state (which LangGraph then shows without it) and every older row, and
/// the thread continues.
#[test]
fn forget_on_postgres_delta_threads_leaves_no_row_with_the_text() {
    let db = TestDb::delta_fixture("delta_forget");
    let before = expected("postgres-delta")["threads"]["1"]["latest_messages"].clone();
    let text = "Delta question 3";
    let gone: Vec<Json> = before
        .as_array()
        .expect("messages")
        .iter()
        .filter(|m| m["content"] == text)
        .map(|m| m["id"].clone())
        .collect();
    assert_eq!(gone.len(), 1, "{before}");
    let out = memctl()
        .args(["forget", "--match", text, "--settle", "0s", "--db", &db.url])
        .output()
        .expect("memctl runs");
    let receipt = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success() && receipt.contains("result: clean"),
        "exit {:?}: {receipt}\n{}",
        out.status.code(),
        String::from_utf8_lossy(&out.stderr)
    );
    let left = db.count(&format!(
        "SELECT (SELECT count(*) FROM checkpoints WHERE strpos(checkpoint::text || metadata::text, '{text}') > 0) \
              + (SELECT count(*) FROM checkpoint_blobs WHERE position(convert_to('{text}', 'UTF8') in blob) > 0) \
              + (SELECT count(*) FROM checkpoint_writes WHERE position(convert_to('{text}', 'UTF8') in blob) > 0)"
    ));
    assert_eq!(left, 0, "rows still hold '{text}'");
    let ids = delta_states::message_ids;
    let kept: Vec<_> = ids(&before)
        .into_iter()
        .filter(|id| !gone.contains(id))
        .collect();
    let state = harness_json(&[
        "state", "--url", &db.url, "--thread", "1", "--graph", "delta:1",
    ]);
    assert_eq!(ids(&state["messages"]), kept);
    harness_json(&[
        "continue", "--url", &db.url, "--thread", "1", "--graph", "delta:1",
    ]);
}

/// Copies thread `from` of the database at `src` into the one at `dst` as thread `to` (every
/// row of the saver's three tables, as they are).
fn copy_thread(src: &str, dst: &str, from: &str, to: &str) {
    let mut s = common::pg::client(src);
    let mut d = common::pg::client(dst);
    for r in s
        .query(
            "SELECT checkpoint_ns, checkpoint_id, parent_checkpoint_id, type, checkpoint::text, metadata::text \
             FROM checkpoints WHERE thread_id = $1",
            &[&from],
        )
        .expect("checkpoints")
    {
        let (ns, id, parent, t, cp, md): (String, String, Option<String>, Option<String>, String, String) =
            (r.get(0), r.get(1), r.get(2), r.get(3), r.get(4), r.get(5));
        d.execute(
            "INSERT INTO checkpoints (thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, type, checkpoint, metadata) \
             VALUES ($1, $2, $3, $4, $5, $6::text::jsonb, $7::text::jsonb)",
            &[&to, &ns, &id, &parent, &t, &cp, &md],
        )
        .expect("insert checkpoint");
    }
    for r in s
        .query(
            "SELECT checkpoint_ns, channel, version, type, blob FROM checkpoint_blobs WHERE thread_id = $1",
            &[&from],
        )
        .expect("blobs")
    {
        let (ns, ch, v, t, b): (String, String, String, String, Option<Vec<u8>>) =
            (r.get(0), r.get(1), r.get(2), r.get(3), r.get(4));
        d.execute(
            "INSERT INTO checkpoint_blobs (thread_id, checkpoint_ns, channel, version, type, blob) VALUES ($1, $2, $3, $4, $5, $6)",
            &[&to, &ns, &ch, &v, &t, &b],
        )
        .expect("insert blob");
    }
    for r in s
        .query(
            "SELECT checkpoint_ns, checkpoint_id, task_id, idx, channel, type, blob, task_path \
             FROM checkpoint_writes WHERE thread_id = $1",
            &[&from],
        )
        .expect("writes")
    {
        let (ns, id, task, idx, ch, t, b, path): (
            String,
            String,
            String,
            i32,
            String,
            Option<String>,
            Vec<u8>,
            String,
        ) = (
            r.get(0),
            r.get(1),
            r.get(2),
            r.get(3),
            r.get(4),
            r.get(5),
            r.get(6),
            r.get(7),
        );
        d.execute(
            "INSERT INTO checkpoint_writes (thread_id, checkpoint_ns, checkpoint_id, task_id, idx, channel, type, blob, task_path) \
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)",
            &[&to, &ns, &id, &task, &idx, &ch, &t, &b, &path],
        )
        .expect("insert write");
    }
}

/// A plain thread in a database whose app encrypts (its other threads' rows are encrypted):
/// with the key, memctl's new rows are encrypted, as the app's update_state through its
/// EncryptedSerializer writes them (LangGraph with the key compares, loads and continues);
/// without the key, one line asks for it and nothing is written.
#[test]
fn a_plain_thread_beside_encrypted_ones_gets_encrypted_rows() {
    let plain = TestDb::fixture("plain_src");
    let rewritten = TestDb::encrypted("plain_in_enc");
    copy_thread(&plain.url, &rewritten.url, "1", "plain-1");
    drop(plain);
    let original = rewritten.copy("plain_in_enc_orig");
    let types = |db: &TestDb| -> Vec<(String, String)> {
        let mut c = common::pg::client(&db.url);
        let mut out: Vec<(String, String)> = Vec::new();
        for sql in [
            "SELECT channel || '/' || version, type FROM checkpoint_blobs WHERE thread_id = 'plain-1' AND type <> 'empty'",
            "SELECT checkpoint_id || '/' || task_id || '/' || idx, COALESCE(type, '') FROM checkpoint_writes WHERE thread_id = 'plain-1'",
        ] {
            out.extend(c.query(sql, &[]).expect("types").iter().map(|r| (r.get(0), r.get(1))));
        }
        out
    };
    let before = types(&rewritten);
    assert!(before.iter().all(|(_, t)| !t.contains('+')), "{before:?}");
    // Without the key: one line, nothing written.
    let digest = rewritten.rows_digest();
    let out = memctl()
        .env_remove("LANGGRAPH_AES_KEY")
        .args([
            "trim",
            "--db",
            &rewritten.url,
            "--thread",
            "plain-1",
            "--keep",
            "2",
        ])
        .output()
        .expect("runs");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert_eq!(stderr.trim_end().lines().count(), 1, "{stderr}");
    assert!(
        stderr.contains("is plain") && stderr.contains("--key-env"),
        "{stderr}"
    );
    assert!(rewritten.rows_digest() == digest, "nothing written");
    // With the key: what LangGraph with the EncryptedSerializer writes.
    check_between(
        &Fixture::Encrypted,
        &original,
        &rewritten,
        "plain-1",
        &graph_of("1"),
        &["trim", "--keep", "2"],
        json!({"mode": "trim", "max_tokens": 2, "counter": "len"}),
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let added: Vec<(String, String)> = types(&rewritten)
        .into_iter()
        .filter(|r| !before.contains(r))
        .collect();
    assert!(!added.is_empty(), "memctl wrote rows");
    assert!(added.iter().all(|(_, t)| t.ends_with("+aes")), "{added:?}");
}

/// `rm --match X --purge` where X is only in the history (a message the summarizer removed,
/// the `summary` channel): scrubbed from every row of the thread on Postgres too, and
/// LangGraph continues the thread.
#[test]
fn rm_purge_scrubs_a_match_only_the_history_holds_on_postgres() {
    for (thread, pattern, text) in [
        ("summarized", "Weather in Rome", "Weather in Rome"),
        ("custom-state", r"turn\(s\) so far", "turn(s) so far"),
    ] {
        let db = TestDb::fixture(&format!("purge_hist_{}", thread.replace('-', "_")));
        let holding = || {
            db.count(&format!(
                "SELECT (SELECT count(*) FROM checkpoints WHERE thread_id = '{thread}' AND strpos(checkpoint::text || metadata::text, '{text}') > 0) \
                      + (SELECT count(*) FROM checkpoint_blobs WHERE thread_id = '{thread}' AND position('{text}'::bytea in blob) > 0) \
                      + (SELECT count(*) FROM checkpoint_writes WHERE thread_id = '{thread}' AND position('{text}'::bytea in blob) > 0)"
            ))
        };
        assert!(holding() > 0, "{thread}: the fixture holds {text:?}");
        let out = run_json(&[
            "rm", "--match", pattern, "--purge", "--thread", thread, "--db", &db.url, "--format",
            "json",
        ]);
        assert_eq!(out["threads"][0]["status"], "purged", "{thread}: {out}");
        assert_eq!(holding(), 0, "{thread}: rows still hold {text:?}: {out}");
        let (ok, text) = harness(&[
            "continue",
            "--url",
            &db.url,
            "--thread",
            thread,
            "--graph",
            &graph_of(thread),
        ]);
        assert!(ok, "{thread}: LangGraph continues:\n{text}");
    }
}

/// The indexes `stats` recommends on a large `checkpoints` table (`checkpoint_id` in byte
/// order; `thread_id` in byte order on the three tables, where its collation is not bytewise)
/// change nothing for LangGraph: with them, PostgresSaver loads every thread as before
/// (`get_tuple`, `list`) and continues it (`put`, `put_writes`), and memctl's newest-first
/// lists then name the threads LangGraph just wrote as the whole list does (that they read
/// the index on a larger table: tests/postgres.rs).
#[test]
fn langgraph_reads_and_writes_as_before_with_the_recommended_index() {
    let db = TestDb::fixture("checkpoint_id_index");
    db.client()
        .batch_execute(
            "CREATE INDEX CONCURRENTLY IF NOT EXISTS checkpoints_checkpoint_id_c_idx \
             ON checkpoints (checkpoint_id COLLATE \"C\")",
        )
        .expect("create the index");
    for sql in memctl::storage::postgres::order::THREAD_INDEX_ADVICE {
        let sql = sql.replace("%I", "public");
        db.client()
            .batch_execute(&sql)
            .unwrap_or_else(|e| panic!("{sql}: {e}"));
    }
    let exp_path = common::root().join("fixtures/expected/postgres.json");
    let (ok, text) = harness(&[
        "check-all",
        "--url",
        &db.url,
        "--expected",
        common::s(&exp_path),
    ]);
    assert!(ok, "with the index:\n{text}");
    let history = harness_json(&["history", "--url", &db.url, "--thread", "1"]);
    assert!(history.to_string().contains("checkpoint"), "{history}");
    let list = |extra: &[&str]| {
        let mut a = vec![
            "--now",
            "2027-01-01T00:00:00Z",
            "threads",
            "list",
            "--db",
            &db.url,
            "--sort",
            "updated",
            "--format",
            "json",
        ];
        a.extend_from_slice(extra);
        run_json(&a)
    };
    let all = list(&[]);
    let all = all.as_array().expect("rows");
    for n in [1, 3, 100] {
        let got = list(&["--limit", &n.to_string()]);
        assert_eq!(
            got.as_array().expect("rows")[..],
            all[..n.min(all.len())],
            "--limit {n}"
        );
    }
}
