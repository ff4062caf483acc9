//! Moves of a database with damaged rows (#43). A thread with a row memctl cannot decode (a
//! checkpoint blob `deadbeef`, a write value `c1c1c1`; from Postgres a bad write blob or type,
//! a string as metadata, a checkpoint without `channel_versions`), which LangGraph cannot read
//! either, is never copied as if it were fine: `copy` of it is refused in one line (exit 1,
//! nothing written); `copy --all`, `migrate`, `import` and `export` leave it out, name it and
//! why, move the others and exit 3 (a dry run says the same); it never replaces a readable
//! thread. A row the target cannot hold (a thread id with a NUL going to Postgres, a Store
//! value with `\u0000`) is left out the same way and the rest still moves, later threads and
//! the Store included. Real LangGraph reads what arrived as it reads the source. The damage is
//! made here, on copies of the committed fixtures.

mod common;
mod copy_common;

use std::path::{Path, PathBuf};

use common::pg::TestDb;
use common::{expected, fixture, memctl, run_parallel, s, temp_copy, Harness};
use copy_common::{blanked, rows, same, shared_pairs, thread_ids};
use serde_json::Value as Json;

/// The threads of new.sqlite that [`damaged`] damages.
const DAMAGED: [&str; 2] = ["blocks", "tools"];

/// A copy of new.sqlite with two threads damaged: the latest checkpoint of `tools` holds
/// `deadbeef`, a pending write of `blocks` `c1c1c1` (a msgpack marker no encoder writes).
fn damaged() -> (tempfile::TempDir, PathBuf) {
    let (dir, db) = temp_copy(&fixture("new.sqlite"));
    let c = rusqlite::Connection::open(&db).expect("opens");
    let n = c
        .execute(
            "UPDATE checkpoints SET checkpoint = x'deadbeef' WHERE thread_id = 'tools' \
             AND checkpoint_id = (SELECT max(checkpoint_id) FROM checkpoints WHERE thread_id = 'tools')",
            [],
        )
        .expect("damages a checkpoint");
    assert_eq!(n, 1);
    let n = c
        .execute(
            "UPDATE writes SET value = x'c1c1c1' WHERE rowid = \
             (SELECT min(rowid) FROM writes WHERE thread_id = 'blocks' AND type = 'msgpack')",
            [],
        )
        .expect("damages a write");
    assert_eq!(n, 1);
    (dir, db)
}

/// The threads of `db` but the damaged ones.
fn readable(db: &Path) -> Vec<String> {
    thread_ids(db)
        .into_iter()
        .filter(|t| !DAMAGED.contains(&t.as_str()))
        .collect()
}

/// Runs memctl with `args`: (exit code, stdout, stderr).
fn run(args: &[&str]) -> (i32, String, String) {
    let out = memctl().args(args).output().expect("runs");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// [`run`] with `--format json`: (exit code, report, stderr).
fn run_json(args: &[&str]) -> (i32, Json, String) {
    let (code, out, err) = run(&[args, &["--format", "json"]].concat());
    (code, serde_json::from_str(&out).unwrap_or(Json::Null), err)
}

/// The `(thread, reason)` pairs of a report's `left_out`, each `why` checked to name the
/// thread.
fn left_out(report: &Json) -> Vec<(String, String)> {
    report["left_out"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|l| {
            let thread = l["thread"].as_str().unwrap_or_default().to_owned();
            let why = l["why"].as_str().unwrap_or_default();
            assert!(why.contains(&format!("thread '{thread}'")), "{l}");
            (thread, l["reason"].as_str().unwrap_or_default().to_owned())
        })
        .collect()
}

/// Both damaged threads, left out as unreadable.
fn both_unreadable() -> Vec<(String, String)> {
    DAMAGED
        .iter()
        .map(|t| ((*t).to_owned(), "unreadable".to_owned()))
        .collect()
}

/// The threads of a migration's report whose action is `action`.
fn with_action(report: &Json, action: &str) -> Vec<String> {
    report["threads"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|t| t["action"] == action)
        .map(|t| t["thread"].as_str().unwrap_or_default().to_owned())
        .collect()
}

/// The exit-3 line on stderr: one line naming the threads left out.
fn says_left_out(err: &str, threads: &[&str]) {
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert!(err.contains("left out"), "{err}");
    for t in threads {
        assert!(err.contains(&format!("'{t}'")), "{t}: {err}");
    }
}

#[test]
fn a_damaged_thread_is_never_copied_as_if_it_were_fine() {
    let (dir, db) = damaged();
    let src = s(&db);
    let others = readable(&db);
    assert_eq!(others.len(), 12, "{others:?}");
    // copy of one damaged thread: one line, exit 1, no file (dry run or not).
    let one = dir.path().join("one.sqlite");
    for t in DAMAGED {
        for dry in [&[][..], &["--dry-run"]] {
            let args = [
                &["copy", "--db", src, "--thread", t, "--to", s(&one)][..],
                dry,
            ]
            .concat();
            let (code, out, err) = run(&args);
            assert_eq!(code, 1, "{args:?}: {out}{err}");
            assert_eq!(err.trim().lines().count(), 1, "{err}");
            assert!(err.contains("cannot decode"), "{err}");
            assert!(err.contains(&format!("of thread '{t}'")), "{err}");
            assert!(!one.exists(), "{args:?} created the target");
        }
        let (code, _, err) = run(&["copy", "--db", src, "--thread", t, "--to-thread", "x"]);
        assert_eq!(code, 1, "{err}");
        assert!(
            !thread_ids(&db).contains(&"x".to_owned()),
            "nothing written"
        );
    }
    // A fork ending before the damage is readable: copied.
    let parent: String = rusqlite::Connection::open(&db)
        .expect("opens")
        .query_row(
            "SELECT parent_checkpoint_id FROM checkpoints WHERE thread_id = 'tools' \
             AND checkpoint = x'deadbeef'",
            [],
            |r| r.get(0),
        )
        .expect("the damaged checkpoint's parent");
    let (code, _, err) = run(&[
        "copy",
        "--db",
        src,
        "--thread",
        "tools",
        "--at",
        &parent,
        "--to",
        s(&one),
    ]);
    assert_eq!(code, 0, "{err}");
    // copy --all: the others, row for row; the damaged ones named and left out (exit 3).
    let all = dir.path().join("all.sqlite");
    let (code, r, err) = run_json(&["copy", "--db", src, "--all", "--to", s(&all), "--dry-run"]);
    assert_eq!(code, 3, "{err}");
    assert_eq!(left_out(&r), both_unreadable(), "{r}");
    assert_eq!(r["threads"].as_array().map(Vec::len), Some(12), "{r}");
    assert!(!all.exists(), "a dry run creates nothing");
    let (code, r, err) = run_json(&["copy", "--db", src, "--all", "--to", s(&all)]);
    assert_eq!(code, 3, "{err}");
    says_left_out(&err, &DAMAGED);
    assert_eq!(left_out(&r), both_unreadable(), "{r}");
    assert_eq!(thread_ids(&all), others);
    for t in &others {
        assert_eq!(rows(&all, Some(t)), rows(&db, Some(t)), "{t}");
    }
    let checkpoints: usize = others.iter().map(|t| checkpoints_of(&db, t)).sum();
    assert_eq!(
        r["totals"]["checkpoints"], checkpoints,
        "only what was copied: {r}"
    );
    // migrate: the same, and resumable (a second run skips the others, leaves out the same).
    let mig = dir.path().join("migrated.sqlite");
    let runs: [(&[&str], i32); 3] = [(&["--dry-run"], 12), (&[], 12), (&[], 0)];
    for (args, copied) in runs {
        let (code, r, err) =
            run_json(&[&["migrate", "--db", src, "--to", s(&mig)][..], args].concat());
        assert_eq!(code, 3, "{args:?}: {err}");
        says_left_out(&err, &DAMAGED);
        assert_eq!(with_action(&r, "unreadable"), DAMAGED, "{r}");
        assert_eq!(r["totals"]["left_out"], 2, "{r}");
        assert_eq!(r["totals"]["copied"], copied, "{args:?}: {r}");
        assert_eq!(mig.exists(), args.is_empty(), "{args:?}");
        let why = r["threads"]
            .as_array()
            .and_then(|a| a.iter().find(|t| t["thread"] == "blocks"))
            .map(|t| t["why"].clone())
            .unwrap_or_default();
        assert!(
            why.as_str().is_some_and(|w| w.contains("write of task")),
            "{why}"
        );
    }
    assert_eq!(thread_ids(&mig), others);
    for t in &others {
        assert_eq!(rows(&mig, Some(t)), rows(&db, Some(t)), "{t}");
    }
    // export: the others in the archive; a damaged thread alone: nothing written.
    let archive = dir.path().join("archive.sqlite");
    let (code, r, err) = run_json(&["export", "--db", src, "--all", "-o", s(&archive)]);
    assert_eq!(code, 3, "{err}");
    says_left_out(&err, &DAMAGED);
    assert_eq!(left_out(&r), both_unreadable(), "{r}");
    assert_eq!(thread_ids(&archive), others);
    for t in &others {
        assert_eq!(rows(&archive, Some(t)), rows(&db, Some(t)), "{t}");
    }
    let lone = dir.path().join("lone.sqlite");
    let (code, _, err) = run(&["export", "--db", src, "--thread", "tools", "-o", s(&lone)]);
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("nothing written"), "{err}");
    assert!(!lone.exists());
    // Every thread damaged: copy --all copies none and leaves no file it made.
    rusqlite::Connection::open(&db)
        .expect("opens")
        .execute("UPDATE checkpoints SET metadata = '[]'", [])
        .expect("damages every thread");
    let none = dir.path().join("none.sqlite");
    let (code, r, err) = run_json(&["copy", "--db", src, "--all", "--to", s(&none)]);
    assert_eq!(code, 3, "{err}");
    assert_eq!(r["left_out"].as_array().map(Vec::len), Some(14), "{r}");
    assert!(!none.exists(), "no file for nothing");
}

/// The checkpoints of `thread` in `db` (every namespace).
fn checkpoints_of(db: &Path, thread: &str) -> usize {
    rusqlite::Connection::open(db)
        .expect("opens")
        .query_row(
            "SELECT count(*) FROM checkpoints WHERE thread_id = ?",
            [thread],
            |r| r.get(0),
        )
        .expect("counts")
}

#[test]
fn an_import_never_puts_a_damaged_thread_in_place_of_a_readable_one() {
    let (dir, db) = damaged();
    let (_good_dir, good) = temp_copy(&fixture("new.sqlite"));
    let before = rows(&good, None);
    let mut cases: Vec<Vec<&str>> = Vec::new();
    for t in DAMAGED {
        cases.push(vec!["--thread", t, "--replace"]);
        cases.push(vec!["--thread", t, "--replace", "--dry-run"]);
        cases.push(vec!["--thread", t, "--to-thread", "new-id"]);
    }
    for args in cases {
        let (code, r, err) = run_json(&[&["import", s(&db), "--db", s(&good)][..], &args].concat());
        assert_eq!(code, 3, "{args:?}: {err}");
        says_left_out(&err, &[args[1]]);
        assert_eq!(
            left_out(&r),
            [(args[1].to_owned(), "unreadable".to_owned())],
            "{r}"
        );
        assert_eq!(r["threads"], Json::Array(vec![]), "{r}");
        assert_eq!(
            rows(&good, None),
            before,
            "{args:?}: the good threads as they were"
        );
    }
    // The readable threads of the damaged file import (the same rows as there); the damaged
    // ones are left out and the good file's stay as they were.
    let (code, r, err) = run_json(&["import", s(&db), "--db", s(&good), "--replace"]);
    assert_eq!(code, 3, "{err}");
    assert_eq!(left_out(&r), both_unreadable(), "{r}");
    assert_eq!(r["threads"].as_array().map(Vec::len), Some(12), "{r}");
    assert_eq!(rows(&good, None), before);
    drop(dir);
}

/// What LangGraph's `get_state_history` shows of `thread` in the SQLite file `db` (venv
/// `gen`), or why it could not read it.
fn history(gen: &str, db: &str, thread: &str, graph: &str) -> Result<Json, String> {
    let (script, flag) = match db.starts_with("postgres") {
        true => ("harness_pg.py", "--url"),
        false => ("harness.py", "--db"),
    };
    Harness::new(gen, script)
        .run(&["history", flag, db, "--thread", thread, "--graph", graph])
        .json()
}

#[test]
#[cfg_attr(
    not(feature = "env-tests"),
    ignore = "needs scripts/test.sh's environment (--features env-tests)"
)]
fn what_moves_from_a_damaged_file_is_what_langgraph_reads_there() {
    let (dir, db) = damaged();
    let src = s(&db).to_owned();
    // The damage is real: LangGraph cannot read either thread.
    for t in DAMAGED {
        assert!(history("new", &src, t, t).is_err(), "{t} reads");
    }
    let all = dir.path().join("all.sqlite");
    let mig = dir.path().join("migrated.sqlite");
    let archive = dir.path().join("archive.sqlite");
    let (_good_dir, good) = temp_copy(&fixture("new.sqlite"));
    for args in [
        vec!["copy", "--db", &src, "--all", "--to", s(&all)],
        vec!["migrate", "--db", &src, "--to", s(&mig)],
        vec!["export", "--db", &src, "--all", "-o", s(&archive)],
        vec!["import", &src, "--db", s(&good), "--replace"],
    ] {
        let (code, _, err) = run(&args);
        assert_eq!(code, 3, "{args:?}: {err}");
    }
    let mut cases = Vec::new();
    for target in [&all, &mig, &archive] {
        for t in readable(&db) {
            cases.push((s(target).to_owned(), t));
        }
    }
    for t in thread_ids(&good) {
        cases.push((s(&good).to_owned(), t));
    }
    let fresh = fixture("new.sqlite");
    run_parallel(cases, |(target, t)| {
        // A damaged thread kept in the good file is its own readable one.
        let source = match DAMAGED.contains(&t.as_str()) {
            true => s(&fresh).to_owned(),
            false => src.clone(),
        };
        let a = history("new", &source, &t, &t)?;
        let b = history("new", &target, &t, &t)?;
        same(&format!("'{t}' in {target}"), a, b)
    });
}

#[test]
#[cfg_attr(
    not(feature = "env-tests"),
    ignore = "needs scripts/test.sh's environment (--features env-tests)"
)]
fn damaged_threads_going_to_postgres_are_left_out_and_the_rest_arrive() {
    let (_dir, db) = damaged();
    let src = s(&db).to_owned();
    let pg = TestDb::empty_saver("damaged_to_pg");
    let before = pg.rows_digest();
    // One damaged thread: one line, exit 1, nothing written (the corrupt write value was
    // copied as it was).
    for t in DAMAGED {
        for dry in [&[][..], &["--dry-run"]] {
            let args = [
                &["copy", "--db", &src, "--thread", t, "--to", &pg.url][..],
                dry,
            ]
            .concat();
            let (code, _, err) = run(&args);
            assert_eq!(code, 1, "{args:?}: {err}");
            assert_eq!(err.trim().lines().count(), 1, "{err}");
            assert!(err.contains(&format!("thread '{t}'")), "{err}");
        }
    }
    assert_eq!(pg.rows_digest(), before, "nothing written");
    // copy --all and migrate: the others arrive, LangGraph reads them as the source.
    let (code, r, err) = run_json(&["copy", "--db", &src, "--all", "--to", &pg.url]);
    assert_eq!(code, 3, "{err}");
    assert_eq!(left_out(&r), both_unreadable(), "{r}");
    let migrated = TestDb::empty_saver("damaged_mig_pg");
    let (code, m, err) = run_json(&["migrate", "--db", &src, "--to", &migrated.url]);
    assert_eq!(code, 3, "{err}");
    assert_eq!(with_action(&m, "unreadable"), DAMAGED, "{m}");
    let mut cases = Vec::new();
    for (report, url) in [(&r, &pg.url), (&m, &migrated.url)] {
        let threads = report["threads"].as_array().cloned().unwrap_or_default();
        let copied: Vec<(String, Vec<(String, String)>)> = threads
            .iter()
            .filter(|t| t["action"].is_null() || t["action"] == "copy")
            .map(|t| {
                let id = t["thread"].as_str().unwrap_or_default().to_owned();
                (id, shared_pairs(t))
            })
            .collect();
        assert_eq!(
            copied.iter().map(|c| c.0.clone()).collect::<Vec<_>>(),
            readable(&db),
            "{report}"
        );
        for (t, pairs) in copied {
            cases.push((url.clone(), t, pairs));
        }
    }
    run_parallel(cases, |(url, t, pairs)| {
        let a = blanked(history("pg", &src, &t, &t)?, &pairs);
        let b = blanked(history("pg", &url, &t, &t)?, &pairs);
        same(&format!("'{t}' SQLite→Postgres"), a, b)
    });
}

#[test]
#[cfg_attr(
    not(feature = "env-tests"),
    ignore = "needs scripts/test.sh's environment (--features env-tests)"
)]
fn a_thread_or_an_item_postgres_cannot_hold_is_left_out_and_the_rest_arrive() {
    // store.sqlite (a SqliteStore and a thread) with new.sqlite's 'tools' and 'unicode', a
    // thread whose id holds a NUL (sorted first: every other thread comes after it), and
    // 1,200 more items (three pages of 500), the 600th with "\u0000" in its value, which
    // SqliteStore stores and PostgreSQL's JSONB refuses.
    let (dir, db) = temp_copy(&fixture("store.sqlite"));
    {
        let c = rusqlite::Connection::open(&db).expect("opens");
        c.execute("ATTACH ?1 AS new", [s(&fixture("new.sqlite"))])
            .expect("attaches");
        c.execute_batch(
            "INSERT INTO checkpoints SELECT * FROM new.checkpoints WHERE thread_id IN ('tools', 'unicode');
             INSERT INTO writes SELECT * FROM new.writes WHERE thread_id IN ('tools', 'unicode');
             INSERT INTO checkpoints SELECT 'a' || char(0) || 'b', checkpoint_ns, checkpoint_id,
                 parent_checkpoint_id, type, checkpoint, metadata FROM new.checkpoints WHERE thread_id = 'tools';
             INSERT INTO writes SELECT 'a' || char(0) || 'b', checkpoint_ns, checkpoint_id, task_id,
                 task_path, idx, channel, type, value FROM new.writes WHERE thread_id = 'tools';
             WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 1200)
             INSERT INTO store (prefix, key, value, created_at, updated_at)
                 SELECT 'bulk', printf('k%04d', i),
                        CASE i WHEN 600 THEN '{\"text\":\"a\\u0000b\"}' ELSE '{\"text\":\"item ' || i || '\"}' END,
                        '2026-01-02 03:04:05', '2026-01-02 03:04:06' FROM n;",
        )
        .expect("grows");
    }
    let src = s(&db).to_owned();
    let nul = "a\u{0}b";
    assert!(thread_ids(&db).contains(&nul.to_owned()));
    let pg = TestDb::empty_saver("nul_to_pg");
    let before = pg.rows_digest();
    // A dry run says what the real run does, and writes nothing.
    let check = |code: i32, r: &Json, err: &str, dry: bool| {
        assert_eq!(code, 3, "{err}");
        assert_eq!(err.trim().lines().count(), 1, "{err}");
        assert!(err.contains("'a\\u{0}b'"), "the id escaped: {err}");
        assert!(err.contains("'bulk' / 'k0600'"), "{err}");
        assert_eq!(with_action(r, "refused"), [nul], "{r}");
        let why = r["threads"][0]["why"].as_str().unwrap_or_default();
        assert!(why.contains("NUL"), "{why}");
        let copied = ["t-1", "tools", "unicode"];
        assert_eq!(with_action(r, "copy"), copied, "{r}");
        let st = &r["store"];
        assert_eq!(st["items"], 1215, "{st}");
        assert_eq!(st["left_out"], 1, "{st}");
        assert_eq!(st["copied"], 1214, "{dry}: {st}");
        let item = &st["left_out_items"][0];
        assert_eq!(item["namespace"], serde_json::json!(["bulk"]), "{st}");
        assert_eq!(item["key"], "k0600", "{st}");
        assert_eq!(item["reason"], "refused", "{st}");
        assert!(
            !item.to_string().contains("a\\u0000b"),
            "never the value: {item}"
        );
    };
    let (code, r, err) = run_json(&["migrate", "--db", &src, "--to", &pg.url, "--dry-run"]);
    check(code, &r, &err, true);
    assert_eq!(pg.rows_digest(), before, "a dry run writes nothing");
    let (code, r, err) = run_json(&["migrate", "--db", &src, "--to", &pg.url]);
    check(code, &r, &err, false);
    assert_eq!(
        pg.count("SELECT count(DISTINCT thread_id) FROM checkpoints"),
        3,
        "every other thread arrived"
    );
    assert_eq!(pg.count("SELECT count(*) FROM store"), 1214);
    assert_eq!(
        pg.count("SELECT count(*) FROM store WHERE key = 'k0600'"),
        0,
        "the refused item"
    );
    // Again: the rest is there and equal, the same thread and item are left out.
    let (code, again, err) = run_json(&["migrate", "--db", &src, "--to", &pg.url]);
    assert_eq!(code, 3, "{err}");
    assert_eq!(again["totals"]["skipped"], 3, "{again}");
    assert_eq!(again["store"]["skipped"], 1214, "{again}");
    assert_eq!(again["store"]["left_out"], 1, "{again}");
    // LangGraph reads the threads and the Store there as in the source (but the item left out).
    for t in ["tools", "unicode"] {
        let a = history("pg", &src, t, t).unwrap_or_else(|e| panic!("{e}"));
        let b = history("pg", &pg.url, t, t).unwrap_or_else(|e| panic!("{e}"));
        same(&format!("'{t}' SQLite→Postgres"), a, b).unwrap_or_else(|e| panic!("{e}"));
    }
    let view = |db: &str, gen: &str| {
        Harness::new(gen, "harness_migrate_store.py")
            .run(&["view", "--db", db])
            .expect_json(&["view", "--db", db])
    };
    let mut source_view = view(&src, "new");
    for ns in source_view["namespaces"]
        .as_array_mut()
        .into_iter()
        .flatten()
    {
        for list in ["items", "get"] {
            if let Some(items) = ns[list].as_array_mut() {
                items.retain(|i| i["key"] != "k0600");
            }
        }
    }
    assert_eq!(view(&pg.url, "pg"), source_view, "the Store to LangGraph");
    drop(dir);
}

#[test]
#[cfg_attr(
    not(feature = "env-tests"),
    ignore = "needs scripts/test.sh's environment (--features env-tests)"
)]
fn damaged_postgres_threads_are_left_out_and_the_rest_arrive() {
    // The PostgresSaver fixture with five threads damaged, each a way LangGraph cannot read.
    let db = TestDb::fixture("damaged_pg_src");
    let damage = [
        (
            "tools",
            "UPDATE checkpoint_blobs SET blob = '\\xdeadbeef' WHERE thread_id = 'tools' AND channel = 'messages' \
             AND version = (SELECT max(version) FROM checkpoint_blobs WHERE thread_id = 'tools' AND channel = 'messages')",
        ),
        (
            "blocks",
            "UPDATE checkpoint_writes SET blob = '\\xc1c1c1' WHERE thread_id = 'blocks' AND type = 'msgpack' \
             AND (checkpoint_id, task_id, idx) = (SELECT checkpoint_id, task_id, idx FROM checkpoint_writes \
                 WHERE thread_id = 'blocks' AND type = 'msgpack' ORDER BY 1, 2, 3 LIMIT 1)",
        ),
        (
            "usage",
            "UPDATE checkpoint_writes SET type = 'mystery' WHERE thread_id = 'usage' \
             AND checkpoint_id = (SELECT max(checkpoint_id) FROM checkpoint_writes WHERE thread_id = 'usage')",
        ),
        (
            "unicode",
            "UPDATE checkpoints SET metadata = '\"a string\"' WHERE thread_id = 'unicode' \
             AND checkpoint_id = (SELECT max(checkpoint_id) FROM checkpoints WHERE thread_id = 'unicode')",
        ),
        (
            "system",
            "UPDATE checkpoints SET checkpoint = checkpoint - 'channel_versions' WHERE thread_id = 'system' \
             AND checkpoint_id = (SELECT max(checkpoint_id) FROM checkpoints WHERE thread_id = 'system')",
        ),
    ];
    let mut c = db.client();
    for (t, sql) in damage {
        let n = c.execute(sql, &[]).unwrap_or_else(|e| panic!("{t}: {e}"));
        assert!(n >= 1, "{t}: {sql}");
    }
    drop(c);
    let graph = |t: &str| {
        expected("postgres")["threads"][t]["graph"]
            .as_str()
            .unwrap_or(t)
            .to_owned()
    };
    // The damage is real: LangGraph cannot read any of them.
    for (t, _) in damage {
        assert!(history("pg", &db.url, t, &graph(t)).is_err(), "{t} reads");
    }
    let dir = tempfile::tempdir().expect("tempdir");
    let file = dir.path().join("from-pg.sqlite");
    let (code, r, err) = run_json(&["migrate", "--db", &db.url, "--to", s(&file)]);
    assert_eq!(code, 3, "{err}");
    let mut damaged: Vec<&str> = damage.iter().map(|(t, _)| *t).collect();
    damaged.sort_unstable();
    assert_eq!(with_action(&r, "unreadable"), damaged, "{r}");
    let copied = with_action(&r, "copy");
    assert_eq!(copied.len(), 10, "{r}");
    assert_eq!(thread_ids(&file), copied);
    run_parallel(copied, |t| {
        let a = history("pg", &db.url, &t, &graph(&t))?;
        let b = history("pg", s(&file), &t, &graph(&t))?;
        same(&format!("'{t}' Postgres→SQLite"), a, b)
    });
}
