//! The browser in a terminal whose locale is not UTF-8 (`LANG=C`, `en_US.ISO-8859-1`): a
//! backend that draws every cell in ASCII — box lines as `-`, `|` and `+`, bars and
//! sparklines as `#`, arrows and quotes as their ASCII look-alikes, any other character as
//! `?` (one per column it takes) — so the screen keeps its layout instead of showing UTF-8
//! bytes as garbage.

use std::io;

use ratatui::backend::{Backend, ClearType, WindowSize};
use ratatui::buffer::Cell;
use ratatui::layout::{Position, Size};

/// True when the locale (`LC_ALL`, else `LC_CTYPE`, else `LANG`) is set and is not UTF-8. An
/// unset locale is taken as UTF-8 (as terminals are by default).
pub fn locale_is_ascii(var: impl Fn(&str) -> Option<String>) -> bool {
    let locale = ["LC_ALL", "LC_CTYPE", "LANG"]
        .iter()
        .find_map(|v| var(v).filter(|s| !s.is_empty()));
    match locale {
        None => false,
        Some(l) => {
            let l = l.to_ascii_lowercase();
            !(l.contains("utf-8") || l.contains("utf8"))
        }
    }
}

/// The ASCII form of one cell's symbol, as wide (in columns) as the symbol.
pub fn ascii_symbol(symbol: &str) -> String {
    if symbol.is_ascii() {
        return symbol.to_owned();
    }
    let one = match symbol.chars().next() {
        Some('─' | '━' | '═' | '╌' | '┄') => '-',
        Some('│' | '┃' | '║' | '▏' | '▕') => '|',
        Some('\u{2500}'..='\u{257f}') => '+',
        // Sparkline heights: low, middle, high.
        Some('▁' | '▂' | '▃') => '.',
        Some('▄' | '▅' | '▆') => ':',
        Some('\u{2580}'..='\u{259f}') => '#',
        Some('·' | '•') => '.',
        Some('«') => '<',
        Some('»') => '>',
        Some('→') => '>',
        Some('←') => '<',
        Some('↑') => '^',
        Some('↓') => 'v',
        Some('…') => '~',
        Some('×') => 'x',
        _ => '?',
    };
    let width = ratatui::text::Span::raw(symbol).width().max(1);
    std::iter::repeat_n(one, width).collect()
}

/// A backend that draws through `B` in ASCII ([`ascii_symbol`]).
pub struct AsciiBackend<B> {
    /// The backend drawn to.
    pub inner: B,
}

impl<B: Backend> Backend for AsciiBackend<B> {
    fn draw<'a, I>(&mut self, content: I) -> io::Result<()>
    where
        I: Iterator<Item = (u16, u16, &'a Cell)>,
    {
        let cells: Vec<(u16, u16, Cell)> = content
            .map(|(x, y, c)| {
                let mut c = c.clone();
                let ascii = ascii_symbol(c.symbol());
                c.set_symbol(&ascii);
                (x, y, c)
            })
            .collect();
        self.inner.draw(cells.iter().map(|(x, y, c)| (*x, *y, c)))
    }

    fn append_lines(&mut self, n: u16) -> io::Result<()> {
        self.inner.append_lines(n)
    }

    fn hide_cursor(&mut self) -> io::Result<()> {
        self.inner.hide_cursor()
    }

    fn show_cursor(&mut self) -> io::Result<()> {
        self.inner.show_cursor()
    }

    fn get_cursor_position(&mut self) -> io::Result<Position> {
        self.inner.get_cursor_position()
    }

    fn set_cursor_position<P: Into<Position>>(&mut self, position: P) -> io::Result<()> {
        self.inner.set_cursor_position(position)
    }

    fn clear(&mut self) -> io::Result<()> {
        self.inner.clear()
    }

    fn clear_region(&mut self, clear_type: ClearType) -> io::Result<()> {
        self.inner.clear_region(clear_type)
    }

    fn size(&self) -> io::Result<Size> {
        self.inner.size()
    }

    fn window_size(&mut self) -> io::Result<WindowSize> {
        self.inner.window_size()
    }

    fn flush(&mut self) -> io::Result<()> {
        self.inner.flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn symbols_keep_their_width() {
        assert_eq!(ascii_symbol("a"), "a");
        assert_eq!(ascii_symbol("─"), "-");
        assert_eq!(ascii_symbol("┌"), "+");
        assert_eq!(ascii_symbol("▃"), ".");
        assert_eq!(ascii_symbol("█"), "#");
        assert_eq!(ascii_symbol("«"), "<");
        assert_eq!(ascii_symbol("é"), "?");
        assert_eq!(ascii_symbol("日"), "??");
    }

    #[test]
    fn locales() {
        let env = |pairs: &'static [(&'static str, &'static str)]| {
            move |k: &str| {
                pairs
                    .iter()
                    .find(|(n, _)| *n == k)
                    .map(|(_, v)| (*v).to_owned())
            }
        };
        assert!(!locale_is_ascii(env(&[])));
        assert!(!locale_is_ascii(env(&[("LANG", "en_US.UTF-8")])));
        assert!(!locale_is_ascii(env(&[("LANG", "C.utf8")])));
        assert!(locale_is_ascii(env(&[("LANG", "C")])));
        assert!(locale_is_ascii(env(&[
            ("LANG", "en_US.UTF-8"),
            ("LC_ALL", "POSIX")
        ])));
        assert!(locale_is_ascii(env(&[("LC_CTYPE", "de_DE.ISO-8859-1")])));
        assert!(!locale_is_ascii(env(&[
            ("LC_ALL", ""),
            ("LANG", "C.UTF-8")
        ])));
    }
}
