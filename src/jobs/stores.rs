//! Opening the LangGraph Store of [`Ctx`]'s database, and its checkpoint tables when it holds
//! a store alone.

use anyhow::Result;

use crate::exit::Usage;
use crate::storage::store::ItemStore;
use crate::storage::{
    open_store, postgres, sqlite, Access, CheckpointStore, Location, SchemaConflict,
};

use super::{Ctx, Sink};

impl Ctx {
    /// Opens the store of the database [`Ctx::db`] names.
    pub fn open_store(&self, access: Access) -> Result<Box<dyn ItemStore>> {
        let path = self.db_path()?;
        crate::storage::locate(path).map_err(|e| Usage(e.to_string()))?;
        open_store(path, self.schema.as_deref(), access, self.busy_timeout).map_err(|e| {
            match e.downcast::<SchemaConflict>() {
                Ok(c) => Usage(format!(
                    "--schema '{}' (or MEMCTL_SCHEMA) disagrees with the URL '{}', which says schema={}: name the schema once",
                    c.given, c.url, c.in_url
                ))
                .into(),
                Err(e) => e,
            }
        })
    }

    /// The store of the database, or `None` when it has none (or no database is named).
    pub fn open_store_if_any(&self, access: Access) -> Result<Option<Box<dyn ItemStore>>> {
        if self.db.is_none() {
            return Ok(None);
        }
        match self.open_store(access) {
            Ok(s) => Ok(Some(s)),
            Err(e) if e.is::<crate::storage::store::NoStore>() => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// The checkpoint tables, when opening them failed with `first`: a database that holds a
    /// LangGraph store and no checkpoint tables (an app using `SqliteStore` or `PostgresStore`
    /// alone) is read as a saver with no threads, with one note to `sink` ("no checkpoints in
    /// this database"); anything else (no store, some of the saver's tables, a usage error)
    /// fails with `first`. Nothing is created in the database.
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
