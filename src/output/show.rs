//! `show`'s report: a checkpoint's state as a chat transcript (each message as
//! `pretty_print()` shows it), then the other channels, then what the thread is waiting on;
//! or in JSON the same state with each message as its `model_dump()` dictionary (streamed:
//! a long thread is never held whole).

use std::io::Write;
use std::ops::Range;

use anyhow::Result;
use serde::Serialize;
use serde_json::Value as Json;

use super::sanitize::{for_terminal, one_line};
use super::Format;
use crate::codec::Value;
use crate::model::checkpoint::{brief_value, StoredList, StoredMessages};
use crate::model::{Kind, Message};
use crate::read::{DeltaValue, State};

/// What `show` shows of a checkpoint. Serialized (with the messages streamed in) it is
/// `show --format json`'s document.
#[derive(Serialize)]
pub struct ShowReport<'a> {
    /// The thread.
    pub thread_id: &'a str,
    /// The namespace.
    pub checkpoint_ns: &'a str,
    /// The checkpoint shown.
    pub checkpoint_id: &'a str,
    /// `metadata.step`.
    pub step: Option<i64>,
    /// The checkpoint's `ts`.
    pub ts: Option<&'a str>,
    /// The messages shown (`--last` of them) and where each is in the stored list; `None`
    /// when the state has no message list. Streamed in JSON.
    #[serde(serialize_with = "streamed")]
    pub messages: Option<(&'a StoredList, Vec<Range<usize>>)>,
    /// The other channels of the state, as `get_state` shows them.
    #[serde(serialize_with = "values_json")]
    pub values: Vec<Channel<'a>>,
    /// Nodes that run on the next `invoke`.
    pub next: &'a [String],
    /// Interrupts the thread is paused on.
    pub interrupts: Vec<Interrupt<'a>>,
    /// Why a DeltaChannel's value is not shown (a reducer memctl does not know).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
    /// How the checkpoint stores its messages (the table says when it stores none).
    #[serde(skip)]
    pub stored: &'a StoredMessages,
}

/// A channel of the state other than messages.
pub struct Channel<'a> {
    /// Its name.
    pub name: &'a str,
    /// Its value (`None`: a DeltaChannel memctl cannot rebuild).
    pub value: Option<&'a Value>,
    /// Why there is no value, when memctl knows (the table shows it in place of the value).
    pub note: Option<String>,
}

/// An interrupt the thread is paused on.
#[derive(Serialize)]
pub struct Interrupt<'a> {
    /// Its id.
    pub id: Option<&'a str>,
    /// The value passed to `interrupt()`.
    pub value: &'a Json,
    /// The node that raised it.
    pub node: Option<&'a str>,
}

impl<'a> ShowReport<'a> {
    /// The report of `state`, a checkpoint of `thread` in namespace `ns`, with its `last`
    /// messages (all when `None`). The stored message list is checked here (the errors of a
    /// full read); the messages themselves are read one at a time as they are written.
    pub fn of(
        state: &'a State,
        thread: &'a str,
        ns: &'a str,
        last: Option<usize>,
    ) -> Result<ShowReport<'a>> {
        let State {
            cp,
            messages,
            deltas,
            work,
        } = state;
        let shown = match messages.list() {
            Some(list) => {
                let mut spans = list.spans()?;
                if let Some(n) = last {
                    spans.drain(..spans.len().saturating_sub(n));
                }
                Some((list, spans))
            }
            None => None,
        };
        let values = crate::read::state_values(cp, deltas)
            .into_iter()
            .map(|(name, value)| Channel {
                name,
                value,
                note: deltas
                    .iter()
                    .find(|d| d.channel == name)
                    .and_then(DeltaValue::note),
            })
            .collect();
        Ok(ShowReport {
            thread_id: thread,
            checkpoint_ns: ns,
            checkpoint_id: &cp.row.checkpoint_id,
            step: cp.metadata.step(),
            ts: cp.checkpoint.ts(),
            messages: shown,
            values,
            next: &work.next,
            interrupts: work
                .interrupts
                .iter()
                .map(|i| Interrupt {
                    id: i.id.as_deref(),
                    value: &i.value,
                    node: i.node.as_deref(),
                })
                .collect(),
            notes: deltas.iter().filter_map(DeltaValue::note).collect(),
            stored: messages,
        })
    }
}

fn streamed<S: serde::Serializer>(
    messages: &Option<(&StoredList, Vec<Range<usize>>)>,
    s: S,
) -> Result<S::Ok, S::Error> {
    match messages {
        Some(_) => s.serialize_str(&super::stream::placeholder(0)),
        None => s.serialize_none(),
    }
}

fn values_json<S: serde::Serializer>(values: &[Channel<'_>], s: S) -> Result<S::Ok, S::Error> {
    use serde::ser::SerializeMap;
    let mut map = s.serialize_map(Some(values.len()))?;
    for c in values {
        let value = c.value.map_or(Json::Null, crate::codec::json::to_json);
        map.serialize_entry(c.name, &value)?;
    }
    map.end()
}

/// Writes `report` in `format`.
pub fn write(out: &mut dyn Write, format: Format, report: &ShowReport<'_>) -> Result<()> {
    if format != Format::Table {
        let doc = serde_json::to_value(report)?;
        let arrays = report
            .messages
            .as_ref()
            .map(|(list, spans)| super::dump::dumps(list, spans, format));
        return super::stream::write_streamed(out, format, &doc, arrays.into_iter().collect());
    }
    writeln!(
        out,
        "thread {}  checkpoint {}  step {}  {}",
        one_line(report.thread_id),
        one_line(report.checkpoint_id),
        report.step.map_or("-".into(), |s| s.to_string()),
        report.ts.unwrap_or("-"),
    )?;
    match report.stored {
        StoredMessages::DeltaOmitted => writeln!(
            out,
            "\n(messages are kept by a DeltaChannel and are not stored in this checkpoint)"
        )?,
        StoredMessages::Absent => writeln!(out, "\n(no messages channel)")?,
        StoredMessages::List(_) => {}
    }
    if let Some((list, spans)) = &report.messages {
        let shown = crate::par::par_in_order(spans.len(), |i| {
            list.message(i, &spans[i]).map(|m| pretty(&m))
        });
        for m in shown {
            writeln!(out, "\n{}", m?)?;
        }
    }
    if !report.values.is_empty() {
        writeln!(out, "\n{}", banner("State"))?;
        for c in &report.values {
            let brief = match c.value {
                Some(v) => brief_value(v, 200),
                None => format!("({})", c.note.clone().unwrap_or_else(|| "no value".into())),
            };
            writeln!(out, "{}: {}", one_line(c.name), for_terminal(&brief))?;
        }
    }
    write_waiting(out, report.next, &report.interrupts)
}

fn write_waiting(out: &mut dyn Write, next: &[String], interrupts: &[Interrupt<'_>]) -> Result<()> {
    if next.is_empty() && interrupts.is_empty() {
        writeln!(
            out,
            "\n{}\nnothing: the thread is idle",
            banner("Waiting on")
        )?;
        return Ok(());
    }
    writeln!(out, "\n{}", banner("Waiting on"))?;
    if !next.is_empty() {
        writeln!(out, "next: {}", one_line(&next.join(", ")))?;
    }
    for i in interrupts {
        writeln!(
            out,
            "interrupt{}{}: {}",
            i.node
                .map(|n| format!(" in {}", one_line(n)))
                .unwrap_or_default(),
            i.id.map(|id| format!(" ({})", one_line(id)))
                .unwrap_or_default(),
            for_terminal(&i.value.to_string()),
        )?;
    }
    if !interrupts.is_empty() {
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
