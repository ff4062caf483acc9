//! The `import` job: threads of another database (an export, any SqliteSaver file, a
//! PostgreSQL URL) copied into `--db`, one transaction per thread: `copy --to` the other way.

use std::path::PathBuf;

use anyhow::Result;

use super::copy::threads::{copy_threads, left_out_partial, same_database, thread_ids};
use super::copy::{Changes, Copies, CopiesReport, ValueChanges};
use super::{Ctx, Sink};
use crate::exit::Usage;
use crate::storage::{self, Access};

/// What to import.
#[derive(Debug, Clone)]
pub struct Request {
    /// The database to import from (a file or a PostgreSQL URL).
    pub file: PathBuf,
    /// The threads (`--thread`; empty: every thread of the file).
    pub threads: Vec<String>,
    /// The id the one thread gets (`--to-thread`).
    pub to_thread: Option<String>,
    /// Replace threads that exist (`--replace`).
    pub replace: bool,
    /// Write nothing, report what would be.
    pub dry_run: bool,
    /// What changes in the values on the way.
    pub changes: ValueChanges,
}

/// Runs `import`: `copy --to` the other way, one transaction per thread.
pub fn run(req: &Request, ctx: &Ctx, _sink: &dyn Sink) -> Result<Copies> {
    if req.to_thread.is_some() && req.threads.len() != 1 {
        return Err(
            Usage("--to-thread renames one thread: give exactly one --thread".into()).into(),
        );
    }
    let busy = ctx.busy_timeout;
    storage::locate_as(&req.file, "the archive").map_err(|e| Usage(e.to_string()))?;
    let changes = Changes::new(ctx, &req.changes)?;
    let source = storage::open(&req.file, None, Access::ReadOnly, busy, &ctx.keys())?;
    let access = match req.dry_run {
        true => Access::ReadOnly,
        false => Access::ReadWrite,
    };
    let target = match (changes.recrypts(), &ctx.db) {
        // A Postgres target seals what it writes with its store's key: the new one.
        (true, Some(db)) => storage::open(
            db,
            ctx.schema.as_deref(),
            access,
            busy,
            &changes.target_keys(),
        )?,
        _ => ctx.open(access)?,
    };
    if let Some(db) = &ctx.db {
        if same_database(&req.file, db)? {
            return Err(Usage("the file to import is --db itself: nothing to do".into()).into());
        }
    }
    let threads: Vec<String> = match req.threads.is_empty() {
        false => req.threads.clone(),
        true => {
            let all = thread_ids(&*source)?;
            if all.is_empty() {
                anyhow::bail!(
                    "'{}' holds no thread; nothing imported",
                    storage::shown_path(&req.file)
                );
            }
            all
        }
    };
    let pairs: Vec<(String, String)> = threads
        .into_iter()
        .map(|t| {
            let to = req.to_thread.clone().unwrap_or_else(|| t.clone());
            (t, to)
        })
        .collect();
    let copied = copy_threads(
        &*source,
        Some(&*target),
        &pairs,
        &changes,
        req.replace,
        req.dry_run,
        None,
    )?;
    // A thread of the file that cannot be read (or that --db cannot hold) is left out: never
    // written, never in place of a thread --db has.
    let partial = left_out_partial(&copied.left_out, copied.reports.len());
    Ok(Copies {
        report: CopiesReport::new(copied.reports, copied.left_out),
        partial,
    })
}
