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
