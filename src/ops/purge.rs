//! Scrubbing removed messages out of older checkpoints and writes (`rm --purge`).
//!
//! A message is matched by id; a message without an id (the plain dict an app passes to
//! `invoke`, e.g. `{"role": "user", "content": "..."}`, as it sits in the `writes` table) is
//! matched by its text.

use std::collections::HashSet;

use crate::codec::msgpack::{Array, Value};
use crate::model::Message;

/// What to scrub.
#[derive(Debug, Default, Clone)]
pub struct Scrub {
    /// Ids of the removed messages.
    pub ids: HashSet<String>,
    /// Texts of the removed messages (for id-less dict messages).
    pub texts: HashSet<String>,
}

impl Scrub {
    /// True when `v` is one of the removed messages.
    pub fn matches(&self, v: &Value) -> bool {
        let Some(m) = Message::from_value(v) else {
            return false;
        };
        match m.id() {
            Some(id) => self.ids.contains(id),
            None => {
                let text = m.text();
                !text.is_empty() && self.texts.contains(&text)
            }
        }
    }

    /// Removes matching messages wherever they sit in `v`: items of lists (at any depth, e.g.
    /// the `{"messages": [...]}` input held by `__start__`), or `v` itself (replaced by an empty
    /// list). Message objects are not searched inside. Returns true when something changed.
    pub fn scrub_list(&self, v: &mut Value) -> bool {
        if self.matches(v) {
            *v = Value::Array(Array {
                items: vec![],
                marker: None,
            });
            return true;
        }
        self.scrub_inside(v)
    }

    fn scrub_inside(&self, v: &mut Value) -> bool {
        match v {
            Value::Array(a) => {
                let before = a.items.len();
                a.items.retain(|item| !self.matches(item));
                let mut changed = a.items.len() != before;
                for item in a.items.iter_mut() {
                    changed |= self.scrub_inside(item);
                }
                changed
            }
            Value::Map(m) => {
                let mut changed = false;
                for (_, val) in m.entries.iter_mut() {
                    changed |= self.scrub_list(val);
                }
                changed
            }
            Value::Ext(_) if Message::from_value(v).is_none() => {
                let Value::Ext(e) = v else { return false };
                self.scrub_inside(&mut e.payload)
            }
            _ => false,
        }
    }

    /// Scrubs every channel of a decoded checkpoint. Returns true when something changed.
    pub fn scrub_checkpoint(&self, root: &mut Value) -> bool {
        let Some(values) = root.get_mut("channel_values") else {
            return false;
        };
        self.scrub_inside(values)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::codec::msgpack::{decode, encode};
    use crate::model::checkpoint::json_to_value;
    use serde_json::json;

    #[test]
    fn scrubs_by_id_and_dicts_by_text() {
        let s = Scrub {
            ids: ["m2".to_owned()].into_iter().collect(),
            texts: ["my secret is hunter2".to_owned()].into_iter().collect(),
        };
        let mut list = json_to_value(&json!([
            {"role": "user", "content": "hello", "id": "m1"},
            {"role": "user", "content": "my secret is hunter2"},
            {"role": "assistant", "content": "noted", "id": "m2"},
            {"role": "assistant", "content": "my secret is hunter2", "id": "m9"},
        ]));
        assert!(s.scrub_list(&mut list));
        let left: Vec<String> = list
            .as_array()
            .expect("list")
            .iter()
            .filter_map(|v| Message::from_value(v).and_then(|m| m.id().map(str::to_owned)))
            .collect();
        assert_eq!(
            left,
            ["m1", "m9"],
            "id-bearing messages are matched by id only"
        );
        let mut single = json_to_value(&json!({"role": "user", "content": "my secret is hunter2"}));
        assert!(s.scrub_list(&mut single));
        assert_eq!(encode(&single), [0x90]);
        let mut untouched = decode(&[0x91, 0x01]).expect("decodes");
        assert!(!s.scrub_list(&mut untouched));
    }
}
