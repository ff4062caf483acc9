//! The approximate counter equals LangChain's `count_tokens_approximately` on every fixture
//! thread (values recorded by fixtures/generate.py from LangChain itself).

mod common;

use common::python;

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
    assert_eq!(out["threads"][0]["status"], "rewritten", "{out}");
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

/// Long texts of every kind the pre-tokenizer and the merge treat apart: prose in several
/// scripts and cases, contractions, CJK runs, emoji sequences, code, JSON, numbers, long
/// runs of white space and of one character (pieces longer than 128 bytes take the heap
/// merge), random code points; reproducible from `seed`.
fn varied_texts(seed: u64, count: usize) -> Vec<String> {
    let mut s = seed;
    let mut next = move |n: u64| {
        s = s
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (s >> 33) % n.max(1)
    };
    const WORDS: &[&str] = &[
        "the",
        "checkpoint",
        "thread",
        "The",
        "THREAD",
        "don't",
        "I'LL",
        "we've",
        "it's",
        "Zürich",
        "naïve",
        "façade",
        "Straße",
        "İstanbul",
        "ſtate",
        "Kelvin",
        "tokenizer",
        "München",
        "Ελληνικά",
        "русский",
        "язык",
        "日本語",
        "東京",
        "ひらがな",
        "カタカナ",
        "한국어",
        "문장",
        "עברית",
        "العربية",
        "हिन्दी",
        "ภาษาไทย",
        "e\u{301}",
        "ǅemal",
    ];
    const ZH: &[&str] = &[
        "你好",
        "谢谢",
        "天气",
        "北京",
        "上海",
        "明天",
        "会议",
        "报告",
        "数据库",
        "检查点",
        "线程",
        "模型",
        "工具",
        "结果",
        "问题",
        "回答",
        "总结",
        "记忆",
        "上下文",
        "请帮我查一下",
        "没问题",
        "温度",
        "下雨",
        "航班",
        "酒店",
        "预算",
        "订单",
        "退款",
        "的",
        "了",
        "是",
    ];
    const EMOJI: &[&str] = &[
        "🙂",
        "🚀",
        "✅",
        "❌",
        "🌧️",
        "☀️",
        "👨\u{200d}👩\u{200d}👧",
        "🇫🇷",
        "🏳️\u{200d}🌈",
        "👍🏽",
        "❤️",
        "⚠️",
        "🦀",
        "🐍",
        "1️⃣",
        "©",
        "™",
    ];
    const CODE: &[&str] = &[
        "fn main() {\n    let x: Vec<u8> = vec![1, 2, 3];\n    println!(\"{x:?}\");\n}\n",
        "def f(a, b=2, *args, **kw):\n\treturn a ** b  # power\n\n\n",
        "for (int i = 0; i < n; ++i) { sum += a[i] * b[i]; }\r\n",
        "SELECT thread_id, COUNT(*) FROM checkpoints GROUP BY 1 HAVING COUNT(*) > 10;",
        "    if x != nil {\n        return err\n    }\n",
        "<div class=\"a b\">&nbsp;<a href='/x/y?z=1&w=2'>link</a></div>",
        "{\"id\": \"call_0a1b2c3d\", \"args\": {\"city\": \"北京\", \"n\": -12.5e3}, \"ok\": true}",
        "#!/bin/sh\nset -eu\ncd \"$(dirname \"$0\")\" && ls -la | grep '^d' || true\n",
        "// comment /* nested */ ///doc\n/// ```\n/// x\n/// ```\n",
    ];
    const SPACES: &[&str] = &[
        " ", "  ", "\t", "\n", "\r\n", "\n\n", " \n ", "\u{a0}", "\u{3000}", "\u{2003}", "\u{85}",
        "\u{200b}", "\u{b}", "\u{c}", "\u{2028}",
    ];
    let mut texts = Vec::new();
    for _ in 0..count {
        let target = match next(10) {
            0 => next(20_000),
            1..=3 => next(3000),
            _ => next(400),
        } as usize;
        let mut t = String::new();
        while t.len() < target {
            let pick = |k: u64, list: &[&str]| list[k as usize % list.len()].to_owned();
            let frag = match next(16) {
                0..=3 => pick(next(1000), WORDS),
                4..=5 => (0..next(12) + 1).map(|_| pick(next(1000), ZH)).collect(),
                6 => pick(next(1000), EMOJI),
                7 => pick(next(1000), CODE),
                8 => next(u64::MAX >> 34).to_string(),
                9 => format!("{}.{}", next(1000), next(100_000)),
                10 => {
                    let unit = pick(next(1000), SPACES);
                    unit.repeat(next(200) as usize + 1)
                }
                11 => {
                    let c = ['x', '=', '-', '中', '.', '!', 'A', '_', '/', '😀'][next(10) as usize];
                    c.to_string().repeat(next(300) as usize + 1)
                }
                12 => (0..next(20))
                    .filter_map(|_| {
                        char::from_u32(match next(3) {
                            0 => next(0x80),
                            1 => next(0x1_0000),
                            _ => next(0x11_0000),
                        } as u32)
                    })
                    .collect(),
                13 => [
                    ".", ",", "!", "?", ":", ";", "'", "\"", "(", ")", "，", "。", "…", "'s",
                ][next(14) as usize]
                    .to_owned(),
                _ => pick(next(1000), SPACES),
            };
            t.push_str(&frag);
            if next(3) > 0 {
                t.push(' ');
            }
        }
        texts.push(t);
    }
    texts
}

#[test]
#[cfg_attr(
    not(feature = "env-tests"),
    ignore = "needs scripts/test.sh's environment (--features env-tests)"
)]
fn openai_counts_equal_tiktoken_on_long_varied_text() {
    use memctl::tokens::openai::{encode_len, Encoding};
    let texts = varied_texts(20261201, 600);
    let bytes: usize = texts.iter().map(String::len).sum();
    assert!(bytes > 1_000_000, "{bytes} bytes of text");
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("texts.json");
    std::fs::write(&path, serde_json::to_vec(&texts).expect("json")).expect("write");
    let out = std::process::Command::new(python("new"))
        .arg(common::root().join("tests/tiktoken_counts.py"))
        .arg(&path)
        .output()
        .expect("python runs");
    assert!(
        out.status.success(),
        "tiktoken_counts.py failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let want: serde_json::Value = serde_json::from_slice(&out.stdout).expect("counts");
    for (e, name) in [
        (Encoding::O200k, "o200k_base"),
        (Encoding::Cl100k, "cl100k_base"),
    ] {
        let want = want[name].as_array().expect("a list");
        assert_eq!(want.len(), texts.len());
        for (i, (t, w)) in texts.iter().zip(want).enumerate() {
            let got = encode_len(e, t).expect("counts");
            assert_eq!(
                Some(got),
                w.as_i64(),
                "{name} text {i} ({} bytes): {:?}…",
                t.len(),
                t.chars().take(200).collect::<String>()
            );
        }
    }
}
