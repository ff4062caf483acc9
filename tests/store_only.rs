//! A file that holds a LangGraph store and no checkpoint tables (an app using `SqliteStore`
//! without a `SqliteSaver` in that file; here fixtures/store.sqlite, written by real
//! LangGraph, with its checkpoint tables dropped): `forget`, `stats` and `find` work on the
//! store alone and say "no checkpoints in this database" on stderr; the file keeps having no
//! checkpoint tables. A file with neither keeps failing as before (#28).

mod common;

use std::path::Path;

use common::store::{sqlite_store_only, sqlite_tables};
use common::{memctl, s};
use serde_json::{json, Value as Json};

const NOTE: &str = "no checkpoints in this database";

fn run(args: &[&str]) -> (std::process::Output, String) {
    let out = memctl().args(args).output().expect("memctl runs");
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    (out, err)
}

fn holds(db: &Path, text: &str) -> bool {
    let mut all = std::fs::read(db).expect("the file");
    if let Ok(wal) = std::fs::read(format!("{}-wal", db.display())) {
        all.extend(wal);
    }
    all.windows(text.len()).any(|w| w == text.as_bytes())
}

#[test]
fn forget_works_on_a_store_only_file() {
    let (_dir, db) = sqlite_store_only();
    let before = sqlite_tables(&db);
    assert!(!before.iter().any(|t| t == "checkpoints"), "{before:?}");
    assert!(holds(&db, "ramen"));
    let args = [
        "forget",
        "--meta",
        "user_id=u-42",
        "--db",
        s(&db),
        "--format",
        "json",
    ];
    let (dry, err) = run(&[&args[..], &["--dry-run"]].concat());
    assert!(dry.status.success(), "{err}");
    assert!(err.contains(NOTE), "{err}");
    let dry: Json = serde_json::from_slice(&dry.stdout).expect("JSON");
    assert_eq!(dry["store"].as_array().expect("items").len(), 4, "{dry:#}");

    let (out, err) = run(&[&args[..], &["--yes"]].concat());
    assert!(out.status.success(), "{err}");
    let r: Json = serde_json::from_slice(&out.stdout).expect("JSON");
    assert_eq!(r["store"]["items"], json!(4), "{r:#}");
    assert_eq!(r["deleted"]["threads"], json!(0), "{r:#}");
    assert_eq!(r["verification"]["clean"], json!(true), "{r:#}");
    for t in ["ramen", "Miso", "Lyon", "Ørsted"] {
        assert!(!holds(&db, t), "{t} is still in the file");
    }
    assert!(holds(&db, "Grüße"), "another user's item is kept");
    assert_eq!(
        sqlite_tables(&db),
        before,
        "no table made or dropped in the file"
    );
}

#[test]
fn stats_works_on_a_store_only_file() {
    let (_dir, db) = sqlite_store_only();
    let (out, err) = run(&["stats", "--db", s(&db), "--format", "json"]);
    assert!(out.status.success(), "{err}");
    assert!(err.contains(NOTE), "{err}");
    let r: Json = serde_json::from_slice(&out.stdout).expect("JSON");
    assert_eq!(r["threads"], json!(0), "{r:#}");
    assert_eq!(r["checkpoints"], json!(0), "{r:#}");
    assert_eq!(r["store"]["items"], json!(15), "{r:#}");
    assert!(
        r["file"]["file_bytes"].as_u64().expect("bytes") > 0,
        "{r:#}"
    );
}

#[test]
fn find_works_on_a_store_only_file() {
    let (_dir, db) = sqlite_store_only();
    let (out, err) = run(&["find", "Grüße", "--db", s(&db), "--format", "json"]);
    assert!(out.status.success(), "{err}");
    assert!(err.contains(NOTE), "{err}");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("schlüssel-ключ-鍵"), "{text}");
    let (out, err) = run(&[
        "find",
        "--meta",
        "user_id=u-42",
        "--db",
        s(&db),
        "--format",
        "json",
    ]);
    assert!(out.status.success(), "{err}");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("u-42") && text.contains("profile"), "{text}");
}

/// Neither checkpoints nor a store; or a store beside half a saver: the first error stands.
#[test]
fn without_a_store_or_with_half_a_saver_the_error_stands() {
    let (_dir, db) = sqlite_store_only();
    let c = rusqlite::Connection::open(&db).expect("open");
    c.execute_batch("CREATE TABLE writes (thread_id TEXT)")
        .expect("half a saver");
    drop(c);
    let (out, err) = run(&["stats", "--db", s(&db)]);
    assert!(!out.status.success());
    assert!(err.contains("no 'checkpoints' table"), "{err}");
    assert!(!err.contains(NOTE), "{err}");

    let (_dir2, other) = sqlite_store_only();
    let c = rusqlite::Connection::open(&other).expect("open");
    c.execute_batch("DROP TABLE store; DROP TABLE store_migrations;")
        .expect("no store");
    drop(c);
    let (out, err) = run(&["find", "x", "--db", s(&other)]);
    assert!(!out.status.success());
    assert!(err.contains("no 'checkpoints' table"), "{err}");
}

/// Real LangGraph reads the store-only file after `forget` as after its own `store.delete`
/// of the same items on another copy, and the app carries on using it.
#[test]
#[cfg_attr(
    not(feature = "env-tests"),
    ignore = "needs scripts/test.sh's environment (--features env-tests)"
)]
fn langgraph_reads_the_forgotten_store_only_file_as_its_own() {
    let (_a, ours) = sqlite_store_only();
    let (_b, theirs) = sqlite_store_only();
    let (out, err) = run(&[
        "forget",
        "--meta",
        "user_id=u-42",
        "--db",
        s(&ours),
        "--yes",
    ]);
    assert!(out.status.success(), "{err}");
    for (ns, key) in [
        ("users.u-42.memories", "food"),
        ("users.u-42.memories", "old-address"),
        ("users.u-42.memories", "pet"),
        ("users.u-42.profile", "main"),
    ] {
        common::store_harness(&theirs, &["delete", "--ns", ns, "--key", key]);
    }
    let view_ours = common::store_harness(&ours, &["view"]);
    assert_eq!(view_ours, common::store_harness(&theirs, &["view"]));
    assert!(!view_ours.to_string().contains("ramen"));
    let carry = common::store_harness(&ours, &["carry-on"]);
    assert_eq!(carry["ok"], json!(true));
}
