//! `history`'s report: a thread's checkpoints, newest first, as a table or JSON records.

use std::io::Write;

use super::{human, table, Format};
use anyhow::Result;

pub use crate::read::history::HistoryRecord;

/// Writes `records` in `format`.
pub fn write(out: &mut dyn Write, format: Format, records: &[HistoryRecord]) -> Result<()> {
    if format != Format::Table {
        return super::write_records(out, format, records);
    }
    let mut t = table::new_table(&[
        "checkpoint_id",
        "parent",
        "step",
        "source",
        "ts",
        "messages",
        "writes",
        "namespaces",
    ]);
    table::align_right(&mut t, &[2, 5, 6]);
    let or_dash = |v: Option<String>| v.unwrap_or_else(|| "-".to_owned());
    for r in records {
        let ts = r.ts.as_deref().and_then(human::parse_ts);
        t.add_row(vec![
            human::id(&r.checkpoint_id),
            or_dash(r.parent_checkpoint_id.as_deref().map(human::id)),
            or_dash(r.step.map(|s| s.to_string())),
            or_dash(r.source.as_deref().map(|s| human::preview(s, 60))),
            ts.as_ref().map_or("-".into(), human::utc),
            or_dash(r.messages.map(|n| n.to_string())),
            r.pending_writes.to_string(),
            human::preview(&r.namespaces.join(", "), 40),
        ]);
    }
    writeln!(out, "{}", table::render(&t))?;
    Ok(())
}
