//! Work split across the machine's cores (decoding and counting many threads).

/// Applies `f` to every item on all available cores, keeping the order; items are handed
/// over by value (no copy of large rows).
pub fn map_owned<T: Send, R: Send>(items: Vec<T>, f: impl Fn(T) -> R + Sync) -> Vec<R> {
    let workers = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .max(1);
    if workers == 1 || items.len() < 2 {
        return items.into_iter().map(&f).collect();
    }
    let per = items.len().div_ceil(workers);
    let mut parts: Vec<Vec<T>> = Vec::with_capacity(workers);
    let mut rest = items.into_iter();
    loop {
        let part: Vec<T> = rest.by_ref().take(per).collect();
        if part.is_empty() {
            break;
        }
        parts.push(part);
    }
    let f = &f;
    std::thread::scope(|s| {
        let handles: Vec<_> = parts
            .into_iter()
            .map(|part| s.spawn(move || part.into_iter().map(f).collect::<Vec<R>>()))
            .collect();
        let mut out = Vec::new();
        for h in handles {
            match h.join() {
                Ok(part) => out.extend(part),
                Err(panic) => std::panic::resume_unwind(panic),
            }
        }
        out
    })
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
