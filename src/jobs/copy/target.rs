//! The database a copy or a migration writes into (`--to`), opened or made.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Result;

use super::report::SaverSetup;
use crate::codec::aes::Keyring;
use crate::exit::Usage;
use crate::jobs::Ctx;
use crate::storage::{self, postgres, Access, CheckpointStore, Location, SqliteStore};

/// True when `to` names a SQLite file that does not exist yet (a target memctl makes); a
/// malformed connection string is a usage error.
pub fn is_new_file(to: &Path) -> Result<bool> {
    let location = storage::locate_as(to, "--to").map_err(|e| Usage(e.to_string()))?;
    Ok(location == Location::File && !to.exists())
}

/// The database a copy or migration writes into, as [`open_target`] opens it.
pub struct Target {
    /// The database (`None`: a new file a dry run does not make).
    pub store: Option<Box<dyn CheckpointStore>>,
    /// `--to` is a new SQLite file.
    pub new_file: bool,
    /// A PostgreSQL target's saver tables: what they need before the first thread goes in,
    /// and whether it was done.
    pub setup: Option<Arc<postgres::Setup>>,
}

impl Target {
    /// What the report says of the saver's tables: the set-up done (with `dry_run`, the one
    /// that would be done when `writes`: a thread would go in). `None` when nothing.
    pub fn saver_setup(&self, dry_run: bool, writes: bool) -> Option<SaverSetup> {
        let s = self.setup.as_deref()?;
        let shown = match dry_run {
            true => s.needed() && writes,
            false => s.done(),
        };
        shown.then(|| SaverSetup {
            created_tables: s.plan.creates_tables(),
            schema: s.plan.schema.clone(),
            from_level: s.plan.from_level(),
            to_level: postgres::KNOWN_MIGRATION,
        })
    }
}

/// The database a copy or migration writes into (`--to`): opened when it exists (a Postgres
/// URL, an existing file), a new SQLite file made when `create` (`None`, nothing made, when
/// not: a dry run). A PostgreSQL database whose saver tables are missing or at a lower level
/// gets them as `PostgresSaver.setup()` makes them before its first thread is written
/// ([`postgres::PostgresStore::open_target`]; nothing, with `access` read-only).
pub fn open_target(
    to: &Path,
    access: Access,
    create: bool,
    busy: Duration,
    keys: &Keyring,
) -> Result<Target> {
    if is_new_file(to)? {
        let made: Option<Box<dyn CheckpointStore>> = match create {
            true => Some(Box::new(SqliteStore::create_new(to, busy)?)),
            false => None,
        };
        return Ok(Target {
            store: made,
            new_file: true,
            setup: None,
        });
    }
    if let Ok(Location::Postgres(url)) = storage::locate_as(to, "--to") {
        let (store, setup) =
            postgres::PostgresStore::open_target(url, None, access, busy, keys.clone())?;
        return Ok(Target {
            store: Some(Box::new(store)),
            new_file: false,
            setup: Some(setup),
        });
    }
    Ok(Target {
        store: Some(storage::open(to, None, access, busy, keys)?),
        new_file: false,
        setup: None,
    })
}

/// A run's error `e`, with what was done to the target's saver tables before it when
/// something was (the report that says it is not written after an error).
pub fn setup_noted(e: anyhow::Error, target: Option<&Target>) -> anyhow::Error {
    match target.and_then(|t| t.saver_setup(false, false)) {
        None => e,
        Some(s) => {
            let done = match s.from_level {
                Some(from) if !s.created_tables => {
                    format!("brought from migration level {from} to {}", s.to_level)
                }
                _ => format!("created (migration level {})", s.to_level),
            };
            e.context(format!(
                "PostgresSaver's tables in schema '{}' were {done} before this, as PostgresSaver.setup() does",
                s.schema
            ))
        }
    }
}

/// `--schema` names the schema of `--db`: with a SQLite `--db` and a PostgreSQL `--to`, a
/// usage error that says where the target's schema goes (its connection string).
pub fn check_schema_flag(ctx: &Ctx, to: &Path) -> Result<()> {
    let (Some(schema), Some(db)) = (ctx.schema.as_deref(), ctx.db.as_deref()) else {
        return Ok(());
    };
    let db_is_file = matches!(storage::locate(db), Ok(Location::File));
    let to_is_pg = matches!(storage::locate_as(to, "--to"), Ok(Location::Postgres(_)));
    if db_is_file && to_is_pg {
        return Err(Usage(format!(
            "--schema '{schema}' (or MEMCTL_SCHEMA) names the schema of --db, and '{}' is a SQLite file; the schema of --to goes in its connection string: ?schema={schema} in a URL (schema={schema} in the keyword form)",
            storage::shown_path(db)
        ))
        .into());
    }
    Ok(())
}
