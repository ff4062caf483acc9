//! `PostgresSaver.setup()`'s tables made by memctl in a database a copy or a migration writes
//! into (`copy --to`, `copy --all --to`, `migrate --to`), so that moving a SQLite file into a
//! new Postgres database needs no Python first.
//!
//! The statements are the library's own ([`MIGRATIONS`]), run in its order, with one
//! `checkpoint_migrations` row per level, up to [`super::KNOWN_MIGRATION`]:
//!
//! - A database without the saver's tables ([`Needed::Create`]) gets them in the transaction
//!   that writes the run's first thread, before its rows: a run that writes no thread (a
//!   refused one, an error, a dry run) creates nothing. `CREATE INDEX CONCURRENTLY` cannot run
//!   in a transaction, so there the three thread-id indexes are made with a plain `CREATE
//!   INDEX IF NOT EXISTS`: on tables made in the same transaction, empty and seen by no other
//!   session, it builds the same index (same name, same definition; tests/setup_postgres.rs
//!   compares the catalog with one `setup()` made).
//! - A database whose tables are at a lower level with rows in them ([`Needed::Upgrade`]) gets
//!   the missing migrations as `setup()` runs them: each statement on its own, committed on its
//!   own, `CREATE INDEX CONCURRENTLY` included, right before the run's first write. A plain
//!   `CREATE INDEX` there would hold the app's writes (`put`) back for as long as the index
//!   builds on a full table; `CONCURRENTLY` does not, at the cost of the set-up not being one
//!   transaction: an interrupted one leaves the level of the last migration that completed,
//!   and the next run (or `setup()`) carries on from there, as after an interrupted `setup()`.
//! - A level above memctl's is refused by [`super::PostgresStore::open`] before anything is
//!   written, as always.
//!
//! The tables go where `setup()` would put them on this connection: the first schema of the
//! `search_path` (the URL's `schema=` makes that one schema, see
//! [`super::conn::Target::connect_session`]).

use anyhow::{anyhow, bail, Result};
use postgres::Client;

use super::conn::Target;
use super::KNOWN_MIGRATION;

/// `PostgresSaver.MIGRATIONS` of langgraph-checkpoint-postgres 3.2.0
/// (`langgraph/checkpoint/postgres/base.py`), verbatim: index `v` is migration level `v`.
/// memctl's one copy of them (the level it knows, [`KNOWN_MIGRATION`], is the last index).
pub const MIGRATIONS: [&str; 10] = [
    "CREATE TABLE IF NOT EXISTS checkpoint_migrations (
    v INTEGER PRIMARY KEY
);",
    "CREATE TABLE IF NOT EXISTS checkpoints (
    thread_id TEXT NOT NULL,
    checkpoint_ns TEXT NOT NULL DEFAULT '',
    checkpoint_id TEXT NOT NULL,
    parent_checkpoint_id TEXT,
    type TEXT,
    checkpoint JSONB NOT NULL,
    metadata JSONB NOT NULL DEFAULT '{}',
    PRIMARY KEY (thread_id, checkpoint_ns, checkpoint_id)
);",
    "CREATE TABLE IF NOT EXISTS checkpoint_blobs (
    thread_id TEXT NOT NULL,
    checkpoint_ns TEXT NOT NULL DEFAULT '',
    channel TEXT NOT NULL,
    version TEXT NOT NULL,
    type TEXT NOT NULL,
    blob BYTEA,
    PRIMARY KEY (thread_id, checkpoint_ns, channel, version)
);",
    "CREATE TABLE IF NOT EXISTS checkpoint_writes (
    thread_id TEXT NOT NULL,
    checkpoint_ns TEXT NOT NULL DEFAULT '',
    checkpoint_id TEXT NOT NULL,
    task_id TEXT NOT NULL,
    idx INTEGER NOT NULL,
    channel TEXT NOT NULL,
    type TEXT,
    blob BYTEA NOT NULL,
    PRIMARY KEY (thread_id, checkpoint_ns, checkpoint_id, task_id, idx)
);",
    "ALTER TABLE checkpoint_blobs ALTER COLUMN blob DROP not null;",
    "SELECT 1;",
    "
    CREATE INDEX CONCURRENTLY IF NOT EXISTS checkpoints_thread_id_idx ON checkpoints(thread_id);
    ",
    "
    CREATE INDEX CONCURRENTLY IF NOT EXISTS checkpoint_blobs_thread_id_idx ON checkpoint_blobs(thread_id);
    ",
    "
    CREATE INDEX CONCURRENTLY IF NOT EXISTS checkpoint_writes_thread_id_idx ON checkpoint_writes(thread_id);
    ",
    "ALTER TABLE checkpoint_writes ADD COLUMN IF NOT EXISTS task_path TEXT NOT NULL DEFAULT '';",
];

// The level memctl reads and writes is the last of the statements it holds.
const _: () = assert!(MIGRATIONS.len() == KNOWN_MIGRATION as usize + 1);

/// The lowest level whose tables memctl reads as they are: migrations 1–3 make the three
/// tables, the later ones only change them.
const TABLES_LEVEL: i32 = 3;

/// What a target's saver tables need before memctl writes there.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Needed {
    /// Nothing: at [`KNOWN_MIGRATION`] (or in a state [`super::PostgresStore::open`] refuses).
    Nothing,
    /// The tables are made (those missing: `from` is the level of the ones there, -1 for
    /// none), in the first write's transaction. No saver row exists yet.
    Create {
        /// The level there (`checkpoint_migrations`), -1 when none.
        from: i32,
    },
    /// The tables are there at level `from` (at least `TABLES_LEVEL`): the later migrations
    /// run as `setup()` runs them, before the first write.
    Upgrade {
        /// The level there.
        from: i32,
    },
}

/// What memctl does (or, in a dry run, would do) to a target's saver tables, and where.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Plan {
    /// What the tables need.
    pub needed: Needed,
    /// The schema they are (or go) in.
    pub schema: String,
}

impl Plan {
    /// The level the tables are at before the set-up (`None`: no level, no tables).
    pub fn from_level(&self) -> Option<i32> {
        match self.needed {
            Needed::Create { from } | Needed::Upgrade { from } => (from >= 0).then_some(from),
            Needed::Nothing => None,
        }
    }

    /// True when tables are made (not only migrated).
    pub fn creates_tables(&self) -> bool {
        matches!(self.needed, Needed::Create { .. })
    }
}

/// The error of a query made while looking at the target.
fn pg_err(target: &Target) -> impl Fn(postgres::Error) -> anyhow::Error + '_ {
    move |e| target.error(&e)
}

/// Looks at the saver's tables where the session `c` finds them: what they need before a copy
/// writes there ([`Needed::Nothing`] for everything [`super::PostgresStore::open`] reads as it
/// is, or refuses: another saver's tables, a level above memctl's, tables without a level).
/// A set-up that could not be made is refused here, before anything is written (and in a dry
/// run): no schema to create the tables in, no right to create them there or to change them.
pub fn needed(c: &mut Client, target: &Target) -> Result<Plan> {
    let err = pg_err(target);
    let shown = &target.shown;
    let found = super::tables_found(c, &super::SAVER_TABLES).map_err(&err)?;
    let has = |t: &str| {
        super::SAVER_TABLES
            .iter()
            .zip(&found)
            .any(|(name, f)| *name == t && *f)
    };
    // ShallowPostgresSaver's tables share the names and the levels table, not the columns:
    // left to `open`, which names them.
    let shallow: bool = c
        .query_one(
            "SELECT (to_regclass('checkpoints') IS NOT NULL AND NOT EXISTS (SELECT 1 FROM pg_attribute \
                      WHERE attrelid = to_regclass('checkpoints') AND attname = 'checkpoint_id' AND NOT attisdropped)) \
                 OR (to_regclass('checkpoint_blobs') IS NOT NULL AND NOT EXISTS (SELECT 1 FROM pg_attribute \
                      WHERE attrelid = to_regclass('checkpoint_blobs') AND attname = 'version' AND NOT attisdropped))",
            &[],
        )
        .and_then(|r| r.try_get(0))
        .map_err(&err)?;
    let data_tables = ["checkpoints", "checkpoint_blobs", "checkpoint_writes"];
    let level: Option<i32> = match has("checkpoint_migrations") {
        true => c
            .query_one("SELECT max(v) FROM checkpoint_migrations", &[])
            .and_then(|r| r.try_get(0))
            .map_err(&err)?,
        false => None,
    };
    let nothing = || Plan {
        needed: Needed::Nothing,
        schema: String::new(),
    };
    if shallow {
        return Ok(nothing());
    }
    let needed = match level {
        Some(v) if v >= KNOWN_MIGRATION => return Ok(nothing()),
        Some(v) if v >= TABLES_LEVEL => Needed::Upgrade { from: v },
        // No level, or tables `setup()` had not finished making: made when none of them holds
        // a row (tables without a level that hold rows are no saver's memctl knows: `open`
        // says so).
        _ => {
            let present: Vec<&str> = data_tables.iter().copied().filter(|t| has(t)).collect();
            if level.is_none() && !present.is_empty() {
                return Ok(nothing());
            }
            for t in &present {
                let any: bool = c
                    .query_one(&format!("SELECT EXISTS (SELECT 1 FROM {t})"), &[])
                    .and_then(|r| r.try_get(0))
                    .map_err(&err)?;
                if any {
                    bail!(
                        "'{shown}' is at PostgresSaver migration level {} with rows in its incomplete tables: run PostgresSaver.setup() there first",
                        level.map_or("none".to_owned(), |v| v.to_string())
                    );
                }
            }
            Needed::Create {
                from: level.unwrap_or(-1),
            }
        }
    };
    let role: String = c
        .query_one("SELECT current_user::text", &[])
        .and_then(|r| r.try_get(0))
        .map_err(&err)?;
    let schema = match &needed {
        Needed::Create { .. } => creatable_schema(c, target, &role)?,
        _ => owned_schema(c, target, &role)?,
    };
    Ok(Plan { needed, schema })
}

/// The schema new tables go to on this session (`current_schema()`, the first of the
/// `search_path` that exists), checked: it exists and the role may create tables in it.
fn creatable_schema(c: &mut Client, target: &Target, role: &str) -> Result<String> {
    let shown = &target.shown;
    let r = c
        .query_one(
            "SELECT current_schema()::text, \
                    has_schema_privilege(current_schema(), 'CREATE'), \
                    current_setting('search_path')",
            &[],
        )
        .map_err(pg_err(target))?;
    let schema: Option<String> = r.try_get(0).map_err(pg_err(target))?;
    let Some(schema) = schema else {
        return Err(match &target.schema {
            Some(s) => anyhow!(
                "'{shown}' has no schema '{s}' to create PostgresSaver's tables in: create it first (CREATE SCHEMA), or name the schema the saver uses"
            ),
            None => {
                let path: String = r.try_get(2).unwrap_or_default();
                anyhow!(
                    "'{shown}': no schema of the search_path ({path}) exists to create PostgresSaver's tables in: create one, or name it with ?schema=NAME"
                )
            }
        });
    };
    let may: Option<bool> = r.try_get(1).map_err(pg_err(target))?;
    if may != Some(true) {
        bail!(
            "'{shown}' has none of PostgresSaver's tables, and role '{role}' may not create them in schema '{schema}' (PostgresSaver.setup() could not either): GRANT CREATE ON SCHEMA \"{schema}\" TO \"{role}\", or run setup() as a role that may; nothing written"
        );
    }
    Ok(schema)
}

/// The schema the saver's tables are in, checked: the role owns them (as `ALTER TABLE` and
/// `CREATE INDEX` need).
fn owned_schema(c: &mut Client, target: &Target, role: &str) -> Result<String> {
    let shown = &target.shown;
    let r = c
        .query_one(
            "SELECT (SELECT n.nspname::text FROM pg_class k JOIN pg_namespace n ON n.oid = k.relnamespace \
                     WHERE k.oid = to_regclass('checkpoints')), \
                    coalesce(bool_and(pg_has_role(k.relowner, 'USAGE')), false) \
             FROM pg_class k WHERE k.oid IN (to_regclass('checkpoints'), to_regclass('checkpoint_blobs'), \
                                             to_regclass('checkpoint_writes'))",
            &[],
        )
        .map_err(pg_err(target))?;
    let schema: Option<String> = r.try_get(0).map_err(pg_err(target))?;
    let owns: bool = r.try_get(1).map_err(pg_err(target))?;
    if !owns {
        bail!(
            "'{shown}': PostgresSaver's tables are at an older migration level, and role '{role}' does not own them, so memctl cannot bring them up to date as PostgresSaver.setup() does: run setup() as their owner first; nothing written"
        );
    }
    Ok(schema.unwrap_or_default())
}

/// The statements that make the tables missing at level `from` and bring them to
/// [`KNOWN_MIGRATION`] inside one transaction: `setup()`'s, in its order, each followed by its
/// `checkpoint_migrations` row, `CREATE INDEX CONCURRENTLY` as a plain `CREATE INDEX` (see the
/// module's comment: the same index on tables this transaction made).
pub fn create_sql(from: i32) -> String {
    let mut sql = String::from(MIGRATIONS[0]);
    for (v, m) in MIGRATIONS
        .iter()
        .enumerate()
        .skip((from + 1).max(0) as usize)
    {
        sql.push('\n');
        sql.push_str(&m.replace("CREATE INDEX CONCURRENTLY", "CREATE INDEX"));
        sql.push_str(&format!(
            "\nINSERT INTO checkpoint_migrations (v) VALUES ({v});"
        ));
    }
    sql
}

/// The index a migration makes, by name (`… IF NOT EXISTS NAME ON …`).
fn index_made(migration: &str) -> Option<&str> {
    let (_, rest) = migration.split_once("IF NOT EXISTS ")?;
    let name = rest.split_whitespace().next()?;
    migration.contains("CREATE INDEX").then_some(name)
}

/// Runs the migrations after level `from` as `setup()` runs them on its autocommit
/// connection: each statement on its own (`CREATE INDEX CONCURRENTLY` as it is), then its
/// level's row, each committed. An index `CONCURRENTLY` left invalid (a build that failed or
/// was cancelled, now or in an earlier run) stops it before its level is recorded: `IF NOT
/// EXISTS` would keep it as it is.
pub fn upgrade(c: &mut Client, target: &Target, from: i32) -> Result<()> {
    let err = pg_err(target);
    let shown = &target.shown;
    c.batch_execute(MIGRATIONS[0]).map_err(&err)?;
    for (v, m) in MIGRATIONS
        .iter()
        .enumerate()
        .skip((from + 1).max(0) as usize)
    {
        c.batch_execute(m).map_err(|e| {
            anyhow!(
                "{:#} (bringing PostgresSaver's tables to level {v}: they stay at level {})",
                err(e),
                v - 1
            )
        })?;
        if let Some(index) = index_made(m) {
            let valid: Option<bool> = c
                .query_one(
                    "SELECT (SELECT indisvalid FROM pg_index WHERE indexrelid = to_regclass($1))",
                    &[&index],
                )
                .and_then(|r| r.try_get(0))
                .map_err(&err)?;
            if valid != Some(true) {
                bail!(
                    "'{shown}': index {index} is invalid (a CREATE INDEX CONCURRENTLY that did not finish): drop it (DROP INDEX CONCURRENTLY {index}) and run again; PostgresSaver's tables stay at level {}",
                    v - 1
                );
            }
        }
        c.execute(
            "INSERT INTO checkpoint_migrations (v) VALUES ($1)",
            &[&(v as i32)],
        )
        .map_err(&err)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_transactional_set_up_has_every_level_and_no_concurrent_index() {
        let sql = create_sql(-1);
        for v in 0..=KNOWN_MIGRATION {
            assert!(
                sql.contains(&format!("VALUES ({v});")),
                "level {v} recorded"
            );
        }
        assert!(!sql.contains("CONCURRENTLY"), "{sql}");
        assert_eq!(sql.matches("CREATE INDEX IF NOT EXISTS").count(), 3);
        // From level 2: the later levels only.
        let later = create_sql(2);
        assert!(!later.contains("VALUES (2);") && later.contains("VALUES (3);"));
    }

    #[test]
    fn the_indexes_are_named() {
        let names: Vec<&str> = MIGRATIONS.iter().filter_map(|m| index_made(m)).collect();
        assert_eq!(
            names,
            [
                "checkpoints_thread_id_idx",
                "checkpoint_blobs_thread_id_idx",
                "checkpoint_writes_thread_id_idx"
            ]
        );
    }
}
