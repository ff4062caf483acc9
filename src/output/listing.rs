//! A whole-database list (`threads list`, `tokens --all`) written with memory flat in the
//! number of rows.
//!
//! In the order rows are read (the primary key's, thread-id order), JSON and JSON lines are
//! written as the rows come. A table needs every row's width before its first line, and a
//! sorted list needs every row before its first: their rows go to a [`Spill`] (a temporary
//! file past a few MB, 32 bytes per row in memory) and are written once the last is read.

use std::io::Write;

use anyhow::{Context, Result};

use super::spill::Spill;
use super::{table, Format, RecordStream};

/// The order a list is written in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Order {
    /// The order rows are pushed in (read from the primary key).
    AsRead,
    /// Largest key first; equal keys in the order pushed.
    Descending,
}

/// What was written.
#[derive(Debug, Default, Clone, Copy)]
pub struct Written {
    /// Rows written.
    pub rows: usize,
    /// Rows written whose flag was set.
    pub flagged: usize,
    /// The sum of the keys of the rows written (`i128::MIN`, "none", left out).
    pub key_sum: i128,
}

/// A list being written: rows are pushed, then [`Listing::finish`] writes what is left.
pub struct Listing<'o> {
    out: &'o mut dyn Write,
    format: Format,
    order: Order,
    limit: Option<usize>,
    /// Rows written as they come (JSON in read order).
    stream: Option<RecordStream>,
    streamed: Written,
    spill: Spill,
    /// Encodes a spilled JSON row as the final stream writes it.
    encoder: RecordStream,
}

impl<'o> Listing<'o> {
    /// A list written to `out` in `format` (resolved: no `Auto`), in `order`, cut to `limit`
    /// rows.
    pub fn new(
        out: &'o mut dyn Write,
        format: Format,
        order: Order,
        limit: Option<usize>,
    ) -> Listing<'o> {
        let streams = order == Order::AsRead && format != Format::Table;
        Listing {
            out,
            format,
            order,
            limit,
            stream: streams.then(|| RecordStream::new(format)),
            streamed: Written::default(),
            spill: Spill::new(),
            encoder: RecordStream::new(format),
        }
    }

    /// True while a row pushed now can still be written (in read order, the limit ends it).
    pub fn wants_more(&self) -> bool {
        match (self.order, self.limit) {
            (Order::AsRead, Some(n)) => self.streamed.rows + self.spill.len() < n,
            (Order::Descending, Some(0)) => false,
            _ => true,
        }
    }

    /// Takes a row: its JSON `record`, its table `cells`, its sort `key` (`i128::MIN`:
    /// none, last) and a `flag` counted over the rows written. Returns [`Self::wants_more`].
    pub fn push<T: serde::Serialize>(
        &mut self,
        key: i128,
        flag: bool,
        record: &T,
        cells: impl FnOnce() -> Vec<String>,
    ) -> Result<bool> {
        if !self.wants_more() {
            return Ok(false);
        }
        match &mut self.stream {
            Some(stream) => {
                let bytes = stream.encode(record)?;
                stream.write_encoded(self.out, &bytes)?;
                self.streamed.rows += 1;
                self.streamed.flagged += usize::from(flag);
                if key != i128::MIN {
                    self.streamed.key_sum += key;
                }
            }
            None => {
                let bytes = match self.format {
                    Format::Table => serde_json::to_vec(&cells())?,
                    _ => self.encoder.encode(record)?,
                };
                self.spill.push(key, flag, &bytes)?;
            }
        }
        Ok(self.wants_more())
    }

    /// Rows that will be written (so far).
    pub fn rows(&self) -> usize {
        let held = match (self.order, self.limit) {
            (Order::Descending, Some(n)) => self.spill.len().min(n),
            _ => self.spill.len(),
        };
        self.streamed.rows + held
    }

    /// Writes what is left: the sorted rows, or the table (`headers`, the `right`-aligned
    /// columns; `empty`: the line written instead of a table without rows).
    pub fn finish(self, headers: &[&str], right: &[usize], empty: Option<&str>) -> Result<Written> {
        self.finish_then(headers, right, empty)
            .map(|(written, _)| written)
    }

    /// The writer, for what follows a list that writes nothing (a table without rows).
    pub fn into_writer(self) -> &'o mut dyn Write {
        self.out
    }

    /// [`Listing::finish`], handing back the writer for what follows the list.
    pub fn finish_then(
        mut self,
        headers: &[&str],
        right: &[usize],
        empty: Option<&str>,
    ) -> Result<(Written, &'o mut dyn Write)> {
        if let Some(stream) = self.stream.take() {
            stream.end(self.out)?;
            return Ok((self.streamed, self.out));
        }
        if self.order == Order::Descending {
            self.spill.sort_descending();
        }
        if let Some(n) = self.limit {
            self.spill.truncate(n);
        }
        let written = Written {
            rows: self.spill.len(),
            flagged: self.spill.flagged(),
            key_sum: self.spill.key_sum(),
        };
        let mut rows = self.spill.reader()?;
        let n = rows.len();
        match (self.format, empty) {
            (Format::Table, Some(line)) if n == 0 => writeln!(self.out, "{line}")?,
            (Format::Table, _) => table::write_chunked(self.out, headers, right, n, |i| {
                serde_json::from_slice(rows.get(i)?).context("a listed row does not read back")
            })?,
            (format, _) => {
                let mut stream = RecordStream::new(format);
                for i in 0..n {
                    stream.write_encoded(self.out, rows.get(i)?)?;
                }
                stream.end(self.out)?;
            }
        }
        Ok((written, self.out))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(serde::Serialize)]
    struct Row {
        id: String,
        n: i64,
    }

    /// Every order, format and limit writes what sorting the whole list in memory writes.
    #[test]
    fn a_listing_writes_what_the_collected_list_writes() {
        let rows: Vec<Row> = (0..3000)
            .map(|i| Row {
                id: format!("t{i:05}"),
                n: (i * 7919) % 13,
            })
            .collect();
        let cells = |r: &Row| vec![r.id.clone(), r.n.to_string()];
        for format in [Format::Table, Format::Json, Format::Jsonl] {
            for order in [Order::AsRead, Order::Descending] {
                for limit in [None, Some(0), Some(1), Some(2500), Some(5000)] {
                    let mut got = Vec::new();
                    let mut l = Listing::new(&mut got, format, order, limit);
                    for r in &rows {
                        if !l
                            .push(i128::from(r.n), r.n == 3, r, || cells(r))
                            .expect("push")
                        {
                            break;
                        }
                    }
                    let written = l.finish(&["id", "n"], &[1], None).expect("finish");
                    let mut want: Vec<&Row> = rows.iter().collect();
                    if order == Order::Descending {
                        want.sort_by_key(|r| std::cmp::Reverse(r.n));
                    }
                    want.truncate(limit.unwrap_or(usize::MAX));
                    let mut expected = Vec::new();
                    match format {
                        Format::Table => {
                            let mut t = table::new_table(&["id", "n"]);
                            table::align_right(&mut t, &[1]);
                            for r in &want {
                                t.add_row(cells(r));
                            }
                            writeln!(expected, "{}", table::render(&t)).expect("writes");
                        }
                        _ => super::super::write_records(&mut expected, format, &want)
                            .expect("writes"),
                    }
                    let what = format!("{format:?} {order:?} {limit:?}");
                    assert!(got == expected, "{what}");
                    assert_eq!(written.rows, want.len(), "{what}");
                    let flagged = want.iter().filter(|r| r.n == 3).count();
                    assert_eq!(written.flagged, flagged, "{what}");
                    let sum: i64 = want.iter().map(|r| r.n).sum();
                    assert_eq!(written.key_sum, i128::from(sum), "{what}");
                }
            }
        }
    }
}
