//! Interop on encrypted databases: memctl rewrites a copy of an encrypted fixture, then real
//! LangGraph with the same key (`EncryptedSerializer.from_pycryptodome_aes()`, LANGGRAPH_AES_KEY
//! set as an app sets it; tests/interop/harness.py in the pinned venvs) compares it field by
//! field with its own `update_state` on another copy (decrypted values; the type tags equal),
//! loads the state and continues the thread. After `rekey`, LangGraph with the new key reads
//! every row as before, and with the old key it cannot; a live app with docs/encryption.md's two-key
//! cipher runs through a rotation. These tests fail, never skip, when LangGraph is missing.

mod common;

use common::run_parallel;

use common::python;

use std::path::Path;
use std::process::Command;

use common::{expected, fixture, memctl, s, temp_copy};
use serde_json::{json, Value as Json};

/// Runs the harness with LANGGRAPH_AES_KEY = `key` (and the old key of a rotation).
fn harness(gen: &str, key: &str, old: Option<&str>, args: &[&str]) -> (bool, String) {
    let ran = common::Harness::new(gen, "harness.py")
        .env("LANGGRAPH_AES_KEY", Some(key))
        .env("MEMCTL_INTEROP_OLD_AES_KEY", old)
        .run(args);
    (ran.ok, ran.text())
}

/// The harness's JSON report (stdout up to the last brace).
fn report(text: &str) -> Json {
    let end = text.rfind('}').expect("json");
    serde_json::from_str(&text[..=end]).unwrap_or_else(|e| panic!("{e}: {text}"))
}

fn key_of(name: &str) -> String {
    expected(name)["encryption"]["key"]
        .as_str()
        .expect("key")
        .to_owned()
}

fn memctl_json(key: &str, args: &[&str]) -> Json {
    let out = memctl()
        .env("LANGGRAPH_AES_KEY", key)
        .args(args)
        .output()
        .expect("memctl runs");
    assert!(
        out.status.success(),
        "memctl {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("json")
}

/// memctl rewrites a copy of fixture `name` (`args`), then the harness checks it against
/// update_state on the pristine fixture with `expect`.
fn check(gen: &str, name: &str, thread: &str, args: &[&str], expect: Json) -> Result<(), String> {
    let key = key_of(name);
    let original = fixture(&format!("{name}.sqlite"));
    let (dir, db) = temp_copy(&original);
    let mut a = args.to_vec();
    a.extend(["--db", s(&db), "--thread", thread, "--format", "json"]);
    let out = memctl_json(&key, &a);
    let mut expect = expect;
    if out["threads"][0]["status"] == "rewritten" || out["threads"][0]["status"] == "summarized" {
        expect["expect_write"] = json!(true);
    }
    check_rewrite(gen, &key, &original, &db, thread, &expect, dir.path()).map_err(|e| {
        format!(
            "{name}/{thread} {args:?} ({}):\n{e}",
            out["threads"][0]["status"]
        )
    })
}

fn check_rewrite(
    gen: &str,
    key: &str,
    original: &Path,
    rewritten: &Path,
    thread: &str,
    expect: &Json,
    dir: &Path,
) -> Result<(), String> {
    let ran = common::Harness::new(gen, "harness.py")
        .env("LANGGRAPH_AES_KEY", Some(key))
        .check_rewrite(&common::Rewrite {
            original,
            rewritten,
            thread,
            graph: None,
            expect,
            dir,
        });
    if ran.ok {
        Ok(())
    } else {
        Err(ran.text())
    }
}

/// Both saver generations; the mixed file's threads, encrypted and plain.
#[test]
fn trim_and_rm_of_encrypted_threads_are_what_langgraph_update_state_writes() {
    let mut cases: Vec<(&str, &str, String, Vec<String>, Json)> = Vec::new();
    let v = |a: &[&str]| a.iter().map(|x| (*x).to_owned()).collect::<Vec<_>>();
    for (gen, name, threads) in [
        (
            "new",
            "encrypted-new",
            &[
                "1",
                "tools",
                "custom-state",
                "unicode",
                "dict-input",
                "tuple-args",
                "summarized",
            ][..],
        ),
        (
            "old",
            "encrypted-old",
            &[
                "1",
                "tools",
                "custom-state",
                "unicode",
                "system",
                "tuple-args",
            ][..],
        ),
        // 'tools' is plain in a file whose app now encrypts: its new rows are encrypted, as
        // the app's update_state writes them.
        (
            "new",
            "encrypted-mixed",
            &["1", "system", "custom-state", "tools"][..],
        ),
    ] {
        let exp = expected(name);
        for thread in threads {
            cases.push((
                gen,
                name,
                (*thread).to_owned(),
                v(&["trim", "--keep", "2"]),
                json!({"mode": "trim", "max_tokens": 2, "counter": "len", "keep_first": false}),
            ));
            let msgs = exp["threads"][thread]["state_messages"]
                .as_array()
                .expect("messages")
                .clone();
            // (not 'summarized': its next turn summarizes again, as in tests/interop.rs)
            let plain_chat = msgs[0]["type"] == "human" && msgs[1]["type"] != "tool";
            if *thread != "summarized" && msgs.len() > 2 && plain_chat {
                let ids: Vec<Json> = msgs[1..].iter().map(|m| m["id"].clone()).collect();
                cases.push((
                    gen,
                    name,
                    (*thread).to_owned(),
                    v(&["rm", "--index", "0"]),
                    json!({"mode": "ids", "ids": ids}),
                ));
            }
        }
    }
    run_parallel(cases, |(gen, name, thread, args, expect)| {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        check(gen, name, &thread, &args, expect)
    });
}

/// summarize through a real chat server on an encrypted thread of each generation.
#[test]
fn summarize_of_an_encrypted_thread_is_what_langgraph_update_state_writes() {
    use common::chat_server::{ChatServer, Reply};
    let server = ChatServer::start(|_, n| Reply::Summary(format!("Summary {n} of the talk.")));
    for (gen, name) in [("new", "encrypted-new"), ("old", "encrypted-old")] {
        let key = key_of(name);
        let original = fixture(&format!("{name}.sqlite"));
        let (dir, db) = temp_copy(&original);
        let out = memctl_json(
            &key,
            &[
                "summarize",
                "--db",
                s(&db),
                "--thread",
                "system",
                "--keep",
                "3",
                "--endpoint",
                &server.url,
                "--model",
                "m",
                "--format",
                "json",
            ],
        );
        assert_eq!(out["threads"][0]["status"], "summarized", "{name}: {out}");
        let state = memctl_json(&key, &["dump", "--db", s(&db), "--thread", "system"]);
        let items: Vec<Json> = state
            .as_array()
            .expect("messages")
            .iter()
            .map(|m| {
                if m["additional_kwargs"]["lc_source"] == "summarization" {
                    m.clone()
                } else {
                    json!({"id": m["id"]})
                }
            })
            .collect();
        let expect = json!({"mode": "messages", "messages": items, "expect_write": true});
        if let Err(e) = check_rewrite(gen, &key, &original, &db, "system", &expect, dir.path()) {
            panic!("{name}: {e}");
        }
    }
}

/// rm --purge: LangGraph with the key finds the removed text in no decrypted value of any
/// row and in no byte of the file, and continues the thread and the others.
#[test]
fn purged_encrypted_thread_keeps_no_trace_and_continues() {
    for (gen, name) in [("new", "encrypted-new"), ("old", "encrypted-old")] {
        let key = key_of(name);
        let (_dir, db) = temp_copy(&fixture(&format!("{name}.sqlite")));
        let (ok, text) = harness(
            gen,
            &key,
            None,
            &["find-text", "--db", s(&db), "--text", "hunter2"],
        );
        assert!(ok, "{text}");
        assert!(
            !report(&text)["rows"].as_array().expect("rows").is_empty(),
            "{name}: the fixture holds the text before: {text}"
        );
        let out = memctl_json(
            &key,
            &[
                "rm",
                "--db",
                s(&db),
                "--thread",
                "dict-input",
                "--match",
                "hunter2",
                "--purge",
                "--format",
                "json",
            ],
        );
        assert_eq!(out["threads"][0]["status"], "purged", "{name}: {out}");
        let (ok, text) = harness(
            gen,
            &key,
            None,
            &["find-text", "--db", s(&db), "--text", "hunter2"],
        );
        assert!(ok, "{text}");
        let found = report(&text);
        assert_eq!(found["rows"], json!([]), "{name}: {found}");
        assert_eq!(found["raw_files"], json!([]), "{name}: {found}");
        for thread in ["dict-input", "1", "tools"] {
            let (ok, text) = harness(
                gen,
                &key,
                None,
                &["continue", "--db", s(&db), "--thread", thread, "--copy"],
            );
            assert!(
                ok,
                "{name}/{thread}: LangGraph continues after the purge:\n{text}"
            );
        }
    }
}

/// gc keeps encrypted threads loadable: LangGraph reads the same state and continues.
#[test]
fn gc_of_an_encrypted_file_leaves_threads_langgraph_loads() {
    let name = "encrypted-new";
    let key = key_of(name);
    let (_dir, db) = temp_copy(&fixture(&format!("{name}.sqlite")));
    let out = memctl_json(
        &key,
        &[
            "gc",
            "--db",
            s(&db),
            "--all",
            "--keep-checkpoints",
            "1",
            "--min-idle",
            "0s",
            "--vacuum",
            "--format",
            "json",
        ],
    );
    assert!(out["deleted"]["checkpoints"].as_u64() > Some(50), "{out}");
    let exp = expected(name);
    for thread in ["1", "tools", "custom-state", "system"] {
        let (ok, text) = harness(
            "new",
            &key,
            None,
            &[
                "state",
                "--db",
                s(&db),
                "--thread",
                thread,
                "--graph",
                thread,
            ],
        );
        assert!(ok, "{thread}: {text}");
        assert_eq!(
            report(&text)["messages"],
            exp["threads"][thread]["state_messages"],
            "{thread}"
        );
        let (ok, text) = harness(
            "new",
            &key,
            None,
            &["continue", "--db", s(&db), "--thread", thread, "--copy"],
        );
        assert!(ok, "{thread}: {text}");
    }
}

/// After a rotation LangGraph with the new key reads every checkpoint and write of every
/// thread equal to before; with the old key it cannot; the threads continue.
#[test]
fn after_rekey_langgraph_reads_every_row_with_the_new_key_only() {
    const NEW: &str = "rotated-key-24-bytes-ok!";
    for (gen, name) in [
        ("new", "encrypted-new"),
        ("old", "encrypted-old"),
        ("new", "encrypted-mixed"),
    ] {
        let old = key_of(name);
        let (_dir, db) = temp_copy(&fixture(&format!("{name}.sqlite")));
        let (ok, before) = harness(gen, &old, None, &["rows", "--db", s(&db)]);
        assert!(ok, "{name}: {before}");
        let out = memctl()
            .env("OLD", &old)
            .env("NEW", NEW)
            .args([
                "rekey",
                "--db",
                s(&db),
                "--old-key-env",
                "OLD",
                "--new-key-env",
                "NEW",
            ])
            .output()
            .expect("runs");
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let (ok, after) = harness(gen, NEW, None, &["rows", "--db", s(&db)]);
        assert!(
            ok,
            "{name}: LangGraph with the new key reads every row:\n{after}"
        );
        let (b, a) = (report(&before), report(&after));
        assert_eq!(
            a["checkpoints"], b["checkpoints"],
            "{name}: checkpoints equal"
        );
        assert_eq!(a["writes"], b["writes"], "{name}: writes equal");
        assert!(
            a["types"]
                .as_object()
                .expect("types")
                .keys()
                .all(|t| t.ends_with("+aes")),
            "{name}: {}",
            a["types"]
        );
        let (ok, text) = harness(gen, &old, None, &["rows", "--db", s(&db)]);
        assert!(
            !ok,
            "{name}: the old key must no longer read the rows:\n{text}"
        );
        let (ok, text) = harness(
            gen,
            NEW,
            None,
            &["continue", "--db", s(&db), "--thread", "1", "--copy"],
        );
        assert!(ok, "{name}: {text}");
    }
}

/// docs/encryption.md's way to rotate beside a live app: the app runs with the two-key cipher
/// (encrypts with the new key, decrypts with either) while memctl rekeys; the app sees no
/// error and loses no turn, and afterwards the new key alone reads everything.
#[test]
fn rekey_runs_beside_a_live_app_with_the_two_key_cipher() {
    const NEW: &str = "live-rotation-key-32-bytes-long!";
    let old = key_of("encrypted-new");
    let (dir, db) = temp_copy(&fixture("encrypted-new.sqlite"));
    let conn = rusqlite::Connection::open(&db).expect("open");
    let mode: String = conn
        .query_row("PRAGMA journal_mode = WAL", [], |r| r.get(0))
        .expect("wal");
    assert_eq!(mode, "wal");
    drop(conn);
    let stop = dir.path().join("stop");
    let app = Command::new(python("new"))
        .arg(common::root().join("tests/interop/harness.py"))
        .args([
            "live-app",
            "--db",
            s(&db),
            "--graph",
            "1",
            "--threads",
            "1,live-2",
        ])
        .args(["--seconds", "120", "--stop-file", s(&stop)])
        .env("LANGGRAPH_AES_KEY", NEW)
        .env("MEMCTL_INTEROP_OLD_AES_KEY", &old)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("the app starts");
    // Let the app run a few turns first (its new rows are under the new key).
    let started = std::time::Instant::now();
    loop {
        let listed = memctl()
            .args(["threads", "list", "--db", s(&db), "--format", "json"])
            .output()
            .expect("runs");
        if String::from_utf8_lossy(&listed.stdout).contains("live-2") {
            break;
        }
        assert!(started.elapsed().as_secs() < 90, "the app never wrote");
        std::thread::sleep(std::time::Duration::from_millis(200));
    }
    for round in 0..2 {
        let out = memctl()
            .env("OLD", &old)
            .env("NEW", NEW)
            .args([
                "rekey",
                "--db",
                s(&db),
                "--old-key-env",
                "OLD",
                "--new-key-env",
                "NEW",
                "--batch",
                "8",
                "--format",
                "json",
            ])
            .output()
            .expect("runs");
        assert!(
            out.status.success(),
            "round {round}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    std::fs::write(&stop, b"stop").expect("stop file");
    let result = app.wait_with_output().expect("the app ends");
    let app_report = String::from_utf8_lossy(&result.stdout);
    assert!(
        result.status.success(),
        "the app saw errors:\n{app_report}\n{}",
        String::from_utf8_lossy(&result.stderr)
    );
    // Everything is under the new key now: LangGraph with it alone reads every row, and a dry
    // run finds nothing left to change.
    let (ok, text) = harness("new", NEW, None, &["rows", "--db", s(&db)]);
    assert!(ok, "{text}");
    let out = memctl()
        .env("OLD", &old)
        .env("NEW", NEW)
        .args([
            "rekey",
            "--db",
            s(&db),
            "--old-key-env",
            "OLD",
            "--new-key-env",
            "NEW",
            "--dry-run",
            "--format",
            "json",
        ])
        .output()
        .expect("runs");
    let dry: Json = serde_json::from_slice(&out.stdout).expect("json");
    assert_eq!(dry["changed"], 0, "{dry}");
    for (thread, graph) in [("1", "1"), ("live-2", "1"), ("tools", "tools")] {
        let (ok, text) = harness(
            "new",
            NEW,
            None,
            &[
                "continue",
                "--db",
                s(&db),
                "--thread",
                thread,
                "--graph",
                graph,
                "--copy",
            ],
        );
        assert!(ok, "{thread}: {text}");
    }
}
