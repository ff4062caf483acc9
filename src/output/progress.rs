//! Progress bars on stderr, only when stderr is a terminal.

use std::io::IsTerminal;
use std::sync::atomic::{AtomicBool, Ordering};

use indicatif::{ProgressBar, ProgressStyle};

/// Set by `--quiet`: no bar at all.
static QUIET: AtomicBool = AtomicBool::new(false);

/// Hides every progress bar from now on (`--quiet`: nothing but errors).
pub fn set_quiet(quiet: bool) {
    QUIET.store(quiet, Ordering::Relaxed);
}

/// A bar for `len` items, hidden when stderr is not a terminal (cron, pipes, tests) or with
/// `--quiet`.
pub fn bar(len: u64, what: &str) -> ProgressBar {
    if QUIET.load(Ordering::Relaxed) || !std::io::stderr().is_terminal() || len < 2 {
        return ProgressBar::hidden();
    }
    let pb = ProgressBar::new(len);
    if let Ok(style) = ProgressStyle::with_template("{prefix} [{bar:30}] {pos}/{len} {wide_msg}") {
        pb.set_style(style.progress_chars("=> "));
    }
    pb.set_prefix(what.to_owned());
    // Redrawn on its own too: an update the draw rate skipped is shown within 200 ms, even
    // when the next one is a long model request away.
    pb.enable_steady_tick(std::time::Duration::from_millis(200));
    pb
}

/// True when progress may be drawn: stderr is a terminal and `--quiet` was not given.
fn shown() -> bool {
    !QUIET.load(Ordering::Relaxed) && std::io::stderr().is_terminal()
}

/// A spinner for one phase of a long command whose length is not known (`forget`'s erasing
/// of freed space, its verification): `{what}: {message}` with the elapsed time, ticking on
/// its own; hidden as [`bar`] is. Change the message with `set_message` as the phase moves on;
/// `finish_and_clear` when done.
pub fn phase(what: &str, message: &str) -> ProgressBar {
    if !shown() {
        return ProgressBar::hidden();
    }
    let pb = ProgressBar::new_spinner();
    if let Ok(style) = ProgressStyle::with_template("{prefix} {spinner} {wide_msg} ({elapsed})") {
        pb.set_style(style);
    }
    pb.set_prefix(what.to_owned());
    pb.set_message(message.to_owned());
    pb.enable_steady_tick(std::time::Duration::from_millis(120));
    pb
}
