//! `memctl stats`: what is taking the space.

use std::collections::BTreeMap;
use std::io::Write;

use anyhow::Result;

use crate::cli::{GlobalArgs, StatsArgs};
use crate::codec::aes::{self, Keyring};
use crate::codec::msgpack;
use crate::ops::sizes::ThreadSizes;
use crate::output::stats::{
    ChannelBytes, LargeThread, PostgresReport, SealedReport, Spread, StatsReport, StoreNamespace,
    StoreStats,
};
use crate::output::{self};

/// Runs `stats`: the file, the threads and their spread, bytes per channel (encrypted
/// checkpoints measured with the key), orphans, the server's space and the store → report.
pub fn run(g: &GlobalArgs, args: &StatsArgs, out: &mut dyn Write) -> Result<()> {
    let store = super::open_read_only(g).or_else(|e| {
        super::store::checkpoints_or_store_only(g, crate::storage::Access::ReadOnly, e)
    })?;
    // A backend without a space account (Postgres' store alone) has none of its parts.
    let space = store.space();
    let file = space.map_or(Ok(Default::default()), |s| s.file_stats())?;
    let (checkpoint_rows, write_rows) = store.row_counts()?;
    // The threads stream past (a batch at a time, on a second handle): counted, their
    // spread and the largest kept, never all held.
    let mut sizes = ThreadSizes::new(args.top);
    crate::read::stream::threads(&*store, &mut |batch| {
        batch.into_iter().for_each(|t| sizes.add(t));
        Ok(true)
    })?;
    let threads = sizes.threads();
    let spread = sizes.spread();
    let top = sizes.largest();
    let ChannelSizes {
        channels,
        undecodable,
        sealed,
    } = checkpoint_bytes_by_channel(&*store, &super::keys(g), checkpoint_rows)?;
    let writes = space.map_or(Ok(vec![]), |s| s.write_bytes_by_channel())?;
    let orphans = space.map_or(Ok(Default::default()), |s| s.orphans())?;
    let server = match store.server_account() {
        Some(a) => Some(a.server_space()?),
        None => None,
    };
    let free_bytes = file.free_pages * file.page_size;
    let store_stats = match super::store::open_if_any(g, crate::storage::Access::ReadOnly)? {
        Some(items) => Some(store_stats(&*items)?),
        None => None,
    };

    let report = StatsReport {
        file,
        free_bytes,
        threads,
        checkpoints: checkpoint_rows,
        writes: write_rows,
        checkpoints_per_thread: Spread {
            min: spread.min,
            median: spread.median,
            max: spread.max,
        },
        largest_threads: top
            .iter()
            .map(|t| LargeThread {
                thread_id: &t.thread_id,
                checkpoints: t.checkpoints,
                namespaces: t.namespaces,
                bytes: t.bytes,
            })
            .collect(),
        checkpoint_bytes_by_channel: channels
            .iter()
            .map(|(k, n)| ChannelBytes {
                channel: k,
                rows: None,
                bytes: *n,
            })
            .collect(),
        write_bytes_by_channel: ChannelBytes::rows(&writes),
        orphans,
        postgres: server
            .as_ref()
            .map(|s| PostgresReport::new(s, checkpoint_rows)),
        unmeasured_checkpoints: undecodable,
        encrypted_checkpoints: (sealed.rows > 0).then(|| SealedReport {
            rows: sealed.rows,
            not_measured: sealed.unread,
            reason: sealed.why.clone(),
        }),
        store: store_stats,
    };
    output::stats::render(out, output::resolve_format(g.format), &report)?;
    match sealed.error {
        Some(line) => Err(crate::exit::Partial(line).into()),
        None => Ok(()),
    }
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
