//! `memctl forget` (#18) on a PostgresSaver database (`MEMCTL_TEST_PG`): the threads of
//! forget.sqlite's scenarios written by real LangGraph's `PostgresSaver` (.venv/pg,
//! tests/interop/harness_pg.py load-forget) into a database of the test's own; afterwards no
//! row holds what was erased, LangGraph continues every remaining thread, an untouched
//! thread's rows are as they were, the receipt says what the server keeps out of reach, and a
//! dry run changes no row. Fails, never skips, without the server or LangGraph.

mod common;

use common::memctl;
use common::pg::TestDb;
use serde_json::Value as Json;

fn harness(args: &[&str]) -> Json {
    common::Harness::new("pg", "harness_pg.py")
        .run(args)
        .expect_json(args)
}

/// A fresh database holding graphs.FORGET's threads, written by PostgresSaver.
fn loaded(hint: &str) -> TestDb {
    let db = TestDb::empty(hint);
    harness(&["load-forget", "--url", &db.url]);
    db
}

/// Rows (any table, any column) that hold `text`.
fn rows_holding(db: &TestDb, text: &str) -> i64 {
    let sql = format!(
        "SELECT (SELECT count(*) FROM checkpoints WHERE strpos(checkpoint::text || metadata::text, '{text}') > 0) \
              + (SELECT count(*) FROM checkpoint_blobs WHERE position('{text}'::bytea in blob) > 0) \
              + (SELECT count(*) FROM checkpoint_writes WHERE position('{text}'::bytea in blob) > 0)"
    );
    db.count(&sql)
}

/// Every row of one thread, as text.
fn thread_rows(db: &TestDb, thread: &str) -> String {
    let mut c = db.client();
    let mut out = String::new();
    for sql in [
        "SELECT string_agg(checkpoint_ns || checkpoint_id || COALESCE(parent_checkpoint_id, '') || checkpoint::text || metadata::text, '|' ORDER BY checkpoint_ns, checkpoint_id) FROM checkpoints WHERE thread_id = $1",
        "SELECT string_agg(checkpoint_ns || channel || version || type || COALESCE(encode(blob, 'hex'), ''), '|' ORDER BY checkpoint_ns, channel, version) FROM checkpoint_blobs WHERE thread_id = $1",
        "SELECT string_agg(checkpoint_ns || checkpoint_id || task_id || idx || channel || encode(blob, 'hex'), '|' ORDER BY checkpoint_ns, checkpoint_id, task_id, idx) FROM checkpoint_writes WHERE thread_id = $1",
    ] {
        let v: Option<String> = c.query_one(sql, &[&thread]).expect(sql).get(0);
        out.push_str(&v.unwrap_or_default());
        out.push('#');
    }
    out
}

fn forget(db: &TestDb, args: &[&str]) -> (i32, Json) {
    let out = memctl()
        .args([
            "forget", "--db", &db.url, "--settle", "0s", "--format", "json",
        ])
        .args(args)
        .output()
        .expect("memctl runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let doc = serde_json::from_str(&stdout)
        .unwrap_or_else(|e| panic!("{e}: {stdout}\n{}", String::from_utf8_lossy(&out.stderr)));
    (out.status.code().unwrap_or(-1), doc)
}

#[test]
fn forget_on_postgres_leaves_no_row_with_the_text_and_langgraph_continues() {
    let db = loaded("forget");
    assert!(rows_holding(&db, "12 Elm Street") > 0);
    let carol = thread_rows(&db, "carol-chat");
    // A dry run changes no row.
    let alice_before = thread_rows(&db, "alice-chat");
    let request = [
        "--meta",
        "user_id=42",
        "--match",
        "Alice Example|12 Elm Street",
        "--regex",
        "--dry-run",
    ];
    // #46: without --force the paused thread keeps its match: the dry run exits 3, as that
    // real run would; with --force, 0, as the real run below.
    for (force, want) in [(false, 3), (true, 0)] {
        let mut args = request.to_vec();
        if force {
            args.push("--force");
        }
        let (code, plan) = forget(&db, &args);
        assert_eq!(code, want, "{plan}");
        assert_eq!(plan["dry_run"], true);
        let reported = plan["reported"].as_array().map_or(0, Vec::len);
        assert_eq!(reported, usize::from(!force), "{plan}");
    }
    assert_eq!(thread_rows(&db, "alice-chat"), alice_before);

    let (code, receipt) = forget(
        &db,
        &[
            "--meta",
            "user_id=42",
            "--match",
            "Alice Example|12 Elm Street",
            "--regex",
            "--force",
        ],
    );
    assert_eq!(code, 0, "{receipt}");
    assert_eq!(receipt["backend"], "postgres");
    assert_eq!(receipt["deleted"]["threads"], 4);
    assert_eq!(receipt["scrubbed"]["threads"], 2);
    assert_eq!(receipt["verification"]["clean"], true, "{receipt}");
    let reach = receipt["reclaim"]["out_of_reach"].to_string();
    assert!(
        reach.contains("WAL") && reach.contains("backups"),
        "{reach}"
    );
    for text in ["Alice Example", "12 Elm Street", "alice-"] {
        assert_eq!(rows_holding(&db, text), 0, "rows still hold '{text}'");
    }
    assert_eq!(
        db.count("SELECT count(*) FROM checkpoints WHERE thread_id LIKE 'alice-%'"),
        0
    );
    assert_eq!(thread_rows(&db, "carol-chat"), carol);
    for thread in ["bob-chat", "bob-paused", "carol-chat"] {
        let r = harness(&["continue", "--url", &db.url, "--thread", thread]);
        assert_eq!(r["errors"], serde_json::json!([]), "{thread}: {r}");
    }
}

#[test]
fn match_on_postgres_redacts_inline_summaries_and_scrubs_blobs() {
    let db = loaded("forget_match");
    let (code, receipt) = forget(&db, &["--match", "12 Elm Street", "--force"]);
    assert_eq!(code, 0, "{receipt}");
    assert_eq!(receipt["verification"]["clean"], true, "{receipt}");
    assert_eq!(rows_holding(&db, "12 Elm Street"), 0);
    // The summary channel is stored inline in the checkpoint JSON: redacted there.
    assert!(
        db.count(
            "SELECT count(*) FROM checkpoints WHERE thread_id = 'alice-profile' \
             AND strpos(checkpoint::text, '[erased]') > 0"
        ) > 0
    );
    for thread in [
        "alice-chat",
        "alice-tools",
        "alice-profile",
        "alice-sub",
        "bob-chat",
    ] {
        let r = harness(&["continue", "--url", &db.url, "--thread", thread]);
        assert_eq!(r["errors"], serde_json::json!([]), "{thread}: {r}");
    }
}

/// A deleted thread named `human` (every human message's type tag) is forgotten clean on
/// Postgres too (#26): the rows that remain hold the word only as LangGraph's structure.
#[test]
fn a_thread_named_human_is_forgotten_clean_on_postgres() {
    let db = loaded("forget_human");
    let mut c = db.client();
    for table in ["checkpoints", "checkpoint_blobs", "checkpoint_writes"] {
        let cols: Vec<String> = c
            .query(
                "SELECT column_name::text FROM information_schema.columns \
                 WHERE table_name = $1 AND table_schema = current_schema() ORDER BY ordinal_position",
                &[&table],
            )
            .expect("columns")
            .iter()
            .map(|r| r.get(0))
            .collect();
        let select: Vec<String> = cols
            .iter()
            .map(|c| {
                if c == "thread_id" {
                    "'human'".to_owned()
                } else {
                    c.clone()
                }
            })
            .collect();
        c.execute(
            &format!(
                "INSERT INTO {table} ({}) SELECT {} FROM {table} WHERE thread_id = 'carol-chat'",
                cols.join(", "),
                select.join(", ")
            ),
            &[],
        )
        .expect("copy");
    }
    drop(c);
    let kept = thread_rows(&db, "carol-chat");
    let out = memctl()
        .args([
            "forget", "--db", &db.url, "--thread", "human", "--settle", "0s",
        ])
        .args(["--format", "json"])
        .output()
        .expect("runs");
    let receipt: Json = serde_json::from_slice(&out.stdout).expect("JSON");
    assert_eq!(out.status.code(), Some(0), "{receipt}");
    assert_eq!(receipt["deleted"]["threads"], 1, "{receipt}");
    assert_eq!(receipt["verification"]["clean"], true, "{receipt}");
    assert_eq!(thread_rows(&db, "carol-chat"), kept);
    assert!(rows_holding(&db, "human") > 0, "the type tags stay");
}

/// A matched text left where memctl does not rewrite (a kept thread's metadata, holding it
/// JSON-escaped) and in a row it cannot decode (a write stored as pickle): the one pass
/// over every row finds both (as JSON writes the one, as bytes the other) and names the
/// rows, so the receipt is NOT CLEAN and never holds the text.
#[test]
fn matches_left_in_metadata_and_an_undecodable_row_are_found_on_postgres() {
    let db = loaded("forget_left");
    let nickname = "call me \"Ally\" please";
    {
        let mut c = db.client();
        let n = c
            .execute(
                "UPDATE checkpoints SET metadata = jsonb_set(metadata, '{nickname}', to_jsonb($1::text)) \
                 WHERE thread_id = 'carol-chat'",
                &[&nickname],
            )
            .expect("update");
        assert!(n > 0);
        c.execute(
            "INSERT INTO checkpoint_writes (thread_id, checkpoint_ns, checkpoint_id, task_id, idx, channel, type, blob) \
             VALUES ('kept', '', 'x', 't', 0, 'messages', 'pickle', convert_to('..12 Elm Street..', 'UTF8'))",
            &[],
        )
        .expect("insert");
    }
    let (code, receipt) = forget(
        &db,
        &[
            "--match",
            &format!("{nickname}|12 Elm Street"),
            "--regex",
            "--force",
        ],
    );
    assert_ne!(code, 0, "{receipt}");
    assert_eq!(receipt["verification"]["clean"], false, "{receipt}");
    let remaining = receipt["verification"]["remaining"].to_string();
    assert!(remaining.contains("carol-chat"), "{receipt}");
    assert!(remaining.contains("pending write"), "{receipt}");
    let text = receipt.to_string();
    assert!(
        !text.contains("Ally") && !text.contains("Elm Street"),
        "the receipt holds the text: {text}"
    );
}

/// The strings a deleted thread's rows held are the same whether its checkpoints are stored
/// whole (SqliteSaver: each row assembled) or split into blobs (PostgresSaver: each blob read
/// once, every version of `messages`, also ones a later checkpoint no longer names): the same
/// threads deleted, the same number of strings searched for afterwards.
#[test]
fn a_deleted_threads_strings_are_the_same_from_blobs_as_from_whole_checkpoints() {
    let db = loaded("forget_strings");
    let (_dir, file) = common::temp_copy(&common::fixture("forget.sqlite"));
    let (code, from_blobs) = forget(&db, &["--meta", "user_id=42", "--yes"]);
    assert_eq!(code, 0, "{from_blobs}");
    let out = memctl()
        .args([
            "forget",
            "--db",
            common::s(&file),
            "--settle",
            "0s",
            "--format",
            "json",
        ])
        .args(["--meta", "user_id=42", "--yes"])
        .output()
        .expect("memctl runs");
    let whole: Json = serde_json::from_slice(&out.stdout).expect("a JSON receipt");
    assert_eq!(
        from_blobs["deleted"]["threads"],
        whole["deleted"]["threads"]
    );
    let strings = &from_blobs["verification"]["strings"];
    assert!(strings.as_u64().is_some_and(|n| n > 10), "{from_blobs}");
    assert_eq!(
        strings, &whole["verification"]["strings"],
        "{from_blobs}\n{whole}"
    );
    assert_eq!(from_blobs["verification"]["clean"], true, "{from_blobs}");
}
