//! The house's rules, read from the source (#44): every arrow points down. Plain `cargo test`
//! (no database, no Python).

use std::path::{Path, PathBuf};

/// Every `.rs` file under `src/<dir>`, recursively.
fn sources(dir: &str) -> Vec<PathBuf> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        for entry in std::fs::read_dir(dir).expect("a source folder") {
            let path = entry.expect("an entry").path();
            if path.is_dir() {
                walk(&path, out);
            } else if path.extension().is_some_and(|e| e == "rs") {
                out.push(path);
            }
        }
    }
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src").join(dir);
    let mut out = Vec::new();
    if root.is_file() {
        out.push(root);
    } else {
        walk(&root, &mut out);
    }
    assert!(!out.is_empty(), "no source under src/{dir}");
    out
}

/// The code lines of a file (comments and doc comments left out).
fn code(path: &Path) -> Vec<(usize, String)> {
    std::fs::read_to_string(path)
        .expect("a source file")
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.trim_start().starts_with("//"))
        .map(|(i, l)| (i + 1, l.to_owned()))
        .collect()
}

/// Asserts no code line of `dir` holds any of `forbidden`.
fn none_of(dir: &str, forbidden: &[&str]) {
    let mut found = Vec::new();
    for path in sources(dir) {
        for (n, line) in code(&path) {
            for f in forbidden {
                if line.contains(f) {
                    found.push(format!("{}:{n}: {}", path.display(), line.trim()));
                }
            }
        }
    }
    assert!(
        found.is_empty(),
        "src/{dir} must not use {forbidden:?}:\n{}",
        found.join("\n")
    );
}

// (The forbidden names are spelt in pieces: this file is read by `duplicates`, not by these
// tests, but a reader grepping for a layer's imports should find only real ones.)

#[test]
fn jobs_know_no_front_end_and_write_nothing() {
    none_of(
        "jobs",
        &[
            concat!("crate::", "commands"),
            concat!("crate::", "cli"),
            concat!("crate::", "output"),
            concat!("crate::", "tui"),
            concat!("clap", "::"),
            concat!("println", "!"),
            concat!("eprintln", "!"),
            concat!("io::", "stdout"),
            concat!("io::", "stderr"),
        ],
    );
}

#[test]
fn the_browser_runs_jobs_not_the_command_line() {
    none_of(
        "tui",
        &[
            concat!("crate::", "commands"),
            concat!("crate::", "cli"),
            concat!("clap", "::"),
            concat!("serde_json::", "from_slice"),
        ],
    );
}

#[test]
fn output_renders_and_knows_no_command_line() {
    none_of(
        "output",
        &[
            concat!("crate::", "commands"),
            concat!("crate::", "cli"),
            concat!("clap", "::"),
        ],
    );
}

#[test]
fn storage_knows_nothing_above_it() {
    none_of(
        "storage",
        &[
            concat!("crate::", "ops"),
            concat!("crate::", "read"),
            concat!("crate::", "jobs"),
            concat!("crate::", "commands"),
            concat!("crate::", "output"),
            concat!("crate::", "tui"),
            concat!("crate::", "cli"),
            concat!("eprintln", "!"),
        ],
    );
}

#[test]
fn one_writer_for_stderr() {
    for dir in [
        "jobs", "commands", "tui", "storage", "read", "ops", "model", "codec", "tokens",
        "endpoint", "text", "overflow",
    ] {
        none_of(
            dir,
            &[concat!("eprintln", "!"), concat!("eprint", "!("), "dup2"],
        );
    }
}

#[test]
fn command_files_are_thin_and_call_no_sibling() {
    let siblings: Vec<String> = sources("commands")
        .iter()
        .filter_map(|p| p.file_stem().map(|s| s.to_string_lossy().into_owned()))
        .filter(|s| s != "mod")
        .collect();
    for path in sources("commands") {
        let lines = code(&path);
        assert!(
            lines.len() <= 250,
            "{}: {} lines of code; a command maps flags onto a job and renders",
            path.display(),
            lines.len()
        );
        for (n, line) in &lines {
            for s in &siblings {
                let call = format!("super::{s}::");
                let named = format!("commands::{s}::");
                assert!(
                    !line.contains(&call) && !line.contains(&named),
                    "{}:{n}: calls the command {s}: {}",
                    path.display(),
                    line.trim()
                );
            }
        }
    }
}
