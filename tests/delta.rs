//! DeltaChannel threads (fixtures/delta.sqlite) read as LangGraph reads them: for every
//! checkpoint of every thread, memctl's messages (`dump`), other values (`show`), message
//! count (`history`) and, at the latest checkpoint, tokens and `threads list` equal what real
//! LangGraph's `get_state_history` / `get_state` give (tests/interop/harness.py delta-states,
//! run in .venv/new). Fails, never skips, when LangGraph is missing.

mod common;

use common::python;

use common::delta_states;

use std::path::PathBuf;
use std::process::Command;

use common::{fixture, run_err, run_json, run_ok, s, temp_copy, Harness};
use serde_json::Value as Json;

/// What LangGraph shows of every checkpoint of every thread of `db`.
fn langgraph_states(db: &std::path::Path) -> Json {
    langgraph_states_of(db, "")
}

/// [`langgraph_states`], with the graphs of threads not named after theirs
/// (`THREAD=GRAPH,...`).
fn langgraph_states_of(db: &std::path::Path, graphs: &str) -> Json {
    let out =
        Harness::new("new", "harness.py").run(&["delta-states", "--db", s(db), "--graphs", graphs]);
    assert!(out.ok, "harness delta-states failed:\n{}", out.stderr);
    serde_json::from_str(&out.stdout).expect("harness JSON")
}

/// harness.py `continue` of `thread` (graph `graph`) on a copy of `db`: whether it ran, its
/// JSON report, and its stderr.
fn carry_on(db: &std::path::Path, thread: &str, graph: &str) -> (bool, Json, String) {
    let out = Harness::new("new", "harness.py").run(&[
        "continue",
        "--db",
        s(db),
        "--thread",
        thread,
        "--copy",
        "--graph",
        graph,
    ]);
    (
        out.ok,
        serde_json::from_str(&out.stdout).unwrap_or(Json::Null),
        out.stderr,
    )
}

fn same(a: &Json, b: &Json) -> bool {
    serde_json::to_string(a).ok() == serde_json::to_string(b).ok()
}

fn threads(states: &Json) -> Vec<(String, Json)> {
    states["threads"]
        .as_object()
        .expect("threads")
        .iter()
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect()
}

#[test]
#[cfg_attr(
    not(feature = "env-tests"),
    ignore = "needs scripts/test.sh's environment (--features env-tests)"
)]
fn every_checkpoint_of_every_delta_thread_is_langgraphs_state() {
    let db = fixture("delta.sqlite");
    let states = langgraph_states(&db);
    assert!(
        threads(&states).len() >= 8,
        "the fixture's threads: {}",
        threads(&states).len()
    );
    delta_states::check(s(&db), &states).assert_complete(vec![]);
}

#[test]
fn raw_dumps_say_where_a_delta_value_came_from() {
    let db = fixture("delta.sqlite");
    let history = run_json(&["history", "--db", s(&db), "1", "--format", "json"]);
    let latest = history[0]["checkpoint_id"].as_str().expect("id");
    let parent = history[0]["parent_checkpoint_id"].as_str().expect("parent");
    let raw = run_json(&["dump", "--raw", "--db", s(&db), "1"]);
    let d = &raw["delta_channels"]["messages"];
    assert_eq!(d["reducer"], "messages", "{d}");
    // Snapshots every 3 updates: the latest checkpoint replays its parent's snapshot and write.
    assert_eq!(d["seed"]["checkpoint_id"], parent, "{d}");
    assert_eq!(d["seed"]["kind"], "snapshot", "{d}");
    assert_eq!(d["writes_replayed"], 1, "{d}");
    assert_eq!(d["value"].as_array().map(Vec::len), Some(10), "{d}");
    // The stored checkpoint is shown as stored.
    assert_eq!(raw["checkpoint"]["id"], latest);
    assert!(raw["checkpoint"]["channel_values"]
        .get("messages")
        .is_none());
    // The migrated thread's first DeltaChannel checkpoints are seeded by the plain list.
    let history = run_json(&["history", "--db", s(&db), "migrated", "--format", "json"]);
    let plain_seeded = history.as_array().expect("records").iter().any(|r| {
        let id = r["checkpoint_id"].as_str().expect("id");
        let raw = run_json(&[
            "dump",
            "--raw",
            "--db",
            s(&db),
            "migrated",
            "--checkpoint",
            id,
        ]);
        raw["delta_channels"]["messages"]["seed"]["kind"] == "plain"
    });
    assert!(
        plain_seeded,
        "a checkpoint of 'migrated' is seeded by a plain list"
    );
    // An unknown reducer: the seed and the writes, with a note, and no value.
    let raw = run_json(&["dump", "--raw", "--db", s(&db), "notes"]);
    let d = &raw["delta_channels"]["notes"];
    assert_eq!(d["reducer"], "unknown", "{d}");
    if d.get("stored").is_none() {
        assert!(d["value"].is_null(), "{d}");
        assert!(
            d["note"]
                .as_str()
                .is_some_and(|n| n.contains("does not know")),
            "{d}"
        );
        assert!(d["writes"].as_array().is_some_and(|w| !w.is_empty()), "{d}");
    }
    let shown = run_ok(&["show", "--db", s(&db), "notes"]);
    assert!(shown.contains("does not know"), "{shown}");
}

/// The three ways a DeltaChannel chain of thread "1" of a delta.sqlite copy breaks (the rows
/// changed by hand), each with what the one error line must name: the seed's checkpoint row
/// deleted, a write row that does not decode, the seed snapshot's payload not a list.
fn broken_chains() -> Vec<(&'static str, tempfile::TempDir, PathBuf, Vec<String>)> {
    let history = run_json(&[
        "history",
        "--db",
        s(&fixture("delta.sqlite")),
        "1",
        "--format",
        "json",
    ]);
    // The latest checkpoint's parent holds the seed (a snapshot) and writes it replays.
    let parent = history[0]["parent_checkpoint_id"]
        .as_str()
        .expect("parent")
        .to_owned();
    let mut out = Vec::new();
    // A copy of delta.sqlite with `sql` (one `?`: the parent's id) run on it.
    let changed = |sql: &str| {
        let (d, db) = temp_copy(&fixture("delta.sqlite"));
        let conn = rusqlite::Connection::open(&db).expect("open");
        let n = conn.execute(sql, [&parent]).expect(sql);
        assert!(n >= 1, "{sql}: no row changed");
        (d, db)
    };
    let (d, db) = changed("DELETE FROM checkpoints WHERE thread_id = '1' AND checkpoint_id = ?");
    out.push((
        "seed missing",
        d,
        db,
        vec![parent.clone(), "missing".into()],
    ));
    let (d, db) = changed(
        "UPDATE writes SET value = x'c1' WHERE thread_id = '1' AND checkpoint_id = ? AND channel = 'messages'",
    );
    out.push((
        "write does not decode",
        d,
        db,
        vec![parent.clone(), "cannot decode".into()],
    ));

    let (d, db) = temp_copy(&fixture("delta.sqlite"));
    let conn = rusqlite::Connection::open(&db).expect("open");
    let blob: Vec<u8> = conn
        .query_row(
            "SELECT checkpoint FROM checkpoints WHERE thread_id = '1' AND checkpoint_id = ?",
            [&parent],
            |r| r.get(0),
        )
        .expect("blob");
    // The snapshot is `ext8/16/32 LEN 07 <payload>` under "messages": its payload becomes the
    // int 5.
    let key = b"\xa8messages";
    let at = blob
        .windows(key.len())
        .position(|w| w == key)
        .expect("messages key")
        + key.len();
    let width = match blob[at] {
        0xc7 => 1,
        0xc8 => 2,
        0xc9 => 4,
        other => panic!("not an ext snapshot: {other:#x}"),
    };
    let len = blob[at + 1..at + 1 + width]
        .iter()
        .fold(0usize, |n, b| n * 256 + usize::from(*b));
    assert_eq!(blob[at + 1 + width], 7, "ext 7");
    let mut bad = blob[..at].to_vec();
    bad.extend_from_slice(&[0xd4, 7, 5]); // fixext1, code 7, payload: the int 5
    bad.extend_from_slice(&blob[at + 2 + width + len..]);
    conn.execute(
        "UPDATE checkpoints SET checkpoint = ? WHERE thread_id = '1' AND checkpoint_id = ?",
        rusqlite::params![bad, parent],
    )
    .expect("update");
    drop(conn);
    out.push((
        "snapshot payload unknown",
        d,
        db,
        vec![parent.clone(), "not a list".into()],
    ));
    out
}

/// Bad input on a DeltaChannel thread (#16): each broken chain is one clear line naming the
/// checkpoint, a non-zero exit and no panic, for every read command and for trim, and trim
/// writes nothing (the file's bytes stay as they were).
#[test]
fn a_broken_chain_is_one_clear_error() {
    for (what, _dir, db, needles) in broken_chains() {
        for cmd in delta_states::BROKEN_CHAIN_COMMANDS {
            let before = std::fs::read(&db).expect("read");
            let mut args = cmd.to_vec();
            args.extend(["--db", s(&db)]);
            let err = run_err(&args);
            for n in &needles {
                assert!(
                    err.contains(n.as_str()),
                    "{what}: {cmd:?}: no '{n}' in: {err}"
                );
            }
            assert!(
                std::fs::read(&db).expect("read") == before,
                "{what}: {cmd:?} changed the file"
            );
        }
    }
}

/// Rewrites a copy of delta.sqlite with memctl, then the harness compares it with real
/// LangGraph's `update_state` on another copy (rows field by field, write bytes), reads it,
/// and continues the thread (tests/interop/harness.py check-rewrite, graph delta:<thread>).
fn check_rewrite(thread: &str, memctl_args: &[&str], expect: Json) -> Result<(), String> {
    check_rewrite_of("delta.sqlite", thread, memctl_args, expect)
}

/// [`check_rewrite`] on a copy of the fixture `original`.
fn check_rewrite_of(
    original: &str,
    thread: &str,
    memctl_args: &[&str],
    expect: Json,
) -> Result<(), String> {
    let (dir, db) = temp_copy(&fixture(original));
    let mut args = memctl_args.to_vec();
    args.extend(["--db", s(&db), "--thread", thread, "--format", "json"]);
    let out = run_json(&args);
    let mut expect = expect;
    if out["threads"][0]["status"] != "rewritten" {
        return Err(format!("{thread} {memctl_args:?}: {}", out["threads"][0]));
    }
    expect["expect_write"] = Json::Bool(true);
    harness_check_of(&fixture(original), thread, &db, dir.path(), &expect, None)
        .map_err(|e| format!("{thread} memctl {memctl_args:?}:\n{e}"))
}

/// The harness's check-rewrite of `db`, a rewritten copy of `original`; with `key`, every
/// saver of the harness is the app's `EncryptedSerializer` with that key.
fn harness_check_of(
    original: &std::path::Path,
    thread: &str,
    db: &std::path::Path,
    dir: &std::path::Path,
    expect: &Json,
    key: Option<&str>,
) -> Result<(), String> {
    let graph = format!("delta:{thread}");
    let ran = common::Harness::new("new", "harness.py")
        .env("LANGGRAPH_AES_KEY", key)
        .check_rewrite(&common::Rewrite {
            original,
            rewritten: db,
            thread,
            graph: Some(&graph),
            expect,
            dir,
        });
    if ran.ok {
        Ok(())
    } else {
        Err(ran.stderr)
    }
}

#[test]
#[cfg_attr(
    not(feature = "env-tests"),
    ignore = "needs scripts/test.sh's environment (--features env-tests)"
)]
fn trim_and_rm_of_delta_threads_are_what_update_state_writes() {
    let mut failures = Vec::new();
    // Every idle thread (paused is refused, as any paused thread).
    for thread in [
        "1", "edits", "files", "notes", "migrated", "subgraph", "exit",
    ] {
        let trim = serde_json::json!({"mode": "trim", "max_tokens": 2, "counter": "len",
            "keep_first": false});
        if let Err(e) = check_rewrite(thread, &["trim", "--keep", "2"], trim) {
            failures.push(e);
        }
    }
    for thread in ["1", "files", "migrated"] {
        let listed = run_json(&["dump", "--db", s(&fixture("delta.sqlite")), thread]);
        let ids: Vec<Json> = listed.as_array().expect("messages")[1..]
            .iter()
            .map(|m| m["id"].clone())
            .collect();
        let expect = serde_json::json!({"mode": "ids", "ids": ids});
        if let Err(e) = check_rewrite(thread, &["rm", "--index", "0"], expect) {
            failures.push(e);
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

/// fixtures/delta-bump.sqlite's thread `bump`: its `files` DeltaChannel is one superstep
/// short of LangGraph's snapshot bound, so the checkpoint an update appends (trim, rm,
/// summarize) must snapshot files without writing it. LangGraph's `update_state` then moves
/// the files version (`get_next_version` of its own), and so must memctl: the harness
/// compares the rows with real `update_state`'s (channel values byte for byte, the bumped
/// version's integer part, versions_seen, metadata, the write rows), reads the thread and
/// continues it (#16).
#[test]
#[cfg_attr(
    not(feature = "env-tests"),
    ignore = "needs scripts/test.sh's environment (--features env-tests)"
)]
fn an_update_that_snapshots_an_unwritten_delta_channel_bumps_it_like_update_state() {
    let db = fixture("delta-bump.sqlite");
    let raw = run_json(&["dump", "--raw", "--db", s(&db), "bump"]);
    assert_ne!(
        raw["delta_channels"]["files"]["stored"], "snapshot",
        "{raw}"
    );
    let listed = run_json(&["dump", "--db", s(&db), "bump"]);
    let ids: Vec<Json> = listed.as_array().expect("messages")[1..]
        .iter()
        .map(|m| m["id"].clone())
        .collect();
    let mut failures = Vec::new();
    let cases = [
        (
            vec!["trim", "--keep", "2"],
            serde_json::json!({"mode": "trim", "max_tokens": 2, "counter": "len",
                "keep_first": false}),
        ),
        (
            vec!["rm", "--index", "0"],
            serde_json::json!({"mode": "ids", "ids": ids}),
        ),
    ];
    for (args, expect) in cases {
        if let Err(e) = check_rewrite_of("delta-bump.sqlite", "bump", &args, expect) {
            failures.push(e);
        }
    }
    // `bump-unwritten`: files was never written (no version): at the bound LangGraph leaves it
    // out and its counters go on, and so must memctl.
    let trim = serde_json::json!({"mode": "trim", "max_tokens": 2, "counter": "len",
        "keep_first": false});
    if let Err(e) = check_rewrite_of(
        "delta-bump.sqlite",
        "bump-unwritten",
        &["trim", "--keep", "2"],
        trim,
    ) {
        failures.push(e);
    }
    // What memctl wrote holds files as a snapshot under a new version.
    let (_d, copy) = temp_copy(&db);
    run_ok(&["trim", "--db", s(&copy), "--thread", "bump", "--keep", "2"]);
    let raw = run_json(&["dump", "--raw", "--db", s(&copy), "bump"]);
    assert_eq!(
        raw["delta_channels"]["files"]["stored"], "snapshot",
        "{raw}"
    );
    // summarize through the local test endpoint.
    if let Err(e) = summarize_and_check("delta-bump.sqlite", "bump") {
        failures.push(e);
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

/// What the harness expects after a summarize of `thread` in `db`: the summary message by its
/// fields, the kept messages by id.
fn summary_expectation(db: &std::path::Path, thread: &str) -> Json {
    let state = run_json(&["dump", "--db", s(db), "--thread", thread]);
    let items: Vec<Json> = state
        .as_array()
        .expect("messages")
        .iter()
        .map(|m| {
            if m["additional_kwargs"]["lc_source"] == "summarization" {
                m.clone()
            } else {
                serde_json::json!({"id": m["id"]})
            }
        })
        .collect();
    serde_json::json!({"mode": "messages", "messages": items, "expect_write": true})
}

#[test]
fn a_paused_delta_thread_is_refused_like_any_paused_thread() {
    let (_d, db) = temp_copy(&fixture("delta.sqlite"));
    let err = run_err(&["trim", "--db", s(&db), "--thread", "paused", "--keep", "2"]);
    assert!(err.contains("interrupt"), "{err}");
}

/// What LangGraph sees of a thread of a delta.sqlite copy (harness.py state).
fn langgraph_state(db: &std::path::Path, thread: &str) -> Json {
    let graph = format!("delta:{thread}");
    let out = Harness::new("new", "harness.py").run(&[
        "state",
        "--db",
        s(db),
        "--thread",
        thread,
        "--graph",
        &graph,
    ]);
    assert!(out.ok, "{}", out.stderr);
    serde_json::from_str(&out.stdout).expect("state JSON")
}

#[test]
#[cfg_attr(
    not(feature = "env-tests"),
    ignore = "needs scripts/test.sh's environment (--features env-tests)"
)]
fn a_purged_delta_thread_loads_continues_and_keeps_no_removed_byte() {
    // delta-bump.sqlite's `bump`: the purge's checkpoint snapshots files too (its counters
    // are at the bound), under a bumped version.
    let cases = [
        ("delta.sqlite", "1"),
        ("delta.sqlite", "files"),
        ("delta-bump.sqlite", "bump"),
    ];
    for (file, thread) in cases {
        let (_d, db) = temp_copy(&fixture(file));
        let (before, raw) = delta_states::purge_first_message(&db, thread);
        if thread == "bump" {
            assert_eq!(
                raw["delta_channels"]["files"]["stored"], "snapshot",
                "{raw}"
            );
        }
        let state = langgraph_state(&db, thread);
        let ids = delta_states::message_ids;
        assert_eq!(ids(&state["messages"]), ids(&before)[1..], "{thread}");
        let (ok, cont, stderr) = carry_on(&db, thread, &format!("delta:{thread}"));
        assert!(ok, "{stderr}");
        assert_eq!(
            cont["messages_after"].as_u64(),
            cont["messages_before"].as_u64().map(|n| n + 2),
            "{thread}: {cont}"
        );
        assert_eq!(
            ids(&cont["model_received"][0])[..before.as_array().map_or(0, Vec::len) - 1],
            ids(&before)[1..]
        );
    }
}

#[test]
#[cfg_attr(
    not(feature = "env-tests"),
    ignore = "needs scripts/test.sh's environment (--features env-tests)"
)]
fn summarize_of_delta_threads_is_what_update_state_writes() {
    let failures: Vec<String> = ["1", "files"]
        .iter()
        .filter_map(|t| summarize_and_check("delta.sqlite", t).err())
        .collect();
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

/// memctl summarizes `thread` of a copy of the fixture `original` (keeping 2, through a local
/// test endpoint); the harness compares it with real update_state of the same list, reads the
/// thread and continues it.
fn summarize_and_check(original: &str, thread: &str) -> Result<(), String> {
    use common::chat_server::{ChatServer, Reply};
    let server = ChatServer::start(|_, n| Reply::Summary(format!("Earlier: questions {n}.")));
    let (dir, db) = temp_copy(&fixture(original));
    let out = common::memctl()
        .env("MEMCTL_TEST_KEY", "test-key")
        .args([
            "summarize",
            "--db",
            s(&db),
            "--thread",
            thread,
            "--keep",
            "2",
        ])
        .args(["--endpoint", &server.url, "--model", "m"])
        .args(["--api-key-env", "MEMCTL_TEST_KEY", "--format", "json"])
        .output()
        .expect("memctl runs");
    let report: Json = serde_json::from_slice(&out.stdout).unwrap_or(Json::Null);
    if report["threads"][0]["status"] != "summarized" {
        return Err(format!(
            "{thread}: summarize: {report} {}",
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    let expect = summary_expectation(&db, thread);
    harness_check_of(&fixture(original), thread, &db, dir.path(), &expect, None)
        .map_err(|e| format!("{thread} summarize:\n{e}"))
}

#[test]
#[cfg_attr(
    not(feature = "env-tests"),
    ignore = "needs scripts/test.sh's environment (--features env-tests)"
)]
fn gc_keeps_every_kept_checkpoints_delta_state() {
    let original = langgraph_states(&fixture("delta.sqlite"));
    for keep in ["1", "3"] {
        let (_d, db) = temp_copy(&fixture("delta.sqlite"));
        let (failures, report) =
            delta_states::check_gc(s(&db), keep, &["--vacuum"], &original, || {
                langgraph_states(&db)
            });
        assert!(failures.is_empty(), "{}", failures.join("\n"));
        // The file shrinks (after VACUUM), by the snapshot plan on the DeltaChannel threads.
        let (before, after) = (
            report["file_bytes_before"].as_u64().expect("before"),
            std::fs::metadata(&db).expect("file").len(),
        );
        assert!(after < before, "keep {keep}: {before} → {after}");
        let snapshots = delta_states::snapshotted(&report);
        assert!(snapshots >= 3, "keep {keep}: {report}");
    }
}

#[test]
#[cfg_attr(
    not(feature = "env-tests"),
    ignore = "needs scripts/test.sh's environment (--features env-tests)"
)]
fn find_searches_delta_threads_in_the_state_langgraph_shows() {
    let db = fixture("delta.sqlite");
    let (searched, failures) = delta_states::check_find(s(&db), &langgraph_states(&db));
    assert!(searched >= 6, "threads searched: {searched}");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// The AES key of the encrypted copies of delta.sqlite (test data).
const DELTA_KEY: &str = "memctl-delta-test-key-aes256!!!!";

/// memctl with LANGGRAPH_AES_KEY = [`DELTA_KEY`]: its JSON output.
fn run_json_key(args: &[&str]) -> Json {
    let out = common::memctl()
        .env("LANGGRAPH_AES_KEY", DELTA_KEY)
        .args(args)
        .output()
        .expect("memctl runs");
    assert!(
        out.status.success() || common::find_found_nothing(args, &out),
        "memctl {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{args:?}: {e}"))
}

/// A copy of delta.sqlite with every value encrypted by `memctl rekey` (LangGraph reads
/// such a file with the key: tests/encrypted_interop.rs).
fn encrypted_delta() -> (tempfile::TempDir, std::path::PathBuf) {
    let (dir, db) = temp_copy(&fixture("delta.sqlite"));
    let out = common::memctl()
        .env("MEMCTL_TEST_NEW_KEY", DELTA_KEY)
        .args([
            "rekey",
            "--new-key-env",
            "MEMCTL_TEST_NEW_KEY",
            "--db",
            s(&db),
        ])
        .output()
        .expect("memctl runs");
    assert!(
        out.status.success(),
        "rekey: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    (dir, db)
}

#[test]
#[cfg_attr(
    not(feature = "env-tests"),
    ignore = "needs scripts/test.sh's environment (--features env-tests)"
)]
fn encrypted_delta_threads_read_as_plain_and_rewrites_stay_sealed() {
    let plain = fixture("delta.sqlite");
    let (_d, enc) = encrypted_delta();
    let raw = run_json_key(&["dump", "--raw", "--db", s(&enc), "1"]);
    assert_eq!(raw["type"], "msgpack+aes", "rekey encrypted the file");
    // Every read command shows the encrypted copy as the plain file.
    for (thread, _) in threads(&langgraph_states(&plain)) {
        let t = thread.as_str();
        for args in [
            vec!["dump", t],
            vec!["show", t, "--format", "json"],
            vec!["history", t, "--format", "json"],
            vec!["tokens", t, "--format", "json"],
            vec![
                "find",
                "Delta",
                "--thread",
                t,
                "--history",
                "--format",
                "json",
            ],
        ] {
            let mut p = args.clone();
            p.extend(["--db", s(&plain)]);
            let mut e = args.clone();
            e.extend(["--db", s(&enc)]);
            assert!(
                same(&run_json(&p), &run_json_key(&e)),
                "{args:?}: the encrypted copy reads differently"
            );
        }
    }
    // trim and rm on the encrypted copy are what the app's update_state writes (encrypted
    // with the same key), and the new checkpoint is sealed.
    let mut failures = Vec::new();
    for (thread, args, expect) in [
        (
            "1",
            vec!["trim", "--keep", "2"],
            serde_json::json!({"mode": "trim", "max_tokens": 2, "counter": "len",
                "keep_first": false}),
        ),
        (
            "files",
            vec!["trim", "--keep", "2"],
            serde_json::json!({"mode": "trim", "max_tokens": 2, "counter": "len",
                "keep_first": false}),
        ),
    ] {
        let (dir, db) = temp_copy(&enc);
        let mut a = args.clone();
        a.extend(["--db", s(&db), "--thread", thread, "--format", "json"]);
        let out = run_json_key(&a);
        if out["threads"][0]["status"] != "rewritten" {
            failures.push(format!("{thread} {args:?}: {}", out["threads"][0]));
            continue;
        }
        let raw = run_json_key(&["dump", "--raw", "--db", s(&db), thread]);
        if raw["type"] != "msgpack+aes" {
            failures.push(format!(
                "{thread}: new checkpoint stored as {}",
                raw["type"]
            ));
        }
        let mut expect = expect;
        expect["expect_write"] = Json::Bool(true);
        if let Err(e) = harness_check_of(&enc, thread, &db, dir.path(), &expect, Some(DELTA_KEY)) {
            failures.push(format!("{thread} memctl {args:?}:\n{e}"));
        }
    }
    // rm --purge: the kept list snapshotted on a sealed checkpoint, no removed byte left
    // (in the file or in any decrypted value).
    let (_d2, db) = temp_copy(&enc);
    let before = run_json_key(&["dump", "--db", s(&db), "1"]);
    let removed = before[0]["content"].as_str().expect("text").to_owned();
    let out = run_json_key(&[
        "rm",
        "--db",
        s(&db),
        "--thread",
        "1",
        "--index",
        "0",
        "--purge",
        "--format",
        "json",
    ]);
    if out["threads"][0]["status"] != "purged" {
        failures.push(format!("rm --purge: {out}"));
    }
    let raw = run_json_key(&["dump", "--raw", "--db", s(&db), "1"]);
    if raw["type"] != "msgpack+aes" || raw["delta_channels"]["messages"]["stored"] != "snapshot" {
        failures.push(format!(
            "rm --purge: new checkpoint {} / {}",
            raw["type"], raw["delta_channels"]["messages"]
        ));
    }
    let after = run_json_key(&["dump", "--db", s(&db), "1"]);
    if !same(
        &after,
        &Json::Array(before.as_array().expect("list")[1..].to_vec()),
    ) {
        failures.push(format!("rm --purge: state after {after}"));
    }
    let hits = run_json_key(&[
        "find",
        &removed,
        "--history",
        "--db",
        s(&db),
        "--format",
        "json",
    ]);
    if hits.as_array().is_none_or(|h| !h.is_empty()) {
        failures.push(format!("rm --purge: '{removed}' still found: {hits}"));
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

/// Issue #16: gc of threads whose DeltaChannels live in subgraph namespaces
/// (fixtures/delta-subgraph.sqlite: a stateful subgraph's namespace `child` that goes on
/// from run to run, and a looping per-run subgraph `child:<task id>`, both crossing several
/// snapshots there). For several `--keep-checkpoints`, on a copy: at every kept checkpoint,
/// root and subgraph namespaces, LangGraph shows exactly the state it showed before
/// (`get_state_history` of each namespace, and `get_state(subgraphs=True)` at root
/// checkpoints with a pending subgraph task), history lists exactly the kept checkpoints
/// ([`delta_states::compare_kept`]), memctl reads every kept one as LangGraph does, the file
/// shrinks, and the graph carries on with the whole history.
#[test]
#[cfg_attr(
    not(feature = "env-tests"),
    ignore = "needs scripts/test.sh's environment (--features env-tests)"
)]
fn gc_keeps_delta_state_in_subgraph_namespaces() {
    let fx = fixture("delta-subgraph.sqlite");
    let original = langgraph_states(&fx);
    let seen = delta_states::check(s(&fx), &original);
    assert!(seen.failures.is_empty(), "{}", seen.failures.join("\n"));
    assert!(
        seen.subgraph > 30,
        "subgraph checkpoints: {}",
        seen.subgraph
    );
    // A turn adds the human message and the subgraph's answers: 3 (stateful), 8 (looping).
    let turns = [("stateful-sub", 3), ("looping-sub", 8)];
    for keep in ["1", "2", "4", "6", "7", "12"] {
        let (_d, db) = temp_copy(&fx);
        let (mut failures, report) =
            delta_states::check_gc(s(&db), keep, &["--vacuum"], &original, || {
                langgraph_states(&db)
            });
        let after = langgraph_states(&db);
        let seen = delta_states::check(s(&db), &after);
        failures.extend(seen.failures);
        let (before, now) = (
            report["file_bytes_before"].as_u64().expect("before"),
            std::fs::metadata(&db).expect("file").len(),
        );
        if now >= before {
            failures.push(format!("keep {keep}: the file did not shrink: {report}"));
        }
        for (thread, added) in turns {
            let (ok, cont, stderr) = carry_on(&db, thread, &format!("delta:{thread}"));
            let had = original["threads"][thread]["latest_messages"].clone();
            let n = had.as_array().map_or(0, Vec::len);
            let received = delta_states::message_ids(&cont["model_received"][0]);
            if !ok
                || cont["messages_after"].as_u64() != Some((n + added) as u64)
                || received.get(..n) != Some(&delta_states::message_ids(&had)[..])
            {
                failures.push(format!(
                    "keep {keep}: {thread} does not carry on: {cont} {stderr}"
                ));
            }
        }
        assert!(failures.is_empty(), "{}", failures.join("\n"));
    }
}

/// Issue #16: gc beside a live app on DeltaChannel threads. A real LangGraph app keeps
/// running turns on two threads of a copy of delta.sqlite (`live-1`: messages a
/// DeltaChannel; `live-sub`: the stateful-subgraph graph of delta-subgraph.sqlite, so
/// DeltaChannels in the root and the `child` namespace), recording every checkpoint and
/// write it makes into a mirror file nothing else touches, while `gc --keep-checkpoints N`
/// (N = 1, 2, 3, 5 in turn, `--min-idle 0s`) runs on the same file again and again, until
/// each app thread was collected at least once and some thread got snapshots. Then:
/// the app saw no error, each of its turns saw every message of the one before and
/// LangGraph's final state is its last turn's (harness live-app); every checkpoint left of
/// the app's threads shows LangGraph the state the app's own record shows there, the others
/// were collected as gc may ([`delta_states::compare_with_record`]); memctl reads what is
/// left as LangGraph does; and both threads carry on.
#[test]
#[cfg_attr(
    not(feature = "env-tests"),
    ignore = "needs scripts/test.sh's environment (--features env-tests)"
)]
fn gc_beside_a_live_app_on_delta_threads_loses_nothing() {
    let (dir, db) = temp_copy(&fixture("delta.sqlite"));
    let (stop, mirror) = (dir.path().join("stop"), dir.path().join("mirror.sqlite"));
    let app = Command::new(python("new"))
        .arg(common::root().join("tests/interop/harness.py"))
        .args(["live-app", "--db", s(&db), "--graph", "delta:1"])
        .args(["--threads", "live-1,live-sub=delta:stateful-sub"])
        .args(["--seconds", "600", "--stop-file", s(&stop)])
        .args(["--mirror", s(&mirror)])
        // A bounded record: the comparison afterwards replays every checkpoint of it.
        .args(["--max-turns", "300", "--pause", "0.1"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("the app starts");
    let app_threads = ["live-1", "live-sub"];
    let (collected, mut failures) = delta_states::gc_beside_a_live_app(s(&db), &app_threads);
    std::fs::write(&stop, b"stop").expect("stop file");
    let result = app.wait_with_output().expect("the app ends");
    let report = String::from_utf8_lossy(&result.stdout);
    assert!(
        result.status.success() && failures.is_empty(),
        "{}\nthe app: {report}\n{}",
        failures.join("\n"),
        String::from_utf8_lossy(&result.stderr)
    );
    // What is left against the app's record.
    let graphs = "live-1=delta:1,live-sub=delta:stateful-sub";
    let now = langgraph_states_of(&db, graphs);
    let record = langgraph_states_of(&mirror, graphs);
    for t in app_threads {
        failures.extend(delta_states::compare_with_record(
            t,
            &now["threads"][t],
            &record["threads"][t],
        ));
    }
    let seen = delta_states::check(s(&db), &now);
    failures.extend(seen.failures);
    for (t, graph) in [("live-1", "delta:1"), ("live-sub", "delta:stateful-sub")] {
        let (ok, cont, _) = carry_on(&db, t, graph);
        let had = delta_states::message_ids(&now["threads"][t]["latest_messages"]);
        let received = delta_states::message_ids(&cont["model_received"][0]);
        if !ok || received.get(..had.len()) != Some(&had[..]) {
            failures.push(format!("{t} does not carry on: {cont}"));
        }
    }
    assert!(
        failures.is_empty(),
        "{}\ncollected {collected:?}",
        failures.join("\n")
    );
}
