//! A thread's age is one fact: the time of the app's last activity on it.
//!
//! memctl's own edits (trim, rm, summarize, forget's scrub) append a checkpoint whose id keeps
//! its parent's time (see [`crate::ops::update`]): they never make a thread look recently
//! used. Its `ts`, though, is the time of the edit. Every command that shows or decides on a
//! thread's age — `threads list` (`updated_at`, `age`), `prune --idle`, `--min-idle` of gc and
//! prune, `trim` / `summarize --idle` — asks [`last_app_activity`], so a reader of the list
//! can predict what prune will do.

use jiff::Timestamp;

use crate::ids::id_time;
#[cfg(test)]
use crate::ids::{edited_by_memctl, newest_of_rows, NewestRows};

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

/// The threads that a list sorted by the app's last activity, newest first, and cut to `n`
/// rows can hold, gathered from `(thread, largest checkpoint id in any namespace)` pairs as
/// they stream by, in memory for about `2n` threads: every thread whose activity is at least
/// the `n`-th newest (more than `n` when times tie). It gives up ([`Newest::push`] returns
/// false) at a latest id that is not a uuid6: that thread's time is its checkpoint's `ts`
/// ([`last_app_activity`]), which only reading the checkpoint tells.
pub struct Newest {
    n: usize,
    /// No thread older than this can be among the first `n` any more.
    cut: Option<Timestamp>,
    kept: Vec<(Timestamp, String)>,
}

impl Newest {
    /// Gathers the threads of the first `n` rows.
    pub fn new(n: usize) -> Newest {
        Newest {
            n,
            cut: None,
            kept: Vec::new(),
        }
    }

    /// Takes one thread; false when its latest id is not a uuid6 (gather no further).
    pub fn push(&mut self, thread: &str, latest_id: &str) -> bool {
        let Some(t) = id_time(latest_id) else {
            return false;
        };
        if self.n == 0 || self.cut.is_some_and(|c| t < c) {
            return true;
        }
        self.kept.push((t, thread.to_owned()));
        if self.kept.len() >= 2 * self.n + 1024 {
            self.shrink();
        }
        true
    }

    /// Keeps the threads at least as new as the `n`-th newest.
    fn shrink(&mut self) {
        if self.kept.len() <= self.n {
            return;
        }
        let mut times: Vec<Timestamp> = self.kept.iter().map(|(t, _)| *t).collect();
        let (_, nth, _) = times.select_nth_unstable_by(self.n - 1, |a, b| b.cmp(a));
        let cut = *nth;
        self.kept.retain(|(t, _)| *t >= cut);
        self.cut = Some(cut);
    }

    /// The threads, in no particular order.
    pub fn threads(mut self) -> Vec<String> {
        self.shrink();
        self.kept.into_iter().map(|(_, t)| t).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_newest_threads_are_chosen_by_the_time_in_their_ids_ties_kept() {
        let latest: Vec<(String, String)> = [
            ("a", "1f1ed411-b1d1-6121-8009-a1b2c3d4e5f6"),
            ("b", "1f1ed412-0000-6121-8009-a1b2c3d4e5f6"),
            ("c", "1f1ed410-0000-6121-8009-a1b2c3d4e5f6"),
            ("d", "1f1ed412-0000-6121-8009-000000000000"), // b's time: a tie
        ]
        .iter()
        .map(|(t, i)| (t.to_string(), i.to_string()))
        .collect();
        let gather = |latest: &[(String, String)], n| {
            let mut g = Newest::new(n);
            latest
                .iter()
                .all(|(t, i)| g.push(t, i))
                .then(|| g.threads())
        };
        let pick = |n| {
            let mut v = gather(&latest, n).expect("uuid6 ids");
            v.sort();
            v
        };
        assert_eq!(pick(1), ["b", "d"]);
        assert_eq!(pick(2), ["b", "d"]);
        assert_eq!(pick(3), ["a", "b", "d"]);
        assert_eq!(pick(9), ["a", "b", "c", "d"]);
        assert!(pick(0).is_empty());
        let mut other = latest.clone();
        other.push(("e".into(), "not-a-uuid".into()));
        assert_eq!(gather(&other, 1), None);
        // Past the memory bound: what is dropped on the way is what the end result drops.
        let many: Vec<(String, String)> = (0..5000u32)
            .map(|i| {
                let id = format!("1f1ed4{:02x}-{:04x}-6121-8009-a1b2c3d4e5f6", i % 251, i);
                (format!("t{i:05}"), id)
            })
            .collect();
        let mut got = gather(&many, 7).expect("uuid6 ids");
        got.sort();
        let mut want: Vec<(Timestamp, String)> = many
            .iter()
            .map(|(t, i)| (id_time(i).expect("uuid6"), t.clone()))
            .collect();
        want.sort_by_key(|w| std::cmp::Reverse(w.0));
        let nth = want[6].0;
        let mut want: Vec<String> = want
            .into_iter()
            .filter(|(t, _)| *t >= nth)
            .map(|(_, t)| t)
            .collect();
        want.sort();
        assert_eq!(got, want);
    }

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

    #[test]
    fn the_newest_rows_give_what_newest_gathers_or_ask_for_more() {
        let id = |sec: u32, node: u32| format!("1f1ed4{sec:02x}-0000-6121-8009-{node:012x}");
        // (thread, id), largest id first: t1 has several rows; t3 and t4 tie in time.
        let rows: Vec<(String, String)> = [
            ("t1", id(9, 2)),
            ("t1", id(9, 1)),
            ("t2", id(8, 0)),
            ("t1", id(7, 0)),
            ("t4", id(6, 1)),
            ("t3", id(6, 0)),
            ("t5", id(5, 0)),
        ]
        .iter()
        .map(|(t, i)| (t.to_string(), i.clone()))
        .collect();
        let got = |n, k: usize, exhausted| newest_of_rows(n, &rows[..k], exhausted);
        let threads = |v: &[&str]| NewestRows::Threads(v.iter().map(|s| s.to_string()).collect());
        assert_eq!(
            got(2, 3, false),
            NewestRows::More,
            "t2's time may tie below"
        );
        assert_eq!(got(2, 4, false), threads(&["t1", "t2"]));
        assert_eq!(got(3, 5, false), NewestRows::More, "t4's tie may follow");
        assert_eq!(got(3, 6, false), NewestRows::More);
        assert_eq!(got(3, 7, false), threads(&["t1", "t2", "t4", "t3"]));
        assert_eq!(got(9, 7, false), NewestRows::More);
        assert_eq!(got(9, 7, true), threads(&["t1", "t2", "t4", "t3", "t5"]));
        assert_eq!(got(0, 0, false), threads(&[]));
        // The same threads as Newest from each thread's largest id.
        let mut newest = Newest::new(3);
        for (t, i) in [
            ("t1", id(9, 2)),
            ("t2", id(8, 0)),
            ("t4", id(6, 1)),
            ("t3", id(6, 0)),
            ("t5", id(5, 0)),
        ] {
            assert!(newest.push(t, &i));
        }
        let mut want = newest.threads();
        want.sort();
        assert_eq!(want, ["t1", "t2", "t3", "t4"]);
        // An id whose bytes may not sort by its time: give up.
        let mut odd = rows.clone();
        odd[2].1 = odd[2].1.to_uppercase();
        assert_eq!(newest_of_rows(2, &odd, false), NewestRows::Unordered);
        odd[2].1 = "not-a-uuid".into();
        assert_eq!(newest_of_rows(2, &odd, true), NewestRows::Unordered);
    }
}
