//! `migrate --to` and `copy --to` into a PostgreSQL database without PostgresSaver's tables
//! (#46): memctl makes them as `PostgresSaver.setup()` does, in the transaction of the first
//! thread it writes, in the schema of the target's URL (`?schema=`) or on its search_path, and
//! says so once. The tables, columns, defaults, constraints, indexes and `checkpoint_migrations`
//! rows are those a real `setup()` makes (compared in the catalog), a `setup()` called
//! afterwards changes nothing, real `PostgresSaver` reads every thread as the source and
//! continues it as on a database `setup()` made, and `PostgresStore` reads the Store. A target
//! at a lower level gets the missing migrations (`CREATE INDEX CONCURRENTLY` as `setup()` runs
//! it), an unknown higher level is refused, a dry run and a run that writes no thread create
//! nothing. Needs `MEMCTL_TEST_PG` and the pg venv (see tests/common/pg.rs).

mod common;
mod copy_common;

use std::path::{Path, PathBuf};

use common::pg::TestDb;
use common::{expected, fixture, memctl, run_parallel, s, Harness};
use copy_common::{memctl_ok, same, thread_ids};
use serde_json::{json, Value as Json};

/// The saver's and the Store's tables, as `setup()` makes them.
const TABLES: [&str; 6] = [
    "checkpoint_migrations",
    "checkpoints",
    "checkpoint_blobs",
    "checkpoint_writes",
    "store",
    "store_migrations",
];

/// `url` as psycopg opens it with `schema` first on the search_path (what an app configures
/// for a saver in another schema), and as memctl is given it (`?schema=`).
fn urls(url: &str, schema: Option<&str>) -> (String, String) {
    match schema {
        None => (url.to_owned(), url.to_owned()),
        Some(sc) => (
            format!("{url}?options=-csearch_path%3D{sc}"),
            format!("{url}?schema={sc}"),
        ),
    }
}

/// Every table and index of the database outside the server's own schemas, as `schema.name`.
fn relations(db: &TestDb) -> Vec<String> {
    db.client()
        .query(
            "SELECT n.nspname || '.' || c.relname FROM pg_class c \
             JOIN pg_namespace n ON n.oid = c.relnamespace \
             WHERE c.relkind IN ('r', 'i', 'S') \
               AND n.nspname NOT IN ('pg_catalog', 'information_schema', 'pg_toast') \
             ORDER BY 1",
            &[],
        )
        .expect("relations")
        .iter()
        .map(|r| r.get(0))
        .collect()
}

/// What the catalog says of `TABLES` in `schema`: each column (type, NOT NULL, default), each
/// constraint and index with its definition, whether each index is valid, and the levels of
/// both migrations tables. The schema's name is written `<schema>`, so that two schemas
/// compare.
fn catalog(db: &TestDb, schema: &str) -> Json {
    let mut c = db.client();
    let tables: Vec<&str> = TABLES.to_vec();
    let text = |sql: &str| -> Vec<String> {
        db.client()
            .query(sql, &[&schema, &tables])
            .unwrap_or_else(|e| panic!("{sql}: {e}"))
            .iter()
            .map(|r| {
                r.get::<_, String>(0)
                    .replace(&format!("{schema}."), "<schema>.")
            })
            .collect()
    };
    let columns = text(
        "SELECT c.relname || '.' || a.attname || ' ' || format_type(a.atttypid, a.atttypmod) \
                || CASE WHEN a.attnotnull THEN ' NOT NULL' ELSE '' END \
                || coalesce(' DEFAULT ' || pg_get_expr(d.adbin, d.adrelid), '') \
         FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid \
         JOIN pg_namespace n ON n.oid = c.relnamespace \
         LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum \
         WHERE n.nspname = $1 AND c.relname = ANY($2) AND a.attnum > 0 AND NOT a.attisdropped \
         ORDER BY c.relname, a.attnum",
    );
    let constraints = text(
        "SELECT c.relname || ' ' || k.conname || ' ' || pg_get_constraintdef(k.oid) \
         FROM pg_constraint k JOIN pg_class c ON c.oid = k.conrelid \
         JOIN pg_namespace n ON n.oid = c.relnamespace \
         WHERE n.nspname = $1 AND c.relname = ANY($2) ORDER BY 1",
    );
    let indexes = text(
        "SELECT indexdef FROM pg_indexes WHERE schemaname = $1 AND tablename = ANY($2) \
         ORDER BY indexname",
    );
    let valid = text(
        "SELECT i.relname || ' valid=' || x.indisvalid || ' ready=' || x.indisready \
         FROM pg_index x JOIN pg_class i ON i.oid = x.indexrelid \
         JOIN pg_class t ON t.oid = x.indrelid JOIN pg_namespace n ON n.oid = t.relnamespace \
         WHERE n.nspname = $1 AND t.relname = ANY($2) ORDER BY 1",
    );
    let mut levels = json!({});
    for t in ["checkpoint_migrations", "store_migrations"] {
        let exists: bool = c
            .query_one(
                "SELECT EXISTS (SELECT 1 FROM pg_tables WHERE schemaname = $1 AND tablename = $2)",
                &[&schema, &t],
            )
            .expect("exists")
            .get(0);
        if exists {
            let v: Vec<i32> = c
                .query(&format!("SELECT v FROM \"{schema}\".{t} ORDER BY v"), &[])
                .expect("levels")
                .iter()
                .map(|r| r.get(0))
                .collect();
            levels[t] = json!(v);
        }
    }
    json!({
        "columns": columns,
        "constraints": constraints,
        "indexes": indexes,
        "valid": valid,
        "levels": levels,
    })
}

/// `harness_pg.py setup` on `url` (a psycopg URL): `PostgresSaver.setup()` (up to level `upto`
/// when given), with `PostgresStore.setup()` when `store`.
fn lg_setup(url: &str, upto: Option<i32>, store: bool) {
    let upto = upto.map(|v| v.to_string());
    let mut args = vec!["setup", "--url", url];
    if let Some(v) = &upto {
        args.extend(["--upto", v]);
    }
    if store {
        args.push("--store");
    }
    Harness::new("pg", "harness_pg.py")
        .run(&args)
        .expect_json(&args);
}

/// What LangGraph shows of `thread` in `db` (a URL: PostgresSaver; else a SqliteSaver file).
fn history(db: &str, thread: &str) -> Result<Json, String> {
    history_of(db, thread, thread)
}

/// [`history`] of a thread whose graph is `graph`.
fn history_of(db: &str, thread: &str, graph: &str) -> Result<Json, String> {
    let (script, flag) = match db.starts_with("postgres") {
        true => ("harness_pg.py", "--url"),
        false => ("harness.py", "--db"),
    };
    Harness::new("pg", script)
        .run(&["history", flag, db, "--thread", thread, "--graph", graph])
        .json()
}

/// harness_pg.py `continue` on `url` (it writes there): what the fake model received, with the
/// ids a graph makes anew on every run (a summary's `uuid4`) blanked.
fn carry_on(url: &str, thread: &str) -> Result<Json, String> {
    carry_on_with(url, thread, thread)
}

/// [`carry_on`] of a thread whose graph is `graph`.
fn carry_on_with(url: &str, thread: &str, graph: &str) -> Result<Json, String> {
    let r = Harness::new("pg", "harness_pg.py")
        .run(&[
            "continue", "--url", url, "--thread", thread, "--graph", graph,
        ])
        .json()?;
    fn strip(j: &mut Json) {
        match j {
            Json::Object(o) => {
                if let Some(Json::String(id)) = o.get_mut("id") {
                    if id.len() == 36 && id.as_bytes().get(14) == Some(&b'4') {
                        *id = "<random>".into();
                    }
                }
                o.values_mut().for_each(strip);
            }
            Json::Array(a) => a.iter_mut().for_each(strip),
            _ => {}
        }
    }
    let mut received = r["model_received"].clone();
    strip(&mut received);
    Ok(received)
}

/// LangGraph's view of a Store (`harness_migrate_store.py view`).
fn store_view(db: &str) -> Json {
    let venv = if db.starts_with("postgres") {
        "pg"
    } else {
        "new"
    };
    let args = ["view", "--db", db];
    Harness::new(venv, "harness_migrate_store.py")
        .run(&args)
        .expect_json(&args)
}

/// `memctl ARGS --format json`: (exit code, report, stderr).
fn run_json(args: &[&str]) -> (i32, Json, String) {
    let out = memctl()
        .args(args)
        .args(["--format", "json"])
        .output()
        .expect("runs");
    (
        out.status.code().unwrap_or(-1),
        serde_json::from_slice(&out.stdout).unwrap_or(Json::Null),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// A source with the threads of new.sqlite (real LangGraph's, their graphs in
/// fixtures/graphs.py) and the Store of store.sqlite.
fn source_with_a_store(dir: &Path) -> PathBuf {
    let src = dir.join("src.sqlite");
    std::fs::copy(fixture("new.sqlite"), &src).expect("copy");
    memctl_ok(
        &[
            "migrate",
            "--db",
            s(&fixture("store.sqlite")),
            "--to",
            s(&src),
        ],
        None,
    )
    .unwrap_or_else(|e| panic!("{e}"));
    // store.sqlite's own thread has no graph in fixtures/graphs.py: out again.
    let c = rusqlite::Connection::open(&src).expect("open");
    c.execute_batch(
        "DELETE FROM writes WHERE thread_id = 't-1'; DELETE FROM checkpoints WHERE thread_id = 't-1'",
    )
    .expect("t-1 out");
    src
}

/// The `(checkpoint, channel)` pairs each thread of a migration report holds once per
/// version (see tests/copy_postgres.rs), to blank in both views.
fn shared_versions(report: &Json) -> std::collections::HashMap<String, Vec<(String, String)>> {
    report["threads"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|t| {
            let pairs = t["shared_versions"]
                .as_array()
                .into_iter()
                .flatten()
                .map(|v| {
                    let f = |k: &str| v[k].as_str().unwrap_or_default().to_owned();
                    (f("checkpoint_id"), f("channel"))
                })
                .collect();
            (t["thread"].as_str().unwrap_or_default().to_owned(), pairs)
        })
        .collect()
}

/// `j` (a history) without the values of `pairs`.
fn blanked(mut j: Json, pairs: &[(String, String)]) -> Json {
    for h in j["history"].as_array_mut().into_iter().flatten() {
        for (id, channel) in pairs {
            if h["checkpoint_id"] == id.as_str() {
                if let Some(v) = h["values"].as_object_mut() {
                    v.remove(channel);
                }
            }
        }
    }
    j
}

/// The saver set-up a report names: made from nothing in `schema`.
fn made_in(schema: &str) -> Json {
    json!({"created_tables": true, "schema": schema, "from_level": null, "to_level": 9})
}

#[test]
#[cfg_attr(
    not(feature = "env-tests"),
    ignore = "needs scripts/test.sh's environment (--features env-tests)"
)]
fn a_migration_into_an_empty_database_makes_the_tables_setup_makes() {
    let dir = tempfile::tempdir().expect("tempdir");
    let src = source_with_a_store(dir.path());
    let threads = thread_ids(&src);
    assert!(threads.len() >= 10, "{threads:?}");
    // The reference: an empty database set up by real LangGraph, then migrated into.
    let reference = TestDb::empty("setup_ref");
    lg_setup(&reference.url, None, true);
    let setup_made = catalog(&reference, "public");
    memctl_ok(&["migrate", "--db", s(&src), "--to", &reference.url], None)
        .unwrap_or_else(|e| panic!("{e}"));
    let src_views: Vec<(String, Json)> = threads
        .iter()
        .map(|t| {
            (
                t.clone(),
                history(s(&src), t).unwrap_or_else(|e| panic!("{e}")),
            )
        })
        .collect();
    let continued: std::collections::HashMap<String, Json> = threads
        .iter()
        .map(|t| {
            let r = carry_on(&reference.url, t).unwrap_or_else(|e| panic!("{e}"));
            (t.clone(), r)
        })
        .collect();
    for schema in [None, Some("lg_app")] {
        let db = TestDb::empty("setup_mig");
        if let Some(sc) = schema {
            db.client()
                .batch_execute(&format!("CREATE SCHEMA {sc}"))
                .expect("schema");
        }
        let (lg_url, to) = urls(&db.url, schema);
        let where_ = schema.unwrap_or("public");
        let before = relations(&db);
        // A dry run says the tables would be made, predicts the rest, and makes nothing.
        let (code, dry, err) = run_json(&["migrate", "--db", s(&src), "--to", &to, "--dry-run"]);
        assert_eq!(code, 0, "{err}");
        assert_eq!(dry["saver_setup"], made_in(where_), "{dry}");
        assert_eq!(dry["totals"]["copied"], threads.len(), "{dry}");
        assert_eq!(dry["store"]["copied"], 15, "{dry}");
        assert_eq!(relations(&db), before, "a dry run makes nothing");
        // The run: the tables made once, every thread and item copied.
        let (code, r, err) = run_json(&["migrate", "--db", s(&src), "--to", &to]);
        assert_eq!(code, 0, "{err}");
        assert_eq!(r["saver_setup"], made_in(where_), "{r}");
        assert_eq!(r["totals"]["copied"], threads.len(), "{r}");
        assert_eq!(r["store"]["copied"], 15, "{r}");
        // In that schema and nowhere else; as setup() makes them.
        let made = relations(&db);
        assert!(
            made.iter().all(|t| t.starts_with(&format!("{where_}."))),
            "{made:?}"
        );
        assert_eq!(
            catalog(&db, where_),
            setup_made,
            "{where_}: the tables setup() makes"
        );
        // setup() afterwards finds nothing to do, and neither does a second run.
        lg_setup(&lg_url, None, true);
        assert_eq!(
            catalog(&db, where_),
            setup_made,
            "{where_}: setup() changed it"
        );
        assert_eq!(relations(&db), made, "setup() made more");
        let (code, again, err) = run_json(&["migrate", "--db", s(&src), "--to", &to]);
        assert_eq!(code, 0, "{err}");
        assert_eq!(again["saver_setup"], Json::Null, "{again}");
        assert_eq!(again["totals"]["skipped"], threads.len(), "{again}");
        assert_eq!(again["store"]["skipped"], 15, "{again}");
        // PostgresStore reads the Store as the source's; PostgresSaver reads every thread as
        // the source, and continues it as on the database setup() made.
        assert_eq!(
            store_view(&lg_url),
            store_view(s(&src)),
            "{where_}: the Store"
        );
        let shared = shared_versions(&r);
        let cases: Vec<_> = src_views.clone();
        run_parallel(cases, |(thread, want)| {
            let pairs = shared.get(&thread).cloned().unwrap_or_default();
            let got = history(&lg_url, &thread)?;
            same(
                &format!("'{thread}' in {where_}"),
                blanked(want, &pairs),
                blanked(got, &pairs),
            )?;
            let went_on = carry_on(&lg_url, &thread)?;
            same(
                &format!("'{thread}' continued in {where_}"),
                continued[&thread].clone(),
                went_on,
            )
        });
    }
}

#[test]
#[cfg_attr(
    not(feature = "env-tests"),
    ignore = "needs scripts/test.sh's environment (--features env-tests)"
)]
fn a_copy_makes_the_tables_with_the_first_thread_it_writes() {
    let dir = tempfile::tempdir().expect("tempdir");
    let new = fixture("new.sqlite");
    // One thread, in a table report: the line said once, first.
    let db = TestDb::empty("setup_copy");
    let out = memctl_ok(
        &[
            "copy",
            "--db",
            s(&new),
            "--thread",
            "tools",
            "--to",
            &db.url,
            "--dry-run",
        ],
        None,
    )
    .unwrap_or_else(|e| panic!("{e}"));
    assert!(
        out.starts_with("would create PostgresSaver's tables in schema 'public'"),
        "{out}"
    );
    assert_eq!(
        relations(&db),
        Vec::<String>::new(),
        "a dry run makes nothing"
    );
    let out = memctl_ok(
        &[
            "copy",
            "--db",
            s(&new),
            "--thread",
            "tools",
            "--to",
            &db.url,
        ],
        None,
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(
        lines.first().copied(),
        Some("created PostgresSaver's tables in schema 'public' as PostgresSaver.setup() makes them (migration level 9)"),
        "{out}"
    );
    assert_eq!(out.matches("PostgresSaver's tables").count(), 1, "{out}");
    same(
        "'tools' copied",
        history(s(&new), "tools").unwrap_or_else(|e| panic!("{e}")),
        history(&db.url, "tools").unwrap_or_else(|e| panic!("{e}")),
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let (code, r, err) = run_json(&[
        "copy",
        "--db",
        s(&new),
        "--thread",
        "usage",
        "--to",
        &db.url,
    ]);
    assert_eq!(code, 0, "{err}");
    assert!(r.get("saver_setup").is_none(), "made once: {r}");
    let before = catalog(&db, "public");
    lg_setup(&db.url, None, false);
    assert_eq!(catalog(&db, "public"), before, "setup() afterwards");

    // copy --all whose first thread the target cannot hold (LangGraph.js's JSON checkpoints):
    // its transaction goes back with the tables, the next thread makes them.
    let mixed = dir.path().join("mixed.sqlite");
    std::fs::copy(&new, &mixed).expect("copy");
    memctl_ok(
        &[
            "copy",
            "--db",
            s(&fixture("js-delta.sqlite")),
            "--thread",
            "js-short",
            "--to",
            s(&mixed),
            "--to-thread",
            "0-js",
        ],
        None,
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let all = TestDb::empty("setup_copy_all");
    let (code, r, err) = run_json(&["copy", "--db", s(&mixed), "--all", "--to", &all.url]);
    assert_eq!(code, 3, "{err}");
    assert_eq!(r["left_out"][0]["thread"], "0-js", "{r}");
    assert_eq!(r["saver_setup"], made_in("public"), "{r}");
    let threads = r["threads"].as_array().expect("threads");
    assert_eq!(threads.len(), thread_ids(&new).len(), "{r}");
    assert!(
        threads.iter().all(|t| t.get("saver_setup").is_none()),
        "{r}"
    );
    assert_eq!(catalog(&all, "public"), before, "as setup() makes them");
    // A run that writes no thread makes nothing: the refused thread alone, copy and migrate.
    let none = TestDb::empty("setup_copy_none");
    let e = memctl_ok(
        &[
            "copy",
            "--db",
            s(&mixed),
            "--thread",
            "0-js",
            "--to",
            &none.url,
        ],
        None,
    )
    .expect_err("refused");
    assert!(e.contains("msgpack"), "{e}");
    let (code, r, err) = run_json(&[
        "migrate",
        "--db",
        s(&fixture("js-delta.sqlite")),
        "--to",
        &none.url,
    ]);
    assert_eq!(code, 3, "{err}");
    assert_eq!(r["saver_setup"], Json::Null, "{r}");
    assert_eq!(relations(&none), Vec::<String>::new(), "nothing made");
}

/// The threads of the committed PostgresSaver fixture that new.sqlite has not (its two
/// `legacy-` threads, written by an older saver), and their graphs.
fn legacy_threads() -> Vec<(String, String)> {
    expected("postgres")["threads"]
        .as_object()
        .expect("threads")
        .iter()
        .filter(|(t, _)| t.starts_with("legacy-"))
        .map(|(t, v)| (t.clone(), v["graph"].as_str().unwrap_or(t).to_owned()))
        .collect()
}

/// The rows of the fixture's [`legacy_threads`] in tables at level `upto`: made by real
/// `setup()` stopped there, the rows copied in by hand (`task_path`, which level 9 adds, left
/// out; the tables the level has not, left out). The fixture itself comes along, to compare.
fn fixture_at_level(hint: &str, upto: i32) -> (TestDb, TestDb) {
    let rows = TestDb::fixture(&format!("{hint}_rows"));
    let db = TestDb::empty(hint);
    lg_setup(&db.url, Some(upto), false);
    let (mut from, mut to) = (rows.client(), db.client());
    let tables = [
        ("checkpoints", "*", 1),
        ("checkpoint_blobs", "*", 2),
        (
            "checkpoint_writes",
            "thread_id, checkpoint_ns, checkpoint_id, task_id, idx, channel, type, blob",
            3,
        ),
    ];
    for (table, cols, level) in tables {
        if level > upto {
            continue;
        }
        let mut data = Vec::new();
        std::io::Read::read_to_end(
            &mut from
                .copy_out(&format!(
                    "COPY (SELECT {cols} FROM {table} WHERE thread_id LIKE 'legacy-%') TO STDOUT"
                ))
                .expect("copy out"),
            &mut data,
        )
        .expect("read");
        let target_cols = match cols {
            "*" => String::new(),
            c => format!("({c})"),
        };
        let mut w = to
            .copy_in(&format!("COPY {table} {target_cols} FROM STDIN"))
            .expect("copy in");
        std::io::Write::write_all(&mut w, &data).expect("write");
        w.finish().expect("finish");
    }
    (db, rows)
}

#[test]
#[cfg_attr(
    not(feature = "env-tests"),
    ignore = "needs scripts/test.sh's environment (--features env-tests)"
)]
fn a_target_at_a_lower_level_gets_the_missing_migrations() {
    let (db, original) = fixture_at_level("setup_level5", 5);
    let reference = TestDb::empty("setup_level_ref");
    lg_setup(&reference.url, None, false);
    let setup_made = catalog(&reference, "public");
    let new = fixture("new.sqlite");
    let at_5 = (catalog(&db, "public"), db.rows_digest());
    assert_eq!(
        at_5.0["levels"]["checkpoint_migrations"],
        json!([0, 1, 2, 3, 4, 5])
    );
    let upgraded =
        json!({"created_tables": false, "schema": "public", "from_level": 5, "to_level": 9});
    let (code, r, err) = run_json(&["migrate", "--db", s(&new), "--to", &db.url, "--dry-run"]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(r["saver_setup"], upgraded, "{r}");
    assert_eq!(
        (catalog(&db, "public"), db.rows_digest()),
        at_5,
        "a dry run changes nothing"
    );
    let (code, r, err) = run_json(&["migrate", "--db", s(&new), "--to", &db.url]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(r["saver_setup"], upgraded, "{r}");
    let threads = thread_ids(&new);
    assert_eq!(r["totals"]["copied"], threads.len(), "{r}");
    // The catalog of setup()'s level 9 (task_path added last, as setup() adds it).
    assert_eq!(catalog(&db, "public"), setup_made);
    lg_setup(&db.url, None, false);
    assert_eq!(catalog(&db, "public"), setup_made, "setup() afterwards");
    // The migrated threads read as the source; the threads that were there read as in the
    // fixture and continue as there.
    let shared = shared_versions(&r);
    run_parallel(threads, |thread| {
        let pairs = shared.get(&thread).cloned().unwrap_or_default();
        same(
            &format!("'{thread}' migrated into level 5"),
            blanked(history(s(&new), &thread)?, &pairs),
            blanked(history(&db.url, &thread)?, &pairs),
        )
    });
    let legacy = legacy_threads();
    assert_eq!(legacy.len(), 2, "{legacy:?}");
    run_parallel(legacy, |(thread, graph)| {
        same(
            &format!("'{thread}' there before"),
            history_of(&original.url, &thread, &graph)?,
            history_of(&db.url, &thread, &graph)?,
        )?;
        same(
            &format!("'{thread}' continued"),
            carry_on_with(&original.url, &thread, &graph)?,
            carry_on_with(&db.url, &thread, &graph)?,
        )
    });
}

#[test]
#[cfg_attr(
    not(feature = "env-tests"),
    ignore = "needs scripts/test.sh's environment (--features env-tests)"
)]
fn what_memctl_cannot_set_up_is_refused_before_anything_is_written() {
    let new = fixture("new.sqlite");
    // A level above memctl's: refused, one line, nothing written.
    let db = TestDb::empty("setup_level10");
    lg_setup(&db.url, None, false);
    db.client()
        .batch_execute("INSERT INTO checkpoint_migrations (v) VALUES (10)")
        .expect("a newer saver's level");
    let before = (catalog(&db, "public"), db.rows_digest());
    for args in [
        vec!["migrate", "--db", s(&new), "--to", &db.url],
        vec![
            "copy",
            "--db",
            s(&new),
            "--thread",
            "tools",
            "--to",
            &db.url,
        ],
    ] {
        let e = memctl_ok(&args, None).expect_err("refused");
        assert_eq!(e.trim().lines().count(), 1, "{e}");
        assert!(e.contains("level 10"), "{e}");
        assert_eq!(
            (catalog(&db, "public"), db.rows_digest()),
            before,
            "{args:?}"
        );
    }
    // Tables setup() had not finished making, with rows in them: refused, left alone.
    let (half, _rows) = fixture_at_level("setup_level2", 2);
    let before = relations(&half);
    let e = memctl_ok(&["migrate", "--db", s(&new), "--to", &half.url], None).expect_err("refused");
    assert!(e.contains("level 2") && e.contains("setup()"), "{e}");
    assert_eq!(relations(&half), before);
    // A schema that is not there: refused in the dry run too, nothing made.
    let empty = TestDb::empty("setup_noschema");
    for dry in [true, false] {
        let to = format!("{}?schema=nowhere", empty.url);
        let mut args = vec!["migrate", "--db", s(&new), "--to", &to];
        if dry {
            args.push("--dry-run");
        }
        let e = memctl_ok(&args, None).expect_err("refused");
        assert_eq!(e.trim().lines().count(), 1, "{e}");
        assert!(e.contains("no schema 'nowhere'"), "{e}");
        assert_eq!(relations(&empty), Vec::<String>::new());
    }
    // --schema names --db's schema: with a SQLite --db, a usage error saying where the
    // target's goes.
    let out = memctl()
        .args([
            "migrate",
            "--db",
            s(&new),
            "--schema",
            "lg_app",
            "--to",
            &empty.url,
        ])
        .output()
        .expect("runs");
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("?schema=lg_app"), "{err}");
    assert_eq!(relations(&empty), Vec::<String>::new());
}
