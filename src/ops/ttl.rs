//! `memctl ttl --config langgraph.json`: the TTL settings a LangGraph deployment declares in
//! its `langgraph.json`, read and checked (no database access). As the Agent Server documents
//! them: `checkpointer.ttl` has `strategy` (`"delete"`: the whole thread goes when it expires;
//! `"keep_latest"`: the thread and its latest checkpoint stay, older checkpoints go),
//! `default_ttl` (minutes) and `sweep_interval_minutes` (how often the server looks); `store.ttl`
//! has `default_ttl` (minutes, for new items), `refresh_on_read` and `sweep_interval_minutes`.

use anyhow::{bail, Context, Result};
use serde_json::Value as Json;

/// What to do with a thread whose TTL has passed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Strategy {
    /// Delete the whole thread (`prune`).
    Delete,
    /// Keep the thread and its latest checkpoint; delete older ones (`gc --keep-checkpoints 1`).
    KeepLatest,
}

impl Strategy {
    /// The name `langgraph.json` uses.
    pub fn name(self) -> &'static str {
        match self {
            Strategy::Delete => "delete",
            Strategy::KeepLatest => "keep_latest",
        }
    }
}

/// `checkpointer.ttl`.
#[derive(Debug, Clone, PartialEq)]
pub struct CheckpointerTtl {
    /// `strategy` (`delete` when absent, the documented default).
    pub strategy: Strategy,
    /// `default_ttl` in minutes (`None`: threads never expire, nothing to do).
    pub default_ttl: Option<f64>,
    /// `sweep_interval_minutes`: how often the server sweeps (for cron: the schedule).
    pub sweep_interval_minutes: Option<f64>,
}

/// `store.ttl`.
#[derive(Debug, Clone, PartialEq)]
pub struct StoreTtl {
    /// `default_ttl` in minutes: the TTL the app's `put` gives new items (stored in their
    /// `expires_at`; not applied to items written without one).
    pub default_ttl: Option<f64>,
    /// `sweep_interval_minutes`.
    pub sweep_interval_minutes: Option<f64>,
}

/// The TTL policy of a `langgraph.json`.
#[derive(Debug, Clone, PartialEq)]
pub struct Policy {
    /// `checkpointer.ttl`, if declared.
    pub checkpointer: Option<CheckpointerTtl>,
    /// `store.ttl`, if declared.
    pub store: Option<StoreTtl>,
}

impl Policy {
    /// The idle time after which a thread expires, in whole seconds (`None`: no thread TTL).
    pub fn thread_idle_seconds(&self) -> Option<i64> {
        let minutes = self.checkpointer.as_ref()?.default_ttl?;
        Some((minutes * 60.0).round() as i64)
    }
}

/// The longest TTL memctl applies, in minutes: 1,000 years. A longer one (`1e30`) cannot be
/// turned into a time to compare with, and was clamped without a word before.
pub const MAX_MINUTES: f64 = 1000.0 * 365.25 * 24.0 * 60.0;

fn minutes(obj: &Json, path: &str, key: &str) -> Result<Option<f64>> {
    match obj.get(key) {
        None | Some(Json::Null) => Ok(None),
        Some(v) => match v.as_f64() {
            Some(n) if n > MAX_MINUTES && n.is_finite() => bail!(
                "{path}.{key} is {v} minutes, longer than the 1,000 years memctl applies ({} minutes); nothing done (leave {key} out if nothing should expire)",
                MAX_MINUTES as u64
            ),
            Some(n) if n > 0.0 && n.is_finite() => Ok(Some(n)),
            _ => bail!("{path}.{key} must be a positive number of minutes, not {v}"),
        },
    }
}

/// Parses the text of a `langgraph.json`. Fails with one line on what is not JSON, a
/// `strategy` other than `delete` / `keep_latest`, a TTL that is not a positive number, or a
/// file that declares neither `checkpointer.ttl` nor `store.ttl`.
pub fn parse(text: &str) -> Result<Policy> {
    let doc: Json = serde_json::from_str(text).context("not JSON")?;
    let section = |name: &str| -> Result<Option<&Json>> {
        match doc.get(name).and_then(|s| s.get("ttl")) {
            None | Some(Json::Null) => Ok(None),
            Some(t) if t.is_object() => Ok(Some(t)),
            Some(t) => bail!("{name}.ttl must be an object, not {t}"),
        }
    };
    let checkpointer = match section("checkpointer")? {
        None => None,
        Some(t) => {
            let strategy = match t.get("strategy") {
                None | Some(Json::Null) => Strategy::Delete,
                Some(Json::String(s)) if s == "delete" => Strategy::Delete,
                Some(Json::String(s)) if s == "keep_latest" => Strategy::KeepLatest,
                Some(other) => bail!(
                    "checkpointer.ttl.strategy must be \"delete\" or \"keep_latest\", not {other}"
                ),
            };
            Some(CheckpointerTtl {
                strategy,
                default_ttl: minutes(t, "checkpointer.ttl", "default_ttl")?,
                sweep_interval_minutes: minutes(t, "checkpointer.ttl", "sweep_interval_minutes")?,
            })
        }
    };
    let store = match section("store")? {
        None => None,
        Some(t) => Some(StoreTtl {
            default_ttl: minutes(t, "store.ttl", "default_ttl")?,
            sweep_interval_minutes: minutes(t, "store.ttl", "sweep_interval_minutes")?,
        }),
    };
    if checkpointer.is_none() && store.is_none() {
        bail!("it declares no checkpointer.ttl and no store.ttl: nothing to apply");
    }
    Ok(Policy {
        checkpointer,
        store,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_documented_keys_are_read() {
        let p = parse(
            r#"{"graphs": {"agent": "./a.py:graph"},
                "checkpointer": {"ttl": {"strategy": "keep_latest", "sweep_interval_minutes": 60, "default_ttl": 43200}},
                "store": {"ttl": {"refresh_on_read": true, "sweep_interval_minutes": 120, "default_ttl": 10080}}}"#,
        )
        .expect("parses");
        let c = p.checkpointer.clone().expect("checkpointer");
        assert_eq!(c.strategy, Strategy::KeepLatest);
        assert_eq!(c.default_ttl, Some(43200.0));
        assert_eq!(p.thread_idle_seconds(), Some(43200 * 60));
        assert_eq!(p.store.expect("store").default_ttl, Some(10080.0));
        let d = parse(r#"{"checkpointer": {"ttl": {"default_ttl": 1.5}}}"#).expect("parses");
        assert_eq!(d.checkpointer.expect("c").strategy, Strategy::Delete);
        assert!(d.store.is_none());
        let none = parse(r#"{"store": {"ttl": {}}}"#).expect("parses");
        assert_eq!(none.thread_idle_seconds(), None);
    }

    #[test]
    fn bad_settings_are_one_line_errors() {
        for (text, says) in [
            ("{", "not JSON"),
            (r#"{"graphs": {}}"#, "nothing to apply"),
            (
                r#"{"checkpointer": {"ttl": {"strategy": "archive"}}}"#,
                "keep_latest",
            ),
            (
                r#"{"checkpointer": {"ttl": {"default_ttl": -5}}}"#,
                "positive",
            ),
            (
                r#"{"checkpointer": {"ttl": {"default_ttl": "30d"}}}"#,
                "positive",
            ),
            (r#"{"store": {"ttl": 5}}"#, "object"),
            (
                r#"{"checkpointer": {"ttl": {"default_ttl": 1e30}}}"#,
                "longer than the 1,000 years",
            ),
            (
                r#"{"store": {"ttl": {"default_ttl": 1e300}}}"#,
                "longer than the 1,000 years",
            ),
        ] {
            let e = format!("{:#}", parse(text).expect_err(text));
            assert!(e.contains(says), "{text}: {e}");
        }
    }
}
