//! The actions panel: what memctl would do to the selected thread, as the exact command lines
//! (each with `--dry-run`, which previews and writes nothing). The browser never runs them:
//! copy one to run it.

use crossterm::event::{KeyCode, KeyEvent};
use ratatui::layout::Rect;
use ratatui::widgets::{Block, Borders, Paragraph, Wrap};
use ratatui::Frame;

use super::data::Source;
use super::width::{squeeze, width};
use super::{shell_word, Action};
use crate::output::sanitize::one_line;

/// The key hints of this view.
pub const HINTS: &str = "copy a command to run it (the browser never writes) · Esc back";

/// The actions panel's state: the command lines.
pub struct Actions {
    thread: String,
    lines: Vec<(String, String)>,
}

impl Actions {
    /// The commands for `thread` of the source's database.
    pub fn new(src: &Source, thread: &str) -> Actions {
        let mut base = format!("memctl {{}} --db {}", shell_word(&src.shown_db()));
        for (flag, value) in src.extra_flags() {
            base.push_str(&format!(" {flag} {}", shell_word(&value)));
        }
        let t = shell_word(thread);
        let cmd = |name: &str, rest: &str| {
            format!("{} --thread {t} {rest}--dry-run", base.replace("{}", name))
        };
        let lines = vec![
            (
                "keep the newest 20 messages (a new checkpoint; history stays)".to_owned(),
                cmd("trim", "--keep 20 "),
            ),
            (
                "remove the last message (tool calls kept whole)".to_owned(),
                cmd("rm", "--index -1 "),
            ),
            (
                "summarize all but the newest 6 messages (needs --endpoint and --model to run)"
                    .to_owned(),
                cmd("summarize", "--keep 6 "),
            ),
            (
                "keep the newest 5 checkpoints, delete the older ones".to_owned(),
                cmd("gc", "--keep-checkpoints 5 "),
            ),
            (
                "delete the whole thread (as SqliteSaver.delete_thread)".to_owned(),
                cmd("prune", ""),
            ),
        ];
        Actions {
            thread: thread.to_owned(),
            lines,
        }
    }

    /// The command lines shown.
    pub fn commands(&self) -> impl Iterator<Item = &str> {
        self.lines.iter().map(|(_, c)| c.as_str())
    }

    /// Handles a key.
    pub fn on_key(&mut self, key: KeyEvent) -> Action {
        match key.code {
            KeyCode::Esc | KeyCode::Char('q') | KeyCode::Left | KeyCode::Char('h') => Action::Back,
            _ => Action::None,
        }
    }

    /// Draws the commands.
    pub fn draw(&mut self, f: &mut Frame, area: Rect) {
        let mut text: Vec<ratatui::text::Line> = vec![
            " Each command previews with --dry-run; drop --dry-run to apply it.".into(),
            "".into(),
        ];
        for (what, line) in &self.lines {
            text.push(format!(" # {what}").into());
            text.push(format!(" {}", one_line(line)).into());
            text.push("".into());
        }
        let fixed = width(" actions for thread  (shown, never run) ");
        let thread = squeeze(
            &[&one_line(&self.thread)],
            8,
            (area.width as usize).saturating_sub(fixed),
        );
        let block = Block::default().borders(Borders::TOP).title(format!(
            " actions for thread {} (shown, never run) ",
            thread[0]
        ));
        f.render_widget(
            Paragraph::new(text).block(block).wrap(Wrap { trim: false }),
            area,
        );
    }
}
