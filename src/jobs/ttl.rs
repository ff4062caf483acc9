//! The `ttl` job: the retention a LangGraph deployment declares in its `langgraph.json`
//! (`checkpointer.ttl`, `store.ttl`, read by [`crate::ops::ttl`]) applied to a self-hosted
//! database. Threads idle longer than `default_ttl` go through the [`prune`] job
//! (strategy `delete`) or the [`gc`] job keeping one checkpoint (`keep_latest`), and
//! the Store through the [`store sweep`](super::store::sweep) job: each part's own report is
//! kept, and one [`Report`] holds them all. A part that fails does not stop the others; the
//! run ends with the worst outcome ([`Report::finish`]).

use std::path::PathBuf;

use anyhow::{Context, Result};

use crate::ops::ttl::{parse, Policy, Strategy};
use crate::storage::Access;

use super::store::{sweep, RemovalReport};
use super::{gc, prune, Ctx, Sink};

/// The largest `langgraph.json` read (1 MiB: a deployment's is a few KiB).
const MAX_CONFIG: u64 = 1 << 20;

/// `--min-idle` for the parts: a thread idle past its TTL is far older than this anyway.
const MIN_IDLE: &str = "5m";

/// The threads pruned per transaction (prune's own default).
const PRUNE_BATCH: usize = 200;

/// What to apply.
#[derive(Debug, Clone)]
pub struct Request {
    /// The deployment's `langgraph.json`.
    pub config: PathBuf,
    /// Delete nothing: each part reports what it would delete.
    pub dry_run: bool,
}

/// What `ttl` did, part by part.
pub struct Report {
    /// Nothing was written.
    pub dry_run: bool,
    /// The policy read from the configuration.
    pub policy: Policy,
    /// What the checkpointer's TTL did (`None` when the configuration declares none).
    pub checkpointer: Option<CheckpointerPart>,
    /// What the Store's TTL did (`None` when the configuration declares none).
    pub store: Option<StorePart>,
    /// The parts' errors, in order (the other parts still ran).
    pub errors: Vec<anyhow::Error>,
}

/// The checkpointer's part.
pub enum CheckpointerPart {
    /// `checkpointer.ttl` without `default_ttl`: threads never expire.
    NeverExpires,
    /// Strategy `delete`, threads idle over `idle_seconds`: prune's report (`None` when prune
    /// failed before it had one).
    Prune {
        /// The idle time, in seconds.
        idle_seconds: i64,
        /// Prune's report.
        prune: Option<prune::Report>,
    },
    /// Strategy `keep_latest`: gc of each idle thread, in order (`None` for a thread whose gc
    /// failed before it had a report).
    Gc {
        /// The idle time, in seconds.
        idle_seconds: i64,
        /// Per idle thread, gc's report.
        threads: Vec<(String, Option<gc::Report>)>,
    },
}

/// The Store's part.
pub enum StorePart {
    /// The database holds no LangGraph store.
    NoStore,
    /// The sweep's report (`None` when it failed before it had one).
    Swept(Option<RemovalReport>),
}

impl Report {
    /// The run's result once the report is shown: the worst outcome of the parts, an error
    /// (exit 1) before a partial run (exit 3).
    pub fn finish(self) -> Result<()> {
        let mut ends: Vec<anyhow::Error> = self.errors;
        match self.checkpointer {
            Some(CheckpointerPart::Prune { prune: Some(r), .. }) => ends.extend(r.end),
            Some(CheckpointerPart::Gc { threads, .. }) => {
                ends.extend(threads.into_iter().filter_map(|(_, r)| r?.end));
            }
            _ => {}
        }
        let mut partial = Vec::new();
        for e in ends {
            match e.downcast::<crate::exit::Partial>() {
                Ok(p) => partial.push(p.0),
                Err(e) => return Err(e),
            }
        }
        if !partial.is_empty() {
            return Err(crate::exit::Partial(partial.join("; ")).into());
        }
        Ok(())
    }
}

/// Runs `ttl`: reads the configuration, then each part it declares.
pub fn run(req: &Request, ctx: &Ctx, sink: &dyn Sink) -> Result<Report> {
    let text = crate::files::Whole {
        named: "--config",
        holds: "a langgraph.json",
        hint: "; give the deployment's langgraph.json",
        cap: MAX_CONFIG,
    }
    .read(&req.config)?;
    let policy = parse(&text).with_context(|| format!("'{}'", req.config.display()))?;
    let mut errors = Vec::new();
    let checkpointer = match (&policy.checkpointer, policy.thread_idle_seconds()) {
        (Some(c), Some(idle_seconds)) => Some(match c.strategy {
            Strategy::Delete => {
                let r = prune::Request {
                    idle: Some(format!("{idle_seconds}s")),
                    threads: Vec::new(),
                    batch: PRUNE_BATCH,
                    min_idle: MIN_IDLE.into(),
                    dry_run: req.dry_run,
                    vacuum: false,
                };
                let prune = kept(prune::run(&r, ctx, sink), &mut errors);
                CheckpointerPart::Prune {
                    idle_seconds,
                    prune,
                }
            }
            Strategy::KeepLatest => {
                let mut threads = Vec::new();
                for thread in idle_threads(ctx, idle_seconds)? {
                    let r = gc::Request {
                        thread: Some(thread.clone()),
                        keep_checkpoints: 1,
                        min_idle: MIN_IDLE.into(),
                        dry_run: req.dry_run,
                        vacuum: false,
                    };
                    threads.push((thread, kept(gc::run(&r, ctx, sink), &mut errors)));
                }
                CheckpointerPart::Gc {
                    idle_seconds,
                    threads,
                }
            }
        }),
        (Some(_), None) => Some(CheckpointerPart::NeverExpires),
        (None, _) => None,
    };
    let store = match &policy.store {
        None => None,
        Some(_) if ctx.open_store_if_any(Access::ReadOnly)?.is_none() => Some(StorePart::NoStore),
        Some(_) => {
            let r = sweep::Request {
                dry_run: req.dry_run,
            };
            Some(StorePart::Swept(kept(
                sweep::run(&r, ctx, sink),
                &mut errors,
            )))
        }
    };
    Ok(Report {
        dry_run: req.dry_run,
        policy,
        checkpointer,
        store,
        errors,
    })
}

/// A part's report, or `None` with its error kept in `errors`.
fn kept<T>(ran: Result<T>, errors: &mut Vec<anyhow::Error>) -> Option<T> {
    ran.map_err(|e| errors.push(e)).ok()
}

/// The threads whose latest checkpoint is older than `idle` seconds (as `prune --idle` ages
/// them: by the time in the checkpoint id).
fn idle_threads(ctx: &Ctx, idle: i64) -> Result<Vec<String>> {
    let store = ctx.open_read_only()?;
    let now = crate::text::human::now(ctx.now.as_deref())?;
    let mut out = Vec::new();
    store.for_each_thread(&mut |t| {
        let age = crate::ids::id_time(&t.latest_id).map(|ts| now.as_second() - ts.as_second());
        if age.is_some_and(|a| a >= idle) {
            out.push(t.thread_id);
        }
        Ok(())
    })?;
    Ok(out)
}
