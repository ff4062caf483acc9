//! `forget`: what erasing one person's data from the whole database takes, as pure functions
//! unit-tested without a database: which threads go whole (`--thread`, `--meta`), what
//! `--match` finds in a thread's stored rows (the messages to remove, with their tool-call
//! partners, and the text to redact elsewhere: see [`crate::ops::purge::Scrub`]), which
//! strings the verification searches for afterwards and what its hits mean, and the receipt,
//! which never holds the erased text itself (SHA-256 digests stand in for it).

use std::collections::BTreeSet;

use serde::Serialize;
use serde_json::Value as Json;
use sha2::Digest;

use anyhow::{bail, Result};

use crate::codec::msgpack::Value;
use crate::model::Message;
use crate::ops::edit::{plan, Editable, Planned};
use crate::ops::find::MetaCondition;
use crate::ops::outcome::{Outcome, Status};
use crate::ops::patterns::Patterns;
use crate::ops::purge::Scrub;
use crate::ops::remove::{select_with, Selector};
use crate::storage::{Deleted, Leftover};

/// Erased strings shorter than this are not searched for afterwards: they occur by chance
/// (the same floor as `rm --purge`).
pub const MIN_VERIFIED_LEN: usize = 4;

/// The SHA-256 of `text`, in hex: what a receipt shows instead of an erased string.
pub fn digest(text: &str) -> String {
    sha2::Sha256::digest(text.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// True when a thread belongs to the person `conditions` describe: each condition holds in
/// the metadata of one of its checkpoints (LangGraph copies the app's `configurable` keys
/// there) or in a channel of its latest state (`channel` gives a channel's value as JSON).
pub fn meta_selects(
    conditions: &[MetaCondition],
    metadata: &[Json],
    channel: &dyn Fn(&str) -> Option<Json>,
) -> bool {
    let mut held = vec![false; conditions.len()];
    for m in metadata {
        held_in_metadata(conditions, m, &mut held);
    }
    meta_selects_held(conditions, &held, channel)
}

/// Marks in `held` (one flag per condition) the conditions that hold in one checkpoint's
/// `metadata`: what [`meta_selects`] keeps of a thread's metadata, a checkpoint at a time.
pub fn held_in_metadata(conditions: &[MetaCondition], metadata: &Json, held: &mut [bool]) {
    for (c, h) in conditions.iter().zip(held.iter_mut()) {
        *h |= metadata.get(&c.key).is_some_and(|v| c.matches(v));
    }
}

/// [`meta_selects`] from the flags [`held_in_metadata`] set over a thread's checkpoints (a
/// missing flag is a condition the metadata does not hold).
pub fn meta_selects_held(
    conditions: &[MetaCondition],
    held: &[bool],
    channel: &dyn Fn(&str) -> Option<Json>,
) -> bool {
    !conditions.is_empty()
        && conditions.iter().enumerate().all(|(i, c)| {
            held.get(i).copied().unwrap_or(false) || channel(&c.key).is_some_and(|v| c.matches(&v))
        })
}

/// What `--match` found in one thread's stored rows (every namespace, every checkpoint and
/// pending write), and the scrub that erases it.
#[derive(Debug, Clone)]
pub struct Findings {
    /// The scrub: the matched messages (by id, or by text for the plain dicts an app passed
    /// to `invoke`), their tool calls and tool-call partners, and the pattern, redacted in
    /// every other string value.
    pub scrub: Scrub,
    /// The matched messages, distinct (by id, or by text).
    pub messages: BTreeSet<String>,
    /// String values outside messages that hold a match (counted per row they are in).
    pub strings: usize,
    /// Rows (checkpoints and writes) that hold a match.
    pub rows: usize,
    /// Every text the patterns matched (each pattern's own matches, and the merged stretch
    /// the redaction erased where matches overlap or touch): each must be gone afterwards.
    pub matched: BTreeSet<String>,
    /// Where the pattern matches and memctl changes nothing (metadata, rows it cannot
    /// decode), for the report.
    pub untouched: Vec<String>,
}

impl Findings {
    /// Nothing found yet, for `patterns` (`forget --match` and `rm --match --purge`: one;
    /// `export --redact`: any number, see [`Patterns`]).
    pub fn new(patterns: Patterns) -> Findings {
        Findings {
            scrub: Scrub {
                redact: Some(patterns),
                ..Scrub::default()
            },
            messages: BTreeSet::new(),
            strings: 0,
            rows: 0,
            matched: BTreeSet::new(),
            untouched: Vec::new(),
        }
    }

    /// The patterns.
    fn pattern(&self) -> Option<&Patterns> {
        self.scrub.redact.as_ref()
    }

    /// True when the thread holds nothing that matches.
    pub fn is_empty(&self) -> bool {
        self.rows == 0 && self.untouched.is_empty()
    }

    /// Looks through one decoded row: a checkpoint (its channel values) or a pending write's
    /// value (`checkpoint` false). Returns true when it holds a match.
    pub fn visit(&mut self, v: &Value, checkpoint: bool) -> bool {
        let target = if checkpoint {
            match v.get("channel_values") {
                Some(values) => values,
                None => return false,
            }
        } else {
            v
        };
        let (messages, strings) = (self.messages.len(), self.strings);
        let before = self.matched.len();
        let hit = self.walk(target);
        let found = hit || self.messages.len() > messages || self.strings > strings;
        if found || self.matched.len() > before {
            self.rows += 1;
        }
        found
    }

    /// Looks through a checkpoint's metadata (JSON, which memctl never rewrites): notes every
    /// key, string and number the pattern matches, as its decoded text (JSON may hold it
    /// escaped), so that the verification looks for it. Returns true when one does.
    pub fn visit_metadata(&mut self, metadata: &Json) -> bool {
        match metadata {
            Json::String(s) => self.note_matches(s),
            Json::Number(n) => self.note_matches(&n.to_string()),
            Json::Array(items) => items
                .iter()
                .fold(false, |hit, v| self.visit_metadata(v) | hit),
            Json::Object(fields) => fields.iter().fold(false, |hit, (k, v)| {
                self.note_matches(k) | self.visit_metadata(v) | hit
            }),
            Json::Null | Json::Bool(_) => false,
        }
    }

    /// Notes a place the pattern matches that memctl leaves as it is.
    pub fn untouched(&mut self, place: String) {
        self.untouched.push(place);
    }

    /// Notes what has to go of `text` (every pattern's own matches and the merged stretch
    /// the redaction erases, see [`Patterns::note_matches`]); true when a pattern matches.
    fn note_matches(&mut self, text: &str) -> bool {
        let Some(p) = self.scrub.redact.as_ref() else {
            return false;
        };
        let matched = &mut self.matched;
        p.note_matches(text, &mut |t| {
            if !matched.contains(t) {
                matched.insert(t.to_owned());
            }
        })
    }

    fn walk(&mut self, v: &Value) -> bool {
        if let Some(m) = Message::from_value(v) {
            if self.note_matches(&m.searchable_text()) {
                let key = match m.id() {
                    Some(id) => format!("id:{id}"),
                    None => format!("text:{}", m.text()),
                };
                self.messages.insert(key);
                self.scrub.add(&m);
                return true;
            }
            // Other strings of the message (kwargs, metadata) are redacted as any string.
            return self.walk_fields(v);
        }
        match v {
            Value::Str(s) => {
                let hit = self.note_matches(&s.text);
                if hit {
                    self.strings += 1;
                }
                hit
            }
            _ => self.walk_fields(v),
        }
    }

    /// The values inside `v`, as [`crate::ops::purge::redact`] visits them.
    fn walk_fields(&mut self, v: &Value) -> bool {
        let mut hit = false;
        match v {
            Value::Array(a) => {
                for x in &a.items {
                    hit |= self.walk(x);
                }
            }
            Value::Map(m) => {
                for (k, x) in &m.entries {
                    if k.as_str()
                        .is_none_or(|k| !crate::ops::purge::is_structural(k))
                    {
                        hit |= self.walk(x);
                    }
                }
            }
            Value::Ext(e) => {
                if let Value::Array(a) = &e.payload {
                    for x in a.items.iter().skip(2) {
                        hit |= self.walk(x);
                    }
                }
            }
            _ => {}
        }
        hit
    }

    /// The strings the verification searches for: the texts the pattern matched (each must
    /// be gone), and the other strings of the removed messages (gone unless the database
    /// keeps them elsewhere, e.g. a tool argument like `Paris` in another conversation).
    pub fn verify_strings(&self) -> (Vec<String>, Vec<String>) {
        let must: Vec<String> = self.matched.iter().cloned().collect();
        let removed = self
            .scrub
            .private
            .iter()
            .filter(|s| !self.matched.contains(*s))
            .cloned()
            .collect();
        (must, removed)
    }
}

/// Plans `--match` on one thread from what [`Findings`] found in its rows: the latest state
/// loses the matched messages (by id, and whatever else the pattern matches there) with their
/// tool-call partners, an update appended as `rm --purge` appends it, and the thread's
/// history is scrubbed in the same transaction; when the latest state keeps every message,
/// the history alone is scrubbed in place (a DeltaChannel thread still gets a new checkpoint
/// holding its list as a snapshot, see `ops::edit::plan`). Vacuum and verification are the caller's, once
/// for the run. No database access.
pub fn plan_match(ed: &Editable, found: &Findings, dry_run: bool) -> Result<Planned> {
    let n = ed.outline.len();
    let Some(pattern) = found.pattern().cloned() else {
        bail!("forget --match planned without a pattern");
    };
    if found.rows == 0 {
        return Ok(Planned::nothing_to_write(Outcome {
            notes: vec![
                "the pattern matches only where memctl changes nothing (see the report)".into(),
            ],
            ..Outcome::skipped(&ed.thread_id, String::new())
        }));
    }
    let ids: Vec<String> = ed
        .outline
        .iter()
        .filter_map(|m| m.id.clone())
        .filter(|id| found.scrub.ids.contains(id))
        .collect();
    let selector = Selector {
        ids,
        pattern: Some(pattern),
        ..Selector::default()
    };
    let removal = select_with(&ed.outline, &selector, |i| {
        Ok(ed.message(i)?.searchable_text())
    })?;
    // A tool-call partner the history scrub would remove goes from the latest state too.
    let keep: Vec<usize> = (0..n).filter(|i| !removal.remove.contains(i)).collect();
    let scrub = (!dry_run).then(|| found.scrub.clone());
    let mut planned = plan(ed, &keep, removal.notes, dry_run, scrub)?;
    let history = format!(
        "matching messages in its history: {}; matching strings outside messages: {}",
        found.messages.len(),
        found.strings
    );
    planned.outcome.notes.push(history);
    scrub_history_only(ed, &mut planned, found, dry_run);
    planned.defer_checks = true;
    Ok(planned)
}

/// Adds every string the messages inside `v` carry (see [`Message::private_strings`]) to
/// `out`: what a deleted thread's rows held, searched for after the deletion.
pub fn message_strings(v: &Value, out: &mut BTreeSet<String>) {
    if let Some(m) = Message::from_value(v) {
        out.extend(m.private_strings());
        return;
    }
    match v {
        Value::Array(a) => a.items.iter().for_each(|x| message_strings(x, out)),
        Value::Map(m) => m.entries.iter().for_each(|(_, x)| message_strings(x, out)),
        Value::Ext(e) => message_strings(&e.payload, out),
        _ => {}
    }
}

/// One string the verification searched for, and where it was still found.
#[derive(Debug, Clone, Serialize)]
pub struct Hit {
    /// SHA-256 of the string (never the string).
    pub sha256: String,
    /// Rows that hold it (thread and checkpoint named).
    pub rows: Vec<String>,
    /// Files that hold it outside any row (free pages, WAL frames).
    pub raw: Vec<String>,
}

/// What the verification found.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Verification {
    /// What was searched (the file and its `-wal`, or every row on a server).
    pub searched: Vec<String>,
    /// Strings searched for.
    pub strings: usize,
    /// Erased strings too short to search for (under [`MIN_VERIFIED_LEN`] bytes).
    pub too_short: usize,
    /// Strings that must be gone and were found: the erasure is not complete.
    pub remaining: Vec<Hit>,
    /// Strings of removed messages that other, kept content holds too (not a failure: the
    /// pattern did not match that content), counted.
    pub shared_with_kept: usize,
    /// True when nothing that must be gone was found.
    pub clean: bool,
}

pub use crate::model::stored_text::{row_holds_text, rows_hold_texts};

/// Classifies the leftovers of a search (`store.find_leftovers` with no purged thread, so
/// every row hit is an "other thread"): a hit of a `must` string anywhere, or of a `removed`
/// string outside any row, is a remaining string; a `removed` string in rows is shared with
/// kept content.
pub fn classify(
    must: &[String],
    removed: &[String],
    leftovers: &[Leftover],
    searched: Vec<String>,
    too_short: usize,
) -> Verification {
    let mut v = Verification {
        searched,
        strings: must.len() + removed.len(),
        too_short,
        ..Verification::default()
    };
    for left in leftovers {
        let rows: Vec<String> = left
            .in_thread
            .iter()
            .chain(&left.other_threads)
            .cloned()
            .collect();
        let hit = Hit {
            sha256: digest(&left.text),
            rows: rows.clone(),
            raw: left.raw.clone(),
        };
        if must.contains(&left.text) {
            if !(hit.rows.is_empty() && hit.raw.is_empty()) {
                v.remaining.push(hit);
            }
        } else if !left.raw.is_empty() {
            // Outside every row (free space): a leftover, whatever kept rows also hold it.
            v.remaining.push(Hit {
                rows: vec![],
                ..hit
            });
        } else if !rows.is_empty() {
            v.shared_with_kept += 1;
        }
    }
    v.clean = v.remaining.is_empty();
    v
}

/// The strings of `texts` long enough to search for, and how many were too short.
pub fn searchable(texts: impl IntoIterator<Item = String>) -> (Vec<String>, usize) {
    let (long, short): (Vec<String>, Vec<String>) =
        texts.into_iter().partition(|s| s.len() >= MIN_VERIFIED_LEN);
    (long, short.len())
}

/// What the person asked to be forgotten, as digests.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Request {
    /// SHA-256 of each `--thread` id.
    pub threads_sha256: Vec<String>,
    /// Each `--meta KEY=VALUE`: the key, and the SHA-256 of the value.
    pub meta: Vec<MetaDigest>,
    /// `--match`: the SHA-256 of the pattern, and how it was matched.
    pub pattern: Option<PatternDigest>,
}

/// A `--meta` condition in a receipt.
#[derive(Debug, Clone, Serialize)]
pub struct MetaDigest {
    /// The key (`user_id`…): a name of the app's schema, not the person's data.
    pub key: String,
    /// SHA-256 of the value.
    pub value_sha256: String,
}

/// A `--match` pattern in a receipt.
#[derive(Debug, Clone, Serialize)]
pub struct PatternDigest {
    /// SHA-256 of the pattern as given.
    pub sha256: String,
    /// A regular expression (else a literal).
    pub regex: bool,
    /// Matched without regard to case.
    pub ignore_case: bool,
}

impl Request {
    /// The digests of a request.
    pub fn new(
        threads: &[String],
        meta: &[MetaCondition],
        pattern: Option<(&str, bool, bool)>,
    ) -> Request {
        Request {
            threads_sha256: threads.iter().map(|t| digest(t)).collect(),
            meta: meta
                .iter()
                .map(|c| MetaDigest {
                    key: c.key.clone(),
                    value_sha256: digest(&c.value),
                })
                .collect(),
            pattern: pattern.map(|(p, regex, ignore_case)| PatternDigest {
                sha256: digest(p),
                regex,
                ignore_case,
            }),
        }
    }
}

/// What `--match` changed.
#[derive(Debug, Clone, Copy, Default, Serialize)]
pub struct Scrubbed {
    /// Threads whose rows were scrubbed.
    pub threads: u64,
    /// Messages removed from latest states (with their tool-call partners).
    pub messages_removed_from_latest: u64,
    /// Distinct messages the pattern matched anywhere in the history.
    pub messages_matched: u64,
    /// String values outside messages where the match was replaced by `[erased]`.
    pub strings_redacted: u64,
    /// Stored rows (checkpoints, writes) that held a match, all rewritten in place.
    pub rows_with_matches: u64,
    /// New checkpoints appended (a thread's latest state without the removed messages).
    pub checkpoints_appended: u64,
}

/// A thread memctl left alone or could not finish, and why (the thread stays in the
/// database: its id is no erased text).
#[derive(Debug, Clone, Serialize)]
pub struct Reported {
    /// The thread.
    pub thread_id: String,
    /// Why.
    pub reason: String,
}

/// What the space reclaim did.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Reclaim {
    /// SQLite: free pages overwritten with zeros in short transactions (an app writing
    /// beside memctl is not locked out), then the WAL checkpointed and truncated.
    /// `None`: not done (a dry run, a server backend, or the WAL could not be truncated).
    pub free_pages_zeroed: Option<u64>,
    /// A `VACUUM` ran. SQLite: only when a removed text was still in a freed part of a page
    /// after the zeroing (it holds the write lock while it rebuilds the file); Postgres:
    /// always, `VACUUM (ANALYZE)`, which does not block writers.
    pub vacuumed: bool,
    /// The database size before and after (SQLite: the file; Postgres: the tables).
    pub bytes_before: u64,
    /// After.
    pub bytes_after: u64,
    /// What memctl cannot reach (stated, not checked).
    pub out_of_reach: Vec<String>,
}

/// The parts of a request that matched nothing: a typo in an erasure request (a thread id,
/// a `--meta` value, a pattern) must be noticed, not reported as a clean erasure.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Unmatched {
    /// SHA-256 of each `--thread` id that is not in the database.
    pub absent_threads_sha256: Vec<String>,
    /// `--meta` was given and selected no thread.
    pub meta_selected_nothing: bool,
    /// `--match` was given and matched no text in any thread (deleted ones included).
    pub pattern_matched_nothing: bool,
}

impl Unmatched {
    /// True when some part of the request matched nothing.
    pub fn any(&self) -> bool {
        !self.absent_threads_sha256.is_empty()
            || self.meta_selected_nothing
            || self.pattern_matched_nothing
    }

    /// True when every part of `request` matched nothing: nothing was (or would be) done.
    pub fn all(&self, request: &Request) -> bool {
        self.absent_threads_sha256.len() == request.threads_sha256.len()
            && (request.meta.is_empty() || self.meta_selected_nothing)
            && (request.pattern.is_none() || self.pattern_matched_nothing)
    }

    /// What matched nothing, for a person (`absent` names the absent thread ids).
    pub fn describe(&self, absent: &[String]) -> Vec<String> {
        let mut out = Vec::new();
        if !absent.is_empty() {
            let ids: Vec<String> = absent.iter().map(|t| format!("'{t}'")).collect();
            out.push(format!(
                "{} not in the database: {}",
                if absent.len() == 1 {
                    "thread"
                } else {
                    "threads"
                },
                ids.join(", ")
            ));
        }
        if self.meta_selected_nothing {
            out.push("--meta selected no thread".into());
        }
        if self.pattern_matched_nothing {
            out.push("--match matched no text".into());
        }
        out
    }
}

/// The receipt of a `forget` run: what was asked (as digests), what was deleted and
/// scrubbed, what was reported instead, the reclaim and the verification. It names threads
/// by the SHA-256 of their id (the deleted ones are gone; their ids may be personal data),
/// except the threads it reports, which are still there.
#[derive(Debug, Clone, Serialize)]
pub struct Receipt {
    /// `memctl forget`.
    pub receipt: &'static str,
    /// memctl's version.
    pub memctl_version: &'static str,
    /// When the run finished (UTC, RFC 3339).
    pub timestamp: String,
    /// `sqlite` or `postgres`.
    pub backend: &'static str,
    /// A dry run: nothing was written.
    pub dry_run: bool,
    /// What was asked.
    pub request: Request,
    /// The parts of the request that matched nothing.
    pub unmatched: Unmatched,
    /// SHA-256 of each deleted thread's id.
    pub deleted_threads_sha256: Vec<String>,
    /// Row counts of the deleted threads.
    pub deleted: Deleted,
    /// What `--match` changed.
    pub scrubbed: Scrubbed,
    /// SHA-256 of each thread `--match` scrubbed.
    pub scrubbed_threads_sha256: Vec<String>,
    /// Threads left alone or not finished, and why.
    pub reported: Vec<Reported>,
    /// Where the pattern matches and memctl changes nothing (counted per kind of place).
    pub untouched: Vec<String>,
    /// The space reclaim.
    pub reclaim: Reclaim,
    /// The verification (`None` in a dry run).
    pub verification: Option<Verification>,
    /// The LangGraph Store's part (absent when the database has no store).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub store: Option<StoreErased>,
}

/// What `forget` deleted from the LangGraph Store (long-term memory): whole items, as
/// `store.delete` deletes them, with their vectors. Namespaces and keys by digest (a
/// namespace often holds a user id).
#[derive(Debug, Clone, Default, Serialize)]
pub struct StoreErased {
    /// Items deleted (in a dry run: that would be).
    pub items: u64,
    /// Bytes of their values.
    pub bytes: u64,
    /// Rows of `store_vectors` (their embeddings) that went with them.
    pub vectors: u64,
    /// Of the items, those `--meta` selected (a namespace label, or a top-level key of the
    /// value).
    pub selected_by_meta: u64,
    /// Of the items, those whose value `--match` matched.
    pub selected_by_match: u64,
    /// Each deleted item, by digest.
    pub items_sha256: Vec<ItemDigest>,
    /// Selected items the app rewrote (or deleted) between the selection and the deletion:
    /// left alone (a rewritten item the request still selects makes the verification fail).
    pub left_alone: u64,
}

/// A store item in a receipt.
#[derive(Debug, Clone, Serialize)]
pub struct ItemDigest {
    /// SHA-256 of its namespace as stored (labels joined with `.`).
    pub namespace_sha256: String,
    /// SHA-256 of its key.
    pub key_sha256: String,
}

impl Receipt {
    /// True when every part of the request matched nothing (nothing to do).
    pub fn matched_nothing(&self) -> bool {
        self.unmatched.all(&self.request)
    }

    /// True when a run leaves something it was asked to erase: a thread reported (left
    /// alone, or not finished) or a place the pattern matches that memctl does not change. A
    /// dry run knows this before anything is written; the real run will not be clean.
    pub fn leaves_something(&self) -> bool {
        !self.reported.is_empty() || !self.untouched.is_empty()
    }

    /// True when the run did everything it was asked and the verification is clean.
    pub fn complete(&self) -> bool {
        !self.leaves_something() && self.verification.as_ref().is_some_and(|v| v.clean)
    }
}

/// When the latest state keeps every message and only older checkpoints, writes or other
/// channels hold a match, the plan becomes a scrub of the history in place at the latest
/// checkpoint (`forget --match` and `rm --match --purge` alike).
pub fn scrub_history_only(ed: &Editable, planned: &mut Planned, found: &Findings, dry_run: bool) {
    if planned.update.is_none() && planned.outcome.status == Status::Unchanged {
        if dry_run {
            planned.outcome.status = Status::WouldRewrite;
        } else {
            planned.outcome.status = Status::Planned;
            planned.purge = Some(found.scrub.clone());
            planned.scrub_at = Some(ed.latest.row.checkpoint_id.clone());
        }
    }
}

/// `rm --match --purge`: the plan of `plan` (made with `found.scrub`, so that the history
/// scrub also removes the messages the pattern matched in older checkpoints and redacts it in
/// every other string, as `forget --match` does) extended to what the pattern matched in the
/// thread's history (`found`: see [`Findings`]). When the latest state
/// keeps every message and only older checkpoints, writes or other channels (a summary,
/// `additional_kwargs`) hold a match, the history is scrubbed in place. Every text the pattern
/// matched is searched for afterwards. A match only where memctl changes nothing (metadata, a
/// row that does not decode) fails the thread, naming the places, with nothing written.
pub fn plan_history_purge(
    ed: &Editable,
    mut planned: Planned,
    found: &Findings,
    dry_run: bool,
) -> Planned {
    if found.rows == 0 {
        if !found.untouched.is_empty() && planned.update.is_none() {
            planned.outcome.status = Status::Failed;
            planned.outcome.notes.push(format!(
                "the pattern matches only where memctl changes nothing, so it would stay: {}; nothing was written",
                found.untouched.join("; ")
            ));
        }
        return planned;
    }
    for place in &found.untouched {
        planned
            .outcome
            .notes
            .push(format!("the pattern stays in {place}"));
    }
    planned.outcome.notes.push(format!(
        "matching messages in its history: {}; matching strings outside messages: {}",
        found.messages.len(),
        found.strings
    ));
    let (must, _) = searchable(found.verify_strings().0);
    for text in must {
        if !planned.verify.contains(&text) {
            planned.verify.push(text);
        }
    }
    scrub_history_only(ed, &mut planned, found, dry_run);
    planned
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::codec::json::json_to_value;
    use regex::Regex;
    use serde_json::json;

    fn findings(pattern: &str) -> Findings {
        Findings::new(Patterns::one(Regex::new(pattern).expect("compiles")))
    }

    #[test]
    fn metadata_is_matched_on_its_decoded_strings_keys_and_numbers() {
        let mut f = findings(r#"call me "Ally"|42|nick"#);
        let metadata = json!({"source": "update", "nickname": "call me \"Ally\" please",
                              "writes": [{"user_id": 42}], "step": 3, "ok": true});
        assert!(f.visit_metadata(&metadata));
        let matched: Vec<&str> = f.matched.iter().map(String::as_str).collect();
        assert_eq!(matched, ["42", "call me \"Ally\"", "nick"]);
        let mut none = findings("Bob");
        assert!(!none.visit_metadata(&metadata));
        assert!(none.matched.is_empty());
    }

    #[test]
    fn the_verification_and_the_redaction_agree_on_structure() {
        for k in crate::model::stored_text::STRUCTURAL_KEYS {
            assert!(crate::ops::purge::is_structural(k), "{k}");
        }
        for k in ["content", "summary", "text", "args", "response_metadata"] {
            assert!(!crate::ops::purge::is_structural(k), "{k}");
        }
        // A type tag, a key, a class name are structure; a text value is not.
        let v = crate::codec::json::json_to_value(&json!({"messages": [
            {"type": "human", "content": "hi meta", "id": "human-1",
             "response_metadata": {"model_name": "m"}}]}));
        let bytes = crate::codec::msgpack::encode(&v);
        assert_eq!(
            rows_hold_texts(
                "msgpack",
                &bytes,
                &["human", "response_meta", "meta", "model_name"]
            ),
            [false, false, true, false]
        );
        assert!(
            row_holds_text("msgpack", b"\xc1 human", "human"),
            "undecodable counts"
        );
        assert!(row_holds_text("pickle", b"human", "human"));
        assert!(!row_holds_text(
            "json",
            br#"{"source": "loop", "human": 1}"#,
            "human"
        ));
        assert!(row_holds_text("json", br#"{"user": "a human"}"#, "human"));
    }

    #[test]
    fn digests_are_sha256_hex() {
        assert_eq!(
            digest("abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
    }

    #[test]
    fn meta_selects_by_metadata_or_state() {
        let c = vec![MetaCondition::parse("user_id=42").expect("parses")];
        let none = |_: &str| None;
        assert!(meta_selects(&c, &[json!({"user_id": 42})], &none));
        assert!(meta_selects(
            &c,
            &[json!({"step": 1}), json!({"user_id": "42"})],
            &none
        ));
        assert!(!meta_selects(&c, &[json!({"user_id": 7})], &none));
        let state = |k: &str| (k == "user_id").then(|| json!("42"));
        assert!(meta_selects(&c, &[json!({})], &state));
        assert!(!meta_selects(&[], &[json!({"user_id": 42})], &none));
    }

    #[test]
    fn finds_matching_messages_dict_inputs_and_strings_elsewhere() {
        let mut f = findings(r"Elm Street \d+");
        let checkpoint = json_to_value(&json!({"channel_values": {
            "messages": [
                {"type": "human", "content": "I live at Elm Street 12", "id": "h1"},
                {"type": "ai", "content": "", "id": "a1", "tool_calls": [
                    {"name": "geo", "args": {"q": "Elm Street 12"}, "id": "c1", "type": "tool_call"}]},
                {"type": "tool", "content": "52.1,4.3", "tool_call_id": "c1", "id": "t1"},
                {"type": "human", "content": "hello", "id": "h2"},
            ],
            "summary": "The user lives at Elm Street 12.",
            "count": 3,
        }}));
        assert!(f.visit(&checkpoint, true));
        assert_eq!(f.messages.len(), 2, "{:?}", f.messages);
        assert_eq!(f.strings, 1);
        assert_eq!(f.rows, 1);
        assert_eq!(
            f.matched.iter().collect::<Vec<_>>(),
            ["Elm Street 12"],
            "each match once"
        );
        // The plain dict input an app passed to invoke, in a write row.
        let input = json_to_value(
            &json!({"messages": [{"role": "user", "content": "Elm Street 99 please"}]}),
        );
        assert!(f.visit(&input, false));
        assert!(f.scrub.texts.contains("Elm Street 99 please"));
        assert!(!f.visit(&json_to_value(&json!({"x": "nothing"})), false));
        assert_eq!(f.rows, 2);

        // The scrub removes the matched messages and their partner (the tool answer) and
        // redacts the summary; the kept message stays.
        let mut cp = checkpoint.clone();
        assert!(f.scrub.scrub_checkpoint(&mut cp));
        let out = crate::codec::json::to_json(&cp);
        let ids: Vec<&str> = out["channel_values"]["messages"]
            .as_array()
            .expect("list")
            .iter()
            .filter_map(|m| m["id"].as_str())
            .collect();
        assert_eq!(ids, ["h2"]);
        assert_eq!(
            out["channel_values"]["summary"],
            "The user lives at [erased]."
        );
        assert!(!out.to_string().contains("Elm Street"));
        // Verified: the match must go; the removed messages' other strings may be shared.
        let (must, removed) = f.verify_strings();
        assert_eq!(must, ["Elm Street 12", "Elm Street 99"]);
        assert!(removed.contains(&"I live at Elm Street 12".to_owned()));
    }

    #[test]
    fn the_scrub_erases_what_the_verification_searches_for() {
        // Matches that touch are one erased stretch, and each text that went is searched for.
        let mut f = findings(r"\d{4}");
        let v = json_to_value(&json!({"summary": "card 12345678, pin 0000"}));
        assert!(f.visit(&v, false));
        let mut w = v.clone();
        assert!(f.scrub.scrub_write(&mut w));
        assert_eq!(
            crate::codec::json::to_json(&w),
            json!({"summary": "card [erased], pin [erased]"})
        );
        assert_eq!(f.verify_strings().0, ["0000", "1234", "12345678", "5678"]);
        // One pattern matches as `find` shows it: leftmost-first, the first alternative that
        // matches at a place wins (README: write the longer one first). What it erased is
        // what the verification looks for.
        let mut f = findings(r"ZQSECRET|ZQSECRET-\d+");
        let v = json_to_value(&json!({"summary": "password is ZQSECRET-3"}));
        assert!(f.visit(&v, false));
        let mut w = v.clone();
        assert!(f.scrub.scrub_write(&mut w));
        assert_eq!(
            crate::codec::json::to_json(&w),
            json!({"summary": "password is [erased]-3"})
        );
        assert_eq!(f.verify_strings().0, ["ZQSECRET"]);
        let mut f = findings(r"ZQSECRET(-\d+)?");
        assert!(f.visit(&v, false));
        let mut w = v.clone();
        assert!(f.scrub.scrub_write(&mut w));
        assert_eq!(
            crate::codec::json::to_json(&w),
            json!({"summary": "password is [erased]"})
        );
        assert_eq!(f.verify_strings().0, ["ZQSECRET-3"]);
    }

    #[test]
    fn redaction_leaves_structure_alone() {
        let mut f = findings("tools");
        let v = json_to_value(&json!({"name": "tools", "id": "tools", "note": "use tools"}));
        assert!(f.visit(&v, false));
        let mut w = v.clone();
        assert!(f.scrub.scrub_write(&mut w));
        let out = crate::codec::json::to_json(&w);
        assert_eq!(
            out,
            json!({"name": "tools", "id": "tools", "note": "use [erased]"})
        );
    }

    #[test]
    fn verification_fails_on_what_must_go_and_tolerates_shared_strings() {
        let must = vec!["Elm Street 12".to_owned()];
        let removed = vec!["Paris".to_owned(), "hunter2".to_owned()];
        let left = |text: &str, rows: &[&str], raw: &[&str]| Leftover {
            text: text.into(),
            in_thread: vec![],
            other_threads: rows.iter().map(|s| s.to_string()).collect(),
            raw: raw.iter().map(|s| s.to_string()).collect(),
        };
        let v = classify(&must, &removed, &[left("Paris", &["cp 1"], &[])], vec![], 0);
        assert!(v.clean);
        assert_eq!(v.shared_with_kept, 1);
        let v = classify(
            &must,
            &removed,
            &[left("hunter2", &[], &["db-wal"])],
            vec![],
            0,
        );
        assert!(!v.clean);
        let v = classify(
            &must,
            &removed,
            &[left("Elm Street 12", &["cp 2"], &[])],
            vec![],
            0,
        );
        assert!(!v.clean);
        assert_eq!(v.remaining[0].sha256, digest("Elm Street 12"));
        assert!(!serde_json::to_string(&v)
            .expect("serializes")
            .contains("Elm"));
        assert_eq!(
            searchable(["abcd".to_owned(), "ab".to_owned()]),
            (vec!["abcd".to_owned()], 1)
        );
    }
}
