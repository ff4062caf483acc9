//! The reports of the moving jobs (`copy`, `import`, `export`, `migrate`): what was copied
//! (or would be, with a dry run) and where; `crate::output::copy` renders them.

use serde::Serialize;

use crate::ops::copy::CopyCounts;

/// Why threads or items were left out, said once per reason: the counts of `unreadable` and
/// `refused` ones, and what to say of each (handed `it` or `them`), each prefixed with its
/// count when both occur, joined by `; `.
pub fn left_out_reasons(
    unreadable: u64,
    refused: u64,
    say_unreadable: impl Fn(&str) -> String,
    say_refused: impl Fn(&str) -> String,
) -> String {
    let them = |n: u64| if n == 1 { "it" } else { "them" };
    let both = unreadable > 0 && refused > 0;
    let mut why = Vec::new();
    for (n, name, say) in [
        (
            unreadable,
            "unreadable",
            &say_unreadable as &dyn Fn(&str) -> String,
        ),
        (refused, "refused", &say_refused),
    ] {
        if n > 0 {
            let count = match both {
                true => format!("{n} {name}: "),
                false => String::new(),
            };
            why.push(format!("{count}{}", say(them(n))));
        }
    }
    why.join("; ")
}
/// What one copy did.
#[derive(Debug, Clone, Serialize)]
pub struct CopyReport {
    /// The source thread.
    pub thread: String,
    /// The thread written.
    pub to_thread: String,
    /// The target database as shown (passwords masked); `null` for the source database.
    pub to: Option<String>,
    /// The fork's checkpoint (`--at`), if any.
    pub at: Option<String>,
    /// Nothing was written (`--dry-run`).
    pub dry_run: bool,
    /// The target file was created (or would be).
    pub created: bool,
    /// An existing target thread was replaced (or would be).
    pub replaced: bool,
    /// The rows written (or that would be).
    #[serde(flatten)]
    pub counts: CopyCounts,
    /// Checkpoints whose value of a channel differs from the one an earlier checkpoint stored
    /// under the same channel version: the Postgres target keeps one value per version (as
    /// `PostgresSaver.put` does), so they read the earlier value there.
    pub shared_versions: Vec<SharedVersion>,
    /// What memctl did to the Postgres target's saver tables first (or would, `--dry-run`);
    /// absent when nothing (and in each thread of a [`CopiesReport`], which has it once).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub saver_setup: Option<SaverSetup>,
}

/// What memctl did (or would do) to a PostgreSQL target's `PostgresSaver` tables before the
/// first thread went in: made them as `PostgresSaver.setup()` makes them, or ran the
/// migrations `setup()` runs on tables at a lower level.
#[derive(Debug, Clone, Serialize)]
pub struct SaverSetup {
    /// The tables were made (false: only the missing migrations ran on the tables there).
    pub created_tables: bool,
    /// The schema they are in.
    pub schema: String,
    /// Their `checkpoint_migrations` level before (`null`: none, no tables).
    pub from_level: Option<i32>,
    /// Their level after.
    pub to_level: i32,
}

/// A checkpoint whose channel value the target holds once per version (see
/// [`CopyReport::shared_versions`]).
#[derive(Debug, Clone, Serialize)]
pub struct SharedVersion {
    /// The checkpoint.
    pub checkpoint_id: String,
    /// The channel.
    pub channel: String,
}

impl SharedVersion {
    /// The `(checkpoint_id, channel)` pairs [`crate::storage::WrittenThread`] reports.
    pub fn list(pairs: Vec<(String, String)>) -> Vec<SharedVersion> {
        pairs
            .into_iter()
            .map(|(checkpoint_id, channel)| SharedVersion {
                checkpoint_id,
                channel,
            })
            .collect()
    }
}

/// A thread a move left out, nothing of it written, and why (`copy --all`, `import`,
/// `migrate`, `export`).
#[derive(Debug, Clone, Serialize)]
pub struct LeftOut {
    /// The source thread.
    pub thread: String,
    /// `unreadable`: a row of it does not decode (LangGraph could not read it either);
    /// `refused`: the target cannot hold it (a NUL character in a PostgreSQL text or JSONB
    /// value, a LangGraph.js checkpoint for PostgresSaver's tables…).
    pub reason: String,
    /// Which row, and why, in one line.
    pub why: String,
}

/// What a copy of several threads did (`import`, `copy --all`): one report per thread, and
/// the totals.
#[derive(Debug, Clone, Serialize)]
pub struct CopiesReport {
    /// One report per thread, in the order they were copied.
    pub threads: Vec<CopyReport>,
    /// The rows of every thread together.
    pub totals: CopyCounts,
    /// The threads left out (nothing of them written), and why.
    pub left_out: Vec<LeftOut>,
    /// What memctl did to a Postgres target's saver tables first (or would, `--dry-run`);
    /// `null` when nothing.
    pub saver_setup: Option<SaverSetup>,
}

impl CopiesReport {
    /// The reports, their totals, and the threads left out.
    pub fn new(threads: Vec<CopyReport>, left_out: Vec<LeftOut>) -> CopiesReport {
        let mut totals = CopyCounts::default();
        for r in &threads {
            totals.add(&r.counts);
        }
        CopiesReport {
            threads,
            totals,
            left_out,
            saver_setup: None,
        }
    }
}

/// One thread of an export.
#[derive(Debug, Clone, Serialize)]
pub struct ExportedThread {
    /// The thread (the same id in the archive).
    pub thread: String,
    /// Its rows in the archive.
    #[serde(flatten)]
    pub counts: CopyCounts,
}

/// What `--redact` did, and what the search of the archive's bytes found (nothing: an archive
/// with a match left is not kept). The patterns and what they matched are never shown.
#[derive(Debug, Clone, Serialize)]
pub struct RedactionReport {
    /// How many patterns were given.
    pub patterns: usize,
    /// String values in which matches were replaced by `[erased]`.
    pub strings_redacted: u64,
    /// Rows rewritten.
    pub rows_redacted: u64,
    /// Distinct matched texts searched for in every byte of the archive (none found).
    pub texts_searched: usize,
    /// Matched texts shorter than 4 bytes (they occur by chance in any file): checked in
    /// every decoded value of the archive, not in its raw bytes.
    pub short_texts: usize,
}

/// What `export` wrote.
#[derive(Debug, Clone, Serialize)]
pub struct ExportReport {
    /// The archive.
    pub file: String,
    /// An existing file was replaced (`--force`).
    pub replaced_file: bool,
    /// The threads in it.
    pub threads: Vec<ExportedThread>,
    /// Their rows together.
    pub totals: CopyCounts,
    /// The threads left out of the archive (nothing of them written), and why.
    pub left_out: Vec<LeftOut>,
    /// `--redact`'s work, if given.
    pub redaction: Option<RedactionReport>,
}

/// One thread of a migration.
#[derive(Debug, Clone, Serialize)]
pub struct MigratedThread {
    /// The thread (the same id in the target).
    pub thread: String,
    /// `copy` (it was not there), `skip` (there and equal), `replace` (there, different,
    /// `--replace`), `differs` (there, different, left as it is); or left out, nothing of it
    /// written: `unreadable` (a row of it does not decode) or `refused` (the target cannot
    /// hold it). Done, or to be done with `--dry-run`.
    pub action: String,
    /// Why it was left out (`unreadable`, `refused`), in one line.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub why: Option<String>,
    /// Its rows in the source (none counted for a thread left out).
    #[serde(flatten)]
    pub counts: CopyCounts,
    /// Checkpoints the Postgres target holds one value per channel version for (see
    /// [`CopyReport::shared_versions`]).
    pub shared_versions: Vec<SharedVersion>,
}

/// A migration's threads by what happened to them.
#[derive(Debug, Clone, Default, Serialize)]
pub struct MigrateTotals {
    /// Threads copied.
    pub copied: u64,
    /// Threads already there and equal.
    pub skipped: u64,
    /// Threads replaced.
    pub replaced: u64,
    /// Threads there and different, left as they are.
    pub differing: u64,
    /// Threads left out, nothing of them written: unreadable, or the target cannot hold them.
    pub left_out: u64,
    /// Checkpoints written.
    pub checkpoints_written: u64,
    /// Pending writes written.
    pub writes_written: u64,
}

/// What `migrate` did (or would do).
#[derive(Debug, Clone, Serialize)]
pub struct MigrateReport {
    /// The target as shown (passwords masked).
    pub to: String,
    /// Nothing was written.
    pub dry_run: bool,
    /// The target file was created (or would be).
    pub created: bool,
    /// What memctl did to a Postgres target's saver tables first (or would, `--dry-run`);
    /// `null` when nothing.
    pub saver_setup: Option<SaverSetup>,
    /// Every thread of the source.
    pub threads: Vec<MigratedThread>,
    /// The totals.
    pub totals: MigrateTotals,
    /// The source's LangGraph Store (`null` when it has none).
    pub store: Option<StoreMigration>,
}

/// A Store item named in a migration's report (never its value).
#[derive(Debug, Clone, Serialize)]
pub struct StoreItemName {
    /// Its namespace's labels.
    pub namespace: crate::ops::store::Labels,
    /// Its key.
    pub key: String,
    /// `differs` (left as it is) or `replace` (overwritten with `--replace`; to be, with
    /// `--dry-run`).
    pub action: String,
}

/// A Store item a migration left out (never its value).
#[derive(Debug, Clone, Serialize)]
pub struct StoreItemLeftOut {
    /// Its namespace's labels.
    pub namespace: crate::ops::store::Labels,
    /// Its key.
    pub key: String,
    /// `unreadable` (its value or a timestamp is not what LangGraph writes) or `refused` (the
    /// target cannot hold it, e.g. `\u0000` in a value for PostgreSQL's JSONB).
    pub reason: String,
    /// Why, in one line.
    pub why: String,
}

/// What `migrate` did (or would do) with the source's LangGraph Store.
#[derive(Debug, Clone, Default, Serialize)]
pub struct StoreMigration {
    /// Namespaces of the source.
    pub namespaces: u64,
    /// Items of the source.
    pub items: u64,
    /// Items copied (they were not in the target).
    pub copied: u64,
    /// Items there and equal, skipped.
    pub skipped: u64,
    /// Items there and different, overwritten (`--replace`).
    pub replaced: u64,
    /// Items there and different, left as they are.
    pub differing: u64,
    /// The items that differ, each with what was done (left, or replaced with `--replace`).
    pub differing_items: Vec<StoreItemName>,
    /// Items left out, not written: memctl cannot read them, or the target cannot hold them.
    pub left_out: u64,
    /// The items left out, and why.
    pub left_out_items: Vec<StoreItemLeftOut>,
    /// Embedding vectors (`store_vectors` rows) copied with their items.
    pub vectors_copied: u64,
    /// Embedding vectors of the source not migrated (`--without-vectors`).
    pub vectors_left_behind: u64,
}

impl MigrateReport {
    /// Adds a thread.
    pub fn add(&mut self, t: MigratedThread) {
        let t_ = &mut self.totals;
        let written = match t.action.as_str() {
            "copy" => {
                t_.copied += 1;
                true
            }
            "replace" => {
                t_.replaced += 1;
                true
            }
            "skip" => {
                t_.skipped += 1;
                false
            }
            "unreadable" | "refused" => {
                t_.left_out += 1;
                false
            }
            _ => {
                t_.differing += 1;
                false
            }
        };
        if written {
            t_.checkpoints_written += t.counts.checkpoints;
            t_.writes_written += t.counts.writes;
        }
        self.threads.push(t);
    }
}
