//! Rows of a whole-database list kept out of memory until they are printed: each row's bytes
//! go to an [`super::Overflow`] (a buffer, then a temporary file); memory holds one
//! 32-byte `Entry` per row (its sort key, where its bytes are, one flag). Sorting sorts the
//! entries (an external sort whose rows stay on disk); the rows are then read back one at a
//! time in that order.

use std::fs::File;
use std::io::{Read, Seek, SeekFrom};

use anyhow::{Context, Result};

use super::{Overflow, Stored};

/// Where one row's bytes are, and what it is sorted by.
#[derive(Clone, Copy)]
struct Entry {
    /// The sort key (larger first).
    key: i128,
    /// Offset of the row's bytes.
    at: u64,
    /// Their length.
    len: u32,
    /// A mark the writer counts over the rows printed (e.g. "edited by memctl").
    flag: bool,
}

/// Rows in the order they were pushed, or sorted by key.
#[derive(Default)]
pub struct Spill {
    entries: Vec<Entry>,
    bytes: Overflow,
    written: u64,
}

impl Spill {
    /// An empty spill.
    pub fn new() -> Spill {
        Spill::default()
    }

    /// Appends a row: its `bytes`, its sort `key` and a `flag`.
    pub fn push(&mut self, key: i128, flag: bool, bytes: &[u8]) -> Result<()> {
        let len = u32::try_from(bytes.len()).context("a listed row is over 4 GiB")?;
        self.entries.push(Entry {
            key,
            at: self.written,
            len,
            flag,
        });
        self.written += u64::from(len);
        self.bytes.write(&[bytes])
    }

    /// Rows pushed (or kept by [`Spill::truncate`]).
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// True when there is no row.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Sorts the rows by key, largest first; rows with equal keys keep the order they were
    /// pushed in.
    pub fn sort_descending(&mut self) {
        self.entries
            .sort_by(|a, b| b.key.cmp(&a.key).then(a.at.cmp(&b.at)));
    }

    /// Keeps the first `n` rows.
    pub fn truncate(&mut self, n: usize) {
        self.entries.truncate(n);
        self.entries.shrink_to_fit();
    }

    /// Rows whose flag is set.
    pub fn flagged(&self) -> usize {
        self.entries.iter().filter(|e| e.flag).count()
    }

    /// The sum of the keys that are not `i128::MIN` (the key of "none").
    pub fn key_sum(&self) -> i128 {
        self.entries
            .iter()
            .filter(|e| e.key != i128::MIN)
            .map(|e| e.key)
            .sum()
    }

    /// The rows, to read back in their current order.
    pub fn reader(self) -> Result<SpillReader> {
        let (memory, file) = match self.bytes.finish()? {
            Stored::Memory(m) => (m, None),
            Stored::File(f) => (Vec::new(), Some(f)),
        };
        Ok(SpillReader {
            entries: self.entries,
            memory,
            file,
            buf: Vec::new(),
        })
    }
}

/// Reads the rows of a [`Spill`] back.
pub struct SpillReader {
    entries: Vec<Entry>,
    memory: Vec<u8>,
    file: Option<File>,
    buf: Vec<u8>,
}

impl SpillReader {
    /// Rows.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// True when there is no row.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The bytes of row `i` (in the spill's order).
    pub fn get(&mut self, i: usize) -> Result<&[u8]> {
        let e = *self
            .entries
            .get(i)
            .with_context(|| format!("no listed row {i}"))?;
        let len = e.len as usize;
        match &mut self.file {
            Some(f) => {
                self.buf.resize(len, 0);
                f.seek(SeekFrom::Start(e.at))
                    .and_then(|_| f.read_exact(&mut self.buf))
                    .context("cannot read the temporary file")?;
                Ok(&self.buf)
            }
            None => {
                let at = usize::try_from(e.at).context("a row past memory")?;
                self.memory
                    .get(at..at + len)
                    .context("a listed row is out of bounds")
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_come_back_sorted_by_key_ties_in_push_order_from_memory_and_from_disk() {
        for width in [0usize, 150_000] {
            let mut s = Spill::new();
            let rows: Vec<(i128, String)> = (0..40)
                .map(|i| ((i % 7) as i128, format!("{}{i}", " ".repeat(width))))
                .collect();
            for (k, r) in &rows {
                s.push(*k, k % 2 == 0, r.as_bytes()).expect("pushes");
            }
            // 40 rows of 150,000 bytes are past what memory keeps: on disk.
            assert_eq!(s.bytes.on_disk(), width > 0);
            s.sort_descending();
            s.truncate(30);
            let flagged = s.flagged();
            let mut want = rows.clone();
            want.sort_by_key(|r| std::cmp::Reverse(r.0));
            want.truncate(30);
            assert_eq!(flagged, want.iter().filter(|(k, _)| k % 2 == 0).count());
            assert_eq!(s.key_sum(), want.iter().map(|(k, _)| k).sum::<i128>());
            let mut r = s.reader().expect("reads");
            assert_eq!(r.len(), 30);
            for (i, (_, row)) in want.iter().enumerate() {
                assert_eq!(r.get(i).expect("row"), row.as_bytes());
            }
            assert!(r.get(30).is_err());
        }
    }
}
