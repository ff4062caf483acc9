//! Shared helpers for the integration tests: the real binary, committed fixtures, temp copies.
#![allow(dead_code)]

pub mod chat_server;
pub mod delta_states;
pub mod pg;
pub mod tmux;

use std::path::{Path, PathBuf};

use assert_cmd::Command;

/// The repository root.
pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// A committed fixture file.
pub fn fixture(name: &str) -> PathBuf {
    root().join("fixtures").join(name)
}

/// The fixture databases every read test runs on: both saver generations.
pub const GENERATIONS: [&str; 2] = ["new", "old"];

/// `memctl` with a scrubbed environment (no MEMCTL_DB or LANGGRAPH_AES_KEY from the
/// developer's shell).
pub fn memctl() -> Command {
    let mut cmd = Command::cargo_bin("memctl").expect("the memctl binary is built");
    cmd.env_remove("MEMCTL_DB")
        .env_remove("LANGGRAPH_AES_KEY")
        .env("NO_COLOR", "1");
    cmd
}

/// The Python of a venv with real LangGraph: `$MEMCTL_PYTHON_<GEN>` (`new`, `old`, `pg`), else
/// `.venv/<gen>/bin/python`. A missing one fails the test with what to run.
pub fn python(gen: &str) -> PathBuf {
    let var = format!("MEMCTL_PYTHON_{}", gen.to_uppercase());
    let path = std::env::var_os(&var)
        .map(PathBuf::from)
        .unwrap_or_else(|| root().join(".venv").join(gen).join("bin").join("python"));
    assert!(
        path.exists(),
        "LangGraph ({gen}) is not installed at {}: run scripts/pyenv.sh (scripts/test.sh does it)",
        path.display()
    );
    path
}

/// Runs memctl with `args`, asserts success, returns stdout.
pub fn run_ok(args: &[&str]) -> String {
    let out = memctl().args(args).output().expect("memctl runs");
    assert!(
        out.status.success(),
        "memctl {args:?} failed with {:?}\nstderr: {}",
        out.status.code(),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("stdout is UTF-8")
}

/// Runs memctl with `args`, asserts a clean failure (exit 1, one line on stderr, no panic),
/// returns stderr.
pub fn run_err(args: &[&str]) -> String {
    let out = memctl().args(args).output().expect("memctl runs");
    let stderr = String::from_utf8(out.stderr).expect("stderr is UTF-8");
    assert_eq!(
        out.status.code(),
        Some(1),
        "memctl {args:?}: expected exit 1, stderr: {stderr}"
    );
    assert!(
        !stderr.contains("panicked"),
        "memctl {args:?} panicked: {stderr}"
    );
    assert_eq!(
        stderr.trim_end().lines().count(),
        1,
        "one line on stderr, got: {stderr}"
    );
    stderr
}

/// Runs memctl and parses stdout as JSON.
pub fn run_json(args: &[&str]) -> serde_json::Value {
    let stdout = run_ok(args);
    serde_json::from_str(&stdout)
        .unwrap_or_else(|e| panic!("memctl {args:?}: bad JSON ({e}): {stdout}"))
}

/// Loads a fixture's expectations (written by fixtures/generate.py from real LangGraph).
pub fn expected(name: &str) -> serde_json::Value {
    let path = root()
        .join("fixtures")
        .join("expected")
        .join(format!("{name}.json"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// Copies a file into a fresh temp dir and returns (dir guard, path).
pub fn temp_copy(src: &Path) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().expect("temp dir");
    let dst = dir.path().join(src.file_name().expect("a file name"));
    std::fs::copy(src, &dst).expect("copy fixture");
    (dir, dst)
}

/// A stand-in app that has `db` open, as a live app beside memctl has: a connection in WAL
/// mode (as `SqliteSaver.setup()` leaves the file) after adding 80 MiB of rows, over the
/// 64 MiB memctl rebuilds with `VACUUM` while another process has the file open.
pub fn app_with_a_large_file(db: &Path) -> rusqlite::Connection {
    let app = rusqlite::Connection::open(db).expect("open");
    app.execute_batch(
        "PRAGMA journal_mode = WAL; \
         CREATE TABLE ballast (b BLOB); \
         WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 80) \
         INSERT INTO ballast SELECT zeroblob(1 << 20) FROM n;",
    )
    .expect("ballast");
    app
}

/// Path as &str for argument lists.
pub fn s(p: &Path) -> &str {
    p.to_str().expect("UTF-8 path")
}
