//! A deepagents agent's `/memories/` files in the Store (#28): fixtures/deep-store.sqlite, where
//! a real `create_deep_agent` (its `/memories/` routed by a `CompositeBackend` to a
//! `StoreBackend` on a `SqliteStore`, the checkpoints in the same file) wrote
//! `/memories/preferences.md` with its own `write_file` tool (fixtures/generate_deep_store.py).
//! memctl shows the file as LangGraph stores it, `find` finds its text, `forget --match` erases
//! it, and real deepagents then finds the file gone and carries on, on the scrubbed thread.

mod common;

use common::store::check_reads_equal;
use common::{fixture, run_json, s, temp_copy, Harness};
use serde_json::{json, Value as Json};

const NS: &str = "users.u-42.memories";
const FILE_KEY: &str = "/preferences.md";
const SECRET: &str = "lavender-42";

fn deep_store() -> std::path::PathBuf {
    fixture("deep-store.sqlite")
}

#[test]
fn ls_and_get_show_the_memory_file_as_langgraph_stores_it() {
    let expected = common::expected("deep-store");
    check_reads_equal(s(&deep_store()), &expected);
    let ls = run_json(&[
        "store",
        "ls",
        NS,
        "--db",
        s(&deep_store()),
        "--format",
        "json",
    ]);
    assert_eq!(ls[0]["key"], json!(FILE_KEY));
    let value = run_json(&[
        "store",
        "get",
        NS,
        FILE_KEY,
        "--db",
        s(&deep_store()),
        "--format",
        "json",
    ]);
    // deepagents' StoreBackend value: the text, its encoding and the file's times.
    assert!(value["content"]
        .as_str()
        .is_some_and(|c| c.contains("green tea") && c.contains(SECRET)));
    assert_eq!(value["encoding"], json!("utf-8"));
    assert!(value["modified_at"].is_string(), "{value}");
}

#[test]
fn find_finds_the_memory_files_text() {
    let out = common::memctl()
        .args(["find", SECRET, "--db", s(&deep_store()), "--format", "json"])
        .output()
        .expect("memctl runs");
    assert_eq!(out.status.code(), Some(0));
    let hits: Json = serde_json::from_slice(&out.stdout).expect("JSON");
    let store: Vec<(&Json, &Json)> = hits
        .as_array()
        .expect("array")
        .iter()
        .filter(|h| h["role"] == json!("store"))
        .map(|h| (&h["namespace"], &h["key"]))
        .collect();
    assert_eq!(
        store,
        [(&json!(["users", "u-42", "memories"]), &json!(FILE_KEY))]
    );
}

/// `forget --match` deletes the memory file (and scrubs the thread whose tool call wrote it);
/// LangGraph reads the store as after `store.delete` of that key on another copy, and the
/// agent, on the scrubbed thread, finds `/memories/` empty and writes a new memory.
#[test]
#[cfg_attr(
    not(feature = "env-tests"),
    ignore = "needs scripts/test.sh's environment (--features env-tests)"
)]
fn forget_erases_the_memory_file_and_the_agent_carries_on() {
    let (_a, ours) = temp_copy(&deep_store());
    let (_b, theirs) = temp_copy(&deep_store());
    let r = run_json(&[
        "forget",
        "--match",
        SECRET,
        "--db",
        s(&ours),
        "--format",
        "json",
    ]);
    assert_eq!(r["store"]["items"], json!(1), "{r:#}");
    assert_eq!(r["verification"]["clean"], json!(true), "{r:#}");
    let bytes = std::fs::read(&ours).expect("read");
    assert!(!bytes.windows(SECRET.len()).any(|w| w == SECRET.as_bytes()));

    // The generator is also the agent's harness (view, carry-on).
    let deep = |args: &[&str]| -> Json {
        let out = std::process::Command::new(common::python("deep"))
            .arg(fixture("generate_deep_store.py"))
            .args(args)
            .output()
            .expect("python runs");
        assert!(
            out.status.success(),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        serde_json::from_slice(&out.stdout).expect("its JSON report")
    };
    let store_py = |db: &std::path::Path, args: &[&str]| -> Json {
        let mut all = vec![args[0], "--db", s(db)];
        all.extend(&args[1..]);
        Harness::new("deep", "harness_store.py")
            .run(&all)
            .expect_json(&all)
    };
    store_py(&theirs, &["delete", "--ns", NS, "--key", FILE_KEY]);
    let view_ours = deep(&["view", "--db", s(&ours)]);
    assert_eq!(view_ours, deep(&["view", "--db", s(&theirs)]));
    assert_eq!(view_ours["namespaces"], json!([]));

    let carry = deep(&["carry-on", "--thread", "mem-1", "--db", s(&ours)]);
    assert_eq!(carry["ls"], json!("[]"), "{carry}");
    assert!(
        carry["read"]
            .as_str()
            .is_some_and(|t| t.contains("not found")),
        "{carry}"
    );
    assert_eq!(carry["new_item"], json!("Written after memctl.\n"));
    assert_eq!(carry["last"], json!("Done."));
}
