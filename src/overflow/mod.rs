//! Bytes kept in memory up to a few MB and, past that, in an anonymous temporary file: the
//! store under [`spill::Spill`] (rows read back by offset) and [`tape::Tape`]
//! (rows read back in order).

pub mod spill;
pub mod tape;

use std::fs::File;
use std::io::{BufWriter, Write};

use anyhow::{Context, Result};

/// Bytes kept in memory before they move to a temporary file.
const IN_MEMORY: usize = 4 << 20;

/// Bytes being written.
#[derive(Default)]
pub struct Overflow {
    memory: Vec<u8>,
    file: Option<BufWriter<File>>,
}

/// The bytes written, to read back.
pub enum Stored {
    /// All of them, in memory.
    Memory(Vec<u8>),
    /// All of them, in the temporary file (its position at the end).
    File(File),
}

impl Overflow {
    /// Appends `parts`, one after the other.
    pub fn write(&mut self, parts: &[&[u8]]) -> Result<()> {
        match &mut self.file {
            Some(f) => {
                for p in parts {
                    f.write_all(p).context("cannot write the temporary file")?;
                }
            }
            None => {
                for p in parts {
                    self.memory.extend_from_slice(p);
                }
                if self.memory.len() > IN_MEMORY {
                    let file = tempfile::tempfile().context("cannot make a temporary file")?;
                    let mut file = BufWriter::with_capacity(1 << 16, file);
                    file.write_all(&self.memory)
                        .context("cannot write the temporary file")?;
                    self.memory = Vec::new();
                    self.file = Some(file);
                }
            }
        }
        Ok(())
    }

    /// True once the bytes have moved to the temporary file.
    pub fn on_disk(&self) -> bool {
        self.file.is_some()
    }

    /// The bytes written, flushed.
    pub fn finish(self) -> Result<Stored> {
        Ok(match self.file {
            Some(f) => Stored::File(
                f.into_inner()
                    .map_err(|e| e.into_error())
                    .context("cannot write the temporary file")?,
            ),
            None => Stored::Memory(self.memory),
        })
    }
}
