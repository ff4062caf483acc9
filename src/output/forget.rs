//! The report of `forget`: a dry run's list of what would go (thread ids shown: the operator
//! reviews them), and a real run's receipt (digests, never the erased text), as text or JSON.

use std::io::Write;

use anyhow::Result;
use serde::Serialize;

use crate::ops::forget::Receipt;
use crate::output::{self, human, table, Format};

pub use crate::jobs::forget::{Line, Planned, StoreLine};

/// A dry run's JSON document.
#[derive(Serialize)]
struct DryRun<'a> {
    dry_run: bool,
    threads: &'a [Line],
    #[serde(skip_serializing_if = "Option::is_none")]
    store: Option<&'a [StoreLine]>,
    unmatched: &'a crate::ops::forget::Unmatched,
    reported: &'a [crate::ops::forget::Reported],
    untouched: &'a [String],
    totals: DryRunTotals,
}

/// A dry run's totals: the threads listed per action (`would delete`, `would scrub`,
/// `absent`; a `note` is about a thread listed already), and the store's items per action
/// (absent when the database has no store).
#[derive(Serialize)]
struct DryRunTotals {
    threads: serde_json::Map<String, serde_json::Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    store_items: Option<serde_json::Map<String, serde_json::Value>>,
}

impl DryRunTotals {
    fn of(planned: &Planned) -> DryRunTotals {
        fn count<'a>(
            actions: impl Iterator<Item = &'a str>,
        ) -> serde_json::Map<String, serde_json::Value> {
            let mut m = serde_json::Map::new();
            for a in actions.filter(|a| *a != "note") {
                let n = m.get(a).and_then(serde_json::Value::as_u64).unwrap_or(0);
                m.insert(a.to_owned(), (n + 1).into());
            }
            m
        }
        DryRunTotals {
            threads: count(planned.lines.iter().map(|l| l.action.as_str())),
            store_items: planned
                .store
                .as_ref()
                .map(|items| count(items.iter().map(|l| l.action.as_str()))),
        }
    }
}

/// Renders a run: a dry run lists the threads; a real run prints its receipt.
pub fn render(
    format: Option<Format>,
    receipt: &Receipt,
    planned: &Planned,
    out: &mut dyn Write,
) -> Result<()> {
    let format = output::resolve_format(format);
    if format != Format::Table {
        if receipt.dry_run {
            return output::write_document(
                out,
                format,
                &DryRun {
                    dry_run: true,
                    threads: &planned.lines,
                    store: planned.store.as_deref(),
                    unmatched: &receipt.unmatched,
                    reported: &receipt.reported,
                    untouched: &receipt.untouched,
                    totals: DryRunTotals::of(planned),
                },
            );
        }
        return output::write_document(out, format, receipt);
    }
    if receipt.dry_run {
        return dry_run_table(receipt, planned, out);
    }
    let r = receipt;
    writeln!(
        out,
        "memctl forget receipt ({} {}, {})",
        r.backend, r.memctl_version, r.timestamp
    )?;
    asked(r, out)?;
    unmatched(r, out)?;
    erased(r, out)?;
    reported(r, out)?;
    reclaimed(r, out)?;
    verified(r, out)
}

/// A dry run as a table: the threads and store items listed, what the real run would leave.
fn dry_run_table(receipt: &Receipt, planned: &Planned, out: &mut dyn Write) -> Result<()> {
    if !planned.lines.is_empty() {
        let mut t = table::new_table(&["thread_id", "action", "detail"]);
        for l in &planned.lines {
            t.add_row(vec![
                human::id(&l.thread_id),
                l.action.clone(),
                human::preview(&l.detail, 200),
            ]);
        }
        writeln!(out, "{}", table::render(&t))?;
    }
    if let Some(items) = planned.store.as_deref().filter(|s| !s.is_empty()) {
        let mut t = table::new_table(&["store namespace", "key", "action", "detail"]);
        for l in items {
            t.add_row(vec![
                human::id(l.namespace.joined()),
                human::id(&l.key),
                l.action.clone(),
                human::preview(&l.detail, 200),
            ]);
        }
        writeln!(out, "{}", table::render(&t))?;
    }
    reported(receipt, out)?;
    unmatched(receipt, out)?;
    match receipt.leaves_something() {
        true => writeln!(
            out,
            "dry run: nothing was written; the real run would not be clean (the reported threads and untouched places above keep what they hold)"
        )?,
        false => writeln!(out, "dry run: nothing was written")?,
    }
    Ok(())
}

/// What was asked (digests, never the text).
fn asked(r: &Receipt, out: &mut dyn Write) -> Result<()> {
    let mut asked = Vec::new();
    if !r.request.threads_sha256.is_empty() {
        asked.push(format!(
            "threads sha256 {}",
            r.request.threads_sha256.join(", ")
        ));
    }
    for m in &r.request.meta {
        asked.push(format!(
            "--meta {}=sha256:{}",
            human::id(&m.key),
            m.value_sha256
        ));
    }
    if let Some(p) = &r.request.pattern {
        asked.push(format!(
            "--match sha256:{}{}{}",
            p.sha256,
            if p.regex { " (regex)" } else { "" },
            if p.ignore_case {
                " (ignoring case)"
            } else {
                ""
            }
        ));
    }
    writeln!(out, "asked: {}", asked.join("; "))?;
    Ok(())
}

/// What was deleted and scrubbed: the threads' counts and digests, the store's items.
fn erased(r: &Receipt, out: &mut dyn Write) -> Result<()> {
    writeln!(
        out,
        "deleted: {} ({}, {}, {})",
        human::count(r.deleted.threads, "thread"),
        human::count(r.deleted.checkpoints, "checkpoint"),
        human::count(r.deleted.writes, "write"),
        human::bytes(r.deleted.bytes)
    )?;
    for d in &r.deleted_threads_sha256 {
        writeln!(out, "  thread sha256 {d}")?;
    }
    let s = &r.scrubbed;
    writeln!(
        out,
        "scrubbed: {}: {} matched, {} removed from latest states, {} redacted, {} appended, {} with a match rewritten",
        human::count(s.threads, "thread"),
        human::count(s.messages_matched, "message"),
        human::count(s.messages_removed_from_latest, "message"),
        human::count(s.strings_redacted, "string"),
        human::count(s.checkpoints_appended, "checkpoint"),
        human::count(s.rows_with_matches, "row")
    )?;
    for d in &r.scrubbed_threads_sha256 {
        writeln!(out, "  thread sha256 {d}")?;
    }
    if let Some(st) = &r.store {
        writeln!(
            out,
            "store: deleted {} ({}, {}; {} by --meta, {} by --match)",
            human::count(st.items, "item"),
            human::bytes(st.bytes),
            human::count(st.vectors, "vector"),
            st.selected_by_meta,
            st.selected_by_match
        )?;
        if st.left_alone > 0 {
            writeln!(
                out,
                "  {} rewritten by the app meanwhile, left alone",
                human::count(st.left_alone, "item")
            )?;
        }
        for d in &st.items_sha256 {
            writeln!(
                out,
                "  namespace sha256 {} key sha256 {}",
                d.namespace_sha256, d.key_sha256
            )?;
        }
    }
    Ok(())
}

/// What the reclaim did, and what is out of its reach.
fn reclaimed(r: &Receipt, out: &mut dyn Write) -> Result<()> {
    writeln!(
        out,
        "reclaimed: {}; {} → {}",
        human::erased(
            r.reclaim.free_pages_zeroed,
            r.reclaim.vacuumed,
            r.backend == "postgres"
        ),
        human::bytes(r.reclaim.bytes_before),
        human::bytes(r.reclaim.bytes_after)
    )?;
    for o in &r.reclaim.out_of_reach {
        writeln!(out, "  out of reach: {o}")?;
    }
    Ok(())
}

/// The verification: what was searched, for what, and what is still found.
fn verified(r: &Receipt, out: &mut dyn Write) -> Result<()> {
    if let Some(v) = &r.verification {
        writeln!(out, "verified: searched {}", v.searched.join(", "))?;
        writeln!(
            out,
            "  for {}{}{}",
            human::count(v.strings as u64, "erased string"),
            match v.too_short {
                0 => String::new(),
                n => format!(" ({n} shorter than 4 bytes not searched)"),
            },
            match v.shared_with_kept {
                0 => String::new(),
                n => format!("; {n} also in kept content the pattern does not match"),
            }
        )?;
        if v.clean {
            writeln!(out, "  result: clean (none found)")?;
        } else {
            writeln!(
                out,
                "  result: NOT CLEAN ({} still found)",
                human::count(v.remaining.len() as u64, "string")
            )?;
            for h in &v.remaining {
                let places: Vec<String> =
                    h.rows.iter().chain(&h.raw).map(|p| human::id(p)).collect();
                writeln!(out, "  sha256 {} in {}", h.sha256, places.join(", "))?;
            }
        }
    }
    Ok(())
}

/// The parts of the request that matched nothing (absent threads by digest: the receipt
/// holds no id the person asked to erase).
fn unmatched(r: &Receipt, out: &mut dyn Write) -> Result<()> {
    let u = &r.unmatched;
    if !u.any() {
        return Ok(());
    }
    let mut parts = Vec::new();
    if !u.absent_threads_sha256.is_empty() {
        parts.push(format!(
            "{} not in the database (sha256 {})",
            human::count(u.absent_threads_sha256.len() as u64, "thread"),
            u.absent_threads_sha256.join(", ")
        ));
    }
    if u.meta_selected_nothing {
        parts.push("--meta selected no thread".into());
    }
    if u.pattern_matched_nothing {
        parts.push("--match matched no text".into());
    }
    let all = if r.matched_nothing() {
        "the request matched nothing: "
    } else {
        ""
    };
    writeln!(out, "unmatched: {all}{}", parts.join("; "))?;
    Ok(())
}

/// The reported threads and untouched places.
fn reported(r: &Receipt, out: &mut dyn Write) -> Result<()> {
    for p in &r.reported {
        writeln!(
            out,
            "reported: thread {}: {}",
            human::id(&p.thread_id),
            human::preview(&p.reason, 300)
        )?;
    }
    for u in &r.untouched {
        writeln!(out, "not changed: {}", human::preview(u, 300))?;
    }
    Ok(())
}
