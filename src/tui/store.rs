//! The Store view: namespaces (`store namespaces`) → items (`store ls`) → the JSON value
//! (`store get`, its long lines wrapped at word boundaries). A search hit in the Store opens
//! it at the item ([`StoreView::open_at`]).

use anyhow::Result;
use crossterm::event::{KeyCode, KeyEvent};
use ratatui::layout::{Constraint, Rect};
use ratatui::style::{Modifier, Style};
use ratatui::widgets::{Block, Borders, Paragraph, Row, Table, TableState};
use ratatui::Frame;

use super::data::{ItemRec, NamespaceRec, Source, ITEM_LIMIT};
use super::lazy::Doc;
use super::width::{cut, squeeze, table_columns, width};
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
        /// The value's lines, wrapped at the screen's width.
        doc: Doc,
        /// Rows of the value on screen at the last draw (for paging).
        height: usize,
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

    /// The Store at the value of item `key` of `namespace` (its labels), the namespace and
    /// the item selected on the levels under it (Esc goes back to them); without a key, at
    /// the namespace's items.
    pub fn open_at(src: &Source, namespace: &[String], key: Option<&str>) -> Result<StoreView> {
        let mut view = StoreView::load(src);
        if let Some(i) = view
            .namespaces
            .as_deref()
            .map_err(|e| anyhow::anyhow!("{e}"))?
            .iter()
            .position(|n| n.namespace == namespace)
        {
            view.state.select(Some(i));
        }
        let joined = namespace.join(".");
        let items = src.store_items(&joined)?;
        let mut state = TableState::default().with_selected(Some(0));
        view.level = match key {
            None => Level::Items {
                namespace: joined,
                items,
                state,
            },
            Some(key) => {
                // (An item past the listed ones opens all the same.)
                if let Some(i) = items.iter().position(|it| it.key == key) {
                    state.select(Some(i));
                }
                let text = src.store_value(&joined, key)?;
                Level::Value {
                    namespace: joined,
                    key: key.to_owned(),
                    doc: Doc::full(text.lines),
                    height: 20,
                    items,
                    state,
                }
            }
        };
        Ok(view)
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
                            doc: Doc::full(text.lines),
                            height: 20,
                            items: std::mem::take(items),
                            state: state.clone(),
                        };
                    }
                }
            }
            Level::Value {
                namespace,
                doc,
                height,
                items,
                state,
                ..
            } => {
                let page = height.saturating_sub(1).max(1);
                match key.code {
                    KeyCode::Down | KeyCode::Char('j') => doc.down(1),
                    KeyCode::Up | KeyCode::Char('k') => doc.up(1),
                    KeyCode::PageDown | KeyCode::Char(' ') => doc.down(page),
                    KeyCode::PageUp => doc.up(page),
                    KeyCode::Char('g') | KeyCode::Home => doc.top(),
                    KeyCode::Char('G') | KeyCode::End => doc.end(),
                    _ => {}
                }
                if back {
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
                let widths = [
                    Constraint::Min(20),
                    Constraint::Length(6),
                    Constraint::Length(10),
                    Constraint::Length(7),
                ];
                let ns_width = table_columns(area.width, &widths, 2)[0];
                let rows: Vec<Row> = list
                    .iter()
                    .map(|n| {
                        Row::new(vec![
                            cut(&one_line(&n.namespace.join(".")), ns_width),
                            n.items.to_string(),
                            human::bytes(n.bytes),
                            n.expired.to_string(),
                        ])
                    })
                    .collect();
                let title = format!(" Store · {} ", human::count(list.len() as u64, "namespace"));
                let t = Table::new(rows, widths)
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
                let widths = [
                    Constraint::Min(12),
                    Constraint::Length(10),
                    Constraint::Length(20),
                    Constraint::Length(30),
                ];
                let key_width = table_columns(area.width, &widths, 2)[0];
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
                            cut(&one_line(&i.key), key_width),
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
                // The count is whole; the namespace is cut to make room for it.
                let rest = format!(" · {}{limited} ", human::count(items.len() as u64, "item"));
                let room = (area.width as usize).saturating_sub(width(" Store · ") + width(&rest));
                let ns = squeeze(&[&one_line(namespace)], 8, room);
                let title = format!(" Store · {}{rest}", ns[0]);
                let t = Table::new(rows, widths)
                    .header(Row::new(["key", "size", "updated", "expires"]).style(bold))
                    .block(Block::default().borders(Borders::TOP).title(title))
                    .row_highlight_style(selected)
                    .highlight_symbol("> ");
                f.render_stateful_widget(t, area, state);
            }
            Level::Value {
                namespace,
                key,
                doc,
                height,
                ..
            } => {
                // The namespace, then the key, cut to fit the title.
                let room = (area.width as usize).saturating_sub(width(" Store ·  ·  "));
                let cut = squeeze(&[&one_line(namespace), &one_line(key)], 8, room);
                let title = format!(" Store · {} · {} ", cut[0], cut[1]);
                let block = Block::default().borders(Borders::TOP).title(title);
                let inner = block.inner(area);
                *height = inner.height as usize;
                doc.set_width(inner.width as usize);
                let lines: Vec<ratatui::text::Line> = doc
                    .screen(*height)
                    .into_iter()
                    .map(ratatui::text::Line::raw)
                    .collect();
                f.render_widget(Paragraph::new(lines).block(block), area);
            }
        }
    }
}
