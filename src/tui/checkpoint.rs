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
pub const HINTS: &str = "j/k scroll · d diff · t tokens · a actions · g/G top/end · Esc back";

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
    scroll: usize,
    /// Lines of the body at the last draw (for paging).
    height: usize,
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
        let scroll = message
            .and_then(|m| message_line(&text.lines, m))
            .unwrap_or(0);
        Ok(CheckpointView {
            thread: thread.to_owned(),
            id: id.to_owned(),
            mode: Mode::Show,
            text,
            scroll,
            height: 20,
        })
    }

    fn switch(&mut self, mode: Mode, src: &Source) -> Result<()> {
        let mode = if self.mode == mode { Mode::Show } else { mode };
        self.text = match mode {
            Mode::Show => src.show(&self.thread, &self.id)?,
            Mode::Diff => src.diff(&self.thread, &self.id)?,
            Mode::Tokens => src.tokens(&self.thread, &self.id)?,
        };
        self.mode = mode;
        self.scroll = 0;
        Ok(())
    }

    /// Handles a key.
    pub fn on_key(&mut self, key: KeyEvent, src: &Source) -> Result<Action> {
        let page = self.height.saturating_sub(1).max(1);
        let last = self.text.lines.len().saturating_sub(self.height);
        if super::navigate(&key, &mut self.scroll, last + 1, page) {
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
            KeyCode::Char('a') => Action::Actions(self.thread.clone()),
            _ => Action::None,
        })
    }

    /// Draws the text from the scroll position.
    pub fn draw(&mut self, f: &mut Frame, area: Rect) {
        let what = match self.mode {
            Mode::Show => "show",
            Mode::Diff => "diff against its parent",
            Mode::Tokens => "tokens per message (approx)",
        };
        let block = Block::default().borders(Borders::TOP).title(format!(
            " {} · checkpoint {} · {what} · line {}/{} ",
            one_line(&self.thread),
            one_line(&self.id),
            (self.scroll + 1).min(self.text.lines.len()),
            self.text.lines.len()
        ));
        let inner = block.inner(area);
        self.height = inner.height as usize;
        let shown: Vec<ratatui::text::Line> = self
            .text
            .lines
            .iter()
            .skip(self.scroll)
            .take(self.height)
            .map(|l| ratatui::text::Line::raw(l.as_str()))
            .collect();
        f.render_widget(Paragraph::new(shown).block(block), area);
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
