//! A small blocking client for `POST {endpoint}/chat/completions`.
//!
//! One user message in, the assistant's text out, with a per-request timeout and retries with
//! exponential backoff on 429, 5xx, timeouts and connection errors; other 4xx answers fail at
//! once with the server's message. The API key is sent as a bearer token and never appears in
//! an error or a log line: everything shown about the endpoint (its URL, a redirect's
//! `Location`, the server's message) goes through [`Secrets::redact`].
//!
//! Redirects are not followed (the key would go to whatever host the `Location` names): a 3xx
//! is reported with its target. The endpoint must be an http or https URL with a host
//! ([`check_endpoint`]); its answer is read up to [`MAX_ANSWER`] bytes.

use std::io::Read;
use std::time::Duration;

use serde_json::{json, Value as Json};

use super::redact::Secrets;

/// The most memctl reads of an endpoint's answer (16 MiB): a summary is a few kilobytes.
pub const MAX_ANSWER: u64 = 16 << 20;

/// The most memctl reads of an error answer (only its first 200 characters are shown).
const MAX_ERROR_BODY: u64 = 64 << 10;

/// Where and how to call.
#[derive(Clone)]
pub struct ChatClient {
    /// Where requests go, credentials included: never shown.
    request_url: String,
    /// `request_url` with its credentials redacted: the only form ever shown.
    url: String,
    secrets: Secrets,
    model: String,
    api_key: Option<String>,
    agent: ureq::Agent,
    timeout: Duration,
    retries: u32,
    backoff: Duration,
}

impl std::fmt::Debug for ChatClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ChatClient")
            .field("url", &self.url)
            .field("model", &self.model)
            .field("api_key", &self.api_key.as_ref().map(|_| "<set>"))
            .finish()
    }
}

/// A completion and what the endpoint reported it cost.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Completion {
    /// The assistant's text, trimmed.
    pub text: String,
    /// `usage.prompt_tokens`, when reported.
    pub prompt_tokens: Option<u64>,
    /// `usage.completion_tokens`, when reported.
    pub completion_tokens: Option<u64>,
    /// How many attempts it took.
    pub attempts: u32,
}

/// Why a call failed (after retries, where retrying made sense). The text is redacted.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct CallError(pub String);

/// Why an endpoint URL cannot be used (nothing was called). The text is redacted.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct InvalidEndpoint(pub String);

/// Checks that `endpoint` is an http or https URL with a host, as ureq will parse it.
pub fn check_endpoint(endpoint: &str) -> Result<(), InvalidEndpoint> {
    const HINT: &str = "give the API base URL, e.g. http://localhost:11434/v1";
    let endpoint = endpoint.trim();
    if endpoint.is_empty() {
        return Err(InvalidEndpoint(format!("--endpoint is empty; {HINT}")));
    }
    let shown = Secrets::for_endpoint(endpoint, None).redact(endpoint);
    if !endpoint.contains("://") {
        return Err(InvalidEndpoint(format!(
            "--endpoint '{shown}' is not a URL (it should start with http:// or https://); {HINT}"
        )));
    }
    let parsed = match ureq::agent().post(endpoint).request_url() {
        Ok(u) => u,
        Err(e) => {
            let why = e
                .into_transport()
                .and_then(|t| std::error::Error::source(&t).map(ToString::to_string))
                .unwrap_or_else(|| "it does not parse".into());
            return Err(InvalidEndpoint(format!(
                "--endpoint '{shown}' is not a URL ({why}); {HINT}"
            )));
        }
    };
    let scheme = parsed.scheme();
    if scheme != "http" && scheme != "https" {
        return Err(InvalidEndpoint(format!(
            "--endpoint '{shown}' is not an http or https URL (its scheme is '{scheme}'); {HINT}"
        )));
    }
    if parsed.host().is_empty() {
        return Err(InvalidEndpoint(format!(
            "--endpoint '{shown}' is not a URL (no host); {HINT}"
        )));
    }
    Ok(())
}

/// `{endpoint}/chat/completions`, the query (if any) kept after the path; unchanged when
/// the endpoint already ends with `/chat/completions`.
fn completions_url(endpoint: &str) -> String {
    let endpoint = endpoint.trim();
    let endpoint = endpoint.split_once('#').map_or(endpoint, |(u, _)| u);
    let (base, query) = match endpoint.split_once('?') {
        Some((b, q)) => (b, Some(q)),
        None => (endpoint, None),
    };
    let base = base.trim_end_matches('/');
    let mut url = if base.ends_with("/chat/completions") {
        base.to_owned()
    } else {
        format!("{base}/chat/completions")
    };
    if let Some(q) = query.filter(|q| !q.is_empty()) {
        url.push('?');
        url.push_str(q);
    }
    url
}

impl ChatClient {
    /// A client for `endpoint` (the base URL, e.g. `http://localhost:11434/v1`, or the full
    /// `…/chat/completions` URL; a query string is kept). Fails when the endpoint is not an
    /// http or https URL with a host ([`check_endpoint`]).
    pub fn new(
        endpoint: &str,
        model: &str,
        api_key: Option<String>,
        timeout: Duration,
        retries: u32,
    ) -> Result<ChatClient, InvalidEndpoint> {
        check_endpoint(endpoint)?;
        let request_url = completions_url(endpoint);
        let secrets = Secrets::for_endpoint(&request_url, api_key.as_deref());
        let url = secrets.redact(&request_url);
        // No redirects: the key must not go to another host, and a moved endpoint should be
        // fixed in --endpoint rather than followed on every call.
        let agent = ureq::AgentBuilder::new()
            .timeout(timeout)
            .redirects(0)
            .build();
        Ok(ChatClient {
            request_url,
            url,
            secrets,
            model: model.to_owned(),
            api_key,
            agent,
            timeout,
            retries,
            backoff: Duration::from_millis(500),
        })
    }

    /// Sets the first backoff delay (doubled on each retry).
    pub fn with_backoff(mut self, backoff: Duration) -> ChatClient {
        self.backoff = backoff;
        self
    }

    /// The URL requests go to, with its credentials redacted (the form to show).
    pub fn url(&self) -> &str {
        &self.url
    }

    /// Sends one user message and returns the reply.
    pub fn complete(&self, prompt: &str) -> Result<Completion, CallError> {
        let body = json!({
            "model": self.model,
            "messages": [{"role": "user", "content": prompt}],
            "stream": false,
        })
        .to_string();
        let mut attempt = 0;
        loop {
            attempt += 1;
            let mut req = self
                .agent
                .post(&self.request_url)
                .set("Content-Type", "application/json");
            if let Some(key) = &self.api_key {
                req = req.set("Authorization", &format!("Bearer {key}"));
            }
            let (retryable, why, retry_after) = match req.send_string(&body) {
                Ok(resp) if (300..400).contains(&resp.status()) => {
                    return Err(CallError(self.redirect(&resp)));
                }
                Ok(resp) => {
                    let text = self.read_answer(resp)?;
                    return parse_completion(&text, attempt);
                }
                Err(ureq::Error::Status(code, resp)) => {
                    let retry_after = resp
                        .header("retry-after")
                        .and_then(|v| v.trim().parse::<u64>().ok())
                        .map(|s| Duration::from_secs(s.min(60)));
                    let detail = error_detail(&read_capped(resp, MAX_ERROR_BODY), &self.secrets);
                    let retryable = code == 429 || code >= 500;
                    (
                        retryable,
                        format!("HTTP {code} from {}: {detail}", self.url),
                        retry_after,
                    )
                }
                Err(ureq::Error::Transport(t)) => (true, self.transport_failure(&t), None),
            };
            if !retryable || attempt > self.retries {
                let tries = if attempt > 1 {
                    format!(" (after {attempt} attempts)")
                } else {
                    String::new()
                };
                return Err(CallError(format!("{why}{tries}")));
            }
            let delay = retry_after.unwrap_or(self.backoff * 2u32.saturating_pow(attempt - 1));
            std::thread::sleep(delay);
        }
    }

    /// The failure for a 3xx answer: where it points (redacted), and what to do.
    fn redirect(&self, resp: &ureq::Response) -> String {
        let location = match resp.header("location").map(str::trim) {
            None | Some("") => "nowhere (no Location header)".to_owned(),
            // A path on the same host: shown with the endpoint's origin.
            Some(path) if path.starts_with('/') && !path.starts_with("//") => {
                let origin_end = self
                    .url
                    .find("://")
                    .and_then(|i| self.url[i + 3..].find('/').map(|j| i + 3 + j))
                    .unwrap_or(self.url.len());
                self.secrets
                    .redact(&format!("{}{path}", &self.url[..origin_end]))
            }
            Some(other) => self.secrets.redact(other),
        };
        format!(
            "the endpoint answered with a redirect (HTTP {}) to {location}; give the final URL with --endpoint",
            resp.status()
        )
    }

    /// A 2xx answer's body, at most [`MAX_ANSWER`] bytes.
    fn read_answer(&self, resp: ureq::Response) -> Result<String, CallError> {
        let mut buf = Vec::new();
        resp.into_reader()
            .take(MAX_ANSWER + 1)
            .read_to_end(&mut buf)
            .map_err(|e| {
                CallError(format!(
                    "reading the answer from {} failed: {}",
                    self.url,
                    self.secrets.redact(&io_reason(&e, self.timeout))
                ))
            })?;
        if buf.len() as u64 > MAX_ANSWER {
            return Err(CallError(format!(
                "the endpoint's answer is larger than {} MiB, the most memctl reads; check that {} is a chat completions endpoint",
                MAX_ANSWER >> 20,
                self.url
            )));
        }
        Ok(String::from_utf8_lossy(&buf).into_owned())
    }

    /// One sentence for a failure below HTTP (connection, DNS, timeout, not HTTP at all),
    /// built from ureq's error kind and the deepest underlying error: ureq's own `Display`
    /// repeats the URL and its kind at each layer it wraps.
    fn transport_failure(&self, t: &ureq::Transport) -> String {
        let url = &self.url;
        let mut io_error: Option<&std::io::Error> = None;
        let mut deepest: Option<&(dyn std::error::Error + 'static)> = None;
        let mut next = std::error::Error::source(t);
        while let Some(e) = next {
            if let Some(io) = e.downcast_ref::<std::io::Error>() {
                io_error = Some(io);
            }
            deepest = Some(e);
            next = e.source();
        }
        // Only the underlying error's text is redacted: the URL already is.
        let detail = self.secrets.redact(
            &deepest
                .map(ToString::to_string)
                .or_else(|| t.message().map(str::to_owned))
                .unwrap_or_else(|| t.kind().to_string().to_lowercase()),
        );
        let timed_out = io_error.is_some_and(|e| {
            matches!(
                e.kind(),
                std::io::ErrorKind::TimedOut | std::io::ErrorKind::WouldBlock
            )
        });
        if timed_out {
            format!(
                "no answer from {url} within {} (--timeout)",
                seconds(self.timeout)
            )
        } else {
            match t.kind() {
                ureq::ErrorKind::Dns => {
                    format!("cannot reach {url}: the host name does not resolve ({detail})")
                }
                ureq::ErrorKind::BadStatus | ureq::ErrorKind::BadHeader => {
                    format!("{url} did not answer in HTTP ({detail})")
                }
                _ => match io_error {
                    Some(io) => format!(
                        "cannot reach {url}: {}",
                        self.secrets.redact(&io_reason(io, self.timeout))
                    ),
                    None => format!("cannot reach {url}: {detail}"),
                },
            }
        }
    }
}

/// What an I/O error on the connection means, in words.
fn io_reason(e: &std::io::Error, timeout: Duration) -> String {
    use std::io::ErrorKind as K;
    match e.kind() {
        K::ConnectionRefused => "connection refused".into(),
        K::ConnectionReset => "the connection was reset".into(),
        K::ConnectionAborted | K::UnexpectedEof => {
            "the connection closed before the answer was complete".into()
        }
        K::BrokenPipe => "the connection closed while the request was sent".into(),
        K::TimedOut | K::WouldBlock => format!("no answer within {} (--timeout)", seconds(timeout)),
        // The innermost message: ureq wraps some I/O errors in its own error, which repeats
        // its kind ("Network Error: …").
        _ => {
            let mut deepest: &(dyn std::error::Error + 'static) = e;
            while let Some(inner) = deepest.source() {
                deepest = inner;
            }
            deepest.to_string()
        }
    }
}

/// `1 s`, `2.5 s`.
fn seconds(d: Duration) -> String {
    if d.subsec_millis() == 0 {
        format!("{} s", d.as_secs())
    } else {
        format!("{:.1} s", d.as_secs_f64())
    }
}

/// At most `cap` bytes of an answer's body, as text (an unreadable body is empty).
fn read_capped(resp: ureq::Response, cap: u64) -> String {
    let mut buf = Vec::new();
    let _ = resp.into_reader().take(cap).read_to_end(&mut buf);
    String::from_utf8_lossy(&buf).into_owned()
}

/// The server's error message (`{"error": {"message": …}}`), redacted and shortened.
fn error_detail(body: &str, secrets: &Secrets) -> String {
    let msg = serde_json::from_str::<Json>(body)
        .ok()
        .and_then(|j| {
            j.get("error")
                .and_then(|e| e.get("message").or(Some(e)))
                .map(|m| m.as_str().map_or_else(|| m.to_string(), str::to_owned))
        })
        .unwrap_or_else(|| body.to_owned());
    // Redacted before it is cut: a secret cut in half would no longer match.
    let msg = secrets.redact(&msg);
    let flat: String = msg.split_whitespace().collect::<Vec<_>>().join(" ");
    if flat.chars().count() > 200 {
        format!("{}…", flat.chars().take(200).collect::<String>())
    } else if flat.is_empty() {
        "(no message)".into()
    } else {
        flat
    }
}

fn parse_completion(text: &str, attempts: u32) -> Result<Completion, CallError> {
    let j: Json = serde_json::from_str(text)
        .map_err(|e| CallError(format!("the endpoint answered with invalid JSON ({e})")))?;
    let content = j
        .pointer("/choices/0/message/content")
        .and_then(Json::as_str)
        .ok_or_else(|| {
            CallError("the endpoint's answer has no choices[0].message.content".into())
        })?;
    let text = content.trim().to_owned();
    if text.is_empty() {
        return Err(CallError("the endpoint returned an empty summary".into()));
    }
    Ok(Completion {
        text,
        prompt_tokens: j.pointer("/usage/prompt_tokens").and_then(Json::as_u64),
        completion_tokens: j.pointer("/usage/completion_tokens").and_then(Json::as_u64),
        attempts,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_openai_answers() {
        let c = parse_completion(
            r#"{"choices":[{"message":{"role":"assistant","content":"  Alice wants tea. "}}],"usage":{"prompt_tokens":12,"completion_tokens":4}}"#,
            1,
        )
        .expect("parses");
        assert_eq!(c.text, "Alice wants tea.");
        assert_eq!((c.prompt_tokens, c.completion_tokens), (Some(12), Some(4)));
        assert!(parse_completion("{not json", 1).is_err());
        assert!(parse_completion(r#"{"choices":[]}"#, 1).is_err());
    }

    #[test]
    fn urls_and_error_details() {
        let c = ChatClient::new(
            "http://h:1/v1/",
            "m",
            Some("sk-secret".into()),
            Duration::from_secs(1),
            0,
        )
        .expect("a valid endpoint");
        assert_eq!(c.url(), "http://h:1/v1/chat/completions");
        assert!(!format!("{c:?}").contains("sk-secret"));
        let none = Secrets::default();
        assert_eq!(
            error_detail(r#"{"error":{"message":"bad model"}}"#, &none),
            "bad model"
        );
        assert_eq!(error_detail("", &none), "(no message)");
    }

    #[test]
    fn the_query_stays_after_the_path() {
        assert_eq!(
            completions_url("https://h/openai/v1/?api-version=1&key=k#frag"),
            "https://h/openai/v1/chat/completions?api-version=1&key=k"
        );
        assert_eq!(
            completions_url(" http://h/v1/chat/completions/ "),
            "http://h/v1/chat/completions"
        );
        assert_eq!(completions_url("http://h?"), "http://h/chat/completions");
    }

    #[test]
    fn credentials_in_the_url_are_never_shown() {
        let c = ChatClient::new(
            "http://bob:pa55word@h/v1?api_key=query-key-1&api-version=2",
            "m",
            Some("sk-secret-key".into()),
            Duration::from_secs(1),
            0,
        )
        .expect("a valid endpoint");
        assert_eq!(
            c.url(),
            "http://bob:***@h/v1/chat/completions?api_key=***&api-version=2"
        );
        let debug = format!("{c:?}");
        assert!(
            !debug.contains("pa55word") && !debug.contains("query-key-1"),
            "{debug}"
        );
        // A server's message that reflects them.
        let detail = error_detail(
            r#"{"error":{"message":"no: Bearer sk-secret-key for http://bob:pa55word@h/v1?api_key=query-key-1"}}"#,
            &c.secrets,
        );
        assert_eq!(detail, "no: Bearer *** for http://bob:***@h/v1?api_key=***");
        // Cut after redaction: no half key at the cut.
        let long = format!("{} sk-secret-key", "x".repeat(190));
        let detail = error_detail(&long, &c.secrets);
        assert!(!detail.contains("sk-sec"), "{detail}");
    }

    #[test]
    fn endpoints_that_are_not_http_urls_are_refused() {
        for ok in [
            "http://localhost:11434/v1",
            "https://api.openai.com/v1",
            "HTTP://h",
            " http://h/v1 ",
        ] {
            assert_eq!(check_endpoint(ok), Ok(()), "{ok}");
        }
        for (bad, says) in [
            ("", "empty"),
            ("not-a-url", "not a URL"),
            ("ftp://h/v1", "scheme is 'ftp'"),
            ("localhost:11434/v1", "should start with http://"),
            ("http://", "not a URL"),
            ("http://:80/v1", "not a URL"),
        ] {
            let e = check_endpoint(bad).expect_err(bad).to_string();
            assert!(e.contains(says) && e.contains("--endpoint"), "{bad}: {e}");
        }
        let e = ChatClient::new("ftp://u:secret-pw@h/", "m", None, Duration::from_secs(1), 0)
            .expect_err("ftp");
        assert!(e.to_string().contains("ftp://u:***@h/"), "redacted: {e}");
    }
}
