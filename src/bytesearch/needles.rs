//! Many strings looked for at once, where each one only matters until it has been found (or
//! found often enough): `forget`'s verification asks which removed strings are still anywhere
//! in the file and which kept items hold them.
//!
//! The strings are searched with one Aho-Corasick automaton over their anchors
//! ([`crate::bytesearch::anchors`]; overlapping: every occurrence of every string). A string found is
//! closed; the automaton is rebuilt for the strings still open once enough of its strings are
//! closed ([`Stale`]): a common word found early stops costing anything, and thousands of
//! strings are not rebuilt thousands of times.

use crate::bytesearch::anchors::Anchors;
use anyhow::Result;

/// When an automaton whose strings are partly closed is rebuilt: a small one as soon as one
/// of its strings closes (cheap), a large one once a quarter of its strings have (a rebuild
/// costs time in the number of strings: at most a few dozen rebuilds for any number).
pub struct Stale {
    /// Strings the automaton was built for.
    built: usize,
    /// Of those, closed since.
    closed: usize,
}

/// Automata of up to this many strings are rebuilt at every close.
const REBUILD_SMALL: usize = 64;

impl Stale {
    /// A fresh automaton of `built` strings.
    pub fn new(built: usize) -> Stale {
        Stale { built, closed: 0 }
    }

    /// One of its strings closed: whether to rebuild now.
    pub fn close_one(&mut self) -> bool {
        self.closed += 1;
        self.built <= REBUILD_SMALL || self.closed * 4 >= self.built
    }

    /// Some of its strings are closed (its matches must be checked against the open ones).
    pub fn any(&self) -> bool {
        self.closed > 0
    }
}

/// The strings still open and their search; the strings are borrowed, not copied (a forget
/// of many threads erases tens of megabytes of text, and a search split across cores has a
/// `Needles` per part).
pub struct Needles<'t> {
    texts: &'t [String],
    open: Vec<bool>,
    left: usize,
    /// The search for the strings open when it was built (`None` when none is open).
    searcher: Option<Anchors>,
    stale: Stale,
    /// The longest string's length in bytes.
    longest: usize,
}

impl<'t> Needles<'t> {
    /// A search for every one of `texts` (none open when it is empty).
    pub fn new(texts: &'t [String]) -> Result<Needles<'t>> {
        let mut n = Needles {
            texts,
            open: vec![true; texts.len()],
            left: texts.len(),
            searcher: None,
            stale: Stale::new(0),
            longest: texts.iter().map(String::len).max().unwrap_or(0),
        };
        n.rebuild()?;
        Ok(n)
    }

    /// How many bytes consecutive pieces of one haystack must share so that no string is
    /// cut in two.
    pub fn overlap(&self) -> usize {
        self.longest.saturating_sub(1)
    }

    /// No string is open any more.
    pub fn done(&self) -> bool {
        self.left == 0
    }

    /// Whether `index` is still open.
    pub fn is_open(&self, index: usize) -> bool {
        self.open.get(index).copied().unwrap_or(false)
    }

    /// Closes string `index` (it no longer needs looking for).
    pub fn close(&mut self, index: usize) -> Result<()> {
        if !self.is_open(index) {
            return Ok(());
        }
        self.open[index] = false;
        self.left -= 1;
        if self.left == 0 || self.stale.close_one() {
            self.rebuild()?;
        }
        Ok(())
    }

    /// Whether `hay` holds any open string.
    pub fn any_in(&self, hay: &[u8]) -> bool {
        let Some(s) = &self.searcher else {
            return false;
        };
        if !s.may_hold(hay) {
            return false;
        }
        let mut any = false;
        s.each_in(hay, &|i| self.texts[i].as_bytes(), &mut |i| {
            any = self.open[i];
            !any
        });
        any
    }

    /// Every open string `hay` holds, each closed as it is found; `found` is told each one's
    /// index (into the texts given to [`Needles::new`]).
    pub fn close_all_in(&mut self, hay: &[u8], found: &mut dyn FnMut(usize)) -> Result<()> {
        let Some(s) = &self.searcher else {
            return Ok(());
        };
        let mut hits = Vec::new();
        let (open, left) = (&self.open, self.left);
        s.each_in(hay, &|i| self.texts[i].as_bytes(), &mut |i| {
            if open[i] && !hits.contains(&i) {
                hits.push(i);
            }
            hits.len() < left
        });
        for i in hits {
            found(i);
            self.close(i)?;
        }
        Ok(())
    }

    fn rebuild(&mut self) -> Result<()> {
        self.stale = Stale::new(self.left);
        self.searcher = None;
        let open = (0..self.texts.len()).filter(|&i| self.open[i]);
        self.searcher = Anchors::new(open.map(|i| (i, self.texts[i].as_bytes())))?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn texts(t: &[&str]) -> Vec<String> {
        t.iter().map(|s| (*s).to_owned()).collect()
    }

    fn found_in(n: &mut Needles, hay: &str) -> Vec<usize> {
        let mut found = Vec::new();
        n.close_all_in(hay.as_bytes(), &mut |i| found.push(i))
            .expect("searched");
        found.sort_unstable();
        found
    }

    #[test]
    fn finds_strings_that_overlap_each_other() {
        // A leftmost search alone reports `ab` and hides `xabc` and `bcd`.
        let t = texts(&["xabc", "ab", "bcd", "zz"]);
        let mut n = Needles::new(&t).expect("built");
        assert_eq!(found_in(&mut n, "..xabcd.."), vec![0, 1, 2]);
        assert!(!n.done());
        assert!(n.is_open(3) && !n.is_open(0));
        assert!(!n.any_in(b"xabcd"));
        assert!(n.any_in(b"azzb"));
        assert_eq!(found_in(&mut n, "zz"), vec![3]);
        assert!(n.done());
        assert!(!n.any_in(b"zz"));
    }

    #[test]
    fn closing_leaves_the_rest_searched() {
        let t = texts(&["alpha", "beta"]);
        let mut n = Needles::new(&t).expect("built");
        assert_eq!(n.overlap(), 4);
        n.close(0).expect("closed");
        assert!(!n.any_in(b"alpha"));
        assert!(n.any_in(b"xbetax"));
        assert_eq!(found_in(&mut n, "alpha beta"), vec![1]);
    }

    #[test]
    fn many_strings_closed_between_rebuilds_are_not_found_again() {
        let texts: Vec<String> = (0..200).map(|i| format!("word{i:03}")).collect();
        let mut n = Needles::new(&texts).expect("built");
        assert_eq!(found_in(&mut n, "word007 word008"), vec![7, 8]);
        // Closed, still in the automaton until a quarter of it is closed: not reported.
        assert!(found_in(&mut n, "word007").is_empty());
        assert!(!n.any_in(b"word008 word007"));
        assert!(n.any_in(b"word009"));
        let all: String = texts.join(" ");
        assert_eq!(found_in(&mut n, &all).len(), 198);
        assert!(n.done());
    }

    #[test]
    fn nothing_to_look_for() {
        let mut n = Needles::new(&[]).expect("built");
        assert!(n.done() && !n.any_in(b"anything"));
        assert!(found_in(&mut n, "anything").is_empty());
        assert_eq!(n.overlap(), 0);
    }
}
