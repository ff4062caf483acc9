//! A long text built a part at a time (a chat of thousands of messages: a part a message):
//! only the parts on screen are built when it is drawn, scrolling builds the next ones, the
//! end (`G`) builds from the last part backwards, and the rest is built between keys so
//! that the row count becomes known. The screen position is a part and a row in it, so no
//! part before it needs to be built.

/// What a [`Doc`] builds its parts from.
pub trait Parts {
    /// How many parts there are.
    fn count(&self) -> usize;
    /// The lines of part `i` (terminal-safe).
    fn lines(&self, i: usize) -> Vec<String>;
    /// Itself, to be told apart from other sources.
    fn as_any(&self) -> &dyn std::any::Any;
}

/// A text of parts, built on demand, wrapped at a width.
pub struct Doc {
    source: Option<Box<dyn Parts>>,
    parts: Vec<Option<Vec<String>>>,
    /// Screen rows of each built part at `width`.
    rows: Vec<Option<usize>>,
    width: usize,
    /// Parts not built yet.
    unbuilt: usize,
    /// The first row on screen: a part and a row in it.
    part: usize,
    row: usize,
}

/// Screen rows of `line` wrapped at `width` columns ([`super::width::wrap`]: by display
/// width, at word boundaries); an empty line is a row.
fn line_rows(line: &str, width: usize) -> usize {
    if super::width::width(line) <= width {
        return 1;
    }
    super::width::wrap(line, width).len()
}

impl Doc {
    /// A text whose lines are all known.
    pub fn full(lines: Vec<String>) -> Doc {
        Doc {
            source: None,
            parts: vec![Some(lines)],
            rows: vec![None],
            width: 80,
            unbuilt: 0,
            part: 0,
            row: 0,
        }
    }

    /// A text built from `source` on demand.
    pub fn lazy(source: Box<dyn Parts>) -> Doc {
        let n = source.count();
        Doc {
            source: Some(source),
            parts: (0..n).map(|_| None).collect(),
            rows: vec![None; n],
            width: 80,
            unbuilt: n,
            part: 0,
            row: 0,
        }
    }

    /// Wraps at `width` columns from now on (row counts of built parts are recomputed).
    pub fn set_width(&mut self, width: usize) {
        let width = width.max(1);
        if width != self.width {
            self.width = width;
            self.rows.iter_mut().for_each(|r| *r = None);
            // The same line, from its first row.
            self.row = 0;
        }
    }

    /// The parts' source, when the text is built from one.
    pub fn source(&self) -> Option<&dyn Parts> {
        self.source.as_deref()
    }

    /// Builds part `i` if it is not built yet.
    fn build(&mut self, i: usize) {
        if self.parts.get(i).is_some_and(Option::is_none) {
            let lines = self.source.as_ref().map(|s| s.lines(i)).unwrap_or_default();
            self.parts[i] = Some(lines);
            self.unbuilt -= 1;
        }
    }

    /// Screen rows of part `i` (built if needed).
    fn part_rows(&mut self, i: usize) -> usize {
        if let Some(Some(n)) = self.rows.get(i) {
            return *n;
        }
        self.build(i);
        let width = self.width;
        let n = match self.parts.get(i) {
            Some(Some(lines)) => lines.iter().map(|l| line_rows(l, width)).sum(),
            _ => 0,
        };
        if let Some(r) = self.rows.get_mut(i) {
            *r = Some(n);
        }
        n
    }

    /// True while parts are left to build.
    pub fn building(&self) -> bool {
        self.unbuilt > 0
    }

    /// Builds up to `n` more parts (in order).
    pub fn build_some(&mut self, n: usize) {
        let mut left = n;
        for i in 0..self.parts.len() {
            if left == 0 || self.unbuilt == 0 {
                break;
            }
            if self.parts[i].is_none() {
                self.build(i);
                left -= 1;
            }
        }
    }

    /// Builds every part.
    pub fn build_all(&mut self) {
        self.build_some(usize::MAX);
    }

    /// Rows of the whole text, when every part is built.
    pub fn total(&mut self) -> Option<usize> {
        if self.unbuilt > 0 {
            return None;
        }
        Some((0..self.parts.len()).map(|i| self.part_rows(i)).sum())
    }

    /// The first row on screen (0-based), when every part before it is built.
    pub fn position(&mut self) -> Option<usize> {
        if self.parts[..self.part.min(self.parts.len())]
            .iter()
            .any(Option::is_none)
        {
            return None;
        }
        Some((0..self.part).map(|i| self.part_rows(i)).sum::<usize>() + self.row)
    }

    /// To the top.
    pub fn top(&mut self) {
        self.part = 0;
        self.row = 0;
    }

    /// To the end (the last row first; the draw fills the screen back from it).
    pub fn end(&mut self) {
        self.part = self.parts.len().saturating_sub(1);
        self.row = self.part_rows(self.part).saturating_sub(1);
    }

    /// To the first row of part `i`, row `row` of it.
    pub fn to_part(&mut self, i: usize, row: usize) {
        if i < self.parts.len() {
            self.part = i;
            self.row = row.min(self.part_rows(i).saturating_sub(1));
        }
    }

    /// Down `n` rows (at most to the last).
    pub fn down(&mut self, mut n: usize) {
        while n > 0 {
            let rows = self.part_rows(self.part);
            if self.row + n < rows {
                self.row += n;
                return;
            }
            // To the next part that has rows.
            let Some(next) = (self.part + 1..self.parts.len()).find(|&i| self.part_rows(i) > 0)
            else {
                self.row = rows.saturating_sub(1);
                return;
            };
            n -= rows - self.row;
            self.part = next;
            self.row = 0;
        }
    }

    /// Up `n` rows (at most to the first).
    pub fn up(&mut self, mut n: usize) {
        while n > 0 {
            if self.row >= n {
                self.row -= n;
                return;
            }
            let Some(prev) = (0..self.part).rev().find(|&i| self.part_rows(i) > 0) else {
                self.row = 0;
                return;
            };
            n -= self.row + 1;
            self.part = prev;
            self.row = self.part_rows(prev) - 1;
        }
    }

    /// The `height` rows from the screen position, the position first moved up so that the
    /// screen is full when the text is long enough (the last screen ends at the last row).
    /// Each row is a line wrapped at the width, at word boundaries and by display width
    /// ([`super::width::wrap`]): no row is wider than the screen and nothing is cut off.
    pub fn screen(&mut self, height: usize) -> Vec<String> {
        // Rows from the position to the end, up to a screen.
        let mut seen = self.part_rows(self.part).saturating_sub(self.row);
        let mut i = self.part + 1;
        while seen < height && i < self.parts.len() {
            seen += self.part_rows(i);
            i += 1;
        }
        if seen < height {
            self.up(height - seen);
        }
        let width = self.width.max(1);
        let mut out = Vec::with_capacity(height);
        let mut skip = self.row;
        for i in self.part..self.parts.len() {
            self.part_rows(i);
            let Some(Some(lines)) = self.parts.get(i) else {
                continue;
            };
            for l in lines {
                for chunk in super::width::wrap(l, width) {
                    if skip > 0 {
                        skip -= 1;
                        continue;
                    }
                    if out.len() >= height {
                        return out;
                    }
                    out.push(chunk);
                }
            }
        }
        out
    }

    /// Every line (every part built): what the text is whole.
    pub fn all_lines(&mut self) -> Vec<String> {
        self.build_all();
        self.parts.iter().flatten().flatten().cloned().collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Part `i` of `n`: `i % 3 + 1` lines, numbered.
    struct Numbered(usize);

    impl Parts for Numbered {
        fn count(&self) -> usize {
            self.0
        }
        fn lines(&self, i: usize) -> Vec<String> {
            (0..i % 3 + 1).map(|k| format!("{i}.{k}")).collect()
        }
        fn as_any(&self) -> &dyn std::any::Any {
            self
        }
    }

    fn whole(n: usize) -> Vec<String> {
        (0..n)
            .flat_map(|i| (0..i % 3 + 1).map(move |k| format!("{i}.{k}")))
            .collect()
    }

    #[test]
    fn a_lazy_doc_shows_what_the_whole_text_shows_at_every_position() {
        let all = whole(50);
        for height in [1, 4, 7] {
            for start in 0..all.len() {
                let mut d = Doc::lazy(Box::new(Numbered(50)));
                d.down(start);
                let expected_start = start.min(all.len().saturating_sub(height));
                let screen = d.screen(height);
                assert_eq!(
                    screen,
                    all[expected_start..(expected_start + height).min(all.len())],
                    "height {height} start {start}"
                );
                d.build_all();
                assert_eq!(d.position(), Some(expected_start));
                assert_eq!(d.total(), Some(all.len()));
            }
        }
    }

    #[test]
    fn the_end_is_built_from_the_last_part_backwards() {
        let mut d = Doc::lazy(Box::new(Numbered(1000)));
        d.end();
        let all = whole(1000);
        assert_eq!(d.screen(5), all[all.len() - 5..]);
        // Only the last parts were built.
        assert!(d.parts.iter().filter(|p| p.is_some()).count() <= 6);
        assert_eq!(d.position(), None);
        d.up(3);
        assert_eq!(d.screen(5), all[all.len() - 8..all.len() - 3]);
    }

    #[test]
    fn long_lines_wrap_at_the_width() {
        let mut d = Doc::full(vec!["abcdefgh".into(), String::new(), "xy".into()]);
        d.set_width(3);
        assert_eq!(d.total(), Some(5));
        assert_eq!(d.screen(10), ["abc", "def", "gh", "", "xy"]);
        d.down(1);
        assert_eq!(d.screen(2), ["def", "gh"]);
    }

    #[test]
    fn long_lines_wrap_at_words_by_display_width() {
        let mut d = Doc::full(vec![
            "thread 用户42-北京 step 15  2026-12-07T16:00:00".into(),
            "你好北京天气".into(),
        ]);
        d.set_width(12);
        let rows = d.screen(20);
        assert_eq!(
            rows,
            [
                "thread 用户",
                "42-北京 step",
                "15  2026-12-",
                "07T16:00:00",
                "你好北京天气"
            ]
        );
        assert_eq!(d.total(), Some(rows.len()));
        for r in &rows {
            assert!(crate::tui::width::width(r) <= 12, "{r}");
        }
    }
}
