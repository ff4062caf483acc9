//! Threads of a real deepagents agent (fixtures/deep.sqlite: `create_deep_agent` 0.6.12 with
//! a scripted model, `messages` and `files` in DeltaChannels with `snapshot_frequency=50`).
//!
//! Reads: at every checkpoint of every thread (and of the subagent's namespace), memctl's
//! messages, values and counts equal LangGraph's `get_state_history` as recorded in
//! fixtures/expected/deep.json; tokens equal LangChain's. Rewrites (trim, rm, --purge,
//! summarize, gc) on a copy are checked by tests/interop/harness_deep.py in .venv/deep against
//! real `update_state` on another copy, and the deep agent then runs one more turn whose model
//! must receive exactly the kept history. Fails, never skips, when .venv/deep is missing.

mod common;

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use common::{delta_states, fixture, run_err, run_json, s, temp_copy};
use serde_json::{json, Value as Json};

/// Runs tests/interop/harness_deep.py with `args`; its JSON report, or its stderr.
fn harness(args: &[&str]) -> Result<Json, String> {
    common::Harness::new("deep", "harness_deep.py")
        .run(args)
        .json()
}

fn deep_db() -> PathBuf {
    fixture("deep.sqlite")
}

fn same(a: &Json, b: &Json) -> bool {
    serde_json::to_string(a).ok() == serde_json::to_string(b).ok()
}

/// deep.json: its threads, and a state's messages / values resolved from the tables.
struct Expected {
    doc: Json,
}

impl Expected {
    fn load() -> Expected {
        Expected {
            doc: common::expected("deep"),
        }
    }

    fn threads(&self) -> Vec<(String, Json)> {
        self.doc["threads"]
            .as_object()
            .expect("threads")
            .iter()
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect()
    }

    /// `model_dump()`s of a list of indices into message_dumps.
    fn messages(&self, refs: &Json) -> Json {
        Json::Array(
            refs.as_array()
                .expect("message refs")
                .iter()
                .map(|i| self.doc["message_dumps"][i.as_u64().expect("index") as usize].clone())
                .collect(),
        )
    }

    /// The other state values of a history entry.
    fn values(&self, h: &Json) -> Json {
        self.doc["value_dumps"][h["values"].as_u64().expect("values index") as usize].clone()
    }
}

/// memctl's messages, values and message count at every checkpoint of `history` (in `ns`).
fn check_states(
    exp: &Expected,
    thread: &str,
    ns: Option<&str>,
    history: &[Json],
    failures: &mut Vec<String>,
) -> usize {
    let db = deep_db();
    let mut base = vec!["--db", s(&db), thread];
    if let Some(ns) = ns {
        base.extend(["--ns", ns]);
    }
    let listed = run_json(&[&["history"][..], &base, &["--format", "json"]].concat());
    let counts: HashMap<String, Json> = listed
        .as_array()
        .expect("records")
        .iter()
        .map(|r| {
            (
                r["checkpoint_id"].as_str().expect("id").to_owned(),
                r["messages"].clone(),
            )
        })
        .collect();
    if counts.len() != history.len() {
        failures.push(format!(
            "{thread} {ns:?}: history lists {} checkpoints, langgraph {}",
            counts.len(),
            history.len()
        ));
    }
    for h in history {
        let id = h["checkpoint_id"].as_str().expect("id");
        let at = [&base[..], &["--checkpoint", id]].concat();
        let want = exp.messages(&h["messages"]);
        let got = run_json(&[&["dump"][..], &at].concat());
        if !same(&got, &want) {
            failures.push(format!(
                "{thread} {ns:?} @ {id} (step {}): dump\n  memctl:    {got}\n  langgraph: {want}",
                h["step"]
            ));
        }
        let n = want.as_array().map(Vec::len);
        // `history` shows no count ("-") for a checkpoint that stores no messages channel
        // and has nothing to replay (the input checkpoint of the subagent's plain-messages
        // namespace), as for new.sqlite; LangGraph shows the channel's empty default there.
        let count = counts.get(id).and_then(|c| match c {
            Json::Null if n == Some(0) => Some(0),
            c => c.as_u64().map(|c| c as usize),
        });
        if count != n {
            failures.push(format!(
                "{thread} {ns:?} @ {id}: history counts {:?} messages, langgraph {n:?}",
                counts.get(id)
            ));
        }
        let shown = run_json(&[&["show"][..], &at, &["--format", "json"]].concat());
        for (k, v) in exp.values(h).as_object().expect("values") {
            if !same(&shown["values"][k], v) {
                failures.push(format!(
                    "{thread} {ns:?} @ {id}: value '{k}'\n  memctl:    {}\n  langgraph: {v}",
                    shown["values"][k]
                ));
            }
        }
        // The raw dump says how the blob stores each DeltaChannel, as the saver stored it.
        let raw = run_json(&[&["dump", "--raw"][..], &at].concat());
        for (channel, kind) in h["stored"].as_object().expect("stored") {
            let d = &raw["delta_channels"][channel];
            let snapshot = d["stored"] == "snapshot";
            if snapshot != (kind == "delta_snapshot") {
                failures.push(format!(
                    "{thread} {ns:?} @ {id}: {channel} stored as {kind}, memctl says {d}"
                ));
            }
        }
    }
    history.len()
}

#[test]
fn every_checkpoint_of_every_deep_thread_is_langgraphs_state() {
    let exp = Expected::load();
    let db = deep_db();
    let mut failures = Vec::new();
    let mut checked = 0;
    let mut snapshots = HashMap::<String, usize>::new();
    let mut in_namespaces = 0;
    for (thread, t) in exp.threads() {
        let history = t["history"].as_array().expect("history");
        checked += check_states(&exp, &thread, None, history, &mut failures);
        for h in history {
            for (channel, kind) in h["stored"].as_object().expect("stored") {
                if kind == "delta_snapshot" {
                    *snapshots.entry(channel.clone()).or_default() += 1;
                }
            }
        }
        for (ns, history) in t["namespaces"].as_object().expect("namespaces") {
            let history = history.as_array().expect("history");
            in_namespaces += check_states(&exp, &thread, Some(ns), history, &mut failures);
        }
        // The latest state: next, and threads list.
        let shown = run_json(&["show", "--db", s(&db), &thread, "--format", "json"]);
        if shown["next"] != t["next"] {
            failures.push(format!(
                "{thread}: next {} / langgraph {}",
                shown["next"], t["next"]
            ));
        }
        let list = run_json(&["threads", "list", "--db", s(&db), "--format", "json"]);
        let row = list
            .as_array()
            .expect("rows")
            .iter()
            .find(|r| r["thread_id"] == thread.as_str())
            .expect("listed");
        let n = t["state_messages"].as_array().map(Vec::len);
        if row["messages"].as_u64().map(|m| m as usize) != n
            || row["tokens"] != t["tokens_approx"]["total"]
        {
            failures.push(format!("{thread}: threads list {row} / langgraph {n:?}"));
        }
    }
    assert!(checked > 300, "checked {checked} checkpoints");
    assert!(in_namespaces >= 8, "subagent checkpoints: {in_namespaces}");
    assert!(
        snapshots.get("messages").is_some_and(|n| *n >= 3) && snapshots.contains_key("files"),
        "snapshots in the fixture: {snapshots:?}"
    );
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn tokens_of_deep_threads_are_langchains() {
    let exp = Expected::load();
    let db = deep_db();
    let mut failures = Vec::new();
    for (thread, t) in exp.threads() {
        let per_message = |doc: &Json| -> Json {
            Json::Array(
                doc["messages"]
                    .as_array()
                    .expect("messages")
                    .iter()
                    .map(|m| m["tokens"].clone())
                    .collect(),
            )
        };
        // LangChain's count of one message alone includes the 3 tokens that prime the reply;
        // memctl's per-message counts do not (its total adds them once).
        let openai = |model: &str| -> Json {
            let o = &t["tokens_openai"][model];
            let per = o["per_message"].as_array().expect("per message");
            json!({"total": o["total"], "per_message": per.iter()
                .map(|n| n.as_u64().expect("count") - 3).collect::<Vec<_>>()})
        };
        for (counter, want) in [
            (vec![], t["tokens_approx"].clone()),
            (vec!["--model", "gpt-4o"], openai("gpt-4o")),
            (vec!["--counter", "cl100k"], openai("gpt-4")),
        ] {
            let args = [
                &["tokens", "--db", s(&db), "--thread", &thread][..],
                &counter,
                &["--format", "json"],
            ]
            .concat();
            let doc = run_json(&args);
            if doc["total"] != want["total"] || !same(&per_message(&doc), &want["per_message"]) {
                failures.push(format!(
                    "{thread} {counter:?}: memctl {} {}, langchain {} {}",
                    doc["total"],
                    per_message(&doc),
                    want["total"],
                    want["per_message"]
                ));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// harness_deep.py check-rewrite of `db` (a rewritten copy of deep.sqlite) against `expect`:
/// rows compared with real `update_state` on another copy, get_state, get_state_history, and
/// the deep agent's next turn.
fn harness_check(thread: &str, db: &Path, dir: &Path, expect: &Json) -> Result<(), String> {
    let graph = format!("deep:{thread}");
    common::Harness::new("deep", "harness_deep.py")
        .check_rewrite(&common::Rewrite {
            original: &deep_db(),
            rewritten: db,
            thread,
            graph: Some(&graph),
            expect,
            dir,
        })
        .json()
        .map(|_| ())
}

/// memctl `memctl_args` on a copy of deep.sqlite, then the harness's check.
fn check_rewrite(thread: &str, memctl_args: &[&str], expect: Json) -> Result<(), String> {
    let (dir, db) = temp_copy(&deep_db());
    let args = [
        memctl_args,
        &["--db", s(&db), "--thread", thread, "--format", "json"],
    ]
    .concat();
    let out = run_json(&args);
    if out["threads"][0]["status"] != "rewritten" {
        return Err(format!("{thread} {memctl_args:?}: {}", out["threads"][0]));
    }
    let mut expect = expect;
    expect["expect_write"] = Json::Bool(true);
    harness_check(thread, &db, dir.path(), &expect)
        .map_err(|e| format!("{thread} memctl {memctl_args:?}:\n{e}"))
}

/// The ids of a thread's latest messages as memctl dumps them.
fn ids(messages: &Json) -> Vec<Json> {
    messages
        .as_array()
        .expect("messages")
        .iter()
        .map(|m| m["id"].clone())
        .collect()
}

#[test]
#[cfg_attr(
    not(feature = "env-tests"),
    ignore = "needs scripts/test.sh's environment (--features env-tests)"
)]
fn trim_and_rm_of_deep_threads_are_what_update_state_writes() {
    let mut failures = Vec::new();
    for thread in ["long", "abandoned", "subagent"] {
        for keep in ["2", "5"] {
            let trim = json!({"mode": "trim", "max_tokens": keep.parse::<u64>().expect("n"),
                "counter": "len", "keep_first": false});
            if let Err(e) = check_rewrite(thread, &["trim", "--keep", keep], trim) {
                failures.push(e);
            }
        }
        let listed = run_json(&["dump", "--db", s(&deep_db()), thread]);
        let expect = json!({"mode": "ids", "ids": ids(&listed)[1..]});
        if let Err(e) = check_rewrite(thread, &["rm", "--index", "0"], expect) {
            failures.push(e);
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

#[test]
fn a_deep_thread_paused_for_approval_is_refused_like_any_paused_thread() {
    let (_d, db) = temp_copy(&deep_db());
    let before = std::fs::read(&db).expect("read");
    let err = run_err(&["trim", "--db", s(&db), "--thread", "review", "--keep", "2"]);
    assert!(err.contains("interrupt"), "{err}");
    assert_eq!(std::fs::read(&db).expect("read"), before, "nothing written");
}

#[test]
#[cfg_attr(
    not(feature = "env-tests"),
    ignore = "needs scripts/test.sh's environment (--features env-tests)"
)]
fn a_purged_deep_thread_loads_continues_and_keeps_no_removed_byte() {
    for thread in ["long", "subagent"] {
        let (_d, db) = temp_copy(&deep_db());
        let (before, _) = delta_states::purge_first_message(&db, thread);
        let graph = format!("deep:{thread}");
        let state = harness(&[
            "state",
            "--db",
            s(&db),
            "--thread",
            thread,
            "--graph",
            &graph,
        ])
        .expect("state");
        assert_eq!(ids(&state["messages"]), ids(&before)[1..], "{thread}");
        // Its files are still the agent's files.
        let files_before = run_json(&["show", "--db", s(&deep_db()), thread, "--format", "json"]);
        let files_after = run_json(&["show", "--db", s(&db), thread, "--format", "json"]);
        assert!(
            same(
                &files_after["values"]["files"],
                &files_before["values"]["files"]
            ) && files_before["values"]["files"].is_object(),
            "{thread}: files {} / {}",
            files_after["values"]["files"],
            files_before["values"]["files"]
        );
        // The deep agent runs one more turn; its model gets exactly the kept history (after
        // deepagents' system prompt) and the new question.
        let cont = harness(&[
            "continue",
            "--db",
            s(&db),
            "--thread",
            thread,
            "--copy",
            "--graph",
            &graph,
        ])
        .expect("continue");
        assert_eq!(
            cont["messages_after"].as_u64(),
            cont["messages_before"].as_u64().map(|n| n + 2),
            "{thread}: {cont}"
        );
        let received = ids(&cont["model_received"][0]);
        let kept = &ids(&before)[1..];
        assert!(
            received.len() == kept.len() + 2
                && cont["model_received"][0][0]["type"] == "system"
                && received[1..=kept.len()] == *kept,
            "{thread}: the model received {received:?}"
        );
    }
}

#[test]
#[cfg_attr(
    not(feature = "env-tests"),
    ignore = "needs scripts/test.sh's environment (--features env-tests)"
)]
fn summarize_of_deep_threads_is_what_update_state_writes() {
    use common::chat_server::{ChatServer, Reply};
    let server = ChatServer::start(|_, n| Reply::Summary(format!("Earlier: the project, {n}.")));
    let mut failures = Vec::new();
    for thread in ["long", "abandoned"] {
        let (dir, db) = temp_copy(&deep_db());
        let out = common::memctl()
            .env("MEMCTL_TEST_KEY", "test-key")
            .args([
                "summarize",
                "--db",
                s(&db),
                "--thread",
                thread,
                "--keep",
                "4",
            ])
            .args(["--endpoint", &server.url, "--model", "m"])
            .args(["--api-key-env", "MEMCTL_TEST_KEY", "--format", "json"])
            .output()
            .expect("memctl runs");
        let report: Json = serde_json::from_slice(&out.stdout).unwrap_or(Json::Null);
        if report["threads"][0]["status"] != "summarized" {
            failures.push(format!(
                "{thread}: {report} {}",
                String::from_utf8_lossy(&out.stderr)
            ));
            continue;
        }
        // Expected: the summary message by its fields, the kept messages by id.
        let state = run_json(&["dump", "--db", s(&db), "--thread", thread]);
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
        assert!(items.len() >= 2, "{thread}: {state}");
        let expect = json!({"mode": "messages", "messages": items, "expect_write": true});
        if let Err(e) = harness_check(thread, &db, dir.path(), &expect) {
            failures.push(format!("{thread}:\n{e}"));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

/// gc on deep-agent threads: every checkpoint it keeps reads exactly as before (LangGraph's
/// `get_state_history`: messages, files and the other values, next, tasks, interrupts,
/// metadata; and memctl), history lists exactly the kept ones, the file shrinks, and the
/// agent carries on with exactly the kept history.
///
/// `messages` and `files` snapshot at different checkpoints on these threads (`files` on
/// some never), so keeping the chain back to the seeds kept everything; gc now writes a fresh
/// snapshot of both into the oldest kept checkpoint and deletes the rest.
#[test]
#[cfg_attr(
    not(feature = "env-tests"),
    ignore = "needs scripts/test.sh's environment (--features env-tests)"
)]
fn gc_keeps_every_kept_checkpoints_deep_state() {
    let original = harness(&["deep-states", "--db", s(&deep_db())]).expect("states");
    let carry_on = |db: &Path| {
        harness(&[
            "continue",
            "--db",
            s(db),
            "--thread",
            "long",
            "--copy",
            "--graph",
            "deep:long",
        ])
        .expect("continue")
    };
    let untouched = carry_on(&deep_db());
    for keep in ["1", "3"] {
        let (_d, db) = temp_copy(&deep_db());
        let (mut failures, out) =
            delta_states::check_gc(s(&db), keep, &["--vacuum"], &original, || {
                harness(&["deep-states", "--db", s(&db)]).expect("states")
            });
        let after = harness(&["deep-states", "--db", s(&db)]).expect("states");
        // Every thread is a DeltaChannel thread gc snapshotted, and the file shrinks.
        for t in out["threads"].as_array().expect("threads") {
            if t["delta"] != "snapshot" {
                failures.push(format!("keep {keep}: {t}"));
            }
        }
        let (before, now) = (
            std::fs::metadata(deep_db()).expect("file").len(),
            std::fs::metadata(&db).expect("file").len(),
        );
        if now * 2 > before {
            failures.push(format!("keep {keep}: file {before} → {now} bytes"));
        }
        // The deep agent carries on after gc.
        let cont = carry_on(&db);
        let latest = &after["threads"]["long"]["history"][0]["messages"];
        let n = latest.as_array().map_or(0, Vec::len);
        if cont["messages_after"].as_u64() != Some(n as u64 + 2) {
            failures.push(format!("keep {keep}: long continued to {cont}"));
        }
        // The model gets exactly what it gets when the untouched thread carries on.
        let seen = |c: &Json| -> Vec<(Json, Json)> {
            c["model_received"]
                .as_array()
                .expect("calls")
                .iter()
                .flat_map(|call| call.as_array().cloned().unwrap_or_default())
                .map(|m| (m["type"].clone(), m["content"].clone()))
                .collect()
        };
        if cont["model_calls"].as_u64().unwrap_or(0) == 0 || seen(&cont) != seen(&untouched) {
            failures.push(format!(
                "keep {keep}: the model received {:?}, not {:?}",
                seen(&cont),
                seen(&untouched)
            ));
        }
        assert!(failures.is_empty(), "{}", failures.join("\n"));
    }
}
