//! Store (#28) checks shared by the store tests on both backends and with an embedding index:
//! memctl's `store namespaces` / `ls` / `get` against what real LangGraph read.

use std::collections::BTreeMap;

use serde_json::{json, Value as Json};

use super::run_json;

/// A namespace given as JSON labels, as memctl takes it on the command line (labels joined
/// with `.`).
pub fn ns_text(ns: &Json) -> String {
    ns.as_array()
        .expect("a namespace is a list")
        .iter()
        .map(|l| l.as_str().expect("labels are strings"))
        .collect::<Vec<_>>()
        .join(".")
}

/// Expired items per namespace, from what LangGraph's own sweep_ttl deleted.
pub fn expired_per_namespace(expected: &Json) -> BTreeMap<String, u64> {
    let mut out = BTreeMap::new();
    for pair in expected["expired"].as_array().expect("expired") {
        *out.entry(pair[0].as_str().expect("prefix").to_owned())
            .or_insert(0) += 1;
    }
    out
}

/// `store namespaces`, `ls` and `get` on `db` (a SQLite file or a Postgres URL) show what
/// LangGraph's list_namespaces, search and get (refresh_ttl=False) returned (`expected`: the
/// shape of fixtures/expected/store.json), with the expired counts of LangGraph's own
/// sweep_ttl.
pub fn check_reads_equal(db: &str, expected: &Json) {
    let got = run_json(&["store", "namespaces", "--db", db, "--format", "json"]);
    let got = got.as_array().expect("an array");
    let want = expected["namespaces"].as_array().expect("namespaces");
    let got_ns: Vec<&Json> = got.iter().map(|n| &n["namespace"]).collect();
    let want_ns: Vec<&Json> = want.iter().map(|n| &n["namespace"]).collect();
    assert_eq!(got_ns, want_ns, "namespaces vs list_namespaces");
    let expired = expired_per_namespace(expected);
    for (g, w) in got.iter().zip(want) {
        let ns = ns_text(&w["namespace"]);
        let items = w["items"].as_array().expect("items");
        assert_eq!(g["items"], json!(items.len()), "{ns}: item count");
        assert_eq!(
            g["expired"],
            json!(expired.get(&ns).copied().unwrap_or(0)),
            "{ns}: expired"
        );
        assert!(g["bytes"].as_u64().is_some_and(|b| b > 0), "{ns}: bytes");
        let ls = run_json(&["store", "ls", &ns, "--db", db, "--format", "json"]);
        let ls = ls.as_array().expect("an array");
        let keys: Vec<&Json> = ls.iter().map(|i| &i["key"]).collect();
        let want_keys: Vec<&Json> = items.iter().map(|i| &i["key"]).collect();
        assert_eq!(keys, want_keys, "{ns}: keys vs search");
        for (gi, wi) in ls.iter().zip(items) {
            let key = wi["key"].as_str().expect("key");
            assert_eq!(gi["value"], wi["value"], "{ns}/{key}: value vs search");
            assert_eq!(gi["namespace"], w["namespace"]);
            for field in ["created_at", "updated_at", "expires_at"] {
                assert!(gi.get(field).is_some(), "{ns}/{key}: {field} present");
            }
            let expired_here = expected["expired"]
                .as_array()
                .expect("expired")
                .contains(&json!([ns, key]));
            assert_eq!(gi["expired"], json!(expired_here), "{ns}/{key}: expired");
            let value = run_json(&["store", "get", &ns, key, "--db", db, "--format", "json"]);
            assert_eq!(value, wi["get"], "{ns}/{key}: get vs store.get");
        }
    }
}

/// Opens the store of `db` (a SQLite file or a Postgres URL) for writing, as memctl does.
pub fn open_rw(db: &str) -> Box<dyn memctl::storage::store::ItemStore> {
    memctl::storage::open_store(
        std::path::Path::new(db),
        None,
        memctl::storage::Access::ReadWrite,
        std::time::Duration::from_secs(5),
    )
    .expect("open the store")
}

/// The items of namespace `prefix` as `for_each_item` reads them: key and value bytes.
pub fn read_namespace(
    store: &dyn memctl::storage::store::ItemStore,
    prefix: &str,
) -> Vec<(String, Vec<u8>)> {
    let mut read = Vec::new();
    store
        .for_each_item(&mut |p, key, value| {
            if p == prefix {
                read.push((key.to_owned(), value.to_vec()));
            }
            Ok(())
        })
        .expect("read");
    read
}

/// Gives the SQLite file `db` (a copy of fixtures/store.sqlite) a `store_vectors` table as
/// SqliteStore's vector migration makes it, with two vectors of `food`, one of `pet` (both
/// in `users.u-42.memories`) and one of `scratch`/`tmp-1`.
pub fn add_sqlite_vectors(db: &std::path::Path) {
    let c = rusqlite::Connection::open(db).expect("open");
    c.execute_batch(
        "CREATE TABLE store_vectors (prefix text NOT NULL, key text NOT NULL, field_name text NOT NULL, \
             embedding BLOB, created_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP, \
             updated_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP, PRIMARY KEY (prefix, key, field_name), \
             FOREIGN KEY (prefix, key) REFERENCES store(prefix, key) ON DELETE CASCADE); \
         INSERT INTO store_vectors (prefix, key, field_name, embedding) VALUES \
             ('users.u-42.memories', 'food', 'text', x'0000803f'), \
             ('users.u-42.memories', 'food', 'user_id', x'00000040'), \
             ('users.u-42.memories', 'pet', 'text', x'0000803f'), \
             ('scratch', 'tmp-1', '$', x'00004040');",
    )
    .expect("vectors");
}

/// A copy of fixtures/store.sqlite without its checkpoint tables (a file SqliteStore alone
/// wrote).
pub fn sqlite_store_only() -> (tempfile::TempDir, std::path::PathBuf) {
    let (dir, db) = super::temp_copy(&super::fixture("store.sqlite"));
    let c = rusqlite::Connection::open(&db).expect("open");
    c.execute_batch("DROP TABLE checkpoints; DROP TABLE writes; VACUUM;")
        .expect("drop the checkpoint tables");
    (dir, db)
}

/// The tables of a SQLite file, by name.
pub fn sqlite_tables(db: &std::path::Path) -> Vec<String> {
    let c = rusqlite::Connection::open(db).expect("open");
    let mut st = c
        .prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")
        .expect("prepare");
    let names = st
        .query_map([], |r| r.get(0))
        .expect("query")
        .collect::<Result<Vec<String>, _>>()
        .expect("rows");
    names
}
