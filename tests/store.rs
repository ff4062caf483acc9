//! `memctl store` (#28) on a SQLite file holding a `SqliteStore` beside a `SqliteSaver`
//! (fixtures/store.sqlite, written by real LangGraph: fixtures/generate_store.py). memctl reads
//! what LangGraph reads (fixtures/expected/store.json), reads change no byte (no TTL is
//! refreshed), `sweep` deletes exactly what `sweep_ttl` deletes (both expires_at text
//! formats), and after `rm` / `sweep` real LangGraph reads memctl's copy exactly as a copy
//! changed the Python way, and carries on.

mod common;

use std::path::Path;

use common::store::{check_reads_equal, ns_text};
use common::{fixture, memctl, run_err, run_json, run_ok, s, temp_copy};
use serde_json::{json, Value as Json};

fn store_fixture() -> std::path::PathBuf {
    fixture("store.sqlite")
}

/// The file's bytes and those of any -wal / -journal beside it.
fn file_state(db: &Path) -> Vec<Option<Vec<u8>>> {
    ["", "-wal", "-journal", "-shm"]
        .iter()
        .map(|suffix| std::fs::read(format!("{}{suffix}", db.display())).ok())
        .collect()
}

#[test]
fn reads_equal_langgraphs() {
    check_reads_equal(s(&store_fixture()), &common::expected("store"));
}

#[test]
fn ls_limit_and_max_depth_group_like_list_namespaces() {
    let db = store_fixture();
    let ls = run_json(&[
        "store",
        "ls",
        "users.u-7.memories",
        "--limit",
        "2",
        "--db",
        s(&db),
        "--format",
        "json",
    ]);
    assert_eq!(
        ls.as_array()
            .map(|a| a.iter().map(|i| i["key"].clone()).collect::<Vec<_>>()),
        Some(vec![json!("aged-refreshed"), json!("refreshed")])
    );
    let depth = run_json(&[
        "store",
        "namespaces",
        "--max-depth",
        "1",
        "--db",
        s(&db),
        "--format",
        "json",
    ]);
    let names: Vec<&Json> = depth
        .as_array()
        .expect("array")
        .iter()
        .map(|n| &n["namespace"])
        .collect();
    assert_eq!(
        names,
        [
            json!(["prefs"]),
            json!(["scratch"]),
            json!(["threads"]),
            json!(["users"])
        ]
        .iter()
        .collect::<Vec<_>>()
    );
    let users = &depth[3];
    assert_eq!(users["items"], json!(9));
    assert_eq!(users["expired"], json!(3));
    let under = run_json(&[
        "store",
        "namespaces",
        "--prefix",
        "users.u-42",
        "--db",
        s(&db),
        "--format",
        "json",
    ]);
    let names: Vec<String> = under
        .as_array()
        .expect("array")
        .iter()
        .map(|n| ns_text(&n["namespace"]))
        .collect();
    assert_eq!(names, ["users.u-42.memories", "users.u-42.profile"]);
}

#[test]
fn reads_and_dry_runs_change_nothing() {
    let (_dir, db) = temp_copy(&store_fixture());
    let before = file_state(&db);
    let d = s(&db);
    for args in [
        vec!["store", "namespaces", "--db", d],
        vec!["store", "namespaces", "--db", d, "--max-depth", "2"],
        vec!["store", "ls", "users.u-7.memories", "--db", d],
        vec![
            "store",
            "ls",
            "users.u-7.memories",
            "--db",
            d,
            "--format",
            "json",
        ],
        vec!["store", "get", "users.u-7.memories", "refreshed", "--db", d],
        vec!["store", "get", "users.u-7.memories", "session", "--db", d],
        vec!["store", "rm", "users.u-42.memories", "--dry-run", "--db", d],
        vec!["store", "rm", "scratch", "tmp-1", "--dry-run", "--db", d],
        vec!["store", "sweep", "--dry-run", "--db", d],
    ] {
        run_ok(&args);
        assert_eq!(file_state(&db), before, "{args:?} changed the file");
    }
}

#[test]
fn sweep_deletes_exactly_what_sweep_ttl_deletes() {
    let expected = common::expected("store");
    let (_dir, db) = temp_copy(&store_fixture());
    let dry = run_json(&[
        "store",
        "sweep",
        "--dry-run",
        "--db",
        s(&db),
        "--format",
        "json",
    ]);
    let swept = run_json(&["store", "sweep", "--db", s(&db), "--format", "json"]);
    let pairs = |r: &Json| -> Vec<Json> {
        r["removed"]
            .as_array()
            .expect("removed")
            .iter()
            .map(|i| json!([ns_text(&i["namespace"]), i["key"]]))
            .collect()
    };
    assert_eq!(
        pairs(&swept),
        *expected["expired"].as_array().expect("expired")
    );
    assert_eq!(
        pairs(&dry),
        pairs(&swept),
        "the dry run lists what the sweep deletes"
    );
    assert_eq!(swept["dry_run"], json!(false));
    assert_eq!(swept["items"], json!(pairs(&swept).len()));
    // Both expires_at formats were due: put's (isoformat) and refresh-on-read's (DATETIME).
    assert!(pairs(&swept).contains(&json!(["users.u-7.memories", "aged-refreshed"])));
    assert!(pairs(&swept).contains(&json!(["users.u-7.memories", "session"])));
    let after = run_json(&["store", "namespaces", "--db", s(&db), "--format", "json"]);
    assert!(after
        .as_array()
        .expect("array")
        .iter()
        .all(|n| n["expired"] == json!(0)));
    let again = run_json(&["store", "sweep", "--db", s(&db), "--format", "json"]);
    assert_eq!(
        again["items"],
        json!(0),
        "nothing due the second time (exit 0)"
    );
}

#[test]
fn rm_deletes_keys_or_a_whole_namespace_and_reports_them() {
    let (_dir, db) = temp_copy(&store_fixture());
    let r = run_json(&[
        "store",
        "rm",
        "users.u-42.memories",
        "food",
        "pet",
        "--db",
        s(&db),
        "--format",
        "json",
    ]);
    assert_eq!(r["items"], json!(2));
    let keys: Vec<&Json> = r["removed"]
        .as_array()
        .expect("removed")
        .iter()
        .map(|i| &i["key"])
        .collect();
    assert_eq!(keys, [&json!("food"), &json!("pet")]);
    let left = run_json(&[
        "store",
        "ls",
        "users.u-42.memories",
        "--db",
        s(&db),
        "--format",
        "json",
    ]);
    assert_eq!(left.as_array().map(Vec::len), Some(1));
    let r = run_json(&[
        "store",
        "rm",
        "users.u-7.memories",
        "--db",
        s(&db),
        "--format",
        "json",
    ]);
    assert_eq!(r["items"], json!(4));
    // Only that namespace: the ones beside and above it stay.
    let names: Vec<String> = run_json(&["store", "namespaces", "--db", s(&db), "--format", "json"])
        .as_array()
        .expect("array")
        .iter()
        .map(|n| ns_text(&n["namespace"]))
        .collect();
    assert!(!names.contains(&"users.u-7.memories".to_owned()));
    assert!(
        names.contains(&"users".to_owned()) && names.contains(&"users.u-42.profile".to_owned())
    );
    // The checkpoints beside the store are untouched.
    let threads = run_ok(&["threads", "list", "--db", s(&db), "--format", "json"]);
    assert!(threads.contains("t-1"), "{threads}");
}

/// With an embedding index (`store_vectors`, as SqliteStore's vector migration creates it),
/// an item's vectors go with it: `rm` and `sweep` delete and count them (SqliteStore's own
/// delete leaves them behind: its connection has foreign_keys off).
#[test]
fn vectors_go_with_their_items() {
    let (_dir, db) = temp_copy(&store_fixture());
    let vectors = |c: &rusqlite::Connection, prefix: &str, key: &str| -> i64 {
        c.query_row(
            "SELECT count(*) FROM store_vectors WHERE prefix = ?1 AND key = ?2",
            [prefix, key],
            |r| r.get(0),
        )
        .expect("count")
    };
    common::store::add_sqlite_vectors(&db);
    let dry = run_json(&[
        "store",
        "rm",
        "users.u-42.memories",
        "food",
        "--dry-run",
        "--db",
        s(&db),
        "--format",
        "json",
    ]);
    assert_eq!(dry["vectors"], json!(2));
    let r = run_json(&[
        "store",
        "rm",
        "users.u-42.memories",
        "food",
        "--db",
        s(&db),
        "--format",
        "json",
    ]);
    assert_eq!(
        (r["items"].clone(), r["vectors"].clone()),
        (json!(1), json!(2))
    );
    let swept = run_json(&["store", "sweep", "--db", s(&db), "--format", "json"]);
    assert_eq!(swept["vectors"], json!(1));
    let c = rusqlite::Connection::open(&db).expect("open");
    assert_eq!(vectors(&c, "users.u-42.memories", "food"), 0);
    assert_eq!(vectors(&c, "scratch", "tmp-1"), 0);
    assert_eq!(
        vectors(&c, "users.u-42.memories", "pet"),
        1,
        "another item's vector stays"
    );
}

#[test]
fn a_database_without_a_store_is_one_line() {
    let err = run_err(&["store", "namespaces", "--db", s(&fixture("new.sqlite"))]);
    assert!(err.contains("no LangGraph store in this database"), "{err}");
    let err = run_err(&["store", "sweep", "--db", s(&fixture("new.sqlite"))]);
    assert!(err.contains("no LangGraph store in this database"), "{err}");
}

#[test]
fn an_unknown_migration_level_reads_but_refuses_writes() {
    let (_dir, db) = temp_copy(&store_fixture());
    {
        let c = rusqlite::Connection::open(&db).expect("open");
        c.execute("INSERT INTO store_migrations (v) VALUES (99)", [])
            .expect("insert");
    }
    let before = file_state(&db);
    let ns = run_json(&["store", "namespaces", "--db", s(&db), "--format", "json"]);
    assert_eq!(ns.as_array().map(Vec::len), Some(8));
    run_ok(&["store", "sweep", "--dry-run", "--db", s(&db)]);
    for args in [
        vec!["store", "sweep", "--db", s(&db)],
        vec!["store", "rm", "scratch", "--db", s(&db)],
    ] {
        let err = run_err(&args);
        assert!(err.contains("migration level 99"), "{err}");
        assert!(err.contains("writes are refused"), "{err}");
    }
    assert_eq!(file_state(&db), before);
}

#[test]
fn a_value_that_is_not_json_is_reported_and_left_alone() {
    let (_dir, db) = temp_copy(&store_fixture());
    {
        let c = rusqlite::Connection::open(&db).expect("open");
        c.execute(
            "UPDATE store SET value = CAST('{not json' AS BLOB) WHERE prefix = 'users' AND key = 'index'",
            [],
        )
        .expect("update");
    }
    let before = file_state(&db);
    let ls = run_json(&["store", "ls", "users", "--db", s(&db), "--format", "json"]);
    assert_eq!(ls[0]["key"], json!("index"));
    assert_eq!(ls[0]["value"], Json::Null);
    assert!(ls[0]["value_error"].as_str().is_some(), "{ls}");
    let table = run_ok(&["store", "ls", "users", "--db", s(&db)]);
    assert!(table.contains("value is not JSON"), "{table}");
    let err = run_err(&["store", "get", "users", "index", "--db", s(&db)]);
    assert!(
        err.contains("is not JSON") && err.contains("left as it is"),
        "{err}"
    );
    // A sweep does not touch it (it has no TTL).
    run_ok(&["store", "sweep", "--db", s(&db)]);
    let c = rusqlite::Connection::open(&db).expect("open");
    let v: Vec<u8> = c
        .query_row(
            "SELECT value FROM store WHERE prefix = 'users' AND key = 'index'",
            [],
            |r| r.get(0),
        )
        .expect("still there");
    assert_eq!(v, b"{not json");
    drop(before);
}

#[test]
fn keys_and_namespaces_reach_the_terminal_escaped() {
    let (_dir, db) = temp_copy(&store_fixture());
    {
        let c = rusqlite::Connection::open(&db).expect("open");
        c.execute(
            "INSERT INTO store (prefix, key, value) VALUES ('evil\x1b[2J', 'k\x1b]0;x\x07', '{\"a\": \"\x1b[31m\"}')",
            [],
        )
        .expect("insert");
    }
    for args in [
        vec!["store", "namespaces", "--db", s(&db)],
        vec!["store", "ls", "evil\x1b[2J", "--db", s(&db)],
        vec!["store", "rm", "evil\x1b[2J", "--dry-run", "--db", s(&db)],
    ] {
        let out = run_ok(&args);
        assert!(
            !out.contains('\x1b') && !out.contains('\x07'),
            "{args:?}: {out:?}"
        );
    }
}

/// A store at an early migration level (no expires_at / ttl_minutes yet) reads, and has
/// nothing to sweep.
#[test]
fn an_early_migration_level_without_ttl_columns() {
    let dir = tempfile::tempdir().expect("temp dir");
    let db = dir.path().join("early.sqlite");
    {
        let c = rusqlite::Connection::open(&db).expect("create");
        c.execute_batch(
            "CREATE TABLE store_migrations (v INTEGER PRIMARY KEY); \
             INSERT INTO store_migrations VALUES (0), (1), (2); \
             CREATE TABLE store (prefix text NOT NULL, key text NOT NULL, value text NOT NULL, \
                 created_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP, updated_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP, \
                 PRIMARY KEY (prefix, key)); \
             INSERT INTO store (prefix, key, value) VALUES ('a.b', 'k', '{\"x\": 1}');",
        )
        .expect("schema");
    }
    let ls = run_json(&["store", "ls", "a.b", "--db", s(&db), "--format", "json"]);
    assert_eq!(ls[0]["value"], json!({"x": 1}));
    assert_eq!(ls[0]["expires_at"], Json::Null);
    let swept = run_json(&["store", "sweep", "--db", s(&db), "--format", "json"]);
    assert_eq!(swept["items"], json!(0));
    {
        let c = rusqlite::Connection::open(&db).expect("open");
        c.execute_batch("ALTER TABLE store ADD COLUMN expires_at TIMESTAMP; INSERT INTO store_migrations VALUES (3)")
            .expect("level 2 column");
    }
    let ls = run_json(&["store", "ls", "a.b", "--db", s(&db), "--format", "json"]);
    assert_eq!(ls[0]["ttl_minutes"], Json::Null);
}

#[test]
fn bad_namespace_arguments_are_usage_errors() {
    for ns in ["", "users..x", ".users"] {
        let out = memctl()
            .args(["store", "ls", ns, "--db", s(&store_fixture())])
            .output()
            .expect("runs");
        assert_eq!(out.status.code(), Some(2), "{ns:?}");
    }
    let err = run_err(&["store", "get", "users", "nope", "--db", s(&store_fixture())]);
    assert!(err.contains("no item 'nope'"), "{err}");
}

/// memctl's `rm` (keys, a whole namespace) and `sweep` on one copy, `store.delete` and
/// `sweep_ttl` on another: real LangGraph reads both the same, and carries on with memctl's.
#[test]
#[cfg_attr(
    not(feature = "env-tests"),
    ignore = "needs scripts/test.sh's environment (--features env-tests)"
)]
fn langgraph_reads_memctls_changes_as_its_own() {
    let (_a, ours) = temp_copy(&store_fixture());
    let (_b, theirs) = temp_copy(&store_fixture());
    run_ok(&[
        "store",
        "rm",
        "users.u-42.memories",
        "food",
        "--db",
        s(&ours),
    ]);
    run_ok(&["store", "rm", "prefs.team-α", "--db", s(&ours)]);
    let swept = run_json(&["store", "sweep", "--db", s(&ours), "--format", "json"]);
    common::store_harness(
        &theirs,
        &["delete", "--ns", "users.u-42.memories", "--key", "food"],
    );
    common::store_harness(&theirs, &["delete", "--ns", "prefs.team-α"]);
    let py = common::store_harness(&theirs, &["sweep"]);
    assert_eq!(py["swept"], swept["items"], "sweep_ttl's count");
    let view_ours = common::store_harness(&ours, &["view"]);
    let view_theirs = common::store_harness(&theirs, &["view"]);
    assert_eq!(view_ours, view_theirs);
    assert!(!view_ours.to_string().contains("team-α"));
    // What LangGraph reads now is what memctl reads.
    check_reads_equal(
        s(&ours),
        &json!({"namespaces": view_ours["namespaces"], "expired": []}),
    );
    let carry = common::store_harness(&ours, &["carry-on"]);
    assert_eq!(carry["ok"], json!(true));
}

/// On a store large enough that memctl reads it split across cores (a connection per part,
/// all on one state of the file): `store namespaces` counts what LangGraph lists, and
/// `forget --meta` deletes exactly what `store.delete` of the selected namespace deletes on
/// another copy, verified clean; real LangGraph reads both the same and carries on.
#[test]
#[cfg_attr(
    not(feature = "env-tests"),
    ignore = "needs scripts/test.sh's environment (--features env-tests)"
)]
fn split_reads_of_a_large_store_match_langgraph() {
    let (_a, ours) = temp_copy(&store_fixture());
    // Rowids spanning more than one part takes (storage::sqlite::snapshot::SPLIT_FROM).
    common::store_harness(&ours, &["seed", "--n", "25000"]);
    let (_b, theirs) = temp_copy(&ours);
    let listed = run_json(&["store", "namespaces", "--db", s(&ours), "--format", "json"]);
    let before = common::store_harness(&ours, &["view"]);
    let counts = |v: &serde_json::Value| -> Vec<(serde_json::Value, usize)> {
        v["namespaces"]
            .as_array()
            .expect("namespaces")
            .iter()
            .map(|n| {
                (
                    n["namespace"].clone(),
                    n["items"].as_array().expect("items").len(),
                )
            })
            .collect()
    };
    let ours_counts: Vec<(serde_json::Value, usize)> = listed
        .as_array()
        .expect("records")
        .iter()
        .map(|n| {
            (
                n["namespace"].clone(),
                n["items"].as_u64().expect("items") as usize,
            )
        })
        .collect();
    let mut theirs_counts = counts(&before);
    theirs_counts.sort_by_key(|(n, _)| n.to_string());
    let mut ours_sorted = ours_counts.clone();
    ours_sorted.sort_by_key(|(n, _)| n.to_string());
    assert_eq!(
        ours_sorted, theirs_counts,
        "store namespaces against list_namespaces + search"
    );
    let receipt = run_json(&[
        "forget",
        "--meta",
        "user_id=b-7",
        "--db",
        s(&ours),
        "--format",
        "json",
    ]);
    assert_eq!(receipt["store"]["items"], json!(500), "{receipt}");
    assert_eq!(receipt["verification"]["clean"], json!(true), "{receipt}");
    common::store_harness(&theirs, &["delete", "--ns", "bulk.b-7"]);
    let view_ours = common::store_harness(&ours, &["view"]);
    assert_eq!(view_ours, common::store_harness(&theirs, &["view"]));
    assert!(!view_ours.to_string().contains("\"b-7\""));
    let carry = common::store_harness(&ours, &["carry-on"]);
    assert_eq!(carry["ok"], json!(true));
}

/// What people read: the tables and notes of every `store` command on the fixture (a temp
/// copy for the sweep), as a transcript checked against tests/snapshots/store__tables.snap.
/// #46: numbers aligned right, every time in one form (`2026-12-03T10:03:00Z`, as `threads
/// list`); a namespace that does not exist is exit 1 with "did you mean" (also when written
/// with `/`), a prefix of namespaces lists the namespaces under it.
#[test]
fn tables() {
    let (dir, copy) = temp_copy(&store_fixture());
    let fixture_db = store_fixture();
    let no_store = fixture("new.sqlite");
    let mut transcript = String::new();
    let runs: Vec<Vec<&str>> = vec![
        vec!["store", "namespaces", "--db", s(&fixture_db)],
        vec![
            "store",
            "namespaces",
            "--max-depth",
            "2",
            "--prefix",
            "users",
            "--db",
            s(&fixture_db),
        ],
        vec!["store", "ls", "users.u-7.memories", "--db", s(&fixture_db)],
        vec!["store", "ls", "nothing.here", "--db", s(&fixture_db)],
        vec!["store", "ls", "users.u-42", "--db", s(&fixture_db)],
        vec!["store", "ls", "users/u-42/memories", "--db", s(&fixture_db)],
        vec!["store", "ls", "users.u-42.memorie", "--db", s(&fixture_db)],
        vec![
            "store",
            "get",
            "users.u-7.memories",
            "session",
            "--db",
            s(&fixture_db),
        ],
        vec![
            "store",
            "get",
            "users.u-7.memories",
            "nope",
            "--db",
            s(&fixture_db),
        ],
        vec![
            "store",
            "rm",
            "users.u-42.memories",
            "food",
            "nope",
            "--dry-run",
            "--db",
            s(&fixture_db),
        ],
        vec!["store", "sweep", "--db", s(&copy)],
        vec!["store", "sweep", "--db", s(&copy)],
        vec!["store", "namespaces", "--db", s(&no_store)],
    ];
    for args in runs {
        let out = memctl()
            .args(&args)
            .env("COLUMNS", "100")
            .output()
            .expect("memctl runs");
        transcript.push_str(&format!(
            "$ memctl {}\n[exit {}]\n{}{}\n",
            args.join(" "),
            out.status.code().unwrap_or(-1),
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    let transcript = transcript
        .replace(s(dir.path()), "[TMP]")
        .replace(s(&common::root().join("fixtures")), "[FIXTURES]");
    insta::assert_snapshot!("tables", transcript);
}
