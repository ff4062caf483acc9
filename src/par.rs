//! Work split across the machine's cores (decoding and counting many threads).

use std::sync::{Mutex, PoisonError};

/// Applies `f` to every item on all available cores, keeping the order; items are handed
/// over by value (no copy of large rows). Workers take items one at a time from a shared
/// queue, so a worker that drew quick items (or kept its core) does more of them.
pub fn map_owned<T: Send, R: Send>(items: Vec<T>, f: impl Fn(T) -> R + Sync) -> Vec<R> {
    let workers = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .max(1)
        .min(items.len());
    if workers <= 1 {
        return items.into_iter().map(&f).collect();
    }
    let n = items.len();
    let queue = Mutex::new(items.into_iter().enumerate());
    let (f, queue) = (&f, &queue);
    let mut done: Vec<(usize, R)> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..workers)
            .map(|_| {
                s.spawn(move || {
                    let mut mine = Vec::new();
                    loop {
                        let next = queue.lock().unwrap_or_else(PoisonError::into_inner).next();
                        let Some((i, item)) = next else {
                            break mine;
                        };
                        mine.push((i, f(item)));
                    }
                })
            })
            .collect();
        let mut all = Vec::with_capacity(n);
        for h in handles {
            match h.join() {
                Ok(part) => all.extend(part),
                Err(panic) => std::panic::resume_unwind(panic),
            }
        }
        all
    });
    done.sort_unstable_by_key(|(i, _)| *i);
    done.into_iter().map(|(_, r)| r).collect()
}

#[cfg(test)]
mod tests {
    #[test]
    fn keeps_order() {
        let v: Vec<u64> = (0..1000).collect();
        assert!(super::map_owned(Vec::<u8>::new(), |x| x).is_empty());
        assert_eq!(
            super::map_owned(v.clone(), |x| x * 2),
            v.iter().map(|x| x * 2).collect::<Vec<_>>()
        );
        assert_eq!(super::map_owned(vec![7u8], |x| x), vec![7]);
    }
}
