//! What a redaction erases from a text, one rule for every command that erases by pattern
//! (`export --redact`, `forget --match`, `rm --match --purge`): the union of every pattern's
//! matches in the original text. Each pattern is searched on its own (leftmost-first, as the
//! regex crate, `find` and every Perl-style engine match: within one pattern, alternation
//! takes the first alternative that matches at a place), and the byte ranges of all their
//! matches are merged where they overlap or touch; each merged range becomes [`ERASED`] once.
//! Two patterns `ZQSECRET` and `ZQSECRET-\d+` thus erase the whole `ZQSECRET-3` in either
//! order, where one regex `(?:ZQSECRET)|(?:ZQSECRET-\d+)` would erase only `ZQSECRET`.
//!
//! What had to go is kept for the verification: every pattern's own match, and every merged
//! range's text (see [`Patterns::note_matches`]).

use std::ops::Range;

use regex::Regex;

pub use crate::ops::purge::ERASED;

/// The patterns of one redaction (one for `forget --match` and `rm --match`, any number for
/// `export --redact`), each kept as its own regular expression.
#[derive(Debug, Clone)]
pub struct Patterns {
    res: Vec<Regex>,
}

impl Patterns {
    /// The patterns `res`, searched each on its own.
    pub fn new(res: Vec<Regex>) -> Patterns {
        Patterns { res }
    }

    /// One pattern.
    pub fn one(re: Regex) -> Patterns {
        Patterns { res: vec![re] }
    }

    /// The patterns, in the order given.
    pub fn regexes(&self) -> &[Regex] {
        &self.res
    }

    /// The patterns compiled over bytes (a file's raw pages), in the order given.
    pub fn bytes_regexes(&self) -> Result<Vec<regex::bytes::Regex>, regex::Error> {
        self.res
            .iter()
            .map(|re| regex::bytes::Regex::new(re.as_str()))
            .collect()
    }

    /// True when one of the patterns matches somewhere in `text` (as [`Regex::is_match`]:
    /// what selects a message).
    pub fn is_match(&self, text: &str) -> bool {
        self.res.iter().any(|re| re.is_match(text))
    }

    /// Every pattern's non-empty matches in `text`, unmerged, in pattern order; `None` when
    /// no pattern matches at all, `Some(empty)` when they match only the empty string at some
    /// place (which erases nothing).
    fn matches(&self, text: &str) -> Option<Vec<Range<usize>>> {
        let mut any = false;
        let mut found = Vec::new();
        for re in &self.res {
            for m in re.find_iter(text) {
                any = true;
                if !m.is_empty() {
                    found.push(m.range());
                }
            }
        }
        any.then_some(found)
    }

    /// The byte ranges of `text` the patterns erase: the union of every pattern's
    /// (non-empty) matches, sorted, ranges that overlap or touch merged into one.
    pub fn spans(&self, text: &str) -> Vec<Range<usize>> {
        union(self.matches(text).unwrap_or_default())
    }

    /// `text` with each of its [`Patterns::spans`] replaced by [`ERASED`] once; `None` when
    /// there is nothing to erase in it.
    pub fn erase(&self, text: &str) -> Option<String> {
        let spans = self.spans(text);
        (!spans.is_empty()).then(|| replace_spans(text, &spans, ERASED))
    }

    /// Calls `note` with every text of `text` that has to go: each pattern's own matches and
    /// each merged span's text (the same text may come more than once). Returns true when a
    /// pattern matches (see [`Patterns::is_match`]).
    pub fn note_matches(&self, text: &str, note: &mut dyn FnMut(&str)) -> bool {
        let Some(found) = self.matches(text) else {
            return false;
        };
        for r in &found {
            note(&text[r.clone()]);
        }
        for r in union(found) {
            note(&text[r]);
        }
        true
    }
}

/// `spans` (byte ranges) sorted and merged where they overlap or touch; empty ones dropped.
pub fn union(mut spans: Vec<Range<usize>>) -> Vec<Range<usize>> {
    spans.retain(|r| r.start < r.end);
    spans.sort_by_key(|r| (r.start, r.end));
    let mut out: Vec<Range<usize>> = Vec::with_capacity(spans.len());
    for r in spans {
        match out.last_mut() {
            Some(last) if r.start <= last.end => last.end = last.end.max(r.end),
            _ => out.push(r),
        }
    }
    out
}

/// `text` with each of `spans` (sorted, disjoint byte ranges on character boundaries, as
/// [`union`] gives them) replaced by `marker`.
pub fn replace_spans(text: &str, spans: &[Range<usize>], marker: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut copied = 0;
    for r in spans {
        out.push_str(&text[copied..r.start]);
        out.push_str(marker);
        copied = r.end;
    }
    out.push_str(&text[copied..]);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn patterns(ps: &[&str]) -> Patterns {
        Patterns::new(
            ps.iter()
                .map(|p| Regex::new(p).expect("compiles"))
                .collect(),
        )
    }

    fn noted(p: &Patterns, text: &str) -> std::collections::BTreeSet<String> {
        let mut out = std::collections::BTreeSet::new();
        p.note_matches(text, &mut |t| {
            out.insert(t.to_owned());
        });
        out
    }

    #[test]
    fn overlapping_patterns_erase_the_union_in_either_order() {
        let text = "password is ZQSECRET-3, again ZQSECRET";
        for ps in [["ZQSECRET", r"ZQSECRET-\d+"], [r"ZQSECRET-\d+", "ZQSECRET"]] {
            let p = patterns(&ps);
            assert_eq!(
                p.erase(text).as_deref(),
                Some("password is [erased], again [erased]"),
                "{ps:?}"
            );
            assert_eq!(
                noted(&p, text).into_iter().collect::<Vec<_>>(),
                ["ZQSECRET", "ZQSECRET-3"],
                "every pattern's own match and the merged span, {ps:?}"
            );
        }
        // One regex with alternation is leftmost-first: what `find` shows it matching.
        let joined = patterns(&[r"ZQSECRET|ZQSECRET-\d+"]);
        assert_eq!(
            joined.erase("is ZQSECRET-3").as_deref(),
            Some("is [erased]-3")
        );
    }

    #[test]
    fn overlap_adjacency_and_nesting_merge_into_one_marker() {
        // Overlap: abcd and cdef in abcdef.
        let p = patterns(&["abcd", "cdef"]);
        assert_eq!(p.spans("xabcdefx"), vec![(1..7)]);
        assert_eq!(p.erase("xabcdefx").as_deref(), Some("x[erased]x"));
        assert_eq!(
            noted(&p, "xabcdefx").into_iter().collect::<Vec<_>>(),
            ["abcd", "abcdef", "cdef"]
        );
        // Adjacency: two touching matches, of two patterns or of one, are one erased stretch.
        let p = patterns(&["abc", "def"]);
        assert_eq!(
            p.erase("abcdef abc def").as_deref(),
            Some("[erased] [erased] [erased]")
        );
        let p = patterns(&[r"\d{2}"]);
        assert_eq!(p.erase("a123456b").as_deref(), Some("a[erased]b"));
        // Nesting: one match inside another.
        let p = patterns(&["b", "abc"]);
        assert_eq!(p.spans("abc b"), [0..3, 4..5]);
        assert_eq!(p.erase("abc b").as_deref(), Some("[erased] [erased]"));
        // Apart, and no match at all.
        let p = patterns(&["a", "c"]);
        assert_eq!(p.erase("abc").as_deref(), Some("[erased]b[erased]"));
        assert_eq!(p.erase("xyz"), None);
        assert!(!p.note_matches("xyz", &mut |_| {}));
    }

    #[test]
    fn spans_follow_character_boundaries() {
        // Multi-byte characters on both sides of the meeting point.
        let p = patterns(&["Grüß", "ße€", "€🏯"]);
        let text = "xGrüße€🏯y";
        assert_eq!(p.spans(text), vec![(1..text.len() - 1)]);
        assert_eq!(p.erase(text).as_deref(), Some("x[erased]y"));
        let p = patterns(&["北", "京"]);
        assert_eq!(p.erase("在北京 🏯").as_deref(), Some("在[erased] 🏯"));
        let mut texts = Vec::new();
        patterns(&["é+", "e\u{301}"])
            .note_matches("aéé e\u{301}b", &mut |t| texts.push(t.to_owned()));
        assert!(texts.iter().all(|t| !t.is_empty()), "{texts:?}");
        assert!(texts.contains(&"éé".to_owned()), "{texts:?}");
    }

    #[test]
    fn empty_matches_erase_nothing_but_still_match() {
        let p = patterns(&[r"\b"]);
        assert!(p.is_match("word"));
        assert_eq!(p.erase("word"), None);
        let mut n = 0;
        assert!(p.note_matches("word", &mut |_| n += 1));
        assert_eq!(n, 0);
        assert_eq!(union(vec![3..3, 5..9, 1..2, 2..4]), [1..4, 5..9]);
        assert_eq!(replace_spans("0123456789", &[0..1, 4..6], "*"), "*123*6789");
    }

    #[test]
    fn bytes_regexes_match_what_the_text_ones_match() {
        let p = patterns(&["Grüße", r"ZQ-\d+"]);
        let raw = p.bytes_regexes().expect("compiles");
        assert!(raw[0].is_match("x Grüße y".as_bytes()));
        assert!(raw[1].is_match(b"\xff ZQ-7"));
        assert!(!raw.iter().any(|re| re.is_match(b"ZQ- Gruesse")));
    }
}
