//! The question destructive commands ask on a terminal (#26): memctl runs in a real terminal
//! (a tmux pane), the test reads the screen and answers. Not on a terminal (a pipe, cron) it
//! never asks.
//!
//! tmux must be installed (scripts/test.sh installs it when missing); a missing tmux fails
//! the test, never skips it.

mod common;

use std::path::Path;

use common::tmux::Pane;
use common::{fixture, s, temp_copy};

/// The thread ids in the database (by SQL, not through memctl).
fn threads(db: &Path) -> Vec<String> {
    let conn = rusqlite::Connection::open(db).expect("open");
    let mut st = conn
        .prepare("SELECT DISTINCT thread_id FROM checkpoints ORDER BY thread_id")
        .expect("prepare");
    let rows = st.query_map([], |r| r.get(0)).expect("query");
    rows.map(|r| r.expect("row")).collect()
}

#[test]
#[cfg_attr(
    not(feature = "env-tests"),
    ignore = "needs scripts/test.sh's environment (tmux; --features env-tests)"
)]
fn prune_on_a_terminal_asks_and_no_writes_nothing() {
    let (_dir, db) = temp_copy(&fixture("new.sqlite"));
    let before = std::fs::read(&db).expect("read");
    let pane = Pane::run("no", &["prune", "--db", s(&db), "--idle", "1s"]);
    let screen = pane.wait_for("Proceed? [y/N]");
    assert!(
        screen.contains("memctl prune will delete 14 threads"),
        "the question says what prune will do:\n{screen}"
    );
    // The first few ids, then how many more.
    assert!(screen.contains("and 9 more"), "{screen}");
    pane.answer("n");
    let (code, screen) = pane.exit();
    assert_eq!(code, 1, "{screen}");
    assert!(screen.contains("memctl: nothing done"), "{screen}");
    assert_eq!(
        std::fs::read(&db).expect("read"),
        before,
        "the file is unchanged"
    );
    assert_eq!(threads(&db).len(), 14);
}

#[test]
#[cfg_attr(
    not(feature = "env-tests"),
    ignore = "needs scripts/test.sh's environment (tmux; --features env-tests)"
)]
fn prune_on_a_terminal_deletes_after_yes() {
    let (_dir, db) = temp_copy(&fixture("new.sqlite"));
    let pane = Pane::run("yes", &["prune", "--db", s(&db), "--idle", "1s"]);
    pane.wait_for("Proceed? [y/N]");
    assert_eq!(
        threads(&db).len(),
        14,
        "nothing is deleted before the answer"
    );
    pane.answer("y");
    let (code, screen) = pane.exit();
    assert_eq!(code, 0, "{screen}");
    assert!(screen.contains("deleted 14 threads"), "{screen}");
    assert!(threads(&db).is_empty());
}

#[test]
#[cfg_attr(
    not(feature = "env-tests"),
    ignore = "needs scripts/test.sh's environment (tmux; --features env-tests)"
)]
fn yes_on_a_terminal_skips_the_question() {
    let (_dir, db) = temp_copy(&fixture("new.sqlite"));
    let pane = Pane::run("flag", &["prune", "--db", s(&db), "--idle", "1s", "--yes"]);
    let (code, screen) = pane.exit();
    assert_eq!(code, 0, "{screen}");
    assert!(!screen.contains("Proceed?"), "{screen}");
    assert!(threads(&db).is_empty());
}

#[test]
#[cfg_attr(
    not(feature = "env-tests"),
    ignore = "needs scripts/test.sh's environment (tmux; --features env-tests)"
)]
fn a_dry_run_on_a_terminal_never_asks() {
    let (_dir, db) = temp_copy(&fixture("new.sqlite"));
    let pane = Pane::run(
        "dry",
        &[
            "gc",
            "--db",
            s(&db),
            "--all",
            "--keep-checkpoints",
            "1",
            "-n",
        ],
    );
    let (code, screen) = pane.exit();
    assert_eq!(code, 0, "{screen}");
    assert!(!screen.contains("Proceed?"), "{screen}");
    assert!(screen.contains("dry run: would delete"), "{screen}");
}

#[test]
#[cfg_attr(
    not(feature = "env-tests"),
    ignore = "needs scripts/test.sh's environment (tmux; --features env-tests)"
)]
fn every_destructive_command_asks_on_a_terminal() {
    let cases: [(&str, &[&str], &str); 4] = [
        (
            "gc",
            &["gc", "--all", "--keep-checkpoints", "1"],
            "memctl gc will delete all but the newest 1 checkpoint",
        ),
        (
            "forget",
            &["forget", "--thread", "tools"],
            "memctl forget will delete 1 thread",
        ),
        (
            "rm",
            &["rm", "--thread", "tools", "--index", "-1", "--purge"],
            "memctl rm will remove 1 message and scrub it",
        ),
        (
            "rekey",
            &["rekey", "--new-key-env", "MEMCTL_TEST_NEW_KEY"],
            "memctl rekey will encrypt",
        ),
    ];
    for (tag, args, question) in cases {
        let (_dir, db) = temp_copy(&fixture("new.sqlite"));
        let before = std::fs::read(&db).expect("read");
        let mut args = args.to_vec();
        args.extend(["--db", s(&db)]);
        // rekey's key comes from the pane's environment.
        let pane = Pane::run_with_env(tag, &args, &[("MEMCTL_TEST_NEW_KEY", "0123456789abcdef")]);
        let screen = pane.wait_for("Proceed? [y/N]");
        assert!(screen.contains(question), "{tag}: {screen}");
        pane.answer("");
        let (code, screen) = pane.exit();
        assert_eq!(code, 1, "{tag}: {screen}");
        assert!(screen.contains("memctl: nothing done"), "{tag}: {screen}");
        assert_eq!(
            std::fs::read(&db).expect("read"),
            before,
            "{tag}: the file is unchanged"
        );
    }
}

#[test]
fn a_pipe_never_asks() {
    let (_dir, db) = temp_copy(&fixture("new.sqlite"));
    // stdin a pipe with "n" in it, stdout a pipe: no question, prune goes ahead as in cron.
    let out = common::memctl()
        .args(["prune", "--db", s(&db), "--idle", "1s"])
        .write_stdin("n\n")
        .output()
        .expect("memctl runs");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(!stderr.contains("Proceed?"), "{stderr}");
    assert!(threads(&db).is_empty());
}

/// `store rm` asks too: what it would delete (items of the namespace), then `[y/N]`; `n`
/// leaves the store as it was, `y` deletes, `--yes` does not ask.
#[test]
#[cfg_attr(
    not(feature = "env-tests"),
    ignore = "needs scripts/test.sh's environment (tmux; --features env-tests)"
)]
fn store_rm_on_a_terminal_asks_first() {
    let items = |db: &Path| -> i64 {
        rusqlite::Connection::open(db)
            .expect("open")
            .query_row(
                "SELECT COUNT(*) FROM store WHERE prefix = 'users.u-42.memories'",
                [],
                |r| r.get(0),
            )
            .expect("count")
    };
    let (_dir, db) = temp_copy(&fixture("store.sqlite"));
    let before = std::fs::read(&db).expect("read");
    let had = items(&db);
    assert!(had > 0, "the fixture has items there");
    let pane = Pane::run(
        "store-no",
        &["store", "rm", "users.u-42.memories", "--db", s(&db)],
    );
    let screen = pane.wait_for("Proceed? [y/N]");
    assert!(
        screen.contains(&format!(
            "memctl store rm will delete {had} items of namespace 'users.u-42.memories'"
        )),
        "{screen}"
    );
    pane.answer("n");
    let (code, screen) = pane.exit();
    assert_eq!(code, 1, "{screen}");
    assert_eq!(std::fs::read(&db).expect("read"), before, "unchanged");
    let pane = Pane::run(
        "store-yes",
        &["store", "rm", "users.u-42.memories", "--db", s(&db)],
    );
    pane.wait_for("Proceed? [y/N]");
    pane.answer("y");
    let (code, screen) = pane.exit();
    assert_eq!(code, 0, "{screen}");
    assert_eq!(items(&db), 0);
    let (_dir2, db2) = temp_copy(&fixture("store.sqlite"));
    let pane = Pane::run(
        "store-flag",
        &[
            "store",
            "rm",
            "users.u-42.memories",
            "--yes",
            "--db",
            s(&db2),
        ],
    );
    let (code, screen) = pane.exit();
    assert_eq!(code, 0, "{screen}");
    assert!(!screen.contains("Proceed?"), "{screen}");
    assert_eq!(items(&db2), 0);
}
