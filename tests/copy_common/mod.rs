//! What the tests of threads that travel (copy, export, import, migrate: tests/copy*.rs,
//! tests/export.rs, tests/migrate.rs) share: the thread ids of a file, a memctl run, and
//! LangGraph's views of two databases compared but for what a copy changes.

#![allow(dead_code)]

use std::path::Path;

use serde_json::Value as Json;

use crate::common::memctl;

/// The distinct thread ids of a SQLite file, sorted.
pub fn thread_ids(db: &Path) -> Vec<String> {
    let c = rusqlite::Connection::open_with_flags(db, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)
        .expect("opens");
    let mut st = c
        .prepare("SELECT DISTINCT thread_id FROM checkpoints ORDER BY 1")
        .expect("prepares");
    let ids = st
        .query_map([], |r| r.get::<_, String>(0))
        .expect("queries")
        .collect::<Result<Vec<_>, _>>()
        .expect("rows");
    ids
}

/// Runs memctl with `args` (and `LANGGRAPH_AES_KEY` = `key` when given): its standard output,
/// or its standard error as the failure.
pub fn memctl_ok(args: &[&str], key: Option<&str>) -> Result<String, String> {
    let mut cmd = memctl();
    if let Some(k) = key {
        cmd.env("LANGGRAPH_AES_KEY", k);
    }
    let out = cmd.args(args).output().map_err(|e| e.to_string())?;
    match out.status.success() {
        true => Ok(String::from_utf8_lossy(&out.stdout).into_owned()),
        false => Err(format!(
            "memctl {args:?} failed: {}",
            String::from_utf8_lossy(&out.stderr)
        )),
    }
}

/// `j` without the `thread_id` of any metadata (the one thing a copy changes).
pub fn without_thread_ids(mut j: Json) -> Json {
    fn strip(j: &mut Json) {
        match j {
            Json::Object(o) => {
                if let Some(Json::Object(md)) = o.get_mut("metadata") {
                    md.remove("thread_id");
                }
                o.values_mut().for_each(strip);
            }
            Json::Array(a) => a.iter_mut().for_each(strip),
            _ => {}
        }
    }
    strip(&mut j);
    j
}

/// Ok when LangGraph shows `a` and `b` alike but for the metadata's `thread_id`.
pub fn same(what: &str, a: Json, b: Json) -> Result<(), String> {
    let (a, b) = (without_thread_ids(a), without_thread_ids(b));
    match a == b {
        true => Ok(()),
        false => Err(format!(
            "{what}: LangGraph reads the copy differently\nsource: {a}\ncopy:   {b}"
        )),
    }
}

/// Every row of thread `thread` (of every thread when `None`) as stored: checkpoints, then
/// writes (without `task_path`, which a 2.x file has not), each in key order, the thread id
/// first.
pub fn rows(db: &Path, thread: Option<&str>) -> Vec<Vec<rusqlite::types::Value>> {
    let c = rusqlite::Connection::open_with_flags(db, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)
        .expect("opens");
    let mut out = Vec::new();
    for sql in [
        "SELECT thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, type, checkpoint, metadata \
         FROM checkpoints WHERE ?1 IS NULL OR thread_id = ?1 ORDER BY 1, 2, 3",
        "SELECT thread_id, checkpoint_ns, checkpoint_id, task_id, idx, channel, type, value \
         FROM writes WHERE ?1 IS NULL OR thread_id = ?1 ORDER BY 1, 2, 3, 4, 5",
    ] {
        let mut st = c.prepare(sql).expect("prepares");
        let n = st.column_count();
        let got = st
            .query_map([thread], |r| (0..n).map(|i| r.get(i)).collect())
            .expect("queries")
            .collect::<Result<Vec<Vec<rusqlite::types::Value>>, _>>()
            .expect("rows");
        out.extend(got);
    }
    out
}
