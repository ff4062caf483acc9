//! The report of `ttl`: a heading and the part's own table per part, or one JSON document
//! holding each part's document whole.

use std::io::Write;

use anyhow::Result;
use serde_json::{json, Value as Json};

use super::{human, Format};
use crate::jobs::ttl::{CheckpointerPart, Report, StorePart};

/// Writes the `ttl` report in `format`.
pub fn render(out: &mut dyn Write, format: Format, r: &Report) -> Result<()> {
    if format == Format::Table {
        return table(out, r);
    }
    super::write_document(out, format, &document(r)?)
}

/// The tables, part by part under their headings.
fn table(out: &mut dyn Write, r: &Report) -> Result<()> {
    let c = r.policy.checkpointer.as_ref();
    match &r.checkpointer {
        Some(CheckpointerPart::NeverExpires) => writeln!(
            out,
            "checkpointer.ttl: no default_ttl, so threads never expire: nothing to do"
        )?,
        Some(
            part @ (CheckpointerPart::Prune { idle_seconds, .. }
            | CheckpointerPart::Gc { idle_seconds, .. }),
        ) => {
            writeln!(
                out,
                "checkpointer.ttl: strategy {}, threads idle over {} ({} minutes)",
                c.map_or("", |c| c.strategy.name()),
                human::age(*idle_seconds),
                c.and_then(|c| c.default_ttl).unwrap_or(0.0)
            )?;
            match part {
                CheckpointerPart::Prune { prune: Some(p), .. } => {
                    super::prune::render(out, Format::Table, &p.prune)?
                }
                CheckpointerPart::Gc { threads, .. } => {
                    if threads.is_empty() {
                        writeln!(out, "no thread is idle that long")?;
                    }
                    for (_, gc) in threads {
                        if let Some(gc) = gc {
                            super::gc::render(out, Format::Table, &gc.gc)?;
                        }
                    }
                }
                _ => {}
            }
        }
        None => {}
    }
    if let Some(part) = &r.store {
        let gap = if r.policy.checkpointer.is_some() {
            "\n"
        } else {
            ""
        };
        writeln!(out, "{gap}store.ttl: sweep of the expired items")?;
        match part {
            StorePart::NoStore => {
                writeln!(out, "no LangGraph store in this database: nothing to sweep")?
            }
            StorePart::Swept(Some(s)) => super::store::removal(
                out,
                Format::Table,
                s,
                "Nothing to sweep: no item has expired.",
            )?,
            StorePart::Swept(None) => {}
        }
    }
    Ok(())
}

/// The one JSON document: `dry_run`, and per part its settings and its command's own
/// document (`null` for a part that failed before it had one).
fn document(r: &Report) -> Result<Json> {
    let mut doc = json!({"dry_run": r.dry_run});
    let c = r.policy.checkpointer.as_ref();
    match &r.checkpointer {
        Some(CheckpointerPart::NeverExpires) => {
            doc["checkpointer"] = json!({"note": "no default_ttl: threads never expire"});
        }
        Some(
            part @ (CheckpointerPart::Prune { idle_seconds, .. }
            | CheckpointerPart::Gc { idle_seconds, .. }),
        ) => {
            let mut p = json!({
                "strategy": c.map(|c| c.strategy.name()),
                "default_ttl_minutes": c.and_then(|c| c.default_ttl),
                "idle_seconds": idle_seconds,
            });
            match part {
                CheckpointerPart::Prune { prune, .. } => {
                    p["prune"] = match prune {
                        Some(r) => serde_json::to_value(&r.prune)?,
                        None => Json::Null,
                    };
                }
                CheckpointerPart::Gc { threads, .. } => {
                    let mut reports = Vec::new();
                    for (thread, gc) in threads {
                        let gc = match gc {
                            Some(r) => serde_json::to_value(&r.gc)?,
                            None => Json::Null,
                        };
                        reports.push(json!({"thread_id": thread, "gc": gc}));
                    }
                    p["gc_totals"] = gc_totals(&reports);
                    p["gc"] = Json::Array(reports);
                }
                CheckpointerPart::NeverExpires => {}
            }
            doc["checkpointer"] = p;
        }
        None => {}
    }
    if let Some(part) = &r.store {
        let default_ttl = r.policy.store.as_ref().and_then(|s| s.default_ttl);
        let mut p = json!({"default_ttl_minutes": default_ttl});
        match part {
            StorePart::NoStore => p["note"] = json!("no LangGraph store in this database"),
            StorePart::Swept(s) => {
                p["sweep"] = match s {
                    Some(s) => serde_json::to_value(s)?,
                    None => Json::Null,
                };
            }
        }
        doc["store"] = p;
    }
    Ok(doc)
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
