//! The read commands on every committed fixture, checked against what real LangGraph reported
//! for the same file (fixtures/expected/*.json, written by fixtures/generate.py).

mod common;

use common::{expected, fixture, run_json, run_ok, s};
use serde_json::Value as Json;

fn threads(exp: &Json) -> Vec<(String, Json)> {
    exp["threads"]
        .as_object()
        .expect("threads")
        .iter()
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect()
}

/// Key order matters: compare the serialized text, not just the values.
fn same_json(a: &Json, b: &Json) -> bool {
    serde_json::to_string(a).ok() == serde_json::to_string(b).ok()
}

#[test]
fn dump_equals_langgraph_get_state_for_every_thread() {
    for gen in common::GENERATIONS {
        let db = fixture(&format!("{gen}.sqlite"));
        let exp = expected(gen);
        for (thread, t) in threads(&exp) {
            let dumped = run_json(&[
                "dump",
                "--db",
                s(&db),
                "--thread",
                &thread,
                "--format",
                "json",
            ]);
            let want = &t["state_messages"];
            assert!(
                same_json(&dumped, want),
                "{gen}/{thread}: dump differs from get_state\n memctl: {dumped}\n langgraph: {want}"
            );
            // JSON lines: the same dictionaries, one per line.
            let lines = run_ok(&[
                "dump",
                "--db",
                s(&db),
                "--thread",
                &thread,
                "--format",
                "jsonl",
            ]);
            let parsed: Vec<Json> = lines
                .lines()
                .map(|l| serde_json::from_str(l).expect("a JSON line"))
                .collect();
            assert!(
                same_json(&Json::Array(parsed), want),
                "{gen}/{thread}: jsonl differs"
            );
        }
    }
}

#[test]
fn threads_list_matches_the_database() {
    for gen in common::GENERATIONS {
        let db = fixture(&format!("{gen}.sqlite"));
        let exp = expected(gen);
        let listed = run_json(&["threads", "list", "--db", s(&db), "--format", "json"]);
        let listed = listed.as_array().expect("an array");
        assert_eq!(
            listed.len(),
            threads(&exp).len(),
            "{gen}: one row per thread"
        );
        for (thread, t) in threads(&exp) {
            let row = listed
                .iter()
                .find(|r| r["thread_id"] == thread.as_str())
                .unwrap_or_else(|| panic!("{gen}: {thread} listed"));
            assert_eq!(
                row["checkpoints"], t["checkpoints_all_ns"],
                "{gen}/{thread}"
            );
            assert_eq!(
                row["messages"], t["history"][0]["n_messages"],
                "{gen}/{thread}"
            );
            assert_eq!(row["last_step"], t["history"][0]["step"], "{gen}/{thread}");
            assert_eq!(
                row["namespaces"].as_u64(),
                t["namespaces"].as_array().map(|n| n.len() as u64),
                "{gen}/{thread}"
            );
            for key in ["updated_at", "age_seconds", "bytes"] {
                assert!(!row[key].is_null(), "{gen}/{thread}: {key} present");
            }
        }
        // Sorting and limits.
        let by_size = run_json(&[
            "threads",
            "list",
            "--db",
            s(&db),
            "--format",
            "json",
            "--sort",
            "size",
        ]);
        let sizes: Vec<u64> = by_size
            .as_array()
            .expect("array")
            .iter()
            .filter_map(|r| r["bytes"].as_u64())
            .collect();
        assert!(
            sizes.windows(2).all(|w| w[0] >= w[1]),
            "{gen}: sorted by size {sizes:?}"
        );
        let limited = run_json(&[
            "threads",
            "list",
            "--db",
            s(&db),
            "--format",
            "json",
            "--sort",
            "checkpoints",
            "--limit",
            "2",
        ]);
        let limited = limited.as_array().expect("array");
        assert_eq!(limited.len(), 2);
        assert_eq!(
            limited[0]["thread_id"], "summarized",
            "{gen}: most checkpoints first"
        );
    }
}

#[test]
fn history_matches_saver_list() {
    for gen in common::GENERATIONS {
        let db = fixture(&format!("{gen}.sqlite"));
        for (thread, t) in threads(&expected(gen)) {
            let got = run_json(&[
                "history",
                "--db",
                s(&db),
                "--thread",
                &thread,
                "--format",
                "json",
            ]);
            let got = got.as_array().expect("array");
            let want = t["history"].as_array().expect("history");
            assert_eq!(got.len(), want.len(), "{gen}/{thread}: checkpoint count");
            for (g, w) in got.iter().zip(want) {
                assert_eq!(g["checkpoint_id"], w["checkpoint_id"], "{gen}/{thread}");
                assert_eq!(
                    g["parent_checkpoint_id"], w["parent_checkpoint_id"],
                    "{gen}/{thread}"
                );
                assert_eq!(g["step"], w["step"], "{gen}/{thread}");
                assert_eq!(g["source"], w["source"], "{gen}/{thread}");
                assert_eq!(
                    g["pending_writes"], w["n_pending_writes"],
                    "{gen}/{thread} {}",
                    w["checkpoint_id"]
                );
                if w["messages_kind"] == "list" {
                    assert_eq!(g["messages"], w["n_messages"], "{gen}/{thread}");
                }
            }
        }
    }
}

#[test]
fn subgraph_namespaces_are_visible() {
    for gen in common::GENERATIONS {
        let db = fixture(&format!("{gen}.sqlite"));
        let t = &expected(gen)["threads"]["subgraph"];
        let hist = run_json(&[
            "history",
            "--db",
            s(&db),
            "--thread",
            "subgraph",
            "--format",
            "json",
        ]);
        let mut seen: Vec<String> = hist
            .as_array()
            .expect("array")
            .iter()
            .flat_map(|r| r["namespaces"].as_array().cloned().unwrap_or_default())
            .filter_map(|n| n.as_str().map(str::to_owned))
            .collect();
        seen.sort();
        let mut want: Vec<String> = t["namespaces"]
            .as_array()
            .expect("namespaces")
            .iter()
            .filter_map(|n| n.as_str().filter(|n| !n.is_empty()).map(str::to_owned))
            .collect();
        want.sort();
        assert_eq!(
            seen, want,
            "{gen}: child namespaces listed on their parent checkpoints"
        );
        // Each child namespace can be read on its own.
        for ns in &want {
            let msgs = run_json(&["dump", "--db", s(&db), "--thread", "subgraph", "--ns", ns]);
            assert!(
                msgs.as_array().is_some_and(|m| !m.is_empty()),
                "{gen}: {ns} has messages"
            );
        }
    }
}

#[test]
fn show_reports_state_and_what_the_thread_waits_on() {
    for gen in common::GENERATIONS {
        let db = fixture(&format!("{gen}.sqlite"));
        for (thread, t) in threads(&expected(gen)) {
            let doc = run_json(&[
                "show",
                "--db",
                s(&db),
                "--thread",
                &thread,
                "--format",
                "json",
            ]);
            assert_eq!(doc["next"], t["next"], "{gen}/{thread}: next");
            let got: Vec<(Json, Json)> = doc["interrupts"]
                .as_array()
                .expect("interrupts")
                .iter()
                .map(|i| (i["id"].clone(), i["value"].clone()))
                .collect();
            let want: Vec<(Json, Json)> = t["interrupts"]
                .as_array()
                .expect("interrupts")
                .iter()
                .map(|i| (i["id"].clone(), i["value"].clone()))
                .collect();
            assert_eq!(got, want, "{gen}/{thread}: interrupts");
            let text = run_ok(&[
                "show",
                "--db",
                s(&db),
                "--thread",
                &thread,
                "--format",
                "table",
            ]);
            for m in t["state_messages"].as_array().expect("messages") {
                let kind = m["type"].as_str().expect("type");
                let banner = match kind {
                    "human" => "Human Message",
                    "ai" => "Ai Message",
                    "tool" => "Tool Message",
                    "system" => "System Message",
                    other => panic!("unexpected kind {other}"),
                };
                assert!(text.contains(banner), "{gen}/{thread}: {banner} shown");
            }
            if t["interrupts"].as_array().is_some_and(|i| !i.is_empty()) {
                assert!(
                    text.contains("paused on interrupt()"),
                    "{gen}/{thread}: {text}"
                );
                assert!(
                    text.contains("Approve this draft?"),
                    "{gen}/{thread}: interrupt value shown"
                );
            } else {
                assert!(
                    text.contains("the thread is idle"),
                    "{gen}/{thread}: {text}"
                );
            }
        }
    }
}

#[test]
fn show_prints_tool_calls_other_channels_and_unicode() {
    let db = fixture("new.sqlite");
    let tools = run_ok(&[
        "show",
        "--db",
        s(&db),
        "--thread",
        "tools",
        "--format",
        "table",
    ]);
    assert!(
        tools.contains("Tool Calls:") && tools.contains("Args:"),
        "{tools}"
    );
    let custom = run_ok(&[
        "show",
        "--db",
        s(&db),
        "--thread",
        "custom-state",
        "--format",
        "table",
    ]);
    assert!(
        custom.contains("State") && custom.contains("user_id"),
        "{custom}"
    );
    let unicode = run_ok(&[
        "show",
        "--db",
        s(&db),
        "--thread",
        "unicode",
        "--format",
        "table",
    ]);
    let want = expected("new")["threads"]["unicode"]["state_messages"][0]["content"]
        .as_str()
        .expect("text")
        .to_owned();
    assert!(
        unicode.contains(&want),
        "non-ASCII text shown as is: {unicode}"
    );
}

#[test]
fn other_values_match_get_state() {
    for gen in common::GENERATIONS {
        let db = fixture(&format!("{gen}.sqlite"));
        for thread in ["custom-state", "summarized"] {
            let t = &expected(gen)["threads"][thread];
            let doc = run_json(&[
                "show",
                "--db",
                s(&db),
                "--thread",
                thread,
                "--format",
                "json",
            ]);
            for (k, v) in t["other_values"].as_object().expect("values") {
                if v.is_object() && v.get("__repr__").is_some() {
                    continue; // not JSON in Python either
                }
                assert_eq!(&doc["values"][k], v, "{gen}/{thread}: channel {k}");
            }
        }
    }
}

#[test]
fn diff_reports_added_and_removed_messages() {
    for gen in common::GENERATIONS {
        let db = fixture(&format!("{gen}.sqlite"));
        for (thread, t) in threads(&expected(gen)) {
            let hist = t["history"].as_array().expect("history");
            let d = run_json(&[
                "diff",
                "--db",
                s(&db),
                "--thread",
                &thread,
                "--format",
                "json",
            ]);
            assert_eq!(d["to"], hist[0]["checkpoint_id"], "{gen}/{thread}");
            assert_eq!(d["from"], hist[0]["parent_checkpoint_id"], "{gen}/{thread}");
            if hist.len() > 1
                && hist[1]["messages_kind"] == "list"
                && hist[0]["messages_kind"] == "list"
            {
                let (before, after) = (&hist[1]["n_messages"], &hist[0]["n_messages"]);
                assert_eq!(&d["messages"]["before"], before, "{gen}/{thread}");
                assert_eq!(&d["messages"]["after"], after, "{gen}/{thread}");
                let added = d["messages"]["added"].as_array().map_or(0, Vec::len) as i64;
                let removed = d["messages"]["removed"].as_array().map_or(0, Vec::len) as i64;
                assert_eq!(
                    after.as_i64().expect("n") - before.as_i64().expect("n"),
                    added - removed,
                    "{gen}/{thread}: counts add up"
                );
            }
            run_ok(&[
                "diff",
                "--db",
                s(&db),
                "--thread",
                &thread,
                "--format",
                "table",
            ]);
        }
        // Across the whole first turn of thread 1: the first human and AI messages appear.
        let hist = run_json(&[
            "history",
            "--db",
            s(&db),
            "--thread",
            "1",
            "--format",
            "json",
        ]);
        let oldest =
            hist.as_array().and_then(|h| h.last()).expect("oldest")["checkpoint_id"].clone();
        let d = run_json(&[
            "diff",
            "--db",
            s(&db),
            "--thread",
            "1",
            "--from",
            oldest.as_str().expect("id"),
            "--format",
            "json",
        ]);
        let added = d["messages"]["added"].as_array().expect("added");
        assert_eq!(
            added.len(),
            4,
            "{gen}: all four messages of two turns are new"
        );
        // The summarized thread's summary replaced older messages: something was removed.
        let hist = run_json(&[
            "history",
            "--db",
            s(&db),
            "--thread",
            "summarized",
            "--format",
            "json",
        ]);
        let all = hist.as_array().expect("array");
        let (newest, oldest) = (
            all[0]["checkpoint_id"].as_str().expect("id"),
            all[all.len() - 1]["checkpoint_id"].as_str().expect("id"),
        );
        let d = run_json(&[
            "diff",
            "--db",
            s(&db),
            "--thread",
            "summarized",
            "--from",
            oldest,
            "--to",
            newest,
            "--format",
            "json",
        ]);
        assert!(d["messages"]["after"].as_u64() > Some(0));
        let text = run_ok(&[
            "diff",
            "--db",
            s(&db),
            "--thread",
            "summarized",
            "--from",
            oldest,
            "--to",
            newest,
            "--format",
            "table",
        ]);
        assert!(text.contains("+ [human]"), "{text}");
    }
}

#[test]
fn raw_dump_is_lossless_json() {
    let db = fixture("new.sqlite");
    let raw = run_json(&["dump", "--db", s(&db), "--thread", "tuple-args", "--raw"]);
    let cp = &raw["checkpoint"];
    for key in [
        "v",
        "ts",
        "id",
        "channel_values",
        "channel_versions",
        "versions_seen",
    ] {
        assert!(cp.get(key).is_some(), "raw checkpoint has {key}");
    }
    let text = raw.to_string();
    assert!(text.contains("\"$ext\""), "ext objects are tagged");
    assert!(
        text.contains("\"$bytes\"") || text.contains("\"bytes\""),
        "bytes are kept"
    );
    assert_eq!(raw["metadata"]["step"], 4);
}

#[test]
fn delta_channel_threads_are_read_or_refused_clearly() {
    let db = fixture("delta.sqlite");
    let exp = expected("delta");
    let t = &exp["threads"]["1"];
    let out = common::memctl()
        .args(["dump", "--db", s(&db), "--thread", "1"])
        .output()
        .expect("runs");
    if out.status.success() {
        let got: Json = serde_json::from_slice(&out.stdout).expect("json");
        assert!(
            same_json(&got, &t["state_messages"]),
            "delta replay equals get_state"
        );
    } else {
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains("DeltaChannel"), "{err}");
    }
}

/// A page of a history (`--limit`, with `--before`) is read without the rows outside it
/// when no checkpoint of it needs a DeltaChannel replay: every page equals the same slice
/// of the whole history, field for field, on plain, DeltaChannel, migrated and subgraph
/// threads alike.
#[test]
fn a_history_page_equals_the_same_slice_of_the_whole_history() {
    for file in [
        "new.sqlite",
        "old.sqlite",
        "delta.sqlite",
        "deep.sqlite",
        "js-delta.sqlite",
    ] {
        let db = fixture(file);
        let listed = run_json(&["threads", "list", "--db", s(&db), "--format", "json"]);
        for t in listed.as_array().expect("threads") {
            let thread = t["thread_id"].as_str().expect("thread id");
            let base = ["history", "--db", s(&db), thread, "--format", "json"];
            let whole = run_json(&base);
            let whole = whole.as_array().expect("history");
            for (before, limit) in [(None, 1), (None, 3), (Some(1), 2), (Some(2), 100)] {
                let mut args = base.to_vec();
                let limit_text = limit.to_string();
                args.extend(["--limit", &limit_text]);
                let before_id = before.and_then(|i: usize| whole.get(i)?["checkpoint_id"].as_str());
                if let Some(b) = before_id {
                    args.extend(["--before", b]);
                }
                let from = before.filter(|_| before_id.is_some()).map_or(0, |i| i + 1);
                let want: Vec<&Json> = whole.iter().skip(from).take(limit).collect();
                let got = run_json(&args);
                let got: Vec<&Json> = got.as_array().expect("page").iter().collect();
                assert_eq!(
                    got, want,
                    "{file} {thread} before {before_id:?} limit {limit}"
                );
            }
        }
    }
}

/// `threads list --sort updated --limit N` reads only the threads that can be in its first N
/// rows (chosen by the time in their checkpoint ids); what it prints must be exactly the first N
/// rows of the whole sorted list, for every N, on every kind of thread.
#[test]
fn a_limited_list_sorted_by_update_is_the_head_of_the_whole_list() {
    let now = "2030-01-01T00:00:00Z";
    for name in [
        "new.sqlite",
        "old.sqlite",
        "delta.sqlite",
        "delta-subgraph.sqlite",
        "deep.sqlite",
        "js-delta.sqlite",
        "encrypted-new.sqlite",
        "postgres-mirror.sqlite",
    ] {
        let db = fixture(name);
        let list = |limit: Option<usize>| {
            let limit = limit.map(|n| n.to_string());
            let mut args = vec!["--now", now, "threads", "list", "--db", s(&db)];
            args.extend(["--sort", "updated", "--format", "json"]);
            if let Some(n) = &limit {
                args.extend(["--limit", n]);
            }
            run_json(&args).as_array().expect("a list").clone()
        };
        let all = list(None);
        assert!(all.len() >= 2, "{name}: {} threads", all.len());
        for n in [0, 1, 2, all.len() / 2, all.len(), all.len() + 3] {
            let head: Vec<Json> = all.iter().take(n).cloned().collect();
            assert_eq!(list(Some(n)), head, "{name}: --limit {n}");
        }
    }
}

/// `threads list` and `tokens --all` stream in thread-id order and print what the collected,
/// sorted list printed (order, limits, totals); the SQLite store's streams equal its collected
/// reads in batches of any size.
#[test]
fn whole_database_lists_stream_what_they_collect() {
    let mut failures = Vec::new();
    for name in ["new.sqlite", "old.sqlite", "postgres-mirror.sqlite"] {
        let db = fixture(name);
        for f in common::listing::lists_stream_as_they_collect(s(&db)) {
            failures.push(format!("{name}: {f}"));
        }
        for f in common::listing::stores_stream_what_they_collect(&db) {
            failures.push(format!("{name}: {f}"));
        }
    }
    // The streamed summaries take each thread's writes from a second scan in thread order,
    // merged: writes of threads that have no checkpoint (before, between and after the
    // threads), and a thread id stored as a blob (SQLite orders blobs after text; the merge
    // then stops and sums each thread's writes by itself) count as the collected read counts
    // them.
    let (_dir, db) = common::temp_copy(&fixture("new.sqlite"));
    let conn = rusqlite::Connection::open(&db).expect("open");
    let first: String = conn
        .query_row("SELECT min(thread_id) FROM checkpoints", [], |r| r.get(0))
        .expect("a thread");
    for (orphan, id) in [
        ("0000-orphan", "'0000-orphan'"),
        ("m-orphan", "'m-orphan'"),
        ("~orphan", "'~orphan'"),
    ] {
        conn.execute(
            &format!(
                "INSERT INTO writes SELECT {id}, checkpoint_ns, checkpoint_id, task_id, task_path, idx, channel, type, value \
                 FROM writes WHERE thread_id = ?1"
            ),
            [&first],
        )
        .unwrap_or_else(|e| panic!("{orphan}: {e}"));
    }
    for table in ["checkpoints", "writes"] {
        conn.execute(
            &format!(
                "INSERT INTO {table} SELECT CAST('zz-blob' AS BLOB), {} FROM {table} WHERE thread_id = ?1",
                if table == "checkpoints" {
                    "checkpoint_ns, checkpoint_id, parent_checkpoint_id, type, checkpoint, metadata"
                } else {
                    "checkpoint_ns, checkpoint_id, task_id, task_path, idx, channel, type, value"
                }
            ),
            [&first],
        )
        .unwrap_or_else(|e| panic!("{table}: {e}"));
    }
    let numbers: i64 = conn
        .query_row(
            "SELECT count(*) FROM writes WHERE typeof(thread_id) = 'blob'",
            [],
            |r| r.get(0),
        )
        .expect("count");
    assert!(numbers > 0, "the blob thread has writes");
    drop(conn);
    for f in common::listing::stores_stream_what_they_collect(&db) {
        failures.push(format!("orphans and a numeric id: {f}"));
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

/// `--jobs` on a SQLite file (#30): several read-only connections print what one prints —
/// `threads list`, `tokens --all` and `find`, both saver generations and DeltaChannel threads,
/// on copies whose threads were cloned into many (enough for three connections).
#[test]
fn jobs_print_what_one_connection_prints_on_sqlite() {
    let mut failures = Vec::new();
    for name in ["new.sqlite", "old.sqlite", "delta.sqlite"] {
        let (_dir, db) = common::jobs::sqlite_with_many_threads(name, 700);
        for f in common::jobs::outputs_equal_across_jobs(s(&db), &["2", "3"]) {
            failures.push(format!("{name}: {f}"));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}
