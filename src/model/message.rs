//! A typed view over stored LangChain messages.
//!
//! Messages reach a checkpoint in three shapes:
//! - msgpack ext 5 (pydantic v2) `[module, class, model_dump, method]` — the normal case;
//! - plain dicts such as `{"role": "user", "content": "hi"}` in pending writes (what the app
//!   passed to `invoke`), coerced the way `langchain_core`'s `convert_to_messages` does;
//! - the legacy LangChain JSON constructor `{"lc": 1, "type": "constructor", "id": [..], "kwargs": {..}}`.
//!
//! Each becomes a [`Message`] whose `fields` are exactly what `message.model_dump()` returns.

use serde_json::{Map as JsonMap, Value as Json};

use crate::codec::{ext, json::to_json, Value};

/// The kind of a message (its `type`, without the chunk suffix).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Kind {
    /// `HumanMessage`: what the user said.
    Human,
    /// `AIMessage`: what the model said (text and tool calls).
    Ai,
    /// `SystemMessage`: instructions.
    System,
    /// `ToolMessage`: a tool's answer to a tool call.
    Tool,
    /// `ChatMessage`: a message with a free-form role.
    Chat,
    /// `FunctionMessage`: the legacy OpenAI function result.
    Function,
    /// `RemoveMessage`: an instruction to the `add_messages` reducer.
    Remove,
}

impl Kind {
    /// The `type` string LangChain uses (`human`, `ai`, …).
    pub fn type_str(self) -> &'static str {
        match self {
            Kind::Human => "human",
            Kind::Ai => "ai",
            Kind::System => "system",
            Kind::Tool => "tool",
            Kind::Chat => "chat",
            Kind::Function => "function",
            Kind::Remove => "remove",
        }
    }

    /// The class name of the non-chunk message.
    pub fn class_name(self) -> &'static str {
        match self {
            Kind::Human => "HumanMessage",
            Kind::Ai => "AIMessage",
            Kind::System => "SystemMessage",
            Kind::Tool => "ToolMessage",
            Kind::Chat => "ChatMessage",
            Kind::Function => "FunctionMessage",
            Kind::Remove => "RemoveMessage",
        }
    }

    /// The module LangChain defines the class in.
    pub fn module(self) -> &'static str {
        match self {
            Kind::Human => "langchain_core.messages.human",
            Kind::Ai => "langchain_core.messages.ai",
            Kind::System => "langchain_core.messages.system",
            Kind::Tool => "langchain_core.messages.tool",
            Kind::Chat => "langchain_core.messages.chat",
            Kind::Function => "langchain_core.messages.function",
            Kind::Remove => "langchain_core.messages.modifier",
        }
    }

    /// The kind named by a class name such as `AIMessageChunk`; the flag says "chunk".
    pub fn from_class(class: &str) -> Option<(Kind, bool)> {
        let (base, chunk) = match class.strip_suffix("Chunk") {
            Some(b) => (b, true),
            None => (class, false),
        };
        let kind = match base {
            "HumanMessage" => Kind::Human,
            "AIMessage" => Kind::Ai,
            "SystemMessage" => Kind::System,
            "ToolMessage" => Kind::Tool,
            "ChatMessage" => Kind::Chat,
            "FunctionMessage" => Kind::Function,
            "RemoveMessage" if !chunk => Kind::Remove,
            _ => return None,
        };
        Some((kind, chunk))
    }

    /// The kind named by a dict message's `role` / `type` (`user`, `assistant`, `developer`…).
    pub fn from_role(role: &str) -> Option<Kind> {
        Some(match role {
            "human" | "user" => Kind::Human,
            "ai" | "assistant" => Kind::Ai,
            "system" | "developer" => Kind::System,
            "tool" => Kind::Tool,
            "function" => Kind::Function,
            "remove" => Kind::Remove,
            "chat" => Kind::Chat,
            _ => return None,
        })
    }

    /// The label `pretty_print()` puts in a message banner.
    pub fn banner(self) -> &'static str {
        match self {
            Kind::Human => "Human Message",
            Kind::Ai => "Ai Message",
            Kind::System => "System Message",
            Kind::Tool => "Tool Message",
            Kind::Chat => "Chat Message",
            Kind::Function => "Function Message",
            Kind::Remove => "Remove Message",
        }
    }
}

/// Where a message was read from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Source {
    /// A msgpack ext object (pydantic v1 or v2).
    Object,
    /// A plain dict (`{"role": .., "content": ..}`), as apps pass them to `invoke`.
    Dict,
    /// LangChain's legacy JSON constructor form.
    LegacyJson,
}

/// A LangChain message as `model_dump()` shows it.
#[derive(Debug, Clone)]
pub struct Message {
    /// Which kind of message.
    pub kind: Kind,
    /// True for the `*Chunk` classes.
    pub chunk: bool,
    /// The field dictionary, in LangChain's order.
    pub fields: JsonMap<String, Json>,
    /// The shape it was stored in.
    pub source: Source,
}

/// The fields of a message class in `model_dump()` order, with their defaults.
fn field_defaults(kind: Kind, chunk: bool) -> Vec<(&'static str, Json)> {
    let mut f: Vec<(&'static str, Json)> = vec![
        ("content", Json::String(String::new())),
        ("additional_kwargs", Json::Object(JsonMap::new())),
        ("response_metadata", Json::Object(JsonMap::new())),
        ("type", Json::Null),
        ("name", Json::Null),
        ("id", Json::Null),
    ];
    match kind {
        Kind::Ai => {
            f.push(("tool_calls", Json::Array(vec![])));
            f.push(("invalid_tool_calls", Json::Array(vec![])));
            f.push(("usage_metadata", Json::Null));
            if chunk {
                f.push(("tool_call_chunks", Json::Array(vec![])));
                f.push(("chunk_position", Json::Null));
            }
        }
        Kind::Tool => {
            f.push(("tool_call_id", Json::Null));
            f.push(("artifact", Json::Null));
            f.push(("status", Json::String("success".into())));
        }
        Kind::Chat => f.push(("role", Json::Null)),
        _ => {}
    }
    f
}

/// Builds the `model_dump()` dictionary from keyword arguments, filling defaults in order.
fn normalize(kind: Kind, chunk: bool, mut kwargs: JsonMap<String, Json>) -> JsonMap<String, Json> {
    let type_value = if chunk {
        format!("{}Chunk", kind.class_name())
    } else {
        kind.type_str().to_owned()
    };
    let mut out = JsonMap::new();
    for (name, default) in field_defaults(kind, chunk) {
        let v = kwargs.remove(name).unwrap_or(default);
        let v = if name == "type" {
            Json::String(type_value.clone())
        } else {
            v
        };
        out.insert(name.to_owned(), v);
    }
    // Tool calls are always rebuilt as {name, args, id, type} by AIMessage validation.
    if let Some(Json::Array(calls)) = out.get_mut("tool_calls") {
        for call in calls.iter_mut() {
            if let Json::Object(c) = call {
                let mut ordered = JsonMap::new();
                for key in ["name", "args", "id"] {
                    ordered.insert(key.to_owned(), c.remove(key).unwrap_or(Json::Null));
                }
                ordered.insert("type".into(), Json::String("tool_call".into()));
                *c = ordered;
            }
        }
    }
    out.extend(kwargs);
    out
}

impl Message {
    /// Reads a message stored as a msgpack value (an ext object or a dict).
    /// Returns `None` when the value is not a message.
    pub fn from_value(v: &Value) -> Option<Message> {
        match v {
            Value::Ext(e) => {
                if e.code != ext::PYDANTIC_V2 && e.code != ext::PYDANTIC_V1 {
                    return None;
                }
                let (module, class) = ext::type_path(e)?;
                if !module.starts_with("langchain_core.messages") {
                    return None;
                }
                let (kind, chunk) = Kind::from_class(class)?;
                let Json::Object(fields) = to_json(ext::argument(e)?) else {
                    return None;
                };
                Some(Message {
                    kind,
                    chunk,
                    fields,
                    source: Source::Object,
                })
            }
            Value::Map(_) => Message::from_json(&to_json(v)),
            _ => None,
        }
    }

    /// Reads a message from JSON: a dict message or LangChain's constructor form.
    pub fn from_json(j: &Json) -> Option<Message> {
        let obj = j.as_object()?;
        if obj.get("lc").is_some() && obj.get("type").and_then(Json::as_str) == Some("constructor")
        {
            let class = obj.get("id")?.as_array()?.last()?.as_str()?;
            let (kind, chunk) = Kind::from_class(class)?;
            let kwargs = obj
                .get("kwargs")
                .and_then(Json::as_object)
                .cloned()
                .unwrap_or_default();
            let fields = normalize(kind, chunk, kwargs);
            return Some(Message {
                kind,
                chunk,
                fields,
                source: Source::LegacyJson,
            });
        }
        Message::from_dict(obj)
    }

    /// Coerces a dict message the way `convert_to_messages` does (role first, then type;
    /// unknown keys go to `additional_kwargs`).
    fn from_dict(obj: &JsonMap<String, Json>) -> Option<Message> {
        let mut rest = obj.clone();
        let role = match rest.remove("role") {
            Some(Json::String(r)) => r,
            Some(_) => return None,
            None => match rest.remove("type") {
                Some(Json::String(t)) => t,
                _ => return None,
            },
        };
        let kind = Kind::from_role(&role)?;
        let content = match rest.remove("content") {
            Some(Json::Null) => Json::String(String::new()),
            Some(c) => c,
            None => return None,
        };
        let mut kwargs = JsonMap::new();
        kwargs.insert("content".into(), content);
        let mut extra = match rest.remove("additional_kwargs") {
            Some(Json::Object(m)) => m,
            _ => JsonMap::new(),
        };
        if role == "developer" {
            extra.insert("__openai_role__".into(), Json::String("developer".into()));
        }
        let mut lifted = vec![
            "name",
            "tool_call_id",
            "id",
            "tool_calls",
            "response_metadata",
        ];
        if kind == Kind::Tool {
            lifted.extend(["artifact", "status"]);
        }
        for key in lifted {
            if let Some(v) = rest.remove(key) {
                kwargs.insert(key.into(), v);
            }
        }
        extra.extend(rest);
        kwargs.insert("additional_kwargs".into(), Json::Object(extra));
        if let Some(Json::Array(calls)) = kwargs.get_mut("tool_calls") {
            for call in calls.iter_mut() {
                openai_tool_call_to_langchain(call);
            }
        }
        let fields = normalize(kind, false, kwargs);
        Some(Message {
            kind,
            chunk: false,
            fields,
            source: Source::Dict,
        })
    }

    /// The class name (`AIMessageChunk` for chunks).
    pub fn class_name(&self) -> String {
        if self.chunk {
            format!("{}Chunk", self.kind.class_name())
        } else {
            self.kind.class_name().to_owned()
        }
    }

    /// The message id, if it has one.
    pub fn id(&self) -> Option<&str> {
        self.fields.get("id").and_then(Json::as_str)
    }

    /// The `name` field, if set.
    pub fn name(&self) -> Option<&str> {
        self.fields.get("name").and_then(Json::as_str)
    }

    /// The `content` field (a string or a list of blocks).
    pub fn content(&self) -> &Json {
        self.fields.get("content").unwrap_or(&Json::Null)
    }

    /// The readable text: a string content, or the text of string and `text` blocks joined.
    pub fn text(&self) -> String {
        match self.content() {
            Json::String(s) => s.clone(),
            Json::Array(blocks) => blocks
                .iter()
                .filter_map(|b| match b {
                    Json::String(s) => Some(s.as_str()),
                    Json::Object(o) if o.get("type").and_then(Json::as_str) == Some("text") => {
                        o.get("text").and_then(Json::as_str)
                    }
                    _ => None,
                })
                .collect::<Vec<_>>()
                .join("\n"),
            _ => String::new(),
        }
    }

    /// The text for one-line views: the text, or the tool calls when there is no text.
    pub fn summary_text(&self) -> String {
        let text = self.text();
        if text.is_empty() && !self.tool_calls().is_empty() {
            let names: Vec<&str> = self
                .tool_calls()
                .iter()
                .filter_map(|c| c.get("name").and_then(Json::as_str))
                .collect();
            format!("(tool calls: {})", names.join(", "))
        } else {
            text
        }
    }

    /// What a person calls the message, for `--match`: its text, then each tool call's name
    /// and JSON arguments (valid and invalid calls), one per line.
    pub fn searchable_text(&self) -> String {
        let mut out = self.text();
        for key in ["tool_calls", "invalid_tool_calls"] {
            let calls = self.fields.get(key).and_then(Json::as_array);
            for call in calls.into_iter().flatten() {
                if let Some(name) = call.get("name").and_then(Json::as_str) {
                    out.push('\n');
                    out.push_str(name);
                }
                match call.get("args") {
                    Some(Json::String(a)) => {
                        out.push('\n');
                        out.push_str(a);
                    }
                    Some(a @ (Json::Object(_) | Json::Array(_))) => {
                        out.push('\n');
                        out.push_str(&a.to_string());
                    }
                    _ => {}
                }
            }
        }
        out
    }

    /// Every piece of text the message carries that a purge must leave nowhere in the file:
    /// its text, the string blocks and string values inside its content, and every string
    /// inside its tool calls' arguments. Ids, names and type tags are not included.
    pub fn private_strings(&self) -> Vec<String> {
        fn leaves(v: &Json, out: &mut Vec<String>) {
            match v {
                Json::String(s) => out.push(s.clone()),
                Json::Array(a) => a.iter().for_each(|x| leaves(x, out)),
                Json::Object(o) => o
                    .iter()
                    .filter(|(k, _)| !matches!(k.as_str(), "type" | "id" | "index"))
                    .for_each(|(_, x)| leaves(x, out)),
                _ => {}
            }
        }
        let mut out = vec![self.text()];
        leaves(self.content(), &mut out);
        for key in ["tool_calls", "invalid_tool_calls"] {
            let calls = self.fields.get(key).and_then(Json::as_array);
            for call in calls.into_iter().flatten() {
                if let Some(args) = call.get("args") {
                    leaves(args, &mut out);
                }
            }
        }
        out.retain(|s| !s.trim().is_empty());
        out.sort();
        out.dedup();
        out
    }

    /// The AI message's tool calls (`{name, args, id, type}`), empty for other kinds.
    pub fn tool_calls(&self) -> &[Json] {
        self.fields
            .get("tool_calls")
            .and_then(Json::as_array)
            .map_or(&[], Vec::as_slice)
    }

    /// The ids of this AI message's tool calls.
    pub fn tool_call_ids(&self) -> Vec<&str> {
        self.tool_calls()
            .iter()
            .filter_map(|c| c.get("id").and_then(Json::as_str))
            .collect()
    }

    /// The tool call this ToolMessage answers.
    pub fn tool_call_id(&self) -> Option<&str> {
        self.fields.get("tool_call_id").and_then(Json::as_str)
    }

    /// The provider-reported usage of an AI message.
    pub fn usage_metadata(&self) -> Option<&JsonMap<String, Json>> {
        self.fields.get("usage_metadata").and_then(Json::as_object)
    }
}

/// Turns an OpenAI-format tool call `{id, type: "function", function: {name, arguments}}` into
/// LangChain's `{name, args, id, type: "tool_call"}` (what `convert_to_messages` does).
fn openai_tool_call_to_langchain(call: &mut Json) {
    let Some(obj) = call.as_object() else { return };
    let Some(function) = obj.get("function").and_then(Json::as_object) else {
        return;
    };
    let name = function.get("name").cloned().unwrap_or(Json::Null);
    let args = match function.get("arguments") {
        Some(Json::String(s)) => serde_json::from_str(s).unwrap_or(Json::Object(JsonMap::new())),
        Some(other) => other.clone(),
        None => Json::Object(JsonMap::new()),
    };
    let id = obj.get("id").cloned().unwrap_or(Json::Null);
    *call = serde_json::json!({"name": name, "args": args, "id": id, "type": "tool_call"});
}

/// A message object as LangGraph stores it: ext 5 `[module, class, model_dump, method]`.
pub fn message_ext(module: &str, class: &str, fields: Value) -> Value {
    Value::ext(
        crate::codec::ext::PYDANTIC_V2,
        Value::array(vec![
            Value::str(module),
            Value::str(class),
            fields,
            Value::str("model_validate_json"),
        ]),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn dict_messages_are_coerced_like_langchain() {
        let m = Message::from_json(&json!({"role": "user", "content": "x", "foo": 1}))
            .expect("a message");
        assert_eq!(m.kind, Kind::Human);
        assert_eq!(
            Json::Object(m.fields),
            json!({"content": "x", "additional_kwargs": {"foo": 1}, "response_metadata": {},
                   "type": "human", "name": null, "id": null})
        );
        let dev = Message::from_json(&json!({"role": "developer", "content": "be brief"}))
            .expect("a message");
        assert_eq!(dev.kind, Kind::System);
        assert_eq!(
            dev.fields["additional_kwargs"]["__openai_role__"],
            "developer"
        );
        assert!(Message::from_json(&json!({"role": "alien", "content": "x"})).is_none());
    }

    #[test]
    fn openai_tool_calls_become_langchain_tool_calls() {
        let m = Message::from_json(&json!({"role": "assistant", "content": null, "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{\"a\": 1}"}}
        ]}))
        .expect("a message");
        assert_eq!(
            m.tool_calls(),
            [json!({"name": "f", "args": {"a": 1}, "id": "c1", "type": "tool_call"})]
        );
        assert_eq!(m.text(), "");
    }

    #[test]
    fn legacy_constructor_fills_defaults() {
        let m = Message::from_json(&json!({"lc": 1, "type": "constructor",
            "id": ["langchain", "schema", "messages", "ToolMessage"],
            "kwargs": {"content": "ok", "tool_call_id": "c1"}}))
        .expect("a message");
        let keys: Vec<&str> = m.fields.keys().map(String::as_str).collect();
        assert_eq!(
            keys,
            [
                "content",
                "additional_kwargs",
                "response_metadata",
                "type",
                "name",
                "id",
                "tool_call_id",
                "artifact",
                "status"
            ]
        );
        assert_eq!(m.fields["status"], "success");
    }
}
