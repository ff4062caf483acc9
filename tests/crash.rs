//! Crash consistency: `kill -9` at random points during every rewrite command.
//!
//! Each command runs on a copy of `fixtures/new.sqlite` in WAL mode (as a live SqliteSaver
//! file is): trim --all, rm --purge of a thread, gc, prune, and summarize against a local chat
//! completions server. First a run that is not killed, timed, gives each thread's state
//! "after"; then runs killed with SIGKILL after a random 0–T ms (T about the command's run
//! time). After each kill:
//! - `PRAGMA integrity_check` is `ok`;
//! - every thread is exactly as before (its rows of `checkpoints` and `writes`, byte for
//!   byte) or exactly as after (the same rows as the run that was not killed; only the fresh
//!   `ts`, the random fraction of new channel versions and the summary's random message id
//!   are masked, as they differ between any two runs);
//! - real LangGraph (`.venv/new`, tests/interop/harness.py `state`) loads threads of the
//!   killed copies (those left "after", and one left "before", per kill) and every thread of
//!   each unkilled run.
//!
//! 80 trials by default (16 per command, ~15 s; `cargo test --test crash`). The long run is
//! `scripts/crash.sh --kills N` (`MEMCTL_CRASH_KILLS`: trials over the five commands;
//! `MEMCTL_CRASH_SEED` replays the kill delays). A file left inconsistent is kept in
//! `target/crash-failures/`. Fails, never skips, when LangGraph is missing (like
//! tests/interop.rs).

mod common;

use common::python;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::chat_server::{ChatServer, Reply};
use rusqlite::types::ValueRef;
use rusqlite::Connection;

fn env_u64(name: &str) -> Option<u64> {
    let v = std::env::var(name).ok()?;
    Some(
        v.trim()
            .parse()
            .unwrap_or_else(|_| panic!("{name}={v:?} is not a number")),
    )
}

/// xorshift64*: the kill delays, reproducible from the seed.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
}

/// Every row of a thread in both tables, in key order: each cell as its SQLite type and bytes
/// (a row starts with the table name as a cell of type `T`).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
struct ThreadRows(Vec<(u8, Vec<u8>)>);

impl ThreadRows {
    fn push(&mut self, v: ValueRef<'_>) {
        self.0.push(match v {
            ValueRef::Null => (b'n', vec![]),
            ValueRef::Integer(i) => (b'i', i.to_be_bytes().to_vec()),
            ValueRef::Real(f) => (b'r', f.to_bits().to_be_bytes().to_vec()),
            ValueRef::Text(t) => (b't', t.to_vec()),
            ValueRef::Blob(b) => (b'b', b.to_vec()),
        });
    }

    /// The cells with what differs between two runs masked (see [`mask`]).
    fn masked(&self) -> Vec<(u8, Vec<u8>)> {
        self.0.iter().map(|(t, b)| (*t, mask(b))).collect()
    }

    fn bytes(&self) -> usize {
        self.0.iter().map(|(_, b)| b.len()).sum()
    }
}

/// The rows of every thread (both tables), by thread id.
fn thread_rows(conn: &Connection) -> BTreeMap<String, ThreadRows> {
    let mut by_thread: BTreeMap<String, ThreadRows> = BTreeMap::new();
    for (table, order) in [
        ("checkpoints", "thread_id, checkpoint_ns, checkpoint_id"),
        (
            "writes",
            "thread_id, checkpoint_ns, checkpoint_id, task_id, idx",
        ),
    ] {
        let mut stmt = conn
            .prepare(&format!("SELECT * FROM {table} ORDER BY {order}"))
            .expect("prepare");
        let n = stmt.column_count();
        let mut rows = stmt.query([]).expect("query");
        while let Some(row) = rows.next().expect("row") {
            let thread: String = row.get(0).expect("thread_id");
            let out = by_thread.entry(thread).or_default();
            out.0.push((b'T', table.as_bytes().to_vec()));
            for i in 0..n {
                out.push(row.get_ref(i).expect("column"));
            }
        }
    }
    by_thread
}

/// What differs between two runs of the same rewrite: the new checkpoint's `ts`, the random
/// fraction of the channel versions it moves, and (summarize) the summary's uuid4 id; with
/// the msgpack string header before them (their length varies).
fn mask(cell: &[u8]) -> Vec<u8> {
    use regex::bytes::Regex;
    use std::sync::LazyLock;
    static TS: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(r"(?s-u:\xd9.)?\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d{1,6})?\+00:00")
            .expect("regex")
    });
    static VERSION: LazyLock<Regex> =
        LazyLock::new(|| Regex::new(r"(?s-u:\xd9.)?(\d{32})\.[0-9.e+-]{16,24}").expect("regex"));
    static UUID4: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(r"[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}")
            .expect("regex")
    });
    let a = TS.replace_all(cell, &b"<ts>"[..]);
    let b = VERSION.replace_all(&a, &b"${1}.<random>"[..]);
    UUID4.replace_all(&b, &b"<uuid4>"[..]).into_owned()
}

/// Opens a file after a kill (recovering its WAL, as the next app would) and checks it.
fn inspect(db: &Path) -> (String, BTreeMap<String, ThreadRows>) {
    let conn = Connection::open(db).expect("open after the kill");
    conn.busy_timeout(Duration::from_secs(5)).expect("busy");
    let check: Vec<String> = conn
        .prepare("PRAGMA integrity_check")
        .expect("prepare")
        .query_map([], |r| r.get(0))
        .expect("query")
        .collect::<Result<_, _>>()
        .expect("rows");
    (check.join("; "), thread_rows(&conn))
}

/// A rewrite command under test.
struct Case {
    name: &'static str,
    args: Vec<String>,
}

/// Stands for the chat server's URL in the summarize arguments (the server is restarted
/// during long runs: it stops by itself after 10 minutes).
const URL: &str = "{server}";

fn cases() -> Vec<Case> {
    let v = |a: &[&str]| a.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>();
    vec![
        Case {
            name: "trim --all",
            args: v(&["trim", "--all", "--keep", "2", "--settle", "0s"]),
        },
        Case {
            name: "rm --purge",
            args: v(&[
                "rm",
                "--thread",
                "dict-input",
                "--match",
                "hunter2",
                "--purge",
                "--settle",
                "0s",
            ]),
        },
        Case {
            name: "gc",
            args: v(&["gc", "--all", "--keep-checkpoints", "1", "--min-idle", "0s"]),
        },
        Case {
            name: "prune",
            args: v(&["prune", "--idle", "1s", "--min-idle", "0s"]),
        },
        Case {
            name: "summarize",
            args: v(&[
                "summarize",
                "--all",
                "--keep",
                "2",
                "--endpoint",
                URL,
                "--model",
                "tiny",
                "--api-key-env",
                "MEMCTL_CRASH_KEY",
                "--settle",
                "0s",
            ]),
        },
    ]
}

/// The chat completions server summarize talks to, restarted before it stops by itself.
struct Server {
    server: ChatServer,
    started: Instant,
}

impl Server {
    fn start() -> Server {
        Server {
            server: ChatServer::start(|_, _| {
                Reply::Summary("The user asked questions; the assistant answered them.".into())
            }),
            started: Instant::now(),
        }
    }

    fn url(&mut self) -> String {
        if self.started.elapsed() > Duration::from_secs(300) {
            *self = Server::start();
        }
        self.server.url.clone()
    }
}

/// Starts memctl on `db`; the caller waits or kills.
fn spawn(case: &Case, db: &Path, server: &mut Server) -> std::process::Child {
    let args: Vec<String> = case
        .args
        .iter()
        .map(|a| if a == URL { server.url() } else { a.clone() })
        .collect();
    Command::new(env!("CARGO_BIN_EXE_memctl"))
        .args(&args)
        .args(["--db", common::s(db), "--format", "json", "--quiet"])
        .env_remove("MEMCTL_DB")
        .env("MEMCTL_CRASH_KEY", "sk-crash-test")
        .env("NO_COLOR", "1")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("memctl starts")
}

/// One thread of one database for LangGraph to load.
struct Load {
    db: PathBuf,
    thread: String,
    what: String,
}

/// The threads waiting to be loaded by LangGraph, the trial directories to delete after, and
/// the tallies.
#[derive(Default)]
struct Loader {
    pending: Vec<Load>,
    dirs: Vec<PathBuf>,
    loaded: usize,
    failures: Vec<String>,
    time: Duration,
}

impl Loader {
    /// LangGraph loads the pending threads (one Python process), then their files go.
    fn flush(&mut self, work: &Path) {
        if !self.pending.is_empty() {
            let t = Instant::now();
            match langgraph_loads(&self.pending, work) {
                Ok(n) => self.loaded += n,
                Err(e) => self.failures.push(e),
            }
            self.time += t.elapsed();
            self.pending.clear();
        }
        for d in self.dirs.drain(..) {
            let _ = std::fs::remove_dir_all(d);
        }
    }
}

/// Loads each thread with real LangGraph (one Python process for all): `Err` lists the
/// threads it could not load.
fn langgraph_loads(loads: &[Load], dir: &Path) -> Result<usize, String> {
    let list: Vec<serde_json::Value> = loads
        .iter()
        .map(|l| serde_json::json!([common::s(&l.db), l.thread]))
        .collect();
    let list_path = dir.join("loads.json");
    std::fs::write(&list_path, serde_json::Value::Array(list).to_string()).expect("write list");
    let script = r#"
import json, sys
sys.path.insert(0, sys.argv[1])
import harness
failed = []
for db, thread in json.load(open(sys.argv[2])):
    try:
        st = harness.cmd_state(db, thread, thread)
        if st["exists"] and not st["history"]:
            failed.append(f"{db} {thread}: a checkpoint but no history")
    except Exception as e:
        failed.append(f"{db} {thread}: {type(e).__name__}: {e}")
print(json.dumps(failed))
"#;
    let out = Command::new(python("new"))
        .arg("-c")
        .arg(script)
        .arg(common::root().join("tests/interop"))
        .arg(&list_path)
        .output()
        .expect("python runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let failed: Vec<String> = stdout
        .lines()
        .last()
        .and_then(|l| serde_json::from_str(l).ok())
        .unwrap_or_else(|| {
            vec![format!(
                "the LangGraph loader failed: {}\n{}",
                stdout,
                String::from_utf8_lossy(&out.stderr)
            )]
        });
    if failed.is_empty() {
        Ok(loads.len())
    } else {
        let what: BTreeMap<String, &str> = loads
            .iter()
            .map(|l| {
                (
                    format!("{} {}", common::s(&l.db), l.thread),
                    l.what.as_str(),
                )
            })
            .collect();
        Err(failed
            .iter()
            .map(|f| {
                let key = f.split(':').next().unwrap_or("");
                format!("{f} ({})", what.get(key).copied().unwrap_or("?"))
            })
            .collect::<Vec<_>>()
            .join("\n"))
    }
}

/// How a killed run left each thread.
struct Classified {
    /// Threads the command does not change (the same before and after), still so.
    untouched: usize,
    /// Threads the command changes, left exactly as before.
    before: Vec<String>,
    /// Threads the command changes, left exactly as after (up to the masked cells).
    after: Vec<String>,
    /// What is wrong with the threads that are neither.
    neither: Vec<String>,
}

fn classify(
    before: &BTreeMap<String, ThreadRows>,
    after: &BTreeMap<String, ThreadRows>,
    after_masked: &BTreeMap<String, Vec<(u8, Vec<u8>)>>,
    now: &BTreeMap<String, ThreadRows>,
) -> Classified {
    let mut c = Classified {
        untouched: 0,
        before: vec![],
        after: vec![],
        neither: vec![],
    };
    let threads: std::collections::BTreeSet<&String> = before
        .keys()
        .chain(after.keys())
        .chain(now.keys())
        .collect();
    for thread in threads {
        let rows = now.get(thread);
        let unchanged_by_command = before.get(thread) == after.get(thread);
        if rows == before.get(thread) {
            if unchanged_by_command {
                c.untouched += 1;
            } else {
                c.before.push(thread.clone());
            }
        } else if rows.map(ThreadRows::masked).as_ref() == after_masked.get(thread) {
            c.after.push(thread.clone());
        } else {
            c.neither.push(format!(
                "thread {thread} is neither as before nor as after ({} cells, {} bytes now; {} before; {} after)",
                rows.map_or(0, |r| r.0.len()),
                rows.map_or(0, ThreadRows::bytes),
                before.get(thread).map_or(0, ThreadRows::bytes),
                after.get(thread).map_or(0, ThreadRows::bytes)
            ));
        }
    }
    c
}

/// Tallies per command.
#[derive(Default)]
struct Tally {
    trials: u64,
    kills: u64,
    finished_first: u64,
    threads_before: u64,
    threads_after: u64,
    mixed_runs: u64,
    untouched: u64,
    inconsistent: Vec<String>,
}

#[test]
fn kill_9_during_rewrites_leaves_every_thread_before_or_after() {
    let started = Instant::now();
    let kills = env_u64("MEMCTL_CRASH_KILLS").unwrap_or(80);
    let seed = env_u64("MEMCTL_CRASH_SEED").unwrap_or(0x6b69_6c6c_2d39);
    let mut rng = Rng(seed | 1);
    let _ = python("new"); // fail early, before any work, when LangGraph is missing
    let work = tempfile::tempdir().expect("temp dir");
    let failures_dir = common::root().join("target").join("crash-failures");
    let _ = std::fs::remove_dir_all(&failures_dir);

    // The base file: the fixture in WAL mode, as SqliteSaver.setup() leaves a live file.
    let base = work.path().join("base.sqlite");
    std::fs::copy(common::fixture("new.sqlite"), &base).expect("copy fixture");
    {
        let conn = Connection::open(&base).expect("open base");
        let mode: String = conn
            .query_row("PRAGMA journal_mode=WAL", [], |r| r.get(0))
            .expect("WAL");
        assert_eq!(mode, "wal");
    }
    let (check, before) = inspect(&base);
    assert_eq!(check, "ok");
    let fresh_copy = |dir: &Path| -> PathBuf {
        std::fs::create_dir_all(dir).expect("trial dir");
        let db = dir.join("db.sqlite");
        std::fs::copy(&base, &db).expect("copy base");
        db
    };

    let mut server = Server::start();
    let mut loader = Loader::default();
    let kills_per_case = kills.div_ceil(cases().len() as u64);
    let mut report = Vec::new();
    let mut all_inconsistent = Vec::new();
    let (mut total_trials, mut total_kills) = (0u64, 0u64);
    for (ci, case) in cases().iter().enumerate() {
        let case_started = Instant::now();
        // The run that is not killed: the state "after", and how long the command takes.
        let mut times = Vec::new();
        let mut after = BTreeMap::new();
        for r in 0..3 {
            let dir = work.path().join(format!("ref-{ci}-{r}"));
            let db = fresh_copy(&dir);
            loader.dirs.push(dir);
            let t = Instant::now();
            let status = spawn(case, &db, &mut server).wait().expect("wait");
            times.push(t.elapsed());
            assert!(
                matches!(status.code(), Some(0) | Some(3)),
                "{}: the run that is not killed exited with {status}",
                case.name
            );
            let (check, rows) = inspect(&db);
            assert_eq!(check, "ok", "{}: integrity after a clean run", case.name);
            if r == 0 {
                after = rows;
                for thread in before.keys() {
                    loader.pending.push(Load {
                        db: db.clone(),
                        thread: thread.clone(),
                        what: format!("{} run to the end", case.name),
                    });
                }
            } else {
                // Two clean runs agree once masked: the masking hides nothing else.
                for (thread, x) in &after {
                    let (x, y) = (x.masked(), rows.get(thread).map(ThreadRows::masked));
                    if Some(&x) != y.as_ref() {
                        let y = y.unwrap_or_default();
                        let at = x.iter().zip(&y).position(|(p, q)| p != q).unwrap_or(0);
                        panic!(
                            "{}: two runs that were not killed differ in thread {thread}, cell {at}:\n{:?}\n{:?}",
                            case.name,
                            x.get(at).map(|c| String::from_utf8_lossy(&c.1).into_owned()),
                            y.get(at).map(|c| String::from_utf8_lossy(&c.1).into_owned()),
                        );
                    }
                }
            }
        }
        let changed = before
            .iter()
            .filter(|(t, rows)| after.get(*t) != Some(rows))
            .count();
        assert!(
            changed > 0,
            "{}: the command changed no thread, nothing to test",
            case.name
        );
        // Kill points: 0 to 1.1 x the quickest clean run (a few runs end first: the window
        // covers the last commit).
        let run_time = times.iter().min().copied().unwrap_or_default();
        let window_us = (run_time.as_micros() as u64).max(1000) * 11 / 10;
        let after_masked: BTreeMap<String, Vec<(u8, Vec<u8>)>> =
            after.iter().map(|(k, v)| (k.clone(), v.masked())).collect();

        // The check itself catches a torn thread: the finished file with one row of a changed
        // thread undone is neither before nor after.
        {
            let db = fresh_copy(&work.path().join(format!("torn-{ci}")));
            std::fs::copy(work.path().join(format!("ref-{ci}-0/db.sqlite")), &db)
                .expect("copy the finished file");
            loader.dirs.push(work.path().join(format!("torn-{ci}")));
            let changed_thread = before
                .iter()
                .find(|(t, rows)| after.get(*t) != Some(rows))
                .map(|(t, _)| t.clone())
                .expect("a changed thread");
            let conn = Connection::open(&db).expect("open");
            let n = conn
                .execute(
                    "DELETE FROM checkpoints WHERE rowid = (SELECT max(rowid) FROM checkpoints WHERE thread_id = ?1)",
                    [&changed_thread],
                )
                .expect("delete a row");
            drop(conn);
            let (_, rows) = inspect(&db);
            let c = classify(&before, &after, &after_masked, &rows);
            assert!(
                n == 0 || c.neither.len() == 1,
                "{}: a torn thread went unnoticed: {:?}",
                case.name,
                c.neither
            );
        }

        let mut t = Tally::default();
        for k in 0..kills_per_case {
            let dir = work.path().join(format!("kill-{ci}-{k}"));
            let db = fresh_copy(&dir);
            loader.dirs.push(dir.clone());
            let delay = Duration::from_micros(rng.next() % window_us);
            let mut child = spawn(case, &db, &mut server);
            std::thread::sleep(delay);
            t.trials += 1;
            if child.try_wait().expect("try_wait").is_some() {
                t.finished_first += 1;
            } else {
                child.kill().expect("SIGKILL");
                t.kills += 1;
            }
            let status = child.wait().expect("wait");
            let (check, rows) = inspect(&db);
            let mut problems = Vec::new();
            if check != "ok" {
                problems.push(format!("integrity_check: {check}"));
            }
            let mut c = classify(&before, &after, &after_masked, &rows);
            problems.append(&mut c.neither);
            let n_before = c.before.len() as u64;
            let n_after = c.after.len() as u64;
            let mut after_threads = c.after;
            let first_before = c.before.into_iter().next();
            // LangGraph loads two of the threads left "after" (at random) and one "before".
            for _ in 0..2.min(after_threads.len()) {
                let i = (rng.next() % after_threads.len() as u64) as usize;
                loader.pending.push(Load {
                    db: db.clone(),
                    thread: after_threads.swap_remove(i),
                    what: format!("{} killed after {delay:?}", case.name),
                });
            }
            if let Some(thread) = first_before {
                loader.pending.push(Load {
                    db: db.clone(),
                    thread,
                    what: format!("{} killed after {delay:?}", case.name),
                });
            }
            t.untouched += c.untouched as u64;
            t.threads_before += n_before;
            t.threads_after += n_after;
            if n_before > 0 && n_after > 0 {
                t.mixed_runs += 1;
            }
            if !problems.is_empty() {
                std::fs::create_dir_all(&failures_dir).expect("failures dir");
                let keep = failures_dir.join(format!("{}-{k}", case.name.replace([' ', '-'], "_")));
                let _ = std::fs::create_dir_all(&keep);
                for f in std::fs::read_dir(&dir).expect("ls").flatten() {
                    let _ = std::fs::copy(f.path(), keep.join(f.file_name()));
                }
                t.inconsistent.push(format!(
                    "{} killed after {delay:?} (exit {status}): {}; files kept in {}",
                    case.name,
                    problems.join("; "),
                    keep.display()
                ));
            }
            if loader.dirs.len() >= 64 {
                loader.flush(work.path());
            }
        }
        loader.flush(work.path());
        report.push(format!(
            "  {:11} runs {:>3} ms; {} trials in {:.1} s: {} killed, {} ended before the kill; threads it changes left as before {}, as after {} ({} kills left both), threads it leaves alone {}; inconsistent={}",
            case.name,
            run_time.as_millis(),
            t.trials,
            case_started.elapsed().as_secs_f64(),
            t.kills,
            t.finished_first,
            t.threads_before,
            t.threads_after,
            t.mixed_runs,
            t.untouched,
            t.inconsistent.len()
        ));
        total_trials += t.trials;
        total_kills += t.kills;
        all_inconsistent.extend(t.inconsistent);
    }
    drop(server);
    eprintln!(
        "crash: seed {seed:#x}: {total_trials} trials, {total_kills} kills, inconsistent={}; LangGraph loaded {} threads ({} failed) in {:.1} s; {:.1} s in all\n{}",
        all_inconsistent.len(),
        loader.loaded,
        loader.failures.len(),
        loader.time.as_secs_f64(),
        started.elapsed().as_secs_f64(),
        report.join("\n")
    );
    assert!(
        all_inconsistent.is_empty(),
        "{} inconsistent files after kill -9 (seed {seed}):\n{}",
        all_inconsistent.len(),
        all_inconsistent.join("\n")
    );
    assert!(
        loader.failures.is_empty(),
        "real LangGraph could not load threads after kill -9:\n{}",
        loader.failures.join("\n")
    );
}
