//! `memctl browse`: flags -> the database opened read-only (by the read jobs) -> the terminal
//! UI ([`crate::tui`]), its notes on the status line.

use std::io::{IsTerminal, Write};

use anyhow::{bail, Result};

use crate::cli::{BrowseArgs, GlobalArgs};
use crate::tui::{data::Source, App};

/// Runs `browse`: refuses outside a terminal; reads the threads before taking the screen (so
/// a database that cannot be read is one error line as for any command), then runs the UI
/// until the user quits, and gives the terminal back as it was.
pub fn run(g: &GlobalArgs, args: &BrowseArgs, _out: &mut dyn Write) -> Result<()> {
    if !std::io::stdin().is_terminal() || !std::io::stdout().is_terminal() {
        bail!("browse needs a terminal (stdin and stdout); outside one use the plain commands: memctl threads list, history, show, diff, find, store");
    }
    // The read commands' progress bars would draw over the screen.
    crate::output::progress::set_quiet(true);
    let mut app = App::new(Source::new(g), args.thread.as_deref())?;
    // Notes written on stderr would draw over the screen: while the UI runs, the notes of the
    // layers below the jobs go where the jobs' own go, to the status line.
    let notes = app.source().notes();
    crate::notes::install(move |text| notes.push(text));
    let result = ui(&mut app);
    crate::notes::install(crate::output::notes::stderr);
    result
}

/// Takes the screen, runs the UI until the user quits, and gives the terminal back.
fn ui(app: &mut App) -> Result<()> {
    // Raw mode, the alternate screen, and a panic hook that gives the terminal back.
    let mut terminal = ratatui::try_init()?;
    let ascii = crate::tui::ascii::locale_is_ascii(|v| std::env::var(v).ok());
    let result = if ascii {
        drop(terminal);
        let backend = crate::tui::ascii::AsciiBackend {
            inner: ratatui::backend::CrosstermBackend::new(std::io::stdout()),
        };
        ratatui::Terminal::new(backend)
            .map_err(anyhow::Error::from)
            .and_then(|mut t| crate::tui::run(&mut t, app))
    } else {
        crate::tui::run(&mut terminal, app)
    };
    ratatui::restore();
    result
}

/// The job context of the global options (`browse`'s [`Source`] is made from it).
impl From<&GlobalArgs> for crate::jobs::Ctx {
    fn from(g: &GlobalArgs) -> crate::jobs::Ctx {
        g.ctx()
    }
}
