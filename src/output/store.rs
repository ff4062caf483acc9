//! `memctl store` reports: namespaces, items, one value, and what a removal or a sweep
//! deleted; as a table for people, JSON / JSON lines for scripts. Every namespace, key and
//! value comes from the database: table cells pass through [`one_line`].

use std::io::Write;

use super::sanitize::one_line;
use super::{human, table, write_document, write_records, Format};
use crate::ops::store::Labels;
use anyhow::Result;

pub use crate::jobs::store::{ItemRecord, NamespaceRecord, RemovalReport, RemovedRecord};

/// Writes `store namespaces`.
pub fn namespaces(out: &mut dyn Write, format: Format, rows: &[NamespaceRecord]) -> Result<()> {
    if format != Format::Table {
        return write_records(out, format, rows);
    }
    if rows.is_empty() {
        writeln!(out, "No namespaces.")?;
        return Ok(());
    }
    let mut t = table::new_table(&["namespace", "items", "bytes", "expired", "updated"]);
    for r in rows {
        t.add_row(vec![
            one_line(r.namespace.joined()),
            r.items.to_string(),
            human::bytes(r.bytes),
            r.expired.to_string(),
            r.updated_at
                .as_deref()
                .map(human::instant)
                .unwrap_or_default(),
        ]);
    }
    table::align_right(&mut t, &[1, 2, 3]);
    writeln!(out, "{}", table::render(&t))?;
    Ok(())
}

/// Writes `store ls`.
pub fn items(out: &mut dyn Write, format: Format, rows: &[ItemRecord]) -> Result<()> {
    if format != Format::Table {
        return write_records(out, format, rows);
    }
    if rows.is_empty() {
        writeln!(out, "No items.")?;
        return Ok(());
    }
    let mut t = table::new_table(&["key", "size", "created", "updated", "expires", "notes"]);
    for r in rows {
        let mut notes = Vec::new();
        if r.expired {
            notes.push("expired".to_owned());
        }
        if let Some(e) = &r.value_error {
            notes.push(format!("value is not JSON: {e}"));
        }
        t.add_row(vec![
            one_line(&r.key),
            human::bytes(r.size),
            r.created_at
                .as_deref()
                .map(human::instant)
                .unwrap_or_default(),
            r.updated_at
                .as_deref()
                .map(human::instant)
                .unwrap_or_default(),
            r.expires_at
                .as_deref()
                .map_or_else(|| "never".into(), human::instant),
            one_line(&notes.join("; ")),
        ]);
    }
    table::align_right(&mut t, &[1]);
    writeln!(out, "{}", table::render(&t))?;
    Ok(())
}

/// Writes `store get`: the value as JSON (pretty, or one line for `jsonl`).
pub fn value(out: &mut dyn Write, format: Format, value: &serde_json::Value) -> Result<()> {
    write_document(out, format, value)
}

/// Writes what `store rm` / `store sweep` did; `nothing` is the line for a removal that
/// found nothing to delete.
pub fn removal(
    out: &mut dyn Write,
    format: Format,
    r: &RemovalReport,
    nothing: &str,
) -> Result<()> {
    if format != Format::Table {
        return write_document(out, format, r);
    }
    if r.removed.is_empty() {
        writeln!(out, "{nothing}")?;
        return Ok(());
    }
    let verb = if r.dry_run { "Would delete" } else { "Deleted" };
    let mut namespaces: Vec<&Labels> = r.removed.iter().map(|i| &i.namespace).collect();
    namespaces.dedup();
    writeln!(
        out,
        "{verb} {} ({}) in {}{}.",
        human::count(r.items, "item"),
        human::bytes(r.bytes),
        human::count(namespaces.len() as u64, "namespace"),
        if r.vectors > 0 {
            format!(", and {}", human::count(r.vectors, "vector"))
        } else {
            String::new()
        }
    )?;
    let mut t = table::new_table(&["namespace", "key", "bytes"]);
    for i in &r.removed {
        t.add_row(vec![
            one_line(i.namespace.joined()),
            one_line(&i.key),
            human::bytes(i.bytes),
        ]);
    }
    table::align_right(&mut t, &[2]);
    writeln!(out, "{}", table::render(&t))?;
    if r.dry_run {
        writeln!(out, "Dry run: nothing was written.")?;
    }
    Ok(())
}
