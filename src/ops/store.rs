//! The LangGraph Store's namespaces as `store namespaces` shows them: split into labels, and
//! grouped to a depth the way `list_namespaces(max_depth=N)` groups them.

use std::collections::BTreeSet;

use regex::Regex;
use serde_json::Value as Json;

use crate::ops::find::MetaCondition;
use crate::storage::store::NamespaceSummary;

/// A namespace's labels, as LangGraph decodes the stored text (`prefix.split('.')`).
pub fn labels(prefix: &str) -> Labels {
    Labels(prefix.to_owned())
}

/// A namespace's labels, held as the stored text (joined with `.`): written as the list of
/// labels (JSON), ordered label by label, as a list of strings would be, without a string per
/// label (`store namespaces` writes hundreds of thousands of them).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Labels(String);

impl Labels {
    /// The labels, in order.
    pub fn iter(&self) -> std::str::Split<'_, char> {
        self.0.split('.')
    }

    /// The labels joined with `.`, as the store keeps them.
    pub fn joined(&self) -> &str {
        &self.0
    }
}

impl From<String> for Labels {
    fn from(prefix: String) -> Labels {
        Labels(prefix)
    }
}

impl Ord for Labels {
    fn cmp(&self, other: &Labels) -> std::cmp::Ordering {
        self.iter().cmp(other.iter())
    }
}

impl PartialOrd for Labels {
    fn partial_cmp(&self, other: &Labels) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl serde::Serialize for Labels {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq(self.iter())
    }
}

/// `summaries` (in namespace order) with every namespace cut to its first `depth` labels and
/// the ones that fall together added up (items, bytes, expired; the newest update), in the
/// order of the cut namespaces.
pub fn to_depth(summaries: Vec<NamespaceSummary>, depth: usize) -> Vec<NamespaceSummary> {
    let mut grouped: std::collections::BTreeMap<String, NamespaceSummary> = Default::default();
    for s in summaries {
        let cut: Vec<&str> = s.prefix.split('.').take(depth.max(1)).collect();
        let cut = cut.join(".");
        let entry = grouped
            .entry(cut.clone())
            .or_insert_with(|| NamespaceSummary {
                prefix: cut,
                items: 0,
                bytes: 0,
                expired: 0,
                newest_update: None,
            });
        entry.items += s.items;
        entry.bytes += s.bytes;
        entry.expired += s.expired;
        if s.newest_update > entry.newest_update {
            entry.newest_update = s.newest_update;
        }
    }
    grouped.into_values().collect()
}

/// Every text a store value holds, as `forget` and `find` match it: the object keys, string
/// values and numbers (as JSON prints them) of its JSON. A store value is the app's own data
/// through and through (no LangGraph structure in it), so keys count too. A value that is not
/// JSON counts whole, as text.
pub fn value_texts(value: &[u8]) -> Vec<String> {
    fn walk(v: &Json, out: &mut Vec<String>) {
        match v {
            Json::String(s) => out.push(s.clone()),
            Json::Number(n) => out.push(n.to_string()),
            Json::Array(a) => a.iter().for_each(|x| walk(x, out)),
            Json::Object(o) => o.iter().for_each(|(k, x)| {
                out.push(k.clone());
                walk(x, out);
            }),
            Json::Null | Json::Bool(_) => {}
        }
    }
    match serde_json::from_slice::<Json>(value) {
        Ok(j) => {
            let mut out = Vec::new();
            walk(&j, &mut out);
            out
        }
        Err(_) => vec![String::from_utf8_lossy(value).into_owned()],
    }
}

/// The string values of a store value (not its keys, not its numbers): what a deleted item
/// held, searched for afterwards in the bytes outside every row. A value that is not JSON
/// counts whole.
pub fn value_strings(value: &[u8]) -> Vec<String> {
    fn walk(v: &Json, out: &mut Vec<String>) {
        match v {
            Json::String(s) => out.push(s.clone()),
            Json::Array(a) => a.iter().for_each(|x| walk(x, out)),
            Json::Object(o) => o.values().for_each(|x| walk(x, out)),
            _ => {}
        }
    }
    match serde_json::from_slice::<Json>(value) {
        Ok(j) => {
            let mut out = Vec::new();
            walk(&j, &mut out);
            out
        }
        Err(_) => vec![String::from_utf8_lossy(value).into_owned()],
    }
}

/// For each of `texts`, true when the store value holds it inside one of its
/// [`value_texts`] (the value decoded once).
pub fn holds_texts(value: &[u8], texts: &[&str]) -> Vec<bool> {
    let all = value_texts(value);
    texts
        .iter()
        .map(|t| all.iter().any(|s| s.contains(t)))
        .collect()
}

/// The texts `re` matches in a store value's [`value_texts`] (empty: no match).
pub fn pattern_matches(value: &[u8], re: &Regex) -> BTreeSet<String> {
    value_texts(value)
        .iter()
        .flat_map(|s| {
            re.find_iter(s)
                .map(|m| m.as_str().to_owned())
                .collect::<Vec<_>>()
        })
        .collect()
}

/// True when every one of `conditions` holds for an item: its namespace carries the value as
/// a label (`--meta user_id=42` and `("memories", "42")`: the key is not stored in a
/// namespace), or its JSON value has the key at its top level with that value (as
/// `store.search(filter=...)` compares).
pub fn meta_selects_item(prefix: &str, value: &[u8], conditions: &[MetaCondition]) -> bool {
    // The value is decoded only when a condition's label is not in the namespace and the
    // value's bytes may hold it ([`may_hold`]): a byte search, not a JSON parse per item.
    let mut json: Option<Option<Json>> = None;
    !conditions.is_empty()
        && conditions.iter().all(|c| {
            prefix.split('.').any(|l| l == c.value)
                || (may_hold(value, c)
                    && json
                        .get_or_insert_with(|| serde_json::from_slice::<Json>(value).ok())
                        .as_ref()
                        .and_then(|j| j.get(&c.key))
                        .is_some_and(|v| c.matches(v)))
        })
}

/// False only when the JSON text `value` cannot have the key of `c` with its value: a text
/// without escapes (no `\`) holds its keys and strings as they are, so both must be in its
/// bytes; a number may be written otherwise than it prints (`1e2`, `0.19999999999999999999`),
/// so a numeric value is always decoded; `None` matches `null`.
fn may_hold(value: &[u8], c: &MetaCondition) -> bool {
    let has = |t: &str| memchr::memmem::find(value, t.as_bytes()).is_some();
    if value.contains(&b'\\') {
        return true;
    }
    if !has(&c.key) {
        return false;
    }
    has(&c.value) || (c.value == "None" && has("null")) || c.value.trim().parse::<f64>().is_ok()
}

/// True when namespace `prefix` carries the value of every one of `conditions` as a label.
pub fn namespace_carries(prefix: &str, conditions: &[MetaCondition]) -> bool {
    !conditions.is_empty()
        && conditions
            .iter()
            .all(|c| prefix.split('.').any(|l| l == c.value))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cond(s: &str) -> MetaCondition {
        MetaCondition::parse(s).expect("parses")
    }

    #[test]
    fn meta_selects_by_label_or_top_level_value() {
        let c = [cond("user_id=42")];
        assert!(meta_selects_item("memories.42", b"{}", &c));
        assert!(!meta_selects_item("memories.420", b"{}", &c));
        assert!(meta_selects_item("prefs", br#"{"user_id": 42}"#, &c));
        assert!(meta_selects_item("prefs", br#"{"user_id": "42"}"#, &c));
        assert!(!meta_selects_item(
            "prefs",
            br#"{"owner": {"user_id": 42}}"#,
            &c
        ));
        assert!(!meta_selects_item("prefs", br#"{"user_id": 7}"#, &c));
        // Written otherwise than it prints, or escaped: still decoded and compared.
        assert!(meta_selects_item(
            "prefs",
            br#"{"user_id": 4.2e1}"#,
            &[cond("user_id=42.0")]
        ));
        assert!(meta_selects_item(
            "prefs",
            br#"{"user_id": null}"#,
            &[cond("user_id=None")]
        ));
        assert!(meta_selects_item(
            "prefs",
            br#"{"user_\u0069d": "u-\u0034"}"#,
            &[cond("user_id=u-4")]
        ));
        assert!(!meta_selects_item(
            "prefs",
            br#"{"user_id": "u-5"}"#,
            &[cond("user_id=u-4")]
        ));
        assert!(!meta_selects_item("prefs", b"not json 42", &c));
        let both = [cond("user_id=42"), cond("org=acme")];
        assert!(meta_selects_item("acme.42", b"{}", &both));
        assert!(meta_selects_item("x.42", br#"{"org": "acme"}"#, &both));
        assert!(!meta_selects_item("x.42", b"{}", &both));
        assert!(!meta_selects_item("x.42", b"{}", &[]));
        assert!(namespace_carries("memories.42", &c));
        assert!(!namespace_carries("prefs", &c));
    }

    #[test]
    fn values_are_matched_on_keys_strings_and_numbers() {
        let v = br#"{"note": "call me \"Ally\"", "SECRET": [1, 42.5], "name": "Bob", "ok": true}"#;
        let re = Regex::new(r#"Ally|SECRET|42\.5|Bob|true"#).expect("compiles");
        let got: Vec<String> = pattern_matches(v, &re).into_iter().collect();
        assert_eq!(got, ["42.5", "Ally", "Bob", "SECRET"]);
        assert_eq!(
            holds_texts(v, &["me \"Al", "true", "note"]),
            [true, false, true]
        );
        assert_eq!(value_strings(v), ["call me \"Ally\"", "Bob"]);
        assert!(pattern_matches(b"\xff SECRET raw", &re).contains("SECRET"));
        assert!(pattern_matches(v, &Regex::new("Carol").expect("compiles")).is_empty());
    }

    fn ns(prefix: &str, items: u64, updated: &str) -> NamespaceSummary {
        NamespaceSummary {
            prefix: prefix.into(),
            items,
            bytes: items * 10,
            expired: 1,
            newest_update: Some(updated.into()),
        }
    }

    #[test]
    fn depth_groups_by_leading_labels() {
        let got = to_depth(
            vec![
                ns("prefs", 1, "2026-01-01T00:00:00+00:00"),
                ns("users", 1, "2026-01-02T00:00:00+00:00"),
                ns("users.u-42.memories", 3, "2026-01-05T00:00:00+00:00"),
                ns("users.u-42.profile", 1, "2026-01-03T00:00:00+00:00"),
                ns("users.u-7.memories", 2, "2026-01-04T00:00:00+00:00"),
            ],
            2,
        );
        let shown: Vec<(&str, u64, u64, u64, &str)> = got
            .iter()
            .map(|n| {
                (
                    n.prefix.as_str(),
                    n.items,
                    n.bytes,
                    n.expired,
                    n.newest_update.as_deref().unwrap_or(""),
                )
            })
            .collect();
        assert_eq!(
            shown,
            vec![
                ("prefs", 1, 10, 1, "2026-01-01T00:00:00+00:00"),
                ("users", 1, 10, 1, "2026-01-02T00:00:00+00:00"),
                ("users.u-42", 4, 40, 2, "2026-01-05T00:00:00+00:00"),
                ("users.u-7", 2, 20, 1, "2026-01-04T00:00:00+00:00"),
            ]
        );
    }

    #[test]
    fn labels_split_on_dots() {
        let of = |p: &str| labels(p).iter().map(str::to_owned).collect::<Vec<_>>();
        assert_eq!(of("users.u-42.memories"), ["users", "u-42", "memories"]);
        assert_eq!(of("prefs"), ["prefs"]);
        // Ordered label by label, as lists of labels are (not as the joined text).
        assert!(labels("a.b") < labels("a-b"));
        assert!("a.b" > "a-b");
        assert_eq!(
            serde_json::to_string(&labels("users.u-42")).expect("json"),
            r#"["users","u-42"]"#
        );
    }
}
