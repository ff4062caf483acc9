//! A thread's age is one fact: the time of the app's last activity on it.
//!
//! memctl's own edits (trim, rm, summarize, forget's scrub) append a checkpoint whose id keeps
//! its parent's time (see [`crate::ops::update`]): they never make a thread look recently
//! used. Its `ts`, though, is the time of the edit. Every command that shows or decides on a
//! thread's age — `threads list` (`updated_at`, `age`), `prune --idle`, `--min-idle` of gc and
//! prune, `trim` / `summarize --idle` — asks [`last_app_activity`], so a reader of the list
//! can predict what prune will do.

use jiff::Timestamp;

use crate::ops::update::id_time;

/// The time of the app's last activity on a thread whose latest checkpoint has the id
/// `latest_id` and the `ts` `latest_ts`: the time in the id (a uuid6, made by the app from its
/// clock; memctl's ids keep their parent's), or the `ts` when the id is not a uuid6.
pub fn last_app_activity(latest_id: &str, latest_ts: Option<Timestamp>) -> Option<Timestamp> {
    id_time(latest_id).or(latest_ts)
}

/// How long ago (seconds at `now`) the app was last active on the thread (see
/// [`last_app_activity`]).
pub fn idle_seconds(latest_id: &str, latest_ts: Option<Timestamp>, now: Timestamp) -> Option<i64> {
    last_app_activity(latest_id, latest_ts).map(|t| now.as_second() - t.as_second())
}

/// Whether memctl made the checkpoint `id` (its edit is the thread's latest state): memctl's
/// uuid6 ids have a zero node, where LangGraph's (Python and JS) have 48 random bits.
pub fn edited_by_memctl(id: &str) -> bool {
    uuid::Uuid::parse_str(id)
        .ok()
        .filter(|u| u.get_version_num() == 6 && id == u.to_string())
        .is_some_and(|u| u.as_u128() & 0xFFFF_FFFF_FFFF == 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_apps_time_is_in_the_id_and_memctls_ids_keep_it() {
        let app = "1f1ed411-b1d1-6121-8009-a1b2c3d4e5f6";
        let memctl = "1f1ed411-b1d1-6121-800a-000000000000";
        let edit_ts: Timestamp = "2030-01-01T00:00:00Z".parse().expect("ts");
        assert_eq!(
            last_app_activity(memctl, Some(edit_ts)),
            last_app_activity(app, None)
        );
        assert!(last_app_activity(app, None).is_some_and(|t| t < edit_ts));
        assert!(edited_by_memctl(memctl));
        assert!(!edited_by_memctl(app));
        // Not a uuid6: the checkpoint's ts.
        assert_eq!(last_app_activity("0", Some(edit_ts)), Some(edit_ts));
        assert!(!edited_by_memctl("0"));
        assert_eq!(
            idle_seconds(
                "0",
                Some(edit_ts),
                "2030-01-01T00:01:00Z".parse().expect("ts")
            ),
            Some(60)
        );
    }
}
