//! The plan of a copy (`copy`, `copy --at`, `export`, `migrate`): which rows of a thread go,
//! and what changes in them on the way. Checkpoint ids, parents, blobs and write values are
//! kept as they are stored (encrypted ones too); only the thread id changes, and with it the
//! metadata's `thread_id` where an app stored one (LangGraph keeps `thread_id` out of the
//! metadata it writes, `EXCLUDED_METADATA_KEYS`, but older versions and apps passing it in
//! `config["metadata"]` did store it).

use std::collections::HashSet;

use anyhow::{bail, Result};
use regex::Regex;
use serde::Serialize;
use serde_json::Value as Json;

use crate::codec::msgpack::{self, Value};
use crate::ops::forget::Findings;
use crate::ops::patterns::Patterns;
use crate::ops::purge::{is_structural, redact};
use crate::storage::{CheckpointRow, ThreadRow, ThreadRows, ThreadWrite};

/// What a copy writes, counted.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct CopyCounts {
    /// Checkpoint rows.
    pub checkpoints: u64,
    /// Namespaces they are in (the root namespace and subgraphs).
    pub namespaces: u64,
    /// Pending-write rows.
    pub writes: u64,
    /// Checkpoints whose metadata named the source thread and now names the target.
    pub metadata_rewritten: u64,
    /// Checkpoints whose DeltaChannel values were written in full (`--materialize`).
    #[serde(skip_serializing_if = "is_zero")]
    pub materialized: u64,
    /// Encrypted values written decrypted (`--key-env` without `--new-key-env`).
    #[serde(skip_serializing_if = "is_zero")]
    pub values_decrypted: u64,
    /// Values written under the new key (`--new-key-env`): plain ones encrypted, encrypted
    /// ones opened with the old key and encrypted again.
    #[serde(skip_serializing_if = "is_zero")]
    pub values_encrypted: u64,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

impl CopyCounts {
    /// Adds `other` (totals of several threads; `namespaces` sums each thread's).
    pub fn add(&mut self, other: &CopyCounts) {
        self.checkpoints += other.checkpoints;
        self.namespaces += other.namespaces;
        self.writes += other.writes;
        self.metadata_rewritten += other.metadata_rewritten;
        self.materialized += other.materialized;
        self.values_decrypted += other.values_decrypted;
        self.values_encrypted += other.values_encrypted;
    }
}

/// The rows a copy writes, and their counts.
#[derive(Debug, Clone)]
pub struct CopyPlan {
    /// The rows, ready for [`crate::storage::CheckpointStore::write_thread`].
    pub rows: ThreadRows,
    /// Their counts.
    pub counts: CopyCounts,
}

/// Plans the copy of thread `from` (its rows `source`) as thread `to`; with `at`, a fork: the
/// copy ends at root checkpoint `at` (its ancestors, the subgraph checkpoints that ran under
/// them, and the pending writes of those checkpoints, `at`'s own included: the state
/// `get_state` shows at `at`). An `at` that is not a root checkpoint of the thread is an error.
pub fn plan(mut source: ThreadRows, from: &str, to: &str, at: Option<&str>) -> Result<CopyPlan> {
    if source.checkpoints.is_empty() {
        bail!("thread '{from}' has no checkpoint");
    }
    if let Some(at) = at {
        source = cut(source, at)?;
    }
    let mut planner = Planner::new(from, to);
    source
        .checkpoints
        .iter_mut()
        .for_each(|c| planner.checkpoint(c));
    source.writes.iter().for_each(|w| planner.write(w));
    Ok(CopyPlan {
        rows: source,
        counts: planner.counts()?,
    })
}

/// The rows of a thread a fork at root checkpoint `at` keeps (see [`plan`]); cutting the
/// rows a fork kept at the same checkpoint again keeps them all. An `at` that is not a root
/// checkpoint of the thread is an error.
pub fn cut(mut source: ThreadRows, at: &str) -> Result<ThreadRows> {
    let keep = fork_cut(&source, at)?;
    let kept = |ns: &str, id: &str| keep.contains(&(ns.to_owned(), id.to_owned()));
    source
        .checkpoints
        .retain(|c| kept(&c.checkpoint_ns, &c.checkpoint_id));
    source
        .writes
        .retain(|w| kept(&w.checkpoint_ns, &w.checkpoint_id));
    Ok(source)
}

/// [`plan`] a row at a time, for a copy that streams a thread (no fork): each checkpoint
/// gets the new thread id (and its metadata's `thread_id` the new one where it named the
/// old), and the rows are counted.
#[derive(Debug)]
pub struct Planner<'a> {
    from: &'a str,
    to: &'a str,
    counts: CopyCounts,
    namespaces: HashSet<String>,
}

impl<'a> Planner<'a> {
    /// The plan of a copy of thread `from` as thread `to`.
    pub fn new(from: &'a str, to: &'a str) -> Planner<'a> {
        Planner {
            from,
            to,
            counts: CopyCounts::default(),
            namespaces: HashSet::new(),
        }
    }

    /// A row of the thread, changed as the copy writes it.
    pub fn row(&mut self, row: &mut ThreadRow) {
        match row {
            ThreadRow::Checkpoint(c) => self.checkpoint(c),
            ThreadRow::Write(w) => self.write(w),
        }
    }

    /// A checkpoint of the thread, changed as the copy writes it.
    pub fn checkpoint(&mut self, c: &mut CheckpointRow) {
        if !self.namespaces.contains(&c.checkpoint_ns) {
            self.namespaces.insert(c.checkpoint_ns.clone());
        }
        c.thread_id = self.to.to_owned();
        if let (Some(m), true) = (&c.metadata, self.from != self.to) {
            if let Some(new) = rewrite_metadata(m, self.from, self.to) {
                c.metadata = Some(new);
                self.counts.metadata_rewritten += 1;
            }
        }
        self.counts.checkpoints += 1;
    }

    /// A pending write of the thread (counted; it is copied as it is).
    pub fn write(&mut self, _w: &ThreadWrite) {
        self.counts.writes += 1;
    }

    /// What the copy writes, counted; an error when the thread had no checkpoint.
    pub fn counts(&self) -> Result<CopyCounts> {
        if self.counts.checkpoints == 0 {
            bail!("thread '{}' has no checkpoint", self.from);
        }
        Ok(CopyCounts {
            namespaces: self.namespaces.len() as u64,
            ..self.counts.clone()
        })
    }
}

/// `(ns, id)` of the checkpoints a fork at root checkpoint `at` keeps: `at` and its ancestors
/// in the root namespace, and every subgraph checkpoint whose `metadata.parents[""]` is one of
/// them (a subgraph checkpoint without it is kept when it is not newer than `at`).
fn fork_cut(source: &ThreadRows, at: &str) -> Result<HashSet<(String, String)>> {
    let root: std::collections::HashMap<&str, Option<&str>> = source
        .checkpoints
        .iter()
        .filter(|c| c.checkpoint_ns.is_empty())
        .map(|c| (c.checkpoint_id.as_str(), c.parent_checkpoint_id.as_deref()))
        .collect();
    if !root.contains_key(at) {
        bail!("--at {at}: the thread has no such root checkpoint (see `memctl history`)");
    }
    let mut chain: HashSet<&str> = HashSet::new();
    let mut next = Some(at);
    while let Some(id) = next {
        if !chain.insert(id) {
            break;
        }
        next = root.get(id).copied().flatten();
    }
    let mut keep = HashSet::new();
    for c in &source.checkpoints {
        let keep_it = if c.checkpoint_ns.is_empty() {
            chain.contains(c.checkpoint_id.as_str())
        } else {
            match root_parent(c.metadata.as_deref()) {
                Some(p) => chain.contains(p.as_str()),
                None => c.checkpoint_id.as_str() <= at,
            }
        };
        if keep_it {
            keep.insert((c.checkpoint_ns.clone(), c.checkpoint_id.clone()));
        }
    }
    Ok(keep)
}

/// `metadata.parents[""]`: the root checkpoint a subgraph checkpoint ran under.
fn root_parent(metadata: Option<&[u8]>) -> Option<String> {
    let json: Json = serde_json::from_slice(metadata?).ok()?;
    json.get("parents")?.get("")?.as_str().map(str::to_owned)
}

/// The metadata with a top-level `thread_id` equal to `from` set to `to`, in the style it was
/// written in (Python's `json.dumps` separators, or compact JSON as LangGraph.js writes it);
/// `None` when it names no such thread (it is then kept byte for byte).
pub fn rewrite_metadata(metadata: &[u8], from: &str, to: &str) -> Option<Vec<u8>> {
    let mut json: Json = serde_json::from_slice(metadata).ok()?;
    let obj = json.as_object_mut()?;
    if obj.get("thread_id").and_then(Json::as_str) != Some(from) {
        return None;
    }
    let compact = serde_json::to_vec(&json).ok()? == metadata;
    let obj = json.as_object_mut()?;
    obj.insert("thread_id".into(), Json::String(to.to_owned()));
    Some(match compact {
        true => serde_json::to_vec(&json).ok()?,
        false => crate::codec::pyjson::dumps(&json).into_bytes(),
    })
}

/// The metadata key in which LangGraph counts the updates and supersteps of each
/// DeltaChannel since its last snapshot.
pub const DELTA_COUNTERS: &str = "counters_since_delta_snapshot";

/// The metadata without its [`DELTA_COUNTERS`] (a graph whose channels are plain reducer
/// channels writes none), in the style it was written in (see [`rewrite_metadata`]); `None`
/// when it has none (it is then kept byte for byte).
pub fn without_delta_counters(metadata: &[u8]) -> Option<Vec<u8>> {
    let mut json: Json = serde_json::from_slice(metadata).ok()?;
    let compact = serde_json::to_vec(&json).ok()? == metadata;
    json.as_object_mut()?.remove(DELTA_COUNTERS)?;
    Some(match compact {
        true => serde_json::to_vec(&json).ok()?,
        false => crate::codec::pyjson::dumps(&json).into_bytes(),
    })
}

/// Sets `channel_values[channel]` of a decoded checkpoint (`root`) to `value`: in place of
/// what is there (a DeltaChannel snapshot), else as a new last entry. False when the
/// checkpoint has no `channel_values` map.
pub fn set_channel_value(root: &mut Value, channel: &str, value: Value) -> bool {
    let Some(Value::Map(values)) = root.get_mut("channel_values") else {
        return false;
    };
    match values
        .entries
        .iter_mut()
        .find(|(k, _)| k.as_str() == Some(channel))
    {
        Some(slot) => slot.1 = value,
        None => values.entries.push((Value::str(channel), value)),
    }
    true
}

/// True when two readings of one thread hold the same thing (`migrate`'s "already there"):
/// the same checkpoints (namespace, id, parent, and the decoded checkpoint and metadata) and
/// the same pending writes (decoded values). Values are compared decoded, because each backend
/// stores them its own way (Postgres keeps primitives in JSONB and the rest as blobs, and its
/// metadata is JSONB, whose key order is its own); a value memctl cannot decode (encrypted)
/// is compared as stored.
pub fn same_thread(a: &ThreadRows, b: &ThreadRows) -> bool {
    fn value(type_name: &str, bytes: &[u8]) -> Json {
        match crate::codec::typed::decode_typed(type_name, bytes) {
            Ok(d) => d.to_json(),
            Err(_) => Json::Array(vec![
                Json::String(type_name.to_owned()),
                Json::String(String::from_utf8_lossy(bytes).into_owned()),
                Json::from(bytes.len()),
            ]),
        }
    }
    fn metadata(m: Option<&[u8]>) -> Json {
        m.and_then(|m| serde_json::from_slice(m).ok())
            .unwrap_or(Json::Null)
    }
    let key = |ns: &str, id: &str| (ns.to_owned(), id.to_owned());
    let mut xs: Vec<_> = a.checkpoints.iter().collect();
    let mut ys: Vec<_> = b.checkpoints.iter().collect();
    xs.sort_by_key(|c| key(&c.checkpoint_ns, &c.checkpoint_id));
    ys.sort_by_key(|c| key(&c.checkpoint_ns, &c.checkpoint_id));
    // PostgresSaver keeps one value per (namespace, channel, version): the first one `put`
    // stored. A target that did so holds, for a later checkpoint that changed a value in place
    // under the same version, the earlier value (see `WrittenThread::shared_versions`).
    let mut first: std::collections::HashMap<(String, String, String), Json> = Default::default();
    let checkpoints = xs.len() == ys.len()
        && xs.iter().zip(&ys).all(|(x, y)| {
            let vx = value(&x.type_name, &x.checkpoint);
            let sx = shared(&x.checkpoint_ns, vx.clone(), &mut first);
            let same_value = x.checkpoint == y.checkpoint || {
                let vy = value(&y.type_name, &y.checkpoint);
                vx == vy || sx == vy
            };
            x.checkpoint_ns == y.checkpoint_ns
                && x.checkpoint_id == y.checkpoint_id
                && x.parent_checkpoint_id == y.parent_checkpoint_id
                && same_value
                && (x.metadata == y.metadata
                    || metadata(x.metadata.as_deref()) == metadata(y.metadata.as_deref()))
        });
    if !checkpoints {
        return false;
    }
    let wkey = |w: &crate::storage::ThreadWrite| {
        (
            w.checkpoint_ns.clone(),
            w.checkpoint_id.clone(),
            w.row.task_id.clone(),
            w.row.idx,
        )
    };
    let mut xs: Vec<_> = a.writes.iter().collect();
    let mut ys: Vec<_> = b.writes.iter().collect();
    xs.sort_by_key(|w| wkey(w));
    ys.sort_by_key(|w| wkey(w));
    xs.len() == ys.len()
        && xs.iter().zip(&ys).all(|(x, y)| {
            wkey(x) == wkey(y)
                && x.row.channel == y.row.channel
                && (x.row.value == y.row.value
                    || value(&x.row.type_name, &x.row.value)
                        == value(&y.row.type_name, &y.row.value))
        })
}

/// A decoded checkpoint with each channel value replaced by the first value seen under the
/// same (namespace, channel, version) in `first` (checkpoints visited oldest first), which
/// records the new ones.
fn shared(
    ns: &str,
    mut cp: Json,
    first: &mut std::collections::HashMap<(String, String, String), Json>,
) -> Json {
    let versions: Vec<(String, String)> = cp
        .get("channel_versions")
        .and_then(Json::as_object)
        .map(|v| v.iter().map(|(c, v)| (c.clone(), v.to_string())).collect())
        .unwrap_or_default();
    if let Some(values) = cp.get_mut("channel_values").and_then(Json::as_object_mut) {
        for (channel, version) in versions {
            let Some(v) = values.get_mut(&channel) else {
                continue;
            };
            let k = (ns.to_owned(), channel, version);
            match first.get(&k) {
                Some(earlier) => *v = earlier.clone(),
                None => {
                    first.insert(k, v.clone());
                }
            }
        }
    }
    cp
}

/// Top-level metadata keys `--redact` leaves alone besides the structural ones: LangGraph's
/// own bookkeeping (the checkpoint ids of the parent graphs, the step, where it came from),
/// which it reads back.
const METADATA_KEYS_KEPT: &[&str] = &["parents", "source", "step"];

/// What `--redact` changed in the rows of the threads it saw.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct RedactCounts {
    /// String values in which matches were replaced by the marker.
    pub strings_redacted: u64,
    /// Rows (checkpoints, pending writes, metadata) rewritten.
    pub rows_redacted: u64,
}

/// `export --redact`: what the patterns match in the string values of the rows of a thread
/// (messages, tool-call arguments, other channel values, pending writes: as `forget --match`
/// redacts them, see [`crate::ops::purge::redact`]; and the metadata's values) replaced by
/// [`crate::ops::purge::ERASED`]: the union of every pattern's matches, each stretch where
/// matches overlap or touch erased once (see [`Patterns`]), each value re-encoded as LangGraph
/// encodes it (msgpack: the stored form of everything untouched; JSON metadata: in the style
/// it was written in). What the patterns matched is kept to be searched for afterwards (never
/// shown).
#[derive(Debug, Clone)]
pub struct Redaction {
    patterns: Patterns,
    /// Every text the patterns matched, collected by `forget`'s search.
    found: Findings,
    /// What changed so far.
    pub counts: RedactCounts,
    /// The key of encrypted values (`--key-env`): they are opened, redacted and sealed again
    /// with it (a fresh nonce, as `EncryptedSerializer` seals); without one they are refused.
    keys: crate::codec::aes::Keyring,
}

impl Redaction {
    /// One redaction for all of `patterns` (regular expressions, each searched on its own:
    /// what any of them matches is erased). A pattern that does not compile, or matches the
    /// empty string, is an error naming it by position (a pattern may itself be a secret).
    pub fn new(patterns: &[String]) -> Result<Redaction> {
        let mut res = Vec::with_capacity(patterns.len());
        for (i, p) in patterns.iter().enumerate() {
            let re = Regex::new(p).map_err(|e| {
                anyhow::anyhow!(
                    "--redact pattern {} is not a valid regular expression: {}",
                    i + 1,
                    first_line(&e.to_string())
                )
            })?;
            if re.is_match("") {
                bail!(
                    "--redact pattern {} matches the empty string: it would redact everywhere",
                    i + 1
                );
            }
            res.push(re);
        }
        let patterns = Patterns::new(res);
        Ok(Redaction {
            found: Findings::new(patterns.clone()),
            patterns,
            counts: RedactCounts::default(),
            keys: crate::codec::aes::Keyring::none(),
        })
    }

    /// With the key encrypted values are opened with (see [`Redaction::apply`]).
    pub fn with_keys(mut self, keys: crate::codec::aes::Keyring) -> Redaction {
        self.keys = keys;
        self
    }

    /// Redacts the rows of one thread in place. A value memctl cannot decode (encrypted,
    /// pickled, damaged) is an error when the patterns may be inside it: it cannot be
    /// redacted, and nothing is written.
    pub fn apply(&mut self, thread: &str, rows: &mut ThreadRows) -> Result<()> {
        for c in &mut rows.checkpoints {
            let what = || format!("thread '{thread}', checkpoint {}", c.checkpoint_id);
            if let Some(new) = self.value(&c.type_name, &c.checkpoint, true, &what)? {
                c.checkpoint = new;
                self.counts.rows_redacted += 1;
            }
            if let Some(m) = &c.metadata {
                if let Some(new) = self.metadata(m) {
                    c.metadata = Some(new);
                    self.counts.rows_redacted += 1;
                }
            }
        }
        for w in &mut rows.writes {
            let what = || {
                format!(
                    "thread '{thread}', a pending write of checkpoint {} ({})",
                    w.checkpoint_id, w.row.channel
                )
            };
            if let Some(new) = self.value(&w.row.type_name, &w.row.value, false, &what)? {
                w.row.value = new;
                self.counts.rows_redacted += 1;
            }
        }
        Ok(())
    }

    /// The patterns.
    pub fn patterns(&self) -> &Patterns {
        &self.patterns
    }

    /// The texts the patterns matched in the original rows (to be searched for in the written
    /// file's bytes): each pattern's own matches, and each stretch erased where matches
    /// overlap or touch.
    pub fn matched(&self) -> Vec<String> {
        self.found.verify_strings().0
    }

    /// Where a match is still in `rows` (as written and read back): the places, as `forget`'s
    /// search finds them (string values of messages, tool calls, channels, writes; metadata).
    /// Empty when none is left.
    pub fn remaining(&self, thread: &str, rows: &ThreadRows) -> Vec<String> {
        let mut left = Vec::new();
        for c in &rows.checkpoints {
            let mut f = Findings::new(self.patterns.clone());
            let (t, b) = self.opened(&c.type_name, &c.checkpoint);
            let hit = match decoded(&t, &b) {
                Some(v) => f.visit(&v, true),
                None => undecodable_match(&self.patterns, &t, &b),
            };
            let meta = c
                .metadata
                .as_deref()
                .and_then(|m| serde_json::from_slice::<Json>(m).ok())
                .is_some_and(|m| f.visit_metadata(&m));
            if hit || meta {
                left.push(format!("thread '{thread}', checkpoint {}", c.checkpoint_id));
            }
        }
        for w in &rows.writes {
            let mut f = Findings::new(self.patterns.clone());
            let (t, b) = self.opened(&w.row.type_name, &w.row.value);
            let hit = match decoded(&t, &b) {
                Some(v) => f.visit(&v, false),
                None => undecodable_match(&self.patterns, &t, &b),
            };
            if hit {
                left.push(format!(
                    "thread '{thread}', a pending write of checkpoint {}",
                    w.checkpoint_id
                ));
            }
        }
        left
    }

    /// A stored value as the search reads it: opened with the key when it is encrypted and
    /// the key opens it, else as stored.
    fn opened(&self, type_name: &str, bytes: &[u8]) -> (String, Vec<u8>) {
        match self.keys.has_key() {
            true => match self.keys.open(type_name, bytes, "a value") {
                Ok(o) => (o.type_name.to_owned(), o.bytes.into_owned()),
                Err(_) => (type_name.to_owned(), bytes.to_vec()),
            },
            false => (type_name.to_owned(), bytes.to_vec()),
        }
    }

    /// A value redacted (`None`: nothing matched in it), after noting what matched.
    fn value(
        &mut self,
        type_name: &str,
        bytes: &[u8],
        checkpoint: bool,
        what: &dyn Fn() -> String,
    ) -> Result<Option<Vec<u8>>> {
        if let (_, Some(_)) = crate::codec::aes::split_type(type_name) {
            if self.keys.has_key() {
                let opened = self.keys.open(type_name, bytes, &what())?;
                let inner = opened.type_name.to_owned();
                let plain = opened.bytes.into_owned();
                let Some(redacted) = self.value(&inner, &plain, checkpoint, what)? else {
                    return Ok(None);
                };
                let key = self.keys.key(&what())?;
                return Ok(Some(key.encrypt(&redacted)));
            }
        }
        match type_name {
            "msgpack" => {
                let mut v = msgpack::decode(bytes)
                    .map_err(|e| anyhow::anyhow!("{}: does not decode ({e}), so memctl cannot redact it; nothing written", what()))?;
                self.found.visit(&v, checkpoint);
                let target = match checkpoint {
                    true => v.get_mut("channel_values"),
                    false => Some(&mut v),
                };
                let n = target.map_or(0, |t| redact(&self.patterns, t));
                self.counts.strings_redacted += n as u64;
                Ok((n > 0).then(|| msgpack::encode(&v)))
            }
            "json" => {
                let mut j: Json = serde_json::from_slice(bytes)
                    .map_err(|e| anyhow::anyhow!("{}: its JSON does not parse ({e}), so memctl cannot redact it; nothing written", what()))?;
                self.found
                    .visit(&crate::codec::json::json_to_value(&j), checkpoint);
                let target = match checkpoint {
                    true => j.get_mut("channel_values"),
                    false => Some(&mut j),
                };
                let n = target.map_or(0, |t| redact_json(&self.patterns, t, false));
                self.counts.strings_redacted += n as u64;
                Ok((n > 0).then(|| serde_json::to_vec(&j)).transpose()?)
            }
            t if t.contains('+') => bail!(
                "{}: an encrypted value ('{type_name}'), so memctl cannot redact it without the app's key ({}, or name another variable with --key-env); nothing written",
                what(),
                self.keys.var()
            ),
            _ if undecodable_match(&self.patterns, type_name, bytes) => bail!(
                "{}: a '{type_name}' value memctl cannot read (another serializer), so it cannot redact it; nothing written",
                what()
            ),
            _ => Ok(None),
        }
    }

    /// Metadata redacted, in the style it was written in (see [`rewrite_metadata`]); `None`
    /// when nothing matched.
    fn metadata(&mut self, metadata: &[u8]) -> Option<Vec<u8>> {
        let mut json: Json = serde_json::from_slice(metadata).ok()?;
        if !self.found.visit_metadata(&json) {
            return None;
        }
        let compact = serde_json::to_vec(&json).ok()? == metadata;
        let n = redact_json(&self.patterns, &mut json, true);
        if n == 0 {
            return None;
        }
        self.counts.strings_redacted += n as u64;
        Some(match compact {
            true => serde_json::to_vec(&json).ok()?,
            false => crate::codec::pyjson::dumps(&json).into_bytes(),
        })
    }
}

/// A stored value decoded for the search (`None`: not a kind memctl reads).
fn decoded(type_name: &str, bytes: &[u8]) -> Option<Value> {
    match type_name {
        "msgpack" => msgpack::decode(bytes).ok(),
        "json" => serde_json::from_slice::<Json>(bytes)
            .ok()
            .map(|j| crate::codec::json::json_to_value(&j)),
        _ => None,
    }
}

/// True when a value memctl cannot decode may hold a match: an encrypted one always (its
/// bytes say nothing), a `null` one never, another kind when its bytes, read as text, do.
fn undecodable_match(p: &Patterns, type_name: &str, bytes: &[u8]) -> bool {
    match type_name {
        "null" | "empty" => false,
        t if t.contains('+') => !bytes.is_empty(),
        _ => p.is_match(&String::from_utf8_lossy(bytes)),
    }
}

/// Erases what `p` matches in the string values of `j` (see [`Patterns::erase`]; map keys and
/// the values of structural keys are left alone, as [`redact`] leaves them; at the top of a
/// metadata document, LangGraph's own keys too). Returns how many strings changed.
pub fn redact_json(p: &Patterns, j: &mut Json, metadata_top: bool) -> usize {
    match j {
        Json::String(s) => match p.erase(s) {
            Some(erased) => {
                *s = erased;
                1
            }
            None => 0,
        },
        Json::Array(items) => items.iter_mut().map(|x| redact_json(p, x, false)).sum(),
        Json::Object(fields) => fields
            .iter_mut()
            .filter(|(k, _)| {
                !(is_structural(k) || metadata_top && METADATA_KEYS_KEPT.contains(&k.as_str()))
            })
            .map(|(_, x)| redact_json(p, x, false))
            .sum(),
        _ => 0,
    }
}

fn first_line(s: &str) -> String {
    s.lines()
        .map(str::trim)
        .rfind(|l| !l.is_empty())
        .unwrap_or(s)
        .to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::storage::{CheckpointRow, ThreadWrite, WriteRow};

    fn cp(ns: &str, id: &str, parent: Option<&str>, md: &str) -> CheckpointRow {
        CheckpointRow {
            thread_id: "a".into(),
            checkpoint_ns: ns.into(),
            checkpoint_id: id.into(),
            parent_checkpoint_id: parent.map(Into::into),
            type_name: "msgpack".into(),
            checkpoint: vec![0x80],
            metadata: Some(md.as_bytes().to_vec()),
        }
    }

    fn write(ns: &str, id: &str) -> ThreadWrite {
        ThreadWrite {
            checkpoint_ns: ns.into(),
            checkpoint_id: id.into(),
            row: WriteRow {
                task_id: "t".into(),
                task_path: String::new(),
                idx: 0,
                channel: "c".into(),
                type_name: "msgpack".into(),
                value: vec![0xc0],
            },
        }
    }

    fn thread() -> ThreadRows {
        ThreadRows {
            checkpoints: vec![
                cp("", "1", None, r#"{"step": -1, "parents": {}}"#),
                cp("", "2", Some("1"), r#"{"step": 0, "parents": {}}"#),
                cp(
                    "",
                    "3",
                    Some("2"),
                    r#"{"step": 1, "parents": {}, "thread_id": "a"}"#,
                ),
                // A branch from 2 (time travel), newer than 3.
                cp("", "4", Some("2"), r#"{"step": 1, "parents": {}}"#),
                cp("sub:x", "2a", None, r#"{"parents": {"": "2"}}"#),
                cp("sub:y", "3a", None, r#"{"parents": {"": "3"}}"#),
            ],
            writes: vec![write("", "2"), write("", "3"), write("sub:x", "2a")],
        }
    }

    #[test]
    fn a_copy_takes_every_row_and_renames_the_thread() {
        let p = plan(thread(), "a", "b", None).expect("plans");
        assert_eq!(
            p.counts,
            CopyCounts {
                checkpoints: 6,
                namespaces: 3,
                writes: 3,
                metadata_rewritten: 1,
                ..Default::default()
            }
        );
        assert!(p.rows.checkpoints.iter().all(|c| c.thread_id == "b"));
        assert_eq!(
            p.rows.checkpoints[2].metadata.as_deref(),
            Some(&br#"{"step": 1, "parents": {}, "thread_id": "b"}"#[..])
        );
        assert_eq!(
            p.rows.checkpoints[0].metadata.as_deref(),
            Some(&br#"{"step": -1, "parents": {}}"#[..]),
            "metadata without the thread is kept byte for byte"
        );
    }

    #[test]
    fn the_planner_a_row_at_a_time_plans_what_plan_plans() {
        let whole = plan(thread(), "a", "b", None).expect("plans");
        let mut planner = Planner::new("a", "b");
        let mut rows: Vec<ThreadRow> = thread()
            .checkpoints
            .into_iter()
            .map(ThreadRow::Checkpoint)
            .chain(thread().writes.into_iter().map(ThreadRow::Write))
            .collect();
        rows.iter_mut().for_each(|r| planner.row(r));
        assert_eq!(planner.counts().expect("counted"), whole.counts);
        let metadata: Vec<_> = rows
            .iter()
            .filter_map(|r| match r {
                ThreadRow::Checkpoint(c) => Some((c.thread_id.clone(), c.metadata.clone())),
                ThreadRow::Write(_) => None,
            })
            .collect();
        let expected: Vec<_> = whole
            .rows
            .checkpoints
            .iter()
            .map(|c| (c.thread_id.clone(), c.metadata.clone()))
            .collect();
        assert_eq!(metadata, expected);
        assert!(Planner::new("a", "b").counts().is_err(), "no checkpoint");
    }

    #[test]
    fn a_fork_keeps_the_ancestors_and_what_ran_under_them() {
        let p = plan(thread(), "a", "b", Some("2")).expect("plans");
        let ids: Vec<_> = p
            .rows
            .checkpoints
            .iter()
            .map(|c| c.checkpoint_id.as_str())
            .collect();
        assert_eq!(ids, ["1", "2", "2a"]);
        let writes: Vec<_> = p
            .rows
            .writes
            .iter()
            .map(|w| w.checkpoint_id.as_str())
            .collect();
        assert_eq!(writes, ["2", "2a"]);
        let p = plan(thread(), "a", "b", Some("4")).expect("plans");
        let ids: Vec<_> = p
            .rows
            .checkpoints
            .iter()
            .map(|c| c.checkpoint_id.as_str())
            .collect();
        assert_eq!(ids, ["1", "2", "4", "2a"], "3 is another branch");
    }

    #[test]
    fn a_fork_at_an_unknown_checkpoint_is_refused() {
        let e = plan(thread(), "a", "b", Some("2a")).expect_err("refused");
        assert!(e.to_string().contains("no such root checkpoint"), "{e}");
        assert!(plan(ThreadRows::default(), "a", "b", None).is_err());
    }

    #[test]
    fn materializing_drops_the_delta_counters_in_the_metadata_style() {
        let py = br#"{"source": "loop", "counters_since_delta_snapshot": {"messages": [1, 2]}, "step": 1}"#;
        assert_eq!(
            without_delta_counters(py).as_deref(),
            Some(&br#"{"source": "loop", "step": 1}"#[..])
        );
        let js = br#"{"source":"loop","counters_since_delta_snapshot":{"messages":[1,2]}}"#;
        assert_eq!(
            without_delta_counters(js).as_deref(),
            Some(&br#"{"source":"loop"}"#[..])
        );
        assert_eq!(without_delta_counters(br#"{"step": 1}"#), None);
        let mut root = crate::codec::json::json_to_value(&serde_json::json!({
            "v": 4, "channel_values": {"a": 1}
        }));
        assert!(set_channel_value(&mut root, "messages", Value::str("x")));
        assert!(set_channel_value(&mut root, "a", Value::int(2)));
        let values = root.get("channel_values").expect("values");
        assert_eq!(values.get("a").and_then(Value::as_i64), Some(2));
        assert_eq!(values.get("messages").and_then(Value::as_str), Some("x"));
        assert!(!set_channel_value(&mut Value::int(1), "a", Value::Nil));
    }

    #[test]
    fn compact_metadata_stays_compact() {
        let out = rewrite_metadata(br#"{"thread_id":"a","n":1}"#, "a", "b");
        assert_eq!(out.as_deref(), Some(&br#"{"thread_id":"b","n":1}"#[..]));
        assert_eq!(rewrite_metadata(br#"{"thread_id":"z"}"#, "a", "b"), None);
    }

    #[test]
    fn redaction_rewrites_values_and_metadata_in_their_own_style() {
        let mut rows = thread();
        rows.checkpoints[0].metadata = Some(
            br#"{"step": -1, "parents": {}, "user_email": "ann@example.com", "note": "x"}"#
                .to_vec(),
        );
        rows.checkpoints[1].metadata =
            Some(br#"{"source":"loop","email":"ann@example.com"}"#.to_vec());
        let value = crate::codec::json::json_to_value(&serde_json::json!({
            "channel_values": {"messages": ["write to ann@example.com", "keep"]},
            "id": "ann@example.com"
        }));
        rows.checkpoints[2].checkpoint = msgpack::encode(&value);
        rows.writes[0].row.value = msgpack::encode(&crate::codec::json::json_to_value(
            &serde_json::json!({"to": "ann@example.com"}),
        ));
        let mut r = Redaction::new(&[r"\w+@example\.com".into()]).expect("compiles");
        r.apply("a", &mut rows).expect("redacts");
        assert_eq!(
            rows.checkpoints[0].metadata.as_deref(),
            Some(&br#"{"step": -1, "parents": {}, "user_email": "[erased]", "note": "x"}"#[..])
        );
        assert_eq!(
            rows.checkpoints[1].metadata.as_deref(),
            Some(&br#"{"source":"loop","email":"[erased]"}"#[..])
        );
        let cp = msgpack::decode(&rows.checkpoints[2].checkpoint).expect("decodes");
        let messages = cp
            .get("channel_values")
            .and_then(|v| v.get("messages"))
            .and_then(Value::as_array)
            .expect("messages");
        assert_eq!(messages[0].as_str(), Some("write to [erased]"));
        assert_eq!(messages[1].as_str(), Some("keep"));
        assert_eq!(
            cp.get("id").and_then(Value::as_str),
            Some("ann@example.com"),
            "outside the channel values: structure, left alone (and found by the search)"
        );
        assert_eq!(
            r.counts,
            RedactCounts {
                strings_redacted: 4,
                rows_redacted: 4
            }
        );
        assert_eq!(r.matched(), ["ann@example.com"]);
        assert!(r.remaining("a", &rows).is_empty());
        // An undecodable (encrypted) value cannot be redacted: an error, not a silent pass.
        rows.writes[1].row.type_name = "msgpack+aes".into();
        let e = r.apply("a", &mut rows).expect_err("refused");
        assert!(e.to_string().contains("cannot redact"), "{e}");
        assert!(Redaction::new(&["(".into()]).is_err());
        assert!(Redaction::new(&["a?".into()]).is_err());
    }

    #[test]
    fn overlapping_patterns_erase_the_union_and_verify_every_match() {
        for order in [["ZQSECRET", r"ZQSECRET-\d+"], [r"ZQSECRET-\d+", "ZQSECRET"]] {
            let mut rows = thread();
            rows.checkpoints[0].metadata =
                Some(br#"{"step": -1, "parents": {}, "note": "ZQSECRET-3"}"#.to_vec());
            let value = crate::codec::json::json_to_value(&serde_json::json!({
                "channel_values": {"messages": ["password is ZQSECRET-3", "ZQSECRET alone"]}
            }));
            rows.checkpoints[2].checkpoint = msgpack::encode(&value);
            rows.writes[0].row.type_name = "json".into();
            rows.writes[0].row.value = br#"{"to": "ZQSECRET-42ZQSECRET"}"#.to_vec();
            let patterns: Vec<String> = order.iter().map(|p| p.to_string()).collect();
            let mut r = Redaction::new(&patterns).expect("compiles");
            r.apply("a", &mut rows).expect("redacts");
            assert_eq!(
                rows.checkpoints[0].metadata.as_deref(),
                Some(&br#"{"step": -1, "parents": {}, "note": "[erased]"}"#[..]),
                "{order:?}"
            );
            let cp = msgpack::decode(&rows.checkpoints[2].checkpoint).expect("decodes");
            let messages: Vec<_> = cp
                .get("channel_values")
                .and_then(|v| v.get("messages"))
                .and_then(Value::as_array)
                .expect("messages")
                .iter()
                .map(|m| m.as_str().unwrap_or_default().to_owned())
                .collect();
            assert_eq!(
                messages,
                ["password is [erased]", "[erased] alone"],
                "{order:?}"
            );
            // Two matches touching: one stretch, one marker.
            assert_eq!(
                rows.writes[0].row.value, br#"{"to":"[erased]"}"#,
                "{order:?}"
            );
            // The verification looks for what each pattern matched and for each stretch.
            assert_eq!(
                r.matched(),
                [
                    "ZQSECRET",
                    "ZQSECRET-3",
                    "ZQSECRET-42",
                    "ZQSECRET-42ZQSECRET"
                ],
                "{order:?}"
            );
            assert!(r.remaining("a", &rows).is_empty(), "{order:?}");
        }
    }
}
