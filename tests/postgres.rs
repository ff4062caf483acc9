//! memctl on `PostgresSaver` databases (a real PostgreSQL server: `MEMCTL_TEST_PG`, started by
//! scripts/test.sh). Read side: every read command on the committed dump (written by real
//! LangGraph, fixtures/generate_pg.py) gives what it gives on the SQLite mirror of the same
//! checkpoints as LangGraph's own loader assembled them, and the messages equal `get_state`.
//! Errors: one line, non-zero exit, never a password.

mod common;

use common::delta_states;
use common::pg::{self, TestDb};
use common::{expected, fixture, memctl, run_json, run_ok, s};
use serde_json::Value as Json;

fn threads() -> Vec<String> {
    expected("postgres")["threads"]
        .as_object()
        .expect("threads")
        .keys()
        .cloned()
        .collect()
}

/// Every row of the saver's tables, for "nothing changed" checks.
fn fingerprint(db: &TestDb) -> String {
    let mut c = db.client();
    let mut out = String::new();
    for sql in [
        "SELECT md5(string_agg(thread_id || checkpoint_ns || checkpoint_id || COALESCE(parent_checkpoint_id, '') || checkpoint::text || metadata::text, '|' ORDER BY thread_id, checkpoint_ns, checkpoint_id)) FROM checkpoints",
        "SELECT md5(string_agg(thread_id || checkpoint_ns || channel || version || type || COALESCE(encode(blob, 'hex'), ''), '|' ORDER BY thread_id, checkpoint_ns, channel, version)) FROM checkpoint_blobs",
        "SELECT md5(string_agg(thread_id || checkpoint_ns || checkpoint_id || task_id || idx || channel || COALESCE(type, '') || encode(blob, 'hex') || task_path, '|' ORDER BY thread_id, checkpoint_ns, checkpoint_id, task_id, idx)) FROM checkpoint_writes",
    ] {
        let v: Option<String> = c.query_one(sql, &[]).expect(sql).get(0);
        out.push_str(&v.unwrap_or_default());
    }
    out
}

#[test]
fn read_commands_on_postgres_equal_the_sqlite_mirror() {
    let db = TestDb::fixture("reads");
    let mirror = fixture("postgres-mirror.sqlite");
    let before = fingerprint(&db);
    let mut failures = Vec::new();
    for thread in threads() {
        let commands: Vec<Vec<&str>> = vec![
            vec!["history"],
            vec!["show"],
            vec!["dump"],
            vec!["tokens"],
            vec!["diff"],
        ];
        // Text output too: the same table, chat and counts, byte for byte.
        for cmd in commands {
            for format in ["table", "json"] {
                let mut args = cmd.clone();
                args.extend(["--thread", &thread, "--format", format]);
                let mut on_pg = args.clone();
                on_pg.extend(["--db", &db.url]);
                let mut on_lite = args.clone();
                on_lite.extend(["--db", s(&mirror)]);
                let (a, b) = (run_ok(&on_pg), run_ok(&on_lite));
                if a != b {
                    failures.push(format!(
                        "{thread} {args:?}:\n postgres: {a}\n sqlite:   {b}"
                    ));
                }
            }
        }
        // dump --raw: the same values; Postgres returns JSONB keys in its own order.
        let raw = |db: &str| run_json(&["dump", "--raw", "--thread", &thread, "--db", db]);
        if raw(&db.url) != raw(s(&mirror)) {
            failures.push(format!("{thread} dump --raw differs"));
        }
        // Subgraph namespaces.
        let namespaces = run_json(&[
            "history", "--thread", &thread, "--db", &db.url, "--format", "json",
        ]);
        for row in namespaces.as_array().into_iter().flatten() {
            for ns in row["namespaces"].as_array().into_iter().flatten() {
                let ns = ns.as_str().unwrap_or_default();
                let a = run_ok(&["show", "--thread", &thread, "--ns", ns, "--db", &db.url]);
                let b = run_ok(&["show", "--thread", &thread, "--ns", ns, "--db", s(&mirror)]);
                if a != b {
                    failures.push(format!("{thread} --ns {ns}: show differs"));
                }
            }
        }
    }
    // Whole-database commands; byte sizes differ by design (JSONB and blob rows vs msgpack).
    let strip = |mut v: Json| {
        for row in v.as_array_mut().into_iter().flatten() {
            if let Some(o) = row.as_object_mut() {
                o.remove("bytes");
            }
        }
        v
    };
    for cmd in [vec!["threads", "list"], vec!["tokens", "--all"]] {
        // One clock for both runs (ages are in seconds; a loaded machine can straddle one).
        let mut cmd = cmd.clone();
        cmd.extend(["--now", "2026-12-02T00:00:00Z"]);
        let mut a = cmd.clone();
        a.extend(["--format", "json", "--db", &db.url]);
        let mut b = cmd.clone();
        b.extend(["--format", "json", "--db", s(&mirror)]);
        if strip(run_json(&a)) != strip(run_json(&b)) {
            failures.push(format!("{cmd:?} differs"));
        }
    }
    // `--sort updated --limit N` reads only the newest threads: exactly the head of the list.
    let sorted = |limit: Option<&str>| {
        let mut args = vec![
            "--now",
            "2026-12-02T00:00:00Z",
            "threads",
            "list",
            "--db",
            &db.url,
        ];
        args.extend(["--sort", "updated", "--format", "json"]);
        args.extend(limit.map(|n| ["--limit", n]).into_iter().flatten());
        run_json(&args).as_array().cloned().unwrap_or_default()
    };
    let all = sorted(None);
    for n in 0..=all.len() + 1 {
        let head: Vec<Json> = all.iter().take(n).cloned().collect();
        if sorted(Some(&n.to_string())) != head {
            failures.push(format!(
                "threads list --sort updated --limit {n} is not the head"
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
    assert_eq!(
        before,
        fingerprint(&db),
        "read commands changed the database"
    );
}

#[test]
fn messages_equal_langgraph_get_state() {
    let db = TestDb::fixture("get_state");
    let exp = expected("postgres");
    for thread in threads() {
        let dumped = run_json(&["dump", "--thread", &thread, "--db", &db.url]);
        let want = &exp["threads"][&thread]["messages"];
        assert_eq!(&dumped, want, "{thread}: dump differs from get_state");
        let history = run_json(&[
            "history", "--thread", &thread, "--db", &db.url, "--format", "json",
        ]);
        assert_eq!(
            history.as_array().map(Vec::len),
            exp["threads"][&thread]["history"]
                .as_u64()
                .map(|n| n as usize),
            "{thread}: history length differs from get_state_history"
        );
    }
    // Both layouts are in the dump: the legacy threads keep every value in blobs.
    let legacy = db.count(
        "SELECT count(*) FROM checkpoint_blobs WHERE thread_id LIKE 'legacy-%' AND type = 'empty'",
    );
    assert!(legacy > 0, "the legacy layout has 'empty' rows");
    let inline = db.count(
        "SELECT count(*) FROM checkpoints WHERE thread_id = 'custom-state' AND checkpoint -> 'channel_values' ? 'counter'",
    );
    assert!(inline > 0, "the current layout keeps primitives inline");
}

/// The `postgres` part of `stats --format json`.
fn pg_stats(db: &TestDb) -> Json {
    let st = run_json(&["stats", "--db", &db.url, "--format", "json"]);
    st["postgres"].clone()
}

/// The row of `table` in the report's `tables`.
fn table_stats<'a>(pg: &'a Json, table: &str) -> &'a Json {
    pg["tables"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|t| t["table"] == table)
        .unwrap_or_else(|| panic!("no {table} in {pg}"))
}

/// Waits until the server's statistics count `n` dead rows in `table` (they arrive as the
/// deleting session reports them).
fn wait_for_dead_rows(db: &TestDb, table: &str, n: i64) {
    let sql = format!(
        "SELECT COALESCE(max(n_dead_tup), 0) FROM pg_stat_user_tables WHERE relname = '{table}'"
    );
    for _ in 0..100 {
        if db.count(&sql) >= n {
            return;
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    panic!("the server never counted {n} dead rows in {table}");
}

#[test]
fn stats_reports_the_tables() {
    let db = TestDb::fixture("stats");
    // Autovacuum would reset the dead-row counts (and resize the tables) at its own moment.
    db.client()
        .batch_execute(
            "ALTER TABLE checkpoints SET (autovacuum_enabled = false); \
             ALTER TABLE checkpoint_blobs SET (autovacuum_enabled = false); \
             ALTER TABLE checkpoint_writes SET (autovacuum_enabled = false);",
        )
        .expect("autovacuum off");
    let out = run_ok(&["stats", "--db", &db.url]);
    assert!(out.contains("15 threads"), "{out}");
    assert!(out.contains("VACUUM would not help now"), "{out}");
    let pg = pg_stats(&db);
    // Sizes are the server's own.
    for table in ["checkpoints", "checkpoint_blobs", "checkpoint_writes"] {
        let t = table_stats(&pg, table);
        let total = db.count(&format!("SELECT pg_total_relation_size('{table}')"));
        let indexes = db.count(&format!("SELECT pg_indexes_size('{table}')"));
        assert_eq!(t["total_bytes"], total, "{table}: {t}");
        assert_eq!(t["index_bytes"], indexes, "{table}: {t}");
        assert!(indexes > 0, "every table has its primary key");
        assert_eq!(t["dead_rows"], 0, "{table}: {t}");
    }
    assert_eq!(pg["vacuum_would_help"], false);
    // Blob bytes per channel are the rows' bytes.
    let messages = pg["blob_bytes_by_channel"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|c| c["channel"] == "messages")
        .cloned()
        .unwrap_or_else(|| panic!("no messages blobs: {pg}"));
    assert_eq!(
        messages["bytes"],
        db.count("SELECT sum(octet_length(blob))::bigint FROM checkpoint_blobs WHERE channel = 'messages'")
    );
    assert_eq!(
        messages["rows"],
        db.count("SELECT count(*) FROM checkpoint_blobs WHERE channel = 'messages'")
    );
    assert_eq!(
        pg["orphaned_blobs"]["rows"], 0,
        "the saver names every blob it wrote"
    );
    // An orphaned blob (a version no checkpoint names) and an orphaned write (its checkpoint
    // gone), made by hand, are counted with their bytes.
    let mut c = db.client();
    c.batch_execute(
        "INSERT INTO checkpoint_blobs (thread_id, checkpoint_ns, channel, version, type, blob) \
         VALUES ('1', '', 'messages', '99.0.0', 'msgpack', decode(repeat('90', 1000), 'hex')); \
         INSERT INTO checkpoint_writes (thread_id, checkpoint_ns, checkpoint_id, task_id, idx, channel, type, blob, task_path) \
         VALUES ('1', '', 'no-such-checkpoint', 't', 0, 'messages', 'msgpack', '\\x90', '')",
    )
    .expect("orphans by hand");
    let pg = pg_stats(&db);
    assert_eq!(pg["orphaned_blobs"]["rows"], 1, "{pg}");
    assert_eq!(pg["orphaned_blobs"]["bytes"], 1000, "{pg}");
    let st = run_json(&["stats", "--db", &db.url, "--format", "json"]);
    assert_eq!(st["orphans"]["writes_without_checkpoint"], 1, "{st}");
    let out = run_ok(&["stats", "--db", &db.url]);
    assert!(
        out.contains("1 writes without their checkpoint, 1 blobs no checkpoint names (1000 B)"),
        "{out}"
    );
    // Deleted rows are dead rows until a VACUUM: stats says a VACUUM would help, and after one
    // that it would not.
    let deleted = c
        .execute(
            "DELETE FROM checkpoint_writes WHERE thread_id = 'tools'",
            &[],
        )
        .expect("delete");
    assert!(deleted > 0);
    c.batch_execute("SELECT pg_stat_force_next_flush()")
        .expect("flush");
    drop(c);
    wait_for_dead_rows(&db, "checkpoint_writes", deleted as i64);
    let pg = pg_stats(&db);
    let writes = table_stats(&pg, "checkpoint_writes");
    assert!(
        writes["dead_rows"].as_i64() >= Some(deleted as i64),
        "{writes}"
    );
    assert_eq!(pg["vacuum_would_help"], true, "{pg}");
    let out = run_ok(&["stats", "--db", &db.url]);
    assert!(
        out.contains("VACUUM would help: dead rows in checkpoint_writes"),
        "{out}"
    );
    db.client()
        .batch_execute("VACUUM checkpoint_writes")
        .expect("vacuum");
    let pg = pg_stats(&db);
    assert_eq!(
        table_stats(&pg, "checkpoint_writes")["dead_rows"],
        0,
        "{pg}"
    );
    assert_eq!(pg["vacuum_would_help"], false, "{pg}");
}

/// One line on stderr, exit 1, no panic, and never the password.
fn fails_cleanly(args: &[&str], password: &str) -> String {
    let out = memctl().args(args).output().expect("runs");
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert_eq!(out.status.code(), Some(1), "{args:?}: {stderr}");
    assert_eq!(stderr.trim_end().lines().count(), 1, "{args:?}: {stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    if !password.is_empty() {
        assert!(
            !stderr.contains(password) && !stdout.contains(password),
            "the password leaked: {stderr}"
        );
    }
    stderr
}

#[test]
fn bad_urls_missing_tables_and_unknown_migrations_fail_in_one_line() {
    let admin = pg::admin_url();
    // A port nothing listens on, with a password in the URL.
    let refused = "postgresql://bob:Sup3rSecretPw@127.0.0.1:1/app";
    let e = fails_cleanly(&["threads", "list", "--db", refused], "Sup3rSecretPw");
    assert!(
        e.contains("cannot connect") && e.contains("bob:***@"),
        "{e}"
    );
    // The same through MEMCTL_DB, and as a password parameter.
    let out = memctl()
        .args(["history", "--thread", "1"])
        .env(
            "MEMCTL_DB",
            "postgres://bob@127.0.0.1:1/app?password=Sup3rSecretPw",
        )
        .output()
        .expect("runs");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        !stderr.contains("Sup3rSecretPw") && stderr.contains("password=***"),
        "{stderr}"
    );
    // A database that does not exist (the server answers; the password is still hidden).
    let with_pw =
        pg::with_db(&admin, "no_such_db").replacen("postgres@", "postgres:Sup3rSecretPw@", 1);
    let e = fails_cleanly(&["threads", "list", "--db", &with_pw], "Sup3rSecretPw");
    assert!(e.contains("no_such_db"), "{e}");
    // A database without the saver's tables.
    let empty = TestDb::empty("no_tables");
    let e = fails_cleanly(&["threads", "list", "--db", &empty.url], "");
    assert!(e.contains("not a PostgresSaver database"), "{e}");
    // A migration level memctl does not know (a newer saver).
    let newer = TestDb::fixture("newer");
    newer
        .client()
        .batch_execute("INSERT INTO checkpoint_migrations (v) VALUES (10)")
        .expect("insert");
    let e = fails_cleanly(&["threads", "list", "--db", &newer.url], "");
    assert!(e.contains("migration level 10"), "{e}");
    let e = fails_cleanly(
        &["trim", "--thread", "1", "--keep", "2", "--db", &newer.url],
        "",
    );
    assert!(e.contains("migration level 10"), "{e}");
    // A bad sslmode.
    let bad = format!("{}?sslmode=sometimes", pg::with_db(&admin, "x"));
    let e = fails_cleanly(&["threads", "list", "--db", &bad], "");
    assert!(e.contains("sslmode"), "{e}");
}

#[test]
fn libpq_conventions_unix_socket_pgpassword_schema() {
    let db = TestDb::fixture("libpq");
    // The unix socket the test server listens on (scripts/pg.sh puts it beside the data).
    let mut c = db.client();
    let dir: String = c
        .query_one("SELECT current_setting('unix_socket_directories')", &[])
        .expect("socket dir")
        .get(0);
    let port: String = c
        .query_one("SELECT current_setting('port')", &[])
        .expect("port")
        .get(0);
    let dir = dir.split(',').next().unwrap_or_default().trim().to_owned();
    let encoded = dir.replace('/', "%2F");
    let via_socket = format!("postgresql://postgres@{encoded}:{port}/{}", db.name);
    let rows = run_json(&["threads", "list", "--db", &via_socket, "--format", "json"]);
    assert_eq!(rows.as_array().map(Vec::len), Some(15));
    let via_param = format!(
        "postgresql:///{}?host={dir}&port={port}&user=postgres",
        db.name
    );
    let rows = run_json(&["threads", "list", "--db", &via_param, "--format", "json"]);
    assert_eq!(rows.as_array().map(Vec::len), Some(15));
    // PGPASSWORD and a .pgpass that others can read do not break a trust server.
    let out = memctl()
        .args(["threads", "list", "--db", &db.url])
        .env("PGPASSWORD", "unused-here")
        .output()
        .expect("runs");
    assert!(out.status.success());
    // A saver configured with a schema (LangGraph.js's `schema` option).
    c.batch_execute(
        "CREATE SCHEMA langgraph; \
         ALTER TABLE checkpoints SET SCHEMA langgraph; ALTER TABLE checkpoint_blobs SET SCHEMA langgraph; \
         ALTER TABLE checkpoint_writes SET SCHEMA langgraph; ALTER TABLE checkpoint_migrations SET SCHEMA langgraph;",
    )
    .expect("move to a schema");
    let e = fails_cleanly(&["threads", "list", "--db", &db.url], "");
    assert!(
        e.contains("--schema NAME") && e.contains("schema=NAME"),
        "{e}"
    );
    let in_schema = format!("{}?schema=langgraph", db.url);
    let rows = run_json(&["threads", "list", "--db", &in_schema, "--format", "json"]);
    assert_eq!(rows.as_array().map(Vec::len), Some(15));
}

/// Moves the saver's four tables of `db` into a new schema `schema`.
fn move_to_schema(db: &TestDb, schema: &str) {
    db.client()
        .batch_execute(&format!(
            "CREATE SCHEMA {schema}; \
             ALTER TABLE checkpoints SET SCHEMA {schema}; ALTER TABLE checkpoint_blobs SET SCHEMA {schema}; \
             ALTER TABLE checkpoint_writes SET SCHEMA {schema}; ALTER TABLE checkpoint_migrations SET SCHEMA {schema};"
        ))
        .expect("move to a schema");
}

/// `--schema NAME` (and MEMCTL_SCHEMA) for a saver configured with a schema: reads and
/// rewrites go to that schema's tables and nowhere else; the URL's `schema=` must agree; a
/// SQLite file refuses it.
#[test]
fn schema_flag_reads_and_rewrites_the_savers_schema() {
    let db = TestDb::fixture("schema_flag");
    move_to_schema(&db, "lg_app");
    let in_schema = |sql: &str| db.count(&sql.replace("{s}", "lg_app"));
    // A read: the same threads and messages as the fixture has.
    let rows = run_json(&[
        "threads", "list", "--db", &db.url, "--schema", "lg_app", "--format", "json",
    ]);
    assert_eq!(rows.as_array().map(Vec::len), Some(15), "{rows}");
    let dumped = run_json(&[
        "dump", "--thread", "1", "--db", &db.url, "--schema", "lg_app",
    ]);
    assert_eq!(dumped, expected("postgres")["threads"]["1"]["messages"]);
    // The same through MEMCTL_SCHEMA, and with the URL naming the same schema.
    let out = memctl()
        .args(["threads", "list", "--db", &db.url, "--format", "json"])
        .env("MEMCTL_SCHEMA", "lg_app")
        .output()
        .expect("runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let same = format!("{}?schema=lg_app", db.url);
    run_ok(&["threads", "list", "--db", &same, "--schema", "lg_app"]);
    // A rewrite: one new checkpoint in lg_app, the trimmed state read back through --schema.
    let before = in_schema("SELECT count(*) FROM {s}.checkpoints WHERE thread_id = '1'");
    run_ok(&[
        "trim", "--thread", "1", "--keep", "2", "--db", &db.url, "--schema", "lg_app",
    ]);
    assert_eq!(
        in_schema("SELECT count(*) FROM {s}.checkpoints WHERE thread_id = '1'"),
        before + 1
    );
    let trimmed = run_json(&[
        "dump", "--thread", "1", "--db", &db.url, "--schema", "lg_app",
    ]);
    assert_eq!(trimmed.as_array().map(Vec::len), Some(2), "{trimmed}");
    assert_eq!(
        db.count("SELECT count(*) FROM pg_tables WHERE schemaname = 'public' AND tablename LIKE 'checkpoint%'"),
        0,
        "nothing made in public"
    );
    // A URL naming another schema: a usage error, nothing read.
    let other = format!("{}?schema=elsewhere", db.url);
    let out = memctl()
        .args(["threads", "list", "--db", &other, "--schema", "lg_app"])
        .output()
        .expect("runs");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("schema=elsewhere") && stderr.contains("'lg_app'"),
        "{stderr}"
    );
    // A schema that does not exist: one line.
    let e = fails_cleanly(
        &["threads", "list", "--db", &db.url, "--schema", "nope"],
        "",
    );
    assert!(e.contains("schema 'nope'"), "{e}");
    // A SQLite file has no schemas.
    let file = fixture("postgres-mirror.sqlite");
    let out = memctl()
        .args(["threads", "list", "--db", s(&file), "--schema", "lg_app"])
        .output()
        .expect("runs");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("SQLite"), "{stderr}");
}

/// sslmode as libpq means it, against the test server's TLS (scripts/pg.sh: a certificate for
/// 'localhost' issued by a test CA; role tls_only may connect over TLS only).
#[test]
fn sslmodes_encrypt_and_verify_as_libpq_does() {
    let db = TestDb::fixture("tls");
    let mut c = db.client();
    c.batch_execute(
        "DO $$ BEGIN IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'tls_only') \
         THEN CREATE ROLE tls_only LOGIN SUPERUSER; END IF; END $$",
    )
    .expect("role");
    let cert: String = c
        .query_one(
            "SELECT current_setting('data_directory') || '/root.crt'",
            &[],
        )
        .expect("cert path")
        .get(0);
    let port: String = c
        .query_one("SELECT current_setting('port')", &[])
        .expect("port")
        .get(0);
    let url = |host: &str, params: &str| {
        format!("postgresql://tls_only@{host}:{port}/{}?{params}", db.name)
    };
    let lists = |u: &str| {
        let rows = run_json(&["threads", "list", "--db", u, "--format", "json"]);
        assert_eq!(rows.as_array().map(Vec::len), Some(15), "{u}");
    };
    // Without TLS the server turns this role away: so a success below went over TLS.
    let e = fails_cleanly(
        &[
            "threads",
            "list",
            "--db",
            &url("127.0.0.1", "sslmode=disable"),
        ],
        "",
    );
    assert!(e.contains("no encryption"), "{e}");
    lists(&url("127.0.0.1", "sslmode=require"));
    lists(&url("127.0.0.1", "sslmode=prefer"));
    lists(&url(
        "localhost",
        &format!("sslmode=verify-full&sslrootcert={cert}"),
    ));
    lists(&url(
        "127.0.0.1",
        &format!("sslmode=verify-ca&sslrootcert={cert}"),
    ));
    // verify-full checks the name: the certificate names localhost, not 127.0.0.1.
    let e = fails_cleanly(
        &[
            "threads",
            "list",
            "--db",
            &url(
                "127.0.0.1",
                &format!("sslmode=verify-full&sslrootcert={cert}"),
            ),
        ],
        "",
    );
    assert!(e.contains("cannot connect"), "{e}");
    // verify-ca without a root certificate: says what is missing.
    let out = memctl()
        .args([
            "threads",
            "list",
            "--db",
            &url("localhost", "sslmode=verify-ca"),
        ])
        .env("HOME", "/nonexistent")
        .output()
        .expect("runs");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr.contains("sslrootcert"), "{stderr}");
    // PGSSLMODE is the default when the URL says nothing.
    let out = memctl()
        .args([
            "threads",
            "list",
            "--format",
            "json",
            "--db",
            &url("127.0.0.1", ""),
        ])
        .env("PGSSLMODE", "disable")
        .output()
        .expect("runs");
    assert_eq!(out.status.code(), Some(1), "PGSSLMODE=disable is used");
}

/// DeltaChannel threads on Postgres (fixtures/postgres-delta.sql: the threads of
/// delta.sqlite written by PostgresSaver, where a snapshot is an inline JSONB `true` and a
/// blob row holding the `_DeltaSnapshot`): every checkpoint of every thread shows what
/// LangGraph's `get_state_history` shows through PostgresSaver
/// (fixtures/expected/postgres-delta.json), in dump, show, history, tokens, threads list and
/// find, and reading changes nothing.
#[test]
fn delta_threads_read_as_langgraph_shows_them() {
    let db = TestDb::delta_fixture("delta_reads");
    let states = expected("postgres-delta");
    let before = fingerprint(&db);
    let (searched, find_failures) = delta_states::check_find(&db.url, &states);
    assert!(searched >= 6, "threads searched: {searched}");
    delta_states::check(&db.url, &states).assert_complete(find_failures);
    // The layout the fixture is about: snapshots inline `true` with the value in a blob row.
    let snapshots = db.count(
        "SELECT count(*) FROM checkpoints c JOIN checkpoint_blobs b ON b.thread_id = c.thread_id \
         AND b.checkpoint_ns = c.checkpoint_ns AND b.channel = 'messages' \
         AND b.version = c.checkpoint -> 'channel_versions' ->> 'messages' \
         WHERE c.checkpoint -> 'channel_values' -> 'messages' = 'true'::jsonb",
    );
    assert!(snapshots > 5, "messages snapshots: {snapshots}");
    assert_eq!(
        before,
        fingerprint(&db),
        "read commands changed the database"
    );
}

// ---- encrypted (EncryptedSerializer) databases: fixtures/postgres-encrypted.sql -------------

/// memctl with `key` in LANGGRAPH_AES_KEY (none: the variable unset).
fn with_key(key: Option<&str>, args: &[&str]) -> std::process::Output {
    let mut cmd = memctl();
    cmd.env_remove("LANGGRAPH_AES_KEY").args(args);
    if let Some(k) = key {
        cmd.env("LANGGRAPH_AES_KEY", k);
    }
    cmd.output().expect("runs")
}

/// With the app's key every read gives what LangGraph's encrypting saver gives (plain and
/// encrypted rows mixed in one thread too); without it, or with another key, one line that
/// says which, exit 1; `threads list` needs no key.
#[test]
fn encrypted_postgres_reads_equal_langgraph_with_the_key() {
    let db = TestDb::encrypted("enc_reads");
    let exp = expected("postgres-encrypted");
    let key = exp["encryption"]["key"].as_str().expect("key");
    let before = fingerprint(&db);
    for (thread, want) in exp["threads"].as_object().expect("threads") {
        let out = with_key(Some(key), &["dump", "--thread", thread, "--db", &db.url]);
        assert!(
            out.status.success(),
            "{thread}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let dumped: Json = serde_json::from_slice(&out.stdout).expect("json");
        assert_eq!(dumped, want["messages"], "{thread}");
        let out = with_key(
            Some(key),
            &[
                "history", "--thread", thread, "--db", &db.url, "--format", "json",
            ],
        );
        let history: Json = serde_json::from_slice(&out.stdout).expect("json");
        assert_eq!(
            history.as_array().map(Vec::len),
            want["history"].as_u64().map(|n| n as usize),
            "{thread}"
        );
    }
    // Without the key: one line naming the variable; with another key: it does not decrypt.
    let out = with_key(None, &["dump", "--thread", "1", "--db", &db.url]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert_eq!(stderr.trim_end().lines().count(), 1, "{stderr}");
    assert!(stderr.contains("set LANGGRAPH_AES_KEY"), "{stderr}");
    let out = with_key(
        Some("another-key-of-32-bytes-length!!"),
        &["trim", "--thread", "1", "--keep", "2", "--db", &db.url],
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("does not decrypt"), "{stderr}");
    assert!(!stderr.contains(key), "the key leaked: {stderr}");
    let out = with_key(
        None,
        &["threads", "list", "--db", &db.url, "--format", "json"],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let rows: Json = serde_json::from_slice(&out.stdout).expect("json");
    assert_eq!(rows.as_array().map(Vec::len), Some(8), "{rows}");
    assert_eq!(before, fingerprint(&db), "nothing written");
}

/// Bad input on a Postgres DeltaChannel thread (#16), as on SQLite (tests/delta.rs): thread
/// "1"'s chain broken by hand three ways — the seed's checkpoint row deleted, a write row that
/// does not decode, the seed snapshot's blob row holding no list — is one clear line naming
/// the checkpoint and a non-zero exit for every read command and for trim, and nothing is
/// written.
#[test]
fn a_broken_delta_chain_on_postgres_is_one_clear_error() {
    let probe = TestDb::delta_fixture("delta_bad_probe");
    let history = run_json(&["history", "--db", &probe.url, "1", "--format", "json"]);
    let parent = history[0]["parent_checkpoint_id"]
        .as_str()
        .expect("parent")
        .to_owned();
    let snapshot = probe.count(&format!(
        "SELECT count(*) FROM checkpoints WHERE thread_id = '1' AND checkpoint_id = '{parent}' \
         AND checkpoint -> 'channel_values' -> 'messages' = 'true'"
    ));
    assert_eq!(snapshot, 1, "the parent holds the seed snapshot");
    let cases = [
        (
            format!("DELETE FROM checkpoints WHERE thread_id = '1' AND checkpoint_id = '{parent}'"),
            vec![parent.clone(), "missing".to_owned()],
        ),
        (
            format!(
                "UPDATE checkpoint_writes SET blob = '\\xc1'::bytea WHERE thread_id = '1' \
                 AND checkpoint_id = '{parent}' AND channel = 'messages'"
            ),
            vec![parent.clone(), "cannot decode".to_owned()],
        ),
        (
            // fixext1, code 7 (_DeltaSnapshot), payload: the int 5.
            format!(
                "UPDATE checkpoint_blobs b SET blob = '\\xd40705'::bytea FROM checkpoints c \
                 WHERE b.thread_id = '1' AND c.thread_id = '1' AND c.checkpoint_id = '{parent}' \
                 AND b.checkpoint_ns = '' AND b.channel = 'messages' \
                 AND b.version = c.checkpoint -> 'channel_versions' ->> 'messages'"
            ),
            vec![parent.clone(), "not a list".to_owned()],
        ),
    ];
    for (i, (sql, needles)) in cases.iter().enumerate() {
        let db = TestDb::delta_fixture(&format!("delta_bad_{i}"));
        let n = db.client().execute(sql.as_str(), &[]).expect(sql);
        assert!(n >= 1, "{sql}: no row changed");
        for cmd in delta_states::BROKEN_CHAIN_COMMANDS {
            let before = fingerprint(&db);
            let mut args = cmd.to_vec();
            args.extend(["--db", &db.url]);
            let err = common::run_err(&args);
            for needle in needles {
                assert!(
                    err.contains(needle.as_str()),
                    "{sql}: {cmd:?}: no '{needle}' in: {err}"
                );
            }
            assert_eq!(fingerprint(&db), before, "{sql}: {cmd:?} wrote");
        }
    }
}

#[test]
fn libpq_keyword_form_and_sqlalchemy_urls_connect_and_other_forms_are_refused_masked() {
    let db = TestDb::fixture("conninfo");
    let list = |db: &str| {
        run_ok(&[
            "threads",
            "list",
            "--format",
            "json",
            "--now",
            "2026-12-03T00:00:00Z",
            "--db",
            db,
        ])
    };
    let want = list(&db.url);
    assert!(want.contains("legacy-tools"), "{want}");
    let secret = "Sup3r Secr\\et'pw";
    let keyword = pg::keyword_form(&db.url, secret);
    let with_pw = db.url.replacen("postgres@", "postgres:Sup3rSecretPw@", 1);
    let forms = [
        keyword.clone(),
        with_pw.replacen("postgresql://", "postgresql+psycopg://", 1),
        with_pw.replacen("postgresql://", "postgresql+psycopg2://", 1),
    ];
    for form in &forms {
        assert_eq!(list(form), want, "{form}");
    }
    // The same keyword string is what libpq (psycopg) and PostgresSaver.from_conn_string
    // read: libpq parses the quoted password to the same value, and the saver lists the same
    // threads.
    let script = r#"
import json, sys
import psycopg
from langgraph.checkpoint.postgres import PostgresSaver
with psycopg.connect(sys.argv[1]) as conn:
    password = conn.info.password
with PostgresSaver.from_conn_string(sys.argv[1]) as saver:
    threads = sorted({c.config["configurable"]["thread_id"] for c in saver.list(None)})
print(json.dumps({"password": password, "threads": threads}))
"#;
    let out = std::process::Command::new(common::python("pg"))
        .args(["-c", script, &keyword])
        .output()
        .expect("python runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let saw: Json = serde_json::from_slice(&out.stdout).expect("JSON");
    assert_eq!(
        saw["password"], secret,
        "libpq reads the password memctl reads"
    );
    let mut listed: Vec<String> = serde_json::from_str::<Json>(&want)
        .expect("JSON")
        .as_array()
        .expect("rows")
        .iter()
        .filter_map(|r| r["thread_id"].as_str().map(str::to_owned))
        .collect();
    listed.sort();
    assert_eq!(saw["threads"], serde_json::json!(listed));
    // Through MEMCTL_DB too, and a command that reads on several connections.
    let out = memctl()
        .args(["tokens", "--all", "--format", "json"])
        .env("MEMCTL_DB", &keyword)
        .output()
        .expect("runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // An error on the keyword form shows it with the password masked.
    let refused = pg::keyword_form("postgresql://postgres@127.0.0.1:1/app", secret);
    let e = fails_cleanly(&["threads", "list", "--db", &refused], "Secr");
    assert!(
        e.contains("cannot connect") && e.contains("password=***"),
        "{e}"
    );
    // Anything else that is not a file but looks like a connection string: one line, exit 2,
    // every password masked.
    for (bad, shown) in [
        (
            "jdbc:postgresql://127.0.0.1:5432/app?user=bob&password=Hunter2pw",
            "password=***",
        ),
        ("postgresq://bob:Hunter2pw@127.0.0.1/app", "bob:***@"),
        (
            "postgresql+asyncpg://bob:Hunter2pw@127.0.0.1/app",
            "bob:***@",
        ),
        (
            "host=127.0.0.1 password='Hunter2pw x' dbname=app pasword=x",
            "unknown keyword 'pasword'",
        ),
        ("Server=db;Uid=bob;Pwd=Hunter2pw;", "Pwd=***"),
        // A password with a space, unquoted: masked whole, and why it is refused.
        (
            "host=127.0.0.1 password=Hunter2pw and more dbname=app",
            "password=*** dbname=app",
        ),
        (
            "postgresq://bob:Hun ter2pw Hunter2pw@127.0.0.1/app",
            "bob:***@",
        ),
    ] {
        for via_env in [false, true] {
            let mut cmd = memctl();
            cmd.args(["threads", "list"]);
            if via_env {
                cmd.env("MEMCTL_DB", bad);
            } else {
                cmd.args(["--db", bad]);
            }
            let out = cmd.output().expect("runs");
            let stderr = String::from_utf8_lossy(&out.stderr);
            assert_eq!(out.status.code(), Some(2), "{bad}: {stderr}");
            assert_eq!(stderr.trim_end().lines().count(), 1, "{stderr}");
            assert!(
                !stderr.contains("Hunter2pw"),
                "the password leaked: {stderr}"
            );
            assert!(
                stderr.contains(shown) && stderr.contains("not a connection string"),
                "{stderr}"
            );
        }
    }
    // --help shows MEMCTL_DB's name, never its value.
    let out = memctl()
        .args(["threads", "list", "--help"])
        .env("MEMCTL_DB", &with_pw)
        .output()
        .expect("runs");
    let help = String::from_utf8_lossy(&out.stdout);
    assert!(help.contains("MEMCTL_DB"), "{help}");
    assert!(
        !help.contains("Sup3rSecretPw"),
        "the password leaked: {help}"
    );
}

/// One damaged row hides no thread (#26): a truncated blob, a wrong type tag, a NULL blob or
/// a checkpoint whose JSONB is not a checkpoint, in one thread, and `threads list`,
/// `tokens --all` and `find` list every other thread, name the damaged one on stderr and exit
/// 3, as they do on SQLite. Nothing is written.
#[test]
fn one_corrupt_row_on_postgres_hides_no_other_thread() {
    let all = threads();
    let victim = all
        .iter()
        .find(|t| t.as_str() == "1")
        .cloned()
        .unwrap_or_else(|| all[0].clone());
    let blob_of = |set: &str| {
        format!(
            "UPDATE checkpoint_blobs b SET {set} FROM checkpoints c \
             WHERE b.thread_id = '{victim}' AND c.thread_id = '{victim}' AND c.checkpoint_ns = '' \
             AND b.checkpoint_ns = '' AND b.channel = 'messages' \
             AND b.version = c.checkpoint -> 'channel_versions' ->> 'messages' \
             AND c.checkpoint_id = (SELECT max(checkpoint_id COLLATE \"C\") FROM checkpoints \
                                    WHERE thread_id = '{victim}' AND checkpoint_ns = '')"
        )
    };
    let latest = format!(
        "thread_id = '{victim}' AND checkpoint_ns = '' AND checkpoint_id = \
         (SELECT max(checkpoint_id COLLATE \"C\") FROM checkpoints WHERE thread_id = '{victim}' AND checkpoint_ns = '')"
    );
    let cases = [
        ("truncated", blob_of("blob = substring(b.blob from 1 for 5)")),
        ("bogus type", blob_of("type = 'bogus'")),
        ("null blob", blob_of("blob = NULL")),
        ("jsonb string", format!("UPDATE checkpoints SET checkpoint = '\"x\"'::jsonb WHERE {latest}")),
        (
            "jsonb versions",
            format!("UPDATE checkpoints SET checkpoint = '{{\"channel_versions\": 5}}'::jsonb WHERE {latest}"),
        ),
    ];
    for (i, (what, sql)) in cases.iter().enumerate() {
        let db = TestDb::fixture(&format!("corrupt_{i}"));
        let n = db.client().execute(sql.as_str(), &[]).expect(sql);
        assert!(n >= 1, "{what}: no row changed");
        let before = fingerprint(&db);
        for cmd in [
            &["threads", "list", "--format", "json"][..],
            &["tokens", "--all", "--format", "json"],
            &["find", "--history", "a", "--format", "json"],
        ] {
            let out = memctl()
                .args(cmd)
                .args(["--db", &db.url])
                .output()
                .expect("runs");
            let stderr = String::from_utf8_lossy(&out.stderr);
            assert_eq!(out.status.code(), Some(3), "{what}: {cmd:?}: {stderr}");
            assert!(!stderr.contains("panicked"), "{stderr}");
            assert_eq!(
                stderr.trim_end().lines().count(),
                1,
                "{what}: {cmd:?}: {stderr}"
            );
            assert!(
                stderr.contains(&format!("'{victim}'")),
                "{what}: {cmd:?}: {stderr}"
            );
            let listed: Json = serde_json::from_slice(&out.stdout).expect("JSON");
            let ids: Vec<&str> = listed
                .as_array()
                .expect("a list")
                .iter()
                .filter_map(|r| r["thread_id"].as_str())
                .collect();
            if cmd[0] != "find" {
                for t in all.iter().filter(|t| **t != victim) {
                    assert!(
                        ids.contains(&t.as_str()),
                        "{what}: {cmd:?}: {t} missing: {listed}"
                    );
                }
            } else {
                assert!(!ids.is_empty(), "{what}: find found nothing");
            }
        }
        assert_eq!(fingerprint(&db), before, "{what}: written");
    }
}

/// On Postgres too: `threads list` and `tokens --all` stream through a portal and print what
/// the collected, sorted list printed; the store's streams equal its collected reads in batches
/// of any size, stopped early too.
#[test]
fn whole_database_lists_stream_what_they_collect_on_postgres() {
    let db = TestDb::fixture("streamed");
    let mut failures = common::listing::lists_stream_as_they_collect(&db.url);
    failures.extend(common::listing::stores_stream_what_they_collect(
        std::path::Path::new(&db.url),
    ));
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

/// The lists stream in bytewise thread-id order whatever `thread_id`'s collation: on the
/// test server's `C` database memctl walks the primary key's order (issue #30), and where the
/// column sorts otherwise (ICU, set on the three tables here) the server sorts bytewise. The
/// thread ids are ones the two orders disagree on (checked, so the test can tell).
#[test]
fn whole_database_lists_stream_in_byte_order_whatever_the_collation() {
    let names = ["B", "a", "Z", "_x", "ab", "a-b", "\u{e4}", "A~"];
    // An ICU column, then the same with the indexes on `thread_id COLLATE "C"` that stats
    // recommends there, which the reads then walk instead of sorting.
    for (collation, indexed) in [
        (None, false),
        (Some("und-x-icu"), false),
        (Some("und-x-icu"), true),
    ] {
        let db = TestDb::fixture("collation");
        let mut c = db.client();
        let tables = ["checkpoints", "checkpoint_blobs", "checkpoint_writes"];
        for t in tables {
            for name in names {
                let sql = format!(
                    "INSERT INTO {t} SELECT (jsonb_populate_record(x, jsonb_build_object('thread_id', $1::text))).* \
                     FROM {t} x WHERE thread_id = '1'"
                );
                c.execute(&sql, &[&name])
                    .unwrap_or_else(|e| panic!("{sql}: {e}"));
            }
            if let Some(coll) = collation {
                let sql =
                    format!("ALTER TABLE {t} ALTER COLUMN thread_id TYPE text COLLATE \"{coll}\"");
                c.batch_execute(&sql)
                    .unwrap_or_else(|e| panic!("{sql}: {e}"));
            }
        }
        let server: Vec<String> = c
            .query_one(
                "SELECT array_agg(DISTINCT thread_id ORDER BY thread_id) FROM checkpoints",
                &[],
            )
            .expect("order")
            .get(0);
        let mut bytewise = server.clone();
        bytewise.sort_unstable();
        assert_eq!(
            server == bytewise,
            collation.is_none(),
            "{collation:?}: the server's order {server:?}"
        );
        if indexed {
            for sql in memctl::storage::postgres::order::THREAD_INDEX_ADVICE {
                let sql = sql.replace("%I", "public");
                c.batch_execute(&sql)
                    .unwrap_or_else(|e| panic!("{sql}: {e}"));
            }
            // The tables are small: without these the planner would rather sort them.
            let sql = format!(
                "ALTER DATABASE \"{}\" SET enable_sort = off; ALTER DATABASE \"{}\" SET enable_seqscan = off",
                db.name, db.name
            );
            c.batch_execute(&sql)
                .unwrap_or_else(|e| panic!("{sql}: {e}"));
        }
        let failures = common::listing::lists_stream_as_they_collect(&db.url);
        assert!(
            failures.is_empty(),
            "{collation:?}, indexed {indexed}: {}",
            failures.join("\n\n")
        );
        if indexed {
            let scans = || {
                db.count(
                    "SELECT COALESCE(sum(idx_scan), 0)::bigint FROM pg_stat_user_indexes \
                     WHERE indexrelname LIKE '%thread_id_c_idx'",
                )
            };
            let started = std::time::Instant::now();
            while scans() == 0 && started.elapsed().as_secs() < 10 {
                std::thread::sleep(std::time::Duration::from_millis(100));
            }
            assert!(
                scans() > 0,
                "the reads walked the indexes on thread_id COLLATE \"C\""
            );
        }
    }
}

/// Rows of thread `t` in the saver's three tables.
fn rows_of(db: &TestDb, t: &str) -> i64 {
    db.count(&format!(
        "SELECT (SELECT count(*) FROM checkpoints WHERE thread_id = '{t}') \
              + (SELECT count(*) FROM checkpoint_blobs WHERE thread_id = '{t}') \
              + (SELECT count(*) FROM checkpoint_writes WHERE thread_id = '{t}')"
    ))
}

/// gc applies a chunk of threads in one statement: when that statement fails (a trigger
/// refuses the deletes of the third thread), it is rolled back and the threads are applied
/// one at a time, so the two before it are collected and reported (exit 3, one line), the
/// third and the rest are untouched: what applying them one at a time always did.
#[test]
fn gc_reports_what_it_collected_before_a_statement_failed_on_postgres() {
    let db = TestDb::fixture("gc_stopped");
    let args = |dry: bool| {
        let mut a = vec![
            "gc",
            "--all",
            "--db",
            &db.url,
            "--keep-checkpoints",
            "1",
            "--min-idle",
            "0s",
            "--yes",
            "--format",
            "json",
        ];
        if dry {
            a.push("--dry-run");
        }
        a
    };
    let plan = run_json(&args(true));
    let order: Vec<String> = plan["threads"]
        .as_array()
        .expect("threads")
        .iter()
        .filter(|t| t["status"] == "would delete")
        .filter_map(|t| t["thread_id"].as_str().map(str::to_owned))
        .collect();
    assert!(order.len() >= 3, "{plan}");
    let victim = &order[2];
    refuse_on_checkpoints(&db, "DELETE", victim);
    let before: Vec<i64> = order.iter().map(|t| rows_of(&db, t)).collect();
    let out = memctl().args(args(false)).output().expect("runs");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "{stderr}");
    assert!(stderr.contains("held by the test"), "{stderr}");
    assert_eq!(stderr.trim().lines().count(), 1, "{stderr}");
    let report: Json = serde_json::from_slice(&out.stdout).expect("JSON report");
    let collected: Vec<&str> = report["threads"]
        .as_array()
        .expect("threads")
        .iter()
        .filter(|t| t["status"] == "collected")
        .filter_map(|t| t["thread_id"].as_str())
        .collect();
    assert_eq!(
        collected,
        [order[0].as_str(), order[1].as_str()],
        "{report}"
    );
    for (t, was) in order.iter().zip(&before).take(2) {
        assert!(rows_of(&db, t) < *was, "{t} is reported collected");
    }
    for (t, was) in order.iter().zip(&before).skip(2) {
        assert_eq!(rows_of(&db, t), *was, "{t} was left untouched");
    }
    assert!(
        !report["threads"].to_string().contains(victim.as_str()),
        "{report}"
    );
}

/// gc checks what it keeps of a whole chunk of threads in a few reads: a thread whose latest
/// checkpoint does not decode (its messages blob truncated) is reported failed and left
/// untouched, and only it: every other thread is collected (exit 3).
#[test]
fn gc_leaves_only_the_unreadable_thread_of_a_chunk_alone_on_postgres() {
    let db = TestDb::fixture("gc_unreadable");
    let victim = "1";
    db.client()
        .batch_execute(&format!(
            "UPDATE checkpoint_blobs b SET blob = substring(b.blob from 1 for 5) FROM checkpoints c \
             WHERE b.thread_id = '{victim}' AND c.thread_id = '{victim}' AND c.checkpoint_ns = '' \
             AND b.checkpoint_ns = '' AND b.channel = 'messages' \
             AND b.version = c.checkpoint -> 'channel_versions' ->> 'messages' \
             AND c.checkpoint_id = (SELECT max(checkpoint_id COLLATE \"C\") FROM checkpoints \
                                    WHERE thread_id = '{victim}' AND checkpoint_ns = '')"
        ))
        .expect("corrupt");
    let before = rows_of(&db, victim);
    let out = memctl()
        .args([
            "gc",
            "--all",
            "--keep-checkpoints",
            "1",
            "--min-idle",
            "0s",
            "--yes",
        ])
        .args(["--db", &db.url, "--format", "json"])
        .output()
        .expect("runs");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "{stderr}");
    let report: Json = serde_json::from_slice(&out.stdout).expect("JSON report");
    let rows = report["threads"].as_array().expect("threads");
    let failed: Vec<&str> = rows
        .iter()
        .filter(|r| r["status"] == "failed")
        .filter_map(|r| r["thread_id"].as_str())
        .collect();
    assert_eq!(failed, [victim], "{report}");
    let collected = rows.iter().filter(|r| r["status"] == "collected").count();
    assert!(collected >= 3, "{report}");
    assert!(
        rows.iter()
            .all(|r| matches!(r["status"].as_str(), Some("collected" | "failed"))),
        "{report}"
    );
    assert_eq!(rows_of(&db, victim), before, "{victim} was left untouched");
}

/// `trim --all` writes a batch's threads in one statement: when it fails (a trigger refuses
/// the new checkpoint of one thread), it is rolled back and the threads are written one at a
/// time, so only that thread fails (exit 3) and every other one is trimmed, as when each
/// thread was always written on its own.
#[test]
fn trim_all_fails_only_the_thread_whose_insert_fails_on_postgres() {
    let db = TestDb::fixture("trim_batch_fallback");
    let victim = "tools";
    refuse_on_checkpoints(&db, "INSERT", victim);
    let before = rows_of(&db, victim);
    let out = memctl()
        .args(["trim", "--all", "--keep", "2", "--settle", "0s"])
        .args(["--db", &db.url, "--format", "json"])
        .output()
        .expect("runs");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "{stderr}");
    let report: Json = serde_json::from_slice(&out.stdout).expect("JSON report");
    let rows = report["threads"].as_array().expect("threads");
    for r in rows {
        let status = r["status"].as_str().unwrap_or_default();
        if r["thread_id"] == victim {
            assert_eq!(status, "failed", "{r}");
            assert!(r["notes"].to_string().contains("held by the test"), "{r}");
        } else {
            // (skipped: a thread paused on interrupt(), never written.)
            assert!(
                matches!(status, "rewritten" | "unchanged" | "skipped"),
                "{r}"
            );
            assert!(!r["notes"].to_string().contains("changed while"), "{r}");
        }
    }
    let rewritten = rows.iter().filter(|r| r["status"] == "rewritten").count();
    assert!(rewritten >= 5, "{report}");
    assert_eq!(rows_of(&db, victim), before, "nothing of {victim} written");
}

/// A session holding `SHARE UPDATE EXCLUSIVE` on `checkpoints` (what VACUUM, ANALYZE and
/// autovacuum hold) past `--busy-timeout`: memctl's lock request, which steps out of the
/// server's queue and asks again, still ends in the one-line busy error, exit non-zero and
/// nothing deleted; once the holder commits the same prune deletes the thread.
#[test]
fn prune_behind_a_vacuum_lock_fails_whole_at_busy_timeout_then_succeeds() {
    let db = TestDb::fixture("lock_queue_busy");
    let before = rows_of(&db, "tools");
    assert!(before > 0);
    let mut holder = db.client();
    holder
        .batch_execute("BEGIN; LOCK TABLE checkpoints IN SHARE UPDATE EXCLUSIVE MODE")
        .expect("holder locks");
    let prune = |busy: &str| {
        memctl()
            .args([
                "prune",
                "--thread",
                "tools",
                "--yes",
                "--busy-timeout",
                busy,
            ])
            .args(["--db", &db.url, "--format", "json"])
            .output()
            .expect("runs")
    };
    let out = prune("400");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{err}");
    assert!(err.contains("holds the checkpoint tables locked"), "{err}");
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert_eq!(rows_of(&db, "tools"), before, "nothing deleted");
    holder.batch_execute("COMMIT").expect("holder commits");
    let out = prune("400");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(rows_of(&db, "tools"), 0);
}

/// The same lock released while memctl waits (stepping out of the queue and asking again):
/// memctl takes the locks then and deletes the thread, exit 0.
#[test]
fn prune_takes_the_locks_once_a_vacuum_lock_is_released() {
    let db = TestDb::fixture("lock_queue_release");
    let mut holder = db.client();
    holder
        .batch_execute("BEGIN; LOCK TABLE checkpoints IN SHARE UPDATE EXCLUSIVE MODE")
        .expect("holder locks");
    let release = std::thread::spawn(move || {
        std::thread::sleep(std::time::Duration::from_millis(700));
        holder.batch_execute("COMMIT").expect("holder commits");
    });
    let out = memctl()
        .args([
            "prune",
            "--thread",
            "tools",
            "--yes",
            "--busy-timeout",
            "20000",
        ])
        .args(["--db", &db.url, "--format", "json"])
        .output()
        .expect("runs");
    release.join().expect("holder thread");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let report: Json = serde_json::from_slice(&out.stdout).expect("json report");
    assert_eq!(report["deleted"]["threads"], 1, "{report}");
    assert_eq!(rows_of(&db, "tools"), 0);
}

/// The index `stats` recommends on a large `checkpoints` table.
const CHECKPOINT_ID_INDEX: &str = "CREATE INDEX CONCURRENTLY IF NOT EXISTS \
     checkpoints_checkpoint_id_c_idx ON checkpoints (checkpoint_id COLLATE \"C\")";

/// The fixture with 300 more threads, clones of thread `1` (`c000`...`c299`): every third
/// a day older (the time in its ids moved back), the others with thread `1`'s very ids
/// (their times tie).
fn many_threads(hint: &str) -> TestDb {
    let db = TestDb::fixture(hint);
    let id = |col: &str| {
        format!(
            "CASE WHEN g % 3 = 0 THEN lpad(to_hex(('x' || substr({col}, 1, 8))::bit(32)::bigint - 3220), 8, '0') \
             || substr({col}, 9) ELSE {col} END"
        )
    };
    let clone = "'c' || lpad(g::text, 3, '0')";
    db.client()
        .batch_execute(&format!(
            "INSERT INTO checkpoints (thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, type, checkpoint, metadata) \
             SELECT {clone}, checkpoint_ns, {}, {}, type, checkpoint, metadata \
             FROM checkpoints, generate_series(0, 299) g WHERE thread_id = '1'; \
             INSERT INTO checkpoint_blobs (thread_id, checkpoint_ns, channel, version, type, blob) \
             SELECT {clone}, checkpoint_ns, channel, version, type, blob \
             FROM checkpoint_blobs, generate_series(0, 299) g WHERE thread_id = '1'; \
             INSERT INTO checkpoint_writes (thread_id, checkpoint_ns, checkpoint_id, task_id, task_path, idx, channel, type, blob) \
             SELECT {clone}, checkpoint_ns, {}, task_id, task_path, idx, channel, type, blob \
             FROM checkpoint_writes, generate_series(0, 299) g WHERE thread_id = '1'; \
             ANALYZE",
            id("checkpoint_id"),
            id("parent_checkpoint_id"),
            id("checkpoint_id")
        ))
        .expect("clone threads");
    db
}

/// Scans of the index so far, as the server counts them (its counters lag a little).
fn index_scans(db: &TestDb) -> i64 {
    db.count(
        "SELECT COALESCE(sum(idx_scan), 0)::bigint FROM pg_stat_user_indexes \
         WHERE indexrelname = 'checkpoints_checkpoint_id_c_idx'",
    )
}

/// `threads list --sort updated --limit N` reads the newest rows of an index on the
/// checkpoint ids when there is one, and lists exactly the threads it lists without it (ties
/// in time included), which are the first N of the whole list.
#[test]
fn newest_threads_come_from_an_index_on_checkpoint_ids_and_are_the_same() {
    let db = many_threads("newest_index");
    let list = |extra: &[&str]| {
        let mut a = vec![
            // One time for every run: the ages do not move between them.
            "--now",
            "2027-01-01T00:00:00Z",
            "threads",
            "list",
            "--db",
            &db.url,
            "--sort",
            "updated",
            "--format",
            "json",
        ];
        a.extend_from_slice(extra);
        run_json(&a)
    };
    let all = list(&[]);
    let all = all.as_array().expect("rows");
    assert!(all.len() > 300, "{}", all.len());
    let limits = ["1", "3", "50", "250", "400"];
    let plain: Vec<Json> = limits.iter().map(|n| list(&["--limit", n])).collect();
    for (n, got) in limits.iter().zip(&plain) {
        let n: usize = n.parse().expect("n");
        assert_eq!(
            got.as_array().expect("rows")[..],
            all[..n.min(all.len())],
            "--limit {n}"
        );
    }
    db.client()
        .batch_execute(CHECKPOINT_ID_INDEX)
        .expect("create the index");
    db.client()
        .batch_execute("ANALYZE checkpoints")
        .expect("analyze");
    let scans = index_scans(&db);
    for (n, want) in limits.iter().zip(&plain) {
        assert_eq!(&list(&["--limit", n]), want, "--limit {n} with the index");
    }
    let started = std::time::Instant::now();
    while index_scans(&db) <= scans && started.elapsed().as_secs() < 10 {
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    assert!(index_scans(&db) > scans, "the index was read");
    // A small table: stats has no advice (it gives it from 500,000 checkpoints on).
    let st = run_json(&["stats", "--db", &db.url, "--format", "json"]);
    assert!(
        st["postgres"].get("index_advice").is_none(),
        "{}",
        st["postgres"]
    );
}

/// prune by age among more threads than it reads at once, on Postgres: the old readable
/// clones are selected in thread-id order, the unreadable one and the recent ones are
/// skipped in that order, the dry run says what the run does.
#[test]
fn prune_of_many_threads_on_postgres_reports_them_in_order() {
    let db = many_threads("prune_many");

    let listed = run_json(&["threads", "list", "--db", &db.url, "--format", "json"]);
    let listed = listed.as_array().expect("rows");
    let newest: jiff::Timestamp = listed
        .iter()
        .filter_map(|r| r["updated_at"].as_str()?.parse().ok())
        .max()
        .expect("a time");
    let now = (newest + jiff::SignedDuration::from_secs(3600)).to_string();
    let mut old = Vec::new();
    let mut skipped = Vec::new();
    for r in listed {
        let id = r["thread_id"].as_str().expect("id").to_owned();
        let n: usize = id
            .strip_prefix('c')
            .and_then(|n| n.parse().ok())
            .unwrap_or(1);
        match id.starts_with('c') && n % 3 == 0 && id != "c099" {
            true => old.push(id),
            false => skipped.push(id),
        }
    }
    db.client()
        .batch_execute(
            "UPDATE checkpoints SET checkpoint = '\"x\"'::jsonb WHERE thread_id = 'c099' \
             AND checkpoint_ns = '' AND checkpoint_id = (SELECT max(checkpoint_id COLLATE \"C\") \
             FROM checkpoints WHERE thread_id = 'c099' AND checkpoint_ns = '')",
        )
        .expect("corrupt c099");
    old.sort();
    skipped.sort();
    let prune = |dry: bool| {
        let mut cmd = memctl();
        cmd.args([
            "prune",
            "--db",
            &db.url,
            "--idle",
            "30m",
            "--min-idle",
            "2h",
            "--now",
            &now,
            "--format",
            "json",
        ]);
        if dry {
            cmd.arg("--dry-run");
        }
        let out = cmd.output().expect("runs");
        assert_eq!(
            out.status.code(),
            Some(3),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        serde_json::from_slice::<Json>(&out.stdout).expect("JSON")
    };
    let ids = |v: &Json, key: &str| -> Vec<String> {
        v[key]
            .as_array()
            .expect(key)
            .iter()
            .map(|t| t["thread_id"].as_str().expect("id").to_owned())
            .collect()
    };
    let dry = prune(true);
    assert_eq!(ids(&dry, "threads"), old);
    assert_eq!(ids(&dry, "skipped"), skipped);
    let run = prune(false);
    assert_eq!(run["threads"], dry["threads"]);
    assert_eq!(run["skipped"], dry["skipped"]);
    assert_eq!(run["deleted"]["threads"], old.len());
    assert_eq!(rows_of(&db, "c003"), 0);
    assert!(rows_of(&db, "c099") > 0 && rows_of(&db, "c001") > 0);
}

/// `--jobs` (#30): on a database of many threads (the fixtures' threads cloned), `threads
/// list`, `tokens --all` and `find` print the same bytes and exit the same on several
/// connections as on one — DeltaChannel threads, whose states are rebuilt, and a damaged
/// thread (named on stderr, exit 3) included.
#[test]
fn jobs_print_what_one_connection_prints_on_postgres() {
    let tables = ["checkpoints", "checkpoint_blobs", "checkpoint_writes"];
    let mut failures = Vec::new();
    for (what, db) in [
        ("fixture", TestDb::fixture("jobs")),
        ("delta", TestDb::delta_fixture("jobs_delta")),
    ] {
        let n = db.count("SELECT count(DISTINCT thread_id) FROM checkpoints");
        let mut c = db.client();
        // Enough threads for three connections of three batches of 64 each.
        for sql in common::jobs::clone_threads_sql(&tables, (700 / n.max(1)) as usize) {
            c.batch_execute(&sql)
                .unwrap_or_else(|e| panic!("{sql}: {e}"));
        }
        let n = db.count("SELECT count(DISTINCT thread_id) FROM checkpoints");
        assert!(n >= 9 * 64, "{what}: {n} threads");
        let found = common::jobs::outputs_equal_across_jobs(&db.url, &["3"]);
        failures.extend(found.into_iter().map(|f| format!("{what}: {f}")));
        if what == "fixture" {
            // One thread's latest messages blob cut short: its error, the same on every count.
            let cut = "UPDATE checkpoint_blobs SET blob = substring(blob from 1 for 5) \
                       WHERE thread_id = (SELECT max(thread_id) FROM checkpoint_blobs \
                                          WHERE channel = 'messages' AND thread_id LIKE '%~copy3') \
                       AND channel = 'messages'";
            assert!(c.execute(cut, &[]).expect(cut) >= 1);
            let found = common::jobs::outputs_equal_across_jobs(&db.url, &["3"]);
            failures.extend(found.into_iter().map(|f| format!("{what}, damaged: {f}")));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

/// A connection `--jobs` cannot open (the role's connection limit) is one line on stderr and
/// a non-zero exit, with nothing listed and no panic.
#[test]
fn a_jobs_connection_refused_is_one_clear_error() {
    let db = TestDb::fixture("jobs_refused");
    let n = db.count("SELECT count(DISTINCT thread_id) FROM checkpoints");
    let mut c = db.client();
    // Enough threads for three connections in the first batch of 1,024 the lists stream.
    for sql in common::jobs::clone_threads_sql(
        &["checkpoints", "checkpoint_blobs", "checkpoint_writes"],
        (1100 / n.max(1)) as usize,
    ) {
        c.batch_execute(&sql)
            .unwrap_or_else(|e| panic!("{sql}: {e}"));
    }
    let role = format!("jobs_limited_{}", std::process::id());
    c.batch_execute(&format!(
        "DROP ROLE IF EXISTS {role}; CREATE ROLE {role} LOGIN CONNECTION LIMIT 2; \
         GRANT SELECT ON ALL TABLES IN SCHEMA public TO {role}"
    ))
    .expect("role");
    let url = db.url.replacen("postgres@", &format!("{role}@"), 1);
    assert_ne!(url, db.url, "the test URL names user postgres");
    // Two connections at most with --jobs 1: the command's and the lists' stream (find: the
    // Store's lookup, after the search); three at once with --jobs 3, whatever the stream
    // does meanwhile (it may have read every thread and closed).
    for cmd in [
        &["threads", "list", "--sort", "thread", "--format", "jsonl"][..],
        &["tokens", "--all", "--sort", "thread", "--format", "jsonl"],
        &["find", "a", "--format", "jsonl"],
    ] {
        memctl()
            .args(cmd)
            .args(["--db", &url, "--jobs", "1"])
            .assert()
            .success();
        let out = memctl()
            .args(cmd)
            .args(["--db", &url, "--jobs", "3"])
            .output()
            .expect("runs");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{cmd:?}: {stderr}");
        assert!(!stderr.contains("panicked"), "{stderr}");
        assert_eq!(stderr.trim_end().lines().count(), 1, "{cmd:?}: {stderr}");
        assert!(stderr.contains("connection"), "{cmd:?}: {stderr}");
        assert!(out.stdout.is_empty(), "{cmd:?}: printed before failing");
    }
    drop(c);
    db.client()
        .batch_execute(&format!(
            "REVOKE ALL ON ALL TABLES IN SCHEMA public FROM {role}; DROP ROLE {role}"
        ))
        .expect("drop role");
}

/// `--meta`'s batched metadata read (one query) gives each thread the rows the per-thread
/// reads gave, in their order (`COLLATE "C"`), on the Postgres fixtures.
#[test]
fn metadata_of_reads_what_the_per_thread_reads_read_on_postgres() {
    use memctl::storage::{open, Access};
    for db in [
        TestDb::fixture("metadata_of"),
        TestDb::delta_fixture("metadata_of_delta"),
    ] {
        let store = open(
            std::path::Path::new(&db.url),
            None,
            Access::ReadOnly,
            std::time::Duration::from_secs(5),
            &memctl::codec::aes::Keyring::none(),
        )
        .expect("open");
        let differences = common::meta::metadata_of_differences(&*store);
        assert!(differences.is_empty(), "{differences:#?}");
    }
}

/// `--jobs`' extra connections read in the first one's snapshot: a thread committed after the
/// command's store was opened is seen by neither (a handle opened on its own sees it).
#[test]
fn jobs_connections_read_in_the_first_ones_snapshot() {
    use memctl::storage::{open, Access};
    let db = TestDb::fixture("jobs_snapshot");
    let keys = memctl::codec::aes::Keyring::none();
    let first = open(
        std::path::Path::new(&db.url),
        None,
        Access::ReadOnly,
        std::time::Duration::from_secs(5),
        &keys,
    )
    .expect("open");
    let before: Vec<String> = first
        .latest_root_ids()
        .expect("ids")
        .into_iter()
        .map(|(t, _)| t)
        .collect();
    let (thread, _) = first.latest_root_ids().expect("ids")[0].clone();
    db.client()
        .batch_execute(&format!(
            "INSERT INTO checkpoints SELECT 'late-' || thread_id, checkpoint_ns, checkpoint_id, \
             parent_checkpoint_id, type, checkpoint, metadata FROM checkpoints WHERE thread_id = '{thread}'"
        ))
        .expect("a thread committed meanwhile");
    let late = format!("late-{thread}");
    let beside = first.reopen_beside().expect("beside");
    assert!(!beside.thread_exists(&late).expect("reads"));
    let ids: Vec<String> = beside
        .latest_root_ids()
        .expect("ids")
        .into_iter()
        .map(|(t, _)| t)
        .collect();
    assert_eq!(ids, before);
    assert!(first
        .reopen_read_only()
        .expect("own")
        .thread_exists(&late)
        .expect("reads"));
}

/// A trigger on `checkpoints` that refuses every `event` (`INSERT`, `DELETE`) of `thread`'s
/// rows with the error "held by the test".
fn refuse_on_checkpoints(db: &TestDb, event: &str, thread: &str) {
    let row = if event == "DELETE" { "OLD" } else { "NEW" };
    db.client()
        .batch_execute(&format!(
            "CREATE FUNCTION held() RETURNS trigger LANGUAGE plpgsql AS \
               $$ BEGIN RAISE EXCEPTION 'held by the test'; END $$; \
             CREATE TRIGGER held BEFORE {event} ON checkpoints FOR EACH ROW \
               WHEN ({row}.thread_id = '{thread}') EXECUTE FUNCTION held()"
        ))
        .expect("trigger");
}

/// #46: a role without SELECT on the saver's tables is told so, with the table, the server's
/// words and the privileges memctl needs (it was told the database "has the tables of
/// ShallowPostgresSaver", because information_schema hides the columns of a table the role
/// may not read). With SELECT granted it reads; a rewrite without INSERT/UPDATE/DELETE is
/// refused in one line naming the table, nothing written; a Store without SELECT says so too.
#[test]
fn a_role_without_privileges_is_told_which_table_and_what_to_grant() {
    let db = TestDb::fixture("noperm");
    let role = format!("memctl_np_{}", std::process::id());
    let admin = pg::admin_url();
    pg::client(&admin)
        .batch_execute(&format!(
            "DROP ROLE IF EXISTS {role}; CREATE ROLE {role} LOGIN"
        ))
        .expect("role");
    let url = db.url.replacen("postgres@", &format!("{role}@"), 1);
    let e = fails_cleanly(&["threads", "list", "--db", &url], "");
    assert!(
        e.contains("permission denied for table checkpoints")
            && e.contains("INSERT, UPDATE and DELETE")
            && e.contains(&format!("TO \"{role}\""))
            && !e.contains("Shallow"),
        "{e}"
    );
    db.client()
        .batch_execute(&format!(
            "GRANT SELECT ON checkpoints, checkpoint_blobs, checkpoint_migrations TO {role}"
        ))
        .expect("grant");
    let e = fails_cleanly(&["history", "--db", &url, "--thread", "legacy-tools"], "");
    assert!(
        e.contains("permission denied for table checkpoint_writes (role")
            && !e.contains("table checkpoints"),
        "{e}"
    );
    db.client()
        .batch_execute(&format!("GRANT SELECT ON checkpoint_writes TO {role}"))
        .expect("grant");
    let listed = run_ok(&["threads", "list", "--db", &url, "--format", "json"]);
    assert!(listed.contains("legacy-tools"), "{listed}");
    let before = db.rows_digest();
    let e = fails_cleanly(
        &[
            "trim",
            "--db",
            &url,
            "--thread",
            "legacy-tools",
            "--keep",
            "1",
        ],
        "",
    );
    assert!(e.contains("permission denied for table"), "{e}");
    assert_eq!(db.rows_digest(), before, "nothing written");
    let dump = std::fs::read_to_string(fixture("postgres-store.sql")).expect("the store dump");
    db.client().batch_execute(&dump).expect("load the store");
    let e = fails_cleanly(&["store", "namespaces", "--db", &url], "");
    assert!(
        e.contains("permission denied for table store") && e.contains("GRANT"),
        "{e}"
    );
    drop(db);
    pg::client(&admin)
        .batch_execute(&format!("DROP OWNED BY {role}; DROP ROLE {role}"))
        .ok();
}
