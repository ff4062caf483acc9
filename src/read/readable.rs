//! Whether LangGraph can read a thread's rows: a checkpoint decodes (its blob, a map with
//! a `channel_versions` map, and its metadata, a JSON object), and a pending write's value
//! decodes. Encrypted rows are checked when a key is given (opened with it); without one
//! they are left to their AES tag. `gc` checks what it keeps with [`check_checkpoint`] and
//! [`check_writes`]; `copy`, `migrate`, `import` and `export` check every row they move with
//! [`check_row`] / [`check_thread_as_stored`], and leave a thread that fails out
//! ([`crate::storage::Unreadable`]).

use anyhow::{bail, Context, Result};

use crate::codec::aes::{self, KeyError, Keyring};
use crate::codec::lazy::{self, Lazy};
use crate::model::checkpoint::Checkpoint;
use crate::model::Metadata;
use crate::storage::{CheckpointRow, RowRef, ThreadRows, Unreadable, WriteRow};

/// True when a value of this type cannot be checked: encrypted, and no key to open it.
fn sealed_without_key(keys: &Keyring, type_name: &str) -> bool {
    aes::split_type(type_name).1.is_some() && !keys.has_key()
}

/// Checks that checkpoint `row` of thread `thread` decodes as LangGraph loads it: its blob
/// (opened with `keys` when it is encrypted) a map holding a `channel_versions` map, its
/// metadata a JSON object (or none). A `msgpack` blob is checked in place (what a full decode
/// refuses, without building the value: a checkpoint of 100,000 messages is not held twice).
pub fn check_checkpoint(keys: &Keyring, thread: &str, row: &CheckpointRow) -> Result<()> {
    checkpoint_decodes(keys, thread, row, false)
}

/// [`check_checkpoint`]; with `pickle_as_stored`, a pickled checkpoint (what
/// `JsonPlusSerializer(pickle_fallback=True)` writes for a state msgpack cannot hold: readable
/// to its app, not to memctl) passes unchecked, as an encrypted one without its key does.
fn checkpoint_decodes(
    keys: &Keyring,
    thread: &str,
    row: &CheckpointRow,
    pickle_as_stored: bool,
) -> Result<()> {
    Metadata::parse(row.metadata.as_deref()).with_context(|| {
        format!(
            "bad metadata on checkpoint {} of thread '{thread}'",
            row.checkpoint_id
        )
    })?;
    if !sealed_without_key(keys, &row.type_name) {
        let what = format!("checkpoint {} of thread '{thread}'", row.checkpoint_id);
        let opened = keys.open(&row.type_name, &row.checkpoint, &what)?;
        let cannot = || format!("cannot decode {what}");
        let versions = match opened.type_name {
            "msgpack" => {
                lazy::check(&opened.bytes).with_context(cannot)?;
                match lazy::root(&opened.bytes).map(|r| r.value) {
                    Ok(Lazy::Map(m)) => matches!(
                        m.get("channel_versions")
                            .with_context(cannot)?
                            .map(|v| v.value),
                        Some(Lazy::Map(_))
                    ),
                    _ => bail!("{}: not a map", cannot()),
                }
            }
            "pickle" if pickle_as_stored => true,
            other => {
                let cp = Checkpoint::decode(other, &opened.bytes).with_context(cannot)?;
                cp.root
                    .get("channel_versions")
                    .is_some_and(|v| v.as_map().is_some())
            }
        };
        if !versions {
            bail!(
                "{}: it has no channel_versions map (LangGraph reads one in every checkpoint)",
                cannot()
            );
        }
    }
    Ok(())
}

/// Checks that pending write `w` of checkpoint `checkpoint_id` of thread `thread` decodes
/// (opened with `keys` when it is encrypted), as LangGraph's `loads_typed` loads it.
pub fn check_write(keys: &Keyring, thread: &str, checkpoint_id: &str, w: &WriteRow) -> Result<()> {
    if sealed_without_key(keys, &w.type_name) {
        return Ok(());
    }
    let what = format!(
        "the '{}' write of task {} on checkpoint {checkpoint_id} of thread '{thread}'",
        w.channel, w.task_id
    );
    let opened = keys.open(&w.type_name, &w.value, &what)?;
    let cannot = || format!("cannot decode {what}");
    match opened.type_name {
        // Checked in place, as a checkpoint is.
        "msgpack" => lazy::check(&opened.bytes).with_context(cannot)?,
        other => drop(crate::codec::decode_typed(other, &opened.bytes).with_context(cannot)?),
    }
    Ok(())
}

/// [`check_write`] of each of `writes` (of checkpoint `checkpoint_id` of thread `thread`), in
/// order; the first that does not decode is the error.
pub fn check_writes(
    keys: &Keyring,
    thread: &str,
    checkpoint_id: &str,
    writes: &[WriteRow],
) -> Result<()> {
    writes
        .iter()
        .try_for_each(|w| check_write(keys, thread, checkpoint_id, w))
}

/// [`check_checkpoint`] or [`check_write`] of one row of thread `thread`, for a move: a row
/// that does not decode is an [`Unreadable`] error (a key missing or wrong stays a key
/// error: the run's problem, not the thread's). A pickled checkpoint is moved as stored,
/// unchecked (its app reads it; memctl does not unpickle).
pub fn check_row(keys: &Keyring, thread: &str, row: RowRef<'_>) -> Result<()> {
    let checked = match row {
        RowRef::Checkpoint(c) => checkpoint_decodes(keys, thread, c, true),
        RowRef::Write(w) => check_write(keys, thread, &w.checkpoint_id, &w.row),
    };
    checked.map_err(unreadable)
}

/// [`check_row`] of every row of thread `thread`, checkpoints first, for a move that writes
/// the values as stored (it needs no key): a value the key given does not open is left to its
/// AES tag, as without a key.
pub fn check_thread_as_stored(keys: &Keyring, thread: &str, rows: &ThreadRows) -> Result<()> {
    let checkpoints = rows.checkpoints.iter().map(RowRef::Checkpoint);
    let writes = rows.writes.iter().map(RowRef::Write);
    checkpoints
        .chain(writes)
        .try_for_each(|r| match check_row(keys, thread, r) {
            Err(e) if e.is::<KeyError>() => Ok(()),
            other => other,
        })
}

/// `e` as an [`Unreadable`] error, but for a key error.
fn unreadable(e: anyhow::Error) -> anyhow::Error {
    match e.is::<KeyError>() {
        true => e,
        false => Unreadable(format!("{e:#}")).into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::codec::msgpack::{encode, Value};

    fn cp(bytes: Vec<u8>, metadata: &str) -> CheckpointRow {
        CheckpointRow {
            thread_id: "t".into(),
            checkpoint_ns: String::new(),
            checkpoint_id: "1".into(),
            parent_checkpoint_id: None,
            type_name: "msgpack".into(),
            checkpoint: bytes,
            metadata: Some(metadata.as_bytes().to_vec()),
        }
    }

    fn checkpoint(json: serde_json::Value) -> Vec<u8> {
        encode(&crate::codec::json::json_to_value(&json))
    }

    #[test]
    fn a_checkpoint_needs_a_blob_a_map_of_versions_and_object_metadata() {
        let keys = Keyring::none();
        let good = checkpoint(
            serde_json::json!({"v": 4, "channel_values": {}, "channel_versions": {"a": "1"}}),
        );
        assert!(check_checkpoint(&keys, "t", &cp(good.clone(), "{}")).is_ok());
        let pickled = CheckpointRow {
            type_name: "pickle".into(),
            ..cp(b"\x80\x04N.".to_vec(), "{}")
        };
        assert!(
            check_row(&keys, "t", RowRef::Checkpoint(&pickled)).is_ok(),
            "moved as stored"
        );
        assert!(
            check_checkpoint(&keys, "t", &pickled).is_err(),
            "gc cannot plan it"
        );
        let bad = [
            cp(vec![0xde, 0xad, 0xbe, 0xef], "{}"),
            cp(encode(&Value::int(1)), "{}"),
            cp(
                checkpoint(serde_json::json!({"v": 4, "channel_values": {}})),
                "{}",
            ),
            cp(good.clone(), "\"a string\""),
            cp(good, "{"),
        ];
        for row in bad {
            let e = check_row(&keys, "t", RowRef::Checkpoint(&row)).expect_err("refused");
            assert!(e.is::<Unreadable>(), "{e:#}");
            assert!(
                e.to_string().contains("checkpoint 1 of thread 't'"),
                "{e:#}"
            );
        }
    }

    #[test]
    fn a_write_value_must_decode_by_its_type() {
        let keys = Keyring::none();
        let w = |type_name: &str, value: &[u8]| WriteRow {
            task_id: "task".into(),
            task_path: String::new(),
            idx: 0,
            channel: "messages".into(),
            type_name: type_name.into(),
            value: value.to_vec(),
        };
        assert!(check_writes(
            &keys,
            "t",
            "1",
            &[w("msgpack", &[0x91, 0x01]), w("null", b"")]
        )
        .is_ok());
        for bad in [
            w("msgpack", &[0xc1, 0xc1, 0xc1]),
            w("mystery", b"x"),
            w("json", b"{"),
        ] {
            assert!(check_write(&keys, "t", "1", &bad).is_err(), "{bad:?}");
        }
        // Encrypted and no key: left to its AES tag.
        assert!(check_write(&keys, "t", "1", &w("msgpack+aes", b"xx")).is_ok());
    }

    #[test]
    fn encrypted_values_are_checked_with_their_key_and_as_stored_without_it() {
        let key = |k: &[u8]| aes::AesKey::new(zeroize::Zeroizing::new(k.to_vec())).expect("key");
        let keys = Keyring::with_key("K", key(b"0123456789abcdef"));
        let other = Keyring::with_key("K", key(b"fedcba9876543210"));
        let good = checkpoint(serde_json::json!({"channel_versions": {}}));
        let sealed = |bytes: &[u8]| {
            let (type_name, checkpoint) = aes::seal(keys.key("x").expect("key"), "msgpack", bytes);
            CheckpointRow {
                type_name,
                checkpoint,
                ..cp(vec![], "{}")
            }
        };
        let rows = |c: CheckpointRow| ThreadRows {
            checkpoints: vec![c],
            writes: vec![],
        };
        assert!(check_thread_as_stored(&keys, "t", &rows(sealed(&good))).is_ok());
        // Damage under the seal: found with the key.
        let e = check_thread_as_stored(&keys, "t", &rows(sealed(&[0xc1])))
            .expect_err("does not decode");
        assert!(e.is::<Unreadable>(), "{e:#}");
        // Another key (or none): as stored, left to the AES tag; checked, it is a key error.
        for k in [&other, &Keyring::none()] {
            assert!(check_thread_as_stored(k, "t", &rows(sealed(&[0xc1]))).is_ok());
        }
        let row = sealed(&good);
        let e = check_row(&other, "t", RowRef::Checkpoint(&row)).expect_err("wrong key");
        assert!(e.is::<KeyError>(), "{e:#}");
    }
}
