//! `store namespaces` on a SQLite file: the `store` table's rows grouped by namespace.
//!
//! One pass over the table in storage order (SQLite's own `GROUP BY prefix` walks the prefix
//! index and looks every row up from it: one B-tree descent per item, 1.3-1.6x the time of the
//! plain scan; BENCHMARKS.md, "Store"), split by rowid across the machine's cores, each part
//! read and grouped on a connection of its own pinned to one state of the file
//! ([`super::snapshot`]), the parts' groups merged at the end.

use anyhow::Result;
use fnv::FnvHashMap;
use rusqlite::types::ValueRef;
use rusqlite::Connection;

use crate::storage::store::{is_under, NamespaceSummary};

/// Groups the rows `conn` reads with `sql`, which selects `prefix`, the value's size, whether
/// the item has expired and `updated_at`, in that order, with `params`. Rows are copied into a
/// batch and grouped a batch at a time: the lookups of one batch follow each other, so the
/// processor overlaps their cache misses (between two rows' lookups SQLite's step runs
/// thousands of instructions, and they overlap nothing).
pub fn scan(
    conn: &Connection,
    sql: &str,
    params: &[&dyn rusqlite::ToSql],
    groups: &mut Groups<'_>,
) -> Result<()> {
    let mut st = conn.prepare(sql)?;
    let mut rows = st.query(params)?;
    let mut batch = Batch::default();
    while let Some(r) = rows.next()? {
        let ValueRef::Text(ns) = r.get_ref(0)? else {
            anyhow::bail!("a store namespace is not text");
        };
        let size = u64::try_from(r.get::<_, Option<i64>>(1)?.unwrap_or(0)).unwrap_or(0);
        let expired = r.get::<_, Option<bool>>(2)?.unwrap_or(false);
        let updated = match r.get_ref(3)? {
            ValueRef::Text(t) => Some(t),
            _ => None,
        };
        batch.push(ns, updated, size, expired);
        if batch.rows.len() == BATCH {
            batch.group_into(groups)?;
        }
    }
    batch.group_into(groups)
}

/// Rows [`scan`] groups at once.
const BATCH: usize = 256;

/// Scanned rows waiting to be grouped: each row's namespace and `updated_at` side by side in
/// one buffer (no allocation per row).
#[derive(Default)]
struct Batch {
    text: Vec<u8>,
    /// Per row: where its namespace ends and its `updated_at` (if text) ends in `text`, its
    /// value's size, whether it expired.
    rows: Vec<(usize, Option<usize>, u64, bool)>,
}

impl Batch {
    fn push(&mut self, ns: &[u8], updated: Option<&[u8]>, bytes: u64, expired: bool) {
        self.text.extend_from_slice(ns);
        let ns_end = self.text.len();
        let end = updated.map(|u| {
            self.text.extend_from_slice(u);
            self.text.len()
        });
        self.rows.push((ns_end, end, bytes, expired));
    }

    /// Groups the rows held, and empties the batch.
    fn group_into(&mut self, groups: &mut Groups<'_>) -> Result<()> {
        let mut start = 0;
        for &(ns_end, end, bytes, expired) in &self.rows {
            let updated = end.map(|e| &self.text[ns_end..e]);
            groups.add(&self.text[start..ns_end], updated, bytes, expired)?;
            start = end.unwrap_or(ns_end);
        }
        self.text.clear();
        self.rows.clear();
        Ok(())
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

impl Group {
    /// Keeps `u` when it is newer than the newest so far.
    fn newest_at(&mut self, u: &[u8]) {
        if self.newest.as_ref().is_none_or(|n| n.as_slice() < u) {
            self.newest = Some(Bytes::new(u));
        }
    }
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

    /// Counts a row: its namespace, its `updated_at` when that is text, its value's size and
    /// whether it has expired. A namespace is checked (UTF-8, under the prefix) once, when
    /// first seen.
    pub fn add(
        &mut self,
        ns: &[u8],
        updated: Option<&[u8]>,
        bytes: u64,
        expired: bool,
    ) -> Result<()> {
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
            return Ok(());
        }
        g.items += 1;
        g.bytes += bytes;
        g.expired += u64::from(expired);
        if let Some(u) = updated {
            g.newest_at(u);
        }
        Ok(())
    }

    /// Adds the groups of another part of the table.
    pub fn merge(&mut self, other: Groups<'_>) {
        for (ns, theirs) in other.map {
            let g = self.map.entry(ns).or_insert(Group {
                excluded: theirs.excluded,
                ..Group::default()
            });
            g.items += theirs.items;
            g.bytes += theirs.bytes;
            g.expired += theirs.expired;
            if let Some(u) = &theirs.newest {
                g.newest_at(u.as_slice());
            }
        }
    }

    /// The summaries, in bytewise namespace order; `updated_at` shown by `shown`.
    pub fn finish(self, shown: impl Fn(&str) -> String) -> Vec<NamespaceSummary> {
        let mut all: Vec<(Bytes, Group)> =
            self.map.into_iter().filter(|(_, g)| !g.excluded).collect();
        // Sorted while the names are in place (no pointer to follow per comparison).
        all.sort_unstable_by(|a, b| a.0.as_slice().cmp(b.0.as_slice()));
        all.into_iter()
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
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    trait AddAll {
        fn add_all(&mut self, rows: &[(&str, Option<&str>, u64, bool)]) -> Result<()>;
    }

    impl AddAll for Groups<'_> {
        fn add_all(&mut self, rows: &[(&str, Option<&str>, u64, bool)]) -> Result<()> {
            for (ns, u, bytes, expired) in rows {
                self.add(ns.as_bytes(), u.map(str::as_bytes), *bytes, *expired)?;
            }
            Ok(())
        }
    }

    #[test]
    fn groups_across_parts() {
        let mut g = Groups::new(None);
        g.add_all(&[
            ("a.b", Some("2026-01-02 00:00:00"), 10, false),
            ("a", None, 1, true),
            ("a.b", Some("2026-01-01 00:00:00"), 5, true),
        ])
        .expect("added");
        // Another part of the table, grouped on its own and merged.
        let mut other = Groups::new(None);
        other
            .add_all(&[
                ("a.b", Some("2026-01-03 00:00:00"), 1, false),
                ("c", Some("2026-01-01 00:00:00"), 2, false),
            ])
            .expect("added");
        g.merge(other);
        let all = g.finish(|s| format!("<{s}>"));
        assert_eq!(all.len(), 3);
        assert_eq!((all[2].prefix.as_str(), all[2].items), ("c", 1));
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
        g.add_all(&[
            ("a", None, 1, false),
            ("ab", None, 1, false),
            ("a.c", None, 1, false),
            ("b.a", None, 1, false),
        ])
        .expect("added");
        let mut other = Groups::new(Some("a"));
        other
            .add_all(&[("b.a", None, 1, false), ("a.d", None, 1, false)])
            .expect("added");
        g.merge(other);
        let names: Vec<String> = g
            .finish(|s| s.to_owned())
            .into_iter()
            .map(|n| n.prefix)
            .collect();
        assert_eq!(names, ["a", "a.c", "a.d"]);
    }

    #[test]
    fn long_names_and_times_are_kept_whole() {
        let long = "n".repeat(INLINE + 1);
        let later = format!("2026-01-02 00:00:00.{}", "9".repeat(INLINE));
        let mut g = Groups::new(None);
        g.add_all(&[
            (&long, Some(&later), 1, false),
            (&long[..INLINE], Some("2026-01-01"), 1, false),
            (&long, Some("2026-01-01"), 1, false),
        ])
        .expect("added");
        let all = g.finish(|s| s.to_owned());
        assert_eq!(all.len(), 2);
        assert_eq!((all[1].prefix.as_str(), all[1].items), (long.as_str(), 2));
        assert_eq!(all[1].newest_update.as_deref(), Some(later.as_str()));
        assert_eq!(all[0].items, 1);
    }

    #[test]
    fn refuses_a_namespace_that_is_not_utf8() {
        assert!(Groups::new(None).add(b"a\xff", None, 1, false).is_err());
    }
}
