//! The report of `stats`: what is taking the space, as text and tables or one JSON document.

use std::io::Write;

use anyhow::Result;

use super::{human, table, Format};
use crate::storage::{FileStats, Orphans, ServerSpace, TableSpace};

/// Writes the `stats` report: the human text and tables, or the JSON document.
pub fn render(out: &mut dyn Write, format: Format, r: &StatsReport) -> Result<()> {
    if format != Format::Table {
        return super::write_document(out, format, r);
    }
    match &r.postgres {
        Some(space) => write_server_space(out, space)?,
        None => writeln!(
            out,
            "file {}  wal {}  free pages {} ({} reclaimable by vacuum)",
            human::bytes(r.file.file_bytes),
            human::bytes(r.file.wal_bytes),
            r.file.free_pages,
            human::bytes(r.free_bytes)
        )?,
    }
    let Spread { min, median, max } = r.checkpoints_per_thread;
    writeln!(
        out,
        "{}, {}, {}; checkpoints per thread: min {min}, median {median}, max {max}",
        human::count(r.threads as u64, "thread"),
        human::count(r.checkpoints, "checkpoint"),
        human::count(r.writes, "write"),
    )?;
    let mut t = table::new_table(&["largest threads", "checkpoints", "namespaces", "bytes"]);
    table::align_right(&mut t, &[1, 2, 3]);
    for th in &r.largest_threads {
        t.add_row(vec![
            human::id(th.thread_id),
            th.checkpoints.to_string(),
            th.namespaces.to_string(),
            human::bytes(th.bytes),
        ]);
    }
    if !r.largest_threads.is_empty() {
        writeln!(out, "\n{}", table::render(&t))?;
    }
    let mut c = table::new_table(&["checkpoint channel", "bytes"]);
    table::align_right(&mut c, &[1]);
    for ch in &r.checkpoint_bytes_by_channel {
        c.add_row(vec![human::preview(ch.channel, 40), human::bytes(ch.bytes)]);
    }
    writeln!(out, "\n{}", table::render(&c))?;
    let mut w = table::new_table(&["write channel", "rows", "bytes"]);
    table::align_right(&mut w, &[1, 2]);
    for ch in &r.write_bytes_by_channel {
        w.add_row(vec![
            human::preview(ch.channel, 40),
            ch.rows.unwrap_or(0).to_string(),
            human::bytes(ch.bytes),
        ]);
    }
    writeln!(out, "\n{}", table::render(&w))?;
    let blobs = r.postgres.as_ref().map_or(String::new(), |space| {
        format!(
            ", {} blobs no checkpoint names ({})",
            space.orphaned_blobs.rows,
            human::bytes(space.orphaned_blobs.bytes)
        )
    });
    let o = &r.orphans;
    writeln!(
        out,
        "\norphans: {} writes without their checkpoint{blobs}, {} checkpoints without their parent, {} threads without a root namespace",
        o.writes_without_checkpoint, o.checkpoints_without_parent, o.namespaces_without_root
    )?;
    if r.unmeasured_checkpoints > 0 {
        writeln!(
            out,
            "({} checkpoints could not be measured: corrupt blobs)",
            r.unmeasured_checkpoints
        )?;
    }
    if let Some(st) = &r.store {
        writeln!(
            out,
            "\nstore: {} ({}), {} expired and not swept; {} ({})",
            human::count(st.items, "item"),
            human::bytes(st.bytes),
            st.expired,
            human::count(st.vectors, "vector"),
            human::bytes(st.vector_bytes)
        )?;
        if !st.namespaces.is_empty() {
            let mut t = table::new_table(&["store namespace", "items", "bytes", "expired"]);
            table::align_right(&mut t, &[1, 2, 3]);
            for n in &st.namespaces {
                t.add_row(vec![
                    human::id(&n.namespace),
                    n.items.to_string(),
                    human::bytes(n.bytes),
                    n.expired.to_string(),
                ]);
            }
            writeln!(out, "{}", table::render(&t))?;
        }
    }
    if let Some(sealed) = &r.encrypted_checkpoints {
        writeln!(
            out,
            "encrypted (AES): {} of {} checkpoints{}",
            sealed.rows,
            r.checkpoints,
            match (sealed.not_measured, &sealed.reason) {
                (0, _) => ", measured decrypted".to_owned(),
                (n, Some(why)) => format!("; {n} not measured by channel ({why})"),
                (n, None) => format!("; {n} not measured by channel"),
            }
        )?;
    }
    Ok(())
}

/// The saver's tables on a PostgreSQL server: sizes, dead rows and what a VACUUM would do,
/// then bytes per blob channel.
fn write_server_space(out: &mut dyn Write, space: &PostgresReport) -> Result<()> {
    let total: u64 = space.tables.iter().map(|t| t.total_bytes).sum();
    let indexes: u64 = space.tables.iter().map(|t| t.index_bytes).sum();
    writeln!(
        out,
        "tables {} (indexes {}), {}",
        human::bytes(total),
        human::bytes(indexes),
        human::count(space.dead_rows, "dead row")
    )?;
    let mut t = table::new_table(&["table", "rows", "dead rows", "indexes", "total"]);
    table::align_right(&mut t, &[1, 2, 3, 4]);
    for ts in space.tables {
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
    if let Some(sql) = space.index_advice {
        writeln!(
            out,
            "An index would help: `threads list --sort updated --limit N` scans every thread's \
             latest checkpoint id without one (seconds at millions of rows); with it, only the \
             newest rows. LangGraph does not read by it and works as before (each put also \
             updates it). Create it with:\n  {sql};"
        )?;
    }
    if !space.thread_index_advice.is_empty() {
        writeln!(
            out,
            "Indexes would help: `thread_id`'s collation does not sort bytewise, so whole-database \
             reads (`threads list`, `tokens --all`, `find`, `trim --all`) wait for the server to sort \
             every thread before their first one (seconds at millions of threads); with them, they \
             start at once. LangGraph does not read by them and works as before (each put also \
             updates them). Create them with:"
        )?;
        for sql in space.thread_index_advice {
            writeln!(out, "  {sql};")?;
        }
    }
    let mut b = table::new_table(&["blob channel", "rows", "bytes"]);
    table::align_right(&mut b, &[1, 2]);
    for ch in &space.blob_bytes_by_channel {
        b.add_row(vec![
            human::preview(ch.channel, 40),
            ch.rows.unwrap_or(0).to_string(),
            human::bytes(ch.bytes),
        ]);
    }
    writeln!(out, "\n{}", table::render(&b))?;
    Ok(())
}

/// Whether a `VACUUM` would help, in one line: dead rows are space the tables hold but no
/// row uses; a plain VACUUM makes it reusable for new rows (it does not shrink the files).
fn vacuum_advice(space: &PostgresReport) -> String {
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

/// The report of `stats` (its JSON document as it is).
#[derive(serde::Serialize)]
pub struct StatsReport<'a> {
    /// The SQLite file's sizes (zeros on a server).
    pub file: FileStats,
    /// Bytes of the free pages: what a vacuum gives back.
    pub free_bytes: u64,
    /// How many threads.
    pub threads: usize,
    /// Checkpoint rows, every namespace.
    pub checkpoints: u64,
    /// Pending-write rows.
    pub writes: u64,
    /// Checkpoints per thread.
    pub checkpoints_per_thread: Spread,
    /// The largest threads by stored bytes, largest first.
    pub largest_threads: Vec<LargeThread<'a>>,
    /// Encoded bytes per channel across every checkpoint, largest first.
    pub checkpoint_bytes_by_channel: Vec<ChannelBytes<'a>>,
    /// Write rows and bytes per channel.
    pub write_bytes_by_channel: Vec<ChannelBytes<'a>>,
    /// Rows whose parent or checkpoint is missing.
    pub orphans: Orphans,
    /// Only on PostgreSQL.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub postgres: Option<PostgresReport<'a>>,
    /// Checkpoints whose blobs could not be measured (corrupt).
    pub unmeasured_checkpoints: u64,
    /// Only in files with encrypted checkpoints.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub encrypted_checkpoints: Option<SealedReport>,
    /// The LangGraph Store (long-term memory); absent when the database has none.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub store: Option<StoreStats>,
}

impl<'a> StatsReport<'a> {
    /// The report of what the `stats` job measured.
    pub fn new(r: &'a crate::jobs::stats::Report) -> StatsReport<'a> {
        StatsReport {
            file: r.file.clone(),
            free_bytes: r.free_bytes,
            threads: r.threads,
            checkpoints: r.checkpoints,
            writes: r.writes,
            checkpoints_per_thread: Spread {
                min: r.spread.min,
                median: r.spread.median,
                max: r.spread.max,
            },
            largest_threads: r
                .largest
                .iter()
                .map(|t| LargeThread {
                    thread_id: &t.thread_id,
                    checkpoints: t.checkpoints,
                    namespaces: t.namespaces,
                    bytes: t.bytes,
                })
                .collect(),
            checkpoint_bytes_by_channel: r
                .checkpoint_channels
                .iter()
                .map(|(k, n)| ChannelBytes {
                    channel: k,
                    rows: None,
                    bytes: *n,
                })
                .collect(),
            write_bytes_by_channel: ChannelBytes::rows(&r.write_channels),
            orphans: r.orphans.clone(),
            postgres: r
                .server
                .as_ref()
                .map(|s| PostgresReport::new(s, r.checkpoints)),
            unmeasured_checkpoints: r.undecodable,
            encrypted_checkpoints: (r.sealed.rows > 0).then(|| SealedReport {
                rows: r.sealed.rows,
                not_measured: r.sealed.unread,
                reason: r.sealed.why.clone(),
            }),
            store: r.store.clone(),
        }
    }
}

pub use crate::jobs::stats::{StoreNamespace, StoreStats};

/// The saver's tables on a PostgreSQL server.
#[derive(serde::Serialize)]
pub struct PostgresReport<'a> {
    /// `checkpoints`, `checkpoint_blobs`, `checkpoint_writes`.
    pub tables: &'a [TableSpace],
    /// Dead rows in the three tables.
    pub dead_rows: u64,
    /// True when there are dead rows: a `VACUUM` makes their space reusable.
    pub vacuum_would_help: bool,
    /// Stored bytes of the blob rows per channel.
    pub blob_bytes_by_channel: Vec<ChannelBytes<'a>>,
    /// Blob rows no checkpoint names.
    pub orphaned_blobs: RowsBytes,
    /// With many checkpoints and no index that gives the newest ones: the statement that
    /// creates one (`threads list --sort updated --limit N` then reads the newest rows
    /// instead of every thread's; LangGraph does not read by it). Absent otherwise.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub index_advice: Option<&'a str>,
    /// With many checkpoints, where `thread_id`'s collation does not sort bytewise and no
    /// indexes give that order: the statements that create them (whole-database reads then
    /// stream their first threads at once instead of after the server's sort of every
    /// thread; LangGraph does not read by them). Absent otherwise.
    #[serde(skip_serializing_if = "<[String]>::is_empty")]
    pub thread_index_advice: &'a [String],
}

impl<'a> PostgresReport<'a> {
    /// The report of what the server said of its tables, which hold `checkpoints` checkpoint
    /// rows.
    pub fn new(space: &'a ServerSpace, checkpoints: u64) -> PostgresReport<'a> {
        PostgresReport {
            index_advice: space
                .index_advice
                .as_deref()
                .filter(|_| checkpoints >= crate::storage::postgres::newest::INDEX_ADVICE_ROWS),
            thread_index_advice: if checkpoints
                >= crate::storage::postgres::newest::INDEX_ADVICE_ROWS
            {
                &space.thread_index_advice
            } else {
                &[]
            },
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
pub struct RowsBytes {
    /// Rows.
    pub rows: u64,
    /// Their stored bytes.
    pub bytes: u64,
}

/// Encrypted checkpoints, and how many could not be measured by channel (no key).
#[derive(serde::Serialize)]
pub struct SealedReport {
    /// How many checkpoints are encrypted.
    pub rows: u64,
    /// How many of them could not be measured.
    pub not_measured: u64,
    /// Why not (no key, a wrong key).
    pub reason: Option<String>,
}

/// Smallest, median and largest.
#[derive(serde::Serialize, Clone, Copy)]
pub struct Spread {
    /// Smallest.
    pub min: u64,
    /// Median.
    pub median: u64,
    /// Largest.
    pub max: u64,
}

/// One of the largest threads.
#[derive(serde::Serialize)]
pub struct LargeThread<'a> {
    /// Its id.
    pub thread_id: &'a str,
    /// Its checkpoints, every namespace.
    pub checkpoints: u64,
    /// Its namespaces.
    pub namespaces: u64,
    /// Its stored bytes.
    pub bytes: u64,
}

/// Stored bytes of a channel (rows: write rows only).
#[derive(serde::Serialize)]
pub struct ChannelBytes<'a> {
    /// The channel.
    pub channel: &'a str,
    /// Rows (writes and blobs only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rows: Option<u64>,
    /// Stored bytes.
    pub bytes: u64,
}

impl<'a> ChannelBytes<'a> {
    /// `(channel, rows, bytes)` rows as the report has them.
    pub fn rows(rows: &'a [(String, u64, u64)]) -> Vec<ChannelBytes<'a>> {
        rows.iter()
            .map(|(k, r, n)| ChannelBytes {
                channel: k,
                rows: Some(*r),
                bytes: *n,
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_index_is_recommended_only_for_a_large_table_without_one() {
        let sql = "CREATE INDEX CONCURRENTLY ...";
        let space = ServerSpace {
            index_advice: Some(sql.into()),
            ..ServerSpace::default()
        };
        let rows = crate::storage::postgres::newest::INDEX_ADVICE_ROWS;
        assert_eq!(PostgresReport::new(&space, rows).index_advice, Some(sql));
        assert_eq!(PostgresReport::new(&space, rows - 1).index_advice, None);
        let json = serde_json::to_value(PostgresReport::new(&space, 10)).expect("json");
        assert!(json.get("index_advice").is_none(), "{json}");
        let indexed = ServerSpace::default();
        assert_eq!(PostgresReport::new(&indexed, rows * 10).index_advice, None);
        let mut text = Vec::new();
        write_server_space(&mut text, &PostgresReport::new(&space, rows)).expect("written");
        let text = String::from_utf8(text).expect("text");
        assert!(
            text.contains(sql) && text.contains("LangGraph does not read by it"),
            "{text}"
        );
    }
    #[test]
    fn the_thread_indexes_are_recommended_only_for_a_large_table_without_them() {
        let sql = [
            "CREATE INDEX CONCURRENTLY a".to_owned(),
            "CREATE INDEX CONCURRENTLY b".to_owned(),
        ];
        let space = ServerSpace {
            thread_index_advice: sql.to_vec(),
            ..ServerSpace::default()
        };
        let rows = crate::storage::postgres::newest::INDEX_ADVICE_ROWS;
        let report = PostgresReport::new(&space, rows);
        assert_eq!(
            (report.thread_index_advice, report.index_advice),
            (&sql[..], None)
        );
        assert!(PostgresReport::new(&space, rows - 1)
            .thread_index_advice
            .is_empty());
        let json = serde_json::to_value(PostgresReport::new(&space, rows)).expect("json");
        assert_eq!(
            json["thread_index_advice"],
            serde_json::json!(sql),
            "{json}"
        );
        assert!(json.get("index_advice").is_none(), "{json}");
        let small = serde_json::to_value(PostgresReport::new(&space, 10)).expect("json");
        assert!(small.get("thread_index_advice").is_none(), "{small}");
        let none =
            serde_json::to_value(PostgresReport::new(&ServerSpace::default(), rows)).expect("json");
        assert!(none.get("thread_index_advice").is_none(), "{none}");
        let mut text = Vec::new();
        write_server_space(&mut text, &PostgresReport::new(&space, rows)).expect("written");
        let text = String::from_utf8(text).expect("text");
        assert!(
            text.contains("  CREATE INDEX CONCURRENTLY a;\n  CREATE INDEX CONCURRENTLY b;")
                && text.contains("does not sort bytewise"),
            "{text}"
        );
    }
}
