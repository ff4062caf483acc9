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
#[cfg_attr(
    not(feature = "env-tests"),
    ignore = "needs scripts/test.sh's environment (--features env-tests)"
)]
fn history_source_and_before_select_as_get_state_history_does() {
    // A copy: SqliteSaver's setup() writes to the file it opens.
    let (_dir, db) = common::temp_copy(&fixture("new.sqlite"));
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

#[test]
fn threads_alone_lists_like_threads_list() {
    let db = fixture("new.sqlite");
    let db = s(&db);
    for args in [
        vec!["--format", "json"],
        vec!["--sort", "size", "--limit", "3"],
        vec![],
    ] {
        // One time for both (ages are measured against it).
        let now = "2026-12-05T00:00:00Z";
        let mut alone = vec!["threads", "--db", db, "--now", now];
        alone.extend(&args);
        let mut listed = vec!["threads", "list", "--db", db, "--now", now];
        listed.extend(&args);
        let a = run_ok(&alone);
        assert!(!a.is_empty());
        assert_eq!(a, run_ok(&listed), "{args:?}");
    }
}

#[test]
fn a_mistyped_thread_id_gets_a_did_you_mean() {
    let db = fixture("new.sqlite");
    let db = s(&db);
    let runs: [&[&str]; 9] = [
        &["show", "Tools"],
        &["history", "tool"],
        &["dump", "toolz"],
        &["tokens", "TOOLS"],
        &["trim", "--thread", "tool", "--keep", "2", "--dry-run"],
        &["rm", "--thread", "Tools", "--index", "-1", "--dry-run"],
        &[
            "gc",
            "--thread",
            "tool",
            "--keep-checkpoints",
            "1",
            "--dry-run",
        ],
        &["prune", "--thread", "tool", "--dry-run"],
        &["find", "x", "--thread", "tool"],
    ];
    for args in runs {
        let mut args = args.to_vec();
        args.extend(["--db", db]);
        let err = common::run_err(&args);
        assert!(err.contains("did you mean 'tools'?"), "{args:?}: {err}");
    }
    // Nothing close: no suggestion.
    let err = common::run_err(&["show", "--db", db, "zzz"]);
    assert!(
        err.contains("no thread 'zzz'") && !err.contains("did you mean"),
        "{err}"
    );
}

#[test]
fn threads_list_meta_selects_as_forget_does() {
    let db = fixture("forget.sqlite");
    let db = s(&db);
    let ids = |args: &[&str]| -> Vec<String> {
        let mut ids: Vec<String> = run_json(args)
            .as_array()
            .expect("array")
            .iter()
            .map(|t| t["thread_id"].as_str().expect("id").to_owned())
            .collect();
        ids.sort();
        ids
    };
    let alice = ids(&[
        "threads",
        "--db",
        db,
        "--meta",
        "user_id=42",
        "--format",
        "json",
    ]);
    assert_eq!(
        alice,
        ["alice-chat", "alice-profile", "alice-sub", "alice-tools"]
    );
    // The threads forget --meta would delete.
    let forget = run_json(&[
        "forget",
        "--db",
        db,
        "--meta",
        "user_id=42",
        "--dry-run",
        "--format",
        "json",
    ]);
    let text = forget.to_string();
    for t in &alice {
        assert!(text.contains(t.as_str()), "{t}: {text}");
    }
    // Several conditions must all hold; none at all: nothing listed.
    assert!(ids(&[
        "threads",
        "list",
        "--db",
        db,
        "--meta",
        "user_id=42",
        "--meta",
        "user_id=7",
        "--format",
        "json"
    ])
    .is_empty());
    assert_eq!(
        ids(&[
            "threads",
            "--db",
            db,
            "--meta",
            "user_id=7",
            "--format",
            "json"
        ]),
        ["bob-chat", "bob-paused"]
    );
    // No `=`: a usage error.
    let out = memctl()
        .args(["threads", "--db", db, "--meta", "user_id"])
        .output()
        .expect("runs");
    assert_eq!(out.status.code(), Some(2));
}
