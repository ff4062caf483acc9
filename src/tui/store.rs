//! The Store view: namespaces (`store namespaces`) → items (`store ls`) → the JSON value
//! (`store get`).

use anyhow::Result;
use crossterm::event::{KeyCode, KeyEvent};
use ratatui::layout::{Constraint, Rect};
use ratatui::style::{Modifier, Style};
use ratatui::widgets::{Block, Borders, Paragraph, Row, Table, TableState};
use ratatui::Frame;

use super::data::{ItemRec, NamespaceRec, Source, Text, ITEM_LIMIT};
use super::Action;
use crate::output::human;
use crate::output::sanitize::one_line;

/// The key hints of this view.
pub const HINTS: &str = "Enter open · j/k move · g/G top/end · Esc back · ? help";

enum Level {
    Namespaces,
    Items {
        namespace: String,
        items: Vec<ItemRec>,
        state: TableState,
    },
    Value {
        namespace: String,
        key: String,
        text: Text,
        scroll: usize,
        /// The items level it came from.
        items: Vec<ItemRec>,
        state: TableState,
    },
}

/// The Store view's state.
pub struct StoreView {
    namespaces: Result<Vec<NamespaceRec>, String>,
    state: TableState,
    level: Level,
}

impl StoreView {
    /// Reads the namespaces (a database without a Store says so in the view).
    pub fn load(src: &Source) -> StoreView {
        StoreView {
            namespaces: src
                .store_namespaces()
                .map_err(|e| one_line(&format!("{e:#}"))),
            state: TableState::default().with_selected(Some(0)),
            level: Level::Namespaces,
        }
    }

    /// Handles a key.
    pub fn on_key(&mut self, key: KeyEvent, src: &Source) -> Result<Action> {
        let back = matches!(
            key.code,
            KeyCode::Esc | KeyCode::Char('q') | KeyCode::Left | KeyCode::Char('h')
        );
        let open = matches!(
            key.code,
            KeyCode::Enter | KeyCode::Right | KeyCode::Char('l')
        );
        match &mut self.level {
            Level::Namespaces => {
                let list = self.namespaces.as_deref().unwrap_or_default();
                let mut sel = self.state.selected().unwrap_or(0);
                if super::navigate(&key, &mut sel, list.len(), 10) {
                    self.state.select(Some(sel));
                } else if back {
                    return Ok(Action::Back);
                } else if open {
                    if let Some(ns) = list.get(sel) {
                        let namespace = ns.namespace.join(".");
                        let items = src.store_items(&namespace)?;
                        self.level = Level::Items {
                            namespace,
                            items,
                            state: TableState::default().with_selected(Some(0)),
                        };
                    }
                }
            }
            Level::Items {
                namespace,
                items,
                state,
            } => {
                let mut sel = state.selected().unwrap_or(0);
                if super::navigate(&key, &mut sel, items.len(), 10) {
                    state.select(Some(sel));
                } else if back {
                    self.level = Level::Namespaces;
                } else if open {
                    if let Some(item) = items.get(sel) {
                        let text = src.store_value(namespace, &item.key)?;
                        self.level = Level::Value {
                            namespace: std::mem::take(namespace),
                            key: item.key.clone(),
                            text,
                            scroll: 0,
                            items: std::mem::take(items),
                            state: state.clone(),
                        };
                    }
                }
            }
            Level::Value {
                namespace,
                text,
                scroll,
                items,
                state,
                ..
            } => {
                let len = text.lines.len();
                if super::navigate(&key, scroll, len, 10) {
                } else if back {
                    self.level = Level::Items {
                        namespace: std::mem::take(namespace),
                        items: std::mem::take(items),
                        state: state.clone(),
                    };
                }
            }
        }
        Ok(Action::None)
    }

    /// Draws the current level.
    pub fn draw(&mut self, f: &mut Frame, area: Rect) {
        let bold = Style::default().add_modifier(Modifier::BOLD);
        let selected = Style::default().add_modifier(Modifier::REVERSED);
        match &mut self.level {
            Level::Namespaces => {
                let list = match &self.namespaces {
                    Ok(l) => l,
                    Err(e) => {
                        let block = Block::default().borders(Borders::TOP).title(" Store ");
                        f.render_widget(Paragraph::new(format!(" {e}")).block(block), area);
                        return;
                    }
                };
                let rows: Vec<Row> = list
                    .iter()
                    .map(|n| {
                        Row::new(vec![
                            one_line(&n.namespace.join(".")),
                            n.items.to_string(),
                            human::bytes(n.bytes),
                            n.expired.to_string(),
                        ])
                    })
                    .collect();
                let title = format!(" Store · {} ", human::count(list.len() as u64, "namespace"));
                let t = Table::new(
                    rows,
                    [
                        Constraint::Min(20),
                        Constraint::Length(6),
                        Constraint::Length(10),
                        Constraint::Length(7),
                    ],
                )
                .header(Row::new(["namespace", "items", "bytes", "expired"]).style(bold))
                .block(Block::default().borders(Borders::TOP).title(title))
                .row_highlight_style(selected)
                .highlight_symbol("> ");
                f.render_stateful_widget(t, area, &mut self.state);
            }
            Level::Items {
                namespace,
                items,
                state,
            } => {
                let rows: Vec<Row> = items
                    .iter()
                    .map(|i| {
                        // Times to the second, in UTC.
                        let time = |t: Option<&str>, none: &str| match t {
                            None => none.to_owned(),
                            Some(t) => {
                                human::parse_ts(t).map_or_else(|| one_line(t), |ts| human::utc(&ts))
                            }
                        };
                        let mut expires = time(i.expires_at.as_deref(), "never");
                        if i.expired {
                            expires.push_str(" (expired)");
                        }
                        Row::new(vec![
                            one_line(&i.key),
                            human::bytes(i.size),
                            time(i.updated_at.as_deref(), "-"),
                            expires,
                        ])
                    })
                    .collect();
                let limited = if items.len() >= ITEM_LIMIT {
                    format!(" (first {ITEM_LIMIT})")
                } else {
                    String::new()
                };
                let title = format!(
                    " Store · {} · {}{limited} ",
                    one_line(namespace),
                    human::count(items.len() as u64, "item")
                );
                let t = Table::new(
                    rows,
                    [
                        Constraint::Min(12),
                        Constraint::Length(10),
                        Constraint::Length(20),
                        Constraint::Length(30),
                    ],
                )
                .header(Row::new(["key", "size", "updated", "expires"]).style(bold))
                .block(Block::default().borders(Borders::TOP).title(title))
                .row_highlight_style(selected)
                .highlight_symbol("> ");
                f.render_stateful_widget(t, area, state);
            }
            Level::Value {
                namespace,
                key,
                text,
                scroll,
                ..
            } => {
                let title = format!(" Store · {} · {} ", one_line(namespace), one_line(key));
                let lines: Vec<ratatui::text::Line> = text
                    .lines
                    .iter()
                    .skip(*scroll)
                    .map(|l| ratatui::text::Line::raw(l.as_str()))
                    .collect();
                f.render_widget(
                    Paragraph::new(lines)
                        .block(Block::default().borders(Borders::TOP).title(title)),
                    area,
                );
            }
        }
    }
}
