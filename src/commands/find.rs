//! `memctl find PATTERN`: which conversations mention something — message text (and tool-call
//! names and arguments, and string state channels such as a summary) across every thread, in
//! the latest state or the whole history; `--meta KEY=VALUE` for the threads of one user.

use std::io::Write;

use anyhow::{anyhow, Result};
use serde::Serialize;

use crate::cli::{FindArgs, Format, GlobalArgs};
use crate::codec::aes::Keyring;
use crate::codec::json::to_json;
use crate::model::checkpoint::{StoredMessages, MESSAGES};
use crate::ops::find::{excerpt, MetaCondition, Pattern};
use crate::output::{self, human, table};
use crate::storage::CheckpointRow;

/// One hit: a message (or a state channel) of a checkpoint that matches.
#[derive(Debug, Clone, Serialize)]
struct Hit {
    thread_id: String,
    checkpoint_id: String,
    /// The message's position in the checkpoint's list (`None`: a state channel, or a thread
    /// found by `--meta` alone).
    index: Option<usize>,
    message_id: Option<String>,
    /// The message's type (`human`, `ai`, `tool`…), or `channel:NAME`, or `thread`.
    role: String,
    /// Text around the match.
    before: String,
    /// The matched text.
    #[serde(rename = "match")]
    matched: String,
    after: String,
}

/// Runs `find`.
pub fn run(g: &GlobalArgs, args: &FindArgs, out: &mut dyn Write) -> Result<()> {
    let pattern = args
        .pattern
        .as_deref()
        .map(|p| Pattern::new(p, args.regex, args.ignore_case))
        .transpose()?;
    let conditions = args
        .meta
        .iter()
        .map(|m| MetaCondition::parse(m))
        .collect::<Result<Vec<_>>>()?;
    if pattern.is_none() && conditions.is_empty() {
        return Err(crate::exit::Usage(
            "give a PATTERN to search for, or --meta KEY=VALUE (or both)".into(),
        )
        .into());
    }
    let store = super::open_read_only(g)?;
    let keys = super::keys(g);
    let mut latest = store.latest_root_ids()?;
    if let Some(only) = &args.thread {
        latest.retain(|(t, _)| t == only);
        if latest.is_empty() {
            return Err(super::no_thread(only));
        }
    }
    let threads = latest.len();
    // The checkpoints searched: each thread's latest, or with --history all of its root ones.
    let ids: Vec<(String, String)> = if args.history {
        let mut all = Vec::new();
        for (thread, _) in &latest {
            for (id, _) in store.metadata(thread, "")? {
                all.push((thread.clone(), id));
            }
        }
        all
    } else {
        latest
    };
    let results = super::map_latest(&*store, &ids, |row| {
        let thread = row.thread_id.clone();
        search(&keys, row, pattern.as_ref(), &conditions).map_err(|e| (thread, format!("{e:#}")))
    })?;
    let mut hits = Vec::new();
    let mut failed: Vec<(String, String)> = Vec::new();
    for r in results {
        match r {
            Ok(h) => hits.extend(h),
            Err(f) if !failed.iter().any(|(t, _)| *t == f.0) => failed.push(f),
            Err(_) => {}
        }
    }
    render(g, args, &hits, out)?;
    super::report_unreadable(&failed, threads, "were not searched")
}

/// The hits of one checkpoint.
fn search(
    keys: &Keyring,
    row: CheckpointRow,
    pattern: Option<&Pattern>,
    conditions: &[MetaCondition],
) -> Result<Vec<Hit>> {
    let metadata = crate::model::Metadata::parse(row.metadata.as_deref()).map_err(|e| {
        anyhow!(
            "bad metadata on checkpoint {} of thread '{}': {e}",
            row.checkpoint_id,
            row.thread_id
        )
    })?;
    // Conditions first: metadata (the app's configurable keys are copied there), then state.
    let prefiltered = pattern.is_none_or(|p| p.maybe_in(&row.checkpoint));
    if conditions.is_empty() && !prefiltered {
        return Ok(vec![]);
    }
    let (cp, messages) = super::show::decode_shallow(keys, row)?;
    let meets = |c: &MetaCondition| {
        let in_metadata = metadata.fields.get(&c.key).is_some_and(|v| c.matches(v));
        in_metadata
            || cp
                .checkpoint
                .channel(&c.key)
                .is_some_and(|v| c.matches(&to_json(v)))
    };
    if !conditions.iter().all(meets) {
        return Ok(vec![]);
    }
    let hit = |index, message_id, role: String, parts: (String, String, String)| Hit {
        thread_id: cp.row.thread_id.clone(),
        checkpoint_id: cp.row.checkpoint_id.clone(),
        index,
        message_id,
        role,
        before: parts.0,
        matched: parts.1,
        after: parts.2,
    };
    let Some(pattern) = pattern else {
        let what = conditions
            .iter()
            .map(|c| format!("{}={}", c.key, c.value))
            .collect::<Vec<_>>()
            .join(" ");
        return Ok(vec![hit(
            None,
            None,
            "thread".into(),
            (String::new(), what, String::new()),
        )]);
    };
    if !prefiltered {
        return Ok(vec![]);
    }
    let mut hits = Vec::new();
    if let StoredMessages::List(list) = &messages {
        for (i, span) in list.spans()?.iter().enumerate() {
            let m = list.message(i, span)?;
            let text = m.searchable_text();
            if let Some(range) = pattern.find(&text) {
                let id = m.id().map(str::to_owned);
                hits.push(hit(
                    Some(i),
                    id,
                    m.kind.type_str().into(),
                    excerpt(&text, range),
                ));
            }
        }
    }
    // String state channels (a summary, a user profile…).
    for (name, value) in cp.checkpoint.channel_values() {
        if name == MESSAGES || super::show::is_internal_channel(name) {
            continue;
        }
        if let Some(text) = value.as_str() {
            if let Some(range) = pattern.find(text) {
                hits.push(hit(
                    None,
                    None,
                    format!("channel:{name}"),
                    excerpt(text, range),
                ));
            }
        }
    }
    Ok(hits)
}

fn render(g: &GlobalArgs, args: &FindArgs, hits: &[Hit], out: &mut dyn Write) -> Result<()> {
    let format = output::resolve_format(g.format);
    if args.count {
        let mut per_thread: Vec<(&str, usize)> = Vec::new();
        for h in hits {
            match per_thread.last_mut() {
                Some((t, n)) if *t == h.thread_id => *n += 1,
                _ => per_thread.push((&h.thread_id, 1)),
            }
        }
        #[derive(Serialize)]
        struct Count<'a> {
            thread_id: &'a str,
            hits: usize,
        }
        let counts: Vec<Count<'_>> = per_thread
            .iter()
            .map(|(t, n)| Count {
                thread_id: t,
                hits: *n,
            })
            .collect();
        if format != Format::Table {
            return output::write_records(out, format, &counts);
        }
        for c in &counts {
            writeln!(out, "{}\t{}", human::id(c.thread_id), c.hits)?;
        }
        writeln!(
            out,
            "{} in {}",
            human::count(hits.len() as u64, "hit"),
            human::count(counts.len() as u64, "thread")
        )?;
        return Ok(());
    }
    if format != Format::Table {
        return output::write_records(out, format, hits);
    }
    if hits.is_empty() {
        writeln!(out, "no hits")?;
        return Ok(());
    }
    let mut t = table::new_table(&["thread_id", "checkpoint", "#", "message_id", "type", "text"]);
    table::align_right(&mut t, &[2]);
    for h in hits {
        t.add_row(vec![
            human::id(&h.thread_id),
            human::id(&h.checkpoint_id),
            h.index.map_or("-".into(), |i| i.to_string()),
            h.message_id.as_deref().map_or("-".into(), human::id),
            h.role.clone(),
            format!(
                "{}«{}»{}",
                human::preview(&h.before, usize::MAX),
                human::preview(&h.matched, usize::MAX),
                human::preview(&h.after, usize::MAX)
            ),
        ]);
    }
    writeln!(out, "{}", table::render(&t))?;
    Ok(())
}
