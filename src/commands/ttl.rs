//! `memctl ttl --config langgraph.json`: the retention a LangGraph deployment declares
//! (`checkpointer.ttl`, `store.ttl`, read by [`crate::ops::ttl`]) applied to a self-hosted
//! database, from cron. Threads idle longer than `default_ttl` go through `prune` (strategy
//! `delete`) or `gc --keep-checkpoints 1` (`keep_latest`), and the store through `store
//! sweep`: those commands' own code runs, each part's report is kept, and one report (a table
//! per part, or one JSON document) says what was done. Exit codes as the parts': the worst.

use std::io::Write;

use anyhow::{Context, Result};
use serde_json::{json, Value as Json};

use crate::cli::{
    Format, GcArgs, GlobalArgs, MaintenanceArgs, PruneArgs, StoreCommand, StoreSweepArgs, TtlArgs,
};
use crate::ops::ttl::{parse, Strategy};
use crate::output::{self, human};
use crate::storage::Access;

/// The largest `langgraph.json` memctl reads (1 MiB: a deployment's is a few KiB).
const MAX_CONFIG: u64 = 1 << 20;

/// `--min-idle` for the parts: a thread idle past its TTL is far older than this anyway.
const MIN_IDLE: &str = "5m";

/// Runs `ttl`.
pub fn run(g: &GlobalArgs, args: &TtlArgs, out: &mut dyn Write) -> Result<()> {
    let text = crate::files::Whole {
        named: "--config",
        holds: "a langgraph.json",
        hint: "; give the deployment's langgraph.json",
        cap: MAX_CONFIG,
    }
    .read(&args.config)?;
    let policy = parse(&text).with_context(|| format!("'{}'", args.config.display()))?;
    let format = output::resolve_format(g.format);
    // Each part renders as JSON into a buffer (its document is kept whole in ours), or as its
    // own table on `out` under a heading.
    let mut inner = g.clone();
    if format != Format::Table {
        inner.format = Some(Format::Json);
    }
    let mut errors: Vec<anyhow::Error> = Vec::new();
    let mut doc = json!({"dry_run": args.dry_run});
    let maintenance = || MaintenanceArgs {
        min_idle: MIN_IDLE.into(),
        dry_run: args.dry_run,
        // On a terminal the prune / gc part asks its own question, unless --yes.
        yes: args.yes,
        vacuum: false,
    };

    match (&policy.checkpointer, policy.thread_idle_seconds()) {
        (Some(c), Some(idle)) => {
            let heading = format!(
                "checkpointer.ttl: strategy {}, threads idle over {} ({} minutes)",
                c.strategy.name(),
                human::age(idle),
                c.default_ttl.unwrap_or(0.0)
            );
            let mut part = json!({
                "strategy": c.strategy.name(),
                "default_ttl_minutes": c.default_ttl,
                "idle_seconds": idle,
            });
            if format == Format::Table {
                writeln!(out, "{heading}")?;
            }
            match c.strategy {
                Strategy::Delete => {
                    let a = PruneArgs {
                        idle: Some(format!("{idle}s")),
                        thread: vec![],
                        thread_ids: vec![],
                        batch: 200,
                        maintenance: maintenance(),
                    };
                    part["prune"] = run_part(format, out, &mut errors, |o| {
                        super::prune::run(&inner, &a, o)
                    })?;
                }
                Strategy::KeepLatest => {
                    let idle_threads = idle_threads(g, idle)?;
                    if format == Format::Table && idle_threads.is_empty() {
                        writeln!(out, "no thread is idle that long")?;
                    }
                    let mut reports = Vec::new();
                    for t in &idle_threads {
                        let a = GcArgs {
                            thread: Some(t.clone()),
                            thread_id: None,
                            all: false,
                            keep_checkpoints: 1,
                            maintenance: maintenance(),
                        };
                        let r =
                            run_part(format, out, &mut errors, |o| super::gc::run(&inner, &a, o))?;
                        reports.push(json!({"thread_id": t, "gc": r}));
                    }
                    part["gc_totals"] = gc_totals(&reports);
                    part["gc"] = Json::Array(reports);
                }
            }
            doc["checkpointer"] = part;
        }
        (Some(_), None) => {
            if format == Format::Table {
                writeln!(
                    out,
                    "checkpointer.ttl: no default_ttl, so threads never expire: nothing to do"
                )?;
            }
            doc["checkpointer"] = json!({"note": "no default_ttl: threads never expire"});
        }
        (None, _) => {}
    }

    if let Some(st) = &policy.store {
        if format == Format::Table {
            writeln!(
                out,
                "{}store.ttl: sweep of the expired items",
                if policy.checkpointer.is_some() {
                    "\n"
                } else {
                    ""
                }
            )?;
        }
        let mut part = json!({"default_ttl_minutes": st.default_ttl});
        if super::store::open_if_any(g, Access::ReadOnly)?.is_none() {
            if format == Format::Table {
                writeln!(out, "no LangGraph store in this database: nothing to sweep")?;
            }
            part["note"] = json!("no LangGraph store in this database");
        } else {
            let cmd = StoreCommand::Sweep(StoreSweepArgs {
                dry_run: args.dry_run,
            });
            part["sweep"] = run_part(format, out, &mut errors, |o| {
                super::store::run(&inner, &cmd, o)
            })?;
        }
        doc["store"] = part;
    }

    if format != Format::Table {
        output::write_document(out, format, &doc)?;
    }
    // The worst outcome: an error (exit 1) before a partial run (exit 3).
    let mut partial = Vec::new();
    for e in errors {
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

/// The totals over the per-thread gc reports of the keep_latest part: the threads, and the
/// sums of gc's own totals (`deleted`, `would_delete`, `bytes_reclaimed`).
fn gc_totals(reports: &[Json]) -> Json {
    let mut totals = json!({"threads": reports.len()});
    for r in reports {
        for key in ["deleted", "would_delete", "bytes_reclaimed"] {
            add_numbers(&mut totals[key], &r["gc"][key]);
        }
    }
    totals
}

/// Adds `add`'s numbers into `sum` (a number, or an object of numbers, field by field);
/// `null` adds nothing.
fn add_numbers(sum: &mut Json, add: &Json) {
    match add {
        Json::Number(n) => {
            let total = sum.as_u64().unwrap_or(0) + n.as_u64().unwrap_or(0);
            *sum = Json::from(total);
        }
        Json::Object(fields) => {
            for (k, v) in fields {
                add_numbers(&mut sum[k.as_str()], v);
            }
        }
        _ => {}
    }
}

/// Runs one part: on a table, straight to `out`; else into a buffer, returned as its JSON
/// document (`null` when it printed none). Its error is kept in `errors` (the other parts
/// still run).
fn run_part(
    format: Format,
    out: &mut dyn Write,
    errors: &mut Vec<anyhow::Error>,
    part: impl FnOnce(&mut dyn Write) -> Result<()>,
) -> Result<Json> {
    if format == Format::Table {
        if let Err(e) = part(out) {
            errors.push(e);
        }
        return Ok(Json::Null);
    }
    let mut buf = Vec::new();
    if let Err(e) = part(&mut buf) {
        errors.push(e);
    }
    if buf.is_empty() {
        return Ok(Json::Null);
    }
    serde_json::from_slice(&buf).context("a part's report is not JSON")
}

/// The threads whose latest checkpoint is older than `idle` seconds (as `prune --idle` ages
/// them: by the time in the checkpoint id).
fn idle_threads(g: &GlobalArgs, idle: i64) -> Result<Vec<String>> {
    let store = super::open_read_only(g)?;
    let now = human::now(g.now.as_deref())?;
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
