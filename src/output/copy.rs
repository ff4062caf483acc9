//! `memctl copy` reports: what was copied (or would be, with `--dry-run`) and where; one line
//! for people, one JSON document for scripts. Thread ids come from the database or the
//! command line: they pass through [`one_line`].

use std::io::Write;

use anyhow::Result;

use super::human::count;
use super::sanitize::one_line;
use super::{write_document, Format};
pub use crate::jobs::copy::report::{
    left_out_reasons, CopiesReport, CopyReport, ExportReport, ExportedThread, LeftOut,
    MigrateReport, MigrateTotals, MigratedThread, RedactionReport, SaverSetup, SharedVersion,
    StoreItemLeftOut, StoreItemName, StoreMigration,
};
use crate::ops::copy::CopyCounts;

/// Writes the line of a saver set-up (nothing when `s` is `None`).
fn write_saver_setup(out: &mut dyn Write, s: Option<&SaverSetup>, dry_run: bool) -> Result<()> {
    let Some(s) = s else {
        return Ok(());
    };
    let schema = one_line(&s.schema);
    match (s.created_tables, s.from_level) {
        (true, None) => writeln!(
            out,
            "{} PostgresSaver's tables in schema '{schema}' as PostgresSaver.setup() makes them (migration level {})",
            if dry_run { "would create" } else { "created" },
            s.to_level
        )?,
        (true, Some(from)) => writeln!(
            out,
            "{} PostgresSaver's missing tables in schema '{schema}' as PostgresSaver.setup() makes them (migration level {from} to {})",
            if dry_run { "would create" } else { "created" },
            s.to_level
        )?,
        (false, from) => writeln!(
            out,
            "{} PostgresSaver's tables in schema '{schema}' from migration level {} to {} as PostgresSaver.setup() does",
            if dry_run { "would bring" } else { "brought" },
            from.unwrap_or(-1),
            s.to_level
        )?,
    }
    Ok(())
}

impl LeftOut {
    /// The words a report shows for the reason.
    fn shown_reason(&self) -> &'static str {
        match self.reason.as_str() {
            "unreadable" => "unreadable",
            _ => "the target cannot hold it",
        }
    }
}

/// Writes the lines of the threads left out.
fn write_left_out(out: &mut dyn Write, left: &[LeftOut]) -> Result<()> {
    for l in left {
        writeln!(
            out,
            "left out thread '{}' ({}), nothing of it written: {}",
            one_line(&l.thread),
            l.shown_reason(),
            one_line(&l.why)
        )?;
    }
    Ok(())
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
    write_saver_setup(out, r.saver_setup.as_ref(), r.dry_run)?;
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
    what.push_str(&value_changes(c));
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

/// What `--materialize`, `--key-env` and `--new-key-env` changed, as "; …" clauses (empty
/// when nothing).
fn value_changes(c: &CopyCounts) -> String {
    let mut s = String::new();
    if c.materialized > 0 {
        s.push_str(&format!(
            "; DeltaChannel values written in full in {}",
            count(c.materialized, "checkpoint")
        ));
    }
    if c.values_decrypted > 0 {
        s.push_str(&format!(
            "; {} decrypted",
            count(c.values_decrypted, "value")
        ));
    }
    if c.values_encrypted > 0 {
        s.push_str(&format!(
            "; {} under the new key",
            count(c.values_encrypted, "value")
        ));
    }
    s
}

/// Writes the report of a copy of several threads: a line per thread, then the totals.
pub fn write_copies(out: &mut dyn Write, format: Format, r: &CopiesReport) -> Result<()> {
    if format != Format::Table {
        return write_document(out, format, r);
    }
    let dry_run = r.threads.first().is_some_and(|t| t.dry_run);
    write_saver_setup(out, r.saver_setup.as_ref(), dry_run)?;
    for t in &r.threads {
        write_copy(out, format, t)?;
    }
    write_left_out(out, &r.left_out)?;
    writeln!(
        out,
        "{} {}: {} in total, {}{}",
        if dry_run { "would copy" } else { "copied" },
        count(r.threads.len() as u64, "thread"),
        count(r.totals.checkpoints, "checkpoint"),
        count(r.totals.writes, "pending write"),
        match r.left_out.len() {
            0 => String::new(),
            n => format!("; {} left out", count(n as u64, "thread")),
        }
    )?;
    Ok(())
}

/// Writes the report of an export.
pub fn write_export(out: &mut dyn Write, format: Format, r: &ExportReport) -> Result<()> {
    if format != Format::Table {
        return write_document(out, format, r);
    }
    for t in &r.threads {
        writeln!(
            out,
            "exported thread '{}': {} in {}, {}",
            one_line(&t.thread),
            count(t.counts.checkpoints, "checkpoint"),
            count(t.counts.namespaces, "namespace"),
            count(t.counts.writes, "pending write")
        )?;
    }
    write_left_out(out, &r.left_out)?;
    writeln!(
        out,
        "wrote {} ({}, {}) to {}{}",
        count(r.threads.len() as u64, "thread"),
        count(r.totals.checkpoints, "checkpoint"),
        count(r.totals.writes, "pending write"),
        one_line(&r.file),
        if r.replaced_file {
            " (the file there replaced)"
        } else {
            ""
        }
    )?;
    if let Some(x) = &r.redaction {
        let short = match x.short_texts {
            0 => String::new(),
            n => format!(
                "; {} shorter than 4 bytes checked in every decoded value",
                count(n as u64, "matched text")
            ),
        };
        writeln!(
            out,
            "redacted {} in {} ({}); verified: no match left ({} searched for in every byte of the file{short})",
            count(x.strings_redacted, "string"),
            count(x.rows_redacted, "row"),
            count(x.patterns as u64, "pattern"),
            count(x.texts_searched as u64, "matched text"),
        )?;
    }
    Ok(())
}

/// Writes the report of a migration: a line per thread, then the totals.
pub fn write_migrate(out: &mut dyn Write, format: Format, r: &MigrateReport) -> Result<()> {
    if format != Format::Table {
        return write_document(out, format, r);
    }
    write_saver_setup(out, r.saver_setup.as_ref(), r.dry_run)?;
    for t in &r.threads {
        let what = match (t.action.as_str(), r.dry_run) {
            ("copy", false) => "copied",
            ("copy", true) => "would copy",
            ("replace", false) => "replaced",
            ("replace", true) => "would replace",
            ("skip", _) => "skipped (already there, equal)",
            ("unreadable" | "refused", _) => {
                let reason = match t.action.as_str() {
                    "unreadable" => "unreadable",
                    _ => "the target cannot hold it",
                };
                writeln!(
                    out,
                    "thread '{}': left out ({reason}), nothing of it written: {}",
                    one_line(&t.thread),
                    one_line(t.why.as_deref().unwrap_or_default())
                )?;
                continue;
            }
            _ => "differs in the target: left as it is (--replace overwrites it)",
        };
        let changes = match t.action.as_str() {
            "copy" | "replace" => value_changes(&t.counts),
            _ => String::new(),
        };
        writeln!(
            out,
            "thread '{}': {what} ({}, {}{changes})",
            one_line(&t.thread),
            count(t.counts.checkpoints, "checkpoint"),
            count(t.counts.writes, "pending write")
        )?;
    }
    let x = &r.totals;
    writeln!(
        out,
        "{} {}{}: {} copied, {} replaced, {} skipped as equal, {} differing left as they are{} ({}, {} {})",
        if r.dry_run { "would migrate into" } else { "migrated into" },
        one_line(&r.to),
        if r.created { " (a new file)" } else { "" },
        x.copied,
        x.replaced,
        x.skipped,
        x.differing,
        left_out_clause(x.left_out),
        count(x.checkpoints_written, "checkpoint"),
        count(x.writes_written, "pending write"),
        if r.dry_run { "to write" } else { "written" }
    )?;
    if let Some(st) = &r.store {
        for i in &st.differing_items {
            writeln!(
                out,
                "store item '{}' / '{}': {}",
                one_line(i.namespace.joined()),
                one_line(&i.key),
                match (i.action.as_str(), r.dry_run) {
                    ("replace", false) => "differed in the target: replaced",
                    ("replace", true) => "differs in the target: would replace",
                    _ => "differs in the target: left as it is (--replace overwrites it)",
                }
            )?;
        }
        for i in &st.left_out_items {
            writeln!(
                out,
                "store item '{}' / '{}': left out ({}), not written: {}",
                one_line(i.namespace.joined()),
                one_line(&i.key),
                match i.reason.as_str() {
                    "unreadable" => "unreadable",
                    _ => "the target cannot hold it",
                },
                one_line(&i.why)
            )?;
        }
        writeln!(
            out,
            "store: {} in {}: {} copied, {} replaced, {} skipped as equal, {} differing left as they are{}; {} {}{}",
            count(st.items, "item"),
            count(st.namespaces, "namespace"),
            st.copied,
            st.replaced,
            st.skipped,
            st.differing,
            left_out_clause(st.left_out),
            count(st.vectors_copied, "vector"),
            if r.dry_run { "to copy" } else { "copied" },
            match st.vectors_left_behind {
                0 => String::new(),
                n => format!(", {} left behind (--without-vectors)", count(n, "vector")),
            }
        )?;
    }
    Ok(())
}

/// ", N left out" for a migration's totals (nothing when none was).
fn left_out_clause(n: u64) -> String {
    match n {
        0 => String::new(),
        n => format!(", {n} left out"),
    }
}
