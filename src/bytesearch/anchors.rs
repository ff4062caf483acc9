//! Many long strings searched through a short beginning of each (its anchor): an
//! Aho-Corasick automaton over whole strings takes tens of bytes of memory per byte of
//! pattern, which for the thousands of message texts a `forget` erases at 10 GB was 850 MiB.
//! Over anchors of about [`ANCHOR`] bytes it takes a small multiple of the strings' count, and
//! every anchor found is checked against the whole string it begins (one comparison), so what
//! is reported is exactly every whole occurrence, as a search for the whole strings would.

use aho_corasick::AhoCorasick;
use anyhow::{Context, Result};

/// The shortest anchor of a longer form, in bytes. Long enough that a window of natural text is rare (few
/// anchors found where their string is not), short enough that the automaton stays small.
pub const ANCHOR: usize = 24;

/// An automaton over the anchors of some strings ("forms"; the caller keeps their bytes).
pub struct Anchors {
    search: AhoCorasick,
    /// The same anchors in a SIMD search (Teddy), when there are few enough of them and the
    /// machine has the instructions: whether a short haystack holds any of them, several
    /// times faster than the automaton, whose own prefilter is reset at every haystack.
    quick: Option<aho_corasick::packed::Searcher>,
    /// For each pattern of `search`: the forms it begins (more than one only for equal forms).
    owners: Vec<Vec<usize>>,
}

impl Anchors {
    /// The search for `forms` (index, bytes); `None` when there are none.
    pub fn new<'a>(forms: impl IntoIterator<Item = (usize, &'a [u8])>) -> Result<Option<Anchors>> {
        let mut patterns: Vec<&'a [u8]> = Vec::new();
        let mut owners: Vec<Vec<usize>> = Vec::new();
        for (form, anchor) in anchors_of(forms.into_iter().collect()) {
            if patterns.last() != Some(&anchor) {
                patterns.push(anchor);
                owners.push(Vec::new());
            }
            if let Some(o) = owners.last_mut() {
                o.push(form);
            }
        }
        if patterns.is_empty() {
            return Ok(None);
        }
        let search = AhoCorasick::new(&patterns)
            .context("cannot build the search for the removed strings")?;
        let quick = aho_corasick::packed::Config::new()
            .builder()
            .extend(&patterns)
            .build();
        Ok(Some(Anchors {
            search,
            quick,
            owners,
        }))
    }

    /// Whether `hay` may hold a form (an anchor is in it; not yet checked whole).
    pub fn may_hold(&self, hay: &[u8]) -> bool {
        match &self.quick {
            Some(q) => q.find(hay).is_some(),
            None => self.search.is_match(hay),
        }
    }

    /// Calls `f` with each form whose whole bytes (`bytes_of(form)`) are in `hay`, once per
    /// occurrence (in any order); stops early when `f` returns false.
    pub fn each_in<'b>(
        &self,
        hay: &[u8],
        bytes_of: &dyn Fn(usize) -> &'b [u8],
        f: &mut dyn FnMut(usize) -> bool,
    ) {
        // Most haystacks (a freed part of a page, a value) hold no anchor at all: told by the
        // quick search before the overlapping one walks every byte.
        if self.quick.is_some() && !self.may_hold(hay) {
            return;
        }
        for m in self.search.find_overlapping_iter(hay) {
            for &form in &self.owners[m.pattern().as_usize()] {
                let whole = bytes_of(form);
                if hay.get(m.start()..m.start() + whole.len()) == Some(whole) && !f(form) {
                    return;
                }
            }
        }
    }
}

/// Each form's anchor, in the forms' byte order: the shortest beginning of it, at least
/// [`ANCHOR`] bytes (or the whole form), that no other form begins with. A beginning is what
/// the automaton's own prefilter skips on (a window from the middle made the search a third
/// slower), and a unique one means an anchor found is checked against one form, however many
/// forms share their first words (a header every tool output starts with).
fn anchors_of(mut forms: Vec<(usize, &[u8])>) -> Vec<(usize, &[u8])> {
    forms.sort_unstable_by(|a, b| a.1.cmp(b.1));
    let shared = |a: &[u8], b: &[u8]| a.iter().zip(b).take_while(|(x, y)| x == y).count();
    let mut next_shared: Vec<usize> = forms.windows(2).map(|w| shared(w[0].1, w[1].1)).collect();
    next_shared.push(0);
    let mut before = 0;
    forms
        .iter()
        .zip(next_shared)
        .map(|(&(form, bytes), after)| {
            let len = (before.max(after) + 1).max(ANCHOR).min(bytes.len());
            before = after;
            (form, &bytes[..len])
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn found(forms: &[&str], hay: &str) -> Vec<usize> {
        let a = Anchors::new(forms.iter().enumerate().map(|(i, f)| (i, f.as_bytes())))
            .expect("built")
            .expect("some");
        let mut out = Vec::new();
        a.each_in(hay.as_bytes(), &|i| forms[i].as_bytes(), &mut |i| {
            out.push(i);
            true
        });
        out.sort_unstable();
        out
    }

    #[test]
    fn reports_whole_occurrences_only() {
        let long = "the quick brown fox jumps over the lazy dog again and again";
        let other = "the quick brown fox jumps over the lazy dog and then sleeps";
        // Both begin alike: only the string actually there is reported.
        assert_eq!(
            found(&[long, other, "dog"], &format!("..{long}..")),
            vec![0, 2]
        );
        assert!(found(
            &[long, other],
            "the quick brown fox jumps over the lazy dog"
        )
        .is_empty());
        // A string cut at the haystack's start or end is not whole in it.
        assert!(found(&[long], &long[1..]).is_empty());
        assert!(found(&[long], &long[..long.len() - 1]).is_empty());
    }

    #[test]
    fn anchors_are_unique_beginnings() {
        let header = "timestamp,host,cpu,memory,disk\n";
        let forms: Vec<String> = (0..5).map(|i| format!("{header}{i},a")).collect();
        let bytes: Vec<(usize, &[u8])> = forms
            .iter()
            .enumerate()
            .map(|(i, f)| (i, f.as_bytes()))
            .collect();
        for (form, anchor) in anchors_of(bytes) {
            // The header and the digit that tells them apart.
            assert_eq!(anchor, &forms[form].as_bytes()[..header.len() + 1]);
        }
        // A form that begins another is its own whole anchor; equal forms share one.
        let anchors = anchors_of(vec![(0, b"abc".as_slice()), (1, b"abcd"), (2, b"abc")]);
        assert_eq!(
            anchors,
            vec![(0, b"abc".as_slice()), (2, b"abc"), (1, b"abcd")]
        );
    }

    #[test]
    fn equal_and_nested_forms_and_overlapping_hits() {
        let a = "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxab";
        let b = "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxabcd";
        assert_eq!(found(&[a, b, "abcd"], &format!("{a}cdxx")), vec![0, 1, 2]);
        assert_eq!(found(&[a, b, a], &format!("{a}..")), vec![0, 2]);
        // Two occurrences are two reports.
        assert_eq!(found(&["abab"], "abababab"), vec![0, 0, 0]);
    }

    #[test]
    fn none_without_forms() {
        assert!(Anchors::new(std::iter::empty()).expect("built").is_none());
    }

    /// The quick search answers as the automaton does, on haystacks short and long, with and
    /// without an anchor, at either end.
    #[test]
    fn the_quick_search_agrees_with_the_automaton() {
        let forms = [
            "u-50000",
            "t-106103",
            "Lisbon lisbon meeting jazz tokyo",
            "Lisbon tokyo bug feedback piano",
        ];
        let a = Anchors::new(forms.iter().enumerate().map(|(i, f)| (i, f.as_bytes())))
            .expect("built")
            .expect("some");
        let filler = "the user prefers t-10610 u-5000 Lisbon lisbon meet ".repeat(40);
        for hay in [
            String::new(),
            "u".to_owned(),
            "u-50000".to_owned(),
            "xx t-106103".to_owned(),
            filler.clone(),
            format!("{filler}u-50000"),
            format!("Lisbon tokyo bug feedback piano{filler}"),
        ] {
            assert_eq!(
                a.may_hold(hay.as_bytes()),
                a.search.is_match(hay.as_bytes()),
                "{hay:.40}"
            );
        }
        assert!(!a.may_hold(filler.as_bytes()));
    }
}
