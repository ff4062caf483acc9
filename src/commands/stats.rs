//! `memctl stats`: what is taking the space.

use std::collections::BTreeMap;
use std::io::Write;

use anyhow::Result;

use crate::cli::{Format, GlobalArgs, StatsArgs};
use crate::codec::aes::{self, Keyring};
use crate::codec::msgpack;
use crate::output::{self, human, table};
use crate::storage::{FileStats, Orphans, ServerSpace, TableSpace};

/// Runs `stats`.
pub fn run(g: &GlobalArgs, args: &StatsArgs, out: &mut dyn Write) -> Result<()> {
    let store = super::open_read_only(g)?;
    let file = store.file_stats()?;
    let (checkpoint_rows, write_rows) = store.row_counts()?;
    let mut threads = Vec::new();
    store.for_each_thread(&mut |t| {
        threads.push(t);
        Ok(())
    })?;
    let mut per_thread: Vec<u64> = threads.iter().map(|t| t.checkpoints).collect();
    per_thread.sort_unstable();
    let (min, median, max) = (
        per_thread.first().copied().unwrap_or(0),
        per_thread.get(per_thread.len() / 2).copied().unwrap_or(0),
        per_thread.last().copied().unwrap_or(0),
    );
    threads.sort_by_key(|t| std::cmp::Reverse(t.bytes));
    let top: Vec<_> = threads.iter().take(args.top).collect();

    // Bytes per channel across every checkpoint, from the encoded sizes (nothing decoded).
    let mut channels: BTreeMap<String, u64> = BTreeMap::new();
    let mut undecodable = 0u64;
    let mut measured = 0u64;
    store.for_each_checkpoint_blob(&mut |blob| {
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
        measure_sealed(&*store, &super::keys(g), &mut channels, &mut undecodable)?
    } else {
        Sealed::default()
    };
    let mut channels: Vec<(String, u64)> = channels.into_iter().collect();
    channels.sort_by_key(|(_, n)| std::cmp::Reverse(*n));
    let writes = store.write_bytes_by_channel()?;
    let orphans = store.orphans()?;
    let server = store.server_space()?;
    let free_bytes = file.free_pages * file.page_size;

    match output::resolve_format(g.format) {
        Format::Table => {
            match &server {
                Some(space) => write_server_space(out, space)?,
                None => writeln!(
                    out,
                    "file {}  wal {}  free pages {} ({} reclaimable by vacuum)",
                    human::bytes(file.file_bytes),
                    human::bytes(file.wal_bytes),
                    file.free_pages,
                    human::bytes(free_bytes)
                )?,
            }
            writeln!(
                out,
                "{}, {}, {}; checkpoints per thread: min {min}, median {median}, max {max}",
                human::count(threads.len() as u64, "thread"),
                human::count(checkpoint_rows, "checkpoint"),
                human::count(write_rows, "write"),
            )?;
            let mut t =
                table::new_table(&["largest threads", "checkpoints", "namespaces", "bytes"]);
            table::align_right(&mut t, &[1, 2, 3]);
            for th in &top {
                t.add_row(vec![
                    human::id(&th.thread_id),
                    th.checkpoints.to_string(),
                    th.namespaces.to_string(),
                    human::bytes(th.bytes),
                ]);
            }
            if !top.is_empty() {
                writeln!(out, "\n{}", table::render(&t))?;
            }
            let mut c = table::new_table(&["checkpoint channel", "bytes"]);
            table::align_right(&mut c, &[1]);
            for (k, n) in &channels {
                c.add_row(vec![human::preview(k, 40), human::bytes(*n)]);
            }
            writeln!(out, "\n{}", table::render(&c))?;
            let mut w = table::new_table(&["write channel", "rows", "bytes"]);
            table::align_right(&mut w, &[1, 2]);
            for (k, rows, n) in &writes {
                w.add_row(vec![
                    human::preview(k, 40),
                    rows.to_string(),
                    human::bytes(*n),
                ]);
            }
            writeln!(out, "\n{}", table::render(&w))?;
            let blobs = server.as_ref().map_or(String::new(), |space| {
                format!(
                    ", {} blobs no checkpoint names ({})",
                    space.orphaned_blobs,
                    human::bytes(space.orphaned_blob_bytes)
                )
            });
            writeln!(
                out,
                "\norphans: {} writes without their checkpoint{blobs}, {} checkpoints without their parent, {} threads without a root namespace",
                orphans.writes_without_checkpoint, orphans.checkpoints_without_parent, orphans.namespaces_without_root
            )?;
            if undecodable > 0 {
                writeln!(
                    out,
                    "({undecodable} checkpoints could not be measured: corrupt blobs)"
                )?;
            }
            if sealed.rows > 0 {
                writeln!(
                    out,
                    "encrypted (AES): {} of {checkpoint_rows} checkpoints{}",
                    sealed.rows,
                    match (sealed.unread, &sealed.why) {
                        (0, _) => ", measured decrypted".to_owned(),
                        (n, Some(why)) => format!("; {n} not measured by channel ({why})"),
                        (n, None) => format!("; {n} not measured by channel"),
                    }
                )?;
            }
        }
        format => {
            let doc = StatsReport {
                file,
                free_bytes,
                threads: threads.len(),
                checkpoints: checkpoint_rows,
                writes: write_rows,
                checkpoints_per_thread: Spread { min, median, max },
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
                postgres: server.as_ref().map(PostgresReport::new),
                unmeasured_checkpoints: undecodable,
                encrypted_checkpoints: (sealed.rows > 0).then(|| SealedReport {
                    rows: sealed.rows,
                    not_measured: sealed.unread,
                    reason: sealed.why.clone(),
                }),
            };
            output::write_document(out, format, &doc)?;
        }
    }
    match sealed.error {
        Some(line) => Err(crate::exit::Partial(line).into()),
        None => Ok(()),
    }
}

/// The saver's tables on a PostgreSQL server: sizes, dead rows and what a VACUUM would do,
/// then bytes per blob channel.
fn write_server_space(out: &mut dyn Write, space: &ServerSpace) -> Result<()> {
    let total: u64 = space.tables.iter().map(|t| t.total_bytes).sum();
    let indexes: u64 = space.tables.iter().map(|t| t.index_bytes).sum();
    writeln!(
        out,
        "tables {} (indexes {}), {}",
        human::bytes(total),
        human::bytes(indexes),
        human::count(space.dead_rows(), "dead row")
    )?;
    let mut t = table::new_table(&["table", "rows", "dead rows", "indexes", "total"]);
    table::align_right(&mut t, &[1, 2, 3, 4]);
    for ts in &space.tables {
        t.add_row(vec![
            ts.table.clone(),
            ts.live_rows.to_string(),
            ts.dead_rows.to_string(),
            human::bytes(ts.index_bytes),
            human::bytes(ts.total_bytes),
        ]);
    }
    writeln!(out, "\n{}", table::render(&t))?;
    writeln!(out, "{}", vacuum_advice(space))?;
    let mut b = table::new_table(&["blob channel", "rows", "bytes"]);
    table::align_right(&mut b, &[1, 2]);
    for (k, rows, n) in &space.blob_bytes_by_channel {
        b.add_row(vec![
            human::preview(k, 40),
            rows.to_string(),
            human::bytes(*n),
        ]);
    }
    writeln!(out, "\n{}", table::render(&b))?;
    Ok(())
}

/// Whether a `VACUUM` would help, in one line: dead rows are space the tables hold but no
/// row uses; a plain VACUUM makes it reusable for new rows (it does not shrink the files).
fn vacuum_advice(space: &ServerSpace) -> String {
    let dead: Vec<String> = space
        .tables
        .iter()
        .filter(|t| t.dead_rows > 0)
        .map(|t| {
            let when = if t.dead_rows >= t.autovacuum_at {
                "autovacuum is due".to_owned()
            } else {
                format!("autovacuum at {}", t.autovacuum_at)
            };
            format!("{} {} ({when})", t.table, t.dead_rows)
        })
        .collect();
    if dead.is_empty() {
        return "VACUUM would not help now: no dead rows".to_owned();
    }
    format!(
        "VACUUM would help: dead rows in {}; VACUUM (ANALYZE) on the tables (or --vacuum on memctl's next gc or prune) makes their space reusable",
        dead.join(", ")
    )
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

/// The JSON report of `stats`.
#[derive(serde::Serialize)]
struct StatsReport<'a> {
    file: FileStats,
    free_bytes: u64,
    threads: usize,
    checkpoints: u64,
    writes: u64,
    checkpoints_per_thread: Spread,
    largest_threads: Vec<LargeThread<'a>>,
    checkpoint_bytes_by_channel: Vec<ChannelBytes<'a>>,
    write_bytes_by_channel: Vec<ChannelBytes<'a>>,
    orphans: Orphans,
    /// Only on PostgreSQL.
    #[serde(skip_serializing_if = "Option::is_none")]
    postgres: Option<PostgresReport<'a>>,
    unmeasured_checkpoints: u64,
    /// Only in files with encrypted checkpoints.
    #[serde(skip_serializing_if = "Option::is_none")]
    encrypted_checkpoints: Option<SealedReport>,
}

/// The saver's tables on a PostgreSQL server.
#[derive(serde::Serialize)]
struct PostgresReport<'a> {
    /// `checkpoints`, `checkpoint_blobs`, `checkpoint_writes`.
    tables: &'a [TableSpace],
    /// Dead rows in the three tables.
    dead_rows: u64,
    /// True when there are dead rows: a `VACUUM` makes their space reusable.
    vacuum_would_help: bool,
    /// Stored bytes of the blob rows per channel.
    blob_bytes_by_channel: Vec<ChannelBytes<'a>>,
    /// Blob rows no checkpoint names.
    orphaned_blobs: RowsBytes,
}

impl<'a> PostgresReport<'a> {
    fn new(space: &'a ServerSpace) -> PostgresReport<'a> {
        PostgresReport {
            tables: &space.tables,
            dead_rows: space.dead_rows(),
            vacuum_would_help: space.dead_rows() > 0,
            blob_bytes_by_channel: ChannelBytes::rows(&space.blob_bytes_by_channel),
            orphaned_blobs: RowsBytes {
                rows: space.orphaned_blobs,
                bytes: space.orphaned_blob_bytes,
            },
        }
    }
}

/// A number of rows and their stored bytes.
#[derive(serde::Serialize)]
struct RowsBytes {
    rows: u64,
    bytes: u64,
}

/// Encrypted checkpoints, and how many could not be measured by channel (no key).
#[derive(serde::Serialize)]
struct SealedReport {
    rows: u64,
    not_measured: u64,
    reason: Option<String>,
}

/// Smallest, median and largest.
#[derive(serde::Serialize)]
struct Spread {
    min: u64,
    median: u64,
    max: u64,
}

/// One of the largest threads.
#[derive(serde::Serialize)]
struct LargeThread<'a> {
    thread_id: &'a str,
    checkpoints: u64,
    namespaces: u64,
    bytes: u64,
}

/// Stored bytes of a channel (rows: write rows only).
#[derive(serde::Serialize)]
struct ChannelBytes<'a> {
    channel: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    rows: Option<u64>,
    bytes: u64,
}

impl<'a> ChannelBytes<'a> {
    /// `(channel, rows, bytes)` rows as the report has them.
    fn rows(rows: &'a [(String, u64, u64)]) -> Vec<ChannelBytes<'a>> {
        rows.iter()
            .map(|(k, r, n)| ChannelBytes {
                channel: k,
                rows: Some(*r),
                bytes: *n,
            })
            .collect()
    }
}
