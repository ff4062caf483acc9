//! Every checkpoint and write blob of every fixture decodes and re-encodes to the same bytes.

mod common;

use memctl::codec::{decode_typed, msgpack, Decoded};
use rusqlite::{Connection, OpenFlags};

fn blobs(db: &str) -> Vec<(String, String, Vec<u8>)> {
    let conn = Connection::open_with_flags(common::fixture(db), OpenFlags::SQLITE_OPEN_READ_ONLY)
        .expect("open fixture");
    let mut out = Vec::new();
    for sql in [
        "SELECT 'checkpoint ' || thread_id || '/' || checkpoint_ns || '/' || checkpoint_id, type, checkpoint FROM checkpoints",
        "SELECT 'write ' || thread_id || '/' || checkpoint_id || '/' || task_id || '/' || idx, type, value FROM writes",
    ] {
        let mut stmt = conn.prepare(sql).expect("query");
        let rows = stmt
            .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
            .expect("rows");
        out.extend(rows.map(|r| r.expect("row")));
    }
    out
}

#[test]
fn every_fixture_blob_round_trips_byte_for_byte() {
    for db in ["new.sqlite", "old.sqlite", "delta.sqlite"] {
        let rows = blobs(db);
        assert!(rows.len() > 20, "{db} has blobs to test ({})", rows.len());
        let mut msgpack_rows = 0;
        let mut exts = std::collections::BTreeSet::new();
        for (what, type_name, blob) in rows {
            let decoded =
                decode_typed(&type_name, &blob).unwrap_or_else(|e| panic!("{db} {what}: {e:#}"));
            if let Decoded::Msgpack(v) = decoded {
                msgpack_rows += 1;
                collect_exts(&v, &mut exts);
                assert!(
                    msgpack::encode(&v) == blob,
                    "{db} {what}: re-encoding changed the bytes"
                );
            }
        }
        assert!(msgpack_rows > 20, "{db}: msgpack rows tested");
        // Messages (5), Send / datetime-like objects and Interrupt (1, 2 or 3) occur in the fixtures.
        assert!(exts.contains(&5), "{db}: ext codes seen {exts:?}");
    }
}

/// The fast path rewrites use — the checkpoint decoded except its message list, the messages
/// outlined in place — agrees with the full decode and the full message view on every
/// checkpoint of every fixture.
#[test]
fn in_place_outlines_match_the_full_message_view() {
    use memctl::model::outline::{outline_list, Outline};
    use memctl::model::Message;
    let mut outlined = 0;
    for db in ["new.sqlite", "old.sqlite"] {
        for (what, type_name, blob) in blobs(db) {
            if type_name != "msgpack" || !what.starts_with("checkpoint") {
                continue;
            }
            let (mut root, span) = msgpack::decode_except(&blob, "channel_values", "messages")
                .unwrap_or_else(|e| panic!("{db} {what}: {e}"));
            let Some(span) = span else { continue };
            let list = msgpack::decode(&blob[span.clone()]).expect("the span is a value");
            if let Some(m) = root
                .get_mut("channel_values")
                .and_then(|c| c.get_mut("messages"))
            {
                *m = list.clone();
            }
            assert!(
                msgpack::encode(&root) == blob,
                "{db} {what}: decode_except lost bytes"
            );
            let Some(items) = list.as_array() else {
                continue;
            };
            let outline = outline_list(&blob, span).unwrap_or_else(|| panic!("{db} {what}"));
            assert_eq!(outline.len(), items.len(), "{db} {what}");
            for (o, item) in outline.iter().zip(items) {
                let full = Message::from_value(item).expect("a message");
                assert_eq!(
                    msgpack::encode(item),
                    blob[o.span.clone()],
                    "{db} {what}: the span is the stored message"
                );
                assert_eq!(*o, Outline::of(&full, o.span.clone()), "{db} {what}");
                outlined += 1;
            }
        }
    }
    assert!(outlined > 200, "messages outlined: {outlined}");
}

fn collect_exts(v: &msgpack::Value, seen: &mut std::collections::BTreeSet<i8>) {
    match v {
        msgpack::Value::Array(a) => a.items.iter().for_each(|i| collect_exts(i, seen)),
        msgpack::Value::Map(m) => m.entries.iter().for_each(|(k, v)| {
            collect_exts(k, seen);
            collect_exts(v, seen);
        }),
        msgpack::Value::Ext(e) => {
            seen.insert(e.code);
            collect_exts(&e.payload, seen);
        }
        _ => {}
    }
}
