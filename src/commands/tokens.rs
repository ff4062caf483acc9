//! `memctl tokens`: what a thread costs in tokens, per message or per thread.

use std::io::Write;

use anyhow::{Context, Result};
use serde_json::{json, Value as Json};

use crate::cli::{CounterKind, Format, GlobalArgs, TokensArgs};
use crate::codec::Value;
use crate::model::{Message, MessagesChannel};
use crate::output::{self, human, table};
use crate::tokens::Counter;

use super::LoadedCheckpoint;

/// Runs `tokens`.
pub fn run(g: &GlobalArgs, args: &TokensArgs, out: &mut dyn Write) -> Result<()> {
    let store = super::open_read_only(g)?;
    let usage = args.counter.counter == CounterKind::Usage && args.counter.model.is_none();
    match &args.thread {
        Some(thread) => {
            let cp = super::load_checkpoint(&store, thread, &g.ns, None)?;
            let msgs = messages_of(&cp)?;
            if usage {
                return usage_report(g, thread, &msgs, out);
            }
            let counter = super::resolve_counter(&args.counter)?;
            per_message(g, thread, &msgs, counter, out)
        }
        None => {
            let counter = if usage {
                None
            } else {
                Some(super::resolve_counter(&args.counter)?)
            };
            per_thread(g, &store, counter, args.limit, out)
        }
    }
}

fn messages_of(cp: &LoadedCheckpoint) -> Result<Vec<Message>> {
    match cp.checkpoint.messages()? {
        MessagesChannel::List(m) | MessagesChannel::DeltaSnapshot(m) => Ok(m),
        MessagesChannel::Absent => Ok(vec![]),
        MessagesChannel::DeltaOmitted => anyhow::bail!(
            "thread '{}' keeps its messages in a DeltaChannel; checkpoint {} stores no message list",
            cp.row.thread_id,
            cp.row.checkpoint_id
        ),
    }
}

fn per_message(
    g: &GlobalArgs,
    thread: &str,
    msgs: &[Message],
    counter: Counter,
    out: &mut dyn Write,
) -> Result<()> {
    let counts: Vec<u64> = msgs
        .iter()
        .map(|m| counter.count_message(m))
        .collect::<Result<_>>()?;
    let total = counter.list_overhead() + counts.iter().sum::<u64>();
    match output::resolve_format(g.format) {
        Format::Table => {
            let tokens_header = format!("tokens ({})", counter.name());
            let mut t = table::new_table(&["#", "type", "id", &tokens_header, "text"]);
            table::align_right(&mut t, &[0, 3]);
            for (i, (m, n)) in msgs.iter().zip(&counts).enumerate() {
                t.add_row(vec![
                    i.to_string(),
                    m.kind.type_str().to_owned(),
                    human::id(m.id().unwrap_or("-")),
                    n.to_string(),
                    human::preview(&m.summary_text(), 50),
                ]);
            }
            writeln!(out, "{}", table::render(&t))?;
            let overhead = counter.list_overhead();
            let extra = if overhead > 0 {
                format!(" (including {overhead} for the reply priming)")
            } else {
                String::new()
            };
            writeln!(out, "total: {total} tokens ({}){extra}", counter.name())?;
        }
        format => {
            let doc = json!({
                "thread_id": thread,
                "counter": counter.name(),
                "total": total,
                "messages": msgs.iter().zip(&counts).enumerate().map(|(i, (m, n))| json!({
                    "index": i, "type": m.kind.type_str(), "id": m.id(), "tokens": n,
                })).collect::<Vec<_>>(),
            });
            output::write_document(out, format, &doc)?;
        }
    }
    Ok(())
}

/// Provider-reported usage of the AI messages.
fn usage_report(g: &GlobalArgs, thread: &str, msgs: &[Message], out: &mut dyn Write) -> Result<()> {
    let rows: Vec<(usize, &Message, &serde_json::Map<String, Json>)> = msgs
        .iter()
        .enumerate()
        .filter_map(|(i, m)| m.usage_metadata().map(|u| (i, m, u)))
        .collect();
    let get =
        |u: &serde_json::Map<String, Json>, k: &str| u.get(k).and_then(Json::as_u64).unwrap_or(0);
    let last_input = rows.last().map(|(_, _, u)| get(u, "input_tokens"));
    let sum = |k: &str| rows.iter().map(|(_, _, u)| get(u, k)).sum::<u64>();
    match output::resolve_format(g.format) {
        Format::Table => {
            let mut t = table::new_table(&["#", "id", "input", "output", "total"]);
            table::align_right(&mut t, &[0, 2, 3, 4]);
            for (i, m, u) in &rows {
                t.add_row(vec![
                    i.to_string(),
                    human::id(m.id().unwrap_or("-")),
                    get(u, "input_tokens").to_string(),
                    get(u, "output_tokens").to_string(),
                    get(u, "total_tokens").to_string(),
                ]);
            }
            if rows.is_empty() {
                writeln!(
                    out,
                    "no AI message of thread '{thread}' carries usage_metadata"
                )?;
            } else {
                writeln!(out, "{}", table::render(&t))?;
                writeln!(
                    out,
                    "last turn: {} input tokens; all turns: {} input, {} output, {} total",
                    last_input.unwrap_or(0),
                    sum("input_tokens"),
                    sum("output_tokens"),
                    sum("total_tokens")
                )?;
            }
        }
        format => {
            let doc = json!({
                "thread_id": thread,
                "counter": "usage",
                "last_input_tokens": last_input,
                "input_tokens": sum("input_tokens"),
                "output_tokens": sum("output_tokens"),
                "total_tokens": sum("total_tokens"),
                "messages": rows.iter().map(|(i, m, u)| json!({"index": i, "id": m.id(), "usage_metadata": u})).collect::<Vec<_>>(),
            });
            output::write_document(out, format, &doc)?;
        }
    }
    Ok(())
}

/// One thread's total.
struct ThreadTokens {
    thread_id: String,
    messages: usize,
    tokens: Option<u64>,
}

/// Every thread's latest state, counted on all cores: the main thread reads blobs, workers
/// decode and count.
fn per_thread(
    g: &GlobalArgs,
    store: &crate::storage::SqliteStore,
    counter: Option<Counter>,
    limit: Option<usize>,
    out: &mut dyn Write,
) -> Result<()> {
    let latest = store.latest_root_ids()?;
    let total = latest.len();
    let mut unreadable: Vec<(String, String)> = Vec::new();
    let mut rows: Vec<ThreadTokens> = latest
        .iter()
        .zip(super::map_latest(store, &latest, |row| {
            count_row(row, counter)
        })?)
        .filter_map(|((thread, _), r)| match r {
            Ok(r) => Some(r),
            Err(e) => {
                unreadable.push((thread.clone(), format!("{e:#}")));
                None
            }
        })
        .collect();
    rows.sort_by(|a, b| {
        b.tokens
            .cmp(&a.tokens)
            .then_with(|| a.thread_id.cmp(&b.thread_id))
    });
    if let Some(limit) = limit {
        rows.truncate(limit);
    }
    let counter_name = counter.map_or_else(|| "usage (last input_tokens)".to_owned(), |c| c.name());
    match output::resolve_format(g.format) {
        Format::Table => {
            let tokens_header = match counter {
                Some(c) => format!("tokens ({})", c.name()),
                None => "last input tokens (usage)".to_owned(),
            };
            let mut t = table::new_table(&["thread_id", "messages", &tokens_header]);
            table::align_right(&mut t, &[1, 2]);
            for r in &rows {
                t.add_row(vec![
                    human::id(&r.thread_id),
                    r.messages.to_string(),
                    r.tokens.map_or("-".into(), |n| n.to_string()),
                ]);
            }
            writeln!(out, "{}", table::render(&t))?;
            writeln!(
                out,
                "{}, {} tokens ({counter_name})",
                human::count(rows.len() as u64, "thread"),
                rows.iter().filter_map(|r| r.tokens).sum::<u64>()
            )?;
        }
        format => {
            let records: Vec<Json> = rows
                .iter()
                .map(|r| json!({"thread_id": r.thread_id, "messages": r.messages, "tokens": r.tokens, "counter": counter_name}))
                .collect();
            output::write_records(out, format, &records)?;
        }
    }
    super::report_unreadable(&unreadable, total, "are left out")
}

/// Counts one thread's latest checkpoint. The approximate counter reads the stored values in
/// place; the others build the message view they need.
fn count_row(row: crate::storage::CheckpointRow, counter: Option<Counter>) -> Result<ThreadTokens> {
    let whole = |r: &crate::codec::lazy::Spanned<'_>| {
        r.raw().is_ok_and(|raw| raw.len() == row.checkpoint.len())
            && matches!(r.value, crate::codec::lazy::Lazy::Map(_))
    };
    let intact = row.type_name == "msgpack"
        && crate::codec::lazy::root(&row.checkpoint).is_ok_and(|r| whole(&r));
    if counter == Some(Counter::Approx) && intact {
        if let Some((messages, Some(tokens))) =
            crate::tokens::approx::count_checkpoint_blob(&row.checkpoint)
        {
            return Ok(ThreadTokens {
                thread_id: row.thread_id.clone(),
                messages,
                tokens: Some(tokens),
            });
        }
    }
    if counter == Some(Counter::Approx) {
        let cp = crate::model::Checkpoint::decode(&row.type_name, &row.checkpoint).with_context(
            || {
                format!(
                    "cannot decode checkpoint {} of thread '{}'",
                    row.checkpoint_id, row.thread_id
                )
            },
        )?;
        let list = match cp.channel(crate::model::checkpoint::MESSAGES) {
            Some(Value::Ext(e)) if e.code == crate::codec::ext::DELTA_SNAPSHOT => Some(&e.payload),
            other => other,
        };
        if let Some(tokens) = list.and_then(crate::tokens::approx::count_values) {
            let messages = list.and_then(Value::as_array).map_or(0, <[Value]>::len);
            return Ok(ThreadTokens {
                thread_id: row.thread_id.clone(),
                messages,
                tokens: Some(tokens),
            });
        }
    }
    let thread_id = row.thread_id.clone();
    let cp = LoadedCheckpoint::decode(row)?;
    let msgs = messages_of(&cp)?;
    let tokens = match counter {
        Some(c) => Some(c.count(&msgs)?),
        None => msgs
            .iter()
            .rev()
            .find_map(|m| m.usage_metadata())
            .and_then(|u| u.get("input_tokens"))
            .and_then(Json::as_u64),
    };
    Ok(ThreadTokens {
        thread_id,
        messages: msgs.len(),
        tokens,
    })
}
