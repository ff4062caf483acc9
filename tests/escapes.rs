//! A database string holding terminal escapes never reaches a terminal raw (issue #12 §4,
//! #14): thread ids, message ids, message text and checkpoint ids with ESC [2J (clear the
//! screen), U+009B (a one-byte CSI), U+202E (right-to-left override) and U+2028 (line
//! separator), written into a copy of `fixtures/new.sqlite`, read back by every command that
//! shows them: in a pipe, on a terminal (a pty made by `script`, as tests/flags.rs does), and
//! in error lines.
//!
//! Each check also requires the escaped form (`\u{1b}[2J…`, or `\u001b[2J…` in JSON) in the
//! output, so a test cannot pass by not showing the string at all.
//!
//! A terminal is a real pty: memctl decides with `IsTerminal` (stdout for JSON escaping,
//! stderr for progress bars), which no flag or variable overrides.

mod common;

use std::path::{Path, PathBuf};

use common::chat_server::{ChatServer, Reply};
use common::{fixture, memctl, s};
use serde_json::Value as Json;

/// Ages are measured against this (a pipe and a terminal run compare equal).
const NOW: &str = "2026-12-08T12:00:00Z";

/// The attack, as `sanitize::is_dangerous` names it: ESC [2J, CSI, RLO, LINE SEPARATOR.
const ATTACK: [&str; 4] = ["\u{1b}[2J", "\u{9b}", "\u{202e}", "\u{2028}"];

/// The thread `tools`, renamed. It starts with ESC so that it sorts first: batch commands
/// take threads in id order, and a progress bar draws its first thread at once.
const THREAD: &str = "\u{1b}[2J\u{9b}31m\u{202e}x\u{2028}tools";
const THREAD_SHOWN: &str = r"\u{1b}[2J\u{9b}31m\u{202e}x\u{2028}tools";
const THREAD_JSON: &str = r"\u001b[2J\u009b31m\u202ex\u2028tools";

/// Message ids and text are rewritten in place in the msgpack blobs, so each replacement has
/// the byte length of the original (the string's header and the enclosing ext payload stay
/// valid). (original, replacement, as the human output escapes it)
const HUMAN_ID: (&str, &str, &str) = (
    "human-tools-1",
    "h\u{1b}[2J\u{9b}\u{202e}\u{2028}",
    r"h\u{1b}[2J\u{9b}\u{202e}\u{2028}",
);
const LAST_TEXT: (&str, &str, &str) = (
    "Berlin is sunny too.",
    "Berlin \u{1b}[2J\u{9b}\u{202e}\u{2028}!",
    r"Berlin \u{1b}[2J\u{9b}\u{202e}\u{2028}!",
);
const USAGE_ID_1: (&str, &str, &str) = (
    "ai-usage-1",
    "\u{1b}[2J\u{9b}\u{202e}x",
    r"\u{1b}[2J\u{9b}\u{202e}x",
);
const USAGE_ID_2: (&str, &str, &str) = (
    "ai-usage-2",
    "\u{2028}\u{1b}[2Jai-",
    r"\u{2028}\u{1b}[2Jai-",
);

/// An older checkpoint of the renamed thread gets an id with the attack in it (the column
/// only: the ambiguous-prefix error and `history` list column ids).
const OLD_CHECKPOINT: &str = "1f1ed47f-8336-683b-8002-dc9fda52adec";
const EVIL_CHECKPOINT: &str = "1f1ed47f-8336\u{1b}[2J\u{9b}\u{202e}\u{2028}";
const EVIL_CHECKPOINT_SHOWN: &str = r"1f1ed47f-8336\u{1b}[2J\u{9b}\u{202e}\u{2028}";

/// A copy of new.sqlite with the attack in ids and text, and the temp dir holding it.
fn evil_db() -> (tempfile::TempDir, PathBuf) {
    let (dir, db) = common::temp_copy(&fixture("new.sqlite"));
    let conn = rusqlite::Connection::open(&db).expect("open");
    for (from, to, _) in [HUMAN_ID, LAST_TEXT, USAGE_ID_1, USAGE_ID_2] {
        assert_eq!(from.len(), to.len(), "{to:?} must keep the length");
        let n = replace_in_blobs(&conn, from.as_bytes(), to.as_bytes());
        assert!(n > 0, "{from} found in no blob");
    }
    let n = conn
        .execute(
            "UPDATE checkpoints SET checkpoint_id = ?2 WHERE checkpoint_id = ?1",
            [OLD_CHECKPOINT, EVIL_CHECKPOINT],
        )
        .expect("rename checkpoint");
    assert_eq!(n, 1);
    conn.execute(
        "UPDATE checkpoints SET parent_checkpoint_id = ?2 WHERE parent_checkpoint_id = ?1",
        [OLD_CHECKPOINT, EVIL_CHECKPOINT],
    )
    .expect("rename parent");
    conn.execute(
        "UPDATE writes SET checkpoint_id = ?2 WHERE checkpoint_id = ?1",
        [OLD_CHECKPOINT, EVIL_CHECKPOINT],
    )
    .expect("rename writes");
    for table in ["checkpoints", "writes"] {
        let n = conn
            .execute(
                &format!("UPDATE {table} SET thread_id = ?1 WHERE thread_id = 'tools'"),
                [THREAD],
            )
            .expect("rename thread");
        assert!(n > 0);
    }
    drop(conn);
    (dir, db)
}

/// Replaces `from` by `to` (same length) in every checkpoint and write blob; returns how many
/// rows changed.
fn replace_in_blobs(conn: &rusqlite::Connection, from: &[u8], to: &[u8]) -> usize {
    let mut changed = 0;
    for (table, column) in [("checkpoints", "checkpoint"), ("writes", "value")] {
        let rows: Vec<(i64, Vec<u8>)> = {
            let mut stmt = conn
                .prepare(&format!(
                    "SELECT rowid, {column} FROM {table} WHERE {column} IS NOT NULL"
                ))
                .expect("prepare");
            stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
                .expect("query")
                .collect::<Result<_, _>>()
                .expect("rows")
        };
        for (rowid, blob) in rows {
            if let Some(new) = replace_all(&blob, from, to) {
                conn.execute(
                    &format!("UPDATE {table} SET {column} = ?1 WHERE rowid = ?2"),
                    rusqlite::params![new, rowid],
                )
                .expect("update");
                changed += 1;
            }
        }
    }
    changed
}

fn replace_all(hay: &[u8], from: &[u8], to: &[u8]) -> Option<Vec<u8>> {
    let mut out = Vec::with_capacity(hay.len());
    let mut i = 0;
    let mut found = false;
    while i < hay.len() {
        if hay[i..].starts_with(from) {
            out.extend_from_slice(to);
            i += from.len();
            found = true;
        } else {
            out.push(hay[i]);
            i += 1;
        }
    }
    found.then_some(out)
}

/// Cuts the latest checkpoint blob of the renamed thread short, so that it does not decode.
fn break_latest(db: &Path) {
    let conn = rusqlite::Connection::open(db).expect("open");
    let n = conn
        .execute(
            "UPDATE checkpoints SET checkpoint = substr(checkpoint, 1, 40) \
             WHERE thread_id = ?1 AND checkpoint_ns = '' AND checkpoint_id = \
             (SELECT max(checkpoint_id) FROM checkpoints WHERE thread_id = ?1)",
            [THREAD],
        )
        .expect("cut");
    assert_eq!(n, 1);
}

/// The attack characters found raw in `text`.
fn raw_attack(text: &str) -> Vec<&'static str> {
    ATTACK.into_iter().filter(|a| text.contains(a)).collect()
}

/// One run in a pipe: exit code, stdout, stderr.
fn run(db: &Path, args: &[&str]) -> (Option<i32>, String, String) {
    let out = memctl()
        .env("COLUMNS", "200")
        .args(args)
        .args(["--db", s(db), "--now", NOW])
        .output()
        .expect("memctl runs");
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
    (out.status.code(), stdout, stderr)
}

/// Runs `args` and checks that neither stdout nor stderr holds an attack character raw, and
/// that `stream` ("stdout" or "stderr") shows every string of `shown` (escaped).
fn check(db: &Path, args: &[&str], code: i32, stream: &str, shown: &[&str]) {
    let (got, stdout, stderr) = run(db, args);
    assert_eq!(
        got,
        Some(code),
        "{args:?}\nstdout: {stdout}\nstderr: {stderr}"
    );
    for (name, text) in [("stdout", &stdout), ("stderr", &stderr)] {
        let raw = raw_attack(text);
        assert!(
            raw.is_empty(),
            "{args:?}: {raw:?} reached {name} raw: {text:?}"
        );
    }
    let text = if stream == "stdout" { &stdout } else { &stderr };
    for want in shown {
        assert!(
            text.contains(want),
            "{args:?}: {stream} does not show {want}: {text}"
        );
    }
}

/// Runs memctl on a pty (`script`): what a terminal receives, stdout and stderr together,
/// with the pty's CRLF line ends. The arguments reach memctl through the environment, so no
/// shell quoting is involved.
fn on_terminal(db: &Path, args: &[&str]) -> (Option<i32>, String) {
    terminal_run(db, args, "", &[])
}

/// [`on_terminal`] with stdout sent to /dev/null: only what memctl writes to stderr (progress
/// bars, error lines) reaches the terminal.
fn stderr_on_terminal(db: &Path, args: &[&str]) -> (Option<i32>, String) {
    terminal_run(db, args, " >/dev/null", &[])
}

fn terminal_run(
    db: &Path,
    args: &[&str],
    redirect: &str,
    env: &[(&str, &str)],
) -> (Option<i32>, String) {
    let bin = assert_cmd::cargo::cargo_bin("memctl");
    let mut cmd = std::process::Command::new("script");
    let mut line = String::from("exec \"$MEMCTL_BIN\"");
    for (i, a) in args
        .iter()
        .chain(["--db", s(db), "--now", NOW].iter())
        .enumerate()
    {
        let var = format!("MEMCTL_ARG_{i}");
        line.push_str(&format!(" \"${var}\""));
        cmd.env(var, a);
    }
    line.push_str(redirect);
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd.args(["-qec", &line, "/dev/null"])
        .env("MEMCTL_BIN", &bin)
        .env("SHELL", "/bin/sh")
        .env("COLUMNS", "200")
        .env("NO_COLOR", "1")
        .env_remove("MEMCTL_DB");
    let out = cmd.output().expect("script runs");
    let text = String::from_utf8_lossy(&out.stdout).replace("\r\n", "\n");
    assert!(!text.contains("panicked"), "{args:?}: {text}");
    (out.status.code(), text)
}

// ---------------------------------------------------------------------------------------
// In a pipe (human output is always escaped).

#[test]
fn threads_list_and_tokens_all_escape_thread_ids() {
    let (_d, db) = evil_db();
    check(&db, &["threads", "list"], 0, "stdout", &[THREAD_SHOWN]);
    check(&db, &["tokens", "--all"], 0, "stdout", &[THREAD_SHOWN]);
    check(&db, &["stats"], 0, "stdout", &[THREAD_SHOWN]);
}

#[test]
fn rm_dry_run_removal_list() {
    let (_d, db) = evil_db();
    check(
        &db,
        &["rm", "--thread", THREAD, "--id", HUMAN_ID.1, "--dry-run"],
        0,
        "stdout",
        &[THREAD_SHOWN, HUMAN_ID.2],
    );
    // The last message: its text is in the list.
    check(
        &db,
        &["rm", "--thread", THREAD, "--index", "-1", "--dry-run"],
        0,
        "stdout",
        &[THREAD_SHOWN, LAST_TEXT.2],
    );
    // Widened removals name ids in the notes.
    check(
        &db,
        &["rm", "--thread", THREAD, "--type", "tool", "--dry-run"],
        0,
        "stdout",
        &[THREAD_SHOWN],
    );
}

#[test]
fn trim_dry_run_removal_list() {
    let (_d, db) = evil_db();
    check(
        &db,
        &["trim", "--thread", THREAD, "--keep", "2", "--dry-run"],
        0,
        "stdout",
        &[THREAD_SHOWN, HUMAN_ID.2],
    );
    check(
        &db,
        &["trim", "--all", "--keep", "2", "--dry-run"],
        0,
        "stdout",
        &[THREAD_SHOWN, HUMAN_ID.2, USAGE_ID_1.2],
    );
}

#[test]
fn summarize_dry_run_removal_list() {
    let (_d, db) = evil_db();
    check(
        &db,
        &["summarize", "--thread", THREAD, "--keep", "2", "--dry-run"],
        0,
        "stdout",
        &[THREAD_SHOWN, HUMAN_ID.2],
    );
    check(
        &db,
        &["summarize", "--all", "--keep", "2", "--dry-run"],
        0,
        "stdout",
        &[THREAD_SHOWN, HUMAN_ID.2, USAGE_ID_1.2],
    );
}

#[test]
fn tokens_lists_message_ids_escaped() {
    let (_d, db) = evil_db();
    check(
        &db,
        &["tokens", "--thread", "usage", "--counter", "usage"],
        0,
        "stdout",
        &[USAGE_ID_1.2, USAGE_ID_2.2],
    );
    check(
        &db,
        &["tokens", "--thread", "usage"],
        0,
        "stdout",
        &[USAGE_ID_1.2, USAGE_ID_2.2],
    );
    check(
        &db,
        &["tokens", "--thread", THREAD],
        0,
        "stdout",
        &[HUMAN_ID.2, LAST_TEXT.2],
    );
    check(
        &db,
        &["tokens", "--thread", THREAD, "--counter", "usage"],
        0,
        "stdout",
        &[],
    );
}

#[test]
fn show_history_and_diff_escape_ids_and_text() {
    let (_d, db) = evil_db();
    check(
        &db,
        &["show", "--thread", THREAD],
        0,
        "stdout",
        &[THREAD_SHOWN, LAST_TEXT.2],
    );
    check(
        &db,
        &["history", "--thread", THREAD],
        0,
        "stdout",
        &[EVIL_CHECKPOINT_SHOWN],
    );
    // The checkpoint with the attack in its id, by a unique prefix, and as a diff's side.
    check(
        &db,
        &[
            "show",
            "--thread",
            THREAD,
            "--checkpoint",
            &EVIL_CHECKPOINT[..14],
        ],
        0,
        "stdout",
        &[THREAD_SHOWN, EVIL_CHECKPOINT_SHOWN],
    );
    check(
        &db,
        &["diff", "--thread", THREAD, "--from", EVIL_CHECKPOINT],
        0,
        "stdout",
        &[EVIL_CHECKPOINT_SHOWN, LAST_TEXT.2],
    );
    check(
        &db,
        &["diff", "--thread", THREAD],
        0,
        "stdout",
        &[LAST_TEXT.2],
    );
    // Whole conversation: the first checkpoint against the latest names the human message.
    let first = "1f1ed47f-8229-663e-bfff-5a6cde01b4df";
    check(
        &db,
        &["diff", "--thread", THREAD, "--from", first],
        0,
        "stdout",
        &[HUMAN_ID.2, LAST_TEXT.2],
    );
}

// ---------------------------------------------------------------------------------------
// Error lines quoting ids (stderr).

#[test]
fn error_lines_quote_ids_escaped() {
    let (_d, db) = evil_db();
    // An unknown checkpoint id prefix of the thread.
    check(
        &db,
        &["show", "--thread", THREAD, "--checkpoint", "ffff"],
        1,
        "stderr",
        &[THREAD_SHOWN],
    );
    // An ambiguous prefix lists the candidates: one of them is the attack.
    check(
        &db,
        &["show", "--thread", THREAD, "--checkpoint", "1f1ed47f-83"],
        1,
        "stderr",
        &[THREAD_SHOWN, EVIL_CHECKPOINT_SHOWN],
    );
    // A message id that is not there (given with the attack).
    check(
        &db,
        &[
            "rm",
            "--thread",
            THREAD,
            "--id",
            "nope\u{1b}[2J",
            "--dry-run",
        ],
        1,
        "stderr",
        &[r"nope\u{1b}[2J"],
    );
    // A thread that is not there (given with the attack).
    check(
        &db,
        &["show", "--thread", "nope\u{9b}31m\u{202e}"],
        1,
        "stderr",
        &[r"nope\u{9b}31m\u{202e}"],
    );
}

#[test]
fn a_thread_that_fails_to_decode_is_named_escaped() {
    let (_d, db) = evil_db();
    break_latest(&db);
    for args in [
        &["show", "--thread", THREAD][..],
        &["dump", "--thread", THREAD],
        &["tokens", "--thread", THREAD],
        &["trim", "--thread", THREAD, "--keep", "2", "--dry-run"],
    ] {
        check(&db, args, 1, "stderr", &[THREAD_SHOWN]);
    }
    // Batches: the failed thread's row names it (stdout), the summary goes to stderr.
    check(
        &db,
        &["trim", "--all", "--keep", "2", "--dry-run"],
        3,
        "stdout",
        &[THREAD_SHOWN],
    );
    check(
        &db,
        &["summarize", "--all", "--keep", "2", "--dry-run"],
        3,
        "stdout",
        &[THREAD_SHOWN],
    );
    check(
        &db,
        &[
            "gc",
            "--all",
            "--keep-checkpoints",
            "1",
            "--min-idle",
            "0s",
            "--dry-run",
        ],
        3,
        "stdout",
        &[THREAD_SHOWN],
    );
    check(&db, &["threads", "list"], 3, "stdout", &[THREAD_SHOWN]);
}

// ---------------------------------------------------------------------------------------
// On a terminal (a pty).

#[test]
fn human_output_on_a_terminal() {
    let (_d, db) = evil_db();
    for (args, shown) in [
        (&["threads", "list"][..], &[THREAD_SHOWN][..]),
        (&["show", "--thread", THREAD], &[THREAD_SHOWN, LAST_TEXT.2]),
        (&["history", "--thread", THREAD], &[EVIL_CHECKPOINT_SHOWN]),
        (
            &["tokens", "--thread", "usage", "--counter", "usage"],
            &[USAGE_ID_1.2, USAGE_ID_2.2],
        ),
        (
            &["rm", "--thread", THREAD, "--id", HUMAN_ID.1, "--dry-run"],
            &[THREAD_SHOWN, HUMAN_ID.2],
        ),
    ] {
        let (code, text) = on_terminal(&db, args);
        assert_eq!(code, Some(0), "{args:?}: {text}");
        // No progress bar here, no colour (NO_COLOR): nothing on the terminal may be ESC.
        assert!(
            !text.contains('\u{1b}') && raw_attack(&text).is_empty(),
            "{args:?}: raw on the terminal: {text:?}"
        );
        for want in shown {
            assert!(text.contains(want), "{args:?}: {want} not shown: {text}");
        }
    }
    // An error line quoting the thread, on the terminal.
    let (code, text) = on_terminal(&db, &["show", "--thread", THREAD, "--checkpoint", "ffff"]);
    assert_eq!(code, Some(1), "{text}");
    assert!(
        !text.contains('\u{1b}') && raw_attack(&text).is_empty(),
        "raw on the terminal: {text:?}"
    );
    assert!(text.contains(THREAD_SHOWN), "{text}");
}

#[test]
fn json_on_a_terminal_is_escaped_and_still_the_same_json() {
    let (_d, db) = evil_db();
    for args in [
        &["dump", "--thread", THREAD][..],
        &["dump", "--thread", THREAD, "--raw"],
        &["threads", "list", "--format", "json"],
        &["show", "--thread", THREAD, "--format", "json"],
        &[
            "tokens",
            "--thread",
            "usage",
            "--counter",
            "usage",
            "--format",
            "json",
        ],
    ] {
        let (code, text) = on_terminal(&db, args);
        assert_eq!(code, Some(0), "{args:?}: {text}");
        assert!(
            !text.contains('\u{1b}') && raw_attack(&text).is_empty(),
            "{args:?}: raw on the terminal: {text:?}"
        );
        let on_tty: Json = serde_json::from_str(text.trim())
            .unwrap_or_else(|e| panic!("{args:?}: not JSON on a terminal ({e}): {text}"));
        // In a pipe: serde_json's own bytes; parsed, the same document.
        let (_, piped, _) = run(&db, args);
        let piped: Json = serde_json::from_str(&piped).expect("JSON in a pipe");
        assert_eq!(
            on_tty, piped,
            "{args:?}: the terminal's JSON means the same"
        );
        assert!(
            text.contains(r"\u001b[2J") || text.contains(r"\u001B[2J"),
            "{args:?}: the attack is shown escaped: {text}"
        );
    }
    // The dump holds the message id and text exactly as stored.
    let (_, text) = on_terminal(&db, &["dump", "--thread", THREAD]);
    let dumped: Json = serde_json::from_str(text.trim()).expect("JSON");
    let ids: Vec<&str> = dumped
        .as_array()
        .expect("messages")
        .iter()
        .filter_map(|m| m["id"].as_str())
        .collect();
    assert!(ids.contains(&HUMAN_ID.1), "{ids:?}");
    let (_, text) = on_terminal(&db, &["threads", "list", "--format", "json"]);
    assert!(text.contains(THREAD_JSON), "{text}");
}

/// Batch commands on a terminal draw a progress bar on stderr; what it shows of a thread must
/// be escaped like everything else. (The bar's own cursor movements are escapes, so this
/// looks for the attack itself.) stdout goes to /dev/null: only the bar is on the terminal.
#[test]
fn progress_bar_of_summarize_on_a_terminal() {
    let (_d, db) = evil_db();
    let args = ["summarize", "--all", "--keep", "2", "--dry-run"];
    let (code, text) = stderr_on_terminal(&db, &args);
    assert_eq!(code, Some(0), "{args:?}: {text}");
    assert!(
        text.contains("summarize ["),
        "{args:?}: no progress bar drawn: {text:?}"
    );
    let raw = raw_attack(&text);
    assert!(
        raw.is_empty(),
        "{args:?}: {raw:?} reached the terminal raw: {text:?}"
    );
    // The first thread drawn is the renamed one, escaped (the bar may cut it at its width).
    assert!(text.contains(r"\u{1b}[2J"), "{args:?}: {text:?}");
}

/// A real summarize batch draws its bar naming the thread it reads while the requests run.
#[test]
fn progress_bars_of_a_real_summarize_on_a_terminal() {
    let (_d, db) = evil_db();
    let server = ChatServer::start(|_, _| Reply::Summary("A summary.".into()));
    let args = [
        "summarize",
        "--all",
        "--keep",
        "2",
        "--endpoint",
        &server.url,
        "--model",
        "tiny",
        "--api-key-env",
        "MEMCTL_TEST_KEY",
        "--concurrency",
        "1",
        "--settle",
        "0s",
    ];
    let (code, text) = terminal_run(&db, &args, " >/dev/null", &[("MEMCTL_TEST_KEY", "sk-x")]);
    assert_eq!(code, Some(0), "{args:?}: {text}");
    assert!(
        text.contains("summarize ["),
        "{args:?}: no request bar drawn: {text:?}"
    );
    let raw = raw_attack(&text);
    assert!(
        raw.is_empty(),
        "{args:?}: {raw:?} reached the terminal raw: {text:?}"
    );
    assert!(text.contains(r"\u{1b}[2J"), "{args:?}: {text:?}");
}

/// The other batch commands' bars show counts only; nothing of a thread may reach the
/// terminal raw either.
#[test]
fn progress_bars_of_other_batches_on_a_terminal() {
    let (_d, db) = evil_db();
    for args in [
        &["trim", "--all", "--keep", "2", "--dry-run"][..],
        &["rm", "--thread", THREAD, "--index", "0", "--dry-run"],
        &[
            "gc",
            "--all",
            "--keep-checkpoints",
            "1",
            "--min-idle",
            "0s",
            "--dry-run",
        ],
        &["prune", "--idle", "1s", "--min-idle", "0s", "--dry-run"],
    ] {
        let (code, text) = stderr_on_terminal(&db, args);
        assert_eq!(code, Some(0), "{args:?}: {text}");
        let raw = raw_attack(&text);
        assert!(
            raw.is_empty(),
            "{args:?}: {raw:?} reached the terminal raw: {text:?}"
        );
        // And with stdout on the terminal too: the report, escaped.
        let (code, text) = on_terminal(&db, args);
        assert_eq!(code, Some(0), "{args:?}: {text}");
        let raw = raw_attack(&text);
        assert!(
            raw.is_empty(),
            "{args:?}: {raw:?} reached the terminal raw: {text:?}"
        );
        assert!(text.contains(THREAD_SHOWN), "{args:?}: {text}");
    }
}

/// A thread id and a latest checkpoint id holding a newline and a tab: printed raw they
/// would fake output lines (a `+++` line of a diff, a line starting `FAKE`).
const LINE_THREAD: &str = "tools\n+++ fake\tline";
const LINE_THREAD_SHOWN: &str = r"tools\n+++ fake\tline";
const LATEST: &str = "1f1ed47f-8372-63a9-8008-693bc35ab911";
const LINE_CHECKPOINT: &str = "1f1ed47f-8372-63a9-8008-693bc35ab911\nFAKE\tLINE";
const LINE_CHECKPOINT_SHOWN: &str = r"1f1ed47f-8372-63a9-8008-693bc35ab911\nFAKE\tLINE";

/// A copy of new.sqlite with the thread `tools` and its latest checkpoint renamed.
fn line_faking_db() -> (tempfile::TempDir, PathBuf) {
    let (dir, db) = common::temp_copy(&fixture("new.sqlite"));
    let conn = rusqlite::Connection::open(&db).expect("open");
    for table in ["checkpoints", "writes"] {
        let n = conn
            .execute(
                &format!(
                    "UPDATE {table} SET checkpoint_id = ?2 WHERE thread_id = 'tools' AND checkpoint_id = ?1"
                ),
                [LATEST, LINE_CHECKPOINT],
            )
            .expect("rename the checkpoint");
        assert!(n > 0 || table == "writes");
        conn.execute(
            &format!("UPDATE {table} SET thread_id = ?1 WHERE thread_id = 'tools'"),
            [LINE_THREAD],
        )
        .expect("rename the thread");
    }
    drop(conn);
    (dir, db)
}

/// No line of `text` is one an id faked.
fn no_faked_line(args: &[&str], text: &str) {
    for line in text.lines() {
        assert!(
            !line.starts_with("+++ fake") && !line.starts_with("FAKE"),
            "{args:?}: an id broke a line: {text}"
        );
    }
}

#[test]
fn newlines_and_tabs_in_ids_stay_on_their_line() {
    let (_d, db) = line_faking_db();
    // show's header: one line, both ids escaped.
    let args = ["show", "--thread", LINE_THREAD];
    let (code, stdout, stderr) = run(&db, &args);
    assert_eq!(code, Some(0), "{stderr}");
    no_faked_line(&args, &stdout);
    let header = stdout.lines().next().unwrap_or("");
    assert!(
        header.starts_with(&format!(
            "thread {LINE_THREAD_SHOWN}  checkpoint {LINE_CHECKPOINT_SHOWN}  step 8"
        )),
        "{header}"
    );
    // diff's header.
    let args = ["diff", "--thread", LINE_THREAD];
    let (code, stdout, stderr) = run(&db, &args);
    assert_eq!(code, Some(0), "{stderr}");
    no_faked_line(&args, &stdout);
    assert!(
        stdout.contains(&format!("\n+++ {LINE_CHECKPOINT_SHOWN} (step 8)\n")),
        "{stdout}"
    );
    // Tables (history, tokens, threads list) and the rm --dry-run list.
    for args in [
        &["history", "--thread", LINE_THREAD][..],
        &["tokens", "--thread", LINE_THREAD],
        &["threads", "list"],
        &["rm", "--thread", LINE_THREAD, "--index", "-1", "--dry-run"],
    ] {
        let (_, stdout, stderr) = run(&db, args);
        no_faked_line(args, &stdout);
        no_faked_line(args, &stderr);
        assert!(!stdout.contains('\t'), "{args:?}: a raw tab: {stdout}");
    }
    // Error lines: one line, tabs escaped, the ids as given.
    for (args, shown) in [
        (
            &["show", "--thread", LINE_THREAD, "--checkpoint", "ffff"][..],
            format!("thread '{LINE_THREAD_SHOWN}' has no checkpoint 'ffff'"),
        ),
        (
            &["show", "--thread", "no\tsuch\nthread"],
            r"no thread 'no\tsuch\nthread'".to_owned(),
        ),
        // The checkpoint id is no UUID: trim names it, escaped.
        (
            &["trim", "--thread", LINE_THREAD, "--keep", "2"],
            String::new(),
        ),
    ] {
        let (code, stdout, stderr) = run(&db, args);
        assert_eq!(code, Some(1), "{args:?}: {stdout}{stderr}");
        assert_eq!(stderr.lines().count(), 1, "{args:?}: {stderr}");
        assert!(!stderr.contains('\t'), "{args:?}: a raw tab: {stderr:?}");
        assert!(stderr.contains(&shown), "{args:?}: {stderr}");
    }
}
