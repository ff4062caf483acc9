//! trim and rm on copies of the fixtures: what is written, what is refused, what is left alone.
//! (That real LangGraph reads the result is tests/interop.rs.)

mod common;

use std::path::Path;

use common::{fixture, run_err, run_json, run_ok, s, temp_copy};
use rusqlite::Connection;

/// Every row of the file, per table, for before/after comparisons.
fn rows(db: &Path, sql: &str) -> Vec<(String, Vec<u8>)> {
    let conn = Connection::open(db).expect("open");
    let mut stmt = conn.prepare(sql).expect("query");
    let out = stmt
        .query_map([], |r| {
            let mut bytes: Vec<u8> = r.get(1)?;
            if let Ok(more) = r.get::<_, Vec<u8>>(2) {
                bytes.extend(more);
            }
            Ok((r.get::<_, String>(0)?, bytes))
        })
        .expect("rows")
        .map(|r| r.expect("row"))
        .collect();
    out
}

fn checkpoints(db: &Path) -> Vec<(String, Vec<u8>)> {
    rows(db, "SELECT thread_id || '/' || checkpoint_ns || '/' || checkpoint_id, checkpoint, metadata FROM checkpoints ORDER BY 1")
}

fn writes(db: &Path) -> Vec<(String, Vec<u8>)> {
    rows(db, "SELECT thread_id || '/' || checkpoint_id || '/' || task_id || '/' || idx, value, value FROM writes ORDER BY 1")
}

#[test]
fn dry_run_writes_nothing() {
    for gen in common::GENERATIONS {
        let (_d, db) = temp_copy(&fixture(&format!("{gen}.sqlite")));
        let before = std::fs::read(&db).expect("read");
        let out = run_json(&[
            "trim",
            "--db",
            s(&db),
            "--thread",
            "tools",
            "--keep",
            "4",
            "--dry-run",
            "--format",
            "json",
        ]);
        assert_eq!(out["threads"][0]["status"], "would rewrite");
        assert_eq!(out["threads"][0]["messages_before"], 9);
        assert_eq!(out["threads"][0]["messages_after"], 4);
        assert_eq!(
            out["threads"][0]["removed"].as_array().map(Vec::len),
            Some(5)
        );
        assert!(
            out["threads"][0]["tokens_after"].as_u64()
                < out["threads"][0]["tokens_before"].as_u64()
        );
        let text = run_ok(&[
            "trim",
            "--db",
            s(&db),
            "--all",
            "--keep",
            "2",
            "--dry-run",
            "--format",
            "table",
        ]);
        assert!(text.contains("dry run: nothing was written"));
        assert_eq!(
            std::fs::read(&db).expect("read"),
            before,
            "{gen}: file unchanged"
        );
    }
}

#[test]
fn trim_appends_one_checkpoint_and_one_write_and_touches_nothing_else() {
    for gen in common::GENERATIONS {
        let (_d, db) = temp_copy(&fixture(&format!("{gen}.sqlite")));
        let (cp_before, wr_before) = (checkpoints(&db), writes(&db));
        let out = run_json(&[
            "trim",
            "--db",
            s(&db),
            "--thread",
            "tools",
            "--keep",
            "4",
            "--format",
            "json",
        ]);
        assert_eq!(out["threads"][0]["status"], "rewritten");
        let new_id = out["threads"][0]["checkpoint_id"]
            .as_str()
            .expect("id")
            .to_owned();
        let (cp_after, wr_after) = (checkpoints(&db), writes(&db));
        assert_eq!(
            cp_after.len(),
            cp_before.len() + 1,
            "{gen}: one checkpoint added"
        );
        assert_eq!(
            wr_after.len(),
            wr_before.len() + 1,
            "{gen}: one write row added"
        );
        for row in &cp_before {
            assert!(
                cp_after.contains(row),
                "{gen}: checkpoint {} unchanged",
                row.0
            );
        }
        for row in &wr_before {
            assert!(wr_after.contains(row), "{gen}: write {} unchanged", row.0);
        }
        // The new checkpoint is the latest and holds the window.
        let hist = run_json(&[
            "history",
            "--db",
            s(&db),
            "--thread",
            "tools",
            "--format",
            "json",
        ]);
        assert_eq!(hist[0]["checkpoint_id"], new_id.as_str());
        assert_eq!(hist[0]["source"], "update");
        assert_eq!(
            hist[0]["step"],
            hist[1]["step"].as_i64().map(|s| s + 1).expect("step")
        );
        assert_eq!(hist[0]["parent_checkpoint_id"], hist[1]["checkpoint_id"]);
        assert_eq!(
            hist[1]["pending_writes"], 1,
            "{gen}: the update is recorded on the parent"
        );
        let dumped = run_json(&["dump", "--db", s(&db), "--thread", "tools"]);
        let original = common::expected(gen)["threads"]["tools"]["state_messages"].clone();
        let original = original.as_array().expect("messages");
        assert_eq!(
            dumped.as_array().expect("messages").as_slice(),
            &original[original.len() - 4..]
        );
        // A second trim with the same limit has nothing to do: no new checkpoint.
        let again = run_json(&[
            "trim",
            "--db",
            s(&db),
            "--thread",
            "tools",
            "--keep",
            "4",
            "--format",
            "json",
        ]);
        assert_eq!(again["threads"][0]["status"], "unchanged");
        assert_eq!(checkpoints(&db).len(), cp_after.len());
    }
}

#[test]
fn paused_threads_are_refused_unless_forced() {
    let (_d, db) = temp_copy(&fixture("new.sqlite"));
    let before = std::fs::read(&db).expect("read");
    let err = run_err(&[
        "trim",
        "--db",
        s(&db),
        "--thread",
        "interrupt",
        "--keep",
        "1",
    ]);
    assert!(
        err.contains("paused on interrupt()") && err.contains("--force"),
        "{err}"
    );
    let err = run_err(&[
        "rm",
        "--db",
        s(&db),
        "--thread",
        "interrupt",
        "--index",
        "0",
    ]);
    assert!(err.contains("paused on interrupt()"), "{err}");
    assert_eq!(std::fs::read(&db).expect("read"), before, "nothing written");
    // In batch mode it is skipped and reported; the others are trimmed.
    let out = run_json(&[
        "trim",
        "--db",
        s(&db),
        "--all",
        "--keep",
        "2",
        "--format",
        "json",
    ]);
    let by_thread = |t: &str| {
        out["threads"]
            .as_array()
            .and_then(|a| a.iter().find(|r| r["thread_id"] == t))
            .cloned()
            .expect("row")
    };
    assert_eq!(by_thread("interrupt")["status"], "skipped");
    assert!(by_thread("interrupt")["notes"][0]
        .as_str()
        .is_some_and(|n| n.contains("interrupt")));
    assert_eq!(by_thread("1")["status"], "rewritten");
    // --force edits it anyway.
    let forced = run_json(&[
        "rm",
        "--db",
        s(&db),
        "--thread",
        "interrupt",
        "--index",
        "-1",
        "--force",
        "--format",
        "json",
    ]);
    assert_eq!(forced["threads"][0]["status"], "rewritten");
}

#[test]
fn batch_filters_idle_and_min_messages() {
    let (_d, db) = temp_copy(&fixture("new.sqlite"));
    // Relative to a "now" right after the fixtures were made, no thread is 30 days idle.
    let newest = run_json(&["threads", "list", "--db", s(&db), "--format", "json"])[0]
        ["updated_at"]
        .as_str()
        .expect("ts")
        .to_owned();
    let out = run_json(&[
        "trim",
        "--db",
        s(&db),
        "--all",
        "--idle",
        "30d",
        "--keep",
        "2",
        "--now",
        &newest,
        "--format",
        "json",
    ]);
    assert_eq!(
        out["threads"].as_array().map(Vec::len),
        Some(0),
        "nothing idle for 30 days: {out}"
    );
    let out = run_json(&[
        "trim",
        "--db",
        s(&db),
        "--all",
        "--min-messages",
        "7",
        "--keep",
        "2",
        "--dry-run",
        "--format",
        "json",
    ]);
    let names: Vec<&str> = out["threads"]
        .as_array()
        .expect("rows")
        .iter()
        .filter_map(|r| r["thread_id"].as_str())
        .collect();
    assert_eq!(names, ["system", "tools"], "only threads with 7+ messages");
    // A bad flag value is a usage error (exit code 2).
    let out = common::memctl()
        .args([
            "trim",
            "--db",
            s(&db),
            "--all",
            "--idle",
            "3 days",
            "--keep",
            "2",
        ])
        .output()
        .expect("runs");
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("not a duration"), "{err}");
}

#[test]
fn max_tokens_and_keep_first() {
    let (_d, db) = temp_copy(&fixture("new.sqlite"));
    let out = run_json(&[
        "trim",
        "--db",
        s(&db),
        "--thread",
        "system",
        "--keep",
        "3",
        "--keep-first",
        "--format",
        "json",
    ]);
    let dumped = run_json(&["dump", "--db", s(&db), "--thread", "system"]);
    let types: Vec<&str> = dumped
        .as_array()
        .expect("msgs")
        .iter()
        .filter_map(|m| m["type"].as_str())
        .collect();
    assert_eq!(
        types.first(),
        Some(&"system"),
        "the system message stays: {out}"
    );
    let original = common::expected("new")["threads"]["system"]["state_messages"].clone();
    assert_eq!(
        dumped[1]["id"], original[1]["id"],
        "the first non-system message is kept"
    );
    let (_d2, db2) = temp_copy(&fixture("new.sqlite"));
    let out = run_json(&[
        "trim",
        "--db",
        s(&db2),
        "--thread",
        "tools",
        "--max-tokens",
        "70",
        "--format",
        "json",
    ]);
    assert!(
        out["threads"][0]["tokens_after"]
            .as_u64()
            .is_some_and(|t| t <= 70),
        "{out}"
    );
}

#[test]
fn rm_keeps_tool_pairs_whole_and_says_so() {
    let (_d, db) = temp_copy(&fixture("new.sqlite"));
    let exp = common::expected("new");
    let msgs = exp["threads"]["tools"]["state_messages"]
        .as_array()
        .expect("msgs")
        .clone();
    let tool = msgs
        .iter()
        .find(|m| m["type"] == "tool")
        .expect("a tool message");
    let out = run_json(&[
        "rm",
        "--db",
        s(&db),
        "--thread",
        "tools",
        "--id",
        tool["id"].as_str().expect("id"),
        "--format",
        "json",
    ]);
    let notes = out["threads"][0]["notes"].as_array().expect("notes");
    assert!(
        notes
            .iter()
            .any(|n| n.as_str().is_some_and(|n| n.contains("made the tool call"))),
        "{out}"
    );
    let after = run_json(&["dump", "--db", s(&db), "--thread", "tools"]);
    let after = after.as_array().expect("msgs");
    assert_eq!(
        after.len(),
        msgs.len() - 3,
        "the AI call and both parallel answers went with it"
    );
    let errs = run_err(&[
        "rm",
        "--db",
        s(&db),
        "--thread",
        "tools",
        "--id",
        "no-such-id",
    ]);
    assert!(errs.contains("no message with id 'no-such-id'"), "{errs}");
    let out = common::memctl()
        .args(["rm", "--db", s(&db), "--thread", "tools", "--match", "("])
        .output()
        .expect("runs");
    let errs = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{errs}");
    assert!(errs.contains("not a valid regular expression"), "{errs}");
    let cleared = run_json(&[
        "rm",
        "--db",
        s(&db),
        "--thread",
        "1",
        "--all-messages",
        "--format",
        "json",
    ]);
    assert_eq!(cleared["threads"][0]["messages_after"], 0);
    assert_eq!(
        run_json(&["dump", "--db", s(&db), "--thread", "1"]),
        serde_json::json!([])
    );
}

#[test]
fn purge_leaves_no_trace_of_the_secret_in_the_file() {
    for gen in common::GENERATIONS {
        let (dir, db) = temp_copy(&fixture(&format!("{gen}.sqlite")));
        let secret = b"hunter2";
        let count = |p: &Path| {
            std::fs::read(p)
                .map(|b| b.windows(secret.len()).filter(|w| w == secret).count())
                .unwrap_or(0)
        };
        assert!(count(&db) > 0, "{gen}: the fixture holds the secret");
        let out = run_json(&[
            "rm",
            "--db",
            s(&db),
            "--thread",
            "dict-input",
            "--match",
            "hunter2",
            "--purge",
            "--format",
            "json",
        ]);
        assert_eq!(out["threads"][0]["status"], "purged", "{gen}: {out}");
        assert_eq!(count(&db), 0, "{gen}: no trace in the database file");
        assert_eq!(
            count(&dir.path().join(format!("{gen}.sqlite-wal"))),
            0,
            "{gen}: none in the WAL"
        );
        // The rest of the thread is still there.
        let left = run_json(&["dump", "--db", s(&db), "--thread", "dict-input"]);
        assert_eq!(left.as_array().map(Vec::len), Some(3));
    }
}

#[test]
fn locked_database_is_not_written() {
    let (_d, db) = temp_copy(&fixture("new.sqlite"));
    let before = checkpoints(&db);
    let conn = Connection::open(&db).expect("open");
    conn.execute_batch("BEGIN EXCLUSIVE;").expect("lock");
    let err = run_err(&[
        "trim",
        "--db",
        s(&db),
        "--thread",
        "1",
        "--keep",
        "2",
        "--busy-timeout",
        "200",
    ]);
    assert!(err.contains("locked"), "{err}");
    conn.execute_batch("COMMIT").expect("unlock");
    assert_eq!(checkpoints(&db), before);
}

#[test]
fn rewrites_refuse_what_they_cannot_write_correctly() {
    // DeltaChannel threads are edited (tests/delta.rs).
    let (_d, db) = temp_copy(&fixture("old.sqlite"));
    let err = run_err(&[
        "trim",
        "--db",
        s(&db),
        "--thread",
        "surrogate",
        "--keep",
        "1",
    ]);
    assert!(err.contains("not msgpack"), "{err}");
    // A flag that cannot apply: a usage error (exit code 2).
    let out = common::memctl()
        .args([
            "trim",
            "--db",
            s(&db),
            "--thread",
            "1",
            "--keep",
            "1",
            "--ns",
            "x",
        ])
        .output()
        .expect("runs");
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("root namespace"), "{err}");
    let dir = tempfile::tempdir().expect("tmp");
    let missing = dir.path().join("missing.sqlite");
    let err = run_err(&["trim", "--db", s(&missing), "--thread", "1", "--keep", "1"]);
    assert!(err.contains("no such file"), "{err}");
    assert!(!missing.exists());
}

/// A kept message that does not decode (a string inside a tool call's arguments that is not
/// UTF-8) is never copied into a new checkpoint: the one thread fails clearly, nothing is
/// written, and a batch reports it and goes on.
#[test]
fn a_corrupt_kept_message_is_not_written_back() {
    let (_d, db) = temp_copy(&fixture("new.sqlite"));
    let conn = Connection::open(&db).expect("open");
    let (id, mut blob): (String, Vec<u8>) = conn
        .query_row(
            "SELECT checkpoint_id, checkpoint FROM checkpoints WHERE thread_id = 'tools' \
             AND checkpoint_ns = '' ORDER BY checkpoint_id DESC LIMIT 1",
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .expect("latest of 'tools'");
    // {"city": "Berlin"}: the arguments of message 6, which trim --keep 4 keeps.
    let needle = b"\xa4city\xa6Berlin";
    let at = blob
        .windows(needle.len())
        .position(|w| w == needle)
        .expect("the tool call's arguments are in the blob");
    blob[at + 6] = 0xff;
    conn.execute(
        "UPDATE checkpoints SET checkpoint = ? WHERE thread_id = 'tools' AND checkpoint_id = ?",
        rusqlite::params![blob, id],
    )
    .expect("corrupt the copy");
    drop(conn);
    let (before_cp, before_w) = (checkpoints(&db), writes(&db));
    let err = run_err(&["trim", "--db", s(&db), "--thread", "tools", "--keep", "4"]);
    assert!(err.contains("UTF-8"), "{err}");
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert_eq!(checkpoints(&db), before_cp, "nothing written");
    assert_eq!(writes(&db), before_w, "nothing written");

    let out = common::memctl()
        .args([
            "trim",
            "--db",
            s(&db),
            "--all",
            "--keep",
            "4",
            "--format",
            "json",
        ])
        .output()
        .expect("runs");
    assert_eq!(out.status.code(), Some(3), "partial success");
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json report");
    let rows = report["threads"].as_array().expect("rows");
    let tools = rows
        .iter()
        .find(|r| r["thread_id"] == "tools")
        .expect("a row for 'tools'");
    assert_eq!(tools["status"], "failed", "{tools}");
    assert!(rows.iter().any(|r| r["status"] == "rewritten"), "{report}");
    let after: Vec<_> = checkpoints(&db)
        .into_iter()
        .filter(|(k, _)| k.starts_with("tools/"))
        .collect();
    let before: Vec<_> = before_cp
        .into_iter()
        .filter(|(k, _)| k.starts_with("tools/"))
        .collect();
    assert_eq!(after, before, "the failed thread got no rows");
}

/// Rows of `thread` whose bytes hold `needle` (checkpoint blobs, metadata, pending writes).
fn rows_holding(db: &Path, thread: &str, needle: &str) -> i64 {
    let conn = Connection::open(db).expect("open");
    conn.query_row(
        "SELECT (SELECT COUNT(*) FROM checkpoints WHERE thread_id = ?1 \
                 AND (instr(checkpoint, ?2) > 0 OR instr(CAST(metadata AS BLOB), ?2) > 0)) \
              + (SELECT COUNT(*) FROM writes WHERE thread_id = ?1 AND instr(value, ?2) > 0)",
        rusqlite::params![thread, needle.as_bytes()],
        |r| r.get(0),
    )
    .expect("query")
}

#[test]
fn purge_scrubs_tool_call_arguments_from_sends_and_history() {
    for gen in common::GENERATIONS {
        // create_agent hands each tool call to the tools node as a Send in __pregel_tasks: the
        // call's arguments sit there, in older checkpoints and in writes.
        let (_dir, db) = temp_copy(&fixture(&format!("{gen}.sqlite")));
        assert!(rows_holding(&db, "tools", "call_w1") > 0);
        assert!(rows_holding(&db, "tools", "__pregel_tasks") > 0 || gen == "old");
        let out = run_json(&[
            "rm",
            "--db",
            s(&db),
            "--thread",
            "tools",
            "--id",
            "ai-tools-1",
            "--purge",
            "--format",
            "json",
        ]);
        assert_eq!(out["threads"][0]["status"], "purged", "{gen}: {out}");
        for gone in ["call_w1", "call_a1", "21°C in Paris"] {
            assert_eq!(
                rows_holding(&db, "tools", gone),
                0,
                "{gen}: {gone} left in the thread"
            );
        }
        // --match looks at tool-call names and arguments, and the purge leaves none of the
        // removed text in the thread (Paris is in other threads' own conversations: named).
        let (_dir, db) = temp_copy(&fixture(&format!("{gen}.sqlite")));
        let dry = run_json(&[
            "rm",
            "--db",
            s(&db),
            "--thread",
            "tools",
            "--match",
            "get_weather",
            "--dry-run",
            "--format",
            "json",
        ]);
        let ids: Vec<&str> = dry["threads"][0]["removed"]
            .as_array()
            .expect("removed")
            .iter()
            .filter_map(|r| r["id"].as_str())
            .collect();
        assert!(ids.contains(&"ai-tools-1"), "{gen}: {dry}");
        let out = run_json(&[
            "rm",
            "--db",
            s(&db),
            "--thread",
            "tools",
            "--match",
            "Paris",
            "--purge",
            "--format",
            "json",
        ]);
        assert_eq!(out["threads"][0]["status"], "purged", "{gen}: {out}");
        assert_eq!(rows_holding(&db, "tools", "Paris"), 0, "{gen}");
        let notes = out["threads"][0]["notes"].to_string();
        assert!(
            notes.contains("other threads") && notes.contains("thread '1'"),
            "{gen}: {notes}"
        );
    }
}

#[test]
fn purge_that_leaves_removed_text_in_the_thread_fails_loudly() {
    // The removed text is also in a channel memctl does not scrub (a custom string channel):
    // the purge must say where and exit non-zero, never report success.
    let (_dir, db) = temp_copy(&fixture("new.sqlite"));
    let conn = Connection::open(&db).expect("open");
    let secret = "It is sunny and 21°C in Paris.";
    let dumped = run_json(&["dump", "--db", s(&db), "--thread", "tools"]);
    assert!(dumped.to_string().contains(secret));
    // Copy the text into the thread's metadata of an old checkpoint (an app's own key).
    let changed = conn
        .execute(
            "UPDATE checkpoints SET metadata = json_set(metadata, '$.note', ?1) \
             WHERE thread_id = 'tools' AND checkpoint_id = (SELECT MIN(checkpoint_id) FROM checkpoints WHERE thread_id = 'tools')",
            [secret],
        )
        .expect("update");
    assert_eq!(changed, 1);
    drop(conn);
    let out = common::memctl()
        .args([
            "rm",
            "--db",
            s(&db),
            "--thread",
            "tools",
            "--id",
            "ai-tools-1",
            "--purge",
            "--format",
            "json",
        ])
        .output()
        .expect("runs");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("still in checkpoint"), "{stderr}");
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    assert_eq!(
        report["threads"][0]["status"], "purge incomplete",
        "{report}"
    );
}

#[test]
fn an_empty_or_all_matching_pattern_never_wipes_a_thread() {
    // `rm --match "$SECRET" --purge` with the variable unset: refused as a usage error, with
    // how to clear a thread on purpose, and nothing written.
    let (dir, db) = temp_copy(&fixture("new.sqlite"));
    let files = || {
        let mut all: Vec<(String, Vec<u8>)> = std::fs::read_dir(dir.path())
            .expect("dir")
            .map(|e| {
                let p = e.expect("entry").path();
                (p.display().to_string(), std::fs::read(&p).expect("read"))
            })
            .collect();
        all.sort();
        all
    };
    let before = files();
    for pattern in ["", ".*", "^", "x*", "a|"] {
        for purge in [true, false] {
            let mut args = vec![
                "rm",
                "--db",
                s(&db),
                "--thread",
                "tools",
                "--match",
                pattern,
            ];
            if purge {
                args.push("--purge");
            }
            let out = common::memctl().args(&args).output().expect("runs");
            let stderr = String::from_utf8_lossy(&out.stderr);
            assert_eq!(out.status.code(), Some(2), "{pattern:?}: {stderr}");
            assert_eq!(stderr.trim_end().lines().count(), 1, "{stderr}");
            assert!(stderr.contains("--all-messages"), "{stderr}");
            assert!(out.stdout.is_empty());
        }
    }
    // forget refuses the same patterns (one check, shared).
    for pattern in [".*", "^"] {
        let out = common::memctl()
            .args(["forget", "--db", s(&db), "--regex", "--match", pattern])
            .output()
            .expect("runs");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_ne!(out.status.code(), Some(0), "{pattern:?}: {stderr}");
        assert!(stderr.contains("matches every text"), "{stderr}");
    }
    assert!(before == files(), "nothing was written");
    // On purpose, it still works.
    let out = run_json(&[
        "rm",
        "--db",
        s(&db),
        "--thread",
        "tools",
        "--all-messages",
        "--format",
        "json",
    ]);
    assert_eq!(out["threads"][0]["status"], "rewritten", "{out}");
}

#[test]
fn a_token_budget_is_reported_in_the_counter_it_was_applied_in() {
    // `trim --max-tokens N --model gpt-4o` keeps a window of N o200k tokens: the report counts
    // in o200k too (what `tokens --model gpt-4o` says before and after), and says so.
    let (_d, db) = temp_copy(&fixture("new.sqlite"));
    let total = |db: &Path| {
        run_json(&[
            "tokens",
            "--db",
            s(db),
            "--thread",
            "tools",
            "--model",
            "gpt-4o",
            "--format",
            "json",
        ])["total"]
            .as_u64()
            .expect("total")
    };
    let before = total(&db);
    let table = run_ok(&[
        "trim",
        "--db",
        s(&db),
        "--thread",
        "tools",
        "--max-tokens",
        "60",
        "--model",
        "gpt-4o",
        "--dry-run",
    ]);
    assert!(
        table.contains("TOKENS (O200K)") && !table.contains("APPROX"),
        "{table}"
    );
    let out = run_json(&[
        "trim",
        "--db",
        s(&db),
        "--thread",
        "tools",
        "--max-tokens",
        "60",
        "--model",
        "gpt-4o",
        "--format",
        "json",
    ]);
    assert_eq!(out["threads"][0]["counter"], "o200k", "{out}");
    assert_eq!(
        out["threads"][0]["tokens_before"].as_u64(),
        Some(before),
        "{out}"
    );
    let after = out["threads"][0]["tokens_after"].as_u64().expect("after");
    assert!(after <= 60, "{out}");
    assert_eq!(
        total(&db),
        after,
        "the thread now counts what the report says"
    );
    // A batch's totals line names the counter too; the approximate count says approx.
    let (_d, db) = temp_copy(&fixture("new.sqlite"));
    let table = run_ok(&[
        "trim",
        "--db",
        s(&db),
        "--all",
        "--max-tokens",
        "60",
        "--counter",
        "cl100k",
        "--dry-run",
    ]);
    assert!(
        table.contains("TOKENS (CL100K)") && table.contains("tokens (cl100k)"),
        "{table}"
    );
    let out = run_json(&[
        "trim",
        "--db",
        s(&db),
        "--thread",
        "tools",
        "--max-tokens",
        "60",
        "--dry-run",
        "--format",
        "json",
    ]);
    assert_eq!(out["threads"][0]["counter"], "approx", "{out}");
}

/// #46: `rm --purge` of a text other threads hold too says so in a short note (the first row
/// the search named, how many more, and that `memctl find` lists every thread), where it was a
/// 1.7 KB cell naming five checkpoints of one thread and silent about the others.
#[test]
fn a_purged_text_other_threads_hold_is_a_short_note() {
    let (_dir, db) = common::temp_copy(&common::fixture("forget.sqlite"));
    let out = common::run_ok(&[
        "rm",
        "--db",
        common::s(&db),
        "--thread",
        "alice-chat",
        "--match",
        "Alice",
        "--purge",
        "--format",
        "json",
    ]);
    let report: serde_json::Value = serde_json::from_str(&out).expect("JSON");
    let notes = report["threads"][0]["notes"].as_array().expect("notes");
    let note = notes
        .iter()
        .filter_map(|n| n.as_str())
        .find(|n| n.contains("other threads"))
        .unwrap_or_else(|| panic!("{report}"));
    assert!(
        note.len() < 300
            && note.contains("of thread 'alice-profile'")
            && note.contains("more")
            && note.contains("`memctl find`"),
        "{note}"
    );
}
