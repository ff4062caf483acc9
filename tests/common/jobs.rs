//! `--jobs` (several read connections): `threads list`, `tokens --all` and `find` print the
//! same bytes, say the same on stderr and exit the same with one connection as with several,
//! on a database of many threads (each fixture thread cloned under new ids, so that the
//! reads split into many batches).

use super::memctl;

/// One clock for every run (ages are in seconds).
const NOW: &str = "2026-12-02T00:00:00Z";

/// The commands compared: the streamed (`--sort thread`, JSON lines) and the sorted lists,
/// tables, and `find` on the latest states and the whole history.
const COMMANDS: [&[&str]; 9] = [
    &["threads", "list", "--sort", "thread", "--format", "jsonl"],
    &["threads", "list", "--format", "json"],
    &["threads", "list", "--sort", "tokens", "--format", "table"],
    &[
        "threads", "list", "--sort", "thread", "--limit", "70", "--format", "jsonl",
    ],
    &["tokens", "--all", "--sort", "thread", "--format", "jsonl"],
    &["tokens", "--all", "--format", "table"],
    &["find", "a", "--format", "jsonl"],
    &["find", "--history", "-i", "the", "--count"],
    &["find", "--history", "a", "--format", "json"],
];

/// Every difference between `--jobs 1` and `--jobs N` (N in `jobs`, and the default) on `db`.
pub fn outputs_equal_across_jobs(db: &str, jobs: &[&str]) -> Vec<String> {
    let run = |cmd: &[&str], jobs: Option<&str>| {
        let mut c = memctl();
        c.args(cmd).args(["--db", db, "--now", NOW]);
        if let Some(j) = jobs {
            c.args(["--jobs", j]);
        }
        let out = c.output().expect("memctl runs");
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };
    let mut failures = Vec::new();
    for cmd in COMMANDS {
        let one = run(cmd, Some("1"));
        if one.2.contains("panicked") || one.1.is_empty() {
            failures.push(format!("{cmd:?} --jobs 1: {one:?}"));
        }
        for j in jobs.iter().map(|j| Some(*j)).chain([None]) {
            let other = run(cmd, j);
            if other != one {
                let (a, b) = (&one, &other);
                failures.push(format!(
                    "{cmd:?} --jobs {j:?} differs from --jobs 1:\n exit {:?} vs {:?}\n stderr {:?} vs {:?}\n stdout {} vs {} bytes",
                    a.0,
                    b.0,
                    a.2,
                    b.2,
                    a.1.len(),
                    b.1.len()
                ));
            }
        }
    }
    failures
}

/// SQL (both backends) that clones every thread of the saver's `tables` `copies` times, as
/// `<thread>~copy<k>`: a database of many threads made of the fixture's real rows.
pub fn clone_threads_sql(tables: &[&str], copies: usize) -> Vec<String> {
    let mut sql = Vec::new();
    for t in tables {
        for k in 1..=copies {
            sql.push(format!(
                "CREATE TEMP TABLE copy_of AS SELECT * FROM {t} WHERE thread_id NOT LIKE '%~copy%'"
            ));
            sql.push(format!(
                "UPDATE copy_of SET thread_id = thread_id || '~copy{k}'"
            ));
            sql.push(format!("INSERT INTO {t} SELECT * FROM copy_of"));
            sql.push("DROP TABLE copy_of".to_owned());
        }
    }
    sql
}

/// A temporary copy of the SQLite fixture `name` whose threads are cloned
/// ([`clone_threads_sql`]) until there are about `threads` of them.
pub fn sqlite_with_many_threads(
    name: &str,
    threads: usize,
) -> (tempfile::TempDir, std::path::PathBuf) {
    let (dir, db) = super::temp_copy(&super::fixture(name));
    let conn = rusqlite::Connection::open(&db).expect("open");
    let n: i64 = conn
        .query_row(
            "SELECT count(DISTINCT thread_id) FROM checkpoints",
            [],
            |r| r.get(0),
        )
        .expect("count");
    for sql in clone_threads_sql(&["checkpoints", "writes"], threads / n.max(1) as usize) {
        conn.execute_batch(&sql)
            .unwrap_or_else(|e| panic!("{name}: {sql}: {e}"));
    }
    (dir, db)
}
