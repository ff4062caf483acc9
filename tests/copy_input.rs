//! `memctl copy` on bad input: one line, a non-zero exit, nothing written (no file created);
//! and what a copy, a replace and a dry run do to the rows.

mod common;
mod copy_common;

use std::path::Path;

use common::{checkpoint_count, fixture, memctl, s, temp_copy};
use copy_common::{rows as stored_rows, thread_ids};

fn thread_rows(db: &Path, thread: &str) -> Vec<Vec<rusqlite::types::Value>> {
    stored_rows(db, Some(thread))
}

/// Runs `memctl copy --db DB ARGS`: (exit code, stdout, stderr).
fn copy(db: &Path, args: &[&str]) -> (i32, String, String) {
    let out = memctl()
        .args(["copy", "--db", s(db)])
        .args(args)
        .output()
        .expect("runs");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn rows(db: &Path) -> (i64, i64) {
    let c = rusqlite::Connection::open_with_flags(db, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)
        .expect("opens");
    let n = |sql: &str| {
        c.query_row(sql, [], |r| r.get::<_, i64>(0))
            .expect("counts")
    };
    (
        n("SELECT count(*) FROM checkpoints"),
        n("SELECT count(*) FROM writes"),
    )
}

#[test]
fn bad_input_is_one_line_and_writes_nothing() {
    let (dir, db) = temp_copy(&fixture("new.sqlite"));
    let before = rows(&db);
    let new_file = dir.path().join("new-target.sqlite");
    let cases: [(&[&str], i32, &str); 5] = [
        (
            &["--thread", "1", "--to-thread", "tools"],
            1,
            "already exists",
        ),
        (
            &["--thread", "1", "--to-thread", "1"],
            2,
            "would be the thread itself",
        ),
        (&["--thread", "1"], 2, "--to-thread"),
        (
            &["--thread", "no-such", "--to", s(&new_file)],
            1,
            "no thread 'no-such'",
        ),
        (
            &[
                "--thread",
                "1",
                "--to",
                s(&new_file),
                "--at",
                "not-a-checkpoint",
            ],
            1,
            // The wording show --checkpoint and diff --from use (#46).
            "has no checkpoint 'not-a-checkpoint'",
        ),
    ];
    for (args, code, says) in cases {
        let (got, stdout, stderr) = copy(&db, args);
        assert_eq!(got, code, "{args:?}: {stderr}");
        assert!(stderr.contains(says), "{args:?}: {stderr}");
        assert_eq!(stderr.trim().lines().count(), 1, "{args:?}: {stderr}");
        assert!(stdout.is_empty(), "{args:?}: {stdout}");
        assert_eq!(rows(&db), before, "{args:?} wrote");
        assert!(!new_file.exists(), "{args:?} created the target file");
    }
    // An empty id for the copy: a usage error (a `--to-thread "$NEW"` with the variable unset).
    for args in [
        vec!["copy", "--db", s(&db), "--thread", "1", "--to-thread", ""],
        vec![
            "copy",
            "--db",
            s(&db),
            "--thread",
            "1",
            "--to-thread",
            "",
            "--to",
            s(&new_file),
        ],
        vec![
            "import",
            s(&fixture("forget.sqlite")),
            "--db",
            s(&db),
            "--thread",
            "alice-chat",
            "--to-thread",
            "",
        ],
    ] {
        let out = memctl().args(&args).output().expect("runs");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(stderr.contains("cannot be empty"), "{args:?}: {stderr}");
        assert_eq!(rows(&db), before, "{args:?} wrote");
        assert!(!new_file.exists(), "{args:?} created the target file");
    }
    // A hard link to the database is the database: the same thread, the same file.
    let link = dir.path().join("link.sqlite");
    std::fs::hard_link(&db, &link).expect("links");
    for args in [
        vec!["copy", "--db", s(&db), "--thread", "1", "--to", s(&link)],
        vec![
            "copy",
            "--db",
            s(&db),
            "--all",
            "--to",
            s(&link),
            "--replace",
        ],
        vec!["migrate", "--db", s(&db), "--to", s(&link)],
        vec!["import", s(&link), "--db", s(&db), "--replace"],
    ] {
        let out = memctl().args(&args).output().expect("runs");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert_eq!(stderr.trim().lines().count(), 1, "{args:?}: {stderr}");
        assert_eq!(rows(&db), before, "{args:?} wrote");
    }
    // A target that is not a checkpoint database is refused and left as it was.
    let text = dir.path().join("notes.txt");
    std::fs::write(&text, "not a database").expect("write");
    let (got, _, stderr) = copy(&db, &["--thread", "1", "--to", s(&text)]);
    assert_eq!(got, 1, "{stderr}");
    assert_eq!(stderr.trim().lines().count(), 1, "{stderr}");
    assert_eq!(std::fs::read(&text).expect("read"), b"not a database");
}

#[test]
fn a_copy_a_replace_and_a_dry_run() {
    let (dir, db) = temp_copy(&fixture("new.sqlite"));
    let (c0, w0) = rows(&db);
    let src = checkpoint_count(&db, "tools");
    // A dry run says what it would do and writes nothing, creates nothing.
    let file = dir.path().join("out.sqlite");
    let (code, out, err) = copy(&db, &["--thread", "tools", "--to", s(&file), "--dry-run"]);
    assert_eq!(code, 0, "{err}");
    assert!(out.starts_with("would copy thread 'tools'"), "{out}");
    assert!(!file.exists());
    // Into the same file: the rows are there twice.
    let (code, out, err) = copy(&db, &["--thread", "tools", "--to-thread", "tools-2"]);
    assert_eq!(code, 0, "{err}");
    assert!(
        out.starts_with("copied thread 'tools' to 'tools-2'"),
        "{out}"
    );
    let (c1, w1) = rows(&db);
    let writes_of = |t: &str| {
        let c = rusqlite::Connection::open(&db).expect("opens");
        c.query_row(
            "SELECT count(*) FROM writes WHERE thread_id = ?",
            [t],
            |r| r.get::<_, i64>(0),
        )
        .expect("counts")
    };
    assert_eq!(checkpoint_count(&db, "tools-2"), src);
    assert_eq!(c1 - c0, checkpoint_count(&db, "tools"));
    assert_eq!(w1 - w0, writes_of("tools"));
    // --replace overwrites the target with another thread, in one transaction.
    let (code, out, err) = copy(
        &db,
        &[
            "--thread",
            "1",
            "--to-thread",
            "tools-2",
            "--replace",
            "--format",
            "json",
        ],
    );
    assert_eq!(code, 0, "{err}");
    let report: serde_json::Value = serde_json::from_str(&out).expect("JSON");
    assert_eq!(report["replaced"], true, "{report}");
    assert_eq!(checkpoint_count(&db, "tools-2"), checkpoint_count(&db, "1"));
    assert_eq!(writes_of("tools-2"), writes_of("1"));
    // Into a new file: SqliteSaver's tables, the same checkpoint ids.
    let (code, _, err) = copy(&db, &["--thread", "tools", "--to", s(&file)]);
    assert_eq!(code, 0, "{err}");
    let ids = |p: &Path, t: &str| -> Vec<String> {
        let c = rusqlite::Connection::open(p).expect("opens");
        let mut st = c
            .prepare("SELECT checkpoint_id FROM checkpoints WHERE thread_id = ? ORDER BY 1")
            .expect("prepares");
        let v = st
            .query_map([t], |r| r.get(0))
            .expect("queries")
            .collect::<Result<Vec<String>, _>>()
            .expect("rows");
        v
    };
    assert_eq!(ids(&file, "tools"), ids(&db, "tools"));
}

#[test]
fn copy_all_copies_the_threads_the_filters_select() {
    let (dir, db) = temp_copy(&fixture("forget.sqlite"));
    let alice = dir.path().join("alice.sqlite");
    // --meta: the threads `find --meta` selects, each whole, as stored.
    let (code, out, err) = copy(
        &db,
        &[
            "--all",
            "--meta",
            "user_id=42",
            "--to",
            s(&alice),
            "--format",
            "json",
        ],
    );
    assert_eq!(code, 0, "{err}");
    let report: serde_json::Value = serde_json::from_str(&out).expect("JSON");
    let ids = thread_ids(&alice);
    assert_eq!(
        ids,
        ["alice-chat", "alice-profile", "alice-sub", "alice-tools"]
    );
    assert_eq!(
        report["threads"].as_array().map(Vec::len),
        Some(4),
        "{report}"
    );
    let mut checkpoints = 0;
    for t in &ids {
        assert_eq!(thread_rows(&alice, t), thread_rows(&db, t), "{t}");
        let c = rusqlite::Connection::open(&db).expect("opens");
        checkpoints += c
            .query_row(
                "SELECT count(*) FROM checkpoints WHERE thread_id = ?",
                [t],
                |r| r.get::<_, i64>(0),
            )
            .expect("counts");
    }
    assert_eq!(report["totals"]["checkpoints"], checkpoints, "{report}");
    // Again: the threads are there; refused before anything is written.
    let before: Vec<_> = ids.iter().map(|t| thread_rows(&alice, t)).collect();
    let (code, _, err) = copy(&db, &["--all", "--to", s(&alice)]);
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("already exists"), "{err}");
    assert_eq!(thread_ids(&alice), ids, "nothing written");
    let after: Vec<_> = ids.iter().map(|t| thread_rows(&alice, t)).collect();
    assert_eq!(before, after);
    // --replace: every thread, the existing ones replaced.
    let (code, out, err) = copy(&db, &["--all", "--to", s(&alice), "--replace"]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("copied 7 threads"), "{out}");
    assert_eq!(thread_ids(&alice), thread_ids(&db));
    // --idle, against a fixed now: the fixture's threads were last written 2026-12-01.
    let idle = dir.path().join("idle.sqlite");
    for (now, expected) in [
        ("2026-12-01T21:30:00Z", 0usize),
        ("2026-12-03T00:00:00Z", 7),
    ] {
        let (code, out, err) = copy(
            &db,
            &[
                "--all",
                "--idle",
                "1d",
                "--now",
                now,
                "--to",
                s(&idle),
                "--format",
                "json",
            ],
        );
        assert_eq!(code, 0, "{err}");
        let report: serde_json::Value = serde_json::from_str(&out).expect("JSON");
        assert_eq!(
            report["threads"].as_array().map(Vec::len),
            Some(expected),
            "{now}: {report}"
        );
        assert_eq!(
            idle.exists(),
            expected > 0,
            "{now}: a file only when a thread goes"
        );
    }
    // Into the database itself: refused.
    let (code, _, err) = copy(&db, &["--all", "--to", s(&db)]);
    assert_eq!(code, 2, "{err}");
}

/// The number of distinct threads in a SQLite file (0 while it cannot be read yet).
fn thread_total(db: &Path) -> usize {
    let Ok(c) =
        rusqlite::Connection::open_with_flags(db, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)
    else {
        return 0;
    };
    c.query_row(
        "SELECT count(DISTINCT thread_id) FROM checkpoints",
        [],
        |r| r.get::<_, i64>(0),
    )
    .map_or(0, |n| n as usize)
}

#[test]
fn a_copy_killed_mid_way_leaves_whole_threads_and_a_rerun_completes() {
    // A source of many threads: new.sqlite's, 300 times over under other ids.
    let (dir, db) = temp_copy(&fixture("new.sqlite"));
    {
        let c = rusqlite::Connection::open(&db).expect("opens");
        c.execute_batch(
            "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 300)
             INSERT INTO checkpoints SELECT thread_id || '~' || i, checkpoint_ns, checkpoint_id,
                 parent_checkpoint_id, type, checkpoint, metadata FROM checkpoints, n;
             WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 300)
             INSERT INTO writes SELECT thread_id || '~' || i, checkpoint_ns, checkpoint_id,
                 task_id, task_path, idx, channel, type, value FROM writes, n;",
        )
        .expect("grows");
    }
    let all = thread_ids(&db);
    assert!(all.len() > 4000, "{} threads", all.len());
    let target = dir.path().join("target.sqlite");
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_memctl"))
        .env_remove("MEMCTL_DB")
        .args(["copy", "--db", s(&db), "--all", "--to", s(&target)])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("starts");
    common::wait_for("the first copied thread", || thread_total(&target) > 0);
    child.kill().expect("SIGKILL");
    child.wait().expect("reaped");
    let copied = thread_ids(&target);
    assert!(
        !copied.is_empty() && copied.len() < all.len(),
        "killed mid-way: {} of {} threads",
        copied.len(),
        all.len()
    );
    // Every thread there is whole: row for row the source's.
    for t in &copied {
        assert_eq!(thread_rows(&target, t), thread_rows(&db, t), "thread {t}");
    }
    // A rerun (replacing what is there) completes.
    let (code, out, err) = copy(&db, &["--all", "--to", s(&target), "--replace"]);
    assert_eq!(code, 0, "{err}");
    assert!(
        out.contains(&format!("copied {} threads", all.len())),
        "{out}"
    );
    assert_eq!(thread_ids(&target), all);
    for t in all.iter().step_by(97) {
        assert_eq!(thread_rows(&target, t), thread_rows(&db, t), "thread {t}");
    }
}

/// #46: `copy --at` takes a checkpoint id or a prefix of it, as `show --checkpoint`, `diff
/// --from` and `history --before` do: the fork of a unique prefix is the fork of the whole id;
/// an ambiguous prefix lists the candidates, exit 1, nothing written. An unknown thread says
/// "did you mean", and a --to that looks like a connection string is named as --to.
#[test]
fn at_takes_a_checkpoint_prefix_and_an_ambiguous_one_lists_the_candidates() {
    let (_dir, db) = temp_copy(&fixture("new.sqlite"));
    let whole = "1f1ed47f-836b-6f88-8007-cd7aa743ed93";
    let (code, by_id, err) = copy(
        &db,
        &[
            "tools",
            "--to-thread",
            "fork-a",
            "--at",
            whole,
            "--format",
            "json",
        ],
    );
    assert_eq!(code, 0, "{err}");
    let (code, by_prefix, err) = copy(
        &db,
        &[
            "tools",
            "--to-thread",
            "fork-b",
            "--at",
            "1f1ed47f-836b",
            "--format",
            "json",
        ],
    );
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        by_id.replace("fork-a", "F"),
        by_prefix.replace("fork-b", "F"),
        "the prefix forks where the whole id does"
    );
    let ids = |t: &str| -> Vec<String> {
        thread_rows(&db, t)
            .into_iter()
            .map(|r| format!("{:?}", &r[2..]))
            .collect()
    };
    assert_eq!(ids("fork-a"), ids("fork-b"));
    let before = rows(&db);
    let (code, _, err) = copy(
        &db,
        &["tools", "--to-thread", "fork-c", "--at", "1f1ed47f-83"],
    );
    assert_eq!(code, 1, "{err}");
    assert!(
        err.contains("ambiguous") && err.contains("1f1ed47f-836b-6f88-8007-cd7aa743ed93"),
        "{err}"
    );
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert_eq!(rows(&db), before, "nothing written");
    let (code, _, err) = copy(&db, &["Tools", "--to-thread", "fork-c"]);
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("did you mean 'tools'"), "{err}");
    let (code, _, err) = copy(
        &db,
        &[
            "tools",
            "--to",
            "host=127.0.0.1 dbnme=app password=Pw123456",
        ],
    );
    assert_eq!(code, 2, "{err}");
    assert!(
        err.starts_with("memctl: error: --to '") && !err.contains("Pw123456"),
        "{err}"
    );
}
