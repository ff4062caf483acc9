//! Every concurrency helper of memctl, in one place: work split across the machine's cores
//! ([`map_owned`], [`par_in_order`] for the messages of a long thread) and the read → work →
//! write [`pipeline`] of whole-file commands and batch rewrites, and batches read on several
//! connections at once ([`in_batches`], `--jobs`), or one scan split across connections
//! ([`here_and_away`]). (The SQLite backend's WAL
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
pub const BATCH: usize = 64;

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

/// A reader of [`in_batches`]: reads and works on one batch of items, one result per item,
/// in order.
pub type BatchReader<'a, I, R> = dyn FnMut(&[I]) -> Result<Vec<R>> + 'a;

/// A reader of [`in_batches`] that runs on a thread of its own (it owns its handle).
pub type SentReader<'a, I, R> = Box<dyn FnMut(&[I]) -> Result<Vec<R>> + Send + 'a>;

/// `items` split into batches of `batch` read on several readers at once: `here` on this
/// thread and each of `away` on a thread of its own. Each reader takes the next batch from a
/// shared queue until none is left (a reader that drew quick batches takes more of them);
/// the results come back in the order of `items`, whichever reader read them, so the merge
/// is exactly what one reader would have returned. The first error stops every reader at its
/// next batch and is returned (the one of the earliest batch among those that failed).
pub fn in_batches<I: Sync, R: Send>(
    items: &[I],
    batch: usize,
    here: &mut BatchReader<'_, I, R>,
    away: Vec<SentReader<'_, I, R>>,
) -> Result<Vec<R>> {
    use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
    let batches: Vec<&[I]> = items.chunks(batch.max(1)).collect();
    let next = AtomicUsize::new(0);
    let stop = AtomicBool::new(false);
    let slots: Mutex<Vec<Option<Vec<R>>>> = Mutex::new(batches.iter().map(|_| None).collect());
    let failed: Mutex<Option<(usize, anyhow::Error)>> = Mutex::new(None);
    let run = |read: &mut BatchReader<'_, I, R>| {
        while !stop.load(Ordering::Relaxed) {
            let k = next.fetch_add(1, Ordering::Relaxed);
            let Some(b) = batches.get(k) else { break };
            let read = read(b).and_then(|values| {
                anyhow::ensure!(values.len() == b.len(), "a batch read lost items");
                Ok(values)
            });
            match read {
                Ok(values) => {
                    slots.lock().unwrap_or_else(PoisonError::into_inner)[k] = Some(values);
                }
                Err(e) => {
                    stop.store(true, Ordering::Relaxed);
                    let mut f = failed.lock().unwrap_or_else(PoisonError::into_inner);
                    if f.as_ref().is_none_or(|(first, _)| k < *first) {
                        *f = Some((k, e));
                    }
                    break;
                }
            }
        }
    };
    std::thread::scope(|s| {
        let run = &run;
        let handles: Vec<_> = away
            .into_iter()
            .map(|mut read| s.spawn(move || run(&mut *read)))
            .collect();
        run(here);
        for h in handles {
            if let Err(panic) = h.join() {
                std::panic::resume_unwind(panic);
            }
        }
    });
    if let Some((_, e)) = failed.into_inner().unwrap_or_else(PoisonError::into_inner) {
        return Err(e);
    }
    let mut out = Vec::with_capacity(items.len());
    for slot in slots.into_inner().unwrap_or_else(PoisonError::into_inner) {
        // Every batch was read when no reader failed.
        out.extend(slot.ok_or_else(|| anyhow::anyhow!("a batch was not read"))?);
    }
    Ok(out)
}

/// `here` on this thread while `f` runs on each of `away` on a thread of its own (a part of
/// a split scan on this thread's connection, the other parts on connections moved to theirs):
/// the results in order, `here`'s first.
pub fn here_and_away<T: Send, R: Send>(
    here: impl FnOnce() -> R,
    away: Vec<T>,
    f: impl Fn(T) -> R + Sync,
) -> Vec<R> {
    let f = &f;
    std::thread::scope(|s| {
        let others: Vec<_> = away.into_iter().map(|t| s.spawn(move || f(t))).collect();
        let mut all = vec![here()];
        for h in others {
            match h.join() {
                Ok(r) => all.push(r),
                Err(panic) => std::panic::resume_unwind(panic),
            }
        }
        all
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
    fn in_batches_merges_in_order_whoever_reads() {
        use super::{in_batches, SentReader};
        use std::sync::atomic::{AtomicUsize, Ordering};
        let items: Vec<u32> = (0..1000).collect();
        // Readers of different speeds, each tagging what it read: the merge is in item order
        // and every reader took part (the slow one is slow from its first batch). Each waits
        // in its first batch until all three hold one: on a loaded machine a reader's thread
        // may otherwise start after the others have read every batch.
        let took: Vec<AtomicUsize> = (0..3).map(|_| AtomicUsize::new(0)).collect();
        let all_started = std::sync::Barrier::new(3);
        let reader = |who: usize, pause: u64| {
            let took = &took;
            let all_started = &all_started;
            let mut first = true;
            move |b: &[u32]| -> anyhow::Result<Vec<(u32, usize)>> {
                if std::mem::take(&mut first) {
                    all_started.wait();
                }
                took[who].fetch_add(1, Ordering::Relaxed);
                std::thread::sleep(std::time::Duration::from_micros(pause));
                Ok(b.iter().map(|x| (x * 2, who)).collect())
            }
        };
        let mut here = reader(0, 50);
        let away: Vec<SentReader<'_, u32, (u32, usize)>> =
            vec![Box::new(reader(1, 500)), Box::new(reader(2, 0))];
        let got = in_batches(&items, 7, &mut here, away).expect("read");
        let values: Vec<u32> = got.iter().map(|(v, _)| *v).collect();
        assert_eq!(values, items.iter().map(|x| x * 2).collect::<Vec<_>>());
        let batches: usize = took.iter().map(|t| t.load(Ordering::Relaxed)).sum();
        assert_eq!(batches, 1000usize.div_ceil(7));
        assert!(took.iter().all(|t| t.load(Ordering::Relaxed) > 0));
        // Nothing to read, and one reader alone.
        let mut one = |b: &[u32]| -> anyhow::Result<Vec<u32>> { Ok(b.to_vec()) };
        assert!(in_batches(&[], 4, &mut one, vec![])
            .expect("empty")
            .is_empty());
        assert_eq!(
            in_batches(&items, 64, &mut one, vec![]).expect("one"),
            items
        );
    }

    #[test]
    fn in_batches_stops_on_the_first_error() {
        use super::{in_batches, SentReader};
        let items: Vec<u32> = (0..100).collect();
        let mut here = |b: &[u32]| -> anyhow::Result<Vec<u32>> {
            if b.contains(&50) {
                anyhow::bail!("batch of 50 failed");
            }
            Ok(b.to_vec())
        };
        let away: Vec<SentReader<'_, u32, u32>> = vec![Box::new(|b: &[u32]| {
            if b.contains(&50) {
                anyhow::bail!("batch of 50 failed");
            }
            Ok(b.to_vec())
        })];
        let e = in_batches(&items, 10, &mut here, away).expect_err("an error");
        assert_eq!(e.to_string(), "batch of 50 failed");
        // A reader that returns fewer values than items is an error, not a shifted merge.
        let mut short = |b: &[u32]| -> anyhow::Result<Vec<u32>> { Ok(b[1..].to_vec()) };
        let e = in_batches(&items, 10, &mut short, vec![]).expect_err("lost items");
        assert_eq!(e.to_string(), "a batch read lost items");
    }

    #[test]
    fn here_and_away_keeps_order() {
        let here = std::thread::current().id();
        let got = super::here_and_away(
            || (0, std::thread::current().id() == here),
            vec![1, 2, 3],
            |i| (i, std::thread::current().id() == here),
        );
        assert_eq!(got, vec![(0, true), (1, false), (2, false), (3, false)]);
    }
}
