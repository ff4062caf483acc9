//! `memctl show --thread T`: the state as a chat transcript, then other channels, then what
//! the thread is waiting on (read by `read::load_state`, rendered by `output::show`).

use std::io::Write;

use anyhow::Result;

use crate::cli::{GlobalArgs, ShowArgs};
use crate::output::show::ShowReport;

/// Runs `show`.
pub fn run(g: &GlobalArgs, args: &ShowArgs, out: &mut dyn Write) -> Result<()> {
    let store = super::open_read_only(g)?;
    let keys = super::keys(g);
    let thread = &args.thread.thread;
    let state = crate::read::load_state(&*store, &keys, thread, &g.ns, args.checkpoint.as_deref())?;
    let report = ShowReport::of(&state, thread, &g.ns, args.last)?;
    crate::output::show::write(out, crate::output::resolve_format(g.format), &report)
}
