//! The `memctl` binary: parse, run, print one error line, exit.

use std::io::{self, Write};
use std::process::ExitCode;

use clap::FromArgMatches;
use memctl::{cli::Cli, commands, exit};

fn main() -> ExitCode {
    // MEMCTL_DB (MEMCTL_SCHEMA) set but empty means "not set" (as an empty PATH entry does), not a missing
    // value for --db.
    for var in ["MEMCTL_DB", "MEMCTL_SCHEMA"] {
        if std::env::var_os(var).is_some_and(|v| v.is_empty()) {
            std::env::remove_var(var);
        }
    }
    let cli = match Cli::from_arg_matches(&memctl::cli::command().get_matches()) {
        Ok(cli) => cli,
        Err(e) => e.exit(),
    };
    memctl::interrupt::install();
    let stdout = io::stdout();
    let mut out = io::BufWriter::new(stdout.lock());
    let result = commands::run(cli, &mut out).and_then(|()| out.flush().map_err(Into::into));
    match result {
        Ok(()) => ExitCode::from(exit::SUCCESS),
        Err(e) if is_broken_pipe(&e) => ExitCode::from(exit::SUCCESS),
        Err(e) if e.is::<exit::NoMatch>() => ExitCode::from(exit::ERROR),
        Err(e) if e.chain().any(|c| c.is::<memctl::interrupt::Interrupted>()) => {
            // The report of the threads done is printed; this line says what was not.
            if let Some(i) = e
                .chain()
                .find_map(|c| c.downcast_ref::<memctl::interrupt::Interrupted>())
            {
                let _ = writeln!(io::stderr(), "memctl: {i}");
            }
            ExitCode::from(exit::INTERRUPTED)
        }
        Err(e) if e.is::<memctl::output::confirm::Declined>() => {
            // The question on a terminal was not answered yes: nothing was written.
            let _ = writeln!(io::stderr(), "memctl: nothing done");
            ExitCode::from(exit::ERROR)
        }
        Err(e) => {
            let _ = writeln!(
                io::stderr(),
                "memctl: error: {}",
                memctl::output::sanitize::one_line(&one_line(&format!("{e:#}")))
            );
            if e.chain().any(|c| c.is::<exit::Usage>()) {
                ExitCode::from(exit::USAGE)
            } else if e.is::<exit::Partial>() {
                ExitCode::from(exit::PARTIAL)
            } else {
                ExitCode::from(exit::ERROR)
            }
        }
    }
}

/// Errors are one line: multi-line messages (a regex error with its caret) are folded; then
/// tabs and every other control character are escaped (`\t`, `\u{1b}`), as table cells are.
fn one_line(text: &str) -> String {
    text.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect::<Vec<_>>()
        .join(" ")
}

/// `memctl threads list | head` closes the pipe early: that is not an error.
fn is_broken_pipe(e: &anyhow::Error) -> bool {
    e.chain().any(|c| {
        c.downcast_ref::<io::Error>()
            .is_some_and(|io| io.kind() == io::ErrorKind::BrokenPipe)
            || c.downcast_ref::<serde_json::Error>()
                .is_some_and(|j| j.io_error_kind() == Some(io::ErrorKind::BrokenPipe))
    })
}
