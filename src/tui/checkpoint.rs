//! The checkpoint view: the state as `show` prints it, scrollable; `d` shows `diff` against
//! the parent checkpoint, `t` the per-message token counts (`tokens`).

use anyhow::Result;
use crossterm::event::{KeyCode, KeyEvent};
use ratatui::layout::Rect;
use ratatui::widgets::{Block, Borders, Paragraph};
use ratatui::Frame;

use super::data::{ShowParts, Source, TokensTable};
use super::history::PENDING;
use super::lazy::Doc;
use super::width::{squeeze, width};
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
    /// What is on screen (the chat built a message at a time).
    doc: Doc,
    /// Rows of the body at the last draw (for paging).
    height: usize,
    /// Columns of the body at the last draw (what the tokens table is laid out for).
    width: usize,
    /// The token counter of the tokens view ([`counters`]).
    counter: usize,
    /// The chat while another mode is on screen (kept: going back is instant).
    shown: Option<Doc>,
    /// The tokens view's counts so far, while messages are left to count (between keys).
    counting: Option<Vec<crate::output::tokens::MessageTokens>>,
    /// The tokens view's table once every message is counted, and the width its lines on
    /// screen were laid out for (laid out again when the screen's width changes).
    tokens: Option<(TokensTable, usize)>,
}

/// Messages whose tokens are counted in one step (the first at the key, the rest between
/// keys).
const COUNTED_AT_ONCE: usize = 128;

/// Parts built in one step between keys (the chat's messages).
const BUILT_AT_ONCE: usize = 64;

impl CheckpointView {
    /// Reads the checkpoint as `show` prints it, scrolled to message `message` if given:
    /// its messages are rendered as they come on screen ([`Doc`]).
    pub fn load(
        src: &Source,
        thread: &str,
        id: &str,
        message: Option<usize>,
    ) -> Result<CheckpointView> {
        let mut doc = Doc::lazy(Box::new(src.show(thread, id)?));
        if let Some(m) = message {
            // Its part (the first is the header line); the row after the blank line before
            // its banner.
            if m + 2 < doc.source().map_or(0, |s| s.count()) {
                doc.to_part(ShowParts::part_of(m), 1);
            }
        }
        Ok(CheckpointView {
            thread: thread.to_owned(),
            id: id.to_owned(),
            mode: Mode::Show,
            doc,
            height: 20,
            width: 80,
            counter: 0,
            shown: None,
            counting: None,
            tokens: None,
        })
    }

    /// The chat's parts (read once), whichever mode is on screen.
    fn chat(&self) -> Option<&ShowParts> {
        let chat = match self.mode {
            Mode::Show => Some(&self.doc),
            _ => self.shown.as_ref(),
        };
        chat.and_then(|d| d.source()).and_then(ShowParts::of_parts)
    }

    /// Starts the tokens view: the messages already read are counted a step at a time (the
    /// first now, the rest between keys); the table is drawn once all are counted.
    fn start_tokens(&mut self, src: &Source) -> Result<()> {
        let counter = counters()[self.counter];
        self.counting = None;
        self.tokens = None;
        if self.chat().is_none() {
            self.show_tokens(src.tokens(&self.thread, &self.id, counter)?);
            return Ok(());
        }
        self.counting = Some(Vec::new());
        self.count_some()
    }

    /// Counts the next messages' tokens; the table replaces the progress line once all are.
    fn count_some(&mut self) -> Result<()> {
        let counter = counters()[self.counter];
        let (Some(done), Some(chat)) = (self.counting.as_mut(), {
            let chat = match self.mode {
                Mode::Show => Some(&self.doc),
                _ => self.shown.as_ref(),
            };
            chat.and_then(|d| d.source()).and_then(ShowParts::of_parts)
        }) else {
            return Ok(());
        };
        let from = done.len();
        done.extend(chat.count_tokens(counter, from, COUNTED_AT_ONCE)?);
        let n = chat.message_count();
        if done.len() >= n {
            let all = std::mem::take(done);
            let table = chat.tokens_table(counter, all);
            self.counting = None;
            self.show_tokens(table);
        } else {
            let line = format!("counting tokens: {} of {n} messages …", done.len());
            self.doc = Doc::full(vec![line]);
        }
        Ok(())
    }

    /// Puts the tokens table on screen, laid out for the width of the last draw.
    fn show_tokens(&mut self, table: TokensTable) {
        self.doc = Doc::full(table.lines(self.width));
        self.tokens = Some((table, self.width));
    }

    fn switch(&mut self, mode: Mode, src: &Source) -> Result<()> {
        let mode = if self.mode == mode { Mode::Show } else { mode };
        let doc = match mode {
            Mode::Show => match self.shown.take() {
                Some(doc) => doc,
                None => Doc::lazy(Box::new(src.show(&self.thread, &self.id)?)),
            },
            Mode::Diff => {
                let chat = match self.mode {
                    Mode::Show => Some(&self.doc),
                    _ => self.shown.as_ref(),
                };
                let shown = chat.and_then(|d| d.source()).and_then(ShowParts::of_parts);
                Doc::full(src.diff(&self.thread, &self.id, shown)?.lines)
            }
            // Filled in by `start_tokens` below.
            Mode::Tokens => Doc::full(Vec::new()),
        };
        self.counting = None;
        self.tokens = None;
        let mut old = std::mem::replace(&mut self.doc, doc);
        if self.mode == Mode::Show {
            old.top();
            self.shown = Some(old);
        }
        self.mode = mode;
        self.doc.top();
        if mode == Mode::Tokens {
            self.start_tokens(src)?;
        }
        Ok(())
    }

    /// True while the text has parts left to build (its row count is not known yet) or
    /// tokens left to count.
    pub fn building(&self) -> bool {
        self.doc.building() || self.counting.is_some()
    }

    /// Builds a few more parts of the text, or counts a few more messages (between keys).
    pub fn build_some(&mut self) -> Result<()> {
        if self.counting.is_some() {
            let counted = self.count_some();
            if counted.is_err() {
                self.counting = None;
            }
            return counted;
        }
        self.doc.build_some(BUILT_AT_ONCE);
        Ok(())
    }

    /// Handles a key.
    pub fn on_key(&mut self, key: KeyEvent, src: &Source) -> Result<Action> {
        let page = self.height.saturating_sub(1).max(1);
        match key.code {
            KeyCode::Down | KeyCode::Char('j') => self.doc.down(1),
            KeyCode::Up | KeyCode::Char('k') => self.doc.up(1),
            KeyCode::PageDown | KeyCode::Char(' ') => self.doc.down(page),
            KeyCode::PageUp => self.doc.up(page),
            KeyCode::Char('g') | KeyCode::Home => self.doc.top(),
            KeyCode::Char('G') | KeyCode::End => self.doc.end(),
            KeyCode::Esc | KeyCode::Char('q') | KeyCode::Left | KeyCode::Char('h') => {
                return Ok(Action::Back)
            }
            KeyCode::Char('d') => self.switch(Mode::Diff, src)?,
            KeyCode::Char('t') => self.switch(Mode::Tokens, src)?,
            KeyCode::Char('c') if self.mode == Mode::Tokens => {
                self.counter = (self.counter + 1) % counters().len();
                self.start_tokens(src)?;
            }
            KeyCode::Char('a') => return Ok(Action::Actions(self.thread.clone())),
            _ => {}
        }
        Ok(Action::None)
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
        if let Some((table, laid_out)) = &mut self.tokens {
            if *laid_out != self.width {
                *laid_out = self.width;
                self.doc = Doc::full(table.lines(self.width));
            }
        }
        self.doc.set_width(self.width);
        let rows: Vec<ratatui::text::Line> = self
            .doc
            .screen(self.height)
            .into_iter()
            .map(ratatui::text::Line::raw)
            .collect();
        // The row and the count once the text is built up to there (between keys).
        let total = self.doc.total();
        let at = self.doc.position();
        let shown = |n: Option<usize>| n.map_or(PENDING.to_owned(), |n| n.to_string());
        // The row and the mode are whole; the thread id, then the checkpoint id, are cut to
        // make room for them (both are on the text's first line).
        let rest = format!(
            " · {what} · row {}/{} ",
            shown(at.map(|a| (a + 1).min(total.unwrap_or(usize::MAX)))),
            shown(total),
        );
        let fixed = width(" ") + width(" · checkpoint ") + width(&rest);
        let (thread, id) = (one_line(&self.thread), one_line(&self.id));
        let cut = squeeze(
            &[&thread, &id],
            8,
            (area.width as usize).saturating_sub(fixed),
        );
        let block = block.title(format!(" {} · checkpoint {}{rest}", cut[0], cut[1]));
        // The text is terminal-safe already (`Source::text`, `ShowParts`).
        f.render_widget(Paragraph::new(rows).block(block), area);
    }
}
