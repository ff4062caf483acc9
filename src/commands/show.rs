//! `memctl show --thread T`: the state as a chat transcript, then other channels, then what
//! the thread is waiting on.

use std::io::Write;

use anyhow::Result;
use serde_json::{json, Value as Json};

use crate::cli::{Format, GlobalArgs, ShowArgs};
use crate::model::checkpoint::{brief_value, StoredMessages};
use crate::model::state::{pending_work, PendingWork};
use crate::model::{Kind, Message};
use crate::output::{
    self,
    sanitize::{for_terminal, one_line},
};

use crate::read::replay::DeltaValue;

/// Runs `show`.
pub fn run(g: &GlobalArgs, args: &ShowArgs, out: &mut dyn Write) -> Result<()> {
    let store = super::open_read_only(g)?;
    let keys = super::keys(g);
    let (cp, messages, deltas) = crate::read::load_shallow(
        &*store,
        &keys,
        &args.thread.thread,
        &g.ns,
        args.checkpoint.as_deref(),
    )?;
    let writes = crate::read::load_writes(&*store, &keys, &cp.row)?;
    let work = pending_work(&cp.checkpoint, &writes);
    // The messages are checked here (the errors of a full read), then read one at a time.
    let stored = match messages.list() {
        Some(list) => {
            let mut spans = list.spans()?;
            if let Some(n) = args.last {
                spans.drain(..spans.len().saturating_sub(n));
            }
            Some((list, spans))
        }
        None => None,
    };
    let values = crate::read::state_values(&cp, &deltas);
    let others: Vec<(&str, String)> = values
        .iter()
        .map(|(k, v)| {
            let brief = match v {
                Some(v) => brief_value(v, 200),
                None => format!(
                    "({})",
                    deltas
                        .iter()
                        .find(|d| d.channel == *k)
                        .and_then(DeltaValue::note)
                        .unwrap_or_else(|| "no value".into())
                ),
            };
            (*k, brief)
        })
        .collect();
    let notes: Vec<String> = deltas.iter().filter_map(DeltaValue::note).collect();
    match output::resolve_format(g.format) {
        Format::Table => {
            writeln!(
                out,
                "thread {}  checkpoint {}  step {}  {}",
                one_line(&args.thread.thread),
                one_line(&cp.row.checkpoint_id),
                cp.metadata.step().map_or("-".into(), |s| s.to_string()),
                cp.checkpoint.ts().unwrap_or("-"),
            )?;
            match &messages {
                StoredMessages::DeltaOmitted => writeln!(
                    out,
                    "\n(messages are kept by a DeltaChannel and are not stored in this checkpoint)"
                )?,
                StoredMessages::Absent => writeln!(out, "\n(no messages channel)")?,
                StoredMessages::List(_) => {}
            }
            if let Some((list, spans)) = &stored {
                let shown = crate::par::par_in_order(spans.len(), |i| {
                    list.message(i, &spans[i]).map(|m| pretty(&m))
                });
                for m in shown {
                    writeln!(out, "\n{}", m?)?;
                }
            }
            if !others.is_empty() {
                writeln!(out, "\n{}", banner("State"))?;
                for (k, v) in &others {
                    writeln!(out, "{}: {}", one_line(k), for_terminal(v))?;
                }
            }
            write_waiting(out, &work)?;
        }
        format => {
            let mut doc = json!({
                "thread_id": args.thread.thread,
                "checkpoint_ns": g.ns,
                "checkpoint_id": cp.row.checkpoint_id,
                "step": cp.metadata.step(),
                "ts": cp.checkpoint.ts(),
                "messages": stored.as_ref().map(|_| crate::output::stream::placeholder(0)),
                "values": values.iter().map(|(k, v)| {
                    ((*k).to_owned(), v.map_or(Json::Null, crate::codec::json::to_json))
                }).collect::<serde_json::Map<_, _>>(),
                "next": work.next,
                "interrupts": work.interrupts.iter().map(|i| json!({"id": i.id, "value": i.value, "node": i.node})).collect::<Vec<_>>(),
            });
            if !notes.is_empty() {
                doc["notes"] = json!(notes);
            }
            let arrays = stored
                .as_ref()
                .map(|(list, spans)| super::dump::dumps(list, spans, format));
            crate::output::stream::write_streamed(out, format, &doc, arrays.into_iter().collect())?;
        }
    }
    Ok(())
}

fn write_waiting(out: &mut dyn Write, work: &PendingWork) -> Result<()> {
    if work.next.is_empty() && work.interrupts.is_empty() {
        writeln!(
            out,
            "\n{}\nnothing: the thread is idle",
            banner("Waiting on")
        )?;
        return Ok(());
    }
    writeln!(out, "\n{}", banner("Waiting on"))?;
    if !work.next.is_empty() {
        writeln!(out, "next: {}", one_line(&work.next.join(", ")))?;
    }
    for i in &work.interrupts {
        writeln!(
            out,
            "interrupt{}{}: {}",
            i.node
                .as_deref()
                .map(|n| format!(" in {}", one_line(n)))
                .unwrap_or_default(),
            i.id.as_deref()
                .map(|id| format!(" ({})", one_line(id)))
                .unwrap_or_default(),
            for_terminal(&i.value.to_string()),
        )?;
    }
    if !work.interrupts.is_empty() {
        writeln!(
            out,
            "(paused on interrupt(): resume it with Command(resume=...))"
        )?;
    }
    Ok(())
}

/// A title line like LangChain's `get_msg_title_repr`: 80 columns of `=` around the title.
pub fn banner(title: &str) -> String {
    let padded = format!(" {title} ");
    let width = padded.chars().count();
    let sep = "=".repeat(80usize.saturating_sub(width) / 2);
    let second = if width % 2 == 1 {
        format!("{sep}=")
    } else {
        sep.clone()
    };
    format!("{sep}{padded}{second}")
}

/// A message the way `message.pretty_print()` shows it (content blocks shown readably).
pub fn pretty(m: &Message) -> String {
    let mut s = banner(m.kind.banner());
    if let Some(name) = m.name() {
        s.push_str(&format!("\nName: {}", one_line(name)));
    }
    s.push_str("\n\n");
    match m.content() {
        Json::String(text) => s.push_str(&for_terminal(text)),
        Json::Array(blocks) => {
            let parts: Vec<String> = blocks
                .iter()
                .map(|b| match b {
                    Json::String(t) => for_terminal(t),
                    Json::Object(o) if o.get("type").and_then(Json::as_str) == Some("text") => {
                        for_terminal(o.get("text").and_then(Json::as_str).unwrap_or(""))
                    }
                    Json::Object(o) => format!(
                        "[{} block]",
                        for_terminal(o.get("type").and_then(Json::as_str).unwrap_or("unknown"))
                    ),
                    other => for_terminal(&other.to_string()),
                })
                .collect();
            s.push_str(&parts.join("\n"));
        }
        other => s.push_str(&for_terminal(&other.to_string())),
    }
    if m.kind == Kind::Ai && !m.tool_calls().is_empty() {
        let mut lines = vec!["Tool Calls:".to_owned()];
        for tc in m.tool_calls() {
            let name = tc.get("name").and_then(Json::as_str).unwrap_or("Tool");
            let id = tc.get("id").and_then(Json::as_str).unwrap_or("None");
            lines.push(format!("  {} ({})", one_line(name), one_line(id)));
            lines.push(format!(" Call ID: {}", one_line(id)));
            lines.push("  Args:".to_owned());
            match tc.get("args") {
                Some(Json::Object(args)) => {
                    for (k, v) in args {
                        let v = match v {
                            Json::String(t) => t.clone(),
                            other => other.to_string(),
                        };
                        lines.push(format!("    {}: {}", one_line(k), for_terminal(&v)));
                    }
                }
                Some(Json::String(raw)) => lines.push(format!("    {}", for_terminal(raw))),
                _ => {}
            }
        }
        s = format!("{}\n{}", s.trim_end(), lines.join("\n"));
    }
    s.trim().to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn banners_match_langchain_width() {
        // get_msg_title_repr("Human Message"): 33 '=' + " Human Message " + 32 '='? No: the
        // padded title is 15 chars, (80-15)//2 = 32, odd length adds one more on the right.
        let b = banner("Human Message");
        assert_eq!(b.chars().count(), 80);
        assert!(b.starts_with(&"=".repeat(32)));
        assert!(b.ends_with(&format!(" Human Message {}", "=".repeat(33))));
        assert_eq!(banner("Ai Message").chars().count(), 80);
    }
}
