//! `memctl store` (#28) on a `SqliteStore` with an embedding index (fixtures/store-vec.sqlite,
//! written by real LangGraph with the sqlite-vec extension and a deterministic fake embedding
//! function: fixtures/generate_store.py `vec`). memctl reads what LangGraph reads; `rm`,
//! `sweep` and `forget` take the items' rows of `store_vectors` with them (LangGraph's own
//! `store.delete` / `sweep_ttl` leave them behind, unreachable: its connection has foreign
//! keys off), and real LangGraph's get / search / vector search / list_namespaces read memctl's
//! copy exactly as a copy changed the Python way; `stats` counts the vectors' bytes.

mod common;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use common::store::{check_reads_equal, ns_text};
use common::{fixture, run_json, run_ok, s, temp_copy};
use serde_json::{json, Value as Json};

fn vec_fixture() -> PathBuf {
    fixture("store-vec.sqlite")
}

fn expected() -> Json {
    common::expected("store-vec")
}

/// The `(prefix, key)` of every row of `store_vectors` in `db`, one per field.
fn vector_rows(db: &Path) -> Vec<(String, String)> {
    let c = rusqlite::Connection::open(db).expect("open");
    let mut st = c
        .prepare("SELECT prefix, key FROM store_vectors ORDER BY prefix, key, field_name")
        .expect("prepare");
    let rows = st
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
        .expect("query");
    rows.collect::<Result<_, _>>().expect("rows")
}

/// The fixture's vector rows (as LangGraph wrote them) without those of `gone`.
fn vectors_but(gone: &[(String, String)]) -> Vec<(String, String)> {
    expected()["vectors"]
        .as_array()
        .expect("vectors")
        .iter()
        .map(|v| {
            (
                v[0].as_str().expect("prefix").to_owned(),
                v[1].as_str().expect("key").to_owned(),
            )
        })
        .filter(|pk| !gone.contains(pk))
        .collect()
}

fn removed(report: &Json) -> Vec<(String, String)> {
    report["removed"]
        .as_array()
        .expect("removed")
        .iter()
        .map(|i| {
            (
                ns_text(&i["namespace"]),
                i["key"].as_str().expect("key").to_owned(),
            )
        })
        .collect()
}

fn pairs(list: &[(&str, &str)]) -> Vec<(String, String)> {
    list.iter()
        .map(|(n, k)| (n.to_string(), k.to_string()))
        .collect()
}

#[test]
fn the_fixture_is_what_the_tests_need() {
    let e = expected();
    assert_eq!(e["vector_migration"], json!(0), "store_vectors was made");
    let rows = vector_rows(&vec_fixture());
    assert_eq!(rows, vectors_but(&[]));
    let items: BTreeSet<&(String, String)> = rows.iter().collect();
    assert!(
        rows.len() > items.len(),
        "some items have two fields embedded"
    );
    assert!(
        !rows.iter().any(|(_, k)| k == "plain"),
        "an item put with index=False has no vector"
    );
    assert!(!e["expired"].as_array().expect("expired").is_empty());
}

#[test]
fn reads_equal_langgraphs_and_change_nothing() {
    let (_dir, db) = temp_copy(&vec_fixture());
    let before = std::fs::read(&db).expect("read");
    check_reads_equal(s(&db), &expected());
    run_ok(&["store", "sweep", "--dry-run", "--db", s(&db)]);
    run_ok(&["store", "rm", "docs", "--dry-run", "--db", s(&db)]);
    assert_eq!(std::fs::read(&db).expect("read"), before);
}

/// `rm` (keys, then a whole namespace) and `sweep` take exactly the items' vector rows, and
/// count them; the dry runs say the same.
#[test]
fn rm_and_sweep_take_the_items_vectors() {
    let (_dir, db) = temp_copy(&vec_fixture());
    let d = s(&db);
    let dry = run_json(&[
        "store",
        "rm",
        "docs",
        "ramen",
        "--dry-run",
        "--db",
        d,
        "--format",
        "json",
    ]);
    let r = run_json(&[
        "store", "rm", "docs", "ramen", "--db", d, "--format", "json",
    ]);
    assert_eq!((&dry["vectors"], &dry["items"]), (&json!(2), &json!(1)));
    assert_eq!((&r["vectors"], &r["items"]), (&json!(2), &json!(1)));
    let mut gone = pairs(&[("docs", "ramen")]);
    assert_eq!(vector_rows(&db), vectors_but(&gone));

    let r = run_json(&["store", "rm", "docs.guides", "--db", d, "--format", "json"]);
    assert_eq!((&r["vectors"], &r["items"]), (&json!(4), &json!(2)));
    gone.extend(removed(&r));
    assert_eq!(vector_rows(&db), vectors_but(&gone));

    let expired = pairs(&[
        ("scratch", "tmp-1"),
        ("scratch", "tmp-2"),
        ("users.u-42.memories", "old-address"),
    ]);
    let dry = run_json(&["store", "sweep", "--dry-run", "--db", d, "--format", "json"]);
    let r = run_json(&["store", "sweep", "--db", d, "--format", "json"]);
    assert_eq!(removed(&r), expired);
    assert_eq!(removed(&dry), expired);
    // tmp-1: its text; tmp-2: nothing to embed; old-address: text and summary.
    assert_eq!((&dry["vectors"], &r["vectors"]), (&json!(3), &json!(3)));
    gone.extend(expired);
    assert_eq!(vector_rows(&db), vectors_but(&gone));
    // Another item's vectors stay.
    assert!(vector_rows(&db).contains(&("docs".to_owned(), "cat".to_owned())));
}

/// `forget --match` takes the matching item and its vectors; the byte search finds it clean.
#[test]
fn forget_takes_the_items_vectors() {
    let (_dir, db) = temp_copy(&vec_fixture());
    let r = run_json(&[
        "forget",
        "--match",
        "spicy curry",
        "--db",
        s(&db),
        "--format",
        "json",
    ]);
    assert_eq!(r["store"]["items"], json!(1), "{r:#}");
    assert_eq!(r["store"]["vectors"], json!(1), "{r:#}");
    assert_eq!(r["verification"]["clean"], json!(true), "{r:#}");
    assert_eq!(
        vector_rows(&db),
        vectors_but(&pairs(&[("users.u-42.memories", "food")]))
    );
}

/// `stats` counts store_vectors' rows and the bytes of their embeddings (8 float32 each).
#[test]
fn stats_shows_the_vectors_bytes() {
    let stats = run_json(&["stats", "--db", s(&vec_fixture()), "--format", "json"]);
    let rows = expected()["vectors"].as_array().expect("vectors").clone();
    let bytes: u64 = rows.iter().map(|r| r[3].as_u64().expect("length")).sum();
    assert_eq!(bytes, rows.len() as u64 * 8 * 4);
    assert_eq!(
        (&stats["store"]["vectors"], &stats["store"]["vector_bytes"]),
        (&json!(rows.len()), &json!(bytes))
    );
    let table = run_ok(&["stats", "--db", s(&vec_fixture())]);
    let line = format!("{} vectors ({bytes} B)", rows.len());
    assert!(table.contains(&line), "{line} in {table}");
}

/// memctl's `rm` and `sweep` on one copy, `store.delete` and `sweep_ttl` on another: real
/// LangGraph (with the index, sqlite-vec loaded) reads both the same, vector searches
/// included, and carries on embedding new items in memctl's copy. The one difference is on
/// disk: LangGraph's way leaves the deleted items' vector rows behind, memctl's does not.
#[test]
#[cfg_attr(
    not(feature = "env-tests"),
    ignore = "needs scripts/test.sh's environment (--features env-tests)"
)]
fn langgraph_reads_memctls_changes_as_its_own_vector_search_included() {
    let (_a, ours) = temp_copy(&vec_fixture());
    let (_b, theirs) = temp_copy(&vec_fixture());
    let mut gone = Vec::new();
    let r = run_json(&[
        "store",
        "rm",
        "docs",
        "ramen",
        "--db",
        s(&ours),
        "--format",
        "json",
    ]);
    gone.extend(removed(&r));
    let r = run_json(&[
        "store",
        "rm",
        "docs.guides",
        "--db",
        s(&ours),
        "--format",
        "json",
    ]);
    gone.extend(removed(&r));
    let swept = run_json(&["store", "sweep", "--db", s(&ours), "--format", "json"]);
    gone.extend(removed(&swept));
    common::store_vec_harness(&theirs, &["delete", "--ns", "docs", "--key", "ramen"]);
    common::store_vec_harness(&theirs, &["delete", "--ns", "docs.guides"]);
    let py = common::store_vec_harness(&theirs, &["sweep"]);
    assert_eq!(py["swept"], swept["items"], "sweep_ttl's count");

    let mut view_ours = common::store_vec_harness(&ours, &["view"]);
    let mut view_theirs = common::store_vec_harness(&theirs, &["view"]);
    let rows_ours = view_ours.as_object_mut().and_then(|o| o.remove("vectors"));
    let rows_theirs = view_theirs
        .as_object_mut()
        .and_then(|o| o.remove("vectors"));
    assert_eq!(view_ours, view_theirs);
    let hits: usize = view_ours["searches"]
        .as_array()
        .expect("searches")
        .iter()
        .map(|q| q["hits"].as_array().expect("hits").len())
        .sum();
    assert!(hits > 0, "the vector searches find the items left");
    assert!(!view_ours.to_string().contains("ramen noodles 🍜"));
    // On disk: memctl took the vectors, LangGraph left them (unreachable: search joins store).
    assert_eq!(vector_rows(&ours), vectors_but(&gone));
    assert_eq!(vector_rows(&theirs), vectors_but(&[]));
    assert_eq!(
        rows_ours.map(|r| r.as_array().map(Vec::len)),
        Some(Some(vectors_but(&gone).len()))
    );
    assert!(rows_theirs.is_some());
    check_reads_equal(
        s(&ours),
        &json!({"namespaces": view_ours["namespaces"], "expired": []}),
    );
    let carry = common::store_vec_harness(&ours, &["carry-on"]);
    assert_eq!(carry["ok"], json!(true));
}
