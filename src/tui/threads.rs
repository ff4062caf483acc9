//! The threads view: `threads list` as a table, sortable, filtered by id or `KEY=VALUE`
//! metadata, with a bar of each thread's stored bytes.

use anyhow::Result;
use crossterm::event::{KeyCode, KeyEvent};
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Modifier, Style};
use ratatui::widgets::{Block, Borders, Paragraph, Row, Table, TableState};
use ratatui::Frame;

use super::data::{Source, ThreadRec};
use super::history::PENDING;
use super::width::{cut, cut_left, table_columns, width};
use super::{right, Action};
use crate::output::human;
use crate::output::sanitize::one_line;

/// The key hints of this view.
pub const HINTS: &str =
    "Enter open · s sort · / filter · f find · S store · a actions · ? help · q quit";

/// Threads whose latest state is read in one step between keys.
pub const FILL: usize = 4;

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
    /// Rows (indexes into `all`) whose messages, tokens (and time, when their ids carry
    /// none) are still to be read, in the order first shown; [`FILL`] a step between keys.
    pending: std::collections::VecDeque<usize>,
}

impl Threads {
    /// Reads the threads from their summaries alone (ids, checkpoints, bytes, age); their
    /// messages and tokens are read after the first draw ([`Threads::fill_some`]), so the
    /// filled table is `threads list`'s.
    pub fn load(src: &Source) -> Result<Threads> {
        let all = src.thread_summaries()?;
        let mut t = Threads {
            shown: Vec::new(),
            all,
            state: TableState::default().with_selected(Some(0)),
            sort: Sort::Age,
            filter: String::new(),
            editing: false,
            meta: None,
            pending: std::collections::VecDeque::new(),
        };
        t.refresh();
        t.pending = t
            .shown
            .iter()
            .copied()
            .filter(|&i| !t.all[i].known)
            .collect();
        Ok(t)
    }

    /// Whether rows are left to fill in.
    pub fn filling(&self) -> bool {
        !self.pending.is_empty()
    }

    /// Fills in the next [`FILL`] rows' messages and tokens (their latest blobs read and
    /// dropped, as `threads list` reads them). A row that does not read shows `-` (as
    /// `threads list` lists it) and the error comes back. Once every row is known, a sort
    /// that waited for them is applied.
    pub fn fill_some(&mut self, src: &Source) -> Result<()> {
        let n = self.pending.len().min(FILL);
        let batch: Vec<usize> = self.pending.drain(..n).collect();
        let mut rows: Vec<&mut ThreadRec> = self
            .all
            .iter_mut()
            .enumerate()
            .filter(|(i, _)| batch.contains(i))
            .map(|(_, r)| r)
            .collect();
        let result = src.thread_states(&mut rows);
        if self.pending.is_empty() {
            self.refresh();
        }
        result
    }

    /// Whether the current sort's values are all known (else the rows keep the order they
    /// have until they are: a sort on pending values would be wrong).
    fn sort_ready(&self) -> bool {
        match self.sort {
            Sort::Size => true,
            // The time of a thread whose ids carry none comes from its blob.
            Sort::Age => self.all.iter().all(|r| r.known || r.updated.is_some()),
            Sort::Messages | Sort::Tokens => self.all.iter().all(|r| r.known),
        }
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
            pending: std::collections::VecDeque::new(),
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
        // As `threads list --sort` orders them: by the sort's value, largest (newest) first,
        // ties in thread-id order (`all`'s). Until the sort's values are all known the rows
        // are newest first (the title says so).
        let sort = if self.sort_ready() {
            self.sort
        } else {
            Sort::Age
        };
        match sort {
            Sort::Age => shown.sort_by_key(|&i| std::cmp::Reverse(all[i].updated)),
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
        let widths = [
            Constraint::Min(12),
            Constraint::Length(6),
            Constraint::Length(8),
            Constraint::Length(8),
            Constraint::Length(8),
            Constraint::Length(10),
            Constraint::Length(BAR as u16),
        ];
        // A thread id wider than its column is cut, marked.
        let id_width = table_columns(table_area.width, &widths, 2)[0];
        let rows: Vec<Row> = self
            .shown
            .iter()
            .map(|&i| {
                let r = &self.all[i];
                let n = (r.bytes * BAR).div_ceil(max) as usize;
                let dash = |v: Option<u64>| match (v, r.known) {
                    (_, false) => PENDING.to_owned(),
                    (None, true) => "-".to_owned(),
                    (Some(v), true) => v.to_string(),
                };
                let age = match (r.age_seconds, r.known) {
                    (Some(a), _) => human::age(a),
                    (None, false) => PENDING.to_owned(),
                    (None, true) => "-".to_owned(),
                };
                Row::new(vec![
                    cut(&one_line(&r.thread_id), id_width).into(),
                    right(r.checkpoints.to_string()),
                    right(dash(r.messages)),
                    right(dash(r.tokens)),
                    right(age),
                    right(human::bytes(r.bytes)),
                    "█".repeat(n).into(),
                ])
            })
            .collect();
        let left = self.all.iter().filter(|r| !r.known).count();
        let title = match (left, self.sort_ready()) {
            (0, _) => format!(
                " {} of {} threads · sorted by {} ",
                self.shown.len(),
                self.all.len(),
                self.sort.name()
            ),
            (_, true) => format!(
                " {} of {} threads · sorted by {} · reading {left} {PENDING} ",
                self.shown.len(),
                self.all.len(),
                self.sort.name()
            ),
            (_, false) => format!(
                " {} of {} threads · sorted by {} once read ({left} left {PENDING}) ",
                self.shown.len(),
                self.all.len(),
                self.sort.name()
            ),
        };
        let table = Table::new(rows, widths)
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
            // The end of a long filter, where the text is typed.
            let prompt = " filter (id, or KEY=VALUE then Enter): ";
            let room = (filter_area.width as usize).saturating_sub(width(prompt) + 1);
            format!("{prompt}{}▏", cut_left(&one_line(&self.filter), room))
        } else if !self.filter.is_empty() {
            let room = (filter_area.width as usize).saturating_sub(width(" filter:  (Esc clears)"));
            format!(
                " filter: {} (Esc clears)",
                cut(&one_line(&self.filter), room)
            )
        } else if self.all.is_empty() {
            " no threads in this database".into()
        } else {
            String::new()
        };
        f.render_widget(Paragraph::new(filter), filter_area);
    }
}
