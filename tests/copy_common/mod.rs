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

/// Runs memctl with `args` and the environment variables `env`: its standard output, or its
/// standard error as the failure (with the exit status).
pub fn memctl_env(args: &[&str], env: &[(&str, &str)]) -> Result<String, String> {
    let mut cmd = memctl();
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = cmd.args(args).output().map_err(|e| e.to_string())?;
    match out.status.success() {
        true => Ok(String::from_utf8_lossy(&out.stdout).into_owned()),
        false => Err(format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )),
    }
}

/// `j` without the metadata's `counters_since_delta_snapshot` (what `--materialize` drops:
/// a graph without DeltaChannel counts nothing).
pub fn without_delta_counters(mut j: Json) -> Json {
    fn strip(j: &mut Json) {
        match j {
            Json::Object(o) => {
                if let Some(Json::Object(md)) = o.get_mut("metadata") {
                    md.remove("counters_since_delta_snapshot");
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

/// The distinct value types of a SQLite file's checkpoints and writes, sorted.
pub fn value_types(db: &Path) -> Vec<String> {
    let c = rusqlite::Connection::open_with_flags(db, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)
        .expect("opens");
    let mut st = c
        .prepare("SELECT type FROM checkpoints UNION SELECT type FROM writes ORDER BY 1")
        .expect("prepares");
    let types = st
        .query_map([], |r| r.get::<_, Option<String>>(0))
        .expect("queries")
        .filter_map(|t| t.expect("row"))
        .collect();
    types
}

/// The node_modules with real LangGraph.js: `$MEMCTL_NODE_MODULES`, else
/// fixtures/js/node_modules (a missing one, or a missing node, fails with what to run).
pub fn node_modules() -> std::path::PathBuf {
    let path = std::env::var_os("MEMCTL_NODE_MODULES")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| crate::common::root().join("fixtures/js/node_modules"));
    assert!(
        path.join("@langchain/langgraph/package.json").exists(),
        "LangGraph.js is not installed at {}: run scripts/jsenv.sh (scripts/test.sh does it)",
        path.display()
    );
    path
}

/// `node fixtures/js/states.mjs db [--continue]` (as tests/js_delta.rs runs it): LangGraph.js's
/// view of every thread of `db`, and with `cont` each thread continued one step.
pub fn js_states(db: &Path, cont: bool) -> Result<Json, String> {
    let modules = node_modules();
    let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
    for f in ["graphs.mjs", "states.mjs", "package.json"] {
        std::fs::copy(
            crate::common::root().join("fixtures/js").join(f),
            dir.path().join(f),
        )
        .map_err(|e| e.to_string())?;
    }
    std::os::unix::fs::symlink(&modules, dir.path().join("node_modules"))
        .map_err(|e| e.to_string())?;
    let mut cmd = std::process::Command::new("node");
    cmd.arg(dir.path().join("states.mjs")).arg(db);
    if cont {
        cmd.arg("--continue");
    }
    let out = cmd.output().map_err(|e| format!("node: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "states.mjs failed:\n{}",
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    serde_json::from_slice(&out.stdout).map_err(|e| e.to_string())
}

/// The `(checkpoint_id, channel)` pairs a JSON copy report (of one thread) names as held once
/// per version on Postgres (`shared_versions`).
pub fn shared_pairs(report: &Json) -> Vec<(String, String)> {
    report["shared_versions"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|v| {
            let f = |k: &str| v[k].as_str().unwrap_or_default().to_owned();
            (f("checkpoint_id"), f("channel"))
        })
        .collect()
}

/// `j`'s history without the values of `pairs` (values a Postgres target holds once per
/// version: LangGraph reads them as of that version, see tests/copy_postgres.rs).
pub fn blanked(mut j: Json, pairs: &[(String, String)]) -> Json {
    for h in j["history"].as_array_mut().into_iter().flatten() {
        for (id, channel) in pairs {
            if h["checkpoint_id"] == id.as_str() {
                if let Some(v) = h["values"].as_object_mut() {
                    v.remove(channel);
                }
            }
        }
    }
    j
}
