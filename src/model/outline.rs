//! What a rewrite needs to know of each stored message, read in place from the checkpoint
//! blob: kind, id, tool-call links, approximate tokens, and where its bytes are. Building the
//! full [`Message`] view (every field as JSON) is left to the commands that read contents.

use std::ops::Range;

use super::approx;
use crate::codec::lazy::{self, Fields, Lazy, Spanned};
use crate::codec::{ext, msgpack};

use super::message::{Kind, Message};

/// What the window and tool-pairing rules look at in a message: implemented by the full
/// [`Message`] view and by the in-place [`Outline`].
pub trait Shape {
    /// The kind of message.
    fn kind(&self) -> Kind;
    /// True for the `*Chunk` classes.
    fn chunk(&self) -> bool;
    /// The ids of an AI message's tool calls (empty for other kinds).
    fn tool_call_ids(&self) -> Vec<&str>;
    /// The tool call a ToolMessage answers.
    fn tool_call_id(&self) -> Option<&str>;
    /// The message id.
    fn id(&self) -> Option<&str>;
}

impl Shape for Message {
    fn kind(&self) -> Kind {
        self.kind
    }
    fn chunk(&self) -> bool {
        self.chunk
    }
    fn tool_call_ids(&self) -> Vec<&str> {
        Message::tool_call_ids(self)
    }
    fn tool_call_id(&self) -> Option<&str> {
        Message::tool_call_id(self)
    }
    fn id(&self) -> Option<&str> {
        Message::id(self)
    }
}

/// One stored message of a message list, outlined. Two outlines are equal when they say the
/// same of their messages, however they were read.
#[derive(Debug, Clone)]
pub struct Outline {
    /// The kind of message.
    pub kind: Kind,
    /// True for the `*Chunk` classes.
    pub chunk: bool,
    /// The message id.
    pub id: Option<String>,
    /// The ids of an AI message's tool calls.
    pub tool_call_ids: Vec<String>,
    /// The tool call a ToolMessage answers.
    pub tool_call_id: Option<String>,
    /// LangChain's `count_tokens_approximately` of the message.
    pub approx_tokens: u64,
    /// Where the stored message sits in the blob it was read from.
    pub span: Range<usize>,
    /// How the preview is made (see [`Outline::preview`]).
    preview: PreviewFrom,
}

/// Where [`Outline::preview`] finds a message's preview.
#[derive(Debug, Clone)]
enum PreviewFrom {
    /// The message is read again through its full view (it was outlined that way).
    View,
    /// The message is read again in place.
    InPlace,
    /// The preview is these bytes of the blob: the head of the message's text content, cut
    /// where [`preview_of`] cuts it (a message whose content is one string, the usual case,
    /// is not read again for its preview).
    Text(Range<usize>),
    /// The preview itself: a message with no text, whose preview is empty or names its tool
    /// calls.
    Made(String),
}

impl PartialEq for Outline {
    fn eq(&self, other: &Outline) -> bool {
        // `preview` says how the preview is read, not what the outline says.
        self.kind == other.kind
            && self.chunk == other.chunk
            && self.id == other.id
            && self.tool_call_ids == other.tool_call_ids
            && self.tool_call_id == other.tool_call_id
            && self.approx_tokens == other.approx_tokens
            && self.span == other.span
    }
}

impl Eq for Outline {}

impl Shape for Outline {
    fn kind(&self) -> Kind {
        self.kind
    }
    fn chunk(&self) -> bool {
        self.chunk
    }
    fn tool_call_ids(&self) -> Vec<&str> {
        self.tool_call_ids.iter().map(String::as_str).collect()
    }
    fn tool_call_id(&self) -> Option<&str> {
        self.tool_call_id.as_deref()
    }
    fn id(&self) -> Option<&str> {
        self.id.as_deref()
    }
}

impl Outline {
    /// The outline of a full message view (for messages the in-place reader does not handle).
    pub fn of(m: &Message, span: Range<usize>) -> Outline {
        Outline {
            kind: m.kind,
            chunk: m.chunk,
            id: m.id().map(str::to_owned),
            tool_call_ids: m.tool_call_ids().into_iter().map(str::to_owned).collect(),
            tool_call_id: m.tool_call_id().map(str::to_owned),
            approx_tokens: approx::count_message(m),
            span,
            preview: PreviewFrom::View,
        }
    }

    /// The head of the text reports preview (the first [`PREVIEW_CHARS`] + 1 characters of the message's
    /// [`Message::summary_text`]), read from `blob`, the bytes the outline was made from, the
    /// way the outline was made. Made when asked for (a report lists the messages it removes,
    /// and a long thread's outlines would otherwise hold a preview of every message), from
    /// where the outline found it: the head of a text content in `blob`, the short preview of a
    /// message with no text, or the message read again.
    pub fn preview(&self, blob: &[u8]) -> String {
        match &self.preview {
            PreviewFrom::Text(head) => {
                if let Some(text) = blob
                    .get(head.clone())
                    .and_then(|b| std::str::from_utf8(b).ok())
                {
                    return text.to_owned();
                }
            }
            PreviewFrom::Made(p) => return p.clone(),
            PreviewFrom::View | PreviewFrom::InPlace => {}
        }
        let bytes = blob.get(self.span.clone()).unwrap_or_default();
        if !matches!(self.preview, PreviewFrom::View) {
            if let Some(p) = lazy::root(bytes)
                .ok()
                .and_then(|item| preview_in_place(&item))
            {
                return p;
            }
        }
        msgpack::decode(bytes)
            .ok()
            .and_then(|v| Message::from_value(&v))
            .map_or_else(String::new, |m| preview_of(&m.summary_text()))
    }
}

/// Outlines every message of the stored list at `list` in `blob`; `None` when an item is not
/// a message. Ext-object messages (the normal case) are read in place; others (dicts, legacy
/// JSON) through the full view.
pub fn outline_list(blob: &[u8], list: Range<usize>) -> Option<Vec<Outline>> {
    let Lazy::Array(items) = lazy::read(blob, list.start).ok()?.value else {
        return None;
    };
    // Every item is walked first (as `items()` does), so a list cut short outlines nothing.
    let items = items.spans().collect::<Result<Vec<_>, _>>().ok()?;
    let mut out = Vec::with_capacity(items.len());
    for (item, span) in &items {
        let outline = match in_place(item, span.clone(), blob) {
            Some(o) => o,
            None => {
                let raw = blob.get(span.clone())?;
                Outline::of(
                    &Message::from_value(&msgpack::decode(raw).ok()?)?,
                    span.clone(),
                )
            }
        };
        out.push(outline);
    }
    Some(out)
}

/// Reads the class and `model_dump` fields of an ext-object LangChain message in place:
/// `(kind, chunk, fields)`, or `None` for anything else.
pub fn read_message<'a>(item: &Spanned<'a>) -> Option<(Kind, bool, Fields<'a>)> {
    let Lazy::Ext(code, payload) = item.value else {
        return None;
    };
    if code != ext::PYDANTIC_V2 && code != ext::PYDANTIC_V1 {
        return None;
    }
    // [module, class, fields, method]: the fields map is the last part read, so it is
    // walked only once, by `fields()`.
    let Lazy::Array(parts) = lazy::root(payload).ok()?.value else {
        return None;
    };
    let mut parts = parts.iter();
    let module = parts.next()?.ok()?.as_str()?;
    let class = parts.next()?.ok()?.as_str()?;
    if !module.starts_with("langchain_core.messages") {
        return None;
    }
    let (kind, chunk) = Kind::from_class(class)?;
    let Lazy::Map(fields) = parts.next()?.ok()?.value else {
        return None;
    };
    Some((kind, chunk, fields.fields().ok()?))
}

/// The tool calls of a message read in place: how many, their ids and their names.
type CallsInPlace<'a> = (usize, Vec<&'a str>, Vec<&'a str>);

/// Reads the `tool_calls` of a message's fields in place; `None` for calls it does not read.
fn tool_calls_in_place<'a>(fields: &Fields<'a>) -> Option<CallsInPlace<'a>> {
    let mut ids = Vec::new();
    let mut names = Vec::new();
    let mut n = 0;
    if let Some(calls) = fields.get("tool_calls") {
        if let Lazy::Array(_) = calls.value {
            let calls = calls.items().ok()??;
            n = calls.len();
            for call in calls {
                let Lazy::Map(call) = call.value else {
                    continue;
                };
                let call = call.fields().ok()?;
                ids.extend(call.get("id").and_then(|v| v.as_str()));
                names.extend(call.get("name").and_then(|v| v.as_str()));
            }
        }
    }
    Some((n, ids, names))
}

/// Outlines an ext-object LangChain message of `blob` without building its view.
fn in_place(item: &Spanned<'_>, span: Range<usize>, blob: &[u8]) -> Option<Outline> {
    let (kind, chunk, fields) = read_message(item)?;
    let text = |key: &str| fields.get(key).and_then(|v| v.as_str()).map(str::to_owned);
    let (calls_n, ids, names) = tool_calls_in_place(&fields)?;
    // The preview is made when a report asks for it, but a message whose preview does not
    // read in place is outlined through its view, as a whole. Content that is one non-empty
    // string is its own preview's text: where its head sits in the blob is kept.
    let content = fields.get("content");
    let preview = match content.map(|c| c.value) {
        Some(Lazy::Str(s)) if !s.is_empty() => match offset_in(blob, s.as_bytes()) {
            Some(at) => PreviewFrom::Text(at..at + preview_head(s).len()),
            None => PreviewFrom::InPlace,
        },
        // No text: the preview is empty or names the tool calls, a short string, kept.
        Some(Lazy::Str(_) | Lazy::Nil) | None => {
            PreviewFrom::Made(summary_preview(content, calls_n, &names)?)
        }
        _ => {
            summary_preview(content, calls_n, &names)?;
            PreviewFrom::InPlace
        }
    };
    Some(Outline {
        kind,
        chunk,
        id: text("id"),
        tool_call_ids: ids.into_iter().map(str::to_owned).collect(),
        tool_call_id: text("tool_call_id"),
        approx_tokens: approx::count_fields(kind, &fields)?,
        span,
        preview,
    })
}

/// Where `part`, a slice borrowed from `whole`, starts in it (`None` when it is not part of
/// it).
fn offset_in(whole: &[u8], part: &[u8]) -> Option<usize> {
    let at = (part.as_ptr() as usize).checked_sub(whole.as_ptr() as usize)?;
    (at.checked_add(part.len())? <= whole.len()).then_some(at)
}

/// The preview of an ext-object message read in place, as [`in_place`] reads it.
fn preview_in_place(item: &Spanned<'_>) -> Option<String> {
    let (_, _, fields) = read_message(item)?;
    let (calls_n, _, names) = tool_calls_in_place(&fields)?;
    summary_preview(fields.get("content"), calls_n, &names)
}

/// [`Message::summary_text`] of a message read in place, as a preview: its text (plain or
/// text blocks), else the names of its tool calls. `None` for content it does not read.
fn summary_preview(
    content: Option<Spanned<'_>>,
    calls: usize,
    tool_names: &[&str],
) -> Option<String> {
    let text = match content.map(|c| c.value) {
        Some(Lazy::Str(s)) if !s.is_empty() => return Some(preview_of(s)),
        Some(Lazy::Str(_)) => String::new(),
        Some(Lazy::Array(_)) => {
            let mut parts = Vec::new();
            for block in content?.items().ok()?? {
                match block.value {
                    Lazy::Str(s) => parts.push(s),
                    Lazy::Map(b) => {
                        let b = b.fields().ok()?;
                        if b.get("type").and_then(|t| t.as_str()) == Some("text") {
                            parts.extend(b.get("text").and_then(|t| t.as_str()));
                        }
                    }
                    _ => {}
                }
            }
            parts.join("\n")
        }
        Some(Lazy::Nil) | None => String::new(),
        Some(_) => return None,
    };
    if text.is_empty() && calls > 0 {
        return Some(preview_of(&format!(
            "(tool calls: {})",
            tool_names.join(", ")
        )));
    }
    Some(preview_of(&text))
}

/// Characters of the one-line preview of each message that reports show.
pub const PREVIEW_CHARS: usize = 60;

/// The head of a text that a preview of [`PREVIEW_CHARS`] characters is made from (one
/// character more, so the preview knows it was cut). Raw text: the output layer makes the
/// preview safe for a terminal.
fn preview_of(text: &str) -> String {
    preview_head(text).to_owned()
}

/// The part of `text` that [`preview_of`] keeps.
fn preview_head(text: &str) -> &str {
    match text.char_indices().nth(PREVIEW_CHARS + 1) {
        Some((end, _)) => &text[..end],
        None => text,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::codec::msgpack::encode;
    use crate::codec::Value;
    use crate::model::message::message_ext;

    /// Previews made on demand from the blob equal the full view's, in place or not.
    #[test]
    fn previews_read_in_place_equal_the_views() {
        let s = |t: &str| Value::str(t);
        let msg = |class: &str, kind: &str, content: Value, calls: Vec<Value>| {
            let mut f = vec![
                (s("content"), content),
                (s("additional_kwargs"), Value::map(vec![])),
                (s("response_metadata"), Value::map(vec![])),
                (s("type"), s(kind)),
                (s("name"), Value::Nil),
                (s("id"), s("x")),
            ];
            if kind == "ai" {
                f.push((s("tool_calls"), Value::array(calls)));
            }
            message_ext("langchain_core.messages.x", class, Value::map(f))
        };
        let call = |name: &str| {
            Value::map(vec![
                (s("name"), s(name)),
                (s("args"), Value::map(vec![(s("q"), s("v"))])),
                (s("id"), s("c1")),
                (s("type"), s("tool_call")),
            ])
        };
        let long = "word ".repeat(40);
        let cjk = "数据库🙂e\u{301}".repeat(30);
        let list = Value::array(vec![
            msg("HumanMessage", "human", s("hello\nthere"), vec![]),
            msg("HumanMessage", "human", s(&long), vec![]),
            msg(
                "AIMessage",
                "ai",
                s(""),
                vec![call("get_weather"), call("add")],
            ),
            msg(
                "AIMessage",
                "ai",
                Value::array(vec![
                    s("plain block"),
                    Value::map(vec![(s("type"), s("text")), (s("text"), s("a text block"))]),
                    Value::map(vec![(s("type"), s("image_url"))]),
                ]),
                vec![],
            ),
            // Content the in-place reader leaves to the view (a number).
            msg("HumanMessage", "human", Value::int(7), vec![]),
            // A dict message, read through the view.
            Value::map(vec![
                (s("role"), s("user")),
                (s("content"), s("from a dict")),
            ]),
            // Multi-byte characters across the cut (CJK, emoji, a combining mark).
            msg("HumanMessage", "human", s(&cjk), vec![]),
        ]);
        let blob = encode(&list);
        let outlines = outline_list(&blob, 0..blob.len()).expect("outlined");
        assert_eq!(outlines.len(), 7);
        let items = list.as_array().expect("a list");
        for (o, item) in outlines.iter().zip(items) {
            let view = Message::from_value(item).expect("a message");
            assert_eq!(o.preview(&blob), preview_of(&view.summary_text()));
        }
        assert!(matches!(outlines[0].preview, PreviewFrom::Text(_)));
        assert!(matches!(outlines[2].preview, PreviewFrom::Made(_)));
        assert!(matches!(outlines[3].preview, PreviewFrom::InPlace));
        assert!(matches!(outlines[4].preview, PreviewFrom::View));
        assert!(matches!(outlines[5].preview, PreviewFrom::View));
        assert!(matches!(outlines[6].preview, PreviewFrom::Text(_)));
        assert_eq!(outlines[2].preview(&blob), "(tool calls: get_weather, add)");
    }
}
