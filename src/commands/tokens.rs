//! `memctl tokens`: what a thread costs in tokens, per message or per thread (rendered by
//! `output::tokens`).

use std::io::Write;

use anyhow::{Context, Result};
use serde_json::Value as Json;

use crate::cli::{CounterKind, Format, GlobalArgs, TokensArgs, TokensSort};
use crate::codec::Value;
use crate::model::checkpoint::StoredMessages;
use crate::model::Message;
use crate::output::listing::{Listing, Order};
use crate::output::tokens::{
    MessageTokens, MessageUsage, MessagesReport, ThreadTokens, UsageReport,
};
use crate::output::{self, human};
use crate::read::LoadedCheckpoint;
use crate::tokens::Counter;

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
            let format = output::resolve_format(g.format);
            if usage {
                let report = usage_report(thread, spans.len(), &read)?;
                return output::tokens::write_usage(out, format, &report);
            }
            let counter = super::resolve_counter(&args.counter)?;
            let report = per_message(thread, spans.len(), &read, counter, format == Format::Table)?;
            output::tokens::write_messages(out, format, &report)
        }
        None => {
            let counter = if usage {
                None
            } else {
                Some(super::resolve_counter(&args.counter)?)
            };
            per_thread(g, &*store, counter, args, out)
        }
    }
}

/// Message `i` of a thread being reported, read on its own.
pub(crate) type ReadMessage<'a> = dyn Fn(usize) -> Result<Message> + Sync + 'a;

/// The per-message token report of `n` messages (`read(i)` reads message `i`) as
/// `tokens --thread` makes it; `previews`: with each message's text cut to one line (the
/// table shows it). (pub(crate): `browse` shows it for any checkpoint.)
pub(crate) fn per_message<'a>(
    thread: &'a str,
    n: usize,
    read: &ReadMessage<'_>,
    counter: Counter,
    previews: bool,
) -> Result<MessagesReport<'a>> {
    // One message at a time (a chunk on each core): only what the report shows is kept.
    let messages: Vec<MessageTokens> = crate::par::par_in_order(n, |i| {
        let m = read(i)?;
        Ok(MessageTokens {
            index: i,
            tokens: counter.count_message(&m)?,
            text: if previews {
                human::preview(&m.summary_text(), 50)
            } else {
                String::new()
            },
            kind: m.kind.type_str(),
            id: m.id().map(str::to_owned),
        })
    })
    .collect::<Result<_>>()?;
    Ok(MessagesReport {
        thread_id: thread,
        counter: counter.name(),
        total: counter.list_overhead() + messages.iter().map(|r| r.tokens).sum::<u64>(),
        messages,
        list_overhead: counter.list_overhead(),
    })
}

/// Provider-reported usage of the AI messages.
fn usage_report<'a>(thread: &'a str, n: usize, read: &ReadMessage<'_>) -> Result<UsageReport<'a>> {
    // The messages that carry usage_metadata, read one at a time.
    let rows: Vec<MessageUsage> = crate::par::par_in_order(n, |i| {
        let m = read(i)?;
        Ok(m.usage_metadata().map(|u| MessageUsage {
            index: i,
            id: m.id().map(str::to_owned),
            usage_metadata: u.clone(),
        }))
    })
    .filter_map(Result::transpose)
    .collect::<Result<_>>()?;
    Ok(UsageReport::new(thread, rows))
}

/// Every thread's latest state, counted on all cores: the threads come a batch at a time in
/// thread-id order (read on a second handle), the main thread reads their blobs (with
/// `--jobs`, several connections do), workers decode and count; rows are written as they come (`--sort thread`, JSON) or once all are
/// counted ([`crate::output::listing`]).
fn per_thread(
    g: &GlobalArgs,
    store: &dyn crate::storage::CheckpointStore,
    counter: Option<Counter>,
    args: &TokensArgs,
    out: &mut dyn Write,
) -> Result<()> {
    let keys = super::keys(g);
    let format = output::resolve_format(g.format);
    let order = match args.sort {
        TokensSort::Tokens => Order::Descending,
        TokensSort::Thread => Order::AsRead,
    };
    let counter_name = counter.map(|c| c.name());
    let mut listing = Listing::new(out, format, order, args.limit);
    let mut total = 0;
    let mut unreadable: Vec<(String, String)> = Vec::new();
    let readers = crate::read::Readers::new(store, args.jobs);
    crate::read::stream::latest_root_ids(store, &mut |latest| {
        total += latest.len();
        let counted =
            crate::read::map_latest(&readers, &latest, |row| count_row(&keys, row, counter))?;
        for ((thread, id), r) in latest.iter().zip(counted) {
            // A DeltaChannel thread's messages are rebuilt from its older rows, read here.
            let r = match r {
                Ok(None) => count_state(store, &keys, thread, id, counter),
                Ok(Some(t)) => Ok(t),
                Err(e) => Err(e),
            };
            let row = match r {
                Ok(r) => r,
                Err(e) => {
                    unreadable.push((thread.clone(), format!("{e:#}")));
                    continue;
                }
            };
            // Most tokens first; a thread without a count last.
            let key = row.tokens.map_or(i128::MIN, i128::from);
            let record = row.record(counter_name.as_deref());
            if !listing.push(key, false, &record, || row.cells())? {
                return Ok(false);
            }
        }
        Ok(listing.wants_more())
    })?;
    let header = output::tokens::threads_tokens_header(counter_name.as_deref());
    let written = listing.finish(&["thread_id", "messages", &header], &[1, 2], None)?;
    if format == Format::Table {
        output::tokens::write_threads_total(out, counter_name.as_deref(), &written)?;
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
    let md = crate::model::Metadata::parse(row.metadata.as_deref()).unwrap_or_default();
    let stored = match intact {
        true => crate::read::replay::stored_messages_location(&row.checkpoint),
        false => crate::model::channels::Location::Absent,
    };
    if crate::model::channels::is_delta(stored, &md) {
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
