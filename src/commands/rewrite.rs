//! What trim, rm (and later summarize) share: choosing threads, refusing threads that are not
//! safe to edit, appending the update, and reporting before → after.

use std::collections::HashMap;
use std::io::Write;
use std::sync::OnceLock;
use std::time::Duration;

use anyhow::{anyhow, bail, Context, Result};

use crate::cli::{Format, GlobalArgs, RewriteArgs, TargetArgs};
use crate::codec::Value;
use crate::model::channels;
use crate::model::checkpoint::MESSAGES;
use crate::model::outline::{self, Outline, Shape};
use crate::model::state::pending_work;
use crate::model::{Checkpoint, Kind, Message, Metadata};
use crate::ops::purge::Scrub;
use crate::ops::update::{self, Env};
use crate::output::{self, human, progress, table};
use crate::storage::{CheckpointRow, CheckpointStore, ThreadMoved, WriteRow};
use serde::Serialize;

use super::LoadedCheckpoint;

/// A thread memctl will not edit, with the reason.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct Refusal(pub String);

/// The latest state of a thread, ready to be edited.
pub struct Editable {
    /// The thread.
    pub thread_id: String,
    /// The latest root checkpoint. Its decoded `checkpoint` holds every channel but the
    /// message list, which is read in place from the row's blob (see `outline`).
    pub latest: LoadedCheckpoint,
    /// The stored messages, outlined; their spans point into `latest.row.checkpoint`.
    pub outline: Vec<Outline>,
    /// Pending writes on the latest checkpoint when it was read (0 unless forced).
    pub pending_writes: usize,
    /// The full message views, built on first use.
    messages: OnceLock<Vec<Message>>,
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
        crate::codec::msgpack::Raw::new(self.stored_bytes(i).to_vec())
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
        self.latest.row.checkpoint.get(span).unwrap_or_default()
    }

    /// Approximate tokens of the messages `indices` names.
    pub fn approx_tokens(&self, indices: impl IntoIterator<Item = usize>) -> u64 {
        indices
            .into_iter()
            .map(|i| self.outline[i].approx_tokens)
            .sum()
    }
}

/// A message an edit removes, as reports show it.
#[derive(Debug, Clone, Serialize)]
pub struct Removed {
    /// Its position in the thread's message list.
    pub index: usize,
    /// Its kind (`human`, `ai`, …).
    #[serde(rename = "type")]
    pub kind: &'static str,
    /// Its id.
    pub id: Option<String>,
    /// A one-line preview of its text.
    pub text: String,
}

/// What happened to one thread.
#[derive(Debug, Clone)]
pub struct Outcome {
    /// The thread.
    pub thread_id: String,
    /// `rewritten`, `purged`, `would rewrite`, `unchanged`, `skipped` (not safe to edit) or
    /// `failed` (an error; nothing written for this thread).
    pub status: &'static str,
    /// Why it was skipped, or notes about the window.
    pub notes: Vec<String>,
    /// False for a thread skipped or failed before its messages were counted: its
    /// `messages` and `tokens` are unknown and shown as `-` (JSON: null).
    pub counted: bool,
    /// Messages before and after.
    pub messages: (usize, usize),
    /// Approximate tokens before and after.
    pub tokens: (u64, u64),
    /// The removed messages.
    pub removed: Vec<Removed>,
    /// The new checkpoint, when one was written.
    pub checkpoint_id: Option<String>,
    /// Tokens sent to / received from a model endpoint, as it reported them.
    pub endpoint_tokens: Option<(u64, u64)>,
}

impl Outcome {
    /// A thread whose edit failed; nothing was written for it.
    pub fn failed(thread_id: &str, why: String) -> Outcome {
        Outcome {
            status: "failed",
            ..Outcome::skipped(thread_id, why)
        }
    }

    /// A thread left alone, with the reason.
    pub fn skipped(thread_id: &str, why: String) -> Outcome {
        Outcome {
            thread_id: thread_id.to_owned(),
            status: "skipped",
            notes: vec![why],
            counted: false,
            messages: (0, 0),
            tokens: (0, 0),
            removed: vec![],
            checkpoint_id: None,
            endpoint_tokens: None,
        }
    }
}

/// Opens the database for a command that writes (never creating it); with `dry_run`,
/// read-only, so a dry run works on a file or directory memctl may not write and cannot
/// change anything.
pub fn open_for_writing(g: &GlobalArgs, dry_run: bool) -> Result<Box<dyn CheckpointStore>> {
    if !g.ns.is_empty() {
        bail!("rewrites work on the root namespace; drop --ns '{}'", g.ns);
    }
    let access = if dry_run {
        crate::storage::Access::ReadOnly
    } else {
        crate::storage::Access::ReadWrite
    };
    super::open(g, access)
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
}

/// Reads a thread's latest root checkpoint (`id`, or the newest) and its pending writes.
pub fn read_latest(
    store: &dyn CheckpointStore,
    thread: &str,
    id: Option<&str>,
) -> Result<LatestRows> {
    let row = store
        .checkpoint(thread, "", id)?
        .ok_or_else(|| anyhow!("thread '{thread}' has no root checkpoint"))?;
    let writes = store.writes(thread, "", &row.checkpoint_id)?;
    Ok(LatestRows {
        thread_id: thread.to_owned(),
        row,
        writes,
    })
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

/// Loads a thread's latest root state, refusing what memctl must not edit.
pub fn load_editable(store: &dyn CheckpointStore, thread: &str, force: bool) -> Result<Editable> {
    super::require_thread(store, thread, "")?;
    prepare(
        read_latest(store, thread, None)?,
        force,
        &Filters::default(),
    )
    .unwrap_or_else(|| bail!("thread '{thread}' was filtered out"))
}

/// Turns a thread's rows into its editable state (no database access: runs on any core).
/// `None` when the filters leave the thread out; a [`Refusal`] error for a thread memctl must
/// not edit.
pub fn prepare(rows: LatestRows, force: bool, filters: &Filters) -> Option<Result<Editable>> {
    let thread = rows.thread_id.clone();
    let row = rows.row;
    if row.type_name != "msgpack" {
        return Some(Err(Refusal(format!(
            "thread '{thread}': its latest checkpoint is stored as '{}', not msgpack; memctl rewrites only msgpack checkpoints",
            row.type_name
        ))
        .into()));
    }
    let decoded = crate::codec::msgpack::decode_except(&row.checkpoint, "channel_values", MESSAGES)
        .with_context(|| {
            format!(
                "cannot decode checkpoint {} of thread '{thread}'",
                row.checkpoint_id
            )
        });
    let (root, span) = match decoded {
        Ok(d) => d,
        Err(e) => return Some(Err(e)),
    };
    if root.as_map().is_none() {
        return Some(Err(anyhow!(
            "checkpoint {} of thread '{thread}' is not a map",
            row.checkpoint_id
        )));
    }
    let metadata = match Metadata::parse(row.metadata.as_deref()).with_context(|| {
        format!(
            "bad metadata on checkpoint {} of thread '{thread}'",
            row.checkpoint_id
        )
    }) {
        Ok(m) => m,
        Err(e) => return Some(Err(e)),
    };
    let latest = LoadedCheckpoint {
        row,
        checkpoint: Checkpoint { root },
        metadata,
    };
    let blob = &latest.row.checkpoint;
    let outlined = span.clone().and_then(|s| outline::outline_list(blob, s));
    // Filters first, so that only selected threads are reported.
    if let Some((secs, now)) = filters.idle {
        let ts = latest.checkpoint.ts().and_then(human::parse_ts);
        if ts.is_some_and(|t| now.as_second() - t.as_second() < secs) {
            return None;
        }
    }
    if let (Some(min), Some(o)) = (filters.min_messages, &outlined) {
        if o.len() < min {
            return None;
        }
    }
    // Full views, when the token filter needs them (kept for the edit).
    let mut views = None;
    if let (Some((min, counter)), Some(o)) = (filters.min_tokens, &outlined) {
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
    let result = (|| -> Result<Editable> {
        let writes = super::decode_writes(rows.writes, &latest.row.checkpoint_id)?;
        let work = pending_work(&latest.checkpoint, &writes);
        if !work.is_idle() && !force {
            let what = if !work.interrupts.is_empty() {
                format!("is paused on interrupt() in {}", work.next.join(", "))
            } else if !work.next.is_empty() {
                format!("has work scheduled ({})", work.next.join(", "))
            } else {
                format!("has {} pending writes", work.writes)
            };
            return Err(Refusal(format!(
                "thread '{thread}' {what}; memctl does not edit a thread that is waiting (pass --force to do it anyway)"
            ))
            .into());
        }
        let has_version = latest
            .checkpoint
            .channel_versions()
            .iter()
            .any(|(k, _)| k == MESSAGES);
        let location = channels::location_at(
            &latest.row.checkpoint,
            span.as_ref().map(|s| s.start),
            has_version,
        );
        if channels::is_delta(location, &latest.metadata) {
            return Err(Refusal(format!(
                "thread '{thread}' keeps its messages in a DeltaChannel; memctl does not rewrite delta threads yet"
            ))
            .into());
        }
        if span.is_none() {
            return Err(Refusal(format!("thread '{thread}' has no messages channel")).into());
        }
        let Some(outline) = outlined else {
            // Say why: a list that does not decode, or one that holds something else.
            let list = span
                .as_ref()
                .and_then(|sp| latest.row.checkpoint.get(sp.clone()));
            if let Some(Err(e)) = list.map(crate::codec::msgpack::decode) {
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
        Ok(Editable {
            thread_id: thread.clone(),
            latest,
            outline,
            pending_writes: work.writes,
            messages: views.map_or_else(OnceLock::new, OnceLock::from),
        })
    })();
    Some(result)
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
}

/// Plans the edit that keeps the messages `keep` (indices, in order): the report, and unless
/// `dry_run` the rows to append. No database access: runs on any core.
pub fn plan(
    ed: &Editable,
    keep: &[usize],
    notes: Vec<String>,
    dry_run: bool,
    purge: bool,
) -> Result<Planned> {
    let n = ed.outline.len();
    let mut kept_mask = vec![false; n];
    for &i in keep {
        kept_mask[i] = true;
    }
    let removed: Vec<Removed> = (0..n)
        .filter(|&i| !kept_mask[i])
        .map(|i| {
            let m = &ed.outline[i];
            Removed {
                index: i,
                kind: m.kind.type_str(),
                id: m.id.clone(),
                text: m.preview(&ed.latest.row.checkpoint),
            }
        })
        .collect();
    let mut planned = Planned {
        outcome: Outcome {
            thread_id: ed.thread_id.clone(),
            status: "unchanged",
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
        },
        update: None,
        expected_writes: ed.pending_writes,
        purge: None,
        verify: vec![],
    };
    if keep.len() == n {
        return Ok(planned);
    }
    let kept: Vec<&Outline> = keep.iter().map(|&i| &ed.outline[i]).collect();
    check_tool_pairs(&kept).with_context(|| format!("thread '{}'", ed.thread_id))?;
    if dry_run {
        planned.outcome.status = "would rewrite";
        return Ok(planned);
    }
    let new_items = keep
        .iter()
        .map(|&i| ed.stored(i))
        .collect::<Result<Vec<Value>>>()?;
    let upd = build_update(ed, new_items, vec![])?;
    planned.outcome.status = "planned";
    planned.outcome.checkpoint_id = Some(upd.checkpoint_id.clone());
    planned.update = Some(upd);
    if purge {
        // One message view at a time: a long thread never holds them all.
        let mut scrub = Scrub::default();
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

/// Writes a planned edit (appends its update; with `--purge`, scrubs and vacuums too) and
/// returns its report. Inside a batch the append is a savepoint of the batch's transaction.
pub fn write(store: &dyn CheckpointStore, planned: Planned) -> Result<Outcome> {
    let mut outcome = planned.outcome;
    let Some(upd) = planned.update else {
        return Ok(outcome);
    };
    let thread = outcome.thread_id.clone();
    let Some(scrub) = planned.purge else {
        store.append_update(&thread, "", &upd.rows(), planned.expected_writes, None)?;
        outcome.status = "rewritten";
        return Ok(outcome);
    };
    let rows = store.append_update(
        &thread,
        "",
        &upd.rows(),
        planned.expected_writes,
        Some(&|kind, bytes| scrub.rewrite_blob(kind, bytes)),
    )?;
    store.vacuum().map_err(super::partial_if_busy)?;
    outcome.status = "purged";
    outcome.notes.push(format!(
        "scrubbed {rows} older checkpoints and writes; file vacuumed; searched the file for the {} removed strings",
        planned.verify.len()
    ));
    for left in store.find_leftovers(&thread, &planned.verify)? {
        let text = human::preview(&left.text, 24);
        if !left.in_thread.is_empty() || !left.raw.is_empty() {
            outcome.status = PURGE_INCOMPLETE;
            let places = left.in_thread.iter().chain(&left.raw).cloned();
            outcome.notes.push(format!(
                "removed text {text} is still in {}",
                places.collect::<Vec<_>>().join(", ")
            ));
        } else {
            outcome.notes.push(format!(
                "removed text {text} also appears in other threads (not part of this purge): {}",
                left.other_threads.join(", ")
            ));
        }
    }
    Ok(outcome)
}

/// The status of a purge whose removed text is still somewhere in the file (a failure).
pub const PURGE_INCOMPLETE: &str = "purge incomplete";

/// Builds the update that gives `ed`'s thread the message list `new_items` (stored values)
/// and sets the `other` channels, now.
pub fn build_update(
    ed: &Editable,
    new_items: Vec<Value>,
    other: Vec<(String, Value)>,
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
    update::build(
        parent_id,
        &ed.latest.checkpoint,
        &ed.latest.metadata,
        new_items,
        other,
        &mut env,
    )
    .with_context(|| format!("thread '{}'", ed.thread_id))
}

/// The threads `target` names: the one `--thread`, or with `--all` every thread that has a
/// root checkpoint, with its latest root checkpoint id.
fn targets(
    store: &dyn CheckpointStore,
    target: &TargetArgs,
) -> Result<Vec<(String, Option<String>)>> {
    if let Some(thread) = &target.thread {
        return Ok(vec![(thread.clone(), None)]);
    }
    Ok(store
        .latest_root_ids()?
        .into_iter()
        .map(|(t, id)| (t, Some(id)))
        .collect())
}

/// The filters `target` asks for.
fn filters(
    g: &GlobalArgs,
    target: &TargetArgs,
    min_tokens: Option<(u64, crate::tokens::Counter)>,
) -> Result<Filters> {
    let now = human::now(g.now.as_deref())?;
    let idle = target
        .idle
        .as_deref()
        .map(crate::ops::duration::parse_seconds)
        .transpose()?;
    Ok(Filters {
        idle: idle.map(|secs| (secs, now)),
        min_messages: target.min_messages,
        min_tokens,
    })
}

/// What one targeted thread turned into: its editable state, or the outcome of a thread that
/// is skipped (not safe to edit) or failed to load.
fn editable_or_outcome(
    thread: &str,
    prepared: Option<Result<Editable>>,
) -> Option<std::result::Result<Editable, Outcome>> {
    Some(match prepared? {
        Ok(ed) => Ok(ed),
        Err(e) if e.is::<Refusal>() => Err(Outcome::skipped(thread, e.to_string())),
        Err(e) => Err(Outcome::failed(thread, format!("{e:#}"))),
    })
}

/// Calls `visit` with every targeted thread that passes the filters: `Ok(editable)`, or
/// `Err(outcome)` for a thread that is skipped (not safe to edit) or failed to load. With one
/// `--thread`, a refusal is an error instead. `min_tokens` filters on the whole state.
pub fn for_each_target(
    store: &dyn CheckpointStore,
    g: &GlobalArgs,
    target: &TargetArgs,
    force: bool,
    min_tokens: Option<(u64, crate::tokens::Counter)>,
    verb: &str,
    visit: &mut dyn FnMut(std::result::Result<Editable, Outcome>) -> Result<()>,
) -> Result<()> {
    if let Some(thread) = &target.thread {
        return visit(Ok(load_editable(store, thread, force)?));
    }
    let filters = filters(g, target, min_tokens)?;
    let ids = targets(store, target)?;
    let pb = progress::bar(ids.len() as u64, verb);
    for (thread, id) in ids {
        pb.set_message(thread.clone());
        pb.inc(1);
        let prepared = read_latest(store, &thread, id.as_deref())
            .map_or_else(|e| Some(Err(e)), |rows| prepare(rows, force, &filters));
        if let Some(item) = editable_or_outcome(&thread, prepared) {
            visit(item)?;
        }
    }
    pb.finish_and_clear();
    Ok(())
}

/// Runs `edit` on the targeted threads and reports. In batch mode refusals are skipped and
/// reported; with one thread they are errors. Threads are read on this thread, prepared and
/// planned on all cores, and written here, a batch per transaction (each thread a savepoint,
/// so one failure leaves the others written).
pub fn run_batch(
    g: &GlobalArgs,
    target: &TargetArgs,
    rw: &RewriteArgs,
    verb: &str,
    out: &mut dyn Write,
    edit: &(dyn Fn(&Editable) -> Result<Planned> + Sync),
) -> Result<()> {
    let store = open_for_writing(g, rw.dry_run)?;
    if target.thread.is_some() {
        let ed = load_editable(
            &*store,
            target.thread.as_deref().unwrap_or_default(),
            rw.force,
        )?;
        let settle = settle_time(rw)?;
        let mut outcomes = [write(&*store, edit(&ed)?)?];
        mark_superseded(&*store, &mut outcomes, settle)?;
        return finish(g, rw.dry_run, true, &outcomes, out);
    }
    let settle = settle_time(rw)?;
    let filters = filters(g, target, None)?;
    let ids = targets(&*store, target)?;
    let pb = progress::bar(ids.len() as u64, verb);
    let mut outcomes = Vec::with_capacity(ids.len());
    super::pipeline(
        &ids,
        |(thread, id)| Ok((thread.clone(), read_latest(&*store, thread, id.as_deref()))),
        |(thread, rows)| {
            let prepared = rows.map_or_else(|e| Some(Err(e)), |r| prepare(r, rw.force, &filters));
            editable_or_outcome(&thread, prepared).map(|item| match item {
                Err(o) => Step::Done(o),
                Ok(ed) => match edit(&ed) {
                    Ok(p) => Step::Write(Box::new(p)),
                    Err(e) => Step::Done(Outcome::failed(&thread, format!("{e:#}"))),
                },
            })
        },
        |batch| {
            pb.inc(batch.len() as u64);
            let writing = !rw.dry_run
                && batch
                    .iter()
                    .any(|p| matches!(p, Some(Step::Write(p)) if p.update.is_some()));
            if writing {
                store.begin_batch()?;
            }
            for item in batch.into_iter().flatten() {
                outcomes.push(match item {
                    Step::Done(o) => o,
                    Step::Write(planned) => {
                        let thread = planned.outcome.thread_id.clone();
                        match write(&*store, *planned) {
                            Ok(o) => o,
                            Err(e) if e.is::<ThreadMoved>() => {
                                Outcome::skipped(&thread, e.to_string())
                            }
                            Err(e) => Outcome::failed(&thread, format!("{e:#}")),
                        }
                    }
                });
            }
            if writing {
                store.commit_batch()?;
            }
            Ok(())
        },
    )?;
    pb.finish_and_clear();
    mark_superseded(&*store, &mut outcomes, settle)?;
    // The report is written while the last checkpoint runs (everything is committed).
    let reported = finish(g, rw.dry_run, false, &outcomes, out);
    let checkpointed = store.end_batches();
    reported.and(checkpointed)
}

/// A planned thread in a batch: written on the main thread, or already decided.
enum Step {
    /// Nothing to write (skipped, failed, or filtered in planning).
    Done(Outcome),
    /// To be written.
    Write(Box<Planned>),
}

/// `--settle` as a duration.
pub fn settle_time(rw: &RewriteArgs) -> Result<Duration> {
    let secs = crate::ops::duration::parse_seconds(&rw.settle).context("--settle")?;
    if secs > 3600 {
        bail!("--settle {} is longer than an hour", rw.settle);
    }
    Ok(Duration::from_secs(secs.max(0) as u64))
}

/// The status of an edit that a live app superseded.
pub const SUPERSEDED: &str = "superseded";

/// After the edits are committed: waits `settle` (an app commit that queued behind memctl's
/// lands within it), then marks `superseded` every written edit whose thread's latest root
/// checkpoint is no longer memctl's. memctl's ids sort just after their parent (see
/// `ops::update`), so a checkpoint the app made from the same parent wins: the app's turn is
/// kept and memctl's edit is not in effect. That must be reported, never counted as done.
pub fn mark_superseded(
    store: &dyn CheckpointStore,
    outcomes: &mut [Outcome],
    settle: Duration,
) -> Result<()> {
    let written = |o: &Outcome| {
        o.checkpoint_id.is_some()
            && matches!(
                o.status,
                "rewritten" | "purged" | PURGE_INCOMPLETE | "summarized"
            )
    };
    if !outcomes.iter().any(written) {
        return Ok(());
    }
    // No app had the file open when memctl started (WAL mode, no -wal file): nothing can be
    // queued behind memctl's commit, so there is nothing to wait for.
    if store.might_be_shared() {
        std::thread::sleep(settle);
    }
    for o in outcomes.iter_mut().filter(|o| written(o)) {
        let latest = store.latest_checkpoint_id(&o.thread_id, "")?;
        if latest.is_some() && latest != o.checkpoint_id {
            o.status = SUPERSEDED;
            o.notes.push(format!(
                "a live app committed checkpoint {} after memctl's edit: LangGraph continues from the app's checkpoint (its turn is kept) and this edit is not in effect; run memctl again",
                latest.unwrap_or_default()
            ));
        }
    }
    Ok(())
}

/// True for the statuses of a thread whose edit failed (nothing or not all of it done).
pub fn is_failure(status: &str) -> bool {
    matches!(status, "failed" | PURGE_INCOMPLETE)
}

/// Renders the outcomes. With one thread asked for (`single`), a failure is an error (exit
/// 1, the reason on stderr); in a batch, failed threads and superseded edits make the run a
/// partial success (exit code 3). A superseded edit is exit 3 either way: nothing failed, but
/// the edit is not in effect.
pub fn finish(
    g: &GlobalArgs,
    dry_run: bool,
    single: bool,
    outcomes: &[Outcome],
    out: &mut dyn Write,
) -> Result<()> {
    render(g, dry_run, outcomes, out)?;
    let failed = outcomes.iter().filter(|o| is_failure(o.status)).count();
    let superseded = outcomes.iter().filter(|o| o.status == SUPERSEDED).count();
    if single && failed > 0 {
        let why: Vec<String> = outcomes
            .iter()
            .filter(|o| is_failure(o.status))
            .map(|o| {
                format!(
                    "thread '{}': {}: {}",
                    o.thread_id,
                    o.status,
                    o.notes.last().map_or("", String::as_str)
                )
            })
            .collect();
        bail!("{}", why.join("; "));
    }
    if failed + superseded > 0 {
        let n = outcomes.len();
        let mut what = Vec::new();
        if failed > 0 {
            what.push(format!("{failed} of {n} threads failed"));
        }
        if superseded > 0 {
            what.push(format!(
                "{superseded} of {n} edits were superseded by a live app"
            ));
        }
        let rest = if dry_run {
            "; dry run: nothing was written"
        } else if failed + superseded < n {
            "; the other threads were written"
        } else {
            ""
        };
        return Err(
            crate::exit::Partial(format!("{} (see the notes){rest}", what.join(" and "))).into(),
        );
    }
    Ok(())
}

fn render(g: &GlobalArgs, dry_run: bool, outcomes: &[Outcome], out: &mut dyn Write) -> Result<()> {
    match output::resolve_format(g.format) {
        Format::Table => {
            let endpoint = outcomes.iter().any(|o| o.endpoint_tokens.is_some());
            let mut headers = vec!["thread_id", "status", "messages", "tokens (approx)"];
            if endpoint {
                headers.push("endpoint in/out");
            }
            headers.extend(["checkpoint", "notes"]);
            let mut t = table::new_table(&headers);
            for o in outcomes {
                let notes: Vec<String> = o.notes.iter().map(|n| human::id(n)).collect();
                let mut row = vec![
                    human::id(&o.thread_id),
                    o.status.to_owned(),
                    arrow(o.counted, o.messages.0 as u64, o.messages.1 as u64),
                    arrow(o.counted, o.tokens.0, o.tokens.1),
                ];
                if endpoint {
                    row.push(
                        o.endpoint_tokens
                            .map_or("-".into(), |(a, b)| format!("{a} / {b}")),
                    );
                }
                row.push(o.checkpoint_id.as_deref().map_or(String::new(), human::id));
                row.push(notes.join("; "));
                t.add_row(row);
            }
            writeln!(out, "{}", table::render(&t))?;
            if outcomes.len() > 1 {
                writeln!(out, "{}", totals(outcomes))?;
            }
            if dry_run {
                for o in outcomes.iter().filter(|o| !o.removed.is_empty()) {
                    writeln!(
                        out,
                        "\n{}: would remove {}",
                        human::id(&o.thread_id),
                        human::count(o.removed.len() as u64, "message")
                    )?;
                    for r in &o.removed {
                        writeln!(
                            out,
                            "  - #{} [{}] {} {}",
                            r.index,
                            r.kind,
                            r.id.as_deref().unwrap_or(""),
                            r.text
                        )?;
                    }
                }
                writeln!(out, "\ndry run: nothing was written")?;
            }
        }
        format => {
            let records: Vec<Record<'_>> = outcomes
                .iter()
                .map(|o| Record {
                    thread_id: &o.thread_id,
                    status: o.status,
                    dry_run,
                    messages_before: o.counted.then_some(o.messages.0),
                    messages_after: o.counted.then_some(o.messages.1),
                    tokens_before: o.counted.then_some(o.tokens.0),
                    tokens_after: o.counted.then_some(o.tokens.1),
                    removed: &o.removed,
                    checkpoint_id: o.checkpoint_id.as_deref(),
                    endpoint_tokens: o
                        .endpoint_tokens
                        .map(|(sent, received)| EndpointTokens { sent, received }),
                    notes: &o.notes,
                })
                .collect();
            output::write_records(out, format, &records)?;
        }
    }
    Ok(())
}

/// The totals line under a batch table: threads per status, then messages and approximate
/// tokens before → after over the threads that were counted.
fn totals(outcomes: &[Outcome]) -> String {
    let mut statuses: Vec<(&str, usize)> = Vec::new();
    for o in outcomes {
        match statuses.iter_mut().find(|(s, _)| *s == o.status) {
            Some((_, n)) => *n += 1,
            None => statuses.push((o.status, 1)),
        }
    }
    let counted = outcomes.iter().filter(|o| o.counted);
    let (m0, m1, t0, t1) = counted.fold((0, 0, 0, 0), |(a, b, c, d), o| {
        (
            a + o.messages.0 as u64,
            b + o.messages.1 as u64,
            c + o.tokens.0,
            d + o.tokens.1,
        )
    });
    let by_status: Vec<String> = statuses.iter().map(|(s, n)| format!("{n} {s}")).collect();
    format!(
        "{}: {}; messages {m0} → {m1}, tokens (approx) {t0} → {t1}",
        human::count(outcomes.len() as u64, "thread"),
        by_status.join(", ")
    )
}

/// `before → after`, or `-` when the thread was never counted.
fn arrow(counted: bool, before: u64, after: u64) -> String {
    if counted {
        format!("{before} → {after}")
    } else {
        "-".into()
    }
}

/// One thread of a rewrite report in JSON.
#[derive(Serialize)]
struct Record<'a> {
    thread_id: &'a str,
    status: &'a str,
    dry_run: bool,
    messages_before: Option<usize>,
    messages_after: Option<usize>,
    tokens_before: Option<u64>,
    tokens_after: Option<u64>,
    removed: &'a [Removed],
    checkpoint_id: Option<&'a str>,
    endpoint_tokens: Option<EndpointTokens>,
    notes: &'a [String],
}

/// Tokens a model endpoint reported for a summary.
#[derive(Serialize)]
struct EndpointTokens {
    sent: u64,
    received: u64,
}
