//! Interop: memctl rewrites a copy of a fixture, then real LangGraph (both saver generations,
//! pinned in .venv/new and .venv/old by scripts/pyenv.sh) reads it, compares it field by field
//! with what its own `update_state` writes for the same change, and continues the thread
//! (tests/interop/harness.py). These tests fail, never skip, when LangGraph is missing.

mod common;

use std::path::PathBuf;
use std::process::Command;

use common::{fixture, run_json, s, temp_copy};
use serde_json::{json, Value as Json};

/// The Python of a generation's venv: $MEMCTL_PYTHON_NEW / _OLD, else .venv/<gen>/bin/python.
fn python(gen: &str) -> PathBuf {
    let var = format!("MEMCTL_PYTHON_{}", gen.to_uppercase());
    let path = std::env::var_os(&var)
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            common::root()
                .join(".venv")
                .join(gen)
                .join("bin")
                .join("python")
        });
    assert!(
        path.exists(),
        "LangGraph ({gen}) is not installed at {}: run scripts/pyenv.sh (scripts/test.sh does it)",
        path.display()
    );
    path
}

fn harness(gen: &str, args: &[&str]) -> (bool, String) {
    let out = Command::new(python(gen))
        .arg(common::root().join("tests/interop/harness.py"))
        .args(args)
        .output()
        .expect("the harness runs");
    let text = format!(
        "{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (out.status.success(), text)
}

/// Rewrites a copy with memctl, then runs check-rewrite against the pristine fixture.
fn check(gen: &str, thread: &str, memctl_args: &[&str], expect: Json) -> Result<(), String> {
    let original = fixture(&format!("{gen}.sqlite"));
    let (dir, db) = temp_copy(&original);
    let mut args = memctl_args.to_vec();
    args.extend(["--db", s(&db), "--thread", thread, "--format", "json"]);
    let out = run_json(&args);
    let mut expect = expect;
    if out[0]["status"] == "rewritten" {
        expect["expect_write"] = json!(true);
    }
    let expect_path = dir.path().join("expect.json");
    std::fs::write(&expect_path, expect.to_string()).expect("write expect");
    let (ok, text) = harness(
        gen,
        &[
            "check-rewrite",
            "--original",
            s(&original),
            "--rewritten",
            s(&db),
            "--thread",
            thread,
            "--expect",
            s(&expect_path),
        ],
    );
    if ok {
        Ok(())
    } else {
        Err(format!(
            "{gen}/{thread} memctl {memctl_args:?} ({}):\n{text}",
            out[0]["status"]
        ))
    }
}

/// Threads an idle thread rewrite must handle (all but the paused and the legacy-json ones).
const THREADS: [&str; 11] = [
    "1",
    "tools",
    "custom-state",
    "system",
    "unicode",
    "blocks",
    "usage",
    "summarized",
    "subgraph",
    "dict-input",
    "tuple-args",
];

/// Runs the cases two at a time (two cores) and reports every failure at once.
fn run_all(cases: Vec<(String, String, Vec<String>, Json)>) {
    let failures = std::sync::Mutex::new(Vec::new());
    let queue = std::sync::Mutex::new(cases);
    std::thread::scope(|scope| {
        for _ in 0..2 {
            scope.spawn(|| loop {
                let Some((gen, thread, args, expect)) = queue.lock().expect("queue").pop() else {
                    break;
                };
                let args: Vec<&str> = args.iter().map(String::as_str).collect();
                if let Err(e) = check(&gen, &thread, &args, expect) {
                    failures.lock().expect("failures").push(e);
                }
            });
        }
    });
    let failures = failures.into_inner().expect("failures");
    assert!(
        failures.is_empty(),
        "{} interop failures:\n{}",
        failures.len(),
        failures.join("\n\n")
    );
}

#[test]
fn trim_is_what_langgraph_update_state_writes() {
    let mut cases = Vec::new();
    for gen in common::GENERATIONS {
        for thread in THREADS {
            let v = |a: &[&str]| a.iter().map(|x| (*x).to_owned()).collect::<Vec<_>>();
            cases.push((
                gen.into(),
                thread.into(),
                v(&["trim", "--keep", "4"]),
                json!({"mode": "trim", "max_tokens": 4, "counter": "len", "keep_first": false}),
            ));
            cases.push((gen.into(), thread.into(), v(&["trim", "--max-tokens", "60"]),
                json!({"mode": "trim", "max_tokens": 60, "counter": "approximate", "keep_first": false})));
            cases.push((
                gen.into(),
                thread.into(),
                v(&["trim", "--keep", "2", "--keep-first"]),
                json!({"mode": "trim", "max_tokens": 2, "counter": "len", "keep_first": true}),
            ));
        }
    }
    run_all(cases);
}

#[test]
fn rm_is_what_langgraph_update_state_writes() {
    let mut cases = Vec::new();
    for gen in common::GENERATIONS {
        let exp = common::expected(gen);
        for thread in ["1", "system", "tools", "unicode", "dict-input"] {
            let msgs = exp["threads"][thread]["state_messages"]
                .as_array()
                .expect("messages")
                .clone();
            // Remove the first human message (by index) — in "tools" that message opens a tool
            // exchange that stays, so nothing else goes.
            let ids: Vec<Json> = msgs[1..].iter().map(|m| m["id"].clone()).collect();
            cases.push((
                gen.into(),
                thread.into(),
                vec!["rm".into(), "--index".into(), "0".into()],
                json!({"mode": "ids", "ids": ids}),
            ));
        }
        // A tool answer takes its whole exchange with it.
        let msgs = exp["threads"]["tools"]["state_messages"]
            .as_array()
            .expect("messages")
            .clone();
        let tool_id = msgs.iter().find(|m| m["type"] == "tool").expect("tool")["id"]
            .as_str()
            .expect("id")
            .to_owned();
        let ids: Vec<Json> = msgs
            .iter()
            .enumerate()
            .filter(|(i, _)| ![1usize, 2, 3].contains(i))
            .map(|(_, m)| m["id"].clone())
            .collect();
        cases.push((
            gen.into(),
            "tools".into(),
            vec!["rm".into(), "--id".into(), tool_id],
            json!({"mode": "ids", "ids": ids}),
        ));
    }
    run_all(cases);
}

#[test]
fn purged_thread_still_loads_and_continues() {
    for gen in common::GENERATIONS {
        let (_dir, db) = temp_copy(&fixture(&format!("{gen}.sqlite")));
        let out = run_json(&[
            "rm",
            "--db",
            s(&db),
            "--thread",
            "dict-input",
            "--match",
            "hunter2",
            "--purge",
            "--format",
            "json",
        ]);
        assert_eq!(out[0]["status"], "purged");
        let bytes = std::fs::read(&db).expect("read");
        assert!(
            !bytes.windows(7).any(|w| w == b"hunter2"),
            "{gen}: secret gone"
        );
        let (ok, text) = harness(
            gen,
            &[
                "continue",
                "--db",
                s(&db),
                "--thread",
                "dict-input",
                "--copy",
            ],
        );
        assert!(ok, "{gen}: LangGraph continues the purged thread:\n{text}");
        // Every other thread still loads and continues too.
        for thread in ["1", "tools"] {
            let (ok, text) = harness(
                gen,
                &["continue", "--db", s(&db), "--thread", thread, "--copy"],
            );
            assert!(ok, "{gen}/{thread}: {text}");
        }
    }
}

#[test]
fn forced_rewrite_of_a_paused_thread_still_loads() {
    for gen in common::GENERATIONS {
        let (_dir, db) = temp_copy(&fixture(&format!("{gen}.sqlite")));
        let out = run_json(&[
            "rm",
            "--db",
            s(&db),
            "--thread",
            "interrupt",
            "--index",
            "-1",
            "--force",
            "--format",
            "json",
        ]);
        assert_eq!(out[0]["status"], "rewritten");
        let (ok, text) = harness(
            gen,
            &[
                "continue",
                "--db",
                s(&db),
                "--thread",
                "interrupt",
                "--copy",
            ],
        );
        assert!(ok, "{gen}: {text}");
    }
}

/// summarize with a real chat server, then LangGraph checks the result like any rewrite.
#[test]
fn summarize_is_what_langgraph_update_state_writes() {
    use common::chat_server::{ChatServer, Reply};
    let server = ChatServer::start(|_, n| {
        Reply::Summary(format!("The user introduced themselves; summary {n}."))
    });
    let mut failures = Vec::new();
    for gen in common::GENERATIONS {
        for (thread, extra) in [
            ("system", vec!["--keep", "3"]),
            ("tools", vec!["--keep", "4"]),
            ("summarized", vec!["--keep", "2"]),
            (
                "custom-state",
                vec!["--keep", "2", "--summary-key", "summary"],
            ),
        ] {
            let original = fixture(&format!("{gen}.sqlite"));
            let (dir, db) = temp_copy(&original);
            let mut args = vec![
                "summarize",
                "--db",
                s(&db),
                "--thread",
                thread,
                "--endpoint",
                &server.url,
                "--model",
                "m",
            ];
            args.extend(extra.iter().copied());
            args.extend(["--format", "json"]);
            let out = run_json(&args);
            assert_eq!(out[0]["status"], "summarized", "{gen}/{thread}: {out}");
            let state = run_json(&["dump", "--db", s(&db), "--thread", thread]);
            let shown = run_json(&[
                "show",
                "--db",
                s(&db),
                "--thread",
                thread,
                "--format",
                "json",
            ]);
            // Expected list: original messages by id, the new summary message by its fields.
            let items: Vec<Json> = state
                .as_array()
                .expect("messages")
                .iter()
                .map(|m| {
                    if m["additional_kwargs"]["lc_source"] == "summarization" {
                        m.clone()
                    } else {
                        json!({"id": m["id"]})
                    }
                })
                .collect();
            let mut expect = json!({"mode": "messages", "messages": items, "expect_write": true});
            if thread == "custom-state" {
                expect["values"] = json!({"summary": shown["values"]["summary"]});
            }
            let expect_path = dir.path().join("expect.json");
            std::fs::write(&expect_path, expect.to_string()).expect("write");
            let (ok, text) = harness(
                gen,
                &[
                    "check-rewrite",
                    "--original",
                    s(&original),
                    "--rewritten",
                    s(&db),
                    "--thread",
                    thread,
                    "--expect",
                    s(&expect_path),
                ],
            );
            if !ok {
                failures.push(format!("{gen}/{thread}:\n{text}"));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}
