//! `memctl store` (#28) on a PostgresStore database (`MEMCTL_TEST_PG`): a copy of
//! fixtures/postgres-store.sql (written by real LangGraph's `PostgresStore`, see
//! fixtures/generate_store.py) per test. memctl reads what LangGraph reads, its reads move no
//! `expires_at` (LangGraph's own `get` would), `sweep` deletes what `sweep_ttl` deletes, and
//! after `rm` / `sweep` real LangGraph reads memctl's copy as one changed the Python way, and
//! carries on. Fails, never skips, without the server or LangGraph.

mod common;

use common::pg::TestDb;
use common::store::{check_reads_equal, ns_text};
use common::{run_err, run_json, run_ok};
use serde_json::{json, Value as Json};

fn harness(db: &TestDb, args: &[&str]) -> Json {
    let mut all = vec![args[0], "--db", db.url.as_str()];
    all.extend(&args[1..]);
    common::Harness::new("pg", "harness_store.py")
        .run(&all)
        .expect_json(&all)
}

/// Every row of the store's tables, as a digest (expires_at included: a refreshed TTL shows).
fn digest(db: &TestDb) -> (i64, String) {
    let row = db
        .client()
        .query_one(
            "SELECT count(*), coalesce(md5(string_agg(r::text, ',' ORDER BY r::text COLLATE \"C\")), '') \
             FROM (SELECT * FROM store) r",
            &[],
        )
        .expect("digest");
    (row.get(0), row.get(1))
}

#[test]
fn reads_equal_langgraphs_and_move_no_ttl() {
    let db = TestDb::store_fixture("store_reads");
    let before = digest(&db);
    check_reads_equal(&db.url, &common::expected("postgres-store"));
    run_ok(&["store", "namespaces", "--db", &db.url, "--max-depth", "1"]);
    run_ok(&[
        "store",
        "rm",
        "users.u-42.memories",
        "--dry-run",
        "--db",
        &db.url,
    ]);
    run_ok(&["store", "sweep", "--dry-run", "--db", &db.url]);
    assert_eq!(
        digest(&db),
        before,
        "memctl's reads and dry runs changed a row"
    );
    // The check can fail: LangGraph's own get (refresh_ttl defaults to True) moves expires_at.
    let mut c = db.client();
    c.batch_execute(
        "UPDATE store SET expires_at = NOW() + (ttl_minutes || ' minutes')::interval \
         WHERE prefix = 'users.u-7.memories' AND key = 'refreshed'",
    )
    .expect("refresh as get does");
    assert_ne!(digest(&db), before);
}

#[test]
fn sweep_deletes_what_sweep_ttl_deletes() {
    let expected = common::expected("postgres-store");
    let db = TestDb::store_fixture("store_sweep");
    let swept = run_json(&["store", "sweep", "--db", &db.url, "--format", "json"]);
    let pairs: Vec<Json> = swept["removed"]
        .as_array()
        .expect("removed")
        .iter()
        .map(|i| json!([ns_text(&i["namespace"]), i["key"]]))
        .collect();
    assert_eq!(pairs, *expected["expired"].as_array().expect("expired"));
    let again = run_json(&["store", "sweep", "--db", &db.url, "--format", "json"]);
    assert_eq!(again["items"], json!(0));
}

#[test]
fn langgraph_reads_memctls_changes_as_its_own() {
    let ours = TestDb::store_fixture("store_ours");
    let theirs = TestDb::store_fixture("store_theirs");
    run_ok(&[
        "store",
        "rm",
        "users.u-42.memories",
        "food",
        "--db",
        &ours.url,
    ]);
    run_ok(&["store", "rm", "prefs.team-α", "--db", &ours.url]);
    let swept = run_json(&["store", "sweep", "--db", &ours.url, "--format", "json"]);
    harness(
        &theirs,
        &["delete", "--ns", "users.u-42.memories", "--key", "food"],
    );
    harness(&theirs, &["delete", "--ns", "prefs.team-α"]);
    let py = harness(&theirs, &["sweep"]);
    assert_eq!(py["swept"], swept["items"]);
    let view_ours = harness(&ours, &["view"]);
    assert_eq!(view_ours, harness(&theirs, &["view"]));
    check_reads_equal(
        &ours.url,
        &json!({"namespaces": view_ours["namespaces"], "expired": []}),
    );
    assert_eq!(harness(&ours, &["carry-on"])["ok"], json!(true));
}

#[test]
fn no_store_unknown_level_and_dry_runs() {
    let empty = TestDb::empty("store_none");
    let err = run_err(&["store", "namespaces", "--db", &empty.url]);
    assert!(err.contains("no LangGraph store in this database"), "{err}");

    let db = TestDb::store_fixture("store_level");
    db.client()
        .batch_execute("INSERT INTO store_migrations (v) VALUES (99)")
        .expect("insert");
    let before = digest(&db);
    let ns = run_json(&["store", "namespaces", "--db", &db.url, "--format", "json"]);
    assert_eq!(ns.as_array().map(Vec::len), Some(7));
    for args in [
        vec!["store", "sweep", "--db", db.url.as_str()],
        vec!["store", "rm", "scratch", "--db", db.url.as_str()],
    ] {
        let err = run_err(&args);
        assert!(
            err.contains("migration level 99") && err.contains("writes are refused"),
            "{err}"
        );
    }
    assert_eq!(digest(&db), before);
}

/// With an embedding index the item's `store_vectors` rows go with it (PostgresStore's table;
/// `embedding` is pgvector's type there, bytea here: the test server has no pgvector).
#[test]
fn vectors_go_with_their_items() {
    let db = TestDb::store_fixture("store_vectors");
    db.client()
        .batch_execute(
            "CREATE TABLE store_vectors (prefix text NOT NULL, key text NOT NULL, field_name text NOT NULL, \
                 embedding bytea, created_at TIMESTAMP WITH TIME ZONE DEFAULT CURRENT_TIMESTAMP, \
                 updated_at TIMESTAMP WITH TIME ZONE DEFAULT CURRENT_TIMESTAMP, PRIMARY KEY (prefix, key, field_name), \
                 FOREIGN KEY (prefix, key) REFERENCES store(prefix, key) ON DELETE CASCADE); \
             INSERT INTO store_vectors (prefix, key, field_name) VALUES \
                 ('users.u-42.memories', 'food', 'text'), ('users.u-42.memories', 'food', 'user_id'), \
                 ('users.u-42.memories', 'pet', 'text'), ('scratch', 'tmp-1', '$');",
        )
        .expect("vectors");
    let dry = run_json(&[
        "store",
        "rm",
        "users.u-42.memories",
        "food",
        "--dry-run",
        "--db",
        &db.url,
        "--format",
        "json",
    ]);
    assert_eq!(dry["vectors"], json!(2));
    assert_eq!(
        db.count("SELECT count(*) FROM store_vectors"),
        4,
        "a dry run deletes nothing"
    );
    let r = run_json(&[
        "store",
        "rm",
        "users.u-42.memories",
        "food",
        "--db",
        &db.url,
        "--format",
        "json",
    ]);
    assert_eq!(
        (r["items"].clone(), r["vectors"].clone()),
        (json!(1), json!(2))
    );
    let swept = run_json(&["store", "sweep", "--db", &db.url, "--format", "json"]);
    assert_eq!(swept["vectors"], json!(1));
    assert_eq!(
        db.count("SELECT count(*) FROM store_vectors WHERE key = 'pet'"),
        1,
        "another item's vector stays"
    );
    assert_eq!(db.count("SELECT count(*) FROM store_vectors"), 1);
}

/// Beside an app writing to the store: an expired item the app rewrites while memctl sweeps
/// (its transaction holds the row when memctl's DELETE reaches it) is not deleted: the
/// statement waits for the app's commit and checks the item's new expires_at again.
#[test]
fn an_item_the_app_refreshes_meanwhile_is_not_swept() {
    let db = TestDb::store_fixture("store_live");
    let mut app = db.client();
    let mut tx = app.transaction().expect("begin");
    tx.batch_execute(
        "UPDATE store SET expires_at = NOW() + interval '1 day', ttl_minutes = 1440 \
         WHERE prefix = 'scratch' AND key = 'tmp-1'",
    )
    .expect("the app refreshes tmp-1");
    let sweep = memctl_bin()
        .args(["store", "sweep", "--db", &db.url, "--format", "json"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("memctl starts");
    let watcher = db.client();
    let watcher = std::sync::Mutex::new(watcher);
    common::wait_for("memctl's sweep waiting on the app's row lock", || {
        watcher
            .lock()
            .expect("watcher")
            .query_one(
                "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE '%DELETE FROM store%'",
                &[],
            )
            .map(|r| r.get::<_, i64>(0) > 0)
            .unwrap_or(false)
    });
    tx.commit().expect("the app commits");
    let out = sweep.wait_with_output().expect("memctl ends");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let report: Json = serde_json::from_slice(&out.stdout).expect("JSON");
    let keys: Vec<&Json> = report["removed"]
        .as_array()
        .expect("removed")
        .iter()
        .map(|i| &i["key"])
        .collect();
    assert!(!keys.contains(&&json!("tmp-1")), "{report}");
    assert!(keys.contains(&&json!("tmp-2")), "{report}");
    assert_eq!(
        db.count("SELECT count(*) FROM store WHERE prefix = 'scratch' AND key = 'tmp-1'"),
        1
    );
}

fn memctl_bin() -> std::process::Command {
    let mut c = std::process::Command::new(env!("CARGO_BIN_EXE_memctl"));
    c.env_remove("MEMCTL_DB").env("NO_COLOR", "1");
    c
}

/// A database with both a PostgresSaver's and a PostgresStore's tables: `forget --meta
/// user_id=u-42 --match Grüße` deletes u-42's namespaces and the item holding the text, with
/// their vectors; the receipt is clean only because no row of `store` holds them any more
/// (before #28's second part it said "clean" while the text stayed in `store`); real
/// LangGraph reads the copy as one where `store.delete` removed the same items, and carries on.
#[test]
fn forget_covers_the_store() {
    let with_store = |hint: &str| {
        let db = TestDb::fixture(hint);
        let dump = std::fs::read_to_string(common::fixture("postgres-store.sql")).expect("dump");
        db.client().batch_execute(&dump).expect("load the store");
        db
    };
    let ours = with_store("forget_store_ours");
    let theirs = with_store("forget_store_theirs");
    ours.client()
        .batch_execute(
            "CREATE TABLE store_vectors (prefix text NOT NULL, key text NOT NULL, field_name text NOT NULL, \
                 embedding bytea, PRIMARY KEY (prefix, key, field_name), \
                 FOREIGN KEY (prefix, key) REFERENCES store(prefix, key) ON DELETE CASCADE); \
             INSERT INTO store_vectors (prefix, key, field_name) VALUES \
                 ('users.u-42.memories', 'food', 'text'), ('scratch', 'tmp-1', '$');",
        )
        .expect("vectors");
    let held = |db: &TestDb| {
        db.count(
            "SELECT count(*) FROM store WHERE value::text ~ '(ramen|Miso|Lyon|Ørsted|Grüße)' \
             OR prefix LIKE '%u-42%'",
        )
    };
    assert_eq!(held(&ours), 5, "the fixture holds the person's items");
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
    let mut dry_args = args.to_vec();
    dry_args.push("--dry-run");
    let dry = run_json(&dry_args);
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
    assert_eq!(listed.len(), 5, "{listed:?}");
    assert_eq!(held(&ours), 5, "a dry run deletes nothing");
    let r = run_json(&args);
    assert_eq!(r["verification"]["clean"], json!(true), "{r:#}");
    assert_eq!(r["store"]["items"], json!(5));
    assert_eq!(r["store"]["vectors"], json!(1));
    assert!(
        !r.to_string().contains("u-42"),
        "the receipt names no namespace"
    );
    assert_eq!(held(&ours), 0, "the person's items are still in store");
    assert_eq!(db_vectors(&ours), 1, "another item's vector stays");
    for (ns, key) in &listed {
        harness(&theirs, &["delete", "--ns", ns, "--key", key]);
    }
    let view = harness(&ours, &["view"]);
    assert_eq!(view, harness(&theirs, &["view"]));
    let carry = harness(&ours, &["carry-on"]);
    assert_eq!(carry["ok"], json!(true));
}

fn db_vectors(db: &TestDb) -> i64 {
    db.count("SELECT count(*) FROM store_vectors")
}

/// `find` searches the store's values (namespace, key, the text around the match) and
/// `find --meta` lists the namespaces that carry the value as a label, as on SQLite.
#[test]
fn find_searches_the_store() {
    let db = TestDb::fixture("find_store");
    let dump = std::fs::read_to_string(common::fixture("postgres-store.sql")).expect("dump");
    db.client().batch_execute(&dump).expect("load the store");
    let hits = run_json(&["find", "Zoë", "--db", &db.url, "--format", "json"]);
    let store: Vec<(String, Json, Json)> = hits
        .as_array()
        .expect("array")
        .iter()
        .filter(|h| h.get("namespace").is_some())
        .map(|h| {
            (
                ns_text(&h["namespace"]),
                h["key"].clone(),
                h["after"].clone(),
            )
        })
        .collect();
    // (The Postgres fixture has no thread notes: only the profile holds the name.)
    assert_eq!(
        store,
        vec![("users.u-42.profile".into(), json!("main"), json!(" Ørsted"))]
    );
    let by_label = run_json(&[
        "find",
        "--meta",
        "user_id=u-42",
        "--db",
        &db.url,
        "--format",
        "json",
    ]);
    let ns: Vec<String> = by_label
        .as_array()
        .expect("array")
        .iter()
        .filter(|h| h.get("namespace").is_some())
        .map(|h| ns_text(&h["namespace"]))
        .collect();
    assert_eq!(ns, ["users.u-42.memories", "users.u-42.profile"]);
}

/// `stats` on a database with a PostgresStore has a `store` part whose counts are the
/// table's; the expired count is what `sweep_ttl` would delete.
#[test]
fn stats_has_a_store_section() {
    let db = TestDb::fixture("stats_store");
    let dump = std::fs::read_to_string(common::fixture("postgres-store.sql")).expect("dump");
    db.client().batch_execute(&dump).expect("load the store");
    let stats = run_json(&["stats", "--db", &db.url, "--format", "json"]);
    let st = &stats["store"];
    assert_eq!(st["items"], json!(db.count("SELECT count(*) FROM store")));
    assert_eq!(
        st["expired"],
        json!(db.count("SELECT count(*) FROM store WHERE expires_at < NOW()"))
    );
    assert_eq!(
        st["bytes"],
        json!(db.count("SELECT sum(octet_length(value::text))::bigint FROM store"))
    );
    let users = st["namespaces"]
        .as_array()
        .expect("namespaces")
        .iter()
        .find(|n| n["namespace"] == json!("users"))
        .expect("users")
        .clone();
    assert_eq!(
        users["items"],
        json!(
            db.count("SELECT count(*) FROM store WHERE prefix = 'users' OR prefix LIKE 'users.%'")
        )
    );
    let plain = TestDb::fixture("stats_no_store");
    let none = run_json(&["stats", "--db", &plain.url, "--format", "json"]);
    assert!(none.get("store").is_none());
}

/// `ttl --config` on Postgres: threads idle past default_ttl pruned, the store swept as
/// `sweep_ttl` sweeps (the fixture's expired items).
#[test]
fn ttl_applies_langgraph_json() {
    let db = TestDb::fixture("ttl_store");
    let dump = std::fs::read_to_string(common::fixture("postgres-store.sql")).expect("dump");
    db.client().batch_execute(&dump).expect("load the store");
    let dir = tempfile::tempdir().expect("temp dir");
    let config = dir.path().join("langgraph.json");
    std::fs::write(
        &config,
        r#"{"checkpointer": {"ttl": {"strategy": "delete", "default_ttl": 60}}, "store": {"ttl": {"default_ttl": 60}}}"#,
    )
    .expect("config");
    let threads = db.count("SELECT count(DISTINCT thread_id) FROM checkpoints");
    assert!(threads > 0);
    let due = db.count("SELECT count(*) FROM store WHERE expires_at < NOW()");
    assert!(due > 0, "the fixture has expired items");
    let r = run_json(&[
        "ttl",
        "--config",
        config.to_str().expect("utf-8"),
        "--db",
        &db.url,
        "--now",
        "2100-01-01T00:00:00Z",
        "--format",
        "json",
    ]);
    assert_eq!(r["store"]["sweep"]["items"], json!(due));
    assert_eq!(
        db.count("SELECT count(*) FROM store WHERE expires_at < NOW()"),
        0
    );
    assert_eq!(db.count("SELECT count(*) FROM checkpoints"), 0, "{r:#}");
}

/// As on SQLite: forget's deletion takes only items still as they were read.
#[test]
fn an_item_rewritten_after_the_selection_is_not_deleted() {
    let db = TestDb::store_fixture("store_unchanged");
    let mut store = common::store::open_rw(&db.url);
    let read = common::store::read_namespace(store.as_ref(), "users.u-42.memories");
    assert_eq!(read.len(), 3);
    db.client()
        .batch_execute(
            "UPDATE store SET value = '{\"text\": \"a new pet\"}' WHERE prefix = 'users.u-42.memories' AND key = 'pet'",
        )
        .expect("rewrite");
    let r = store
        .delete_unchanged("users.u-42.memories", &read, false)
        .expect("delete");
    let keys: Vec<&str> = r.items.iter().map(|i| i.key.as_str()).collect();
    assert_eq!(keys, ["food", "old-address"]);
    assert_eq!(
        db.count("SELECT count(*) FROM store WHERE prefix = 'users.u-42.memories' AND key = 'pet'"),
        1
    );
}

/// LangGraph.js's PostgresStore writes tables of the same names in another layout
/// (`namespace_path` joined with `:`, no `ttl_minutes`): memctl says so in one line, reads
/// nothing wrong and writes nothing (fixtures/postgres-store-js.sql, made by the real package).
#[test]
fn a_langgraph_js_store_is_named_and_left_alone() {
    let db = TestDb::js_store_fixture("store_js");
    let before = db.count("SELECT count(*) FROM store");
    assert_eq!(before, 3, "the JS fixture's items");
    for args in [
        vec!["store", "namespaces", "--db", db.url.as_str()],
        vec!["store", "ls", "prefs", "--db", db.url.as_str()],
        vec!["store", "sweep", "--db", db.url.as_str()],
        vec!["store", "rm", "prefs", "--db", db.url.as_str()],
    ] {
        let err = run_err(&args);
        assert!(
            err.contains("LangGraph.js's PostgresStore") && err.trim().lines().count() == 1,
            "{args:?}: {err}"
        );
    }
    assert_eq!(db.count("SELECT count(*) FROM store"), before);
    assert_eq!(
        db.count("SELECT count(*) FROM store WHERE expires_at < NOW()"),
        1,
        "the expired JS item is still there"
    );
}

/// memctl run in `cwd` (a directory that must stay empty: nothing of a connection string is
/// ever a file): (exit code, stdout, stderr).
fn run_in(cwd: &std::path::Path, args: &[&str]) -> (i32, String, String) {
    let out = memctl_bin()
        .current_dir(cwd)
        .args(args)
        .output()
        .expect("runs");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// #43: libpq's keyword form (`host=… password=… dbname=…`) names the server on every Store
/// path, as it does for threads. Before, the Store's open path took only URLs: `migrate --to`
/// a keyword DSN moved the threads to Postgres and wrote the Store into a new SQLite file in
/// the current directory named after the DSN, password included, reporting "copied"; `store`,
/// `stats`, `forget` failed with "no such file", `find` and `ttl` failed half-way. Now every
/// command reads and writes the same as with the URL, nothing appears in the current
/// directory, and the password is printed nowhere; a file named like the DSN does not
/// capture it.
#[test]
fn a_keyword_connection_string_names_postgres_on_every_store_path() {
    let secret = "Kw0rdSecretPw";
    let cwd = tempfile::tempdir().expect("temp dir");
    let empty = |when: &str| {
        let left: Vec<_> = std::fs::read_dir(cwd.path())
            .expect("list")
            .map(|e| e.expect("entry").file_name())
            .collect();
        assert!(
            left.is_empty(),
            "{when}: files in the current directory: {left:?}"
        );
    };
    let no_secret = |what: &str, out: &str, err: &str| {
        assert!(
            !out.contains(secret) && !err.contains(secret),
            "{what} printed the password: {out}{err}"
        );
    };

    // migrate SQLite → Postgres named by keywords: the Store lands in Postgres.
    let target = TestDb::fixture("kw_migrate");
    target
        .client()
        .batch_execute(
            "DELETE FROM checkpoint_writes; DELETE FROM checkpoint_blobs; DELETE FROM checkpoints",
        )
        .expect("empties");
    let (dir, src) = common::temp_copy(&common::fixture("store.sqlite"));
    let kw = common::pg::keyword_form(&target.url, secret);
    let (code, out, err) = run_in(
        cwd.path(),
        &[
            "migrate",
            "--db",
            common::s(&src),
            "--to",
            &kw,
            "--format",
            "json",
        ],
    );
    no_secret("migrate", &out, &err);
    assert_eq!(code, 0, "{err}");
    let r: Json = serde_json::from_str(&out).expect("JSON");
    assert_eq!(r["store"]["copied"], json!(15), "{r}");
    assert_eq!(target.count("SELECT count(*) FROM store"), 15);
    empty("migrate");
    drop(dir);

    // Every Store path with the keyword form reads and writes as with the URL.
    let db = TestDb::fixture("kw_paths");
    let dump = std::fs::read_to_string(common::fixture("postgres-store.sql")).expect("dump");
    db.client().batch_execute(&dump).expect("load the store");
    let kw = common::pg::keyword_form(&db.url, secret);
    let config = cwd
        .path()
        .join("..")
        .join(format!("kw-{}.json", std::process::id()));
    std::fs::write(
        &config,
        r#"{"checkpointer": {"ttl": {"strategy": "delete", "default_ttl": 60}}, "store": {"ttl": {"default_ttl": 60}}}"#,
    )
    .expect("config");
    let config_s = config.to_str().expect("utf-8").to_owned();
    let reads: Vec<Vec<&str>> = vec![
        vec!["store", "namespaces", "--format", "json"],
        vec!["store", "ls", "users.u-42.memories", "--format", "json"],
        vec![
            "store",
            "get",
            "users.u-42.memories",
            "food",
            "--format",
            "json",
        ],
        vec!["stats", "--format", "json"],
        vec!["find", "ramen", "--format", "json"],
        vec![
            "forget",
            "--meta",
            "user_id=u-42",
            "--dry-run",
            "--format",
            "json",
        ],
        vec![
            "store",
            "rm",
            "users.u-42.memories",
            "--dry-run",
            "--format",
            "json",
        ],
        vec![
            "store",
            "sweep",
            "--dry-run",
            "--now",
            "2100-01-01T00:00:00Z",
            "--format",
            "json",
        ],
        vec![
            "ttl",
            "--config",
            &config_s,
            "--dry-run",
            "--now",
            "2100-01-01T00:00:00Z",
            "--format",
            "json",
        ],
    ];
    let stable = |text: &str| -> String {
        // Timings and the database as shown differ between the two spellings.
        text.replace(&kw.replace(secret, "***"), "DB")
            .replace(&db.url, "DB")
            .lines()
            .filter(|l| !l.contains("\"seconds\"") && !l.contains("\"elapsed"))
            .collect::<Vec<_>>()
            .join("\n")
    };
    for args in &reads {
        let with = |given: &str| {
            let mut all = args.clone();
            all.extend(["--db", given]);
            run_in(cwd.path(), &all)
        };
        let (code, out, err) = with(&kw);
        no_secret(&args.join(" "), &out, &err);
        let (want_code, want, want_err) = with(&db.url);
        assert_eq!(
            code, want_code,
            "{args:?}: {err} / with the URL: {want_err}"
        );
        assert_eq!(stable(&out), stable(&want), "{args:?}");
        empty(&args.join(" "));
    }
    // A real sweep and a real store rm through the keyword form.
    let (code, out, err) = run_in(
        cwd.path(),
        &[
            "store",
            "sweep",
            "--db",
            &kw,
            "--now",
            "2100-01-01T00:00:00Z",
            "--format",
            "json",
        ],
    );
    no_secret("sweep", &out, &err);
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        db.count("SELECT count(*) FROM store WHERE expires_at < '2100-01-01'"),
        0
    );
    let (code, _, err) = run_in(
        cwd.path(),
        &["store", "rm", "users.u-42.memories", "--db", &kw, "--yes"],
    );
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        db.count("SELECT count(*) FROM store WHERE prefix = 'users.u-42.memories'"),
        0
    );
    empty("writes");

    // A file named like the DSN (what the old migrate left) does not capture it.
    std::fs::write(cwd.path().join(&kw), b"not a database").expect("a file named like the DSN");
    let (code, out, err) = run_in(
        cwd.path(),
        &["store", "namespaces", "--db", &kw, "--format", "json"],
    );
    assert_eq!(code, 0, "{err}");
    let (_, want, _) = run_in(
        cwd.path(),
        &["store", "namespaces", "--db", &db.url, "--format", "json"],
    );
    assert_eq!(out, want);
    let _ = std::fs::remove_file(&config);
}

/// #46: the Store's tables print every time in one form on both backends (Postgres gave
/// `…00.000000+00:00`, SQLite `…00+00:00`): the same namespace of the two fixtures (written
/// by real LangGraph from one generator, a few seconds apart) reads the same but for its
/// digits. And a namespace that does not exist is exit 1.
#[test]
fn store_tables_read_the_same_on_both_backends() {
    let db = TestDb::store_fixture("store_tables");
    let sqlite = common::fixture("store.sqlite");
    let table = |given: &str| run_ok(&["store", "ls", "users.u-42.memories", "--db", given]);
    let digits = |t: &str| t.replace(|c: char| c.is_ascii_digit(), "D");
    let pg = table(&db.url);
    assert!(pg.contains("2026-") && !pg.contains("+00:00"), "{pg}");
    assert_eq!(digits(&pg), digits(&table(common::s(&sqlite))));
    let e = run_err(&["store", "ls", "users.u-42.memorie", "--db", &db.url]);
    assert!(e.contains("did you mean 'users.u-42.memories'"), "{e}");
}
