//! Batch sizes bounded by time: a write transaction beside a live app holds the lock the app's
//! next commit waits on, so its length, not its row count, is what to keep small.

use std::time::Duration;

/// The next batch size after a transaction of `current` items took `took`: halved while
/// transactions take longer than `target` (never below one item), doubled back (up to `max`)
/// while they take less than a quarter of it, else kept.
pub fn next_size(current: usize, max: usize, took: Duration, target: Duration) -> usize {
    let max = max.max(1);
    if took > target {
        (current / 2).max(1)
    } else if took < target / 4 {
        current.saturating_mul(2).min(max)
    } else {
        current.clamp(1, max)
    }
}

/// The longest pause between two transactions beside a live app.
pub const MAX_PAUSE: Duration = Duration::from_millis(100);

/// How long to leave the database to a live app after a write transaction that took `took`:
/// as long again, at most [`MAX_PAUSE`]. SQLite queues no one for its write lock: an app that
/// found it taken sleeps in its busy handler and retries at growing intervals (up to 100 ms),
/// so transactions run back to back would find the lock free only between two of them, for
/// microseconds, and the app could wait for as long as the whole job.
pub fn pause_after(took: Duration) -> Duration {
    took.min(MAX_PAUSE)
}

/// The first batch size, at most `max`: small, so that the first transaction (on a cold
/// cache) does not hold the lock long before [`next_size`] has a time to go by.
pub fn first_size(max: usize) -> usize {
    max.clamp(1, 32)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slow_transactions_shrink_the_batch_and_quick_ones_grow_it_back() {
        let ms = Duration::from_millis;
        let target = ms(40);
        assert_eq!(next_size(200, 200, ms(100), target), 100);
        assert_eq!(next_size(1, 200, ms(100), target), 1);
        assert_eq!(next_size(50, 200, ms(5), target), 100);
        assert_eq!(next_size(150, 200, ms(5), target), 200);
        assert_eq!(next_size(80, 200, ms(20), target), 80);
        assert_eq!(next_size(0, 0, ms(20), target), 1);
    }
}
