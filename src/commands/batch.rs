//! The one batch driver of the rewrites (trim, rm, summarize): choosing threads, reading
//! them, planning their edits on worker threads, writing each batch in one transaction, and
//! noticing edits a live app superseded. The edits themselves are pure (`ops::edit`); the
//! report is rendered by `output::rewrite`.

use std::io::Write;
use std::time::Duration;

use anyhow::{bail, Context, Result};

use crate::cli::{GlobalArgs, RewriteArgs, TargetArgs};
use crate::codec::aes::{self, Keyring};
use crate::ops::edit::{is_key_error, prepare, Editable, Filters, Planned, Refusal};
use crate::ops::outcome::{Outcome, Status};
use crate::output::{human, progress};
use crate::read::latest::{load_editable, read_latest_batch};
use crate::storage::{BlobKind, CheckpointStore, Erased, Leftover, ThreadMoved, UpdateItem};
use crate::tokens::Counter;

/// Opens the database for a command that writes (never creating it); with `dry_run`,
/// read-only, so a dry run works on a file or directory memctl may not write and cannot
/// change anything.
pub fn open_for_writing(g: &GlobalArgs, dry_run: bool) -> Result<Box<dyn CheckpointStore>> {
    if !g.ns.is_empty() {
        return Err(crate::exit::Usage(format!(
            "rewrites work on the root namespace; drop --ns '{}'",
            g.ns
        ))
        .into());
    }
    let access = if dry_run {
        crate::storage::Access::ReadOnly
    } else {
        crate::storage::Access::ReadWrite
    };
    super::open(g, access)
}

/// How new rows of a plain thread are written, decided once per run: an app that encrypts
/// (encrypted rows anywhere in the database) would encrypt them through its
/// `EncryptedSerializer`, so memctl does too.
#[derive(Clone)]
pub enum AppSeal {
    /// Every row is plain: new rows of a plain thread are plain.
    Plain,
    /// The database holds encrypted rows and the key opens them: new rows are encrypted.
    Seal(std::sync::Arc<aes::AesKey>),
    /// The database holds encrypted rows and there is no key that opens them: a plain
    /// thread is not written (why, as a key error's line).
    Refuse(String),
}

impl AppSeal {
    /// What the database and `keys` call for.
    pub fn of(store: &dyn CheckpointStore, keys: &Keyring) -> Result<AppSeal> {
        let Some((type_name, bytes)) = store.an_encrypted_value()? else {
            return Ok(AppSeal::Plain);
        };
        if keys.is_unset() {
            return Ok(AppSeal::Refuse(format!(
                "set {} to the app's key (or name another variable with --key-env)",
                keys.var()
            )));
        }
        let what = "an encrypted row of the database";
        // The key must open the app's rows: rows sealed with another key the app could not read.
        let why = match keys.open(&type_name, &bytes, what) {
            Ok(_) => match keys.key(what) {
                Ok(key) => return Ok(AppSeal::Seal(key.clone())),
                Err(e) => e.to_string(),
            },
            // A wrong key, another cipher, a truncated value: memctl cannot encrypt as the
            // app does.
            Err(e) => format!("{e:#}"),
        };
        Ok(AppSeal::Refuse(why))
    }

    /// `ed` as it is edited: a plain thread's new rows are encrypted when the app encrypts
    /// and memctl has its key.
    pub fn apply(&self, mut ed: Editable) -> Editable {
        if let (None, AppSeal::Seal(key)) = (&ed.seal, self) {
            ed.seal = Some(key.clone());
        }
        ed
    }

    /// A key error (nothing is written) when `ed`'s new rows would be plain in a database
    /// whose app encrypts and memctl has no key that opens its rows.
    pub fn check(&self, ed: &Editable) -> Result<()> {
        match (self, &ed.seal) {
            (AppSeal::Refuse(why), None) => Err(aes::KeyError(format!(
                "thread '{}' is plain, but the database holds encrypted rows: the app encrypts (LangGraph's EncryptedSerializer), so memctl writes the thread's new rows encrypted too and needs the key: {why}",
                ed.thread_id
            ))
            .into()),
            _ => Ok(()),
        }
    }

    /// [`AppSeal::check`] for a planned edit that adds rows (or would, in a dry run): an edit
    /// that only scrubs old rows in place (forget) writes no new row.
    fn check_planned(&self, ed: &Editable, planned: &Planned) -> Result<()> {
        let adds = planned.update.is_some()
            || matches!(
                planned.outcome.status,
                Status::WouldRewrite | Status::WouldSummarize
            ) && planned.scrub_at.is_none()
                && planned.purge.is_none();
        match adds {
            true => self.check(ed),
            false => Ok(()),
        }
    }
}

/// Writes a planned edit (appends its update; with `--purge`, scrubs and vacuums too) and
/// returns its report. Inside a batch the append is a savepoint of the batch's transaction.
/// `keys` opens encrypted rows for the purge: each is decrypted, scrubbed and encrypted again
/// with a fresh nonce (rows it leaves unchanged keep their bytes).
pub fn write(store: &dyn CheckpointStore, keys: &Keyring, planned: Planned) -> Result<Outcome> {
    let mut outcome = planned.outcome;
    let thread = outcome.thread_id.clone();
    let Some(scrub) = planned.purge else {
        let Some(upd) = planned.update else {
            return Ok(outcome);
        };
        store.append_update(&thread, "", &upd.rows(), planned.expected_writes, None)?;
        outcome.status = planned.on_write;
        return Ok(outcome);
    };
    let rewrite = |kind: BlobKind, type_name: &str, bytes: &[u8]| -> Result<Option<Vec<u8>>> {
        let (inner, cipher) = aes::split_type(type_name);
        if inner != "msgpack" {
            return Ok(None);
        }
        if cipher.is_none() {
            return scrub.rewrite_blob(kind, bytes);
        }
        let opened = keys.open(type_name, bytes, "it")?;
        match scrub.rewrite_blob(kind, &opened.bytes)? {
            Some(scrubbed) => Ok(Some(keys.key("it")?.encrypt(&scrubbed))),
            None => Ok(None),
        }
    };
    let rows = match (&planned.update, &planned.scrub_at) {
        (Some(upd), _) => store.append_update(
            &thread,
            "",
            &upd.rows(),
            planned.expected_writes,
            Some(&rewrite),
        )?,
        (None, Some(at)) => store.rewrite_thread(&thread, at, planned.expected_writes, &rewrite)?,
        (None, None) => return Ok(outcome),
    };
    if planned.defer_checks {
        // forget: one vacuum and one verification after every thread.
        outcome.status = Status::Purged;
        outcome.notes.push(format!(
            "scrubbed {}",
            human::count(rows as u64, "stored row")
        ));
        return Ok(outcome);
    }
    let (mut leftovers, erased, skipped) = erase_and_search(
        store,
        || match store.forensics() {
            Some(f) => f.find_leftovers(&thread, &planned.verify),
            None => Err(store.lacks("find_leftovers")),
        },
        |found| found.iter().any(|l| !l.raw.is_empty()),
    )
    .map_err(super::partial_if_busy)?;
    outcome.status = Status::Purged;
    // With a key, the decrypted values of encrypted rows are searched too (without one, the
    // thread had no encrypted rows: the scrub would have failed on them).
    let sealed = match keys.has_key() {
        true => Some(search_sealed(store, keys, &thread, &planned.verify)?),
        false => None,
    };
    outcome.notes.push(format!(
        "scrubbed {rows} older checkpoints and writes; {}; searched the file{} for the {} removed strings",
        human::erased(
            erased.pages_zeroed,
            erased.vacuumed,
            erased.pages_zeroed.is_none()
        ),
        if sealed.is_some() { " and the decrypted values of its encrypted rows" } else { "" },
        planned.verify.len()
    ));
    if let Some(why) = skipped {
        outcome.status = Status::PurgeIncomplete;
        outcome.notes.push(format!("{why:#}"));
    }
    if let Some(sealed) = sealed {
        merge_leftovers(&mut leftovers, &thread, &planned.verify, sealed.found);
        if !sealed.unread_here.is_empty() {
            outcome.status = Status::PurgeIncomplete;
            outcome.notes.push(format!(
                "{} does not decrypt {} of this thread, so they could not be searched: {}",
                keys.var(),
                human::count(sealed.unread_here.len() as u64, "encrypted row"),
                sealed.unread_here.join(", ")
            ));
        }
        if sealed.unread_elsewhere > 0 {
            outcome.notes.push(format!(
                "{} of other threads do not decrypt with {} and were not searched",
                human::count(sealed.unread_elsewhere, "encrypted row"),
                keys.var()
            ));
        }
    }
    for left in leftovers {
        let text = human::preview(&left.text, 24);
        if !left.in_thread.is_empty() || !left.raw.is_empty() {
            outcome.status = Status::PurgeIncomplete;
            let places = left.in_thread.iter().chain(&left.raw).cloned();
            outcome.notes.push(format!(
                "removed text {text} is still in {}",
                places.collect::<Vec<_>>().join(", ")
            ));
        } else {
            outcome
                .notes
                .push(elsewhere_note(&text, &left.other_threads));
        }
    }
    Ok(outcome)
}

/// The note for a removed text that other threads' rows hold too (their own conversations,
/// not part of the purge): how many rows the search named, the first of them, and where to
/// see every thread; the search names a few rows per text and stops (a common word would
/// cost a decode per row), so the count is a floor.
fn elsewhere_note(text: &str, places: &[String]) -> String {
    let first = places.first().map_or("", String::as_str);
    let more = match places.len() {
        0 | 1 => String::new(),
        n => format!(" and {} more", n - 1),
    };
    format!(
        "removed text {text} is also in other threads' rows (their own, not part of this purge): {first}{more} (the search names the first few rows); `memctl find` lists every thread that holds it"
    )
}

/// The plain appends of a batch (an update without `--purge`: what [`write`] does with
/// `append_update` alone) written together ([`CheckpointStore::append_updates`]): per item,
/// the outcome of its append, or `None` for an item that is not one (written by [`write`]).
fn append_plain(store: &dyn CheckpointStore, items: &[Step]) -> Vec<Option<Result<usize>>> {
    fn plain(s: &Step) -> Option<(&Planned, &crate::ops::update::Update)> {
        match s {
            Step::Write(p) if p.purge.is_none() => p.update.as_ref().map(|u| (&**p, u)),
            _ => None,
        }
    }
    let updates: Vec<UpdateItem<'_>> = items
        .iter()
        .filter_map(plain)
        .map(|(p, u)| UpdateItem {
            thread_id: &p.outcome.thread_id,
            ns: "",
            rows: u.rows(),
            expected_writes: p.expected_writes,
        })
        .collect();
    let mut results = store.append_updates(&updates).into_iter();
    items
        .iter()
        .map(|s| plain(s).and_then(|_| results.next()))
        .collect()
}

/// Erases the bytes a purge freed without locking a live app out
/// ([`crate::storage::Maintenance::erase_freed`]), then runs `search`. When `outside_rows`
/// says the search still found a removed text in the file's bytes but in no row (an old freed
/// cell the app left, which only a rebuild reaches), falls back to `VACUUM` and searches again.
/// Returns the last search, what was done, and why the fallback `VACUUM` was skipped (a
/// [`crate::storage::VacuumBusy`]: an app has a large file open, or keeps it busy). An error
/// of the first erase (a reader keeping the WAL) is returned as it is. A backend without
/// [`crate::storage::Maintenance`] erases nothing: the search runs on what is there.
pub(super) fn erase_and_search<T>(
    store: &dyn CheckpointStore,
    search: impl Fn() -> Result<T>,
    outside_rows: impl Fn(&T) -> bool,
) -> Result<(T, Erased, Option<anyhow::Error>)> {
    let Some(m) = store.maintenance() else {
        // A backend without maintenance has no freed space of its own to give back.
        return Ok((search()?, Erased::default(), None));
    };
    let mut erased = m.erase_freed()?;
    let found = search()?;
    if erased.vacuumed || !outside_rows(&found) {
        return Ok((found, erased, None));
    }
    match m.vacuum() {
        Ok(()) => {
            erased.vacuumed = true;
            Ok((search()?, erased, None))
        }
        Err(e) if e.is::<crate::storage::VacuumBusy>() => Ok((found, erased, Some(e))),
        Err(e) => Err(e),
    }
}

/// What [`search_sealed`] found.
#[derive(Default)]
pub(super) struct SealedSearch {
    /// Per text, `(thread, place)` of up to five rows holding it.
    pub(super) found: Vec<Vec<(String, String)>>,
    /// Encrypted rows of the purged thread that did not decrypt (named; the search is then
    /// not complete).
    pub(super) unread_here: Vec<String>,
    /// Encrypted rows of other threads that did not decrypt.
    pub(super) unread_elsewhere: u64,
}

/// Where each of `texts` is found in the decrypted values of the database's encrypted rows
/// (ciphertext never matches the plain search storage does), places named as storage names
/// them. Reads every row through the store.
pub(super) fn search_sealed(
    store: &dyn CheckpointStore,
    keys: &Keyring,
    thread: &str,
    texts: &[String],
) -> Result<SealedSearch> {
    let finders: Vec<memchr::memmem::Finder<'_>> = texts
        .iter()
        .map(|t| memchr::memmem::Finder::new(t.as_bytes()))
        .collect();
    let mut out = SealedSearch {
        found: vec![Vec::new(); texts.len()],
        ..SealedSearch::default()
    };
    let mut threads = Vec::new();
    store.for_each_thread(&mut |t| {
        threads.push(t.thread_id);
        Ok(())
    })?;
    let quoted = |t: &str| format!("'{}'", t.replace('\'', "''"));
    let sealed = |type_name: &str| aes::split_type(type_name).1.is_some();
    let mut look = |t: &str, place: String, type_name: &str, bytes: &[u8]| match keys
        .open(type_name, bytes, &place)
    {
        Ok(opened) => {
            for (i, f) in finders.iter().enumerate() {
                if out.found[i].len() < 5 && f.find(&opened.bytes).is_some() {
                    out.found[i].push((t.to_owned(), place.clone()));
                }
            }
        }
        Err(_) if t == thread => out.unread_here.push(place),
        Err(_) => out.unread_elsewhere += 1,
    };
    for t in &threads {
        for ns in store.namespaces(t)? {
            for row in store.checkpoints(t, &ns)? {
                let id = &row.checkpoint_id;
                if sealed(&row.type_name) {
                    let place = format!("checkpoint {id} of thread {}", quoted(t));
                    look(t, place, &row.type_name, &row.checkpoint);
                }
                for w in store.writes(t, &ns, id)? {
                    if sealed(&w.type_name) {
                        let place = format!(
                            "a pending write to '{}' on checkpoint {id} of thread {}",
                            w.channel.replace('\'', "''"),
                            quoted(t)
                        );
                        look(t, place, &w.type_name, &w.value);
                    }
                }
            }
        }
    }
    Ok(out)
}

/// Adds what [`search_sealed`] found of `texts` to storage's leftovers of the purged
/// `thread`.
pub(super) fn merge_leftovers(
    leftovers: &mut Vec<Leftover>,
    thread: &str,
    texts: &[String],
    sealed: Vec<Vec<(String, String)>>,
) {
    for (text, hits) in texts.iter().zip(sealed) {
        if hits.is_empty() {
            continue;
        }
        let i = match leftovers.iter().position(|l| &l.text == text) {
            Some(i) => i,
            None => {
                leftovers.push(Leftover {
                    text: text.clone(),
                    in_thread: vec![],
                    other_threads: vec![],
                    raw: vec![],
                });
                leftovers.len() - 1
            }
        };
        for (t, place) in hits {
            if t == thread {
                leftovers[i].in_thread.push(place);
            } else {
                leftovers[i].other_threads.push(place);
            }
        }
    }
}

/// Which threads a rewrite works on: the command line's target, typed (clap stops at the
/// command modules).
#[derive(Debug, Clone, Default)]
pub struct Target {
    /// One thread (a refusal or failure is then an error), or every thread when `None`.
    pub thread: Option<String>,
    /// With no `thread`: only these of every thread (`forget`: the threads that hold a
    /// match).
    pub among: Option<std::collections::HashSet<String>>,
    /// Only threads idle at least this long (seconds) at `now`.
    pub idle: Option<(i64, jiff::Timestamp)>,
    /// Only threads with at least this many messages.
    pub min_messages: Option<usize>,
    /// Only threads with at least this many tokens by this counter.
    pub min_tokens: Option<(u64, Counter)>,
}

impl Target {
    /// One thread.
    pub fn thread(id: &str) -> Target {
        Target {
            thread: Some(id.to_owned()),
            ..Target::default()
        }
    }

    /// The target `--thread` / `--all` with its filters name, at `--now`.
    pub fn from_args(g: &GlobalArgs, target: &TargetArgs) -> Result<Target> {
        let now = human::now(g.now.as_deref())?;
        let idle = target
            .idle
            .as_deref()
            .map(crate::ops::duration::parse_seconds)
            .transpose()?;
        Ok(Target {
            thread: target.thread.clone(),
            among: None,
            idle: idle.map(|secs| (secs, now)),
            min_messages: target.min_messages,
            min_tokens: None,
        })
    }

    fn filters(&self) -> Filters {
        Filters {
            idle: self.idle,
            min_messages: self.min_messages,
            min_tokens: self.min_tokens,
        }
    }
}

/// How a rewrite runs: the command line's rewrite options, typed.
#[derive(Debug, Clone)]
pub struct Options {
    /// Plan and report only; nothing is written (the database is opened read-only).
    pub dry_run: bool,
    /// Edit threads that are waiting (interrupts, scheduled work, pending writes).
    pub force: bool,
    /// How long to wait after writing before checking for app commits that queued behind
    /// memctl's (see [`mark_superseded`]).
    pub settle: Duration,
    /// Threads edited at once (the edit of a thread may wait on a model endpoint).
    pub workers: usize,
    /// The progress bar's label.
    pub verb: &'static str,
    /// The key of encrypted threads (`--key-env`): what they are read with, and new rows are
    /// written with when the thread or the database holds encrypted rows (see [`AppSeal`]).
    pub keys: Keyring,
}

impl Options {
    /// The options `--dry-run`, `--force`, `--settle` and `--key-env` give, editing on every
    /// core.
    pub fn from_args(g: &GlobalArgs, rw: &RewriteArgs, verb: &'static str) -> Result<Options> {
        Ok(Options {
            dry_run: rw.dry_run,
            force: rw.force,
            settle: settle_time(rw)?,
            workers: crate::par::cores(),
            verb,
            keys: super::keys(g),
        })
    }
}

/// Hands `take` the threads `target` names among every thread that has a root checkpoint,
/// with its latest root checkpoint id, a page at a time in thread-id order
/// ([`crate::read::stream::latest_root_ids_for_run`]: never all of them at once; a write run
/// on a file pages on `store` itself between its transactions). Stops when `take` returns
/// false.
fn for_each_target_page(
    store: &dyn CheckpointStore,
    target: &Target,
    writing: bool,
    take: &mut dyn FnMut(Vec<(String, Option<String>)>) -> Result<bool>,
) -> Result<()> {
    crate::read::stream::latest_root_ids_for_run(store, writing, &mut |page| {
        take(
            page.into_iter()
                .filter(|(t, _)| target.among.as_ref().is_none_or(|among| among.contains(t)))
                .map(|(t, id)| (t, Some(id)))
                .collect(),
        )
    })
}

/// Runs `edit` on the targeted threads and returns what happened to each, in thread order
/// (see [`run_with`]; [`run_and_report`] writes the report as the threads are done instead).
pub fn run(
    store: &dyn CheckpointStore,
    target: &Target,
    opts: &Options,
    edit: &(dyn Fn(&Editable) -> Result<Planned> + Sync),
) -> Result<Vec<Outcome>> {
    let mut all = Vec::new();
    run_with(store, target, opts, edit, &mut |done| {
        all.extend(done);
        Ok(())
    })?;
    Ok(all)
}

/// Runs `edit` on the targeted threads and hands `report` what happened to each, in thread
/// order, a batch at a time once it is final (committed, and checked for a live app's
/// commit `opts.settle` after it: see [`mark_superseded`]). On an error, the batches
/// committed before it are still handed over (when they can be checked) before the error
/// is returned.
/// With one thread, a refusal or failure is an error; in a batch it is that thread's outcome.
/// A thread that moved before its edit was written is `skipped` either way.
/// A key problem (encrypted threads and no key, or a key that does not decrypt them) fails
/// those threads; when nothing else was (or would be) written, it is the run's error, one
/// line, rather than a report of failures (nothing is handed over until a thread is or would
/// be written, so that error comes with no report).
/// Threads are read on this thread, prepared and edited on `opts.workers` threads, and
/// written here, a batch per transaction (each thread a savepoint, so one failure leaves the
/// others written).
pub fn run_with(
    store: &dyn CheckpointStore,
    target: &Target,
    opts: &Options,
    edit: &(dyn Fn(&Editable) -> Result<Planned> + Sync),
    report: &mut dyn FnMut(Vec<Outcome>) -> Result<()>,
) -> Result<()> {
    let keys = &opts.keys;
    let app_seal = AppSeal::of(store, keys)?;
    if let Some(thread) = &target.thread {
        let ed = app_seal.apply(load_editable(store, keys, thread, opts.force)?);
        let planned = edit(&ed)?;
        app_seal.check_planned(&ed, &planned)?;
        // A thread that moved while memctl worked is reported skipped, as in a batch.
        let outcome = match write(store, keys, planned) {
            Err(e) if e.is::<ThreadMoved>() => Outcome::skipped(thread, e.to_string()),
            other => other?,
        };
        let mut outcomes = vec![outcome];
        mark_superseded(store, &mut outcomes, opts.settle)?;
        return report(outcomes);
    }
    let filters = target.filters();
    // Ctrl-C from here on stops after the thread being written (see crate::interrupt; a
    // batch's plain appends are written together: after them).
    let _batch = crate::interrupt::Batch::enter();
    let handed = std::cell::Cell::new(0usize);
    let outer = report;
    let report = &mut |done: Vec<Outcome>| {
        handed.set(handed.get() + done.len());
        outer(done)
    };
    // The threads are listed a page at a time as the run goes: the bar grows with them.
    let pb = progress::bar(2, opts.verb);
    pb.set_length(0);
    // Threads listed so far (those not handed over when Ctrl-C stops the run were not
    // processed).
    let mut listed = 0usize;
    let mut settling = Settling::new(store, opts.settle, &app_seal);
    // The first key problem, and how many threads had one.
    let key_problems = std::sync::Mutex::new((None::<String>, 0usize));
    let failed = |thread: &str, e: anyhow::Error| {
        let why = format!("{e:#}");
        if is_key_error(&e) {
            let mut k = key_problems
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            k.0.get_or_insert_with(|| why.clone());
            k.1 += 1;
        }
        Outcome::failed(thread, why)
    };
    let mut wrote = false; // a batch was begun: end_batches is due (see finish)
    let mut result: Result<()> = Ok(());
    let pages = for_each_target_page(store, target, !opts.dry_run, &mut |ids| {
        listed += ids.len();
        if result.is_err() {
            // Stopped: the rest of the list is only counted (after Ctrl-C, to say how many
            // threads were not processed).
            return Ok(result
                .as_ref()
                .is_err_and(|e| e.is::<crate::interrupt::Interrupted>()));
        }
        pb.inc_length(ids.len() as u64);
        result = crate::par::pipeline_batches(
            &ids,
            opts.workers,
            |batch| {
                // The thread being read, escaped like every string from the database.
                if let Some((thread, _)) = batch.first() {
                    pb.set_message(human::id(thread));
                }
                Ok(read_latest_batch(store, keys, batch))
            },
            |(thread, rows)| {
                // After Ctrl-C no new edit is begun (a summary's request is not sent): the
                // threads left are reported not processed.
                if crate::interrupt::requested() {
                    return None;
                }
                // The bar moves as each thread is edited (for summarize: as each thread's summary
                // request is answered), not a write batch at a time.
                let _tick = Tick(&pb);
                let prepared = rows
                    .map_or_else(|e| Some(Err(e)), |r| prepare(r, keys, opts.force, &filters))
                    .map(|ed| ed.map(|ed| app_seal.apply(ed)));
                prepared.map(|item| match item {
                    Err(e) if e.is::<Refusal>() => {
                        Step::Done(Outcome::skipped(&thread, e.to_string()))
                    }
                    Err(e) => Step::Done(failed(&thread, e)),
                    Ok(ed) => {
                        match edit(&ed).and_then(|p| app_seal.check_planned(&ed, &p).map(|()| p)) {
                            Ok(p) => Step::Write(Box::new(p)),
                            Err(e) if e.is::<Refusal>() => {
                                Step::Done(Outcome::skipped(&thread, e.to_string()))
                            }
                            Err(e) => Step::Done(failed(&thread, e)),
                        }
                    }
                })
            },
            |batch| {
                let writing = !opts.dry_run
                && batch
                    .iter()
                    .any(|p| matches!(p, Some(Step::Write(p)) if p.update.is_some() || p.scrub_at.is_some()));
                if let (true, Some(b)) = (writing, store.batches()) {
                    b.begin_batch()?;
                    wrote = true;
                }
                let items: Vec<Step> = batch.into_iter().flatten().collect();
                // The plain appends go first, together (a few statements on a server instead of
                // a few per thread); each still has its own outcome.
                let appended = match writing && !crate::interrupt::requested() {
                    true => append_plain(store, &items),
                    false => items.iter().map(|_| None).collect(),
                };
                let mut done = Vec::with_capacity(items.len());
                let mut interrupted = false;
                for (item, appended) in items.into_iter().zip(appended) {
                    if appended.is_none() && crate::interrupt::requested() {
                        // The threads written so far are committed below (and reported); the
                        // rest are not processed.
                        interrupted = true;
                        continue;
                    }
                    done.push(match item {
                        Step::Done(o) => o,
                        Step::Write(planned) => {
                            let thread = planned.outcome.thread_id.clone();
                            let written = match appended {
                                Some(r) => r.map(|_| {
                                    let mut o = planned.outcome;
                                    o.status = planned.on_write;
                                    o
                                }),
                                None => write(store, keys, *planned),
                            };
                            match written {
                                Ok(o) => o,
                                Err(e) if e.is::<ThreadMoved>() => {
                                    Outcome::skipped(&thread, e.to_string())
                                }
                                // No thread can be written: one line for the run, not one failed
                                // row per thread (the open transaction ends with the run).
                                Err(e) if crate::storage::NotWritable::is_in(&e) => return Err(e),
                                Err(e) => failed(&thread, e),
                            }
                        }
                    });
                }
                if let (true, Some(b)) = (writing, store.batches()) {
                    b.commit_batch()?;
                }
                settling.push(done);
                // (A batch its workers left unplanned after Ctrl-C has no item to notice it.)
                if interrupted || crate::interrupt::requested() {
                    return Err(crate::interrupt::Interrupted(0).into());
                }
                pb.suspend(|| settling.hand_over_due(report))
            },
        );
        Ok(true)
    });
    // An error listing the threads ends the run as an error of its own would.
    let result = result.and(pages);
    pb.finish_and_clear();
    if let Err(e) = result {
        if let (true, Some(b)) = (wrote, store.batches()) {
            let _ = b.end_batches();
        }
        // What was committed before the error is reported (when it can still be checked).
        let _ = settling.hand_over_all(report);
        if e.is::<crate::interrupt::Interrupted>() {
            return match listed.saturating_sub(handed.get()) {
                // Ctrl-C after the last thread: the run is whole.
                0 => Ok(()),
                n => Err(crate::interrupt::Interrupted(n).into()),
            };
        }
        return Err(e);
    }
    let (first_key_problem, n) = key_problems
        .into_inner()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    if let Some(why) = first_key_problem {
        if !settling.seen_something {
            if let (true, Some(b)) = (wrote, store.batches()) {
                b.end_batches()?;
            }
            let others = match n {
                1 => String::new(),
                n => format!(" ({n} threads stopped for this reason)"),
            };
            bail!("{why}{others}; nothing was written");
        }
    }
    settling.hand_over_all(report)
}

/// The batches of a run that are committed but not yet final: each is checked for a live
/// app's commit `settle` after its own commit (at once when no app had the file open), then
/// handed to the report, in order.
struct Settling<'a> {
    store: &'a dyn CheckpointStore,
    settle: Duration,
    /// Committed batches with the time of their commit, oldest first.
    pending: std::collections::VecDeque<(std::time::Instant, Vec<Outcome>)>,
    /// A thread was (or in a dry run would be) written: until then nothing is handed over,
    /// so that a run that fails on its key reports no partial list. Set from the start when
    /// the database held no encrypted row (no key can fail: nothing is held, however many
    /// threads there are).
    seen_something: bool,
}

impl<'a> Settling<'a> {
    fn new(store: &'a dyn CheckpointStore, settle: Duration, seal: &AppSeal) -> Settling<'a> {
        // No app had the file open when memctl started (WAL mode, no -wal file): nothing can
        // be queued behind memctl's commits, so there is nothing to wait for.
        let settle = match store.sharing().is_none_or(|s| s.might_be_shared()) {
            true => settle,
            false => Duration::ZERO,
        };
        Settling {
            store,
            settle,
            pending: Default::default(),
            seen_something: matches!(seal, AppSeal::Plain),
        }
    }

    /// A batch just committed (or decided, in a dry run).
    fn push(&mut self, done: Vec<Outcome>) {
        let something = |o: &Outcome| {
            o.status.wrote() || matches!(o.status, Status::WouldRewrite | Status::WouldSummarize)
        };
        self.seen_something |= done.iter().any(something);
        self.pending.push_back((std::time::Instant::now(), done));
    }

    /// Hands over the batches whose settle time has passed.
    fn hand_over_due(&mut self, report: &mut dyn FnMut(Vec<Outcome>) -> Result<()>) -> Result<()> {
        while self.seen_something
            && self
                .pending
                .front()
                .is_some_and(|(at, _)| at.elapsed() >= self.settle)
        {
            if let Some((_, mut done)) = self.pending.pop_front() {
                check_superseded(self.store, &mut done)?;
                report(done)?;
            }
        }
        Ok(())
    }

    /// Waits for the last batches' settle time and hands over everything left.
    fn hand_over_all(&mut self, report: &mut dyn FnMut(Vec<Outcome>) -> Result<()>) -> Result<()> {
        while let Some((at, mut done)) = self.pending.pop_front() {
            let written = done
                .iter()
                .any(|o| o.checkpoint_id.is_some() && o.status.wrote());
            if written {
                std::thread::sleep(self.settle.saturating_sub(at.elapsed()));
                check_superseded(self.store, &mut done)?;
            }
            report(done)?;
        }
        Ok(())
    }
}

/// Moves a progress bar by one when dropped: when a thread's edit is done, however it ends.
struct Tick<'a>(&'a indicatif::ProgressBar);

impl Drop for Tick<'_> {
    fn drop(&mut self) {
        self.0.inc(1);
    }
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
    let written = |o: &Outcome| o.checkpoint_id.is_some() && o.status.wrote();
    if !outcomes.iter().any(written) {
        return Ok(());
    }
    // No app had the file open when memctl started (WAL mode, no -wal file): nothing can be
    // queued behind memctl's commit, so there is nothing to wait for.
    if store.sharing().is_none_or(|s| s.might_be_shared()) {
        std::thread::sleep(settle);
    }
    check_superseded(store, outcomes)
}

/// Marks `superseded` every written edit whose thread's latest root checkpoint is no longer
/// memctl's (see [`mark_superseded`]), now.
fn check_superseded(store: &dyn CheckpointStore, outcomes: &mut [Outcome]) -> Result<()> {
    let written = |o: &Outcome| o.checkpoint_id.is_some() && o.status.wrote();
    let threads: Vec<&str> = outcomes
        .iter()
        .filter(|o| written(o))
        .map(|o| o.thread_id.as_str())
        .collect();
    let latest_ids = store.latest_checkpoint_ids(&threads, "")?;
    anyhow::ensure!(
        latest_ids.len() == threads.len(),
        "the database answered for {} of {} threads",
        latest_ids.len(),
        threads.len()
    );
    let mut latest_ids = latest_ids.into_iter();
    for o in outcomes.iter_mut().filter(|o| written(o)) {
        let latest = latest_ids.next().flatten();
        if latest.is_some() && latest != o.checkpoint_id {
            o.status = Status::Superseded;
            o.notes.push(format!(
                "a live app committed checkpoint {} after memctl's edit: LangGraph continues from the app's checkpoint (its turn is kept) and this edit is not in effect; run memctl again",
                latest.unwrap_or_default()
            ));
        }
    }
    Ok(())
}

/// What a reported run did, counted as its outcomes went by: what the exit code and a
/// command's closing line need, without holding the outcomes.
#[derive(Debug, Default)]
pub struct Tally {
    /// Threads reported.
    pub threads: usize,
    /// Threads per status.
    pub statuses: std::collections::HashMap<Status, usize>,
    /// Tokens sent to and received from a model endpoint, over all threads.
    pub endpoint_tokens: (u64, u64),
    /// Why each failed thread failed (`thread 'T': status: note`), for the one-thread error.
    failures: Vec<String>,
}

impl Tally {
    /// Threads with `status`.
    pub fn count(&self, status: Status) -> usize {
        self.statuses.get(&status).copied().unwrap_or(0)
    }

    fn add(&mut self, outcomes: &[Outcome], single: bool) {
        for o in outcomes {
            self.threads += 1;
            *self.statuses.entry(o.status).or_default() += 1;
            if let Some((sent, received)) = o.endpoint_tokens {
                self.endpoint_tokens.0 += sent;
                self.endpoint_tokens.1 += received;
            }
            if single && o.status.is_failure() {
                self.failures.push(format!(
                    "thread '{}': {}: {}",
                    o.thread_id,
                    o.status,
                    o.notes.last().map_or("", String::as_str)
                ));
            }
        }
    }

    fn failed(&self) -> usize {
        self.statuses
            .iter()
            .filter(|(s, _)| s.is_failure())
            .map(|(_, n)| n)
            .sum()
    }
}

/// Runs `edit` on the targeted threads ([`run_with`]) and writes the report to `out` as the
/// threads are done (JSON a batch at a time; the table at the end). Returns what was
/// done and the run's verdict: with one thread asked for, a failure is an error (exit 1, the
/// reason on stderr); in a batch, failed threads and superseded edits make the run a partial
/// success (exit code 3). A superseded edit is exit 3 either way: nothing failed, but the edit
/// is not in effect. An error of the run itself (the outer `Err`) comes after the report of
/// the batches committed before it.
/// The report is ended before the store's batch housekeeping ends (the last WAL checkpoint
/// runs meanwhile: everything is committed).
pub fn run_and_report(
    g: &GlobalArgs,
    store: &dyn CheckpointStore,
    target: &Target,
    opts: &Options,
    edit: &(dyn Fn(&Editable) -> Result<Planned> + Sync),
    out: &mut dyn Write,
) -> Result<(Tally, Result<()>)> {
    let single = target.thread.is_some();
    // The report is written whole even if Ctrl-C comes after the last thread.
    let _batch = (!single).then(crate::interrupt::Batch::enter);
    let format = crate::output::resolve_format(g.format);
    let mut report = crate::output::rewrite::Report::new(format, opts.dry_run);
    let mut tally = Tally::default();
    let ran = run_with(store, target, opts, edit, &mut |done| {
        tally.add(&done, single);
        if g.quiet && !single {
            // The report is hidden: the threads an operator must act on are still named.
            for o in done
                .iter()
                .filter(|o| o.status.is_failure() || o.status == Status::Superseded)
            {
                crate::output::quiet_problem(&o.thread_id, o.status.as_str(), &o.notes.join("; "));
            }
        }
        report.add(done, out)
    });
    // A run that ends in an error still ends the report of what it handed over, if anything.
    let ran = match ran {
        Err(e) if tally.threads == 0 => {
            let _ = store.batches().map(|b| b.end_batches());
            return Err(e);
        }
        ran => ran,
    };
    let ended = report.end(out);
    let housekept = store.batches().map_or(Ok(()), |b| b.end_batches());
    ran?;
    ended?;
    housekept?;
    let verdict = verdict(&tally, single, opts.dry_run, g.quiet);
    Ok((tally, verdict))
}

/// The exit status a run's outcomes call for (see [`run_and_report`]).
fn verdict(tally: &Tally, single: bool, dry_run: bool, quiet: bool) -> Result<()> {
    let failed = tally.failed();
    let superseded = tally.count(Status::Superseded);
    if single && failed > 0 {
        bail!("{}", tally.failures.join("; "));
    }
    if failed + superseded > 0 {
        let n = tally.threads;
        let mut what = Vec::new();
        if failed > 0 {
            what.push(format!("{failed} of {n} threads failed"));
        }
        if superseded > 0 {
            what.push(format!(
                "{superseded} of {n} edits were superseded by a live app"
            ));
        }
        // What was written, said as it is: never "the other threads were written" when none
        // was (threads skipped or unchanged were not).
        let done = tally.count(Status::Rewritten)
            + tally.count(Status::Purged)
            + tally.count(Status::Summarized);
        let wrote_any = done + superseded + tally.count(Status::PurgeIncomplete) > 0 && !dry_run;
        let rest = if dry_run {
            "; dry run: nothing was written".to_owned()
        } else if done > 0 {
            format!("; {} written", human::count(done as u64, "thread"))
        } else if wrote_any {
            String::new()
        } else {
            "; nothing was written".to_owned()
        };
        let see = if quiet {
            "listed above"
        } else {
            "see the notes"
        };
        let line = format!("{} ({see}){rest}", what.join(" and "));
        // Failures and nothing written: not a partial success but an error (exit 1).
        if !wrote_any && !dry_run {
            bail!("{line}");
        }
        return Err(crate::exit::Partial(line).into());
    }
    Ok(())
}
