//! One thread of 20,000 messages (issue #12): every command that reads or plans on a thread
//! must stay linear in its length. The thread is written straight into a copy of the committed
//! fixture with memctl's own codec (the `tools` thread's latest checkpoint, its message list
//! replaced), so the test needs no Python and takes a few seconds even in a debug build; a
//! quadratic step (pairing tool calls by scanning the list for each message, matching diff
//! ids with a scan per message) takes minutes here. No timings are asserted: the default test
//! time is the limit, and the counts say each command read the whole thread.

mod common;

use std::path::{Path, PathBuf};

use common::{fixture, s, temp_copy};
use memctl::codec::msgpack::{self, Value};
use memctl::ops::update::message_ext;
use serde_json::Value as Json;

/// Messages in the thread.
const MESSAGES: usize = 20_000;

/// The thread's messages: a human question, every third turn an AI tool call and its answer,
/// then the AI reply (as `scripts/make_long_thread.py` writes them with real LangGraph).
/// Returns the stored values and the ids of the tool-calling AI messages.
fn messages() -> (Vec<Value>, Vec<String>) {
    fn s(text: impl Into<String>) -> Value {
        Value::str(text)
    }
    let base = |content: String, kind: &str, id: String| {
        vec![
            (s("content"), s(content)),
            (s("additional_kwargs"), Value::map(vec![])),
            (s("response_metadata"), Value::map(vec![])),
            (s("type"), s(kind)),
            (s("name"), Value::Nil),
            (s("id"), s(id)),
        ]
    };
    let ai = |content: String, id: String, calls: Vec<Value>| {
        let mut f = base(content, "ai", id);
        f.push((s("tool_calls"), Value::array(calls)));
        f.push((s("invalid_tool_calls"), Value::array(vec![])));
        f.push((s("usage_metadata"), Value::Nil));
        message_ext("langchain_core.messages.ai", "AIMessage", Value::map(f))
    };
    let mut out = Vec::with_capacity(MESSAGES + 4);
    let mut callers = Vec::new();
    let mut turn = 0;
    while out.len() < MESSAGES {
        let words = |n: usize| {
            (0..n)
                .map(|k| ["invoice", "refund", "latency", "cache", "deploy"][(turn + k) % 5])
                .collect::<Vec<_>>()
                .join(" ")
        };
        out.push(message_ext(
            "langchain_core.messages.human",
            "HumanMessage",
            Value::map(base(words(5 + turn % 30), "human", format!("h{turn}"))),
        ));
        if turn % 3 == 0 && out.len() + 3 <= MESSAGES {
            let call = Value::map(vec![
                (s("name"), s("lookup")),
                (
                    s("args"),
                    Value::map(vec![
                        (s("query"), s(words(3))),
                        (s("limit"), Value::int((turn % 9) as i64)),
                    ]),
                ),
                (s("id"), s(format!("call{turn}"))),
                (s("type"), s("tool_call")),
            ]);
            out.push(ai(String::new(), format!("a{turn}"), vec![call]));
            callers.push(format!("a{turn}"));
            let mut f = base(words(10 + turn % 50), "tool", format!("t{turn}"));
            f[4].1 = s("lookup");
            f.extend([
                (s("tool_call_id"), s(format!("call{turn}"))),
                (s("artifact"), Value::Nil),
                (s("status"), s("success")),
            ]);
            out.push(message_ext(
                "langchain_core.messages.tool",
                "ToolMessage",
                Value::map(f),
            ));
        }
        if out.len() < MESSAGES {
            out.push(ai(words(10 + turn % 40), format!("r{turn}"), vec![]));
        }
        turn += 1;
    }
    (out, callers)
}

/// A copy of `fixtures/new.sqlite` whose thread `tools` gets two new checkpoints (copies of
/// its latest, ids and steps moved on): the first holds the long message list, the second
/// (the thread's latest) the same list with message `h7` edited, message 100 removed and a
/// message appended. Returns the temp dir guard, the path, and the ids of the tool-calling AI
/// messages.
fn long_thread_db() -> (tempfile::TempDir, std::path::PathBuf, Vec<String>) {
    let (dir, db) = temp_copy(&fixture("new.sqlite"));
    let conn = rusqlite::Connection::open(&db).expect("open the copy");
    let (id, blob, metadata): (String, Vec<u8>, String) = conn
        .query_row(
            "SELECT checkpoint_id, checkpoint, CAST(metadata AS TEXT) FROM checkpoints \
             WHERE thread_id = 'tools' AND checkpoint_ns = '' ORDER BY checkpoint_id DESC LIMIT 1",
            [],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
        )
        .expect("the tools thread's latest checkpoint");
    let root = msgpack::decode(&blob).expect("the fixture decodes");
    let md: Json = serde_json::from_str(&metadata).expect("metadata is JSON");
    let step = md["step"].as_i64().expect("a step");
    // Appends a checkpoint after `parent`: the same time and node, the clock sequence (the
    // step) moved on, so that it sorts after it.
    let append = |parent: &str, steps: i64, list: Vec<Value>| {
        let new_id = format!("{}-{:04x}-000000000000", &id[..18], 0x8000 + step + steps);
        assert!(new_id.as_str() > parent, "{new_id} sorts after {parent}");
        let mut root = root.clone();
        *root
            .get_mut("channel_values")
            .and_then(|v| v.get_mut("messages"))
            .expect("a messages channel") = Value::array(list);
        *root.get_mut("id").expect("an id") = Value::str(new_id.clone());
        let mut md = md.clone();
        md["step"] = Json::from(step + steps);
        md["source"] = Json::from("update");
        conn.execute(
            "INSERT INTO checkpoints (thread_id, checkpoint_ns, checkpoint_id, \
             parent_checkpoint_id, type, checkpoint, metadata) \
             VALUES ('tools', '', ?1, ?2, 'msgpack', ?3, ?4)",
            rusqlite::params![
                new_id,
                parent,
                msgpack::encode(&root),
                md.to_string().into_bytes()
            ],
        )
        .expect("insert a checkpoint");
        new_id
    };
    let (list, callers) = messages();
    let id_of = |m: &Value| {
        let fields = m.as_ext()?.payload.as_array()?.get(2)?;
        fields.get("id")?.as_str().map(str::to_owned)
    };
    let at = |id: &str| {
        list.iter()
            .position(|m| id_of(m).as_deref() == Some(id))
            .expect("the message is in the list")
    };
    let mut edited = list.clone();
    if let Some(Value::Array(parts)) = edited[at("h7")].as_ext().map(|e| e.payload.clone()) {
        let mut parts = parts;
        *parts.items[2].get_mut("content").expect("content") = Value::str("edited");
        edited[at("h7")] = Value::ext(5, Value::Array(parts));
    }
    edited.remove(at("h37"));
    edited.push(message_ext(
        "langchain_core.messages.human",
        "HumanMessage",
        Value::map(vec![
            (Value::str("content"), Value::str("one more")),
            (Value::str("additional_kwargs"), Value::map(vec![])),
            (Value::str("response_metadata"), Value::map(vec![])),
            (Value::str("type"), Value::str("human")),
            (Value::str("name"), Value::Nil),
            (Value::str("id"), Value::str("h-last")),
        ]),
    ));
    let first = append(&id, 1, list);
    append(&first, 2, edited);
    (dir, db, callers)
}

/// Runs memctl on the thread (`COLUMNS` unset: tables are not fitted to a terminal).
fn run(db: &Path, args: &[&str]) -> String {
    let out = common::memctl()
        .env_remove("COLUMNS")
        .args(args)
        .args(["--db", s(db)])
        .output()
        .expect("memctl runs");
    assert!(
        out.status.success(),
        "memctl {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("UTF-8")
}

fn json(db: &Path, args: &[&str]) -> Json {
    let text = run(db, args);
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("memctl {args:?}: bad JSON ({e})"))
}

#[test]
fn every_command_reads_a_long_thread_in_linear_time() {
    let (_dir, db, callers) = long_thread_db();
    let tools = callers.len();
    // The command, then the thread, then the rest.
    fn with<'a>(more: &[&'a str]) -> Vec<&'a str> {
        [&more[..1], &["--thread", "tools"], &more[1..]].concat()
    }

    // history: both new checkpoints' messages are counted.
    let history = json(&db, &with(&["history", "--format", "json"]));
    assert_eq!(history[0]["messages"], MESSAGES);
    assert_eq!(history[1]["messages"], MESSAGES);
    assert_eq!(history[2]["messages"], 9, "the fixture's own latest state");

    // show: every message, as JSON and as the chat transcript.
    let shown = json(&db, &with(&["show", "--format", "json"]));
    assert_eq!(shown["messages"].as_array().map(Vec::len), Some(MESSAGES));
    let chat = run(&db, &with(&["show"]));
    let tool_banners = chat
        .lines()
        .filter(|l| l.contains(" Tool Message "))
        .count();
    assert_eq!(tool_banners, tools);
    assert_eq!(chat.matches("Tool Calls:").count(), tools);

    // dump: one record per message, in order.
    let lines = run(&db, &with(&["dump", "--format", "jsonl"]));
    assert_eq!(lines.lines().count(), MESSAGES);
    let dumped = json(&db, &with(&["dump"]));
    assert_eq!(dumped.as_array().map(Vec::len), Some(MESSAGES));
    assert_eq!(dumped[0]["id"], "h0");

    // tokens: a row per message (the table is laid out a chunk at a time) and the total.
    let counted = json(&db, &with(&["tokens", "--format", "json"]));
    let per: Vec<u64> = counted["messages"]
        .as_array()
        .expect("messages")
        .iter()
        .filter_map(|m| m["tokens"].as_u64())
        .collect();
    assert_eq!(per.len(), MESSAGES);
    assert_eq!(counted["total"].as_u64(), Some(per.iter().sum::<u64>()));
    let table = run(&db, &with(&["tokens"]));
    assert_eq!(
        table.lines().count(),
        1 + MESSAGES + 1,
        "header, rows, total"
    );
    assert!(table.ends_with(&format!("total: {} tokens (approx)\n", counted["total"])));

    // diff of the two long lists: matched by id, one changed, one removed, one added.
    let diff = json(&db, &with(&["diff", "--format", "json"]));
    let m = &diff["messages"];
    assert_eq!(
        (&m["before"], &m["after"]),
        (&Json::from(MESSAGES), &Json::from(MESSAGES))
    );
    assert_eq!(m["removed"].as_array().map(Vec::len), Some(1));
    assert_eq!(m["removed"][0]["id"], "h37");
    assert_eq!(m["added"].as_array().map(Vec::len), Some(1));
    assert_eq!(m["added"][0]["id"], "h-last");
    assert_eq!(m["changed"].as_array().map(Vec::len), Some(1));
    assert_eq!(m["changed"][0]["id"], "h7");
    assert_eq!(m["changed"][0]["after"]["content"], "edited");
    let diff = run(&db, &with(&["diff"]));
    assert!(diff.contains("\n- [human] h37 "), "{diff}");
    assert!(diff.contains("\n~ [human] h7 edited\n"), "{diff}");
    assert!(diff.contains("\n+ [human] h-last one more"), "{diff}");
    // The first long list against the fixture's latest: all new.
    let first = history[1]["checkpoint_id"].as_str().expect("an id");
    let diff = json(&db, &with(&["diff", "--to", first, "--format", "json"]));
    assert_eq!(diff["messages"]["before"], 9);
    assert_eq!(
        diff["messages"]["added"].as_array().map(Vec::len),
        Some(MESSAGES)
    );
    assert_eq!(
        diff["messages"]["removed"].as_array().map(Vec::len),
        Some(9)
    );
    let diff = run(&db, &with(&["diff", "--to", first]));
    assert_eq!(
        diff.lines().filter(|l| l.starts_with("+ [")).count(),
        MESSAGES
    );

    // rm --type tool: every ToolMessage and, with it, the AI message that called it.
    let rm = json(
        &db,
        &with(&["rm", "--type", "tool", "--dry-run", "--format", "json"]),
    );
    let rm = &rm["threads"][0];
    assert_eq!(rm["status"], "would rewrite");
    assert_eq!(rm["messages_before"], MESSAGES);
    assert_eq!(rm["messages_after"], MESSAGES - 2 * tools);
    assert_eq!(rm["removed"].as_array().map(Vec::len), Some(2 * tools));
    let widened = rm["notes"].as_array().expect("notes");
    assert_eq!(
        widened.len(),
        tools,
        "one note per AI message taken with its answer"
    );
    assert!(callers.iter().zip(widened).all(|(id, note)| {
        note.as_str()
            .is_some_and(|n| n.contains(&format!(" ai {id} too: it made the tool call")))
    }));

    // One message out of the middle: every kept tool call is checked for its answer.
    let rm = json(
        &db,
        &with(&["rm", "--index", "5", "--dry-run", "--format", "json"]),
    );
    assert_eq!(rm["threads"][0]["messages_after"], MESSAGES - 1);

    // trim and summarize plan on the whole thread.
    let trim = json(
        &db,
        &with(&["trim", "--keep", "4", "--dry-run", "--format", "json"]),
    );
    assert_eq!(trim["threads"][0]["messages_before"], MESSAGES);
    let summarize = json(
        &db,
        &with(&["summarize", "--keep", "4", "--dry-run", "--format", "json"]),
    );
    assert_eq!(summarize["threads"][0]["messages_before"], MESSAGES);
    assert_eq!(summarize["threads"][0]["status"], "would summarize");

    // A real rm: the new checkpoint and the write row (several MB each) are streamed into
    // their rows in pieces, the kept messages copied from the old blob. Real LangGraph
    // loads the result: one message fewer, the others in order.
    let ids_before: Vec<Json> = shown["messages"]
        .as_array()
        .expect("messages")
        .iter()
        .map(|m| m["id"].clone())
        .collect();
    let rm = json(&db, &with(&["rm", "--index", "5", "--format", "json"]));
    assert_eq!(rm["threads"][0]["status"], "rewritten", "{rm}");
    let script = r#"
import json, sqlite3, sys
from langgraph.checkpoint.sqlite import SqliteSaver
saver = SqliteSaver(sqlite3.connect(sys.argv[1]))
t = saver.get_tuple({"configurable": {"thread_id": "tools", "checkpoint_ns": ""}})
print(json.dumps({"ids": [m.id for m in t.checkpoint["channel_values"]["messages"]],
                  "source": t.metadata["source"]}))
"#;
    let python = std::env::var_os("MEMCTL_PYTHON_NEW")
        .map(PathBuf::from)
        .unwrap_or_else(|| common::root().join(".venv/new/bin/python"));
    assert!(
        python.exists(),
        "LangGraph's venv is missing ({}): run scripts/test.sh, which makes it",
        python.display()
    );
    let out = std::process::Command::new(&python)
        .args(["-c", script, s(&db)])
        .output()
        .expect("python runs");
    assert!(
        out.status.success(),
        "LangGraph could not load the rewritten thread: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let loaded: Json = serde_json::from_slice(&out.stdout).expect("the script's JSON");
    assert_eq!(loaded["source"], "update");
    let mut expected = ids_before;
    expected.remove(5);
    assert_eq!(loaded["ids"].as_array(), Some(&expected));
}
