//! Keeping credentials out of what memctl prints.
//!
//! An endpoint URL may carry a password (`http://user:pass@host/v1`) or a key in its query
//! (`?api_key=…`), and a server's answer may reflect the request's `Authorization` header.
//! Everything memctl shows about an endpoint (its URL, a `Location`, a server's message) goes
//! through [`Secrets::redact`] first:
//!
//! - the exact secrets memctl knows (the API key, the URL's password and key parameters, the
//!   Basic credentials ureq derives from the URL) become `***` wherever they appear, also
//!   percent-encoded (`sk%2D…`, in any case and any mix of encoded and plain characters, as
//!   a server reflecting a request's URL or form body writes them); where two occurrences
//!   overlap or touch (two secrets sharing characters, `abcd1234` and `1234wxyz` in
//!   `abcd1234wxyz`) their union becomes one `***`, so no piece of either is left;
//! - in any URL, the userinfo password becomes `***` (the user name stays);
//! - the values of key parameters ([`SECRET_PARAMS`], any case) become `***`;
//! - `Bearer …` tokens become `Bearer ***`.

use std::ops::Range;
use std::sync::LazyLock;

use base64::Engine;
use regex::{Captures, Regex};

use crate::ops::patterns::{replace_spans, union};

/// What a redacted secret is replaced with.
pub const MASK: &str = "***";

/// Names of query (or `name=value`) parameters whose values are secrets, compared
/// case-insensitively.
pub const SECRET_PARAMS: &[&str] = &[
    "api_key",
    "api-key",
    "apikey",
    "x-api-key",
    "key",
    "token",
    "access_token",
    "sig",
    "signature",
    "password",
    "secret",
    "client_secret",
];

/// Exact secrets shorter than this are not searched for: they would match ordinary words
/// (a key that short is not a real key). The patterns still apply.
const MIN_EXACT: usize = 4;

/// `scheme://user:password@`: the password, up to the last `@` of the authority.
static USERINFO: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)\b([a-z][a-z0-9+.\-]*://)([^\s/?#@:]*):([^\s/?#]*)@").expect("a valid pattern")
});

/// `name=value`, the name starting after a non-name character (or at the start); the value
/// does not end with `:` or `.` (punctuation of the text around it, as in `key=abc: denied`).
static PARAM: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r#"(^|[^A-Za-z0-9_.\-])([A-Za-z0-9_.\-]+)=((?:[^&\s#"'<>,;]*[^&\s#"'<>,;:.])?)"#)
        .expect("a valid pattern")
});

/// `Bearer <token>`.
static BEARER: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)\b(bearer)(\s+)([A-Za-z0-9._~+/=\-]+)").expect("a valid pattern")
});

/// The secrets of one endpoint, to be removed from anything shown about it.
#[derive(Clone, Default)]
pub struct Secrets {
    /// Each secret once (all of their occurrences are found in the original text and masked
    /// together, see [`Secrets::redact`]).
    exact: Vec<String>,
}

impl std::fmt::Debug for Secrets {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Secrets({} redacted)", self.exact.len())
    }
}

impl Secrets {
    /// The secrets of a call to `url` with `api_key`: the key itself, the URL's password
    /// (as written and percent-decoded), the Basic credentials derived from the URL's
    /// userinfo, and the values of its key parameters.
    pub fn for_endpoint(url: &str, api_key: Option<&str>) -> Secrets {
        let mut s = Secrets::default();
        if let Some(key) = api_key {
            s.add(key);
        }
        if let Some((user, password)) = userinfo(url) {
            if let Some(password) = password {
                s.add(password);
                s.add(&percent_decode(password));
            }
            let pair = format!("{user}:{}", password.unwrap_or(""));
            s.add(&base64::engine::general_purpose::STANDARD.encode(pair));
        }
        let query = url.split_once('?').map_or("", |(_, q)| q);
        let query = query.split_once('#').map_or(query, |(q, _)| q);
        for pair in query.split(['&', ';']) {
            if let Some((name, value)) = pair.split_once('=') {
                if is_secret_param(&percent_decode(name)) {
                    s.add(value);
                    s.add(&percent_decode(value));
                }
            }
        }
        s
    }

    /// Adds one exact secret (ignored when shorter than 4 characters).
    pub fn add(&mut self, secret: &str) {
        if secret.chars().count() < MIN_EXACT || self.exact.iter().any(|e| e == secret) {
            return;
        }
        self.exact.push(secret.to_owned());
    }

    /// `text` with every known secret, URL password, key parameter and bearer token
    /// replaced by `***`. The known secrets are found in the original text, every occurrence
    /// of each (plain, and percent-encoded), overlapping ones too; the union of their byte
    /// ranges is masked, each stretch where occurrences overlap or touch by one `***`.
    pub fn redact(&self, text: &str) -> String {
        let mut spans = Vec::new();
        for secret in &self.exact {
            plain_spans(text, secret, &mut spans);
            if text.contains('%') {
                encoded_spans(text, secret, &mut spans);
            }
        }
        let out = match spans.is_empty() {
            true => text.to_owned(),
            false => replace_spans(text, &union(spans), MASK),
        };
        redact_patterns(&out)
    }
}

/// Adds the byte range of every occurrence of `secret` in `text` (overlapping ones too) to
/// `spans`.
fn plain_spans(text: &str, secret: &str, spans: &mut Vec<Range<usize>>) {
    let mut from = 0;
    while let Some(pos) = text.get(from..).and_then(|t| t.find(secret)) {
        let start = from + pos;
        spans.push(start..start + secret.len());
        // The next occurrence may start inside this one, at its next character.
        from = start + text[start..].chars().next().map_or(1, char::len_utf8);
    }
}

/// `text` with URL passwords, key parameters and bearer tokens replaced by `***` (no exact
/// secrets: see [`Secrets::redact`]).
pub fn redact_patterns(text: &str) -> String {
    let out = USERINFO.replace_all(text, |c: &Captures| format!("{}{}:{MASK}@", &c[1], &c[2]));
    let out = PARAM.replace_all(&out, |c: &Captures| {
        if is_secret_param(&c[2]) && !c[3].is_empty() {
            format!("{}{}={MASK}", &c[1], &c[2])
        } else {
            c[0].to_owned()
        }
    });
    let out = BEARER.replace_all(&out, |c: &Captures| format!("{}{}{MASK}", &c[1], &c[2]));
    out.into_owned()
}

/// Whether `name` is one of [`SECRET_PARAMS`] (any case).
fn is_secret_param(name: &str) -> bool {
    SECRET_PARAMS.iter().any(|p| p.eq_ignore_ascii_case(name))
}

/// The user and password of `scheme://user:password@host…`, as written.
fn userinfo(url: &str) -> Option<(&str, Option<&str>)> {
    let (_, rest) = url.split_once("://")?;
    let authority = &rest[..rest.find(['/', '?', '#']).unwrap_or(rest.len())];
    let (info, _) = authority.rsplit_once('@')?;
    Some(match info.split_once(':') {
        Some((user, password)) => (user, Some(password)),
        None => (info, None),
    })
}

/// Adds the byte range of every stretch of `text` that percent-decodes to `secret` (`%XX` in
/// either case, mixed with plain characters; overlapping ones too) to `spans`.
fn encoded_spans(text: &str, secret: &str, spans: &mut Vec<Range<usize>>) {
    let bytes = text.as_bytes();
    // The decoded bytes, and where each one starts in `text`.
    let mut decoded = Vec::with_capacity(bytes.len());
    let mut starts = Vec::with_capacity(bytes.len() + 1);
    let mut i = 0;
    while i < bytes.len() {
        let hex = bytes
            .get(i + 1..i + 3)
            .filter(|_| bytes[i] == b'%')
            .and_then(|h| std::str::from_utf8(h).ok())
            .and_then(|h| u8::from_str_radix(h, 16).ok());
        starts.push(i);
        match hex {
            Some(b) => {
                decoded.push(b);
                i += 3;
            }
            None => {
                decoded.push(bytes[i]);
                i += 1;
            }
        }
    }
    starts.push(bytes.len());
    let needle = secret.as_bytes();
    if needle.is_empty() || decoded.len() == bytes.len() {
        return;
    }
    let mut from = 0;
    while let Some(pos) = decoded[from..]
        .windows(needle.len())
        .position(|w| w == needle)
    {
        let (start, end) = (from + pos, from + pos + needle.len());
        let (text_start, text_end) = (starts[start], starts[end]);
        if text.is_char_boundary(text_start) && text.is_char_boundary(text_end) {
            spans.push(text_start..text_end);
        }
        from = start + 1;
    }
}

/// `%XX` sequences decoded (invalid ones and non-UTF-8 results kept as written).
fn percent_decode(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = bytes
            .get(i + 1..i + 3)
            .and_then(|h| std::str::from_utf8(h).ok())
            .and_then(|h| u8::from_str_radix(h, 16).ok());
        match (bytes[i], hex) {
            (b'%', Some(b)) => {
                out.push(b);
                i += 3;
            }
            (b, _) => {
                out.push(b);
                i += 1;
            }
        }
    }
    String::from_utf8(out).unwrap_or_else(|_| text.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn r(text: &str) -> String {
        Secrets::default().redact(text)
    }

    #[test]
    fn userinfo_passwords_are_masked_and_user_names_kept() {
        assert_eq!(
            r("http://user:pass@host/v1/chat/completions"),
            "http://user:***@host/v1/chat/completions"
        );
        assert_eq!(r("https://u:p@ss@h:8080/v1"), "https://u:***@h:8080/v1");
        assert_eq!(r("HTTP://:only-pw@h/"), "HTTP://:***@h/");
        // A user name alone, no userinfo, or an @ later in the path: unchanged.
        for same in [
            "http://user@host/v1",
            "http://host/v1",
            "http://host/a:b@c",
            "mail me at a:b@c",
        ] {
            assert_eq!(r(same), same);
        }
        // Inside text, each URL on its own.
        assert_eq!(
            r("from http://a:x1@h1/v1 to https://b:x2@h2/v1."),
            "from http://a:***@h1/v1 to https://b:***@h2/v1."
        );
    }

    #[test]
    fn key_parameters_are_masked_in_any_case() {
        assert_eq!(
            r("http://h/v1?api_key=s1&Token=s2&SIG=s3&model=gpt&api-version=2024-06-01"),
            "http://h/v1?api_key=***&Token=***&SIG=***&model=gpt&api-version=2024-06-01"
        );
        for name in [
            "key",
            "KEY",
            "token",
            "access_token",
            "api-key",
            "apikey",
            "ApiKey",
            "sig",
            "signature",
            "Signature",
        ] {
            assert_eq!(
                r(&format!("http://h/?a=1&{name}=abc%2Fdef#frag")),
                format!("http://h/?a=1&{name}=***#frag"),
                "{name}"
            );
        }
        // In a server's message, too; names that merely end like one are not keys.
        assert_eq!(
            r("bad request: key=abc123, monkey=banana; \"token=t0k\""),
            "bad request: key=***, monkey=banana; \"token=***\""
        );
        assert_eq!(r("keystone=1&turkey=2"), "keystone=1&turkey=2");
        // Punctuation after the value stays; masking twice changes nothing.
        assert_eq!(
            r("http://h/?key=abc: refused. token=x.y. sig=: empty"),
            "http://h/?key=***: refused. token=***. sig=: empty"
        );
        let once = r("http://u:p@h/v1?api_key=k1&token=k2: refused");
        assert_eq!(once, "http://u:***@h/v1?api_key=***&token=***: refused");
        assert_eq!(r(&once), once);
    }

    #[test]
    fn bearer_tokens_are_masked() {
        assert_eq!(
            r("Authorization: Bearer sk-abc.DEF_123/+=; next"),
            "Authorization: Bearer ***; next"
        );
        assert_eq!(r("authorization=bearer\txyz"), "authorization=bearer\t***");
    }

    #[test]
    fn the_endpoints_own_secrets_are_masked_wherever_they_appear() {
        let url = "http://alice:p%40ss-word@h/v1?api_key=qk-1%2B2&api-version=2024&sig=zz";
        let s = Secrets::for_endpoint(url, Some("sk-live-key-9876"));
        // The key in a JSON body, the decoded password, the decoded query key, the Basic pair.
        let basic = base64::engine::general_purpose::STANDARD.encode("alice:p%40ss-word");
        let text = format!(
            "{{\"api_key\": \"sk-live-key-9876\"}} pw p@ss-word q qk-1+2 basic {basic} version 2024"
        );
        assert_eq!(
            s.redact(&text),
            "{\"api_key\": \"***\"} pw *** q *** basic *** version 2024"
        );
        assert_eq!(
            s.redact(url),
            "http://alice:***@h/v1?api_key=***&api-version=2024&sig=***"
        );
        let debug = format!("{s:?}");
        assert!(!debug.contains("sk-live"), "{debug}");
        // Short values are not searched for alone (the patterns still apply).
        let s = Secrets::for_endpoint("http://h/v1?key=ab", Some("xyz"));
        assert_eq!(s.redact("xyz ab key=ab"), "xyz ab key=***");
    }

    #[test]
    fn percent_encoded_secrets_are_masked_like_plain_ones() {
        let s = Secrets::for_endpoint("http://h/v1", Some("sk-live-key-9876"));
        let full: String = "sk-live-key-9876"
            .bytes()
            .map(|b| format!("%{b:02x}"))
            .collect();
        assert_eq!(
            s.redact(&format!(
                "echo: key=sk%2Dlive%2Dkey%2D9876&x=1 body {full}; mixed sk%2dlive-key%2D9876."
            )),
            "echo: key=***&x=1 body ***; mixed ***."
        );
        // Text around it, other encodings and a lone % stay as they are.
        assert_eq!(s.redact("100% of a%20b é%C3%A9"), "100% of a%20b é%C3%A9");
        let mut spans = Vec::new();
        encoded_spans("x%41y", "A", &mut spans);
        assert_eq!(spans, vec![(1..4)]);
    }

    #[test]
    fn overlapping_secrets_are_masked_whole() {
        let mut s = Secrets::default();
        s.add("abcd1234");
        s.add("1234wxyz");
        // Overlapping, touching, nested, apart; in either order of adding.
        let text = "a abcd1234wxyz b abcd12341234wxyz c 1234wxyzabcd1234 d abcd1234 e";
        let want = "a *** b *** c *** d *** e";
        assert_eq!(s.redact(text), want);
        let mut t = Secrets::default();
        t.add("1234wxyz");
        t.add("abcd1234");
        assert_eq!(t.redact(text), want);
        let mut nested = Secrets::default();
        nested.add("cd12");
        nested.add("abcd1234");
        assert_eq!(nested.redact("xabcd1234y cd12"), "x***y ***");
        // One secret overlapping itself: every occurrence goes.
        let mut same = Secrets::default();
        same.add("aaaa");
        assert_eq!(same.redact("xaaaaay"), "x***y");
        // Percent-encoded, overlapping a plain one, across multi-byte characters.
        let mut s = Secrets::default();
        s.add("gé-1234");
        s.add("1234-ü9");
        assert_eq!(s.redact("[g%C3%A9-1234-ü9]"), "[***]");
        assert_eq!(s.redact("[gé-1234%2D%C3%BC9] é"), "[***] é");
        for shown in [s.redact("gé-1234-ü9"), s.redact("g%c3%a9%2D1234-%C3%BC9")] {
            assert_eq!(shown, "***");
        }
    }

    #[test]
    fn percent_decoding() {
        assert_eq!(percent_decode("a%2Fb+c%zz%4"), "a/b+c%zz%4");
        assert_eq!(percent_decode("%ff"), "%ff");
    }
}
