//! The history view: a thread's checkpoints newest first (`history`), a page at a time, with
//! sparklines of tokens and stored bytes per checkpoint and the subgraph namespaces that ran
//! at each step.

use anyhow::Result;
use crossterm::event::{KeyCode, KeyEvent};
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Modifier, Style};
use ratatui::text::Line;
use ratatui::widgets::{Block, Borders, Paragraph, Row, Sparkline, Table, TableState};
use ratatui::Frame;

use super::data::{HistoryRec, Source};
use super::width::{squeeze, width};
use super::{right, Action};
use crate::output::human;
use crate::output::sanitize::one_line;

/// The key hints of this view.
pub const HINTS: &str =
    "Enter open · n subgraphs · a actions · f find · Esc back · ? help · q back";

/// Checkpoints read per page (by default).
pub const PAGE: usize = 100;

/// The history view's state.
pub struct History {
    thread: String,
    rows: Vec<HistoryRec>,
    /// Checkpoints asked for so far (a page more when the selection reaches the end).
    limit: usize,
    /// Checkpoints per page.
    page: usize,
    state: TableState,
    /// Show the subgraph namespaces by name.
    expanded: bool,
    /// Rows whose blobs are still to be read (time, messages, tokens), in order; one a step
    /// between keys, so a key waits for at most one blob. The work stops when the view is
    /// left (it is done for the top view only) and goes on when it is back on top.
    pending: std::collections::VecDeque<usize>,
    /// The thread's messages need a DeltaChannel replay: their counts come from `history`
    /// over the whole history, the blobs give the tokens only.
    delta: bool,
    /// The thread's newest checkpoint was checked for a replay (as `history` checks it).
    checked_newest: bool,
}

/// A cell not known yet (its blob not read yet).
pub const PENDING: &str = "…";

impl History {
    /// Reads the first page (`page` checkpoints) of `thread`'s history, from the rows alone:
    /// the blobs are read after the first draw ([`History::fill_some`]).
    pub fn load(src: &Source, thread: &str, page: usize) -> Result<History> {
        let page = page.max(1);
        let (rows, delta) = src.history(thread, None, page)?;
        Ok(History {
            thread: thread.to_owned(),
            pending: (0..rows.len()).collect(),
            rows,
            limit: page,
            page,
            state: TableState::default().with_selected(Some(0)),
            expanded: false,
            delta,
            checked_newest: false,
        })
    }

    /// Whether cells are left to fill in.
    pub fn filling(&self) -> bool {
        !self.pending.is_empty()
    }

    /// Fills in the next row's time, messages and tokens (its blob read and dropped); on a
    /// DeltaChannel thread the first step counts every row's messages as `history` does. A
    /// row that does not read keeps its cells pending and the error comes back; the next
    /// step goes on with the next row.
    pub fn fill_some(&mut self, src: &Source) -> Result<()> {
        let Some(&i) = self.pending.front() else {
            return Ok(());
        };
        let Some(id) = self.rows.get(i).map(|r| r.checkpoint_id.clone()) else {
            self.pending.pop_front();
            return Ok(());
        };
        if !self.delta {
            let facts = match src.history_facts(&self.thread, &[&id], !self.checked_newest) {
                Ok(f) => f,
                // This row's cells stay pending (the error on the status line); the next
                // rows go on.
                Err(e) => {
                    self.pending.pop_front();
                    return Err(e);
                }
            };
            match facts {
                Some(facts) => {
                    self.checked_newest = true;
                    self.pending.pop_front();
                    if let (Some(r), Some(f)) = (self.rows.get_mut(i), facts.into_iter().next()) {
                        r.ts = f.ts;
                        r.messages = f.messages.map(|n| n as u64);
                        r.tokens = f.tokens;
                        r.known = true;
                        r.tokens_known = true;
                    }
                }
                // The next step counts the messages over the whole history.
                None => self.delta = true,
            }
            return Ok(());
        }
        if self.rows.iter().any(|r| !r.known) {
            let whole = match src.history_whole(&self.thread) {
                Ok(w) => w,
                // The whole history does not read: not again at every step, the cells
                // left stay pending (the error on the status line).
                Err(e) => {
                    self.pending.clear();
                    return Err(e);
                }
            };
            let whole: std::collections::HashMap<String, crate::read::history::HistoryRecord> =
                whole
                    .into_iter()
                    .map(|r| (r.checkpoint_id.clone(), r))
                    .collect();
            for r in &mut self.rows {
                // A row deleted since the page was read stays without time and count.
                if let Some(w) = whole.get(&r.checkpoint_id) {
                    r.ts = w.ts.clone();
                    r.messages = w.messages.map(|n| n as u64);
                }
                r.known = true;
            }
            return Ok(());
        }
        let tokens = src.history_tokens(&self.thread, &[&id]);
        self.pending.pop_front();
        let tokens = tokens?;
        if let Some(r) = self.rows.get_mut(i) {
            r.tokens = tokens.into_iter().next().flatten();
            r.tokens_known = true;
        }
        Ok(())
    }

    fn more(&self) -> bool {
        self.rows.len() >= self.limit
    }

    /// Handles a key.
    pub fn on_key(&mut self, key: KeyEvent, src: &Source) -> Result<Action> {
        let mut sel = self.state.selected().unwrap_or(0);
        if super::navigate(&key, &mut sel, self.rows.len(), 10) {
            if sel + 1 >= self.rows.len() && self.more() {
                self.limit += self.page;
                let last = self.rows.last().map(|r| r.checkpoint_id.clone());
                let (more, delta) = src.history(&self.thread, last.as_deref(), self.page)?;
                self.delta |= delta;
                self.pending
                    .extend(self.rows.len()..self.rows.len() + more.len());
                self.rows.extend(more);
            }
            self.state.select(Some(sel));
            return Ok(Action::None);
        }
        Ok(match key.code {
            KeyCode::Esc | KeyCode::Char('q') | KeyCode::Left | KeyCode::Char('h') => Action::Back,
            KeyCode::Char('n') => {
                self.expanded = !self.expanded;
                Action::None
            }
            KeyCode::Char('a') => Action::Actions(self.thread.clone()),
            KeyCode::Enter | KeyCode::Right | KeyCode::Char('l') => match self.rows.get(sel) {
                Some(r) => Action::Checkpoint {
                    thread: self.thread.clone(),
                    id: r.checkpoint_id.clone(),
                    message: None,
                },
                None => Action::None,
            },
            _ => Action::None,
        })
    }

    /// Draws the sparklines and the table.
    pub fn draw(&mut self, f: &mut Frame, area: Rect) {
        let [sparks, table_area] =
            Layout::vertical([Constraint::Length(5), Constraint::Min(1)]).areas(area);
        let [tokens_area, bytes_area] =
            Layout::horizontal([Constraint::Percentage(50), Constraint::Percentage(50)])
                .areas(sparks);
        // Oldest to newest, left to right.
        let tokens: Vec<u64> = self
            .rows
            .iter()
            .rev()
            .map(|r| r.tokens.unwrap_or(0))
            .collect();
        let bytes: Vec<u64> = self
            .rows
            .iter()
            .rev()
            .map(|r| r.bytes.unwrap_or(0))
            .collect();
        let max = |v: &[u64]| v.iter().copied().max().unwrap_or(0);
        let spark = |title: String, data: &[u64]| {
            Sparkline::default()
                .block(Block::default().borders(Borders::ALL).title(title))
                .data(data.to_vec())
        };
        // The maximum once every row's tokens are counted (a partial one could be wrong).
        let tokens_max = if self.rows.iter().all(|r| r.tokens_known) {
            max(&tokens).to_string()
        } else {
            PENDING.to_owned()
        };
        f.render_widget(
            spark(
                format!(" tokens per checkpoint (max {tokens_max}) "),
                &tokens,
            ),
            tokens_area,
        );
        f.render_widget(
            spark(
                format!(" bytes per checkpoint (max {}) ", human::bytes(max(&bytes))),
                &bytes,
            ),
            bytes_area,
        );
        let dash = |v: Option<u64>, known: bool| match (v, known) {
            (_, false) => PENDING.to_owned(),
            (None, true) => "-".to_owned(),
            (Some(v), true) => v.to_string(),
        };
        let rows: Vec<Row> = self
            .rows
            .iter()
            .map(|r| {
                let ts = if !r.known {
                    PENDING.to_owned()
                } else {
                    r.ts.as_deref()
                        .and_then(human::parse_ts)
                        .map_or("-".into(), |t| {
                            // `MM-DD HH:MM:SS`: the year and zone of `history`'s column left out
                            // to fit 80 columns.
                            let full = human::utc(&t);
                            full.get(5..19)
                                .map_or(full.clone(), |s| s.replace('T', " "))
                        })
                };
                let subgraphs = match (r.namespaces.len(), self.expanded) {
                    (0, _) => String::new(),
                    (_, true) => one_line(&r.namespaces.join(", ")),
                    (1, false) => "1 subgraph".into(),
                    (n, false) => format!("{n} subgraphs"),
                };
                Row::new(vec![
                    one_line(&r.checkpoint_id).into(),
                    right(r.step.map_or("-".into(), |s| s.to_string())),
                    one_line(r.source.as_deref().unwrap_or("-")).into(),
                    ts.into(),
                    right(dash(r.messages, r.known)),
                    right(dash(r.tokens, r.tokens_known)),
                    right(r.bytes.map_or("-".into(), human::bytes)),
                    subgraphs.into(),
                ])
            })
            .collect();
        let more = if self.more() { "+" } else { "" };
        // The count is whole; the thread id is cut to make room for it.
        let rest = format!(" · {}{more} checkpoints, newest first ", self.rows.len());
        let fixed = width(" thread ") + width(&rest);
        let thread = squeeze(
            &[&one_line(&self.thread)],
            8,
            (table_area.width as usize).saturating_sub(fixed),
        );
        let title = format!(" thread {}{rest}", thread[0]);
        let table = Table::new(
            rows,
            [
                Constraint::Min(14),
                Constraint::Length(4),
                Constraint::Length(6),
                Constraint::Length(14),
                Constraint::Length(4),
                Constraint::Length(6),
                Constraint::Length(9),
                Constraint::Min(10),
            ],
        )
        .header(
            Row::new(vec![
                "checkpoint".into(),
                right("step"),
                "source".into(),
                "time (UTC)".into(),
                right("msgs"),
                right("tokens"),
                right("bytes"),
                "subgraphs".into(),
            ])
            .style(Style::default().add_modifier(Modifier::BOLD)),
        )
        .block(
            Block::default()
                .borders(Borders::TOP)
                .title(Line::from(title)),
        )
        .row_highlight_style(Style::default().add_modifier(Modifier::REVERSED))
        .highlight_symbol("> ");
        f.render_stateful_widget(table, table_area, &mut self.state);
        if self.rows.is_empty() {
            f.render_widget(Paragraph::new(" no checkpoints"), table_area);
        }
    }
}
