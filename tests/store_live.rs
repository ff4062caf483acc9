//! The Store beside a live app (#28): a real LangGraph `SqliteStore` app keeps rewriting items
//! (`put`, a new value and expires_at) in every namespace memctl deletes from while `store
//! sweep`, `store rm NAMESPACE` and `forget --meta` run (each deletes in batches of its own
//! transaction, deciding per item in the DELETE itself). No app write fails, none is lost: an
//! item the app rewrote is never deleted by a sweep, and `rm` / `forget` take the items as they
//! read them, never a version the app wrote after.

mod common;

use std::path::Path;
use std::process::{Command, Stdio};

use common::{fixture, python, run_json, s, temp_copy};
use serde_json::{json, Value as Json};

/// The seeded items (the live app's harness rewrites some of each: LIVE_WRITES).
const OLD: usize = 12000;
const BULK: usize = 1200;
const U9: usize = 600;
/// How many of each the app may rewrite (harness_store.py's LIVE_WRITES: the first quarter):
/// the others only memctl touches, so each command must have deleted every one of them,
/// however many rounds the app made meanwhile (a slow run under load once let the app rewrite
/// every u-9 item between forget's read and its delete: nothing left for it to delete).
const APP_OLD: usize = 3000;
const APP_BULK: usize = 300;
const APP_U9: usize = 150;
/// memctl's busy timeout here: a commit of the app can take seconds on a loaded disk.
const BUSY_MS: &str = "60000";

fn seed(db: &Path) {
    let mut c = rusqlite::Connection::open(db).expect("open");
    let tx = c.transaction().expect("begin");
    {
        let mut put = tx
            .prepare(
                "INSERT INTO store (prefix, key, value, expires_at, ttl_minutes) VALUES (?1, ?2, ?3, ?4, ?5)",
            )
            .expect("prepare");
        let mut add = |prefix: &str, key: String, value: Json, expired: bool| {
            let (expires, ttl) = if expired {
                (Some("2025-01-01 00:00:00.000000+00:00"), Some(60.0))
            } else {
                (None, None)
            };
            put.execute(rusqlite::params![
                prefix,
                key,
                value.to_string().into_bytes(),
                expires,
                ttl
            ])
            .expect("insert");
        };
        for i in 0..OLD {
            add("live.old", format!("o{i}"), json!({"seed": i}), true);
        }
        for i in 0..BULK {
            add("live.bulk", format!("b{i}"), json!({"seed": i}), false);
        }
        for i in 0..U9 {
            add(
                "users.u-9.memories",
                format!("m{i}"),
                json!({"seed": i, "user_id": "u-9"}),
                false,
            );
        }
    }
    tx.commit().expect("commit");
}

fn progress(file: &Path) -> u64 {
    std::fs::read_to_string(file)
        .ok()
        .and_then(|t| t.trim().parse().ok())
        .unwrap_or(0)
}

/// Every item of namespace `prefix`: key and value.
fn items(db: &Path, prefix: &str) -> Vec<(String, Json)> {
    let c = rusqlite::Connection::open(db).expect("open");
    let mut st = c
        .prepare("SELECT key, CAST(value AS TEXT) FROM store WHERE prefix = ?1")
        .expect("prepare");
    let rows = st
        .query_map([prefix], |r| {
            Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?))
        })
        .expect("query");
    rows.map(|r| {
        let (k, v) = r.expect("row");
        (k, serde_json::from_str(&v).expect("JSON"))
    })
    .collect()
}

#[test]
#[cfg_attr(
    not(feature = "env-tests"),
    ignore = "needs scripts/test.sh's environment (--features env-tests)"
)]
fn deletes_beside_a_live_app_lose_no_write() {
    let (dir, db) = temp_copy(&fixture("store.sqlite"));
    seed(&db);
    let stop = dir.path().join("stop");
    let prog = dir.path().join("progress");
    let app = Command::new(python("new"))
        .arg(common::root().join("tests/interop/harness_store.py"))
        .args(["live", "--db", s(&db), "--stop-file", s(&stop)])
        .args(["--progress-file", s(&prog)])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the app starts");
    common::wait_for("the app's first rounds", || progress(&prog) >= 3);

    let swept = run_json(&[
        "store",
        "sweep",
        "--db",
        s(&db),
        "--format",
        "json",
        "--busy-timeout",
        BUSY_MS,
    ]);
    let rm = run_json(&[
        "store",
        "rm",
        "live.bulk",
        "--db",
        s(&db),
        "--format",
        "json",
        "--busy-timeout",
        BUSY_MS,
    ]);
    let forgot = common::memctl()
        .args(["forget", "--meta", "user_id=u-9", "--db", s(&db)])
        .args(["--format", "json", "--busy-timeout", BUSY_MS])
        .output()
        .expect("memctl runs");
    let forgot_code = forgot.status.code();
    let forgot: Json = serde_json::from_slice(&forgot.stdout)
        .unwrap_or_else(|e| panic!("forget: {e}: {}", String::from_utf8_lossy(&forgot.stderr)));
    // The app carries on after memctl: a few more rounds, then it stops.
    let after = progress(&prog);
    common::wait_for("the app's rounds after memctl", || {
        progress(&prog) >= after + 3
    });
    std::fs::write(&stop, "").expect("stop file");
    let out = app.wait_with_output().expect("the app ends");
    assert!(
        out.status.success(),
        "the app: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let app: Json = serde_json::from_slice(&out.stdout).expect("the app's report");
    assert_eq!(app["errors"], json!([]), "no app write failed");
    let finals = app["final"].as_object().expect("final");

    // The sweep: several batches of the expired seed; every item the app rewrote (a new
    // expires_at) holds the app's last write, whenever the sweep reached it.
    let rewritten_old = finals.keys().filter(|k| k.starts_with("live.old|")).count();
    let swept_n = swept["items"].as_u64().expect("items") as usize;
    assert!(
        swept_n >= OLD - APP_OLD,
        "{swept_n}: every expired item the app never rewrote (several batches of the sweep)"
    );
    assert!(
        swept_n + rewritten_old >= OLD,
        "{swept_n} + {rewritten_old}"
    );
    for prefix in ["live.old", "live.app"] {
        let now: std::collections::HashMap<String, Json> = items(&db, prefix).into_iter().collect();
        for (k, v) in finals
            .iter()
            .filter(|(k, _)| k.starts_with(&format!("{prefix}|")))
        {
            let key = &k[prefix.len() + 1..];
            assert_eq!(
                now.get(key),
                Some(v),
                "{prefix}/{key}: the app's last write"
            );
        }
        if prefix == "live.old" {
            // What is left of live.old is the app's: no expired seed survived the sweep.
            assert!(now.values().all(|v| v.get("seed").is_none()));
        }
    }
    // rm and forget took the items as they read them: every seeded key was deleted by them or
    // rewritten by the app (how many of each depends on the machine's speed, not asserted),
    // no seed value is left, and whatever is left is the app's last write of that key.
    let rewritten = |prefix: &str| {
        finals
            .keys()
            .filter(|k| k.starts_with(&format!("{prefix}|")))
            .count()
    };
    let rm_n = rm["items"].as_u64().expect("items") as usize;
    assert!(
        rm_n >= BULK - APP_BULK && rm_n + rewritten("live.bulk") >= BULK,
        "{rm}"
    );
    let forgot_n = forgot["store"]["items"].as_u64().expect("items") as usize;
    assert!(
        forgot_n >= U9 - APP_U9 && forgot_n + rewritten("users.u-9.memories") >= U9,
        "{forgot:#}"
    );
    // forget says what the app wrote meanwhile: NOT CLEAN (exit 3) when the app put items in
    // u-9's namespace after forget read it, naming only those.
    let remaining = forgot["verification"]["remaining"]
        .as_array()
        .expect("remaining");
    match forgot_code {
        Some(0) => assert_eq!(forgot["verification"]["clean"], json!(true)),
        Some(3) => {
            assert_eq!(forgot["verification"]["clean"], json!(false));
            assert!(!remaining.is_empty());
        }
        other => panic!("forget exited {other:?}: {forgot:#}"),
    }
    for r in remaining {
        for row in r["rows"].as_array().expect("rows") {
            let row = row.as_str().expect("text");
            assert!(
                row.contains("namespace 'users.u-9.memories' (still selected by the request)"),
                "{row}"
            );
        }
        assert_eq!(r["raw"], json!([]), "only in items the app wrote: {r}");
    }
    for prefix in ["live.bulk", "users.u-9.memories"] {
        for (key, v) in items(&db, prefix) {
            assert!(
                v.get("seed").is_none(),
                "{prefix}/{key}: a seed value was left"
            );
            assert_eq!(
                finals.get(&format!("{prefix}|{key}")),
                Some(&v),
                "{prefix}/{key}: not the app's last write"
            );
        }
    }
    // With the app stopped, forget again finishes it: clean.
    let again = run_json(&[
        "forget",
        "--meta",
        "user_id=u-9",
        "--db",
        s(&db),
        "--format",
        "json",
    ]);
    assert_eq!(again["verification"]["clean"], json!(true), "{again:#}");
    assert!(items(&db, "users.u-9.memories").is_empty());
}
