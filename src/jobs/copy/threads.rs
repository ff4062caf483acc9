//! The pieces the moving jobs share: which threads, whether two names are one database,
//! one thread copied (streamed or whole), several threads copied, the threads left out.

use std::path::Path;

use anyhow::{anyhow, Result};

use super::changes::{Changed, Changes};
use super::report::{left_out_reasons, CopyReport, LeftOut, SharedVersion};
use crate::exit::{Partial, Usage};
use crate::storage::{self, CheckpointStore, Location, ThreadRows};
use crate::text::human;

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
    let why = left_out_reasons(
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
pub fn remove_created(path: &Path) {
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
