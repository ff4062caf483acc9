//! Taking the checkpoint tables' write locks without holding an app back in the server's
//! lock queue.
//!
//! A `LOCK TABLE ... IN SHARE ROW EXCLUSIVE MODE` that has to wait — for a VACUUM or ANALYZE
//! (they hold `SHARE UPDATE EXCLUSIVE`), a `CREATE INDEX`, or an app's long transaction —
//! waits in the server's queue, and every `PostgresSaver.put` that arrives after it queues
//! behind it although the holder does not block the app's writes: the app waits as long as
//! memctl does (up to `--busy-timeout`). So memctl's request waits at most [`SLICE`], steps
//! out of the queue (the app's queued writes go ahead), and asks again after as long, until
//! `--busy-timeout` has passed in all; then it fails with the same error as one long wait.
//!
//! Except behind an autovacuum: the server cancels an autovacuum that a lock request has
//! waited on for `deadlock_timeout` (1 s by default), and only a request that stays in the
//! queue gets it cancelled; stepping out would wait for the whole autovacuum, which can take
//! longer than `--busy-timeout` on a large table. When an autovacuum holds a lock on one of
//! the three tables, memctl waits in the queue for the rest of `--busy-timeout` as before
//! (an app's `put` waits with it, up to `deadlock_timeout`).

use std::time::{Duration, Instant};

use postgres::error::SqlState;
use postgres::Client;

/// Tables a write transaction locks, in `put`'s order.
const LOCK_SQL: &str =
    "LOCK TABLE checkpoint_blobs, checkpoints, checkpoint_writes IN SHARE ROW EXCLUSIVE MODE";

/// The longest memctl's lock request waits in the queue before it steps out for as long.
pub const SLICE: Duration = Duration::from_millis(50);

/// Whether an autovacuum worker holds a lock on one of the three tables.
const AUTOVACUUM_HOLDS: &str = "SELECT EXISTS (SELECT 1 FROM pg_locks l \
     JOIN pg_stat_activity a ON a.pid = l.pid \
     WHERE l.granted AND a.backend_type = 'autovacuum worker' \
       AND l.relation IN (to_regclass('checkpoint_blobs'), to_regclass('checkpoints'), \
                          to_regclass('checkpoint_writes')))";

/// Begins a READ COMMITTED transaction on `c` that holds the three tables' write locks,
/// waiting at most `busy` in all (zero: no limit, one request that waits in the queue).
/// `lock_timeout` is `busy` again for the rest of the transaction. `first`: statements the
/// transaction runs before it locks (the saver's tables made, [`super::setup::create_sql`]).
/// On an error no transaction is left open.
pub(super) fn begin_locked(
    c: &mut Client,
    busy: Duration,
    first: Option<&str>,
) -> Result<(), postgres::Error> {
    let started = Instant::now();
    let busy_ms = busy.as_millis().min(i32::MAX as u128);
    let mut queue = busy.is_zero();
    loop {
        let left = busy.saturating_sub(started.elapsed());
        let last = queue || left <= SLICE;
        let wait_ms = match (busy.is_zero(), last) {
            (true, _) => 0,
            (false, true) => left.as_millis().clamp(1, busy_ms.max(1)),
            (false, false) => SLICE.as_millis(),
        };
        let sql = format!(
            "BEGIN ISOLATION LEVEL READ COMMITTED; SET LOCAL lock_timeout = {wait_ms}; \
             {}\n{LOCK_SQL}; SET LOCAL lock_timeout = {busy_ms}",
            first.unwrap_or_default()
        );
        match c.batch_execute(&sql) {
            Ok(()) => return Ok(()),
            Err(e) => {
                let _ = c.batch_execute("ROLLBACK");
                if last || e.code() != Some(&SqlState::LOCK_NOT_AVAILABLE) {
                    return Err(e);
                }
                queue = autovacuum_holds(c);
                if !queue {
                    std::thread::sleep(SLICE.min(busy.saturating_sub(started.elapsed())));
                }
            }
        }
    }
}

/// True when an autovacuum holds a lock on the tables (false when that cannot be read).
fn autovacuum_holds(c: &mut Client) -> bool {
    c.query_one(AUTOVACUUM_HOLDS, &[])
        .and_then(|r| r.try_get::<_, bool>(0))
        .unwrap_or(false)
}
