//! `stats`' view of the threads, taken as they stream past (issue #30: at a million threads
//! holding every thread's summary took 655 MB): how many there are, the spread of their
//! checkpoint counts and the largest few, in memory that does not grow with the threads.

use std::collections::BTreeMap;

use crate::storage::ThreadSummary;

/// The threads seen so far: their number, how many have each checkpoint count, and the
/// `top` largest (by bytes; ties in the order seen).
#[derive(Debug)]
pub struct ThreadSizes {
    top: usize,
    threads: usize,
    /// Threads per checkpoint count.
    counts: BTreeMap<u64, usize>,
    /// The largest so far, at most `2 × top` (cut back to `top` when full).
    largest: Vec<ThreadSummary>,
}

/// Checkpoints per thread: the fewest, the median (the middle one of the sorted counts, the
/// upper one of an even number) and the most; all 0 without threads.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CountSpread {
    /// The fewest checkpoints of a thread.
    pub min: u64,
    /// The median.
    pub median: u64,
    /// The most.
    pub max: u64,
}

impl ThreadSizes {
    /// Keeps the `top` largest threads.
    pub fn new(top: usize) -> ThreadSizes {
        ThreadSizes {
            top,
            threads: 0,
            counts: BTreeMap::new(),
            largest: Vec::new(),
        }
    }

    /// Takes the next thread.
    pub fn add(&mut self, t: ThreadSummary) {
        self.threads += 1;
        *self.counts.entry(t.checkpoints).or_default() += 1;
        if self.top == 0 {
            return;
        }
        self.largest.push(t);
        if self.largest.len() >= 2 * self.top {
            self.cut();
        }
    }

    /// The largest `top` first, ties in the order seen (a stable sort: the ones kept from
    /// before come before the ones added since).
    fn cut(&mut self) {
        self.largest.sort_by_key(|t| std::cmp::Reverse(t.bytes));
        self.largest.truncate(self.top);
    }

    /// Threads seen.
    pub fn threads(&self) -> usize {
        self.threads
    }

    /// The spread of checkpoint counts.
    pub fn spread(&self) -> CountSpread {
        let mut spread = CountSpread::default();
        let middle = self.threads / 2;
        let mut seen = 0;
        let mut median = None;
        for (&n, &k) in &self.counts {
            if seen == 0 {
                spread.min = n;
            }
            seen += k;
            if median.is_none() && seen > middle {
                median = Some(n);
            }
            spread.max = n;
        }
        spread.median = median.unwrap_or(0);
        spread
    }

    /// The `top` largest threads, largest first (ties in the order seen).
    pub fn largest(mut self) -> Vec<ThreadSummary> {
        self.cut();
        self.largest
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(id: usize, checkpoints: u64, bytes: u64) -> ThreadSummary {
        ThreadSummary {
            thread_id: format!("t{id:04}"),
            checkpoints,
            namespaces: 1,
            latest_root_id: None,
            latest_id: String::new(),
            bytes,
        }
    }

    /// What sorting every thread at once gives, for any number of threads and any `top`.
    #[test]
    fn equals_holding_every_thread() {
        for n in [0usize, 1, 2, 3, 10, 57, 1000] {
            for top in [0usize, 1, 3, 10, 2000] {
                let all: Vec<ThreadSummary> = (0..n)
                    .map(|i| t(i, ((i * 7919) % 13) as u64, ((i * 104_729) % 17) as u64))
                    .collect();
                let mut sizes = ThreadSizes::new(top);
                for x in all.iter().cloned() {
                    sizes.add(x);
                }
                assert_eq!(sizes.threads(), n);
                let mut counts: Vec<u64> = all.iter().map(|x| x.checkpoints).collect();
                counts.sort_unstable();
                let want = CountSpread {
                    min: counts.first().copied().unwrap_or(0),
                    median: counts.get(counts.len() / 2).copied().unwrap_or(0),
                    max: counts.last().copied().unwrap_or(0),
                };
                assert_eq!(sizes.spread(), want, "n {n}");
                let mut sorted = all.clone();
                sorted.sort_by_key(|x| std::cmp::Reverse(x.bytes));
                sorted.truncate(top);
                let ids = |v: &[ThreadSummary]| -> Vec<String> {
                    v.iter().map(|x| x.thread_id.clone()).collect()
                };
                assert_eq!(ids(&sizes.largest()), ids(&sorted), "n {n}, top {top}");
            }
        }
    }
}
