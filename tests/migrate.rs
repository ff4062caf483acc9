//! `memctl migrate` between SQLite files (no Python): every thread row for row, a second run
//! skips everything, a thread changed in the target is reported and left alone (`--replace`
//! overwrites it), a dry run writes nothing, the Store moves too. (Postgres and real
//! LangGraph: tests/copy_postgres.rs; the Store: tests/migrate_store.rs.)

mod common;
mod copy_common;

use std::path::Path;

use common::{fixture, memctl, s, temp_copy};

fn all_rows(db: &Path) -> Vec<Vec<rusqlite::types::Value>> {
    copy_common::rows(db, None)
}

/// Runs `memctl migrate --db DB ARGS --format json`: (exit code, report, stderr).
fn migrate(db: &Path, args: &[&str]) -> (i32, serde_json::Value, String) {
    let out = memctl()
        .args(["migrate", "--db", s(db), "--format", "json"])
        .args(args)
        .output()
        .expect("runs");
    let report = serde_json::from_slice(&out.stdout).unwrap_or(serde_json::Value::Null);
    (
        out.status.code().unwrap_or(-1),
        report,
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn a_migration_is_resumable_and_never_overwrites_a_different_thread() {
    let (dir, db) = temp_copy(&fixture("new.sqlite"));
    let target = dir.path().join("target.sqlite");
    // A dry run writes nothing and creates nothing.
    let (code, r, err) = migrate(&db, &["--to", s(&target), "--dry-run"]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(r["totals"]["copied"], 14, "{r}");
    assert!(!target.exists());
    let (code, r, err) = migrate(&db, &["--to", s(&target)]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(r["created"], true, "{r}");
    assert_eq!(r["totals"]["copied"], 14, "{r}");
    assert_eq!(all_rows(&target), all_rows(&db));
    // Again: everything is there and equal.
    let (code, r, err) = migrate(&db, &["--to", s(&target)]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(r["totals"]["skipped"], 14, "{r}");
    assert_eq!(r["totals"]["copied"], 0, "{r}");
    assert_eq!(r["totals"]["checkpoints_written"], 0, "{r}");
    // A thread the target changed (a new checkpoint's worth: its latest one's metadata) is
    // reported, left as it is, and the run is partial (exit 3).
    {
        let c = rusqlite::Connection::open(&target).expect("opens");
        c.execute(
            "UPDATE checkpoints SET metadata = '{\"step\": 99}' WHERE thread_id = 'tools' \
             AND checkpoint_id = (SELECT max(checkpoint_id) FROM checkpoints WHERE thread_id = 'tools')",
            [],
        )
        .expect("changes");
    }
    let changed = all_rows(&target);
    let (code, r, err) = migrate(&db, &["--to", s(&target)]);
    assert_eq!(code, 3, "{err}");
    assert!(err.contains("1 thread differ"), "{err}");
    let tools = r["threads"]
        .as_array()
        .and_then(|a| a.iter().find(|t| t["thread"] == "tools"))
        .cloned()
        .unwrap_or_default();
    assert_eq!(tools["action"], "differs", "{r}");
    assert_eq!(r["totals"]["skipped"], 13, "{r}");
    assert_eq!(all_rows(&target), changed, "nothing overwritten");
    // --replace: the source's thread again.
    let (code, r, err) = migrate(&db, &["--to", s(&target), "--replace"]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(r["totals"]["replaced"], 1, "{r}");
    assert_eq!(all_rows(&target), all_rows(&db));
    // Into itself: refused.
    let (code, _, err) = migrate(&db, &["--to", s(&db)]);
    assert_eq!(code, 2, "{err}");
}

#[test]
fn a_2x_target_keeps_its_generation_and_a_store_moves_too() {
    // Into an existing 2.x file: its own layout (no task_path column), the threads equal.
    let (dir, old) = temp_copy(&fixture("old.sqlite"));
    let (code, r, err) = migrate(&fixture("forget.sqlite"), &["--to", s(&old)]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(r["totals"]["copied"], 7, "{r}");
    let (code, r, _) = migrate(&fixture("forget.sqlite"), &["--to", s(&old)]);
    assert_eq!((code, r["totals"]["skipped"].clone()), (0, 7.into()), "{r}");
    // A database with a LangGraph Store: the threads and the Store move (tests/migrate_store.rs
    // has the rest); one without has `"store": null`.
    let target = dir.path().join("from-store.sqlite");
    let (code, r, err) = migrate(&fixture("store.sqlite"), &["--to", s(&target)]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(r["store"]["copied"], 15, "{r}");
    assert!(r.get("store_items_not_migrated").is_none(), "{r}");
    let (_, r, _) = migrate(&fixture("forget.sqlite"), &["--to", s(&target)]);
    assert_eq!(r["store"], serde_json::Value::Null, "{r}");
}
