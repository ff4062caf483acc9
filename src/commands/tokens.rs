//! `memctl tokens`: what a thread costs in tokens, per message or per thread.

use std::io::Write;

use anyhow::{Context, Result};
use serde_json::{json, Value as Json};

use crate::cli::{CounterKind, Format, GlobalArgs, TokensArgs};
use crate::codec::Value;
use crate::model::checkpoint::StoredMessages;
use crate::model::{Kind, Message};
use crate::output::{self, human, table};
use crate::tokens::Counter;

use crate::read::LoadedCheckpoint;

/// Runs `tokens`.
pub fn run(g: &GlobalArgs, args: &TokensArgs, out: &mut dyn Write) -> Result<()> {
    let store = super::open_read_only(g)?;
    let keys = super::keys(g);
    let usage = args.counter.counter == CounterKind::Usage && args.counter.model.is_none();
    match &args.thread {
        Some(thread) => {
            // The message list stays stored; messages are read and counted a chunk at a time.
            let (cp, messages, _) = crate::read::load_shallow(&*store, &keys, thread, &g.ns, None)?;
            let (list, spans) = crate::read::stored_list(&cp, &messages)?;
            let read = |i: usize| match list {
                Some(list) => list.message(i, &spans[i]),
                None => anyhow::bail!("no message {i}"),
            };
            if usage {
                return usage_report(g, thread, spans.len(), &read, out);
            }
            let counter = super::resolve_counter(&args.counter)?;
            per_message(g, thread, spans.len(), &read, counter, out)
        }
        None => {
            let counter = if usage {
                None
            } else {
                Some(super::resolve_counter(&args.counter)?)
            };
            per_thread(g, &*store, counter, args.limit, out)
        }
    }
}

/// What the per-message report keeps of a message.
struct Counted {
    kind: Kind,
    id: Option<String>,
    tokens: u64,
    /// The one-line preview (table only).
    text: String,
}

/// Message `i` of a thread being reported, read on its own.
pub(crate) type ReadMessage<'a> = dyn Fn(usize) -> Result<Message> + Sync + 'a;

/// Writes the per-message token report of `n` messages (`read(i)` reads message `i`) as
/// `tokens --thread` does, in `g`'s format. (pub(crate): `browse` shows it for any
/// checkpoint.)
pub(crate) fn per_message(
    g: &GlobalArgs,
    thread: &str,
    n: usize,
    read: &ReadMessage<'_>,
    counter: Counter,
    out: &mut dyn Write,
) -> Result<()> {
    let format = output::resolve_format(g.format);
    let table = format == Format::Table;
    // One message at a time (a chunk on each core): only what the report shows is kept.
    let rows: Vec<Counted> = crate::par::par_in_order(n, |i| {
        let m = read(i)?;
        Ok(Counted {
            tokens: counter.count_message(&m)?,
            text: if table {
                human::preview(&m.summary_text(), 50)
            } else {
                String::new()
            },
            kind: m.kind,
            id: m.id().map(str::to_owned),
        })
    })
    .collect::<Result<_>>()?;
    let total = counter.list_overhead() + rows.iter().map(|r| r.tokens).sum::<u64>();
    match format {
        Format::Table => {
            let tokens_header = format!("tokens ({})", counter.name());
            write_table(
                out,
                &["#", "type", "id", &tokens_header, "text"],
                &[0, 3],
                rows.len(),
                |i| {
                    let r = &rows[i];
                    vec![
                        i.to_string(),
                        r.kind.type_str().to_owned(),
                        human::id(r.id.as_deref().unwrap_or("-")),
                        r.tokens.to_string(),
                        r.text.clone(),
                    ]
                },
            )?;
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
                "messages": crate::output::stream::placeholder(0),
            });
            let elements = rows.iter().enumerate().map(|(i, r)| {
                crate::output::stream::element_bytes(
                    format,
                    &json!({"index": i, "type": r.kind.type_str(), "id": r.id, "tokens": r.tokens}),
                )
            });
            crate::output::stream::write_streamed(out, format, &doc, vec![elements])?;
        }
    }
    Ok(())
}

/// Rows a table is laid out and rendered with at a time.
const TABLE_CHUNK: usize = 2048;

/// Writes the table of `n` rows (`row(i)` gives the cells of row `i`) byte for byte as
/// `writeln!(out, "{}", table::render(&t))` writes the whole table `t` (made by
/// [`table::new_table`] with these headers, `right` aligned right), without ever holding
/// more than a chunk of rows as table cells: a table of 100,000 messages as comfy-table cells
/// is ~150 MB.
///
/// How: a table's layout depends on its content only through each column's widest cell,
/// unless a column must wrap (then comfy-table looks at every cell's words). So the widest
/// cell of each column is measured first (by comfy-table, a chunk at a time); a probe table of
/// the header and one row of cells that wide tells the layout. When that row is laid out on
/// one line, nothing wraps: each chunk is rendered with the same probe row first (so the
/// layout is the same), and its lines after the header and the probe row are written. When
/// it wraps, the whole table is built as before.
fn write_table(
    out: &mut dyn Write,
    headers: &[&str],
    right: &[usize],
    n: usize,
    row: impl Fn(usize) -> Vec<String>,
) -> Result<()> {
    let with_rows = |probes: &[Vec<String>], rows: std::ops::Range<usize>| {
        let mut t = table::new_table(headers);
        table::align_right(&mut t, right);
        for p in probes {
            t.add_row(p.clone());
        }
        for i in rows {
            t.add_row(row(i));
        }
        table::render(&t)
    };
    if n <= TABLE_CHUNK {
        writeln!(out, "{}", with_rows(&[], 0..n))?;
        return Ok(());
    }
    let mut widths = vec![0u16; headers.len()];
    for start in (0..n).step_by(TABLE_CHUNK) {
        let mut t = comfy_table::Table::new();
        for i in start..n.min(start + TABLE_CHUNK) {
            t.add_row(row(i));
        }
        for (w, m) in widths.iter_mut().zip(t.column_max_content_widths()) {
            *w = (*w).max(m);
        }
    }
    let probe: Vec<String> = widths.iter().map(|&w| "x".repeat(w.into())).collect();
    let one = with_rows(std::slice::from_ref(&probe), 0..0);
    let two = with_rows(&[probe.clone(), probe.clone()], 0..0);
    let (lines_one, lines_two) = (one.split('\n').count(), two.split('\n').count());
    let probe_lines = lines_two.saturating_sub(lines_one);
    if probe_lines != 1 {
        // A column wraps: comfy-table needs every cell to lay it out.
        writeln!(out, "{}", with_rows(&[], 0..n))?;
        return Ok(());
    }
    let header_lines = lines_one - probe_lines;
    for line in one.split('\n').take(header_lines) {
        writeln!(out, "{line}")?;
    }
    for start in (0..n).step_by(TABLE_CHUNK) {
        let text = with_rows(
            std::slice::from_ref(&probe),
            start..n.min(start + TABLE_CHUNK),
        );
        for line in text.split('\n').skip(header_lines + probe_lines) {
            writeln!(out, "{line}")?;
        }
    }
    Ok(())
}

/// Provider-reported usage of the AI messages.
fn usage_report(
    g: &GlobalArgs,
    thread: &str,
    n: usize,
    read: &ReadMessage<'_>,
    out: &mut dyn Write,
) -> Result<()> {
    type Usage = serde_json::Map<String, Json>;
    // (index, id, usage_metadata) of the messages that carry it, read one at a time.
    let rows: Vec<(usize, Option<String>, Usage)> = crate::par::par_in_order(n, |i| {
        let m = read(i)?;
        Ok(m.usage_metadata()
            .map(|u| (i, m.id().map(str::to_owned), u.clone())))
    })
    .filter_map(Result::transpose)
    .collect::<Result<_>>()?;
    let get = |u: &Usage, k: &str| u.get(k).and_then(Json::as_u64).unwrap_or(0);
    let last_input = rows.last().map(|(_, _, u)| get(u, "input_tokens"));
    let sum = |k: &str| rows.iter().map(|(_, _, u)| get(u, k)).sum::<u64>();
    match output::resolve_format(g.format) {
        Format::Table => {
            let mut t = table::new_table(&["#", "id", "input", "output", "total"]);
            table::align_right(&mut t, &[0, 2, 3, 4]);
            for (i, id, u) in &rows {
                t.add_row(vec![
                    i.to_string(),
                    human::id(id.as_deref().unwrap_or("-")),
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
                "messages": rows.iter().map(|(i, id, u)| json!({"index": i, "id": id, "usage_metadata": u})).collect::<Vec<_>>(),
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
    store: &dyn crate::storage::CheckpointStore,
    counter: Option<Counter>,
    limit: Option<usize>,
    out: &mut dyn Write,
) -> Result<()> {
    let latest = store.latest_root_ids()?;
    let total = latest.len();
    let keys = super::keys(g);
    let mut unreadable: Vec<(String, String)> = Vec::new();
    let mut rows: Vec<ThreadTokens> = latest
        .iter()
        .zip(crate::read::map_latest(store, &latest, |row| {
            count_row(&keys, row, counter)
        })?)
        // A DeltaChannel thread's messages are rebuilt from its older rows, read here.
        .map(|((thread, id), r)| {
            let r = match r {
                Ok(None) => count_state(store, &keys, thread, id, counter),
                Ok(Some(t)) => Ok(t),
                Err(e) => Err(e),
            };
            ((thread, id), r)
        })
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

/// Counts a thread's latest checkpoint `id` read with its state (a DeltaChannel's messages
/// rebuilt).
fn count_state(
    store: &dyn crate::storage::CheckpointStore,
    keys: &crate::codec::aes::Keyring,
    thread: &str,
    id: &str,
    counter: Option<Counter>,
) -> Result<ThreadTokens> {
    let (cp, stored, _) = crate::read::load_shallow(store, keys, thread, "", Some(id))?;
    count_stored(thread.to_owned(), &cp, &stored, counter)
}

/// Counts one thread's latest checkpoint (decrypted with `keys` when encrypted). The
/// approximate counter reads the stored values in place; the others build the message view
/// they need. `None`: the checkpoint's messages are a DeltaChannel's, left out of the row
/// (see [`count_state`]).
fn count_row(
    keys: &crate::codec::aes::Keyring,
    row: crate::storage::CheckpointRow,
    counter: Option<Counter>,
) -> Result<Option<ThreadTokens>> {
    let (row, _) = crate::ops::edit::open_checkpoint(keys, row)?;
    let whole = |r: &crate::codec::lazy::Spanned<'_>| {
        r.raw().is_ok_and(|raw| raw.len() == row.checkpoint.len())
            && matches!(r.value, crate::codec::lazy::Lazy::Map(_))
    };
    let intact = row.type_name == "msgpack"
        && crate::codec::lazy::root(&row.checkpoint).is_ok_and(|r| whole(&r));
    // A DeltaChannel thread is counted from its state (see count_state).
    let md = crate::model::Metadata::parse(row.metadata.as_deref()).ok();
    let snapshot = intact
        && matches!(
            crate::model::channels::stored_lazy(
                &row.checkpoint,
                crate::model::checkpoint::MESSAGES,
                || false
            ),
            Ok((crate::model::channels::Location::DeltaSnapshot, _))
        );
    if snapshot || md.is_some_and(|m| crate::model::delta::marks_delta(&m)) {
        return Ok(None);
    }
    if counter == Some(Counter::Approx) && intact {
        if let Some((messages, Some(tokens))) =
            crate::tokens::approx::count_checkpoint_blob(&row.checkpoint)
        {
            return Ok(Some(ThreadTokens {
                thread_id: row.thread_id.clone(),
                messages,
                tokens: Some(tokens),
            }));
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
        let (_, list) = cp.stored_value(crate::model::checkpoint::MESSAGES);
        if let Some(tokens) = list.and_then(crate::tokens::approx::count_values) {
            let messages = list.and_then(Value::as_array).map_or(0, <[Value]>::len);
            return Ok(Some(ThreadTokens {
                thread_id: row.thread_id.clone(),
                messages,
                tokens: Some(tokens),
            }));
        }
    }
    // The other counters read one message view at a time.
    let thread_id = row.thread_id.clone();
    let (cp, stored) = crate::read::decode_shallow(keys, row)?;
    if matches!(stored, StoredMessages::DeltaOmitted) {
        return Ok(None);
    }
    count_stored(thread_id, &cp, &stored, counter).map(Some)
}

/// Counts the message list `stored` of a checkpoint with `counter` (`None`: the provider's
/// usage).
fn count_stored(
    thread_id: String,
    cp: &LoadedCheckpoint,
    stored: &StoredMessages,
    counter: Option<Counter>,
) -> Result<ThreadTokens> {
    let (list, spans) = crate::read::stored_list(cp, stored)?;
    let read = |i: usize| match list {
        Some(list) => list.message(i, &spans[i]),
        None => anyhow::bail!("no message {i}"),
    };
    let tokens = match counter {
        Some(c) => {
            let mut total = c.list_overhead();
            for n in crate::par::par_in_order(spans.len(), |i| c.count_message(&read(i)?)) {
                total += n?;
            }
            Some(total)
        }
        // The provider's count of the last message that carries one.
        None => {
            let mut last = None;
            for i in (0..spans.len()).rev() {
                if let Some(u) = read(i)?.usage_metadata() {
                    last = u.get("input_tokens").and_then(Json::as_u64);
                    break;
                }
            }
            last
        }
    };
    Ok(ThreadTokens {
        thread_id,
        messages: spans.len(),
        tokens,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The chunked table is the whole table's bytes (layout from the widest cells).
    #[test]
    fn chunked_tables_are_the_whole_tables_bytes() {
        let headers = ["#", "type", "id", "tokens (approx)", "text"];
        let row = |i: usize| {
            vec![
                i.to_string(),
                ["human", "ai", "tool"][i % 3].to_owned(),
                format!("id-{}", "x".repeat(i % 17)),
                (i * 7919 % 1000).to_string(),
                format!("{} é😀 end", "word ".repeat(i % 9)),
            ]
        };
        for n in [0, 1, TABLE_CHUNK, TABLE_CHUNK + 1, 2 * TABLE_CHUNK + 5] {
            let mut got = Vec::new();
            write_table(&mut got, &headers, &[0, 3], n, row).expect("writes");
            let mut t = table::new_table(&headers);
            table::align_right(&mut t, &[0, 3]);
            for i in 0..n {
                t.add_row(row(i));
            }
            let want = format!("{}\n", table::render(&t));
            assert!(String::from_utf8_lossy(&got) == want, "{n} rows differ");
        }
    }
}
