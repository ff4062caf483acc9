//! `memctl man DIR`: man pages from the clap definition (clap_mangen), one per command.

use std::io::Write;

use std::path::Path;

use anyhow::{bail, Context, Result};
use clap::CommandFactory;

use crate::cli::{Cli, ManArgs};

/// Writes every page into `args.dir` and prints the path of each. A missing `DIR` whose
/// parent exists is created (that one directory, said on stderr); one whose parent is missing
/// is refused, nothing created, so a mistyped path does not become a directory chain.
pub fn run(args: &ManArgs, out: &mut dyn Write) -> Result<()> {
    if prepare(&args.dir)? {
        // Said with --quiet too.
        let sink = crate::output::notes::Terminal::default();
        crate::jobs::Sink::note(
            &sink,
            &format!("note: created the directory '{}'", args.dir.display()),
        );
    }
    for (name, page) in pages()? {
        let path = args.dir.join(&name);
        std::fs::write(&path, page)
            .with_context(|| format!("cannot write '{}'", path.display()))?;
        writeln!(out, "{}", path.display())?;
    }
    Ok(())
}

/// Makes sure `dir` is a directory to write into: true when this call created it.
fn prepare(dir: &Path) -> Result<bool> {
    match std::fs::metadata(dir) {
        Ok(m) if m.is_dir() => return Ok(false),
        Ok(_) => bail!("'{}' is not a directory", dir.display()),
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
            bail!("cannot use '{}': {e}", dir.display())
        }
        Err(_) => {}
    }
    let parent = match dir.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    if !parent.is_dir() {
        bail!(
            "'{}' does not exist, and neither does its parent '{}'; nothing created (make the parent first, e.g. mkdir -p '{}')",
            dir.display(),
            parent.display(),
            parent.display()
        );
    }
    std::fs::create_dir(dir).with_context(|| format!("cannot create '{}'", dir.display()))?;
    Ok(true)
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
