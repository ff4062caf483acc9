//! What `--match` finds in a thread's rows: `forget --match`'s search, and `rm --match
//! --purge`'s search of the thread's history.

use anyhow::Result;

use crate::codec::aes::{self, Keyring};
use crate::ops::find::Pattern;
use crate::ops::forget::Findings;
use crate::storage::CheckpointStore;

/// One stored row of a thread, opened (decrypted when it was encrypted).
struct Row<'a> {
    /// Where it is, for a person (no thread id: the caller knows the thread).
    place: &'a str,
    /// A checkpoint (`Some(true)`), a pending write (`Some(false)`) or a checkpoint's
    /// metadata (`None`).
    checkpoint: Option<bool>,
    /// The serialization type (`json` for metadata).
    type_name: &'a str,
    /// The bytes.
    bytes: &'a [u8],
}

/// Calls `f` with every stored row of a thread: every namespace, checkpoint (and its
/// metadata) and pending write, opened with `keys` when encrypted.
fn each_row(
    store: &dyn CheckpointStore,
    keys: &Keyring,
    thread: &str,
    f: &mut dyn FnMut(&Row<'_>) -> Result<()>,
) -> Result<()> {
    let mut visit = |place: &str, checkpoint: Option<bool>, type_name: &str, bytes: &[u8]| {
        if aes::split_type(type_name).1.is_some() {
            let opened = keys.open(type_name, bytes, place)?;
            return f(&Row {
                place,
                checkpoint,
                type_name: opened.type_name,
                bytes: &opened.bytes,
            });
        }
        f(&Row {
            place,
            checkpoint,
            type_name,
            bytes,
        })
    };
    for ns in store.namespaces(thread)? {
        for row in store.checkpoints(thread, &ns)? {
            let id = &row.checkpoint_id;
            let place = format!("checkpoint {id}");
            if let Some(m) = &row.metadata {
                visit(&format!("the metadata of {place}"), None, "json", m)?;
            }
            visit(&place, Some(true), &row.type_name, &row.checkpoint)?;
            for w in store.writes(thread, &ns, id)? {
                let place = format!("a pending write to '{}' on checkpoint {id}", w.channel);
                visit(&place, Some(false), &w.type_name, &w.value)?;
            }
        }
    }
    Ok(())
}

/// What `--match` finds in a thread's rows (also `rm --match --purge`'s history search).
pub fn findings(
    store: &dyn CheckpointStore,
    keys: &Keyring,
    thread: &str,
    pattern: &Pattern,
) -> Result<Findings> {
    let mut f = Findings::new(crate::ops::patterns::Patterns::one(pattern.regex().clone()));
    each_row(store, keys, thread, &mut |row| {
        let (place, type_name, bytes) = (row.place, row.type_name, row.bytes);
        let Some(checkpoint) = row.checkpoint else {
            // JSON may hold a text escaped (a quote as \"): matched on its decoded strings.
            if !pattern.maybe_in(bytes) && !bytes.contains(&b'\\') {
                return Ok(());
            }
            let hit = match serde_json::from_slice::<serde_json::Value>(bytes) {
                Ok(metadata) => f.visit_metadata(&metadata),
                Err(_) => true,
            };
            if hit {
                f.untouched(format!(
                    "{place}: memctl does not rewrite metadata (delete the thread with --thread or --meta)"
                ));
            }
            return Ok(());
        };
        if !pattern.maybe_in(bytes) {
            return Ok(());
        }
        if type_name != "msgpack" {
            f.untouched(format!(
                "{place}: stored as '{type_name}', which memctl does not rewrite"
            ));
            return Ok(());
        }
        match crate::codec::msgpack::decode(bytes) {
            Ok(v) => {
                // The pattern in the bytes but in no text (a key, a type tag, an id or a
                // name: LangGraph's structure) is no match; the verification after the
                // scrub searches the row's text again.
                f.visit(&v, checkpoint);
            }
            Err(e) => f.untouched(format!("{place}: does not decode ({e})")),
        }
        Ok(())
    })?;
    Ok(f)
}
