//! The question destructive commands ask on a terminal (#26): memctl runs in a real terminal
//! (a tmux pane), the test reads the screen and answers. Not on a terminal (a pipe, cron) it
//! never asks.
//!
//! tmux must be installed (scripts/test.sh installs it when missing); a missing tmux fails
//! the test, never skips it.

mod common;

use std::path::Path;
use std::process::Command as Process;
use std::time::{Duration, Instant};

use common::{fixture, s, temp_copy};

/// A tmux server of its own (its own socket) running one command in a pane; killed on drop.
struct Pane {
    socket: String,
}

/// How long the screen may take to show what is expected (a slow, shared machine).
const PATIENCE: Duration = Duration::from_secs(120);

impl Pane {
    /// Starts `args` (memctl's) in a new pane, on `db`'s copy; the pane shows
    /// `memctl-exit=N` when memctl ends and then waits, so that the screen can be read.
    fn run(tag: &str, args: &[&str]) -> Pane {
        Pane::run_with_env(tag, args, &[])
    }

    /// [`Pane::run`] with variables set in memctl's environment.
    fn run_with_env(tag: &str, args: &[&str], env: &[(&str, &str)]) -> Pane {
        let tmux = Process::new("tmux").arg("-V").output();
        assert!(
            tmux.is_ok_and(|o| o.status.success()),
            "tmux is not installed: apt-get install tmux (scripts/test.sh installs it)"
        );
        let socket = format!("memctl-confirm-{}-{tag}", std::process::id());
        let quoted: Vec<String> = std::iter::once(env!("CARGO_BIN_EXE_memctl"))
            .chain(args.iter().copied())
            .map(|a| format!("'{}'", a.replace('\'', r"'\''")))
            .collect();
        let script = format!(
            "env -u MEMCTL_DB -u LANGGRAPH_AES_KEY NO_COLOR=1 {} {}; echo memctl-exit=$?; read wait",
            env.iter()
                .map(|(k, v)| format!("{k}='{v}'"))
                .collect::<Vec<_>>()
                .join(" "),
            quoted.join(" ")
        );
        let status = Process::new("tmux")
            .args(["-L", &socket, "-f", "/dev/null", "new-session", "-d"])
            .args(["-x", "200", "-y", "50", "sh", "-c", &script])
            .status()
            .expect("tmux runs");
        assert!(status.success(), "tmux new-session failed");
        Pane { socket }
    }

    /// The pane's screen now.
    fn screen(&self) -> String {
        let out = Process::new("tmux")
            .args(["-L", &self.socket, "capture-pane", "-p", "-J"])
            .output()
            .expect("tmux capture-pane runs");
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// Polls the screen until it shows `text` (bounded by [`PATIENCE`]); returns it.
    fn wait_for(&self, text: &str) -> String {
        let start = Instant::now();
        loop {
            let screen = self.screen();
            if screen.contains(text) {
                return screen;
            }
            assert!(
                start.elapsed() < PATIENCE,
                "the terminal never showed {text:?}; it shows:\n{screen}"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// Types `keys` and Enter.
    fn answer(&self, keys: &str) {
        let status = Process::new("tmux")
            .args(["-L", &self.socket, "send-keys", "-l", keys])
            .status()
            .expect("tmux send-keys runs");
        assert!(status.success());
        let status = Process::new("tmux")
            .args(["-L", &self.socket, "send-keys", "Enter"])
            .status()
            .expect("tmux send-keys runs");
        assert!(status.success());
    }

    /// Waits for memctl to end; returns its exit code and the screen.
    fn exit(&self) -> (i32, String) {
        let screen = self.wait_for("memctl-exit=");
        let code = screen
            .lines()
            .find_map(|l| l.trim().strip_prefix("memctl-exit="))
            .and_then(|c| c.trim().parse().ok())
            .unwrap_or_else(|| panic!("no exit code on the screen:\n{screen}"));
        (code, screen)
    }
}

impl Drop for Pane {
    fn drop(&mut self) {
        let _ = Process::new("tmux")
            .args(["-L", &self.socket, "kill-server"])
            .status();
    }
}

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
fn yes_on_a_terminal_skips_the_question() {
    let (_dir, db) = temp_copy(&fixture("new.sqlite"));
    let pane = Pane::run("flag", &["prune", "--db", s(&db), "--idle", "1s", "--yes"]);
    let (code, screen) = pane.exit();
    assert_eq!(code, 0, "{screen}");
    assert!(!screen.contains("Proceed?"), "{screen}");
    assert!(threads(&db).is_empty());
}

#[test]
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
