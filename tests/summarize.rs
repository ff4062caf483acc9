//! summarize against a real HTTP server on 127.0.0.1 speaking the chat completions protocol.

mod common;

use std::time::Duration;

use common::chat_server::{ChatServer, Reply};
use common::{expected, fixture, memctl, run_json, s, temp_copy};
use serde_json::Value as Json;

const KEY: &str = "sk-test-0123456789-secret";

fn summarize(db: &std::path::Path, server: &ChatServer, extra: &[&str]) -> std::process::Output {
    let mut cmd = memctl();
    cmd.env("MEMCTL_TEST_KEY", KEY)
        .args([
            "summarize",
            "--db",
            s(db),
            "--endpoint",
            &server.url,
            "--model",
            "tiny-summarizer",
        ])
        .args(["--api-key-env", "MEMCTL_TEST_KEY", "--format", "json"])
        .args(extra);
    cmd.output().expect("memctl runs")
}

fn stdout_json(out: &std::process::Output) -> Json {
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "bad JSON ({e}): {}\nstderr: {}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    })
}

fn no_key_in(out: &std::process::Output) {
    let all = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        !all.contains(KEY),
        "the API key leaked into the output: {all}"
    );
}

#[test]
fn summary_replaces_exactly_the_older_messages() {
    let (_d, db) = temp_copy(&fixture("new.sqlite"));
    let server = ChatServer::start(|_, _| {
        Reply::Summary("Bob asked about the weather; it is sunny.".into())
    });
    let out = summarize(&db, &server, &["--thread", "system", "--keep", "3"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    no_key_in(&out);
    let report = stdout_json(&out);
    assert_eq!(report["threads"][0]["status"], "summarized", "{report}");
    assert_eq!(report["threads"][0]["endpoint_tokens"]["sent"], 100);

    let original: Vec<Json> = expected("new")["threads"]["system"]["state_messages"]
        .as_array()
        .expect("msgs")
        .clone();
    // trim_messages(max 3, include_system): system + the last 2 (starting on a human message).
    let kept = &original[original.len() - 2..];
    let older = &original[1..original.len() - 2];
    let reqs = server.requests();
    assert_eq!(reqs.len(), 1);
    let r = &reqs[0];
    assert_eq!(r.path, "/v1/chat/completions");
    assert_eq!(r.body["model"], "tiny-summarizer");
    assert_eq!(
        r.header("authorization"),
        Some(format!("Bearer {KEY}").as_str())
    );
    let prompt = r.prompt();
    for m in older {
        let text = m["content"].as_str().expect("text");
        assert!(
            prompt.contains(text),
            "the transcript carries {text:?}: {prompt}"
        );
    }
    for m in kept.iter().chain(std::iter::once(&original[0])) {
        let text = m["content"].as_str().expect("text");
        assert!(
            !prompt.contains(text),
            "kept/system message {text:?} must not be summarized"
        );
    }
    assert!(
        prompt.contains("Human: ") && prompt.contains("AI: "),
        "role prefixes: {prompt}"
    );
    assert!(
        prompt.contains("name")
            && prompt.contains("number")
            && prompt.contains("decisions")
            && prompt.contains("open tasks")
    );

    let state = run_json(&["dump", "--db", s(&db), "--thread", "system"]);
    let state = state.as_array().expect("messages");
    assert_eq!(state.len(), 4);
    assert_eq!(state[0], original[0], "the system message stays in place");
    assert_eq!(state[1]["type"], "human");
    assert_eq!(state[1]["additional_kwargs"]["lc_source"], "summarization");
    assert_eq!(
        state[1]["content"],
        "Here is a summary of the conversation to date:\n\nBob asked about the weather; it is sunny."
    );
    assert_eq!(&state[2..], kept);
}

#[test]
fn a_second_run_rolls_the_summary_forward() {
    let (_d, db) = temp_copy(&fixture("new.sqlite"));
    let server = ChatServer::start(|_, n| Reply::Summary(format!("summary number {n}")));
    assert!(
        summarize(&db, &server, &["--thread", "system", "--keep", "5"])
            .status
            .success()
    );
    let out = summarize(&db, &server, &["--thread", "system", "--keep", "3"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let reqs = server.requests();
    assert_eq!(reqs.len(), 2);
    assert!(
        reqs[1]
            .prompt()
            .contains("Earlier summary: summary number 0"),
        "{}",
        reqs[1].prompt()
    );
    let state = run_json(&["dump", "--db", s(&db), "--thread", "system"]);
    let summaries: Vec<&Json> = state
        .as_array()
        .expect("msgs")
        .iter()
        .filter(|m| m["additional_kwargs"]["lc_source"] == "summarization")
        .collect();
    assert_eq!(summaries.len(), 1, "summaries do not stack");
    assert!(summaries[0]["content"]
        .as_str()
        .is_some_and(|c| c.ends_with("summary number 1")));
}

#[test]
fn summary_key_stores_the_summary_in_a_channel() {
    let (_d, db) = temp_copy(&fixture("new.sqlite"));
    let server = ChatServer::start(|_, _| Reply::Summary("Alice likes tea.".into()));
    let out = summarize(
        &db,
        &server,
        &[
            "--thread",
            "custom-state",
            "--keep",
            "2",
            "--summary-key",
            "summary",
        ],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let prompt = server.requests()[0].prompt();
    assert!(
        prompt.contains("Earlier summary: 2 turn(s) so far"),
        "the old value feeds the new summary: {prompt}"
    );
    let shown = run_json(&[
        "show",
        "--db",
        s(&db),
        "--thread",
        "custom-state",
        "--format",
        "json",
    ]);
    assert_eq!(shown["values"]["summary"], "Alice likes tea.");
    assert_eq!(
        shown["values"]["user_id"], "user-42",
        "other channels untouched"
    );
    let msgs = shown["messages"].as_array().expect("msgs");
    assert_eq!(msgs.len(), 2);
    assert!(msgs
        .iter()
        .all(|m| m["additional_kwargs"]["lc_source"].is_null()));
}

#[test]
fn failures_write_nothing_and_say_so() {
    for (name, reply, extra) in [
        (
            "500",
            Reply::Status(500, "{\"error\": {\"message\": \"boom\"}}".into()),
            vec!["--retries", "2"],
        ),
        ("malformed", Reply::Malformed, vec![]),
        (
            "hang",
            Reply::Hang,
            vec!["--timeout", "1", "--retries", "1"],
        ),
        (
            "400",
            Reply::Status(
                400,
                "{\"error\": {\"message\": \"model not found\"}}".into(),
            ),
            vec!["--retries", "3"],
        ),
    ] {
        let (_d, db) = temp_copy(&fixture("new.sqlite"));
        let before = std::fs::read(&db).expect("read");
        let reply = std::sync::Mutex::new(Some(reply));
        let server = ChatServer::start(move |_, _| match &*reply.lock().expect("reply") {
            Some(Reply::Status(c, b)) => Reply::Status(*c, b.clone()),
            Some(Reply::Malformed) => Reply::Malformed,
            _ => Reply::Hang,
        });
        let mut args = vec!["--thread", "tools", "--keep", "2"];
        args.extend(extra.iter().copied());
        let out = summarize(&db, &server, &args);
        no_key_in(&out);
        // One thread asked for, one failed: an error (exit 1) with the reason on stderr.
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{name}: stderr {stderr}");
        assert!(
            stderr.contains("thread 'tools': failed: "),
            "{name}: {stderr}"
        );
        let report = stdout_json(&out);
        assert_eq!(report["threads"][0]["status"], "failed", "{name}: {report}");
        assert_eq!(
            std::fs::read(&db).expect("read"),
            before,
            "{name}: nothing written"
        );
        let n = server.requests().len();
        match name {
            "500" => assert_eq!(n, 3, "500 is retried twice"),
            "hang" => assert_eq!(n, 2, "a timeout is retried once"),
            "400" => {
                assert_eq!(n, 1, "a 4xx is not retried");
                assert!(
                    report["threads"][0]["notes"][0]
                        .as_str()
                        .is_some_and(|t| t.contains("model not found")),
                    "{report}"
                );
            }
            _ => assert_eq!(n, 1),
        }
    }
}

#[test]
fn rate_limits_are_retried() {
    let (_d, db) = temp_copy(&fixture("new.sqlite"));
    let server = ChatServer::start(|_, n| {
        if n == 0 {
            Reply::Status(429, "{\"error\": {\"message\": \"slow down\"}}".into())
        } else {
            Reply::Slow(
                Duration::from_millis(200),
                Box::new(Reply::Summary("ok summary".into())),
            )
        }
    });
    let out = summarize(&db, &server, &["--thread", "tools", "--keep", "2"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let report = stdout_json(&out);
    assert_eq!(report["threads"][0]["status"], "summarized");
    assert_eq!(server.requests().len(), 2);
}

#[test]
fn batch_selection_concurrency_and_failed_threads() {
    let (_d, db) = temp_copy(&fixture("new.sqlite"));
    // Threads whose transcript mentions Paris fail; the others succeed.
    let server = ChatServer::start(|r, _| {
        if r.prompt().contains("Paris") {
            Reply::Status(503, "{}".into())
        } else {
            Reply::Slow(
                Duration::from_millis(100),
                Box::new(Reply::Summary("batch summary".into())),
            )
        }
    });
    let out = summarize(
        &db,
        &server,
        &[
            "--all",
            "--min-tokens",
            "40",
            "--keep",
            "2",
            "--concurrency",
            "3",
            "--retries",
            "0",
        ],
    );
    assert_eq!(
        out.status.code(),
        Some(3),
        "some failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let report = stdout_json(&out);
    let status = |t: &str| {
        report["threads"]
            .as_array()
            .and_then(|a| a.iter().find(|r| r["thread_id"] == t))
            .map(|r| r["status"].clone())
    };
    assert_eq!(
        status("interrupt").unwrap_or_default(),
        Json::Null,
        "filtered out by --min-tokens"
    );
    assert_eq!(status("tools"), Some("failed".into()));
    assert_eq!(status("summarized"), Some("summarized".into()));
    let exp = expected("new");
    for row in report["threads"].as_array().expect("rows") {
        let t = row["thread_id"].as_str().expect("id");
        assert!(
            exp["threads"][t]["tokens_approx"]["total"].as_u64() >= Some(40),
            "{t} passed --min-tokens"
        );
    }
    // One set of totals, in the report (#46: a second tally on stderr grouped them otherwise).
    assert_eq!(report["totals"]["statuses"]["failed"], 1, "{report}");
    assert!(
        report["totals"]["endpoint_tokens"]["sent"].as_u64() > Some(0),
        "{report}"
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("skipped"), "{stderr}");
    assert!(stderr.contains("1 of 8 threads failed"), "{stderr}");
}

#[test]
fn dry_run_calls_nothing() {
    let (_d, db) = temp_copy(&fixture("new.sqlite"));
    let before = std::fs::read(&db).expect("read");
    let out = memctl()
        .args([
            "summarize",
            "--db",
            s(&db),
            "--all",
            "--keep",
            "2",
            "--dry-run",
            "--format",
            "json",
        ])
        .output()
        .expect("runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let report = stdout_json(&out);
    let rows = report["threads"].as_array().expect("rows");
    assert!(rows.iter().any(|r| r["status"] == "would summarize"));
    assert!(rows
        .iter()
        .any(|r| r["status"] == "skipped" && r["thread_id"] == "interrupt"));
    assert_eq!(std::fs::read(&db).expect("read"), before);
}

#[test]
fn a_thread_that_moves_during_the_call_is_not_overwritten() {
    let (_d, db) = temp_copy(&fixture("new.sqlite"));
    let (seen_tx, seen_rx) = std::sync::mpsc::channel::<()>();
    let (go_tx, go_rx) = std::sync::mpsc::channel::<()>();
    let (seen_tx, go_rx) = (std::sync::Mutex::new(seen_tx), std::sync::Mutex::new(go_rx));
    let server = ChatServer::start(move |_, _| {
        let _ = seen_tx.lock().expect("tx").send(());
        let _ = go_rx
            .lock()
            .expect("rx")
            .recv_timeout(Duration::from_secs(30));
        Reply::Summary("late summary".into())
    });
    let db2 = db.clone();
    let url = server.url.clone();
    let run = std::thread::spawn(move || {
        memctl()
            .args([
                "summarize",
                "--db",
                s(&db2),
                "--endpoint",
                &url,
                "--model",
                "m",
                "--thread",
                "tools",
                "--keep",
                "2",
            ])
            .args(["--format", "json"])
            .output()
            .expect("runs")
    });
    seen_rx
        .recv_timeout(Duration::from_secs(30))
        .expect("the request arrived");
    // The live app (here: another rewrite) adds a checkpoint meanwhile.
    let moved = run_json(&[
        "rm",
        "--db",
        s(&db),
        "--thread",
        "tools",
        "--index",
        "-1",
        "--format",
        "json",
    ]);
    assert_eq!(moved["threads"][0]["status"], "rewritten");
    go_tx.send(()).expect("release");
    let out = run.join().expect("joined");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let report = stdout_json(&out);
    assert_eq!(report["threads"][0]["status"], "skipped", "{report}");
    let state = run_json(&["dump", "--db", s(&db), "--thread", "tools"]);
    assert!(!state.to_string().contains("late summary"));
}

#[test]
fn a_transcript_over_the_input_budget_is_summarized_in_parts_and_nothing_is_left_out() {
    let (_d, db) = temp_copy(&fixture("new.sqlite"));
    let server = ChatServer::start(|_, n| Reply::Summary(format!("summary {n}")));
    let out = summarize(
        &db,
        &server,
        &[
            "--thread",
            "tools",
            "--keep",
            "2",
            "--max-input-tokens",
            "40",
        ],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let report = stdout_json(&out);
    assert_eq!(report["threads"][0]["status"], "summarized", "{report}");
    assert!(
        report["threads"][0]["notes"].to_string().contains("parts"),
        "{report}"
    );
    let reqs = server.requests();
    assert!(
        reqs.len() >= 3,
        "parts, then their summaries: {}",
        reqs.len()
    );
    // Every older message's text went to the model in some part.
    let sent: String = reqs.iter().map(|r| r.prompt()).collect();
    let original = expected("new")["threads"]["tools"]["state_messages"].clone();
    let msgs = original.as_array().expect("msgs");
    let removed: Vec<&Json> = report["threads"][0]["removed"]
        .as_array()
        .expect("removed")
        .iter()
        .map(|r| &msgs[r["index"].as_u64().expect("index") as usize])
        .collect();
    assert!(removed.len() >= 4, "{report}");
    for m in removed {
        let text = m["content"].as_str().unwrap_or("");
        for word in text.split_whitespace().filter(|w| w.len() > 3) {
            assert!(
                sent.contains(word),
                "{word:?} of {text:?} never reached the model"
            );
        }
    }
    // The last request combines the part summaries; its answer is the summary written.
    let last = reqs.last().expect("requests").prompt();
    assert!(last.contains("Summary of part 1 of"), "{last}");
    let dumped = run_json(&["dump", "--db", s(&db), "--thread", "tools"]);
    let n = reqs.len() - 1;
    assert!(
        dumped[0]["content"]
            .as_str()
            .is_some_and(|c| c.ends_with(&format!("summary {n}"))),
        "{dumped}"
    );
    // 0 is not a budget.
    let out = summarize(
        &db,
        &server,
        &[
            "--thread",
            "tools",
            "--keep",
            "2",
            "--max-input-tokens",
            "0",
        ],
    );
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn a_summary_key_the_thread_does_not_have_is_refused() {
    let (_d, db) = temp_copy(&fixture("new.sqlite"));
    let before = std::fs::read(&db).expect("read");
    let server = ChatServer::start(|_, _| Reply::Summary("lost".into()));
    let out = summarize(
        &db,
        &server,
        &[
            "--thread",
            "tools",
            "--keep",
            "2",
            "--summary-key",
            "nonexistent_channel",
        ],
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("no channel 'nonexistent_channel'") && stderr.contains("messages"),
        "names the channels it has: {stderr}"
    );
    assert_eq!(std::fs::read(&db).expect("read"), before, "nothing written");
    assert!(server.requests().is_empty(), "no model call");
    // In a batch the thread is skipped (and said why); --new-key writes it anyway.
    let out = summarize(
        &db,
        &server,
        &[
            "--all",
            "--keep",
            "2",
            "--summary-key",
            "nonexistent_channel",
            "--dry-run",
        ],
    );
    let report = stdout_json(&out);
    let tools = report["threads"]
        .as_array()
        .expect("rows")
        .iter()
        .find(|r| r["thread_id"] == "tools")
        .expect("tools");
    assert_eq!(tools["status"], "skipped", "{tools}");
    let out = summarize(
        &db,
        &server,
        &[
            "--thread",
            "tools",
            "--keep",
            "2",
            "--summary-key",
            "nonexistent_channel",
            "--new-key",
        ],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn a_batch_where_every_request_failed_is_an_error_that_says_nothing_was_written() {
    // Not "partly done … the other threads were written" (exit 3): nothing was written, so it
    // is an error (exit 1) that says so, after the report of each thread's failure.
    let (dir, db) = temp_copy(&fixture("new.sqlite"));
    let files = || {
        let mut all: Vec<(std::path::PathBuf, Vec<u8>)> = std::fs::read_dir(dir.path())
            .expect("dir")
            .map(|e| {
                let p = e.expect("entry").path();
                let bytes = std::fs::read(&p).expect("read");
                (p, bytes)
            })
            .collect();
        all.sort();
        all
    };
    let before = files();
    let server =
        ChatServer::start(|_, _| Reply::Status(500, "{\"error\": {\"message\": \"boom\"}}".into()));
    let out = summarize(
        &db,
        &server,
        &["--all", "--keep", "2", "--retries", "0", "--settle", "0s"],
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    let last = stderr.trim_end().lines().last().unwrap_or_default();
    assert!(
        last.contains("threads failed") && last.contains("nothing was written"),
        "{stderr}"
    );
    assert!(!stderr.contains("were written"), "{stderr}");
    let report = stdout_json(&out);
    let rows = report["threads"].as_array().expect("rows");
    assert!(rows.iter().any(|r| r["status"] == "failed"), "{report}");
    assert!(
        rows.iter()
            .all(|r| r["status"] != "summarized" && r["checkpoint_id"].is_null()),
        "{report}"
    );
    assert!(!server.requests().is_empty());
    assert!(before == files(), "nothing was written");
    // When some threads were written, the line counts them.
    let server = ChatServer::start(|r, _| {
        if r.prompt().contains("Paris") {
            Reply::Status(503, "{}".into())
        } else {
            Reply::Summary("batch summary".into())
        }
    });
    let out = summarize(
        &db,
        &server,
        &["--all", "--keep", "2", "--retries", "0", "--settle", "0s"],
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "{stderr}");
    let n = stdout_json(&out)["threads"]
        .as_array()
        .expect("rows")
        .iter()
        .filter(|r| r["status"] == "summarized")
        .count();
    assert!(n > 1, "{stderr}");
    assert!(
        stderr.contains(&format!("; {n} threads written")),
        "{stderr}"
    );
}

#[test]
fn the_progress_bar_moves_as_each_request_is_answered() {
    // On a terminal (a pseudo-terminal from util-linux `script`), the bar shows each thread's
    // summary as its request is answered, not a write batch (64 threads) at a time: the
    // server holds request k until the bar has shown k threads done.
    use std::io::Read;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::{Arc, Mutex};
    let (_d, db) = temp_copy(&fixture("new.sqlite"));
    let released = Arc::new(AtomicUsize::new(0));
    let gate = released.clone();
    let server = ChatServer::start(move |_, n| {
        // Poll for the test's go-ahead (bounded: the test fails long before).
        let deadline = std::time::Instant::now() + Duration::from_secs(120);
        while gate.load(Ordering::SeqCst) <= n && std::time::Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(10));
        }
        Reply::Summary(format!("summary {n}"))
    });
    let memctl_bin = assert_cmd::cargo::cargo_bin("memctl");
    let command = format!(
        "'{}' summarize --db '{}' --endpoint '{}' --model tiny --all --keep 2 --concurrency 1 --retries 0 --timeout 120 --settle 0s --format json",
        memctl_bin.display(),
        s(&db),
        server.url
    );
    let mut child = std::process::Command::new("script")
        .args(["-qefc", &command, "/dev/null"])
        .env_remove("LANGGRAPH_AES_KEY")
        .env_remove("MEMCTL_DB")
        .env("NO_COLOR", "1")
        .env("TERM", "xterm")
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("util-linux script runs");
    let seen = Arc::new(Mutex::new(String::new()));
    let mut pipe = child.stdout.take().expect("stdout");
    let sink = seen.clone();
    let reader = std::thread::spawn(move || {
        let mut buf = [0u8; 4096];
        while let Ok(n) = pipe.read(&mut buf) {
            if n == 0 {
                break;
            }
            let text = String::from_utf8_lossy(&buf[..n]).into_owned();
            sink.lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .push_str(&text);
        }
    });
    let output = || {
        seen.lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone()
    };
    let tail = |text: &str| {
        text.chars()
            .rev()
            .take(400)
            .collect::<Vec<_>>()
            .into_iter()
            .rev()
            .collect::<String>()
    };
    // The last position the bar drew (`] POS/TOTAL`), with its total.
    let drawn = || {
        let text = output();
        let at = text.rfind("] ")?;
        let (pos, total) = text[at + 2..].split_whitespace().next()?.split_once('/')?;
        Some((pos.parse::<usize>().ok()?, total.parse::<usize>().ok()?))
    };
    // Polls until `ready` holds (bounded).
    let poll = |ready: &dyn Fn() -> bool| {
        let deadline = std::time::Instant::now() + Duration::from_secs(60);
        while std::time::Instant::now() < deadline {
            if ready() {
                return true;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        false
    };
    // Request k is held; once it is answered the bar moves while request k + 1 is held.
    for k in 0..3 {
        assert!(
            poll(&|| server.requests().len() > k),
            "request {k} was made:\n{}",
            tail(&output())
        );
        assert!(poll(&|| drawn().is_some()), "a bar:\n{}", tail(&output()));
        let (before, total) = drawn().expect("drawn");
        assert!(total > 3, "{}", tail(&output()));
        released.store(k + 1, Ordering::SeqCst);
        assert!(
            poll(&|| server.requests().len() > k + 1),
            "request {} was made:\n{}",
            k + 1,
            tail(&output())
        );
        assert!(
            poll(&|| drawn().is_some_and(|(now, _)| now > before)),
            "the bar stayed at {before}/{total} after request {k} was answered (request {} is held):\n{}",
            k + 1,
            tail(&output())
        );
    }
    released.store(usize::MAX, Ordering::SeqCst);
    let status = child.wait().expect("memctl ends");
    reader.join().expect("reader");
    assert!(status.success(), "{}", tail(&output()));
}
