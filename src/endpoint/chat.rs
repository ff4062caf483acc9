//! A small blocking client for `POST {endpoint}/chat/completions`.
//!
//! One user message in, the assistant's text out, with a per-request timeout and retries with
//! exponential backoff on 429, 5xx, timeouts and connection errors; other 4xx answers fail at
//! once with the server's message. The API key is sent as a bearer token and never appears in
//! an error or a log line.

use std::time::Duration;

use serde_json::{json, Value as Json};

/// Where and how to call.
#[derive(Clone)]
pub struct ChatClient {
    url: String,
    model: String,
    api_key: Option<String>,
    agent: ureq::Agent,
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

/// Why a call failed (after retries, where retrying made sense).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CallError(pub String);

impl std::fmt::Display for CallError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for CallError {}

impl ChatClient {
    /// A client for `endpoint` (the base URL, e.g. `http://localhost:11434/v1`, or the full
    /// `…/chat/completions` URL).
    pub fn new(
        endpoint: &str,
        model: &str,
        api_key: Option<String>,
        timeout: Duration,
        retries: u32,
    ) -> ChatClient {
        let base = endpoint.trim_end_matches('/');
        let url = if base.ends_with("/chat/completions") {
            base.to_owned()
        } else {
            format!("{base}/chat/completions")
        };
        let agent = ureq::AgentBuilder::new().timeout(timeout).build();
        ChatClient {
            url,
            model: model.to_owned(),
            api_key,
            agent,
            retries,
            backoff: Duration::from_millis(500),
        }
    }

    /// Sets the first backoff delay (doubled on each retry).
    pub fn with_backoff(mut self, backoff: Duration) -> ChatClient {
        self.backoff = backoff;
        self
    }

    /// The URL requests go to.
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
                .post(&self.url)
                .set("Content-Type", "application/json");
            if let Some(key) = &self.api_key {
                req = req.set("Authorization", &format!("Bearer {key}"));
            }
            let (retryable, why, retry_after) = match req.send_string(&body) {
                Ok(resp) => {
                    let text = resp.into_string().map_err(|e| {
                        CallError(format!("reading the answer from {} failed: {e}", self.url))
                    })?;
                    return parse_completion(&text, attempt);
                }
                Err(ureq::Error::Status(code, resp)) => {
                    let retry_after = resp
                        .header("retry-after")
                        .and_then(|v| v.trim().parse::<u64>().ok())
                        .map(|s| Duration::from_secs(s.min(60)));
                    let detail = error_detail(resp.into_string().unwrap_or_default());
                    let retryable = code == 429 || code >= 500;
                    (
                        retryable,
                        format!("HTTP {code} from {}: {detail}", self.url),
                        retry_after,
                    )
                }
                Err(ureq::Error::Transport(t)) => {
                    (true, format!("cannot reach {}: {t}", self.url), None)
                }
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
}

/// The server's error message (`{"error": {"message": …}}`), shortened.
fn error_detail(body: String) -> String {
    let msg = serde_json::from_str::<Json>(&body)
        .ok()
        .and_then(|j| {
            j.get("error")
                .and_then(|e| e.get("message").or(Some(e)))
                .map(|m| m.as_str().map_or_else(|| m.to_string(), str::to_owned))
        })
        .unwrap_or(body);
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
        );
        assert_eq!(c.url(), "http://h:1/v1/chat/completions");
        assert!(!format!("{c:?}").contains("sk-secret"));
        assert_eq!(
            error_detail(r#"{"error":{"message":"bad model"}}"#.into()),
            "bad model"
        );
        assert_eq!(error_detail(String::new()), "(no message)");
    }
}
