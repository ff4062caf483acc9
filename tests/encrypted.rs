//! Databases written with LangGraph's EncryptedSerializer.from_pycryptodome_aes (fixtures
//! encrypted-new: AES-256, both generations' scenarios; encrypted-old: AES-192, the 2.x saver;
//! encrypted-mixed: AES-128, plain rows from before encryption was turned on and encrypted
//! rows after). The keys are test data committed in fixtures/expected/encrypted-*.json.
//!
//! Every read expectation of the plain fixtures holds with the key; without it, or with a
//! wrong one, one clear line and nothing written; rewrites write what the app's serializer
//! would (checked here on the rows; tests/encrypted_interop.rs hands them to LangGraph).

mod common;

use std::path::Path;

use common::{expected, fixture, memctl, s, temp_copy};
use serde_json::Value as Json;

/// The encrypted fixtures and their expectations.
const FIXTURES: [&str; 3] = ["encrypted-new", "encrypted-old", "encrypted-mixed"];

fn key_of(exp: &Json) -> String {
    exp["encryption"]["key"]
        .as_str()
        .expect("the key")
        .to_owned()
}

/// memctl with LANGGRAPH_AES_KEY = `key` (or unset).
fn run(key: Option<&str>, args: &[&str]) -> std::process::Output {
    let mut cmd = memctl();
    if let Some(k) = key {
        cmd.env("LANGGRAPH_AES_KEY", k);
    }
    cmd.args(args).output().expect("memctl runs")
}

fn ok_json(key: Option<&str>, args: &[&str]) -> Json {
    let out = run(key, args);
    assert!(
        out.status.success() || common::find_found_nothing(args, &out),
        "memctl {args:?}: {:?}\n{}",
        out.status.code(),
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{args:?}: {e}"))
}

/// Asserts exit 1 with one line on stderr, and returns it.
fn one_line_error(key: Option<&str>, args: &[&str]) -> String {
    let out = run(key, args);
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(1), "{args:?}: {err}");
    assert_eq!(
        err.trim_end().lines().count(),
        1,
        "{args:?}: one line: {err}"
    );
    assert!(!err.contains("panicked"), "{err}");
    err
}

fn threads(exp: &Json) -> Vec<(String, Json)> {
    exp["threads"]
        .as_object()
        .expect("threads")
        .iter()
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect()
}

fn file_bytes(p: &Path) -> Vec<u8> {
    std::fs::read(p).expect("read the database")
}

/// Every (type, value) of the file's checkpoints and writes.
fn rows(db: &Path) -> Vec<(String, Vec<u8>)> {
    let conn = rusqlite::Connection::open(db).expect("open");
    let mut out = Vec::new();
    for sql in [
        "SELECT type, checkpoint FROM checkpoints",
        "SELECT type, value FROM writes",
    ] {
        let mut st = conn.prepare(sql).expect("prepare");
        let it = st
            .query_map([], |r| {
                Ok((r.get::<_, String>(0)?, r.get::<_, Vec<u8>>(1)?))
            })
            .expect("query");
        out.extend(it.map(|r| r.expect("row")));
    }
    out
}

/// Every (type, value) of one thread's checkpoints and writes.
fn rows_of(db: &Path, thread: &str) -> Vec<(String, Vec<u8>)> {
    let conn = rusqlite::Connection::open(db).expect("open");
    let mut out = Vec::new();
    for sql in [
        "SELECT type, checkpoint FROM checkpoints WHERE thread_id = ?1",
        "SELECT type, value FROM writes WHERE thread_id = ?1",
    ] {
        let mut st = conn.prepare(sql).expect("prepare");
        let it = st
            .query_map([thread], |r| {
                Ok((r.get::<_, String>(0)?, r.get::<_, Vec<u8>>(1)?))
            })
            .expect("query");
        out.extend(it.map(|r| r.expect("row")));
    }
    out
}

fn aes_key(text: &str) -> memctl::codec::aes::AesKey {
    memctl::codec::aes::AesKey::new(zeroize::Zeroizing::new(text.as_bytes().to_vec()))
        .expect("a valid key")
}

#[test]
fn dump_history_show_and_tokens_equal_langgraph_with_the_key() {
    for name in FIXTURES {
        let db = fixture(&format!("{name}.sqlite"));
        let exp = expected(name);
        let key = key_of(&exp);
        let k = Some(key.as_str());
        for (thread, t) in threads(&exp) {
            let ctx = format!("{name}/{thread}");
            let dumped = ok_json(k, &["dump", "--db", s(&db), "--thread", &thread]);
            assert_eq!(
                serde_json::to_string(&dumped).ok(),
                serde_json::to_string(&t["state_messages"]).ok(),
                "{ctx}: dump equals get_state"
            );
            let hist = ok_json(k, &["history", "--db", s(&db), &thread, "--format", "json"]);
            let hist = hist.as_array().expect("history");
            let want = t["history"].as_array().expect("history");
            assert_eq!(hist.len(), want.len(), "{ctx}: checkpoints");
            for (g, w) in hist.iter().zip(want) {
                assert_eq!(g["checkpoint_id"], w["checkpoint_id"], "{ctx}");
                assert_eq!(g["step"], w["step"], "{ctx}");
                assert_eq!(g["pending_writes"], w["n_pending_writes"], "{ctx}");
                if w["messages_kind"] == "list" {
                    assert_eq!(g["messages"], w["n_messages"], "{ctx}");
                }
            }
            let shown = ok_json(k, &["show", "--db", s(&db), &thread, "--format", "json"]);
            assert_eq!(shown["next"], t["next"], "{ctx}: next");
            let ids = |v: &Json| -> Vec<Json> {
                v.as_array()
                    .map(|a| a.iter().map(|i| i["id"].clone()).collect())
                    .unwrap_or_default()
            };
            assert_eq!(ids(&shown["interrupts"]), ids(&t["interrupts"]), "{ctx}");
            for (k2, v) in t["other_values"].as_object().expect("values") {
                // Values Python could not give as JSON (reprs, at any depth) are left out.
                if !v.to_string().contains("__repr__") && !shown["values"][k2].is_null() {
                    assert_eq!(&shown["values"][k2], v, "{ctx}: channel {k2}");
                }
            }
            let tokens = ok_json(k, &["tokens", "--db", s(&db), &thread, "--format", "json"]);
            let per: Vec<Json> = tokens["messages"]
                .as_array()
                .expect("per message")
                .iter()
                .map(|m| m["tokens"].clone())
                .collect();
            assert_eq!(
                Json::Array(per),
                t["tokens_approx"]["per_message"],
                "{ctx}: count_tokens_approximately"
            );
            if let Some(n) = t["tokens_openai"]["gpt-4o"].as_u64() {
                let got = ok_json(
                    k,
                    &[
                        "tokens",
                        "--db",
                        s(&db),
                        &thread,
                        "--model",
                        "gpt-4o",
                        "--format",
                        "json",
                    ],
                );
                assert_eq!(got["total"].as_u64(), Some(n), "{ctx}: langchain_openai");
            }
        }
        // threads list: the same rows as for a plain file.
        let listed = ok_json(k, &["threads", "list", "--db", s(&db), "--format", "json"]);
        for (thread, t) in threads(&exp) {
            let row = listed
                .as_array()
                .expect("rows")
                .iter()
                .find(|r| r["thread_id"] == thread.as_str())
                .unwrap_or_else(|| panic!("{name}: {thread} listed"));
            assert_eq!(
                row["messages"], t["history"][0]["n_messages"],
                "{name}/{thread}"
            );
            assert_eq!(row["last_step"], t["history"][0]["step"], "{name}/{thread}");
            assert_eq!(
                row["checkpoints"], t["checkpoints_all_ns"],
                "{name}/{thread}"
            );
        }
    }
}

#[test]
fn without_the_key_one_line_says_to_set_it_and_nothing_is_written() {
    for name in FIXTURES {
        let (_dir, db) = temp_copy(&fixture(&format!("{name}.sqlite")));
        let before = file_bytes(&db);
        let exp = expected(name);
        let thread = threads(&exp)
            .into_iter()
            .find(|(_, t)| t["encrypted"] != "none")
            .map(|(id, _)| id)
            .expect("an encrypted thread");
        for args in [
            vec!["show", thread.as_str()],
            vec!["dump", thread.as_str()],
            vec!["dump", "--raw", thread.as_str()],
            vec!["history", thread.as_str()],
            vec!["diff", thread.as_str()],
            vec!["tokens", thread.as_str()],
            vec!["trim", thread.as_str(), "--keep", "2"],
            vec!["rm", "--thread", thread.as_str(), "--index", "0", "--purge"],
        ] {
            let mut a = args.clone();
            a.extend(["--db", s(&db)]);
            let err = one_line_error(None, &a);
            assert!(
                err.contains("is encrypted with AES") && err.contains("set LANGGRAPH_AES_KEY"),
                "{name} {args:?}: {err}"
            );
            // --key-env names another variable, and the line names it.
            a.extend(["--key-env", "MY_APP_KEY"]);
            let err = one_line_error(None, &a);
            assert!(err.contains("set MY_APP_KEY"), "{name} {args:?}: {err}");
        }
        assert!(file_bytes(&db) == before, "{name}: nothing written");
    }
}

#[test]
fn a_wrong_key_or_a_key_langgraph_refuses_is_one_line_and_nothing_is_written() {
    let (_dir, db) = temp_copy(&fixture("encrypted-new.sqlite"));
    let before = file_bytes(&db);
    for args in [
        vec!["show", "tools"],
        vec!["trim", "tools", "--keep", "2"],
        vec!["rm", "--thread", "tools", "--index", "0", "--purge"],
        vec!["trim", "--all", "--keep", "2"],
    ] {
        let mut a = args.clone();
        a.extend(["--db", s(&db)]);
        // 32 bytes, not the fixture's key.
        let err = one_line_error(Some("another-key-of-thirty-two-bytes!"), &a);
        assert!(
            err.contains("LANGGRAPH_AES_KEY does not decrypt checkpoint"),
            "{args:?}: {err}"
        );
        // LangGraph accepts 16, 24 or 32 bytes (UTF-8 bytes of the variable).
        for bad in ["short", "memctl-test-key-aes256-fixtures!!", "ééééééé"] {
            let err = one_line_error(Some(bad), &a);
            assert!(
                err.contains("LANGGRAPH_AES_KEY must be 16, 24, or 32 bytes long"),
                "{args:?} {bad}: {err}"
            );
            assert!(!err.contains(bad), "the key is never printed: {err}");
        }
    }
    assert!(file_bytes(&db) == before, "nothing written");
}

#[test]
fn threads_list_and_stats_work_without_the_key_and_say_what_they_could_not_show() {
    let db = fixture("encrypted-mixed.sqlite");
    let exp = expected("encrypted-mixed");
    let out = run(
        None,
        &["threads", "list", "--db", s(&db), "--format", "json"],
    );
    assert!(out.status.success());
    let note = String::from_utf8_lossy(&out.stderr);
    assert!(
        note.contains("4 threads are encrypted with AES") && note.contains("LANGGRAPH_AES_KEY"),
        "{note}"
    );
    let listed: Json = serde_json::from_slice(&out.stdout).expect("json");
    for (thread, t) in threads(&exp) {
        let row = listed
            .as_array()
            .expect("rows")
            .iter()
            .find(|r| r["thread_id"] == thread.as_str())
            .expect("listed");
        // Counts, sizes, step and time need no key; messages only for plain threads.
        assert_eq!(row["checkpoints"], t["checkpoints_all_ns"], "{thread}");
        assert_eq!(row["last_step"], t["history"][0]["step"], "{thread}");
        assert!(!row["updated_at"].is_null() && !row["bytes"].is_null());
        let plain = t["encrypted"] == "none";
        assert_eq!(row["messages"].is_null(), !plain, "{thread}: {row}");
    }
    let stats = run(None, &["stats", "--db", s(&db), "--format", "json"]);
    assert!(stats.status.success());
    let doc: Json = serde_json::from_slice(&stats.stdout).expect("json");
    assert_eq!(
        doc["checkpoints"],
        exp["db"]["checkpoint_types"]
            .as_object()
            .map_or(0, |m| m.values().filter_map(Json::as_u64).sum::<u64>())
    );
    let sealed = exp["db"]["checkpoint_types"]["msgpack+aes"].clone();
    assert_eq!(doc["encrypted_checkpoints"]["rows"], sealed);
    assert_eq!(doc["encrypted_checkpoints"]["not_measured"], sealed);
    let text = run(None, &["stats", "--db", s(&db)]);
    assert!(String::from_utf8_lossy(&text.stdout).contains("set LANGGRAPH_AES_KEY"));
    // With the key, every checkpoint is measured by channel.
    let key = key_of(&exp);
    let doc = ok_json(Some(&key), &["stats", "--db", s(&db), "--format", "json"]);
    assert_eq!(doc["encrypted_checkpoints"]["not_measured"], 0);
    let messages = doc["checkpoint_bytes_by_channel"]
        .as_array()
        .expect("channels")
        .iter()
        .find(|c| c["channel"] == "messages")
        .expect("messages measured");
    let plain_only = ok_json(None, &["stats", "--db", s(&db), "--format", "json"])
        ["checkpoint_bytes_by_channel"]
        .as_array()
        .expect("channels")
        .iter()
        .find(|c| c["channel"] == "messages")
        .map_or(0, |c| c["bytes"].as_u64().unwrap_or(0));
    assert!(messages["bytes"].as_u64().unwrap_or(0) > plain_only);
    // A wrong key: the report, then exit 3 and the line.
    let wrong = run(Some("0000000000000000"), &["stats", "--db", s(&db)]);
    assert_eq!(wrong.status.code(), Some(3));
    assert!(String::from_utf8_lossy(&wrong.stderr).contains("does not decrypt checkpoint"));
}

#[test]
fn a_truncated_value_and_a_tampered_tag_are_refused() {
    let (_dir, db) = temp_copy(&fixture("encrypted-new.sqlite"));
    let key = key_of(&expected("encrypted-new"));
    let conn = rusqlite::Connection::open(&db).expect("open");
    let latest: String = conn
        .query_row(
            "SELECT MAX(checkpoint_id) FROM checkpoints WHERE thread_id = '1' AND checkpoint_ns = ''",
            [],
            |r| r.get(0),
        )
        .expect("latest");
    let blob: Vec<u8> = conn
        .query_row(
            "SELECT checkpoint FROM checkpoints WHERE thread_id = '1' AND checkpoint_id = ?",
            [&latest],
            |r| r.get(0),
        )
        .expect("blob");
    let set = |bytes: &[u8]| {
        conn.execute(
            "UPDATE checkpoints SET checkpoint = ? WHERE thread_id = '1' AND checkpoint_id = ?",
            rusqlite::params![bytes, latest],
        )
        .expect("update");
    };
    set(&blob[..20]);
    let err = one_line_error(Some(&key), &["show", "--db", s(&db), "1"]);
    assert!(
        err.contains("not a complete AES-EAX value: 20 bytes"),
        "{err}"
    );
    let mut tampered = blob.clone();
    tampered[20] ^= 0x01; // inside the tag
    set(&tampered);
    let err = one_line_error(Some(&key), &["show", "--db", s(&db), "1"]);
    assert!(err.contains("does not decrypt checkpoint"), "{err}");
    let mut tampered = blob.clone();
    let last = tampered.len() - 1;
    tampered[last] ^= 0x80; // the ciphertext
    set(&tampered);
    let err = one_line_error(Some(&key), &["trim", "--db", s(&db), "1", "--keep", "2"]);
    assert!(err.contains("does not decrypt checkpoint"), "{err}");
    set(&blob);
    ok_json(Some(&key), &["dump", "--db", s(&db), "1"]);
}

/// A rewrite of an encrypted thread writes msgpack+aes rows that decrypt with the key to
/// msgpack, each with its own nonce; so does a plain thread of the mixed file (the app
/// encrypts now: its EncryptedSerializer would encrypt them); the key is in no byte of the
/// file and in no output.
#[test]
fn rewrites_are_encrypted_like_the_app_writes_them() {
    let exp = expected("encrypted-mixed");
    let key = key_of(&exp);
    let (_dir, db) = temp_copy(&fixture("encrypted-mixed.sqlite"));
    let before: std::collections::HashSet<(String, Vec<u8>)> = rows(&db).into_iter().collect();
    let out = run(
        Some(&key),
        &[
            "trim",
            "--all",
            "--keep",
            "2",
            "--db",
            s(&db),
            "--format",
            "json",
        ],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    for stream in [&out.stdout, &out.stderr] {
        assert!(!String::from_utf8_lossy(stream).contains(&key));
    }
    let report: Json = serde_json::from_slice(&out.stdout).expect("json");
    let k = aes_key(&key);
    let added: Vec<(String, Vec<u8>)> = rows(&db)
        .into_iter()
        .filter(|r| !before.contains(r))
        .collect();
    let rewritten = report["threads"]
        .as_array()
        .expect("rows")
        .iter()
        .filter(|r| r["status"] == "rewritten")
        .count();
    assert!(rewritten >= 4, "{report}");
    let sealed: Vec<&(String, Vec<u8>)> =
        added.iter().filter(|(t, _)| t.ends_with("+aes")).collect();
    let plain: Vec<&(String, Vec<u8>)> =
        added.iter().filter(|(t, _)| !t.ends_with("+aes")).collect();
    // Every thread got encrypted rows: those whose latest checkpoint is encrypted, and the
    // plain 'tools' too (the app encrypts: update_state would encrypt its new rows).
    assert!(!sealed.is_empty() && plain.is_empty(), "{plain:?}");
    let tools = report["threads"]
        .as_array()
        .expect("rows")
        .iter()
        .find(|r| r["thread_id"] == "tools")
        .expect("tools");
    assert_eq!(tools["status"], "rewritten", "{report}");
    let tools_rows = rows_of(&db, "tools");
    let new_tools: Vec<&(String, Vec<u8>)> =
        tools_rows.iter().filter(|r| !before.contains(*r)).collect();
    assert!(!new_tools.is_empty(), "tools got new rows");
    assert!(
        new_tools.iter().all(|(t, _)| t == "msgpack+aes"),
        "{new_tools:?}"
    );
    let mut nonces = std::collections::HashSet::new();
    for (t, bytes) in &sealed {
        assert_eq!(t, "msgpack+aes");
        let inner = k.decrypt(bytes).expect("decrypts with the key");
        assert!(memctl::codec::msgpack::decode(&inner).is_ok());
        assert!(
            nonces.insert(bytes[..16].to_vec()),
            "a fresh nonce per value"
        );
    }
    let bytes = file_bytes(&db);
    assert!(!bytes.windows(key.len()).any(|w| w == key.as_bytes()));
    // The plain thread's new checkpoint, and the encrypted ones, read back.
    for (thread, _) in threads(&exp) {
        let dumped = ok_json(Some(&key), &["dump", "--db", s(&db), &thread]);
        assert!(
            dumped.as_array().is_some_and(|a| !a.is_empty()),
            "{thread}: {dumped}"
        );
    }
}

/// In a mixed file without a key, nothing is written: the encrypted threads cannot be read,
/// and the plain ones would get plain rows beside the app's encrypted ones (its
/// EncryptedSerializer never writes those): one line that asks for the key. The same with
/// every thread encrypted, and with a key that does not open the app's rows.
#[test]
fn a_batch_without_the_key_writes_nothing_in_a_file_that_holds_encrypted_rows() {
    let (_dir, db) = temp_copy(&fixture("encrypted-mixed.sqlite"));
    let before = file_bytes(&db);
    let err = one_line_error(None, &["trim", "--all", "--keep", "2", "--db", s(&db)]);
    assert!(
        err.contains("LANGGRAPH_AES_KEY") && err.contains("nothing was written"),
        "{err}"
    );
    assert!(file_bytes(&db) == before);
    // The plain thread alone: one line naming the key, nothing written.
    let err = one_line_error(
        None,
        &["trim", "--thread", "tools", "--keep", "2", "--db", s(&db)],
    );
    assert!(
        err.contains("thread 'tools' is plain") && err.contains("--key-env"),
        "{err}"
    );
    let wrong = "a-wrong-key-0123";
    let err = one_line_error(
        Some(wrong),
        &["trim", "--thread", "tools", "--keep", "2", "--db", s(&db)],
    );
    assert!(err.contains("does not decrypt"), "{err}");
    assert!(!err.contains(wrong));
    // summarize refuses before asking the model (a request would be paid for nothing).
    let server = common::chat_server::ChatServer::start(|_, _| {
        common::chat_server::Reply::Summary("never used".into())
    });
    let err = one_line_error(
        None,
        &[
            "summarize",
            "--thread",
            "tools",
            "--keep",
            "2",
            "--db",
            s(&db),
            "--endpoint",
            &server.url,
            "--model",
            "m",
        ],
    );
    assert!(err.contains("thread 'tools' is plain"), "{err}");
    assert!(server.requests().is_empty(), "no request was made");
    assert!(file_bytes(&db) == before);
    let (_dir, db) = temp_copy(&fixture("encrypted-new.sqlite"));
    let before = file_bytes(&db);
    let err = one_line_error(None, &["trim", "--all", "--keep", "2", "--db", s(&db)]);
    assert!(
        err.contains("set LANGGRAPH_AES_KEY") && err.contains("nothing was written"),
        "{err}"
    );
    assert!(file_bytes(&db) == before);
}

/// --purge on an encrypted thread: the removed text is in no decrypted value of any row and
/// in no byte of the file; the scrubbed rows were encrypted again with fresh nonces.
#[test]
fn purge_scrubs_encrypted_rows_and_searches_their_decrypted_values() {
    for name in ["encrypted-new", "encrypted-old"] {
        let exp = expected(name);
        let key = key_of(&exp);
        let k = aes_key(&key);
        let (_dir, db) = temp_copy(&fixture(&format!("{name}.sqlite")));
        let before: std::collections::HashSet<Vec<u8>> =
            rows(&db).into_iter().map(|(_, b)| b).collect();
        let out = ok_json(
            Some(&key),
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
        let notes = out["threads"][0]["notes"].to_string();
        assert!(
            notes.contains("decrypted values of its encrypted rows"),
            "{notes}"
        );
        let mut rewritten = 0;
        for (t, bytes) in rows(&db) {
            let plain = if t.ends_with("+aes") {
                k.decrypt(&bytes).expect("every row decrypts")
            } else {
                bytes.clone()
            };
            assert!(
                !plain.windows(7).any(|w| w == b"hunter2"),
                "{name}: a {t} row still holds the text"
            );
            if !before.contains(&bytes) {
                rewritten += 1;
            }
        }
        assert!(
            rewritten > 2,
            "{name}: scrubbed rows were re-encrypted ({rewritten})"
        );
        assert!(!file_bytes(&db).windows(7).any(|w| w == b"hunter2"));
    }
}

/// `--key-env` names a variable: an empty name or one with `=` is a usage error (exit 2).
#[test]
fn key_env_must_name_a_variable() {
    let db = fixture("encrypted.sqlite");
    for bad in ["", "A=B"] {
        let out = run(None, &["show", "--db", s(&db), "1", "--key-env", bad]);
        assert_eq!(out.status.code(), Some(2), "{bad:?}");
        assert!(String::from_utf8_lossy(&out.stderr)
            .contains("not the name of an environment variable"));
    }
    // The variable it names is read as LangGraph reads LANGGRAPH_AES_KEY.
    let out = memctl()
        .env("MY_APP_KEY", "0123456789abcdef")
        .args(["dump", "--db", s(&db), "1", "--key-env", "MY_APP_KEY"])
        .output()
        .expect("runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn find_searches_the_decrypted_messages_with_the_key() {
    let mut searched = 0;
    for name in FIXTURES {
        let db = fixture(&format!("{name}.sqlite"));
        let exp = expected(name);
        let key = key_of(&exp);
        for (thread, t) in threads(&exp) {
            let msgs = t["state_messages"].as_array().expect("messages");
            // The last human message's text, and where get_state holds it.
            let Some(text) = msgs
                .iter()
                .rev()
                .filter(|m| m["type"] == "human")
                .find_map(|m| m["content"].as_str().filter(|c| !c.is_empty()))
            else {
                continue;
            };
            let want: Vec<u64> = msgs
                .iter()
                .enumerate()
                .filter(|(_, m)| m["content"].as_str().is_some_and(|c| c.contains(text)))
                .map(|(i, _)| i as u64)
                .collect();
            let args = [
                "find",
                "--db",
                s(&db),
                "--thread",
                &thread,
                "--format",
                "json",
            ];
            let hits = ok_json(Some(&key), &[&args[..], &[text]].concat());
            let got: Vec<u64> = hits
                .as_array()
                .expect("hits")
                .iter()
                .filter_map(|h| h["index"].as_u64())
                .collect();
            assert_eq!(got, want, "{name}/{thread}: find {text:?}");
            searched += 1;
        }
    }
    assert!(searched >= 10, "threads searched: {searched}");
}
