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
