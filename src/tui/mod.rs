//! `memctl browse`: a read-only terminal browser of threads, history, checkpoints, search
//! and the Store. [`App`] holds the views (a stack: Enter opens, Esc goes back); each view is
//! a file with its state, its keys and its drawing. Everything is read through
//! [`data::Source`], i.e. the read commands' functions; the browser never writes, and every
//! string from the database is made terminal-safe ([`crate::output::sanitize`]) before it is
//! drawn. Text is cut, padded and wrapped by display width ([`width`]): a double-width
//! character (CJK, emoji) is never cut in half and no row runs past the screen's edge.

pub mod actions;
pub mod ascii;
pub mod checkpoint;
pub mod data;
pub mod help;
pub mod history;
pub mod lazy;
pub mod search;
pub mod store;
pub mod threads;
pub mod width;

use anyhow::Result;
use crossterm::event::{KeyCode, KeyEvent, KeyEventKind, KeyModifiers};
use ratatui::layout::{Constraint, Layout};
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;
use ratatui::Frame;

use data::Source;

/// What a key asks the app to do.
pub enum Action {
    /// Nothing more (the view handled it).
    None,
    /// Close the view (back to the one below; quit from the first).
    Back,
    /// Leave the browser.
    Quit,
    /// Open a thread's history.
    History(String),
    /// Open a checkpoint (`scroll_to`: the message to show first).
    Checkpoint {
        /// Its thread.
        thread: String,
        /// Its id.
        id: String,
        /// The position of the message to scroll to.
        message: Option<usize>,
    },
    /// Open the Store.
    Store,
    /// Open the Store at an item's value (a search hit in the Store).
    StoreItem {
        /// The item's namespace (its labels).
        namespace: Vec<String>,
        /// Its key (`None`: the namespace's items).
        key: Option<String>,
    },
    /// Open the search prompt.
    Search,
    /// Show the commands for a thread.
    Actions(String),
    /// Show the keys.
    Help,
}

/// One open view.
pub enum View {
    /// The threads table.
    Threads(threads::Threads),
    /// A thread's history.
    History(history::History),
    /// A checkpoint (show / diff / tokens).
    Checkpoint(checkpoint::CheckpointView),
    /// The Store.
    Store(store::StoreView),
    /// Search.
    Search(search::Search),
    /// The memctl commands for a thread.
    Actions(actions::Actions),
    /// The keys.
    Help(help::Help),
}

/// The browser: its source and its stack of views.
pub struct App {
    src: Source,
    stack: Vec<View>,
    /// A one-line message at the bottom (an error of the last key, a note).
    status: Option<String>,
    /// Set once the user asked to leave.
    pub quit: bool,
    /// Checkpoints per page of a history.
    page: usize,
}

impl App {
    /// Opens the browser on the threads list (read now: a database that cannot be read is an
    /// error before the screen is taken over), or on `thread`'s history.
    pub fn new(src: Source, thread: Option<&str>) -> Result<App> {
        // A database with a Store and no checkpoint tables opens on its Store.
        let (threads, note, store) = match threads::Threads::load(&src) {
            Ok(t) => (t, None, None),
            Err(e) => match src.store_namespaces() {
                Ok(_) => (
                    threads::Threads::empty(),
                    Some(crate::output::sanitize::one_line(&format!("{e:#}"))),
                    Some(store::StoreView::load(&src)),
                ),
                Err(_) => return Err(e),
            },
        };
        let mut app = App {
            src,
            stack: vec![View::Threads(threads)],
            status: note,
            quit: false,
            page: history::PAGE,
        };
        if let Some(s) = store {
            app.stack.push(View::Store(s));
        }
        if let Some(t) = thread {
            let h = history::History::load(&app.src, t, app.page)?;
            app.stack.push(View::History(h));
        }
        app.show_notes();
        Ok(app)
    }

    /// Reads histories `page` checkpoints at a time (100 by default) from now on.
    pub fn with_history_page(mut self, page: usize) -> App {
        self.page = page.max(1);
        self
    }

    /// The source the views read from.
    pub fn source(&self) -> &Source {
        &self.src
    }

    /// Whether the top view has work left for its screen (the threads' or a history's cells
    /// to fill in, a chat's messages to render: its row count).
    pub fn working(&self) -> bool {
        match self.stack.last() {
            Some(View::Threads(t)) => t.filling(),
            Some(View::History(h)) => h.filling(),
            Some(View::Checkpoint(c)) => c.building(),
            _ => false,
        }
    }

    /// Does one step of the top view's work left (a few threads' latest blobs, a history
    /// row's blob, a few messages of a chat); between keys.
    pub fn work(&mut self) {
        match self.stack.last_mut() {
            Some(View::Threads(t)) => {
                if let Err(e) = t.fill_some(&self.src) {
                    self.error(e);
                }
            }
            Some(View::History(h)) => {
                if let Err(e) = h.fill_some(&self.src) {
                    self.error(e);
                }
            }
            Some(View::Checkpoint(c)) => {
                if let Err(e) = c.build_some() {
                    self.error(e);
                }
            }
            _ => {}
        }
        self.show_notes();
    }

    /// Puts the last note the jobs had (if any) on the status line, unless an error is there.
    fn show_notes(&mut self) {
        if let Some(note) = self.src.notes().take().pop() {
            if self.status.is_none() {
                self.status = Some(crate::output::sanitize::one_line(&note));
            }
        }
    }

    /// Does all the work left (what the screen shows once the user waits).
    pub fn finish_work(&mut self) {
        while self.working() {
            self.work();
        }
    }

    /// Handles one key press.
    pub fn on_key(&mut self, key: KeyEvent) {
        if key.kind == KeyEventKind::Release {
            return;
        }
        if key.modifiers.contains(KeyModifiers::CONTROL) && key.code == KeyCode::Char('c') {
            self.quit = true;
            return;
        }
        self.status = None;
        let Some(top) = self.stack.last_mut() else {
            self.quit = true;
            return;
        };
        let editing = match top {
            View::Threads(v) => v.editing(),
            View::Search(v) => v.editing(),
            _ => false,
        };
        // Keys every view shares (not while a prompt takes the text).
        if !editing {
            match key.code {
                KeyCode::Char('?') if !matches!(top, View::Help(_)) => {
                    self.stack.push(View::Help(help::Help));
                    return;
                }
                KeyCode::Char('f') if !matches!(top, View::Search(_)) => {
                    self.stack.push(View::Search(search::Search::new()));
                    return;
                }
                KeyCode::Char('S') if !matches!(top, View::Store(_)) => {
                    self.apply(Action::Store);
                    return;
                }
                _ => {}
            }
        }
        let src = &self.src;
        let result = match top {
            View::Threads(v) => v.on_key(key, src),
            View::History(v) => v.on_key(key, src),
            View::Checkpoint(v) => v.on_key(key, src),
            View::Store(v) => v.on_key(key, src),
            View::Search(v) => v.on_key(key, src),
            View::Actions(v) => Ok(v.on_key(key)),
            View::Help(v) => Ok(v.on_key(key)),
        };
        match result {
            Ok(action) => self.apply(action),
            Err(e) => self.error(e),
        }
        self.show_notes();
    }

    fn error(&mut self, e: anyhow::Error) {
        self.status = Some(crate::output::sanitize::one_line(&format!("{e:#}")));
    }

    fn apply(&mut self, action: Action) {
        let opened = match action {
            Action::None => return,
            Action::Quit => {
                self.quit = true;
                return;
            }
            Action::Back => {
                self.stack.pop();
                if self.stack.is_empty() {
                    self.quit = true;
                }
                return;
            }
            Action::History(t) => {
                history::History::load(&self.src, &t, self.page).map(View::History)
            }
            Action::Checkpoint {
                thread,
                id,
                message,
            } => checkpoint::CheckpointView::load(&self.src, &thread, &id, message)
                .map(View::Checkpoint),
            Action::Store => Ok(View::Store(store::StoreView::load(&self.src))),
            Action::StoreItem { namespace, key } => {
                store::StoreView::open_at(&self.src, &namespace, key.as_deref()).map(View::Store)
            }
            Action::Search => Ok(View::Search(search::Search::new())),
            Action::Actions(t) => Ok(View::Actions(actions::Actions::new(&self.src, &t))),
            Action::Help => Ok(View::Help(help::Help)),
        };
        match opened {
            Ok(v) => self.stack.push(v),
            Err(e) => self.error(e),
        }
    }

    /// Draws the top view, a title line and a status line.
    pub fn draw(&mut self, f: &mut Frame) {
        let [title, body, status] = Layout::vertical([
            Constraint::Length(1),
            Constraint::Min(1),
            Constraint::Length(1),
        ])
        .areas(f.area());
        let (name, hints) = match self.stack.last() {
            Some(View::Threads(_)) => ("threads", threads::HINTS),
            Some(View::History(_)) => ("history", history::HINTS),
            Some(View::Checkpoint(_)) => ("checkpoint", checkpoint::HINTS),
            Some(View::Store(_)) => ("store", store::HINTS),
            Some(View::Search(_)) => ("search", search::HINTS),
            Some(View::Actions(_)) => ("actions", actions::HINTS),
            Some(View::Help(_)) => ("help", help::HINTS),
            None => ("", ""),
        };
        // The database's name is cut to leave room for the view's.
        let db = crate::output::sanitize::one_line(&self.src.shown_db());
        let fixed = width::width(&format!(" memctl browse ·  · {name} (read-only)"));
        let db = width::squeeze(&[&db], 12, (title.width as usize).saturating_sub(fixed));
        let head = format!(" memctl browse · {} · {name} (read-only)", db[0]);
        f.render_widget(
            Paragraph::new(head).style(Style::default().add_modifier(Modifier::REVERSED)),
            title,
        );
        match self.stack.last_mut() {
            Some(View::Threads(v)) => v.draw(f, body),
            Some(View::History(v)) => v.draw(f, body),
            Some(View::Checkpoint(v)) => v.draw(f, body),
            Some(View::Store(v)) => v.draw(f, body),
            Some(View::Search(v)) => v.draw(f, body),
            Some(View::Actions(v)) => v.draw(f, body),
            Some(View::Help(v)) => v.draw(f, body),
            None => {}
        }
        let line = match &self.status {
            Some(s) => Line::from(Span::styled(
                format!(" {s}"),
                Style::default().add_modifier(Modifier::BOLD),
            )),
            None => Line::from(format!(" {hints}")),
        };
        f.render_widget(Paragraph::new(line), status);
    }
}

/// Moves a selection `sel` in a list of `len` rows by the navigation keys (arrows, j/k,
/// PageUp/PageDown, g/G, Home/End); `page` rows per page. True when the key was one.
pub fn navigate(key: &KeyEvent, sel: &mut usize, len: usize, page: usize) -> bool {
    let last = len.saturating_sub(1);
    match key.code {
        KeyCode::Down | KeyCode::Char('j') => *sel = (*sel + 1).min(last),
        KeyCode::Up | KeyCode::Char('k') => *sel = sel.saturating_sub(1),
        KeyCode::PageDown | KeyCode::Char(' ') => *sel = (*sel + page.max(1)).min(last),
        KeyCode::PageUp => *sel = sel.saturating_sub(page.max(1)),
        KeyCode::Char('g') | KeyCode::Home => *sel = 0,
        KeyCode::Char('G') | KeyCode::End => *sel = last,
        _ => return false,
    }
    true
}

/// A table cell aligned right (numbers).
pub fn right(s: impl Into<String>) -> ratatui::widgets::Cell<'static> {
    ratatui::widgets::Cell::from(Line::from(s.into()).alignment(ratatui::layout::Alignment::Right))
}

/// A thread id or other argument quoted for a POSIX shell when it needs it.
pub fn shell_word(s: &str) -> String {
    let plain = !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./:@%+=,".contains(c));
    if plain {
        s.to_owned()
    } else {
        format!("'{}'", s.replace('\'', "'\\''"))
    }
}

/// Runs the browser on a real terminal until the user quits: draws, waits for a key,
/// handles it (a resize just redraws).
pub fn run<B: ratatui::backend::Backend>(
    terminal: &mut ratatui::Terminal<B>,
    app: &mut App,
) -> Result<()> {
    while !app.quit {
        terminal.draw(|f| app.draw(f))?;
        // Work left for the screen is done a step at a time while no key waits.
        while app.working() && !crossterm::event::poll(std::time::Duration::ZERO)? {
            app.work();
            terminal.draw(|f| app.draw(f))?;
        }
        if let crossterm::event::Event::Key(key) = crossterm::event::read()? {
            app.on_key(key);
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shell_words_are_quoted_when_they_need_it() {
        assert_eq!(shell_word("tools"), "tools");
        assert_eq!(shell_word("user-42/a.b"), "user-42/a.b");
        assert_eq!(shell_word("two words"), "'two words'");
        assert_eq!(shell_word("it's"), "'it'\\''s'");
        assert_eq!(shell_word("$(rm -rf /)"), "'$(rm -rf /)'");
        assert_eq!(shell_word(""), "''");
    }

    /// The browser on a copy of a fixture (the file is only read).
    fn app() -> (tempfile::TempDir, App) {
        let dir = tempfile::tempdir().expect("tempdir");
        let db = dir.path().join("new.sqlite");
        let fixture = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/new.sqlite");
        std::fs::copy(fixture, &db).expect("copy");
        let ctx = crate::jobs::Ctx {
            db: Some(db),
            ..Default::default()
        };
        let app = App::new(Source::new(ctx), None).expect("opens");
        (dir, app)
    }

    /// A note a job (or a layer below, through the installed writer) has is shown on the
    /// status line, escaped; an error of the same key keeps the line.
    #[test]
    fn notes_go_to_the_status_line() {
        let (_dir, mut app) = app();
        assert_eq!(app.status, None);
        app.source().notes().push("careful:\x1b[2J here");
        app.source().notes().push("the last one\u{1b}[2J");
        app.on_key(KeyEvent::from(KeyCode::Down));
        assert_eq!(app.status.as_deref(), Some("the last one\\u{1b}[2J"));
        // The next key clears it; an error is not replaced by a note.
        app.on_key(KeyEvent::from(KeyCode::Down));
        assert_eq!(app.status, None);
        app.error(anyhow::anyhow!("it failed"));
        app.source().notes().push("a note");
        app.show_notes();
        assert_eq!(app.status.as_deref(), Some("it failed"));
        assert!(app.source().notes().take().is_empty(), "the note was taken");
    }
}
