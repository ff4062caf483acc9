//! Every flag does what it says, and flags that do not apply are errors (issue #13).

mod common;

use std::path::Path;

use common::{fixture, memctl, run_err, run_json, run_ok, s, temp_copy};

fn code_and_stderr(args: &[&str]) -> (Option<i32>, String) {
    let out = memctl().args(args).output().expect("runs");
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
    (out.status.code(), stderr)
}

#[test]
fn flags_that_do_not_apply_are_refused() {
    let db = fixture("new.sqlite");
    let db = s(&db);
    // trim --thread with the batch filters: a usage error, not silently ignored.
    for extra in [["--idle", "7d"], ["--min-messages", "3"]] {
        let mut args = vec![
            "trim",
            "--db",
            db,
            "--thread",
            "1",
            "--keep",
            "2",
            "--dry-run",
        ];
        args.extend(extra);
        let (code, stderr) = code_and_stderr(&args);
        assert_eq!(code, Some(2), "{args:?}: {stderr}");
    }
    // trim --keep 0 keeps nothing: refused, pointing at rm --all-messages.
    let (code, stderr) = code_and_stderr(&["trim", "--db", db, "--thread", "1", "--keep", "0"]);
    assert_eq!(code, Some(2));
    assert!(stderr.contains("rm --all-messages"), "{stderr}");
    // --ns on commands that work on whole threads.
    for args in [
        vec!["threads", "list", "--db", db, "--ns", "child"],
        vec!["stats", "--db", db, "--ns", "child"],
        vec!["tokens", "--all", "--db", db, "--ns", "child"],
    ] {
        let (code, err) = code_and_stderr(&args);
        assert_eq!(code, Some(2), "{args:?}: {err}");
        assert!(err.contains("--ns"), "{args:?}: {err}");
    }
    // A busy timeout SQLite cannot take is a usage error, not a panic.
    let (code, stderr) = code_and_stderr(&[
        "threads",
        "list",
        "--db",
        db,
        "--busy-timeout",
        "3000000000",
    ]);
    assert_eq!(code, Some(2), "{stderr}");
    // --max-input-tokens 0 is no budget.
    let (code, _) = code_and_stderr(&[
        "summarize",
        "--db",
        db,
        "--thread",
        "1",
        "--keep",
        "2",
        "--dry-run",
        "--max-input-tokens",
        "0",
    ]);
    assert_eq!(code, Some(2));
    // gc needs to be told how much history to keep.
    let (code, stderr) = code_and_stderr(&["gc", "--db", db, "--all"]);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(stderr.contains("--keep-checkpoints"), "{stderr}");
}

#[test]
fn an_empty_memctl_db_is_not_set() {
    let out = memctl()
        .env("MEMCTL_DB", "")
        .args(["threads", "list"])
        .output()
        .expect("runs");
    let stderr = String::from_utf8_lossy(&out.stderr);
    // A usage error, as the README's exit codes say (#46: it exited 1).
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("no database given"), "{stderr}");
}

#[test]
fn output_says_what_it_means() {
    let db = fixture("new.sqlite");
    // stats --top 0: no empty table header.
    let out = memctl()
        .args(["stats", "--db", s(&db), "--top", "0", "--format", "table"])
        .output()
        .expect("runs");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(!text.to_lowercase().contains("largest threads"), "{text}");
    assert!(text.contains("14 threads"), "{text}");
    // A skipped thread was never counted: '-', not '0 → 0'; JSON null.
    let out = memctl()
        .args([
            "trim",
            "--db",
            s(&db),
            "--all",
            "--keep",
            "2",
            "--dry-run",
            "--format",
            "table",
        ])
        .output()
        .expect("runs");
    let text = String::from_utf8_lossy(&out.stdout);
    let line = text
        .lines()
        .find(|l| l.contains(" interrupt "))
        .expect("interrupt row");
    assert!(!line.contains("0 → 0") && line.contains(" - "), "{line}");
    assert!(text.contains("would remove 1 message\n") || !text.contains("would remove 1 messages"));
    let json = run_json(&[
        "trim",
        "--db",
        s(&db),
        "--all",
        "--keep",
        "2",
        "--dry-run",
        "--format",
        "json",
    ]);
    let row = json["threads"]
        .as_array()
        .expect("rows")
        .iter()
        .find(|r| r["thread_id"] == "interrupt")
        .expect("interrupt");
    assert!(row["messages_before"].is_null(), "{row}");
    // diff on a DeltaChannel thread compares the rebuilt states (not "9 → 0, all removed").
    let out = run_ok(&["diff", "--db", s(&fixture("delta.sqlite")), "--thread", "1"]);
    assert!(out.contains("messages: 9 → 10\n"), "{out}");
}

#[test]
fn a_closed_pipe_after_deletes_is_not_an_error() {
    for cmd in [
        vec!["gc", "--all", "--keep-checkpoints", "1", "--min-idle", "0s"],
        vec!["prune", "--idle", "1s", "--min-idle", "0s"],
    ] {
        let (_d, db) = temp_copy(&fixture("new.sqlite"));
        let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin("memctl"))
            .args(&cmd)
            .args(["--db", s(&db), "--format", "json"])
            .env_remove("MEMCTL_DB")
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .expect("runs");
        // Close the pipe before memctl writes its report (as `| head -0` would).
        drop(child.stdout.take());
        let out = child.wait_with_output().expect("ends");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(0), "{cmd:?}: {stderr}");
        assert!(stderr.is_empty(), "{cmd:?}: {stderr}");
    }
}

#[test]
fn one_unreadable_thread_never_hides_the_others() {
    let (_d, db) = temp_copy(&fixture("new.sqlite"));
    let conn = rusqlite::Connection::open(&db).expect("open");
    conn.execute(
        "UPDATE checkpoints SET checkpoint = substr(checkpoint, 1, length(checkpoint) / 2) \
         WHERE thread_id = 'tools' AND checkpoint_ns = '' AND checkpoint_id = \
         (SELECT MAX(checkpoint_id) FROM checkpoints WHERE thread_id = 'tools' AND checkpoint_ns = '')",
        [],
    )
    .expect("truncate");
    drop(conn);
    for (args, listed) in [(vec!["threads", "list"], 14), (vec!["tokens", "--all"], 13)] {
        let out = memctl()
            .args(&args)
            .args(["--db", s(&db), "--format", "json"])
            .output()
            .expect("runs");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(3), "{args:?}: {stderr}");
        assert!(
            stderr.contains("thread 'tools'") && stderr.contains("truncated"),
            "{stderr}"
        );
        let rows: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
        assert_eq!(
            rows.as_array().map(Vec::len),
            Some(listed),
            "{args:?}: {rows}"
        );
    }
    // A dry run over the file says nothing was written.
    let out = memctl()
        .args([
            "trim",
            "--all",
            "--keep",
            "2",
            "--dry-run",
            "--db",
            s(&db),
            "--format",
            "json",
        ])
        .output()
        .expect("runs");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "{stderr}");
    assert!(
        stderr.contains("dry run: nothing was written") && !stderr.contains("were written"),
        "{stderr}"
    );
}

#[test]
fn ids_are_never_wrapped_or_cut() {
    let (_d, db) = temp_copy(&fixture("new.sqlite"));
    // A thread id longer than any old cut-off, renamed in place.
    let long = "customer-4242-support-conversation-about-a-very-long-invoice-dispute";
    let conn = rusqlite::Connection::open(&db).expect("open");
    conn.execute_batch(&format!(
        "UPDATE checkpoints SET thread_id = '{long}' WHERE thread_id = 'tools';
         UPDATE writes SET thread_id = '{long}' WHERE thread_id = 'tools';"
    ))
    .expect("rename");
    drop(conn);
    for columns in ["80", "0", "250"] {
        for args in [
            vec!["threads", "list"],
            vec!["history", "--thread", long],
            vec!["trim", "--all", "--keep", "2", "--dry-run"],
            vec!["tokens", "--all"],
        ] {
            let out = memctl()
                .env("COLUMNS", columns)
                .args(&args)
                .args(["--db", s(&db)])
                .output()
                .expect("runs");
            let text = String::from_utf8_lossy(&out.stdout);
            if args[0] != "history" {
                assert!(
                    text.lines().any(|l| l.contains(long)),
                    "COLUMNS={columns} {args:?}: the thread id is cut or wrapped:\n{text}"
                );
            } else {
                let ids = text.lines().skip(1).filter(|l| {
                    l.split_whitespace()
                        .next()
                        .is_some_and(|w| w.len() == 36 && w.matches('-').count() == 4)
                });
                assert!(
                    ids.count() >= 5,
                    "COLUMNS={columns}: checkpoint ids whole:\n{text}"
                );
            }
        }
    }
}

/// Bytes that a terminal would act on: ESC, CSI (U+009B), RLO (U+202E), LINE SEPARATOR.
fn has_raw_escapes(bytes: &[u8]) -> bool {
    let text = String::from_utf8_lossy(bytes);
    text.contains('\u{1b}')
        || text.contains('\u{9b}')
        || text.contains('\u{202e}')
        || text.contains('\u{2028}')
}

#[test]
fn nothing_from_the_database_reaches_the_terminal_raw() {
    let (_d, db) = temp_copy(&fixture("new.sqlite"));
    let evil = "evil\u{1b}[2J\u{9b}31m\u{202e}x\u{2028}y";
    let conn = rusqlite::Connection::open(&db).expect("open");
    conn.execute_batch(&format!(
        "UPDATE checkpoints SET thread_id = '{evil}' WHERE thread_id = 'tools';
         UPDATE writes SET thread_id = '{evil}' WHERE thread_id = 'tools';"
    ))
    .expect("rename");
    drop(conn);
    let runs: Vec<Vec<&str>> = vec![
        vec!["threads", "list"],
        vec!["tokens", "--all"],
        vec!["tokens", "--thread", evil],
        vec!["tokens", "--thread", evil, "--counter", "usage"],
        vec!["history", "--thread", evil],
        vec!["show", "--thread", evil],
        vec!["diff", "--thread", evil],
        vec!["trim", "--all", "--keep", "2", "--dry-run"],
        vec!["rm", "--thread", evil, "--index", "0", "--dry-run"],
        vec![
            "gc",
            "--all",
            "--keep-checkpoints",
            "1",
            "--min-idle",
            "0s",
            "--dry-run",
        ],
        vec!["prune", "--idle", "1s", "--min-idle", "0s", "--dry-run"],
        vec!["stats"],
        // Errors quoting the id.
        vec!["show", "--thread", evil, "--checkpoint", "nope"],
        vec!["rm", "--thread", evil, "--id", "nope"],
    ];
    for args in runs {
        let out = memctl()
            .args(&args)
            .args(["--db", s(&db)])
            .output()
            .expect("runs");
        assert!(
            !has_raw_escapes(&out.stdout),
            "{args:?} stdout: {:?}",
            String::from_utf8_lossy(&out.stdout)
        );
        assert!(
            !has_raw_escapes(&out.stderr),
            "{args:?} stderr: {:?}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    // JSON on a terminal (a pty made by `script`): escaped as \uXXXX, still the same JSON.
    let bin = assert_cmd::cargo::cargo_bin("memctl");
    let cmd = format!(
        "{} threads list --db {} --format json",
        bin.display(),
        s(&db)
    );
    let out = std::process::Command::new("script")
        .args(["-qec", &cmd, "/dev/null"])
        .env_remove("MEMCTL_DB")
        .output()
        .expect("script runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        !has_raw_escapes(&out.stdout),
        "{:?}",
        String::from_utf8_lossy(&out.stdout)
    );
    let text = String::from_utf8_lossy(&out.stdout).replace("\r\n", "\n");
    let rows: serde_json::Value = serde_json::from_str(text.trim()).expect("still JSON");
    assert!(rows.to_string().contains("evil"), "{rows}");
    assert!(
        rows.as_array()
            .expect("rows")
            .iter()
            .any(|r| r["thread_id"] == evil),
        "the id parses back to the stored one"
    );
}

#[test]
fn checkpoint_id_prefixes_and_batch_totals() {
    let db = fixture("new.sqlite");
    let full = "1f1ed47f-8372-63a9-8008-693bc35ab911";
    let by_prefix = run_json(&[
        "show",
        "--db",
        s(&db),
        "--thread",
        "tools",
        "--checkpoint",
        "1f1ed47f-8372",
        "--format",
        "json",
    ]);
    assert_eq!(by_prefix["checkpoint_id"], full);
    let err = run_err(&[
        "show",
        "--db",
        s(&db),
        "--thread",
        "tools",
        "--checkpoint",
        "1f1ed47f-83",
    ]);
    assert!(err.contains("ambiguous") && err.contains(full), "{err}");
    let err = run_err(&[
        "dump",
        "--db",
        s(&db),
        "--thread",
        "tools",
        "--checkpoint",
        "ffff",
    ]);
    assert!(err.contains("no checkpoint 'ffff'"), "{err}");
    // A batch table ends with its totals.
    let out = memctl()
        .args(["trim", "--db", s(&db), "--all", "--keep", "2", "--dry-run"])
        .output()
        .expect("runs");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("14 threads: 10 would rewrite, 3 unchanged, 1 skipped; messages 59 → 32"),
        "{text}"
    );
}

#[test]
fn the_thread_can_be_the_first_argument() {
    let db = fixture("new.sqlite");
    for (positional, flagged) in [
        (vec!["show", "tools"], vec!["show", "--thread", "tools"]),
        (
            vec!["history", "tools"],
            vec!["history", "--thread", "tools"],
        ),
        (vec!["dump", "tools"], vec!["dump", "--thread", "tools"]),
        (vec!["diff", "tools"], vec!["diff", "--thread", "tools"]),
        (vec!["tokens", "tools"], vec!["tokens", "--thread", "tools"]),
        (
            vec!["trim", "tools", "--keep", "2", "--dry-run"],
            vec!["trim", "--thread", "tools", "--keep", "2", "--dry-run"],
        ),
        (
            vec!["rm", "tools", "--index", "0", "--dry-run"],
            vec!["rm", "--thread", "tools", "--index", "0", "--dry-run"],
        ),
        (
            vec!["summarize", "tools", "--keep", "2", "--dry-run"],
            vec!["summarize", "--thread", "tools", "--keep", "2", "--dry-run"],
        ),
    ] {
        let a = memctl()
            .args(&positional)
            .args(["--db", s(&db)])
            .output()
            .expect("runs");
        let b = memctl()
            .args(&flagged)
            .args(["--db", s(&db)])
            .output()
            .expect("runs");
        assert!(
            a.status.success(),
            "{positional:?}: {}",
            String::from_utf8_lossy(&a.stderr)
        );
        assert_eq!(a.stdout, b.stdout, "{positional:?}");
    }
    // Both at once, or with --all: a usage error.
    let (code, _) = code_and_stderr(&["show", "tools", "--thread", "1", "--db", s(&db)]);
    assert_eq!(code, Some(2));
    let (code, _) = code_and_stderr(&["trim", "tools", "--all", "--keep", "2", "--db", s(&db)]);
    assert_eq!(code, Some(2));
}

#[test]
fn history_limit_and_show_last() {
    let db = fixture("new.sqlite");
    let all = run_json(&[
        "history",
        "--db",
        s(&db),
        "--thread",
        "tools",
        "--format",
        "json",
    ]);
    let two = run_json(&[
        "history",
        "--db",
        s(&db),
        "--thread",
        "tools",
        "--limit",
        "2",
        "--format",
        "json",
    ]);
    assert_eq!(two.as_array().map(Vec::len), Some(2));
    assert_eq!(two[0], all[0]);
    assert_eq!(two[1], all[1]);
    let out = memctl()
        .args(["show", "tools", "--last", "2", "--db", s(&db)])
        .output()
        .expect("runs");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("Berlin is sunny too.") && text.contains("21°C in Berlin"),
        "{text}"
    );
    assert!(
        !text.contains("Weather in Paris"),
        "older messages are left out: {text}"
    );
    let full = memctl()
        .args(["show", "tools", "--db", s(&db)])
        .output()
        .expect("runs");
    assert!(String::from_utf8_lossy(&full.stdout).contains("Weather in Paris"));
}

/// Exit codes follow one rule (#26): a flag's value that cannot work is a usage error, exit
/// code 2, whichever flag and command (it was 1 for durations and --meta, 2 for --keep 0).
#[test]
fn every_bad_flag_value_is_a_usage_error() {
    let db = fixture("new.sqlite");
    let db = s(&db);
    let cases: [&[&str]; 10] = [
        &["prune", "--idle", "3x"],
        &["prune", "--idle", "1d", "--min-idle", "soon"],
        &["gc", "--all", "--keep-checkpoints", "1", "--min-idle", "5"],
        &["trim", "--all", "--idle", "3x", "--keep", "2"],
        &["trim", "--thread", "1", "--keep", "2", "--settle", "2h"],
        &["trim", "--thread", "1", "--keep", "0"],
        &["find", "--meta", "user_id"],
        &["forget", "--meta", "=42"],
        &["rm", "--thread", "1", "--match", "("],
        &["trim", "--thread", "1", "--keep", "2", "--ns", "child"],
    ];
    for args in cases {
        let mut args = args.to_vec();
        args.extend(["--db", db]);
        let (code, stderr) = code_and_stderr(&args);
        assert_eq!(code, Some(2), "{args:?}: {stderr}");
        assert!(
            stderr.starts_with("error: ") || stderr.starts_with("memctl: error: "),
            "{args:?}: {stderr}"
        );
    }
}

/// A batch on a file this user cannot write fails in one line with exit code 1, not with one
/// failed row per thread (#26).
#[test]
fn a_batch_on_a_read_only_file_is_one_line() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().expect("temp dir");
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).expect("chmod");
    let db = dir.path().join("db.sqlite");
    std::fs::copy(fixture("new.sqlite"), &db).expect("copy");
    std::fs::set_permissions(&db, std::fs::Permissions::from_mode(0o444)).expect("chmod");
    let before = std::fs::read(&db).expect("read");
    // A copy of the binary any user can run; as root, permissions do not apply: run as nobody.
    let bin = dir.path().join("memctl");
    std::fs::copy(assert_cmd::cargo::cargo_bin("memctl"), &bin).expect("copy the binary");
    std::fs::set_permissions(&bin, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    let is_root = std::process::Command::new("id")
        .arg("-u")
        .output()
        .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).trim() == "0");
    let batches: [&[&str]; 2] = [
        &["trim", "--all", "--keep", "2", "--settle", "0s"],
        &["rm", "--thread", "tools", "--index", "-1"],
    ];
    for args in batches {
        let mut cmd = if is_root {
            let mut c = std::process::Command::new("runuser");
            c.args(["-u", "nobody", "--"]).arg(&bin);
            c
        } else {
            std::process::Command::new(&bin)
        };
        let out = cmd
            .args(args)
            .args(["--db", s(&db)])
            .env_remove("MEMCTL_DB")
            .output()
            .expect("runs");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{args:?}: {stderr}");
        assert_eq!(stderr.trim_end().lines().count(), 1, "{args:?}: {stderr}");
        assert!(
            stderr.contains("read-only for this user"),
            "{args:?}: {stderr}"
        );
        assert!(
            !String::from_utf8_lossy(&out.stdout).contains("failed"),
            "{args:?}: no failed rows: {}",
            String::from_utf8_lossy(&out.stdout)
        );
    }
    assert_eq!(std::fs::read(&db).expect("read"), before);
}

/// `--quiet` hides the report but never what an operator must act on (#26): each failed
/// thread and why, on stderr, before the closing line that points to them.
#[test]
fn quiet_still_names_the_failed_threads_and_why() {
    let (_dir, db) = temp_copy(&fixture("new.sqlite"));
    let conn = rusqlite::Connection::open(&db).expect("open");
    conn.execute(
        "UPDATE checkpoints SET checkpoint = substr(checkpoint, 1, 40) \
         WHERE thread_id = 'tools' AND checkpoint_id = \
         (SELECT max(checkpoint_id) FROM checkpoints WHERE thread_id = 'tools')",
        [],
    )
    .expect("cut the blob");
    drop(conn);
    let runs: [&[&str]; 4] = [
        &["trim", "--all", "--keep", "2", "--dry-run"],
        &["summarize", "--all", "--keep", "2", "--dry-run"],
        &["gc", "--all", "--keep-checkpoints", "1", "--dry-run"],
        &["prune", "--idle", "1s", "--dry-run"],
    ];
    for args in runs {
        let mut args = args.to_vec();
        args.extend(["--db", s(&db), "--quiet"]);
        let out = memctl().args(&args).output().expect("runs");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(3), "{args:?}: {stderr}");
        assert!(out.stdout.is_empty(), "{args:?}: --quiet prints no report");
        let lines: Vec<&str> = stderr.lines().collect();
        assert_eq!(lines.len(), 2, "{args:?}: {stderr}");
        assert!(
            lines[0].starts_with("memctl: thread 'tools' failed: ")
                && lines[0].contains("truncated"),
            "{args:?}: the failed thread and why: {stderr}"
        );
        assert!(lines[1].contains("listed above"), "{args:?}: {stderr}");
    }
}

/// #46: `--quiet` silences notes, not results: a read command still prints the data it was
/// asked for, the same bytes as without it. `find` with no hit writes nothing on stdout
/// (`| wc -l` counts 0; the "no hits" note goes to stderr, and `--quiet` silences it), exit 1.
#[test]
fn quiet_read_commands_print_their_data_and_no_hit_prints_nothing() {
    let db = fixture("new.sqlite");
    let reads: [&[&str]; 7] = [
        &["threads", "list", "--now", "2026-12-08T00:00:00Z"],
        &["history", "--thread", "tools"],
        &["show", "--thread", "tools"],
        &["dump", "--thread", "tools"],
        &["tokens", "--thread", "tools"],
        &["find", "weather"],
        &["stats"],
    ];
    for args in reads {
        let mut args = args.to_vec();
        args.extend(["--db", s(&db)]);
        let loud = memctl().args(&args).output().expect("runs");
        args.push("--quiet");
        let quiet = memctl().args(&args).output().expect("runs");
        assert!(quiet.status.success(), "{args:?}");
        assert!(
            !quiet.stdout.is_empty(),
            "{args:?}: --quiet printed no data"
        );
        assert_eq!(quiet.stdout, loud.stdout, "{args:?}");
    }
    for quiet in [false, true] {
        let mut args = vec!["find", "no-such-text-anywhere", "--db", s(&db)];
        if quiet {
            args.push("--quiet");
        }
        let out = memctl().args(&args).output().expect("runs");
        assert_eq!(out.status.code(), Some(1), "{args:?}");
        assert!(out.stdout.is_empty(), "{args:?}: {:?}", out.stdout);
        let stderr = String::from_utf8_lossy(&out.stderr);
        match quiet {
            true => assert!(stderr.is_empty(), "{stderr}"),
            false => assert_eq!(stderr.trim(), "memctl: no hits"),
        }
    }
}

/// #46: `-h` is the short form, one line per option (its first sentence; `--help` keeps the
/// whole text), and no help shows `[env: MEMCTL_SCHEMA=]` for an unset variable.
#[test]
fn short_help_is_one_line_per_option_and_shows_no_empty_env_value() {
    fn subcommands(cmd: &clap::Command, path: Vec<String>, all: &mut Vec<Vec<String>>) {
        for sub in cmd.get_subcommands().filter(|s| s.get_name() != "help") {
            let mut p = path.clone();
            p.push(sub.get_name().to_owned());
            all.push(p.clone());
            subcommands(sub, p, all);
        }
    }
    let mut all = Vec::new();
    subcommands(&memctl::cli::command(), Vec::new(), &mut all);
    assert!(all.len() > 20, "{all:?}");
    for path in &all {
        let short = memctl()
            .args(path)
            .arg("-h")
            .env_remove("MEMCTL_SCHEMA")
            .env("COLUMNS", "100")
            .output()
            .expect("runs");
        let text = String::from_utf8_lossy(&short.stdout);
        assert!(short.status.success(), "{path:?}");
        // An option's line, then continuation lines only for clap's list of possible values.
        let mut option = String::new();
        for line in text.lines() {
            let trimmed = line.trim_start();
            if trimmed.starts_with('-') && line.starts_with("  ") {
                option = line.to_owned();
            } else if line.starts_with("          ") && !option.is_empty() {
                assert!(
                    option.contains("[possible values:") || line.contains("possible values"),
                    "{path:?} -h: an option's help takes more than one line:\n{option}\n{line}"
                );
            } else {
                option.clear();
            }
        }
        let long = memctl()
            .args(path)
            .arg("--help")
            .env_remove("MEMCTL_SCHEMA")
            .output()
            .expect("runs");
        let long = String::from_utf8_lossy(&long.stdout);
        assert!(long.len() > text.len(), "{path:?}: --help is the long form");
        for help in [&*text, &*long] {
            assert!(!help.contains("MEMCTL_SCHEMA="), "{path:?}: {help}");
        }
    }
}

/// #46: one way to name things. A command that takes a thread takes it alone, as the README
/// promises (`memctl copy thread-01 --to-thread x`): copy, export, gc, prune, forget and
/// browse refused it before; the result is the same as with `--thread`.
#[test]
fn every_command_that_takes_a_thread_takes_it_alone() {
    let db = fixture("new.sqlite");
    let dir = tempfile::tempdir().expect("temp dir");
    let out_a = dir.path().join("a.sqlite");
    let out_b = dir.path().join("b.sqlite");
    let runs: Vec<(Vec<&str>, Vec<&str>)> = vec![
        (
            vec!["copy", "tools", "--to-thread", "x", "--dry-run"],
            vec!["copy", "--thread", "tools", "--to-thread", "x", "--dry-run"],
        ),
        (
            vec!["gc", "tools", "--keep-checkpoints", "1", "--dry-run"],
            vec![
                "gc",
                "--thread",
                "tools",
                "--keep-checkpoints",
                "1",
                "--dry-run",
            ],
        ),
        (
            vec!["prune", "tools", "system", "--dry-run"],
            vec![
                "prune",
                "--thread",
                "tools",
                "--thread",
                "system",
                "--dry-run",
            ],
        ),
        (
            vec!["forget", "tools", "--dry-run"],
            vec!["forget", "--thread", "tools", "--dry-run"],
        ),
    ];
    for (alone, flagged) in runs {
        let run = |args: &[&str]| {
            let out = memctl()
                .args(args)
                .args([
                    "--db",
                    s(&db),
                    "--format",
                    "json",
                    "--now",
                    "2026-12-08T00:00:00Z",
                ])
                .output()
                .expect("runs");
            (
                out.status.code(),
                String::from_utf8_lossy(&out.stdout).into_owned(),
            )
        };
        let (a, b) = (run(&alone), run(&flagged));
        assert_eq!(a.0, Some(0), "{alone:?}: {}", a.1);
        // A forget receipt holds the time it ran.
        let no_time = |t: &str| {
            t.lines()
                .filter(|l| !l.contains("\"timestamp\""))
                .collect::<Vec<_>>()
                .join("\n")
        };
        assert_eq!(no_time(&a.1), no_time(&b.1), "{alone:?}");
    }
    // export: the archives hold the same rows.
    for (args, out) in [
        (vec!["export", "tools", "system"], &out_a),
        (
            vec!["export", "--thread", "tools", "--thread", "system"],
            &out_b,
        ),
    ] {
        let ran = memctl()
            .args(&args)
            .args(["--db", s(&db), "-o", s(out)])
            .output()
            .expect("runs");
        assert!(ran.status.success(), "{args:?}");
    }
    let rows = |f: &Path| {
        let c = rusqlite::Connection::open(f).expect("open");
        let n: i64 = c
            .query_row("SELECT count(*) FROM checkpoints", [], |r| r.get(0))
            .expect("count");
        n
    };
    assert!(rows(&out_a) > 0);
    assert_eq!(rows(&out_a), rows(&out_b));
}
