//! Tables for terminals and pipes (comfy-table).
//!
//! Ids (thread, checkpoint and message ids), numbers, times and statuses are never wrapped or
//! cut, so they can be read and copied; only the free-text columns (notes, message text,
//! namespaces) give way. The width is `COLUMNS` when set, else the terminal's; an unknown
//! width (a pipe, a pty that reports 0) lays the table out without a limit. A table whose
//! fixed columns alone are wider than the terminal runs past its edge rather than break them.

use comfy_table::{presets, CellAlignment, ColumnConstraint, ContentArrangement, Table, Width};

/// Headers of the free-text columns: the only ones that wrap.
const TEXT_COLUMNS: [&str; 3] = ["notes", "text", "namespaces"];

/// A table with the house style: no outer borders, a header rule, width fitted to the
/// terminal (or `COLUMNS`) by wrapping the free-text columns only.
pub fn new_table(headers: &[&str]) -> Table {
    let mut t = Table::new();
    t.load_preset(presets::NOTHING)
        .set_header(headers.iter().map(|h| h.to_uppercase()));
    match width() {
        Some(w) => {
            t.set_content_arrangement(ContentArrangement::Dynamic)
                .set_width(w);
        }
        None => {
            t.set_content_arrangement(ContentArrangement::Disabled);
        }
    }
    for (i, h) in headers.iter().enumerate() {
        if let Some(c) = t.column_mut(i) {
            c.set_constraint(if TEXT_COLUMNS.contains(h) {
                ColumnConstraint::LowerBoundary(Width::Fixed(24))
            } else {
                ColumnConstraint::ContentWidth
            });
        }
    }
    t
}

/// The width to fit: `COLUMNS` (a positive number), else the terminal's when stdout is one
/// and it reports a width; `None` when unknown.
pub fn width() -> Option<u16> {
    if let Some(w) = std::env::var("COLUMNS")
        .ok()
        .and_then(|c| c.trim().parse::<u16>().ok())
        .filter(|&w| w > 0)
    {
        return Some(w);
    }
    // As comfy-table's own `tty` feature does: the terminal's width when stdout is one.
    use std::io::IsTerminal;
    match std::io::stdout().is_terminal() {
        true => crossterm::terminal::size()
            .ok()
            .map(|(w, _)| w)
            .filter(|&w| w > 0),
        false => None,
    }
}

/// The table as text, without the padding comfy-table leaves at the end of lines.
pub fn render(t: &Table) -> String {
    t.to_string()
        .lines()
        .map(str::trim_end)
        .collect::<Vec<_>>()
        .join("\n")
}

/// Right-aligns the given columns (numbers).
pub fn align_right(t: &mut Table, columns: &[usize]) {
    for &i in columns {
        if let Some(c) = t.column_mut(i) {
            c.set_cell_alignment(CellAlignment::Right);
        }
    }
}

/// Rows a table is laid out and rendered with at a time.
pub const TABLE_CHUNK: usize = 2048;

/// Writes the table of `n` rows (`row(i)` gives the cells of row `i`) byte for byte as
/// `writeln!(out, "{}", render(&t))` writes the whole table `t` (made by [`new_table`] with
/// these headers, `right` aligned right), without ever holding more than a chunk of rows as
/// table cells: a table of 100,000 messages as comfy-table cells is ~150 MB. `row` may be
/// asked for a row more than once (widths, then text), each pass in order.
///
/// How: a table's layout depends on its content only through each column's widest cell,
/// unless a column must wrap (then comfy-table looks at every cell's words). So the widest
/// cell of each column is measured first (by comfy-table, a chunk at a time); a probe table of
/// the header and one row of cells that wide tells the layout. When that row is laid out on
/// one line, nothing wraps: each chunk is rendered with the same probe row first (so the
/// layout is the same), and its lines after the header and the probe row are written. When
/// it wraps, the whole table is built as before.
pub fn write_chunked(
    out: &mut dyn std::io::Write,
    headers: &[&str],
    right: &[usize],
    n: usize,
    mut row: impl FnMut(usize) -> anyhow::Result<Vec<String>>,
) -> anyhow::Result<()> {
    let with_rows = |probes: &[Vec<String>],
                     rows: std::ops::Range<usize>,
                     row: &mut dyn FnMut(usize) -> anyhow::Result<Vec<String>>|
     -> anyhow::Result<String> {
        let mut t = new_table(headers);
        align_right(&mut t, right);
        for p in probes {
            t.add_row(p.clone());
        }
        for i in rows {
            t.add_row(row(i)?);
        }
        Ok(render(&t))
    };
    if n <= TABLE_CHUNK {
        writeln!(out, "{}", with_rows(&[], 0..n, &mut row)?)?;
        return Ok(());
    }
    let mut widths = vec![0u16; headers.len()];
    for start in (0..n).step_by(TABLE_CHUNK) {
        let mut t = Table::new();
        for i in start..n.min(start + TABLE_CHUNK) {
            t.add_row(row(i)?);
        }
        for (w, m) in widths.iter_mut().zip(t.column_max_content_widths()) {
            *w = (*w).max(m);
        }
    }
    let probe: Vec<String> = widths.iter().map(|&w| "x".repeat(w.into())).collect();
    let one = with_rows(std::slice::from_ref(&probe), 0..0, &mut row)?;
    let two = with_rows(&[probe.clone(), probe.clone()], 0..0, &mut row)?;
    let (lines_one, lines_two) = (one.split('\n').count(), two.split('\n').count());
    let probe_lines = lines_two.saturating_sub(lines_one);
    if probe_lines != 1 {
        // A column wraps: comfy-table needs every cell to lay it out.
        writeln!(out, "{}", with_rows(&[], 0..n, &mut row)?)?;
        return Ok(());
    }
    let header_lines = lines_one - probe_lines;
    for line in one.split('\n').take(header_lines) {
        writeln!(out, "{line}")?;
    }
    for start in (0..n).step_by(TABLE_CHUNK) {
        let text = with_rows(
            std::slice::from_ref(&probe),
            start..n.min(start + TABLE_CHUNK),
            &mut row,
        )?;
        for line in text.split('\n').skip(header_lines + probe_lines) {
            writeln!(out, "{line}")?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_never_wrapped_and_text_gives_way() {
        let id = "1f1ed47f-8372-63a9-8008-693bc35ab911";
        let mut t = new_table(&["checkpoint_id", "notes"]);
        t.set_content_arrangement(ContentArrangement::Dynamic)
            .set_width(80);
        t.add_row(vec![id.to_owned(), "word ".repeat(40)]);
        let text = t.to_string();
        assert!(text.lines().any(|l| l.contains(id)), "{text}");
        assert!(text.lines().count() > 3, "the notes wrap: {text}");
        assert!(text.lines().all(|l| l.chars().count() <= 80), "{text}");
    }

    /// The chunked table is the whole table's bytes (layout from the widest cells).
    #[test]
    fn chunked_tables_are_the_whole_tables_bytes() {
        let headers = ["#", "type", "id", "tokens (approx)", "text"];
        let row = |i: usize| {
            vec![
                i.to_string(),
                ["human", "ai", "tool"][i % 3].to_owned(),
                format!("id-{}", "x".repeat(i % 17)),
                (i * 7919 % 1000).to_string(),
                format!("{} é😀 end", "word ".repeat(i % 9)),
            ]
        };
        for n in [0, 1, TABLE_CHUNK, TABLE_CHUNK + 1, 2 * TABLE_CHUNK + 5] {
            let mut got = Vec::new();
            write_chunked(&mut got, &headers, &[0, 3], n, |i| Ok(row(i))).expect("writes");
            let mut t = new_table(&headers);
            align_right(&mut t, &[0, 3]);
            for i in 0..n {
                t.add_row(row(i));
            }
            let want = format!("{}\n", render(&t));
            assert!(String::from_utf8_lossy(&got) == want, "{n} rows differ");
        }
    }
}
