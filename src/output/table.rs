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
    Table::new().width().filter(|&w| w > 0)
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
}
