//! What trim, rm (and later summarize) share: choosing threads, refusing threads that are not
//! safe to edit, appending the update, and reporting before → after.

use std::io::Write;
use std::time::Duration;

use anyhow::{anyhow, bail, Context, Result};
use serde_json::{json, Value as Json};

use crate::cli::{Format, GlobalArgs, RewriteArgs, TargetArgs};
use crate::codec::Value;
use crate::model::checkpoint::MESSAGES;
use crate::model::state::pending_work;
use crate::model::{Kind, Message, MessagesChannel};
use crate::ops::purge::Scrub;
use crate::ops::update::{self, Env};
use crate::output::{self, human, progress, table};
use crate::storage::sqlite::ThreadMoved;
use crate::storage::{CheckpointStore, SqliteStore};
use crate::tokens::approx;

use super::LoadedCheckpoint;

/// A thread memctl will not edit, with the reason.
#[derive(Debug)]
pub struct Refusal(pub String);

impl std::fmt::Display for Refusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Refusal {}

/// The latest state of a thread, ready to be edited.
pub struct Editable {
    /// The thread.
    pub thread_id: String,
    /// The latest root checkpoint.
    pub latest: LoadedCheckpoint,
    /// The stored message values (kept ones are written back byte for byte).
    pub items: Vec<Value>,
    /// The typed view of `items`.
    pub messages: Vec<Message>,
    /// Pending writes on the latest checkpoint when it was read (0 unless forced).
    pub pending_writes: usize,
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
    /// Messages before and after.
    pub messages: (usize, usize),
    /// Approximate tokens before and after.
    pub tokens: (u64, u64),
    /// The removed messages (index, kind, id, text preview).
    pub removed: Vec<Json>,
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
            messages: (0, 0),
            tokens: (0, 0),
            removed: vec![],
            checkpoint_id: None,
            endpoint_tokens: None,
        }
    }
}

/// Opens the database for writing (never creating it).
pub fn open_read_write(g: &GlobalArgs) -> Result<SqliteStore> {
    if !g.ns.is_empty() {
        bail!("rewrites work on the root namespace; drop --ns '{}'", g.ns);
    }
    let path =
        g.db.as_deref()
            .ok_or_else(|| anyhow!("no database given: pass --db PATH or set MEMCTL_DB"))?;
    SqliteStore::open_read_write(path, Duration::from_millis(g.busy_timeout))
}

/// Loads a thread's latest root state, refusing what memctl must not edit.
pub fn load_editable(store: &SqliteStore, thread: &str, force: bool) -> Result<Editable> {
    super::require_thread(store, thread, "")?;
    let row = store
        .checkpoint(thread, "", None)?
        .ok_or_else(|| anyhow!("thread '{thread}' has no root checkpoint"))?;
    if row.type_name != "msgpack" {
        return Err(Refusal(format!(
            "thread '{thread}': its latest checkpoint is stored as '{}', not msgpack; memctl rewrites only msgpack checkpoints",
            row.type_name
        ))
        .into());
    }
    let latest = LoadedCheckpoint::decode(row)?;
    let writes = super::load_writes(store, &latest.row)?;
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
    let channel = latest.checkpoint.messages()?;
    let is_delta = matches!(
        channel,
        MessagesChannel::DeltaOmitted | MessagesChannel::DeltaSnapshot(_)
    ) || latest
        .metadata
        .fields
        .contains_key("counters_since_delta_snapshot");
    if is_delta {
        return Err(Refusal(format!(
            "thread '{thread}' keeps its messages in a DeltaChannel; memctl does not rewrite delta threads yet"
        ))
        .into());
    }
    let items: Vec<Value> = match latest.checkpoint.channel(MESSAGES) {
        Some(v) => v.as_array().map(<[Value]>::to_vec).unwrap_or_default(),
        None => return Err(Refusal(format!("thread '{thread}' has no messages channel")).into()),
    };
    let messages = channel
        .messages()
        .map(<[Message]>::to_vec)
        .unwrap_or_default();
    if let Some(i) = messages.iter().position(|m| m.id().is_none()) {
        bail!("message {i} of thread '{thread}' has no id; LangGraph always assigns one, so this file is unusual");
    }
    Ok(Editable {
        thread_id: thread.to_owned(),
        latest,
        items,
        messages,
        pending_writes: work.writes,
    })
}

/// Checks the edited list is valid for a model provider and for LangGraph: no tool call
/// without its answer, no answer without its call.
pub fn check_tool_pairs(msgs: &[&Message]) -> Result<()> {
    for (i, m) in msgs.iter().enumerate() {
        if m.kind == Kind::Tool {
            let call = m.tool_call_id().unwrap_or("");
            if !msgs[..i]
                .iter()
                .any(|a| a.kind == Kind::Ai && a.tool_call_ids().contains(&call))
            {
                bail!("the result would leave a ToolMessage without the AI tool call '{call}'");
            }
        }
        if m.kind == Kind::Ai {
            for call in m.tool_call_ids() {
                if !msgs[i + 1..]
                    .iter()
                    .any(|t| t.kind == Kind::Tool && t.tool_call_id() == Some(call))
                {
                    bail!("the result would leave the tool call '{call}' without its ToolMessage");
                }
            }
        }
    }
    Ok(())
}

/// Applies the edit `keep` (indices into the thread's messages) plus `added` new messages at
/// `insert_at` (summaries), writing unless `dry_run`.
pub fn apply(
    store: &SqliteStore,
    ed: &Editable,
    keep: &[usize],
    notes: Vec<String>,
    dry_run: bool,
) -> Result<Outcome> {
    apply_with(store, ed, keep, notes, dry_run, false)
}

/// [`apply`], optionally purging the removed messages from the thread's history and the
/// file's free space (`rm --purge`).
pub fn apply_with(
    store: &SqliteStore,
    ed: &Editable,
    keep: &[usize],
    notes: Vec<String>,
    dry_run: bool,
    purge: bool,
) -> Result<Outcome> {
    let kept: Vec<&Message> = keep.iter().map(|&i| &ed.messages[i]).collect();
    let before_tokens = approx::count(&ed.messages);
    let after_tokens: u64 = kept.iter().map(|m| approx::count_message(m)).sum();
    let removed: Vec<Json> = (0..ed.messages.len())
        .filter(|i| !keep.contains(i))
        .map(|i| {
            let m = &ed.messages[i];
            json!({"index": i, "type": m.kind.type_str(), "id": m.id(), "text": human::preview(&m.summary_text(), 60)})
        })
        .collect();
    let mut outcome = Outcome {
        thread_id: ed.thread_id.clone(),
        status: "unchanged",
        notes,
        messages: (ed.messages.len(), kept.len()),
        tokens: (before_tokens, after_tokens),
        removed,
        checkpoint_id: None,
        endpoint_tokens: None,
    };
    if keep.len() == ed.messages.len() {
        return Ok(outcome);
    }
    check_tool_pairs(&kept).with_context(|| format!("thread '{}'", ed.thread_id))?;
    if dry_run {
        outcome.status = "would rewrite";
        return Ok(outcome);
    }
    let new_items: Vec<Value> = keep.iter().map(|&i| ed.items[i].clone()).collect();
    let upd = build_update(ed, new_items, vec![])?;
    outcome.checkpoint_id = Some(upd.checkpoint_id.clone());
    if !purge {
        store.append_update(&ed.thread_id, "", &upd, ed.pending_writes)?;
        outcome.status = "rewritten";
        return Ok(outcome);
    }
    let mut scrub = Scrub::default();
    for i in (0..ed.messages.len()).filter(|i| !keep.contains(i)) {
        let m = &ed.messages[i];
        scrub.ids.extend(m.id().map(str::to_owned));
        let text = m.text();
        if !text.is_empty() {
            scrub.texts.insert(text);
        }
    }
    let rows =
        store.append_update_and_purge(&ed.thread_id, "", &upd, ed.pending_writes, Some(&scrub))?;
    store.vacuum()?;
    outcome.status = "purged";
    outcome.notes.push(format!(
        "scrubbed {rows} older checkpoints and writes; file vacuumed"
    ));
    let leftovers = find_in_file(store.path(), &scrub.texts)?;
    if !leftovers.is_empty() {
        outcome.status = "purged, text remains";
        for (text, file) in leftovers {
            outcome.notes.push(format!(
                "the text {} is still in {} (it also appears outside the removed messages, e.g. in another message or channel)",
                human::preview(&text, 30),
                file
            ));
        }
    }
    Ok(outcome)
}

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
        parent_id,
        &mut env,
    )
    .with_context(|| format!("thread '{}'", ed.thread_id))
}

/// Which of `texts` still occur in the database file or its `-wal` (byte search).
fn find_in_file(
    path: &std::path::Path,
    texts: &std::collections::HashSet<String>,
) -> Result<Vec<(String, String)>> {
    let mut found = Vec::new();
    let wal = std::path::PathBuf::from(format!("{}-wal", path.display()));
    for file in [path.to_path_buf(), wal] {
        let Ok(bytes) = std::fs::read(&file) else {
            continue;
        };
        for text in texts {
            let needle = text.as_bytes();
            if needle.len() >= 4 && bytes.windows(needle.len()).any(|w| w == needle) {
                found.push((text.clone(), file.display().to_string()));
            }
        }
    }
    Ok(found)
}

/// Calls `visit` with every targeted thread that passes the filters: `Ok(editable)`, or
/// `Err(outcome)` for a thread that is skipped (not safe to edit) or failed to load. With one
/// `--thread`, a refusal is an error instead. `min_tokens` filters on the whole state.
pub fn for_each_target(
    store: &SqliteStore,
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
    let now = human::now(g.now.as_deref())?;
    let idle = target
        .idle
        .as_deref()
        .map(crate::ops::duration::parse_seconds)
        .transpose()?;
    let mut ids = Vec::new();
    store.for_each_thread(&mut |t| {
        if t.latest_root_id.is_some() {
            ids.push(t.thread_id);
        }
        Ok(())
    })?;
    let pb = progress::bar(ids.len() as u64, verb);
    for thread in ids {
        pb.set_message(thread.clone());
        pb.inc(1);
        // Filters first (from the latest checkpoint), so only selected threads report.
        if idle.is_some() || target.min_messages.is_some() || min_tokens.is_some() {
            let Some(row) = store.checkpoint(&thread, "", None)? else {
                continue;
            };
            let latest = match LoadedCheckpoint::decode(row) {
                Ok(l) => l,
                Err(e) => {
                    visit(Err(Outcome::failed(&thread, format!("{e:#}"))))?;
                    continue;
                }
            };
            if let Some(secs) = idle {
                let ts = latest.checkpoint.ts().and_then(human::parse_ts);
                if ts.is_some_and(|t| now.as_second() - t.as_second() < secs) {
                    continue;
                }
            }
            let channel = latest.checkpoint.messages().ok();
            let msgs = channel.as_ref().and_then(|c| c.messages());
            if let (Some(min), Some(m)) = (target.min_messages, msgs) {
                if m.len() < min {
                    continue;
                }
            }
            if let (Some((min, counter)), Some(m)) = (min_tokens, msgs) {
                if counter.count(m).unwrap_or(0) < min {
                    continue;
                }
            }
        }
        match load_editable(store, &thread, force) {
            Ok(ed) => visit(Ok(ed))?,
            Err(e) if e.is::<Refusal>() => visit(Err(Outcome::skipped(&thread, e.to_string())))?,
            Err(e) => visit(Err(Outcome::failed(&thread, format!("{e:#}"))))?,
        }
    }
    pb.finish_and_clear();
    Ok(())
}

/// Runs `edit` on the targeted threads and reports. In batch mode refusals are skipped and
/// reported; with one thread they are errors.
pub fn run_batch(
    g: &GlobalArgs,
    target: &TargetArgs,
    rw: &RewriteArgs,
    verb: &str,
    out: &mut dyn Write,
    edit: &dyn Fn(&SqliteStore, &Editable) -> Result<Outcome>,
) -> Result<()> {
    let store = open_read_write(g)?;
    let single = target.thread.is_some();
    let mut outcomes = Vec::new();
    // Batches share a transaction (one sync per BATCH threads, not one per thread); each
    // thread's update is still atomic on its own (a savepoint).
    const BATCH: usize = 100;
    let mut in_batch = 0usize;
    for_each_target(&store, g, target, rw.force, None, verb, &mut |item| {
        if !single && !rw.dry_run && in_batch == 0 {
            store.begin_batch()?;
        }
        in_batch += 1;
        if in_batch == BATCH {
            in_batch = 0;
        }
        match item {
            Err(o) => outcomes.push(o),
            Ok(ed) => match edit(&store, &ed) {
                Ok(o) => outcomes.push(o),
                Err(e) if single => return Err(e),
                Err(e) if e.is::<ThreadMoved>() => {
                    outcomes.push(Outcome::skipped(&ed.thread_id, e.to_string()))
                }
                Err(e) => outcomes.push(Outcome::failed(&ed.thread_id, format!("{e:#}"))),
            },
        };
        if in_batch == 0 {
            store.commit_batch()?;
        }
        Ok(())
    })?;
    store.commit_batch()?;
    finish(g, rw.dry_run, &outcomes, out)
}

/// Renders the outcomes; some failed threads make the run a partial success (exit code 3).
pub fn finish(
    g: &GlobalArgs,
    dry_run: bool,
    outcomes: &[Outcome],
    out: &mut dyn Write,
) -> Result<()> {
    render(g, dry_run, outcomes, out)?;
    let failed = outcomes.iter().filter(|o| o.status == "failed").count();
    if failed > 0 {
        return Err(crate::exit::Partial(format!(
            "{failed} of {} threads failed (see the notes); the others were written",
            outcomes.len()
        ))
        .into());
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
            headers.push("checkpoint / notes");
            let mut t = table::new_table(&headers);
            for o in outcomes {
                let detail = o
                    .checkpoint_id
                    .clone()
                    .into_iter()
                    .chain(o.notes.iter().cloned())
                    .collect::<Vec<_>>()
                    .join("; ");
                let mut row = vec![
                    human::preview(&o.thread_id, 40),
                    o.status.to_owned(),
                    format!("{} → {}", o.messages.0, o.messages.1),
                    format!("{} → {}", o.tokens.0, o.tokens.1),
                ];
                if endpoint {
                    row.push(
                        o.endpoint_tokens
                            .map_or("-".into(), |(a, b)| format!("{a} / {b}")),
                    );
                }
                row.push(human::preview(&detail, 120));
                t.add_row(row);
            }
            writeln!(out, "{t}")?;
            if dry_run {
                for o in outcomes.iter().filter(|o| !o.removed.is_empty()) {
                    writeln!(
                        out,
                        "\n{}: would remove {} messages",
                        o.thread_id,
                        o.removed.len()
                    )?;
                    for r in &o.removed {
                        writeln!(
                            out,
                            "  - #{} [{}] {} {}",
                            r["index"],
                            r["type"].as_str().unwrap_or(""),
                            r["id"].as_str().unwrap_or(""),
                            r["text"].as_str().unwrap_or("")
                        )?;
                    }
                }
                writeln!(out, "\ndry run: nothing was written")?;
            }
        }
        format => {
            let records: Vec<Json> = outcomes
                .iter()
                .map(|o| {
                    json!({
                        "thread_id": o.thread_id,
                        "status": o.status,
                        "dry_run": dry_run,
                        "messages_before": o.messages.0,
                        "messages_after": o.messages.1,
                        "tokens_before": o.tokens.0,
                        "tokens_after": o.tokens.1,
                        "removed": o.removed,
                        "checkpoint_id": o.checkpoint_id,
                        "endpoint_tokens": o.endpoint_tokens.map(|(sent, received)| json!({"sent": sent, "received": received})),
                        "notes": o.notes,
                    })
                })
                .collect();
            output::write_records(out, format, &records)?;
        }
    }
    Ok(())
}
