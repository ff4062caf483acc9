//! `forget`, `find` and `stats` cover the LangGraph Store (#28) on a SQLite file holding a
//! `SqliteStore` beside a `SqliteSaver` (fixtures/store.sqlite, written by real LangGraph).
//! forget: `--meta` and `--match` delete the person's items (and their vectors), the receipt
//! names them by digest, the final byte search finds none of their text, and real LangGraph
//! reads memctl's copy as one where `store.delete` removed the same items. find: store values
//! and namespaces. A database without a store is unchanged.

mod common;

use std::path::Path;

use common::{fixture, memctl, run_json, s, temp_copy};
use serde_json::{json, Value as Json};
use sha2::Digest;

fn sha(text: &str) -> String {
    sha2::Sha256::digest(text.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// Every byte of the file and its -wal.
fn bytes_of(db: &Path) -> Vec<u8> {
    let mut all = std::fs::read(db).expect("the file");
    if let Ok(wal) = std::fs::read(format!("{}-wal", db.display())) {
        all.extend(wal);
    }
    all
}

fn holds(bytes: &[u8], text: &str) -> bool {
    bytes.windows(text.len()).any(|w| w == text.as_bytes())
}

/// The texts only the selected items hold.
const ERASED: [&str; 5] = ["ramen", "Miso", "Lyon", "Ørsted", "Grüße"];

/// What `--meta user_id=u-42 --match Grüße` selects: u-42's namespaces (a label), and the
/// u-7 item whose value holds the text.
fn selected() -> Vec<(String, String)> {
    [
        ("users.u-42.memories", "food"),
        ("users.u-42.memories", "old-address"),
        ("users.u-42.memories", "pet"),
        ("users.u-42.profile", "main"),
        ("users.u-7.memories", "schlüssel-ключ-鍵"),
    ]
    .iter()
    .map(|(n, k)| (n.to_string(), k.to_string()))
    .collect()
}

fn forget(db: &Path, extra: &[&str]) -> std::process::Output {
    let mut args = vec![
        "forget",
        "--meta",
        "user_id=u-42",
        "--match",
        "Grüße",
        "--db",
        s(db),
        "--format",
        "json",
    ];
    args.extend(extra);
    memctl().args(&args).output().expect("memctl runs")
}

fn listed(doc: &Json) -> Vec<(String, String)> {
    let mut got: Vec<(String, String)> = doc["store"]
        .as_array()
        .expect("the dry run lists the store's items")
        .iter()
        .map(|l| {
            let ns: Vec<&str> = l["namespace"]
                .as_array()
                .expect("labels")
                .iter()
                .map(|x| x.as_str().expect("a label"))
                .collect();
            (ns.join("."), l["key"].as_str().expect("key").to_owned())
        })
        .collect();
    got.sort();
    got
}

#[test]
fn forget_deletes_the_persons_store_items_and_proves_it() {
    let (_dir, db) = temp_copy(&fixture("store.sqlite"));
    let before = bytes_of(&db);
    for t in ERASED {
        assert!(holds(&before, t), "the fixture holds {t}");
    }
    let dry = forget(&db, &["--dry-run"]);
    assert!(
        dry.status.success(),
        "{}",
        String::from_utf8_lossy(&dry.stderr)
    );
    let dry: Json = serde_json::from_slice(&dry.stdout).expect("JSON");
    assert_eq!(listed(&dry), selected());
    assert_eq!(bytes_of(&db), before, "a dry run writes nothing");

    let out = forget(&db, &[]);
    assert!(
        out.status.success(),
        "exit {:?}: {}{}",
        out.status.code(),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let r: Json = serde_json::from_slice(&out.stdout).expect("JSON");
    assert_eq!(r["verification"]["clean"], json!(true), "{r:#}");
    assert_eq!(r["store"]["items"], json!(5));
    assert_eq!(r["store"]["selected_by_meta"], json!(4));
    assert_eq!(r["store"]["selected_by_match"], json!(1));
    assert_eq!(r["unmatched"]["meta_selected_nothing"], json!(false));
    assert_eq!(r["unmatched"]["pattern_matched_nothing"], json!(false));
    let mut digests: Vec<(String, String)> = r["store"]["items_sha256"]
        .as_array()
        .expect("items")
        .iter()
        .map(|d| {
            (
                d["namespace_sha256"].as_str().expect("ns").to_owned(),
                d["key_sha256"].as_str().expect("key").to_owned(),
            )
        })
        .collect();
    digests.sort();
    let mut want: Vec<(String, String)> =
        selected().iter().map(|(n, k)| (sha(n), sha(k))).collect();
    want.sort();
    assert_eq!(digests, want);
    // The receipt names no value, namespace or key.
    let text = String::from_utf8_lossy(&out.stdout);
    for t in ERASED.iter().chain(&["u-42", "old-address"]) {
        assert!(!text.contains(t), "the receipt shows {t}");
    }
    let after = bytes_of(&db);
    for t in ERASED {
        assert!(!holds(&after, t), "{t} is still in the file's bytes");
    }
    // Everything else is kept.
    let kept = run_json(&["store", "namespaces", "--db", s(&db), "--format", "json"]);
    let kept: Vec<String> = kept
        .as_array()
        .expect("array")
        .iter()
        .map(|n| n["namespace"].to_string())
        .collect();
    assert!(kept.iter().any(|n| n.contains("prefs")), "{kept:?}");
    assert!(!kept.iter().any(|n| n.contains("u-42")), "{kept:?}");
    let u7 = run_json(&[
        "store",
        "ls",
        "users.u-7.memories",
        "--db",
        s(&db),
        "--format",
        "json",
    ]);
    assert_eq!(u7.as_array().expect("array").len(), 3);
}

/// The items' vectors go with them, and the receipt counts them.
#[test]
fn forget_takes_the_items_vectors() {
    let (_dir, db) = temp_copy(&fixture("store.sqlite"));
    common::store::add_sqlite_vectors(&db);
    let out = forget(&db, &[]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let r: Json = serde_json::from_slice(&out.stdout).expect("JSON");
    assert_eq!(r["store"]["vectors"], json!(3));
    assert_eq!(r["verification"]["clean"], json!(true));
    let c = rusqlite::Connection::open(&db).expect("open");
    let left: Vec<String> = c
        .prepare("SELECT prefix || '/' || key FROM store_vectors")
        .expect("prepare")
        .query_map([], |r| r.get(0))
        .expect("query")
        .collect::<Result<_, _>>()
        .expect("rows");
    assert_eq!(left, ["scratch/tmp-1"]);
}

/// A database without a store: no `store` part in the dry run or the receipt.
#[test]
fn forget_without_a_store_is_unchanged() {
    let (_dir, db) = temp_copy(&fixture("new.sqlite"));
    let dry = run_json(&[
        "forget",
        "--thread",
        "blocks",
        "--dry-run",
        "--db",
        s(&db),
        "--format",
        "json",
    ]);
    assert!(dry.get("store").is_none(), "{dry:#}");
    assert_eq!(dry["threads"][0]["thread_id"], json!("blocks"));
    let r = run_json(&[
        "forget",
        "--thread",
        "blocks",
        "--db",
        s(&db),
        "--format",
        "json",
    ]);
    assert!(r.get("store").is_none(), "{r:#}");
    assert_eq!(r["deleted"]["threads"], json!(1));
}

/// After memctl's forget, real LangGraph's list_namespaces / search / get read the copy as
/// one where `store.delete` removed the same items, and the app carries on.
#[test]
#[cfg_attr(
    not(feature = "env-tests"),
    ignore = "needs scripts/test.sh's environment (--features env-tests)"
)]
fn langgraph_reads_the_forgotten_store_as_its_own() {
    let (_a, ours) = temp_copy(&fixture("store.sqlite"));
    let (_b, theirs) = temp_copy(&fixture("store.sqlite"));
    let out = forget(&ours, &[]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    for (ns, key) in selected() {
        common::store_harness(&theirs, &["delete", "--ns", &ns, "--key", &key]);
    }
    let view_ours = common::store_harness(&ours, &["view"]);
    assert_eq!(view_ours, common::store_harness(&theirs, &["view"]));
    assert!(!view_ours.to_string().contains("ramen"));
    let carry = common::store_harness(&ours, &["carry-on"]);
    assert_eq!(carry["ok"], json!(true));
}

fn find_json(args: &[&str]) -> (Option<i32>, Json) {
    let out = memctl()
        .args(args)
        .args(["--format", "json"])
        .output()
        .expect("memctl runs");
    let doc = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "{args:?}: {e}: {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    });
    (out.status.code(), doc)
}

fn store_hits(doc: &Json) -> Vec<(String, Json, String, String, String)> {
    doc.as_array()
        .expect("an array")
        .iter()
        .filter(|h| h.get("namespace").is_some())
        .map(|h| {
            assert_eq!(h["role"], json!("store"));
            assert_eq!(h["thread_id"], Json::Null);
            let ns: Vec<&str> = h["namespace"]
                .as_array()
                .expect("labels")
                .iter()
                .map(|l| l.as_str().expect("a label"))
                .collect();
            let text = |f: &str| h[f].as_str().expect("text").to_owned();
            (
                ns.join("."),
                h["key"].clone(),
                text("before"),
                text("match"),
                text("after"),
            )
        })
        .collect()
}

#[test]
fn find_searches_store_values_and_lists_namespaces_by_label() {
    let db = fixture("store.sqlite");
    let (code, doc) = find_json(&["find", "Zoë", "--db", s(&db)]);
    assert_eq!(code, Some(0));
    assert_eq!(
        store_hits(&doc),
        vec![
            (
                "threads.t-1.notes".to_owned(),
                json!("n3"),
                "call ".to_owned(),
                "Zoë".to_owned(),
                String::new()
            ),
            (
                "users.u-42.profile".to_owned(),
                json!("main"),
                String::new(),
                "Zoë".to_owned(),
                " Ørsted".to_owned()
            ),
        ]
    );
    let (code, doc) = find_json(&["find", "--meta", "user_id=u-42", "--db", s(&db)]);
    assert_eq!(code, Some(0));
    let ns: Vec<(String, Json)> = store_hits(&doc).into_iter().map(|h| (h.0, h.1)).collect();
    assert_eq!(
        ns,
        vec![
            ("users.u-42.memories".to_owned(), Json::Null),
            ("users.u-42.profile".to_owned(), Json::Null)
        ]
    );
    // With --meta, the pattern is searched in the items --meta selects only.
    let (_, doc) = find_json(&["find", "ramen", "--meta", "user_id=u-42", "--db", s(&db)]);
    assert_eq!(store_hits(&doc).len(), 1);
    let (code, doc) = find_json(&["find", "Grüße", "--meta", "user_id=u-42", "--db", s(&db)]);
    assert_eq!((code, doc), (Some(1), json!([])));
    // Found nothing anywhere: exit 1, like grep.
    let (code, _) = find_json(&["find", "no such text", "--db", s(&db)]);
    assert_eq!(code, Some(1));
}

/// `stats` has a `store` part: items, bytes and expired items per top-level namespace (what
/// `store namespaces --max-depth 1` says), vectors and their bytes; none without a store.
#[test]
fn stats_has_a_store_section() {
    let (_dir, db) = temp_copy(&fixture("store.sqlite"));
    {
        let c = rusqlite::Connection::open(&db).expect("open");
        c.execute_batch(
            "CREATE TABLE store_vectors (prefix text NOT NULL, key text NOT NULL, field_name text NOT NULL, \
                 embedding BLOB, PRIMARY KEY (prefix, key, field_name)); \
             INSERT INTO store_vectors VALUES ('users.u-42.memories', 'food', 'text', x'0000803f00000040'), \
                 ('scratch', 'tmp-1', '$', x'00004040');",
        )
        .expect("vectors");
    }
    let stats = run_json(&["stats", "--db", s(&db), "--format", "json"]);
    let st = &stats["store"];
    let top = run_json(&[
        "store",
        "namespaces",
        "--max-depth",
        "1",
        "--db",
        s(&db),
        "--format",
        "json",
    ]);
    let top = top.as_array().expect("array");
    let want: Vec<Json> = top
        .iter()
        .map(|n| {
            json!({"namespace": n["namespace"][0], "items": n["items"], "bytes": n["bytes"],
                   "expired": n["expired"]})
        })
        .collect();
    assert_eq!(st["namespaces"], json!(want));
    let sum = |f: &str| {
        top.iter()
            .map(|n| n[f].as_u64().expect("count"))
            .sum::<u64>()
    };
    assert_eq!(st["items"], json!(sum("items")));
    assert_eq!(st["bytes"], json!(sum("bytes")));
    assert_eq!(st["expired"], json!(sum("expired")));
    assert!(sum("expired") > 0, "the fixture has expired items");
    assert_eq!(
        (&st["vectors"], &st["vector_bytes"]),
        (&json!(2), &json!(12))
    );
    let table = common::run_ok(&["stats", "--db", s(&db)]);
    assert!(table.contains("expired and not swept"), "{table}");
    let none = run_json(&[
        "stats",
        "--db",
        s(&fixture("new.sqlite")),
        "--format",
        "json",
    ]);
    assert!(none.get("store").is_none());
}

fn write_config(dir: &Path, json: &str) -> std::path::PathBuf {
    let p = dir.join("langgraph.json");
    std::fs::write(&p, json).expect("write langgraph.json");
    p
}

/// What LangGraph-visible state a file holds: threads with their checkpoint counts, and the
/// store's items (namespace, key, value).
fn state_of(db: &Path) -> Json {
    let threads = run_json(&["threads", "list", "--db", s(db), "--format", "json"]);
    let threads: Vec<Json> = threads
        .as_array()
        .expect("array")
        .iter()
        .map(|t| json!([t["thread_id"], t["checkpoints"]]))
        .collect();
    let mut items = Vec::new();
    let ns = run_json(&["store", "namespaces", "--db", s(db), "--format", "json"]);
    for n in ns.as_array().expect("array") {
        let name: Vec<&str> = n["namespace"]
            .as_array()
            .expect("labels")
            .iter()
            .map(|l| l.as_str().expect("label"))
            .collect();
        let ls = run_json(&[
            "store",
            "ls",
            &name.join("."),
            "--db",
            s(db),
            "--format",
            "json",
        ]);
        for i in ls.as_array().expect("array") {
            items.push(json!([i["namespace"], i["key"], i["value"]]));
        }
    }
    json!({"threads": threads, "items": items})
}

/// `ttl --config` with strategy delete does what `prune --idle <default_ttl>` and `store
/// sweep` do on another copy; with keep_latest what `gc --keep-checkpoints 1` does on each
/// idle thread; a thread written within default_ttl is left alone.
#[test]
fn ttl_applies_langgraph_json_as_prune_gc_and_sweep_do() {
    let now = "2027-01-01T00:00:00Z";
    let (dir, ours) = temp_copy(&fixture("store.sqlite"));
    let (_b, theirs) = temp_copy(&fixture("store.sqlite"));
    let config = write_config(
        dir.path(),
        r#"{"graphs": {"agent": "./agent.py:graph"},
            "checkpointer": {"ttl": {"strategy": "delete", "sweep_interval_minutes": 60, "default_ttl": 60}},
            "store": {"ttl": {"refresh_on_read": false, "sweep_interval_minutes": 60, "default_ttl": 10080}}}"#,
    );
    let before = state_of(&ours);
    let dry = run_json(&[
        "ttl",
        "--config",
        s(&config),
        "--db",
        s(&ours),
        "--now",
        now,
        "--dry-run",
        "--format",
        "json",
    ]);
    assert_eq!(dry["checkpointer"]["prune"]["dry_run"], json!(true));
    assert_eq!(state_of(&ours), before, "a dry run writes nothing");
    let r = run_json(&[
        "ttl",
        "--config",
        s(&config),
        "--db",
        s(&ours),
        "--now",
        now,
        "--format",
        "json",
    ]);
    assert_eq!(r["checkpointer"]["strategy"], json!("delete"));
    assert_eq!(r["store"]["sweep"]["items"], json!(5), "{r:#}");
    common::run_ok(&["prune", "--idle", "3600s", "--db", s(&theirs), "--now", now]);
    common::run_ok(&["store", "sweep", "--db", s(&theirs)]);
    let after = state_of(&ours);
    assert_eq!(after, state_of(&theirs));
    assert_eq!(after["threads"], json!([]), "t-1 was idle for weeks");
    assert_ne!(after["items"], before["items"]);

    // keep_latest: the thread stays with its latest checkpoint only.
    let (dir, ours) = temp_copy(&fixture("store.sqlite"));
    let (_d, theirs) = temp_copy(&fixture("store.sqlite"));
    let config = write_config(
        dir.path(),
        r#"{"checkpointer": {"ttl": {"strategy": "keep_latest", "default_ttl": 60}}}"#,
    );
    let checkpoints_before = common::checkpoint_count(&ours, "t-1");
    let report: serde_json::Value = serde_json::from_str(&common::run_ok(&[
        "ttl",
        "--config",
        s(&config),
        "--db",
        s(&ours),
        "--now",
        now,
        "--format",
        "json",
    ]))
    .expect("ttl's JSON");
    // The per-thread gc reports and their totals.
    let part = &report["checkpointer"];
    assert_eq!(part["gc"][0]["thread_id"], "t-1", "{report}");
    assert_eq!(part["gc_totals"]["threads"], 1, "{report}");
    assert_eq!(
        part["gc_totals"]["deleted"]["checkpoints"],
        checkpoints_before as u64 - 1,
        "{report}"
    );
    common::run_ok(&[
        "gc",
        "--thread",
        "t-1",
        "--keep-checkpoints",
        "1",
        "--db",
        s(&theirs),
    ]);
    assert_eq!(common::checkpoint_count(&ours, "t-1"), 1);
    assert_eq!(state_of(&ours), state_of(&theirs));

    // Not idle that long (a year of TTL): nothing is deleted.
    let (dir, ours) = temp_copy(&fixture("store.sqlite"));
    let config = write_config(
        dir.path(),
        r#"{"checkpointer": {"ttl": {"strategy": "delete", "default_ttl": 525600}}}"#,
    );
    let before = state_of(&ours);
    common::run_ok(&[
        "ttl",
        "--config",
        s(&config),
        "--db",
        s(&ours),
        "--now",
        now,
    ]);
    assert_eq!(state_of(&ours), before);
}

/// A bad langgraph.json is one line, exit 1, and nothing is written.
#[test]
fn ttl_refuses_a_bad_config() {
    let (dir, db) = temp_copy(&fixture("store.sqlite"));
    let before = bytes_of(&db);
    for (text, says) in [
        (
            r#"{"checkpointer": {"ttl": {"strategy": "archive", "default_ttl": 1}}}"#,
            "keep_latest",
        ),
        (r#"{"graphs": {}}"#, "nothing to apply"),
        ("not json", "not JSON"),
        // #43: clamped without a word before.
        (
            r#"{"checkpointer": {"ttl": {"default_ttl": 1e30}}}"#,
            "longer than the 1,000 years",
        ),
    ] {
        let config = write_config(dir.path(), text);
        let err = common::run_err(&["ttl", "--config", s(&config), "--db", s(&db)]);
        assert!(err.contains(says), "{text}: {err}");
    }
    let err = common::run_err(&[
        "ttl",
        "--config",
        "/nonexistent/langgraph.json",
        "--db",
        s(&db),
    ]);
    assert!(err.contains("cannot read"), "{err}");
    // #43: a file that never ends is refused at 1 MiB (it was read to 7.4 GB in 20 s).
    let err = common::run_err(&["ttl", "--config", "/dev/zero", "--db", s(&db)]);
    assert!(err.contains("'/dev/zero' is larger than 1 MiB"), "{err}");
    assert_eq!(bytes_of(&db), before);
}

/// What forget deletes is what it read: an item the app rewrote after the selection (or
/// deleted) is left alone, the others go (storage, as forget calls it).
#[test]
fn an_item_rewritten_after_the_selection_is_not_deleted() {
    let (_dir, db) = temp_copy(&fixture("store.sqlite"));
    let mut store = common::store::open_rw(s(&db));
    let read = common::store::read_namespace(store.as_ref(), "users.u-42.memories");
    assert_eq!(read.len(), 3);
    // The app rewrites `pet` meanwhile.
    rusqlite::Connection::open(&db)
        .expect("open")
        .execute(
            "UPDATE store SET value = '{\"text\": \"a new pet\"}' WHERE prefix = 'users.u-42.memories' AND key = 'pet'",
            [],
        )
        .expect("rewrite");
    let dry = store
        .delete_unchanged("users.u-42.memories", &read, true)
        .expect("dry run");
    assert_eq!(dry.items.len(), 2);
    let r = store
        .delete_unchanged("users.u-42.memories", &read, false)
        .expect("delete");
    let keys: Vec<&str> = r.items.iter().map(|i| i.key.as_str()).collect();
    assert_eq!(keys, ["food", "old-address"]);
    let left = run_json(&[
        "store",
        "ls",
        "users.u-42.memories",
        "--db",
        s(&db),
        "--format",
        "json",
    ]);
    assert_eq!(left[0]["key"], json!("pet"));
    assert_eq!(left[0]["value"]["text"], json!("a new pet"));
    assert_eq!(left.as_array().expect("array").len(), 1);
}

/// A store at a migration level memctl does not know: forget refuses (one line, nothing
/// written) when it has store items to delete; a request that selects none still runs.
#[test]
fn forget_refuses_an_unknown_store_level_before_writing() {
    let (_dir, db) = temp_copy(&fixture("store.sqlite"));
    rusqlite::Connection::open(&db)
        .expect("open")
        .execute("INSERT INTO store_migrations (v) VALUES (99)", [])
        .expect("level");
    let before = bytes_of(&db);
    let err = common::run_err(&["forget", "--meta", "user_id=u-42", "--db", s(&db)]);
    assert!(err.contains("migration level 99"), "{err}");
    assert!(err.contains("nothing was written"), "{err}");
    assert_eq!(bytes_of(&db), before);
    let r = run_json(&[
        "forget",
        "--thread",
        "t-1",
        "--db",
        s(&db),
        "--format",
        "json",
    ]);
    assert_eq!(r["deleted"]["threads"], json!(1));
    assert_eq!(r["store"]["items"], json!(0));
}

#[test]
fn find_count_counts_store_hits_per_namespace() {
    let db = fixture("store.sqlite");
    let counts = run_json(&[
        "find",
        "u-42",
        "--count",
        "--db",
        s(&db),
        "--format",
        "json",
    ]);
    let per_ns: Vec<(String, Json)> = counts
        .as_array()
        .expect("array")
        .iter()
        .filter(|c| c.get("namespace").is_some())
        .map(|c| (ns_of(&c["namespace"]), c["hits"].clone()))
        .collect();
    // Three memories whose user_id value is u-42 (the namespace label is no value).
    assert_eq!(per_ns, vec![("users.u-42.memories".to_owned(), json!(3))]);
}

fn ns_of(ns: &Json) -> String {
    ns.as_array()
        .expect("labels")
        .iter()
        .map(|l| l.as_str().expect("a label"))
        .collect::<Vec<_>>()
        .join(".")
}
