//! The approximate counter equals LangChain's `count_tokens_approximately` on every fixture
//! thread (values recorded by fixtures/generate.py from LangChain itself).

mod common;

use std::time::Duration;

use memctl::model::Checkpoint;
use memctl::storage::{CheckpointStore, SqliteStore};
use memctl::tokens::approx;

#[test]
fn approx_counts_equal_langchain_for_every_thread() {
    for gen in common::GENERATIONS {
        let store = SqliteStore::open_read_only(
            &common::fixture(&format!("{gen}.sqlite")),
            Duration::from_secs(1),
        )
        .expect("open fixture");
        let exp = common::expected(gen);
        for (thread, t) in exp["threads"].as_object().expect("threads") {
            let row = store
                .checkpoint(thread, "", None)
                .expect("query")
                .expect("latest");
            let cp = Checkpoint::decode(&row.type_name, &row.checkpoint).expect("decode");
            let msgs = cp.messages().expect("messages");
            let msgs = msgs.messages().expect("a list");
            let per: Vec<u64> = msgs.iter().map(approx::count_message).collect();
            let want: Vec<u64> = t["tokens_approx"]["per_message"]
                .as_array()
                .expect("per_message")
                .iter()
                .filter_map(serde_json::Value::as_u64)
                .collect();
            assert_eq!(per, want, "{gen}/{thread}: per message");
            assert_eq!(
                approx::count(msgs),
                t["tokens_approx"]["total"].as_u64().expect("total"),
                "{gen}/{thread}"
            );
        }
    }
}

#[test]
fn openai_counts_equal_langchain_openai_for_every_thread() {
    use memctl::tokens::openai::{count, count_message, Framing};
    let exp: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(common::root().join("fixtures/expected/tokens-openai.json"))
            .expect("expectations"),
    )
    .expect("json");
    for gen in common::GENERATIONS {
        let store = SqliteStore::open_read_only(
            &common::fixture(&format!("{gen}.sqlite")),
            Duration::from_secs(1),
        )
        .expect("open fixture");
        let threads = exp[gen].as_object().expect("threads");
        assert!(threads.len() >= 14);
        for (thread, models) in threads {
            let row = store
                .checkpoint(thread, "", None)
                .expect("query")
                .expect("latest");
            let cp = Checkpoint::decode(&row.type_name, &row.checkpoint).expect("decode");
            let msgs = cp.messages().expect("messages");
            let msgs = msgs.messages().expect("a list");
            for (model, want) in models.as_object().expect("models") {
                let f = Framing::for_model(model).expect("known model");
                if let Some(err) = want.get("error") {
                    assert!(
                        count(msgs, f).is_err(),
                        "{gen}/{thread}/{model}: LangChain failed: {err}"
                    );
                    continue;
                }
                assert_eq!(
                    count(msgs, f).ok(),
                    want["total"].as_i64(),
                    "{gen}/{thread}/{model}: total"
                );
                let per: Vec<i64> = msgs
                    .iter()
                    .map(|m| count_message(m, f).expect("counts") + 3)
                    .collect();
                let want_per: Vec<i64> = want["per_message"]
                    .as_array()
                    .expect("per")
                    .iter()
                    .filter_map(serde_json::Value::as_i64)
                    .collect();
                assert_eq!(per, want_per, "{gen}/{thread}/{model}: per message");
            }
        }
    }
}

#[test]
fn tokens_command_matches_langchain_and_sorts_threads() {
    let db = common::fixture("new.sqlite");
    let exp = common::expected("new");
    let openai: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(common::root().join("fixtures/expected/tokens-openai.json"))
            .expect("expectations"),
    )
    .expect("json");
    for (thread, t) in exp["threads"].as_object().expect("threads") {
        let doc = common::run_json(&[
            "tokens",
            "--db",
            common::s(&db),
            "--thread",
            thread,
            "--format",
            "json",
        ]);
        assert_eq!(
            doc["total"], t["tokens_approx"]["total"],
            "{thread}: approx total"
        );
        let per: Vec<&serde_json::Value> = doc["messages"]
            .as_array()
            .expect("msgs")
            .iter()
            .map(|m| &m["tokens"])
            .collect();
        let want: Vec<&serde_json::Value> = t["tokens_approx"]["per_message"]
            .as_array()
            .expect("per")
            .iter()
            .collect();
        assert_eq!(per, want, "{thread}: approx per message");
        let o200k = common::run_json(&[
            "tokens",
            "--db",
            common::s(&db),
            "--thread",
            thread,
            "--model",
            "gpt-4o",
            "--format",
            "json",
        ]);
        assert_eq!(
            o200k["total"], openai["new"][thread]["gpt-4o"]["total"],
            "{thread}: gpt-4o"
        );
        let cl100k = common::run_json(&[
            "tokens",
            "--db",
            common::s(&db),
            "--thread",
            thread,
            "--counter",
            "cl100k",
            "--format",
            "json",
        ]);
        assert_eq!(
            cl100k["total"], openai["new"][thread]["gpt-4"]["total"],
            "{thread}: cl100k"
        );
    }
    // --all: one row per thread, largest first, the same totals.
    let all = common::run_json(&[
        "tokens",
        "--db",
        common::s(&db),
        "--all",
        "--counter",
        "o200k",
        "--format",
        "json",
    ]);
    let all = all.as_array().expect("rows");
    assert_eq!(all.len(), exp["threads"].as_object().map_or(0, |t| t.len()));
    let tokens: Vec<u64> = all.iter().filter_map(|r| r["tokens"].as_u64()).collect();
    assert!(
        tokens.windows(2).all(|w| w[0] >= w[1]),
        "sorted: {tokens:?}"
    );
    for r in all {
        let thread = r["thread_id"].as_str().expect("id");
        assert_eq!(
            r["tokens"], openai["new"][thread]["gpt-4o"]["total"],
            "{thread}: --all total"
        );
    }
    // usage: what the provider reported.
    let usage = common::run_json(&[
        "tokens",
        "--db",
        common::s(&db),
        "--thread",
        "usage",
        "--counter",
        "usage",
        "--format",
        "json",
    ]);
    let msgs = exp["threads"]["usage"]["state_messages"]
        .as_array()
        .expect("msgs");
    let last_input = msgs
        .iter()
        .rev()
        .find_map(|m| m["usage_metadata"]["input_tokens"].as_u64());
    assert_eq!(usage["last_input_tokens"].as_u64(), last_input);
    // threads list: the approximate tokens column and --min-tokens.
    let listed = common::run_json(&[
        "threads",
        "list",
        "--db",
        common::s(&db),
        "--min-tokens",
        "60",
        "--sort",
        "tokens",
        "--format",
        "json",
    ]);
    for r in listed.as_array().expect("rows") {
        let thread = r["thread_id"].as_str().expect("id");
        assert_eq!(
            r["tokens"],
            exp["threads"][thread]["tokens_approx"]["total"]
        );
        assert!(r["tokens"].as_u64() >= Some(60));
    }
    let err = common::run_err(&[
        "tokens",
        "--db",
        common::s(&db),
        "--thread",
        "1",
        "--model",
        "llama3",
    ]);
    assert!(
        err.contains("does not count tokens for model 'llama3'"),
        "{err}"
    );
}

#[test]
fn trim_max_tokens_with_openai_counter_fits_the_budget() {
    let (_d, db) = common::temp_copy(&common::fixture("new.sqlite"));
    let out = common::run_json(&[
        "trim",
        "--db",
        common::s(&db),
        "--thread",
        "tools",
        "--max-tokens",
        "70",
        "--model",
        "gpt-4o",
        "--format",
        "json",
    ]);
    assert_eq!(out[0]["status"], "rewritten", "{out}");
    let after = common::run_json(&[
        "tokens",
        "--db",
        common::s(&db),
        "--thread",
        "tools",
        "--model",
        "gpt-4o",
        "--format",
        "json",
    ]);
    assert!(after["total"].as_u64().is_some_and(|t| t <= 70), "{after}");
}

#[test]
fn in_place_counting_equals_the_message_view() {
    use memctl::codec::msgpack::decode;
    for gen in common::GENERATIONS {
        let store = SqliteStore::open_read_only(
            &common::fixture(&format!("{gen}.sqlite")),
            Duration::from_secs(1),
        )
        .expect("open fixture");
        let exp = common::expected(gen);
        for (thread, t) in exp["threads"].as_object().expect("threads") {
            for row in store.checkpoints(thread, "").expect("rows") {
                if row.type_name != "msgpack" {
                    continue;
                }
                let root = decode(&row.checkpoint).expect("decode");
                let Some(list) = root.get("channel_values").and_then(|c| c.get("messages")) else {
                    continue;
                };
                let cp = Checkpoint::decode(&row.type_name, &row.checkpoint).expect("decode");
                let channel = cp.messages().expect("messages");
                let msgs = channel.messages().expect("list");
                assert_eq!(
                    approx::count_values(list),
                    Some(approx::count(msgs)),
                    "{gen}/{thread}"
                );
                assert_eq!(
                    approx::count_checkpoint_blob(&row.checkpoint),
                    Some((msgs.len(), Some(approx::count(msgs)))),
                    "{gen}/{thread}: lazy reader"
                );
            }
            let _ = t;
        }
    }
}
