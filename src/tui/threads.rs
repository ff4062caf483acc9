//! The threads view: `threads list` as a table, sortable, filtered by id or `KEY=VALUE`
//! metadata, with a bar of each thread's stored bytes.

use anyhow::Result;
use crossterm::event::{KeyCode, KeyEvent};
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Modifier, Style};
use ratatui::widgets::{Block, Borders, Paragraph, Row, Table, TableState};
use ratatui::Frame;

use super::data::{Source, ThreadRec};
use super::{right, Action};
use crate::output::human;
use crate::output::sanitize::one_line;

/// The key hints of this view.
pub const HINTS: &str =
    "Enter open · s sort · / filter · f find · S store · a actions · ? help · q quit";

/// What the table is sorted by (largest first; age: newest first).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sort {
    /// Newest first.
    Age,
    /// Stored bytes.
    Size,
    /// Messages of the latest state.
    Messages,
    /// Tokens of the latest state.
    Tokens,
}

impl Sort {
    fn next(self) -> Sort {
        match self {
            Sort::Age => Sort::Size,
            Sort::Size => Sort::Messages,
            Sort::Messages => Sort::Tokens,
            Sort::Tokens => Sort::Age,
        }
    }

    fn name(self) -> &'static str {
        match self {
            Sort::Age => "age",
            Sort::Size => "size",
            Sort::Messages => "messages",
            Sort::Tokens => "tokens",
        }
    }
}

/// The threads view's state.
pub struct Threads {
    all: Vec<ThreadRec>,
    /// Indexes into `all` of the rows shown, in order.
    shown: Vec<usize>,
    state: TableState,
    sort: Sort,
    filter: String,
    editing: bool,
    /// Threads matching a `KEY=VALUE` filter (from `find --meta`).
    meta: Option<Vec<String>>,
}

impl Threads {
    /// Reads the threads list (and the note of a partial read).
    pub fn load(src: &Source) -> Result<(Threads, Option<String>)> {
        let (all, note) = src.threads()?;
        let mut t = Threads {
            shown: (0..all.len()).collect(),
            all,
            state: TableState::default().with_selected(Some(0)),
            sort: Sort::Age,
            filter: String::new(),
            editing: false,
            meta: None,
        };
        t.refresh();
        Ok((t, note.map(|n| one_line(&n))))
    }

    /// No threads (a database that has only a Store).
    pub fn empty() -> Threads {
        Threads {
            all: Vec::new(),
            shown: Vec::new(),
            state: TableState::default().with_selected(Some(0)),
            sort: Sort::Age,
            filter: String::new(),
            editing: false,
            meta: None,
        }
    }

    /// True while the filter prompt takes the keys.
    pub fn editing(&self) -> bool {
        self.editing
    }

    /// The selected thread's id.
    pub fn selected(&self) -> Option<&str> {
        let i = *self.shown.get(self.state.selected()?)?;
        Some(&self.all[i].thread_id)
    }

    fn refresh(&mut self) {
        let keep = |r: &ThreadRec| -> bool {
            match &self.meta {
                Some(ids) => ids.contains(&r.thread_id),
                None => self.filter.is_empty() || r.thread_id.contains(self.filter.as_str()),
            }
        };
        let mut shown: Vec<usize> = (0..self.all.len())
            .filter(|&i| keep(&self.all[i]))
            .collect();
        let all = &self.all;
        match self.sort {
            // `threads list` gives them newest first.
            Sort::Age => {}
            Sort::Size => shown.sort_by_key(|&i| std::cmp::Reverse(all[i].bytes)),
            Sort::Messages => shown.sort_by_key(|&i| std::cmp::Reverse(all[i].messages)),
            Sort::Tokens => shown.sort_by_key(|&i| std::cmp::Reverse(all[i].tokens)),
        }
        self.shown = shown;
        let sel = self
            .state
            .selected()
            .unwrap_or(0)
            .min(self.shown.len().saturating_sub(1));
        self.state.select(Some(sel));
    }

    /// Handles a key.
    pub fn on_key(&mut self, key: KeyEvent, src: &Source) -> Result<Action> {
        if self.editing {
            match key.code {
                KeyCode::Esc => {
                    self.editing = false;
                    self.filter.clear();
                    self.meta = None;
                }
                KeyCode::Enter => {
                    self.editing = false;
                    if self.filter.contains('=') {
                        self.meta = Some(src.threads_with_meta(&self.filter)?);
                    }
                }
                KeyCode::Backspace => {
                    self.filter.pop();
                }
                KeyCode::Char(c) => self.filter.push(c),
                _ => {}
            }
            if !self.filter.contains('=') {
                self.meta = None;
            }
            self.refresh();
            return Ok(Action::None);
        }
        let mut sel = self.state.selected().unwrap_or(0);
        if super::navigate(&key, &mut sel, self.shown.len(), 10) {
            self.state.select(Some(sel));
            return Ok(Action::None);
        }
        Ok(match key.code {
            KeyCode::Char('q') => Action::Quit,
            KeyCode::Esc if !self.filter.is_empty() => {
                self.filter.clear();
                self.meta = None;
                self.refresh();
                Action::None
            }
            KeyCode::Esc => Action::Quit,
            KeyCode::Char('/') => {
                self.editing = true;
                self.filter.clear();
                self.meta = None;
                self.refresh();
                Action::None
            }
            KeyCode::Char('s') => {
                self.sort = self.sort.next();
                self.refresh();
                self.state.select(Some(0));
                Action::None
            }
            KeyCode::Enter | KeyCode::Right | KeyCode::Char('l') => match self.selected() {
                Some(t) => Action::History(t.to_owned()),
                None => Action::None,
            },
            KeyCode::Char('a') => match self.selected() {
                Some(t) => Action::Actions(t.to_owned()),
                None => Action::None,
            },
            _ => Action::None,
        })
    }

    /// Draws the table, and the filter line under it.
    pub fn draw(&mut self, f: &mut Frame, area: Rect) {
        let [table_area, filter_area] =
            Layout::vertical([Constraint::Min(1), Constraint::Length(1)]).areas(area);
        let max = self.all.iter().map(|r| r.bytes).max().unwrap_or(0).max(1);
        const BAR: u64 = 10;
        let rows: Vec<Row> = self
            .shown
            .iter()
            .map(|&i| {
                let r = &self.all[i];
                let n = (r.bytes * BAR).div_ceil(max) as usize;
                let dash = |v: Option<u64>| v.map_or("-".into(), |v| v.to_string());
                Row::new(vec![
                    one_line(&r.thread_id).into(),
                    right(r.checkpoints.to_string()),
                    right(dash(r.messages)),
                    right(dash(r.tokens)),
                    right(r.age_seconds.map_or("-".into(), human::age)),
                    right(human::bytes(r.bytes)),
                    "█".repeat(n).into(),
                ])
            })
            .collect();
        let title = format!(
            " {} of {} threads · sorted by {} ",
            self.shown.len(),
            self.all.len(),
            self.sort.name()
        );
        let table = Table::new(
            rows,
            [
                Constraint::Min(12),
                Constraint::Length(6),
                Constraint::Length(8),
                Constraint::Length(8),
                Constraint::Length(8),
                Constraint::Length(10),
                Constraint::Length(BAR as u16),
            ],
        )
        .header(
            Row::new(vec![
                "thread".into(),
                right("cps"),
                right("messages"),
                right("tokens"),
                right("age"),
                right("bytes"),
                "size".into(),
            ])
            .style(Style::default().add_modifier(Modifier::BOLD)),
        )
        .block(Block::default().borders(Borders::TOP).title(title))
        .row_highlight_style(Style::default().add_modifier(Modifier::REVERSED))
        .highlight_symbol("> ");
        f.render_stateful_widget(table, table_area, &mut self.state);
        let filter = if self.editing {
            format!(
                " filter (id, or KEY=VALUE then Enter): {}▏",
                one_line(&self.filter)
            )
        } else if !self.filter.is_empty() {
            format!(" filter: {} (Esc clears)", one_line(&self.filter))
        } else if self.all.is_empty() {
            " no threads in this database".into()
        } else {
            String::new()
        };
        f.render_widget(Paragraph::new(filter), filter_area);
    }
}
