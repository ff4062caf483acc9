//! What people read, checked against committed snapshots (issue #14): the table and text
//! output of every command on the committed fixtures (and on temp copies for the rewrites),
//! their error lines, and the JSON of a few commands.
//!
//! Each snapshot (`tests/snapshots/*.snap`) is a transcript of memctl runs: the command line,
//! the exit code, stdout and stderr, exactly as printed. Every run has `COLUMNS=100`,
//! `NO_COLOR=1` and the hidden `--now 2026-12-08T12:00:00Z` (ages are measured against it).
//! Only what changes from run to run is redacted, with insta filters: the fixture directory
//! (`[FIXTURES]`), temp directories (`[TMP]`), the local test server's port, and the time of an
//! edit memctl made during the test (`####-##-##T##:##:##Z`, same width as the real value, so
//! tables keep their layout) with the age and `age_seconds` measured from it and, in JSON, that
//! thread's stored `bytes` (the new channel versions end in a random float).
//!
//! A mismatch fails the test. Outside CI insta also writes the new output beside the snapshot
//! as `*.snap.new` (delete it, or accept it by renaming); with `CI` set it writes nothing. To
//! accept intended changes: `INSTA_UPDATE=always cargo test --test snapshots`, then review
//! `git diff tests/snapshots/` before committing. `a_snapshot_mismatch_fails` checks that this
//! suite cannot pass on a wrong snapshot.

mod common;

use std::path::{Path, PathBuf};

use common::chat_server::{ChatServer, Reply};
use common::{expected, fixture, memctl, root, s};
use serde_json::Value as Json;

/// The time every run measures ages against (`--now`).
const NOW: &str = "2026-12-08T12:00:00Z";
/// The terminal width of every run.
const COLUMNS: &str = "100";
/// The id suffix of checkpoints memctl appends (smallest uuid6 after the parent).
const EDIT_ID_SUFFIX: &str = "-000000000000";

/// Same-width masks for the time of an edit made during the test (as tables show it, and as
/// stored, with and without microseconds).
const MASK_UTC: &str = "####-##-##T##:##:##Z";
const MASK_TS: &str = "####-##-##T##:##:##.######+00:00";
const MASK_TS_WHOLE_SECOND: &str = "####-##-##T##:##:##+00:00";

/// A transcript of memctl runs that becomes one snapshot, with what it must redact.
struct Session {
    text: String,
    tmp: tempfile::TempDir,
    /// (regex, replacement), applied in order.
    filters: Vec<(String, String)>,
}

impl Session {
    fn new() -> Session {
        let tmp = tempfile::tempdir().expect("temp dir");
        let fixtures = root().join("fixtures");
        let filters = vec![
            (regex::escape(s(tmp.path())), "[TMP]".to_owned()),
            (regex::escape(s(&fixtures)), "[FIXTURES]".to_owned()),
            (
                r"127\.0\.0\.1:\d+".to_owned(),
                "127.0.0.1:[PORT]".to_owned(),
            ),
        ];
        Session {
            text: String::new(),
            tmp,
            filters,
        }
    }

    /// A fresh copy of a committed fixture in this session's temp dir, named `name`.
    fn copy(&self, fixture_name: &str, name: &str) -> PathBuf {
        let dst = self.tmp.path().join(name);
        std::fs::copy(fixture(fixture_name), &dst).expect("copy fixture");
        dst
    }

    /// A path in this session's temp dir (for files the test writes itself).
    fn path(&self, name: &str) -> PathBuf {
        self.tmp.path().join(name)
    }

    /// Runs memctl with `args` (plus `--now`) and adds the run to the transcript.
    fn run(&mut self, args: &[&str]) -> std::process::Output {
        self.run_with(args, &[])
    }

    /// [`Session::run`] with extra environment variables (not shown in the transcript).
    fn run_with(&mut self, args: &[&str], env: &[(&str, &str)]) -> std::process::Output {
        let mut cmd = memctl();
        cmd.env("COLUMNS", COLUMNS).args(args).args(["--now", NOW]);
        for (k, v) in env {
            cmd.env(k, v);
        }
        let out = cmd.output().expect("memctl runs");
        let stdout = String::from_utf8_lossy(&out.stdout);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            !stderr.contains("panicked"),
            "memctl {args:?} panicked: {stderr}"
        );
        if !self.text.is_empty() {
            self.text.push('\n');
        }
        self.text.push_str(&format!(
            "$ memctl {}\n[exit {}]\n",
            shell_words(args),
            out.status
                .code()
                .map_or_else(|| "signal".to_owned(), |c| c.to_string())
        ));
        self.text.push_str(&stdout);
        if !stdout.is_empty() && !stdout.ends_with('\n') {
            self.text.push_str("[no newline at the end of stdout]\n");
        }
        if !stderr.is_empty() {
            self.text.push_str("[stderr]\n");
            self.text.push_str(&stderr);
            if !stderr.ends_with('\n') {
                self.text.push_str("[no newline at the end of stderr]\n");
            }
        }
        out
    }

    /// Runs memctl, requiring `code` as the exit code.
    fn run_expect(&mut self, code: i32, args: &[&str]) -> std::process::Output {
        let out = self.run(args);
        assert_eq!(
            out.status.code(),
            Some(code),
            "memctl {args:?}: stderr {}",
            String::from_utf8_lossy(&out.stderr)
        );
        out
    }

    /// Adds filters for the edits memctl made on `db` during the test: their `ts` (the wall
    /// clock) and the ages measured from it. Found as the checkpoints whose id has memctl's
    /// zero node (the fixtures have none: checked).
    fn redact_edit_times(&mut self, db: &Path) {
        let ts = edit_times(db);
        assert!(!ts.is_empty(), "{}: no edit found to redact", db.display());
        for t in ts {
            let mask = match t.len() {
                n if n == MASK_TS.len() => MASK_TS,
                n if n == MASK_TS_WHOLE_SECOND.len() => MASK_TS_WHOLE_SECOND,
                _ => panic!("unexpected ts form {t}"),
            };
            assert!(t.ends_with("+00:00"), "unexpected ts form {t}");
            let utc = format!("{}Z", &t[..19]);
            for (from, to) in [(t.clone(), mask), (utc, MASK_UTC)] {
                let rule = (regex::escape(&from), to.to_owned());
                if !self.filters.contains(&rule) {
                    self.filters.push(rule);
                }
            }
        }
        // What is measured from an edit's time: the age cell beside it, and age_seconds.
        for rule in [
            (
                format!(
                    r"{}(\s+)(?:\d+d \d+h|\d+h \d+m|\d+m|\d+s|in the future)",
                    regex::escape(MASK_UTC)
                ),
                format!("{MASK_UTC}${{1}}[AGE]"),
            ),
            // The edited thread's stored size too: the new checkpoint's channel versions end
            // in a random float, as LangGraph's do, so their length varies.
            (
                format!(
                    r#"("updated_at": "{}",\s*"age_seconds": )-?\d+(,\s*"bytes": )\d+"#,
                    regex::escape(MASK_UTC)
                ),
                "${1}[AGE]${2}[BYTES]".to_owned(),
            ),
            // threads list: an edited thread's age is the app's, but its size varies too.
            (
                format!(
                    r#"("edited_at": "{}",\s*"bytes": )\d+"#,
                    regex::escape(MASK_UTC)
                ),
                "${1}[BYTES]".to_owned(),
            ),
        ] {
            if !self.filters.contains(&rule) {
                self.filters.push(rule);
            }
        }
    }

    /// Compares the transcript with the committed snapshot `name`.
    fn snapshot(self, name: &str) {
        let mut settings = insta::Settings::clone_current();
        settings.set_prepend_module_to_snapshot(false);
        settings.set_omit_expression(true);
        settings.set_description(format!(
            "every run: COLUMNS={COLUMNS}, NO_COLOR=1, --now {NOW}"
        ));
        for (from, to) in &self.filters {
            settings.add_filter(from, to.as_str());
        }
        let text = self.text;
        settings.bind(|| insta::assert_snapshot!(name, text));
    }
}

/// `args` as a shell would take them back (single quotes where needed).
fn shell_words(args: &[&str]) -> String {
    args.iter()
        .map(|a| {
            let plain = !a.is_empty()
                && a.chars()
                    .all(|c| c.is_ascii_alphanumeric() || "_./:=@%+,-[]".contains(c));
            if plain {
                (*a).to_owned()
            } else {
                format!("'{}'", a.replace('\'', r"'\''"))
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// The `ts` of every checkpoint memctl appended to `db` (ids ending in the zero node).
fn edit_times(db: &Path) -> Vec<String> {
    let conn = rusqlite::Connection::open(db).expect("open");
    let mut stmt = conn
        .prepare(
            "SELECT DISTINCT thread_id, checkpoint_ns FROM checkpoints \
             WHERE checkpoint_id LIKE '%' || ?1",
        )
        .expect("prepare");
    let threads: Vec<(String, String)> = stmt
        .query_map([EDIT_ID_SUFFIX], |r| Ok((r.get(0)?, r.get(1)?)))
        .expect("query")
        .collect::<Result<_, _>>()
        .expect("rows");
    let mut times = Vec::new();
    for (thread, ns) in threads {
        let out = memctl()
            .args(["history", "--db", s(db), "--thread", &thread, "--ns", &ns])
            .args(["--format", "json"])
            .output()
            .expect("memctl runs");
        let rows: Json = serde_json::from_slice(&out.stdout).expect("history JSON");
        for row in rows.as_array().expect("rows") {
            let id = row["checkpoint_id"].as_str().expect("id");
            if id.ends_with(EDIT_ID_SUFFIX) {
                times.push(row["ts"].as_str().expect("ts").to_owned());
            }
        }
    }
    times.sort();
    times.dedup();
    times
}

/// The thread ids of a fixture, in the order of its expectations file.
fn thread_ids(gen: &str) -> Vec<String> {
    expected(gen)["threads"]
        .as_object()
        .expect("threads")
        .keys()
        .cloned()
        .collect()
}

/// The subgraph namespaces of a fixture's `subgraph` thread (not the root).
fn child_namespaces(gen: &str) -> Vec<String> {
    expected(gen)["threads"]["subgraph"]["namespaces"]
        .as_array()
        .expect("namespaces")
        .iter()
        .filter_map(Json::as_str)
        .filter(|ns| !ns.is_empty())
        .map(str::to_owned)
        .collect()
}

fn fixture_path(name: &str) -> String {
    s(&fixture(name)).to_owned()
}

// ---------------------------------------------------------------------------------------
// The suite guards itself.

/// A wrong snapshot must fail the assertion (not pass, not be silently rewritten): the
/// settings this suite runs with (INSTA_UPDATE, CI, INSTA_FORCE_PASS) are checked by
/// asserting against a deliberately wrong snapshot in a temp dir.
#[test]
fn a_snapshot_mismatch_fails() {
    let update = std::env::var("INSTA_UPDATE").unwrap_or_default();
    if matches!(update.as_str(), "always" | "1" | "force" | "unseen")
        || std::env::var("INSTA_FORCE_PASS").is_ok_and(|v| v == "1")
    {
        // Accepting snapshots on purpose: that run is reviewed by `git diff`, not by this test.
        eprintln!("INSTA_UPDATE={update}: snapshots are being accepted; mismatch check skipped");
        return;
    }
    let dir = tempfile::tempdir().expect("temp dir");
    std::fs::write(
        dir.path().join("wrong.snap"),
        "---\nsource: tests/snapshots.rs\n---\nwhat memctl does not print\n",
    )
    .expect("write snapshot");
    let mut settings = insta::Settings::clone_current();
    settings.set_snapshot_path(dir.path());
    settings.set_prepend_module_to_snapshot(false);
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        settings.bind(|| insta::assert_snapshot!("wrong", "what memctl prints"));
    }));
    assert!(result.is_err(), "a wrong snapshot passed");
    let stored = std::fs::read_to_string(dir.path().join("wrong.snap")).expect("read");
    assert!(
        stored.contains("what memctl does not print"),
        "the committed snapshot was rewritten: {stored}"
    );
    let pending = dir.path().join("wrong.snap.new").exists();
    let ci = std::env::var("CI").is_ok_and(|v| !matches!(v.as_str(), "" | "0" | "false"));
    if ci || update == "no" {
        assert!(
            !pending,
            "with CI set, insta must not write .snap.new files"
        );
    }
}

// ---------------------------------------------------------------------------------------
// Read commands on both saver generations.

#[test]
fn threads_list() {
    for gen in common::GENERATIONS {
        let db = fixture_path(&format!("{gen}.sqlite"));
        let mut t = Session::new();
        t.run_expect(0, &["threads", "list", "--db", &db]);
        t.run_expect(0, &["threads", "list", "--db", &db, "--sort", "size"]);
        t.run_expect(0, &["threads", "list", "--db", &db, "--sort", "messages"]);
        t.run_expect(
            0,
            &[
                "threads",
                "list",
                "--db",
                &db,
                "--sort",
                "checkpoints",
                "--limit",
                "3",
            ],
        );
        t.run_expect(
            0,
            &[
                "threads",
                "list",
                "--db",
                &db,
                "--sort",
                "tokens",
                "--min-tokens",
                "50",
            ],
        );
        t.snapshot(&format!("threads_list_{gen}"));
    }
}

#[test]
fn history_of_every_thread() {
    for gen in common::GENERATIONS {
        let db = fixture_path(&format!("{gen}.sqlite"));
        let mut t = Session::new();
        for thread in thread_ids(gen) {
            t.run_expect(0, &["history", "--db", &db, "--thread", &thread]);
        }
        t.run_expect(0, &["history", "--db", &db, "tools", "--limit", "2"]);
        for ns in child_namespaces(gen) {
            t.run_expect(0, &["history", "--db", &db, "subgraph", "--ns", &ns]);
        }
        t.snapshot(&format!("history_{gen}"));
    }
}

#[test]
fn show_every_thread() {
    for gen in common::GENERATIONS {
        let db = fixture_path(&format!("{gen}.sqlite"));
        let mut t = Session::new();
        for thread in thread_ids(gen) {
            t.run_expect(0, &["show", "--db", &db, "--thread", &thread]);
        }
        t.snapshot(&format!("show_{gen}"));
    }
}

#[test]
fn show_options() {
    for gen in common::GENERATIONS {
        let db = fixture_path(&format!("{gen}.sqlite"));
        let exp = expected(gen);
        let mut t = Session::new();
        t.run_expect(0, &["show", "--db", &db, "tools", "--last", "2"]);
        t.run_expect(0, &["show", "--db", &db, "system", "--last", "1"]);
        t.run_expect(0, &["show", "--db", &db, "interrupt", "--last", "0"]);
        // An older checkpoint, by a unique prefix of its id.
        let history = exp["threads"]["tools"]["history"]
            .as_array()
            .expect("history");
        let older = history[3]["checkpoint_id"].as_str().expect("id");
        t.run_expect(
            0,
            &["show", "--db", &db, "tools", "--checkpoint", &older[..18]],
        );
        // The very first checkpoint (input, no messages yet).
        let first = history
            .last()
            .and_then(|h| h["checkpoint_id"].as_str())
            .expect("id");
        t.run_expect(0, &["show", "--db", &db, "tools", "--checkpoint", first]);
        for ns in child_namespaces(gen) {
            t.run_expect(0, &["show", "--db", &db, "subgraph", "--ns", &ns]);
        }
        t.snapshot(&format!("show_options_{gen}"));
    }
}

#[test]
fn diff_every_thread() {
    for gen in common::GENERATIONS {
        let db = fixture_path(&format!("{gen}.sqlite"));
        let exp = expected(gen);
        let mut t = Session::new();
        for thread in thread_ids(gen) {
            t.run_expect(0, &["diff", "--db", &db, "--thread", &thread]);
        }
        // Whole conversations: the first checkpoint against the latest.
        for thread in ["tools", "custom-state", "summarized", "tuple-args"] {
            let history = exp["threads"][thread]["history"]
                .as_array()
                .expect("history");
            let first = history
                .last()
                .and_then(|h| h["checkpoint_id"].as_str())
                .expect("id");
            t.run_expect(0, &["diff", "--db", &db, thread, "--from", first]);
        }
        // Backwards: messages removed.
        let history = exp["threads"]["summarized"]["history"]
            .as_array()
            .expect("history");
        let (latest, older) = (
            history[0]["checkpoint_id"].as_str().expect("id"),
            history[6]["checkpoint_id"].as_str().expect("id"),
        );
        t.run_expect(
            0,
            &[
                "diff",
                "--db",
                &db,
                "summarized",
                "--from",
                latest,
                "--to",
                older,
            ],
        );
        t.snapshot(&format!("diff_{gen}"));
    }
}

#[test]
fn dump_messages_and_raw() {
    for gen in common::GENERATIONS {
        let db = fixture_path(&format!("{gen}.sqlite"));
        let mut t = Session::new();
        for thread in ["tools", "blocks", "usage", "unicode"] {
            t.run_expect(0, &["dump", "--db", &db, "--thread", thread]);
        }
        t.run_expect(0, &["dump", "--db", &db, "system", "--format", "jsonl"]);
        t.run_expect(0, &["dump", "--db", &db, "interrupt", "--raw"]);
        t.run_expect(0, &["dump", "--db", &db, "tuple-args", "--raw"]);
        t.snapshot(&format!("dump_{gen}"));
    }
}

#[test]
fn tokens_per_thread_and_all() {
    for gen in common::GENERATIONS {
        let db = fixture_path(&format!("{gen}.sqlite"));
        let mut t = Session::new();
        for thread in thread_ids(gen) {
            t.run_expect(0, &["tokens", "--db", &db, "--thread", &thread]);
        }
        t.run_expect(0, &["tokens", "--db", &db, "--all"]);
        t.run_expect(0, &["tokens", "--db", &db, "--all", "--limit", "3"]);
        t.run_expect(0, &["tokens", "--db", &db, "--all", "--model", "gpt-4o"]);
        t.run_expect(0, &["tokens", "--db", &db, "--all", "--counter", "cl100k"]);
        t.run_expect(0, &["tokens", "--db", &db, "tools", "--model", "gpt-4o"]);
        t.run_expect(0, &["tokens", "--db", &db, "unicode", "--counter", "o200k"]);
        for thread in ["usage", "tools", "1"] {
            t.run_expect(0, &["tokens", "--db", &db, thread, "--counter", "usage"]);
        }
        t.run_expect(0, &["tokens", "--db", &db, "--all", "--counter", "usage"]);
        t.snapshot(&format!("tokens_{gen}"));
    }
}

#[test]
fn stats() {
    for gen in common::GENERATIONS {
        let db = fixture_path(&format!("{gen}.sqlite"));
        let mut t = Session::new();
        t.run_expect(0, &["stats", "--db", &db]);
        t.run_expect(0, &["stats", "--db", &db, "--top", "3"]);
        t.snapshot(&format!("stats_{gen}"));
    }
}

/// The DeltaChannel and the encrypted fixture: what every read command says about them.
#[test]
fn delta_and_encrypted_fixtures() {
    for name in ["delta", "encrypted"] {
        let db = fixture_path(&format!("{name}.sqlite"));
        let mut t = Session::new();
        for args in [
            &["threads", "list"][..],
            &["history", "1"],
            &["show", "1"],
            &["dump", "1"],
            &["dump", "1", "--raw"],
            &["diff", "1"],
            &["tokens", "1"],
            &["tokens", "--all"],
            &["stats"],
        ] {
            let mut args = args.to_vec();
            args.extend(["--db", &db]);
            let out = t.run(&args);
            assert!(
                matches!(out.status.code(), Some(0 | 1)),
                "{args:?}: {:?}",
                out.status
            );
        }
        if name == "delta" {
            // A second DeltaChannel: deepagents' files, rebuilt; one whose reducer memctl
            // does not know, said so; the reducer's edits, counted per checkpoint.
            t.run_expect(0, &["show", "files", "--last", "2", "--db", &db]);
            t.run_expect(0, &["show", "notes", "--last", "2", "--db", &db]);
            t.run_expect(0, &["history", "edits", "--db", &db]);
        }
        t.snapshot(&format!("read_{name}"));
    }
}

// ---------------------------------------------------------------------------------------
// Rewrites, on temp copies: --dry-run, then the real run and what the thread looks like after.

#[test]
fn trim() {
    let mut t = Session::new();
    let db = t.copy("new.sqlite", "t.sqlite");
    let db = s(&db).to_owned();
    // A selection of no thread says so, with no header row over nothing (#46).
    t.run_expect(
        0,
        &[
            "trim",
            "--db",
            &db,
            "--all",
            "--keep",
            "2",
            "--min-messages",
            "100000",
        ],
    );
    t.run_expect(
        0,
        &["trim", "--db", &db, "tools", "--keep", "4", "--dry-run"],
    );
    t.run_expect(
        0,
        &[
            "trim",
            "--db",
            &db,
            "tools",
            "--max-tokens",
            "100",
            "--dry-run",
        ],
    );
    t.run_expect(
        0,
        &[
            "trim",
            "--db",
            &db,
            "tools",
            "--keep",
            "4",
            "--keep-first",
            "--dry-run",
        ],
    );
    t.run_expect(
        0,
        &["trim", "--db", &db, "system", "--keep", "2", "--dry-run"],
    );
    t.run_expect(1, &["trim", "--db", &db, "interrupt", "--keep", "1"]);
    t.run_expect(
        0,
        &["trim", "--db", &db, "--all", "--keep", "3", "--dry-run"],
    );
    t.run_expect(
        0,
        &[
            "trim", "--db", &db, "tools", "--keep", "4", "--settle", "0s",
        ],
    );
    t.run_expect(0, &["history", "--db", &db, "tools", "--limit", "2"]);
    t.run_expect(0, &["show", "--db", &db, "tools"]);
    t.run_expect(0, &["diff", "--db", &db, "tools"]);
    t.run_expect(0, &["tokens", "--db", &db, "tools"]);
    t.run_expect(
        0,
        &[
            "trim", "--db", &db, "--all", "--keep", "3", "--settle", "0s",
        ],
    );
    t.run_expect(0, &["history", "--db", &db, "system", "--limit", "2"]);
    t.run_expect(0, &["tokens", "--db", &db, "--all"]);
    t.redact_edit_times(Path::new(&db));
    t.snapshot("trim");
}

#[test]
fn rm() {
    let mut t = Session::new();
    let db = t.copy("new.sqlite", "t.sqlite");
    let db = s(&db).to_owned();
    for selector in [
        &["--id", "ai-tools-1"][..],
        &["--index", "-1"],
        &["--index", "2"],
        &["--type", "tool"],
        &["--match", "Berlin"],
        &["--match", "get_weather"],
        &["--all-messages"],
    ] {
        let mut args = vec!["rm", "--db", &db, "tools", "--dry-run"];
        args.extend(selector);
        t.run_expect(0, &args);
    }
    t.run_expect(1, &["rm", "--db", &db, "tools", "--id", "nope"]);
    t.run_expect(
        0,
        &[
            "rm", "--db", &db, "tools", "--type", "tool", "--settle", "0s",
        ],
    );
    t.run_expect(0, &["history", "--db", &db, "tools", "--limit", "2"]);
    t.run_expect(0, &["show", "--db", &db, "tools"]);
    t.run_expect(
        0,
        &[
            "rm",
            "--db",
            &db,
            "dict-input",
            "--match",
            "hunter2",
            "--purge",
            "--dry-run",
        ],
    );
    t.run_expect(
        0,
        &[
            "rm",
            "--db",
            &db,
            "dict-input",
            "--match",
            "hunter2",
            "--purge",
            "--settle",
            "0s",
        ],
    );
    t.run_expect(0, &["show", "--db", &db, "dict-input"]);
    t.run_expect(0, &["history", "--db", &db, "dict-input"]);
    t.redact_edit_times(Path::new(&db));
    t.snapshot("rm");
}

#[test]
fn summarize_dry_run() {
    let mut t = Session::new();
    let db = fixture_path("new.sqlite");
    t.run_expect(
        0,
        &[
            "summarize",
            "--db",
            &db,
            "system",
            "--keep",
            "3",
            "--dry-run",
        ],
    );
    t.run_expect(
        0,
        &[
            "summarize",
            "--db",
            &db,
            "tools",
            "--keep-tokens",
            "60",
            "--dry-run",
        ],
    );
    t.run_expect(
        0,
        &[
            "summarize",
            "--db",
            &db,
            "--all",
            "--keep",
            "2",
            "--dry-run",
        ],
    );
    t.run_expect(
        0,
        &[
            "summarize",
            "--db",
            &db,
            "--all",
            "--keep",
            "2",
            "--min-tokens",
            "50",
            "--dry-run",
        ],
    );
    t.snapshot("summarize_dry_run");
}

#[test]
fn summarize_with_an_endpoint() {
    let mut t = Session::new();
    let db = t.copy("new.sqlite", "t.sqlite");
    let db = s(&db).to_owned();
    let server = ChatServer::start(|_, _| Reply::Summary("They talked; nothing is open.".into()));
    let key = [("MEMCTL_TEST_KEY", "sk-test-snapshot")];
    let common = [
        "--endpoint",
        &server.url,
        "--model",
        "tiny",
        "--api-key-env",
        "MEMCTL_TEST_KEY",
        "--settle",
        "0s",
        "--concurrency",
        "1",
    ];
    let mut args = vec!["summarize", "--db", &db, "system", "--keep", "3"];
    args.extend(common);
    let out = t.run_with(&args, &key);
    assert_eq!(out.status.code(), Some(0));
    t.run_expect(0, &["show", "--db", &db, "system"]);
    // The summary message has a new random id: shown by dump, compared without it.
    let mut args = vec!["summarize", "--db", &db, "--all", "--keep", "2"];
    args.extend(common);
    let out = t.run_with(&args, &key);
    assert_eq!(out.status.code(), Some(0));
    t.run_expect(0, &["history", "--db", &db, "usage", "--limit", "2"]);
    // An endpoint that fails: the thread is reported failed, nothing is written. (The notes
    // cell wraps inside the URL: the snapshot assumes a 5-digit ephemeral port, as Linux and
    // macOS give by default.)
    let failing = ChatServer::start(|_, _| Reply::Status(400, r#"{"error": "bad model"}"#.into()));
    let (_d, db2) = common::temp_copy(&fixture("new.sqlite"));
    t.filters.push((
        regex::escape(s(db2.parent().expect("dir"))),
        "[TMP2]".into(),
    ));
    let out = t.run_with(
        &[
            "summarize",
            "--db",
            s(&db2),
            "system",
            "--keep",
            "3",
            "--endpoint",
            &failing.url,
            "--model",
            "tiny",
            "--api-key-env",
            "MEMCTL_TEST_KEY",
            "--retries",
            "0",
        ],
        &key,
    );
    assert_eq!(out.status.code(), Some(1));
    t.redact_edit_times(Path::new(&db));
    t.snapshot("summarize_endpoint");
}

/// `find` (latest, --history --count, --meta) and `forget` (dry runs, then deleting one
/// thread for real: the receipt) on forget.sqlite, where one user's data is spread over
/// several threads and a paused thread mentions her.
#[test]
fn find_and_forget() {
    let mut t = Session::new();
    let db = t.copy("forget.sqlite", "f.sqlite");
    let db = s(&db).to_owned();
    t.run_expect(0, &["find", "Alice", "--db", &db]);
    t.run_expect(
        0,
        &[
            "find",
            "elm street",
            "-i",
            "--history",
            "--count",
            "--db",
            &db,
        ],
    );
    t.run_expect(0, &["find", "--meta", "user_id=42", "--db", &db]);
    // The paused thread keeps its match: the real run would end NOT CLEAN, and the dry run
    // exits 3 as it would (#46).
    t.run_expect(3, &["forget", "--match", "Alice", "--dry-run", "--db", &db]);
    t.run_expect(
        0,
        &["forget", "--meta", "user_id=42", "--dry-run", "--db", &db],
    );
    t.run_expect(
        0,
        &[
            "forget",
            "--thread",
            "alice-chat",
            "--settle",
            "0s",
            "--db",
            &db,
        ],
    );
    t.run_expect(0, &["threads", "list", "--db", &db]);
    t.snapshot("find_and_forget");
}

#[test]
fn prune() {
    let mut t = Session::new();
    let db = t.copy("new.sqlite", "t.sqlite");
    let db = s(&db).to_owned();
    t.run_expect(0, &["prune", "--db", &db, "--idle", "30d", "--dry-run"]);
    t.run_expect(0, &["prune", "--db", &db, "--idle", "3d", "--dry-run"]);
    t.run_expect(
        0,
        &[
            "prune",
            "--db",
            &db,
            "--thread",
            "tools",
            "--thread",
            "1",
            "--dry-run",
        ],
    );
    t.run_expect(
        0,
        &["prune", "--db", &db, "--thread", "tools", "--thread", "1"],
    );
    t.run_expect(0, &["threads", "list", "--db", &db]);
    t.run_expect(
        0,
        &[
            "prune",
            "--db",
            &db,
            "--idle",
            "3d",
            "--min-idle",
            "0s",
            "--vacuum",
        ],
    );
    t.run_expect(0, &["threads", "list", "--db", &db]);
    t.run_expect(0, &["stats", "--db", &db]);
    t.snapshot("prune");
}

#[test]
fn gc() {
    let mut t = Session::new();
    let db = t.copy("new.sqlite", "t.sqlite");
    let db = s(&db).to_owned();
    let all = ["--all", "--keep-checkpoints", "1", "--min-idle", "0s"];
    let mut args = vec!["gc", "--db", &db, "--dry-run"];
    args.extend(all);
    t.run_expect(0, &args);
    t.run_expect(
        0,
        &[
            "gc",
            "--db",
            &db,
            "--thread",
            "tools",
            "--keep-checkpoints",
            "3",
            "--dry-run",
        ],
    );
    t.run_expect(
        0,
        &[
            "gc",
            "--db",
            &db,
            "--thread",
            "tools",
            "--keep-checkpoints",
            "3",
        ],
    );
    t.run_expect(0, &["history", "--db", &db, "tools"]);
    let mut args = vec!["gc", "--db", &db, "--vacuum"];
    args.extend(all);
    t.run_expect(0, &args);
    t.run_expect(0, &["threads", "list", "--db", &db]);
    t.run_expect(0, &["history", "--db", &db, "subgraph"]);
    t.run_expect(0, &["show", "--db", &db, "interrupt"]);
    t.run_expect(0, &["stats", "--db", &db]);
    t.snapshot("gc");
}

// ---------------------------------------------------------------------------------------
// Error lines (stderr) of common bad input.

#[test]
fn errors_of_common_bad_input() {
    let mut t = Session::new();
    let new = fixture_path("new.sqlite");
    let missing = t.path("missing.sqlite");
    let text = t.path("notes.txt");
    std::fs::write(&text, "not a database\n".repeat(100)).expect("write");
    let empty = t.path("empty.sqlite");
    std::fs::write(&empty, b"").expect("write");
    let other = t.path("other-app.sqlite");
    rusqlite::Connection::open(&other)
        .and_then(|c| c.execute_batch("CREATE TABLE users (id INTEGER PRIMARY KEY, name TEXT);"))
        .expect("another app's database");
    for db in [&missing, &text, &empty, &other] {
        t.run_expect(1, &["threads", "list", "--db", s(db)]);
        t.run_expect(1, &["show", "--db", s(db), "tools"]);
    }
    t.run_expect(1, &["trim", "--db", s(&missing), "tools", "--keep", "2"]);
    t.run_expect(1, &["prune", "--db", s(&text), "--idle", "1d"]);
    // A usage error (#46: exit 1 before).
    t.run_expect(2, &["threads", "list"]);
    for args in [
        &["show", "nope"][..],
        &["history", "nope"],
        &["dump", "nope"],
        &["diff", "nope"],
        &["tokens", "nope"],
        &["trim", "nope", "--keep", "2", "--dry-run"],
        &["rm", "nope", "--index", "0", "--dry-run"],
        &["summarize", "nope", "--keep", "2", "--dry-run"],
        &[
            "gc",
            "--thread",
            "nope",
            "--keep-checkpoints",
            "1",
            "--dry-run",
        ],
        &["show", "tools", "--checkpoint", "ffff"],
        &["show", "tools", "--checkpoint", "1f1ed47f-83"],
        &["diff", "tools", "--from", "0000"],
        &["show", "tools", "--ns", "child:nope"],
    ] {
        let mut args = args.to_vec();
        args.extend(["--db", &new]);
        t.run_expect(1, &args);
    }
    // A flag's value that cannot work: a usage error (exit code 2), like clap's own.
    for args in [
        &["tokens", "--all", "--ns", "x"][..],
        &["rm", "tools", "--match", "(unclosed"],
    ] {
        let mut args = args.to_vec();
        args.extend(["--db", &new]);
        t.run_expect(2, &args);
    }
    // A thread whose latest checkpoint does not decode (a blob cut short): its own commands
    // fail with one line, batches report it and leave it alone (exit 3).
    let corrupt = t.copy("new.sqlite", "corrupt.sqlite");
    let conn = rusqlite::Connection::open(&corrupt).expect("open");
    let cut = conn
        .execute(
            "UPDATE checkpoints SET checkpoint = substr(checkpoint, 1, 40) \
             WHERE thread_id = 'tools' AND checkpoint_id = \
             (SELECT max(checkpoint_id) FROM checkpoints WHERE thread_id = 'tools')",
            [],
        )
        .expect("cut the blob");
    assert_eq!(cut, 1);
    drop(conn);
    let corrupt = s(&corrupt).to_owned();
    t.run_expect(1, &["show", "--db", &corrupt, "tools"]);
    t.run_expect(1, &["tokens", "--db", &corrupt, "tools"]);
    t.run_expect(
        1,
        &[
            "trim",
            "--db",
            &corrupt,
            "tools",
            "--keep",
            "2",
            "--dry-run",
        ],
    );
    t.run_expect(
        3,
        &[
            "trim",
            "--db",
            &corrupt,
            "--all",
            "--keep",
            "3",
            "--dry-run",
            "--min-messages",
            "9",
        ],
    );
    t.run_expect(
        3,
        &[
            "gc",
            "--db",
            &corrupt,
            "--all",
            "--keep-checkpoints",
            "1",
            "--min-idle",
            "0s",
            "--dry-run",
        ],
    );
    // A move never copies it as if it were fine: a copy of it is one line (exit 1); a move of
    // several threads leaves it out, names it and why, moves the others (exit 3).
    let target = t.copy("new.sqlite", "target.sqlite");
    let archive = t.path("archive.sqlite");
    t.run_expect(
        1,
        &[
            "copy",
            "--db",
            &corrupt,
            "--thread",
            "tools",
            "--to",
            s(&archive),
        ],
    );
    t.run_expect(
        3,
        &[
            "import",
            &corrupt,
            "--db",
            s(&target),
            "--thread",
            "tools",
            "--thread",
            "1",
            "--replace",
        ],
    );
    t.run_expect(
        3,
        &[
            "export",
            "--db",
            &corrupt,
            "--thread",
            "tools",
            "--thread",
            "1",
            "-o",
            s(&archive),
        ],
    );
    // Usage errors (exit 2): clap's message and usage line.
    t.run_expect(2, &["trim", "--db", &new, "tools", "--keep", "0"]);
    t.run_expect(2, &["gc", "--db", &new, "--all"]);
    t.run_expect(
        2,
        &[
            "summarize",
            "--db",
            &new,
            "tools",
            "--keep",
            "2",
            "--endpoint",
            "ftp://x",
            "--model",
            "m",
        ],
    );
    t.snapshot("errors");
}

// ---------------------------------------------------------------------------------------
// JSON for scripts.

#[test]
fn json_output() {
    let mut t = Session::new();
    let db = fixture_path("new.sqlite");
    let copy = t.copy("new.sqlite", "t.sqlite");
    let copy = s(&copy).to_owned();
    t.run_expect(
        0,
        &[
            "threads", "list", "--db", &db, "--format", "json", "--limit", "3",
        ],
    );
    t.run_expect(
        0,
        &[
            "threads", "list", "--db", &db, "--format", "jsonl", "--limit", "3",
        ],
    );
    t.run_expect(
        0,
        &[
            "history", "--db", &db, "tools", "--format", "json", "--limit", "2",
        ],
    );
    t.run_expect(0, &["show", "--db", &db, "interrupt", "--format", "json"]);
    t.run_expect(0, &["diff", "--db", &db, "tools", "--format", "json"]);
    t.run_expect(0, &["tokens", "--db", &db, "usage", "--format", "json"]);
    t.run_expect(
        0,
        &[
            "tokens",
            "--db",
            &db,
            "usage",
            "--counter",
            "usage",
            "--format",
            "json",
        ],
    );
    t.run_expect(
        0,
        &[
            "tokens", "--db", &db, "--all", "--format", "json", "--limit", "3",
        ],
    );
    t.run_expect(0, &["stats", "--db", &db, "--format", "json", "--top", "2"]);
    t.run_expect(
        0,
        &[
            "trim",
            "--db",
            &copy,
            "tools",
            "--keep",
            "4",
            "--dry-run",
            "--format",
            "json",
        ],
    );
    t.run_expect(
        0,
        &[
            "rm",
            "--db",
            &copy,
            "tools",
            "--type",
            "tool",
            "--dry-run",
            "--format",
            "json",
        ],
    );
    t.run_expect(
        0,
        &[
            "summarize",
            "--db",
            &copy,
            "system",
            "--keep",
            "3",
            "--dry-run",
            "--format",
            "json",
        ],
    );
    t.run_expect(
        0,
        &[
            "gc",
            "--db",
            &copy,
            "--all",
            "--keep-checkpoints",
            "1",
            "--min-idle",
            "0s",
            "--dry-run",
            "--format",
            "json",
        ],
    );
    t.run_expect(
        0,
        &[
            "prune",
            "--db",
            &copy,
            "--idle",
            "3d",
            "--dry-run",
            "--format",
            "json",
        ],
    );
    t.run_expect(
        0,
        &[
            "trim", "--db", &copy, "tools", "--keep", "4", "--settle", "0s", "--format", "json",
        ],
    );
    // The edited thread (third by checkpoints): its age is still the app's, marked edited.
    t.run_expect(
        0,
        &[
            "threads",
            "list",
            "--db",
            &copy,
            "--format",
            "json",
            "--sort",
            "checkpoints",
            "--limit",
            "3",
        ],
    );
    t.run_expect(1, &["show", "--db", &copy, "nope", "--format", "json"]);
    t.redact_edit_times(Path::new(&copy));
    t.snapshot("json");
}
