//! `memctl threads list`: one row per thread, from SQL aggregates plus one blob per thread.

use std::io::Write;

use anyhow::Result;
use serde_json::{json, Value as Json};

use crate::cli::{Format, GlobalArgs, ThreadSort, ThreadsListArgs};
use crate::output::{self, human, table};
use crate::storage::CheckpointStore;
use crate::tokens::approx;

use super::LoadedCheckpoint;

/// One listed thread.
struct ThreadRow {
    thread_id: String,
    checkpoints: u64,
    namespaces: u64,
    messages: Option<usize>,
    tokens: Option<u64>,
    last_step: Option<i64>,
    updated_at: Option<jiff::Timestamp>,
    bytes: u64,
}

/// Runs `threads list`.
pub fn list(g: &GlobalArgs, args: &ThreadsListArgs, out: &mut dyn Write) -> Result<()> {
    let store = super::open_read_only(g)?;
    let now = human::now(g.now.as_deref())?;
    let mut rows = Vec::new();
    store.for_each_thread(&mut |t| {
        let mut row = ThreadRow {
            thread_id: t.thread_id.clone(),
            checkpoints: t.checkpoints,
            namespaces: t.namespaces,
            messages: None,
            tokens: None,
            last_step: None,
            updated_at: None,
            bytes: t.bytes,
        };
        if let Some(id) = &t.latest_root_id {
            if let Some(cp_row) = store.checkpoint(&t.thread_id, "", Some(id))? {
                let cp = LoadedCheckpoint::decode(cp_row)?;
                let channel = cp.checkpoint.messages()?;
                row.messages = channel.count();
                row.tokens = channel.messages().map(approx::count);
                row.last_step = cp.metadata.step();
                row.updated_at = cp.checkpoint.ts().and_then(human::parse_ts);
            }
        }
        rows.push(row);
        Ok(())
    })?;
    if let Some(min) = args.min_tokens {
        rows.retain(|r| r.tokens.is_some_and(|t| t >= min));
    }
    match args.sort {
        ThreadSort::Updated => rows.sort_by_key(|r| std::cmp::Reverse(r.updated_at)),
        ThreadSort::Size => rows.sort_by_key(|r| std::cmp::Reverse(r.bytes)),
        ThreadSort::Messages => rows.sort_by_key(|r| std::cmp::Reverse(r.messages)),
        ThreadSort::Checkpoints => rows.sort_by_key(|r| std::cmp::Reverse(r.checkpoints)),
        ThreadSort::Tokens => rows.sort_by_key(|r| std::cmp::Reverse(r.tokens)),
    }
    if let Some(limit) = args.limit {
        rows.truncate(limit);
    }
    let age = |r: &ThreadRow| r.updated_at.map(|t| now.as_second() - t.as_second());
    match output::resolve_format(g.format) {
        Format::Table => {
            let mut t = table::new_table(&[
                "thread_id",
                "checkpoints",
                "messages",
                "tokens",
                "last_step",
                "updated_at",
                "age",
                "bytes",
            ]);
            table::align_right(&mut t, &[1, 2, 3, 4, 7]);
            for r in &rows {
                t.add_row(vec![
                    human::preview(&r.thread_id, 40),
                    r.checkpoints.to_string(),
                    r.messages.map_or("-".into(), |m| m.to_string()),
                    r.tokens.map_or("-".into(), |m| m.to_string()),
                    r.last_step.map_or("-".into(), |s| s.to_string()),
                    r.updated_at.as_ref().map_or("-".into(), human::utc),
                    age(r).map_or("-".into(), human::age),
                    human::bytes(r.bytes),
                ]);
            }
            if rows.is_empty() {
                writeln!(out, "no threads")?;
            } else {
                writeln!(out, "{t}")?;
            }
        }
        format => {
            let records: Vec<Json> = rows
                .iter()
                .map(|r| {
                    json!({
                        "thread_id": r.thread_id,
                        "checkpoints": r.checkpoints,
                        "namespaces": r.namespaces,
                        "messages": r.messages,
                        "tokens": r.tokens,
                        "last_step": r.last_step,
                        "updated_at": r.updated_at.as_ref().map(human::utc),
                        "age_seconds": age(r),
                        "bytes": r.bytes,
                    })
                })
                .collect();
            output::write_records(out, format, &records)?;
        }
    }
    Ok(())
}
