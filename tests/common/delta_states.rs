//! The check of every checkpoint of every DeltaChannel thread against what LangGraph shows
//! (`harness.delta_states`: live for delta.sqlite, committed as expected/postgres-delta.json
//! for the Postgres fixture): memctl's messages (`dump`), other values (`show`), message count
//! (`history`) and, at the latest checkpoint, tokens and `threads list`.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use serde_json::Value as Json;

use super::{run_json, s};

/// The commands run on thread "1" with a broken DeltaChannel chain (issue #16): the read
/// commands and the rewrites, each of which must fail with one line and write nothing.
pub const BROKEN_CHAIN_COMMANDS: [&[&str]; 7] = [
    &["show", "1"],
    &["dump", "1"],
    &["tokens", "1"],
    &["diff", "1"],
    &["history", "1"],
    &["trim", "--thread", "1", "--keep", "2"],
    &["rm", "--thread", "1", "--index", "0"],
];

/// `rm --purge` of the first message of DeltaChannel thread `thread` in the file `db`:
/// asserts it is reported purged, that its text is in no byte of the file, its `-wal` or
/// `-journal`, and that the new checkpoint stores `messages` as a snapshot (it needs no older
/// row). Returns the thread's messages before (`dump`) and `dump --raw` after.
pub fn purge_first_message(db: &Path, thread: &str) -> (Json, Json) {
    let before = run_json(&["dump", "--db", s(db), thread]);
    let removed = before[0]["content"].as_str().expect("text").to_owned();
    let out = run_json(&[
        "rm",
        "--db",
        s(db),
        "--thread",
        thread,
        "--index",
        "0",
        "--purge",
        "--format",
        "json",
    ]);
    assert_eq!(out["threads"][0]["status"], "purged", "{thread}: {out}");
    let holds = |b: &[u8]| b.windows(removed.len()).any(|w| w == removed.as_bytes());
    assert!(
        !holds(&std::fs::read(db).expect("read")),
        "{thread}: '{removed}' is still in the file"
    );
    for suffix in ["-wal", "-journal"] {
        let side = PathBuf::from(format!("{}{suffix}", db.display()));
        if let Ok(b) = std::fs::read(&side) {
            assert!(!holds(&b), "{thread}: '{removed}' is in {}", side.display());
        }
    }
    let raw = run_json(&["dump", "--raw", "--db", s(db), thread]);
    assert_eq!(
        raw["delta_channels"]["messages"]["stored"], "snapshot",
        "{thread}: {raw}"
    );
    (before, raw)
}

/// What [`check`] compared, and what differed.
#[derive(Debug, Default)]
pub struct Seen {
    /// Root checkpoints checked.
    pub checked: usize,
    /// Checkpoints where `notes` (a reducer memctl does not know) is not rebuilt, and says so.
    pub unknown: usize,
    /// Subgraph checkpoints checked.
    pub subgraph: usize,
    /// One entry per difference.
    pub failures: Vec<String>,
}

impl Seen {
    /// Asserts that the whole fixture was checked (delta.sqlite's threads, on either
    /// backend) and nothing differed; `more` are other failures to report with these.
    pub fn assert_complete(self, more: Vec<String>) {
        assert!(self.checked > 100, "checked {} checkpoints", self.checked);
        assert!(
            self.unknown > 3,
            "checkpoints where 'notes' is not rebuilt: {}",
            self.unknown
        );
        assert!(
            self.subgraph > 6,
            "subgraph checkpoints checked: {}",
            self.subgraph
        );
        let failures = [self.failures, more].concat();
        assert!(failures.is_empty(), "{}", failures.join("\n"));
    }
}

/// Runs `gc --all --keep-checkpoints keep` (and `extra` arguments) on `db` and compares every
/// checkpoint it keeps, as `states_after()` shows it (LangGraph's view afterwards), with
/// `before` (the same before the gc, [`compare_kept`]); memctl must read each thread's
/// latest state as LangGraph does. Returns the failures and gc's JSON report.
pub fn check_gc(
    db: &str,
    keep: &str,
    extra: &[&str],
    before: &Json,
    states_after: impl FnOnce() -> Json,
) -> (Vec<String>, Json) {
    let mut args = vec![
        "gc",
        "--db",
        db,
        "--all",
        "--keep-checkpoints",
        keep,
        "--min-idle",
        "0s",
        "--format",
        "json",
    ];
    args.extend_from_slice(extra);
    let out = run_json(&args);
    assert!(
        out["deleted"]["checkpoints"]
            .as_u64()
            .is_some_and(|n| n > 0),
        "keep {keep}: {out}"
    );
    let after = states_after();
    let mut failures = compare_kept(keep, &out, before, &after);
    for (thread, t) in after["threads"].as_object().expect("threads") {
        // memctl reads what is left as LangGraph does.
        let got = run_json(&["dump", "--db", db, thread]);
        if !same(&got, &t["history"][0]["messages"]) {
            failures.push(format!("keep {keep}: {thread}: memctl's dump differs"));
        }
    }
    (failures, out)
}

/// Once a live app has written `app_threads`, runs `gc --all --keep-checkpoints N
/// --min-idle 0s` on `db` (a path or URL) again and again, N = 1, 2, 3, 5 in turn, beside
/// the app, until each of them
/// was collected at least once and some got DeltaChannel snapshots (at most 400
/// rounds: it asserts that it got there). Returns how often each was collected, and the
/// failures: a gc that did not exit 0, a thread it reported unreadable.
pub fn gc_beside_a_live_app(
    db: &str,
    app_threads: &[&str],
) -> (HashMap<String, usize>, Vec<String>) {
    // The app's threads are there first (it starts slowly on a busy machine).
    let started = std::time::Instant::now();
    loop {
        let listed = super::memctl()
            .args(["threads", "list", "--db", db, "--format", "json"])
            .output()
            .expect("runs");
        let text = String::from_utf8_lossy(&listed.stdout);
        if app_threads
            .iter()
            .all(|t| text.contains(&format!("\"{t}\"")))
        {
            break;
        }
        assert!(
            started.elapsed().as_secs() < 300,
            "the app never wrote its threads"
        );
        std::thread::sleep(std::time::Duration::from_millis(200));
    }
    let mut collected = HashMap::<String, usize>::new();
    let mut snapshots = 0;
    let mut failures = Vec::new();
    for round in 0.. {
        let keep = ["1", "2", "3", "5"][round % 4];
        let out = super::memctl()
            .args(["gc", "--db", db, "--all", "--keep-checkpoints", keep])
            .args(["--min-idle", "0s", "--format", "json"])
            .output()
            .expect("memctl runs");
        let report: Json = serde_json::from_slice(&out.stdout).unwrap_or(Json::Null);
        if !out.status.success() {
            failures.push(format!(
                "round {round}: gc exit {:?}: {}",
                out.status.code(),
                String::from_utf8_lossy(&out.stderr)
            ));
        }
        let rows = report["threads"].as_array().cloned().unwrap_or_default();
        for row in &rows {
            let (id, status) = (
                row["thread_id"].as_str().unwrap_or(""),
                row["status"].as_str().unwrap_or(""),
            );
            if status.starts_with("failed") {
                failures.push(format!("round {round}: {row}"));
            }
            // Snapshots are written first and the rows below them deleted a moment later,
            // unless the app moved the thread in between (then the next run collects them).
            let wrote_snapshots = status == "collected"
                || row["reason"]
                    .as_str()
                    .is_some_and(|why| why.contains("snapshots were written"));
            if app_threads.contains(&id) && wrote_snapshots {
                snapshots += usize::from(row["delta"] == "snapshot");
            }
            if app_threads.contains(&id) && status == "collected" {
                *collected.entry(id.to_owned()).or_default() += 1;
            }
        }
        // Beside a busy app a DeltaChannel thread often moves between gc's snapshots and its
        // deletions (then only the snapshots stay): one collection each is the bar.
        let done = app_threads
            .iter()
            .all(|t| collected.get(*t).is_some_and(|n| *n >= 1));
        if (done && snapshots > 0) || !failures.is_empty() {
            break;
        }
        assert!(
            round < 400,
            "gc never collected the app's threads: {collected:?}"
        );
    }
    (collected, failures)
}

/// How many threads a gc JSON report says it rewrote with DeltaChannel snapshots.
pub fn snapshotted(report: &Json) -> usize {
    report["threads"]
        .as_array()
        .expect("threads")
        .iter()
        .filter(|t| t["delta"] == "snapshot")
        .count()
}

/// Compares LangGraph's view of every thread after a `gc --keep-checkpoints keep` (whose
/// JSON report is `report`) with the one before, as `harness.delta_states` makes them:
/// - history lists exactly the checkpoints gc kept: the newest `keep` of the root namespace
///   (more when gc kept a DeltaChannel chain, all of them when it left the thread alone);
/// - at every kept one, `get_state` shows the same messages (`model_dump()`), other values,
///   `next`, tasks (with their interrupts, errors and results), interrupts and metadata. The
///   oldest kept checkpoint of a thread gc rewrote with snapshots has two documented
///   difference: its `counters_since_delta_snapshot` loses the channels snapshotted there
///   (the rest stays); and the oldest kept checkpoint of any thread gc deleted older ones of
///   has no parent any more;
/// - subgraph namespaces ([`compare_namespace`]): history lists exactly the checkpoints gc
///   keeps there, each with the same messages, values, `next` and (but where its parent
///   went) parent; and at every kept root checkpoint, `get_state(subgraphs=True)` shows the
///   same states of its pending subgraph tasks.
pub fn compare_kept(keep: &str, report: &Json, before: &Json, after: &Json) -> Vec<String> {
    let n: usize = keep.parse().expect("keep");
    let mut failures = Vec::new();
    let status: HashMap<&str, &Json> = report["threads"]
        .as_array()
        .expect("threads")
        .iter()
        .map(|t| (t["thread_id"].as_str().expect("id"), t))
        .collect();
    for (thread, t) in after["threads"].as_object().expect("threads") {
        let old = before["threads"][thread]["history"]
            .as_array()
            .expect("history before");
        let kept = t["history"].as_array().expect("history");
        let ids = |h: &[Json]| -> Vec<String> {
            h.iter()
                .map(|e| e["checkpoint_id"].as_str().expect("id").to_owned())
                .collect()
        };
        let (old_ids, kept_ids) = (ids(old), ids(kept));
        let row = status.get(thread.as_str());
        let way = row.and_then(|r| r["delta"].as_str()).unwrap_or("");
        let left_alone = row.is_some_and(|r| {
            r["status"]
                .as_str()
                .is_some_and(|s| s.starts_with("skipped") || s.starts_with("failed"))
        });
        let expected_len = if left_alone {
            old_ids.len()
        } else {
            n.max(1).min(old_ids.len())
        };
        let prefix = old_ids.get(..kept_ids.len()) == Some(kept_ids.as_slice());
        if !prefix
            || (way.starts_with("chain") && kept_ids.len() < expected_len)
            || (!way.starts_with("chain") && kept_ids.len() != expected_len)
        {
            failures.push(format!(
                "keep {keep}: {thread}: history lists {kept_ids:?}, before {old_ids:?} ({way})"
            ));
            continue;
        }
        let label = format!("keep {keep}: {thread}");
        failures.extend(compare_history(
            &label,
            kept,
            old,
            if way == "snapshot" {
                Rewritten::Oldest
            } else {
                Rewritten::None
            },
        ));
        let ns_before = before["threads"][thread]["namespaces"]
            .as_object()
            .expect("namespaces before");
        for (ns, was) in ns_before {
            let was = was.as_array().expect("ns history before");
            let now = t["namespaces"][ns].as_array().cloned().unwrap_or_default();
            let chain = way.starts_with("chain");
            failures.extend(compare_namespace(
                keep,
                thread,
                ns,
                was,
                &now,
                chain,
                |root| left_alone || root.is_some_and(|r| kept_ids.iter().any(|k| k == r)),
            ));
        }
    }
    failures
}

/// The root checkpoints left of a thread (`kept`, newest first, the newest part of `old`,
/// the history before, as `harness.delta_states` makes them) against the same checkpoints
/// before: the same messages, other values, `next`, tasks, interrupts, subgraph task states
/// and metadata, and the same parent, except that the oldest one has none when older ones
/// went, and that `counters_since_delta_snapshot` may lose channels (or go, with none left)
/// where a checkpoint was rewritten with snapshots (`rewritten`).
/// Which kept checkpoints gc may have rewritten with DeltaChannel snapshots.
#[derive(Clone, Copy)]
enum Rewritten {
    /// None: gc kept the chain.
    None,
    /// The oldest kept one: gc snapshotted it and deleted everything below it.
    Oldest,
    /// Any of them: beside a live app, a thread that moved between gc's snapshots and its
    /// deletions keeps the rows below the snapshotted checkpoint (the next gc collects
    /// them), so a rewritten checkpoint can stand anywhere in what is left.
    Any,
}

fn compare_history(label: &str, kept: &[Json], old: &[Json], rewritten: Rewritten) -> Vec<String> {
    let mut failures = Vec::new();
    for (i, (h, was)) in kept.iter().zip(old).enumerate() {
        let id = h["checkpoint_id"].as_str().unwrap_or("?");
        for field in [
            "messages",
            "values",
            "next",
            "tasks",
            "interrupts",
            "subgraph_states",
        ] {
            if !same(&h[field], &was[field]) {
                failures.push(format!(
                    "{label} @ {id}: {field} changed: {} → {}",
                    was[field], h[field]
                ));
            }
        }
        let may_be_rewritten = match rewritten {
            Rewritten::None => false,
            Rewritten::Oldest => i + 1 == kept.len(),
            Rewritten::Any => true,
        };
        let counters = "counters_since_delta_snapshot";
        let (mut m_was, mut m_now) = (was["metadata"].clone(), h["metadata"].clone());
        if may_be_rewritten {
            let take = |m: &mut Json| {
                m.as_object_mut()
                    .and_then(|o| o.shift_remove(counters))
                    .unwrap_or(Json::Null)
            };
            let (c_was, c_now) = (take(&mut m_was), take(&mut m_now));
            let subset = c_now
                .as_object()
                .is_none_or(|now| now.iter().all(|(k, v)| c_was.get(k) == Some(v)));
            if !subset {
                failures.push(format!("{label} @ {id}: counters {c_was} → {c_now}"));
            }
        }
        let oldest_left = i + 1 == kept.len() && kept.len() < old.len();
        if oldest_left {
            if !h["parent_checkpoint_id"].is_null() {
                failures.push(format!("{label} @ {id}: still has a parent"));
            }
        } else if !same(&h["parent_checkpoint_id"], &was["parent_checkpoint_id"]) {
            failures.push(format!("{label} @ {id}: parent changed"));
        }
        // Key order aside: PostgresSaver's JSONB keeps its own (the live record is SQLite).
        if !same(&sorted(&m_now), &sorted(&m_was)) {
            failures.push(format!(
                "{label} @ {id}: metadata changed: {m_was} → {m_now}"
            ));
        }
    }
    failures
}

/// A thread a live app wrote while gc ran beside it: what LangGraph shows of it now (`now`,
/// one thread of `harness.delta_states`) against the app's own record (`record`, the same
/// of the mirror every checkpoint the app wrote also went to, `harness.py live-app
/// --mirror`). The checkpoints left are the newest part of the record (at least the
/// latest), each with the state it had when the app wrote it ([`compare_history`]; any of
/// them may have been rewritten with snapshots, see [`Rewritten::Any`]); in each subgraph namespace the ones left
/// are the newest part too, with every one whose root checkpoint is left among them
/// ([`compare_namespace`]). The others were collected, as gc may.
pub fn compare_with_record(thread: &str, now: &Json, record: &Json) -> Vec<String> {
    let ids = |h: &Json| -> Vec<String> {
        h.as_array()
            .map(|h| {
                h.iter()
                    .map(|e| e["checkpoint_id"].as_str().unwrap_or("?").to_owned())
                    .collect()
            })
            .unwrap_or_default()
    };
    let (left, all) = (ids(&now["history"]), ids(&record["history"]));
    if left.is_empty() || all.get(..left.len()) != Some(left.as_slice()) {
        return vec![format!(
            "{thread}: history lists {left:?}, the app wrote {all:?}"
        )];
    }
    let label = format!("live: {thread}");
    let (kept, old) = (
        now["history"].as_array().expect("history"),
        record["history"].as_array().expect("history"),
    );
    let mut failures = compare_history(&label, kept, old, Rewritten::Any);
    for (ns, was) in record["namespaces"].as_object().expect("namespaces") {
        let was = was.as_array().expect("ns history");
        let left_ns = now["namespaces"][ns]
            .as_array()
            .cloned()
            .unwrap_or_default();
        failures.extend(compare_namespace(
            "1",
            &label,
            ns,
            was,
            &left_ns,
            true,
            |root| root.is_some_and(|r| left.iter().any(|k| k == r)),
        ));
    }
    failures
}

/// [`compare_kept`] of subgraph namespace `ns` of `thread`: its history after (`now`) lists
/// exactly the checkpoints of `was` (before, newest first) that gc keeps (`kept(root)`: the
/// root checkpoint a subgraph checkpoint ran under stays, or the thread was left alone,
/// `kept(None)`; one that names none follows the newest-`keep` rule inside its namespace; the
/// newest of a `checkpointer=True` subgraph's namespace, one without a task id, always),
/// and when gc kept the DeltaChannel chain (`chain`) maybe older ones too (the newest part
/// of the namespace's history, the seeds the kept ones replay from). Each shows the same
/// messages, other values and `next`, and the same parent except the oldest kept one when
/// its parent went.
fn compare_namespace(
    keep: &str,
    thread: &str,
    ns: &str,
    was: &[Json],
    now: &[Json],
    chain: bool,
    kept: impl Fn(Option<&str>) -> bool,
) -> Vec<String> {
    let n: usize = keep.parse::<usize>().expect("keep").max(1);
    let mut failures = Vec::new();
    let id_of = |e: &Json| e["checkpoint_id"].as_str().unwrap_or("?").to_owned();
    let want: Vec<String> = was
        .iter()
        .enumerate()
        .filter(|(i, o)| match o["root_parent"].as_str() {
            // The newest of a checkpointer=True subgraph's namespace (no task id in it)
            // stays: its next run starts there.
            Some(root) => kept(Some(root)) || (*i == 0 && !ns.contains(':')),
            None => kept(None) || *i < n,
        })
        .map(|(_, o)| id_of(o))
        .collect();
    let got: Vec<String> = now.iter().map(id_of).collect();
    let newest_part = was
        .iter()
        .take(got.len())
        .map(id_of)
        .eq(got.iter().cloned());
    let ok = if chain {
        newest_part && want.iter().all(|w| got.contains(w))
    } else {
        want == got
    };
    if !ok {
        failures.push(format!(
            "keep {keep}: {thread} {ns}: history lists {got:?}, expected {want:?}{}",
            if chain { " and maybe older seeds" } else { "" }
        ));
        return failures;
    }
    for h in now {
        let id = id_of(h);
        let Some(old) = was.iter().find(|o| id_of(o) == id) else {
            continue;
        };
        for field in ["messages", "values", "next", "root_parent"] {
            if !same(&h[field], &old[field]) {
                failures.push(format!(
                    "keep {keep}: {thread} {ns} @ {id}: {field} changed: {} → {}",
                    old[field], h[field]
                ));
            }
        }
        let parent_kept = old["parent_checkpoint_id"]
            .as_str()
            .is_some_and(|p| got.iter().any(|k| k == p));
        let parent = if parent_kept {
            old["parent_checkpoint_id"].clone()
        } else {
            Json::Null
        };
        if !same(&h["parent_checkpoint_id"], &parent) {
            failures.push(format!(
                "keep {keep}: {thread} {ns} @ {id}: parent {} (was {}), expected {parent}",
                h["parent_checkpoint_id"], old["parent_checkpoint_id"]
            ));
        }
    }
    failures
}

/// The ids of a list of `model_dump()` messages.
pub fn message_ids(list: &Json) -> Vec<Json> {
    list.as_array()
        .expect("list")
        .iter()
        .map(|m| m["id"].clone())
        .collect()
}

/// `v` with every object's keys in sorted order.
fn sorted(v: &Json) -> Json {
    match v {
        Json::Object(o) => {
            let mut keys: Vec<&String> = o.keys().collect();
            keys.sort();
            Json::Object(
                keys.into_iter()
                    .map(|k| (k.clone(), sorted(&o[k])))
                    .collect(),
            )
        }
        Json::Array(a) => Json::Array(a.iter().map(sorted).collect()),
        other => other.clone(),
    }
}

fn same(a: &Json, b: &Json) -> bool {
    serde_json::to_string(a).ok() == serde_json::to_string(b).ok()
}

/// Compares memctl on `db` (a path or URL) with `states` (`{"threads": {id: ...}}` as
/// `harness.delta_states` makes it), every checkpoint of every thread.
pub fn check(db: &str, states: &Json) -> Seen {
    let mut seen = Seen::default();
    let all: Vec<(String, Json)> = states["threads"]
        .as_object()
        .expect("threads")
        .iter()
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    let Seen {
        checked,
        unknown,
        subgraph,
        failures,
    } = &mut seen;
    for (thread, t) in &all {
        let history = run_json(&["history", "--db", db, thread, "--format", "json"]);
        let counts: HashMap<String, Json> = history
            .as_array()
            .expect("records")
            .iter()
            .map(|r| {
                (
                    r["checkpoint_id"].as_str().expect("id").to_owned(),
                    r["messages"].clone(),
                )
            })
            .collect();
        for h in t["history"].as_array().expect("history") {
            let id = h["checkpoint_id"].as_str().expect("id");
            let want = &h["messages"];
            let got = run_json(&["dump", "--db", db, thread, "--checkpoint", id]);
            if !same(&got, want) {
                failures.push(format!(
                    "{thread} @ {id} (step {}): dump\n  memctl:    {got}\n  langgraph: {want}",
                    h["step"]
                ));
            }
            let n = want.as_array().map(Vec::len);
            if counts.get(id).and_then(Json::as_u64).map(|c| c as usize) != n {
                failures.push(format!(
                    "{thread} @ {id}: history counts {:?} messages, langgraph {n:?}",
                    counts.get(id)
                ));
            }
            let shown = run_json(&[
                "show",
                "--db",
                db,
                thread,
                "--checkpoint",
                id,
                "--format",
                "json",
            ]);
            let values = &shown["values"];
            for (k, v) in h["values"].as_object().expect("values") {
                if thread == "notes" && k == "notes" && values[k].is_null() {
                    // A reducer memctl does not know, with writes to replay: not guessed, said
                    // so (a value memctl does show, stored or seeded with nothing to replay,
                    // is checked below like any other).
                    let raw = run_json(&["dump", "--raw", "--db", db, thread, "--checkpoint", id]);
                    let d = &raw["delta_channels"]["notes"];
                    if d["note"].as_str().is_none() || shown["notes"].as_array().is_none() {
                        failures.push(format!("{thread} @ {id}: notes {} / {d}", values[k]));
                    }
                    *unknown += 1;
                    continue;
                }
                if !same(&values[k], v) {
                    failures.push(format!(
                        "{thread} @ {id}: value '{k}'\n  memctl:    {}\n  langgraph: {v}",
                        values[k]
                    ));
                }
            }
            if shown["next"] != h["next"] && id == t["latest_checkpoint_id"] {
                failures.push(format!(
                    "{thread} @ {id}: next {} / langgraph {}",
                    shown["next"], h["next"]
                ));
            }
            *checked += 1;
        }
        // Subgraph namespaces: every checkpoint there, with --ns.
        for (ns, history) in t["namespaces"].as_object().expect("namespaces") {
            for h in history.as_array().expect("history") {
                let id = h["checkpoint_id"].as_str().expect("id");
                let got = run_json(&["dump", "--db", db, thread, "--ns", ns, "--checkpoint", id]);
                if !same(&got, &h["messages"]) {
                    failures.push(format!(
                        "{thread} {ns} @ {id}: dump\n  memctl:    {got}\n  langgraph: {}",
                        h["messages"]
                    ));
                }
                *subgraph += 1;
            }
        }
        // The latest state: tokens (approximate, LangChain's count_tokens_approximately).
        let latest = &t["history"][0];
        let tokens = run_json(&["tokens", "--db", db, thread, "--format", "json"]);
        if tokens["total"] != latest["tokens_approx"] {
            failures.push(format!(
                "{thread}: tokens {} / langgraph {}",
                tokens["total"], latest["tokens_approx"]
            ));
        }
        let list = run_json(&["threads", "list", "--db", db, "--format", "json"]);
        let row = list
            .as_array()
            .expect("rows")
            .iter()
            .find(|r| r["thread_id"] == thread.as_str())
            .expect("listed");
        let n = latest["messages"].as_array().map(Vec::len);
        if row["messages"].as_u64().map(|m| m as usize) != n
            || row["tokens"] != latest["tokens_approx"]
        {
            failures.push(format!("{thread}: threads list {row} / langgraph {n:?}"));
        }
    }
    seen
}

/// The text of a `model_dump()` message's content: a string, or its text blocks joined.
pub fn content_text(m: &Json) -> String {
    match &m["content"] {
        Json::String(t) => t.clone(),
        Json::Array(blocks) => blocks
            .iter()
            .filter_map(|b| b.as_str().or_else(|| b["text"].as_str()))
            .collect::<Vec<_>>()
            .join(" "),
        _ => String::new(),
    }
}

/// `(checkpoint, message index)` of find's message hits.
pub fn found_messages(hits: &Json) -> std::collections::BTreeSet<(String, u64)> {
    hits.as_array()
        .expect("hits")
        .iter()
        .filter_map(|h| {
            Some((
                h["checkpoint_id"].as_str()?.to_owned(),
                h["index"].as_u64()?,
            ))
        })
        .collect()
}

/// `find` (latest and `--history`) of each thread's last human text on `db` against the
/// states in `states`: how many threads were searched, and the differences.
pub fn check_find(db: &str, states: &Json) -> (usize, Vec<String>) {
    let mut failures = Vec::new();
    let mut searched = 0;
    for (thread, t) in states["threads"].as_object().expect("threads") {
        let latest = t["latest_messages"].as_array().expect("latest messages");
        // The last human message's text: in the state get_state shows, and (--history) in
        // every state of get_state_history that holds it.
        let Some(text) = latest
            .iter()
            .rev()
            .find(|m| m["type"] == "human")
            .map(content_text)
            .filter(|t| !t.is_empty())
        else {
            continue;
        };
        let holds = |msgs: &Json, id: &str| {
            msgs.as_array()
                .expect("messages")
                .iter()
                .enumerate()
                .filter(|(_, m)| content_text(m).contains(&text))
                .map(|(i, _)| (id.to_owned(), i as u64))
                .collect::<Vec<_>>()
        };
        let latest_id = t["latest_checkpoint_id"].as_str().expect("id");
        let want: std::collections::BTreeSet<_> = holds(&t["latest_messages"], latest_id)
            .into_iter()
            .collect();
        let args = ["find", "--db", db, "--thread", thread, "--format", "json"];
        let got = found_messages(&run_json(&[&args[..], &[&text]].concat()));
        if got != want || want.is_empty() {
            failures.push(format!(
                "{thread}: find {text:?}: memctl {got:?}, langgraph get_state {want:?}"
            ));
        }
        let want: std::collections::BTreeSet<_> = t["history"]
            .as_array()
            .expect("history")
            .iter()
            .flat_map(|h| holds(&h["messages"], h["checkpoint_id"].as_str().expect("id")))
            .collect();
        let got = found_messages(&run_json(&[&args[..], &["--history", &text]].concat()));
        if got != want {
            failures.push(format!(
                "{thread}: find --history {text:?}: memctl {got:?}, langgraph get_state_history {want:?}"
            ));
        }
        searched += 1;
    }
    (searched, failures)
}
