//! The search view: `find PATTERN -i` over the latest state of every thread and the Store,
//! its hits as `find` lists them (the threads' first, then the Store's); Enter on a thread's
//! hit opens its checkpoint at the message, on a Store hit the Store view at the item's
//! value.

use anyhow::Result;
use crossterm::event::{KeyCode, KeyEvent};
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Paragraph, Row, Table, TableState};
use ratatui::Frame;

use super::data::{Hit, Source};
use super::width::{cut, cut_left, table_columns, width};
use super::Action;
use crate::output::sanitize::one_line;

/// The key hints of this view.
pub const HINTS: &str = "type, Enter search · Enter on a hit opens it · / new search · Esc back";

/// What the prompt says the search covers.
const PROMPT: &str = " find (latest states and the Store, any case): ";

/// The search view's state.
pub struct Search {
    query: String,
    editing: bool,
    hits: Option<Vec<Hit>>,
    state: TableState,
}

impl Default for Search {
    fn default() -> Self {
        Search::new()
    }
}

impl Search {
    /// An empty prompt.
    pub fn new() -> Search {
        Search {
            query: String::new(),
            editing: true,
            hits: None,
            state: TableState::default().with_selected(Some(0)),
        }
    }

    /// True while the prompt takes the keys.
    pub fn editing(&self) -> bool {
        self.editing
    }

    /// Handles a key.
    pub fn on_key(&mut self, key: KeyEvent, src: &Source) -> Result<Action> {
        if self.editing {
            match key.code {
                KeyCode::Esc => return Ok(Action::Back),
                KeyCode::Enter if !self.query.is_empty() => {
                    self.editing = false;
                    self.hits = Some(src.find(&self.query)?);
                    self.state.select(Some(0));
                }
                KeyCode::Backspace => {
                    self.query.pop();
                }
                KeyCode::Char(c) => self.query.push(c),
                _ => {}
            }
            return Ok(Action::None);
        }
        let hits = self.hits.as_deref().unwrap_or_default();
        let mut sel = self.state.selected().unwrap_or(0);
        if super::navigate(&key, &mut sel, hits.len(), 10) {
            self.state.select(Some(sel));
            return Ok(Action::None);
        }
        Ok(match key.code {
            KeyCode::Esc | KeyCode::Char('q') => Action::Back,
            KeyCode::Char('/') => {
                self.editing = true;
                self.query.clear();
                Action::None
            }
            KeyCode::Enter | KeyCode::Right | KeyCode::Char('l') => match hits.get(sel) {
                Some(Hit {
                    thread_id: Some(thread),
                    checkpoint_id: Some(id),
                    index,
                    ..
                }) => Action::Checkpoint {
                    thread: thread.clone(),
                    id: id.clone(),
                    message: *index,
                },
                Some(Hit {
                    namespace: Some(namespace),
                    key,
                    ..
                }) => Action::StoreItem {
                    namespace: namespace.clone(),
                    key: key.clone(),
                },
                _ => Action::None,
            },
            _ => Action::None,
        })
    }

    /// Draws the prompt and the hits.
    pub fn draw(&mut self, f: &mut Frame, area: Rect) {
        let [prompt, list] =
            Layout::vertical([Constraint::Length(2), Constraint::Min(1)]).areas(area);
        let cursor = if self.editing { "▏" } else { "" };
        // The end of a long query, where it is typed.
        let room = (prompt.width as usize).saturating_sub(width(PROMPT) + width(cursor));
        f.render_widget(
            Paragraph::new(format!(
                "{PROMPT}{}{cursor}",
                cut_left(&one_line(&self.query), room)
            ))
            .block(Block::default().borders(Borders::BOTTOM)),
            prompt,
        );
        let Some(hits) = &self.hits else {
            return;
        };
        if hits.is_empty() {
            f.render_widget(Paragraph::new(" no hits"), list);
            return;
        }
        let in_store = hits.iter().filter(|h| h.in_store()).count();
        let in_threads = hits.len() - in_store;
        // The columns: where (a thread, or a Store namespace), which (a message's position,
        // or an item's key), the type, the text.
        let headers = match (in_threads, in_store) {
            (_, 0) => ["thread", "#", "type", "text"],
            (0, _) => ["namespace", "key", "type", "text"],
            _ => ["thread / namespace", "# / key", "type", "text"],
        };
        let (where_width, which_width) = column_widths(hits, list.width, &headers);
        let widths = [
            Constraint::Length(where_width),
            Constraint::Length(which_width),
            Constraint::Length(6),
            Constraint::Min(20),
        ];
        let text_width = table_columns(list.width, &widths, 2)[3];
        let bold = Style::default().add_modifier(Modifier::BOLD);
        let rows: Vec<Row> = hits
            .iter()
            .map(|h| {
                let (place, which) = match (&h.thread_id, &h.namespace) {
                    (Some(t), _) => (one_line(t), h.index.map_or("-".into(), |i| i.to_string())),
                    (None, Some(ns)) => (
                        one_line(&ns.join(".")),
                        h.key.as_deref().map_or("-".into(), one_line),
                    ),
                    (None, None) => ("-".into(), "-".into()),
                };
                Row::new(vec![
                    ratatui::widgets::Cell::from(cut(&place, where_width.into())),
                    ratatui::widgets::Cell::from(cut(&which, which_width.into())),
                    ratatui::widgets::Cell::from(one_line(&h.role)),
                    ratatui::widgets::Cell::from(excerpt(h, text_width, bold)),
                ])
            })
            .collect();
        let n = crate::output::human::count(hits.len() as u64, "hit");
        let title = match (in_threads, in_store) {
            (_, 0) => format!(" {n} "),
            (0, _) => format!(" {n} in the Store "),
            _ => format!(" {n}: {in_threads} in threads, {in_store} in the Store "),
        };
        let t = Table::new(rows, widths)
            .header(Row::new(headers).style(bold))
            .block(Block::default().borders(Borders::NONE).title(title))
            .row_highlight_style(Style::default().add_modifier(Modifier::REVERSED))
            .highlight_symbol("> ");
        f.render_stateful_widget(t, list, &mut self.state);
    }
}

/// The widths of the where and which columns: their widest cells and headers (a thread's
/// at least 18 columns, a position 3), at most 28 and 16 columns (a quarter and a sixth of
/// a wider screen).
fn column_widths(hits: &[Hit], columns: u16, headers: &[&str; 4]) -> (u16, u16) {
    let mut place = width(headers[0]);
    let mut which = width(headers[1]).max(3);
    for h in hits {
        match (&h.thread_id, &h.namespace) {
            (Some(t), _) => place = place.max(width(&one_line(t))).max(18),
            (None, Some(ns)) => place = place.max(width(&one_line(&ns.join(".")))),
            (None, None) => {}
        }
        if let Some(k) = &h.key {
            which = which.max(width(&one_line(k)));
        }
    }
    let columns = columns as usize;
    (
        place.min(28.max(columns / 4)) as u16,
        which.min(16.max(columns / 6)) as u16,
    )
}

/// The text around a hit's match in `columns` columns: the match (bold, in «») is kept in
/// sight, the text before it cut at its start when there is not room for all.
fn excerpt(h: &Hit, columns: usize, bold: Style) -> Line<'static> {
    let (before, matched, after) = (
        one_line(&h.before),
        one_line(&h.matched),
        one_line(&h.after),
    );
    let marked = format!("«{matched}»");
    let room = columns.saturating_sub(width(&marked));
    // The text before the match whole when it leaves a third of the room (or what the text
    // after needs) after the match; else cut at its start.
    let keep = (room * 2 / 3).max(room.saturating_sub(width(&after)));
    let before = cut_left(&before, keep);
    let after = cut(&after, room.saturating_sub(width(&before)));
    Line::from(vec![
        Span::raw(before),
        Span::styled(marked, bold),
        Span::raw(after),
    ])
}
