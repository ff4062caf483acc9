//! `store namespaces` on a SQLite file: the `store` table's rows grouped by namespace.
//!
//! One pass over the table in storage order (SQLite's own `GROUP BY prefix` walks the prefix
//! index and looks every row up from it: one B-tree descent per item, 1.3-1.6x the time of the
//! plain scan; BENCHMARKS.md, "Store"). The scan is SQLite's work on this thread; the grouping
//! (a hash lookup per row among up to hundreds of thousands of namespaces, mostly cache misses)
//! runs beside it on a second core, fed a batch of [`Rows`] at a time.

use anyhow::Result;
use fnv::FnvHashMap;

use crate::storage::store::{is_under, NamespaceSummary};

/// Rows handed from the scan to the grouping at once.
pub const BATCH: usize = 4096;

/// Batches in flight between the scan and the grouping.
pub const DEPTH: usize = 4;

/// A batch of scanned rows: each row's namespace and `updated_at` bytes side by side in one
/// buffer (no allocation per row).
#[derive(Default)]
pub struct Rows {
    text: Vec<u8>,
    rows: Vec<Row>,
}

/// One scanned row; its texts are `text[start..ns_end]` and `text[ns_end..end]`.
struct Row {
    ns_end: usize,
    end: usize,
    /// `updated_at` is text (a NULL or other type has none).
    has_update: bool,
    bytes: u64,
    expired: bool,
}

impl Rows {
    /// Adds a row: its namespace, its `updated_at` when that is text, its value's size and
    /// whether it has expired.
    pub fn push(&mut self, ns: &[u8], updated: Option<&[u8]>, bytes: u64, expired: bool) {
        self.text.extend_from_slice(ns);
        let ns_end = self.text.len();
        if let Some(u) = updated {
            self.text.extend_from_slice(u);
        }
        self.rows.push(Row {
            ns_end,
            end: self.text.len(),
            has_update: updated.is_some(),
            bytes,
            expired,
        });
    }

    /// Rows held.
    pub fn len(&self) -> usize {
        self.rows.len()
    }

    /// No rows held.
    pub fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }

    fn iter(&self) -> impl Iterator<Item = (&[u8], Option<&[u8]>, &Row)> {
        let mut start = 0;
        self.rows.iter().map(move |r| {
            let ns = &self.text[start..r.ns_end];
            let updated = r.has_update.then(|| &self.text[r.ns_end..r.end]);
            start = r.end;
            (ns, updated, r)
        })
    }
}

/// Bytes held in place up to [`INLINE`] of them (a namespace such as
/// `users.u-12345.memories`, a stored time), on the heap beyond: a lookup among many
/// namespaces compares them without a second cache miss.
#[derive(Clone)]
enum Bytes {
    Inline { len: u8, buf: [u8; INLINE] },
    Heap(Box<[u8]>),
}

/// Bytes [`Bytes`] keeps in place.
const INLINE: usize = 32;

impl Bytes {
    fn new(b: &[u8]) -> Bytes {
        match u8::try_from(b.len()) {
            Ok(len) if b.len() <= INLINE => {
                let mut buf = [0; INLINE];
                buf[..b.len()].copy_from_slice(b);
                Bytes::Inline { len, buf }
            }
            _ => Bytes::Heap(b.into()),
        }
    }

    fn as_slice(&self) -> &[u8] {
        match self {
            Bytes::Inline { len, buf } => &buf[..usize::from(*len)],
            Bytes::Heap(b) => b,
        }
    }
}

impl PartialEq for Bytes {
    fn eq(&self, other: &Bytes) -> bool {
        self.as_slice() == other.as_slice()
    }
}

impl Eq for Bytes {}

impl std::hash::Hash for Bytes {
    // As `[u8]` hashes: a lookup by `&[u8]` finds it (`Borrow`).
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.as_slice().hash(state);
    }
}

impl std::borrow::Borrow<[u8]> for Bytes {
    fn borrow(&self) -> &[u8] {
        self.as_slice()
    }
}

/// One namespace's running totals (kept beside its name in the map's table).
#[derive(Default)]
struct Group {
    /// Not under the `--prefix` asked for: its rows are skipped.
    excluded: bool,
    items: u64,
    bytes: u64,
    expired: u64,
    /// The newest `updated_at` as stored (compared as bytes, as SQLite's `max` does).
    newest: Option<Bytes>,
}

/// The namespaces seen so far, keyed by their stored bytes.
pub struct Groups<'a> {
    under: Option<&'a str>,
    map: FnvHashMap<Bytes, Group>,
}

impl<'a> Groups<'a> {
    /// Groups for the namespaces under `under` (all when `None`).
    pub fn new(under: Option<&'a str>) -> Self {
        Groups {
            under,
            map: FnvHashMap::default(),
        }
    }

    /// Counts a batch of rows. A namespace is checked (UTF-8, under the prefix) once, when
    /// first seen.
    pub fn add(&mut self, batch: &Rows) -> Result<()> {
        for (ns, updated, row) in batch.iter() {
            let g = match self.map.get_mut(ns) {
                Some(g) => g,
                None => {
                    let text = std::str::from_utf8(ns)
                        .map_err(|_| anyhow::anyhow!("a store namespace is not UTF-8 text"))?;
                    let excluded = self.under.is_some_and(|p| !is_under(text, p));
                    self.map.entry(Bytes::new(ns)).or_insert(Group {
                        excluded,
                        ..Group::default()
                    })
                }
            };
            if g.excluded {
                continue;
            }
            g.items += 1;
            g.bytes += row.bytes;
            g.expired += u64::from(row.expired);
            if let Some(u) = updated {
                if g.newest.as_ref().is_none_or(|n| n.as_slice() < u) {
                    g.newest = Some(Bytes::new(u));
                }
            }
        }
        Ok(())
    }

    /// The summaries, in bytewise namespace order; `updated_at` shown by `shown`.
    pub fn finish(self, shown: impl Fn(&str) -> String) -> Vec<NamespaceSummary> {
        let mut all: Vec<NamespaceSummary> = self
            .map
            .into_iter()
            .filter(|(_, g)| !g.excluded)
            .map(|(ns, g)| NamespaceSummary {
                // Checked to be UTF-8 when first seen.
                prefix: String::from_utf8_lossy(ns.as_slice()).into_owned(),
                items: g.items,
                bytes: g.bytes,
                expired: g.expired,
                newest_update: g
                    .newest
                    .map(|n| shown(&String::from_utf8_lossy(n.as_slice()))),
            })
            .collect();
        all.sort_by(|a, b| a.prefix.as_bytes().cmp(b.prefix.as_bytes()));
        all
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn batch(rows: &[(&str, Option<&str>, u64, bool)]) -> Rows {
        let mut b = Rows::default();
        for (ns, u, bytes, expired) in rows {
            b.push(ns.as_bytes(), u.map(str::as_bytes), *bytes, *expired);
        }
        b
    }

    #[test]
    fn groups_across_batches() {
        let mut g = Groups::new(None);
        g.add(&batch(&[
            ("a.b", Some("2026-01-02 00:00:00"), 10, false),
            ("a", None, 1, true),
            ("a.b", Some("2026-01-01 00:00:00"), 5, true),
        ]))
        .expect("added");
        g.add(&batch(&[("a.b", Some("2026-01-03 00:00:00"), 1, false)]))
            .expect("added");
        let all = g.finish(|s| format!("<{s}>"));
        assert_eq!(all.len(), 2);
        assert_eq!(
            (
                all[0].prefix.as_str(),
                all[0].items,
                all[0].expired,
                all[0].bytes
            ),
            ("a", 1, 1, 1)
        );
        assert_eq!(all[0].newest_update, None);
        assert_eq!(
            (
                all[1].prefix.as_str(),
                all[1].items,
                all[1].expired,
                all[1].bytes
            ),
            ("a.b", 3, 1, 16)
        );
        assert_eq!(
            all[1].newest_update.as_deref(),
            Some("<2026-01-03 00:00:00>")
        );
    }

    #[test]
    fn keeps_only_the_prefix_asked_for() {
        let mut g = Groups::new(Some("a"));
        g.add(&batch(&[
            ("a", None, 1, false),
            ("ab", None, 1, false),
            ("a.c", None, 1, false),
            ("b.a", None, 1, false),
        ]))
        .expect("added");
        let names: Vec<String> = g
            .finish(|s| s.to_owned())
            .into_iter()
            .map(|n| n.prefix)
            .collect();
        assert_eq!(names, ["a", "a.c"]);
    }

    #[test]
    fn long_names_and_times_are_kept_whole() {
        let long = "n".repeat(INLINE + 1);
        let later = format!("2026-01-02 00:00:00.{}", "9".repeat(INLINE));
        let mut g = Groups::new(None);
        g.add(&batch(&[
            (&long, Some(&later), 1, false),
            (&long[..INLINE], Some("2026-01-01"), 1, false),
            (&long, Some("2026-01-01"), 1, false),
        ]))
        .expect("added");
        let all = g.finish(|s| s.to_owned());
        assert_eq!(all.len(), 2);
        assert_eq!((all[1].prefix.as_str(), all[1].items), (long.as_str(), 2));
        assert_eq!(all[1].newest_update.as_deref(), Some(later.as_str()));
        assert_eq!(all[0].items, 1);
    }

    #[test]
    fn refuses_a_namespace_that_is_not_utf8() {
        let mut b = Rows::default();
        b.push(b"a\xff", None, 1, false);
        assert!(Groups::new(None).add(&b).is_err());
    }
}
