//! The committed completion scripts and man pages must match what the current CLI generates.

mod common;

#[test]
fn committed_completions_are_current() {
    for (shell, file) in [
        ("bash", "memctl.bash"),
        ("zsh", "_memctl"),
        ("fish", "memctl.fish"),
    ] {
        let generated = common::run_ok(&["completions", shell]);
        let path = common::root().join("completions").join(file);
        let committed = std::fs::read_to_string(&path).unwrap_or_default();
        assert!(
            generated == committed,
            "completions/{file} is stale: run `cargo run -- completions {shell} > completions/{file}`"
        );
    }
}

/// `man/` holds exactly the pages `memctl man` writes (no stale page of a removed command),
/// byte for byte.
#[test]
fn committed_man_pages_are_current() {
    let dir = tempfile::tempdir().expect("temp dir");
    let listed = common::run_ok(&["man", common::s(dir.path())]);
    let names = |d: &std::path::Path| -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(d)
            .map(|it| {
                it.filter_map(Result::ok)
                    .map(|e| e.file_name().to_string_lossy().into_owned())
                    .collect()
            })
            .unwrap_or_default();
        names.sort();
        names
    };
    let generated = names(dir.path());
    assert!(generated.len() > 10, "{generated:?}");
    assert_eq!(listed.lines().count(), generated.len(), "{listed}");
    let committed_dir = common::root().join("man");
    let stale = "man/ is stale: run scripts/completions.sh";
    assert_eq!(names(&committed_dir), generated, "{stale}");
    for name in &generated {
        let new = std::fs::read(dir.path().join(name)).expect("read");
        let old = std::fs::read(committed_dir.join(name)).unwrap_or_default();
        assert!(new == old, "man/{name} differs: {stale}");
    }
}

#[test]
fn clap_definition_is_consistent() {
    use clap::CommandFactory;
    memctl::cli::Cli::command().debug_assert();
}

/// Every example in a subcommand's --help parses with the current CLI (the flags exist and
/// combine), so the examples stay real.
#[test]
fn help_examples_are_valid_command_lines() {
    use clap::{CommandFactory, Parser};
    let cmd = memctl::cli::Cli::command();
    let mut checked = 0;
    for sub in cmd.get_subcommands() {
        let help = sub
            .get_after_help()
            .map(|h| h.to_string())
            .unwrap_or_default();
        assert!(
            help.starts_with("Examples:"),
            "{} has no examples",
            sub.get_name()
        );
        // Join continued lines, then take the memctl command lines.
        let joined = help.replace("\\\n", " ");
        for line in joined
            .lines()
            .map(str::trim)
            .filter(|l| l.contains("memctl "))
        {
            let start = line.find("memctl ").unwrap_or(0);
            let words: Vec<String> = line[start..]
                .split('|')
                .next()
                .unwrap_or("")
                .split('>')
                .next()
                .unwrap_or("")
                .split_whitespace()
                .map(|w| w.trim_matches('\'').to_owned())
                .collect();
            memctl::cli::Cli::try_parse_from(&words)
                .unwrap_or_else(|e| panic!("example `{line}` does not parse: {e}"));
            checked += 1;
        }
    }
    assert!(checked >= 30, "{checked} examples");
}

/// The help says what memctl reads now: SQLite files and PostgreSQL, and `--db` names every
/// connection-string form it takes.
#[test]
fn help_says_memctl_reads_sqlite_and_postgres() {
    let help = common::run_ok(&["--help"]);
    let about = help.lines().next().unwrap_or("");
    assert!(
        about.contains("SQLite") && about.contains("PostgreSQL"),
        "{about}"
    );
    let db = help
        .split("--db <PATH>")
        .nth(1)
        .and_then(|rest| rest.split("\n      --").next())
        .unwrap_or("");
    for form in [
        "postgresql://",
        "postgresql+psycopg://",
        "postgresql+psycopg2://",
        "host=",
        "dbname=",
    ] {
        assert!(db.contains(form), "--db's help lacks {form}: {db}");
    }
    let short = common::run_ok(&["-h"]);
    assert!(short.contains("PostgresSaver"), "{short}");
}

/// `memctl man DIR` with DIR's parent missing is refused in one line, and creates nothing: it
/// made the whole chain (`/nonexistent/dir`) without a word (issue #46).
#[test]
fn man_refuses_a_dir_whose_parent_is_missing() {
    let tmp = tempfile::tempdir().expect("temp dir");
    let dir = tmp.path().join("missing").join("man1");
    let err = common::run_err(&["man", common::s(&dir)]);
    assert!(err.contains("does not exist"), "{err}");
    assert!(err.contains("nothing created"), "{err}");
    assert!(
        !tmp.path().join("missing").exists(),
        "a directory was created"
    );
}

/// A missing DIR whose parent exists is created, that one directory, and memctl says so;
/// an existing one is written into without a note.
#[test]
fn man_creates_only_the_last_component_and_says_so() {
    let tmp = tempfile::tempdir().expect("temp dir");
    let dir = tmp.path().join("man1");
    let out = common::memctl()
        .args(["man", common::s(&dir)])
        .output()
        .expect("memctl runs");
    assert!(out.status.success(), "{out:?}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(
        stderr.trim_end(),
        format!("memctl: note: created the directory '{}'", dir.display())
    );
    assert!(dir.join("memctl.1").is_file());
    let again = common::memctl()
        .args(["man", common::s(&dir)])
        .output()
        .expect("memctl runs");
    assert!(again.status.success(), "{again:?}");
    assert!(again.stderr.is_empty(), "{again:?}");
    // A file where DIR should be is refused.
    let file = tmp.path().join("a-file");
    std::fs::write(&file, b"x").expect("write");
    let err = common::run_err(&["man", common::s(&file)]);
    assert!(err.contains("is not a directory"), "{err}");
}

/// The wheel installs the committed man pages and completions (pyproject.toml's
/// `[tool.maturin] data`, issue #46): `man/` is the data directory's `share/man/man1`, and each
/// completion there is a link to the committed script, so there is one copy of each.
/// scripts/wheel.sh checks what the wheel then installs into a venv.
#[test]
fn the_wheel_data_is_the_committed_man_pages_and_completions() {
    let root = common::root();
    let pyproject = std::fs::read_to_string(root.join("pyproject.toml")).expect("pyproject.toml");
    assert!(
        pyproject.contains("\ndata = \"packaging/wheel-data\"\n"),
        "pyproject.toml's [tool.maturin] names no data directory"
    );
    let share = root.join("packaging/wheel-data/data/share");
    let real = |p: std::path::PathBuf| {
        std::fs::canonicalize(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
    };
    assert_eq!(real(root.join("man")), real(share.join("man/man1")));
    assert!(
        std::fs::symlink_metadata(root.join("man"))
            .expect("man")
            .file_type()
            .is_symlink(),
        "man/ is a link to the wheel data's share/man/man1"
    );
    let mut listed = Vec::new();
    for (installed, committed) in [
        ("bash-completion/completions/memctl", "memctl.bash"),
        ("zsh/site-functions/_memctl", "_memctl"),
        ("fish/vendor_completions.d/memctl.fish", "memctl.fish"),
    ] {
        let link = share.join(installed);
        assert!(
            std::fs::symlink_metadata(&link)
                .unwrap_or_else(|e| panic!("{installed}: {e}"))
                .file_type()
                .is_symlink(),
            "{installed} is a link, not a second copy"
        );
        assert_eq!(
            real(link),
            real(root.join("completions").join(committed)),
            "{installed}"
        );
        listed.push(
            installed
                .split('/')
                .next()
                .expect("a top folder")
                .to_owned(),
        );
    }
    listed.push("man".into());
    listed.sort();
    let mut present: Vec<String> = std::fs::read_dir(&share)
        .expect("share/")
        .map(|e| {
            e.expect("an entry")
                .file_name()
                .to_string_lossy()
                .into_owned()
        })
        .collect();
    present.sort();
    assert_eq!(present, listed, "the wheel data holds something else");
}
