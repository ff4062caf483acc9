//! `tokens`: what a thread costs in tokens, per message (`--thread`) or per thread (every
//! thread's latest state, the rows handed on as they are counted).

use anyhow::{Context, Result};
use serde::Serialize;
use serde_json::Value as Json;

use super::{Ctx, Sink};
use crate::codec::Value;
use crate::model::checkpoint::StoredMessages;
use crate::model::Message;
use crate::read::LoadedCheckpoint;
use crate::tokens::Counter;

/// What to count.
#[derive(Debug, Clone, Default)]
pub struct Request {
    /// One thread's latest state, message by message (`None`: every thread's total).
    pub thread: Option<String>,
    /// The counter.
    pub counter: CounterChoice,
    /// Threads read at once (`None`: one per core).
    pub jobs: Option<usize>,
}

/// The counter asked for (`--counter`, `--model`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum CounterChoice {
    /// An approximation (no tokenizer).
    #[default]
    Approx,
    /// OpenAI's o200k_base encoding.
    O200k,
    /// OpenAI's cl100k_base encoding.
    Cl100k,
    /// The encoding and framing of this OpenAI model.
    Model(String),
    /// What the provider billed (`usage_metadata`).
    Usage,
}

impl CounterChoice {
    /// The counter (`None`: the provider's usage); an unknown model is an error. The BPE
    /// tables start loading now (while the database is read).
    pub fn counter(&self) -> Result<Option<Counter>> {
        use crate::tokens::openai::{Encoding, Framing};
        let counter = match self {
            CounterChoice::Usage => return Ok(None),
            CounterChoice::Model(model) => Counter::OpenAi(Framing::for_model(model)?),
            CounterChoice::Approx => Counter::Approx,
            CounterChoice::O200k => Counter::OpenAi(Framing::for_encoding(Encoding::O200k)),
            CounterChoice::Cl100k => Counter::OpenAi(Framing::for_encoding(Encoding::Cl100k)),
        };
        if let Counter::OpenAi(f) = counter {
            crate::tokens::openai::preload(f.encoding);
        }
        Ok(Some(counter))
    }
}

/// Where `tokens`' per-thread rows go, as they are counted.
pub trait Rows {
    /// Takes one row; `false`: no more rows are wanted.
    fn push(&mut self, row: ThreadTokens) -> Result<bool>;

    /// Whether more rows are wanted.
    fn wants_more(&self) -> bool;
}

/// What `tokens` counted.
#[derive(Debug)]
pub enum Report<'a> {
    /// `--thread` by a counter: each message.
    Messages(MessagesReport<'a>),
    /// `--thread` by the provider's usage.
    Usage(UsageReport<'a>),
    /// Every thread (the rows went to the [`Rows`]): how many were read, and those that
    /// could not be, with why.
    Threads {
        /// Threads read.
        total: usize,
        /// Threads left out, with why.
        unreadable: Vec<(String, String)>,
    },
}

/// Counts what `req` asks for: one thread's messages (the text of each as `preview` shows
/// it), or every thread's total into `rows` (named by `counter_name` of the counter).
pub fn run<'r>(
    req: &'r Request,
    ctx: &Ctx,
    _sink: &dyn Sink,
    preview: Option<&Preview>,
    rows: &mut dyn Rows,
) -> Result<Report<'r>> {
    let store = ctx.open_read_only()?;
    let keys = ctx.keys();
    match &req.thread {
        Some(thread) => {
            // The message list stays stored; messages are read and counted a chunk at a time.
            let (cp, messages, _) =
                crate::read::load_shallow(&*store, &keys, thread, &ctx.ns, None)?;
            let (list, spans) = crate::read::stored_list(&cp, &messages)?;
            let read = |i: usize| match list {
                Some(list) => list.message(i, &spans[i]),
                None => anyhow::bail!("no message {i}"),
            };
            match req.counter.counter()? {
                None => Ok(Report::Usage(usage_report(thread, spans.len(), &read)?)),
                Some(counter) => Ok(Report::Messages(per_message(
                    thread,
                    spans.len(),
                    &read,
                    counter,
                    preview,
                )?)),
            }
        }
        None => {
            let counter = req.counter.counter()?;
            let (total, unreadable) = per_thread(ctx, &*store, counter, req.jobs, rows)?;
            Ok(Report::Threads { total, unreadable })
        }
    }
}

/// Every thread's latest state, counted on all cores: the threads come a batch at a time in
/// thread-id order (read on a second handle), the main thread reads their blobs (with
/// `jobs`, several connections do), workers decode and count; rows go to `rows` as they are
/// counted. Returns the threads read and those left out.
fn per_thread(
    ctx: &Ctx,
    store: &dyn crate::storage::CheckpointStore,
    counter: Option<Counter>,
    jobs: Option<usize>,
    rows: &mut dyn Rows,
) -> Result<(usize, Vec<(String, String)>)> {
    let keys = ctx.keys();
    let mut total = 0;
    let mut unreadable: Vec<(String, String)> = Vec::new();
    let readers = crate::read::Readers::new(store, jobs);
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
            if !rows.push(row)? {
                return Ok(false);
            }
        }
        Ok(rows.wants_more())
    })?;
    Ok((total, unreadable))
}

/// Message `i` of a thread being reported, read on its own.
pub type ReadMessage<'a> = dyn Fn(usize) -> Result<Message> + Sync + 'a;

/// How a message's text is shown beside its count (the table's preview).
pub type Preview = dyn Fn(&Message) -> String + Sync;

/// The per-message token report of `n` messages (`read(i)` reads message `i`) as
/// `tokens --thread` makes it; `preview`: each message's text as shown (the table shows
/// it; `None`: no text). (`browse` shows it for any checkpoint.)
pub fn per_message<'a>(
    thread: &'a str,
    n: usize,
    read: &ReadMessage<'_>,
    counter: Counter,
    preview: Option<&Preview>,
) -> Result<MessagesReport<'a>> {
    // One message at a time (a chunk on each core): only what the report shows is kept.
    let messages: Vec<MessageTokens> = crate::par::par_in_order(n, |i| {
        let m = read(i)?;
        Ok(MessageTokens {
            index: i,
            tokens: counter.count_message(&m)?,
            text: preview.map(|p| p(&m)).unwrap_or_default(),
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
pub fn usage_report<'a>(
    thread: &'a str,
    n: usize,
    read: &ReadMessage<'_>,
) -> Result<UsageReport<'a>> {
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

/// One message of `tokens --thread`.
#[derive(Debug, Clone, Serialize)]
pub struct MessageTokens {
    /// Its position in the state's message list.
    pub index: usize,
    /// Its type (`human`, `ai`, `tool`…).
    #[serde(rename = "type")]
    pub kind: &'static str,
    /// Its id.
    pub id: Option<String>,
    /// What it costs.
    pub tokens: u64,
    /// Its text on one line, cut (the table only).
    #[serde(skip)]
    pub text: String,
}

/// `tokens --thread`: what each message of a thread's state costs by a counter.
#[derive(Debug, Serialize)]
pub struct MessagesReport<'a> {
    /// The thread.
    pub thread_id: &'a str,
    /// The counter's name.
    pub counter: String,
    /// The messages' tokens and the list's own overhead.
    pub total: u64,
    /// Each message.
    pub messages: Vec<MessageTokens>,
    /// The tokens the counter adds for the list itself (the reply priming), in `total`.
    #[serde(skip)]
    pub list_overhead: u64,
}

/// One AI message's provider-reported usage.
#[derive(Debug, Clone, Serialize)]
pub struct MessageUsage {
    /// Its position in the state's message list.
    pub index: usize,
    /// Its id.
    pub id: Option<String>,
    /// Its `usage_metadata`, as stored.
    pub usage_metadata: serde_json::Map<String, Json>,
}

/// `tokens --thread --counter usage`: what the provider billed, per AI message and in all.
#[derive(Debug, Serialize)]
pub struct UsageReport<'a> {
    /// The thread.
    pub thread_id: &'a str,
    /// Always `usage`.
    pub counter: &'static str,
    /// The last turn's input tokens (none: no message carries usage).
    pub last_input_tokens: Option<u64>,
    /// Input tokens of all turns.
    pub input_tokens: u64,
    /// Output tokens of all turns.
    pub output_tokens: u64,
    /// Total tokens of all turns.
    pub total_tokens: u64,
    /// The messages that carry usage.
    pub messages: Vec<MessageUsage>,
}

impl<'a> UsageReport<'a> {
    /// The report of `messages` (those that carry usage, in order).
    pub fn new(thread_id: &'a str, messages: Vec<MessageUsage>) -> UsageReport<'a> {
        let sum = |k: &str| messages.iter().map(|m| usage(&m.usage_metadata, k)).sum();
        UsageReport {
            thread_id,
            counter: "usage",
            last_input_tokens: messages
                .last()
                .map(|m| usage(&m.usage_metadata, "input_tokens")),
            input_tokens: sum("input_tokens"),
            output_tokens: sum("output_tokens"),
            total_tokens: sum("total_tokens"),
            messages,
        }
    }
}

/// One field of a `usage_metadata` (0 when it is missing or not a count).
pub fn usage(u: &serde_json::Map<String, Json>, key: &str) -> u64 {
    u.get(key).and_then(Json::as_u64).unwrap_or(0)
}

/// One thread of `tokens --all`.
#[derive(Debug, Clone)]
pub struct ThreadTokens {
    /// The thread.
    pub thread_id: String,
    /// Messages of its latest state.
    pub messages: usize,
    /// Their tokens (by usage: the last input tokens the provider reported, if any).
    pub tokens: Option<u64>,
}
