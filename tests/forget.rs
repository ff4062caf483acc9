//! `memctl forget` (#18) on fixtures/forget.sqlite (real LangGraph: Alice Example, user_id 42,
//! 12 Elm Street, over dict inputs, old checkpoints, tool-call arguments, a summary channel
//! and a subgraph namespace, beside other users' threads): afterwards no byte of the file or
//! its -wal holds what was erased, real LangGraph loads and continues every remaining thread,
//! untouched threads are byte-identical, the receipt says what was done (and holds none of the
//! erased text), a dry run writes nothing, a second run finishes the job.

mod common;

use std::path::Path;

use common::{fixture, memctl, s, temp_copy};
use serde_json::Value as Json;
use sha2::Digest;

const ALICE: [&str; 4] = ["alice-chat", "alice-tools", "alice-profile", "alice-sub"];
const ERASED: [&str; 3] = ["Alice Example", "12 Elm Street", "Elm Street"];
const PATTERN: &str = "Alice Example|12 Elm Street";
/// Alice's erasure request: her threads, and the pattern everywhere else.
const REQUEST: [&str; 5] = ["--meta", "user_id=42", "--match", PATTERN, "--regex"];

/// Runs tests/interop/harness.py (new venv) with `args`, the app's AES key in
/// `LANGGRAPH_AES_KEY` when given; asserts success and returns its JSON.
fn harness(args: &[&str], key: Option<&str>) -> Json {
    common::Harness::new("new", "harness.py")
        .env("LANGGRAPH_AES_KEY", key)
        .run(args)
        .expect_json(args)
}

/// Real LangGraph loads `thread` from a copy of `db` and invokes one more user message.
fn continues(db: &Path, thread: &str) -> Json {
    harness(
        &["continue", "--db", s(db), "--thread", thread, "--copy"],
        None,
    )
}

/// Every row of a thread (checkpoints and writes, every column), in key order.
fn rows(db: &Path, thread: &str) -> Vec<Vec<String>> {
    let c = rusqlite::Connection::open(db).expect("open");
    let mut out = Vec::new();
    for sql in [
        "SELECT thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, type, hex(checkpoint), hex(metadata) \
         FROM checkpoints WHERE thread_id = ? ORDER BY checkpoint_ns, checkpoint_id",
        "SELECT thread_id, checkpoint_ns, checkpoint_id, task_id, idx, channel, type, hex(value) \
         FROM writes WHERE thread_id = ? ORDER BY checkpoint_ns, checkpoint_id, task_id, idx",
    ] {
        let mut st = c.prepare(sql).expect("prepare");
        let n = st.column_count();
        let found = st
            .query_map([thread], |r| {
                (0..n)
                    .map(|i| {
                        r.get::<_, Option<String>>(i)
                            .or_else(|_| r.get::<_, i64>(i).map(|v| Some(v.to_string())))
                            .map(Option::unwrap_or_default)
                    })
                    .collect::<rusqlite::Result<Vec<String>>>()
            })
            .expect("query")
            .collect::<rusqlite::Result<Vec<_>>>()
            .expect("rows");
        out.extend(found);
    }
    out
}

fn count(db: &Path, sql: &str) -> i64 {
    let c = rusqlite::Connection::open(db).expect("open");
    c.query_row(sql, [], |r| r.get(0)).expect(sql)
}

/// The bytes of the file and its -wal.
fn file_bytes(db: &Path) -> Vec<u8> {
    let mut all = std::fs::read(db).expect("read the db");
    if let Ok(wal) = std::fs::read(format!("{}-wal", db.display())) {
        all.extend(wal);
    }
    all
}

fn holds(bytes: &[u8], text: &str) -> bool {
    bytes.windows(text.len()).any(|w| w == text.as_bytes())
}

fn sha256(text: &str) -> String {
    sha2::Sha256::digest(text.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// A receipt's list of digests, sorted.
fn digests(list: &Json) -> Vec<String> {
    let mut out: Vec<String> = list
        .as_array()
        .expect("a list of digests")
        .iter()
        .map(|v| v.as_str().unwrap_or_default().to_owned())
        .collect();
    out.sort();
    out
}

/// The digests of `texts`, sorted.
fn digests_of(texts: &[&str]) -> Vec<String> {
    let mut out: Vec<String> = texts.iter().map(|t| sha256(t)).collect();
    out.sort();
    out
}

/// Runs forget; returns (exit code, stdout).
fn forget(db: &Path, args: &[&str]) -> (i32, String) {
    let out = memctl()
        .args(["forget", "--db", s(db), "--settle", "0s"])
        .args(args)
        .output()
        .expect("memctl runs");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("panicked"), "{stderr}");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8(out.stdout).expect("UTF-8"),
    )
}

#[test]
#[cfg_attr(
    not(feature = "env-tests"),
    ignore = "needs scripts/test.sh's environment (--features env-tests)"
)]
fn meta_and_match_erase_alice_from_every_byte_and_langgraph_continues_the_rest() {
    let original = fixture("forget.sqlite");
    let (dir, db) = temp_copy(&original);
    let carol_before = rows(&original, "carol-chat");
    let alice_checkpoints = count(
        &original,
        "SELECT COUNT(*) FROM checkpoints WHERE thread_id LIKE 'alice-%'",
    );
    let alice_writes = count(
        &original,
        "SELECT COUNT(*) FROM writes WHERE thread_id LIKE 'alice-%'",
    );
    assert!(holds(&file_bytes(&original), "12 Elm Street"));
    let receipt_path = dir.path().join("receipt.json");
    let (code, stdout) = forget(
        &db,
        &[
            &REQUEST[..],
            &["--force", "--receipt", s(&receipt_path), "--format", "json"],
        ]
        .concat(),
    );
    assert_eq!(code, 0, "{stdout}");
    let bytes = file_bytes(&db);
    for text in ERASED.iter().chain(&ALICE) {
        assert!(!holds(&bytes, text), "'{text}' is still in the file");
    }
    // The receipt: printed and written, the same document, none of the erased text.
    let receipt: Json = serde_json::from_str(&stdout).expect("JSON");
    let written: Json =
        serde_json::from_slice(&std::fs::read(&receipt_path).expect("the receipt file"))
            .expect("JSON");
    assert_eq!(receipt, written);
    for text in ERASED.iter().chain(&ALICE) {
        assert!(!stdout.contains(text), "the receipt holds '{text}'");
    }
    assert_eq!(receipt["deleted"]["threads"], 4);
    assert_eq!(receipt["deleted"]["checkpoints"], alice_checkpoints);
    assert_eq!(receipt["deleted"]["writes"], alice_writes);
    assert_eq!(
        digests(&receipt["deleted_threads_sha256"]),
        digests_of(&ALICE)
    );
    assert_eq!(receipt["request"]["meta"][0]["key"], "user_id");
    assert_eq!(receipt["request"]["meta"][0]["value_sha256"], sha256("42"));
    assert_eq!(receipt["request"]["pattern"]["sha256"], sha256(PATTERN));
    // bob-chat and (forced) bob-paused were scrubbed; carol-chat has no match.
    assert_eq!(receipt["scrubbed"]["threads"], 2, "{receipt}");
    assert_eq!(
        digests(&receipt["scrubbed_threads_sha256"]),
        digests_of(&["bob-chat", "bob-paused"])
    );
    assert_eq!(receipt["reported"], serde_json::json!([]));
    assert_eq!(receipt["verification"]["clean"], true, "{receipt}");
    // memctl's own deletes zero what they free, so the free pages are zeroed in short
    // transactions and no VACUUM (which locks an app out) is needed.
    assert_eq!(receipt["reclaim"]["vacuumed"], false, "{receipt}");
    assert!(
        receipt["reclaim"]["free_pages_zeroed"].is_u64(),
        "{receipt}"
    );
    assert_eq!(
        count(
            &db,
            "SELECT COUNT(*) FROM checkpoints WHERE thread_id LIKE 'alice-%'"
        ),
        0
    );
    // What was not erased is byte for byte as it was.
    assert_eq!(rows(&db, "carol-chat"), carol_before);
    // Real LangGraph continues every remaining thread; bob keeps the rest of his chat.
    for thread in ["bob-chat", "bob-paused", "carol-chat"] {
        let r = continues(&db, thread);
        assert!(
            r["messages_after"].as_u64() > r["messages_before"].as_u64(),
            "{thread}: {r}"
        );
    }
    let bob = continues(&db, "bob-chat");
    let seen = bob["model_received"].to_string();
    assert!(seen.contains("I like tea."), "{seen}");
    assert!(!seen.contains("Alice"), "{seen}");
}

#[test]
#[cfg_attr(
    not(feature = "env-tests"),
    ignore = "needs scripts/test.sh's environment (--features env-tests)"
)]
fn match_scrubs_history_dict_inputs_tool_arguments_summaries_and_subgraphs() {
    let (_dir, db) = temp_copy(&fixture("forget.sqlite"));
    let untouched = rows(&db, "carol-chat");
    let (code, stdout) = forget(&db, &["--match", "12 Elm Street", "--force"]);
    assert_eq!(code, 0, "{stdout}");
    assert!(stdout.contains("result: clean"), "{stdout}");
    let bytes = file_bytes(&db);
    assert!(!holds(&bytes, "12 Elm Street"));
    // Alice's threads stay (only the address goes); LangGraph continues each of them.
    for thread in ALICE
        .iter()
        .chain(&["bob-chat", "bob-paused", "carol-chat"])
    {
        continues(&db, thread);
    }
    // The tool call and its answer went with the address; the user's request and the final
    // answer stay.
    let dumped = common::run_json(&["dump", "--db", s(&db), "--thread", "alice-tools"]);
    let ids: Vec<&str> = dumped
        .as_array()
        .expect("list")
        .iter()
        .filter_map(|m| m["id"].as_str())
        .collect();
    assert_eq!(ids, ["human-at-1", "ai-at-2"], "{dumped}");
    let profile = common::run_ok(&["show", "--db", s(&db), "--thread", "alice-profile"]);
    assert!(profile.contains("[erased]"), "{profile}");
    // find sees the address nowhere in any checkpoint.
    let hits = common::run_json(&[
        "find",
        "--db",
        s(&db),
        "--history",
        "--format",
        "json",
        "Elm Street",
    ]);
    assert_eq!(hits, serde_json::json!([]));
    assert_eq!(rows(&db, "carol-chat"), untouched);
}

#[test]
fn paused_threads_are_reported_and_the_run_is_incomplete() {
    let original = fixture("forget.sqlite");
    let (_dir, db) = temp_copy(&original);
    let (code, stdout) = forget(&db, &["--match", PATTERN, "--regex", "--format", "json"]);
    assert_eq!(code, 3, "{stdout}");
    let receipt: Json = serde_json::from_str(&stdout).expect("JSON");
    let reported = receipt["reported"].as_array().expect("list");
    assert_eq!(reported.len(), 1, "{receipt}");
    assert_eq!(reported[0]["thread_id"], "bob-paused");
    assert!(reported[0]["reason"]
        .as_str()
        .unwrap_or_default()
        .contains("interrupt()"));
    // The paused thread is as it was, and the verification says the text is still there.
    assert_eq!(rows(&db, "bob-paused"), rows(&original, "bob-paused"));
    assert_eq!(receipt["verification"]["clean"], false);
    assert!(!stdout.contains("Alice Example"));
}

#[test]
fn dry_run_writes_nothing_and_lists_what_would_go() {
    let (_dir, db) = temp_copy(&fixture("forget.sqlite"));
    let before = std::fs::read(&db).expect("read");
    let (code, stdout) = forget(&db, &[&REQUEST[..], &["--dry-run"]].concat());
    // #46: the paused thread keeps its match, so the real run ends NOT CLEAN (exit 3): the
    // dry run says so and exits as the real run will (it exited 0 before).
    assert_eq!(code, 3, "{stdout}");
    assert!(
        stdout.contains("the real run would not be clean"),
        "{stdout}"
    );
    let (_real_dir, real_db) = temp_copy(&fixture("forget.sqlite"));
    let (real_code, real) = forget(&real_db, &REQUEST);
    assert_eq!(real_code, code, "the dry run predicts the real run: {real}");
    assert_eq!(
        std::fs::read(&db).expect("read"),
        before,
        "the file changed"
    );
    assert!(!Path::new(&format!("{}-wal", db.display())).exists());
    for thread in ALICE {
        assert!(
            stdout.contains(thread) && stdout.contains("would delete"),
            "{stdout}"
        );
    }
    assert!(
        stdout.contains("bob-chat") && stdout.contains("would scrub"),
        "{stdout}"
    );
    assert!(
        stdout.contains("bob-paused") && stdout.contains("interrupt()"),
        "{stdout}"
    );
    assert!(stdout.contains("dry run: nothing was written"), "{stdout}");
    // In JSON, the list and its totals: threads per action.
    let out = memctl()
        .args(["forget", "--db", s(&db), "--dry-run", "--format", "json"])
        .args(REQUEST)
        .output()
        .expect("runs");
    let plan: Json = serde_json::from_slice(&out.stdout).expect("JSON");
    let lines = plan["threads"].as_array().expect("threads");
    for action in ["would delete", "would scrub"] {
        let listed = lines.iter().filter(|l| l["action"] == action).count();
        assert!(listed > 0, "{action}: {plan}");
        assert_eq!(
            plan["totals"]["threads"][action], listed,
            "{action}: {plan}"
        );
    }
    assert_eq!(
        plan["totals"]["threads"]["would delete"],
        ALICE.len(),
        "{plan}"
    );
}

#[test]
fn a_second_run_finishes_the_job_and_finds_nothing_left() {
    let (_dir, db) = temp_copy(&fixture("forget.sqlite"));
    // A first run that stopped after one thread: only alice-chat is gone.
    let (code, _) = forget(&db, &["--thread", "alice-chat"]);
    assert_eq!(code, 0);
    let args = [
        &["--thread", "alice-chat"][..],
        &REQUEST,
        &["--force", "--format", "json"],
    ]
    .concat();
    // alice-chat is gone already: the rest is done, the absent id named, exit 3 (partial).
    let (code, stdout) = forget(&db, &args);
    assert_eq!(code, 3, "{stdout}");
    let receipt: Json = serde_json::from_str(&stdout).expect("JSON");
    assert_eq!(receipt["deleted"]["threads"], 3);
    assert_eq!(receipt["verification"]["clean"], true);
    assert_eq!(
        receipt["unmatched"]["absent_threads_sha256"],
        serde_json::json!([sha256("alice-chat")])
    );
    assert_eq!(receipt["unmatched"]["meta_selected_nothing"], false);
    // Once more: nothing left to do, still clean, and the request matched nothing: exit 1.
    let (code, stdout) = forget(&db, &args);
    assert_eq!(code, 1, "{stdout}");
    let receipt: Json = serde_json::from_str(&stdout).expect("JSON");
    assert_eq!(receipt["deleted"]["threads"], 0);
    assert_eq!(receipt["scrubbed"]["threads"], 0);
    assert_eq!(receipt["verification"]["clean"], true);
    assert_eq!(receipt["unmatched"]["meta_selected_nothing"], true);
    assert_eq!(receipt["unmatched"]["pattern_matched_nothing"], true);
}

/// A matched text with a quote that stands in a thread's metadata (an app's `configurable`
/// key, which LangGraph copies there): metadata is reported and never rewritten, and the
/// verification searches it as JSON writes it (`\"`), so it does not call the file clean.
#[test]
fn a_match_left_in_metadata_is_found_as_json_escapes_it() {
    let (_dir, db) = temp_copy(&fixture("forget.sqlite"));
    let nickname = "call me \"Ally\" please";
    {
        let conn = rusqlite::Connection::open(&db).expect("open");
        let n = conn
            .execute(
                "UPDATE checkpoints SET metadata = CAST(json_set(CAST(metadata AS TEXT), '$.nickname', ?1) AS BLOB) \
                 WHERE thread_id = 'carol-chat'",
                [nickname],
            )
            .expect("update");
        assert!(n > 0);
    }
    let bytes = file_bytes(&db);
    assert!(!holds(&bytes, nickname) && holds(&bytes, r#"call me \"Ally\" please"#));
    let (code, stdout) = forget(&db, &["--match", nickname, "--force", "--format", "json"]);
    let receipt: Json = serde_json::from_str(&stdout).expect("JSON");
    assert_eq!(receipt["verification"]["clean"], false, "{receipt}");
    assert_ne!(code, 0, "{stdout}");
    // Named as a place memctl left, and found there by the verification's search.
    let untouched = receipt["untouched"].to_string();
    assert!(untouched.contains("metadata"), "{receipt}");
    let remaining = receipt["verification"]["remaining"].to_string();
    assert!(remaining.contains("carol-chat"), "{receipt}");
    assert!(
        !stdout.contains("Ally"),
        "the receipt holds the text: {stdout}"
    );
}

/// A row the app deleted long ago (no `secure_delete`: SQLite's default) left its text in
/// the file. Put on a copy of the fixture: three writes of another thread, the middle one
/// holding `text` after `filler` bytes of padding and `size` bytes long, which is deleted
/// again. Returns the file's page count afterwards.
fn leave_freed_text(db: &Path, text: &str, filler: usize, size: usize) -> i64 {
    let conn = rusqlite::Connection::open(db).expect("open");
    conn.execute_batch("PRAGMA secure_delete = OFF")
        .expect("pragma");
    let mut value = vec![b'.'; filler];
    value.extend(text.repeat(size / text.len() + 1).into_bytes());
    for (idx, v) in [b"before".to_vec(), value, b"after".to_vec()]
        .into_iter()
        .enumerate()
    {
        conn.execute(
            "INSERT INTO writes (thread_id, checkpoint_ns, checkpoint_id, task_id, idx, channel, type, value) \
             VALUES ('kept', '', 'x', 't', ?, 'messages', 'msgpack', ?)",
            rusqlite::params![idx as i64, v],
        )
        .expect("insert");
    }
    conn.execute(
        "DELETE FROM writes WHERE thread_id = 'kept' AND idx = 1",
        [],
    )
    .expect("delete");
    assert!(
        holds(&file_bytes(db), text),
        "the freed text is in the file"
    );
    count(db, "PRAGMA page_count")
}

/// Alice's erasure request, forced, as JSON: asserts exit code 0 and returns the receipt.
fn forget_alice(db: &Path) -> Json {
    let (code, stdout) = forget(
        db,
        &[&REQUEST[..], &["--force", "--format", "json"]].concat(),
    );
    assert_eq!(code, 0, "{stdout}");
    serde_json::from_str(&stdout).expect("JSON")
}

/// No byte of the file or its -wal holds what Alice asked to erase.
fn assert_erased(db: &Path) {
    let bytes = file_bytes(db);
    for text in ERASED {
        assert!(!holds(&bytes, text), "{text} is still in the file");
    }
}

/// Free pages holding erased text (an app's old deleted row spilling over many pages) are
/// overwritten with zeros in short transactions: the result is clean without a VACUUM, the
/// file keeps its size, and memctl's scratch table is gone.
#[test]
#[cfg_attr(
    not(feature = "env-tests"),
    ignore = "needs scripts/test.sh's environment (--features env-tests)"
)]
fn free_pages_are_zeroed_without_a_vacuum() {
    let (_dir, db) = temp_copy(&fixture("forget.sqlite"));
    let pages = leave_freed_text(&db, "Alice Example lived at 12 Elm Street. ", 8192, 200_000);
    let receipt = forget_alice(&db);
    assert_eq!(receipt["verification"]["clean"], true, "{receipt}");
    assert_eq!(receipt["reclaim"]["vacuumed"], false, "{receipt}");
    assert!(
        receipt["reclaim"]["free_pages_zeroed"].as_u64() > Some(40),
        "{receipt}"
    );
    assert_erased(&db);
    assert!(count(&db, "PRAGMA page_count") >= pages, "not rebuilt");
    let scratch = "SELECT COUNT(*) FROM sqlite_master WHERE name LIKE 'memctl%'";
    assert_eq!(count(&db, scratch), 0);
    let r = continues(&db, "carol-chat");
    assert!(r["messages_after"].as_u64() > r["messages_before"].as_u64());
}

/// A small row the app deleted long ago left its text in a freed part of a page still in
/// use, which zeroing free pages does not reach: the search finds it, memctl falls back to
/// VACUUM (no app has the file open), and the result is clean.
#[test]
fn text_left_in_a_freed_cell_falls_back_to_vacuum() {
    let (_dir, db) = temp_copy(&fixture("forget.sqlite"));
    leave_freed_text(&db, "Alice Example, 12 Elm Street", 0, 30);
    let receipt = forget_alice(&db);
    assert_eq!(receipt["verification"]["clean"], true, "{receipt}");
    assert_eq!(receipt["reclaim"]["vacuumed"], true, "{receipt}");
    assert_erased(&db);
}

/// The same freed cell, but the file is large and another process (an app) has it open: a
/// VACUUM would lock the app out for seconds, so memctl does not run it. The receipt says
/// NOT CLEAN, the exit code is 3 with a line saying why, and the run once the app is gone
/// finishes the job.
#[test]
fn no_long_vacuum_while_an_app_has_the_file_open() {
    let (_dir, db) = temp_copy(&fixture("forget.sqlite"));
    leave_freed_text(&db, "Alice Example, 12 Elm Street", 0, 30);
    let app = common::app_with_a_large_file(&db);
    let out = memctl()
        .args(["forget", "--db", s(&db), "--settle", "0s"])
        .args([&REQUEST[..], &["--force", "--format", "json"]].concat())
        .output()
        .expect("memctl runs");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "{stderr}");
    assert!(stderr.contains("another process"), "{stderr}");
    let receipt: Json = serde_json::from_slice(&out.stdout).expect("JSON");
    assert_eq!(receipt["verification"]["clean"], false, "{receipt}");
    assert_eq!(receipt["reclaim"]["vacuumed"], false, "{receipt}");
    drop(app);
    // Alice's threads and text went in the first run: this one finds nothing to delete or
    // scrub (exit 1, said in the receipt), and its reclaim and verification finish the job.
    let (code, stdout) = forget(
        &db,
        &[&REQUEST[..], &["--force", "--format", "json"]].concat(),
    );
    assert_eq!(code, 1, "{stdout}");
    let receipt: Json = serde_json::from_str(&stdout).expect("JSON");
    assert_eq!(
        receipt["unmatched"]["meta_selected_nothing"], true,
        "{receipt}"
    );
    assert_eq!(receipt["verification"]["clean"], true, "{receipt}");
    assert_eq!(receipt["reclaim"]["vacuumed"], true, "{receipt}");
    assert_erased(&db);
}

/// Runs forget; returns (exit code, stdout, stderr).
fn forget_err(db: &Path, args: &[&str]) -> (i32, String, String) {
    let out = memctl()
        .args(["forget", "--db", s(db), "--settle", "0s"])
        .args(args)
        .output()
        .expect("memctl runs");
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(!stderr.contains("panicked"), "{stderr}");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8(out.stdout).expect("UTF-8"),
        stderr,
    )
}

/// A typo in an erasure request is noticed (#26): a thread id that is not there, a `--meta`
/// that selects nothing, a pattern that matches nothing: the receipt says so and the exit code
/// is 1 (nothing done); the file is not changed.
#[test]
fn a_request_that_matches_nothing_says_so_and_exits_1() {
    let (_dir, db) = temp_copy(&fixture("forget.sqlite"));
    let cases: [(&[&str], &str, &str); 3] = [
        (
            &["--thread", "alise-chat"],
            "absent_threads_sha256",
            "thread not in the database: 'alise-chat'",
        ),
        (
            &["--meta", "user_id=4242"],
            "meta_selected_nothing",
            "--meta selected no thread",
        ),
        (
            &["--match", "Alice Exampel"],
            "pattern_matched_nothing",
            "--match matched no text",
        ),
    ];
    for (args, field, said) in cases {
        let before = rows(&db, "alice-chat");
        let (code, stdout, stderr) = forget_err(&db, &[args, &["--format", "json"][..]].concat());
        assert_eq!(code, 1, "{args:?}: {stdout}{stderr}");
        assert!(
            stderr.contains("the request matched nothing") && stderr.contains(said),
            "{stderr}"
        );
        assert_eq!(stderr.trim_end().lines().count(), 1, "{stderr}");
        let receipt: Json = serde_json::from_str(&stdout).expect("JSON");
        let value = &receipt["unmatched"][field];
        assert!(
            value == &Json::Bool(true) || value.as_array().is_some_and(|a| a.len() == 1),
            "{receipt}"
        );
        assert_eq!(receipt["verification"]["clean"], true, "{receipt}");
        assert_eq!(rows(&db, "alice-chat"), before);
        // The text receipt says it too, and a dry run exits 1 as well.
        let (code, text, _) = forget_err(&db, args);
        assert_eq!(code, 1);
        assert!(
            text.contains("unmatched: the request matched nothing"),
            "{text}"
        );
        let (code, _, _) = forget_err(&db, &[args, &["--dry-run"][..]].concat());
        assert_eq!(code, 1);
    }
    // The receipt names an absent id by digest only.
    let (_, stdout, _) = forget_err(&db, &["--thread", "alise-chat"]);
    assert!(
        !stdout.contains("alise-chat") && stdout.contains(&sha256("alise-chat")),
        "{stdout}"
    );
}

/// Partly matched: what matched is done, the part that did not is named, exit 3.
#[test]
fn a_request_that_partly_matches_does_the_rest_and_exits_3() {
    let (_dir, db) = temp_copy(&fixture("forget.sqlite"));
    let (code, stdout, stderr) = forget_err(
        &db,
        &[
            "--thread",
            "alice-chat",
            "--thread",
            "alise-chat",
            "--format",
            "json",
        ],
    );
    assert_eq!(code, 3, "{stdout}{stderr}");
    assert!(
        stderr.contains("part of the request matched nothing") && stderr.contains("'alise-chat'"),
        "{stderr}"
    );
    let receipt: Json = serde_json::from_str(&stdout).expect("JSON");
    assert_eq!(receipt["deleted"]["threads"], 1, "{receipt}");
    assert_eq!(
        receipt["unmatched"]["absent_threads_sha256"],
        serde_json::json!([sha256("alise-chat")])
    );
    assert_eq!(receipt["verification"]["clean"], true, "{receipt}");
    assert!(rows(&db, "alice-chat").is_empty());
}

/// Copies thread `from` (every checkpoint and write) as thread `to`, in a fixture copy.
fn copy_thread(db: &Path, from: &str, to: &str) {
    let conn = rusqlite::Connection::open(db).expect("open");
    for table in ["checkpoints", "writes"] {
        let cols: Vec<String> = conn
            .prepare(&format!("SELECT name FROM pragma_table_info('{table}')"))
            .expect("prepare")
            .query_map([], |r| r.get(0))
            .expect("query")
            .collect::<rusqlite::Result<_>>()
            .expect("columns");
        let select: Vec<String> = cols
            .iter()
            .map(|c| {
                if c == "thread_id" {
                    "?1".to_owned()
                } else {
                    c.clone()
                }
            })
            .collect();
        let n = conn
            .execute(
                &format!(
                    "INSERT INTO {table} ({}) SELECT {} FROM {table} WHERE thread_id = ?2",
                    cols.join(", "),
                    select.join(", ")
                ),
                [to, from],
            )
            .expect("copy");
        assert!(table == "writes" || n > 0);
    }
}

/// A deleted thread named by a word of LangGraph's own structure (`human`, every human
/// message's type tag; `meta`, inside `response_metadata`) is not "found" in the rows that
/// remain (#26): the result is clean, exit 0, and real LangGraph continues the others.
#[test]
#[cfg_attr(
    not(feature = "env-tests"),
    ignore = "needs scripts/test.sh's environment (--features env-tests)"
)]
fn a_thread_named_like_langgraphs_structure_is_forgotten_clean() {
    let (_dir, db) = temp_copy(&fixture("forget.sqlite"));
    copy_thread(&db, "carol-chat", "human");
    copy_thread(&db, "carol-chat", "meta");
    let bytes = file_bytes(&db);
    assert!(holds(&bytes, "response_metadata"));
    let (code, stdout) = forget(
        &db,
        &["--thread", "human", "--thread", "meta", "--format", "json"],
    );
    assert_eq!(code, 0, "{stdout}");
    let receipt: Json = serde_json::from_str(&stdout).expect("JSON");
    assert_eq!(receipt["deleted"]["threads"], 2, "{receipt}");
    assert_eq!(receipt["verification"]["clean"], true, "{receipt}");
    assert_eq!(receipt["verification"]["remaining"], serde_json::json!([]));
    for thread in ["carol-chat", "bob-chat"] {
        let r = continues(&db, thread);
        assert!(
            r["messages_after"].as_u64() > r["messages_before"].as_u64(),
            "{thread}: {r}"
        );
    }
    // A pattern that no text holds but every human message's type tag does: no "pattern
    // matches its bytes but no text" place, a clean result, and the request matched nothing
    // (exit 1); the file is as it was.
    let (_dir2, db2) = temp_copy(&fixture("forget.sqlite"));
    let before = rows(&db2, "carol-chat");
    let (code, stdout) = forget(&db2, &["--match", "human", "--force", "--format", "json"]);
    let receipt: Json = serde_json::from_str(&stdout).expect("JSON");
    assert_eq!(receipt["untouched"], serde_json::json!([]), "{receipt}");
    assert_eq!(receipt["verification"]["clean"], true, "{receipt}");
    assert_eq!(receipt["unmatched"]["pattern_matched_nothing"], true);
    assert_eq!(code, 1, "{stdout}");
    assert_eq!(rows(&db2, "carol-chat"), before);
}

/// The same deleted thread `human`, with its id left in a freed part of a page (a row the app
/// deleted without `secure_delete`): live rows holding the word do not hide it. memctl sees
/// it outside every row and rebuilds the file (then clean); with an app holding the large
/// file open it cannot, and says NOT CLEAN (exit 3).
#[test]
fn a_deleted_ids_bytes_left_in_free_space_are_still_found() {
    let (_dir, db) = temp_copy(&fixture("forget.sqlite"));
    copy_thread(&db, "carol-chat", "human");
    leave_freed_text(&db, "<human>", 0, 30);
    let (code, stdout) = forget(&db, &["--thread", "human", "--format", "json"]);
    assert_eq!(code, 0, "{stdout}");
    let receipt: Json = serde_json::from_str(&stdout).expect("JSON");
    assert_eq!(receipt["verification"]["clean"], true, "{receipt}");
    assert_eq!(receipt["reclaim"]["vacuumed"], true, "{receipt}");
    assert!(!holds(&file_bytes(&db), "<human>"));

    let (_dir, db) = temp_copy(&fixture("forget.sqlite"));
    copy_thread(&db, "carol-chat", "human");
    leave_freed_text(&db, "<human>", 0, 30);
    let app = common::app_with_a_large_file(&db);
    let (code, stdout) = forget(&db, &["--thread", "human", "--format", "json"]);
    drop(app);
    assert_eq!(code, 3, "{stdout}");
    let receipt: Json = serde_json::from_str(&stdout).expect("JSON");
    assert_eq!(receipt["verification"]["clean"], false, "{receipt}");
    let remaining = receipt["verification"]["remaining"]
        .as_array()
        .expect("a list");
    assert!(
        remaining.iter().any(|h| h["sha256"] == sha256("human")
            && h["raw"].as_array().is_some_and(|r| !r.is_empty())),
        "{receipt}"
    );
}

/// A matched text left in a row memctl cannot decode (a kept thread's write stored in
/// another format) is still found after the scrub: NOT CLEAN.
#[test]
fn a_match_left_in_a_row_memctl_cannot_decode_is_not_clean() {
    let (_dir, db) = temp_copy(&fixture("forget.sqlite"));
    {
        let conn = rusqlite::Connection::open(&db).expect("open");
        conn.execute(
            "INSERT INTO writes (thread_id, checkpoint_ns, checkpoint_id, task_id, idx, channel, type, value) \
             VALUES ('kept', '', 'x', 't', 0, 'messages', 'pickle', CAST('..12 Elm Street..' AS BLOB))",
            [],
        )
        .expect("insert");
    }
    let (code, stdout) = forget(
        &db,
        &["--match", "12 Elm Street", "--force", "--format", "json"],
    );
    assert_eq!(code, 3, "{stdout}");
    let receipt: Json = serde_json::from_str(&stdout).expect("JSON");
    assert_eq!(receipt["verification"]["clean"], false, "{receipt}");
}

#[test]
fn nothing_to_forget_is_a_usage_error() {
    let db = fixture("forget.sqlite");
    let out = memctl()
        .args(["forget", "--db", s(&db)])
        .output()
        .expect("runs");
    assert_eq!(out.status.code(), Some(2));
    let bad = memctl()
        .args(["forget", "--db", s(&db), "--match", "(", "--regex"])
        .output()
        .expect("runs");
    assert_eq!(bad.status.code(), Some(1));
}

#[test]
#[cfg_attr(
    not(feature = "env-tests"),
    ignore = "needs scripts/test.sh's environment (--features env-tests)"
)]
fn encrypted_databases_are_scrubbed_with_the_key_and_refused_in_one_line_without() {
    const KEY: &str = "memctl-test-key-aes256-fixtures!";
    let (_dir, db) = temp_copy(&fixture("encrypted-new.sqlite"));
    let before = std::fs::read(&db).expect("read");
    let out = memctl()
        .args([
            "forget",
            "--db",
            s(&db),
            "--match",
            "Paris",
            "--settle",
            "0s",
        ])
        .output()
        .expect("runs");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert_eq!(stderr.trim_end().lines().count(), 1, "{stderr}");
    assert!(stderr.contains("LANGGRAPH_AES_KEY") && stderr.contains("nothing was written"));
    assert_eq!(std::fs::read(&db).expect("read"), before);

    let out = memctl()
        .env("LANGGRAPH_AES_KEY", KEY)
        .args([
            "forget",
            "--db",
            s(&db),
            "--match",
            "Paris",
            "--force",
            "--settle",
            "0s",
        ])
        .args(["--format", "json"])
        .output()
        .expect("runs");
    let receipt: Json = serde_json::from_slice(&out.stdout).expect("JSON");
    assert_eq!(out.status.code(), Some(0), "{receipt}");
    assert_eq!(receipt["verification"]["clean"], true, "{receipt}");
    assert!(
        receipt["scrubbed"]["threads"].as_u64() >= Some(2),
        "{receipt}"
    );
    // LangGraph with the app's key finds the text in no decrypted row and no byte.
    let found = harness(&["find-text", "--db", s(&db), "--text", "Paris"], Some(KEY));
    assert_eq!(found["rows"], serde_json::json!([]), "{found}");
    assert_eq!(found["raw_files"], serde_json::json!([]), "{found}");
    harness(
        &["continue", "--db", s(&db), "--thread", "tools", "--copy"],
        Some(KEY),
    );
}

#[test]
#[cfg_attr(
    not(feature = "env-tests"),
    ignore = "needs scripts/test.sh's environment (--features env-tests)"
)]
fn delta_threads_keep_loading_with_a_fresh_snapshot_and_no_erased_byte() {
    let (_dir, db) = temp_copy(&fixture("delta.sqlite"));
    let state = |thread: &str| {
        harness(
            &[
                "state",
                "--db",
                s(&db),
                "--thread",
                thread,
                "--graph",
                &format!("delta:{thread}"),
            ],
            None,
        )
    };
    let ids = |state: &Json| -> Vec<String> {
        state["messages"]
            .as_array()
            .expect("messages")
            .iter()
            .map(|m| m["id"].as_str().unwrap_or_default().to_owned())
            .collect()
    };
    let one = ids(&state("1"));
    let edits = state("edits");
    // "Delta question 2" is in thread 1's latest state; "Edits answer 2" only in older
    // checkpoints of 'edits' (its latest state keeps every message).
    let (code, stdout) = forget(
        &db,
        &[
            "--match",
            "Delta question 2|Edits answer 2",
            "--regex",
            "--format",
            "json",
        ],
    );
    assert_eq!(code, 0, "{stdout}");
    let receipt: Json = serde_json::from_str(&stdout).expect("JSON");
    assert_eq!(receipt["verification"]["clean"], true, "{receipt}");
    assert_eq!(receipt["scrubbed"]["threads"], 2, "{receipt}");
    let bytes = file_bytes(&db);
    for text in ["Delta question 2", "Edits answer 2"] {
        assert!(!holds(&bytes, text), "'{text}' is still in the file");
    }
    let want: Vec<String> = one.into_iter().filter(|i| i != "human-delta-2").collect();
    assert_eq!(ids(&state("1")), want);
    assert_eq!(state("edits")["messages"], edits["messages"]);
    for thread in ["1", "edits"] {
        let graph = format!("delta:{thread}");
        let r = harness(
            &[
                "continue",
                "--db",
                s(&db),
                "--thread",
                thread,
                "--graph",
                &graph,
                "--copy",
            ],
            None,
        );
        assert!(
            r["messages_after"].as_u64() > r["messages_before"].as_u64(),
            "{r}"
        );
    }
}

/// Runs `memctl forget` under a pseudo-terminal (`script` from util-linux): what a person at
/// a terminal sees, stdout and stderr together.
fn forget_on_a_terminal(db: &Path, args: &[&str]) -> String {
    let bin = env!("CARGO_BIN_EXE_memctl");
    // --yes: on a terminal forget asks first (tests/confirm.rs tests the question).
    let mut line = format!("'{bin}' forget --db '{}' --settle 0s --yes", db.display());
    for a in args {
        line.push_str(&format!(" '{a}'"));
    }
    let out = std::process::Command::new("script")
        .args(["-qec", &line, "/dev/null"])
        .env_remove("LANGGRAPH_AES_KEY")
        .stdin(std::process::Stdio::null())
        .output()
        .expect("script (util-linux) runs");
    assert!(
        out.status.success(),
        "{line}: {:?} {}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// forget shows its phases on stderr at a terminal (#26: silent for a minute on 1 GB), and
/// nothing with --quiet or when stderr is not a terminal.
#[test]
fn forget_shows_its_phases_on_a_terminal_only() {
    let (_dir, db) = temp_copy(&fixture("forget.sqlite"));
    let shown = forget_on_a_terminal(
        &db,
        &[
            "--meta",
            "user_id=42",
            "--match",
            "12 Elm Street",
            "--force",
        ],
    );
    assert!(shown.contains("memctl forget receipt"), "{shown}");
    for phase in ["forget: select", "forget: delete"] {
        assert!(shown.contains(phase), "no '{phase}' in: {shown}");
    }
    let (_dir, db) = temp_copy(&fixture("forget.sqlite"));
    let quiet = forget_on_a_terminal(&db, &["--meta", "user_id=42", "--force", "--quiet"]);
    assert!(!quiet.contains("forget:"), "{quiet}");
    assert!(
        rows(&db, "alice-chat").is_empty(),
        "the quiet run did its work"
    );
    let (_dir, db) = temp_copy(&fixture("forget.sqlite"));
    let out = memctl()
        .args([
            "forget",
            "--db",
            s(&db),
            "--settle",
            "0s",
            "--meta",
            "user_id=42",
        ])
        .output()
        .expect("runs");
    assert_eq!(out.status.code(), Some(0));
    assert!(
        out.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// forget streams the threads a batch at a time in each of its passes (selection, search,
/// verification): over more threads than a batch, Alice's request deletes exactly the
/// threads its dry run lists, scrubs exactly the ones it would scrub, leaves every other
/// thread, and verifies the file clean (`--force`: the paused threads are scrubbed too).
#[test]
fn forget_deletes_and_scrubs_across_batches_of_threads() {
    let (_dir, db) = common::jobs::sqlite_with_many_threads("forget.sqlite", 2100);
    let db = s(&db);
    let count = || -> usize {
        common::run_json(&["threads", "list", "--db", db, "--format", "json"])
            .as_array()
            .expect("threads")
            .len()
    };
    let before = count();
    assert!(before > 2048, "{before} threads");
    let run = |extra: &[&str]| -> std::process::Output {
        memctl()
            .args(["forget", "--db", db, "--format", "json", "--yes", "--force"])
            .args(REQUEST)
            .args(extra)
            .output()
            .expect("runs")
    };
    let plan: Json = serde_json::from_slice(&run(&["--dry-run"]).stdout).expect("plan");
    let doomed = common::would_delete(&plan);
    let scrub = common::threads_in_plan(&plan, "would scrub");
    assert!(
        doomed.len() > 1024 && scrub.len() > 100,
        "{} to delete, {} to scrub",
        doomed.len(),
        scrub.len()
    );
    let out = run(&[]);
    assert!(
        out.status.success(),
        "{}\n{}",
        String::from_utf8_lossy(&out.stderr),
        String::from_utf8_lossy(&out.stdout)
    );
    let receipt: Json = serde_json::from_slice(&out.stdout).expect("receipt");
    assert_eq!(
        receipt["verification"]["clean"], true,
        "{}",
        receipt["verification"]
    );
    assert_eq!(
        receipt["deleted_threads_sha256"].as_array().map(Vec::len),
        Some(doomed.len())
    );
    assert_eq!(
        receipt["scrubbed"]["threads"].as_u64(),
        Some(scrub.len() as u64)
    );
    assert_eq!(count(), before - doomed.len());
    let found = memctl()
        .args(["find", "--db", db, "--regex", PATTERN])
        .output()
        .expect("runs");
    assert_eq!(
        found.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&found.stdout)
    );
}
