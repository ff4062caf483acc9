//! stats, prune and gc on copies of the fixtures (LangGraph's view of the result is in
//! tests/interop.rs).

mod common;

use std::path::Path;

use common::{fixture, memctl, run_json, run_ok, s, temp_copy};
use rusqlite::Connection;

fn count(db: &Path, sql: &str) -> i64 {
    Connection::open(db)
        .expect("open")
        .query_row(sql, [], |r| r.get(0))
        .expect("query")
}

/// A time just after the newest fixture checkpoint, so ages are small and deterministic.
fn fixture_now(db: &Path) -> String {
    let list = run_json(&["threads", "list", "--db", s(db), "--format", "json"]);
    let newest = list[0]["updated_at"].as_str().expect("ts");
    let t: jiff::Timestamp = newest.parse().expect("ts");
    (t + jiff::SignedDuration::from_secs(3600)).to_string()
}

#[test]
fn stats_account_for_the_file() {
    for gen in common::GENERATIONS {
        let db = fixture(&format!("{gen}.sqlite"));
        let st = run_json(&["stats", "--db", s(&db), "--format", "json"]);
        assert_eq!(
            st["checkpoints"].as_i64(),
            Some(count(&db, "SELECT COUNT(*) FROM checkpoints"))
        );
        assert_eq!(
            st["writes"].as_i64(),
            Some(count(&db, "SELECT COUNT(*) FROM writes"))
        );
        assert_eq!(st["threads"], 14);
        assert_eq!(
            st["file"]["file_bytes"].as_u64(),
            std::fs::metadata(&db).ok().map(|m| m.len())
        );
        let channels = st["checkpoint_bytes_by_channel"]
            .as_array()
            .expect("channels");
        assert_eq!(
            channels[0]["channel"], "messages",
            "{gen}: messages take the most space"
        );
        let total: u64 = channels.iter().filter_map(|c| c["bytes"].as_u64()).sum();
        let blob_bytes = count(
            &db,
            "SELECT SUM(LENGTH(checkpoint)) FROM checkpoints WHERE type = 'msgpack'",
        ) as u64;
        assert!(
            total > 0 && total < blob_bytes,
            "{gen}: channels {total} within blobs {blob_bytes}"
        );
        assert_eq!(st["orphans"]["writes_without_checkpoint"], 0);
        assert_eq!(st["largest_threads"][0]["thread_id"], "summarized");
        let text = run_ok(&["stats", "--db", s(&db), "--format", "table"]);
        assert!(text.contains("reclaimable by vacuum") && text.contains("orphans"));
    }
}

#[test]
fn prune_deletes_idle_and_named_threads_only() {
    let (_d, db) = temp_copy(&fixture("new.sqlite"));
    let now = fixture_now(&db);
    // Nothing is 2 hours idle an hour after the fixtures were written.
    let out = run_json(&[
        "prune",
        "--db",
        s(&db),
        "--idle",
        "2h",
        "--now",
        &now,
        "--format",
        "json",
    ]);
    assert_eq!(out["deleted"]["threads"], 0);
    // Dry run lists, deletes nothing.
    let before = std::fs::read(&db).expect("read");
    let out = run_json(&[
        "prune",
        "--db",
        s(&db),
        "--idle",
        "30m",
        "--now",
        &now,
        "--dry-run",
        "--format",
        "json",
    ]);
    assert_eq!(out["threads"].as_array().map(Vec::len), Some(14));
    assert!(out["would_reclaim"].as_u64() > Some(0));
    assert_eq!(std::fs::read(&db).expect("read"), before);
    // Named threads: gone in every namespace, with their writes.
    let out = run_json(&[
        "prune",
        "--db",
        s(&db),
        "--thread",
        "subgraph",
        "--thread",
        "tools",
        "--now",
        &now,
        "--format",
        "json",
    ]);
    assert_eq!(out["deleted"]["threads"], 2);
    assert_eq!(out["deleted"]["checkpoints"], 16 + 10);
    assert_eq!(
        count(
            &db,
            "SELECT COUNT(*) FROM checkpoints WHERE thread_id IN ('subgraph', 'tools')"
        ),
        0
    );
    assert_eq!(
        count(
            &db,
            "SELECT COUNT(*) FROM writes WHERE thread_id IN ('subgraph', 'tools')"
        ),
        0
    );
    assert_eq!(
        count(&db, "SELECT COUNT(DISTINCT thread_id) FROM checkpoints"),
        12
    );
    // --min-idle protects recently written threads even when named.
    let out = run_json(&[
        "prune",
        "--db",
        s(&db),
        "--thread",
        "1",
        "--min-idle",
        "2h",
        "--now",
        &now,
        "--format",
        "json",
    ]);
    assert_eq!(out["deleted"]["threads"], 0);
    assert!(out["skipped"][0]["reason"]
        .as_str()
        .is_some_and(|r| r.contains("--min-idle")));
    // Everything idle for 30 minutes, then vacuum: the file shrinks.
    let size = std::fs::metadata(&db).expect("meta").len();
    let out = run_json(&[
        "prune",
        "--db",
        s(&db),
        "--idle",
        "30m",
        "--now",
        &now,
        "--vacuum",
        "--format",
        "json",
    ]);
    assert_eq!(out["deleted"]["threads"], 12);
    assert_eq!(out["vacuumed"], true);
    assert!(
        std::fs::metadata(&db).expect("meta").len() < size / 4,
        "vacuum shrank the file"
    );
    let err = common::run_err(&["prune", "--db", s(&db), "--thread", "no-such-thread"]);
    assert!(err.contains("no thread 'no-such-thread'"), "{err}");
}

#[test]
fn gc_keeps_the_newest_checkpoints_and_what_resuming_needs() {
    for gen in common::GENERATIONS {
        let (_d, db) = temp_copy(&fixture(&format!("{gen}.sqlite")));
        let now = fixture_now(&db);
        let interrupt_writes = count(
            &db,
            "SELECT COUNT(*) FROM writes w WHERE thread_id = 'interrupt' AND checkpoint_id = \
            (SELECT MAX(checkpoint_id) FROM checkpoints WHERE thread_id = 'interrupt')",
        );
        assert!(interrupt_writes > 0);
        let dumps_before: Vec<String> = ["1", "tools", "interrupt", "subgraph"]
            .iter()
            .map(|t| run_ok(&["dump", "--db", s(&db), "--thread", t]))
            .collect();
        let out = run_json(&[
            "gc",
            "--db",
            s(&db),
            "--all",
            "--keep-checkpoints",
            "2",
            "--now",
            &now,
            "--format",
            "json",
        ]);
        assert!(
            out["deleted"]["checkpoints"].as_u64() > Some(50),
            "{gen}: {out}"
        );
        assert!(out["bytes_reclaimed"].as_u64() > Some(0));
        // Two root checkpoints per thread (or fewer when it had fewer).
        let per_thread = count(&db, "SELECT MAX(n) FROM (SELECT COUNT(*) n FROM checkpoints WHERE checkpoint_ns = '' GROUP BY thread_id)");
        assert_eq!(per_thread, 2, "{gen}");
        // The latest checkpoint keeps its pending writes (the interrupt).
        let after = count(
            &db,
            "SELECT COUNT(*) FROM writes w WHERE thread_id = 'interrupt' AND checkpoint_id = \
            (SELECT MAX(checkpoint_id) FROM checkpoints WHERE thread_id = 'interrupt')",
        );
        assert_eq!(after, interrupt_writes, "{gen}");
        // No orphans left behind: writes, parents and subgraph namespaces all consistent.
        let st = run_json(&["stats", "--db", s(&db), "--format", "json"]);
        assert_eq!(st["orphans"]["writes_without_checkpoint"], 0, "{gen}");
        assert_eq!(st["orphans"]["checkpoints_without_parent"], 0, "{gen}");
        assert_eq!(st["orphans"]["namespaces_without_root"], 0, "{gen}");
        // The state is what it was.
        for (i, t) in ["1", "tools", "interrupt", "subgraph"].iter().enumerate() {
            assert_eq!(
                run_ok(&["dump", "--db", s(&db), "--thread", t]),
                dumps_before[i],
                "{gen}/{t}"
            );
        }
        let show = run_json(&[
            "show",
            "--db",
            s(&db),
            "--thread",
            "interrupt",
            "--format",
            "json",
        ]);
        assert_eq!(show["next"], serde_json::json!(["review"]));
        // A second gc has nothing left to do.
        let again = run_json(&[
            "gc",
            "--db",
            s(&db),
            "--all",
            "--keep-checkpoints",
            "2",
            "--now",
            &now,
            "--format",
            "json",
        ]);
        assert_eq!(again["deleted"]["checkpoints"], 0);
    }
}

#[test]
fn gc_plans_delta_threads_and_skips_recent_ones() {
    let (_d, db) = temp_copy(&fixture("delta.sqlite"));
    let now = fixture_now(&db);
    let before = std::fs::read(&db).expect("read");
    // DeltaChannel threads are collected like any (tests/delta.rs checks what stays).
    let out = run_json(&[
        "gc",
        "--db",
        s(&db),
        "--all",
        "--keep-checkpoints",
        "1",
        "--dry-run",
        "--now",
        &now,
        "--format",
        "json",
    ]);
    assert_eq!(out["threads"][0]["status"], "would delete", "{out}");
    assert_eq!(
        out["threads"][0]["reason"],
        serde_json::Value::Null,
        "{out}"
    );
    assert_eq!(out["threads"][0]["delta"], "snapshot", "{out}");
    let out = run_json(&[
        "gc",
        "--db",
        s(&db),
        "--thread",
        "1",
        "--keep-checkpoints",
        "1",
        "--min-idle",
        "1d",
        "--now",
        &now,
        "--format",
        "json",
    ]);
    assert_eq!(out["threads"][0]["status"], "skipped", "{out}");
    assert!(
        out["threads"][0]["reason"]
            .as_str()
            .is_some_and(|why| why.contains("--min-idle")),
        "{out}"
    );
    assert_eq!(std::fs::read(&db).expect("read"), before);
    let out = memctl()
        .args(["gc", "--db", s(&db), "--all", "--keep-checkpoints", "0"])
        .output()
        .expect("runs");
    assert_eq!(
        out.status.code(),
        Some(2),
        "--keep-checkpoints 0 is a usage error"
    );
}

#[test]
fn quiet_and_busy_vacuum() {
    let (_d, db) = temp_copy(&fixture("new.sqlite"));
    let now = fixture_now(&db);
    let out = memctl()
        .args([
            "gc",
            "--db",
            s(&db),
            "--all",
            "--keep-checkpoints",
            "1",
            "--now",
            &now,
            "--quiet",
        ])
        .output()
        .expect("runs");
    assert!(out.status.success());
    assert!(
        out.stdout.is_empty() && out.stderr.is_empty(),
        "--quiet prints nothing"
    );
    // An app holding a read transaction in WAL mode blocks the final WAL truncation: exit 3,
    // and the deletions are kept.
    let app = Connection::open(&db).expect("open");
    app.execute_batch("PRAGMA journal_mode=WAL;").expect("wal");
    app.execute_batch("BEGIN; SELECT COUNT(*) FROM checkpoints;")
        .expect("read txn");
    let out = memctl()
        .args([
            "prune",
            "--db",
            s(&db),
            "--thread",
            "tools",
            "--now",
            &now,
            "--vacuum",
            "--busy-timeout",
            "200",
        ])
        .output()
        .expect("runs");
    assert_eq!(
        out.status.code(),
        Some(3),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8_lossy(&out.stderr).contains("vacuum could not get exclusive access"));
    app.execute_batch("COMMIT").expect("end");
    assert_eq!(
        count(
            &db,
            "SELECT COUNT(*) FROM checkpoints WHERE thread_id = 'tools'"
        ),
        0,
        "deletion kept"
    );
}

/// `gc --vacuum` while another process (an app) has a large WAL file open: VACUUM would hold
/// the write lock for the whole rebuild, long enough for the app's writes to time out, so
/// memctl does not start it (exit 3, saying why; the deletions are committed). A small file
/// beside the app, and the large one once the app is gone, are vacuumed.
#[test]
fn no_long_vacuum_while_an_app_has_the_file_open() {
    let (_d, db) = temp_copy(&fixture("new.sqlite"));
    let now = fixture_now(&db);
    let gc = |keep: &str| {
        run_code(&[
            "gc",
            "--db",
            s(&db),
            "--all",
            "--keep-checkpoints",
            keep,
            "--now",
            &now,
            "--min-idle",
            "0s",
            "--vacuum",
            "--format",
            "json",
        ])
    };
    // Small: vacuumed beside the app.
    let app = Connection::open(&db).expect("open");
    app.execute_batch("PRAGMA journal_mode = WAL; SELECT COUNT(*) FROM checkpoints;")
        .expect("wal");
    let (code, report, stderr) = gc("3");
    assert_eq!(code, Some(0), "{stderr}");
    assert_eq!(report["vacuumed"], true, "{report}");
    drop(app);
    // Large: not vacuumed while the app has it open; the deletions are committed.
    let app = common::app_with_a_large_file(&db);
    let before = count(&db, "SELECT COUNT(*) FROM checkpoints");
    let (code, report, stderr) = gc("1");
    assert_eq!(code, Some(3), "{stderr}");
    assert!(
        stderr.contains("another process") && stderr.contains("--vacuum"),
        "{stderr}"
    );
    assert_eq!(report["vacuumed"], false, "{report}");
    let after = count(&db, "SELECT COUNT(*) FROM checkpoints");
    assert!(
        after < before,
        "the deletions are committed: {before} -> {after}"
    );
    // The app stops: the next run vacuums.
    drop(app);
    let (code, report, stderr) = gc("1");
    assert_eq!(code, Some(0), "{stderr}");
    assert_eq!(report["vacuumed"], true, "{report}");
}

/// Runs memctl, returns (exit code, stdout JSON, stderr).
fn run_code(args: &[&str]) -> (Option<i32>, serde_json::Value, String) {
    let out = memctl().args(args).output().expect("runs");
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(!stderr.contains("panicked"), "{stderr}");
    let json = serde_json::from_slice(&out.stdout).unwrap_or(serde_json::Value::Null);
    (out.status.code(), json, stderr)
}

/// Cuts the latest root checkpoint blob of `thread` in half (a torn write).
fn truncate_latest(db: &Path, thread: &str) {
    let conn = Connection::open(db).expect("open");
    let n = conn
        .execute(
            "UPDATE checkpoints SET checkpoint = substr(checkpoint, 1, length(checkpoint) / 2) \
             WHERE thread_id = ?1 AND checkpoint_ns = '' AND checkpoint_id = \
             (SELECT MAX(checkpoint_id) FROM checkpoints WHERE thread_id = ?1 AND checkpoint_ns = '')",
            [thread],
        )
        .expect("update");
    assert_eq!(n, 1);
}

fn thread_rows(db: &Path, thread: &str) -> (i64, i64) {
    (
        count(
            db,
            &format!("SELECT COUNT(*) FROM checkpoints WHERE thread_id = '{thread}'"),
        ),
        count(
            db,
            &format!("SELECT COUNT(*) FROM writes WHERE thread_id = '{thread}'"),
        ),
    )
}

#[test]
fn prune_filters_combine_and_never_widen() {
    let (_d, db) = temp_copy(&fixture("new.sqlite"));
    let now = fixture_now(&db);
    let before = std::fs::read(&db).expect("read");
    // tools is an hour old: not 30 days idle, so --thread tools --idle 30d deletes nothing.
    let out = run_json(&[
        "prune",
        "--db",
        s(&db),
        "--idle",
        "30d",
        "--thread",
        "tools",
        "--now",
        &now,
        "--format",
        "json",
    ]);
    assert_eq!(out["deleted"]["threads"], 0, "{out}");
    assert_eq!(std::fs::read(&db).expect("read"), before);
    // --idle 30m --thread tools: only tools, never every idle thread.
    let out = run_json(&[
        "prune",
        "--db",
        s(&db),
        "--idle",
        "30m",
        "--thread",
        "tools",
        "--now",
        &now,
        "--dry-run",
        "--format",
        "json",
    ]);
    let ids: Vec<&str> = out["threads"]
        .as_array()
        .expect("threads")
        .iter()
        .filter_map(|t| t["thread_id"].as_str())
        .collect();
    assert_eq!(ids, ["tools"], "{out}");
}

#[test]
fn gc_and_prune_leave_a_thread_they_cannot_read_alone() {
    let (_d, db) = temp_copy(&fixture("new.sqlite"));
    let now = fixture_now(&db);
    truncate_latest(&db, "tools");
    let tools = thread_rows(&db, "tools");
    let (code, out, stderr) = run_code(&[
        "gc",
        "--db",
        s(&db),
        "--all",
        "--keep-checkpoints",
        "1",
        "--now",
        &now,
        "--format",
        "json",
    ]);
    assert_eq!(code, Some(3), "{stderr}");
    let row = out["threads"]
        .as_array()
        .expect("threads")
        .iter()
        .find(|t| t["thread_id"] == "tools")
        .cloned()
        .expect("tools reported");
    assert_eq!(row["status"], "failed", "{row}");
    assert!(
        row["reason"].as_str().is_some_and(|why| !why.is_empty()),
        "{row}"
    );
    assert_eq!(
        thread_rows(&db, "tools"),
        tools,
        "its history is all still there"
    );
    assert_eq!(
        thread_rows(&db, "1").0,
        1,
        "the other threads were collected"
    );
    // prune by age reports it and leaves it too; named, it is deleted as asked.
    let (code, out, stderr) = run_code(&[
        "prune",
        "--db",
        s(&db),
        "--idle",
        "30m",
        "--now",
        &now,
        "--format",
        "json",
    ]);
    assert_eq!(code, Some(3), "{stderr}");
    assert!(out["skipped"].to_string().contains("tools"), "{out}");
    assert_eq!(thread_rows(&db, "tools"), tools);
    assert_eq!(thread_rows(&db, "1").0, 0);
    run_json(&[
        "prune",
        "--db",
        s(&db),
        "--thread",
        "tools",
        "--now",
        &now,
        "--format",
        "json",
    ]);
    assert_eq!(thread_rows(&db, "tools"), (0, 0));
}

#[test]
fn gc_dry_run_reports_what_the_run_does() {
    for gen in common::GENERATIONS {
        let (_d, db) = temp_copy(&fixture(&format!("{gen}.sqlite")));
        let now = fixture_now(&db);
        let args = |dry: bool| {
            let mut a = vec![
                "gc",
                "--db",
                s(&db),
                "--all",
                "--keep-checkpoints",
                "2",
                "--now",
                &now,
                "--format",
                "json",
            ];
            if dry {
                a.push("--dry-run");
            }
            a.into_iter().map(str::to_owned).collect::<Vec<_>>()
        };
        let dry_args = args(true);
        let dry = run_json(&dry_args.iter().map(String::as_str).collect::<Vec<_>>());
        let real_args = args(false);
        let real = run_json(&real_args.iter().map(String::as_str).collect::<Vec<_>>());
        for key in ["checkpoints", "writes", "bytes"] {
            assert_eq!(
                dry["would_delete"][key], real["deleted"][key],
                "{gen} {key}: {dry} vs {real}"
            );
        }
        assert!(real["deleted"]["writes"].as_u64() > Some(0), "{gen}");
        // Thread by thread too.
        assert_eq!(
            dry["threads"].as_array().map(|t| t
                .iter()
                .map(|r| (
                    r["thread_id"].clone(),
                    r["deleted_writes"].clone(),
                    r["bytes"].clone()
                ))
                .collect::<Vec<_>>()),
            real["threads"].as_array().map(|t| t
                .iter()
                .map(|r| (
                    r["thread_id"].clone(),
                    r["deleted_writes"].clone(),
                    r["bytes"].clone()
                ))
                .collect::<Vec<_>>()),
            "{gen}"
        );
    }
}

/// A thread's age is one fact (#26): after memctl edits a thread, `threads list` shows the
/// app's last activity, as `prune --idle`, gc and `trim --all --idle` go by, and says the
/// latest state is memctl's edit.
#[test]
fn a_threads_age_after_an_edit_is_what_prune_goes_by() {
    let (_dir, db) = temp_copy(&fixture("new.sqlite"));
    let db = s(&db);
    let at = "2026-12-05T00:00:00Z";
    let before = run_json(&[
        "threads", "list", "--db", db, "--format", "json", "--now", at,
    ]);
    let tools = |list: &serde_json::Value| {
        list.as_array()
            .and_then(|a| a.iter().find(|t| t["thread_id"] == "tools"))
            .cloned()
            .expect("tools is listed")
    };
    run_ok(&["trim", "--db", db, "tools", "--keep", "2", "--settle", "0s"]);
    let list = run_json(&[
        "threads", "list", "--db", db, "--format", "json", "--now", at,
    ]);
    let after = tools(&list);
    // The edit did not make the thread look recently used.
    assert_eq!(
        after["age_seconds"],
        tools(&before)["age_seconds"],
        "{after}"
    );
    assert_eq!(after["updated_at"], tools(&before)["updated_at"], "{after}");
    assert_eq!(after["edited_by_memctl"], true, "{after}");
    assert!(after["edited_at"].is_string(), "{after}");
    assert_eq!(tools(&before)["edited_by_memctl"], false);
    // prune sees the same age and selects it.
    let pruned = run_json(&[
        "prune",
        "--db",
        db,
        "--idle",
        "1d",
        "--dry-run",
        "--format",
        "json",
        "--now",
        at,
    ]);
    let listed = pruned["threads"]
        .as_array()
        .and_then(|a| a.iter().find(|t| t["thread_id"] == "tools"))
        .cloned()
        .expect("prune selects tools");
    assert_eq!(listed["age_seconds"], after["age_seconds"]);
    // trim --all --idle goes by the same fact (the edit's ts is now, the app's time is days
    // ago): the thread is not filtered out as freshly active.
    let trimmed = run_json(&[
        "trim",
        "--db",
        db,
        "--all",
        "--idle",
        "1d",
        "--keep",
        "1",
        "--dry-run",
        "--format",
        "json",
    ]);
    assert!(
        trimmed["threads"]
            .as_array()
            .is_some_and(|a| a.iter().any(|t| t["thread_id"] == "tools")),
        "{trimmed}"
    );
    // The table marks the edited thread's age and says what it means.
    let out = common::memctl()
        .args(["threads", "list", "--db", db, "--now", at])
        .output()
        .expect("runs");
    let table = String::from_utf8_lossy(&out.stdout);
    let row = table
        .lines()
        .find(|l| l.trim_start().starts_with("tools "))
        .expect("tools row");
    assert!(row.contains("3d 18h*"), "{row}");
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("edited by memctl"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// A transaction that fails after others were committed: the threads already deleted are
/// reported (exit 3 with one line), the failed batch and the rest are untouched, never "an
/// error" that hides what was done.
#[test]
fn prune_reports_what_it_deleted_before_a_transaction_failed() {
    let (_d, db) = temp_copy(&fixture("new.sqlite"));
    let now = fixture_now(&db);
    let args = |dry: bool| {
        let mut a = vec![
            "prune",
            "--db",
            s(&db),
            "--idle",
            "30m",
            "--now",
            &now,
            "--batch",
            "1",
            "--yes",
            "--format",
            "json",
        ];
        if dry {
            a.push("--dry-run");
        }
        a.iter().map(|x| x.to_string()).collect::<Vec<String>>()
    };
    let plan = run_json(&args(true).iter().map(String::as_str).collect::<Vec<_>>());
    let order = thread_ids(&plan, None);
    assert!(order.len() >= 3, "{plan}");
    // The third thread's batch fails (its delete is refused inside the transaction).
    refuse_deletes_of(&db, &order[2]);
    let (code, report, stderr) =
        run_code(&args(false).iter().map(String::as_str).collect::<Vec<_>>());
    assert_eq!(code, Some(3), "{stderr}\n{report}");
    assert!(stderr.contains("transaction failed"), "{stderr}");
    assert!(stderr.contains("held by the test"), "{stderr}");
    assert_eq!(thread_ids(&report, None), order[..2], "{report}");
    assert_eq!(report["deleted"]["threads"], 2, "{report}");
    for t in &order[..2] {
        assert_eq!(thread_rows(&db, t).0, 0, "{t} is reported deleted");
    }
    for t in &order[2..] {
        assert!(thread_rows(&db, t).0 > 0, "{t} was left untouched");
    }
}

/// gc applies a chunk of threads one transaction each: a failure on the third leaves the two
/// before it collected, and they are reported (exit 3 with one line), the rest untouched.
#[test]
fn gc_reports_what_it_collected_before_a_transaction_failed() {
    let (_d, db) = temp_copy(&fixture("new.sqlite"));
    let now = fixture_now(&db);
    let args = |dry: bool| {
        let mut a: Vec<String> = [
            "gc",
            "--all",
            "--db",
            s(&db),
            "--keep-checkpoints",
            "1",
            "--min-idle",
            "0s",
            "--now",
            &now,
            "--yes",
            "--format",
            "json",
        ]
        .iter()
        .map(|x| x.to_string())
        .collect();
        if dry {
            a.push("--dry-run".into());
        }
        a
    };
    let plan = run_json(&args(true).iter().map(String::as_str).collect::<Vec<_>>());
    let order = thread_ids(&plan, Some("would delete"));
    assert!(order.len() >= 3, "{plan}");
    let victim = &order[2];
    refuse_deletes_of(&db, victim);
    let before: Vec<(i64, i64)> = order.iter().map(|t| thread_rows(&db, t)).collect();
    let (code, report, stderr) =
        run_code(&args(false).iter().map(String::as_str).collect::<Vec<_>>());
    assert_eq!(code, Some(3), "{stderr}\n{report}");
    assert!(stderr.contains("held by the test"), "{stderr}");
    let collected: Vec<&str> = report["threads"]
        .as_array()
        .expect("threads")
        .iter()
        .filter(|t| t["status"] == "collected")
        .filter_map(|t| t["thread_id"].as_str())
        .collect();
    assert_eq!(
        collected,
        [order[0].as_str(), order[1].as_str()],
        "{report}"
    );
    for (t, was) in order.iter().zip(&before).take(2) {
        assert!(thread_rows(&db, t).0 < was.0, "{t} is reported collected");
    }
    for (t, was) in order.iter().zip(&before).skip(2) {
        assert_eq!(thread_rows(&db, t), *was, "{t} was left untouched");
    }
    assert!(
        !report["threads"].to_string().contains(victim.as_str()),
        "{report}"
    );
}

/// The `thread_id`s of a report's `threads` (those with `status`, when given), in order.
fn thread_ids(report: &serde_json::Value, status: Option<&str>) -> Vec<String> {
    report["threads"]
        .as_array()
        .expect("threads")
        .iter()
        .filter(|t| status.is_none_or(|s| t["status"] == s))
        .filter_map(|t| t["thread_id"].as_str().map(str::to_owned))
        .collect()
}

/// A trigger that makes every delete of `thread`'s checkpoints fail (its transaction with it).
fn refuse_deletes_of(db: &Path, thread: &str) {
    Connection::open(db)
        .expect("open")
        .execute_batch(&format!(
            "CREATE TRIGGER held BEFORE DELETE ON checkpoints WHEN OLD.thread_id = '{thread}' \
             BEGIN SELECT RAISE(ABORT, 'held by the test'); END;"
        ))
        .expect("trigger");
}

/// `id` (a uuid6) about a day older: its time's top 32 bits (units of 26.8 s) moved back,
/// which keeps the order of a thread's ids.
fn a_day_older(id: &str) -> String {
    let high = u32::from_str_radix(&id[..8], 16).expect("a uuid6") - 3220;
    format!("{high:08x}{}", &id[8..])
}

/// Copies `from`'s rows (those matching `rows`) as thread `to`, their ids a day older when
/// `old`.
fn clone_thread(conn: &Connection, from: &str, to: &str, rows: &str, old: bool) {
    for table in ["checkpoints", "writes"] {
        conn.execute_batch(&format!(
            "DROP TABLE IF EXISTS temp.c; \
             CREATE TEMP TABLE c AS SELECT * FROM {table} WHERE thread_id = '{from}' AND {rows}; \
             UPDATE temp.c SET thread_id = '{to}';"
        ))
        .expect("copy rows");
        if old {
            let cols = if table == "checkpoints" {
                vec!["checkpoint_id", "parent_checkpoint_id"]
            } else {
                vec!["checkpoint_id"]
            };
            for col in cols {
                let ids: Vec<String> = conn
                    .prepare(&format!(
                        "SELECT DISTINCT {col} FROM temp.c WHERE {col} IS NOT NULL"
                    ))
                    .expect("ids")
                    .query_map([], |r| r.get(0))
                    .expect("ids")
                    .collect::<Result<_, _>>()
                    .expect("ids");
                for id in ids {
                    conn.execute(
                        &format!("UPDATE temp.c SET {col} = ?1 WHERE {col} = ?2"),
                        [a_day_older(&id), id],
                    )
                    .expect("older id");
                }
            }
        }
        conn.execute_batch(&format!("INSERT INTO {table} SELECT * FROM temp.c"))
            .expect("insert clones");
    }
}

/// More threads than prune reads in one chunk (a few hundred): every third clone a day old,
/// a few of those unreadable, and one old thread with no root namespace. By age prune
/// selects the old readable ones in thread-id order, and reports the unreadable ones and
/// the recent ones (`--min-idle`) as skipped in that order too, as a dry run says; named
/// ones are deleted as asked, and a name that is no thread is an error that suggests one.
#[test]
fn prune_of_many_threads_selects_and_reports_them_in_order() {
    let (_d, db) = temp_copy(&fixture("new.sqlite"));
    let now = fixture_now(&db);
    let conn = Connection::open(&db).expect("open");
    let mut old: Vec<String> = vec!["noroot".into()];
    let mut recent: Vec<String> =
        run_json(&["threads", "list", "--db", s(&db), "--format", "json"])
            .as_array()
            .expect("threads")
            .iter()
            .map(|t| t["thread_id"].as_str().expect("id").to_owned())
            .collect();
    for i in 0..260 {
        let id = format!("c{i:03}");
        clone_thread(&conn, "1", &id, "1 = 1", i % 3 == 0);
        if i % 3 == 0 {
            old.push(id);
        } else {
            recent.push(id);
        }
    }
    clone_thread(&conn, "subgraph", "noroot", "checkpoint_ns != ''", true);
    drop(conn);
    let noroot = count(
        &db,
        "SELECT COUNT(*) FROM checkpoints WHERE thread_id = 'noroot'",
    );
    let unreadable = ["c099", "c102", "c201"];
    for t in unreadable {
        truncate_latest(&db, t);
    }
    old.sort();
    let mut skipped: Vec<String> = recent
        .iter()
        .cloned()
        .chain(unreadable.iter().map(|t| t.to_string()))
        .collect();
    skipped.sort();
    let deleted: Vec<String> = old
        .iter()
        .filter(|t| !unreadable.contains(&t.as_str()))
        .cloned()
        .collect();
    let args = |extra: &[&'static str]| {
        let mut a = vec![
            "prune",
            "--db",
            s(&db),
            "--idle",
            "30m",
            "--min-idle",
            "2h",
            "--now",
            &now,
            "--format",
            "json",
        ];
        a.extend_from_slice(extra);
        run_code(&a)
    };
    let ids = |v: &serde_json::Value, key: &str| -> Vec<String> {
        v[key]
            .as_array()
            .expect(key)
            .iter()
            .map(|t| t["thread_id"].as_str().expect("id").to_owned())
            .collect()
    };
    let (code, dry, stderr) = args(&["--dry-run"]);
    assert_eq!(code, Some(3), "unreadable threads: exit 3: {stderr}");
    assert_eq!(ids(&dry, "threads"), deleted);
    assert_eq!(ids(&dry, "skipped"), skipped);
    for t in dry["threads"].as_array().expect("threads") {
        let n = if t["thread_id"] == "noroot" {
            noroot
        } else {
            6
        };
        assert_eq!(t["checkpoints"], n, "{t}");
        assert!(t["age_seconds"].as_i64().is_some_and(|a| a > 86_000), "{t}");
    }
    for t in dry["skipped"].as_array().expect("skipped") {
        let why = t["reason"].as_str().expect("reason");
        let id = t["thread_id"].as_str().expect("id");
        match unreadable.contains(&id) {
            true => assert!(why.starts_with("failed: "), "{t}"),
            false => assert!(why.contains("--min-idle 2h"), "{t}"),
        }
    }
    let (code, run, stderr) = args(&[]);
    assert_eq!(code, Some(3), "{stderr}");
    assert_eq!(
        run["threads"], dry["threads"],
        "the run deletes what the dry run said"
    );
    assert_eq!(run["skipped"], dry["skipped"]);
    assert_eq!(run["deleted"]["threads"], deleted.len());
    for t in &deleted {
        assert_eq!(thread_rows(&db, t), (0, 0), "{t}");
    }
    for t in &skipped {
        assert!(thread_rows(&db, t).0 > 0, "{t} kept");
    }
    // Named: deleted as asked (unreadable or not), in thread-id order.
    let out = run_json(&[
        "prune",
        "--db",
        s(&db),
        "--thread",
        "c102",
        "--thread",
        "c001",
        "--now",
        &now,
        "--format",
        "json",
    ]);
    assert_eq!(ids(&out, "threads"), ["c001", "c102"]);
    let err = common::run_err(&["prune", "--db", s(&db), "--thread", "c0011"]);
    assert!(err.contains("c0011") && err.contains("c001"), "{err}");
}

/// The thread ids and statuses of a JSON report, in order.
fn rows_of(report: &serde_json::Value) -> Vec<(String, String)> {
    report["threads"]
        .as_array()
        .expect("threads")
        .iter()
        .map(|t| {
            let field = |k: &str| t[k].as_str().unwrap_or_default().to_owned();
            (field("thread_id"), field("status"))
        })
        .collect()
}

/// Whole-database write runs on a file list their threads a page at a time on the handle
/// that writes (issue #30: no list of every thread held, no second read handle open beside
/// the writes): across the pages' seams every thread is reached once, in thread order, and
/// the real run does to each thread what its dry run said it would.
#[test]
fn write_runs_page_through_every_thread_once() {
    let (_dir, db) = common::jobs::sqlite_with_many_threads("new.sqlite", 2600);
    let now = fixture_now(&db);
    let db = s(&db);
    let run = |args: &[&str], dry: bool| {
        let mut all = vec!["--db", db, "--format", "json", "--now", &now];
        all.extend(args);
        all.push(if dry { "--dry-run" } else { "--yes" });
        rows_of(&run_json(&all))
    };
    let strictly_ordered = |rows: &[(String, String)]| rows.windows(2).all(|w| w[0].0 < w[1].0);
    let would = run(&["gc", "--all", "--keep-checkpoints", "1"], true);
    let done = run(&["gc", "--all", "--keep-checkpoints", "1"], false);
    assert!(would.len() > 2048, "{} threads", would.len());
    assert!(strictly_ordered(&would) && strictly_ordered(&done));
    let as_done = |s: &str| {
        if s == "would delete" {
            "collected".to_owned()
        } else {
            s.to_owned()
        }
    };
    let expected: Vec<(String, String)> =
        would.iter().map(|(t, s)| (t.clone(), as_done(s))).collect();
    assert_eq!(done, expected);
    let left = run(&["gc", "--all", "--keep-checkpoints", "1"], true);
    assert!(
        left.iter().all(|(_, s)| s != "would delete"),
        "gc left work"
    );
    // trim has no --yes: its real run is the same line without --dry-run.
    let trim = |dry: bool| {
        let mut all = vec!["--db", db, "--format", "json", "--now", &now];
        all.extend(["trim", "--all", "--keep", "1", "--settle", "0s"]);
        if dry {
            all.push("--dry-run");
        }
        rows_of(&run_json(&all))
    };
    let would = trim(true);
    let done = trim(false);
    assert!(would.len() > 2048, "{} threads", would.len());
    assert!(strictly_ordered(&would) && strictly_ordered(&done));
    assert!(would.iter().any(|(_, s)| s == "would rewrite"));
    let as_done = |s: &str| {
        if s == "would rewrite" {
            "rewritten".to_owned()
        } else {
            s.to_owned()
        }
    };
    let expected: Vec<(String, String)> =
        would.iter().map(|(t, s)| (t.clone(), as_done(s))).collect();
    assert_eq!(done, expected);
}

/// #46: when `--min-idle` wins over a shorter `--idle`, a table says so once, in one line
/// that counts the threads and names the first few (it printed a line per thread: 21 of them
/// in a terminal); the JSON report still lists each with its reason.
#[test]
fn min_idle_overriding_idle_is_said_once() {
    let db = common::fixture("new.sqlite");
    let args = [
        "prune",
        "--idle",
        "1s",
        "--dry-run",
        "--now",
        "2026-12-01T05:30:00Z",
        "--db",
        common::s(&db),
    ];
    let table = common::run_ok(&args);
    let json: serde_json::Value = serde_json::from_str(&common::run_ok(
        &[&args[..], &["--format", "json"]].concat(),
    ))
    .expect("JSON");
    let skipped = json["skipped"].as_array().expect("a list");
    assert!(skipped.len() > 3, "{json}");
    assert!(skipped.iter().all(|s| s["reason"]
        .as_str()
        .is_some_and(|r| r.contains("--min-idle 5m"))));
    let lines: Vec<&str> = table.lines().filter(|l| l.contains("--min-idle")).collect();
    assert_eq!(lines.len(), 1, "{table}");
    assert!(
        lines[0].starts_with(&format!(
            "skipped {} threads written within --min-idle 5m",
            skipped.len()
        )) && lines[0].contains(&format!("and {} more", skipped.len() - 3)),
        "{table}"
    );
}
