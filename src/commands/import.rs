//! `memctl import FILE`: threads of another database (an export, any SqliteSaver file, a
//! PostgreSQL URL) copied into `--db`, one transaction per thread: `copy --to` the other way.

use std::io::Write;
use std::time::Duration;

use anyhow::Result;

use crate::cli::{GlobalArgs, ImportArgs};
use crate::exit::Usage;
use crate::output::copy::{write_copies, CopiesReport};
use crate::storage::{self, Access};

/// Runs `import`.
pub fn run(g: &GlobalArgs, args: &ImportArgs, out: &mut dyn Write) -> Result<()> {
    if args.to_thread.is_some() && args.thread.len() != 1 {
        return Err(
            Usage("--to-thread renames one thread: give exactly one --thread".into()).into(),
        );
    }
    let busy = Duration::from_millis(g.busy_timeout);
    storage::locate_as(&args.file, "the archive").map_err(|e| Usage(e.to_string()))?;
    let changes = super::copy::Changes::new(g, &args.changes)?;
    let source = storage::open(&args.file, None, Access::ReadOnly, busy, &super::keys(g))?;
    let access = match args.dry_run {
        true => Access::ReadOnly,
        false => Access::ReadWrite,
    };
    let target = match (changes.recrypts(), &g.db) {
        // A Postgres target seals what it writes with its store's key: the new one.
        (true, Some(db)) => storage::open(
            db,
            g.schema.as_deref(),
            access,
            busy,
            &changes.target_keys(),
        )?,
        _ => super::open(g, access)?,
    };
    if let Some(db) = &g.db {
        if super::copy::same_database(&args.file, db)? {
            return Err(Usage("the file to import is --db itself: nothing to do".into()).into());
        }
    }
    let threads: Vec<String> = match args.thread.is_empty() {
        false => args.thread.clone(),
        true => {
            let all = super::copy::thread_ids(&*source)?;
            if all.is_empty() {
                anyhow::bail!(
                    "'{}' holds no thread; nothing imported",
                    storage::shown_path(&args.file)
                );
            }
            all
        }
    };
    let pairs: Vec<(String, String)> = threads
        .into_iter()
        .map(|t| {
            let to = args.to_thread.clone().unwrap_or_else(|| t.clone());
            (t, to)
        })
        .collect();
    let copied = super::copy::copy_threads(
        &*source,
        Some(&*target),
        &pairs,
        &changes,
        args.replace,
        args.dry_run,
        None,
    )?;
    // A thread of the file that cannot be read (or that --db cannot hold) is left out: never
    // written, never in place of a thread --db has.
    let partial = super::copy::left_out_partial(&copied.left_out, copied.reports.len());
    write_copies(
        out,
        crate::output::resolve_format(g.format),
        &CopiesReport::new(copied.reports, copied.left_out),
    )?;
    partial.map_or(Ok(()), |p| Err(p.into()))
}
