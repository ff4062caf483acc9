//! The LangGraph Store's items `forget` selects: chosen, deleted whole, and checked
//! afterwards.

use std::collections::BTreeSet;

use anyhow::Result;

use crate::jobs::Sink;
use crate::ops::find::{MetaCondition, Pattern};
use crate::ops::forget::{digest, Hit, ItemDigest, StoreErased};
use crate::storage::store::ItemStore;

use super::{StoreLine, Tally};

/// What the deletion of the store's items did.
#[derive(Default)]
pub(super) struct StoreErasure {
    /// The list of what the run does, item by item.
    pub(super) lines: Vec<StoreLine>,
    /// Its counts (`None`: the database has no store).
    pub(super) erased: Option<StoreErased>,
    /// The items deleted (namespace as stored, key).
    pub(super) gone: Vec<(String, String)>,
    /// A `VACUUM` ran on the store's tables (Postgres) after the deletion.
    pub(super) vacuumed: bool,
}

/// The store's items: whole items, one transaction per namespace, as `store.delete` deletes
/// them (with their vectors). Deleted rather than scrubbed: a store value is the app's own
/// JSON (a profile, a memory, a file of lines), with no message structure memctl could
/// rewrite the way LangGraph would; an item with a part cut out is one the app may misread,
/// and `store.delete` is LangGraph's own way to forget.
pub(super) fn erase_items(
    s: &mut dyn ItemStore,
    picks: &[ItemPick],
    dry_run: bool,
    tally: &mut Tally,
    sink: &dyn Sink,
) -> Result<StoreErasure> {
    let mut erasure = StoreErasure::default();
    let mut erased = StoreErased::default();
    if !dry_run && !picks.is_empty() {
        if let Some(z) = s.secure_delete() {
            z.zero_deleted_content()?;
        }
    }
    let mut by_ns: std::collections::BTreeMap<&str, Vec<&ItemPick>> = Default::default();
    for p in picks {
        by_ns.entry(p.prefix.as_str()).or_default().push(p);
        tally.must.extend(p.matched.iter().cloned());
        tally
            .removed
            .extend(crate::ops::store::value_strings(&p.value));
    }
    let pb = sink.bar(by_ns.len() as u64, "forget: store");
    for (prefix, ps) in by_ns {
        pb.inc(1);
        let chosen: Vec<(String, Vec<u8>)> = ps
            .iter()
            .map(|p| (p.key.clone(), p.value.clone()))
            .collect();
        // Only items still as they were read: one the app rewrote meanwhile is left alone
        // (and, if the request still selects it, the verification says so).
        let removal = s.delete_unchanged(prefix, &chosen, dry_run)?;
        for p in &ps {
            if !removal.items.iter().any(|it| it.key == p.key) {
                erased.left_alone += 1;
                erasure.lines.push(StoreLine {
                    namespace: crate::ops::store::labels(prefix),
                    key: p.key.clone(),
                    action: "left alone".into(),
                    detail: "rewritten or deleted by the app while memctl worked; run forget again"
                        .into(),
                });
            }
        }
        erased.vectors += removal.vectors;
        for it in removal.items {
            let Some(p) = ps.iter().find(|p| p.key == it.key) else {
                continue;
            };
            erased.items += 1;
            erased.bytes += it.bytes;
            erased.selected_by_meta += u64::from(p.by_meta);
            erased.selected_by_match += u64::from(!p.matched.is_empty());
            erased.items_sha256.push(ItemDigest {
                namespace_sha256: digest(&it.prefix),
                key_sha256: digest(&it.key),
            });
            let why = match (p.by_meta, !p.matched.is_empty()) {
                (true, true) => "--meta and --match",
                (true, false) => "--meta",
                _ => "--match",
            };
            erasure.lines.push(StoreLine {
                namespace: crate::ops::store::labels(&it.prefix),
                key: it.key.clone(),
                action: if dry_run { "would delete" } else { "deleted" }.into(),
                detail: format!("{} bytes; selected by {why}", it.bytes),
            });
            erasure.gone.push((it.prefix, it.key));
        }
    }
    pb.finish_and_clear();
    if !dry_run && !erasure.gone.is_empty() {
        erasure.vacuumed = match s.maintenance() {
            Some(m) => {
                m.vacuum()?;
                true
            }
            None => false,
        };
    }
    erasure.erased = Some(erased);
    Ok(erasure)
}

/// A store item `forget` selected, with what the verification needs of it.
pub(super) struct ItemPick {
    /// Its namespace as stored.
    pub(super) prefix: String,
    /// Its key.
    pub(super) key: String,
    /// Its value's bytes.
    pub(super) value: Vec<u8>,
    /// `--meta` selected it.
    pub(super) by_meta: bool,
    /// The texts `--match` matched in it (empty: it did not).
    pub(super) matched: BTreeSet<String>,
}

/// The store items `--meta` or `--match` select (one pass over the table).
pub(super) fn select_items(
    store: &dyn ItemStore,
    conditions: &[MetaCondition],
    pattern: Option<&Pattern>,
) -> Result<Vec<ItemPick>> {
    // The table split across cores; the parts' picks in storage order.
    let parts = crate::storage::store::visit_in_parts(
        store,
        || Ok(Vec::new()),
        |picks: &mut Vec<ItemPick>, prefix, key, value| {
            let by_meta = crate::ops::store::meta_selects_item(prefix, value, conditions);
            let matched = match pattern {
                Some(p) if p.maybe_in(value) || value.contains(&b'\\') => {
                    crate::ops::store::pattern_matches(value, p.regex())
                }
                _ => BTreeSet::new(),
            };
            if by_meta || !matched.is_empty() {
                picks.push(ItemPick {
                    prefix: prefix.to_owned(),
                    key: key.to_owned(),
                    value: value.to_vec(),
                    by_meta,
                    matched,
                });
            }
            Ok(())
        },
    )?;
    Ok(parts.into_iter().flatten().collect())
}

/// What the verification checks in the store.
pub(super) struct StoreCheck<'a> {
    pub(super) store: &'a dyn ItemStore,
    pub(super) conditions: &'a [MetaCondition],
    pub(super) pattern: Option<&'a Pattern>,
    /// The items deleted (namespace as stored, key): none of their vectors may be left.
    pub(super) gone: &'a [(String, String)],
}

impl StoreCheck<'_> {
    /// For each of `texts`, up to five kept items that hold it (named); and the failures:
    /// items the request still selects, vectors of deleted items.
    pub(super) fn search(&self, texts: &[String]) -> Result<(Vec<Vec<String>>, Vec<Hit>)> {
        /// What one part of the table found.
        struct Part<'t> {
            held: Vec<Vec<String>>,
            failures: Vec<Hit>,
            /// The texts that have fewer than five places in this part yet: a word every item
            /// holds is decoded five times, not once per item, and no longer searched for
            /// after that.
            open: crate::bytesearch::needles::Needles<'t>,
        }
        let wanted: Vec<&str> = texts.iter().map(String::as_str).collect();
        let (conditions, pattern) = (self.conditions, self.pattern);
        // The table split across cores, each part searched on its own; the parts taken in
        // storage order give the places one search in storage order would have named.
        let parts = crate::storage::store::visit_in_parts(
            self.store,
            || {
                Ok(Part {
                    held: vec![Vec::new(); texts.len()],
                    failures: Vec::new(),
                    open: crate::bytesearch::needles::Needles::new(texts)?,
                })
            },
            |part: &mut Part<'_>, prefix, key, value| {
                let place = || format!("store item '{key}' in namespace '{prefix}'");
                let still_meta = crate::ops::store::meta_selects_item(prefix, value, conditions);
                let unescaped = !value.contains(&b'\\');
                let still_match = pattern.is_some_and(|p| {
                    (p.maybe_in(value) || !unescaped)
                        && !crate::ops::store::pattern_matches(value, p.regex()).is_empty()
                });
                if still_meta || still_match {
                    part.failures.push(Hit {
                        sha256: digest(&format!("{prefix}/{key}")),
                        rows: vec![format!("{} (still selected by the request)", place())],
                        raw: vec![],
                    });
                }
                // Decoded only when it may hold an open text (escaped JSON may hold any).
                let wanted_here = if unescaped {
                    part.open.any_in(value)
                } else {
                    !part.open.done()
                };
                if texts.is_empty() || !wanted_here {
                    return Ok(());
                }
                let hits = crate::ops::store::holds_texts(value, &wanted);
                for (i, h) in hits.into_iter().enumerate() {
                    if h && part.held[i].len() < 5 {
                        part.held[i].push(place());
                        if part.held[i].len() == 5 {
                            part.open.close(i)?;
                        }
                    }
                }
                Ok(())
            },
        )?;
        let mut held = vec![Vec::new(); texts.len()];
        let mut failures = Vec::new();
        for part in parts {
            for (all, found) in held.iter_mut().zip(part.held) {
                all.extend(found);
                all.truncate(5);
            }
            failures.extend(part.failures);
        }
        let vectors = match self.store.vectors() {
            Some(v) => v.vectors_of(self.gone)?,
            None => 0,
        };
        if vectors > 0 {
            failures.push(Hit {
                sha256: digest("store_vectors"),
                rows: vec![format!("{vectors} rows of store_vectors of deleted items")],
                raw: vec![],
            });
        }
        Ok((held, failures))
    }
}
