//! `memctl migrate` moves the LangGraph Store (#29): every item of fixtures/store.sqlite,
//! deep-store.sqlite, store-vec.sqlite (with its embedding vectors) and the PostgresStore
//! fixture (fixtures/postgres-store.sql, beside the PostgresSaver fixture) in all four
//! directions. Real LangGraph's `list_namespaces`, `search` and `get` (refresh_ttl=False) read
//! the target as they read the source (values, namespaces, keys, created_at, updated_at), its
//! `sweep_ttl` expires the same items, the app carries on; the store's tables are those
//! `setup()` makes. A second run skips every item; an item changed in the target is reported
//! (exit 3) and left unless `--replace`; a store at an unknown level and vectors the target
//! cannot hold are refused, nothing written. Fails, never skips, without the environment.

mod common;

use std::path::Path;

use common::pg::TestDb;
use common::{fixture, memctl, s, temp_copy, Harness};
use serde_json::{json, Value as Json};

/// The Python venv whose LangGraph opens `db` (`vec`: SQLite with the embedding index).
fn venv(db: &str, index: bool) -> &'static str {
    match (db.starts_with("postgres"), index) {
        (true, _) => "pg",
        (false, true) => "vec",
        (false, false) => "new",
    }
}

/// tests/interop/harness_migrate_store.py `cmd` on `db`.
fn lg(cmd: &str, db: &str, index: bool) -> Json {
    let mut args = vec![cmd, "--db", db];
    if index {
        args.insert(0, "--index");
    }
    Harness::new(venv(db, index), "harness_migrate_store.py")
        .run(&args)
        .expect_json(&args)
}

/// tests/interop/harness_store.py `carry-on` on `db`: the app puts and gets items.
fn carry_on(db: &str, index: bool) {
    let mut args = vec!["carry-on", "--db", db];
    if index {
        args.insert(0, "--index");
    }
    let r = Harness::new(venv(db, index), "harness_store.py")
        .run(&args)
        .expect_json(&args);
    assert_eq!(r["ok"], json!(true), "{db}: {r}");
}

/// `memctl migrate --db FROM --to TO ARGS --format json`: (exit code, report, stderr).
fn migrate(from: &str, to: &str, args: &[&str]) -> (i32, Json, String) {
    let out = memctl()
        .args(["migrate", "--db", from, "--to", to, "--format", "json"])
        .args(args)
        .output()
        .expect("runs");
    let report = serde_json::from_slice(&out.stdout).unwrap_or(Json::Null);
    (
        out.status.code().unwrap_or(-1),
        report,
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// A first migration (everything copied), then a second (everything skipped).
fn migrate_twice(from: &str, to: &str, items: u64) {
    let (code, r, err) = migrate(from, to, &[]);
    assert_eq!(code, 0, "{from} → {to}: {err}");
    assert_eq!(r["store"]["items"], json!(items), "{r}");
    assert_eq!(r["store"]["copied"], json!(items), "{r}");
    let (code, r, err) = migrate(from, to, &[]);
    assert_eq!(code, 0, "{from} → {to} again: {err}");
    assert_eq!(r["store"]["skipped"], json!(items), "{r}");
    assert_eq!(r["store"]["copied"], json!(0), "{r}");
}

/// The Store's tables and indexes as SQLite keeps their statements.
fn sqlite_schema(db: &Path) -> Vec<(String, String)> {
    let c = rusqlite::Connection::open(db).expect("open");
    let mut st = c
        .prepare(
            "SELECT name, sql FROM sqlite_master WHERE tbl_name IN \
             ('store', 'store_migrations', 'store_vectors', 'vector_migrations') ORDER BY name",
        )
        .expect("prepare");
    let rows = st
        .query_map([], |r| {
            Ok((
                r.get(0)?,
                r.get::<_, Option<String>>(1)?.unwrap_or_default(),
            ))
        })
        .expect("query");
    let mut out: Vec<(String, String)> = rows.collect::<Result<_, _>>().expect("rows");
    for table in ["store_migrations", "vector_migrations"] {
        if out.iter().any(|(n, _)| n == table) {
            let v: String = c
                .query_row(&format!("SELECT group_concat(v) FROM {table}"), [], |r| {
                    r.get(0)
                })
                .expect("levels");
            out.push((format!("{table} rows"), v));
        }
    }
    out
}

/// The Store's columns, indexes and levels in a Postgres database.
fn pg_schema(db: &TestDb) -> Json {
    let mut c = db.client();
    let cols: Vec<String> = c
        .query(
            "SELECT column_name || ' ' || data_type || ' ' || coalesce(column_default, '') \
             FROM information_schema.columns WHERE table_name = 'store' \
             AND table_schema = current_schema() ORDER BY ordinal_position",
            &[],
        )
        .expect("columns")
        .iter()
        .map(|r| r.get(0))
        .collect();
    let idx: Vec<String> = c
        .query(
            "SELECT indexdef FROM pg_indexes WHERE tablename IN ('store', 'store_migrations') \
             ORDER BY indexname",
            &[],
        )
        .expect("indexes")
        .iter()
        .map(|r| r.get(0))
        .collect();
    let levels: Vec<i32> = c
        .query("SELECT v FROM store_migrations ORDER BY v", &[])
        .expect("levels")
        .iter()
        .map(|r| r.get(0))
        .collect();
    json!({"columns": cols, "indexes": idx, "levels": levels})
}

/// `source` and `target` read the same to LangGraph, their `sweep_ttl` takes the same items
/// (each swept on a copy: `sweep_copy` makes one), and the app carries on on the target.
fn same_to_langgraph(source: &str, target: &str, index: bool, sweep: (&str, &str)) {
    let a = lg("view", source, index);
    assert!(
        a["namespaces"].as_array().is_some_and(|n| !n.is_empty()),
        "{a}"
    );
    assert_eq!(a, lg("view", target, index), "{source} → {target}");
    let (sa, sb) = (lg("sweep", sweep.0, index), lg("sweep", sweep.1, index));
    assert!(
        sa["swept"].as_u64() > Some(0),
        "the fixture has expired items: {sa}"
    );
    assert_eq!(sa, sb, "sweep_ttl: {source} → {target}");
    carry_on(target, index);
}

/// A database holding the PostgresSaver fixture's threads and the PostgresStore fixture's
/// items (both written by real LangGraph), as an app keeps them.
fn pg_source(hint: &str) -> TestDb {
    let db = TestDb::fixture(hint);
    let dump = std::fs::read_to_string(fixture("postgres-store.sql")).expect("the store dump");
    db.client().batch_execute(&dump).expect("load the store");
    db
}

#[test]
#[cfg_attr(
    not(feature = "env-tests"),
    ignore = "needs scripts/test.sh's environment (--features env-tests)"
)]
fn sqlite_stores_move_into_new_files_as_langgraph_wrote_them() {
    for (name, items, index) in [
        ("store.sqlite", 15, false),
        ("deep-store.sqlite", 1, false),
        ("store-vec.sqlite", 11, true),
    ] {
        let (dir, src) = temp_copy(&fixture(name));
        let target = dir.path().join("target.sqlite");
        // A dry run says what would move and creates nothing.
        let (code, r, err) = migrate(s(&src), s(&target), &["--dry-run"]);
        assert_eq!(code, 0, "{err}");
        assert_eq!(r["store"]["copied"], json!(items), "{r}");
        assert!(!target.exists());
        migrate_twice(s(&src), s(&target), items);
        assert_eq!(
            sqlite_schema(&target),
            sqlite_schema(&src),
            "{name}: setup()'s tables"
        );
        if index {
            let c = rusqlite::Connection::open(&src).expect("open");
            let n: u64 = c
                .query_row("SELECT count(*) FROM store_vectors", [], |r| r.get(0))
                .expect("count");
            let (_, r, _) = migrate(s(&src), s(&dir.path().join("again.sqlite")), &[]);
            assert_eq!(r["store"]["vectors_copied"], json!(n), "{r}");
        }
        let (sweep_src, sweep_tgt) = (dir.path().join("s1.sqlite"), dir.path().join("s2.sqlite"));
        std::fs::copy(&src, &sweep_src).expect("copy");
        std::fs::copy(&target, &sweep_tgt).expect("copy");
        if name == "deep-store.sqlite" {
            // Nothing in it expires: the views alone, then the app carries on.
            assert_eq!(lg("view", s(&src), false), lg("view", s(&target), false));
            carry_on(s(&target), false);
            continue;
        }
        same_to_langgraph(s(&src), s(&target), index, (s(&sweep_src), s(&sweep_tgt)));
    }
}

#[test]
#[cfg_attr(
    not(feature = "env-tests"),
    ignore = "needs scripts/test.sh's environment (--features env-tests)"
)]
fn a_store_moves_in_all_four_directions() {
    let dir = tempfile::tempdir().expect("tempdir");
    let sqlite_src = dir.path().join("src.sqlite");
    std::fs::copy(fixture("store.sqlite"), &sqlite_src).expect("copy");
    let pg_src = pg_source("mst_src");
    let (s2s, p2s) = (dir.path().join("s2s.sqlite"), dir.path().join("p2s.sqlite"));
    let (s2p, p2p) = (
        TestDb::empty_saver("mst_s2p"),
        TestDb::empty_saver("mst_p2p"),
    );
    let directions: [(&str, &str, u64); 4] = [
        (s(&sqlite_src), s(&s2s), 15),
        (s(&sqlite_src), &s2p.url, 15),
        (&pg_src.url, s(&p2s), 13),
        (&pg_src.url, &p2p.url, 13),
    ];
    for (from, to, items) in directions {
        migrate_twice(from, to, items);
    }
    // The tables are those setup() makes on each backend.
    assert_eq!(sqlite_schema(&p2s), sqlite_schema(&sqlite_src));
    let setup_made = pg_schema(&pg_src);
    assert_eq!(pg_schema(&s2p), setup_made);
    assert_eq!(pg_schema(&p2p), setup_made);
    // Sweeps on copies (a copy of a Postgres database needs nobody connected to it).
    let pg_src_sweep = pg_src.copy("mst_src_sw");
    let s2p_sweep = s2p.copy("mst_s2p_sw");
    let p2p_sweep = p2p.copy("mst_p2p_sw");
    let file_copy = |p: &Path, n: &str| {
        let c = dir.path().join(n);
        std::fs::copy(p, &c).expect("copy");
        c
    };
    let (src_sw, s2s_sw, p2s_sw) = (
        file_copy(&sqlite_src, "src-sw.sqlite"),
        file_copy(&s2s, "s2s-sw.sqlite"),
        file_copy(&p2s, "p2s-sw.sqlite"),
    );
    let src_sw2 = file_copy(&sqlite_src, "src-sw2.sqlite");
    let pg_src_sweep2 = pg_src.copy("mst_src_sw2");
    same_to_langgraph(s(&sqlite_src), s(&s2s), false, (s(&src_sw), s(&s2s_sw)));
    same_to_langgraph(
        s(&sqlite_src),
        &s2p.url,
        false,
        (s(&src_sw2), &s2p_sweep.url),
    );
    same_to_langgraph(&pg_src.url, s(&p2s), false, (&pg_src_sweep.url, s(&p2s_sw)));
    same_to_langgraph(
        &pg_src.url,
        &p2p.url,
        false,
        (&pg_src_sweep2.url, &p2p_sweep.url),
    );
}

#[test]
#[cfg_attr(
    not(feature = "env-tests"),
    ignore = "needs scripts/test.sh's environment (--features env-tests)"
)]
fn a_changed_item_is_reported_and_replaced_only_with_replace() {
    let pg = TestDb::empty_saver("mst_diff");
    let (dir, src) = temp_copy(&fixture("store.sqlite"));
    let file = dir.path().join("target.sqlite");
    for to in [s(&file), pg.url.as_str()] {
        let (code, _, err) = migrate(s(&src), to, &[]);
        assert_eq!(code, 0, "{err}");
        let change = "UPDATE store SET value = '{\"text\": \"changed by the app\"}' \
                      WHERE prefix = 'users.u-42.memories' AND key = 'food'";
        if to == pg.url {
            pg.client().batch_execute(change).expect("change");
        } else {
            let c = rusqlite::Connection::open(&file).expect("open");
            c.execute_batch(change).expect("change");
        }
        let before = lg("view", to, false);
        let (code, r, err) = migrate(s(&src), to, &[]);
        assert_eq!(code, 3, "{err}");
        assert!(
            err.contains(
                "1 item of the LangGraph Store differs in the target and was left as it is"
            ),
            "{err}"
        );
        assert_eq!(r["store"]["differing"], json!(1), "{r}");
        assert_eq!(r["store"]["skipped"], json!(14), "{r}");
        assert_eq!(
            r["store"]["differing_items"],
            json!([{"namespace": ["users", "u-42", "memories"], "key": "food", "action": "differs"}]),
            "{r}"
        );
        let (code, r, _) = migrate(s(&src), to, &["--replace", "--dry-run"]);
        assert_eq!((code, &r["store"]["replaced"]), (0, &json!(1)), "{r}");
        assert_eq!(lg("view", to, false), before, "nothing overwritten");
        let (code, r, err) = migrate(s(&src), to, &["--replace"]);
        assert_eq!(code, 0, "{err}");
        assert_eq!(r["store"]["replaced"], json!(1), "{r}");
        assert_eq!(r["store"]["differing_items"][0]["action"], "replace", "{r}");
        assert_eq!(lg("view", to, false), lg("view", s(&src), false));
    }
    // The table report names the item, never its value.
    let c = rusqlite::Connection::open(&file).expect("open");
    c.execute_batch("UPDATE store SET value = '{\"n\": 99}' WHERE key = 'tmp-1'")
        .expect("change");
    let out = memctl()
        .args(["migrate", "--db", s(&src), "--to", s(&file)])
        .output()
        .expect("runs");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("store item 'scratch' / 'tmp-1': differs in the target"),
        "{text}"
    );
    assert!(text.contains("store: 15 items in 8 namespaces"), "{text}");
    // A file with a store and no checkpoints (an app using SqliteStore alone): its store moves.
    {
        let c = rusqlite::Connection::open(&src).expect("open");
        c.execute_batch("DROP TABLE checkpoints; DROP TABLE writes")
            .expect("store only");
    }
    let alone = dir.path().join("alone.sqlite");
    let (code, r, err) = migrate(s(&src), s(&alone), &[]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(r["store"]["copied"], json!(15), "{r}");
    assert_eq!(r["threads"], json!([]), "{r}");
    assert_eq!(lg("view", s(&alone), false), lg("view", s(&src), false));
    // The store alone: the new file has the tables SqliteStore.setup() makes, no saver's.
    let made = rusqlite::Connection::open(&alone).expect("open");
    let saver: i64 = made
        .query_row(
            "SELECT count(*) FROM sqlite_master WHERE name IN ('checkpoints', 'writes')",
            [],
            |r| r.get(0),
        )
        .expect("count");
    assert_eq!(saver, 0, "no checkpoint table made in the target");
}

#[test]
#[cfg_attr(
    not(feature = "env-tests"),
    ignore = "needs scripts/test.sh's environment (--features env-tests)"
)]
fn unknown_levels_and_vectors_the_target_cannot_hold_are_refused() {
    let dir = tempfile::tempdir().expect("tempdir");
    let bytes = |p: &Path| std::fs::read(p).expect("read");
    // A target store at a level memctl does not know: one line, nothing written (no thread
    // either).
    let target = dir.path().join("level.sqlite");
    std::fs::copy(fixture("store.sqlite"), &target).expect("copy");
    {
        let c = rusqlite::Connection::open(&target).expect("open");
        c.execute_batch("DELETE FROM checkpoints; DELETE FROM writes; INSERT INTO store_migrations (v) VALUES (99)")
            .expect("level 99");
    }
    let before = bytes(&target);
    let (code, _, err) = migrate(
        s(&fixture("store-vec.sqlite")),
        s(&target),
        &["--without-vectors"],
    );
    assert_ne!(code, 0);
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert!(err.contains("migration level 99"), "{err}");
    assert_eq!(bytes(&target), before, "nothing written");
    // Vectors into Postgres: refused unless --without-vectors.
    let pg = TestDb::empty_saver("mst_vec");
    let digest = || pg.rows_digest();
    let rows = digest();
    let (code, _, err) = migrate(s(&fixture("store-vec.sqlite")), &pg.url, &[]);
    // A refusal after reading the databases, not a usage error (#46: it exited 2).
    assert_eq!(code, 1, "{err}");
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert!(err.contains("--without-vectors"), "{err}");
    assert_eq!(digest(), rows, "no thread written");
    let has_store: Option<String> = pg
        .client()
        .query_one("SELECT to_regclass('store')::text", &[])
        .expect("query")
        .get(0);
    assert_eq!(has_store, None, "no store made");
    let (code, r, err) = migrate(
        s(&fixture("store-vec.sqlite")),
        &pg.url,
        &["--without-vectors"],
    );
    assert_eq!(code, 0, "{err}");
    assert_eq!(r["store"]["copied"], json!(11), "{r}");
    assert_eq!(r["store"]["vectors_left_behind"], json!(13), "{r}");
    // Into a SQLite store without an embedding index: refused likewise.
    let plain = dir.path().join("plain.sqlite");
    std::fs::copy(fixture("store.sqlite"), &plain).expect("copy");
    let before = bytes(&plain);
    let (code, _, err) = migrate(s(&fixture("store-vec.sqlite")), s(&plain), &[]);
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("no embedding index"), "{err}");
    assert_eq!(bytes(&plain), before, "nothing written");
    // Into a SQLite store whose index has vectors of another size: refused likewise.
    common::store::add_sqlite_vectors(&plain);
    let before = bytes(&plain);
    let (code, _, err) = migrate(s(&fixture("store-vec.sqlite")), s(&plain), &[]);
    assert_eq!(code, 1, "{err}");
    assert!(
        err.contains("8 dimensions") && err.contains(" 1: "),
        "{err}"
    );
    assert_eq!(bytes(&plain), before, "nothing written");
    // Into a store with the same index: the missing items come with their vectors as stored.
    let vec_rows = |db: &Path| -> Vec<Vec<rusqlite::types::Value>> {
        let c = rusqlite::Connection::open(db).expect("open");
        let mut st = c
            .prepare("SELECT * FROM store_vectors ORDER BY prefix, key, field_name")
            .expect("prepare");
        let rows = st
            .query_map([], |r| (0..6).map(|i| r.get(i)).collect())
            .expect("query");
        rows.collect::<Result<_, _>>().expect("rows")
    };
    let same = dir.path().join("same-index.sqlite");
    std::fs::copy(fixture("store-vec.sqlite"), &same).expect("copy");
    let taken: u64 = {
        let c = rusqlite::Connection::open(&same).expect("open");
        let n = c
            .query_row(
                "SELECT count(*) FROM store_vectors WHERE prefix LIKE 'docs%'",
                [],
                |r| r.get(0),
            )
            .expect("count");
        c.execute_batch(
            "DELETE FROM store_vectors WHERE prefix LIKE 'docs%'; \
             DELETE FROM store WHERE prefix LIKE 'docs%'",
        )
        .expect("delete");
        n
    };
    assert!(taken > 0);
    let (code, r, err) = migrate(s(&fixture("store-vec.sqlite")), s(&same), &[]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(r["store"]["vectors_copied"], json!(taken), "{r}");
    assert_eq!(vec_rows(&same), vec_rows(&fixture("store-vec.sqlite")));
    assert_eq!(
        sqlite_rows(&same),
        sqlite_rows(&fixture("store-vec.sqlite"))
    );
}

/// Every row of `store` in a SQLite file, as stored.
fn sqlite_rows(db: &Path) -> Vec<Vec<rusqlite::types::Value>> {
    let c = rusqlite::Connection::open(db).expect("open");
    let mut st = c
        .prepare(
            "SELECT prefix, key, value, typeof(value), created_at, updated_at, expires_at, ttl_minutes \
             FROM store ORDER BY prefix, key",
        )
        .expect("prepare");
    let rows = st
        .query_map([], |r| (0..8).map(|i| r.get(i)).collect())
        .expect("query");
    rows.collect::<Result<_, _>>().expect("rows")
}

/// `store namespaces` of `db`: each namespace with its item and expired counts.
fn namespace_counts(db: &str) -> Vec<Json> {
    common::run_json(&["store", "namespaces", "--db", db, "--format", "json"])
        .as_array()
        .expect("an array")
        .iter()
        .map(|n| json!([n["namespace"], n["items"], n["expired"]]))
        .collect()
}

#[test]
#[cfg_attr(
    not(feature = "env-tests"),
    ignore = "needs scripts/test.sh's environment (--features env-tests)"
)]
fn a_store_of_many_pages_moves_whole_and_resumes() {
    // 1,200 more items (three pages and more of 500), some expired, some with a TTL to come.
    let (dir, src) = temp_copy(&fixture("store.sqlite"));
    {
        let mut c = rusqlite::Connection::open(&src).expect("open");
        let tx = c.transaction().expect("tx");
        for i in 0..1200 {
            let (expires, ttl): (Option<&str>, Option<f64>) = match i % 3 {
                0 => (None, None),
                1 => (Some("2020-01-01 00:00:00.250000+00:00"), Some(5.0)),
                _ => (Some("2999-01-01 00:00:00+00:00"), Some(90.5)),
            };
            tx.execute(
                "INSERT INTO store (prefix, key, value, created_at, updated_at, expires_at, ttl_minutes) \
                 VALUES (?1, ?2, ?3, '2026-01-02 03:04:05', '2026-01-02 03:04:06', ?4, ?5)",
                rusqlite::params![
                    format!("bulk.n{}", i % 7),
                    format!("k{i:04}"),
                    format!("{{\"i\":{i},\"text\":\"item {i} ✓\"}}").into_bytes(),
                    expires,
                    ttl
                ],
            )
            .expect("insert");
        }
        tx.commit().expect("commit");
    }
    let file = dir.path().join("target.sqlite");
    let (code, r, err) = migrate(s(&src), s(&file), &[]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(r["store"]["copied"], json!(1215), "{r}");
    assert_eq!(r["store"]["namespaces"], json!(15), "{r}");
    assert_eq!(sqlite_rows(&file), sqlite_rows(&src), "every row as stored");
    // Half of the target gone (an interrupted run's state): the rest is copied, the others skipped.
    rusqlite::Connection::open(&file)
        .expect("open")
        .execute_batch("DELETE FROM store WHERE prefix IN ('bulk.n1', 'bulk.n2', 'bulk.n3')")
        .expect("delete");
    let (code, r, err) = migrate(s(&src), s(&file), &[]);
    assert_eq!(code, 0, "{err}");
    let gone = (0..1200).filter(|i| (1..=3).contains(&(i % 7))).count();
    assert_eq!(r["store"]["copied"], json!(gone), "{r}");
    assert_eq!(r["store"]["skipped"], json!(1215 - gone), "{r}");
    assert_eq!(sqlite_rows(&file), sqlite_rows(&src));
    // Into Postgres and back: the same namespaces, counts and expired items, the same rows.
    let pg = TestDb::empty_saver("mst_many");
    migrate_twice(s(&src), &pg.url, 1215);
    assert_eq!(namespace_counts(&pg.url), namespace_counts(s(&src)));
    let back = dir.path().join("back.sqlite");
    let (code, _, err) = migrate(&pg.url, s(&back), &[]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(namespace_counts(s(&back)), namespace_counts(s(&src)));
    let (code, r, _) = migrate(&pg.url, s(&src), &[]);
    assert_eq!(
        code, 3,
        "the 90.5-minute TTLs went into Postgres's INT column: {r}"
    );
    assert_eq!(r["store"]["differing"], json!(400), "{r}");
}

#[test]
#[cfg_attr(
    not(feature = "env-tests"),
    ignore = "needs scripts/test.sh's environment (--features env-tests)"
)]
fn a_postgres_store_at_an_unknown_level_is_refused() {
    let pg = TestDb::empty_saver("mst_level");
    let dump = std::fs::read_to_string(fixture("postgres-store.sql")).expect("the store dump");
    pg.client().batch_execute(&dump).expect("load the store");
    // (The dump empties its session's search_path: a new session.)
    let mut c = pg.client();
    c.batch_execute("INSERT INTO store_migrations (v) VALUES (99)")
        .expect("level 99");
    let rows = pg.rows_digest();
    let items: i64 = c
        .query_one("SELECT count(*) FROM store", &[])
        .expect("count")
        .get(0);
    let (code, _, err) = migrate(s(&fixture("store.sqlite")), &pg.url, &[]);
    assert_eq!(code, 1, "{err}");
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert!(err.contains("migration level 99"), "{err}");
    assert_eq!(pg.rows_digest(), rows, "no thread written");
    let after: i64 = c
        .query_one("SELECT count(*) FROM store", &[])
        .expect("count")
        .get(0);
    assert_eq!(after, items, "no item written");
}

#[test]
#[cfg_attr(
    not(feature = "env-tests"),
    ignore = "needs scripts/test.sh's environment (--features env-tests)"
)]
fn an_item_the_target_app_wrote_meanwhile_is_left_as_it_is() {
    // What `migrate` writes when the target's app wrote an item between memctl's read of the
    // target and its write: without --replace the app's item stays, and is handed back.
    let pg = TestDb::empty_saver("mst_race");
    let (dir, src) = temp_copy(&fixture("store.sqlite"));
    let file = dir.path().join("target.sqlite");
    for to in [s(&file), pg.url.as_str()] {
        let (code, _, err) = migrate(s(&src), to, &[]);
        assert_eq!(code, 0, "{err}");
        let mut store = common::store::open_rw(to);
        let mut row = store
            .rows("users.u-42.memories", &["food".to_owned()])
            .expect("read")
            .pop()
            .expect("the item");
        let before = lg("view", to, false);
        row.value = br#"{"text": "memctl's stale copy"}"#.to_vec();
        let mut fresh = row.clone();
        fresh.key = "fresh".into();
        let there = store
            .write_rows(&[row.clone(), fresh], false, &[])
            .expect("write");
        assert_eq!(
            there,
            [("users.u-42.memories".to_owned(), "food".to_owned())],
            "{to}"
        );
        drop(store);
        let after = lg("view", to, false);
        let items = |v: &Json| {
            v["namespaces"]
                .as_array()
                .expect("namespaces")
                .iter()
                .find(|n| n["namespace"] == json!(["users", "u-42", "memories"]))
                .map(|n| n["items"].clone())
                .expect("the namespace")
        };
        let food = |v: &Json| {
            items(v)
                .as_array()
                .expect("items")
                .iter()
                .find(|i| i["key"] == "food")
                .cloned()
        };
        assert_eq!(food(&after), food(&before), "{to}: the app's item stays");
        assert!(
            items(&after)
                .as_array()
                .expect("items")
                .iter()
                .any(|i| i["key"] == "fresh"),
            "{to}: the absent item is written"
        );
    }
}
