//! The `stats` job: what is taking the space.

use std::collections::BTreeMap;

use anyhow::Result;
use serde::Serialize;

use crate::codec::aes::{self, Keyring};
use crate::codec::msgpack;
use crate::ops::sizes::{CountSpread, ThreadSizes};
use crate::storage::{Access, FileStats, Orphans, ServerSpace, ThreadSummary};

use super::{Ctx, Sink};

/// What `stats` measures (nothing to choose but how many of the largest threads to name).
#[derive(Debug, Clone)]
pub struct Request {
    /// The largest threads to name (`--top`).
    pub top: usize,
}

/// What `stats` measured (`crate::output::stats` renders it).
pub struct Report {
    /// The file (or database) and its pages.
    pub file: FileStats,
    /// The free pages' bytes.
    pub free_bytes: u64,
    /// Threads.
    pub threads: usize,
    /// Checkpoint rows.
    pub checkpoints: u64,
    /// Write rows.
    pub writes: u64,
    /// Checkpoints per thread.
    pub spread: CountSpread,
    /// The largest threads, largest first.
    pub largest: Vec<ThreadSummary>,
    /// Bytes per channel across every checkpoint, largest first.
    pub checkpoint_channels: Vec<(String, u64)>,
    /// Rows and bytes per channel of the writes.
    pub write_channels: Vec<(String, u64, u64)>,
    /// Rows that belong to no checkpoint.
    pub orphans: Orphans,
    /// A server's space (PostgreSQL).
    pub server: Option<ServerSpace>,
    /// Checkpoints that could not be measured.
    pub undecodable: u64,
    /// The encrypted checkpoints: how many, how many not measured, why.
    pub sealed: SealedCount,
    /// The LangGraph Store, when the database has one.
    pub store: Option<StoreStats>,
    /// A key problem that makes the run a partial success (exit code 3) once the report is
    /// shown.
    pub key_error: Option<String>,
}

impl Report {
    /// The run's result once the report is shown.
    pub fn finish(&self) -> Result<()> {
        match &self.key_error {
            Some(line) => Err(crate::exit::Partial(line.clone()).into()),
            None => Ok(()),
        }
    }
}

/// The encrypted checkpoints of the database, as reported.
#[derive(Debug, Clone, Default)]
pub struct SealedCount {
    /// How many there are.
    pub rows: u64,
    /// How many could not be measured (no key, or a key that does not decrypt them).
    pub unread: u64,
    /// Why.
    pub why: Option<String>,
}

/// The LangGraph Store's part of `stats`.
#[derive(Debug, Clone, Default, Serialize)]
pub struct StoreStats {
    /// Items.
    pub items: u64,
    /// Bytes of their values (the JSON text).
    pub bytes: u64,
    /// Items that have expired but are not swept yet (what `store sweep` would delete now).
    pub expired: u64,
    /// Rows of `store_vectors` (embeddings).
    pub vectors: u64,
    /// Bytes of the embeddings.
    pub vector_bytes: u64,
    /// Per top-level namespace (its first label), in namespace order.
    pub namespaces: Vec<StoreNamespace>,
}

/// One top-level namespace of the store in `stats`.
#[derive(Debug, Clone, Serialize)]
pub struct StoreNamespace {
    /// The first label.
    pub namespace: String,
    /// Items at it or below it.
    pub items: u64,
    /// Bytes of their values.
    pub bytes: u64,
    /// Of them, expired and not swept.
    pub expired: u64,
}

/// Runs `stats`: the file, the threads and their spread, bytes per channel (encrypted
/// checkpoints measured with the key), orphans, the server's space and the store.
pub fn run(req: &Request, ctx: &Ctx, sink: &dyn Sink) -> Result<Report> {
    let store = ctx.open_or_store_only(Access::ReadOnly, sink)?;
    let space = store.space();
    let file = space.map_or(Ok(Default::default()), |s| s.file_stats())?;
    let (checkpoint_rows, write_rows) = store.row_counts()?;
    // The threads stream past (a batch at a time, on a second handle): counted, their
    // spread and the largest kept, never all held.
    let mut sizes = ThreadSizes::new(req.top);
    crate::read::stream::threads(&*store, &mut |batch| {
        batch.into_iter().for_each(|t| sizes.add(t));
        Ok(true)
    })?;
    let threads = sizes.threads();
    let spread = sizes.spread();
    let largest = sizes.largest();
    let ChannelSizes {
        channels,
        undecodable,
        sealed,
    } = checkpoint_bytes_by_channel(&*store, &ctx.keys(), checkpoint_rows)?;
    let write_channels = space.map_or(Ok(vec![]), |s| s.write_bytes_by_channel())?;
    let orphans = space.map_or(Ok(Default::default()), |s| s.orphans())?;
    let server = match store.server_account() {
        Some(a) => Some(a.server_space()?),
        None => None,
    };
    let free_bytes = file.free_pages * file.page_size;
    let store_stats = match ctx.open_store_if_any(Access::ReadOnly)? {
        Some(items) => Some(store_stats(&*items)?),
        None => None,
    };
    Ok(Report {
        file,
        free_bytes,
        threads,
        checkpoints: checkpoint_rows,
        writes: write_rows,
        spread,
        largest,
        checkpoint_channels: channels,
        write_channels,
        orphans,
        server,
        undecodable,
        sealed: SealedCount {
            rows: sealed.rows,
            unread: sealed.unread,
            why: sealed.why,
        },
        store: store_stats,
        key_error: sealed.error,
    })
}

/// Bytes per channel across every checkpoint, largest first, from the encoded sizes (nothing
/// decoded); with the checkpoints that could not be measured and the encrypted ones.
fn checkpoint_bytes_by_channel(
    store: &dyn crate::storage::CheckpointStore,
    keys: &Keyring,
    checkpoint_rows: u64,
) -> Result<ChannelSizes> {
    let mut channels: BTreeMap<String, u64> = BTreeMap::new();
    let mut undecodable = 0u64;
    let mut measured = 0u64;
    let Some(space) = store.space() else {
        return Ok(ChannelSizes {
            channels: vec![],
            undecodable: 0,
            sealed: Sealed::default(),
        });
    };
    space.for_each_checkpoint_blob(&mut |blob| {
        measured += 1;
        match msgpack::channel_sizes(blob) {
            Ok(sizes) => {
                for (k, n) in sizes {
                    *channels.entry(k).or_default() += n as u64;
                }
            }
            Err(_) => undecodable += 1,
        }
        Ok(())
    })?;
    // Rows the pass above did not see are encrypted (or legacy json): encrypted checkpoints
    // are measured decrypted when a key is given; without one they are counted.
    let sealed = if measured < checkpoint_rows {
        measure_sealed(store, keys, &mut channels, &mut undecodable)?
    } else {
        Sealed::default()
    };
    let mut channels: Vec<(String, u64)> = channels.into_iter().collect();
    channels.sort_by_key(|(_, n)| std::cmp::Reverse(*n));
    Ok(ChannelSizes {
        channels,
        undecodable,
        sealed,
    })
}

/// What [`checkpoint_bytes_by_channel`] measured.
struct ChannelSizes {
    /// Bytes per channel, largest first.
    channels: Vec<(String, u64)>,
    /// Checkpoints that could not be measured.
    undecodable: u64,
    /// The encrypted checkpoints.
    sealed: Sealed,
}

/// The store's items, bytes and expired items per top-level namespace, and its vectors.
fn store_stats(items: &dyn crate::storage::store::ItemStore) -> Result<StoreStats> {
    let top = crate::ops::store::to_depth(items.namespaces(None)?, 1);
    let (vectors, vector_bytes) = items.vectors().map_or(Ok((0, 0)), |v| v.vector_space())?;
    Ok(StoreStats {
        items: top.iter().map(|n| n.items).sum(),
        bytes: top.iter().map(|n| n.bytes).sum(),
        expired: top.iter().map(|n| n.expired).sum(),
        vectors,
        vector_bytes,
        namespaces: top
            .into_iter()
            .map(|n| StoreNamespace {
                namespace: n.prefix,
                items: n.items,
                bytes: n.bytes,
                expired: n.expired,
            })
            .collect(),
    })
}

/// The encrypted checkpoints of the database.
#[derive(Default)]
struct Sealed {
    /// How many there are.
    rows: u64,
    /// How many could not be measured (no key, or a key that does not decrypt them).
    unread: u64,
    /// Why, for the report.
    why: Option<String>,
    /// A key problem that makes the run a partial success (a refused or wrong key; a key
    /// that is simply not set is not an error: stats need none).
    error: Option<String>,
}

/// Adds the channel sizes of the encrypted checkpoints (decrypted with `keys`) to `channels`,
/// reading every checkpoint through the store (only done when the plain pass missed some).
fn measure_sealed(
    store: &dyn crate::storage::CheckpointStore,
    keys: &Keyring,
    channels: &mut BTreeMap<String, u64>,
    undecodable: &mut u64,
) -> Result<Sealed> {
    let mut sealed = Sealed::default();
    let mut threads = Vec::new();
    store.for_each_thread(&mut |t| {
        threads.push(t.thread_id);
        Ok(())
    })?;
    for thread in &threads {
        for ns in store.namespaces(thread)? {
            for row in store.checkpoints(thread, &ns)? {
                let (inner, cipher) = aes::split_type(&row.type_name);
                if cipher.is_none() {
                    continue;
                }
                sealed.rows += 1;
                if keys.is_unset() {
                    sealed.unread += 1;
                    sealed.why = Some(format!(
                        "set {} to the app's key to measure them",
                        keys.var()
                    ));
                    continue;
                }
                let what = format!("checkpoint {} of thread '{thread}'", row.checkpoint_id);
                let opened = match keys.open(&row.type_name, &row.checkpoint, &what) {
                    Ok(o) => o,
                    Err(e) => {
                        sealed.unread += 1;
                        let line = format!("{e:#}");
                        sealed.why.get_or_insert_with(|| line.clone());
                        if crate::ops::edit::is_key_error(&e) {
                            sealed.error.get_or_insert(line);
                        }
                        continue;
                    }
                };
                if inner != "msgpack" {
                    continue;
                }
                match msgpack::channel_sizes(&opened.bytes) {
                    Ok(sizes) => {
                        for (k, n) in sizes {
                            *channels.entry(k).or_default() += n as u64;
                        }
                    }
                    Err(_) => *undecodable += 1,
                }
            }
        }
    }
    if let Some(line) = &sealed.error {
        sealed.error = Some(format!(
            "{line} ({} of {} encrypted checkpoints could not be measured)",
            sealed.unread, sealed.rows
        ));
    }
    Ok(sealed)
}
