//! `memctl copy` reports: what was copied (or would be, with `--dry-run`) and where; one line
//! for people, one JSON document for scripts. Thread ids come from the database or the
//! command line: they pass through [`one_line`].

use std::io::Write;

use anyhow::Result;
use serde::Serialize;

use super::sanitize::one_line;
use super::{write_document, Format};
use crate::ops::copy::CopyCounts;

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

/// Writes the report of a copy.
pub fn write_copy(out: &mut dyn Write, format: Format, r: &CopyReport) -> Result<()> {
    if format != Format::Table {
        return write_document(out, format, r);
    }
    let verb = match (r.dry_run, r.at.is_some()) {
        (true, false) => "would copy",
        (true, true) => "would fork",
        (false, false) => "copied",
        (false, true) => "forked",
    };
    let at = match &r.at {
        Some(at) => format!(" at checkpoint {}", one_line(at)),
        None => String::new(),
    };
    let place = match &r.to {
        Some(to) if r.created => format!(" in the new file {}", one_line(to)),
        Some(to) => format!(" in {}", one_line(to)),
        None => String::new(),
    };
    let replaced = match (r.replaced, r.dry_run) {
        (true, true) => " (replacing the thread there)",
        (true, false) => " (the thread there replaced)",
        _ => "",
    };
    let c = &r.counts;
    let plural = |n: u64, one: &str, many: &str| format!("{n} {}", if n == 1 { one } else { many });
    let mut what = format!(
        "{} in {}, {}",
        plural(c.checkpoints, "checkpoint", "checkpoints"),
        plural(c.namespaces, "namespace", "namespaces"),
        plural(c.writes, "pending write", "pending writes")
    );
    if c.metadata_rewritten > 0 {
        what.push_str(&format!(
            "; thread_id rewritten in the metadata of {}",
            plural(c.metadata_rewritten, "checkpoint", "checkpoints")
        ));
    }
    writeln!(
        out,
        "{verb} thread '{}'{at} to '{}'{place}{replaced}: {what}",
        one_line(&r.thread),
        one_line(&r.to_thread)
    )?;
    for v in &r.shared_versions {
        writeln!(
            out,
            "note: checkpoint {} holds another '{}' value under the version an earlier checkpoint stored; PostgresSaver keeps one value per version, so it reads the earlier one there (as the app's own PostgresSaver would)",
            one_line(&v.checkpoint_id),
            one_line(&v.channel)
        )?;
    }
    Ok(())
}
