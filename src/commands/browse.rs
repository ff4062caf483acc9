//! `memctl browse`: flags -> the database opened read-only (by the read commands' functions)
//! -> the terminal UI ([`crate::tui`]).

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
    let mut app = App::new(Source::new(g), args.thread.as_deref())?;
    let mut terminal = ratatui::try_init()?;
    let result = crate::tui::run(&mut terminal, &mut app);
    ratatui::restore();
    result
}
