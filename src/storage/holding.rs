//! Which stored rows still hold any of many removed strings, found in one pass over the rows
//! (the verification of `forget` and `rm --purge`, on either backend): every row is searched
//! for every string at once (Aho-Corasick over anchors, [`crate::bytesearch::anchors`], in its stored
//! bytes and in the JSON-escaped form a JSON column writes), and a row that may hold one is decoded to tell a string the app wrote
//! from a type tag or key (see [`crate::model::stored_text`]).

use crate::bytesearch::anchors::Anchors;
use anyhow::Result;

/// The search and, for each string, the rows found so far holding it.
pub struct Holding<'a> {
    texts: &'a [String],
    /// Each string's JSON-escaped form, where it differs from the string.
    escaped: Vec<Option<String>>,
    /// The strings not yet named `limit` times, each as stored and, where that differs,
    /// JSON-escaped (`None` once every string is named enough). Form `2 * i` is string `i`
    /// as stored, `2 * i + 1` escaped.
    search: Option<Anchors>,
    /// How many of `search`'s strings are named enough since it was built.
    stale: crate::bytesearch::needles::Stale,
    /// Rows named per string, at most.
    limit: usize,
    found: Vec<Vec<(String, String)>>,
    /// Strings the current row holds (reset per row).
    seen: Vec<bool>,
}

impl<'a> Holding<'a> {
    /// A search for `texts`, naming up to `limit` rows for each.
    pub fn new(texts: &'a [String], limit: usize) -> Result<Holding<'a>> {
        let mut h = Holding {
            texts,
            escaped: texts
                .iter()
                .map(|t| Some(super::json_escaped(t)).filter(|e| e != t))
                .collect(),
            search: None,
            stale: crate::bytesearch::needles::Stale::new(0),
            limit,
            found: vec![Vec::new(); texts.len()],
            seen: vec![false; texts.len()],
        };
        h.rebuild()?;
        Ok(h)
    }

    /// The search for the strings still open: a string named `limit` times is no longer
    /// looked for (a word many rows hold stops costing a decode per row). Rebuilt when
    /// enough of its strings are ([`crate::bytesearch::needles::Stale`]); until then their matches
    /// are skipped.
    fn rebuild(&mut self) -> Result<()> {
        let open: Vec<usize> = (0..self.texts.len())
            .filter(|&i| self.found[i].len() < self.limit)
            .collect();
        self.stale = crate::bytesearch::needles::Stale::new(open.len());
        self.search = None;
        let (texts, escaped) = (self.texts, &self.escaped);
        let forms = open.into_iter().flat_map(|i| {
            let e = escaped[i].as_deref().map(|e| (2 * i + 1, e.as_bytes()));
            std::iter::once((2 * i, texts[i].as_bytes())).chain(e)
        });
        self.search = Anchors::new(forms)?;
        Ok(())
    }

    /// Form `form`'s bytes (see `search`).
    fn form(&self, form: usize) -> &[u8] {
        let i = form / 2;
        match (form % 2, &self.escaped[i]) {
            (1, Some(e)) => e.as_bytes(),
            _ => self.texts[i].as_bytes(),
        }
    }

    /// Searches one row: its values, each with the type it decodes as (`msgpack`, `json`,
    /// or another: a row memctl cannot decode counts whole when its bytes hold a string),
    /// `None` for NULL. `name` gives (thread, the row named for a person); it is called only
    /// when the row holds a string.
    pub fn row(
        &mut self,
        values: &[(Option<&[u8]>, &str)],
        name: impl FnOnce() -> Result<(String, String)>,
    ) -> Result<()> {
        let Some(search) = &self.search else {
            return Ok(());
        };
        self.seen.iter_mut().for_each(|s| *s = false);
        let mut any = false;
        for (bytes, kind) in values {
            let Some(bytes) = bytes else { continue };
            // Most rows hold none: a leftmost search skips through them (its prefilter);
            // only a row that holds one is searched for every string it holds.
            if !search.may_hold(bytes) {
                continue;
            }
            let (found, limit, seen) = (&self.found, self.limit, &self.seen);
            let mut candidates: Vec<usize> = Vec::new();
            search.each_in(bytes, &|f| self.form(f), &mut |f| {
                let i = f / 2;
                if !seen[i] && found[i].len() < limit {
                    candidates.push(i);
                }
                true
            });
            if candidates.is_empty() {
                continue;
            }
            candidates.sort_unstable();
            candidates.dedup();
            let wanted: Vec<&str> = candidates.iter().map(|i| self.texts[*i].as_str()).collect();
            let held = crate::model::stored_text::rows_hold_texts(kind, bytes, &wanted);
            for (i, h) in candidates.into_iter().zip(held) {
                if h {
                    self.seen[i] = true;
                    any = true;
                }
            }
        }
        if !any {
            return Ok(());
        }
        let (thread, place) = name()?;
        let mut rebuild = false;
        for (i, _) in self.seen.iter().enumerate().filter(|(_, s)| **s) {
            if self.found[i].len() < self.limit {
                self.found[i].push((thread.clone(), place.clone()));
                if self.found[i].len() == self.limit {
                    rebuild |= self.stale.close_one();
                }
            }
        }
        if rebuild {
            self.rebuild()?;
        }
        Ok(())
    }

    /// For each string (in the order given), the rows named as holding it.
    pub fn finish(self) -> Vec<Vec<(String, String)>> {
        self.found
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn name(n: &str) -> impl FnOnce() -> Result<(String, String)> + '_ {
        move || Ok(("t".to_owned(), n.to_owned()))
    }

    #[test]
    fn finds_strings_as_stored_and_as_json_writes_them() {
        let texts = vec![
            "say \"hi\"".to_owned(),
            "Berlin".to_owned(),
            "zz".to_owned(),
        ];
        let mut h = Holding::new(&texts, 1).expect("built");
        // Raw bytes of a type memctl does not decode: counted whole.
        h.row(&[(Some(b"..say \"hi\".."), "bytes")], name("a"))
            .expect("row");
        // JSON: found in its escaped form, and only as a string value.
        h.row(
            &[(Some(br#"{"m": "we say \"hi\" in Berlin"}"#), "json")],
            name("b"),
        )
        .expect("row");
        h.row(
            &[(Some(br#"{"Berlin": 1}"#), "json"), (None, "json")],
            name("c"),
        )
        .expect("row");
        let found = h.finish();
        assert_eq!(found[0], vec![("t".to_owned(), "a".to_owned())]);
        assert_eq!(found[1], vec![("t".to_owned(), "b".to_owned())]);
        assert!(found[2].is_empty());
    }

    #[test]
    fn names_at_most_the_limit() {
        let texts = vec!["x".to_owned()];
        let mut h = Holding::new(&texts, 2).expect("built");
        for n in ["1", "2", "3"] {
            h.row(&[(Some(b"x"), "bytes")], name(n)).expect("row");
        }
        assert_eq!(h.finish()[0].len(), 2);
    }
}
