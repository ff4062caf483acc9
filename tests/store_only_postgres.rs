//! A Postgres database that holds a LangGraph store and no checkpoint tables (an app using
//! `PostgresStore` without a `PostgresSaver`; fixtures/postgres-store.sql, written by real
//! LangGraph's `PostgresStore.setup()` and `put`, `MEMCTL_TEST_PG`): `forget`, `stats`,
//! `find` and `migrate` work on the store alone, as on a SQLite file in the same case
//! (tests/store_only.rs), and say "no checkpoints in this database" on stderr; no checkpoint
//! table is ever made, in it or in a migration's target. Real LangGraph reads what memctl
//! left as its own. A database with neither keeps failing as before (#28). Fails, never skips,
//! without the server or LangGraph.

mod common;

use common::pg::TestDb;
use common::store::{ns_text, sqlite_store_only, sqlite_tables};
use common::{fixture, memctl, s, Harness};
use serde_json::{json, Value as Json};

const NOTE: &str = "no checkpoints in this database";

/// `memctl ARGS`: (exit code, stdout as JSON or null, stderr).
fn run(args: &[&str]) -> (i32, Json, String) {
    let out = memctl().args(args).output().expect("memctl runs");
    (
        out.status.code().unwrap_or(-1),
        serde_json::from_slice(&out.stdout).unwrap_or(Json::Null),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// `args` and `more`, as one argument list.
fn with<'a>(args: &[&'a str], more: &[&'a str]) -> Vec<&'a str> {
    [args, more].concat()
}

/// How many of PostgresSaver's tables the database has (any schema).
fn saver_tables(db: &TestDb) -> i64 {
    db.count(
        "SELECT count(*) FROM pg_class WHERE relkind = 'r' AND relname IN \
         ('checkpoints', 'checkpoint_blobs', 'checkpoint_writes', 'checkpoint_migrations')",
    )
}

/// Every row of `store` as text, in key order.
fn store_rows(db: &TestDb) -> Vec<(String, String, String)> {
    db.client()
        .query(
            "SELECT prefix, key, s::text FROM store s ORDER BY prefix COLLATE \"C\", key COLLATE \"C\"",
            &[],
        )
        .expect("rows")
        .iter()
        .map(|r| (r.get(0), r.get(1), r.get(2)))
        .collect()
}

/// `script CMD --db DB` of real LangGraph (`pg` for a URL, `new` for a file).
fn lg(script: &str, cmd: &str, db: &str) -> Json {
    let venv = if db.starts_with("postgres") {
        "pg"
    } else {
        "new"
    };
    let args = [cmd, "--db", db];
    Harness::new(venv, script).run(&args).expect_json(&args)
}

/// What real LangGraph reads (namespaces, items, timestamps; nothing refreshed).
fn view(db: &str) -> Json {
    lg("harness_migrate_store.py", "view", db)
}

/// The app carries on: puts and gets items.
fn carry_on(db: &str) {
    assert_eq!(
        lg("harness_store.py", "carry-on", db)["ok"],
        json!(true),
        "{db}"
    );
}

/// `forget --meta --match` deletes the person's items and nothing else; a dry run writes
/// nothing; real `PostgresStore.get` / `search` read the result as after its own
/// `store.delete` of the same items, and the app carries on. No table is made.
#[test]
fn forget_deletes_the_items_of_a_store_only_database() {
    let ours = TestDb::store_fixture("so_forget_ours");
    let theirs = TestDb::store_fixture("so_forget_theirs");
    assert_eq!(saver_tables(&ours), 0, "PostgresStore's tables alone");
    let before = store_rows(&ours);
    let args = [
        "forget",
        "--meta",
        "user_id=u-42",
        "--match",
        "Grüße",
        "--db",
        &ours.url,
        "--format",
        "json",
    ];
    let (code, dry, err) = run(&with(&args, &["--dry-run"]));
    assert_eq!(code, 0, "{err}");
    assert!(err.contains(NOTE), "{err}");
    let listed: Vec<(String, String)> = dry["store"]
        .as_array()
        .expect("the dry run lists the store's items")
        .iter()
        .map(|l| {
            (
                ns_text(&l["namespace"]),
                l["key"].as_str().expect("key").to_owned(),
            )
        })
        .collect();
    assert_eq!(listed.len(), 5, "{dry:#}");
    assert_eq!(store_rows(&ours), before, "a dry run deletes nothing");

    let (code, r, err) = run(&with(&args, &["--yes"]));
    assert_eq!(code, 0, "{err}");
    assert_eq!(r["store"]["items"], json!(5), "{r:#}");
    assert_eq!(r["deleted"]["threads"], json!(0), "{r:#}");
    assert_eq!(r["backend"], json!("postgres"), "{r:#}");
    assert_eq!(r["verification"]["clean"], json!(true), "{r:#}");
    assert_eq!(
        r["reclaim"]["vacuumed"],
        json!(true),
        "the store's tables: {r:#}"
    );
    let kept: Vec<_> = before
        .iter()
        .filter(|(p, k, _)| !listed.contains(&(p.clone(), k.clone())))
        .cloned()
        .collect();
    assert_eq!(store_rows(&ours), kept, "the others are intact");
    assert_eq!(saver_tables(&ours), 0, "no checkpoint table made");

    for (ns, key) in &listed {
        let args = ["delete", "--db", &theirs.url, "--ns", ns, "--key", key];
        Harness::new("pg", "harness_store.py")
            .run(&args)
            .expect_json(&args);
    }
    let view_ours = lg("harness_store.py", "view", &ours.url);
    assert_eq!(view_ours, lg("harness_store.py", "view", &theirs.url));
    assert!(!view_ours.to_string().contains("ramen"), "{view_ours}");
    carry_on(&ours.url);
}

/// `forget --thread` names a thread that is not there, as on a SQLite store-only file: the
/// same exit and the same unmatched part, nothing deleted.
#[test]
fn forget_thread_says_what_it_says_on_a_store_only_file() {
    let pg = TestDb::store_fixture("so_forget_thread");
    let (_dir, file) = sqlite_store_only();
    let before = store_rows(&pg);
    let forget = |db: &str| {
        run(&[
            "forget", "--thread", "t-1", "--db", db, "--yes", "--format", "json",
        ])
    };
    let (code_pg, r_pg, err_pg) = forget(&pg.url);
    let (code_file, r_file, err_file) = forget(s(&file));
    assert_eq!(code_pg, code_file, "{err_pg}\n{err_file}");
    assert_eq!(r_pg["unmatched"], r_file["unmatched"], "{r_pg:#}");
    assert_eq!(r_pg["deleted"], r_file["deleted"], "{r_pg:#}");
    assert_eq!(
        r_pg["unmatched"]["absent_threads_sha256"]
            .as_array()
            .map(Vec::len),
        Some(1)
    );
    assert_eq!(store_rows(&pg), before);
}

/// `stats` has the store's part and empty checkpoint parts; `find` searches the store.
#[test]
fn stats_and_find_cover_the_store() {
    let db = TestDb::store_fixture("so_stats");
    let (code, r, err) = run(&["stats", "--db", &db.url, "--format", "json"]);
    assert_eq!(code, 0, "{err}");
    assert!(err.contains(NOTE), "{err}");
    assert_eq!(r["threads"], json!(0), "{r:#}");
    assert_eq!(r["checkpoints"], json!(0), "{r:#}");
    assert_eq!(r["postgres"]["tables"], json!([]), "{r:#}");
    assert_eq!(
        r["store"]["items"],
        json!(db.count("SELECT count(*) FROM store"))
    );
    assert_eq!(
        r["store"]["expired"],
        json!(db.count("SELECT count(*) FROM store WHERE expires_at < NOW()"))
    );
    let out = memctl()
        .args(["stats", "--db", &db.url])
        .output()
        .expect("runs");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        text.contains("0 threads") && text.contains("store: "),
        "{text}"
    );
    assert!(!text.contains("file "), "a server has no file: {text}");

    let (code, hits, err) = run(&["find", "Zoë", "--db", &db.url, "--format", "json"]);
    assert_eq!(code, 0, "{err}");
    assert!(err.contains(NOTE), "{err}");
    let store: Vec<(String, Json)> = hits
        .as_array()
        .expect("array")
        .iter()
        .map(|h| (ns_text(&h["namespace"]), h["key"].clone()))
        .collect();
    assert_eq!(store, vec![("users.u-42.profile".into(), json!("main"))]);
    let (code, hits, err) = run(&[
        "find",
        "--meta",
        "user_id=u-42",
        "--db",
        &db.url,
        "--format",
        "json",
    ]);
    assert_eq!(code, 0, "{err}");
    let ns: Vec<String> = hits
        .as_array()
        .expect("array")
        .iter()
        .map(|h| ns_text(&h["namespace"]))
        .collect();
    assert_eq!(ns, ["users.u-42.memories", "users.u-42.profile"]);
}

/// Neither a store nor a saver, or a store beside part of a saver: the saver's error stands,
/// one line, and nothing is made.
#[test]
fn without_a_store_or_with_part_of_a_saver_the_error_stands() {
    let empty = TestDb::empty("so_none");
    let (code, _, err) = run(&["stats", "--db", &empty.url]);
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("no 'checkpoints' table"), "{err}");
    assert!(!err.contains(NOTE), "{err}");
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert_eq!(
        empty.count("SELECT count(*) FROM pg_tables WHERE schemaname = 'public'"),
        0
    );

    let half = TestDb::store_fixture("so_half");
    half.client()
        .batch_execute("CREATE TABLE checkpoint_migrations (v integer PRIMARY KEY)")
        .expect("part of a saver");
    for cmd in [
        vec!["stats"],
        vec!["find", "Zoë"],
        vec!["forget", "--meta", "user_id=u-42", "--yes"],
    ] {
        let (code, _, err) = run(&with(&cmd, &["--db", &half.url]));
        assert_eq!(code, 1, "{cmd:?}: {err}");
        assert!(err.contains("no 'checkpoints' table"), "{err}");
        assert!(!err.contains(NOTE), "{err}");
    }
    assert_eq!(saver_tables(&half), 1, "nothing made");
}

/// The store in another schema: found with --schema or the URL's search_path, as the store
/// commands find it; without either, the saver's error stands.
#[test]
fn a_store_only_schema_is_found_with_schema_or_search_path() {
    let db = TestDb::empty("so_schema");
    let dump = std::fs::read_to_string(fixture("postgres-store.sql")).expect("dump");
    db.client()
        .batch_execute(&format!(
            "CREATE SCHEMA app; {}",
            dump.replace("public.", "app.")
        ))
        .expect("the store in schema app");
    let items = db.count("SELECT count(*) FROM app.store");
    let sep = if db.url.contains('?') { '&' } else { '?' };
    let search_path = format!("{}{sep}options=-csearch_path%3Dapp", db.url);
    let mut selected = Vec::new();
    for args in [
        vec!["--db", db.url.as_str(), "--schema", "app"],
        vec!["--db", search_path.as_str()],
    ] {
        let (code, r, err) = run(&with(&["stats", "--format", "json"], &args));
        assert_eq!(code, 0, "{args:?}: {err}");
        assert!(err.contains(NOTE), "{err}");
        assert_eq!(r["store"]["items"], json!(items), "{r:#}");
        let (code, r, err) = run(&with(
            &[
                "forget",
                "--meta",
                "user_id=u-42",
                "--dry-run",
                "--format",
                "json",
            ],
            &args,
        ));
        assert_eq!(code, 0, "{args:?}: {err}");
        selected.push(r["store"].as_array().map(Vec::len).unwrap_or(0));
    }
    assert!(
        selected[0] > 0 && selected[0] == selected[1],
        "{selected:?}"
    );
    let (code, _, err) = run(&["stats", "--db", &db.url]);
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("no 'checkpoints' table"), "{err}");
    assert_eq!(db.count("SELECT count(*) FROM app.store"), items);
    assert_eq!(saver_tables(&db), 0);
}

/// `migrate` moves the store alone: Postgres store-only into a new SQLite file (its tables
/// those `SqliteStore.setup()` makes, no checkpoint table) and into an empty Postgres
/// database (no checkpoint table made), and a SQLite store-only file into an empty Postgres
/// database. Real LangGraph reads each target as its source; a dry run makes nothing; a
/// second run skips every item.
#[test]
fn migrate_moves_the_store_alone() {
    let src = TestDb::store_fixture("so_mig_src");
    let n = src.count("SELECT count(*) FROM store");
    let dir = tempfile::tempdir().expect("tempdir");
    let file = dir.path().join("p2s.sqlite");
    let to_file = [
        "migrate",
        "--db",
        &src.url,
        "--to",
        s(&file),
        "--format",
        "json",
    ];
    let (code, r, err) = run(&with(&to_file, &["--dry-run"]));
    assert_eq!(code, 0, "{err}");
    assert!(err.contains(NOTE), "{err}");
    assert_eq!(r["store"]["copied"], json!(n), "{r:#}");
    assert!(!file.exists(), "a dry run makes no file");
    let (code, r, err) = run(&to_file);
    assert_eq!(code, 0, "{err}");
    assert_eq!(r["threads"], json!([]), "{r:#}");
    assert_eq!(r["created"], json!(true), "{r:#}");
    assert_eq!(r["store"]["copied"], json!(n), "{r:#}");
    assert_eq!(sqlite_tables(&file), ["store", "store_migrations"]);
    assert_eq!(view(s(&file)), view(&src.url));
    let (code, r, err) = run(&to_file);
    assert_eq!(code, 0, "{err}");
    assert_eq!(r["store"]["skipped"], json!(n), "{r:#}");
    carry_on(s(&file));

    let p2p = TestDb::empty("so_mig_p2p");
    let to_pg = [
        "migrate", "--db", &src.url, "--to", &p2p.url, "--format", "json",
    ];
    let (code, r, err) = run(&with(&to_pg, &["--dry-run"]));
    assert_eq!(code, 0, "{err}");
    assert_eq!(r["store"]["copied"], json!(n), "{r:#}");
    let tables = "SELECT count(*) FROM pg_tables WHERE schemaname = 'public'";
    assert_eq!(p2p.count(tables), 0, "a dry run makes nothing");
    for (copied, skipped) in [(n, 0), (0, n)] {
        let (code, r, err) = run(&to_pg);
        assert_eq!(code, 0, "{err}");
        assert_eq!(r["store"]["copied"], json!(copied), "{r:#}");
        assert_eq!(r["store"]["skipped"], json!(skipped), "{r:#}");
    }
    assert_eq!(
        saver_tables(&p2p),
        0,
        "no checkpoint table made in the target"
    );
    assert_eq!(view(&p2p.url), view(&src.url));
    carry_on(&p2p.url);

    let (_d, sqlite_src) = sqlite_store_only();
    let s2p = TestDb::empty("so_mig_s2p");
    let (code, r, err) = run(&[
        "migrate",
        "--db",
        s(&sqlite_src),
        "--to",
        &s2p.url,
        "--format",
        "json",
    ]);
    assert_eq!(code, 0, "{err}");
    assert!(err.contains(NOTE), "{err}");
    assert_eq!(r["store"]["copied"], json!(15), "{r:#}");
    assert_eq!(
        saver_tables(&s2p),
        0,
        "no checkpoint table made in the target"
    );
    assert_eq!(view(&s2p.url), view(s(&sqlite_src)));
    let left = sqlite_tables(&sqlite_src);
    assert!(
        !left.iter().any(|t| t == "checkpoints" || t == "writes"),
        "{left:?}"
    );
    assert_eq!(saver_tables(&src), 0, "nothing made in the source");
}
