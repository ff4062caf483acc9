//! The help view: every key.

use crossterm::event::{KeyCode, KeyEvent};
use ratatui::layout::Rect;
use ratatui::widgets::{Block, Borders, Paragraph};
use ratatui::Frame;

use super::Action;

/// The key hints of this view.
pub const HINTS: &str = "Esc or q back";

/// The keys, as the help view lists them.
pub const KEYS: &[(&str, &str)] = &[
    ("j k ↑ ↓", "move (PageUp/PageDown, space: a page)"),
    ("g G", "first / last"),
    ("Enter → l", "open: thread → history → checkpoint"),
    (
        "Esc q ← h",
        "back (q on the threads view quits; Ctrl-C quits)",
    ),
    ("/", "threads: filter by id, or KEY=VALUE metadata (Enter)"),
    ("s", "threads: sort by age, size, messages, tokens"),
    ("n", "history: subgraph namespaces by name"),
    ("d", "checkpoint: diff against its parent"),
    (
        "t",
        "checkpoint: tokens per message (c: approx, o200k, cl100k)",
    ),
    (
        "f",
        "find text in the latest state of every thread and in the Store",
    ),
    ("S", "the Store: namespaces → items → value"),
    ("a", "the memctl commands for the thread (shown, never run)"),
    ("?", "this help"),
];

/// The help view's state.
#[derive(Default)]
pub struct Help;

impl Help {
    /// Handles a key.
    pub fn on_key(&mut self, key: KeyEvent) -> Action {
        match key.code {
            KeyCode::Esc | KeyCode::Char('q') | KeyCode::Char('?') => Action::Back,
            _ => Action::None,
        }
    }

    /// Draws the keys.
    pub fn draw(&mut self, f: &mut Frame, area: Rect) {
        let mut lines: Vec<ratatui::text::Line> = KEYS
            .iter()
            .map(|(k, what)| format!(" {} {what}", super::width::pad(k, 10)).into())
            .collect();
        lines.push("".into());
        lines.push(" The browser only reads: it opens the database read-only.".into());
        f.render_widget(
            Paragraph::new(lines).block(Block::default().borders(Borders::TOP).title(" keys ")),
            area,
        );
    }
}
