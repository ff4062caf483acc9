//! `memctl completions SHELL`: shell completion scripts from the clap definition.

use std::io::Write;

use anyhow::Result;
use clap::CommandFactory;

use crate::cli::{Cli, CompletionsArgs};

/// Writes the completion script for the chosen shell.
pub fn run(args: &CompletionsArgs, out: &mut dyn Write) -> Result<()> {
    let mut cmd = Cli::command();
    clap_complete::generate(args.shell, &mut cmd, "memctl", out);
    Ok(())
}
