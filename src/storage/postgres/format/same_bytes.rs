//! [`super::assemble_with`] (plain `msgpack` blobs spliced in as they are) gives, byte for byte,
//! what [`super::reference::assemble_with`] (every blob decoded, the checkpoint re-encoded)
//! gives: on every checkpoint of the committed `PostgresSaver` dumps (read from their
//! `INSERT` statements, as the server hands them over), with and without the encrypted
//! fixture's key, and on blobs made to reach every corner (non-minimal markers, damage).

use super::{aes, assemble_with, reference, spliceable, BlobRow, Keyring};

/// A checkpoint assembled, as the tests compare it: the type and the document (opened when it
/// was sealed whole, since sealing draws a fresh nonce), or the error.
fn outcome(
    keys: &Keyring,
    a: anyhow::Result<super::Assembled>,
) -> Result<(String, Vec<u8>), String> {
    let a = a.map_err(|e| format!("{e:#}"))?;
    let opened = match keys.open(&a.type_name, &a.bytes, "the checkpoint") {
        Ok(o) if aes::split_type(&a.type_name).1.is_some() => Some(o.bytes.to_vec()),
        _ => None,
    };
    Ok((a.type_name, opened.unwrap_or(a.bytes)))
}

/// Both assemblies of one checkpoint, which must agree; true when a blob was spliced.
fn same(json: &str, blobs: &[&BlobRow], keys: &Keyring, what: &str) -> bool {
    let new = outcome(keys, assemble_with(json, blobs, keys));
    let old = outcome(keys, reference::assemble_with(json, blobs, keys));
    assert_eq!(new, old, "{what}");
    blobs.iter().any(|b| spliceable(b).is_some())
}

/// The rows of `table` in a `pg_dump --inserts` dump: each column `NULL` or a string literal
/// (`standard_conforming_strings = on`: only `''` is escaped).
fn sql_rows(dump: &str, table: &str) -> Vec<Vec<Option<String>>> {
    let head = format!("INSERT INTO public.{table} VALUES (");
    let mut rows = Vec::new();
    for line in dump.lines() {
        let Some(rest) = line.strip_prefix(&head) else {
            continue;
        };
        let mut cols = Vec::new();
        let mut chars = rest.chars().peekable();
        loop {
            match chars.next() {
                Some('\'') => {
                    let mut s = String::new();
                    loop {
                        match chars.next().expect("a closed literal") {
                            '\'' if chars.peek() == Some(&'\'') => {
                                chars.next();
                                s.push('\'');
                            }
                            '\'' => break,
                            c => s.push(c),
                        }
                    }
                    cols.push(Some(s));
                }
                Some('N') => {
                    assert_eq!(chars.by_ref().take(3).collect::<String>(), "ULL");
                    cols.push(None);
                }
                other => panic!("{table}: unexpected {other:?} in {line}"),
            }
            match chars.next() {
                Some(',') => assert_eq!(chars.next(), Some(' ')),
                Some(')') => break,
                other => panic!("{table}: unexpected {other:?} in {line}"),
            }
        }
        rows.push(cols);
    }
    rows
}

/// A `bytea` literal's bytes (`\x` and hex).
fn bytea(s: &str) -> Vec<u8> {
    let hex = s.strip_prefix("\\x").expect("hex bytea");
    (0..hex.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&hex[i..i + 2], 16).expect("hex"))
        .collect()
}

#[test]
fn every_checkpoint_of_the_postgres_fixtures_assembles_to_the_same_bytes() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures");
    let key = |k: &[u8]| {
        let key = aes::AesKey::new(zeroize::Zeroizing::new(k.to_vec())).expect("key");
        Keyring::with_key("LANGGRAPH_AES_KEY", key)
    };
    let keyrings = [
        Keyring::none(),
        key(b"memctl-postgres-aes256-fixture!!"),
        key(b"another-key-of-32-bytes-00000000"),
    ];
    let (mut checkpoints, mut spliced) = (0, 0);
    for file in [
        "postgres.sql",
        "postgres-delta.sql",
        "postgres-encrypted.sql",
    ] {
        let dump = std::fs::read_to_string(root.join(file)).expect("the dump");
        let blobs: Vec<(String, String, BlobRow)> = sql_rows(&dump, "checkpoint_blobs")
            .into_iter()
            .map(|r| {
                let col = |i: usize| r[i].clone().expect("a value");
                let row = BlobRow {
                    channel: col(2),
                    version: col(3),
                    type_name: col(4),
                    blob: r[5].as_deref().map(bytea),
                };
                (col(0), col(1), row)
            })
            .collect();
        let rows = sql_rows(&dump, "checkpoints");
        assert!(!rows.is_empty() && !blobs.is_empty(), "{file}");
        for r in rows {
            let col = |i: usize| r[i].clone().expect("a value");
            let (thread, ns, id, json) = (col(0), col(1), col(2), col(5));
            // Every blob row of the thread and namespace: assembly takes the ones named.
            let mine: Vec<&BlobRow> = blobs
                .iter()
                .filter(|(t, n, _)| *t == thread && *n == ns)
                .map(|(_, _, b)| b)
                .collect();
            for keys in &keyrings {
                let what = format!("{file}: thread {thread} ns '{ns}' checkpoint {id}");
                spliced += usize::from(same(&json, &mine, keys, &what));
            }
            checkpoints += 1;
        }
    }
    assert_eq!(checkpoints, 117 + 133 + 77, "every checkpoint of the dumps");
    assert!(spliced > 300, "the splice was taken ({spliced})");
}

#[test]
fn spliced_blobs_keep_every_marker_and_damage_gives_the_same_error() {
    let row = |channel: &str, type_name: &str, blob: Option<&[u8]>| BlobRow {
        channel: channel.into(),
        version: "1".into(),
        type_name: type_name.into(),
        blob: blob.map(<[u8]>::to_vec),
    };
    // Non-minimal forms LangGraph's ormsgpack never writes but a decode keeps: str8 for a short
    // string, uint16 for 1, int8 for 5, map16 with one entry, ext8 for a 1-byte payload, an
    // f32; a delta snapshot (ext 7); a DeltaChannel value written over an inline `true`.
    let odd: &[u8] = &[
        0x96, 0xd9, 0x01, b'x', 0xcd, 0x00, 0x01, 0xd0, 0x05, 0xde, 0x00, 0x01, 0xa1, b'k', 0xc0,
        0xc7, 0x01, 0x05, 0xc0, 0xca, 0x3f, 0xc0, 0x00, 0x00,
    ];
    let good: Vec<(&str, &str, Option<&[u8]>)> = vec![
        ("odd", "msgpack", Some(odd)),
        ("delta", "msgpack", Some(&[0xd4, 0x07, 0xc0])),
        ("d", "msgpack", Some(&[0x91, 0x01])),
        ("raw", "bytes", Some(b"\x00\xff")),
        ("legacy", "json", Some(br#"{"a": [1, 2.5, "\ud800"]}"#)),
        ("none", "null", None),
        // Other types whose bytes happen to be msgpack too: transformed, never spliced.
        ("raw msgpack", "bytes", Some(&[0x91, 0x01])),
        ("json one", "json", Some(b"1")),
        ("null one", "null", Some(&[0x01])),
        ("gone", "empty", None),
    ];
    let bad: Vec<(&str, &str, Option<&[u8]>)> = vec![
        ("truncated", "msgpack", Some(&[0x92, 0x01])),
        ("trailing", "msgpack", Some(&[0x01, 0x02])),
        ("utf8", "msgpack", Some(&[0x91, 0xa1, 0xff])),
        ("ext", "msgpack", Some(&[0xd4, 0x09, 0xc0])),
        ("c1", "msgpack", Some(&[0xc1])),
        ("deep", "msgpack", Some(&[0x91; 300])),
        ("nothing", "msgpack", None),
        ("empty", "msgpack", Some(&[])),
        ("pickled", "pickle", Some(b"\x80\x04")),
        ("sealed", "msgpack+aes", Some(b"xxxx")),
        ("sealed msgpack", "msgpack+aes", Some(&[0x01])),
        ("unknown", "yaml", Some(b"a: 1")),
    ];
    // More than 15 channels: channel_values takes a map16 header.
    let many: Vec<String> = (0..20).map(|i| format!("c{i}")).collect();
    let mut rows: Vec<BlobRow> = many
        .iter()
        .map(|c| row(c, "msgpack", Some(&[0x91, 0xa1, b'v'])))
        .collect();
    rows.extend(good.iter().map(|(c, t, b)| row(c, t, *b)));
    let versions: serde_json::Map<String, serde_json::Value> = rows
        .iter()
        .map(|r| (r.channel.clone(), "1".into()))
        .chain([("stale".to_owned(), "2".into())])
        .collect();
    rows.push(row("stale", "msgpack", Some(&[0xc1])));
    let cp = |versions: &serde_json::Map<String, serde_json::Value>| {
        serde_json::json!({
            "v": 4, "ts": "t", "id": "x", "extra": [1],
            "channel_values": {"d": true, "n": 1},
            "channel_versions": versions, "versions_seen": {}
        })
        .to_string()
    };
    let keys = Keyring::none();
    let all: Vec<&BlobRow> = rows.iter().collect();
    assert!(same(&cp(&versions), &all, &keys, "good rows"));
    for (c, t, b) in bad {
        let damaged = row(c, t, b);
        let mut versions = versions.clone();
        versions.insert(c.to_owned(), "1".into());
        let mut with: Vec<&BlobRow> = all.clone();
        with.push(&damaged);
        same(&cp(&versions), &with, &keys, c);
    }
    // The spliced bytes are the stored ones: the document holds them unchanged.
    let a = assemble_with(&cp(&versions), &all, &keys).expect("assembles");
    assert!(a.bytes.windows(odd.len()).any(|w| w == odd));
}
