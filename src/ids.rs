//! Checkpoint ids: LangGraph's are uuid6, made from the app's clock, so an id holds the time
//! its checkpoint was made, and ids in their lowercase text sort by that time. Below every
//! layer that reads or writes checkpoints (storage orders by it, ops and commands show and
//! judge a thread's age by it); it knows nothing of them.

use jiff::Timestamp;
use uuid::Uuid;

/// 100 ns ticks from 1582-10-15 (the uuid epoch) to 1970-01-01.
pub const GREGORIAN_OFFSET: u64 = 0x01B2_1DD2_1381_4000;

/// The `(ticks, clock_seq)` of a uuid6 (LangGraph's checkpoint ids): 100 ns ticks since
/// 1582 and the 14-bit clock sequence (LangGraph puts the step there).
pub fn uuid6_parts(u: &Uuid) -> Option<(u64, u16)> {
    if u.get_version_num() != 6 {
        return None;
    }
    let n = u.as_u128();
    let ticks = (((n >> 80) & 0xFFFF_FFFF_FFFF) << 12) | ((n >> 64) & 0xFFF);
    Some((ticks as u64, ((n >> 48) & 0x3FFF) as u16))
}

/// The time a LangGraph checkpoint id (uuid6) was made, if it is one.
pub fn id_time(id: &str) -> Option<Timestamp> {
    let (ticks, _) = uuid6_parts(&Uuid::parse_str(id).ok()?)?;
    Timestamp::from_nanosecond((i128::from(ticks) - i128::from(GREGORIAN_OFFSET)) * 100).ok()
}

/// What the newest checkpoint rows of a database say of the threads a list sorted by the
/// app's last activity and cut to `n` rows can hold ([`newest_of_rows`]).
#[derive(Debug, PartialEq, Eq)]
pub enum NewestRows {
    /// These threads: the same ones [`crate::ops::activity::Newest`] gathers from every thread's latest id.
    Threads(Vec<String>),
    /// More rows are needed: a thread below the last row given could still be among them.
    More,
    /// A row's id is not a uuid6 in its usual lowercase text: the ids' byte order may not be
    /// their time order, so every thread must be read.
    Unordered,
}

/// The threads of the first `n` rows of a list sorted by the app's last activity (every
/// thread at least as new as the `n`-th newest, as [`crate::ops::activity::Newest`] keeps them), from `rows`: the
/// `(thread, checkpoint id)` of the database's checkpoints with the largest ids, largest
/// first, as an index on the id gives them (`exhausted`: there are no more). A thread's
/// first row is its largest id, and uuid6 ids in their lowercase text sort by their time, so
/// once `n` threads are seen the rest are older than the `n`-th, except those whose ids tie
/// with it in time, which may follow.
pub fn newest_of_rows(n: usize, rows: &[(String, String)], exhausted: bool) -> NewestRows {
    let mut seen = std::collections::HashSet::new();
    let mut firsts: Vec<(Timestamp, &str)> = Vec::new();
    let mut last = None;
    for (thread, id) in rows {
        let Some(t) = canonical_uuid6_time(id) else {
            return NewestRows::Unordered;
        };
        if seen.insert(thread.as_str()) {
            firsts.push((t, thread));
        }
        last = Some(t);
    }
    let keep = |cut: Option<Timestamp>| {
        NewestRows::Threads(
            firsts
                .iter()
                .filter(|(t, _)| cut.is_none_or(|c| *t >= c))
                .map(|(_, thread)| (*thread).to_owned())
                .collect(),
        )
    };
    if n == 0 {
        return NewestRows::Threads(Vec::new());
    }
    match firsts.get(n - 1) {
        Some((cut, _)) if exhausted || last.is_some_and(|l| l < *cut) => keep(Some(*cut)),
        _ if exhausted => keep(None),
        _ => NewestRows::More,
    }
}

/// True when `id` is a uuid6 written as LangGraph and memctl write it (lowercase, hyphens):
/// then its byte order among such ids is its time order.
pub fn sorts_by_time(id: &str) -> bool {
    canonical_uuid6_time(id).is_some()
}

/// The time of an id that [`sorts_by_time`].
fn canonical_uuid6_time(id: &str) -> Option<Timestamp> {
    let u = uuid::Uuid::parse_str(id).ok()?;
    (u.hyphenated().to_string() == id).then_some(())?;
    id_time(id)
}

/// Whether memctl made the checkpoint `id` (its edit is the thread's latest state): memctl's
/// uuid6 ids have a zero node, where LangGraph's (Python and JS) have 48 random bits.
pub fn edited_by_memctl(id: &str) -> bool {
    uuid::Uuid::parse_str(id)
        .ok()
        .filter(|u| u.get_version_num() == 6 && id == u.to_string())
        .is_some_and(|u| u.as_u128() & 0xFFFF_FFFF_FFFF == 0)
}
