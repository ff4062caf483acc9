//! A PostgreSQL database that holds a LangGraph store and no checkpoint tables (an app using
//! `PostgresStore` without a `PostgresSaver`): a [`CheckpointStore`] that has no threads, so
//! `forget`, `stats`, `find` and `migrate` cover the store alone (the store itself is read
//! and changed through [`super::store::PgItemStore`]).
//!
//! Nothing here touches the database: every read answers "no thread", and every write of
//! checkpoint rows is refused with one line, so no checkpoint table is ever made in it as a
//! side effect. (A SQLite file in the same case is read through a `SqliteStore` of its own,
//! see [`crate::storage::sqlite::store::saver_of_store_only`]: its file-level work — free
//! pages zeroed, every byte searched after a `forget` — needs the file's connection.)

use std::collections::HashMap;
use std::time::Duration;

use anyhow::{bail, Result};

use super::conn::Target;
use crate::storage::{
    BlobRewriter, CheckpointInfo, CheckpointRewrite, CheckpointRow, CheckpointStore, Deleted,
    Erased, FileStats, Leftover, MetadataRow, NewRows, Orphans, RowFeed, SchemaGeneration,
    ServerSpace, ThreadRow, ThreadSummary, WriteRow, WrittenThread,
};

/// A Postgres database without `PostgresSaver`'s tables, read as a saver with no threads.
#[derive(Debug, Clone)]
pub struct NoCheckpoints {
    /// The database as messages show it (password masked).
    shown: String,
}

/// When the database `url` names (its tables looked up in `schema`, else the URL's
/// `schema=`, else the `search_path`, as [`super::PostgresStore::open`] looks them up) holds
/// `PostgresStore`'s `store` table and none of `PostgresSaver`'s tables: the saver with no
/// threads that stands for it. `None` otherwise (no store, or some of the saver's tables: the
/// caller's first error stands). Reads the catalog only.
pub fn saver_of_store_only(
    url: &str,
    schema: Option<&str>,
    busy_timeout: Duration,
) -> Result<Option<NoCheckpoints>> {
    let mut target = Target::parse(url, Duration::from_secs(10).max(busy_timeout))?;
    if let Some(s) = schema {
        target.use_schema(s)?;
    }
    let mut client = target.connect_session(busy_timeout)?;
    let mut tables = vec!["store"];
    tables.extend(super::SAVER_TABLES);
    let found = super::tables_found(&mut client, &tables).map_err(|e| target.error(&e))?;
    let store_only = found.first() == Some(&true) && !found[1..].contains(&true);
    Ok(store_only.then(|| NoCheckpoints {
        shown: target.shown.clone(),
    }))
}

impl NoCheckpoints {
    /// The one line a write of checkpoint rows gets.
    fn refuse<T>(&self) -> Result<T> {
        bail!(
            "'{}' has no checkpoint tables (a LangGraph store only): memctl writes no checkpoint there and does not create the saver's tables",
            self.shown
        )
    }
}

impl CheckpointStore for NoCheckpoints {
    fn generation(&self) -> SchemaGeneration {
        SchemaGeneration::V3
    }

    fn reopen_read_only(&self) -> Result<Box<dyn CheckpointStore>> {
        Ok(Box::new(self.clone()))
    }

    /// A server: memctl cannot tell who else is connected.
    fn might_be_shared(&self) -> bool {
        true
    }

    fn queues_waiting_writers(&self) -> bool {
        true
    }

    fn for_each_thread(&self, _: &mut dyn FnMut(ThreadSummary) -> Result<()>) -> Result<()> {
        Ok(())
    }

    fn for_each_latest_id(&self, _: &mut dyn FnMut(&str, &str) -> bool) -> Result<()> {
        Ok(())
    }

    fn summaries_of(&self, _: &[String]) -> Result<Vec<ThreadSummary>> {
        Ok(vec![])
    }

    fn count_threads_after(&self, _: &str) -> Result<u64> {
        Ok(0)
    }

    fn thread_exists(&self, _: &str) -> Result<bool> {
        Ok(false)
    }

    fn namespaces(&self, _: &str) -> Result<Vec<String>> {
        Ok(vec![])
    }

    fn latest_root_ids(&self) -> Result<Vec<(String, String)>> {
        Ok(vec![])
    }

    fn latest_checkpoint_id(&self, _: &str, _: &str) -> Result<Option<String>> {
        Ok(None)
    }

    fn checkpoints(&self, _: &str, _: &str) -> Result<Vec<CheckpointRow>> {
        Ok(vec![])
    }

    fn checkpoint(&self, _: &str, _: &str, _: Option<&str>) -> Result<Option<CheckpointRow>> {
        Ok(None)
    }

    fn write_counts(&self, _: &str, _: &str) -> Result<HashMap<String, usize>> {
        Ok(HashMap::new())
    }

    fn metadata(&self, _: &str, _: &str) -> Result<Vec<(String, Option<Vec<u8>>)>> {
        Ok(vec![])
    }

    fn metadata_of(&self, threads: &[&str]) -> Result<Vec<Vec<MetadataRow>>> {
        Ok(threads.iter().map(|_| Vec::new()).collect())
    }

    fn writes(&self, _: &str, _: &str, _: &str) -> Result<Vec<WriteRow>> {
        Ok(vec![])
    }

    fn checkpoint_infos(&self, _: &str) -> Result<Vec<CheckpointInfo>> {
        Ok(vec![])
    }

    /// The saver's tables take nothing: there are none.
    fn file_stats(&self) -> Result<FileStats> {
        Ok(FileStats::default())
    }

    fn row_counts(&self) -> Result<(u64, u64)> {
        Ok((0, 0))
    }

    fn an_encrypted_value(&self) -> Result<Option<(String, Vec<u8>)>> {
        Ok(None)
    }

    fn write_bytes_by_channel(&self) -> Result<Vec<(String, u64, u64)>> {
        Ok(vec![])
    }

    fn for_each_checkpoint_blob(&self, _: &mut dyn FnMut(&[u8]) -> Result<()>) -> Result<()> {
        Ok(())
    }

    fn orphans(&self) -> Result<Orphans> {
        Ok(Orphans::default())
    }

    /// A server with none of the saver's tables: an empty account (not a file's).
    fn server_space(&self) -> Result<Option<ServerSpace>> {
        Ok(Some(ServerSpace::default()))
    }

    fn append_update(
        &self,
        _: &str,
        _: &str,
        _: &NewRows<'_>,
        _: usize,
        _: Option<BlobRewriter<'_>>,
    ) -> Result<usize> {
        self.refuse()
    }

    fn rewrite_thread(&self, _: &str, _: &str, _: usize, _: BlobRewriter<'_>) -> Result<usize> {
        self.refuse()
    }

    fn backend(&self) -> &'static str {
        "postgres"
    }

    /// No checkpoint row to search (the store's rows are searched by the caller).
    fn searched(&self) -> Vec<String> {
        vec![]
    }

    fn out_of_reach(&self) -> Vec<String> {
        vec![super::OUT_OF_REACH.into()]
    }

    /// None: the server's files are out of memctl's reach.
    fn raw_places_matching(&self, _: &mut dyn FnMut(&[u8]) -> bool) -> Result<Vec<String>> {
        Ok(vec![])
    }

    fn begin_batch(&self) -> Result<()> {
        Ok(())
    }

    fn commit_batch(&self) -> Result<()> {
        Ok(())
    }

    fn end_batches(&self) -> Result<()> {
        Ok(())
    }

    /// Nothing to delete: no thread is here (any thread named is refused).
    fn delete_threads(&self, threads: &[(String, String)]) -> Result<(Deleted, Vec<String>)> {
        match threads.is_empty() {
            true => Ok((Deleted::default(), vec![])),
            false => self.refuse(),
        }
    }

    fn apply_gc(
        &self,
        _: &str,
        _: &[(String, String)],
        _: &[(String, String)],
        _: &[CheckpointRewrite],
        _: &str,
    ) -> Result<Option<Deleted>> {
        self.refuse()
    }

    /// Nothing of the saver's to vacuum (the store's tables get their own `VACUUM`).
    fn vacuum(&self) -> Result<()> {
        Ok(())
    }

    /// Nothing erased here: no table of the saver's (and no `VACUUM` claimed).
    fn erase_freed(&self) -> Result<Erased> {
        Ok(Erased::default())
    }

    fn find_leftovers(&self, _: &str, _: &[String]) -> Result<Vec<Leftover>> {
        Ok(vec![])
    }

    fn visit_thread(&self, _: &str, _: &mut dyn FnMut(ThreadRow) -> Result<()>) -> Result<()> {
        Ok(())
    }

    fn write_thread_from(&self, _: &str, _: bool, _: RowFeed<'_>) -> Result<WrittenThread> {
        self.refuse()
    }

    fn stream_threads(
        &self,
        _: usize,
        _: &mut dyn FnMut(Vec<ThreadSummary>) -> Result<bool>,
    ) -> Result<()> {
        Ok(())
    }

    fn stream_latest_root_ids(
        &self,
        _: usize,
        _: &mut dyn FnMut(Vec<(String, String)>) -> Result<bool>,
    ) -> Result<()> {
        Ok(())
    }
}
