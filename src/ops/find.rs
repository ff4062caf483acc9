//! What `find` matches: a literal or a regular expression, optionally case-insensitive, over
//! message text; `key=value` conditions on metadata and state; and the excerpt a hit shows.

use anyhow::{bail, Context, Result};
use serde_json::Value as Json;

/// A search pattern, compiled twice: over text, and over stored bytes (a checkpoint blob holds
/// message text as raw UTF-8, so a blob without a byte match holds no matching message and is
/// not decoded at all).
#[derive(Debug, Clone)]
pub struct Pattern {
    text: regex::Regex,
    bytes: regex::bytes::Regex,
}

/// True when `re` matches every text: it matches the empty string (`''`, `.*`, `^`, `x*`…),
/// so it matches at some place in any message. `find`, `forget` and `rm` refuse such a
/// pattern: an unset shell variable (`--match "$SECRET"`) must never select everything.
pub fn matches_everything(re: &regex::Regex) -> bool {
    re.is_match("")
}

impl Pattern {
    /// `pattern` as a literal (the default) or a regular expression, matched with or without
    /// case.
    /// An empty pattern, or one that matches every text (see [`matches_everything`]), is
    /// refused.
    pub fn new(pattern: &str, regex: bool, ignore_case: bool) -> Result<Pattern> {
        if pattern.is_empty() {
            bail!("the search pattern is empty");
        }
        let source = if regex {
            pattern.to_owned()
        } else {
            regex::escape(pattern)
        };
        let build = |s: &str| {
            regex::RegexBuilder::new(s)
                .case_insensitive(ignore_case)
                .build()
        };
        let text = build(&source).context("the pattern is not a valid regular expression")?;
        if matches_everything(&text) {
            bail!("the pattern matches the empty string, so it matches every text");
        }
        let bytes = regex::bytes::RegexBuilder::new(&source)
            .case_insensitive(ignore_case)
            .unicode(true)
            .build()
            .context("the pattern is not a valid regular expression")?;
        Ok(Pattern { text, bytes })
    }

    /// The pattern over text.
    pub fn regex(&self) -> &regex::Regex {
        &self.text
    }

    /// The pattern over bytes (stored blobs, a database file's pages).
    pub fn bytes_regex(&self) -> &regex::bytes::Regex {
        &self.bytes
    }

    /// True when the stored bytes could hold a match (false: no message in them matches).
    pub fn maybe_in(&self, stored: &[u8]) -> bool {
        self.bytes.is_match(stored)
    }

    /// The first match in `text`, as a byte range.
    pub fn find(&self, text: &str) -> Option<std::ops::Range<usize>> {
        self.text.find(text).map(|m| m.range())
    }
}

/// A `KEY=VALUE` condition on a thread's metadata or state.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MetaCondition {
    /// The key (a metadata key, a `configurable` key the app passed, or a state channel).
    pub key: String,
    /// The value, compared with the stored value's text (strings as they are, numbers and
    /// booleans as JSON prints them).
    pub value: String,
}

impl MetaCondition {
    /// Parses `KEY=VALUE`.
    pub fn parse(s: &str) -> Result<MetaCondition> {
        match s.split_once('=') {
            Some((k, v)) if !k.is_empty() => Ok(MetaCondition {
                key: k.to_owned(),
                value: v.to_owned(),
            }),
            _ => bail!("--meta takes KEY=VALUE (e.g. --meta user_id=42), not '{s}'"),
        }
    }

    /// True when `stored` (a JSON value found under the key) equals the condition's value.
    pub fn matches(&self, stored: &Json) -> bool {
        match stored {
            Json::String(s) => *s == self.value,
            Json::Number(_) | Json::Bool(_) => {
                let printed = stored.to_string();
                printed == self.value
            }
            Json::Null => self.value == "null" || self.value == "None",
            _ => false,
        }
    }
}

/// Characters of context on each side of a hit in its excerpt.
pub const CONTEXT_CHARS: usize = 40;

/// The excerpt of a hit: up to [`CONTEXT_CHARS`] characters before and after `hit` (a byte
/// range of `text`), with `…` where text was cut; returned as (before, match, after), raw (the
/// output layer makes it safe for a terminal).
pub fn excerpt(text: &str, hit: std::ops::Range<usize>) -> (String, String, String) {
    let before_all = &text[..hit.start];
    let after_all = &text[hit.end..];
    let n_before = before_all.chars().count();
    let mut before: String = before_all
        .chars()
        .skip(n_before.saturating_sub(CONTEXT_CHARS))
        .collect();
    if n_before > CONTEXT_CHARS {
        before.insert(0, '…');
    }
    let mut after: String = after_all.chars().take(CONTEXT_CHARS).collect();
    if after_all.chars().nth(CONTEXT_CHARS).is_some() {
        after.push('…');
    }
    (before, text[hit].to_owned(), after)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn literal_patterns_are_not_regexes_and_case_is_optional() {
        let p = Pattern::new("a.b", false, false).expect("compiles");
        assert_eq!(p.find("xa.by"), Some(1..4));
        assert_eq!(p.find("xaxby"), None);
        let p = Pattern::new("Paris", false, true).expect("compiles");
        assert_eq!(p.find("in PARIS today"), Some(3..8));
        assert!(p.maybe_in("…paris…".as_bytes()));
        assert!(!p.maybe_in(b"london"));
        let p = Pattern::new(r"user-\d+", true, false).expect("compiles");
        assert_eq!(p.find("id user-42."), Some(3..10));
        assert!(Pattern::new("(", true, false).is_err());
        // A pattern that matches the empty string matches every message: refused.
        for every in [".*", "^", "$", "x*", "(?:)", "a|"] {
            assert!(Pattern::new(every, true, false).is_err(), "{every}");
        }
        assert!(Pattern::new("", false, false).is_err());
        assert!(
            Pattern::new(".*", false, false).is_ok(),
            "a literal '.*' is not every text"
        );
        assert!(Pattern::new("", false, false).is_err());
    }

    #[test]
    fn meta_conditions_compare_text() {
        let c = MetaCondition::parse("user_id=42").expect("parses");
        assert!(c.matches(&json!(42)));
        assert!(c.matches(&json!("42")));
        assert!(!c.matches(&json!(43)));
        assert!(!c.matches(&json!({"user_id": 42})));
        assert!(MetaCondition::parse("=x").is_err());
        assert!(MetaCondition::parse("novalue").is_err());
        assert_eq!(MetaCondition::parse("k=a=b").expect("parses").value, "a=b");
    }

    #[test]
    fn excerpts_cut_long_context_on_character_boundaries() {
        let text = format!("{}needle{}", "é".repeat(50), "😀".repeat(50));
        let hit = text.find("needle").map(|s| s..s + 6).expect("found");
        let (b, m, a) = excerpt(&text, hit);
        assert_eq!(m, "needle");
        assert_eq!(b, format!("…{}", "é".repeat(CONTEXT_CHARS)));
        assert_eq!(a, format!("{}…", "😀".repeat(CONTEXT_CHARS)));
        let (b, _, a) = excerpt("a needle b", 2..8);
        assert_eq!((b.as_str(), a.as_str()), ("a ", " b"));
    }
}
