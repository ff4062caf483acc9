//! summarize's endpoint handling under hostile or broken input: secrets in the endpoint URL and
//! in a server's answer are never printed, redirects are reported and not followed, malformed
//! endpoints are usage errors, failures read as one sentence, and what is read is capped.
//! Against a real HTTP server on 127.0.0.1.

mod common;

use std::process::Output;
use std::time::{Duration, Instant};

use common::chat_server::{ChatServer, Reply};
use common::{fixture, memctl, s, temp_copy};
use serde_json::{json, Value as Json};

const KEY: &str = "sk-test-0123456789-secret";
const PASSWORD: &str = "hunter2-pw-7788";

/// `summarize --thread tools --keep 2` against `endpoint`, with the key in the environment.
fn summarize(db: &std::path::Path, endpoint: &str, extra: &[&str]) -> Output {
    memctl()
        .env("MEMCTL_TEST_KEY", KEY)
        .args(["summarize", "--db", s(db), "--endpoint", endpoint])
        .args(["--model", "m", "--api-key-env", "MEMCTL_TEST_KEY"])
        .args(["--thread", "tools", "--keep", "2"])
        .args(extra)
        .output()
        .expect("memctl runs")
}

fn all_output(out: &Output) -> String {
    format!(
        "{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

fn assert_hidden(out: &Output, secrets: &[&str]) {
    let all = all_output(out);
    for secret in secrets {
        assert!(!all.contains(secret), "{secret:?} was printed: {all}");
    }
}

/// The failure note of the one thread of a `--format json` run.
fn failure_note(out: &Output) -> String {
    let report: Json = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "bad JSON ({e}): {}\nstderr: {}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    });
    assert_eq!(report["threads"][0]["status"], "failed", "{report}");
    report["threads"][0]["notes"]
        .as_array()
        .and_then(|n| n.last())
        .and_then(Json::as_str)
        .unwrap_or_else(|| panic!("a note: {report}"))
        .to_owned()
}

/// `127.0.0.1:PORT` of a test server.
fn host_port(server: &ChatServer) -> String {
    server
        .url
        .trim_start_matches("http://")
        .trim_end_matches("/v1")
        .to_owned()
}

#[test]
fn credentials_and_keys_in_the_endpoint_url_are_never_printed() {
    // The server reflects the request (its path with the query, its Authorization header) in
    // its error message, as some proxies do.
    let server = ChatServer::start(|r, _| {
        let auth = r.header("authorization").unwrap_or("none");
        Reply::Status(
            401,
            json!({"error": {"message": format!("denied: authorization={auth} at {}", r.path)}})
                .to_string(),
        )
    });
    let secrets = [
        "qs-api-key-1111",
        "qs-token-2222",
        "qs-sig-3333",
        "qs-access-4444",
        "qs-apikey-5555",
        "qs-dash-6666",
    ];
    let endpoint = format!(
        "http://alice:{PASSWORD}@{}/v1?api_key={}&Token={}&SIG={}&access_token={}&APIKEY={}&api-key={}&api-version=2024-06-01",
        host_port(&server),
        secrets[0],
        secrets[1],
        secrets[2],
        secrets[3],
        secrets[4],
        secrets[5],
    );
    let mut hidden = vec![KEY, PASSWORD];
    hidden.extend(secrets);
    for format in ["json", "table"] {
        let (_d, db) = temp_copy(&fixture("new.sqlite"));
        let out = summarize(&db, &endpoint, &["--retries", "0", "--format", format]);
        assert_eq!(out.status.code(), Some(1), "{}", all_output(&out));
        assert_hidden(&out, &hidden);
        let all = all_output(&out);
        assert!(
            all.contains(&format!("http://alice:***@{}", host_port(&server))),
            "the user name stays, the password is redacted: {all}"
        );
        assert!(
            all.contains("api_key=***") && all.contains("Token=***") && all.contains("SIG=***"),
            "{all}"
        );
        assert!(
            all.contains("api-version=2024-06-01"),
            "other parameters stay: {all}"
        );
        assert!(
            all.contains("denied: authorization=Bearer ***"),
            "the server's message is shown, redacted: {all}"
        );
    }
    // The query stays a query: the path is added before it.
    let reqs = server.requests();
    assert!(
        reqs[0].path.starts_with("/v1/chat/completions?api_key="),
        "{}",
        reqs[0].path
    );
    assert_eq!(
        reqs[0].header("authorization"),
        Some(format!("Bearer {KEY}").as_str())
    );
}

#[test]
fn a_server_that_echoes_credentials_does_not_get_them_printed() {
    // Plain-text body reflecting the headers, and a second bearer token of its own.
    let server = ChatServer::start(|r, _| {
        let auth = r.header("authorization").unwrap_or("none").to_owned();
        Reply::Status(
            400,
            format!("bad request. headers: Authorization: {auth}; upstream Bearer tok-upstream-98765; key {KEY} as sent {}", KEY.replace('-', "%2D")),
        )
    });
    let (_d, db) = temp_copy(&fixture("new.sqlite"));
    let out = summarize(&db, &server.url, &["--retries", "0", "--format", "json"]);
    assert_eq!(out.status.code(), Some(1), "{}", all_output(&out));
    assert_hidden(
        &out,
        &[
            KEY,
            "tok-upstream-98765",
            &KEY.replace('-', "%2D"),
            "0123456789",
        ],
    );
    let note = failure_note(&out);
    assert!(
        note.starts_with(&format!(
            "HTTP 400 from {}/chat/completions: bad request.",
            server.url
        )),
        "{note}"
    );

    // Without an API key, the URL's user and password go as Basic auth; reflected, the
    // encoded pair is redacted too.
    let basic = {
        use base64::Engine;
        base64::engine::general_purpose::STANDARD.encode(format!("alice:{PASSWORD}"))
    };
    let endpoint = format!("http://alice:{PASSWORD}@{}/v1", host_port(&server));
    let (_d, db) = temp_copy(&fixture("new.sqlite"));
    let out = memctl()
        .env_remove("OPENAI_API_KEY")
        .args(["summarize", "--db", s(&db), "--endpoint", &endpoint])
        .args(["--model", "m", "--thread", "tools", "--keep", "2"])
        .args(["--retries", "0", "--format", "json"])
        .output()
        .expect("memctl runs");
    assert_eq!(out.status.code(), Some(1), "{}", all_output(&out));
    let sent = server.requests();
    assert_eq!(
        sent.last().and_then(|r| r.header("authorization")),
        Some(format!("Basic {basic}").as_str()),
        "the test server saw Basic auth"
    );
    assert_hidden(&out, &[PASSWORD, &basic]);
}

#[test]
fn a_redirect_is_reported_and_not_followed() {
    for code in [301, 302, 307, 308] {
        let elsewhere = ChatServer::start(|_, _| Reply::Summary("stolen".into()));
        let target = format!(
            "{}/chat/completions?api_key=redirect-secret-42",
            elsewhere.url
        );
        let server = ChatServer::start(move |_, _| Reply::Redirect(code, target.clone()));
        let (_d, db) = temp_copy(&fixture("new.sqlite"));
        let before = std::fs::read(&db).expect("read");
        let out = summarize(&db, &server.url, &["--retries", "2", "--format", "json"]);
        assert_eq!(out.status.code(), Some(1), "{code}: {}", all_output(&out));
        assert_hidden(&out, &[KEY, "redirect-secret-42"]);
        let note = failure_note(&out);
        assert_eq!(
            note,
            format!(
                "the endpoint answered with a redirect (HTTP {code}) to {}/chat/completions?api_key=***; give the final URL with --endpoint",
                elsewhere.url
            )
        );
        assert_eq!(
            server.requests().len(),
            1,
            "{code}: a redirect is not retried"
        );
        assert!(
            elsewhere.requests().is_empty(),
            "{code}: the redirect was followed"
        );
        assert_eq!(std::fs::read(&db).expect("read"), before, "nothing written");
    }
    // A path on the same host is shown as a full URL.
    let server = ChatServer::start(|_, _| {
        Reply::Redirect(301, "/v2/chat/completions?token=relative-secret-7".into())
    });
    let (_d, db) = temp_copy(&fixture("new.sqlite"));
    let out = summarize(&db, &server.url, &["--format", "json"]);
    assert_hidden(&out, &[KEY, "relative-secret-7"]);
    assert_eq!(
        failure_note(&out),
        format!(
            "the endpoint answered with a redirect (HTTP 301) to http://{}/v2/chat/completions?token=***; give the final URL with --endpoint",
            host_port(&server)
        )
    );
}

#[test]
fn a_malformed_endpoint_is_a_usage_error_before_any_database_work() {
    let dir = tempfile::tempdir().expect("temp dir");
    let missing_db = dir.path().join("missing.sqlite");
    for (endpoint, says) in [
        ("not-a-url", "not a URL"),
        ("", "empty"),
        ("   ", "empty"),
        ("ftp://files.example.com/v1", "http"),
        ("file:///tmp/v1", "http"),
        ("localhost:11434/v1", "http"),
        ("http://", "not a URL"),
        ("http://:8080/v1", "not a URL"),
        ("ftp://bob:ftp-secret-pw@example.com/", "http"),
    ] {
        let started = Instant::now();
        // A database that does not exist: an endpoint checked after the database would fail
        // on the database instead.
        let out = summarize(&missing_db, endpoint, &["--retries", "3"]);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{endpoint:?}: {stderr}");
        assert_eq!(stderr.trim_end().lines().count(), 1, "{stderr}");
        assert!(
            stderr.contains("--endpoint") && stderr.contains(says),
            "{endpoint:?}: {stderr}"
        );
        assert!(!stderr.contains("ftp-secret-pw"), "{stderr}");
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "{endpoint:?}: no retries"
        );
        assert!(!missing_db.exists(), "no database created");
    }
    // The same with --dry-run, which would not call it.
    let (_d, db) = temp_copy(&fixture("new.sqlite"));
    let out = memctl()
        .args(["summarize", "--db", s(&db), "--all", "--keep", "2"])
        .args(["--dry-run", "--endpoint", "ftp://example.com/v1"])
        .output()
        .expect("memctl runs");
    assert_eq!(
        out.status.code(),
        Some(2),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn a_connection_failure_is_one_clean_sentence() {
    // A port nothing listens on.
    let port = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
        l.local_addr().expect("addr").port()
    };
    let endpoint = format!("http://127.0.0.1:{port}/v1");
    let (_d, db) = temp_copy(&fixture("new.sqlite"));
    let out = summarize(&db, &endpoint, &["--retries", "1", "--format", "json"]);
    assert_eq!(out.status.code(), Some(1), "{}", all_output(&out));
    assert_eq!(
        failure_note(&out),
        format!("cannot reach {endpoint}/chat/completions: connection refused (after 2 attempts)")
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains(&format!(
            "cannot reach {endpoint}/chat/completions: connection refused (after 2 attempts)"
        )),
        "{stderr}"
    );

    // With credentials in the URL: redacted, and the sentence intact around them.
    let (_d, db) = temp_copy(&fixture("new.sqlite"));
    let out = summarize(
        &db,
        &format!("http://bob:{PASSWORD}@127.0.0.1:{port}/v1?api_key=qs-refused-1"),
        &["--retries", "0", "--format", "json"],
    );
    assert_eq!(
        failure_note(&out),
        format!(
            "cannot reach http://bob:***@127.0.0.1:{port}/v1/chat/completions?api_key=***: connection refused"
        )
    );

    // No answer at all: the timeout, said once.
    let server = ChatServer::start(|_, _| Reply::Hang);
    let (_d, db) = temp_copy(&fixture("new.sqlite"));
    let out = summarize(
        &db,
        &server.url,
        &["--timeout", "1", "--retries", "0", "--format", "json"],
    );
    assert_eq!(out.status.code(), Some(1), "{}", all_output(&out));
    assert_eq!(
        failure_note(&out),
        format!(
            "no answer from {}/chat/completions within 1 s (--timeout)",
            server.url
        )
    );
}

#[test]
fn the_prompt_file_is_capped_at_one_mib() {
    let (dir, db) = temp_copy(&fixture("new.sqlite"));
    let dry_run = |prompt: &std::path::Path| {
        memctl()
            .args([
                "summarize",
                "--db",
                s(&db),
                "--all",
                "--keep",
                "2",
                "--dry-run",
            ])
            .args(["--prompt-file", s(prompt)])
            .timeout(Duration::from_secs(60))
            .output()
            .expect("memctl runs")
    };
    let template = |len: usize| {
        let mut t = "Summarize: {messages}\n".to_owned();
        t.push_str(&"x".repeat(len - t.len()));
        t
    };
    let exact = dir.path().join("exact.txt");
    std::fs::write(&exact, template(1 << 20)).expect("write");
    let out = dry_run(&exact);
    assert!(out.status.success(), "{}", all_output(&out));

    let over = dir.path().join("over.txt");
    std::fs::write(&over, template((1 << 20) + 1)).expect("write");
    let out = dry_run(&over);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains(s(&over)) && stderr.contains("larger than 1 MiB"),
        "{stderr}"
    );

    // A file that never ends: refused after reading the cap.
    let zero = std::path::Path::new("/dev/zero");
    if zero.exists() {
        let started = Instant::now();
        let out = dry_run(zero);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{stderr}");
        assert!(
            stderr.contains("/dev/zero") && stderr.contains("larger than 1 MiB"),
            "{stderr}"
        );
        assert!(started.elapsed() < Duration::from_secs(30));
    }
}

#[test]
fn the_answer_is_capped_at_16_mib() {
    // 12 MiB: over ureq's own 10 MB limit for into_string, under memctl's cap.
    let padded = json!({
        "choices": [{"message": {"role": "assistant", "content": "padded summary"}}],
        "padding": "x".repeat(12 << 20),
    })
    .to_string();
    let server = ChatServer::start(move |_, _| Reply::Status(200, padded.clone()));
    let (_d, db) = temp_copy(&fixture("new.sqlite"));
    let out = summarize(&db, &server.url, &["--retries", "0", "--format", "json"]);
    assert!(out.status.success(), "{}", all_output(&out));

    let huge = format!("{{\"padding\": \"{}\"}}", "x".repeat(17 << 20));
    let server = ChatServer::start(move |_, _| Reply::Status(200, huge.clone()));
    let (_d, db) = temp_copy(&fixture("new.sqlite"));
    let out = summarize(&db, &server.url, &["--retries", "0", "--format", "json"]);
    assert_eq!(out.status.code(), Some(1), "{}", all_output(&out));
    let note = failure_note(&out);
    assert!(
        note.contains("the endpoint's answer is larger than 16 MiB"),
        "{note}"
    );
}
