//! Shared helpers for the integration tests: the real binary, committed fixtures, temp copies.
#![allow(dead_code)]

pub mod chat_server;
pub mod delta_states;
pub mod jobs;
pub mod listing;
pub mod meta;
pub mod pg;
pub mod store;
pub mod tmux;
pub mod zygote;

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

/// The Python of a venv with real LangGraph: `$MEMCTL_PYTHON_<GEN>` (`new`, `old`, `pg`, `deep`,
/// `vec`), else `.venv/<gen>/bin/python`. A missing one fails the test with what to run.
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

/// True when `out` is `find` finding nothing, like grep: exit 1, nothing on stderr, and an
/// empty result on stdout (`[]` in JSON). Any other exit 1 of `find` is an error.
#[allow(dead_code)]
pub fn find_found_nothing(args: &[&str], out: &std::process::Output) -> bool {
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stdout = stdout.trim();
    let stderr = String::from_utf8_lossy(&out.stderr);
    // Nothing on stdout but an empty JSON list; a table's note on stderr.
    args.first() == Some(&"find")
        && out.status.code() == Some(1)
        && (stderr.is_empty() || stderr.trim() == "memctl: no hits")
        && (stdout.is_empty() || stdout == "[]")
}

/// Runs memctl with `args`, asserts success (or `find` finding nothing), returns stdout.
pub fn run_ok(args: &[&str]) -> String {
    let out = memctl().args(args).output().expect("memctl runs");
    assert!(
        out.status.success() || find_found_nothing(args, &out),
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

/// Polls `done` every 20 ms until it holds, failing the test with `what` after 90 s: a
/// readiness poll instead of a fixed sleep (which passes without testing anything, or fails,
/// when a process starts late on a loaded machine).
#[allow(dead_code)]
pub fn wait_for(what: &str, done: impl Fn() -> bool) {
    let started = std::time::Instant::now();
    while !done() {
        assert!(
            started.elapsed().as_secs() < 90,
            "timed out waiting for {what}"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

/// The number of root checkpoints of `thread` in the SQLite file `db` (-1 when it cannot be
/// read at this moment, e.g. while an app holds an exclusive lock).
#[allow(dead_code)]
pub fn checkpoint_count(db: &Path, thread: &str) -> i64 {
    rusqlite::Connection::open_with_flags(db, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)
        .and_then(|c| {
            c.query_row(
                "SELECT COUNT(*) FROM checkpoints WHERE thread_id = ?1 AND checkpoint_ns = ''",
                [thread],
                |r| r.get(0),
            )
        })
        .unwrap_or(-1)
}

/// Runs `f` on every case, two at a time (two cores), and reports every failure at once.
#[allow(dead_code)]
pub fn run_parallel<T: Send>(cases: Vec<T>, f: impl Fn(T) -> Result<(), String> + Sync) {
    let failures = std::sync::Mutex::new(Vec::new());
    let queue = std::sync::Mutex::new(cases);
    std::thread::scope(|scope| {
        for _ in 0..2 {
            scope.spawn(|| loop {
                let Some(case) = queue.lock().expect("queue").pop() else {
                    break;
                };
                if let Err(e) = f(case) {
                    failures.lock().expect("failures").push(e);
                }
            });
        }
    });
    let failures = failures.into_inner().expect("failures");
    assert!(
        failures.is_empty(),
        "{} interop failures:\n{}",
        failures.len(),
        failures.join("\n\n")
    );
}

/// One run of a Python harness with real LangGraph (`tests/interop/SCRIPT` under the venv
/// of `gen`), with no AES key from the developer's shell unless given.
pub struct Harness {
    python: PathBuf,
    script: PathBuf,
    /// Changes to the test process's environment (`None`: removed).
    env: Vec<(String, Option<String>)>,
}

/// What a harness run left: whether it succeeded, and its output.
pub struct Ran {
    /// The harness exited 0.
    pub ok: bool,
    /// Its standard output (its JSON report, where it makes one).
    pub stdout: String,
    /// Its standard error.
    pub stderr: String,
}

#[allow(dead_code)]
impl Harness {
    /// `tests/interop/{script}` run by the Python of venv `gen` (`new`, `old`, `pg`, `deep`),
    /// through that script's fork server (`zygote`): LangGraph imported once per test process.
    /// PYTHONHASHSEED=0, as the harnesses need it (set/frozenset bytes; they re-exec
    /// themselves without it).
    pub fn new(gen: &str, script: &str) -> Self {
        Harness {
            python: python(gen),
            script: root().join("tests/interop").join(script),
            env: vec![
                ("PYTHONHASHSEED".into(), Some("0".into())),
                ("LANGGRAPH_AES_KEY".into(), None),
                ("MEMCTL_INTEROP_OLD_AES_KEY".into(), None),
            ],
        }
    }

    /// With an environment variable set (e.g. `LANGGRAPH_AES_KEY`).
    pub fn env(mut self, name: &str, value: Option<&str>) -> Self {
        if let Some(v) = value {
            self.env.push((name.into(), Some(v.into())));
        }
        self
    }

    /// Runs it with `args`.
    pub fn run(self, args: &[&str]) -> Ran {
        let out = zygote::run(&self.python, &self.script, args, &self.env);
        Ran {
            ok: out.code == 0,
            stdout: out.stdout,
            stderr: out.stderr,
        }
    }
}

#[allow(dead_code)]
impl Ran {
    /// Standard output and standard error, for a failure message.
    pub fn text(&self) -> String {
        format!("{}\n{}", self.stdout, self.stderr)
    }

    /// Its JSON report, or why there is none (it failed: its stderr).
    pub fn json(&self) -> Result<serde_json::Value, String> {
        if !self.ok {
            return Err(format!("the harness failed:\n{}", self.text()));
        }
        serde_json::from_str(&self.stdout)
            .map_err(|e| format!("harness JSON: {e}: {}", self.stdout))
    }

    /// [`Ran::json`], failing the test when there is none.
    pub fn expect_json(&self, args: &[&str]) -> serde_json::Value {
        self.json()
            .unwrap_or_else(|e| panic!("harness {args:?}: {e}"))
    }
}

/// What the harness's `check-rewrite` is given: a rewritten copy of a fixture and what
/// LangGraph must show of it.
pub struct Rewrite<'a> {
    /// The pristine fixture.
    pub original: &'a Path,
    /// memctl's rewritten copy of it.
    pub rewritten: &'a Path,
    /// The thread memctl rewrote.
    pub thread: &'a str,
    /// The graph the harness runs the thread with (`delta:T`, `deep:T`), if not its default.
    pub graph: Option<&'a str>,
    /// What the harness must find (written to `expect.json` in `dir`).
    pub expect: &'a serde_json::Value,
    /// A scratch directory.
    pub dir: &'a Path,
}

#[allow(dead_code)]
impl Harness {
    /// The harness's `check-rewrite` of `r`: real LangGraph reads the rewritten thread as
    /// `r.expect` says and continues it.
    pub fn check_rewrite(self, r: &Rewrite) -> Ran {
        let expect_path = r.dir.join("expect.json");
        std::fs::write(&expect_path, r.expect.to_string()).expect("write expect");
        let mut args = vec![
            "check-rewrite",
            "--original",
            s(r.original),
            "--rewritten",
            s(r.rewritten),
            "--thread",
            r.thread,
            "--expect",
            s(&expect_path),
        ];
        if let Some(g) = r.graph {
            args.extend(["--graph", g]);
        }
        self.run(&args)
    }
}

/// Whether a thread of process `pid` is in a sleep system call (`nanosleep` /
/// `clock_nanosleep`, which SQLite's busy handler makes between its tries for a lock), read
/// from `/proc/PID/task/*/syscall` (Linux): a process waiting for a lock the test holds.
#[allow(dead_code)]
pub fn sleeping_in_the_busy_handler(pid: u32) -> bool {
    // x86_64: nanosleep 35, clock_nanosleep 230; aarch64: nanosleep 101, clock_nanosleep 115.
    let sleeps: &[&str] = if cfg!(target_arch = "aarch64") {
        &["101", "115"]
    } else {
        &["35", "230"]
    };
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
        return false;
    };
    tasks.flatten().any(|task| {
        std::fs::read_to_string(task.path().join("syscall"))
            .is_ok_and(|t| sleeps.contains(&t.split_whitespace().next().unwrap_or("")))
    })
}

/// `tests/interop/harness_store.py COMMAND --db DB ARGS…` (real LangGraph's SqliteStore) and
/// its JSON report; `args[0]` is the command.
#[allow(dead_code)]
pub fn store_harness(db: &Path, args: &[&str]) -> serde_json::Value {
    let mut all = vec![args[0], "--db", s(db)];
    all.extend(&args[1..]);
    Harness::new("new", "harness_store.py")
        .run(&all)
        .expect_json(&all)
}

/// [`store_harness`] with the embedding index of fixtures/store-vec.sqlite (`--index`), run
/// by the Python of venv `vec` (`$MEMCTL_PYTHON_VEC`, else `.venv/vec/bin/python`: its sqlite3
/// loads the sqlite-vec extension the store needs).
pub fn store_vec_harness(db: &Path, args: &[&str]) -> serde_json::Value {
    let mut all = vec![args[0], "--index", "--db", s(db)];
    all.extend(&args[1..]);
    Harness::new("vec", "harness_store.py")
        .run(&all)
        .expect_json(&all)
}

/// The threads a `forget --dry-run --format json` plan would delete, in its order.
pub fn would_delete(plan: &serde_json::Value) -> Vec<String> {
    threads_in_plan(plan, "would delete")
}

/// The threads of a `forget --format json` plan or receipt listing whose action is `action`,
/// in its order.
pub fn threads_in_plan(plan: &serde_json::Value, action: &str) -> Vec<String> {
    plan["threads"]
        .as_array()
        .expect("threads")
        .iter()
        .filter(|l| l["action"] == action)
        .map(|l| l["thread_id"].as_str().unwrap_or_default().to_owned())
        .collect()
}
