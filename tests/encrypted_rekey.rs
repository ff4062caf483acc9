//! `memctl rekey` on copies of the encrypted fixtures: rotation, encrypting a plain file,
//! decrypting, dry runs, refusals, and runs killed at random points that finish when run
//! again. Every value is checked by decrypting it here (RustCrypto, through memctl's codec);
//! tests/encrypted_interop.rs has LangGraph read the results.

mod common;

use std::collections::BTreeMap;
use std::path::Path;
use std::time::{Duration, Instant};

use common::{expected, fixture, memctl, s, temp_copy};
use memctl::codec::aes::AesKey;
use serde_json::Value as Json;

const NEW_KEY: &str = "a-brand-new-key-of-32-bytes-now!";

fn key(text: &str) -> AesKey {
    AesKey::new(zeroize::Zeroizing::new(text.as_bytes().to_vec())).expect("a valid key")
}

fn fixture_key(name: &str) -> String {
    expected(name)["encryption"]["key"]
        .as_str()
        .expect("key")
        .to_owned()
}

/// Every row of the file by primary key: (type, stored bytes).
fn rows(db: &Path) -> BTreeMap<String, (String, Vec<u8>)> {
    let conn = rusqlite::Connection::open(db).expect("open");
    let mut out = BTreeMap::new();
    for (table, sql) in [
        (
            "c",
            "SELECT thread_id || '|' || checkpoint_ns || '|' || checkpoint_id, type, checkpoint FROM checkpoints",
        ),
        (
            "w",
            "SELECT thread_id || '|' || checkpoint_ns || '|' || checkpoint_id || '|' || task_id || '|' || idx, type, value FROM writes",
        ),
    ] {
        let mut st = conn.prepare(sql).expect("prepare");
        let it = st
            .query_map([], |r| {
                Ok((
                    r.get::<_, String>(0)?,
                    r.get::<_, String>(1)?,
                    r.get::<_, Vec<u8>>(2)?,
                ))
            })
            .expect("query");
        for row in it {
            let (k, t, b) = row.expect("row");
            out.insert(format!("{table}:{k}"), (t, b));
        }
    }
    out
}

/// Every row opened: (inner type, plain bytes), decrypting with `keys` (the first that
/// works); `None` for a row none of them decrypts.
fn plain(db: &Path, keys: &[&AesKey]) -> BTreeMap<String, Option<(String, Vec<u8>)>> {
    rows(db)
        .into_iter()
        .map(|(k, (t, b))| {
            let opened = match t.split_once('+') {
                None => Some((t, b)),
                Some((inner, _)) => keys
                    .iter()
                    .find_map(|key| key.decrypt(&b).ok())
                    .map(|p| (inner.to_owned(), p)),
            };
            (k, opened)
        })
        .collect()
}

fn rekey(envs: &[(&str, &str)], args: &[&str]) -> std::process::Output {
    let mut cmd = memctl();
    for (k, v) in envs {
        cmd.env(k, v);
    }
    cmd.arg("rekey").args(args).output().expect("memctl runs")
}

fn rekey_json(envs: &[(&str, &str)], args: &[&str]) -> Json {
    let mut a = args.to_vec();
    a.extend(["--format", "json"]);
    let out = rekey(envs, &a);
    assert!(
        out.status.success(),
        "rekey {args:?}: {:?} {}",
        out.status.code(),
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("json")
}

fn total(report: &Json, fate: &str) -> u64 {
    report["checkpoints"][fate].as_u64().unwrap_or(0) + report["writes"][fate].as_u64().unwrap_or(0)
}

#[test]
fn rotation_puts_every_value_under_the_new_key_unchanged() {
    for name in ["encrypted-new", "encrypted-old"] {
        let old_text = fixture_key(name);
        let (old, new) = (key(&old_text), key(NEW_KEY));
        let (_dir, db) = temp_copy(&fixture(&format!("{name}.sqlite")));
        let before = plain(&db, &[&old]);
        assert!(before.values().all(Option::is_some));
        let envs = [("OLD", old_text.as_str()), ("NEW", NEW_KEY)];
        let args = [
            "--db",
            s(&db),
            "--old-key-env",
            "OLD",
            "--new-key-env",
            "NEW",
        ];
        // The dry run decrypts everything and writes nothing.
        let file = std::fs::read(&db).expect("read");
        let mut dry = args.to_vec();
        dry.push("--dry-run");
        let would = rekey_json(&envs, &dry);
        assert_eq!(total(&would, "reencrypted"), before.len() as u64, "{would}");
        assert!(
            std::fs::read(&db).expect("read") == file,
            "{name}: dry run wrote"
        );
        let done = rekey_json(&envs, &args);
        assert_eq!(total(&done, "reencrypted"), before.len() as u64, "{done}");
        assert!(done["transactions"].as_u64().unwrap_or(0) >= 2);
        // Every value: under the new key, not the old one, the same plain bytes and type.
        let after = plain(&db, &[&new]);
        assert_eq!(after, before, "{name}: values unchanged, under the new key");
        assert!(plain(&db, &[&old]).values().all(Option::is_none), "{name}");
        let stored = rows(&db);
        let nonces: std::collections::HashSet<&[u8]> =
            stored.values().map(|(_, b)| &b[..16]).collect();
        assert_eq!(
            nonces.len(),
            stored.len(),
            "{name}: a fresh nonce per value"
        );
        // memctl reads it with the new key only.
        let exp = expected(name);
        let mut show = memctl();
        show.env("LANGGRAPH_AES_KEY", &old_text)
            .args(["show", "--db", s(&db), "tools"]);
        let out = show.output().expect("runs");
        assert_eq!(out.status.code(), Some(1));
        assert!(String::from_utf8_lossy(&out.stderr).contains("does not decrypt checkpoint"));
        let mut dump = memctl();
        dump.env("LANGGRAPH_AES_KEY", NEW_KEY)
            .args(["dump", "--db", s(&db), "tools"]);
        let out = dump.output().expect("runs");
        let got: Json = serde_json::from_slice(&out.stdout).expect("json");
        assert_eq!(got, exp["threads"]["tools"]["state_messages"], "{name}");
        // Run again: everything recognised, nothing rewritten.
        let again = rekey_json(&envs, &args);
        assert_eq!(again["changed"], 0, "{again}");
        assert_eq!(total(&again, "already_under_new_key"), before.len() as u64);
        assert_eq!(rows(&db), stored, "{name}: a second run changes no byte");
    }
}

#[test]
fn encrypting_then_decrypting_a_plain_file_gives_back_its_bytes() {
    let (_dir, db) = temp_copy(&fixture("new.sqlite"));
    let original = rows(&db);
    let envs = [("K", NEW_KEY)];
    let done = rekey_json(&envs, &["--db", s(&db), "--new-key-env", "K"]);
    assert_eq!(total(&done, "encrypted"), original.len() as u64);
    let sealed = rows(&db);
    assert!(sealed.values().all(|(t, _)| t.ends_with("+aes")));
    assert!(
        !std::fs::read(&db)
            .expect("read")
            .windows(7)
            .any(|w| w == b"hunter2"),
        "no plain value is left in the file's free space either"
    );
    let back = rekey_json(&envs, &["--db", s(&db), "--decrypt", "--old-key-env", "K"]);
    assert_eq!(total(&back, "decrypted"), original.len() as u64);
    assert_eq!(rows(&db), original, "type and bytes of every row as before");
}

#[test]
fn a_mixed_file_ends_all_under_the_new_key() {
    let old_text = fixture_key("encrypted-mixed");
    let (_dir, db) = temp_copy(&fixture("encrypted-mixed.sqlite"));
    let before = plain(&db, &[&key(&old_text)]);
    let exp = expected("encrypted-mixed");
    let count = |types: &Json, sealed: bool| -> u64 {
        types
            .as_object()
            .expect("types")
            .iter()
            .filter(|(t, _)| t.ends_with("+aes") == sealed)
            .filter_map(|(_, n)| n.as_u64())
            .sum()
    };
    let db_types = &exp["db"];
    let (plain_rows, sealed_rows) = (
        count(&db_types["checkpoint_types"], false) + count(&db_types["write_types"], false),
        count(&db_types["checkpoint_types"], true) + count(&db_types["write_types"], true),
    );
    let done = rekey_json(
        &[("OLD", old_text.as_str()), ("NEW", NEW_KEY)],
        &[
            "--db",
            s(&db),
            "--old-key-env",
            "OLD",
            "--new-key-env",
            "NEW",
            "--batch",
            "7",
        ],
    );
    assert_eq!(total(&done, "encrypted"), plain_rows, "{done}");
    assert_eq!(total(&done, "reencrypted"), sealed_rows, "{done}");
    assert_eq!(plain(&db, &[&key(NEW_KEY)]), before);
    assert!(rows(&db).values().all(|(t, _)| t.ends_with("+aes")));
}

/// Variables, arguments, and what the error line says.
type Case<'a> = (&'a [(&'a str, &'a str)], Vec<&'a str>, &'a str);

#[test]
fn wrong_or_missing_keys_stop_before_anything_is_written() {
    let old_text = fixture_key("encrypted-new");
    let (_dir, db) = temp_copy(&fixture("encrypted-new.sqlite"));
    let file = std::fs::read(&db).expect("read");
    let cases: [Case<'_>; 6] = [
        (
            &[("OLD", "0000000000000000"), ("NEW", NEW_KEY)],
            vec!["--old-key-env", "OLD", "--new-key-env", "NEW"],
            "neither OLD nor NEW decrypts it",
        ),
        (
            &[("NEW", NEW_KEY)],
            vec!["--new-key-env", "NEW"],
            "name the key it is under with --old-key-env",
        ),
        (
            &[("OLD", "0000000000000000")],
            vec!["--decrypt", "--old-key-env", "OLD"],
            "OLD does not decrypt it",
        ),
        (
            &[("NEW", NEW_KEY)],
            vec!["--old-key-env", "UNSET_VAR", "--new-key-env", "NEW"],
            "UNSET_VAR (given with --old-key-env) is not set",
        ),
        (
            &[("OLD", old_text.as_str()), ("NEW", "too-short")],
            vec!["--old-key-env", "OLD", "--new-key-env", "NEW"],
            "NEW must be 16, 24, or 32 bytes long",
        ),
        (
            &[("OLD", old_text.as_str()), ("NEW", old_text.as_str())],
            vec!["--old-key-env", "OLD", "--new-key-env", "NEW"],
            "hold the same key",
        ),
    ];
    for (envs, args, want) in cases {
        let mut a = args.clone();
        a.extend(["--db", s(&db)]);
        let out = rekey(envs, &a);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{args:?}: {err}");
        assert_eq!(err.trim_end().lines().count(), 1, "{err}");
        assert!(err.contains(want), "{args:?}: {err}");
        for (_, k) in envs {
            assert!(!err.contains(k), "a key is never printed: {err}");
        }
        assert!(
            std::fs::read(&db).expect("read") == file,
            "{args:?}: nothing written"
        );
    }
    // Usage: --decrypt needs the old key; --key-env is not rekey's.
    for args in [
        vec!["--decrypt"],
        vec!["--key-env", "X", "--new-key-env", "NEW"],
        vec!["--decrypt", "--old-key-env", "OLD", "--new-key-env", "NEW"],
    ] {
        let mut a = args.clone();
        a.extend(["--db", s(&db)]);
        assert_eq!(
            rekey(&[("NEW", NEW_KEY)], &a).status.code(),
            Some(2),
            "{args:?}"
        );
    }
}

/// kill -9 at random points of a rotation (one value per transaction, a WAL-mode copy), then
/// the same command again: it finishes, the file is intact, and every value is the one it was,
/// under the new key.
#[test]
fn a_killed_rotation_finishes_when_run_again() {
    let old_text = fixture_key("encrypted-new");
    let old = key(&old_text);
    let new = key(NEW_KEY);
    let envs = [("OLD", old_text.as_str()), ("NEW", NEW_KEY)];
    let args = |db: &Path| -> Vec<String> {
        [
            "--db",
            s(db),
            "--old-key-env",
            "OLD",
            "--new-key-env",
            "NEW",
            "--batch",
            "1",
        ]
        .iter()
        .map(|a| (*a).to_owned())
        .collect()
    };
    let wal_copy = || {
        let (dir, db) = temp_copy(&fixture("encrypted-new.sqlite"));
        let conn = rusqlite::Connection::open(&db).expect("open");
        let mode: String = conn
            .query_row("PRAGMA journal_mode = WAL", [], |r| r.get(0))
            .expect("wal");
        assert_eq!(mode, "wal");
        (dir, db)
    };
    // How long a whole run takes here.
    let (_d, db) = wal_copy();
    let before = plain(&db, &[&old]);
    let started = Instant::now();
    let a = args(&db);
    let a: Vec<&str> = a.iter().map(String::as_str).collect();
    rekey_json(&envs, &a);
    let full = started.elapsed();
    let mut seed = 0x2545_f491_4f6c_dd1du64;
    let mut killed = 0;
    for trial in 0..10 {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        let (_dir, db) = wal_copy();
        let a = args(&db);
        let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_memctl"));
        cmd.env_remove("LANGGRAPH_AES_KEY")
            .envs(envs)
            .arg("rekey")
            .args(&a)
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null());
        let mut child = cmd.spawn().expect("spawn");
        let wait = full.mul_f64((seed % 1000) as f64 / 1000.0 * 1.1);
        std::thread::sleep(wait.max(Duration::from_millis(5)));
        if child.try_wait().expect("poll").is_none() {
            child.kill().expect("kill -9");
            killed += 1;
        }
        let _ = child.wait();
        let conn = rusqlite::Connection::open(&db).expect("open");
        let check: String = conn
            .query_row("PRAGMA integrity_check", [], |r| r.get(0))
            .expect("check");
        assert_eq!(check, "ok", "trial {trial}");
        // Half done: every value is under one of the keys, and each is what it was.
        assert_eq!(
            plain(&db, &[&new, &old]),
            before,
            "trial {trial}: after the kill"
        );
        drop(conn);
        let a: Vec<&str> = a.iter().map(String::as_str).collect();
        let again = rekey_json(&envs, &a);
        assert_eq!(
            total(&again, "reencrypted") + total(&again, "already_under_new_key"),
            before.len() as u64,
            "trial {trial}: {again}"
        );
        assert_eq!(plain(&db, &[&new]), before, "trial {trial}: finished");
    }
    assert!(killed >= 3, "only {killed} of 10 runs were killed mid-way");
}
