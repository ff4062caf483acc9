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
    // The read commands' progress bars would draw over the screen.
    crate::output::progress::set_quiet(true);
    let mut app = App::new(Source::new(g), args.thread.as_deref())?;
    // Notes the read commands print on stderr would draw over the screen too: while the UI
    // runs, stderr goes to /dev/null (the UI shows each read's error on its status line).
    let saved = silence_stderr();
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
            .and_then(|mut t| crate::tui::run(&mut t, &mut app))
    } else {
        crate::tui::run(&mut terminal, &mut app)
    };
    ratatui::restore();
    restore_stderr(saved);
    result
}

/// Points stderr at /dev/null, returning the saved descriptor (`None` when it could not be
/// done: then notes may show on the screen until the next redraw).
#[cfg(unix)]
fn silence_stderr() -> Option<i32> {
    use std::os::fd::AsRawFd;
    let null = std::fs::OpenOptions::new()
        .write(true)
        .open("/dev/null")
        .ok()?;
    // SAFETY: dup/dup2 on descriptors this process owns; `null` stays open until dup2 made
    // its copy.
    unsafe {
        let saved = libc::dup(2);
        if saved < 0 {
            return None;
        }
        if libc::dup2(null.as_raw_fd(), 2) < 0 {
            libc::close(saved);
            return None;
        }
        Some(saved)
    }
}

/// Gives stderr back.
#[cfg(unix)]
fn restore_stderr(saved: Option<i32>) {
    if let Some(fd) = saved {
        // SAFETY: `fd` is the descriptor `silence_stderr` saved; it is closed once.
        unsafe {
            libc::dup2(fd, 2);
            libc::close(fd);
        }
    }
}

#[cfg(not(unix))]
fn silence_stderr() -> Option<i32> {
    None
}

#[cfg(not(unix))]
fn restore_stderr(_: Option<i32>) {}

/// The job context of the global options (`browse`'s [`Source`] is made from it).
impl From<&GlobalArgs> for crate::jobs::Ctx {
    fn from(g: &GlobalArgs) -> crate::jobs::Ctx {
        g.ctx()
    }
}
