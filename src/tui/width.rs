//! Text by display width, as ratatui lays it out: a grapheme (a character with its combining
//! marks, an emoji sequence) takes the columns unicode-width gives it (2 for CJK and most
//! emoji), never a char or a byte a column. Cutting, padding and wrapping go by whole
//! graphemes, so a double-width character is never cut in half and no line drawn runs past
//! the screen's edge.

use unicode_segmentation::UnicodeSegmentation;
use unicode_width::UnicodeWidthStr;

/// The mark of text cut short.
pub const CUT: &str = "…";

/// Columns `s` takes on screen (as ratatui's buffer counts them: grapheme by grapheme).
pub fn width(s: &str) -> usize {
    s.graphemes(true).map(grapheme_width).sum()
}

/// Columns one grapheme takes (a control character none: the browser never draws one).
fn grapheme_width(g: &str) -> usize {
    if g.contains(char::is_control) {
        0
    } else {
        g.width()
    }
}

/// `s` in at most `max` columns: whole when it fits, else its start and [`CUT`].
pub fn cut(s: &str, max: usize) -> String {
    if width(s) <= max {
        return s.to_owned();
    }
    if max == 0 {
        return String::new();
    }
    let mut out = String::new();
    let mut used = 0;
    for g in s.graphemes(true) {
        let w = grapheme_width(g);
        if used + w > max - 1 {
            break;
        }
        out.push_str(g);
        used += w;
    }
    out.push_str(CUT);
    out
}

/// `s` in at most `max` columns: whole when it fits, else [`CUT`] and its end.
pub fn cut_left(s: &str, max: usize) -> String {
    if width(s) <= max {
        return s.to_owned();
    }
    if max == 0 {
        return String::new();
    }
    let mut kept = Vec::new();
    let mut used = 0;
    for g in s.graphemes(true).rev() {
        let w = grapheme_width(g);
        if used + w > max - 1 {
            break;
        }
        kept.push(g);
        used += w;
    }
    kept.reverse();
    format!("{CUT}{}", kept.concat())
}

/// `s` followed by blanks to `columns` columns (as it is when it is that wide or wider).
pub fn pad(s: &str, columns: usize) -> String {
    let w = width(s);
    format!("{s}{}", " ".repeat(columns.saturating_sub(w)))
}

/// Blanks to `columns` columns, then `s` (aligned right).
pub fn pad_left(s: &str, columns: usize) -> String {
    let w = width(s);
    format!("{}{s}", " ".repeat(columns.saturating_sub(w)))
}

/// What a line is made of, for wrapping: a run of blanks, a word (a run of narrow
/// graphemes), or one double-width grapheme (CJK text has no blanks: a line may break before
/// and after each of its characters).
enum Piece<'a> {
    Blank(&'a str),
    Word(&'a str),
}

fn pieces(line: &str) -> Vec<Piece<'_>> {
    let mut out = Vec::new();
    // The run being read: where it starts, whether it is blanks.
    let mut run: Option<(usize, bool)> = None;
    for (i, g) in line.grapheme_indices(true) {
        let blank = g.chars().all(char::is_whitespace);
        if grapheme_width(g) > 1 {
            if let Some((start, was_blank)) = run.take() {
                out.push(piece(&line[start..i], was_blank));
            }
            out.push(Piece::Word(g));
            continue;
        }
        match run {
            Some((_, was_blank)) if was_blank == blank => {}
            Some((start, was_blank)) => {
                out.push(piece(&line[start..i], was_blank));
                run = Some((i, blank));
            }
            None => run = Some((i, blank)),
        }
    }
    if let Some((start, blank)) = run {
        out.push(piece(&line[start..], blank));
    }
    out
}

fn piece(s: &str, blank: bool) -> Piece<'_> {
    if blank {
        Piece::Blank(s)
    } else {
        Piece::Word(s)
    }
}

/// `line` cut into rows of at most `columns` columns (a row per line that fits): at the
/// blanks between words, or between double-width characters, and inside a word only when
/// the word alone is wider than a row. The blanks where a row ends are dropped (a line's
/// leading blanks stay on its first row); every other grapheme is kept, in order.
pub fn wrap(line: &str, columns: usize) -> Vec<String> {
    let columns = columns.max(1);
    if width(line) <= columns {
        return vec![line.to_owned()];
    }
    let mut rows = Vec::new();
    let mut row = String::new();
    let mut used = 0;
    // Blanks read after the row's last word: kept if the next word fits on the row.
    let mut blanks = "";
    let end_row = |rows: &mut Vec<String>, row: &mut String, used: &mut usize| {
        rows.push(std::mem::take(row));
        *used = 0;
    };
    for p in pieces(line) {
        match p {
            Piece::Blank(b) => {
                if row.is_empty() && rows.is_empty() {
                    // A line's indentation (cut to the row, if it is wider).
                    row.push_str(&cut_blanks(b, columns));
                    used = width(&row);
                } else {
                    blanks = b;
                }
            }
            Piece::Word(w) => {
                let ww = width(w);
                let bw = width(blanks);
                if used + bw + ww <= columns {
                    row.push_str(blanks);
                    row.push_str(w);
                    used += bw + ww;
                } else if ww <= columns {
                    if used > 0 {
                        end_row(&mut rows, &mut row, &mut used);
                    }
                    row.push_str(w);
                    used = ww;
                } else {
                    // A word wider than a row: its graphemes fill the row, then the next.
                    if used > 0 && used + bw < columns {
                        row.push_str(blanks);
                        used += bw;
                    } else if used > 0 {
                        end_row(&mut rows, &mut row, &mut used);
                    }
                    for g in w.graphemes(true) {
                        let gw = grapheme_width(g);
                        if used + gw > columns && used > 0 {
                            end_row(&mut rows, &mut row, &mut used);
                        }
                        row.push_str(g);
                        used += gw;
                    }
                }
                blanks = "";
            }
        }
    }
    if !row.is_empty() || rows.is_empty() {
        rows.push(row);
    }
    rows
}

/// Blanks `b` cut to `columns` columns.
fn cut_blanks(b: &str, columns: usize) -> String {
    let mut out = String::new();
    let mut used = 0;
    for g in b.graphemes(true) {
        let w = grapheme_width(g).max(1);
        if used + w > columns.saturating_sub(1) {
            break;
        }
        out.push_str(g);
        used += w;
    }
    out
}

/// Cuts `texts` (with [`CUT`]) until they take at most `budget` columns together: the first
/// one first, down to `min` columns, then the next, and so on. Each text that is cut keeps
/// at least `min` columns, so the result may still be wider than `budget` (then the screen
/// cuts it).
pub fn squeeze(texts: &[&str], min: usize, budget: usize) -> Vec<String> {
    let mut out: Vec<String> = texts.iter().map(|t| (*t).to_owned()).collect();
    for i in 0..out.len() {
        let total: usize = out.iter().map(|t| width(t)).sum();
        if total <= budget {
            break;
        }
        let w = width(&out[i]);
        let over = total - budget;
        let keep = w.saturating_sub(over).max(min);
        if keep < w {
            out[i] = cut(&out[i], keep);
        }
    }
    out
}

/// The widths of a ratatui [`ratatui::widgets::Table`]'s columns of `constraints` in an area
/// `columns` wide with a selection mark of `mark` columns (as the table lays them out: one
/// blank between columns, from the left): what a cell has to fit in.
pub fn table_columns(
    columns: u16,
    constraints: &[ratatui::layout::Constraint],
    mark: u16,
) -> Vec<usize> {
    use ratatui::layout::{Constraint, Flex, Layout, Rect};
    let [_, area] = Layout::horizontal([Constraint::Length(mark), Constraint::Fill(0)])
        .areas(Rect::new(0, 0, columns, 1));
    Layout::horizontal(constraints.iter().copied())
        .flex(Flex::Start)
        .spacing(1)
        .split(area)
        .iter()
        .map(|r| r.width as usize)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The graphemes of `s` that are not blank, in order.
    fn ink(s: &str) -> String {
        s.chars().filter(|c| !c.is_whitespace()).collect()
    }

    #[test]
    fn widths_count_columns_not_chars() {
        assert_eq!(width("abc"), 3);
        assert_eq!(width("北京"), 4);
        assert_eq!(width("🍜"), 2);
        assert_eq!(width("é"), 1);
        assert_eq!(width("e\u{301}"), 1);
    }

    #[test]
    fn cutting_never_halves_a_wide_character() {
        assert_eq!(cut("北京天气", 8), "北京天气");
        assert_eq!(cut("北京天气", 7), "北京天…");
        assert_eq!(cut("北京天气", 6), "北京…");
        assert_eq!(cut("北京天气", 5), "北京…");
        assert_eq!(cut("abcdef", 4), "abc…");
        assert_eq!(cut_left("北京天气", 5), "…天气");
        assert_eq!(cut_left("abcdef", 4), "…def");
        for max in 0..10 {
            assert!(width(&cut("用户42-北京🚄", max)) <= max, "{max}");
            assert!(width(&cut_left("用户42-北京🚄", max)) <= max, "{max}");
        }
        assert_eq!(pad("北京", 6), "北京  ");
        assert_eq!(pad_left("北京", 6), "  北京");
    }

    #[test]
    fn wrapping_breaks_at_words_and_between_wide_characters() {
        assert_eq!(wrap("short", 10), ["short"]);
        assert_eq!(
            wrap("Weather in Paris, and what is 2+3?", 16),
            ["Weather in", "Paris, and what", "is 2+3?"]
        );
        // CJK: between characters, never inside one.
        assert_eq!(wrap("你好北京天气", 5), ["你好", "北京", "天气"]);
        assert_eq!(wrap("ab 你好北京", 7), ["ab 你好", "北京"]);
        // A word wider than a row is cut inside it only then.
        assert_eq!(
            wrap("see https://example.com/x", 10),
            ["see https:", "//example.", "com/x"]
        );
        // The indentation of a line stays on its first row.
        assert_eq!(wrap("    city: 北京 🏯", 12), ["    city: 北", "京 🏯"]);
        for columns in 1..30 {
            for line in [
                "thread 用户42-北京旅行计划-🚄  checkpoint 1f1f26dd-f971  step 11  2026-12-07T18:41:47",
                "北京下周大多是晴天，气温 21°C 左右 🌞。Remember to book the tickets online.",
                "  0  human  human-wide-1   25  你好 👋 我下周要去北京",
            ] {
                let rows = wrap(line, columns);
                for r in &rows {
                    assert!(
                        width(r) <= columns.max(2),
                        "{columns}: {r:?} of {rows:?}"
                    );
                }
                assert_eq!(ink(&rows.concat()), ink(line), "{columns}: {rows:?}");
            }
        }
    }

    #[test]
    fn squeezing_cuts_the_first_texts_first() {
        assert_eq!(squeeze(&["abcdef", "ghij"], 3, 10), ["abcdef", "ghij"]);
        assert_eq!(squeeze(&["abcdef", "ghij"], 3, 8), ["abc…", "ghij"]);
        assert_eq!(squeeze(&["abcdef", "ghij"], 3, 5), ["ab…", "gh…"]);
        assert_eq!(squeeze(&["用户42-北京", "x"], 4, 6), ["用户…", "x"]);
    }
}
