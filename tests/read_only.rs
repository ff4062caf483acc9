//! Read commands leave the directory exactly as they found it, read a database they cannot
//! write to, and see a live app's commits that are still in its WAL.

mod common;

use std::path::Path;

use common::{fixture, memctl, s};
use rusqlite::Connection;

fn listing(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .expect("read dir")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

/// A WAL-mode copy of the fixture, as SqliteSaver leaves a file once the app has exited
/// (no `-wal` / `-shm` files).
fn wal_copy() -> (tempfile::TempDir, std::path::PathBuf) {
    let dir = tempfile::tempdir().expect("temp dir");
    let db = dir.path().join("db.sqlite");
    std::fs::copy(fixture("new.sqlite"), &db).expect("copy");
    let conn = Connection::open(&db).expect("open");
    let mode: String = conn
        .query_row("PRAGMA journal_mode=WAL", [], |r| r.get(0))
        .expect("wal");
    assert_eq!(mode, "wal");
    drop(conn);
    assert_eq!(listing(dir.path()), ["db.sqlite"]);
    (dir, db)
}

const READS: [&[&str]; 10] = [
    &["threads", "list"],
    &["show", "--thread", "tools"],
    &["history", "--thread", "tools"],
    &["dump", "--thread", "tools"],
    &["diff", "--thread", "tools"],
    &["tokens", "--all"],
    &["stats"],
    &["trim", "--all", "--keep", "2", "--dry-run"],
    &[
        "gc",
        "--all",
        "--keep-checkpoints",
        "1",
        "--min-idle",
        "0s",
        "--dry-run",
    ],
    &["prune", "--idle", "1s", "--min-idle", "0s", "--dry-run"],
];

#[test]
fn read_commands_leave_no_files_behind() {
    let (dir, db) = wal_copy();
    let before = std::fs::read(&db).expect("read");
    for args in READS {
        let out = memctl()
            .args(args)
            .args(["--db", s(&db), "--format", "json"])
            .output()
            .expect("runs");
        assert!(
            out.status.success(),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert_eq!(
            listing(dir.path()),
            ["db.sqlite"],
            "{args:?} left files behind"
        );
    }
    assert_eq!(std::fs::read(&db).expect("read"), before);
}

/// A copy of the binary that any user can run (the checkout may sit under a private home),
/// in a temporary directory that lives as long as the first value.
fn public_binary() -> (tempfile::TempDir, std::path::PathBuf) {
    use std::os::unix::fs::PermissionsExt;
    let bin_dir = tempfile::tempdir().expect("temp dir");
    std::fs::set_permissions(bin_dir.path(), std::fs::Permissions::from_mode(0o755))
        .expect("chmod");
    let bin = bin_dir.path().join("memctl");
    std::fs::copy(assert_cmd::cargo::cargo_bin("memctl"), &bin).expect("copy the binary");
    std::fs::set_permissions(&bin, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    (bin_dir, bin)
}

/// True when the tests run as root.
fn is_root() -> bool {
    std::process::Command::new("id")
        .arg("-u")
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim() == "0")
        .unwrap_or(false)
}

/// `program` run as `user` (the tests run as root to do that).
fn as_user(user: &str, program: &Path) -> std::process::Command {
    let mut c = std::process::Command::new("runuser");
    c.args(["-u", user, "--"]).arg(program);
    c.env_remove("MEMCTL_DB");
    c
}

#[test]
fn a_database_in_a_read_only_directory_is_read() {
    use std::os::unix::fs::PermissionsExt;
    let (dir, db) = wal_copy();
    std::fs::set_permissions(&db, std::fs::Permissions::from_mode(0o644)).expect("chmod");
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o555)).expect("chmod");
    let (_bin_dir, bin) = public_binary();
    // As root, permissions do not apply: run as nobody, who cannot write the directory.
    let is_root = is_root();
    for args in READS {
        let mut cmd = match is_root {
            true => as_user("nobody", &bin),
            false => std::process::Command::new(&bin),
        };
        let out = cmd
            .args(args)
            .args(["--db", s(&db), "--format", "json"])
            .env_remove("MEMCTL_DB")
            .output()
            .expect("runs");
        assert!(
            out.status.success(),
            "{args:?} in a read-only directory: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    assert_eq!(listing(dir.path()), ["db.sqlite"]);
    // Writing there fails in one line that names the directory (never SQLite's raw code),
    // even when the file itself is writable.
    std::fs::set_permissions(&db, std::fs::Permissions::from_mode(0o666)).expect("chmod");
    let writes: [&[&str]; 3] = [
        &["trim", "--all", "--keep", "2"],
        &["gc", "--all", "--keep-checkpoints", "1", "--min-idle", "0s"],
        &["prune", "--idle", "1s", "--min-idle", "0s"],
    ];
    for args in writes {
        let mut cmd = match is_root {
            true => as_user("nobody", &bin),
            false => std::process::Command::new(&bin),
        };
        let out = cmd
            .args(args)
            .args(["--db", s(&db)])
            .env_remove("MEMCTL_DB")
            .output()
            .expect("runs");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{args:?}: {stderr}");
        assert!(
            stderr.contains("directory")
                && stderr.contains("not writable")
                && !stderr.contains("Error code"),
            "{args:?}: {stderr}"
        );
        assert_eq!(stderr.trim_end().lines().count(), 1, "{stderr}");
    }
    assert_eq!(listing(dir.path()), ["db.sqlite"]);
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).expect("chmod");
}

#[test]
fn a_live_apps_commits_in_its_wal_are_read() {
    let (_dir, db) = wal_copy();
    // The app: a connection that keeps its WAL (no checkpoint) with a new thread committed.
    let app = Connection::open(&db).expect("open");
    app.execute_batch(
        "PRAGMA wal_autocheckpoint=0;
         INSERT INTO checkpoints SELECT 'live-new', checkpoint_ns, checkpoint_id, parent_checkpoint_id, type, checkpoint, metadata FROM checkpoints WHERE thread_id = 'tools';",
    )
    .expect("app writes");
    assert!(std::fs::metadata(format!("{}-wal", db.display()))
        .map(|m| m.len() > 0)
        .unwrap_or(false));
    let out = memctl()
        .args(["threads", "list", "--db", s(&db), "--format", "json"])
        .output()
        .expect("runs");
    assert!(out.status.success());
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("live-new"),
        "the commit in the WAL is seen"
    );
    drop(app);
}

/// A `-wal` without its `-shm` (an app that crashed, or files copied without it): the
/// commits in the `-wal` are read, and every read leaves the directory and both files as
/// they were (no `-shm` made and left behind).
#[test]
fn a_wal_without_its_shm_is_read_and_nothing_is_left_behind() {
    let (_dir, db) = wal_copy();
    let app = Connection::open(&db).expect("open");
    app.execute_batch(
        "PRAGMA wal_autocheckpoint=0;
         INSERT INTO checkpoints SELECT 'in-the-wal', checkpoint_ns, checkpoint_id, parent_checkpoint_id, type, checkpoint, metadata FROM checkpoints WHERE thread_id = 'tools';
         INSERT INTO writes SELECT 'in-the-wal', checkpoint_ns, checkpoint_id, task_id, task_path, idx, channel, type, value FROM writes WHERE thread_id = 'tools';",
    )
    .expect("app writes");
    // The app's files as a backup copies them, without the -shm (the app still has them open:
    // its WAL is not checkpointed).
    let copy = tempfile::tempdir().expect("temp dir");
    let copied = copy.path().join("db.sqlite");
    std::fs::copy(&db, &copied).expect("copy");
    std::fs::copy(
        format!("{}-wal", db.display()),
        copy.path().join("db.sqlite-wal"),
    )
    .expect("copy the wal");
    drop(app);
    let files = ["db.sqlite", "db.sqlite-wal"];
    let bytes = |dir: &Path| -> Vec<Vec<u8>> {
        files
            .iter()
            .map(|f| std::fs::read(dir.join(f)).expect("read"))
            .collect()
    };
    let before = bytes(copy.path());
    assert!(before[1].len() > 32, "the commit is in the -wal");
    for args in READS {
        let out = memctl()
            .args(args)
            .args(["--db", s(&copied), "--format", "json"])
            .output()
            .expect("runs");
        assert!(
            out.status.success(),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        if args == ["threads", "list"] {
            assert!(
                String::from_utf8_lossy(&out.stdout).contains("in-the-wal"),
                "the commit in the -wal is read"
            );
        }
        assert_eq!(listing(copy.path()), files, "{args:?} left files behind");
    }
    assert!(bytes(copy.path()) == before, "the files are unchanged");
    // An empty -wal (nothing to copy back): SQLite would checkpoint it on close and delete it.
    let (dir, db) = wal_copy();
    std::fs::write(dir.path().join("db.sqlite-wal"), b"").expect("an empty -wal");
    for args in READS {
        let out = memctl()
            .args(args)
            .args(["--db", s(&db), "--format", "json"])
            .output()
            .expect("runs");
        assert!(out.status.success(), "{args:?}");
        assert_eq!(listing(dir.path()), files, "{args:?} changed the directory");
    }
}

/// A hot rollback journal (an app killed mid-transaction in rollback-journal mode): reads say
/// what it is and what to do (not "its directory is not writable", which is untrue), and
/// leave the file and the journal as they are.
#[test]
fn a_hot_rollback_journal_is_named_as_such() {
    let (_app_dir, app_db) = {
        let dir = tempfile::tempdir().expect("temp dir");
        let db = dir.path().join("db.sqlite");
        std::fs::copy(fixture("new.sqlite"), &db).expect("copy");
        (dir, db)
    };
    // The app, its transaction half in the file (a small page cache spills the changed pages
    // into the database before the commit), copied as a kill -9 would leave it: the copy's
    // journal is hot (no process holds the copy's lock).
    let app = Connection::open(&app_db).expect("open");
    app.execute_batch(
        "PRAGMA journal_mode=DELETE; PRAGMA cache_size=2; BEGIN;
         UPDATE checkpoints SET checkpoint = randomblob(length(checkpoint) + 500);",
    )
    .expect("app writes");
    let dir = tempfile::tempdir().expect("temp dir");
    let db = dir.path().join("db.sqlite");
    std::fs::copy(&app_db, &db).expect("copy");
    std::fs::copy(
        format!("{}-journal", app_db.display()),
        dir.path().join("db.sqlite-journal"),
    )
    .expect("copy the journal");
    drop(app);
    let journal = dir.path().join("db.sqlite-journal");
    let before = (
        std::fs::read(&db).expect("read"),
        std::fs::read(&journal).expect("a journal is left"),
    );
    assert!(!before.1.is_empty(), "the journal is hot");
    for args in [&["threads", "list"][..], &["show", "--thread", "tools"]] {
        let out = memctl()
            .args(args)
            .args(["--db", s(&db)])
            .output()
            .expect("runs");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{args:?}: {stderr}");
        assert_eq!(stderr.trim_end().lines().count(), 1, "{stderr}");
        assert!(
            stderr.contains("hot rollback journal")
                && stderr.contains("roll it back")
                && !stderr.contains("not writable"),
            "{args:?}: {stderr}"
        );
    }
    assert_eq!(listing(dir.path()), ["db.sqlite", "db.sqlite-journal"]);
    let after = (
        std::fs::read(&db).expect("read"),
        std::fs::read(&journal).expect("read"),
    );
    assert!(after == before, "the file and its journal are unchanged");
}

/// #43: a user who cannot write the app's database (another user's file, mode 644, in a
/// directory anyone may write) is refused before SQLite opens it, and leaves nothing: before,
/// SQLite opened the file read-only without a word and made `-wal` / `-shm` files owned by
/// that user, and the app's next write failed ("attempt to write a readonly database") until
/// someone deleted them. A file that user may write (mode 666) but does not own, with no app
/// holding it open, is refused too: the `-wal` / `-shm` SQLite would make could lock the
/// app's user out. As root, a rewrite of another user's file works, and the app (as its own
/// user) writes afterwards. Two users: needs root (scripts/test.sh and CI run as root).
#[test]
#[cfg_attr(
    not(feature = "env-tests"),
    ignore = "needs root to act as two users (scripts/test.sh's environment, --features env-tests)"
)]
fn another_users_database_is_refused_and_nothing_is_left_behind() {
    use std::os::unix::fs::PermissionsExt;
    assert!(
        is_root(),
        "this test acts as two users (an app's 'daemon' and memctl's 'nobody'): run it as root, as scripts/test.sh in CI does"
    );
    let (_bin_dir, bin) = public_binary();
    let dir = tempfile::tempdir().expect("temp dir");
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o777)).expect("chmod");
    let app = dir.path().join("app.sqlite");
    let src = dir.path().join("src.sqlite");
    std::fs::copy(fixture("new.sqlite"), &src).expect("copy");
    std::fs::set_permissions(&src, std::fs::Permissions::from_mode(0o644)).expect("chmod");
    let app_s = s(&app).to_owned();
    let src_s = s(&src).to_owned();
    let reset = |mode: u32| {
        // The Store fixture: WAL mode, threads and a store, as an app leaves it.
        std::fs::copy(fixture("store.sqlite"), &app).expect("copy");
        std::fs::set_permissions(&app, std::fs::Permissions::from_mode(mode)).expect("chmod");
        let ok = std::process::Command::new("chown")
            .args(["daemon:daemon", &app_s])
            .status()
            .expect("chown runs");
        assert!(ok.success());
    };
    let writes: Vec<Vec<&str>> = vec![
        vec![
            "store",
            "sweep",
            "--db",
            &app_s,
            "--now",
            "2100-01-01T00:00:00Z",
        ],
        vec!["store", "rm", "prefs", "--db", &app_s, "--yes"],
        vec!["trim", "--thread", "t-1", "--keep", "1", "--db", &app_s],
        vec!["copy", "--db", &src_s, "--thread", "tools", "--to", &app_s],
        vec!["import", &src_s, "--db", &app_s, "--thread", "tools"],
        vec!["migrate", "--db", &src_s, "--to", &app_s],
    ];
    for (mode, says) in [
        (0o644, "read-only for this user"),
        (0o666, "belongs to another user"),
    ] {
        for args in &writes {
            reset(mode);
            let before = std::fs::read(&app).expect("read");
            let out = as_user("nobody", &bin).args(args).output().expect("runs");
            let stderr = String::from_utf8_lossy(&out.stderr);
            assert_eq!(out.status.code(), Some(1), "{mode:o} {args:?}: {stderr}");
            assert!(stderr.contains(says), "{mode:o} {args:?}: {stderr}");
            assert_eq!(stderr.trim_end().lines().count(), 1, "{stderr}");
            assert_eq!(
                listing(dir.path()),
                ["app.sqlite", "src.sqlite"],
                "{mode:o} {args:?} left files behind"
            );
            assert!(
                std::fs::read(&app).expect("read") == before,
                "{args:?} wrote"
            );
        }
    }
    // As root: SQLite hands what it makes to the file's owner, and the app writes on.
    reset(0o644);
    let out = std::process::Command::new(&bin)
        .args(&writes[0])
        .env_remove("MEMCTL_DB")
        .output()
        .expect("runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let app_writes = std::process::Command::new("runuser")
        .args(["-u", "daemon", "--", "/usr/bin/python3", "-c"])
        .arg("import sqlite3, sys; c = sqlite3.connect(sys.argv[1]); c.execute(\"INSERT INTO store (prefix, key, value) VALUES ('app', 'k', '{}')\"); c.commit(); print(c.execute('PRAGMA journal_mode').fetchone()[0])")
        .arg(&app)
        .output()
        .expect("python3 runs");
    assert!(
        app_writes.status.success(),
        "the app cannot write after memctl: {}",
        String::from_utf8_lossy(&app_writes.stderr)
    );
}
