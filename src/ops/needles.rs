//! Many strings looked for at once, where each one only matters until it has been found (or
//! found often enough): `forget`'s verification asks which removed strings are still anywhere
//! in the file and which kept items hold them.
//!
//! The strings still open are searched with one Aho-Corasick automaton, leftmost (first
//! match) rather than overlapping: that search skips ahead with the automaton's prefilter
//! (memchr, Teddy) and is many times faster on text that holds none of them. When a string is
//! closed the automaton is rebuilt for the rest (at most once per string), so a common word
//! found early costs nothing afterwards, and a match cannot hide another string that
//! overlaps it: the search goes on from where that one could start.

use aho_corasick::{AhoCorasick, Input};
use anyhow::{Context, Result};

/// The strings still open and their search.
pub struct Needles {
    texts: Vec<String>,
    /// Indexes into `texts` of the strings still open, in the automaton's pattern order.
    open: Vec<usize>,
    /// The search for the open strings (`None` when none is open).
    searcher: Option<AhoCorasick>,
    /// The longest string's length in bytes.
    longest: usize,
}

impl Needles {
    /// A search for every one of `texts` (none open when it is empty).
    pub fn new(texts: &[String]) -> Result<Needles> {
        let mut n = Needles {
            texts: texts.to_vec(),
            open: (0..texts.len()).collect(),
            searcher: None,
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
        self.open.is_empty()
    }

    /// Whether `index` is still open.
    pub fn is_open(&self, index: usize) -> bool {
        self.open.contains(&index)
    }

    /// Closes string `index` (it no longer needs looking for).
    pub fn close(&mut self, index: usize) -> Result<()> {
        let before = self.open.len();
        self.open.retain(|&i| i != index);
        if self.open.len() != before {
            self.rebuild()?;
        }
        Ok(())
    }

    /// Whether `hay` holds any open string.
    pub fn any_in(&self, hay: &[u8]) -> bool {
        self.searcher.as_ref().is_some_and(|s| s.is_match(hay))
    }

    /// Every open string `hay` holds, each closed as it is found; `found` is told each one's
    /// index (into the texts given to [`Needles::new`]).
    pub fn close_all_in(&mut self, hay: &[u8], found: &mut dyn FnMut(usize)) -> Result<()> {
        let mut from = 0;
        while let Some(searcher) = &self.searcher {
            let Some(m) = searcher.find(Input::new(hay).range(from..)) else {
                break;
            };
            let index = self.open[m.pattern().as_usize()];
            found(index);
            // No open string ends before this match's end (it is the first to end); one that
            // ends there or later starts at most `longest` bytes before.
            from = from.max(m.end().saturating_sub(self.longest));
            self.close(index)?;
        }
        Ok(())
    }

    fn rebuild(&mut self) -> Result<()> {
        self.searcher = if self.open.is_empty() {
            None
        } else {
            let texts = self.open.iter().map(|&i| self.texts[i].as_str());
            Some(
                AhoCorasick::new(texts)
                    .context("cannot build the search for the removed strings")?,
            )
        };
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
        let mut n = Needles::new(&texts(&["xabc", "ab", "bcd", "zz"])).expect("built");
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
        let mut n = Needles::new(&texts(&["alpha", "beta"])).expect("built");
        assert_eq!(n.overlap(), 4);
        n.close(0).expect("closed");
        assert!(!n.any_in(b"alpha"));
        assert!(n.any_in(b"xbetax"));
        assert_eq!(found_in(&mut n, "alpha beta"), vec![1]);
    }

    #[test]
    fn nothing_to_look_for() {
        let mut n = Needles::new(&[]).expect("built");
        assert!(n.done() && !n.any_in(b"anything"));
        assert!(found_in(&mut n, "anything").is_empty());
        assert_eq!(n.overlap(), 0);
    }
}
