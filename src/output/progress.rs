//! Progress bars on stderr, only when stderr is a terminal.

use std::io::IsTerminal;

use indicatif::{ProgressBar, ProgressStyle};

/// A bar for `len` items, hidden when stderr is not a terminal (cron, pipes, tests).
pub fn bar(len: u64, what: &str) -> ProgressBar {
    if !std::io::stderr().is_terminal() || len < 2 {
        return ProgressBar::hidden();
    }
    let pb = ProgressBar::new(len);
    if let Ok(style) = ProgressStyle::with_template("{prefix} [{bar:30}] {pos}/{len} {wide_msg}") {
        pb.set_style(style.progress_chars("=> "));
    }
    pb.set_prefix(what.to_owned());
    pb
}
