//! Opening [`Ctx`]'s database: its checkpoints (read-only, for a write, or a saver with no
//! threads when the database holds a LangGraph store alone) and its Store. The one place jobs
//! turn `--db` / `--schema` into a backend, and the usage errors they give.

use std::path::Path;

use anyhow::Result;

use crate::codec::aes::{Keyring, KEY_ENV};
use crate::exit::Usage;
use crate::storage::store::{ItemStore, NoStore};
use crate::storage::{
    open_store, postgres, sqlite, Access, CheckpointStore, Location, SchemaConflict,
};

use super::{Ctx, Sink, NO_DB};

impl Ctx {
    /// The key of encrypted databases: the variable [`Ctx::key_env`] names, read now; a
    /// missing or refused key is reported only when an encrypted value needs it.
    pub fn keys(&self) -> Keyring {
        Keyring::from_env(self.key_env.as_deref().unwrap_or(KEY_ENV))
    }

    /// The database [`Ctx::db`] names; without one, a usage error.
    pub fn db_path(&self) -> Result<&Path> {
        self.db.as_deref().ok_or_else(|| Usage(NO_DB.into()).into())
    }

    /// Opens the database read-only.
    pub fn open_read_only(&self) -> Result<Box<dyn CheckpointStore>> {
        self.open(Access::ReadOnly)
    }

    /// Opens the database for a job that writes (never creating it); with `dry_run`,
    /// read-only, so a dry run works on a file or directory memctl may not write and cannot
    /// change anything. Rewrites work on the root namespace only.
    pub fn open_for_writing(&self, dry_run: bool) -> Result<Box<dyn CheckpointStore>> {
        if !self.ns.is_empty() {
            return Err(Usage(format!(
                "rewrites work on the root namespace; drop --ns '{}'",
                self.ns
            ))
            .into());
        }
        self.open(if dry_run {
            Access::ReadOnly
        } else {
            Access::ReadWrite
        })
    }

    /// Opens the database's checkpoints with `access` (never creating them).
    pub fn open(&self, access: Access) -> Result<Box<dyn CheckpointStore>> {
        let path = self.db_path()?;
        let location = crate::storage::locate(path).map_err(|e| Usage(e.to_string()))?;
        let schema = self.schema.as_deref();
        if let Some(s) = schema {
            if location == Location::File {
                return Err(Usage(format!(
                    "--schema '{s}' is for a PostgreSQL database, and '{}' is a SQLite file (drop --schema, or unset MEMCTL_SCHEMA)",
                    crate::storage::shown_path(path)
                ))
                .into());
            }
        }
        crate::storage::open(path, schema, access, self.busy_timeout, &self.keys())
            .map_err(schema_conflict)
    }

    /// Opens the database's LangGraph Store ([`NoStore`] when it has none).
    pub fn open_store(&self, access: Access) -> Result<Box<dyn ItemStore>> {
        let path = self.db_path()?;
        crate::storage::locate(path).map_err(|e| Usage(e.to_string()))?;
        open_store(path, self.schema.as_deref(), access, self.busy_timeout).map_err(schema_conflict)
    }

    /// The database's Store, or `None` when it has none (or no database is named): the jobs
    /// that cover the Store when there is one (`stats`, `migrate`, `ttl`, `find`) go on
    /// without it.
    pub fn open_store_if_any(&self, access: Access) -> Result<Option<Box<dyn ItemStore>>> {
        if self.db.is_none() {
            return Ok(None);
        }
        match self.open_store(access) {
            Ok(s) => Ok(Some(s)),
            Err(e) if e.is::<NoStore>() => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// Opens the checkpoints with `access`; a database that holds a LangGraph store and no
    /// checkpoint tables is read as a saver with no threads
    /// ([`Ctx::checkpoints_or_store_only`]).
    pub fn open_or_store_only(
        &self,
        access: Access,
        sink: &dyn Sink,
    ) -> Result<Box<dyn CheckpointStore>> {
        self.open(access)
            .or_else(|first| self.checkpoints_or_store_only(access, first, sink))
    }

    /// The checkpoints, when opening them failed with `first`: a database that holds a
    /// LangGraph store and no checkpoint tables (an app using `SqliteStore` or
    /// `PostgresStore` alone) is read as a saver with no threads, with one note to `sink`
    /// ("no checkpoints in this database"); anything else (no store, some of the saver's
    /// tables, a usage error) fails with `first`. Nothing is created in the database.
    pub fn checkpoints_or_store_only(
        &self,
        access: Access,
        first: anyhow::Error,
        sink: &dyn Sink,
    ) -> Result<Box<dyn CheckpointStore>> {
        let Some(path) = self.db.as_deref() else {
            return Err(first);
        };
        if first.is::<Usage>() {
            return Err(first);
        }
        let busy = self.busy_timeout;
        let saver: Option<Box<dyn CheckpointStore>> = match crate::storage::locate(path) {
            Ok(Location::File) if self.schema.is_none() => {
                sqlite::store::saver_of_store_only(path, access, busy)
                    .ok()
                    .flatten()
                    .map(|s| Box::new(s) as _)
            }
            Ok(Location::Postgres(url)) if first.is::<postgres::NoSaverTable>() => {
                postgres::StoreOnly::find(url, self.schema.as_deref(), busy)
                    .ok()
                    .flatten()
                    .map(|s| Box::new(s) as _)
            }
            _ => None,
        };
        let Some(saver) = saver else {
            return Err(first);
        };
        sink.note(&format!(
            "'{}': no checkpoints in this database (a LangGraph store only)",
            crate::storage::shown_path(path)
        ));
        Ok(saver)
    }
}

/// `--schema` and the URL's `?schema=` disagreeing, as a usage error; other errors as they are.
fn schema_conflict(e: anyhow::Error) -> anyhow::Error {
    match e.downcast::<SchemaConflict>() {
        Ok(c) => Usage(format!(
            "--schema '{}' (or MEMCTL_SCHEMA) disagrees with the URL '{}', which says schema={}: name the schema once",
            c.given, c.url, c.in_url
        ))
        .into(),
        Err(e) => e,
    }
}
