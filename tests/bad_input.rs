//! Bad input: one clear line on stderr, exit 1, no panic, nothing created or changed.

mod common;

use std::path::Path;

use common::{fixture, run_err, run_ok, s, temp_copy};
use rusqlite::Connection;

/// The commands that read a thread, each run against the bad file.
fn each_read_command(db: &str, thread: &str) -> Vec<Vec<String>> {
    let v = |a: &[&str]| a.iter().map(|x| (*x).to_owned()).collect::<Vec<_>>();
    vec![
        v(&["threads", "list", "--db", db, "--format", "json"]),
        v(&["history", "--db", db, "--thread", thread]),
        v(&["show", "--db", db, "--thread", thread]),
        v(&["dump", "--db", db, "--thread", thread]),
        v(&["diff", "--db", db, "--thread", thread]),
    ]
}

fn expect_error_everywhere(db: &Path, thread: &str, needle: &str) {
    for args in each_read_command(s(db), thread) {
        let refs: Vec<&str> = args.iter().map(String::as_str).collect();
        if refs[0] == "threads" {
            // A whole-file listing reports the bad thread in one line and lists the others
            // (exit 3, issue #12); it is an error (exit 1) only when no thread can be read.
            let out = common::memctl().args(&refs).output().expect("runs");
            let err = String::from_utf8_lossy(&out.stderr);
            // Not a checkpoint database at all, or a one-thread one: nothing can be read.
            let all_bad =
                Connection::open_with_flags(db, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)
                    .and_then(|c| {
                        c.query_row(
                            "SELECT COUNT(DISTINCT thread_id) FROM checkpoints",
                            [],
                            |r| r.get::<_, i64>(0),
                        )
                    })
                    .map_or(true, |n| n <= 1);
            let want = if all_bad { 1 } else { 3 };
            assert_eq!(out.status.code(), Some(want), "memctl {refs:?}: {err}");
            assert_eq!(err.trim_end().lines().count(), 1, "{err}");
            assert!(
                err.contains(needle),
                "memctl {refs:?}: expected '{needle}' in: {err}"
            );
            continue;
        }
        let err = run_err(&refs);
        assert!(
            err.contains(needle),
            "memctl {refs:?}: expected '{needle}' in: {err}"
        );
    }
}

/// The latest root checkpoint of thread "1" in a copy of the new fixture.
fn latest_blob(db: &Path) -> (String, Vec<u8>) {
    let conn = Connection::open(db).expect("open copy");
    conn.query_row(
        "SELECT checkpoint_id, checkpoint FROM checkpoints WHERE thread_id='1' AND checkpoint_ns='' \
         ORDER BY checkpoint_id DESC LIMIT 1",
        [],
        |r| Ok((r.get(0)?, r.get(1)?)),
    )
    .expect("thread 1 has a checkpoint")
}

fn set_latest(db: &Path, id: &str, type_name: &str, blob: &[u8]) {
    let conn = Connection::open(db).expect("open copy");
    conn.execute(
        "UPDATE checkpoints SET type = ?, checkpoint = ? WHERE thread_id='1' AND checkpoint_id = ?",
        rusqlite::params![type_name, blob, id],
    )
    .expect("update");
}

#[test]
fn missing_file_is_an_error_and_is_not_created() {
    let dir = tempfile::tempdir().expect("tmp");
    let db = dir.path().join("nope.sqlite");
    expect_error_everywhere(&db, "1", "no such file");
    assert!(!db.exists(), "memctl created the missing file");
    assert_eq!(
        std::fs::read_dir(dir.path()).expect("ls").count(),
        0,
        "no side files either"
    );
}

#[test]
fn no_db_given_says_how_to_give_one() {
    // A usage error (exit 2), for every command that needs a database (#46: it was exit 1).
    for args in [
        &["threads", "list"][..],
        &["store", "ls", "a"],
        &["copy", "--thread", "t", "--to-thread", "u"],
        &["migrate", "--to", "x.sqlite"],
        &["find", "x"],
    ] {
        let out = common::memctl().args(args).output().expect("runs");
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains("--db") && err.contains("MEMCTL_DB"), "{err}");
        assert_eq!(err.trim().lines().count(), 1, "{err}");
    }
}

#[test]
fn db_from_environment_variable() {
    let out = common::memctl()
        .env("MEMCTL_DB", fixture("new.sqlite"))
        .args(["threads", "list", "--format", "json"])
        .output()
        .expect("runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    assert!(v.as_array().is_some_and(|a| !a.is_empty()));
}

#[test]
fn directory_empty_file_and_random_bytes() {
    let dir = tempfile::tempdir().expect("tmp");
    expect_error_everywhere(dir.path(), "1", "is not a file");
    let empty = dir.path().join("empty.sqlite");
    std::fs::write(&empty, b"").expect("write");
    expect_error_everywhere(&empty, "1", "is empty");
    let random = dir.path().join("random.sqlite");
    let bytes: Vec<u8> = (0..8192u32)
        .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
        .collect();
    std::fs::write(&random, &bytes).expect("write");
    expect_error_everywhere(&random, "1", "is not a SQLite database");
    assert_eq!(
        std::fs::read(&random).expect("read"),
        bytes,
        "file untouched"
    );
}

#[test]
fn sqlite_file_of_another_application() {
    let dir = tempfile::tempdir().expect("tmp");
    let db = dir.path().join("other.sqlite");
    let conn = Connection::open(&db).expect("create");
    conn.execute_batch("CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT); INSERT INTO notes VALUES (1, 'x');")
        .expect("schema");
    drop(conn);
    expect_error_everywhere(&db, "1", "not a LangGraph checkpoint database");
}

#[test]
fn unknown_schema_column_is_named() {
    let dir = tempfile::tempdir().expect("tmp");
    let db = dir.path().join("odd.sqlite");
    let conn = Connection::open(&db).expect("create");
    conn.execute_batch(
        "CREATE TABLE checkpoints (thread_id TEXT, checkpoint_ns TEXT, checkpoint_id TEXT, blob BLOB);
         CREATE TABLE writes (thread_id TEXT, checkpoint_ns TEXT, checkpoint_id TEXT, task_id TEXT, idx INTEGER, channel TEXT, type TEXT, value BLOB);",
    )
    .expect("schema");
    drop(conn);
    expect_error_everywhere(&db, "1", "without the 'parent_checkpoint_id' column");
}

#[test]
fn unknown_thread() {
    for gen in common::GENERATIONS {
        let db = fixture(&format!("{gen}.sqlite"));
        for cmd in ["history", "show", "dump", "diff"] {
            let err = run_err(&[cmd, "--db", s(&db), "--thread", "no-such-thread"]);
            assert!(err.contains("no thread 'no-such-thread'"), "{err}");
        }
        let err = run_err(&[
            "show",
            "--db",
            s(&db),
            "--thread",
            "1",
            "--checkpoint",
            "bogus",
        ]);
        assert!(err.contains("no checkpoint 'bogus'"), "{err}");
        let err = run_err(&["show", "--db", s(&db), "--thread", "1", "--ns", "nope:1"]);
        assert!(err.contains("namespace 'nope:1'"), "{err}");
    }
}

#[test]
fn truncated_and_bit_flipped_blobs() {
    let (_dir, db) = temp_copy(&fixture("new.sqlite"));
    let (id, blob) = latest_blob(&db);
    set_latest(&db, &id, "msgpack", &blob[..blob.len() / 2]);
    expect_error_everywhere(&db, "1", "truncated");

    let mut flipped = blob.clone();
    flipped[0] ^= 0x80; // the map marker becomes a positive fixint: a different document
    set_latest(&db, &id, "msgpack", &flipped);
    expect_error_everywhere(&db, "1", "corrupt msgpack blob");

    let mut bad_marker = blob.clone();
    let at = blob.len() / 3;
    bad_marker[at] = 0xc1;
    set_latest(&db, &id, "msgpack", &bad_marker);
    let err = run_err(&["show", "--db", s(&db), "--thread", "1"]);
    assert!(err.contains("corrupt msgpack blob"), "{err}");
    assert!(
        err.contains("cannot decode checkpoint"),
        "names the checkpoint: {err}"
    );
}

#[test]
fn unknown_type_tag_and_ext_code() {
    let (_dir, db) = temp_copy(&fixture("new.sqlite"));
    let (id, blob) = latest_blob(&db);
    set_latest(&db, &id, "yaml", &blob);
    expect_error_everywhere(&db, "1", "unknown serialization type 'yaml'");

    // A checkpoint map whose channel holds ext type 42.
    let doc = [
        0x81, 0xae, b'c', b'h', b'a', b'n', b'n', b'e', b'l', b'_', b'v', b'a', b'l', b'u', b'e',
        b's', 0x81, 0xa1, b'x', 0xd4, 42, 0xc0,
    ];
    set_latest(&db, &id, "msgpack", &doc);
    expect_error_everywhere(&db, "1", "unknown msgpack extension type 42");
}

/// Without LANGGRAPH_AES_KEY, reading an encrypted thread says what to set (the encrypted
/// cases in full: tests/encrypted.rs).
#[test]
fn encrypted_blobs_say_so() {
    let db = fixture("encrypted.sqlite");
    for args in [
        vec!["show", "--db", s(&db), "--thread", "1"],
        vec!["dump", "--db", s(&db), "--thread", "1"],
    ] {
        let err = run_err(&args);
        assert!(
            err.contains("encrypted with AES") && err.contains("set LANGGRAPH_AES_KEY"),
            "{err}"
        );
    }
}

#[test]
fn locked_database_waits_then_fails_clearly() {
    let (_dir, db) = temp_copy(&fixture("new.sqlite"));
    let conn = Connection::open(&db).expect("open");
    conn.execute_batch("PRAGMA journal_mode=DELETE; BEGIN EXCLUSIVE;")
        .expect("lock");
    let err = run_err(&["threads", "list", "--db", s(&db), "--busy-timeout", "200"]);
    assert!(err.contains("locked"), "{err}");
    conn.execute_batch("COMMIT").expect("unlock");
}

#[test]
fn briefly_locked_database_is_waited_for() {
    let (_dir, db) = temp_copy(&fixture("new.sqlite"));
    let conn = Connection::open(&db).expect("open");
    conn.execute_batch("PRAGMA journal_mode=DELETE; BEGIN EXCLUSIVE;")
        .expect("lock");
    let child = std::process::Command::new(env!("CARGO_BIN_EXE_memctl"))
        .env_remove("MEMCTL_DB")
        .args(["threads", "list", "--db", s(&db), "--format", "json"])
        .args(["--busy-timeout", "60000"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("memctl starts");
    // The lock goes only once memctl is waiting for it (asleep in SQLite's busy handler), so
    // the test cannot pass by memctl starting after the lock went.
    common::wait_for("memctl to wait for the lock", || {
        common::sleeping_in_the_busy_handler(child.id())
    });
    conn.execute_batch("COMMIT").expect("unlock");
    let out = child.wait_with_output().expect("memctl ends");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8_lossy(&out.stdout).contains("\"thread_id\""));
}

#[test]
fn read_commands_leave_the_file_untouched() {
    let (dir, db) = temp_copy(&fixture("new.sqlite"));
    let before = std::fs::read(&db).expect("read");
    for args in each_read_command(s(&db), "1") {
        let refs: Vec<&str> = args.iter().map(String::as_str).collect();
        run_ok(&refs);
    }
    assert_eq!(std::fs::read(&db).expect("read"), before);
    let names: Vec<_> = std::fs::read_dir(dir.path())
        .expect("ls")
        .map(|e| e.expect("entry").file_name())
        .collect();
    assert_eq!(
        names.len(),
        1,
        "no -wal / -shm / journal left behind: {names:?}"
    );
}
