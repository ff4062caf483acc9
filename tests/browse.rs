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
    let tokens = wrapped(
        &memctl_out(&["tokens", "--db", "fixtures/deep.sqlite", "--thread", thread]),
        80,
    );
    press(&mut a, KeyCode::Char('t'));
    let counting = screen_now(&mut a, (80, 24));
    assert!(a.working());
    assert!(
        counting.contains("counting tokens: 128 of 163 messages …"),
        "{counting}"
    );
    assert_eq!(body(&screen(&mut a, (80, 24))), tokens[..h]);
    press(&mut a, KeyCode::Char('G'));
    assert_eq!(body(&screen(&mut a, (80, 24))), tokens[tokens.len() - h..]);
}

/// `text` made terminal-safe and wrapped at `width` as the browser wraps it.
fn wrapped(text: &str, width: usize) -> Vec<String> {
    let safe = memctl::output::sanitize::for_terminal(text);
    let mut rows = Vec::new();
    for line in safe.lines() {
        let chars: Vec<char> = line.replace('\t', "    ").chars().collect();
        if chars.is_empty() {
            rows.push(String::new());
        }
        for c in chars.chunks(width) {
            rows.push(c.iter().collect::<String>().trim_end().to_owned());
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
    t.key("f", "find (latest states, any case)");
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
