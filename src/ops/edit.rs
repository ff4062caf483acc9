//! An edit of one thread, as pure functions: the thread's latest state made editable (and
//! the refusals of what memctl must not edit, as data), the tool-pair rule, and the plan of an
//! edit (report and rows to append). No database access: everything here runs on any core
//! and is unit-tested without a file; `commands::batch` reads and writes around it.

use std::collections::HashMap;
use std::sync::{Arc, OnceLock};

use anyhow::{bail, Context, Result};

use crate::codec::aes::{self, AesKey, Keyring};
use crate::codec::Value;
use crate::model::channels;
use crate::model::checkpoint::MESSAGES;
use crate::model::outline::{self, Outline, Shape};
use crate::model::state::{pending_work, PendingWrite};
use crate::model::{Checkpoint, Kind, Message, Metadata};
use crate::ops::outcome::{Outcome, Removed, Status};
use crate::ops::purge::Scrub;
use crate::ops::update::{self, DeltaHead, Env};
use crate::storage::{CheckpointRow, WriteRow};

/// A checkpoint row with its decoded blob and metadata.
pub struct LoadedCheckpoint {
    /// The stored row.
    pub row: CheckpointRow,
    /// The decoded checkpoint.
    pub checkpoint: Checkpoint,
    /// The parsed metadata.
    pub metadata: Metadata,
}

impl LoadedCheckpoint {
    /// Opens a stored row (decrypting an encrypted one with `keys`, see [`open_checkpoint`])
    /// and decodes it.
    pub fn open(keys: &Keyring, row: CheckpointRow) -> Result<LoadedCheckpoint> {
        LoadedCheckpoint::decode(open_checkpoint(keys, row)?.0)
    }

    /// Decodes a stored plain row, saying which checkpoint failed.
    pub fn decode(row: CheckpointRow) -> Result<LoadedCheckpoint> {
        let checkpoint = Checkpoint::decode(&row.type_name, &row.checkpoint);
        LoadedCheckpoint::assemble(row, checkpoint)
    }

    /// The row with its decoded checkpoint (or the error decoding it gave) and its parsed
    /// metadata; errors name the checkpoint and thread.
    pub fn assemble(
        row: CheckpointRow,
        checkpoint: Result<Checkpoint>,
    ) -> Result<LoadedCheckpoint> {
        let checkpoint = checkpoint.with_context(|| {
            format!(
                "cannot decode checkpoint {} of thread '{}'",
                row.checkpoint_id, row.thread_id
            )
        })?;
        let metadata = Metadata::parse(row.metadata.as_deref()).with_context(|| {
            format!(
                "bad metadata on checkpoint {} of thread '{}'",
                row.checkpoint_id, row.thread_id
            )
        })?;
        Ok(LoadedCheckpoint {
            row,
            checkpoint,
            metadata,
        })
    }
}

/// A checkpoint row as LangGraph's `EncryptedSerializer` would load it: an encrypted blob
/// (`msgpack+aes` …) decrypted with `keys`, the row then carrying the inner type (`msgpack`);
/// a plain row as it is. The flag says whether the row was encrypted.
pub fn open_checkpoint(keys: &Keyring, mut row: CheckpointRow) -> Result<(CheckpointRow, bool)> {
    if aes::split_type(&row.type_name).1.is_none() {
        return Ok((row, false));
    }
    let what = format!(
        "checkpoint {} of thread '{}'",
        row.checkpoint_id, row.thread_id
    );
    let opened = keys.open(&row.type_name, &row.checkpoint, &what)?;
    let (type_name, plain) = (opened.type_name.to_owned(), opened.bytes.into_owned());
    row.type_name = type_name;
    row.checkpoint = plain;
    Ok((row, true))
}

/// The write rows of checkpoint `checkpoint_id` of `thread`, opened like [`open_checkpoint`].
pub fn open_writes(
    keys: &Keyring,
    rows: Vec<WriteRow>,
    thread: &str,
    checkpoint_id: &str,
) -> Result<Vec<WriteRow>> {
    rows.into_iter()
        .map(|mut w| {
            if aes::split_type(&w.type_name).1.is_none() {
                return Ok(w);
            }
            let what = format!(
                "the '{}' write of task {} on checkpoint {checkpoint_id} of thread '{thread}'",
                w.channel, w.task_id
            );
            let opened = keys.open(&w.type_name, &w.value, &what)?;
            let (type_name, plain) = (opened.type_name.to_owned(), opened.bytes.into_owned());
            w.type_name = type_name;
            w.value = plain;
            Ok(w)
        })
        .collect()
}

/// True when `e` is a key problem (no key, a refused key, a key that does not decrypt): the
/// one line to show, and a batch stops rather than report it thread after thread.
pub fn is_key_error(e: &anyhow::Error) -> bool {
    e.chain().any(|c| c.is::<aes::KeyError>())
}

/// A thread memctl will not edit, with the reason.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct Refusal(pub String);

/// The latest state of a thread, ready to be edited.
pub struct Editable {
    /// The thread.
    pub thread_id: String,
    /// The latest root checkpoint. Its decoded `checkpoint` holds every channel but the
    /// message list, which is read in place from the blob (see `outline`); its row's
    /// `checkpoint` bytes are moved to [`Editable::blob`].
    pub latest: LoadedCheckpoint,
    /// The latest checkpoint's stored blob, shared with the kept messages of an edit (they
    /// are slices of it, never copies).
    blob: Arc<Vec<u8>>,
    /// The stored messages, outlined; their spans point into [`Editable::blob`].
    pub outline: Vec<Outline>,
    /// Pending writes on the latest checkpoint when it was read (0 unless forced).
    pub pending_writes: usize,
    /// The key new rows are encrypted with, as the app's serializer writes them: the one
    /// that decrypted the latest checkpoint when it was encrypted (or, for a plain thread of
    /// a database whose app encrypts, the key given: see `commands::batch::AppSeal`).
    pub seal: Option<Arc<AesKey>>,
    /// The full message views, built on first use.
    messages: OnceLock<Vec<Message>>,
    /// For a DeltaChannel thread, what the update needs beyond the messages (whose
    /// outlines then point into the rebuilt list, not into the checkpoint).
    pub delta: Option<DeltaHead>,
}

impl Editable {
    /// The typed view of every message (decoded on first use).
    pub fn messages(&self) -> Result<&[Message]> {
        if let Some(m) = self.messages.get() {
            return Ok(m);
        }
        let views = (0..self.outline.len())
            .map(|i| {
                Message::from_value(&self.item(i)?)
                    .with_context(|| format!("message {i} of thread '{}'", self.thread_id))
            })
            .collect::<Result<Vec<_>>>()?;
        Ok(self.messages.get_or_init(|| views))
    }

    /// The typed view of message `i` alone (the cached view when all were built): what a
    /// command that reads messages one at a time uses, so that a long thread never holds
    /// every view at once.
    pub fn message(&self, i: usize) -> Result<Message> {
        if let Some(m) = self.messages.get().and_then(|all| all.get(i)) {
            return Ok(m.clone());
        }
        Message::from_value(&self.item(i)?)
            .with_context(|| format!("message {i} of thread '{}'", self.thread_id))
    }

    /// The stored value of message `i` (written back byte for byte when kept).
    pub fn item(&self, i: usize) -> Result<Value> {
        crate::codec::msgpack::decode(self.stored_bytes(i)).with_context(|| {
            format!(
                "cannot decode message {i} of checkpoint {}",
                self.latest.row.checkpoint_id
            )
        })
    }

    /// Message `i` as its stored bytes, for a new list that keeps it (written back as is,
    /// not decoded).
    pub fn stored(&self, i: usize) -> Result<Value> {
        crate::codec::msgpack::Raw::shared(&self.blob, self.outline[i].span.clone())
            .map(Value::Raw)
            .with_context(|| {
                format!(
                    "message {i} of checkpoint {} is not one complete msgpack value",
                    self.latest.row.checkpoint_id
                )
            })
    }

    /// The bytes of message `i` in the latest checkpoint's blob.
    fn stored_bytes(&self, i: usize) -> &[u8] {
        let span = self.outline[i].span.clone();
        self.blob.get(span).unwrap_or_default()
    }

    /// The latest checkpoint's stored blob (what the outlines' spans point into).
    pub fn blob(&self) -> &[u8] {
        &self.blob
    }

    /// Message `i` as the report of an edit that removes it lists it.
    pub fn removed(&self, i: usize) -> Removed {
        let m = &self.outline[i];
        Removed {
            index: i,
            kind: m.kind.type_str(),
            id: m.id.clone(),
            text: m.preview(self.blob()),
        }
    }

    /// Approximate tokens of the messages `indices` names.
    pub fn approx_tokens(&self, indices: impl IntoIterator<Item = usize>) -> u64 {
        indices
            .into_iter()
            .map(|i| self.outline[i].approx_tokens)
            .sum()
    }
}

/// The rows an edit of a thread starts from: its latest root checkpoint and that
/// checkpoint's pending writes.
pub struct LatestRows {
    /// The thread.
    pub thread_id: String,
    /// The latest root checkpoint.
    pub row: CheckpointRow,
    /// Its pending writes.
    pub writes: Vec<WriteRow>,
    /// For a thread whose messages are a DeltaChannel: the list `get_state` shows (msgpack,
    /// rebuilt from older rows by the reader) and the rest of what an update needs.
    pub delta: Option<(Vec<u8>, DeltaHead)>,
}

/// Which threads `--all` selects beyond "has a root checkpoint".
#[derive(Debug, Clone, Copy, Default)]
pub struct Filters {
    /// Idle for at least this many seconds (by the latest checkpoint's `ts`).
    pub idle: Option<(i64, jiff::Timestamp)>,
    /// At least this many messages.
    pub min_messages: Option<usize>,
    /// At least this many tokens by this counter.
    pub min_tokens: Option<(u64, crate::tokens::Counter)>,
}

/// Turns a thread's rows into its editable state (no database access: runs on any core),
/// decrypting them with `keys` when they are encrypted. `None` when the filters leave the
/// thread out; a [`Refusal`] error for a thread memctl must not edit.
pub fn prepare(
    rows: LatestRows,
    keys: &Keyring,
    force: bool,
    filters: &Filters,
) -> Option<Result<Editable>> {
    let thread = rows.thread_id.clone();
    let (latest, span, seal) = match open_latest(rows.row, keys, &thread) {
        Ok(opened) => opened,
        Err(e) => return Some(Err(e)),
    };
    let delta = rows.delta;
    // A DeltaChannel's messages are the rebuilt list, outlined in its own bytes.
    let (blob, list_span) = match &delta {
        Some((list, _)) => (list, Some(0..list.len())),
        None => (&latest.row.checkpoint, span.clone()),
    };
    let outlined = list_span
        .clone()
        .and_then(|s| outline::outline_list(blob, s));
    // Filters first, so that only selected threads are reported.
    let views = selected(filters, &latest, blob, outlined.as_deref())?;
    let result = (|| -> Result<Editable> {
        let writes = decode_writes(keys, rows.writes, &thread, &latest.row.checkpoint_id)?;
        let work = pending_work(&latest.checkpoint, &writes);
        refuse_waiting(&work, &thread, force)?;
        let list = match &delta {
            Some((list, _)) => list.as_slice(),
            None => latest.row.checkpoint.as_slice(),
        };
        let messages = Messages {
            span: span.as_ref(),
            list: list_span.as_ref().map(|sp| (list, sp)),
            rebuilt: delta.is_some(),
        };
        let outline = check_messages(&latest, messages, outlined, &thread)?;
        let mut latest = latest;
        let (blob, delta) = match delta {
            Some((list, head)) => (Arc::new(list), Some(head)),
            None => (Arc::new(std::mem::take(&mut latest.row.checkpoint)), None),
        };
        Ok(Editable {
            thread_id: thread.clone(),
            latest,
            blob,
            outline,
            pending_writes: work.writes,
            seal,
            messages: views.map_or_else(OnceLock::new, OnceLock::from),
            delta,
        })
    })();
    Some(result)
}

/// A latest checkpoint opened for editing, the span of its message list in the blob, and
/// the key an edit is sealed with.
type OpenedLatest = (
    LoadedCheckpoint,
    Option<std::ops::Range<usize>>,
    Option<Arc<AesKey>>,
);

/// Decrypts and decodes a thread's latest checkpoint for editing (every channel but the
/// message list, which stays in the blob), with the span of that list and the key an edit
/// is sealed with when the checkpoint was encrypted.
fn open_latest(row: CheckpointRow, keys: &Keyring, thread: &str) -> Result<OpenedLatest> {
    let (row, sealed) = open_checkpoint(keys, row)?;
    let seal = sealed.then(|| keys.key("")).transpose()?.cloned();
    if row.type_name != "msgpack" {
        return Err(Refusal(format!(
            "thread '{thread}': its latest checkpoint is stored as '{}', not msgpack; memctl rewrites only msgpack checkpoints",
            row.type_name
        ))
        .into());
    }
    let (root, span) =
        crate::codec::msgpack::decode_except(&row.checkpoint, "channel_values", MESSAGES)
            .with_context(|| {
                format!(
                    "cannot decode checkpoint {} of thread '{thread}'",
                    row.checkpoint_id
                )
            })?;
    if root.as_map().is_none() {
        bail!(
            "checkpoint {} of thread '{thread}' is not a map",
            row.checkpoint_id
        );
    }
    let metadata = Metadata::parse(row.metadata.as_deref()).with_context(|| {
        format!(
            "bad metadata on checkpoint {} of thread '{thread}'",
            row.checkpoint_id
        )
    })?;
    let latest = LoadedCheckpoint {
        row,
        checkpoint: Checkpoint { root },
        metadata,
    };
    Ok((latest, span, seal))
}

/// Whether `filters` select the thread: `None` when they leave it out, otherwise the full
/// message views when the token filter had to build them (kept for the edit).
fn selected(
    filters: &Filters,
    latest: &LoadedCheckpoint,
    blob: &[u8],
    outlined: Option<&[Outline]>,
) -> Option<Option<Vec<Message>>> {
    if let Some((secs, now)) = filters.idle {
        // The app's last activity, as prune and threads list see it (not memctl's edits).
        let ts = latest.checkpoint.ts().and_then(parse_ts);
        let idle = crate::ops::activity::idle_seconds(&latest.row.checkpoint_id, ts, now);
        if idle.is_some_and(|a| a < secs) {
            return None;
        }
    }
    if let (Some(min), Some(o)) = (filters.min_messages, outlined) {
        if o.len() < min {
            return None;
        }
    }
    let mut views = None;
    if let (Some((min, counter)), Some(o)) = (filters.min_tokens, outlined) {
        let tokens = match counter {
            crate::tokens::Counter::Approx => o.iter().map(|m| m.approx_tokens).sum(),
            other => {
                views = o
                    .iter()
                    .map(|m| {
                        let bytes = blob.get(m.span.clone())?;
                        Message::from_value(&crate::codec::msgpack::decode(bytes).ok()?)
                    })
                    .collect::<Option<Vec<Message>>>();
                views.as_deref().map_or(0, |m| other.count(m).unwrap_or(0))
            }
        };
        if tokens < min {
            return None;
        }
    }
    Some(views)
}

/// The refusal of a thread that waits (paused on `interrupt()`, work scheduled, pending
/// writes), unless `force`.
fn refuse_waiting(
    work: &crate::model::state::PendingWork,
    thread: &str,
    force: bool,
) -> Result<()> {
    if work.is_idle() || force {
        return Ok(());
    }
    let what = if !work.interrupts.is_empty() {
        format!("is paused on interrupt() in {}", work.next.join(", "))
    } else if !work.next.is_empty() {
        format!("has work scheduled ({})", work.next.join(", "))
    } else {
        format!("has {} pending writes", work.writes)
    };
    Err(Refusal(format!(
        "thread '{thread}' {what}; memctl does not edit a thread that is waiting (pass --force to do it anyway)"
    ))
    .into())
}

/// Where a thread's message list was found, for [`check_messages`].
struct Messages<'a> {
    /// The list's span in the checkpoint blob (none when the channel is absent there).
    span: Option<&'a std::ops::Range<usize>>,
    /// The bytes the list is read from (the blob, or a DeltaChannel's rebuilt list) and its
    /// span in them.
    list: Option<(&'a [u8], &'a std::ops::Range<usize>)>,
    /// Whether the list was rebuilt from a DeltaChannel's chain.
    rebuilt: bool,
}

/// The outlined messages of an editable thread, or why there are none to edit: a
/// DeltaChannel that was not rebuilt, no messages channel, a list that does not decode or
/// holds something else, a message without an id.
fn check_messages(
    latest: &LoadedCheckpoint,
    messages: Messages<'_>,
    outlined: Option<Vec<Outline>>,
    thread: &str,
) -> Result<Vec<Outline>> {
    let has_version = latest
        .checkpoint
        .channel_versions()
        .iter()
        .any(|(k, _)| k == MESSAGES);
    let location = channels::location_at(
        &latest.row.checkpoint,
        messages.span.map(|s| s.start),
        has_version,
    );
    if channels::is_delta(location, &latest.metadata) && !messages.rebuilt {
        return Err(Refusal(format!(
            "thread '{thread}' keeps its messages in a DeltaChannel that was not rebuilt"
        ))
        .into());
    }
    let Some((bytes, span)) = messages.list else {
        return Err(Refusal(format!("thread '{thread}' has no messages channel")).into());
    };
    let Some(outline) = outlined else {
        // Say why: a list that does not decode, or one that holds something else.
        if let Some(Err(e)) = bytes.get(span.clone()).map(crate::codec::msgpack::decode) {
            bail!(
                "cannot decode the messages of checkpoint {} of thread '{thread}': {e}",
                latest.row.checkpoint_id
            );
        }
        bail!(
            "the messages channel of checkpoint {} of thread '{thread}' is not a list of messages",
            latest.row.checkpoint_id
        );
    };
    if let Some(i) = outline.iter().position(|m| m.id.is_none()) {
        bail!("message {i} of thread '{thread}' has no id; LangGraph always assigns one, so this file is unusual");
    }
    Ok(outline)
}

/// Checks the edited list is valid for a model provider and for LangGraph: no tool call
/// without its answer, no answer without its call. The first problem in message order is
/// reported. Linear: each call id's first AI message and last answer are looked up in hash
/// maps.
pub fn check_tool_pairs<M: Shape>(msgs: &[&M]) -> Result<()> {
    // Where each call is first made, and where it is last answered.
    let mut first_call: HashMap<&str, usize> = HashMap::new();
    let mut last_answer: HashMap<&str, usize> = HashMap::new();
    for (i, &m) in msgs.iter().enumerate() {
        match m.kind() {
            Kind::Ai => {
                for call in m.tool_call_ids() {
                    first_call.entry(call).or_insert(i);
                }
            }
            Kind::Tool => {
                if let Some(call) = m.tool_call_id() {
                    last_answer.insert(call, i);
                }
            }
            _ => {}
        }
    }
    for (i, &m) in msgs.iter().enumerate() {
        if m.kind() == Kind::Tool {
            let call = m.tool_call_id().unwrap_or("");
            if first_call.get(call).is_none_or(|&a| a >= i) {
                bail!("the result would leave a ToolMessage without the AI tool call '{call}'");
            }
        }
        if m.kind() == Kind::Ai {
            for call in m.tool_call_ids() {
                if last_answer.get(call).is_none_or(|&t| t <= i) {
                    bail!("the result would leave the tool call '{call}' without its ToolMessage");
                }
            }
        }
    }
    Ok(())
}

/// An edit of one thread, decided but not written.
pub struct Planned {
    /// The report (status `unchanged`, `would rewrite`, or `planned` until written).
    pub outcome: Outcome,
    /// The rows to append.
    pub update: Option<update::Update>,
    /// Pending writes the thread had when read (the write checks it still has them).
    pub expected_writes: usize,
    /// What `--purge` scrubs from the thread's history.
    pub purge: Option<Scrub>,
    /// The strings `--purge` checks are gone from the file afterwards.
    pub verify: Vec<String>,
    /// The status once written (without `--purge`): `rewritten`, or `summarized`.
    pub on_write: Status,
    /// `forget`: with no rows to append, the purge scrubs the thread's history in place, if
    /// its latest root checkpoint is still this one (the latest state keeps every message;
    /// older checkpoints and writes hold what goes).
    pub scrub_at: Option<String>,
    /// `forget`: the caller vacuums and verifies once, after every thread is written (not
    /// after each purge, as `rm --purge` does).
    pub defer_checks: bool,
}

impl Planned {
    /// An edit with nothing to write: only its report.
    pub fn nothing_to_write(outcome: Outcome) -> Planned {
        Planned {
            outcome,
            update: None,
            expected_writes: 0,
            purge: None,
            verify: vec![],
            on_write: Status::Rewritten,
            scrub_at: None,
            defer_checks: false,
        }
    }

    /// The same edit, for a thread that had `n` pending writes when it was read (the write
    /// checks it still has them).
    pub fn expecting(self, n: usize) -> Planned {
        Planned {
            expected_writes: n,
            ..self
        }
    }
}

/// Plans the edit that keeps the messages `keep` (indices, in order): the report, and unless
/// `dry_run` the rows to append. With `purge` (`--purge`), the removed messages are added to
/// that scrub of the thread's history (empty for `rm`; `forget` starts from what it found in
/// the history). No database access: runs on any core.
pub fn plan(
    ed: &Editable,
    keep: &[usize],
    notes: Vec<String>,
    dry_run: bool,
    purge: Option<Scrub>,
) -> Result<Planned> {
    let n = ed.outline.len();
    let mut kept_mask = vec![false; n];
    for &i in keep {
        kept_mask[i] = true;
    }
    let removed: Vec<Removed> = (0..n)
        .filter(|&i| !kept_mask[i])
        .map(|i| ed.removed(i))
        .collect();
    let mut planned = Planned {
        outcome: Outcome {
            thread_id: ed.thread_id.clone(),
            status: Status::Unchanged,
            notes,
            counted: true,
            messages: (n, keep.len()),
            tokens: (
                ed.approx_tokens(0..n),
                ed.approx_tokens(keep.iter().copied()),
            ),
            removed,
            checkpoint_id: None,
            endpoint_tokens: None,
            counter: None,
        },
        update: None,
        expected_writes: ed.pending_writes,
        purge: None,
        verify: vec![],
        on_write: Status::Rewritten,
        scrub_at: None,
        defer_checks: false,
    };
    // forget scrubbing a DeltaChannel thread's history appends the kept list as a snapshot
    // even when it keeps every message: the state then needs none of the rewritten rows.
    let snapshot_anyway = ed.delta.is_some() && purge.as_ref().is_some_and(|s| !s.is_empty());
    if keep.len() == n && !snapshot_anyway {
        return Ok(planned);
    }
    let kept: Vec<&Outline> = keep.iter().map(|&i| &ed.outline[i]).collect();
    check_tool_pairs(&kept).with_context(|| format!("thread '{}'", ed.thread_id))?;
    if dry_run {
        planned.outcome.status = Status::WouldRewrite;
        return Ok(planned);
    }
    let new_items = keep
        .iter()
        .map(|&i| ed.stored(i))
        .collect::<Result<Vec<Value>>>()?;
    // A purge of a DeltaChannel thread snapshots the kept list on the new checkpoint.
    let delta = ed.delta.clone().map(|mut d| {
        if purge.is_some() {
            d.snapshot.push(MESSAGES.to_owned());
        }
        d
    });
    let upd = build_update_for(ed, new_items, vec![], delta.as_ref())?;
    planned.outcome.status = Status::Planned;
    planned.outcome.checkpoint_id = Some(upd.checkpoint_id.clone());
    planned.update = Some(upd);
    if let Some(mut scrub) = purge {
        // One message view at a time: a long thread never holds them all.
        for i in (0..n).filter(|&i| !kept_mask[i]) {
            scrub.add(&ed.message(i)?);
        }
        let kept_text: Vec<String> = keep
            .iter()
            .map(|&i| Ok(ed.message(i)?.searchable_text()))
            .collect::<Result<_>>()?;
        planned.verify = scrub.strings_to_verify(&kept_text);
        planned.purge = Some(scrub);
    }
    Ok(planned)
}

/// Builds the update that gives `ed`'s thread the message list `new_items` (stored values)
/// and sets the `other` channels, now; encrypted when the thread's latest checkpoint was.
pub fn build_update(
    ed: &Editable,
    new_items: Vec<Value>,
    other: Vec<(String, Value)>,
) -> Result<update::Update> {
    build_update_for(ed, new_items, other, ed.delta.as_ref())
}

/// [`build_update`] with the DeltaChannel facts `delta` instead of the thread's own.
fn build_update_for(
    ed: &Editable,
    new_items: Vec<Value>,
    other: Vec<(String, Value)>,
    delta: Option<&DeltaHead>,
) -> Result<update::Update> {
    let mut random = || {
        let b = uuid::Uuid::new_v4().as_u128();
        (b >> 64) as u64 ^ b as u64
    };
    let mut env = Env {
        now: jiff::Timestamp::now(),
        random: &mut random,
    };
    let parent_id = &ed.latest.row.checkpoint_id;
    let mut upd = update::build(
        parent_id,
        &ed.latest.checkpoint,
        &ed.latest.metadata,
        new_items,
        other,
        delta,
        &mut env,
    )
    .with_context(|| format!("thread '{}'", ed.thread_id))?;
    if let Some(key) = &ed.seal {
        upd.seal(key);
    }
    Ok(upd)
}

/// Decodes the write rows of checkpoint `checkpoint_id` of `thread` (encrypted ones
/// decrypted with `keys`).
pub fn decode_writes(
    keys: &Keyring,
    rows: Vec<WriteRow>,
    thread: &str,
    checkpoint_id: &str,
) -> Result<Vec<PendingWrite>> {
    open_writes(keys, rows, thread, checkpoint_id)?
        .into_iter()
        .map(|w| {
            let value = crate::codec::decode_typed(&w.type_name, &w.value).with_context(|| {
                format!(
                    "cannot decode the '{}' write of task {} on checkpoint {checkpoint_id}",
                    w.channel, w.task_id
                )
            })?;
            Ok(PendingWrite {
                task_id: w.task_id,
                task_path: w.task_path,
                idx: w.idx,
                channel: w.channel,
                value,
            })
        })
        .collect()
}

/// A checkpoint `ts` (ISO 8601 with offset) as a timestamp.
fn parse_ts(ts: &str) -> Option<jiff::Timestamp> {
    ts.parse().ok()
}
