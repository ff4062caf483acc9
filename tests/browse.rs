//! `memctl browse` (#31): every view rendered with ratatui's TestBackend at 80x24 and 120x40
//! over the committed fixtures, as insta snapshots; the refusal outside a terminal; and a
//! real terminal (tmux) session that opens a thread, a checkpoint, its diff, a search, quits,
//! and leaves the database file byte-identical.

mod common;

use common::tmux::Pane;

use clap::Parser;
use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use memctl::cli::Cli;
use memctl::tui::{data::Source, App};
use ratatui::backend::TestBackend;
use ratatui::Terminal;

/// The fixed "now" of the screens (ages are computed from it).
const NOW: &str = "2026-12-03T10:00:00Z";

/// The sizes every view is rendered at.
const SIZES: [(u16, u16); 2] = [(80, 24), (120, 40)];

/// The browser on a committed fixture, named relative to the repository root (the tests'
/// working directory) so the title line is the same on every machine.
fn app(fixture: &str, thread: Option<&str>) -> App {
    let db = format!("fixtures/{fixture}");
    let cli = Cli::try_parse_from(["memctl", "browse", "--db", &db, "--now", NOW])
        .expect("the arguments parse");
    App::new(Source::new(&cli.global), thread).expect("the browser opens")
}

fn press(app: &mut App, code: KeyCode) {
    app.on_key(KeyEvent::new(code, KeyModifiers::NONE));
}

/// Types `text`, one key per character.
fn typed(app: &mut App, text: &str) {
    for c in text.chars() {
        press(app, KeyCode::Char(c));
    }
}

fn screen(app: &mut App, (w, h): (u16, u16)) -> String {
    // The screen once the user waits: the work left between keys (a history's tokens) done.
    app.finish_work();
    let mut terminal = Terminal::new(TestBackend::new(w, h)).expect("a test terminal");
    terminal.draw(|f| app.draw(f)).expect("draws");
    terminal.backend().to_string()
}

/// Snapshots the app's screen at both sizes as `name_WxH`.
fn snap(app: &mut App, name: &str) {
    for size in SIZES {
        let text = screen(app, size);
        insta::assert_snapshot!(format!("{name}_{}x{}", size.0, size.1), text);
    }
}

#[test]
fn threads_view() {
    let mut a = app("new.sqlite", None);
    snap(&mut a, "browse_threads");
    // s: age -> size.
    typed(&mut a, "s");
    snap(&mut a, "browse_threads_by_size");
    // / filters by id as it is typed.
    typed(&mut a, "/interrupt");
    snap(&mut a, "browse_threads_filtered");
}

#[test]
fn threads_filter_by_metadata() {
    let mut a = app("new.sqlite", None);
    // The selection of `threads list --meta` / `forget --meta`: any checkpoint's metadata
    // (tools' latest step is 8; summarized had a step 8 before its last steps).
    typed(&mut a, "/step=8");
    press(&mut a, KeyCode::Enter);
    let text = screen(&mut a, (80, 24));
    assert!(text.contains("2 of 14 threads"), "{text}");
    assert!(
        text.contains(" tools ") && text.contains("summarized"),
        "{text}"
    );
    // Esc clears the filter.
    press(&mut a, KeyCode::Esc);
    let text = screen(&mut a, (80, 24));
    assert!(text.contains("14 of 14 threads"), "{text}");
}

#[test]
fn history_view() {
    let mut a = app("new.sqlite", Some("tools"));
    snap(&mut a, "browse_history");
    let mut a = app("new.sqlite", Some("subgraph"));
    typed(&mut a, "n");
    snap(&mut a, "browse_history_subgraphs");
}

#[test]
fn history_is_read_a_page_at_a_time() {
    // `summarized` has 19 root checkpoints; pages of 5.
    let mut a = app("new.sqlite", None).with_history_page(5);
    typed(&mut a, "jjjj");
    press(&mut a, KeyCode::Enter);
    let text = screen(&mut a, (80, 24));
    assert!(
        text.contains("thread summarized · 5+ checkpoints"),
        "{text}"
    );
    // Reaching the last row reads the next page.
    typed(&mut a, "jjjj");
    let text = screen(&mut a, (80, 24));
    assert!(
        text.contains("thread summarized · 10+ checkpoints"),
        "{text}"
    );
    typed(&mut a, "GGG");
    let text = screen(&mut a, (80, 24));
    assert!(
        text.contains("thread summarized · 19 checkpoints"),
        "{text}"
    );
    assert!(text.contains("  -1 input "), "{text}");
}

#[test]
fn checkpoint_view_show_diff_tokens() {
    let mut a = app("new.sqlite", Some("tools"));
    press(&mut a, KeyCode::Enter);
    snap(&mut a, "browse_checkpoint");
    typed(&mut a, "G");
    snap(&mut a, "browse_checkpoint_end");
    typed(&mut a, "d");
    snap(&mut a, "browse_checkpoint_diff");
    typed(&mut a, "t");
    snap(&mut a, "browse_checkpoint_tokens");
    // c: the next counter (tiktoken's o200k framing, as `tokens --counter o200k`).
    typed(&mut a, "c");
    snap(&mut a, "browse_checkpoint_tokens_o200k");
    // Esc goes back to the history.
    press(&mut a, KeyCode::Esc);
    assert!(screen(&mut a, (80, 24)).contains("thread tools · 10 checkpoints"));
}

/// The screen as it is drawn now, before the work left between keys is done (the first
/// draw of a view).
fn screen_now(app: &mut App, (w, h): (u16, u16)) -> String {
    let mut terminal = Terminal::new(TestBackend::new(w, h)).expect("a test terminal");
    terminal.draw(|f| app.draw(f)).expect("draws");
    terminal.backend().to_string()
}

/// The rows of a TestBackend screen, unquoted, without trailing blanks.
fn rows_of(screen: &str) -> Vec<String> {
    screen
        .lines()
        .map(|l| {
            let l = l.strip_prefix('"').unwrap_or(l);
            let l = l.strip_suffix('"').unwrap_or(l);
            l.trim_end().to_owned()
        })
        .collect()
}

/// What a memctl command prints on stdout (it must succeed).
fn memctl_out(args: &[&str]) -> String {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_memctl"))
        .args(args)
        .env_remove("MEMCTL_DB")
        .output()
        .expect("memctl runs");
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("UTF-8 output")
}

/// `memctl history --format json` of `thread`.
fn history_json(fixture: &str, thread: &str) -> Vec<serde_json::Value> {
    let db = format!("fixtures/{fixture}");
    let out = memctl_out(&[
        "history", "--db", &db, "--thread", thread, "--format", "json",
    ]);
    serde_json::from_str(&out).expect("history's JSON")
}

#[test]
fn history_cells_filled_in_later_equal_history() {
    // Plain threads, DeltaChannel threads (their counts from a replay of the whole history),
    // JS ones and subgraphs.
    for (fixture, thread) in [
        ("new.sqlite", "tools"),
        ("new.sqlite", "summarized"),
        ("new.sqlite", "subgraph"),
        ("delta.sqlite", "files"),
        ("delta.sqlite", "edits"),
        ("js-delta.sqlite", "js-chat"),
    ] {
        let mut a = app(fixture, Some(thread));
        // The first draw: the rows alone; time, messages and tokens pending.
        let first = screen_now(&mut a, (120, 40));
        assert!(a.working(), "{fixture} {thread}: nothing left to fill in");
        assert!(first.contains("tokens per checkpoint (max …)"), "{first}");
        let row_of = |screen: &str, id: &str| -> Vec<String> {
            let rows = rows_of(screen);
            let row = rows
                .iter()
                .find(|r| r.contains(&id[..24]))
                .unwrap_or_else(|| panic!("no row of {id} in\n{screen}"))
                .clone();
            row.trim_start_matches(['>', ' '])
                .split_whitespace()
                .map(str::to_owned)
                .collect()
        };
        let records = history_json(fixture, thread);
        assert!(!records.is_empty());
        // The rows on a 120x40 screen.
        let on_screen = records.len().min(28);
        for r in &records[..on_screen] {
            let id = r["checkpoint_id"].as_str().expect("an id");
            let cells = row_of(&first, id);
            // id, step, source, then the pending time, messages and tokens.
            assert_eq!(cells[1], r["step"].to_string(), "{cells:?}");
            assert_eq!(cells[3..6], ["…", "…", "…"], "{cells:?}");
        }
        let filled = screen(&mut a, (120, 40));
        assert!(!a.working());
        assert!(!filled.contains('…'), "{filled}");
        for r in &records[..on_screen] {
            let id = r["checkpoint_id"].as_str().expect("an id");
            let cells = row_of(&filled, id);
            let ts = r["ts"].as_str().expect("a time");
            // `MM-DD HH:MM:SS` of history's time.
            assert_eq!(cells[3], ts[5..10], "{fixture} {thread} {cells:?}");
            assert_eq!(cells[4], ts[11..19], "{fixture} {thread} {cells:?}");
            let messages = r["messages"]
                .as_u64()
                .map_or("-".to_owned(), |n| n.to_string());
            assert_eq!(cells[5], messages, "{fixture} {thread} {cells:?}");
        }
    }
}

/// `show`'s text of a checkpoint (the whole render) wrapped at `width` as the browser
/// wraps it.
fn show_rows(fixture: &str, thread: &str, id: &str, width: usize) -> Vec<String> {
    let db = format!("fixtures/{fixture}");
    let text = memctl_out(&["show", "--db", &db, "--thread", thread, "--checkpoint", id]);
    wrapped(&text, width)
}

#[test]
fn a_long_chat_built_lazily_shows_what_the_whole_render_shows() {
    let (fixture, thread) = ("deep.sqlite", "long");
    let newest = history_json(fixture, thread)[0]["checkpoint_id"]
        .as_str()
        .expect("an id")
        .to_owned();
    let full = show_rows(fixture, thread, &newest, 80);
    // 80x24: a title line, the view's top border, 21 rows of text, the key line.
    let body = |screen: &str| -> Vec<String> {
        let rows = rows_of(screen);
        rows[2..rows.len() - 1].to_vec()
    };
    let h = 21;
    assert!(full.len() > 10 * h, "{} rows: not a long chat", full.len());
    let mut a = app(fixture, Some(thread));
    a.finish_work();
    press(&mut a, KeyCode::Enter);
    // The top: drawn with only its first messages rendered.
    let top = screen_now(&mut a, (80, 24));
    assert!(a.working(), "the whole chat was rendered at once");
    assert!(top.contains("row 1/…"), "{top}");
    assert_eq!(body(&top), full[..h]);
    // The middle, scrolled to: a page is 20 rows.
    for _ in 0..5 {
        press(&mut a, KeyCode::PageDown);
    }
    let middle = screen_now(&mut a, (80, 24));
    assert_eq!(body(&middle), full[100..100 + h]);
    // The end (G), built from the last message backwards.
    press(&mut a, KeyCode::Char('G'));
    let end = screen_now(&mut a, (80, 24));
    assert!(a.working(), "the whole chat was rendered for G");
    assert_eq!(body(&end), full[full.len() - h..]);
    // Once the rest is built between keys, the row count is the whole render's.
    let done = screen(&mut a, (80, 24));
    assert!(
        done.contains(&format!("row {}/{} ", full.len() - h + 1, full.len())),
        "{done}"
    );
    assert_eq!(body(&done), full[full.len() - h..]);
    // And back up a line from the end.
    press(&mut a, KeyCode::Up);
    assert_eq!(
        body(&screen(&mut a, (80, 24))),
        full[full.len() - h - 1..full.len() - 1]
    );
    // The tokens view counts the messages already read a step at a time (128 at the key),
    // then shows `tokens --thread`'s table of the (latest) checkpoint.
    let tokens: Vec<String> =
        memctl_out(&["tokens", "--db", "fixtures/deep.sqlite", "--thread", thread])
            .lines()
            .map(|l| l.trim_end().to_owned())
            .collect();
    press(&mut a, KeyCode::Char('t'));
    let counting = screen_now(&mut a, (80, 24));
    assert!(a.working());
    assert!(
        counting.contains("counting tokens: 128 of 163 messages …"),
        "{counting}"
    );
    // On a screen wide enough, the table is `tokens`'s, line for line.
    assert_eq!(body(&screen(&mut a, (200, 24))), tokens[..h]);
    press(&mut a, KeyCode::Char('G'));
    assert_eq!(body(&screen(&mut a, (200, 24))), tokens[tokens.len() - h..]);
    // At 80 columns (laid out anew, from the top) its text column gives way: the same
    // cells in the same order, no row wider than the screen.
    let narrow = body(&screen(&mut a, (80, 24)));
    assert_fits(&narrow, 80);
    assert!(ink(&tokens.concat()).starts_with(&ink(&narrow.concat())));
    press(&mut a, KeyCode::Char('G'));
    let narrow = body(&screen(&mut a, (80, 24)));
    assert_fits(&narrow, 80);
    assert!(ink(&tokens.concat()).ends_with(&ink(&narrow.concat())));
}

/// What a text shows, its blanks left out (what wrapping must keep, in order).
fn ink(text: &str) -> String {
    text.chars().filter(|c| !c.is_whitespace()).collect()
}

/// Asserts that the words of `rows` are whole words of `source` (no word cut where it would
/// fit a row): an ASCII word of a row that is not one of the source's is a piece of a
/// source word wider than `columns`.
fn assert_words_whole(rows: &[String], source: &str, columns: usize) {
    let words: std::collections::HashSet<&str> = source.split_whitespace().collect();
    for r in rows {
        for w in r.split_whitespace().filter(|w| w.is_ascii()) {
            assert!(
                words.contains(w)
                    || words
                        .iter()
                        .any(|s| s.contains(w) && memctl::tui::width::width(s) > columns),
                "{w:?} is a piece of a word that fits a row of {columns}: {r:?}"
            );
        }
    }
}

/// Asserts that no row is wider than `columns` (by display width).
fn assert_fits(rows: &[String], columns: usize) {
    for r in rows {
        assert!(
            memctl::tui::width::width(r) <= columns,
            "a row wider than {columns} columns: {r:?}"
        );
    }
}

/// `text` made terminal-safe and wrapped at `width` as the browser wraps it (by display
/// width, at word boundaries: `memctl::tui::width::wrap`, tested in its module).
fn wrapped(text: &str, width: usize) -> Vec<String> {
    let safe = memctl::output::sanitize::for_terminal(text);
    let mut rows = Vec::new();
    for line in safe.lines() {
        for r in memctl::tui::width::wrap(&line.replace('\t', "    "), width) {
            rows.push(r.trim_end().to_owned());
        }
    }
    rows
}

#[test]
fn search_view_jumps_to_the_hit() {
    let mut a = app("new.sqlite", None);
    typed(&mut a, "fparis");
    press(&mut a, KeyCode::Enter);
    snap(&mut a, "browse_search");
    // The fifth hit is message 4 of thread tools: the view starts at its banner.
    typed(&mut a, "jjjj");
    press(&mut a, KeyCode::Enter);
    let text = screen(&mut a, (80, 24));
    assert!(text.contains(" tools · checkpoint "), "{text}");
    let body: Vec<&str> = text.lines().skip(2).collect();
    assert!(body[0].contains("= Ai Message ="), "{text}");
    assert!(
        body[2].contains("It is sunny in Paris and 2+3=5."),
        "{text}"
    );
    // Esc goes back to the hits.
    press(&mut a, KeyCode::Esc);
    assert!(screen(&mut a, (80, 24)).contains("5 hits"));
}

#[test]
fn store_view() {
    let mut a = app("store.sqlite", None);
    typed(&mut a, "S");
    snap(&mut a, "browse_store");
    press(&mut a, KeyCode::Enter);
    snap(&mut a, "browse_store_items");
    // users.u-42.memories: an expired item is marked.
    press(&mut a, KeyCode::Esc);
    typed(&mut a, "jjjjj");
    press(&mut a, KeyCode::Enter);
    snap(&mut a, "browse_store_items_expired");
    press(&mut a, KeyCode::Esc);
    typed(&mut a, "g");
    press(&mut a, KeyCode::Enter);
    press(&mut a, KeyCode::Enter);
    snap(&mut a, "browse_store_value");
    // A database without a Store says so.
    let mut a = app("new.sqlite", None);
    typed(&mut a, "S");
    assert!(screen(&mut a, (80, 24)).contains("no LangGraph store in this database"));
}

#[test]
fn actions_and_help() {
    let mut a = app("new.sqlite", None);
    typed(&mut a, "a");
    snap(&mut a, "browse_actions");
    press(&mut a, KeyCode::Esc);
    typed(&mut a, "?");
    snap(&mut a, "browse_help");
    press(&mut a, KeyCode::Esc);
    typed(&mut a, "q");
    assert!(a.quit);
}

#[test]
fn the_actions_are_real_dry_runs_that_change_nothing() {
    let (_dir, db) = common::temp_copy(&common::fixture("new.sqlite"));
    let before = std::fs::read(&db).expect("read");
    let cli = Cli::try_parse_from(["memctl", "browse", "--db", common::s(&db)]).expect("parse");
    let actions = memctl::tui::actions::Actions::new(&Source::new(&cli.global), "tools");
    let mut names = Vec::new();
    for line in actions.commands() {
        let words: Vec<&str> = line.split_whitespace().collect();
        assert_eq!(words[0], "memctl");
        assert_eq!(words.last(), Some(&"--dry-run"), "{line}");
        names.push(words[1].to_owned());
        let out = common::memctl().args(&words[1..]).output().expect("runs");
        assert!(
            out.status.success(),
            "{line}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    assert_eq!(names, ["trim", "rm", "summarize", "gc", "prune"]);
    assert!(
        std::fs::read(&db).expect("read") == before,
        "a dry run wrote"
    );
}

#[test]
fn escapes_in_the_data_are_neutralised() {
    // A thread id holding ESC [2J (clear screen) is drawn as text.
    let (_dir, db) = common::temp_copy(&common::fixture("new.sqlite"));
    let conn = rusqlite::Connection::open(&db).expect("open");
    conn.execute(
        "UPDATE checkpoints SET thread_id = 'evil\u{1b}[2J' WHERE thread_id = 'tools'",
        [],
    )
    .expect("update");
    conn.execute(
        "UPDATE writes SET thread_id = 'evil\u{1b}[2J' WHERE thread_id = 'tools'",
        [],
    )
    .expect("update");
    drop(conn);
    let cli = Cli::try_parse_from(["memctl", "browse", "--db", common::s(&db), "--now", NOW])
        .expect("parse");
    let mut a = App::new(Source::new(&cli.global), None).expect("opens");
    let text = screen(&mut a, (80, 24));
    assert!(text.contains("evil\\u{1b}[2J"), "{text}");
    assert!(!text.contains('\u{1b}'), "{text}");
}

#[test]
fn a_non_utf8_locale_gets_ascii() {
    use memctl::tui::ascii::AsciiBackend;
    let mut a = app("new.sqlite", Some("tools"));
    a.finish_work();
    let mut terminal = Terminal::new(AsciiBackend {
        inner: TestBackend::new(80, 24),
    })
    .expect("a test terminal");
    terminal.draw(|f| a.draw(f)).expect("draws");
    let text = terminal.backend().inner.to_string();
    assert!(text.is_ascii(), "{text}");
    insta::assert_snapshot!("browse_history_ascii_80x24", text);
}

#[test]
fn refuses_outside_a_terminal() {
    let out = common::memctl()
        .args(["browse", "--db", common::s(&common::fixture("new.sqlite"))])
        .output()
        .expect("runs");
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("browse needs a terminal"), "{err}");
    assert!(err.contains("memctl threads list"), "{err}");
    assert!(out.stdout.is_empty());
}

/// The browser on a Postgres database (`url`).
fn app_at(url: &str) -> App {
    let cli = Cli::try_parse_from(["memctl", "browse", "--db", url, "--now", NOW])
        .expect("the arguments parse");
    App::new(Source::new(&cli.global), None).expect("the browser opens")
}

/// Snapshots with the test database's URL (its port and name change) replaced.
fn snap_pg(app: &mut App, name: &str) {
    // Whole lines: the URL's length moves where a line is cut.
    let filters = vec![
        (
            r#"" memctl browse · postgresql://[^"]*""#,
            r#"" memctl browse · [url] · …""#,
        ),
        (r#"" 'postgresql://[^"]*""#, r#"" '[url]' …""#),
    ];
    insta::with_settings!({filters => filters}, {
        snap(app, name);
    });
}

#[test]
#[cfg_attr(
    not(feature = "env-tests"),
    ignore = "needs scripts/test.sh's environment (--features env-tests)"
)]
fn postgres_views() {
    let db = common::pg::TestDb::fixture("browse");
    let before = db.rows_digest();
    let mut a = app_at(&db.url);
    typed(&mut a, "s");
    snap_pg(&mut a, "browse_pg_threads");
    // Open thread `tools`, its latest checkpoint, its diff.
    let text = screen(&mut a, (120, 40));
    let row = text
        .lines()
        .skip(3)
        .position(|l| l.contains("  tools "))
        .expect("tools is listed");
    for _ in 0..row {
        press(&mut a, KeyCode::Down);
    }
    press(&mut a, KeyCode::Enter);
    snap_pg(&mut a, "browse_pg_history");
    press(&mut a, KeyCode::Enter);
    snap_pg(&mut a, "browse_pg_checkpoint");
    typed(&mut a, "d");
    snap_pg(&mut a, "browse_pg_checkpoint_diff");
    assert!(db.rows_digest() == before, "browsing changed the database");

    let store = common::pg::TestDb::store_fixture("browse_store");
    // A Store without checkpoint tables opens on the Store, the reason on the bottom line.
    let mut a = app_at(&store.url);
    snap_pg(&mut a, "browse_pg_store");
    let wide = screen(&mut a, (300, 10));
    assert!(wide.contains("has no 'checkpoints' table"), "{wide}");
    assert!(wide.contains("Store · 7 namespaces"), "{wide}");
    press(&mut a, KeyCode::Enter);
    press(&mut a, KeyCode::Enter);
    snap_pg(&mut a, "browse_pg_store_value");
}

#[test]
#[cfg_attr(
    not(feature = "env-tests"),
    ignore = "needs scripts/test.sh's environment (--features env-tests)"
)]
fn a_real_terminal_session_leaves_the_file_unchanged() {
    let (dir, db) = common::temp_copy(&common::fixture("new.sqlite"));
    let before = std::fs::read(&db).expect("read");
    let bin = env!("CARGO_BIN_EXE_memctl");
    // The pane's shell line: memctl, then a marker with its exit code once it returns.
    let command = format!(
        "env -u MEMCTL_DB -u LC_ALL -u LC_CTYPE LANG=C.UTF-8 {bin} browse --db {} --now {NOW}; echo memctl-exit=$?; read wait",
        common::s(&db)
    );
    let t = Pane::shell("browse-utf8", &command, (100, 30));
    t.wait_for("14 of 14 threads");
    // Open thread `tools` (the 13th row), its history, its latest checkpoint.
    for _ in 0..12 {
        t.send(&["j"]);
    }
    t.wait_for("> tools");
    t.key("Enter", "thread tools · 10 checkpoints");
    // The tokens are counted between keys: the sparkline fills in.
    t.wait_for("tokens per checkpoint (max 160)");
    // A resize to 80x24 redraws at the new size: the two sparkline boxes split 80 columns.
    t.resize(80, 24);
    common::wait_for("the history redrawn at 80 columns", || {
        t.screen()
            .lines()
            .nth(1)
            .and_then(|l| l.find("┐┌").map(|i| l[..i].chars().count()))
            == Some(39)
    });
    let show = t.key(
        "Enter",
        "checkpoint 1f1ed47f-8372-63a9-8008-693bc35ab911 · show",
    );
    assert!(
        show.contains("Weather in Paris, and what is 2+3?"),
        "{show}"
    );
    let diff = t.key("d", "diff vs parent");
    assert!(
        diff.contains("+ [ai] ai-tools-4 Berlin is sunny too."),
        "{diff}"
    );
    t.key("Escape", "thread tools · 10 checkpoints");
    t.key("Escape", "14 of 14 threads");
    t.key("f", "find (latest states and the Store, any case)");
    t.type_text("berlin");
    t.wait_for("any case): berlin");
    let hits = t.key("Enter", "«Berlin»");
    assert!(hits.contains("tools "), "{hits}");
    let hit = t.key("Enter", " · show · ");
    assert!(hit.contains("tools · checkpoint"), "{hit}");
    t.key("q", "any case): berlin");
    t.key("q", "14 of 14 threads");
    t.send(&["q"]);
    assert_eq!(t.exit().0, 0);
    assert!(t.alive());
    let after = std::fs::read(&db).expect("read");
    assert!(before == after, "the database file changed");
    // No journal, WAL or shm file was left beside it.
    let names: Vec<String> = std::fs::read_dir(dir.path())
        .expect("list")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names, vec!["new.sqlite".to_owned()]);
}

#[test]
#[cfg_attr(
    not(feature = "env-tests"),
    ignore = "needs scripts/test.sh's environment (--features env-tests)"
)]
fn a_real_terminal_with_a_non_utf8_locale_shows_ascii() {
    let (_dir, db) = common::temp_copy(&common::fixture("new.sqlite"));
    let bin = env!("CARGO_BIN_EXE_memctl");
    let command = format!(
        "env -u MEMCTL_DB -u LC_CTYPE LC_ALL=C {bin} browse --db {} --now {NOW}; echo memctl-exit=$?; read wait",
        common::s(&db)
    );
    let t = Pane::shell("browse-c", &command, (100, 30));
    let screen = t.wait_for("14 of 14 threads . sorted by age --");
    assert!(screen.is_ascii(), "{screen}");
    assert!(screen.contains("> surrogate "), "{screen}");
    t.send(&["q"]);
    assert_eq!(t.exit().0, 0);
}

/// A threads-table row of a screen as `thread cps messages tokens age bytes` (blanks
/// collapsed, the selection mark and the size bar left out).
fn thread_row(line: &str) -> String {
    let words: Vec<&str> = line
        .trim_start_matches(['>', ' '])
        .split_whitespace()
        .filter(|w| !w.contains('█'))
        .collect();
    words.join(" ")
}

/// The threads table's rows (below the title and header) of a TestBackend screen.
fn thread_rows(screen: &str) -> Vec<String> {
    rows_of(screen)
        .iter()
        .skip(3)
        .take_while(|l| !l.trim().is_empty())
        .map(|l| thread_row(l))
        .collect()
}

/// `memctl threads list --sort SORT` as the browser's rows show it.
fn threads_list_rows(fixture: &str, sort: &str) -> Vec<String> {
    let db = format!("fixtures/{fixture}");
    let out = memctl_out(&[
        "threads", "list", "--db", &db, "--now", NOW, "--sort", sort, "--format", "json",
    ]);
    let records: Vec<serde_json::Value> = serde_json::from_str(&out).expect("threads list JSON");
    let cell = |v: &serde_json::Value| v.as_u64().map_or("-".to_owned(), |n| n.to_string());
    records
        .iter()
        .map(|r| {
            let age = r["age_seconds"]
                .as_i64()
                .map_or("-".to_owned(), memctl::output::human::age);
            let bytes = memctl::output::human::bytes(r["bytes"].as_u64().expect("bytes"));
            format!(
                "{} {} {} {} {age} {bytes}",
                r["thread_id"].as_str().expect("an id"),
                r["checkpoints"],
                cell(&r["messages"]),
                cell(&r["tokens"]),
            )
        })
        .collect()
}

#[test]
fn threads_drawn_from_summaries_then_filled_in_equal_threads_list() {
    // Plain, DeltaChannel (messages rebuilt), JS, encrypted without a key (no state shown),
    // old-format and deep-agent files.
    for fixture in [
        "new.sqlite",
        "delta.sqlite",
        "js-delta.sqlite",
        "encrypted-mixed.sqlite",
        "old.sqlite",
        "deep.sqlite",
    ] {
        let mut a = app(fixture, None);
        // The first draw: every thread, its messages and tokens pending.
        let first = screen_now(&mut a, (120, 60));
        assert!(a.working(), "{fixture}: nothing left to fill in\n{first}");
        let rows = thread_rows(&first);
        let expected = threads_list_rows(fixture, "updated");
        assert_eq!(rows.len(), expected.len(), "{fixture}\n{first}");
        assert!(first.contains("· reading "), "{fixture}\n{first}");
        for row in &rows {
            let cells: Vec<&str> = row.split(' ').collect();
            assert_eq!(cells[2..4], ["…", "…"], "{fixture}: {row}");
        }
        // Filled in: the rows of `threads list`, in its order.
        let filled = screen(&mut a, (120, 60));
        assert!(!a.working());
        assert!(!filled.contains('…'), "{fixture}\n{filled}");
        assert_eq!(thread_rows(&filled), expected, "{fixture}\n{filled}");
    }
}

#[test]
fn sorting_by_messages_or_tokens_waits_for_the_counts() {
    let mut a = app("new.sqlite", None);
    let by_age = thread_rows(&screen_now(&mut a, (120, 40)));
    // s s: age -> size -> messages, before any count is read.
    typed(&mut a, "ss");
    let waiting = screen_now(&mut a, (120, 40));
    assert!(
        waiting.contains("sorted by messages once read (14 left …)"),
        "{waiting}"
    );
    // Not sorted on pending values: still newest first.
    assert_eq!(thread_rows(&waiting), by_age);
    // Once the counts are read, the order is `threads list --sort messages`'s.
    let sorted = screen(&mut a, (120, 40));
    assert!(
        sorted.contains("14 of 14 threads · sorted by messages "),
        "{sorted}"
    );
    assert_eq!(
        thread_rows(&sorted),
        threads_list_rows("new.sqlite", "messages")
    );
    typed(&mut a, "s");
    let sorted = screen(&mut a, (120, 40));
    assert_eq!(
        thread_rows(&sorted),
        threads_list_rows("new.sqlite", "tokens")
    );
    // A sort that needs no count is applied at once.
    let mut a = app("new.sqlite", None);
    typed(&mut a, "s");
    let by_size = screen_now(&mut a, (120, 40));
    assert!(a.working());
    assert!(
        by_size.contains("sorted by size · reading 14 …"),
        "{by_size}"
    );
    let sizes: Vec<String> = thread_rows(&by_size)
        .iter()
        .map(|r| r.split(' ').next().unwrap_or_default().to_owned())
        .collect();
    let expected: Vec<String> = threads_list_rows("new.sqlite", "size")
        .iter()
        .map(|r| r.split(' ').next().unwrap_or_default().to_owned())
        .collect();
    assert_eq!(sizes, expected);
}

// ---------------------------------------------------------------------------------------------
// Double-width text (#46): fixtures/wide.sqlite (fixtures/generate_wide.py, real LangGraph) has
// a thread whose id and messages are CJK and emoji, and a Store of CJK namespaces, keys and
// values. Every view is drawn at 80x24 and 160x45; no wide character is cut in half or runs
// past the edge, the text views lose nothing, and the titles keep their counts.
// ---------------------------------------------------------------------------------------------

/// The CJK thread of fixtures/wide.sqlite.
const WIDE: &str = "用户42-北京旅行计划-🚄";

/// The "now" of the wide fixture's screens (after it was written).
const WIDE_NOW: &str = "2026-12-10T00:00:00Z";

/// The sizes the wide fixture's views are drawn at.
const WIDE_SIZES: [(u16, u16); 2] = [(80, 24), (160, 45)];

/// The browser on fixtures/wide.sqlite.
fn wide_app() -> App {
    let cli = Cli::try_parse_from([
        "memctl",
        "browse",
        "--db",
        "fixtures/wide.sqlite",
        "--now",
        WIDE_NOW,
    ])
    .expect("the arguments parse");
    App::new(Source::new(&cli.global), None).expect("the browser opens")
}

/// Asserts that the buffer's cells are what a terminal can show as ratatui means them: no
/// control character, every double-width character whole (not at the last column with its
/// second half off screen, its second cell not overwritten by anything else).
fn assert_cells_whole(buf: &ratatui::buffer::Buffer, what: &str) {
    use memctl::tui::width::width;
    let (w, h) = (buf.area.width, buf.area.height);
    for y in 0..h {
        let mut x = 0;
        while x < w {
            let symbol = buf[(x, y)].symbol();
            assert!(
                !symbol.contains(char::is_control),
                "{what}: a control character at ({x}, {y})"
            );
            let cw = width(symbol).max(1) as u16;
            assert!(
                x + cw <= w,
                "{what}: {symbol:?} at ({x}, {y}) runs past the edge of {w} columns"
            );
            for k in 1..cw {
                let hidden = buf[(x + k, y)].symbol();
                assert!(
                    hidden == " ",
                    "{what}: the second half of {symbol:?} at ({x}, {y}) holds {hidden:?}"
                );
            }
            x += cw;
        }
    }
}

/// The screen as a terminal shows it: each row's characters (a double-width one once), the
/// blanks at the end of a row left out. Checks the cells first ([`assert_cells_whole`]).
fn plain_screen(app: &mut App, (w, h): (u16, u16)) -> String {
    app.finish_work();
    let mut terminal = Terminal::new(TestBackend::new(w, h)).expect("a test terminal");
    terminal.draw(|f| app.draw(f)).expect("draws");
    let buf = terminal.backend().buffer();
    assert_cells_whole(buf, &format!("{w}x{h}"));
    let mut out = String::new();
    for y in 0..h {
        let mut row = String::new();
        let mut x = 0;
        while x < w {
            let symbol = buf[(x, y)].symbol();
            row.push_str(symbol);
            x += memctl::tui::width::width(symbol).max(1) as u16;
        }
        out.push_str(row.trim_end());
        out.push('\n');
    }
    out
}

/// Snapshots the screen at both wide sizes as `name_WxH`; returns the 80x24 one.
fn snap_wide(app: &mut App, name: &str) -> String {
    let mut first = String::new();
    for size in WIDE_SIZES {
        let text = plain_screen(app, size);
        for row in text.lines() {
            assert!(
                memctl::tui::width::width(row) <= size.0 as usize,
                "{name}: a row wider than {}: {row}",
                size.0
            );
        }
        insta::assert_snapshot!(format!("{name}_{}x{}", size.0, size.1), text);
        if first.is_empty() {
            first = text;
        }
    }
    first
}

/// The title line of a view (its second row), with a blank after it.
fn title_of(screen: &str) -> String {
    format!("{} ", screen.lines().nth(1).unwrap_or_default())
}

/// The body of a checkpoint or Store value view: the rows between the view's title and the
/// key line.
fn body_of(screen: &str, (_, h): (u16, u16)) -> Vec<String> {
    screen
        .lines()
        .skip(2)
        .take(h as usize - 3)
        .map(str::to_owned)
        .collect()
}

/// `memctl ARGS` on fixtures/wide.sqlite.
fn wide_out(args: &[&str]) -> String {
    let mut all = args.to_vec();
    all.extend(["--db", "fixtures/wide.sqlite"]);
    memctl_out(&all)
}

#[test]
fn wide_text_in_every_view_fits_the_screen() {
    let mut a = wide_app();
    let threads = snap_wide(&mut a, "browse_wide_threads");
    assert!(threads.contains(&format!("> {WIDE} ")), "{threads}");

    press(&mut a, KeyCode::Enter);
    let history = snap_wide(&mut a, "browse_wide_history");
    assert!(
        history.contains(&format!(" thread {WIDE} · 13 checkpoints, newest first ")),
        "{history}"
    );

    // The checkpoint as `show` prints it: nothing lost at the edge (the rows' text is
    // show's, in order), and the title's row count whole.
    press(&mut a, KeyCode::Enter);
    let show = wide_out(&["show", "--thread", WIDE]);
    for size in WIDE_SIZES {
        let screen = plain_screen(&mut a, size);
        let rows = body_of(&screen, size);
        assert_fits(&rows, size.0 as usize);
        assert!(
            ink(&show).starts_with(&ink(&rows.concat())),
            "{size:?}: the screen is not show's text:\n{screen}"
        );
        let total = wrapped(&show, size.0 as usize).len();
        assert!(
            title_of(&screen).contains(&format!("· show · row 1/{total} ")),
            "{size:?}: not row 1/{total}:\n{screen}"
        );
        // The header line (thread, checkpoint, step, time) is whole on its rows.
        let header = show.lines().next().expect("a header");
        assert_eq!(ink(&rows[..2].concat()), ink(header), "{screen}");
        assert_words_whole(&rows, &show, size.0 as usize);
    }
    snap_wide(&mut a, "browse_wide_checkpoint");
    // The end (G at each size: a resize keeps the message on screen, from its first row).
    for size in WIDE_SIZES {
        typed(&mut a, "G");
        let screen = plain_screen(&mut a, size);
        let rows = body_of(&screen, size);
        assert!(ink(&show).ends_with(&ink(&rows.concat())), "{size:?}");
        assert_words_whole(&rows, &show, size.0 as usize);
        let total = wrapped(&show, size.0 as usize).len();
        let first = total - rows.len() + 1;
        assert!(
            title_of(&screen).contains(&format!("· show · row {first}/{total} ")),
            "{screen}"
        );
        insta::assert_snapshot!(
            format!("browse_wide_checkpoint_end_{}x{}", size.0, size.1),
            screen
        );
    }

    // The diff against the parent: `diff --to`'s text.
    typed(&mut a, "d");
    let id = history_json("wide.sqlite", WIDE)[0]["checkpoint_id"]
        .as_str()
        .expect("an id")
        .to_owned();
    let diff = wide_out(&["diff", "--thread", WIDE, "--to", &id]);
    for size in WIDE_SIZES {
        let rows = body_of(&plain_screen(&mut a, size), size);
        assert_eq!(ink(&rows.concat()), ink(&diff), "{size:?}");
    }
    snap_wide(&mut a, "browse_wide_diff");

    // The tokens: `tokens`'s cells in order; the text column wraps between words and CJK
    // characters, never inside a word that fits a row.
    typed(&mut a, "t");
    let tokens = wide_out(&["tokens", "--thread", WIDE]);
    for size in WIDE_SIZES {
        let rows = body_of(&plain_screen(&mut a, size), size);
        assert_fits(&rows, size.0 as usize);
        assert!(ink(&tokens).starts_with(&ink(&rows.concat())), "{size:?}");
        assert_words_whole(&rows, &tokens, size.0 as usize);
    }
    snap_wide(&mut a, "browse_wide_tokens");

    // The search: the thread's hit and the Store's, as `find` lists them.
    press(&mut a, KeyCode::Esc);
    press(&mut a, KeyCode::Esc);
    assert!(plain_screen(&mut a, (80, 24)).contains("2 of 2 threads"));
    typed(&mut a, "f拉面");
    press(&mut a, KeyCode::Enter);
    let search = snap_wide(&mut a, "browse_wide_search");
    assert!(
        search.contains(" 2 hits: 1 in threads, 1 in the Store\n"),
        "{search}"
    );

    // The Store hit opens the Store at the item; its long value wraps.
    typed(&mut a, "j");
    press(&mut a, KeyCode::Enter);
    let value = snap_wide(&mut a, "browse_wide_store_value");
    assert!(
        value.contains(" Store · 用户.u-42.记忆 · 饮食偏好 "),
        "{value}"
    );
    let json = wide_out(&[
        "store",
        "get",
        "用户.u-42.记忆",
        "饮食偏好",
        "--format",
        "json",
    ]);
    for size in WIDE_SIZES {
        let rows = body_of(&plain_screen(&mut a, size), size);
        assert_fits(&rows, size.0 as usize);
        assert_eq!(ink(&rows.concat()), ink(&json), "{size:?}");
    }
    press(&mut a, KeyCode::Esc);
    let items = snap_wide(&mut a, "browse_wide_store_items");
    assert!(items.contains("> 饮食偏好 "), "{items}");
    press(&mut a, KeyCode::Esc);
    let namespaces = snap_wide(&mut a, "browse_wide_store");
    assert!(namespaces.contains("> 用户.u-42.记忆 "), "{namespaces}");

    // The actions for the CJK thread (its id quoted for the shell).
    press(&mut a, KeyCode::Esc);
    press(&mut a, KeyCode::Esc);
    assert!(plain_screen(&mut a, (80, 24)).contains("2 of 2 threads"));
    typed(&mut a, "a");
    assert!(!a.quit);
    let actions = snap_wide(&mut a, "browse_wide_actions");
    assert!(actions.contains(&format!("--thread '{WIDE}'")), "{actions}");
}

#[test]
fn a_long_id_is_cut_in_titles_and_the_counts_stay_whole() {
    // The ASCII fixture at 80 columns: the checkpoint id gives way to the row count (it was
    // cut at the edge: `row` with no count).
    let mut a = app("new.sqlite", Some("tools"));
    press(&mut a, KeyCode::Enter);
    typed(&mut a, "t");
    let text = plain_screen(&mut a, (80, 24));
    let title = title_of(&text);
    assert!(title.ends_with(" · tokens (approx) · row 1/23 "), "{title}");
    assert!(
        title.contains(" checkpoint 1f1ed47f-8372-63a9-8008-693bc…"),
        "{title}"
    );
    // The wide thread in a narrow terminal: its id is cut, marked, never halved.
    let mut a = wide_app();
    press(&mut a, KeyCode::Enter);
    let text = plain_screen(&mut a, (50, 20));
    assert!(
        text.contains(" thread 用户42-北… · 13 checkpoints, newest first"),
        "{text}"
    );
    press(&mut a, KeyCode::Enter);
    let text = plain_screen(&mut a, (60, 20));
    let title = title_of(&text);
    assert!(title.contains(" · show · row 1/"), "{title}");
    assert!(title.contains("…"), "{title}");
}

#[test]
fn search_lists_the_store_hits_as_find_does() {
    // fixtures/store.sqlite: `find ramen` has one hit, in the Store (its thread says nothing
    // of ramen); the browser said "no hits".
    let mut a = app("store.sqlite", None);
    typed(&mut a, "framen");
    press(&mut a, KeyCode::Enter);
    let text = plain_screen(&mut a, (80, 24));
    assert!(!text.contains("no hits"), "{text}");
    assert!(text.contains(" 1 hit in the Store\n"), "{text}");
    assert!(
        text.contains("> users.u-42.memories food store  likes «ramen» 🍜"),
        "{text}"
    );
    // Enter opens the Store at the item's value; Esc goes back through its item and its
    // namespace to the hits.
    press(&mut a, KeyCode::Enter);
    let value = plain_screen(&mut a, (80, 24));
    assert!(
        value.contains(" Store · users.u-42.memories · food "),
        "{value}"
    );
    assert!(value.contains(r#""text": "likes ramen 🍜","#), "{value}");
    press(&mut a, KeyCode::Esc);
    let items = plain_screen(&mut a, (80, 24));
    assert!(items.contains("> food "), "{items}");
    press(&mut a, KeyCode::Esc);
    let namespaces = plain_screen(&mut a, (80, 24));
    assert!(
        namespaces.contains("> users.u-42.memories "),
        "{namespaces}"
    );
    press(&mut a, KeyCode::Esc);
    assert!(plain_screen(&mut a, (80, 24)).contains("likes «ramen» 🍜"));

    // The same hits in the same order as `find -i PATTERN`, threads' and Store's.
    for (fixture, pattern) in [
        ("store.sqlite", "e"),
        ("store.sqlite", "ramen"),
        ("wide.sqlite", "拉面"),
        ("wide.sqlite", "sunny"),
        ("new.sqlite", "paris"),
    ] {
        let db = format!("fixtures/{fixture}");
        let out = memctl_out(&["find", "-i", pattern, "--db", &db, "--format", "json"]);
        let hits: Vec<serde_json::Value> = serde_json::from_str(&out).expect("find's JSON");
        let expected: Vec<String> = hits
            .iter()
            .map(|h| match h["thread_id"].as_str() {
                Some(t) => format!("{t} {} {}", h["index"], h["role"].as_str().unwrap_or("")),
                None => {
                    let ns: Vec<&str> = h["namespace"]
                        .as_array()
                        .expect("a namespace")
                        .iter()
                        .map(|l| l.as_str().expect("a label"))
                        .collect();
                    format!(
                        "{} {} store",
                        ns.join("."),
                        h["key"].as_str().unwrap_or("-")
                    )
                }
            })
            .collect();
        assert!(!expected.is_empty(), "{fixture} {pattern}");
        let cli = Cli::try_parse_from(["memctl", "browse", "--db", &db, "--now", WIDE_NOW])
            .expect("parse");
        let mut a = App::new(Source::new(&cli.global), None).expect("opens");
        typed(&mut a, "f");
        typed(&mut a, pattern);
        press(&mut a, KeyCode::Enter);
        // Wide enough that no cell is cut; tall enough for every hit.
        let text = plain_screen(&mut a, (250, expected.len() as u16 + 10));
        let rows: Vec<String> = text
            .lines()
            .skip(5)
            .take(expected.len())
            .map(|l| {
                let cells: Vec<&str> = l
                    .trim_start_matches(['>', ' '])
                    .split_whitespace()
                    .collect();
                cells[..3].join(" ")
            })
            .collect();
        assert_eq!(rows, expected, "{fixture} {pattern}\n{text}");
    }

    // "no hits" when neither the threads nor the Store has any.
    let mut a = wide_app();
    typed(&mut a, "fno-such-text");
    press(&mut a, KeyCode::Enter);
    assert!(plain_screen(&mut a, (80, 24)).contains(" no hits"));
}

/// A screen's text without the blanks that end its rows and the empty rows that end it.
fn normalized(screen: &str) -> String {
    let rows: Vec<&str> = screen.lines().map(str::trim_end).collect();
    let end = rows
        .iter()
        .rposition(|r| !r.is_empty())
        .map_or(0, |i| i + 1);
    rows[..end].join("\n")
}

/// Waits until the real terminal shows `expected` (what ratatui drew in a TestBackend of the
/// same size); every row of the terminal fits its width.
fn terminal_shows(t: &Pane, expected: &str, columns: usize) {
    let want = normalized(expected);
    let start = std::time::Instant::now();
    loop {
        let got = t.screen();
        if normalized(&got) == want {
            for row in got.lines() {
                assert!(
                    memctl::tui::width::width(row) <= columns,
                    "a row wider than {columns}: {row}"
                );
            }
            return;
        }
        assert!(
            start.elapsed() < common::tmux::PATIENCE,
            "the terminal shows:\n{got}\nnot:\n{want}"
        );
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
}

/// A shell line that runs the browser on `fixture` (a copy, in a `fixtures` folder of `dir`,
/// so the title says `fixtures/NAME`) in a UTF-8 locale at `now`.
fn browse_in(dir: &std::path::Path, fixture: &str, now: &str) -> String {
    let fixtures = dir.join("fixtures");
    std::fs::create_dir_all(&fixtures).expect("mkdir");
    std::fs::copy(common::fixture(fixture), fixtures.join(fixture)).expect("copy");
    format!(
        "cd '{}' && env -u MEMCTL_DB -u LC_ALL -u LC_CTYPE LANG=C.UTF-8 {} browse --db fixtures/{fixture} --now {now}; echo memctl-exit=$?; read wait",
        dir.display(),
        env!("CARGO_BIN_EXE_memctl")
    )
}

#[test]
#[cfg_attr(
    not(feature = "env-tests"),
    ignore = "needs scripts/test.sh's environment (tmux; --features env-tests)"
)]
fn a_real_80x24_terminal_shows_wide_text_as_ratatui_draws_it() {
    // The CJK thread, its history, its checkpoint, its tokens, a search with a Store hit and
    // the Store value it opens: the terminal's screen is, row for row, the TestBackend's (a
    // terminal that measured a character otherwise would shift the rest of its row).
    let dir = tempfile::tempdir().expect("a temp dir");
    let t = Pane::exact(
        "browse-wide",
        &browse_in(dir.path(), "wide.sqlite", WIDE_NOW),
        (80, 24),
    );
    let mut a = wide_app();
    let size = (80, 24);
    terminal_shows(&t, &plain_screen(&mut a, size), 80);
    for (key, code) in [
        ("Enter", KeyCode::Enter),
        ("Enter", KeyCode::Enter),
        ("t", KeyCode::Char('t')),
        ("G", KeyCode::Char('G')),
        ("t", KeyCode::Char('t')),
        ("G", KeyCode::Char('G')),
    ] {
        t.send(&[key]);
        press(&mut a, code);
        terminal_shows(&t, &plain_screen(&mut a, size), 80);
    }
    // Back to the threads (the checkpoint, the history).
    for _ in 0..2 {
        t.send(&["Escape"]);
        press(&mut a, KeyCode::Esc);
        terminal_shows(&t, &plain_screen(&mut a, size), 80);
    }
    assert!(!a.quit);
    t.send(&["f"]);
    t.type_text("拉面");
    t.send(&["Enter"]);
    typed(&mut a, "f拉面");
    press(&mut a, KeyCode::Enter);
    terminal_shows(&t, &plain_screen(&mut a, size), 80);
    t.send(&["j", "Enter"]);
    typed(&mut a, "j");
    press(&mut a, KeyCode::Enter);
    let value = plain_screen(&mut a, size);
    assert!(
        value.contains("Store · 用户.u-42.记忆 · 饮食偏好"),
        "{value}"
    );
    terminal_shows(&t, &value, 80);
    t.send(&["C-c"]);
    assert_eq!(t.exit().0, 0);
}

// ---------------------------------------------------------------------------------------------
// The screens the documentation shows (#46: the README's capture of the history view was
// garbled, the threads table's rows under the history's header): docs/screens/*.txt are
// these views at 80x24, as a terminal shows them (a tmux test below reads the history view
// off a real terminal and finds this text).
// ---------------------------------------------------------------------------------------------

/// Where the documentation's screens are.
const SCREENS: &str = "docs/screens";

/// The screens of the documentation, by file name: what a person sees at 80x24 after the
/// keys the documentation names.
fn doc_screens() -> Vec<(&'static str, String)> {
    let size = (80, 24);
    let mut out = Vec::new();
    // Threads sorted by size (s); the history of `tools`, the second (j, Enter); its latest
    // checkpoint (Enter), the diff against its parent (d), the tokens (t).
    let mut a = app("new.sqlite", None);
    typed(&mut a, "s");
    out.push(("browse-threads.txt", plain_screen(&mut a, size)));
    typed(&mut a, "j");
    press(&mut a, KeyCode::Enter);
    out.push(("browse-history.txt", plain_screen(&mut a, size)));
    press(&mut a, KeyCode::Enter);
    out.push(("browse-checkpoint.txt", plain_screen(&mut a, size)));
    typed(&mut a, "d");
    out.push(("browse-diff.txt", plain_screen(&mut a, size)));
    typed(&mut a, "t");
    out.push(("browse-tokens.txt", plain_screen(&mut a, size)));
    // Back to the threads: a search (f, berlin, Enter), then the actions of `tools` (a).
    press(&mut a, KeyCode::Esc);
    press(&mut a, KeyCode::Esc);
    typed(&mut a, "fberlin");
    press(&mut a, KeyCode::Enter);
    out.push(("browse-search.txt", plain_screen(&mut a, size)));
    press(&mut a, KeyCode::Esc);
    typed(&mut a, "a");
    out.push(("browse-actions.txt", plain_screen(&mut a, size)));
    // The Store of fixtures/store.sqlite (S), the items of users.u-42.memories, a value.
    let mut a = app("store.sqlite", None);
    typed(&mut a, "S");
    out.push(("browse-store.txt", plain_screen(&mut a, size)));
    typed(&mut a, "jjjjj");
    press(&mut a, KeyCode::Enter);
    out.push(("browse-store-items.txt", plain_screen(&mut a, size)));
    press(&mut a, KeyCode::Enter);
    out.push(("browse-store-value.txt", plain_screen(&mut a, size)));
    // Double-width text: the CJK thread of fixtures/wide.sqlite, its latest checkpoint, and
    // a search that finds a message and a Store item.
    let mut a = wide_app();
    press(&mut a, KeyCode::Enter);
    press(&mut a, KeyCode::Enter);
    out.push(("browse-wide-checkpoint.txt", plain_screen(&mut a, size)));
    press(&mut a, KeyCode::Esc);
    press(&mut a, KeyCode::Esc);
    typed(&mut a, "f拉面");
    press(&mut a, KeyCode::Enter);
    out.push(("browse-wide-search.txt", plain_screen(&mut a, size)));
    out
}

/// docs/screens/ holds exactly the screens [`doc_screens`] draws (no stale file), byte for
/// byte. `MEMCTL_WRITE_SCREENS=1 cargo test --test browse docs_screens` writes them.
#[test]
fn docs_screens_are_current() {
    let dir = common::root().join(SCREENS);
    let screens = doc_screens();
    if std::env::var_os("MEMCTL_WRITE_SCREENS").is_some() {
        std::fs::create_dir_all(&dir).expect("mkdir");
        for (name, text) in &screens {
            std::fs::write(dir.join(name), text).expect("write");
        }
    }
    let stale = "run `MEMCTL_WRITE_SCREENS=1 cargo test --test browse docs_screens`";
    let mut committed: Vec<String> = std::fs::read_dir(&dir)
        .map(|it| {
            it.filter_map(Result::ok)
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    committed.sort();
    let mut names: Vec<String> = screens.iter().map(|(n, _)| (*n).to_owned()).collect();
    names.sort();
    assert_eq!(committed, names, "{SCREENS} is stale: {stale}");
    for (name, text) in &screens {
        let old = std::fs::read_to_string(dir.join(name)).unwrap_or_default();
        assert!(
            old == *text,
            "{SCREENS}/{name} is stale: {stale}\nnow:\n{text}"
        );
        // What the README once showed: the threads' rows under the history's header.
        assert_eq!(text.lines().count(), 24, "{name}");
    }
    let history = &screens[1].1;
    assert!(
        history.contains(" thread tools · 10 checkpoints, newest first"),
        "{history}"
    );
    assert!(!history.contains("summarized"), "{history}");
}

#[test]
#[cfg_attr(
    not(feature = "env-tests"),
    ignore = "needs scripts/test.sh's environment (tmux; --features env-tests)"
)]
fn the_documented_history_screen_is_what_a_terminal_shows() {
    // docs/screens/browse-history.txt (threads sorted by size, j, Enter) is the real
    // terminal's screen.
    let dir = tempfile::tempdir().expect("a temp dir");
    let t = Pane::exact(
        "browse-doc",
        &browse_in(dir.path(), "new.sqlite", NOW),
        (80, 24),
    );
    t.wait_for("14 of 14 threads");
    t.send(&["s"]);
    t.wait_for("sorted by size");
    t.send(&["j", "Enter"]);
    let doc = std::fs::read_to_string(common::root().join(SCREENS).join("browse-history.txt"))
        .expect("the documented screen");
    terminal_shows(&t, &doc, 80);
    t.send(&["C-c"]);
    assert_eq!(t.exit().0, 0);
}
