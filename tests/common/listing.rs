//! Whole-database lists (`threads list`, `tokens --all`) streamed in thread-id order give what
//! the collected list gives: the same rows, in the order asked, with the same totals; and the
//! stores' streams, in batches of any size, give what their collected reads give.

use std::path::Path;

use serde_json::Value as Json;

use super::{run_json, run_ok};

/// One clock for every run (ages are in seconds).
const NOW: &str = "2026-12-02T00:00:00Z";

/// The rows of `memctl <args> --db <db> --format <format>` (json: the array; jsonl: the lines).
fn rows(db: &str, args: &[&str], format: &str) -> Vec<Json> {
    let mut a = vec!["--now", NOW];
    a.extend(args);
    a.extend(["--db", db, "--format", format]);
    match format {
        "json" => run_json(&a).as_array().cloned().unwrap_or_default(),
        _ => run_ok(&a)
            .lines()
            .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{a:?}: {e}: {l}")))
            .collect(),
    }
}

/// `rows` ordered as `key` orders them, largest first, ties in thread-id order: what the
/// collected list did (a stable sort of the thread-id-ordered rows).
fn sorted_by(mut rows: Vec<Json>, key: &str) -> Vec<Json> {
    let id = |r: &Json| r["thread_id"].as_str().unwrap_or_default().to_owned();
    rows.sort_by_key(id);
    rows.sort_by(|a, b| cmp_key(&b[key], &a[key]));
    rows
}

/// Orders two JSON values of one field (numbers, times as RFC 3339 text, null first).
fn cmp_key(a: &Json, b: &Json) -> std::cmp::Ordering {
    match (a, b) {
        (Json::Null, Json::Null) => std::cmp::Ordering::Equal,
        (Json::Null, _) => std::cmp::Ordering::Less,
        (_, Json::Null) => std::cmp::Ordering::Greater,
        (Json::Number(x), Json::Number(y)) => x
            .as_f64()
            .partial_cmp(&y.as_f64())
            .unwrap_or(std::cmp::Ordering::Equal),
        _ => a.as_str().cmp(&b.as_str()),
    }
}

/// Every failure of the checks on `db` (a SQLite file or a Postgres URL).
pub fn lists_stream_as_they_collect(db: &str) -> Vec<String> {
    let mut failures = Vec::new();
    let mut check = |ok: bool, what: String| {
        if !ok {
            failures.push(what);
        }
    };
    // threads list: --sort thread is every thread once, in thread-id order; each sort is
    // that list sorted by its key (ties in thread-id order); JSON lines equal the JSON array.
    let by_thread = rows(db, &["threads", "list", "--sort", "thread"], "jsonl");
    let ids: Vec<&str> = by_thread
        .iter()
        .map(|r| r["thread_id"].as_str().unwrap_or_default())
        .collect();
    let mut sorted_ids = ids.clone();
    sorted_ids.sort_unstable();
    sorted_ids.dedup();
    check(
        ids.len() > 2 && ids == sorted_ids,
        format!("threads list --sort thread is not every thread in id order: {ids:?}"),
    );
    for (sort, key) in [
        ("updated", "updated_at"),
        ("size", "bytes"),
        ("messages", "messages"),
        ("checkpoints", "checkpoints"),
        ("tokens", "tokens"),
    ] {
        let want = sorted_by(by_thread.clone(), key);
        for format in ["json", "jsonl"] {
            let got = rows(db, &["threads", "list", "--sort", sort], format);
            // `updated_at` is shown to the second, sorted to the nanosecond: the same rows,
            // never newer after older.
            let same = match key {
                "updated_at" => {
                    got.windows(2)
                        .all(|w| cmp_key(&w[0][key], &w[1][key]).is_ge())
                        && sorted_by(got.clone(), "thread_id")
                            == sorted_by(want.clone(), "thread_id")
                }
                _ => got == want,
            };
            check(
                same,
                format!(
                    "threads list --sort {sort} --format {format} is not the list sorted by {key}"
                ),
            );
        }
    }
    for sort in ["thread", "updated", "size"] {
        let all = rows(db, &["threads", "list", "--sort", sort], "json");
        for n in 0..=all.len() + 1 {
            let head: Vec<Json> = all.iter().take(n).cloned().collect();
            let limit = n.to_string();
            for format in ["json", "jsonl"] {
                let args = ["threads", "list", "--sort", sort, "--limit", &limit];
                check(
                    rows(db, &args, format) == head,
                    format!(
                        "threads list --sort {sort} --limit {n} --format {format} is not the head"
                    ),
                );
            }
        }
    }
    // The table: one row per thread, in the order of the JSON list.
    let table = run_ok(&[
        "--now", NOW, "threads", "list", "--sort", "thread", "--db", db,
    ]);
    let table_ids: Vec<&str> = table
        .lines()
        .skip(1)
        .filter_map(|l| l.split_whitespace().next())
        .collect();
    check(
        table_ids.len() == ids.len(),
        format!(
            "the table has {} rows for {} threads:\n{table}",
            table_ids.len(),
            ids.len()
        ),
    );
    // tokens --all: --sort thread is the tokens list in thread-id order; the table's total
    // line counts the rows shown and sums their tokens.
    let tokens = rows(db, &["tokens", "--all"], "json");
    let tokens_by_thread = rows(db, &["tokens", "--all", "--sort", "thread"], "jsonl");
    let mut resorted = tokens_by_thread.clone();
    resorted.sort_by_key(|r| r["thread_id"].as_str().unwrap_or_default().to_owned());
    check(
        resorted == tokens_by_thread,
        "tokens --all --sort thread is not in thread-id order".into(),
    );
    check(
        sorted_by(tokens_by_thread.clone(), "tokens") == tokens,
        "tokens --all is not the thread-id list sorted by tokens".into(),
    );
    for (limit, args) in [
        (tokens.len(), vec!["tokens", "--all"]),
        (2, vec!["tokens", "--all", "--limit", "2"]),
        (
            2,
            vec!["tokens", "--all", "--limit", "2", "--sort", "thread"],
        ),
    ] {
        let shown = if args.contains(&"thread") {
            &tokens_by_thread
        } else {
            &tokens
        };
        let sum: u64 = shown
            .iter()
            .take(limit)
            .filter_map(|r| r["tokens"].as_u64())
            .sum();
        let mut a = args.clone();
        a.extend(["--db", db]);
        let table = run_ok(&a);
        let want = format!("{limit} threads, {sum} tokens (approx)");
        check(
            table.lines().last() == Some(want.as_str()),
            format!("{args:?}: the total is not '{want}':\n{table}"),
        );
    }
    failures
}

/// Every failure of the stores' streams against their collected reads on `db`, in batches of
/// several sizes, stopped early too.
pub fn stores_stream_what_they_collect(db: &Path) -> Vec<String> {
    use memctl::storage::{open, Access, CheckpointStore};
    let keys = memctl::codec::aes::Keyring::none();
    let store: Box<dyn CheckpointStore> = open(
        db,
        None,
        Access::ReadOnly,
        std::time::Duration::from_secs(5),
        &keys,
    )
    .expect("opens");
    let mut failures = Vec::new();
    let mut collected = Vec::new();
    store
        .for_each_thread(&mut |t| {
            collected.push(format!("{t:?}"));
            Ok(())
        })
        .expect("reads");
    let latest = store.latest_root_ids().expect("reads");
    for batch in [1, 2, 3, 1000] {
        let mut streamed = Vec::new();
        store
            .stream_threads(batch, &mut |b| {
                assert!(!b.is_empty() && b.len() <= batch);
                streamed.extend(b.iter().map(|t| format!("{t:?}")));
                Ok(true)
            })
            .expect("streams");
        if streamed != collected {
            failures.push(format!(
                "stream_threads({batch}) differs:\n{streamed:#?}\n{collected:#?}"
            ));
        }
        let mut ids = Vec::new();
        store
            .stream_latest_root_ids(batch, &mut |b| {
                ids.extend(b);
                Ok(true)
            })
            .expect("streams");
        if ids != latest {
            failures.push(format!("stream_latest_root_ids({batch}) differs"));
        }
        // Stopped after the first batch: that batch only, and the store still reads.
        let mut first = Vec::new();
        store
            .stream_threads(batch, &mut |b| {
                first.extend(b.into_iter().map(|t| format!("{t:?}")));
                Ok(false)
            })
            .expect("streams");
        if first[..] != collected[..batch.min(collected.len())] {
            failures.push(format!(
                "stream_threads({batch}) stopped is not the first batch"
            ));
        }
        if store.latest_root_ids().ok().as_ref() != Some(&latest) {
            failures.push(format!(
                "the store does not read after a stopped stream ({batch})"
            ));
        }
    }
    failures
}
