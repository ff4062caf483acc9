//! Ctrl-C during a batch (#26): memctl stops after the thread it is writing, reports the
//! threads already done, says how many were not processed, and exits with code 130; every
//! thread is as before or as after, as real LangGraph reads it.
//!
//! The signal comes at a known point without timing: the test waits (polling the database)
//! until memctl has committed its first threads, then takes the write lock itself, so that
//! memctl's next transaction waits; it sends SIGINT, then lets go of the lock.

mod common;

use std::collections::HashMap;
use std::path::Path;
use std::process::{Command as Process, Stdio};
use std::time::{Duration, Instant};

use common::{fixture, s, temp_copy};
use rusqlite::Connection;

/// Threads added to the copy of new.sqlite (each a copy of its `tools` thread).
const COPIES: usize = 600;

/// A copy of new.sqlite with [`COPIES`] more threads, in WAL mode (as SqliteSaver leaves it).
fn large_copy() -> (tempfile::TempDir, std::path::PathBuf) {
    let (dir, db) = temp_copy(&fixture("new.sqlite"));
    let conn = Connection::open(&db).expect("open");
    conn.execute_batch(
        "PRAGMA journal_mode = WAL;
         CREATE TEMP TABLE c AS SELECT * FROM checkpoints WHERE thread_id = 'tools';
         CREATE TEMP TABLE w AS SELECT * FROM writes WHERE thread_id = 'tools';
         BEGIN;",
    )
    .expect("setup");
    for i in 0..COPIES {
        let id = format!("bulk-{i:04}");
        conn.execute("UPDATE c SET thread_id = ?1", [&id])
            .expect("copy");
        conn.execute("UPDATE w SET thread_id = ?1", [&id])
            .expect("copy");
        conn.execute_batch(
            "INSERT INTO checkpoints SELECT * FROM c; INSERT INTO writes SELECT * FROM w;",
        )
        .expect("copy");
    }
    conn.execute_batch("COMMIT;").expect("commit");
    (dir, db)
}

/// Each thread's latest root checkpoint id.
fn latest_ids(conn: &Connection) -> HashMap<String, String> {
    let mut st = conn
        .prepare(
            "SELECT thread_id, max(checkpoint_id) FROM checkpoints WHERE checkpoint_ns = '' \
             GROUP BY thread_id",
        )
        .expect("prepare");
    let rows = st
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
        .expect("query");
    rows.map(|r| r.expect("row")).collect()
}

/// What real LangGraph reads: each thread's latest checkpoint id and message count.
fn langgraph_view(db: &Path) -> HashMap<String, (String, usize)> {
    let script = r#"
import json, sqlite3, sys
from langgraph.checkpoint.sqlite import SqliteSaver
con = sqlite3.connect(sys.argv[1], check_same_thread=False)
saver = SqliteSaver(con)
out = {}
for (t,) in con.execute("SELECT DISTINCT thread_id FROM checkpoints").fetchall():
    tup = saver.get_tuple({"configurable": {"thread_id": t, "checkpoint_ns": ""}})
    if tup is not None:
        out[t] = [tup.checkpoint["id"], len(tup.checkpoint["channel_values"].get("messages", []))]
print(json.dumps(out))
"#;
    let out = Process::new(common::python("new"))
        .args(["-c", script, s(db)])
        .output()
        .expect("python runs");
    assert!(
        out.status.success(),
        "LangGraph could not read the file: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let view: HashMap<String, (String, usize)> =
        serde_json::from_slice(&out.stdout).expect("JSON from python");
    view
}

/// Polls `check` until it holds (bounded).
fn wait_until(what: &str, mut check: impl FnMut() -> bool) {
    let start = Instant::now();
    while !check() {
        assert!(
            start.elapsed() < Duration::from_secs(120),
            "never happened: {what}"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
#[cfg_attr(
    not(feature = "env-tests"),
    ignore = "needs scripts/test.sh's environment (--features env-tests)"
)]
fn ctrl_c_during_trim_all_reports_what_was_written_and_leaves_whole_threads() {
    let (_fresh_dir, fresh) = large_copy();
    let before = latest_ids(&Connection::open(&fresh).expect("open"));
    let before_lg = langgraph_view(&fresh);
    // Interrupted once memctl's first threads are committed (its checkpoint ids have a zero
    // node), while it waits to begin the next transaction.
    let (_dir, db, code, stdout, stderr) = run_interrupted(
        &["trim", "--all", "--keep", "2", "--settle", "0s"],
        "SELECT count(*) FROM checkpoints WHERE checkpoint_id LIKE '%-000000000000'",
    );
    let observer = Connection::open(&db).expect("open");
    assert_eq!(code, Some(130), "{stderr}");
    let report: serde_json::Value =
        serde_json::from_slice(&stdout).expect("the report is whole JSON");
    let report = report["threads"]
        .as_array()
        .cloned()
        .expect("the threads' records");
    let line = stderr
        .lines()
        .find_map(|l| l.strip_prefix("memctl: interrupted: "))
        .unwrap_or_else(|| panic!("no interrupted line: {stderr}"));
    let not_processed: usize = line
        .strip_suffix(" threads not processed")
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("{line}"));
    let total = before.len();
    assert!(not_processed > 0 && !report.is_empty(), "{stderr}");
    assert_eq!(report.len() + not_processed, total, "{stderr}");

    // Every thread is before or after: written exactly when reported written.
    let after = latest_ids(&observer);
    let written: HashMap<&str, &str> = report
        .iter()
        .filter(|r| r["status"] == "rewritten")
        .map(|r| {
            (
                r["thread_id"].as_str().expect("id"),
                r["checkpoint_id"].as_str().expect("checkpoint"),
            )
        })
        .collect();
    assert!(!written.is_empty());
    for (thread, id) in &after {
        match written.get(thread.as_str()) {
            Some(new) => assert_eq!(id, new, "{thread}: memctl's edit is its state"),
            None => assert_eq!(Some(id), before.get(thread), "{thread}: untouched"),
        }
    }
    // Real LangGraph reads every thread, as before or as after.
    let lg = langgraph_view(&db);
    assert_eq!(lg.len(), before_lg.len());
    for (thread, (id, messages)) in &lg {
        let report_of = report.iter().find(|r| r["thread_id"] == thread.as_str());
        match written.get(thread.as_str()) {
            Some(new) => {
                assert_eq!(id, new, "{thread}");
                let kept = report_of.and_then(|r| r["messages_after"].as_u64());
                assert_eq!(Some(*messages as u64), kept, "{thread}");
            }
            None => assert_eq!(
                Some(&(id.clone(), *messages)),
                before_lg.get(thread),
                "{thread}"
            ),
        }
    }
}

/// How many fresh copies a test may try before memctl is caught with work left.
const ATTEMPTS: usize = 5;

/// What [`run_interrupted`] returns: the copy (its guard and path), exit code, stdout, stderr.
type Run = (
    tempfile::TempDir,
    std::path::PathBuf,
    Option<i32>,
    Vec<u8>,
    String,
);

/// Runs memctl `args` on a fresh [`large_copy`] until [`run_once`] catches it with work left.
/// (It may finish its last transaction before the test takes the lock: then it exits 0 with
/// its whole report, as a Ctrl-C after the last thread must leave it, and the test tries
/// again.)
fn run_interrupted(args: &[&str], progress: &str) -> Run {
    for _ in 0..ATTEMPTS {
        let (dir, db) = large_copy();
        let (code, stdout, stderr) = run_once(&db, args, progress);
        if code == Some(0) {
            let _: serde_json::Value = serde_json::from_slice(&stdout).expect("whole JSON");
            continue;
        }
        return (dir, db, code, stdout, stderr);
    }
    panic!("memctl {args:?} finished before the signal {ATTEMPTS} times");
}

/// Runs memctl `args` on `db`, interrupts it as soon as `progress` (an SQL count) is above
/// its value at the start, with the write lock held so that it is between two transactions;
/// returns the exit code, stdout and stderr.
fn run_once(db: &Path, args: &[&str], progress: &str) -> (Option<i32>, Vec<u8>, String) {
    let observer = Connection::open(db).expect("open");
    observer
        .busy_timeout(Duration::from_secs(120))
        .expect("timeout");
    let count = |c: &Connection| c.query_row(progress, [], |r| r.get::<_, i64>(0));
    let start = count(&observer).expect("count");
    let child = Process::new(env!("CARGO_BIN_EXE_memctl"))
        .args(args)
        .args([
            "--db",
            s(db),
            "--busy-timeout",
            "120000",
            "--format",
            "json",
        ])
        .env_remove("MEMCTL_DB")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("memctl starts");
    wait_until("memctl commits its first transaction", || {
        count(&observer).is_ok_and(|n| n > start)
    });
    observer
        .execute_batch("BEGIN IMMEDIATE")
        .expect("the write lock");
    let status = Process::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .expect("kill runs");
    assert!(status.success());
    observer.execute_batch("COMMIT").expect("release");
    let out = child.wait_with_output().expect("memctl ends");
    (
        out.status.code(),
        out.stdout,
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Runs memctl `args` on a fresh [`large_copy`] whose write lock the test holds, sends SIGINT
/// once memctl waits for that lock (asleep in SQLite's busy handler: its first write), then
/// lets it go. Deterministic: memctl writes exactly the batch it was waiting to write, then
/// stops (prune: `--batch` threads; gc: the chunk of threads it planned). A signal queued
/// before the lock goes is handled before memctl runs another instruction of its own.
fn run_interrupted_at_the_lock(args: &[&str]) -> Run {
    let (dir, db) = large_copy();
    let holder = Connection::open(&db).expect("open");
    holder
        .execute_batch("BEGIN IMMEDIATE")
        .expect("the write lock");
    let child = Process::new(env!("CARGO_BIN_EXE_memctl"))
        .args(args)
        .args([
            "--db",
            s(&db),
            "--busy-timeout",
            "120000",
            "--format",
            "json",
        ])
        .env_remove("MEMCTL_DB")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("memctl starts");
    wait_until("memctl waits for the write lock", || {
        common::sleeping_in_the_busy_handler(child.id())
    });
    let status = Process::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .expect("kill runs");
    assert!(status.success());
    holder.execute_batch("COMMIT").expect("release");
    let out = child.wait_with_output().expect("memctl ends");
    (
        dir,
        db,
        out.status.code(),
        out.stdout,
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// The N of "memctl: interrupted: N threads not processed".
fn not_processed(stderr: &str) -> usize {
    stderr
        .lines()
        .find_map(|l| l.strip_prefix("memctl: interrupted: "))
        .and_then(|l| l.strip_suffix(" threads not processed"))
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no interrupted line: {stderr}"))
}

#[test]
#[cfg_attr(
    not(feature = "env-tests"),
    ignore = "needs scripts/test.sh's environment (--features env-tests)"
)]
fn ctrl_c_during_prune_and_gc_reports_the_threads_done() {
    // prune, 10 threads per transaction: deleted threads are gone whole, the others whole.
    let counts = |db: &Path| -> HashMap<String, i64> {
        let conn = Connection::open(db).expect("open");
        let mut st = conn
            .prepare("SELECT thread_id, count(*) FROM checkpoints GROUP BY thread_id")
            .expect("prepare");
        let rows = st
            .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
            .expect("query");
        rows.map(|r| r.expect("row")).collect()
    };
    let (_fresh_dir, fresh) = large_copy();
    let before = counts(&fresh);
    let (_dir, db, code, stdout, stderr) =
        run_interrupted_at_the_lock(&["prune", "--idle", "1s", "--batch", "10", "--yes"]);
    assert_eq!(code, Some(130), "{stderr}");
    let report: serde_json::Value = serde_json::from_slice(&stdout).expect("whole JSON");
    let deleted: Vec<&str> = report["threads"]
        .as_array()
        .expect("threads")
        .iter()
        .map(|t| t["thread_id"].as_str().expect("id"))
        .collect();
    let left = not_processed(&stderr);
    assert!(!deleted.is_empty() && left > 0, "{stderr}");
    assert_eq!(deleted.len() + left, before.len());
    assert_eq!(report["deleted"]["threads"], deleted.len());
    let after = counts(&db);
    for (thread, n) in &before {
        if deleted.contains(&thread.as_str()) {
            assert!(!after.contains_key(thread), "{thread} is gone");
        } else {
            assert_eq!(after.get(thread), Some(n), "{thread} is whole");
        }
    }

    // gc, a transaction per thread: collected threads keep 1 checkpoint, the others all.
    let (_fresh_dir, fresh) = large_copy();
    let before = counts(&fresh);
    let before_lg = langgraph_view(&fresh);
    let (_dir, db, code, stdout, stderr) = run_interrupted_at_the_lock(&[
        "gc",
        "--all",
        "--keep-checkpoints",
        "1",
        "--min-idle",
        "0s",
        "--yes",
    ]);
    assert_eq!(code, Some(130), "{stderr}");
    let report: serde_json::Value = serde_json::from_slice(&stdout).expect("whole JSON");
    let rows = report["threads"].as_array().expect("threads");
    let left = not_processed(&stderr);
    assert!(!rows.is_empty() && left > 0, "{stderr}");
    assert_eq!(rows.len() + left, before.len());
    let after = counts(&db);
    let collected: Vec<&str> = rows
        .iter()
        .filter(|r| r["status"] == "collected")
        .map(|r| r["thread_id"].as_str().expect("id"))
        .collect();
    assert!(!collected.is_empty());
    for (thread, n) in &before {
        if !collected.contains(&thread.as_str()) {
            assert_eq!(after.get(thread), Some(n), "{thread} is whole");
        } else {
            assert!(after.get(thread).is_some_and(|a| a < n), "{thread}");
        }
    }
    // What LangGraph reads of every thread is the state it had (gc keeps it).
    assert_eq!(langgraph_view(&db), before_lg);
}
