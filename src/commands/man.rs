//! `memctl man DIR`: man pages from the clap definition (clap_mangen), one per command.

use std::io::Write;

use anyhow::{Context, Result};
use clap::CommandFactory;

use crate::cli::{Cli, ManArgs};

/// Writes every page into `args.dir` (created if missing) and prints the path of each.
pub fn run(args: &ManArgs, out: &mut dyn Write) -> Result<()> {
    std::fs::create_dir_all(&args.dir)
        .with_context(|| format!("cannot create '{}'", args.dir.display()))?;
    for (name, page) in pages()? {
        let path = args.dir.join(&name);
        std::fs::write(&path, page)
            .with_context(|| format!("cannot write '{}'", path.display()))?;
        writeln!(out, "{}", path.display())?;
    }
    Ok(())
}

/// The pages, `(file name, roff text)`: `memctl.1`, then one per command and nested command
/// (`memctl-threads.1`, `memctl-threads-list.1`, …), hidden ones left out. The same bytes on
/// every machine: no date, and environment variables named, never their values.
pub fn pages() -> Result<Vec<(String, Vec<u8>)>> {
    let mut cmd = Cli::command().disable_help_subcommand(true);
    cmd.build();
    let mut pages = Vec::new();
    collect(&cmd, &mut pages)?;
    Ok(pages)
}

fn collect(cmd: &clap::Command, pages: &mut Vec<(String, Vec<u8>)>) -> Result<()> {
    let man = clap_mangen::Man::new(cmd.clone());
    let mut page = Vec::new();
    man.render(&mut page)
        .with_context(|| format!("cannot render the page of '{}'", cmd.get_name()))?;
    pages.push((man.get_filename(), page));
    for sub in cmd.get_subcommands().filter(|s| !s.is_hide_set()) {
        collect(sub, pages)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    #[test]
    fn one_page_per_command_named_as_man_expects() {
        let pages = super::pages().expect("pages");
        let names: Vec<&str> = pages.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(names[0], "memctl.1");
        for name in [
            "memctl-threads.1",
            "memctl-threads-list.1",
            "memctl-forget.1",
            "memctl-man.1",
        ] {
            assert!(names.contains(&name), "{name} in {names:?}");
        }
        let top = String::from_utf8_lossy(&pages[0].1);
        assert!(top.contains("PostgreSQL"), "{top}");
    }
}
