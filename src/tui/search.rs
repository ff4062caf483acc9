//! The search view: `find PATTERN -i` over the latest state of every thread; Enter on a hit
//! opens its checkpoint at the message.

use anyhow::Result;
use crossterm::event::{KeyCode, KeyEvent};
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Paragraph, Row, Table, TableState};
use ratatui::Frame;

use super::data::{Hit, Source};
use super::Action;
use crate::output::sanitize::one_line;

/// The key hints of this view.
pub const HINTS: &str = "type, Enter search · Enter on a hit opens it · / new search · Esc back";

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
                Some(h) => Action::Checkpoint {
                    thread: h.thread_id.clone(),
                    id: h.checkpoint_id.clone(),
                    message: h.index,
                },
                None => Action::None,
            },
            _ => Action::None,
        })
    }

    /// Draws the prompt and the hits.
    pub fn draw(&mut self, f: &mut Frame, area: Rect) {
        let [prompt, list] =
            Layout::vertical([Constraint::Length(2), Constraint::Min(1)]).areas(area);
        let cursor = if self.editing { "▏" } else { "" };
        f.render_widget(
            Paragraph::new(format!(
                " find (latest states, any case): {}{cursor}",
                one_line(&self.query)
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
        let bold = Style::default().add_modifier(Modifier::BOLD);
        let rows: Vec<Row> = hits
            .iter()
            .map(|h| {
                let text = Line::from(vec![
                    Span::raw(one_line(&h.before)),
                    Span::styled(format!("«{}»", one_line(&h.matched)), bold),
                    Span::raw(one_line(&h.after)),
                ]);
                Row::new(vec![
                    ratatui::widgets::Cell::from(one_line(&h.thread_id)),
                    ratatui::widgets::Cell::from(h.index.map_or("-".into(), |i| i.to_string())),
                    ratatui::widgets::Cell::from(one_line(&h.role)),
                    ratatui::widgets::Cell::from(text),
                ])
            })
            .collect();
        let t = Table::new(
            rows,
            [
                Constraint::Length(18),
                Constraint::Length(3),
                Constraint::Length(6),
                Constraint::Min(20),
            ],
        )
        .header(Row::new(["thread", "#", "type", "text"]).style(bold))
        .block(
            Block::default()
                .borders(Borders::NONE)
                .title(format!(" {} hits ", hits.len())),
        )
        .row_highlight_style(Style::default().add_modifier(Modifier::REVERSED))
        .highlight_symbol("> ");
        f.render_stateful_widget(t, list, &mut self.state);
    }
}
