//! `memctl copy`: a thread (or a fork of it) to a new thread id, here or in another database.

use std::io::Write;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use anyhow::{anyhow, bail, Context, Result};

use crate::cli::{CopyArgs, GlobalArgs, MoveChanges};
use crate::codec::aes::{self, AesKey, KeyIssue, Keyring};
use crate::exit::{Partial, Usage};
use crate::model::checkpoint::{StoredMessages, MESSAGES};
use crate::output::copy::{write_copy, CopyReport, LeftOut, SaverSetup, SharedVersion};
use crate::output::human;
use crate::storage::{
    self, postgres, Access, CheckpointStore, Location, SqliteStore, ThreadRow, ThreadRows,
};

/// True when `to` names a SQLite file that does not exist yet (a target memctl makes); a
/// malformed connection string is a usage error.
pub(super) fn is_new_file(to: &Path) -> Result<bool> {
    let location = storage::locate_as(to, "--to").map_err(|e| Usage(e.to_string()))?;
    Ok(location == Location::File && !to.exists())
}

/// The database a copy or migration writes into, as [`open_target`] opens it.
pub(super) struct Target {
    /// The database (`None`: a new file a dry run does not make).
    pub store: Option<Box<dyn CheckpointStore>>,
    /// `--to` is a new SQLite file.
    pub new_file: bool,
    /// A PostgreSQL target's saver tables: what they need before the first thread goes in,
    /// and whether it was done.
    pub setup: Option<Arc<postgres::Setup>>,
}

impl Target {
    /// What the report says of the saver's tables: the set-up done (with `dry_run`, the one
    /// that would be done when `writes`: a thread would go in). `None` when nothing.
    pub fn saver_setup(&self, dry_run: bool, writes: bool) -> Option<SaverSetup> {
        let s = self.setup.as_deref()?;
        let shown = match dry_run {
            true => s.needed() && writes,
            false => s.done(),
        };
        shown.then(|| SaverSetup {
            created_tables: s.plan.creates_tables(),
            schema: s.plan.schema.clone(),
            from_level: s.plan.from_level(),
            to_level: postgres::KNOWN_MIGRATION,
        })
    }
}

/// The database a copy or migration writes into (`--to`): opened when it exists (a Postgres
/// URL, an existing file), a new SQLite file made when `create` (`None`, nothing made, when
/// not: a dry run). A PostgreSQL database whose saver tables are missing or at a lower level
/// gets them as `PostgresSaver.setup()` makes them before its first thread is written
/// ([`postgres::PostgresStore::open_target`]; nothing, with `access` read-only).
pub(super) fn open_target(
    to: &Path,
    access: Access,
    create: bool,
    busy: Duration,
    keys: &Keyring,
) -> Result<Target> {
    if is_new_file(to)? {
        let made: Option<Box<dyn CheckpointStore>> = match create {
            true => Some(Box::new(SqliteStore::create_new(to, busy)?)),
            false => None,
        };
        return Ok(Target {
            store: made,
            new_file: true,
            setup: None,
        });
    }
    if let Ok(Location::Postgres(url)) = storage::locate_as(to, "--to") {
        let (store, setup) =
            postgres::PostgresStore::open_target(url, None, access, busy, keys.clone())?;
        return Ok(Target {
            store: Some(Box::new(store)),
            new_file: false,
            setup: Some(setup),
        });
    }
    Ok(Target {
        store: Some(storage::open(to, None, access, busy, keys)?),
        new_file: false,
        setup: None,
    })
}

/// A run's error `e`, with what was done to the target's saver tables before it when
/// something was (the report that says it is not written after an error).
pub(super) fn setup_noted(e: anyhow::Error, target: Option<&Target>) -> anyhow::Error {
    match target.and_then(|t| t.saver_setup(false, false)) {
        None => e,
        Some(s) => {
            let done = match s.from_level {
                Some(from) if !s.created_tables => {
                    format!("brought from migration level {from} to {}", s.to_level)
                }
                _ => format!("created (migration level {})", s.to_level),
            };
            e.context(format!(
                "PostgresSaver's tables in schema '{}' were {done} before this, as PostgresSaver.setup() does",
                s.schema
            ))
        }
    }
}

/// `--schema` names the schema of `--db`: with a SQLite `--db` and a PostgreSQL `--to`, a
/// usage error that says where the target's schema goes (its connection string).
pub(super) fn check_schema_flag(g: &GlobalArgs, to: &Path) -> Result<()> {
    let (Some(schema), Some(db)) = (g.schema.as_deref(), g.db.as_deref()) else {
        return Ok(());
    };
    let db_is_file = matches!(storage::locate(db), Ok(Location::File));
    let to_is_pg = matches!(storage::locate_as(to, "--to"), Ok(Location::Postgres(_)));
    if db_is_file && to_is_pg {
        return Err(Usage(format!(
            "--schema '{schema}' (or MEMCTL_SCHEMA) names the schema of --db, and '{}' is a SQLite file; the schema of --to goes in its connection string: ?schema={schema} in a URL (schema={schema} in the keyword form)",
            storage::shown_path(db)
        ))
        .into());
    }
    Ok(())
}

/// Runs `copy`.
pub fn run(g: &GlobalArgs, args: &CopyArgs, out: &mut dyn Write) -> Result<()> {
    if args.all {
        return run_all(g, args, out);
    }
    let Some(thread) = &args.thread else {
        return Err(Usage("copy needs --thread ID (or --all with --to)".into()).into());
    };
    let to_thread = match (&args.to_thread, &args.to) {
        (Some(t), _) => t.clone(),
        (None, Some(_)) => thread.clone(),
        (None, None) => return Err(Usage(
            "copy needs --to-thread NEW (a new id in this database) or --to DB (another database)"
                .into(),
        )
        .into()),
    };
    let source_path =
        g.db.as_deref()
            .ok_or_else(|| anyhow!("no database given: pass --db PATH or set MEMCTL_DB"))?;
    if let Some(to) = &args.to {
        check_schema_flag(g, to)?;
    }
    let same_db = match &args.to {
        None => true,
        Some(to) => same_database(source_path, to)?,
    };
    if same_db && to_thread == *thread {
        return Err(Usage(format!(
            "the copy of thread '{thread}' would be the thread itself (same database, same id): give --to-thread or --to"
        ))
        .into());
    }
    let access = match same_db && !args.dry_run {
        true => Access::ReadWrite,
        false => Access::ReadOnly,
    };
    let changes = Changes::new(g, &args.changes)?;
    let source = super::open(g, access)?;
    let mut rows = source.read_thread(thread)?;
    if rows.checkpoints.is_empty() {
        return Err(crate::read::unknown_thread(&*source, thread));
    }
    // --at names a root checkpoint by its id or a prefix of it, as show --checkpoint does.
    let at = args
        .at
        .as_deref()
        .map(|given| crate::read::resolve_checkpoint_id(&*source, thread, "", given))
        .transpose()?;
    // A fork takes the rows up to --at: those are what must be readable (a thread damaged
    // after that checkpoint forks whole up to it).
    if let Some(at) = &at {
        rows = crate::ops::copy::cut(rows, at)?;
    }
    changes.check_thread(thread, &rows)?;
    let changed = changes.apply(&*source, thread, &mut rows)?;
    let mut plan = crate::ops::copy::plan(rows, thread, &to_thread, at.as_deref())?;
    changed.add_to(&mut plan.counts);
    let busy = Duration::from_millis(g.busy_timeout);
    let mut created = false;
    let mut opened: Option<Target> = None;
    // A Postgres database seals what it writes with its store's key: a copy into the source
    // database under a new key writes through a second connection that has that key.
    let same_pg_recrypted = same_db
        && changes.recrypts()
        && matches!(storage::locate(source_path), Ok(Location::Postgres(_)));
    let access = match args.dry_run {
        true => Access::ReadOnly,
        false => Access::ReadWrite,
    };
    let target: Option<Box<dyn CheckpointStore>> = match &args.to {
        _ if same_pg_recrypted => Some(storage::open(
            source_path,
            g.schema.as_deref(),
            access,
            busy,
            &changes.target_keys(),
        )?),
        _ if same_db => None,
        None => None,
        Some(to) => {
            let mut t = open_target(to, access, !args.dry_run, busy, &changes.target_keys())?;
            created = t.new_file;
            let store = t.store.take();
            opened = Some(t);
            store
        }
    };
    let target_store: Option<&dyn CheckpointStore> = match (&target, same_db) {
        (Some(t), _) => Some(&**t),
        (None, true) => Some(&*source),
        (None, false) => None,
    };
    let exists = match target_store {
        Some(t) => t.thread_exists(&to_thread)?,
        None => false,
    };
    if exists && !args.replace {
        return Err(storage::TargetExists(to_thread).into());
    }
    if let (true, Some(t)) = (args.dry_run, target_store) {
        // What the real run's writer would refuse, refused here too.
        can_hold_all(t, &to_thread, &plan.rows)?;
    }
    let written = match (args.dry_run, target_store) {
        (true, _) | (false, None) => storage::WrittenThread {
            replaced: exists,
            shared_versions: vec![],
        },
        (false, Some(t)) => {
            let written = t.write_thread(&to_thread, &plan.rows, args.replace);
            match (written, created, &args.to) {
                (Ok(w), _, _) => w,
                (Err(e), true, Some(to)) => {
                    drop(target);
                    remove_created(to);
                    return Err(e);
                }
                (Err(e), _, _) => return Err(setup_noted(e, opened.as_ref())),
            }
        }
    };
    let report = CopyReport {
        thread: thread.clone(),
        to_thread,
        to: match same_db {
            true => None,
            false => args.to.as_deref().map(storage::shown_path),
        },
        at,
        dry_run: args.dry_run,
        created,
        replaced: written.replaced,
        counts: plan.counts,
        shared_versions: SharedVersion::list(written.shared_versions),
        saver_setup: opened.and_then(|t| t.saver_setup(args.dry_run, true)),
    };
    write_copy(out, crate::output::resolve_format(g.format), &report)
}

/// `copy --all --to DB`: every thread `--idle` / `--meta` select, each under its own id, one
/// transaction per thread (an interrupted run leaves whole threads), a report per thread and
/// the totals. Target threads that exist are refused before anything is written, unless
/// `--replace`.
fn run_all(g: &GlobalArgs, args: &CopyArgs, out: &mut dyn Write) -> Result<()> {
    let Some(to) = &args.to else {
        return Err(Usage("copy --all needs --to DB (another database)".into()).into());
    };
    let source_path =
        g.db.as_deref()
            .ok_or_else(|| anyhow!("no database given: pass --db PATH or set MEMCTL_DB"))?;
    check_schema_flag(g, to)?;
    if same_database(source_path, to)? {
        return Err(Usage(
            "copy --all copies into another database: --to names --db itself".into(),
        )
        .into());
    }
    let conditions = args
        .meta
        .iter()
        .map(|m| crate::ops::find::MetaCondition::parse(m))
        .collect::<Result<Vec<_>>>()?;
    let idle = args
        .idle
        .as_deref()
        .map(crate::ops::duration::parse_seconds)
        .transpose()?;
    let now = crate::output::human::now(g.now.as_deref())?;
    let keys = super::keys(g);
    let changes = Changes::new(g, &args.changes)?;
    let source = super::open(g, Access::ReadOnly)?;
    let mut all = Vec::new();
    source.for_each_thread(&mut |t| {
        all.push(t);
        Ok(())
    })?;
    let idle_enough: Vec<&str> = all
        .iter()
        .filter(|t| match idle {
            None => true,
            Some(limit) => crate::ops::activity::idle_seconds(&t.latest_id, None, now)
                .is_some_and(|a| a >= limit),
        })
        .map(|t| t.thread_id.as_str())
        .collect();
    let readers = crate::read::Readers::one(&*source);
    let mut pairs = Vec::new();
    // --meta's selection a batch of threads at a time (a few queries per batch); the first
    // thread it cannot check stops the copy.
    for chunk in idle_enough.chunks(crate::read::stream::BATCH) {
        let selects = match conditions.is_empty() {
            true => chunk.iter().map(|_| Ok(true)).collect(),
            false => crate::read::meta_select(&readers, &keys, chunk, &conditions)?,
        };
        for (thread, selected) in chunk.iter().zip(selects) {
            if selected? {
                pairs.push((thread.to_string(), thread.to_string()));
            }
        }
    }
    let busy = Duration::from_millis(g.busy_timeout);
    let access = match args.dry_run {
        true => Access::ReadOnly,
        false => Access::ReadWrite,
    };
    let create = !args.dry_run && !pairs.is_empty();
    let mut opened = open_target(to, access, create, busy, &changes.target_keys())?;
    let (target, new_file) = (opened.store.take(), opened.new_file);
    let shown = Some(storage::shown_path(to));
    let copied = copy_threads(
        &*source,
        target.as_deref(),
        &pairs,
        &changes,
        args.replace,
        args.dry_run,
        shown,
    );
    let Copied {
        mut reports,
        left_out,
    } = match copied {
        Ok(r) => r,
        Err(e) => {
            // A file this run created and wrote no thread into goes again.
            let empty = target.as_deref().map(|t| {
                pairs
                    .iter()
                    .all(|(_, to)| !t.thread_exists(to).unwrap_or(true))
            });
            drop(target);
            if new_file && empty != Some(false) {
                remove_created(to);
            }
            return Err(setup_noted(e, Some(&opened)));
        }
    };
    // A file this run created for threads that were all left out goes again.
    let created = new_file && !reports.is_empty();
    if new_file && !created {
        drop(target);
        remove_created(to);
    }
    reports.iter_mut().for_each(|r| r.created = created);
    let partial = left_out_partial(&left_out, reports.len());
    let mut report = crate::output::copy::CopiesReport::new(reports, left_out);
    report.saver_setup = opened.saver_setup(args.dry_run, !report.threads.is_empty());
    crate::output::copy::write_copies(out, crate::output::resolve_format(g.format), &report)?;
    partial.map_or(Ok(()), |p| Err(p.into()))
}

/// The id of every thread of `store`, in its listing order.
pub fn thread_ids(store: &dyn CheckpointStore) -> Result<Vec<String>> {
    let mut all = Vec::new();
    store.for_each_thread(&mut |t| {
        all.push(t.thread_id);
        Ok(())
    })?;
    Ok(all)
}

/// True when `to` names the database `db` names: the same file, or the same connection
/// string. (Two spellings of one server database are two databases here; a copy between them
/// still never loses a row: the target is written whole in one transaction.)
pub fn same_database(db: &Path, to: &Path) -> Result<bool> {
    let a = storage::locate(db).map_err(|e| Usage(e.to_string()))?;
    let b = storage::locate_as(to, "--to").map_err(|e| Usage(e.to_string()))?;
    Ok(match (a, b) {
        (Location::Postgres(x), Location::Postgres(y)) => x == y,
        (Location::File, Location::File) => same_file(db, to),
        _ => false,
    })
}

/// True when two paths name one file: the same path once links are resolved, or (on Unix)
/// the same device and inode (a hard link to it).
fn same_file(a: &Path, b: &Path) -> bool {
    if let (Ok(x), Ok(y)) = (a.canonicalize(), b.canonicalize()) {
        if x == y {
            return true;
        }
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        if let (Ok(x), Ok(y)) = (std::fs::metadata(a), std::fs::metadata(b)) {
            return x.dev() == y.dev() && x.ino() == y.ino();
        }
    }
    false
}

/// What [`copy_threads`] did: a report per thread copied, and the threads it left out.
#[derive(Debug, Default)]
pub struct Copied {
    /// One report per thread copied (or that would be, in a dry run), in order.
    pub reports: Vec<CopyReport>,
    /// The threads left out, nothing of them written, and why.
    pub left_out: Vec<LeftOut>,
}

/// The thread `thread` left out of a move because of `e`, when `e` concerns that thread only:
/// a row of it memctl cannot decode ([`storage::Unreadable`]) or one the target cannot hold
/// ([`storage::Refused`]). `None` for any other error, which stops the run.
pub fn left_out(thread: &str, e: &anyhow::Error) -> Option<LeftOut> {
    let (reason, why) = storage::left_out_reason(e)?;
    Some(LeftOut {
        thread: thread.to_owned(),
        reason: reason.to_owned(),
        why,
    })
}

/// The run's outcome when threads were left out (exit 3): which, why, and what the user can
/// do about it; `None` when none was. `moved`: the threads the run did move (or would).
pub fn left_out_partial(left: &[LeftOut], moved: usize) -> Option<Partial> {
    if left.is_empty() {
        return None;
    }
    let them = |n: u64| if n == 1 { "it" } else { "them" };
    let names: Vec<String> = left
        .iter()
        .take(3)
        .map(|l| format!("'{}'", l.thread))
        .collect();
    let more = match left.len() {
        n if n > 3 => format!(" and {} more", n - 3),
        _ => String::new(),
    };
    let unreadable = left.iter().filter(|l| l.reason == "unreadable").count() as u64;
    let refused = left.len() as u64 - unreadable;
    let why = crate::output::copy::left_out_reasons(
        unreadable,
        refused,
        |it| {
            format!("LangGraph could not read {it} either (a row that does not decode: restore {it} from a backup, or copy what is readable with `copy --thread ID --at CHECKPOINT`, see `history`)")
        },
        |it| {
            format!("the target cannot hold {it} (why is in the report: change {it} in the source, or move {it} into a SQLite file, which holds {it})")
        },
    );
    Some(Partial(format!(
        "{} left out, nothing of {} written ({}{more}): {}; {}",
        human::count(left.len() as u64, "thread"),
        them(left.len() as u64),
        names.join(", "),
        why,
        match moved {
            0 => "no other thread to move",
            _ => "the others were moved",
        }
    )))
}

/// Asks `target` whether it can hold every row of `rows` as thread `to` (what a dry run
/// checks in place of the write).
pub fn can_hold_all(target: &dyn CheckpointStore, to: &str, rows: &ThreadRows) -> Result<()> {
    let checkpoints = rows.checkpoints.iter().map(storage::RowRef::Checkpoint);
    let writes = rows.writes.iter().map(storage::RowRef::Write);
    checkpoints
        .chain(writes)
        .try_for_each(|r| target.can_hold(to, r))
}

/// Removes a SQLite file a failed copy created (and its `-wal` / `-shm`): nothing written.
fn remove_created(path: &Path) {
    for suffix in ["", "-wal", "-shm", "-journal"] {
        let mut p = path.as_os_str().to_owned();
        p.push(suffix);
        let _ = std::fs::remove_file(Path::new(&p));
    }
}

/// Copies threads from `source` into `target` (`pairs`: the source id and the id it gets),
/// one transaction per thread, as `copy --to` copies one. Without `replace`, a target id that
/// exists is a [`storage::TargetExists`] error before anything is written; a source thread
/// with no checkpoint is an error before anything is written too. `to` is the target as
/// reports show it. With `dry_run` (and a target that may not exist yet: `None`) nothing is
/// written. `changes` are made to each thread on the way; when they change the encryption,
/// the key is checked on the source before the first thread is written.
pub fn copy_threads(
    source: &dyn CheckpointStore,
    target: Option<&dyn CheckpointStore>,
    pairs: &[(String, String)],
    changes: &Changes,
    replace: bool,
    dry_run: bool,
    to: Option<String>,
) -> Result<Copied> {
    let mut exists = Vec::with_capacity(pairs.len());
    for (from, to_thread) in pairs {
        if !source.thread_exists(from)? {
            return Err(anyhow!(
                "no thread '{from}' in the source database; nothing written"
            ));
        }
        let there = match target {
            Some(t) => t.thread_exists(to_thread)?,
            None => false,
        };
        if there && !replace {
            return Err(storage::TargetExists(to_thread.clone()).into());
        }
        exists.push(there);
    }
    let froms: Vec<String> = pairs.iter().map(|(from, _)| from.clone()).collect();
    changes.check_keys(source, &froms)?;
    let mut copied = Copied::default();
    for ((from, to_thread), there) in pairs.iter().zip(exists) {
        let done = || {
            format!(
                "thread '{from}': nothing of it written ({} of {} threads copied before it, each whole)",
                copied.reports.len(),
                pairs.len()
            )
        };
        let ran = match changes.streams() {
            true => stream_thread(source, target, from, to_thread, changes, replace, dry_run),
            false => whole_thread(source, target, from, to_thread, changes, replace, dry_run),
        };
        let (counts, written) = match ran {
            Ok(r) => r,
            Err(e) => match left_out(from, &e) {
                Some(l) => {
                    copied.left_out.push(l);
                    continue;
                }
                None => return Err(e.context(done())),
            },
        };
        let written = match target.filter(|_| !dry_run) {
            Some(_) => written,
            None => storage::WrittenThread {
                replaced: there,
                shared_versions: vec![],
            },
        };
        copied.reports.push(CopyReport {
            thread: from.clone(),
            to_thread: to_thread.clone(),
            to: to.clone(),
            at: None,
            dry_run,
            created: false,
            replaced: written.replaced,
            counts,
            shared_versions: SharedVersion::list(written.shared_versions),
            saver_setup: None,
        });
    }
    Ok(copied)
}

/// Copies thread `from` of `source` into `target` as `to` a row at a time (see
/// [`CheckpointStore::visit_thread`] and [`CheckpointStore::write_thread_from`]): one
/// transaction, as [`whole_thread`] writes it, without holding the whole thread. `changes`
/// must stream ([`Changes::streams`]). Each row is checked as it comes: one that does not
/// decode ([`storage::Unreadable`]) or that the target cannot hold ([`storage::Refused`])
/// rolls the thread back, nothing of it written. With `dry_run` (or no target: a new file a
/// dry run does not make) the rows are read, checked (the target asked whether it could hold
/// them, [`CheckpointStore::can_hold`]) and counted, nothing written.
pub fn stream_thread(
    source: &dyn CheckpointStore,
    target: Option<&dyn CheckpointStore>,
    from: &str,
    to: &str,
    changes: &Changes,
    replace: bool,
    dry_run: bool,
) -> Result<(crate::ops::copy::CopyCounts, storage::WrittenThread)> {
    let mut planner = crate::ops::copy::Planner::new(from, to);
    let mut changed = Changed::default();
    let asked = target.filter(|_| dry_run);
    let written = {
        let mut feed = |sink: &mut dyn FnMut(storage::RowRef<'_>) -> Result<()>| {
            source.visit_thread(from, &mut |mut row| {
                changes.check_row(from, row.as_ref())?;
                changes.apply_row(from, &mut row, &mut changed)?;
                planner.row(&mut row);
                if let Some(t) = asked {
                    t.can_hold(to, row.as_ref())?;
                }
                sink(row.as_ref())
            })?;
            // A thread without a checkpoint: an error, so that nothing is written.
            planner.counts().map(drop)
        };
        match target.filter(|_| !dry_run) {
            Some(t) => t.write_thread_from(to, replace, &mut feed)?,
            None => {
                feed(&mut |_| Ok(()))?;
                storage::WrittenThread::default()
            }
        }
    };
    let mut counts = planner.counts()?;
    changed.add_to(&mut counts);
    Ok((counts, written))
}

/// [`stream_thread`] with the whole thread read first (what `--materialize` needs: it reads
/// other checkpoints of the source while it changes one).
pub fn whole_thread(
    source: &dyn CheckpointStore,
    target: Option<&dyn CheckpointStore>,
    from: &str,
    to: &str,
    changes: &Changes,
    replace: bool,
    dry_run: bool,
) -> Result<(crate::ops::copy::CopyCounts, storage::WrittenThread)> {
    let plan = planned_whole(source, from, to, changes)?;
    let written = match (target, dry_run) {
        (Some(t), false) => t.write_thread(to, &plan.rows, replace)?,
        (Some(t), true) => {
            can_hold_all(t, to, &plan.rows)?;
            storage::WrittenThread::default()
        }
        (None, _) => storage::WrittenThread::default(),
    };
    Ok((plan.counts, written))
}

/// Thread `from` of `source` read whole, checked readable ([`Changes::check_thread`]),
/// `changes` applied, planned as thread `to`: the rows a whole-thread copy writes and their
/// counts.
pub fn planned_whole(
    source: &dyn CheckpointStore,
    from: &str,
    to: &str,
    changes: &Changes,
) -> Result<crate::ops::copy::CopyPlan> {
    let mut rows = source.read_thread(from)?;
    changes.check_thread(from, &rows)?;
    let changed = changes.apply(source, from, &mut rows)?;
    let mut plan = crate::ops::copy::plan(rows, from, to, None)?;
    changed.add_to(&mut plan.counts);
    Ok(plan)
}

/// What a copy changes in the values on the way (`--materialize`, `--key-env` /
/// `--new-key-env`), shared by `copy`, `import` and `migrate`. Applied to a thread's rows as
/// read from the source, before anything of it is written.
pub struct Changes {
    /// Write DeltaChannel values in full (`--materialize`).
    materialize: bool,
    /// The key the source's encrypted values are read with (`--key-env`, default
    /// `LANGGRAPH_AES_KEY`).
    read: Keyring,
    /// What becomes of encrypted and plain values.
    recrypt: Recrypt,
}

/// What becomes of the values' encryption.
enum Recrypt {
    /// Copied as stored.
    AsStored,
    /// Encrypted values decrypted (`--key-env` without `--new-key-env`).
    Decrypt,
    /// Every value under this key (`--new-key-env`).
    Encrypt(Keyring),
}

/// What [`Changes::apply`] did to one thread.
#[derive(Debug, Default)]
pub struct Changed {
    /// Checkpoints whose DeltaChannel values were written in full.
    pub materialized: u64,
    /// Values decrypted.
    pub decrypted: u64,
    /// Values under the new key.
    pub encrypted: u64,
    /// An encrypted value was opened (so the key was checked).
    pub opened_sealed: bool,
}

impl Changed {
    /// Adds the counts to a copy's counts.
    pub fn add_to(&self, counts: &mut crate::ops::copy::CopyCounts) {
        counts.materialized += self.materialized;
        counts.values_decrypted += self.decrypted;
        counts.values_encrypted += self.encrypted;
    }
}

impl Changes {
    /// The changes the flags ask for: `--new-key-env` encrypts, `--key-env` alone decrypts,
    /// neither keeps the values as stored. A key variable that is unset or holds no valid
    /// key is an error here, before anything is read.
    pub fn new(g: &GlobalArgs, asked: &MoveChanges) -> Result<Changes> {
        let (materialize, new_key_env) = (asked.materialize, asked.new_key_env.as_deref());
        let read = super::keys(g);
        let loaded = |var: &str, flag: &str| -> Result<Keyring> {
            match AesKey::from_env(var) {
                Ok(_) => Ok(Keyring::from_env(var)),
                Err(KeyIssue::NotSet) => Err(anyhow!("{var} (given with --{flag}) is not set")),
                Err(other) => Err(anyhow!(aes::describe_issue(var, &other, ""))),
            }
        };
        let recrypt = match (new_key_env, g.key_env.as_deref()) {
            (Some(var), _) => Recrypt::Encrypt(loaded(var, "new-key-env")?),
            (None, Some(var)) => {
                loaded(var, "key-env")?;
                Recrypt::Decrypt
            }
            (None, None) => Recrypt::AsStored,
        };
        Ok(Changes {
            materialize,
            read,
            recrypt,
        })
    }

    /// Checks that a row of thread `thread`, as read from the source, decodes as LangGraph
    /// loads it (encrypted values opened with the source's key when it is given): an
    /// [`storage::Unreadable`] error when it does not (see [`crate::read::readable`]).
    pub fn check_row(&self, thread: &str, row: storage::RowRef<'_>) -> Result<()> {
        use crate::read::readable;
        match readable::check_row(&self.read, thread, row) {
            Err(e) if e.is::<aes::KeyError>() => match &self.recrypt {
                // Copied as stored (no key needed): a value the key given does not open is
                // left to its AES tag, as without a key.
                Recrypt::AsStored => Ok(()),
                // Already under the new key, it stays as it is: checked with that key.
                Recrypt::Encrypt(new) => readable::check_row(new, thread, row).map_err(|again| {
                    match again.is::<aes::KeyError>() {
                        true => e,
                        false => again,
                    }
                }),
                Recrypt::Decrypt => Err(e),
            },
            other => other,
        }
    }

    /// [`Changes::check_row`] of every row of thread `thread`.
    pub fn check_thread(&self, thread: &str, rows: &ThreadRows) -> Result<()> {
        let checkpoints = rows.checkpoints.iter().map(storage::RowRef::Checkpoint);
        let writes = rows.writes.iter().map(storage::RowRef::Write);
        checkpoints
            .chain(writes)
            .try_for_each(|r| self.check_row(thread, r))
    }

    /// True when the changes can be made a row at a time, as a copy streams a thread
    /// ([`Changes::apply_row`]): all but `--materialize`, which reads other checkpoints of the
    /// source to rebuild a checkpoint's values.
    pub fn streams(&self) -> bool {
        !self.materialize
    }

    /// True when the values' encryption changes (the key is then checked before anything is
    /// written, see [`Changes::check_keys`]).
    pub fn recrypts(&self) -> bool {
        !matches!(self.recrypt, Recrypt::AsStored)
    }

    /// True when the copy is put under a new key (`--new-key-env`).
    pub fn encrypts(&self) -> bool {
        matches!(self.recrypt, Recrypt::Encrypt(_))
    }

    /// The key a target database seals with what it is given to write (a Postgres target
    /// splits each checkpoint into values and encrypts each as `EncryptedSerializer` does).
    pub fn target_keys(&self) -> Keyring {
        match &self.recrypt {
            Recrypt::Encrypt(keys) => keys.clone(),
            _ => self.read.clone(),
        }
    }

    /// The rows of thread `thread` as the copy writes them (the thread id not yet changed).
    pub fn apply(
        &self,
        source: &dyn CheckpointStore,
        thread: &str,
        rows: &mut ThreadRows,
    ) -> Result<Changed> {
        let mut changed = Changed::default();
        if self.materialize {
            self.materialize(source, thread, rows, &mut changed)?;
        }
        if !self.recrypts() {
            return Ok(changed);
        }
        for c in &mut rows.checkpoints {
            self.recrypt_checkpoint(thread, c, &mut changed)?;
        }
        for w in &mut rows.writes {
            self.recrypt_write(thread, w, &mut changed)?;
        }
        Ok(changed)
    }

    /// [`Changes::apply`] to one row of thread `thread`, for a copy that streams it (counted
    /// in `changed`): the changes that [`Changes::streams`] allows, an error for the others.
    pub fn apply_row(
        &self,
        thread: &str,
        row: &mut ThreadRow,
        changed: &mut Changed,
    ) -> Result<()> {
        if self.materialize {
            bail!("--materialize reads the whole thread: it cannot be applied a row at a time");
        }
        self.recrypt_row(thread, row, changed)
    }

    /// One row's value decrypted or put under the new key, as the flags ask.
    fn recrypt_row(&self, thread: &str, row: &mut ThreadRow, changed: &mut Changed) -> Result<()> {
        if !self.recrypts() {
            return Ok(());
        }
        match row {
            ThreadRow::Checkpoint(c) => self.recrypt_checkpoint(thread, c, changed),
            ThreadRow::Write(w) => self.recrypt_write(thread, w, changed),
        }
    }

    /// A checkpoint's value decrypted or put under the new key.
    fn recrypt_checkpoint(
        &self,
        thread: &str,
        c: &mut storage::CheckpointRow,
        changed: &mut Changed,
    ) -> Result<()> {
        let what = format!("checkpoint {} of thread '{thread}'", c.checkpoint_id);
        self.recrypt_value(&mut c.type_name, &mut c.checkpoint, &what, changed)
    }

    /// A pending write's value decrypted or put under the new key.
    fn recrypt_write(
        &self,
        thread: &str,
        w: &mut storage::ThreadWrite,
        changed: &mut Changed,
    ) -> Result<()> {
        let what = format!(
            "the '{}' write of task {} on checkpoint {} of thread '{thread}'",
            w.row.channel, w.row.task_id, w.checkpoint_id
        );
        self.recrypt_value(&mut w.row.type_name, &mut w.row.value, &what, changed)
    }

    /// Checks the keys on the source before anything is written: applies the changes to
    /// `threads` in turn (writing nothing) until one holds an encrypted value, so that a
    /// wrong key stops the run before its first thread is written.
    pub fn check_keys(&self, source: &dyn CheckpointStore, threads: &[String]) -> Result<()> {
        if !self.recrypts() {
            return Ok(());
        }
        /// The visit's stop: a value was opened.
        #[derive(Debug, thiserror::Error)]
        #[error("a key was checked")]
        struct Opened;
        for t in threads {
            let mut changed = Changed::default();
            // A row at a time (the encryption's changes need nothing else: --materialize,
            // which does, is made when the thread is copied).
            let visited = source.visit_thread(t, &mut |mut row| {
                self.recrypt_row(t, &mut row, &mut changed)?;
                match changed.opened_sealed {
                    true => Err(Opened.into()),
                    false => Ok(()),
                }
            });
            match visited {
                Err(e) if e.is::<Opened>() => break,
                other => other?,
            }
        }
        Ok(())
    }

    /// `rows` with every value the new key opens decrypted, to compare a thread put under
    /// the new key on the way with what a target holds (each sealing draws a fresh nonce);
    /// unchanged without `--new-key-env`.
    pub fn comparable(&self, mut rows: ThreadRows) -> ThreadRows {
        let Recrypt::Encrypt(new) = &self.recrypt else {
            return rows;
        };
        let open = |t: &mut String, b: &mut Vec<u8>| {
            let opened = new
                .open(t, b, "a value")
                .ok()
                .filter(|o| o.sealed)
                .map(|o| (o.type_name.to_owned(), o.bytes.into_owned()));
            if let Some((nt, nb)) = opened {
                (*t, *b) = (nt, nb);
            }
        };
        for c in &mut rows.checkpoints {
            open(&mut c.type_name, &mut c.checkpoint);
        }
        for w in &mut rows.writes {
            open(&mut w.row.type_name, &mut w.row.value);
        }
        rows
    }

    /// One stored value (type and bytes) decrypted or put under the new key.
    fn recrypt_value(
        &self,
        type_name: &mut String,
        bytes: &mut Vec<u8>,
        what: &str,
        changed: &mut Changed,
    ) -> Result<()> {
        if type_name.is_empty() {
            return Ok(());
        }
        let sealed = aes::split_type(type_name).1.is_some();
        match &self.recrypt {
            Recrypt::AsStored => {}
            Recrypt::Decrypt if !sealed => {}
            Recrypt::Decrypt => {
                let opened = self.read.open(type_name, bytes, what)?;
                let (t, b) = (opened.type_name.to_owned(), opened.bytes.into_owned());
                (*type_name, *bytes) = (t, b);
                changed.decrypted += 1;
                changed.opened_sealed = true;
            }
            Recrypt::Encrypt(new) => {
                let key = new.key(what)?;
                let plain = match sealed {
                    false => Some((type_name.clone(), std::mem::take(bytes))),
                    // Already under the new key: left as it is.
                    true if key.decrypt(bytes).is_ok() => None,
                    true => {
                        let opened = self.read.open(type_name, bytes, what)?;
                        Some((opened.type_name.to_owned(), opened.bytes.into_owned()))
                    }
                };
                changed.opened_sealed |= sealed;
                if let Some((inner, plain)) = plain {
                    (*type_name, *bytes) = aes::seal(key, &inner, &plain);
                }
                changed.encrypted += 1;
            }
        }
        Ok(())
    }

    /// `--materialize`: every checkpoint of `rows` whose DeltaChannels LangGraph rebuilds
    /// (from a snapshot, or from older checkpoints and their writes) gets their values as
    /// `get_state` rebuilds them before the checkpoint's own input (what a graph with plain
    /// reducer channels stores; its own input stays a pending write, as there), and its
    /// metadata loses the DeltaChannel counters. Channel versions, writes and everything
    /// else stay as they are. An encrypted checkpoint is sealed again with its key.
    fn materialize(
        &self,
        source: &dyn CheckpointStore,
        thread: &str,
        rows: &mut ThreadRows,
        changed: &mut Changed,
    ) -> Result<()> {
        use crate::read::replay::Origin;
        for c in &mut rows.checkpoints {
            let what = format!("checkpoint {} of thread '{thread}'", c.checkpoint_id);
            let mut read = c.clone();
            read.thread_id = thread.to_owned();
            if let Some(m) = &c.metadata {
                if let Some(new) = crate::ops::copy::without_delta_counters(m) {
                    c.metadata = Some(new);
                }
            }
            let (shallow, messages) = crate::read::decode_shallow(&self.read, read.clone())?;
            if !crate::read::needs_replay(&shallow, &messages) {
                continue;
            }
            let deltas = crate::read::replay::base_values(source, &self.read, &shallow, &messages)?;
            let mut values = Vec::new();
            for d in deltas {
                let value = match (&d.origin, d.value) {
                    (Origin::Unwritten | Origin::Stored(false), _) => continue,
                    (Origin::Stored(true), Some(v)) | (Origin::Replayed { .. }, Some(v)) => v,
                    (Origin::Stored(true), None) => match messages.list() {
                        Some(l) => l.value()?,
                        None => continue,
                    },
                    (Origin::Replayed { .. }, None) => bail!(
                        "{what}: DeltaChannel '{}' has a reducer memctl does not know, so --materialize cannot write its value in full; nothing written",
                        d.channel.escape_debug()
                    ),
                };
                values.push((d.channel, value));
            }
            let omitted = matches!(messages, StoredMessages::DeltaOmitted);
            if omitted && !values.iter().any(|(ch, _)| ch == MESSAGES) {
                bail!(
                    "{what} leaves its DeltaChannel 'messages' out and memctl finds no history to rebuild it from; nothing written"
                );
            }
            if values.is_empty() {
                continue;
            }
            let (plain, sealed) = crate::ops::edit::open_checkpoint(&self.read, read)?;
            if plain.type_name != "msgpack" {
                bail!(
                    "{what} is a '{}' checkpoint (LangGraph.js writes JSON): --materialize writes msgpack checkpoints, as LangGraph (Python) stores them; nothing written",
                    plain.type_name.escape_debug()
                );
            }
            let mut root = crate::codec::msgpack::decode(&plain.checkpoint)
                .with_context(|| format!("{what} does not decode"))?;
            for (channel, value) in values {
                if !crate::ops::copy::set_channel_value(&mut root, &channel, value) {
                    bail!("{what} has no channel_values map; nothing written");
                }
            }
            let bytes = crate::codec::msgpack::encode(&root);
            (c.type_name, c.checkpoint) = match sealed {
                true => aes::seal(self.read.key(&what)?, "msgpack", &bytes),
                false => ("msgpack".to_owned(), bytes),
            };
            changed.materialized += 1;
            changed.opened_sealed |= sealed;
        }
        Ok(())
    }
}
