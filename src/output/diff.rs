//! The report of `diff`: messages added, removed and changed between two checkpoints and the
//! channels that changed, as text or one JSON document whose message arrays are streamed
//! (a long thread's messages are decoded one at a time, never held whole).

use std::io::Write;

use anyhow::Result;
use serde::Serialize;
use serde_json::Value as Json;

use super::stream::{element_bytes, placeholder, write_streamed};
use super::{
    human,
    sanitize::{for_terminal, one_line},
    Format,
};
use crate::model::Message;
use crate::par::par_in_order;

pub use crate::jobs::diff::{ChannelChange, DiffReport, MessageDiff, MessageSource};

/// Writes the `diff` report in `format`.
pub fn render(out: &mut dyn Write, format: Format, r: &DiffReport) -> Result<()> {
    match format {
        Format::Table => render_text(out, r),
        format => render_json(out, format, r),
    }
}

/// One line of a message in the text form.
fn line(m: &Message) -> String {
    format!(
        "[{}] {}{}",
        m.kind.type_str(),
        m.id()
            .map(|i| format!("{} ", one_line(i)))
            .unwrap_or_default(),
        human::preview(&m.summary_text(), 70)
    )
}

fn render_text(out: &mut dyn Write, r: &DiffReport) -> Result<()> {
    let step = |c: Option<i64>| c.map_or("-".into(), |s| s.to_string());
    writeln!(
        out,
        "--- {} (step {})\n+++ {} (step {})",
        r.from
            .map_or("(nothing: first checkpoint)".into(), one_line),
        step(r.from_step),
        one_line(r.to),
        step(r.to_step),
    )?;
    let (before, after, md) = (r.before, r.after, &r.messages);
    if md.added.is_empty() && md.removed.is_empty() && md.changed.is_empty() {
        writeln!(out, "messages: unchanged ({})", after.len())?;
    } else {
        writeln!(out, "messages: {} → {}", before.len(), after.len())?;
    }
    let removed = par_in_order(md.removed.len(), |k| {
        before.message(md.removed[k]).map(|m| line(&m))
    });
    for l in removed {
        writeln!(out, "- {}", l?)?;
    }
    for &(i, j) in &md.changed {
        let (a, b) = (before.message(i)?, after.message(j)?);
        writeln!(
            out,
            "~ {}\n    was: {}",
            line(&b),
            human::preview(&a.summary_text(), 70)
        )?;
    }
    let added = par_in_order(md.added.len(), |k| {
        after.message(md.added[k]).map(|m| line(&m))
    });
    for l in added {
        writeln!(out, "+ {}", l?)?;
    }
    for ChannelChange {
        name,
        brief: (before, after),
        ..
    } in &r.channels
    {
        match (before, after) {
            (None, Some(a)) => writeln!(out, "+ channel {}: {}", one_line(name), for_terminal(a))?,
            (Some(b), None) => writeln!(out, "- channel {}: {}", one_line(name), for_terminal(b))?,
            (Some(b), Some(a)) => writeln!(
                out,
                "~ channel {}: {} → {}",
                one_line(name),
                for_terminal(b),
                for_terminal(a)
            )?,
            (None, None) => {}
        }
    }
    Ok(())
}

/// The `diff` JSON document; its message arrays are placeholders, streamed in their place
/// (see [`write_streamed`]).
#[derive(Serialize)]
struct DiffDoc<'a> {
    thread_id: &'a str,
    from: Option<&'a str>,
    to: &'a str,
    messages: MessagesDoc,
    channels: Vec<ChannelDoc<'a>>,
}

/// The `messages` part of [`DiffDoc`]: the counts before and after, and the placeholders of
/// the arrays of messages added, removed and changed.
#[derive(Serialize)]
struct MessagesDoc {
    before: usize,
    after: usize,
    added: String,
    removed: String,
    changed: String,
}

/// A channel that changed, in [`DiffDoc`].
#[derive(Serialize)]
struct ChannelDoc<'a> {
    channel: &'a str,
    before: &'a Json,
    after: &'a Json,
}

/// A message whose content changed, an element of `messages.changed`: its id, and its
/// `model_dump()` before and after.
#[derive(Serialize)]
struct ChangedDoc {
    id: Option<String>,
    before: Json,
    after: Json,
}

fn render_json(out: &mut dyn Write, format: Format, r: &DiffReport) -> Result<()> {
    let (before, after, md) = (r.before, r.after, &r.messages);
    let doc = serde_json::to_value(DiffDoc {
        thread_id: r.thread_id,
        from: r.from,
        to: r.to,
        messages: MessagesDoc {
            before: before.len(),
            after: after.len(),
            added: placeholder(0),
            removed: placeholder(1),
            changed: placeholder(2),
        },
        channels: r
            .channels
            .iter()
            .map(|c| ChannelDoc {
                channel: &c.name,
                before: &c.before,
                after: &c.after,
            })
            .collect(),
    })?;
    let dump = |m: Message| Json::Object(m.fields);
    let added = par_in_order(md.added.len(), move |k| {
        element_bytes(format, &dump(after.message(md.added[k])?))
    });
    let removed = par_in_order(md.removed.len(), move |k| {
        element_bytes(format, &dump(before.message(md.removed[k])?))
    });
    let changed = par_in_order(md.changed.len(), move |k| {
        let (i, j) = md.changed[k];
        let b = after.message(j)?;
        let id = b.id().map(str::to_owned);
        element_bytes(
            format,
            &ChangedDoc {
                id,
                before: dump(before.message(i)?),
                after: dump(b),
            },
        )
    });
    let arrays: Vec<Box<dyn Iterator<Item = Result<Vec<u8>>>>> =
        vec![Box::new(added), Box::new(removed), Box::new(changed)];
    write_streamed(out, format, &doc, arrays)
}
