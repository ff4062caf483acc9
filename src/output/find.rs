//! `find`'s output: the threads' hits written as they come (a batch of threads at a time, in
//! thread-id order): JSON as they come, a table's rows spilled until the last
//! ([`Listing`]), `--count`'s line or record of each thread once its last hit is in; then the
//! Store's hits.

use std::io::Write;

use anyhow::Result;
use serde::Serialize;

use super::listing::{Listing, Order};
use super::{human, table, Format};
use crate::jobs::find::{Hit, StoreHit};

/// The threads table's headers and its right-aligned column.
const HEADERS: [&str; 6] = ["thread_id", "checkpoint", "#", "message_id", "type", "text"];

/// find's output, written as the hits come (a batch of threads at a time, in thread-id
/// order): JSON as they come, a table's rows spilled until the last ([`Listing`]), `--count`'s
/// line or record of each thread once its last hit is in.
pub struct Found<'o> {
    format: Format,
    count: bool,
    /// Thread hits so far.
    hits: usize,
    /// Threads with a hit so far.
    threads: usize,
    /// `--count`: the thread being counted and its hits so far.
    counting: Option<(String, usize)>,
    sink: To<'o>,
}

/// Where [`Found`] writes.
enum To<'o> {
    /// `--count` as text: a line per thread.
    Lines(&'o mut dyn Write),
    /// Records (the hits, or `--count`'s per thread in JSON), or the hits' table.
    Listed(Listing<'o>),
}

/// A thread's count (`--count`, JSON).
#[derive(Serialize)]
struct Count<'a> {
    thread_id: &'a str,
    hits: usize,
}

/// A namespace's count: `namespace` instead of `thread_id`.
#[derive(Serialize)]
struct NsCount<'a> {
    namespace: &'a crate::ops::store::Labels,
    hits: usize,
}

impl<'o> Found<'o> {
    /// The hits written to `out` in `format` (with `count`, a count per thread).
    pub fn new(out: &'o mut dyn Write, format: Format, count: bool) -> Found<'o> {
        let sink = match (count, format) {
            (true, Format::Table) => To::Lines(out),
            _ => To::Listed(Listing::new(out, format, Order::AsRead, None)),
        };
        Found {
            format,
            count,
            hits: 0,
            threads: 0,
            counting: None,
            sink,
        }
    }

    /// Takes the next hit (after those of the checkpoints before it).
    pub fn add(&mut self, h: Hit) -> Result<()> {
        self.hits += 1;
        if self.count {
            match &mut self.counting {
                Some((t, n)) if *t == h.thread_id => *n += 1,
                _ => {
                    self.write_count()?;
                    self.counting = Some((h.thread_id, 1));
                    self.threads += 1;
                }
            }
            return Ok(());
        }
        if let To::Listed(listing) = &mut self.sink {
            listing.push(i128::MIN, false, &h, || thread_row(&h))?;
        }
        Ok(())
    }

    /// Writes the count of the thread counted so far.
    fn write_count(&mut self) -> Result<()> {
        let Some((thread_id, hits)) = self.counting.take() else {
            return Ok(());
        };
        match &mut self.sink {
            To::Lines(out) => writeln!(out, "{}\t{hits}", human::id(&thread_id))?,
            To::Listed(listing) => {
                let record = Count {
                    thread_id: &thread_id,
                    hits,
                };
                listing.push(i128::MIN, false, &record, Vec::new)?;
            }
        }
        Ok(())
    }

    /// Writes the rest after the threads' hits: the Store's (after them in JSON, a table of
    /// their own), the table, `--count`'s summary. Returns the threads' hits.
    pub fn finish(mut self, store_hits: &[StoreHit]) -> Result<usize> {
        self.write_count()?;
        let hits = self.hits;
        if self.count {
            let mut per_ns: Vec<(&crate::ops::store::Labels, usize)> = Vec::new();
            for h in store_hits {
                match per_ns.last_mut() {
                    Some((ns, n)) if *ns == &h.namespace => *n += 1,
                    _ => per_ns.push((&h.namespace, 1)),
                }
            }
            match self.sink {
                To::Listed(mut listing) => {
                    for (namespace, hits) in per_ns {
                        listing.push(i128::MIN, false, &NsCount { namespace, hits }, Vec::new)?;
                    }
                    listing.finish(&[], &[], None)?;
                }
                To::Lines(out) => {
                    for (ns, n) in &per_ns {
                        writeln!(out, "store {}\t{n}", human::id(ns.joined()))?;
                    }
                    let mut summary = format!(
                        "{} in {}",
                        human::count((hits + store_hits.len()) as u64, "hit"),
                        human::count(self.threads as u64, "thread")
                    );
                    if !per_ns.is_empty() {
                        summary.push_str(&format!(
                            " and {} of the store",
                            human::count(per_ns.len() as u64, "namespace")
                        ));
                    }
                    writeln!(out, "{summary}")?;
                }
            }
            return Ok(hits);
        }
        let To::Listed(mut listing) = self.sink else {
            return Ok(hits);
        };
        if self.format != Format::Table {
            for h in store_hits {
                listing.push(i128::MIN, false, h, Vec::new)?;
            }
            listing.finish(&[], &[], None)?;
            return Ok(hits);
        }
        // The threads' hits first, then the store's.
        let out = match (hits, store_hits.is_empty()) {
            // Nothing on stdout (`| wc -l` counts 0): the caller's note says it on stderr.
            (0, true) => return Ok(hits),
            (0, false) => listing.into_writer(),
            _ => listing.finish_then(&HEADERS, &[2], None)?.1,
        };
        if store_hits.is_empty() {
            return Ok(hits);
        }
        let mut t = table::new_table(&["store namespace", "key", "text"]);
        for h in store_hits {
            let text = if h.key.is_none() {
                "(carries the value as a label)".to_owned()
            } else {
                format!(
                    "{}«{}»{}",
                    human::preview(&h.before, usize::MAX),
                    human::preview(&h.matched, usize::MAX),
                    human::preview(&h.after, usize::MAX)
                )
            };
            t.add_row(vec![
                human::id(h.namespace.joined()),
                h.key.as_deref().map_or("-".into(), human::id),
                text,
            ]);
        }
        writeln!(out, "{}", table::render(&t))?;
        Ok(hits)
    }
}

/// A thread hit's row of the table.
fn thread_row(h: &Hit) -> Vec<String> {
    vec![
        human::id(&h.thread_id),
        human::id(&h.checkpoint_id),
        h.index.map_or("-".into(), |i| i.to_string()),
        h.message_id.as_deref().map_or("-".into(), human::id),
        h.role.clone(),
        format!(
            "{}«{}»{}",
            human::preview(&h.before, usize::MAX),
            human::preview(&h.matched, usize::MAX),
            human::preview(&h.after, usize::MAX)
        ),
    ]
}
