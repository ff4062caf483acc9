//! Every example of README.md and docs/*.md runs, in each page's order, and exits as the page
//! says (issue #46). What counts as an example, and the `# exit N` / `# needs: WHAT` markers,
//! are described in CONTRIBUTING.md ("Examples in the documentation are tests"):
//!
//! - in a ```` ```console ```` block, each `$ ` line is a command (continued over a trailing
//!   `\` or an open quote); the lines after it are its output as shown (not compared);
//! - in a ```` ```sh ```` block, each line that runs `memctl` (as its first command or after
//!   `&&`, `||`, `;`, `|`, past `NAME=value` assignments);
//! - each runs with `bash -c` in one temporary directory per page, holding copies of the
//!   committed fixtures under `fixtures/`, the built memctl first on the PATH and HOME inside
//!   it; `export NAME=VALUE` lines set a variable for the page's later commands.
//!
//! `needs: postgres` and `needs: python` examples run in
//! `docs_examples_with_the_environment` (`--features env-tests`: `$PG` and `$PG_JS_STORE` are
//! fresh copies of the Postgres fixtures, `$PG_EMPTY` an empty database, `python` is
//! `.venv/new`'s); `needs: endpoint` and
//! `needs: terminal` never run. Each example left out is printed by name with the reason.

mod common;

use std::io::Write;
use std::path::PathBuf;
use std::process::Command;

/// One example command of a page.
#[derive(Debug, Clone, PartialEq)]
struct Example {
    /// The page, relative to the repository root.
    page: String,
    /// Its first line in the page (1-based).
    line: usize,
    /// The command as bash runs it (without the `$ ` prompt).
    command: String,
    /// The exit code the page shows (`# exit N`), else 0.
    exit: i32,
    /// What it needs beyond the binary and the fixtures (`# needs: WHAT`).
    needs: Option<String>,
}

/// What an example may need; anything else in a `needs:` marker is a typo.
const NEEDS: [&str; 4] = ["postgres", "python", "endpoint", "terminal"];

/// The quote state after `text` (started outside any quote), and where a comment starts
/// (a `#` at the start of a word, outside quotes), as bash reads it.
fn scan(text: &str) -> (Option<char>, Option<usize>) {
    let mut quote: Option<char> = None;
    let mut escaped = false;
    let mut prev_blank = true;
    for (i, c) in text.char_indices() {
        if escaped {
            escaped = false;
            prev_blank = false;
            continue;
        }
        match quote {
            Some('\'') => {
                if c == '\'' {
                    quote = None;
                }
            }
            Some(_) => match c {
                '\\' => escaped = true,
                '"' => quote = None,
                _ => {}
            },
            None => match c {
                '\\' => escaped = true,
                '\'' | '"' => quote = Some(c),
                '#' if prev_blank => return (None, Some(i)),
                _ => {}
            },
        }
        prev_blank = quote.is_none() && c.is_whitespace();
    }
    (quote, None)
}

/// True when `text` is a whole command: no open quote, no trailing `\`.
fn complete(text: &str) -> bool {
    scan(text).0.is_none() && !text.trim_end().ends_with('\\')
}

/// The `exit N` and `needs: WHAT` of a command's trailing comment.
fn markers(command: &str) -> (i32, Option<String>) {
    let Some(at) = scan(command).1 else {
        return (0, None);
    };
    let comment = &command[at..];
    let word_after = |key: &str| -> Option<String> {
        let rest = &comment[comment.find(key)? + key.len()..];
        let word: String = rest
            .trim_start()
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric())
            .collect();
        Some(word)
    };
    let exit = word_after("exit ")
        .and_then(|w| w.parse().ok())
        .unwrap_or(0);
    let needs = word_after("needs:");
    if let Some(n) = &needs {
        assert!(
            NEEDS.contains(&n.as_str()),
            "unknown `needs: {n}` in {command:?} (known: {NEEDS:?})"
        );
    }
    (exit, needs)
}

/// True when one of the line's commands (split on `&&`, `||`, `;`, `|`) is `memctl`, past
/// `NAME=value` assignments.
fn runs_memctl(line: &str) -> bool {
    let code = match scan(line).1 {
        Some(at) => &line[..at],
        None => line,
    };
    code.split(['&', '|', ';']).any(|part| {
        part.split_whitespace()
            .find(|w| !w.contains('=') || w.starts_with('-'))
            .is_some_and(|w| w == "memctl")
    })
}

/// The examples of one page's text, in order.
fn extract(page: &str, text: &str) -> Vec<Example> {
    let lines: Vec<&str> = text.lines().collect();
    let mut examples = Vec::new();
    let mut fence: Option<(String, usize)> = None; // (info string, indent)
    let mut i = 0;
    while i < lines.len() {
        let raw = lines[i];
        let trimmed = raw.trim_start();
        if trimmed.starts_with("```") {
            fence = match fence {
                Some(_) => None,
                None => Some((
                    trimmed.trim_start_matches('`').trim().to_owned(),
                    raw.len() - trimmed.len(),
                )),
            };
            i += 1;
            continue;
        }
        let Some((info, indent)) = &fence else {
            i += 1;
            continue;
        };
        let body = |l: &str| -> String {
            let cut = l.len() - l.trim_start().len();
            l[cut.min(*indent)..].to_owned()
        };
        let line = body(raw);
        let (start, mut command) = match info.as_str() {
            "console" => match line.strip_prefix("$ ") {
                Some(c) => (i, c.to_owned()),
                None => {
                    i += 1;
                    continue;
                }
            },
            "sh" => (i, line.clone()),
            _ => {
                i += 1;
                continue;
            }
        };
        while !complete(&command)
            && i + 1 < lines.len()
            && !lines[i + 1].trim_start().starts_with("```")
        {
            i += 1;
            command.push('\n');
            command.push_str(&body(lines[i]));
        }
        i += 1;
        if info == "sh" && !runs_memctl(&command.replace("\\\n", " ")) {
            continue;
        }
        let (exit, needs) = markers(&command);
        examples.push(Example {
            page: page.to_owned(),
            line: start + 1,
            command,
            exit,
            needs,
        });
    }
    examples
}

/// README.md and docs/*.md, in that order (docs/ by name).
fn pages() -> Vec<PathBuf> {
    let root = common::root();
    let mut docs: Vec<PathBuf> = std::fs::read_dir(root.join("docs"))
        .expect("docs/")
        .map(|e| e.expect("a docs/ entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "md"))
        .collect();
    docs.sort();
    let mut all = vec![root.join("README.md")];
    all.extend(docs);
    all
}

/// A fresh directory for a page: `fixtures/` with copies of the committed databases and dumps,
/// and an empty `home/`.
fn workdir() -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("temp dir");
    let fixtures = dir.path().join("fixtures");
    std::fs::create_dir_all(&fixtures).expect("fixtures/");
    std::fs::create_dir_all(dir.path().join("home")).expect("home/");
    for entry in std::fs::read_dir(common::root().join("fixtures")).expect("fixtures/") {
        let path = entry.expect("a fixture").path();
        let keep = path
            .extension()
            .is_some_and(|e| e == "sqlite" || e == "sql");
        if keep && path.is_file() {
            let name = path.file_name().expect("a file name");
            std::fs::copy(&path, fixtures.join(name)).expect("copy a fixture");
        }
    }
    dir
}

/// `export NAME=VALUE` (VALUE unquoted), else None.
fn export(command: &str) -> Option<(String, String)> {
    let code = match scan(command).1 {
        Some(at) => &command[..at],
        None => command,
    };
    let (name, value) = code.trim().strip_prefix("export ")?.split_once('=')?;
    let value = value.trim();
    let value = value
        .strip_prefix('\'')
        .and_then(|v| v.strip_suffix('\''))
        .or_else(|| value.strip_prefix('"').and_then(|v| v.strip_suffix('"')))
        .unwrap_or(value);
    Some((name.trim().to_owned(), value.to_owned()))
}

/// How the examples run: without the environment, or with it (`--features env-tests`).
#[derive(Clone, Copy, PartialEq)]
enum Mode {
    Plain,
    Environment,
}

/// Why an example does not run in `mode`, if it does not.
fn left_out(example: &Example, mode: Mode) -> Option<&'static str> {
    match (example.needs.as_deref(), mode) {
        (None, _) => None,
        (Some("postgres"), Mode::Plain) => {
            Some("needs a PostgreSQL server (runs with --features env-tests)")
        }
        (Some("python"), Mode::Plain) => {
            Some("needs real LangGraph (runs with --features env-tests)")
        }
        (Some("postgres" | "python"), Mode::Environment) => None,
        (Some("endpoint"), _) => Some("needs a model endpoint"),
        (Some("terminal"), _) => Some("needs an answer typed in a terminal"),
        (Some(_), _) => Some("needs something unknown"),
    }
}

/// Runs every example of every page in `mode`; returns how many ran, and fails with every
/// example that exited otherwise than its page says.
fn run_all(mode: Mode) -> usize {
    let memctl = PathBuf::from(env!("CARGO_BIN_EXE_memctl"));
    let mut path = vec![memctl.parent().expect("the binary's directory").to_owned()];
    if mode == Mode::Environment {
        path.push(
            common::python("new")
                .parent()
                .expect("the venv's bin/")
                .to_owned(),
        );
    }
    path.extend(std::env::split_paths(
        &std::env::var_os("PATH").unwrap_or_default(),
    ));
    let path = std::env::join_paths(path).expect("a PATH");

    let mut ran = 0;
    let mut failures = Vec::new();
    let mut skipped = Vec::new();
    for page in pages() {
        let rel = page
            .strip_prefix(common::root())
            .expect("under the root")
            .display()
            .to_string();
        let text = std::fs::read_to_string(&page).expect("a page");
        let examples = extract(&rel, &text);
        if examples.is_empty() {
            continue;
        }
        let dir = workdir();
        let mut env: Vec<(String, String)> = Vec::new();
        // The Postgres databases the page's examples name, made when first needed.
        let mut databases = Vec::new();
        for ex in &examples {
            if let Some(why) = left_out(ex, mode) {
                skipped.push(format!("{}:{}: {} ({why})", ex.page, ex.line, ex.command));
                continue;
            }
            if ex.needs.as_deref() == Some("postgres") && databases.is_empty() {
                let hint = rel.replace(|c: char| !c.is_ascii_alphanumeric(), "_");
                let pg = common::pg::TestDb::fixture(&format!("docs_{hint}"));
                let js = common::pg::TestDb::js_store_fixture(&format!("docs_js_{hint}"));
                let empty = common::pg::TestDb::empty(&format!("docs_empty_{hint}"));
                env.push(("PG".into(), pg.url.clone()));
                env.push(("PG_JS_STORE".into(), js.url.clone()));
                env.push(("PG_EMPTY".into(), empty.url.clone()));
                databases.push(pg);
                databases.push(js);
                databases.push(empty);
            }
            if let Some((name, value)) = export(&ex.command) {
                // The page's own URL of a server stands for the test's database.
                if ex.needs.is_none() {
                    env.push((name, value));
                }
                continue;
            }
            ran += 1;
            let out = Command::new("timeout")
                .arg("120")
                .arg("bash")
                .arg("-c")
                .arg(format!("set -o pipefail\n{}", ex.command))
                .current_dir(dir.path())
                .env_remove("MEMCTL_DB")
                .env_remove("LANGGRAPH_AES_KEY")
                .env_remove("MEMCTL_SCHEMA")
                .env("NO_COLOR", "1")
                .env("PATH", &path)
                .env("HOME", dir.path().join("home"))
                .envs(env.iter().map(|(k, v)| (k, v)))
                .stdin(std::process::Stdio::null())
                .output()
                .expect("bash runs");
            let code = out.status.code().unwrap_or(-1);
            let stderr = String::from_utf8_lossy(&out.stderr);
            if code != ex.exit || stderr.contains("panicked") {
                failures.push(format!(
                    "{}:{}: `{}` exited {code}, the page says {}\n  stderr: {}",
                    ex.page,
                    ex.line,
                    ex.command,
                    ex.exit,
                    stderr.trim_end().replace('\n', "\n          ")
                ));
            }
        }
    }
    // Printed past the test harness's capture, so a run shows what it left out.
    let mut err = std::io::stderr();
    for s in &skipped {
        let _ = writeln!(err, "docs example not run: {s}");
    }
    assert!(
        failures.is_empty(),
        "{} of {ran} documentation examples did not exit as their page says:\n{}",
        failures.len(),
        failures.join("\n")
    );
    ran
}

#[test]
fn every_documentation_example_exits_as_its_page_says() {
    let ran = run_all(Mode::Plain);
    // The README's tour and the guide's pages hold dozens of examples: a parser that finds
    // none would pass vacuously.
    assert!(ran >= 60, "only {ran} examples found");
}

#[test]
#[cfg_attr(
    not(feature = "env-tests"),
    ignore = "needs scripts/test.sh's environment (--features env-tests)"
)]
fn docs_examples_with_the_environment() {
    run_all(Mode::Environment);
}

#[test]
fn the_extractor_reads_the_conventions() {
    let page = "\
text
```console
$ cp fixtures/new.sqlite demo.sqlite
$ memctl find --db demo.sqlite nothing-at-all     # exit 1
 output line
$ python -c \"print(1)
print(2)\"     # needs: python
```
```sh
pip install .
OPENAI_API_KEY=x memctl summarize --db demo.sqlite \\
    --all  # needs: endpoint
mkdir -p d && memctl man d
```
```
$ memctl not-an-example
```
  ```console
  $ memctl stats --db demo.sqlite | grep '^store:'
  ```
";
    let got: Vec<(usize, String, i32, Option<String>)> = extract("p.md", page)
        .into_iter()
        .map(|e| (e.line, e.command, e.exit, e.needs))
        .collect();
    let want = vec![
        (3, "cp fixtures/new.sqlite demo.sqlite".to_owned(), 0, None),
        (
            4,
            "memctl find --db demo.sqlite nothing-at-all     # exit 1".to_owned(),
            1,
            None,
        ),
        (
            6,
            "python -c \"print(1)\nprint(2)\"     # needs: python".to_owned(),
            0,
            Some("python".to_owned()),
        ),
        (
            11,
            "OPENAI_API_KEY=x memctl summarize --db demo.sqlite \\\n    --all  # needs: endpoint"
                .to_owned(),
            0,
            Some("endpoint".to_owned()),
        ),
        (13, "mkdir -p d && memctl man d".to_owned(), 0, None),
        (
            19,
            "memctl stats --db demo.sqlite | grep '^store:'".to_owned(),
            0,
            None,
        ),
    ];
    assert_eq!(got, want);
    assert_eq!(
        export("export K='a b'   # the key"),
        Some(("K".into(), "a b".into()))
    );
    assert_eq!(export("memctl stats"), None);
}

#[test]
fn every_page_of_the_guide_is_linked_from_its_index() {
    let index = std::fs::read_to_string(common::root().join("docs/README.md")).expect("index");
    for page in pages().iter().skip(1) {
        let name = page.file_name().expect("a name").to_string_lossy();
        if name != "README.md" {
            assert!(
                index.contains(&format!("]({name})")),
                "docs/README.md does not link {name}"
            );
        }
    }
}

/// The jobs of every crontab in the docs (```` ```cron ```` blocks) name memctl by an absolute
/// path, or the crontab sets a `PATH=` first: cron runs jobs with `PATH=/usr/bin:/bin`, where
/// a bare `memctl` is `not found` (exit 127), as the README's crontab was (issue #46).
#[test]
fn crontabs_name_memctl_by_its_path() {
    let mut jobs = 0;
    for page in pages() {
        let text = std::fs::read_to_string(&page).expect("a page");
        let mut in_cron = false;
        let mut path_set = false;
        for (n, line) in text.lines().enumerate() {
            let t = line.trim();
            if t.starts_with("```") {
                in_cron = !in_cron && t.trim_start_matches('`') == "cron";
                path_set = false;
                continue;
            }
            if !in_cron || t.is_empty() || t.starts_with('#') {
                continue;
            }
            if t.starts_with("PATH=") {
                path_set = true;
                continue;
            }
            // A job: five time fields, then the command.
            let command: Vec<&str> = t.split_whitespace().skip(5).collect();
            let Some(program) = command.first() else {
                continue;
            };
            jobs += 1;
            assert!(
                path_set || program.starts_with('/'),
                "{}:{}: the cron job runs `{program}` by a bare name, which cron's PATH does not find: {t}",
                page.display(),
                n + 1
            );
            assert!(
                program.ends_with("/memctl") || program == &"memctl",
                "{}:{}: a cron job of another program: {t}",
                page.display(),
                n + 1
            );
        }
    }
    assert!(jobs >= 3, "the crontab of docs/cron.md has {jobs} jobs");
}
