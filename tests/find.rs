//! `memctl find`: hits in message text, tool calls and string state, across threads; the
//! whole history; threads of one user by metadata (#18).

mod common;

use common::{fixture, memctl, run_json, s, temp_copy};
use serde_json::Value as Json;

/// Runs find (JSON); asserts exit 0 when it found something and 1 (like grep, no error
/// line) when it found nothing.
fn find(db: &str, args: &[&str]) -> Json {
    let mut all = vec!["find", "--db", db, "--format", "json"];
    all.extend_from_slice(args);
    let out = memctl().args(&all).output().expect("runs");
    let hits: Json = serde_json::from_slice(&out.stdout).expect("JSON");
    let empty = hits.as_array().is_some_and(Vec::is_empty);
    assert_eq!(
        out.status.code(),
        Some(if empty { 1 } else { 0 }),
        "{all:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    if empty {
        assert!(
            out.stderr.is_empty(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    hits
}

/// `(thread, message index)` of every hit.
fn places(hits: &Json) -> Vec<(String, Option<u64>)> {
    hits.as_array()
        .expect("a list of hits")
        .iter()
        .map(|h| {
            (
                h["thread_id"].as_str().unwrap_or_default().to_owned(),
                h["index"].as_u64(),
            )
        })
        .collect()
}

#[test]
fn finds_text_in_messages_and_tool_calls_with_case_and_regex_options() {
    let db = fixture("new.sqlite");
    let hits = find(s(&db), &["Paris"]);
    let found = places(&hits);
    // Every hit is a message whose text (or tool call) holds the word, as dump shows it.
    for (thread, index) in &found {
        let dumped = run_json(&["dump", "--db", s(&db), "--thread", thread]);
        let m = &dumped[index.expect("a message hit") as usize];
        let text = m.to_string();
        assert!(text.contains("Paris"), "{thread} #{index:?}: {m}");
    }
    // The tool call's arguments of thread 'tools' are found too (message 1 has no text).
    assert!(found.contains(&("tools".into(), Some(1))), "{found:?}");
    assert!(found.contains(&("1".into(), Some(3))), "{found:?}");
    let first = &hits[0];
    assert_eq!(first["match"], "Paris");
    assert!(first["message_id"].is_string());

    // Case: a literal is case-sensitive unless -i.
    assert_eq!(find(s(&db), &["PARIS"]).as_array().map(Vec::len), Some(0));
    assert_eq!(places(&find(s(&db), &["-i", "PARIS"])), found);
    // A literal is not a regex; --regex makes it one.
    assert_eq!(find(s(&db), &["Par.s"]).as_array().map(Vec::len), Some(0));
    assert_eq!(places(&find(s(&db), &["--regex", "Par.s"])), found);
    // One thread only.
    let only = places(&find(s(&db), &["Paris", "--thread", "tools"]));
    assert!(!only.is_empty() && only.iter().all(|(t, _)| t == "tools"));
}

#[test]
fn history_finds_what_the_latest_state_no_longer_holds() {
    let (_d, db) = temp_copy(&fixture("new.sqlite"));
    let before = places(&find(s(&db), &["Paris is the capital"]));
    assert_eq!(before, vec![("1".to_owned(), Some(3))]);
    let out = memctl()
        .args(["rm", "--db", s(&db), "--thread", "1", "--index", "3"])
        .output()
        .expect("runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        find(s(&db), &["Paris is the capital"])
            .as_array()
            .map(Vec::len),
        Some(0)
    );
    let old = find(s(&db), &["Paris is the capital", "--history"]);
    let old = old.as_array().expect("hits");
    assert!(!old.is_empty());
    assert!(old.iter().all(|h| h["thread_id"] == "1"));
    // Each hit names a different, older checkpoint.
    let mut ids: Vec<&str> = old
        .iter()
        .filter_map(|h| h["checkpoint_id"].as_str())
        .collect();
    ids.dedup();
    assert_eq!(ids.len(), old.len());
}

#[test]
fn meta_selects_the_threads_of_one_user() {
    let (_d, db) = temp_copy(&fixture("new.sqlite"));
    // What LangGraph writes when the app passes configurable={"user_id": "42", …}: the key
    // in the checkpoint's metadata.
    let conn = rusqlite::Connection::open(&db).expect("opens");
    conn.execute(
        "UPDATE checkpoints SET metadata = CAST('{\"source\": \"loop\", \"step\": 9, \"parents\": {}, \"user_id\": \"42\"}' AS BLOB) \
         WHERE thread_id = 'tools' AND checkpoint_ns = '' AND checkpoint_id = \
         (SELECT MAX(checkpoint_id) FROM checkpoints WHERE thread_id = 'tools' AND checkpoint_ns = '')",
        [],
    )
    .expect("updates");
    drop(conn);
    let hits = find(s(&db), &["--meta", "user_id=42"]);
    assert_eq!(places(&hits), vec![("tools".to_owned(), None)]);
    assert_eq!(hits[0]["role"], "thread");
    assert_eq!(
        find(s(&db), &["--meta", "user_id=43"])
            .as_array()
            .map(Vec::len),
        Some(0)
    );
    // With a pattern: that user's messages only.
    let both = places(&find(s(&db), &["Paris", "--meta", "user_id=42"]));
    assert!(!both.is_empty() && both.iter().all(|(t, _)| t == "tools"));
    // Count mode.
    let counts = find(s(&db), &["Paris", "--count"]);
    let tools = counts
        .as_array()
        .and_then(|c| c.iter().find(|c| c["thread_id"] == "tools"))
        .expect("tools counted");
    assert_eq!(tools["hits"].as_u64(), Some(both.len() as u64), "{counts}");
}

/// `find --meta` and `forget --meta` select the same threads (#26): a thread whose key is
/// only in an older checkpoint's metadata (the app stopped passing it) is listed by find and
/// is exactly what `forget --dry-run` would delete.
#[test]
fn find_meta_and_forget_meta_select_the_same_threads() {
    let (_d, db) = temp_copy(&fixture("forget.sqlite"));
    let conn = rusqlite::Connection::open(&db).expect("opens");
    let n = conn
        .execute(
            "UPDATE checkpoints SET metadata = CAST(json_set(CAST(metadata AS TEXT), '$.user_id', '77') AS BLOB) \
             WHERE thread_id = 'carol-chat' AND checkpoint_ns = '' AND checkpoint_id = \
             (SELECT MIN(checkpoint_id) FROM checkpoints WHERE thread_id = 'carol-chat' AND checkpoint_ns = '')",
            [],
        )
        .expect("updates");
    assert_eq!(n, 1);
    drop(conn);
    let threads = |hits: &Json| -> Vec<String> {
        let mut t: Vec<String> = places(hits).into_iter().map(|(t, _)| t).collect();
        t.sort();
        t.dedup();
        t
    };
    for value in ["77", "42"] {
        let meta = format!("user_id={value}");
        let found = threads(&find(s(&db), &["--meta", &meta]));
        let out = memctl()
            .args([
                "forget",
                "--db",
                s(&db),
                "--meta",
                &meta,
                "--dry-run",
                "--format",
                "json",
            ])
            .output()
            .expect("runs");
        let plan: Json = serde_json::from_slice(&out.stdout).expect("JSON");
        let mut doomed = common::would_delete(&plan);
        doomed.sort();
        assert!(!found.is_empty(), "{value}");
        assert_eq!(found, doomed, "user_id={value}");
    }
    assert_eq!(
        threads(&find(s(&db), &["--meta", "user_id=77"])),
        ["carol-chat"]
    );
}

/// `--meta` decides a batch of threads at a time (#30). On a copy whose threads were cloned
/// into more than one batch of 1,024, `find`, `threads list`, `forget --dry-run` and
/// `copy --all --dry-run` select the same threads, exactly the ones the rule selects, on both
/// sides of every seam: by any checkpoint's metadata (an old checkpoint's only, or a
/// subgraph namespace's only; metadata that is not JSON passed over), or by a channel of the
/// latest state.
#[test]
fn meta_selects_the_same_threads_across_batches() {
    let (dir, db) = common::jobs::sqlite_with_many_threads("forget.sqlite", 2100);
    let conn = rusqlite::Connection::open(&db).expect("opens");
    for sql in [
        // bob-chat's clones ~copy2…: user_id 99 in their oldest root checkpoint only.
        "UPDATE checkpoints SET metadata = CAST(json_set(CAST(metadata AS TEXT), '$.user_id', '99') AS BLOB) \
         WHERE thread_id LIKE 'bob-chat~copy2%' AND checkpoint_ns = '' AND checkpoint_id = \
         (SELECT MIN(c.checkpoint_id) FROM checkpoints c WHERE c.thread_id = checkpoints.thread_id AND c.checkpoint_ns = '')",
        // alice-sub's clones ~copy1…: 99 in the subgraph's namespace only.
        "UPDATE checkpoints SET metadata = CAST(json_set(CAST(metadata AS TEXT), '$.user_id', '99') AS BLOB) \
         WHERE thread_id LIKE 'alice-sub~copy1%' AND checkpoint_ns != ''",
        // carol-chat's clones ~copy3…: their user_id 8 lost, in metadata that is not JSON
        // (passed over) but for the latest's (which must read: their state is opened).
        "UPDATE checkpoints SET metadata = CAST(json_remove(CAST(metadata AS TEXT), '$.user_id') AS BLOB) \
         WHERE thread_id LIKE 'carol-chat~copy3%' AND checkpoint_ns = '' AND checkpoint_id = \
         (SELECT MAX(c.checkpoint_id) FROM checkpoints c WHERE c.thread_id = checkpoints.thread_id AND c.checkpoint_ns = '')",
        "UPDATE checkpoints SET metadata = CAST('not json' AS BLOB) \
         WHERE thread_id LIKE 'carol-chat~copy3%' AND json_extract(metadata, '$.user_id') IS NOT NULL",
    ] {
        assert!(conn.execute(sql, []).expect("updates") > 0, "{sql}");
    }
    let all: i64 = conn
        .query_row(
            "SELECT count(DISTINCT thread_id) FROM checkpoints",
            [],
            |r| r.get(0),
        )
        .expect("counts");
    assert!(all > 2048, "{all} threads");
    let by_metadata = |value: &str| -> Vec<String> {
        let mut stmt = conn
            .prepare(
                "SELECT DISTINCT thread_id FROM checkpoints WHERE json_valid(metadata) \
                 AND CAST(json_extract(metadata, '$.user_id') AS TEXT) = ? ORDER BY thread_id",
            )
            .expect("prepares");
        let rows = stmt
            .query_map([value], |r| r.get::<_, String>(0))
            .expect("queries");
        rows.collect::<Result<_, _>>().expect("reads")
    };
    let profile: Vec<String> = by_metadata("42")
        .into_iter()
        .filter(|t| t.split("~copy").next() == Some("alice-profile"))
        .collect();
    let summary =
        "summary=Known about the user: My name is Alice Example. / I moved to 12 Elm Street.";
    let cases: Vec<(Vec<&str>, Vec<String>)> = vec![
        (vec!["user_id=99"], by_metadata("99")),
        (vec!["user_id=8"], by_metadata("8")),
        (vec![summary], profile.clone()),
        (vec!["user_id=42", summary], profile),
    ];
    let target = dir.path().join("none.sqlite");
    let db = s(&db);
    for (conditions, want) in cases {
        assert!(want.len() > 100, "{conditions:?}: {} threads", want.len());
        let mut meta = Vec::new();
        for c in &conditions {
            meta.extend(["--meta", c]);
        }
        let sorted = |mut t: Vec<String>| {
            t.sort();
            t.dedup();
            t
        };
        let found = sorted(
            places(&find(db, &meta))
                .into_iter()
                .map(|(t, _)| t)
                .collect(),
        );
        let listed: Vec<String> = run_json(
            &[
                &["threads", "list", "--db", db, "--format", "json"][..],
                &meta,
            ]
            .concat(),
        )
        .as_array()
        .expect("threads")
        .iter()
        .map(|t| t["thread_id"].as_str().unwrap_or_default().to_owned())
        .collect();
        let plan = run_json(
            &[
                &["forget", "--db", db, "--dry-run", "--format", "json"][..],
                &meta,
            ]
            .concat(),
        );
        let doomed = common::would_delete(&plan);
        let report = run_json(
            &[
                &["copy", "--db", db, "--all", "--dry-run", "--format", "json"][..],
                &["--to", s(&target)],
                &meta,
            ]
            .concat(),
        );
        let copied: Vec<String> = report["threads"]
            .as_array()
            .expect("threads")
            .iter()
            .map(|t| t["thread"].as_str().unwrap_or_default().to_owned())
            .collect();
        assert_eq!(found, want, "find {conditions:?}");
        assert_eq!(sorted(listed), want, "threads list {conditions:?}");
        assert_eq!(sorted(doomed), want, "forget {conditions:?}");
        assert_eq!(sorted(copied), want, "copy {conditions:?}");
    }
}

/// `--meta`'s batched metadata read gives each thread the rows the per-thread reads gave, in
/// their order, on every SQLite fixture.
#[test]
fn metadata_of_reads_what_the_per_thread_reads_read() {
    let mut checked = 0;
    for entry in std::fs::read_dir(common::root().join("fixtures")).expect("fixtures") {
        let path = entry.expect("entry").path();
        if path.extension().is_none_or(|e| e != "sqlite") {
            continue;
        }
        let store =
            memctl::storage::SqliteStore::open_read_only(&path, std::time::Duration::from_secs(1))
                .expect("opens");
        let differences = common::meta::metadata_of_differences(&store);
        assert!(
            differences.is_empty(),
            "{}: {differences:#?}",
            path.display()
        );
        checked += 1;
    }
    assert!(checked > 10, "{checked} fixtures");
}

/// Like grep (#26): exit 0 when something matched, 1 when nothing did (no error line; the
/// empty result is printed), in every output form and with --count. A table of no hits is
/// no output at all, and a note on stderr says so (#46: `| wc -l` counted the note).
#[test]
fn exits_1_when_nothing_matches_like_grep() {
    let db = fixture("new.sqlite");
    for extra in [&[][..], &["--count"], &["--format", "json"], &["--history"]] {
        let run = |pattern: &str| {
            memctl()
                .args(["find", "--db", s(&db), pattern])
                .args(extra)
                .output()
                .expect("runs")
        };
        let none = run("no such words anywhere");
        assert_eq!(none.status.code(), Some(1), "{extra:?}");
        let (stdout, stderr) = (
            String::from_utf8_lossy(&none.stdout),
            String::from_utf8_lossy(&none.stderr),
        );
        match extra {
            [] | ["--history"] => {
                assert!(stdout.is_empty(), "{extra:?}: {stdout}");
                assert_eq!(stderr.trim(), "memctl: no hits", "{extra:?}");
            }
            _ => {
                assert!(!stdout.is_empty(), "{extra:?}: the count, the empty list");
                assert!(stderr.is_empty(), "{extra:?}: {stderr}");
            }
        }
        let some = run("Paris");
        assert_eq!(some.status.code(), Some(0), "{extra:?}");
        assert!(!some.stdout.is_empty());
    }
    let meta = memctl()
        .args(["find", "--db", s(&db), "--meta", "user_id=nobody"])
        .output()
        .expect("runs");
    assert_eq!(meta.status.code(), Some(1));
}

/// An encrypted file without the key: one short line that counts the threads not searched
/// and gives the hint once (#26; it repeated the hint for every thread), exit 1.
#[test]
fn encrypted_without_the_key_is_one_short_line_with_the_count() {
    let db = fixture("encrypted-new.sqlite");
    let threads = run_json(&["threads", "list", "--db", s(&db), "--format", "json"]);
    let n = threads.as_array().expect("threads").len();
    assert!(n > 3, "{threads}");
    let out = memctl()
        .env_remove("LANGGRAPH_AES_KEY")
        .args(["find", "--db", s(&db), "Paris"])
        .output()
        .expect("runs");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert_eq!(stderr.trim_end().lines().count(), 1, "{stderr}");
    assert!(
        stderr.contains(&format!("{n} threads encrypted")),
        "{stderr}"
    );
    assert_eq!(stderr.matches("LANGGRAPH_AES_KEY").count(), 1, "{stderr}");
    assert!(stderr.len() < 600, "{} characters: {stderr}", stderr.len());
}

#[test]
fn bad_requests_are_one_line_errors() {
    let db = fixture("new.sqlite");
    let out = memctl()
        .args(["find", "--db", s(&db)])
        .output()
        .expect("runs");
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("PATTERN") && err.lines().count() == 1, "{err}");
    for (args, code) in [
        (vec!["--regex", "("], 1),
        (vec!["x", "--thread", "nope"], 1),
        // A flag value that cannot work: clap's usage error (exit 2, its one error line).
        (vec!["--meta", "novalue"], 2),
    ] {
        let out = memctl()
            .args(["find", "--db", s(&db)])
            .args(&args)
            .output()
            .expect("runs");
        assert_eq!(out.status.code(), Some(code), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        let errors = err.lines().filter(|l| l.contains("error")).count();
        assert_eq!(errors, 1, "{args:?}: {err}");
        if code == 1 {
            assert_eq!(err.lines().count(), 1, "{args:?}");
        }
    }
}

/// `find`'s hits as `[thread, checkpoint, index, message id, role]`, sorted.
fn hit_rows(hits: &Json) -> Vec<String> {
    let mut rows: Vec<String> = hits
        .as_array()
        .expect("a list of hits")
        .iter()
        .map(|h| {
            serde_json::json!([
                h["thread_id"],
                h["checkpoint_id"],
                h["index"],
                h["message_id"],
                h["role"]
            ])
            .to_string()
        })
        .collect();
    rows.sort();
    rows
}

#[test]
#[cfg_attr(
    not(feature = "env-tests"),
    ignore = "needs scripts/test.sh's environment (--features env-tests)"
)]
fn find_equals_a_python_reference_walking_every_checkpoint_with_langgraph() {
    // (fixture, venv): both saver generations, and the forget fixture (a summary channel, a
    // subgraph, dict inputs).
    let fixtures = [
        ("new.sqlite", "new"),
        ("old.sqlite", "old"),
        ("forget.sqlite", "new"),
    ];
    let cases: [&[&str]; 6] = [
        &["Paris"],
        &["-i", "paris"],
        &["--regex", r"\d+"],
        &["--history", "Paris"],
        &["--history", "-i", "--regex", "sunny|tool|elm street"],
        &["--history", "Alice Example"],
    ];
    for (name, gen) in fixtures {
        let db = fixture(name);
        for case in cases {
            let (pattern, flags) = case.split_last().expect("a pattern");
            let mut args: Vec<&str> = flags.to_vec();
            args.extend_from_slice(&["--", pattern]);
            let ours = hit_rows(&find(s(&db), &args));
            let mut py = std::process::Command::new(common::python(gen));
            py.arg(common::root().join("tests/interop/find_reference.py"))
                .args(["--db", s(&db), "--pattern", pattern]);
            for f in flags.iter() {
                py.arg(match *f {
                    "-i" => "--ignore-case",
                    other => other,
                });
            }
            let out = py.output().expect("the reference runs");
            assert!(
                out.status.success(),
                "{}",
                String::from_utf8_lossy(&out.stderr)
            );
            let reference: Json = serde_json::from_slice(&out.stdout).expect("JSON");
            let mut want: Vec<String> = reference
                .as_array()
                .expect("a list")
                .iter()
                .map(Json::to_string)
                .collect();
            want.sort();
            assert_eq!(ours, want, "{name} {case:?}");
            assert!(
                !want.is_empty() || *pattern == "Alice Example" || name == "forget.sqlite",
                "{name} {case:?}: the case finds nothing"
            );
        }
    }
}

/// find writes its hits a batch of threads at a time (#30: at a million threads it held every
/// hit, 1.7 GB, and printed nothing for 34 s). On a copy whose threads were cloned into more
/// than one batch of 1,024, across the batches' seams: every clone has exactly its original's
/// hits, the hits come in thread-id order, JSON lines equal the JSON array, `--count` (JSON
/// and text) equals the hits grouped by thread, and the table has a row per hit.
#[test]
fn find_streams_across_batches_what_each_thread_holds() {
    let (_dir, db) = common::jobs::sqlite_with_many_threads("new.sqlite", 2100);
    let db = s(&db);
    for history in [false, true] {
        let mut args = vec!["the", "-i"];
        if history {
            args.push("--history");
        }
        let hits = find(db, &args);
        let hits = hits.as_array().expect("hits");
        let threads: Vec<&str> = hits
            .iter()
            .map(|h| h["thread_id"].as_str().unwrap_or_default())
            .collect();
        assert!(
            threads.windows(2).all(|w| w[0] <= w[1]),
            "not in thread order"
        );
        let mut per_thread: Vec<(String, u64)> = Vec::new();
        for t in &threads {
            match per_thread.last_mut() {
                Some((last, n)) if last == t => *n += 1,
                _ => per_thread.push(((*t).to_owned(), 1)),
            }
        }
        assert!(
            per_thread.len() > 1000,
            "{} threads with hits",
            per_thread.len()
        );
        let original: std::collections::HashMap<&str, u64> = per_thread
            .iter()
            .filter(|(t, _)| !t.contains("~copy"))
            .map(|(t, n)| (t.as_str(), *n))
            .collect();
        for (t, n) in &per_thread {
            let source = t.split("~copy").next().unwrap_or_default();
            assert_eq!(original.get(source), Some(n), "{t}: {n} hits");
        }
        let mut count_args = args.clone();
        count_args.push("--count");
        let counts: Vec<(String, u64)> = find(db, &count_args)
            .as_array()
            .expect("counts")
            .iter()
            .map(|c| {
                let t = c["thread_id"].as_str().unwrap_or_default().to_owned();
                (t, c["hits"].as_u64().unwrap_or_default())
            })
            .collect();
        assert_eq!(counts, per_thread, "--count --format json");
        let run = |format: &str, extra: &[&str]| {
            let mut all = vec!["find", "--db", db, "--format", format];
            all.extend_from_slice(&args);
            all.extend_from_slice(extra);
            common::run_ok(&all)
        };
        let lines: Vec<Json> = run("jsonl", &[])
            .lines()
            .map(|l| serde_json::from_str(l).expect("a JSON line"))
            .collect();
        assert_eq!(lines.as_slice(), hits.as_slice(), "JSON lines");
        let text = run("table", &["--count"]);
        let mut text_lines: Vec<&str> = text.lines().collect();
        let summary = text_lines.pop().unwrap_or_default();
        assert_eq!(text_lines.len(), per_thread.len(), "{summary}");
        assert!(
            summary.starts_with(&format!(
                "{} hits in {} threads",
                hits.len(),
                per_thread.len()
            )) || summary.contains(&format!("{} threads", per_thread.len())),
            "{summary}"
        );
        let table = run("table", &[]);
        let rows = table.lines().filter(|l| l.contains('«')).count();
        assert_eq!(rows, hits.len(), "table rows");
    }
}
