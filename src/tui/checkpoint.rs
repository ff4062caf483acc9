//! The checkpoint view: the state as `show` prints it, scrollable; `d` shows `diff` against
//! the parent checkpoint, `t` the per-message token counts (`tokens`).

use anyhow::Result;
use crossterm::event::{KeyCode, KeyEvent};
use ratatui::layout::Rect;
use ratatui::widgets::{Block, Borders, Paragraph};
use ratatui::Frame;

use super::data::{Source, Text};
use super::Action;
use crate::output::sanitize::one_line;

/// The key hints of this view.
pub const HINTS: &str = "j/k scroll · d diff · t tokens (c counter) · a actions · Esc back";

/// The counters `c` cycles through on the tokens view.
fn counters() -> [crate::tokens::Counter; 3] {
    use crate::tokens::openai::{Encoding, Framing};
    use crate::tokens::Counter;
    [
        Counter::Approx,
        Counter::OpenAi(Framing::for_encoding(Encoding::O200k)),
        Counter::OpenAi(Framing::for_encoding(Encoding::Cl100k)),
    ]
}

/// What the view shows of the checkpoint.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// `show`.
    Show,
    /// `diff` against the parent.
    Diff,
    /// `tokens` per message.
    Tokens,
}

/// The checkpoint view's state.
pub struct CheckpointView {
    thread: String,
    id: String,
    mode: Mode,
    text: Text,
    /// The first screen row shown (of the wrapped text).
    scroll: usize,
    /// Rows of the body at the last draw (for paging).
    height: usize,
    /// Columns of the body at the last draw (for wrapping).
    width: usize,
    /// The message to scroll to at the next draw (once the width is known).
    jump: Option<usize>,
    /// The token counter of the tokens view ([`counters`]).
    counter: usize,
    /// The `show` text while another mode is on screen (kept: going back is instant).
    shown: Option<Text>,
}

impl CheckpointView {
    /// Reads the checkpoint as `show` prints it, scrolled to message `message` if given.
    pub fn load(
        src: &Source,
        thread: &str,
        id: &str,
        message: Option<usize>,
    ) -> Result<CheckpointView> {
        let text = src.show(thread, id)?;
        let jump = message.and_then(|m| message_line(&text.lines, m));
        Ok(CheckpointView {
            thread: thread.to_owned(),
            id: id.to_owned(),
            mode: Mode::Show,
            text,
            scroll: 0,
            height: 20,
            width: 80,
            jump,
            counter: 0,
            shown: None,
        })
    }

    fn switch(&mut self, mode: Mode, src: &Source) -> Result<()> {
        let mode = if self.mode == mode { Mode::Show } else { mode };
        let text = match mode {
            Mode::Show => match self.shown.take() {
                Some(text) => text,
                None => src.show(&self.thread, &self.id)?,
            },
            Mode::Diff => src.diff(&self.thread, &self.id)?,
            Mode::Tokens => src.tokens(&self.thread, &self.id, counters()[self.counter])?,
        };
        let old = std::mem::replace(&mut self.text, text);
        if self.mode == Mode::Show {
            self.shown = Some(old);
        }
        self.mode = mode;
        self.scroll = 0;
        Ok(())
    }

    /// Screen rows of the text wrapped at `width` columns (a character a column: wide
    /// characters make it an estimate), and the row each line starts on.
    fn rows(&self) -> (usize, Vec<usize>) {
        let width = self.width.max(1);
        let mut starts = Vec::with_capacity(self.text.lines.len());
        let mut total = 0;
        for l in &self.text.lines {
            starts.push(total);
            total += l.chars().count().div_ceil(width).max(1);
        }
        (total, starts)
    }

    /// Handles a key.
    pub fn on_key(&mut self, key: KeyEvent, src: &Source) -> Result<Action> {
        let page = self.height.saturating_sub(1).max(1);
        // Any row; the draw keeps the last screen full (it knows the size).
        let total = self.rows().0;
        if super::navigate(&key, &mut self.scroll, total, page) {
            return Ok(Action::None);
        }
        Ok(match key.code {
            KeyCode::Esc | KeyCode::Char('q') | KeyCode::Left | KeyCode::Char('h') => Action::Back,
            KeyCode::Char('d') => {
                self.switch(Mode::Diff, src)?;
                Action::None
            }
            KeyCode::Char('t') => {
                self.switch(Mode::Tokens, src)?;
                Action::None
            }
            KeyCode::Char('c') if self.mode == Mode::Tokens => {
                self.counter = (self.counter + 1) % counters().len();
                self.text = src.tokens(&self.thread, &self.id, counters()[self.counter])?;
                self.scroll = 0;
                Action::None
            }
            KeyCode::Char('a') => Action::Actions(self.thread.clone()),
            _ => Action::None,
        })
    }

    /// Draws the text from the scroll position.
    pub fn draw(&mut self, f: &mut Frame, area: Rect) {
        let what = match self.mode {
            Mode::Show => "show",
            Mode::Diff => "diff vs parent",
            Mode::Tokens => &format!("tokens ({})", counters()[self.counter].name()),
        };
        let block = Block::default().borders(Borders::TOP);
        let inner = block.inner(area);
        self.height = inner.height as usize;
        self.width = inner.width as usize;
        let (total, starts) = self.rows();
        if let Some(line) = self.jump.take() {
            self.scroll = starts.get(line).copied().unwrap_or(0);
        }
        self.scroll = self.scroll.min(total.saturating_sub(self.height));
        let block = block.title(format!(
            " {} · checkpoint {} · {what} · row {}/{total} ",
            one_line(&self.thread),
            one_line(&self.id),
            (self.scroll + 1).min(total),
        ));
        // Long lines are cut into rows of the width (a message's text is never cut off);
        // the text is terminal-safe already (`Source::text`).
        let width = self.width.max(1);
        let mut rows: Vec<ratatui::text::Line> = Vec::with_capacity(self.height);
        let first = starts
            .partition_point(|&s| s <= self.scroll)
            .saturating_sub(1);
        let mut row = starts.get(first).copied().unwrap_or(0);
        'lines: for l in self.text.lines.iter().skip(first) {
            let chars: Vec<char> = l.chars().collect();
            let chunks: Vec<String> = if chars.is_empty() {
                vec![String::new()]
            } else {
                chars.chunks(width).map(|c| c.iter().collect()).collect()
            };
            for chunk in chunks {
                if row >= self.scroll {
                    if rows.len() >= self.height {
                        break 'lines;
                    }
                    rows.push(ratatui::text::Line::raw(chunk));
                }
                row += 1;
            }
        }
        f.render_widget(Paragraph::new(rows).block(block), area);
    }
}

/// The line where message `m` (0-based) starts in `show`'s text: its banner, the `m+1`th
/// line of `=` around a "… Message" title.
fn message_line(lines: &[String], m: usize) -> Option<usize> {
    lines
        .iter()
        .enumerate()
        .filter(|(_, l)| l.starts_with("===") && l.trim_end_matches('=').ends_with("Message "))
        .nth(m)
        .map(|(i, _)| i)
}
