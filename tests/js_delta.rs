//! LangGraph.js DeltaChannel threads (fixtures/js-delta.sqlite, written by real LangGraph.js
//! with fixtures/js/generate.mjs): memctl reads every checkpoint as LangGraph.js's
//! `getStateHistory` shows it (fixtures/expected/js-delta.json, no node needed), and what
//! `gc` leaves, LangGraph.js (node, fixtures/js/node_modules made by scripts/jsenv.sh) reads
//! the same and continues. The node tests fail, never skip, when node or its modules are
//! missing.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::{delta_states, expected, fixture, run_json, s, temp_copy};
use serde_json::Value as Json;

/// A message as the expectations record it (`graphs.mjs`'s `plain`): type, id, content, and
/// the name and tool calls when there are any.
fn plain(m: &Json) -> Json {
    let mut out = serde_json::Map::new();
    out.insert("type".into(), m["type"].clone());
    out.insert("id".into(), m["id"].clone());
    out.insert("content".into(), m["content"].clone());
    if !m["name"].is_null() {
        out.insert("name".into(), m["name"].clone());
    }
    if m["tool_calls"].as_array().is_some_and(|c| !c.is_empty()) {
        out.insert("tool_calls".into(), m["tool_calls"].clone());
    }
    Json::Object(out)
}

/// memctl's messages of `thread` at `checkpoint` (the latest: `None`), as [`plain`] makes them.
fn memctl_messages(db: &str, thread: &str, checkpoint: Option<&str>) -> Json {
    let mut args = vec!["dump", "--db", db, thread];
    if let Some(id) = checkpoint {
        args.extend(["--checkpoint", id]);
    }
    let got = run_json(&args);
    Json::Array(got.as_array().expect("a list").iter().map(plain).collect())
}

/// Compares memctl on `db` with `states` (LangGraph.js's view of it): the messages (`dump`),
/// message count (`history`) and `turns` (`show`) at every checkpoint, and the latest
/// messages. Returns how many checkpoints were compared and the differences.
fn compare(db: &str, states: &Json) -> (usize, Vec<String>) {
    let mut failures = Vec::new();
    let mut checked = 0;
    for (thread, t) in states["threads"].as_object().expect("threads") {
        let history = run_json(&["history", "--db", db, thread, "--format", "json"]);
        let count = |id: &str| {
            history
                .as_array()
                .expect("records")
                .iter()
                .find(|r| r["checkpoint_id"] == id)
                .map(|r| r["messages"].clone())
        };
        for h in t["history"].as_array().expect("history") {
            let id = h["checkpoint_id"].as_str().expect("id");
            let got = memctl_messages(db, thread, Some(id));
            if got != h["messages"] {
                failures.push(format!(
                    "{thread} @ {id} (step {}): dump\n  memctl:       {got}\n  langgraph.js: {}",
                    h["step"], h["messages"]
                ));
            }
            let n = h["messages"].as_array().map(Vec::len);
            if count(id).and_then(|c| c.as_u64()).map(|c| c as usize) != n {
                failures.push(format!(
                    "{thread} @ {id}: history counts {:?}, langgraph.js {n:?}",
                    count(id)
                ));
            }
            let shown = run_json(&[
                "show",
                "--db",
                db,
                thread,
                "--checkpoint",
                id,
                "--format",
                "json",
            ]);
            for (k, v) in h["values"].as_object().expect("values") {
                if shown["values"][k] != *v {
                    failures.push(format!(
                        "{thread} @ {id}: value '{k}': memctl {}, langgraph.js {v}",
                        shown["values"][k]
                    ));
                }
            }
            checked += 1;
        }
        let latest = memctl_messages(db, thread, None);
        if latest != t["latest_messages"] {
            failures.push(format!("{thread}: latest messages differ: {latest}"));
        }
    }
    (checked, failures)
}

#[test]
fn every_checkpoint_of_every_js_delta_thread_is_langgraph_js_state() {
    let states = expected("js-delta");
    let (checked, failures) = compare(s(&fixture("js-delta.sqlite")), &states);
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert!(checked >= 60, "checked {checked} checkpoints");
}

#[test]
fn the_fixture_is_a_langgraph_js_delta_fixture() {
    // What the tests rely on: LangGraph.js's JSON rows, its DeltaChannel marker, snapshots
    // of `messages` between checkpoints that replay writes, and an interrupt left waiting.
    let raw = std::fs::read(fixture("js-delta.sqlite")).expect("fixture");
    let holds = |needle: &str| raw.windows(needle.len()).any(|w| w == needle.as_bytes());
    assert!(holds("\"delta_writes_versioned\":true"));
    assert!(holds("\"type\":\"delta_snapshot\""));
    let states = expected("js-delta");
    let waiting = states["threads"]["js-interrupt"]["history"][0]["tasks"][0]["interrupts"]
        .as_array()
        .is_some_and(|i| !i.is_empty());
    assert!(waiting, "js-interrupt waits on an interrupt");
}

/// The node_modules with real LangGraph.js: `$MEMCTL_NODE_MODULES`, else
/// fixtures/js/node_modules. A missing one (or a missing node) fails the test with what to run.
fn node_modules() -> PathBuf {
    let path = std::env::var_os("MEMCTL_NODE_MODULES")
        .map(PathBuf::from)
        .unwrap_or_else(|| common::root().join("fixtures/js/node_modules"));
    assert!(
        path.join("@langchain/langgraph/package.json").exists(),
        "LangGraph.js is not installed at {}: run scripts/jsenv.sh (scripts/test.sh does it)",
        path.display()
    );
    let node = Command::new("node").arg("--version").output();
    assert!(
        node.is_ok_and(|o| o.status.success()),
        "node is not on PATH: install Node.js 20 (scripts/jsenv.sh needs it too)"
    );
    path
}

/// `node fixtures/js/states.mjs db [--continue]`, run from a temp dir holding the scripts and
/// a link to [`node_modules`]: LangGraph.js's view of every thread of `db`.
fn js_states(db: &Path, cont: bool) -> Json {
    let modules = node_modules();
    let dir = tempfile::tempdir().expect("temp dir");
    for f in ["graphs.mjs", "states.mjs", "package.json"] {
        std::fs::copy(
            common::root().join("fixtures/js").join(f),
            dir.path().join(f),
        )
        .expect("copy script");
    }
    std::os::unix::fs::symlink(&modules, dir.path().join("node_modules")).expect("link");
    let mut cmd = Command::new("node");
    cmd.arg(dir.path().join("states.mjs")).arg(db);
    if cont {
        cmd.arg("--continue");
    }
    let out = cmd.output().expect("node runs");
    assert!(
        out.status.success(),
        "states.mjs failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("states.mjs JSON")
}

#[test]
#[cfg_attr(
    not(feature = "env-tests"),
    ignore = "needs scripts/test.sh's environment (--features env-tests)"
)]
fn the_js_expectations_are_what_langgraph_js_reads_now() {
    // The committed expectations are LangGraph.js's view of the committed fixture (so the
    // read test above needs no node, and stays honest).
    let (_d, db) = temp_copy(&fixture("js-delta.sqlite"));
    let live = js_states(&db, false);
    assert_eq!(live["threads"], expected("js-delta")["threads"]);
}

#[test]
#[cfg_attr(
    not(feature = "env-tests"),
    ignore = "needs scripts/test.sh's environment (--features env-tests)"
)]
fn gc_of_js_delta_threads_keeps_what_langgraph_js_reads_and_it_continues() {
    let before = expected("js-delta");
    let (_o, untouched) = temp_copy(&fixture("js-delta.sqlite"));
    let reference = js_states(&untouched, true)["continued"].clone();
    for keep in ["1", "3"] {
        let (_d, db) = temp_copy(&fixture("js-delta.sqlite"));
        let report = run_json(&[
            "gc",
            "--db",
            s(&db),
            "--all",
            "--keep-checkpoints",
            keep,
            "--min-idle",
            "0s",
            "--format",
            "json",
        ]);
        let deleted = report["deleted"]["checkpoints"].as_u64().unwrap_or(0);
        assert!(deleted > 0, "keep {keep}: {report}");
        for t in report["threads"].as_array().expect("threads") {
            let status = t["status"].as_str().unwrap_or("");
            assert!(
                !status.starts_with("skipped") && !status.starts_with("failed"),
                "keep {keep}: {t}"
            );
        }
        // LangGraph.js reads every kept checkpoint as before, and memctl reads what is left as
        // LangGraph.js does. A thread gc does not report had nothing to collect: it is as it was.
        let mut after = js_states(&db, false);
        let reported: Vec<&str> = report["threads"]
            .as_array()
            .expect("threads")
            .iter()
            .filter_map(|t| t["thread_id"].as_str())
            .collect();
        let threads = after["threads"].as_object_mut().expect("threads");
        let untouched: Vec<String> = threads
            .keys()
            .filter(|k| !reported.contains(&k.as_str()))
            .cloned()
            .collect();
        assert!(reported.len() >= 3, "keep {keep}: {report}");
        // The threads whose newest checkpoint replays writes keep the chain back to the seed
        // (memctl writes no snapshot into LangGraph.js's JSON rows).
        let chains = report["threads"]
            .as_array()
            .expect("threads")
            .iter()
            .filter(|t| t["delta"].as_str().is_some_and(|d| d.starts_with("chain")))
            .count();
        assert!(chains >= 2, "keep {keep}: {report}");
        for thread in &untouched {
            let t = threads.shift_remove(thread).expect("thread");
            assert_eq!(t, before["threads"][thread], "keep {keep}: {thread}");
        }
        let mut failures = delta_states::compare_kept(keep, &report, &before, &after);
        let (_, more) = compare(s(&db), &after);
        failures.extend(more);
        assert!(failures.is_empty(), "{}", failures.join("\n"));
        // And LangGraph.js continues every thread as it would have without the gc.
        let continued = js_states(&db, true)["continued"].clone();
        assert_eq!(continued, reference, "keep {keep}");
    }
}

#[test]
fn trim_and_rm_of_a_js_delta_thread_are_refused_with_one_line_and_write_nothing() {
    // memctl writes msgpack checkpoints only; a LangGraph.js thread's rows are JSON, whose
    // rewrite memctl has not verified against LangGraph.js: refused, the file unchanged.
    let (_d, db) = temp_copy(&fixture("js-delta.sqlite"));
    let before = std::fs::read(&db).expect("read");
    for args in [
        &["trim", "--thread", "js-chat", "--keep", "2"][..],
        &["rm", "--thread", "js-removal", "--index", "0"][..],
        &["rm", "--thread", "js-chat", "--index", "0", "--purge"][..],
    ] {
        let err = common::run_err(&[args, &["--db", s(&db)]].concat());
        assert!(err.contains("stored as 'json'"), "{args:?}: {err}");
    }
    assert!(
        std::fs::read(&db).expect("read") == before,
        "the file changed"
    );
}
