//! Conveniences users asked for (#26): `memctl threads` alone lists, "did you mean" for a
//! thread id, `history --source / --before` as `get_state_history`'s filters, and
//! `threads list --meta`.

mod common;

use std::process::Command as Process;

use common::{fixture, memctl, run_json, run_ok, s};

/// Checkpoint ids of a thread as real LangGraph lists them with `filter` and `before`
/// (`SqliteSaver.list`, what `get_state_history` calls), newest first.
fn langgraph_history(
    db: &str,
    thread: &str,
    source: Option<&str>,
    before: Option<&str>,
    limit: Option<usize>,
) -> Vec<String> {
    let script = r#"
import json, sqlite3, sys
from langgraph.checkpoint.sqlite import SqliteSaver
db, thread, source, before, limit = sys.argv[1:6]
saver = SqliteSaver(sqlite3.connect(db, check_same_thread=False))
config = {"configurable": {"thread_id": thread, "checkpoint_ns": ""}}
kw = {}
if source:
    kw["filter"] = {"source": source}
if before:
    kw["before"] = {"configurable": {"checkpoint_id": before}}
if limit:
    kw["limit"] = int(limit)
print(json.dumps([t.config["configurable"]["checkpoint_id"] for t in saver.list(config, **kw)]))
"#;
    let out = Process::new(common::python("new"))
        .args(["-c", script, db, thread])
        .args([
            source.unwrap_or(""),
            before.unwrap_or(""),
            &limit.map_or(String::new(), |l| l.to_string()),
        ])
        .output()
        .expect("python runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("JSON")
}

#[test]
fn history_source_and_before_select_as_get_state_history_does() {
    let db = fixture("new.sqlite");
    let db = s(&db);
    let all = run_json(&["history", "--db", db, "summarized", "--format", "json"]);
    let ids: Vec<&str> = all
        .as_array()
        .expect("array")
        .iter()
        .map(|c| c["checkpoint_id"].as_str().expect("id"))
        .collect();
    let middle = ids[ids.len() / 2];
    let cases: [(Option<&str>, Option<&str>, Option<usize>); 6] = [
        (Some("loop"), None, None),
        (Some("input"), None, None),
        (None, Some(middle), None),
        (Some("loop"), Some(middle), None),
        (Some("loop"), Some(middle), Some(2)),
        (Some("no-such-source"), None, None),
    ];
    for (source, before, limit) in cases {
        let mut args = vec!["history", "--db", db, "summarized", "--format", "json"];
        if let Some(src) = source {
            args.extend(["--source", src]);
        }
        if let Some(b) = before {
            args.extend(["--before", b]);
        }
        let limit_text = limit.map(|l| l.to_string());
        if let Some(l) = &limit_text {
            args.extend(["--limit", l]);
        }
        let got: Vec<String> = run_json(&args)
            .as_array()
            .expect("array")
            .iter()
            .map(|c| c["checkpoint_id"].as_str().expect("id").to_owned())
            .collect();
        let expected = langgraph_history(db, "summarized", source, before, limit);
        assert_eq!(got, expected, "{source:?} {before:?} {limit:?}");
        if source == Some("loop") && before.is_none() {
            assert!(!got.is_empty() && got.len() < ids.len(), "{got:?}");
        }
    }
    // A prefix of the --before id will do, as for --checkpoint.
    let by_prefix = run_json(&[
        "history",
        "--db",
        db,
        "summarized",
        "--format",
        "json",
        "--before",
        &middle[..13],
    ]);
    assert_eq!(
        by_prefix.as_array().map(Vec::len),
        Some(langgraph_history(db, "summarized", None, Some(middle), None).len())
    );
}
