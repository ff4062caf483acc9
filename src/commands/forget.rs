//! `memctl forget`: erase a person's data from the whole database, with proof. Whole threads
//! (`--thread`, `--meta`) are deleted as `prune` deletes them, one transaction per thread;
//! `--match` scrubs every other thread as `rm --purge` does (the batch driver, one
//! transaction per thread); then one vacuum, a search of every byte for what was erased, and
//! the receipt. The decisions are `ops::forget`'s; the report is `output::forget`'s.

use std::collections::{BTreeSet, HashMap, HashSet};
use std::io::Write;

use anyhow::{Context, Result};

use crate::cli::{ForgetArgs, GlobalArgs};
use crate::codec::aes::{self, Keyring};
use crate::ops::find::{MetaCondition, Pattern};
use crate::ops::forget::{
    classify, digest, message_strings, plan_match, searchable, Findings, Hit, ItemDigest, Receipt,
    Reclaim, Reported, Request, Scrubbed, StoreErased, Unmatched, Verification,
};
use crate::ops::outcome::Status;
use crate::output::forget::{Line, Planned, StoreLine};
use crate::output::progress;
use crate::storage::store::ItemStore;
use crate::storage::{Access, CheckpointStore, Deleted, Leftover, ThreadSummary, ValueOf};

use super::batch::{self, Options, Target};

/// What a run has done and found so far, gathered step by step for the receipt.
#[derive(Default)]
struct Tally {
    /// The list of what the run does, thread by thread.
    lines: Vec<Line>,
    /// Threads reported (left as they are), and why.
    reported: Vec<Reported>,
    /// Places that hold a match memctl does not rewrite.
    untouched: Vec<String>,
    /// `--match` matched something (in a deleted thread, or one it scrubs or reports, or a
    /// store item), or could not tell (a thread it could not search).
    pattern_matched: bool,
    /// Texts that must be gone afterwards (what `--match` matched).
    must: BTreeSet<String>,
    /// Texts removed with them (the rest of the removed messages), searched for too.
    removed: BTreeSet<String>,
}

/// The threads the request deletes whole, and what selecting them found.
#[derive(Default)]
struct Selection {
    /// The threads to delete (named, or selected by `--meta`).
    doomed: Vec<ThreadSummary>,
    /// Threads named with `--thread` that are not in the database.
    absent: Vec<String>,
    /// Threads `--meta` selected.
    meta_selected: usize,
    /// Threads `--meta` could not check (it may have matched them).
    meta_unknown: usize,
}

/// What the deletion of whole threads did.
#[derive(Default)]
struct Deletion {
    /// Rows deleted.
    deleted: Deleted,
    /// The threads deleted (would be, in a dry run).
    ids: Vec<String>,
    /// The strings of every message they held, searched for afterwards.
    strings: BTreeSet<String>,
}

/// What the scrub of `--match` over the other threads did.
#[derive(Default)]
struct Scrub {
    /// Its counts.
    scrubbed: Scrubbed,
    /// The threads scrubbed.
    ids: Vec<String>,
}

/// What the deletion of the store's items did.
#[derive(Default)]
struct StoreErasure {
    /// The list of what the run does, item by item.
    lines: Vec<StoreLine>,
    /// Its counts (`None`: the database has no store).
    erased: Option<StoreErased>,
    /// The items deleted (namespace as stored, key).
    gone: Vec<(String, String)>,
    /// A `VACUUM` ran on the store's tables (Postgres) after the deletion.
    vacuumed: bool,
}

/// Runs `forget`: the request → the threads and store items it selects (asked first) →
/// whole threads deleted → `--match` scrubbed from the others → store items deleted →
/// freed space erased and every byte searched → the receipt.
pub fn run(g: &GlobalArgs, args: &ForgetArgs, out: &mut dyn Write) -> Result<()> {
    let (pattern, conditions) = request(args)?;
    let opts = Options::from_args(g, &args.rewrite, "forget")?;
    let dry_run = opts.dry_run;
    let access = if dry_run {
        Access::ReadOnly
    } else {
        Access::ReadWrite
    };
    let store = batch::open_for_writing(g, dry_run)
        .or_else(|e| super::store::checkpoints_or_store_only(g, access, e))?;
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
    let sel = select_threads(&*store, keys, args, &conditions, &mut tally)?;
    // The LangGraph Store's items the request selects, chosen before anything is written.
    let mut items = super::store::open_if_any(g, access)?;
    let picks = match &items {
        Some(s) if !conditions.is_empty() || pattern.is_some() => {
            select_items(&**s, &conditions, pattern.as_ref())?
        }
        _ => vec![],
    };
    if let (Some(s), false, false) = (&items, dry_run, picks.is_empty()) {
        s.check_writable()
            .context("the store has items to forget; nothing was written")?;
    }
    let store_meta = picks.iter().filter(|p| p.by_meta).count();
    tally.pattern_matched = picks.iter().any(|p| !p.matched.is_empty());
    confirm(args, &sel.doomed, pattern.is_some(), picks.len(), dry_run)?;
    let mut deletion = delete_threads(
        &*store,
        keys,
        &sel.doomed,
        pattern.as_ref(),
        dry_run,
        &mut tally,
    )?;

    // 2. --match over every other thread.
    let scrub = match &pattern {
        Some(p) => scrub_matches(&*store, &opts, &sel.doomed, p, &mut tally)?,
        None => Scrub::default(),
    };

    // 2b. The store's items.
    let erasure = match items.as_deref_mut() {
        Some(s) => erase_items(s, &picks, dry_run, &mut tally)?,
        None => StoreErasure::default(),
    };

    // 3 and 4. Reclaim without locking an app out and verify.
    let mut reclaim = Reclaim {
        out_of_reach: store.out_of_reach(),
        ..Reclaim::default()
    };
    let (verification, busy) = if dry_run {
        (None, None)
    } else {
        let check = items.as_deref().map(|s| StoreCheck {
            store: s,
            conditions: &conditions,
            pattern: pattern.as_ref(),
            gone: &erasure.gone,
        });
        let given = pattern.as_ref().zip(args.pattern.as_deref());
        let (v, busy) = reclaim_and_verify(
            &*store,
            keys,
            &mut deletion,
            given,
            check,
            &mut tally,
            &mut reclaim,
        )?;
        // The store's own tables were vacuumed after its deletion (Postgres).
        reclaim.vacuumed |= erasure.vacuumed;
        (Some(v), busy)
    };

    let receipt = Receipt {
        receipt: "memctl forget",
        memctl_version: env!("CARGO_PKG_VERSION"),
        timestamp: crate::output::human::utc(&crate::output::human::now(g.now.as_deref())?),
        backend: store.backend(),
        dry_run,
        unmatched: Unmatched {
            absent_threads_sha256: sel.absent.iter().map(|t| digest(t)).collect(),
            meta_selected_nothing: !conditions.is_empty()
                && sel.meta_selected + sel.meta_unknown + store_meta == 0,
            pattern_matched_nothing: pattern.is_some() && !tally.pattern_matched,
        },
        request: Request::new(
            &args.thread,
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
    crate::output::forget::render(g.format, &receipt, &planned, out)?;
    verdict(&receipt, &sel.absent, busy, dry_run)
}

/// The request's `--match` pattern and `--meta` conditions; a request that names nothing to
/// forget is a usage error.
fn request(args: &ForgetArgs) -> Result<(Option<Pattern>, Vec<MetaCondition>)> {
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
    if args.thread.is_empty() && conditions.is_empty() && pattern.is_none() {
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
        return Err(super::partial_if_busy(e));
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

/// The threads deleted whole: the ones `--thread` names (absent ones listed) and the ones
/// `--meta` selects (a thread it cannot check is reported).
fn select_threads(
    store: &dyn CheckpointStore,
    keys: &Keyring,
    args: &ForgetArgs,
    conditions: &[MetaCondition],
    tally: &mut Tally,
) -> Result<Selection> {
    let mut sel = Selection::default();
    let mut named_seen: HashSet<&str> = HashSet::new();
    // Phases on stderr (hidden when it is not a terminal, or with --quiet); the bar grows as
    // the batches come.
    let pb = progress::bar(2, "forget: select");
    pb.set_length(0);
    // Nothing is written while the threads stream (on a second handle, this one free for
    // --meta's reads); --meta's selection a batch of threads at a time (a few queries per
    // batch).
    crate::read::stream::threads_for_run(store, false, &mut |batch| {
        pb.inc_length(batch.len() as u64);
        let selects = match conditions.is_empty() {
            true => Vec::new(),
            false => meta_select_or_report(store, keys, &batch, conditions),
        };
        let mut selects = selects.into_iter();
        for t in batch {
            pb.inc(1);
            let named = args.thread.iter().find(|n| **n == t.thread_id);
            if let Some(n) = named {
                named_seen.insert(n.as_str());
            }
            let by_meta = match selects.next() {
                None | Some(Ok(false)) => false,
                Some(Ok(true)) => true,
                Some(Err(why)) => {
                    sel.meta_unknown += 1;
                    tally.reported.push(Reported {
                        thread_id: t.thread_id.clone(),
                        reason: format!("could not check --meta: {why}"),
                    });
                    false
                }
            };
            sel.meta_selected += usize::from(by_meta);
            if named.is_some() || by_meta {
                sel.doomed.push(t);
            }
        }
        Ok(true)
    })?;
    // The select phase's line goes before the question (a bar redrawn over it would hide it).
    pb.finish_and_clear();
    for t in &args.thread {
        if !named_seen.contains(t.as_str()) && !sel.absent.contains(t) {
            sel.absent.push(t.clone());
            tally.lines.push(Line::new(
                t,
                "absent",
                "not in the database (already deleted?)",
            ));
        }
    }
    Ok(sel)
}

/// Whether `--meta` selects each of `threads` ([`crate::read::meta_select`]), or why it could
/// not tell: a database error is every thread's of the batch (each is reported, none taken).
fn meta_select_or_report(
    store: &dyn CheckpointStore,
    keys: &Keyring,
    threads: &[ThreadSummary],
    conditions: &[MetaCondition],
) -> Vec<Result<bool, String>> {
    let ids: Vec<&str> = threads.iter().map(|t| t.thread_id.as_str()).collect();
    let readers = crate::read::Readers::one(store);
    match crate::read::meta_select(&readers, keys, &ids, conditions) {
        Ok(selects) => selects
            .into_iter()
            .map(|s| s.map_err(|e| format!("{e:#}")))
            .collect(),
        Err(e) => {
            let why = format!("{e:#}");
            threads.iter().map(|_| Err(why.clone())).collect()
        }
    }
}

/// On a terminal, the question before anything is written.
fn confirm(
    args: &ForgetArgs,
    doomed: &[ThreadSummary],
    pattern: bool,
    items: usize,
    dry_run: bool,
) -> Result<()> {
    if doomed.is_empty() && !pattern && items == 0 {
        return Ok(());
    }
    let mut action = format!(
        "delete {} ({})",
        crate::output::human::count(doomed.len() as u64, "thread"),
        crate::output::human::count(
            doomed.iter().map(|t| t.checkpoints).sum::<u64>(),
            "checkpoint"
        )
    );
    if pattern {
        action.push_str(", scrub what --match matches from every other thread's history,");
    }
    if items > 0 {
        action.push_str(&format!(
            ", delete {} of the LangGraph store,",
            crate::output::human::count(items as u64, "item")
        ));
    }
    action.push_str(" and erase the freed space");
    crate::output::confirm::confirm(
        &crate::output::confirm::Question {
            command: "forget",
            action,
            threads: doomed.iter().map(|t| t.thread_id.clone()).collect(),
        },
        args.yes,
        dry_run,
    )
}

/// Deletes the `doomed` threads, one transaction per thread (an interrupted run leaves whole
/// threads), after collecting the strings they hold to search for afterwards. A thread that
/// moved while memctl worked is reported, not deleted.
fn delete_threads(
    store: &dyn CheckpointStore,
    keys: &Keyring,
    doomed: &[ThreadSummary],
    pattern: Option<&Pattern>,
    dry_run: bool,
    tally: &mut Tally,
) -> Result<Deletion> {
    let mut d = Deletion::default();
    let pb = progress::bar(doomed.len() as u64, "forget: delete");
    for t in doomed {
        pb.inc(1);
        let collected = collect_strings(store, keys, &t.thread_id, pattern, &mut d.strings);
        match &collected {
            Ok(hit) => tally.pattern_matched |= *hit,
            Err(_) => tally.pattern_matched = true,
        }
        if let Err(e) = collected {
            // The thread goes anyway: what could not be read cannot be searched for.
            tally.lines.push(Line::new(
                &t.thread_id,
                "note",
                &format!("some of its rows could not be read to search for afterwards: {e:#}"),
            ));
        }
        let action = if dry_run { "would delete" } else { "deleted" };
        if !dry_run {
            let (deleted, moved) =
                store.delete_threads(&[(t.thread_id.clone(), t.latest_id.clone())])?;
            if !moved.is_empty() {
                tally.reported.push(Reported {
                    thread_id: t.thread_id.clone(),
                    reason:
                        "got a new checkpoint while memctl worked; not deleted, run forget again"
                            .into(),
                });
                continue;
            }
            d.deleted.add(deleted);
        }
        d.ids.push(t.thread_id.clone());
        tally.lines.push(Line::new(
            &t.thread_id,
            action,
            &format!("{} checkpoints, {} bytes", t.checkpoints, t.bytes),
        ));
    }
    pb.finish_and_clear();
    Ok(d)
}

/// `--match` over every thread not deleted: each searched, the ones it matches scrubbed by
/// the batch driver (one transaction per thread), the others reported.
fn scrub_matches(
    store: &dyn CheckpointStore,
    opts: &Options,
    doomed: &[ThreadSummary],
    p: &Pattern,
    tally: &mut Tally,
) -> Result<Scrub> {
    let keys = &opts.keys;
    let gone: HashSet<&str> = doomed.iter().map(|t| t.thread_id.as_str()).collect();
    let mut found: HashMap<String, Findings> = HashMap::new();
    let mut key_problem: Option<String> = None;
    let pb = progress::bar(2, "forget: search");
    pb.set_length(0);
    // The threads as they are now (the deleted ones gone), streamed beside this handle, which
    // searches them; the scrubs are written once the search has ended.
    crate::read::stream::threads_for_run(store, false, &mut |batch| {
        for t in batch
            .iter()
            .filter(|t| !gone.contains(t.thread_id.as_str()))
        {
            pb.inc_length(1);
            pb.inc(1);
            search_thread(store, keys, t, p, tally, &mut found, &mut key_problem);
        }
        Ok(true)
    })?;
    pb.finish_and_clear();
    scrub_found(store, opts, doomed, found, key_problem, tally)
}

/// Searches thread `t` for `p`: its findings go to `found`, what cannot be searched or
/// rewritten to the tally (a key error also to `key_problem`).
fn search_thread(
    store: &dyn CheckpointStore,
    keys: &Keyring,
    t: &ThreadSummary,
    p: &Pattern,
    tally: &mut Tally,
    found: &mut HashMap<String, Findings>,
    key_problem: &mut Option<String>,
) {
    match findings(store, keys, &t.thread_id, p) {
        Ok(f) if f.is_empty() => {}
        Ok(f) => {
            tally.pattern_matched = true;
            tally.untouched.extend(f.untouched.iter().cloned());
            let (m, r) = f.verify_strings();
            tally.must.extend(m);
            tally.removed.extend(r);
            if t.latest_root_id.is_none() {
                tally.reported.push(Reported {
                        thread_id: t.thread_id.clone(),
                        reason: "matches, but has no root namespace; memctl rewrites threads through their root state, so it was left as it is".into(),
                    });
                return;
            }
            found.insert(t.thread_id.clone(), f);
        }
        Err(e) => {
            tally.pattern_matched = true;
            if crate::ops::edit::is_key_error(&e) {
                key_problem.get_or_insert_with(|| format!("{e:#}"));
            }
            tally.reported.push(Reported {
                thread_id: t.thread_id.clone(),
                reason: format!("could not be searched: {e:#}"),
            });
        }
    }
}

/// Scrubs the threads `found` holds (the batch driver: one transaction per thread) and
/// reports what it did; `key_problem` with nothing found and nothing deleted is the run's
/// one line.
fn scrub_found(
    store: &dyn CheckpointStore,
    opts: &Options,
    doomed: &[ThreadSummary],
    found: HashMap<String, Findings>,
    key_problem: Option<String>,
    tally: &mut Tally,
) -> Result<Scrub> {
    let dry_run = opts.dry_run;
    let mut scrub = Scrub::default();
    // Encrypted threads and no key (or the wrong one), and nothing else to do: one line.
    if let (Some(why), true, true) = (&key_problem, found.is_empty(), doomed.is_empty()) {
        anyhow::bail!("{why}; nothing was written");
    }
    let target = Target {
        among: Some(found.keys().cloned().collect()),
        ..Target::default()
    };
    let outcomes = if found.is_empty() {
        vec![]
    } else {
        let outcomes = batch::run(store, &target, opts, &|ed| {
            let f = found
                .get(&ed.thread_id)
                .with_context(|| format!("thread '{}' was not searched", ed.thread_id))?;
            plan_match(ed, f, dry_run)
        });
        // The batches' housekeeping (SQLite: the WAL checkpointer) ends before the vacuum.
        let ended = store.batches().map_or(Ok(()), |b| b.end_batches());
        let outcomes = outcomes?;
        ended?;
        outcomes
    };
    for o in &outcomes {
        let f = found.get(&o.thread_id);
        let detail = o.notes.join("; ");
        match o.status {
            Status::Purged | Status::WouldRewrite | Status::Rewritten => {
                if o.status == Status::Purged {
                    let s = &mut scrub.scrubbed;
                    s.threads += 1;
                    scrub.ids.push(o.thread_id.clone());
                    s.checkpoints_appended += u64::from(o.checkpoint_id.is_some());
                    s.messages_removed_from_latest += o.removed.len() as u64;
                    if let Some(f) = f {
                        s.messages_matched += f.messages.len() as u64;
                        s.strings_redacted += f.strings as u64;
                        s.rows_with_matches += f.rows as u64;
                    }
                }
                let action = if dry_run { "would scrub" } else { "scrubbed" };
                let removed_here = format!(
                    "{} removed from its latest state; {detail}",
                    o.removed.len()
                );
                tally
                    .lines
                    .push(Line::new(&o.thread_id, action, &removed_here));
            }
            Status::Unchanged => {}
            _ => tally.reported.push(Reported {
                thread_id: o.thread_id.clone(),
                reason: format!("{}: {detail}", o.status),
            }),
        }
    }
    Ok(scrub)
}

/// The store's items: whole items, one transaction per namespace, as `store.delete` deletes
/// them (with their vectors). Deleted rather than scrubbed: a store value is the app's own
/// JSON (a profile, a memory, a file of lines), with no message structure memctl could
/// rewrite the way LangGraph would; an item with a part cut out is one the app may misread,
/// and `store.delete` is LangGraph's own way to forget.
fn erase_items(
    s: &mut dyn ItemStore,
    picks: &[ItemPick],
    dry_run: bool,
    tally: &mut Tally,
) -> Result<StoreErasure> {
    let mut erasure = StoreErasure::default();
    let mut erased = StoreErased::default();
    if !dry_run && !picks.is_empty() {
        if let Some(z) = s.secure_delete() {
            z.zero_deleted_content()?;
        }
    }
    let mut by_ns: std::collections::BTreeMap<&str, Vec<&ItemPick>> = Default::default();
    for p in picks {
        by_ns.entry(p.prefix.as_str()).or_default().push(p);
        tally.must.extend(p.matched.iter().cloned());
        tally
            .removed
            .extend(crate::ops::store::value_strings(&p.value));
    }
    let pb = progress::bar(by_ns.len() as u64, "forget: store");
    for (prefix, ps) in by_ns {
        pb.inc(1);
        let chosen: Vec<(String, Vec<u8>)> = ps
            .iter()
            .map(|p| (p.key.clone(), p.value.clone()))
            .collect();
        // Only items still as they were read: one the app rewrote meanwhile is left alone
        // (and, if the request still selects it, the verification says so).
        let removal = s.delete_unchanged(prefix, &chosen, dry_run)?;
        for p in &ps {
            if !removal.items.iter().any(|it| it.key == p.key) {
                erased.left_alone += 1;
                erasure.lines.push(StoreLine {
                    namespace: crate::ops::store::labels(prefix),
                    key: p.key.clone(),
                    action: "left alone".into(),
                    detail: "rewritten or deleted by the app while memctl worked; run forget again"
                        .into(),
                });
            }
        }
        erased.vectors += removal.vectors;
        for it in removal.items {
            let Some(p) = ps.iter().find(|p| p.key == it.key) else {
                continue;
            };
            erased.items += 1;
            erased.bytes += it.bytes;
            erased.selected_by_meta += u64::from(p.by_meta);
            erased.selected_by_match += u64::from(!p.matched.is_empty());
            erased.items_sha256.push(ItemDigest {
                namespace_sha256: digest(&it.prefix),
                key_sha256: digest(&it.key),
            });
            let why = match (p.by_meta, !p.matched.is_empty()) {
                (true, true) => "--meta and --match",
                (true, false) => "--meta",
                _ => "--match",
            };
            erasure.lines.push(StoreLine {
                namespace: crate::ops::store::labels(&it.prefix),
                key: it.key.clone(),
                action: if dry_run { "would delete" } else { "deleted" }.into(),
                detail: format!("{} bytes; selected by {why}", it.bytes),
            });
            erasure.gone.push((it.prefix, it.key));
        }
    }
    pb.finish_and_clear();
    if !dry_run && !erasure.gone.is_empty() {
        erasure.vacuumed = match s.maintenance() {
            Some(m) => {
                m.vacuum()?;
                true
            }
            None => false,
        };
    }
    erasure.erased = Some(erased);
    Ok(erasure)
}

/// Reclaims without locking an app out (SQLite: free pages zeroed in short transactions,
/// WAL truncated; VACUUM only when a removed text is still in a freed part of a page), and
/// verifies: every byte (every row on a server) searched for what was erased. Fills in
/// `reclaim`; returns the verification and a vacuum postponed by a busy app.
#[allow(clippy::too_many_arguments)]
fn reclaim_and_verify(
    store: &dyn CheckpointStore,
    keys: &Keyring,
    deletion: &mut Deletion,
    pattern: Option<(&Pattern, &str)>,
    items: Option<StoreCheck<'_>>,
    tally: &mut Tally,
    reclaim: &mut Reclaim,
) -> Result<(Verification, Option<anyhow::Error>)> {
    // A deleted thread's id, like its other strings, must be in no byte outside the rows
    // (free space); a kept row that holds it as text holds its own conversation (a thread
    // named `human`, a word any chat may use), counted, not a leftover. Kept threads' ids are
    // no text of any row: the deleted ids within a kept one (the threads streamed as they are
    // now) are not searched for.
    let deleted: HashSet<&str> = deletion.ids.iter().map(String::as_str).collect();
    let mut within_kept: HashSet<&str> = HashSet::new();
    crate::read::stream::threads(store, &mut |batch| {
        for t in batch
            .iter()
            .filter(|t| !deleted.contains(t.thread_id.as_str()))
        {
            within_kept.extend(deleted.iter().filter(|d| t.thread_id.contains(**d)));
        }
        Ok(true)
    })?;
    let mut removed = std::mem::take(&mut tally.removed);
    removed.extend(
        deletion
            .ids
            .iter()
            .filter(|d| !within_kept.contains(d.as_str()))
            .cloned(),
    );
    // Moved, never copied: a forget of many threads erases tens of megabytes of text.
    removed.append(&mut deletion.strings);
    let must = std::mem::take(&mut tally.must);
    let removed: Vec<String> = removed.into_iter().filter(|r| !must.contains(r)).collect();
    let (mut all, short_a) = searchable(must);
    let must = all.len();
    let (mut removed, short_b) = searchable(removed);
    all.append(&mut removed);
    reclaim.bytes_before = file_bytes(store)?;
    let phase = progress::phase("forget", "zeroing free pages");
    let search = || {
        phase.set_message("verifying: searching what the database holds");
        verify(
            store,
            keys,
            (&all, must),
            short_a + short_b,
            pattern,
            items.as_ref(),
        )
    };
    // Worth a VACUUM: an erased string found in the file's bytes outside every row (a freed
    // part of a page). A raw match of the pattern itself counts only when no thread was left
    // holding matches (reported threads keep theirs).
    let pattern_sha = pattern.map(|(_, given)| digest(given));
    let none_reported = tally.reported.is_empty();
    let in_freed_space = |v: &Verification| {
        v.remaining.iter().any(|h| {
            !h.raw.is_empty() && (Some(&h.sha256) != pattern_sha.as_ref() || none_reported)
        })
    };
    let found = batch::erase_and_search(store, search, in_freed_space);
    phase.finish_and_clear();
    let (found, busy) = match found {
        Ok((found, erased, skipped)) => {
            reclaim.free_pages_zeroed = erased.pages_zeroed;
            reclaim.vacuumed = erased.vacuumed;
            (found, skipped)
        }
        // The WAL could not be truncated: still say what the bytes hold now.
        Err(e) if e.is::<crate::storage::VacuumBusy>() => (search()?, Some(e)),
        Err(e) => return Err(e),
    };
    reclaim.bytes_after = file_bytes(store)?;
    Ok((found, busy))
}

/// The database's size ([`crate::storage::Space::file_stats`]); 0 where the backend keeps no
/// account of it.
fn file_bytes(store: &dyn CheckpointStore) -> Result<u64> {
    Ok(match store.space() {
        Some(s) => s.file_stats()?.file_bytes,
        None => 0,
    })
}

/// One stored row of a thread, opened (decrypted when it was encrypted).
struct Row<'a> {
    /// Where it is, for a person (no thread id: the caller knows the thread).
    place: &'a str,
    /// A checkpoint (`Some(true)`), a pending write (`Some(false)`) or a checkpoint's
    /// metadata (`None`).
    checkpoint: Option<bool>,
    /// The serialization type (`json` for metadata).
    type_name: &'a str,
    /// The bytes.
    bytes: &'a [u8],
}

/// Calls `f` with every stored row of a thread: every namespace, checkpoint (and its
/// metadata) and pending write, opened with `keys` when encrypted.
fn each_row(
    store: &dyn CheckpointStore,
    keys: &Keyring,
    thread: &str,
    f: &mut dyn FnMut(&Row<'_>) -> Result<()>,
) -> Result<()> {
    let mut visit = |place: &str, checkpoint: Option<bool>, type_name: &str, bytes: &[u8]| {
        if aes::split_type(type_name).1.is_some() {
            let opened = keys.open(type_name, bytes, place)?;
            return f(&Row {
                place,
                checkpoint,
                type_name: opened.type_name,
                bytes: &opened.bytes,
            });
        }
        f(&Row {
            place,
            checkpoint,
            type_name,
            bytes,
        })
    };
    for ns in store.namespaces(thread)? {
        for row in store.checkpoints(thread, &ns)? {
            let id = &row.checkpoint_id;
            let place = format!("checkpoint {id}");
            if let Some(m) = &row.metadata {
                visit(&format!("the metadata of {place}"), None, "json", m)?;
            }
            visit(&place, Some(true), &row.type_name, &row.checkpoint)?;
            for w in store.writes(thread, &ns, id)? {
                let place = format!("a pending write to '{}' on checkpoint {id}", w.channel);
                visit(&place, Some(false), &w.type_name, &w.value)?;
            }
        }
    }
    Ok(())
}

/// What `--match` finds in a thread's rows (also `rm --match --purge`'s history search).
pub(crate) fn findings(
    store: &dyn CheckpointStore,
    keys: &Keyring,
    thread: &str,
    pattern: &Pattern,
) -> Result<Findings> {
    let mut f = Findings::new(crate::ops::patterns::Patterns::one(pattern.regex().clone()));
    each_row(store, keys, thread, &mut |row| {
        let (place, type_name, bytes) = (row.place, row.type_name, row.bytes);
        let Some(checkpoint) = row.checkpoint else {
            // JSON may hold a text escaped (a quote as \"): matched on its decoded strings.
            if !pattern.maybe_in(bytes) && !bytes.contains(&b'\\') {
                return Ok(());
            }
            let hit = match serde_json::from_slice::<serde_json::Value>(bytes) {
                Ok(metadata) => f.visit_metadata(&metadata),
                Err(_) => true,
            };
            if hit {
                f.untouched(format!(
                    "{place}: memctl does not rewrite metadata (delete the thread with --thread or --meta)"
                ));
            }
            return Ok(());
        };
        if !pattern.maybe_in(bytes) {
            return Ok(());
        }
        if type_name != "msgpack" {
            f.untouched(format!(
                "{place}: stored as '{type_name}', which memctl does not rewrite"
            ));
            return Ok(());
        }
        match crate::codec::msgpack::decode(bytes) {
            Ok(v) => {
                // The pattern in the bytes but in no text (a key, a type tag, an id or a
                // name: LangGraph's structure) is no match; the verification after the
                // scrub searches the row's text again.
                f.visit(&v, checkpoint);
            }
            Err(e) => f.untouched(format!("{place}: does not decode ({e})")),
        }
        Ok(())
    })?;
    Ok(f)
}

/// Adds the strings of every message a thread's rows hold to `out`. Returns true when
/// `pattern` matches one of its rows (the bytes as stored, decrypted). Each stored value is
/// decoded once ([`CheckpointStore::visit_values`]), not every checkpoint assembled.
fn collect_strings(
    store: &dyn CheckpointStore,
    keys: &Keyring,
    thread: &str,
    pattern: Option<&Pattern>,
    out: &mut BTreeSet<String>,
) -> Result<bool> {
    let mut matched = false;
    let mut visit = |type_name: &str, kind: ValueOf, bytes: &[u8]| {
        matched = matched || pattern.is_some_and(|p| p.maybe_in(bytes));
        if kind != ValueOf::Metadata && type_name == "msgpack" {
            if let Ok(v) = crate::codec::msgpack::decode(bytes) {
                message_strings(&v, out);
            }
        }
    };
    store.visit_values(thread, &mut |v| {
        if aes::split_type(v.type_name).1.is_some() {
            let opened = keys.open(v.type_name, v.bytes, v.place)?;
            visit(opened.type_name, v.kind, &opened.bytes);
        } else {
            visit(v.type_name, v.kind, v.bytes);
        }
        Ok(())
    })?;
    Ok(matched)
}

/// Searches the database for each of `all` (the strings that must be gone, then the other
/// removed ones: `all.0[..all.1]` and `all.0[all.1..]`; every byte of a SQLite file and
/// its `-wal`, every row on a server, and the decrypted values of encrypted rows when a key
/// is given) and, on a file, for the pattern itself (as given) in its raw bytes.
fn verify(
    store: &dyn CheckpointStore,
    keys: &Keyring,
    (all, must): (&[String], usize),
    too_short: usize,
    pattern: Option<(&Pattern, &str)>,
    items: Option<&StoreCheck<'_>>,
) -> Result<Verification> {
    let (must, removed) = all.split_at(must);
    // A backend without forensics holds no row to search (the store's rows are searched below).
    let mut leftovers = match store.forensics() {
        Some(f) => f.find_leftovers("", all)?,
        None => vec![],
    };
    if keys.has_key() {
        let sealed = batch::search_sealed(store, keys, "", all)?;
        batch::merge_leftovers(&mut leftovers, "", all, sealed.found);
    }
    // The store's rows: a text a kept item holds is in a row (its own data, or a leftover
    // when it must be gone); items the request still selects, and vectors of deleted items,
    // make the erasure incomplete.
    let mut store_hits = Vec::new();
    if let Some(check) = items {
        // As the search of the bytes above decided (asking again would walk the file again).
        let every_byte = !store.raw_bytes().is_some_and(|r| r.searched_free_space());
        let (held, still) = check.search(all)?;
        for (text, places) in all.iter().zip(held) {
            if places.is_empty() {
                continue;
            }
            match leftovers.iter_mut().find(|l| &l.text == text) {
                Some(l) => {
                    if every_byte && l.in_thread.is_empty() && l.other_threads.is_empty() {
                        // The file's bytes were searched whole: the store's row holds it.
                        l.raw.clear();
                    }
                    l.other_threads.extend(places);
                }
                None => leftovers.push(Leftover {
                    text: text.clone(),
                    in_thread: vec![],
                    other_threads: places,
                    raw: vec![],
                }),
            }
        }
        store_hits = still;
    }
    let mut searched = store.searched();
    if keys.has_key() {
        searched.push("the decrypted values of the encrypted rows".into());
    }
    if items.is_some() {
        searched
            .push("every item of the store, and its vectors' rows for the deleted items".into());
    }
    let mut v = classify(must, removed, &leftovers, searched, too_short);
    if !store_hits.is_empty() {
        v.remaining.extend(store_hits);
        v.clean = false;
    }
    if let Some((p, given)) = pattern {
        // Outside every row when memctl can tell (LangGraph's own structure may hold the
        // pattern's bytes: a pattern `human` is in every message's type tag); else every byte.
        let raw = match store.raw_bytes() {
            Some(r) => r.raw_places_matching(&mut |piece| p.maybe_in(piece))?,
            None => vec![],
        };
        if !raw.is_empty() {
            v.remaining.push(Hit {
                sha256: digest(given),
                rows: vec![],
                raw,
            });
            v.clean = false;
        }
    }
    Ok(v)
}

/// A store item `forget` selected, with what the verification needs of it.
struct ItemPick {
    /// Its namespace as stored.
    prefix: String,
    /// Its key.
    key: String,
    /// Its value's bytes.
    value: Vec<u8>,
    /// `--meta` selected it.
    by_meta: bool,
    /// The texts `--match` matched in it (empty: it did not).
    matched: BTreeSet<String>,
}

/// The store items `--meta` or `--match` select (one pass over the table).
fn select_items(
    store: &dyn ItemStore,
    conditions: &[MetaCondition],
    pattern: Option<&Pattern>,
) -> Result<Vec<ItemPick>> {
    // The table split across cores; the parts' picks in storage order.
    let parts = crate::storage::store::visit_in_parts(
        store,
        || Ok(Vec::new()),
        |picks: &mut Vec<ItemPick>, prefix, key, value| {
            let by_meta = crate::ops::store::meta_selects_item(prefix, value, conditions);
            let matched = match pattern {
                Some(p) if p.maybe_in(value) || value.contains(&b'\\') => {
                    crate::ops::store::pattern_matches(value, p.regex())
                }
                _ => BTreeSet::new(),
            };
            if by_meta || !matched.is_empty() {
                picks.push(ItemPick {
                    prefix: prefix.to_owned(),
                    key: key.to_owned(),
                    value: value.to_vec(),
                    by_meta,
                    matched,
                });
            }
            Ok(())
        },
    )?;
    Ok(parts.into_iter().flatten().collect())
}

/// What the verification checks in the store.
struct StoreCheck<'a> {
    store: &'a dyn ItemStore,
    conditions: &'a [MetaCondition],
    pattern: Option<&'a Pattern>,
    /// The items deleted (namespace as stored, key): none of their vectors may be left.
    gone: &'a [(String, String)],
}

impl StoreCheck<'_> {
    /// For each of `texts`, up to five kept items that hold it (named); and the failures:
    /// items the request still selects, vectors of deleted items.
    fn search(&self, texts: &[String]) -> Result<(Vec<Vec<String>>, Vec<Hit>)> {
        /// What one part of the table found.
        struct Part<'t> {
            held: Vec<Vec<String>>,
            failures: Vec<Hit>,
            /// The texts that have fewer than five places in this part yet: a word every item
            /// holds is decoded five times, not once per item, and no longer searched for
            /// after that.
            open: crate::bytesearch::needles::Needles<'t>,
        }
        let wanted: Vec<&str> = texts.iter().map(String::as_str).collect();
        let (conditions, pattern) = (self.conditions, self.pattern);
        // The table split across cores, each part searched on its own; the parts taken in
        // storage order give the places one search in storage order would have named.
        let parts = crate::storage::store::visit_in_parts(
            self.store,
            || {
                Ok(Part {
                    held: vec![Vec::new(); texts.len()],
                    failures: Vec::new(),
                    open: crate::bytesearch::needles::Needles::new(texts)?,
                })
            },
            |part: &mut Part<'_>, prefix, key, value| {
                let place = || format!("store item '{key}' in namespace '{prefix}'");
                let still_meta = crate::ops::store::meta_selects_item(prefix, value, conditions);
                let unescaped = !value.contains(&b'\\');
                let still_match = pattern.is_some_and(|p| {
                    (p.maybe_in(value) || !unescaped)
                        && !crate::ops::store::pattern_matches(value, p.regex()).is_empty()
                });
                if still_meta || still_match {
                    part.failures.push(Hit {
                        sha256: digest(&format!("{prefix}/{key}")),
                        rows: vec![format!("{} (still selected by the request)", place())],
                        raw: vec![],
                    });
                }
                // Decoded only when it may hold an open text (escaped JSON may hold any).
                let wanted_here = if unescaped {
                    part.open.any_in(value)
                } else {
                    !part.open.done()
                };
                if texts.is_empty() || !wanted_here {
                    return Ok(());
                }
                let hits = crate::ops::store::holds_texts(value, &wanted);
                for (i, h) in hits.into_iter().enumerate() {
                    if h && part.held[i].len() < 5 {
                        part.held[i].push(place());
                        if part.held[i].len() == 5 {
                            part.open.close(i)?;
                        }
                    }
                }
                Ok(())
            },
        )?;
        let mut held = vec![Vec::new(); texts.len()];
        let mut failures = Vec::new();
        for part in parts {
            for (all, found) in held.iter_mut().zip(part.held) {
                all.extend(found);
                all.truncate(5);
            }
            failures.extend(part.failures);
        }
        let vectors = match self.store.vectors() {
            Some(v) => v.vectors_of(self.gone)?,
            None => 0,
        };
        if vectors > 0 {
            failures.push(Hit {
                sha256: digest("store_vectors"),
                rows: vec![format!("{vectors} rows of store_vectors of deleted items")],
                raw: vec![],
            });
        }
        Ok((held, failures))
    }
}
