//! The `forget` job: erase a person's data from the whole database, with proof. Whole
//! threads (`--thread`, `--meta`) are deleted as `prune` deletes them, one transaction per
//! thread; `--match` scrubs every other thread as `rm --purge` does (the batch driver, one
//! transaction per thread); then one vacuum, a search of every byte for what was erased, and
//! the receipt. The decisions are `ops::forget`'s; the report is `output::forget`'s.

mod delete;
pub mod findings;
mod scrub;
mod select;
mod store;
mod verify;

use std::collections::BTreeSet;
use std::path::PathBuf;

use anyhow::{Context, Result};
use serde::Serialize;

use crate::ops::find::{MetaCondition, Pattern};
use crate::ops::forget::{self as receipt, digest, Receipt, Reclaim, Reported, Unmatched};
use crate::storage::Access;

pub use findings::findings;

use super::batch::{Options, Rewrite};
use super::{Ctx, Sink};

/// What `forget` is asked to erase.
#[derive(Debug, Clone, Default)]
pub struct Request {
    /// Threads to delete whole (`--thread`).
    pub threads: Vec<String>,
    /// Conditions on a thread's (or store item's) metadata that select it (`--meta
    /// KEY=VALUE`).
    pub meta: Vec<String>,
    /// Text to scrub from every other thread and the store (`--match`).
    pub pattern: Option<String>,
    /// `pattern` is a regular expression (`--regex`).
    pub regex: bool,
    /// `pattern` ignores case (`--ignore-case`).
    pub ignore_case: bool,
    /// Where the receipt's JSON is written after a real run (`--receipt`).
    pub receipt: Option<PathBuf>,
    /// How the rewrite runs.
    pub rewrite: Rewrite,
}

/// What a run did (or would do), for its report and exit.
#[derive(Debug)]
pub struct Report {
    /// The receipt.
    pub receipt: Receipt,
    /// What the run did, thread by thread and item by item.
    pub planned: Planned,
    /// Threads named that are not in the database.
    pub absent: Vec<String>,
    /// A vacuum an app kept busy (the run is then a partial success).
    pub busy: Option<anyhow::Error>,
}

impl Report {
    /// The exit after the receipt: a busy vacuum or an incomplete erasure is a partial
    /// success; a typo in an erasure request is noticed (nothing matched is an error, a part
    /// that matched nothing makes the run partial).
    pub fn verdict(self) -> Result<()> {
        let dry_run = self.receipt.dry_run;
        verdict(&self.receipt, &self.absent, self.busy, dry_run)
    }
}

/// One thread in the list of what a run does.
#[derive(Debug, Clone, Serialize)]
pub struct Line {
    /// The thread.
    pub thread_id: String,
    /// `would delete`, `deleted`, `would scrub`, `scrubbed`, `absent`, `note`.
    pub action: String,
    /// Counts and notes.
    pub detail: String,
}

impl Line {
    /// A line.
    pub fn new(thread_id: &str, action: &str, detail: &str) -> Line {
        Line {
            thread_id: thread_id.to_owned(),
            action: action.to_owned(),
            detail: detail.to_owned(),
        }
    }
}

/// One item of the LangGraph Store in the list of what a run does.
#[derive(Debug, Clone, Serialize)]
pub struct StoreLine {
    /// Its namespace (the labels).
    pub namespace: crate::ops::store::Labels,
    /// Its key.
    pub key: String,
    /// `would delete` or `deleted`.
    pub action: String,
    /// Size and why it was selected.
    pub detail: String,
}

/// What the run did or would do, thread by thread (and store item by item).
#[derive(Debug, Clone, Default)]
pub struct Planned {
    /// The lines, in the order the run met the threads.
    pub lines: Vec<Line>,
    /// The store's items (`None`: the database has no store).
    pub store: Option<Vec<StoreLine>>,
}

/// What a run has done and found so far, gathered step by step for the receipt.
#[derive(Default)]
pub(super) struct Tally {
    /// The list of what the run does, thread by thread.
    pub(super) lines: Vec<Line>,
    /// Threads reported (left as they are), and why.
    pub(super) reported: Vec<Reported>,
    /// Places that hold a match memctl does not rewrite.
    pub(super) untouched: Vec<String>,
    /// `--match` matched something (in a deleted thread, or one it scrubs or reports, or a
    /// store item), or could not tell (a thread it could not search).
    pub(super) pattern_matched: bool,
    /// Texts that must be gone afterwards (what `--match` matched).
    pub(super) must: BTreeSet<String>,
    /// Texts removed with them (the rest of the removed messages), searched for too.
    pub(super) removed: BTreeSet<String>,
}

/// Runs `forget`: the request → the threads and store items it selects (asked first) →
/// whole threads deleted → `--match` scrubbed from the others → store items deleted →
/// freed space erased and every byte searched → the receipt.
pub fn run(args: &Request, ctx: &Ctx, sink: &dyn Sink) -> Result<Report> {
    let (pattern, conditions) = request(args)?;
    let opts = Options::of(ctx, &args.rewrite, "forget")?;
    let dry_run = opts.dry_run;
    let access = if dry_run {
        Access::ReadOnly
    } else {
        Access::ReadWrite
    };
    let store = ctx
        .open_for_writing(dry_run)
        .or_else(|e| ctx.checkpoints_or_store_only(access, e, sink))?;
    if !dry_run {
        // Deleted rows leave zeros, not their text, in the pages they shared with others.
        if let Some(raw) = store.raw_bytes() {
            raw.zero_deleted_content()?;
        }
    }
    let keys = &opts.keys;
    let mut tally = Tally::default();

    // 1. Whole threads: the named ones, and those --meta selects. Each pass over the threads
    // streams them a batch at a time (memory flat in the number of threads, issue #30).
    let sel = select::select_threads(&*store, keys, &args.threads, &conditions, &mut tally, sink)?;
    // The LangGraph Store's items the request selects, chosen before anything is written.
    let mut items = ctx.open_store_if_any(access)?;
    let picks = match &items {
        Some(s) if !conditions.is_empty() || pattern.is_some() => {
            store::select_items(&**s, &conditions, pattern.as_ref())?
        }
        _ => vec![],
    };
    if let (Some(s), false, false) = (&items, dry_run, picks.is_empty()) {
        s.check_writable()
            .context("the store has items to forget; nothing was written")?;
    }
    let store_meta = picks.iter().filter(|p| p.by_meta).count();
    tally.pattern_matched = picks.iter().any(|p| !p.matched.is_empty());
    select::confirm(sink, &sel.doomed, pattern.is_some(), picks.len(), dry_run)?;
    let mut deletion = delete::delete_threads(
        &*store,
        keys,
        &sel.doomed,
        pattern.as_ref(),
        dry_run,
        &mut tally,
        sink,
    )?;

    // 2. --match over every other thread.
    let scrub = match &pattern {
        Some(p) => scrub::scrub_matches(&*store, &opts, &sel.doomed, p, &mut tally, sink)?,
        None => scrub::Scrub::default(),
    };

    // 2b. The store's items.
    let erasure = match items.as_deref_mut() {
        Some(s) => store::erase_items(s, &picks, dry_run, &mut tally, sink)?,
        None => store::StoreErasure::default(),
    };

    // 3 and 4. Reclaim without locking an app out and verify.
    let mut reclaim = Reclaim {
        out_of_reach: store.out_of_reach(),
        ..Reclaim::default()
    };
    let (verification, busy) = if dry_run {
        (None, None)
    } else {
        let check = items.as_deref().map(|s| store::StoreCheck {
            store: s,
            conditions: &conditions,
            pattern: pattern.as_ref(),
            gone: &erasure.gone,
        });
        let given = pattern.as_ref().zip(args.pattern.as_deref());
        let (v, busy) = verify::reclaim_and_verify(
            &*store,
            keys,
            &mut deletion,
            given,
            check,
            &mut tally,
            &mut reclaim,
            sink,
        )?;
        // The store's own tables were vacuumed after its deletion (Postgres).
        reclaim.vacuumed |= erasure.vacuumed;
        (Some(v), busy)
    };

    let receipt = Receipt {
        receipt: "memctl forget",
        memctl_version: env!("CARGO_PKG_VERSION"),
        timestamp: crate::text::human::utc(&crate::text::human::now(ctx.now.as_deref())?),
        backend: store.backend(),
        dry_run,
        unmatched: Unmatched {
            absent_threads_sha256: sel.absent.iter().map(|t| digest(t)).collect(),
            meta_selected_nothing: !conditions.is_empty()
                && sel.meta_selected + sel.meta_unknown + store_meta == 0,
            pattern_matched_nothing: pattern.is_some() && !tally.pattern_matched,
        },
        request: receipt::Request::new(
            &args.threads,
            &conditions,
            args.pattern
                .as_deref()
                .map(|p| (p, args.regex, args.ignore_case)),
        ),
        deleted_threads_sha256: deletion.ids.iter().map(|t| digest(t)).collect(),
        deleted: deletion.deleted,
        scrubbed: scrub.scrubbed,
        scrubbed_threads_sha256: scrub.ids.iter().map(|t| digest(t)).collect(),
        reported: tally.reported,
        untouched: tally.untouched,
        reclaim,
        verification,
        store: erasure.erased,
    };
    if let (Some(path), false) = (&args.receipt, dry_run) {
        let json = serde_json::to_vec_pretty(&receipt)?;
        std::fs::write(path, json)
            .with_context(|| format!("cannot write the receipt to '{}'", path.display()))?;
    }
    let planned = Planned {
        lines: tally.lines,
        store: items.as_ref().map(|_| erasure.lines),
    };
    Ok(Report {
        receipt,
        planned,
        absent: sel.absent,
        busy,
    })
}

/// The request's `--match` pattern and `--meta` conditions; a request that names nothing to
/// forget is a usage error.
fn request(args: &Request) -> Result<(Option<Pattern>, Vec<MetaCondition>)> {
    let pattern = args
        .pattern
        .as_deref()
        .map(|p| Pattern::new(p, args.regex, args.ignore_case))
        .transpose()
        .context("--match")?;
    let conditions = args
        .meta
        .iter()
        .map(|m| MetaCondition::parse(m))
        .collect::<Result<Vec<_>>>()?;
    if args.threads.is_empty() && conditions.is_empty() && pattern.is_none() {
        return Err(crate::exit::Usage(
            "say what to forget: --thread ID, --meta KEY=VALUE or --match PATTERN".into(),
        )
        .into());
    }
    Ok((pattern, conditions))
}

/// The exit after the receipt: a busy vacuum or an incomplete erasure is a partial success;
/// a typo in an erasure request is noticed (nothing matched is an error, a part that
/// matched nothing makes the run partial).
fn verdict(
    receipt: &Receipt,
    absent: &[String],
    busy: Option<anyhow::Error>,
    dry_run: bool,
) -> Result<()> {
    if let Some(e) = busy {
        return Err(crate::jobs::partial_if_busy(e));
    }
    if !dry_run && !receipt.complete() {
        return Err(crate::exit::Partial(
            "the erasure is not complete: see the receipt's reported threads, untouched places and verification".into(),
        )
        .into());
    }
    // The dry run exits as the real run would: what it reports, the real run leaves.
    if dry_run && receipt.leaves_something() {
        return Err(crate::exit::Partial(
            "the erasure would not be complete: see the reported threads and untouched places; nothing was written".into(),
        )
        .into());
    }
    let what = receipt.unmatched.describe(absent).join("; ");
    if receipt.matched_nothing() {
        anyhow::bail!("the request matched nothing ({what}); no thread was deleted or scrubbed");
    }
    if receipt.unmatched.any() {
        return Err(crate::exit::Partial(format!(
            "part of the request matched nothing ({what}); the rest was {}",
            if dry_run { "listed" } else { "done" }
        ))
        .into());
    }
    Ok(())
}
