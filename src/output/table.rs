//! Tables for terminals (comfy-table).

use comfy_table::{presets, CellAlignment, ContentArrangement, Table};

/// A table with the house style: no outer borders, a header rule, width fitted to the terminal.
pub fn new_table(headers: &[&str]) -> Table {
    let mut t = Table::new();
    t.load_preset(presets::NOTHING)
        .set_content_arrangement(ContentArrangement::Dynamic)
        .set_header(headers.iter().map(|h| h.to_uppercase()));
    t
}

/// Right-aligns the given columns (numbers).
pub fn align_right(t: &mut Table, columns: &[usize]) {
    for &i in columns {
        if let Some(c) = t.column_mut(i) {
            c.set_cell_alignment(CellAlignment::Right);
        }
    }
}
