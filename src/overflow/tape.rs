//! Rows kept out of memory in the order they come, read back in that order (from the first
//! again as often as asked): a report whose rows are final one by one but printed together
//! at the end (`gc`, issue #30). Unlike a [`super::spill::Spill`] nothing is held per row:
//! each row is its length and its bytes, in an [`super::Overflow`].

use std::fs::File;
use std::io::{BufReader, Read, Seek, SeekFrom};

use anyhow::{Context, Result};

use super::{Overflow, Stored};

/// Rows being written.
#[derive(Default)]
pub struct Tape {
    bytes: Overflow,
    rows: usize,
}

impl Tape {
    /// An empty tape.
    pub fn new() -> Tape {
        Tape::default()
    }

    /// Appends a row.
    pub fn push(&mut self, bytes: &[u8]) -> Result<()> {
        let len = u32::try_from(bytes.len()).context("a reported row is over 4 GiB")?;
        self.rows += 1;
        self.bytes.write(&[&len.to_le_bytes(), bytes])
    }

    /// Rows pushed.
    pub fn len(&self) -> usize {
        self.rows
    }

    /// True when there is no row.
    pub fn is_empty(&self) -> bool {
        self.rows == 0
    }

    /// The rows, to read back in order.
    pub fn reader(self) -> Result<TapeReader> {
        let source = match self.bytes.finish()? {
            Stored::File(mut f) => {
                // Written up to here: read from the start.
                f.seek(SeekFrom::Start(0))
                    .context("cannot read the temporary file")?;
                Source::File(BufReader::with_capacity(1 << 16, f))
            }
            Stored::Memory(m) => Source::Memory(std::io::Cursor::new(m)),
        };
        Ok(TapeReader {
            source,
            rows: self.rows,
            next: 0,
            buf: Vec::new(),
        })
    }
}

enum Source {
    Memory(std::io::Cursor<Vec<u8>>),
    File(BufReader<File>),
}

/// Reads a [`Tape`]'s rows back, in order.
pub struct TapeReader {
    source: Source,
    rows: usize,
    /// The row the next read returns.
    next: usize,
    buf: Vec<u8>,
}

impl TapeReader {
    /// Rows.
    pub fn len(&self) -> usize {
        self.rows
    }

    /// True when there is no row.
    pub fn is_empty(&self) -> bool {
        self.rows == 0
    }

    /// The bytes of row `i`: the row after the last one read, or the first again (a tape
    /// reads forward only).
    pub fn get(&mut self, i: usize) -> Result<&[u8]> {
        anyhow::ensure!(i < self.rows, "no reported row {i}");
        if i == 0 && self.next != 0 {
            match &mut self.source {
                Source::Memory(c) => c.set_position(0),
                Source::File(f) => {
                    f.seek(SeekFrom::Start(0))
                        .context("cannot read the temporary file")?;
                }
            }
            self.next = 0;
        }
        anyhow::ensure!(i == self.next, "reported row {i} read out of order");
        let read: &mut dyn Read = match &mut self.source {
            Source::Memory(c) => c,
            Source::File(f) => f,
        };
        let mut len = [0u8; 4];
        read.read_exact(&mut len)
            .context("cannot read the temporary file")?;
        self.buf.resize(u32::from_le_bytes(len) as usize, 0);
        read.read_exact(&mut self.buf)
            .context("cannot read the temporary file")?;
        self.next += 1;
        Ok(&self.buf)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_come_back_in_order_twice_from_memory_and_from_disk() {
        for width in [0usize, 150_000] {
            let mut t = Tape::new();
            let rows: Vec<String> = (0..40)
                .map(|i| format!("{}{i}", " ".repeat(width)))
                .collect();
            for r in &rows {
                t.push(r.as_bytes()).expect("pushes");
            }
            assert_eq!(t.bytes.on_disk(), width > 0);
            let mut r = t.reader().expect("reads");
            assert_eq!(r.len(), 40);
            for _ in 0..2 {
                for (i, row) in rows.iter().enumerate() {
                    assert_eq!(r.get(i).expect("row"), row.as_bytes());
                }
            }
            assert!(r.get(5).is_err());
        }
    }
}
