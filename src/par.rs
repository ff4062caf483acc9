//! Every concurrency helper of memctl, in one place: work split across the machine's cores
//! ([`map_owned`], [`par_in_order`] for the messages of a long thread) and the read → work →
//! write [`pipeline`] of whole-file commands and batch rewrites. (The SQLite backend's WAL
//! checkpointer thread lives with the backend, in `storage::sqlite::wal`.)

use std::sync::{Mutex, PoisonError};

use anyhow::Result;

/// The machine's cores (at least 1).
pub fn cores() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// Applies `f` to every item on `workers` threads (e.g. [`cores`]), keeping the order; items
/// are handed over by value (no copy of large rows). Workers take items one at a time from a
/// shared queue, so a worker that drew quick items (or kept its core) does more of them.
pub fn map_owned<T: Send, R: Send>(
    items: Vec<T>,
    workers: usize,
    f: impl Fn(T) -> R + Sync,
) -> Vec<R> {
    let workers = workers.max(1).min(items.len());
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

/// Messages decoded and handled per chunk: enough to keep both cores busy, few enough that
/// memory holds only a small part of a long thread.
const CHUNK: usize = 2048;

/// Below this many items, [`par_in_order`] stays on this thread (starting workers would
/// cost more than the work: a batch of many short threads calls it once per thread).
const SERIAL: usize = 256;

/// `f(0) … f(n - 1)` computed on all cores a chunk at a time, yielded in order.
pub fn par_in_order<'a, R: Send + 'a>(
    n: usize,
    f: impl Fn(usize) -> R + Sync + 'a,
) -> impl Iterator<Item = R> + 'a {
    (0..n).step_by(CHUNK).flat_map(move |start| {
        let indices: Vec<usize> = (start..n.min(start + CHUNK)).collect();
        if indices.len() < SERIAL {
            indices.into_iter().map(&f).collect()
        } else {
            map_owned(indices, cores(), &f)
        }
    })
}

/// Items [`pipeline`] reads per batch: few enough to keep memory flat on any file, enough to
/// keep every core busy.
const BATCH: usize = 64;

/// Reads `items` with `read` on this thread, a batch at a time, runs `work` on every read
/// value on all cores, and hands each batch's results, in order, to `done` on this thread.
/// While the workers process a batch, this thread finishes the previous one and reads the
/// next. Memory holds at most three batches.
pub fn pipeline<I, T: Send, R: Send>(
    items: &[I],
    workers: usize,
    mut read: impl FnMut(&I) -> Result<T>,
    work: impl Fn(T) -> R + Sync,
    done: impl FnMut(Vec<R>) -> Result<()>,
) -> Result<()> {
    pipeline_batches(
        items,
        workers,
        |b| b.iter().map(&mut read).collect(),
        work,
        done,
    )
}

/// [`pipeline`] with a `read` that takes a whole batch of items at once and returns one
/// value per item, in order (a server reads a batch in one round trip).
pub fn pipeline_batches<I, T: Send, R: Send>(
    items: &[I],
    workers: usize,
    mut read: impl FnMut(&[I]) -> Result<Vec<T>>,
    work: impl Fn(T) -> R + Sync,
    mut done: impl FnMut(Vec<R>) -> Result<()>,
) -> Result<()> {
    let mut batches = items.chunks(BATCH);
    let mut read = |b: &[I]| -> Result<Vec<T>> {
        let values = read(b)?;
        anyhow::ensure!(values.len() == b.len(), "a batch read lost items");
        Ok(values)
    };
    let mut current = match batches.next() {
        Some(b) => read(b)?,
        None => return Ok(()),
    };
    let mut pending: Option<Vec<R>> = None;
    let work = &work;
    loop {
        let next = batches.next();
        let (results, finished, read_next) = std::thread::scope(|s| {
            let workers = s.spawn(move || map_owned(current, workers, work));
            let finished = pending.take().map_or(Ok(()), &mut done);
            let read_next = match finished {
                Ok(()) => next.map(&mut read).transpose(),
                Err(_) => Ok(None),
            };
            (workers.join(), finished, read_next)
        });
        let results = match results {
            Ok(r) => r,
            Err(panic) => std::panic::resume_unwind(panic),
        };
        finished?;
        pending = Some(results);
        match read_next? {
            Some(values) => current = values,
            None => break,
        }
    }
    pending.map_or(Ok(()), done)
}

/// Runs `produce` on this thread and `consume` on a thread of its own, joined by a channel
/// that holds at most `depth` items: a scan on one core, the work on what it read on the
/// other (the scan's connection stays on this thread). `produce` gets a `send` that returns
/// false once `consume` has stopped (it should stop too); `consume` reads until `produce`
/// returns. The consumer's error comes first when both fail.
pub fn beside<T: Send, A: Send>(
    depth: usize,
    produce: impl FnOnce(&mut dyn FnMut(T) -> bool) -> Result<()>,
    consume: impl FnOnce(std::sync::mpsc::Receiver<T>) -> Result<A> + Send,
) -> Result<A> {
    let (tx, rx) = std::sync::mpsc::sync_channel(depth);
    std::thread::scope(|s| {
        let consumer = s.spawn(move || consume(rx));
        let produced = produce(&mut |item| tx.send(item).is_ok());
        drop(tx);
        let consumed = match consumer.join() {
            Ok(r) => r,
            Err(panic) => std::panic::resume_unwind(panic),
        };
        let value = consumed?;
        produced?;
        Ok(value)
    })
}

#[cfg(test)]
mod tests {
    #[test]
    fn keeps_order() {
        let v: Vec<u64> = (0..1000).collect();
        assert!(super::map_owned(Vec::<u8>::new(), 2, |x| x).is_empty());
        assert_eq!(
            super::map_owned(v.clone(), 3, |x| x * 2),
            v.iter().map(|x| x * 2).collect::<Vec<_>>()
        );
        assert_eq!(super::map_owned(vec![7u8], 2, |x| x), vec![7]);
    }

    #[test]
    fn beside_hands_over_everything_and_reports_errors() {
        let sum = super::beside(
            2,
            |send| {
                for i in 1..=100u64 {
                    assert!(send(i));
                }
                Ok(())
            },
            |rx| Ok(rx.iter().sum::<u64>()),
        );
        assert_eq!(sum.expect("summed"), 5050);
        // The consumer stops: the producer is told, and the consumer's error is returned.
        let mut refused = 0;
        let r: anyhow::Result<()> = super::beside(
            1,
            |send| {
                for i in 0..10u8 {
                    if !send(i) {
                        refused += 1;
                        break;
                    }
                }
                anyhow::bail!("producer")
            },
            |rx| {
                let _ = rx.recv();
                anyhow::bail!("consumer")
            },
        );
        assert_eq!(r.expect_err("an error").to_string(), "consumer");
        assert_eq!(refused, 1);
        // The producer fails: its error is returned after the consumer has drained.
        let r = super::beside(
            1,
            |send| {
                send(1u8);
                anyhow::bail!("producer")
            },
            |rx| Ok(rx.iter().count()),
        );
        assert_eq!(r.expect_err("an error").to_string(), "producer");
    }
}
