//! `PostgresStore`'s tables (langgraph-checkpoint-postgres): `store` (+ `store_migrations`,
//! levels 0–3) and, with an embedding index, `store_vectors` (pgvector), usually in the
//! database that holds a `PostgresSaver`'s checkpoints.
//!
//! Format facts (langgraph/store/postgres/base.py): `value` is JSONB; the timestamps are
//! `timestamptz`; `sweep_ttl` deletes `expires_at IS NOT NULL AND expires_at < NOW()`, and
//! `store.delete` deletes the `store` rows, whose vectors go by the foreign key's `ON DELETE
//! CASCADE`. memctl deletes them in the same statement and counts them. LangGraph's `get` and
//! `search` move `expires_at` forward for every item with a `ttl_minutes` (even with no
//! TTLConfig); memctl's reads run in a `READ ONLY` transaction and never do.

use std::time::Duration;

use anyhow::{anyhow, Result};
use postgres::fallible_iterator::FallibleIterator;
use postgres::types::ToSql;
use postgres::Client;
use std::cell::RefCell;

use super::conn::{self, Target};
use crate::storage::store::{
    in_batches, is_under, Backend, ItemStore, ItemVisitor, NamespaceSummary, NoStore, Removal,
    RemovedItem, StoreItem, StoreRow, StoreShape, VectorRow, SWEEP_BATCH,
};
use crate::storage::Access;

/// The highest `store_migrations` level memctl knows (langgraph-checkpoint-postgres 3.2:
/// `idx_store_expires_at`).
pub const KNOWN_MIGRATION: i64 = 3;

/// `PostgresStore.setup()`'s `store_migrations` table (langgraph-checkpoint-postgres 3.x,
/// langgraph/store/postgres/base.py).
const MIGRATIONS_TABLE: &str =
    "\n                CREATE TABLE IF NOT EXISTS store_migrations (\n                    v INTEGER PRIMARY KEY\n                )\n            ";

/// `PostgresStore`'s `MIGRATIONS`, level 0 on, as it runs them (each its own statement, on an
/// autocommit connection: level 1 is `CREATE INDEX CONCURRENTLY`).
const MIGRATIONS: [&str; 4] = [
    "\nCREATE TABLE IF NOT EXISTS store (\n    -- 'prefix' represents the doc's 'namespace'\n    prefix text NOT NULL,\n    key text NOT NULL,\n    value jsonb NOT NULL,\n    created_at TIMESTAMP WITH TIME ZONE DEFAULT CURRENT_TIMESTAMP,\n    updated_at TIMESTAMP WITH TIME ZONE DEFAULT CURRENT_TIMESTAMP,\n    PRIMARY KEY (prefix, key)\n);\n",
    "\n-- For faster lookups by prefix\nCREATE INDEX CONCURRENTLY IF NOT EXISTS store_prefix_idx ON store USING btree (prefix text_pattern_ops);\n",
    "\n-- Add expires_at column to store table\nALTER TABLE store\nADD COLUMN IF NOT EXISTS expires_at TIMESTAMP WITH TIME ZONE,\nADD COLUMN IF NOT EXISTS ttl_minutes INT;\n",
    "\n-- Add indexes for efficient TTL sweeping\nCREATE INDEX IF NOT EXISTS idx_store_expires_at ON store (expires_at)\nWHERE expires_at IS NOT NULL;\n",
];

/// Whether an item has expired, as `sweep_ttl` decides.
const EXPIRED: &str = "(expires_at IS NOT NULL AND expires_at < NOW())";

/// A `timestamptz` column as RFC 3339 text in UTC.
fn ts(col: &str) -> String {
    format!("to_char({col} AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.US\"+00:00\"')")
}

/// The one line for a `store` table in LangGraph.js's layout.
///
/// LangGraph.js's PostgresStore (@langchain/langgraph-checkpoint-postgres/store) names its
/// tables as Python's does but lays them out differently: `namespace_path` (labels joined
/// with `:`) where Python has `prefix` (joined with `.`), no `ttl_minutes`, a sweep with `<=`.
/// memctl does not read or write it yet: it says so instead of failing on a missing column.
pub fn js_layout(shown: &str) -> String {
    format!(
        "'{shown}': the store table is LangGraph.js's PostgresStore (column namespace_path), not \
         Python's PostgresStore (column prefix): memctl does not read or change it yet"
    )
}

/// `PostgresStore`'s tables in a PostgreSQL database.
pub struct PgItemStore {
    client: RefCell<Client>,
    target: Target,
    migration: Option<i64>,
    has_ttl: bool,
    has_vectors: bool,
}

impl PgItemStore {
    /// Connects as [`super::PostgresStore::open`] does (the URL's `schema=` or `schema`, else
    /// the `search_path`; `lock_timeout` is `busy_timeout`; a read-only store holds one
    /// `REPEATABLE READ READ ONLY` transaction) and finds the store's tables.
    pub fn open(
        url: &str,
        schema: Option<&str>,
        access: Access,
        busy_timeout: Duration,
    ) -> Result<PgItemStore> {
        let mut target = Target::parse(url, Duration::from_secs(10).max(busy_timeout))?;
        if let Some(s) = schema {
            target.use_schema(s)?;
        }
        let mut client = target.connect_session(busy_timeout)?;
        let shown = target.shown.clone();
        let err = |e: postgres::Error| target.error(&e);
        if access == Access::ReadOnly {
            client
                .batch_execute("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY")
                .map_err(err)?;
        }
        let r = client
            .query_one(
                "SELECT to_regclass('store')::text, to_regclass('store_migrations')::text, \
                        to_regclass('store_vectors')::text, \
                        EXISTS (SELECT 1 FROM information_schema.columns \
                                WHERE table_name = 'store' AND column_name = 'expires_at' \
                                AND table_schema = current_schema()), \
                        EXISTS (SELECT 1 FROM information_schema.columns \
                                WHERE table_name = 'store' AND column_name = 'namespace_path' \
                                AND table_schema = current_schema())",
                &[],
            )
            .map_err(err)?;
        let found = |i: usize| r.try_get::<_, Option<String>>(i).ok().flatten().is_some();
        if !found(0) {
            return Err(NoStore(shown).into());
        }
        if r.try_get::<_, bool>(4).map_err(err)? {
            anyhow::bail!("{}", js_layout(&shown));
        }
        let has_ttl: bool = r.try_get(3).map_err(err)?;
        let has_vectors = found(2);
        let migration = if found(1) {
            client
                .query_one("SELECT max(v)::bigint FROM store_migrations", &[])
                .and_then(|r| r.try_get::<_, Option<i64>>(0))
                .map_err(err)?
        } else {
            None
        };
        Ok(PgItemStore {
            client: RefCell::new(client),
            target,
            migration,
            has_ttl,
            has_vectors,
        })
    }

    /// Brings the database's Store tables to [`KNOWN_MIGRATION`] as `PostgresStore.setup()`
    /// does (creating them when there are none: the same statements, each committed on its
    /// own as setup's autocommit connection commits it, one `store_migrations` row per level).
    /// A level newer than memctl knows is refused before anything is written.
    pub fn setup(url: &str, busy_timeout: Duration) -> Result<()> {
        let target = Target::parse(url, Duration::from_secs(10).max(busy_timeout))?;
        let mut client = target.connect_session(busy_timeout)?;
        let shown = target.shown.clone();
        let err = |e: postgres::Error| target.error(&e);
        // Checked first, so that a level memctl does not know gets nothing written.
        let exists = client
            .query_one("SELECT to_regclass('store_migrations')::text", &[])
            .and_then(|r| r.try_get::<_, Option<String>>(0))
            .map_err(err)?
            .is_some();
        let have: i64 = if exists {
            client
                .query_one(
                    "SELECT coalesce(max(v), -1)::bigint FROM store_migrations",
                    &[],
                )
                .and_then(|r| r.try_get(0))
                .map_err(err)?
        } else {
            -1
        };
        if have > KNOWN_MIGRATION {
            anyhow::bail!(
                "'{shown}': the store is at migration level {have} (store_migrations), newer than memctl knows (up to {KNOWN_MIGRATION}): writes are refused"
            );
        }
        client.batch_execute(MIGRATIONS_TABLE).map_err(err)?;
        for (v, sql) in MIGRATIONS.iter().enumerate().skip((have + 1) as usize) {
            client.batch_execute(sql).map_err(err)?;
            client
                .execute(
                    "INSERT INTO store_migrations (v) VALUES ($1)",
                    &[&(v as i32)],
                )
                .map_err(err)?;
        }
        Ok(())
    }

    fn read_rows(
        &self,
        filter: &str,
        tail: &str,
        params: &[&(dyn ToSql + Sync)],
    ) -> Result<Vec<StoreRow>> {
        let (expires, ttl) = if self.has_ttl {
            (ts("expires_at"), "ttl_minutes::float8")
        } else {
            ("NULL::text".to_owned(), "NULL::float8")
        };
        let sql = format!(
            "SELECT prefix, key, value::text, {}, {}, {expires}, {ttl} FROM store WHERE {filter} {tail}",
            ts("created_at"),
            ts("updated_at"),
        );
        let rows = self.query(&sql, params)?;
        rows.iter()
            .map(|r| -> Result<StoreRow> {
                let value: String = r.try_get(2).map_err(|e| self.err(e))?;
                Ok(StoreRow {
                    prefix: r.try_get(0).map_err(|e| self.err(e))?,
                    key: r.try_get(1).map_err(|e| self.err(e))?,
                    value: value.into_bytes(),
                    value_is_text: false,
                    created_at: r.try_get(3).map_err(|e| self.err(e))?,
                    updated_at: r.try_get(4).map_err(|e| self.err(e))?,
                    expires_at: r.try_get(5).map_err(|e| self.err(e))?,
                    ttl_minutes: r.try_get(6).map_err(|e| self.err(e))?,
                })
            })
            .collect()
    }

    fn err(&self, e: postgres::Error) -> anyhow::Error {
        let msg = self.target.scrub(&format!(
            "PostgreSQL error on '{}': {}",
            self.target.shown,
            conn::error_text(&e)
        ));
        // A data exception (class 22: `\u0000` in a JSONB value…) concerns the items sent, not
        // the connection (see `crate::storage::Refused`).
        match e.code().is_some_and(|c| c.code().starts_with("22")) {
            true => crate::storage::Refused(msg).into(),
            false => anyhow!("{msg}"),
        }
    }

    fn query(&self, sql: &str, params: &[&(dyn ToSql + Sync)]) -> Result<Vec<postgres::Row>> {
        self.client
            .borrow_mut()
            .query(sql, params)
            .map_err(|e| self.err(e))
    }

    fn expired_sql(&self) -> &'static str {
        if self.has_ttl {
            EXPIRED
        } else {
            "FALSE"
        }
    }

    fn read_items(
        &self,
        filter: &str,
        tail: &str,
        params: &[&(dyn ToSql + Sync)],
    ) -> Result<Vec<StoreItem>> {
        let (expires, ttl) = if self.has_ttl {
            (ts("expires_at"), "ttl_minutes::float8")
        } else {
            ("NULL::text".to_owned(), "NULL::float8")
        };
        let sql = format!(
            "SELECT prefix, key, value::text, {}, {}, {expires}, {ttl}, {} FROM store WHERE {filter} ORDER BY key COLLATE \"C\" {tail}",
            ts("created_at"),
            ts("updated_at"),
            self.expired_sql()
        );
        let rows = self.query(&sql, params)?;
        rows.iter()
            .map(|r| -> Result<StoreItem> {
                let value: String = r.try_get(2).map_err(|e| self.err(e))?;
                Ok(StoreItem {
                    prefix: r.try_get(0).map_err(|e| self.err(e))?,
                    key: r.try_get(1).map_err(|e| self.err(e))?,
                    value: value.into_bytes(),
                    created_at: r.try_get(3).map_err(|e| self.err(e))?,
                    updated_at: r.try_get(4).map_err(|e| self.err(e))?,
                    expires_at: r.try_get(5).map_err(|e| self.err(e))?,
                    ttl_minutes: r.try_get(6).map_err(|e| self.err(e))?,
                    expired: r.try_get(7).map_err(|e| self.err(e))?,
                })
            })
            .collect()
    }

    /// Deletes the rows `filter` selects (or, with `dry_run`, lists them) and their vectors,
    /// in one statement.
    fn remove(
        &mut self,
        filter: &str,
        params: &[&(dyn ToSql + Sync)],
        dry_run: bool,
    ) -> Result<Removal> {
        let vectors = if self.has_vectors {
            "SELECT count(*) FROM store_vectors v JOIN gone g ON v.prefix = g.prefix AND v.key = g.key"
        } else {
            "SELECT 0::bigint"
        };
        let sql = if dry_run {
            format!(
                "WITH gone AS (SELECT prefix, key, octet_length(value::text) AS bytes FROM store WHERE {filter}) \
                 SELECT prefix, key, bytes::bigint, ({vectors}) FROM gone"
            )
        } else if self.has_vectors {
            format!(
                "WITH gone AS (DELETE FROM store WHERE {filter} RETURNING prefix, key, octet_length(value::text) AS bytes), \
                      vec AS (DELETE FROM store_vectors v USING gone g WHERE v.prefix = g.prefix AND v.key = g.key RETURNING 1) \
                 SELECT prefix, key, bytes::bigint, (SELECT count(*) FROM vec) FROM gone"
            )
        } else {
            format!(
                "WITH gone AS (DELETE FROM store WHERE {filter} RETURNING prefix, key, octet_length(value::text) AS bytes) \
                 SELECT prefix, key, bytes::bigint, 0::bigint FROM gone"
            )
        };
        let rows = self.query(&sql, params)?;
        let mut removal = Removal::default();
        for r in &rows {
            removal.items.push(RemovedItem {
                prefix: r.try_get(0).map_err(|e| self.err(e))?,
                key: r.try_get(1).map_err(|e| self.err(e))?,
                bytes: r.try_get::<_, i64>(2).map_err(|e| self.err(e))?.max(0) as u64,
            });
            removal.vectors = r.try_get::<_, i64>(3).map_err(|e| self.err(e))?.max(0) as u64;
        }
        removal.sort();
        Ok(removal)
    }
}

impl ItemStore for PgItemStore {
    fn shown(&self) -> &str {
        &self.target.shown
    }

    fn migration(&self) -> Option<i64> {
        self.migration
    }

    fn known_migration(&self) -> i64 {
        KNOWN_MIGRATION
    }

    fn backend(&self) -> Backend {
        Backend::Postgres
    }

    fn shape(&self) -> StoreShape {
        StoreShape {
            migration: self.migration,
            has_vectors: self.has_vectors,
        }
    }

    fn page(&self, after: Option<(&str, &str)>, limit: usize) -> Result<Vec<StoreRow>> {
        // The primary key's order (the database's collation): each page is one index range.
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        match after {
            None => self.read_rows("TRUE", "ORDER BY prefix, key LIMIT $1", &[&limit]),
            Some((p, k)) => self.read_rows(
                "(prefix, key) > ($2, $3)",
                "ORDER BY prefix, key LIMIT $1",
                &[&limit, &p, &k],
            ),
        }
    }

    fn rows(&self, prefix: &str, keys: &[String]) -> Result<Vec<StoreRow>> {
        let keys: Vec<&str> = keys.iter().map(String::as_str).collect();
        self.read_rows("prefix = $1 AND key = ANY($2)", "", &[&prefix, &keys])
    }

    fn write_rows(
        &mut self,
        rows: &[StoreRow],
        overwrite: bool,
        vectors: &[VectorRow],
    ) -> Result<Vec<(String, String)>> {
        if !vectors.is_empty() {
            anyhow::bail!(
                "'{}': memctl does not write a Postgres store's vectors (pgvector)",
                self.target.shown
            );
        }
        if !self.has_ttl {
            anyhow::bail!(
                "'{}': the store has no expires_at column (an old migration level): run the app's store.setup() first",
                self.target.shown
            );
        }
        let mut cols: [Vec<Option<String>>; 6] = Default::default();
        let mut ttl: Vec<Option<f64>> = Vec::with_capacity(rows.len());
        for r in rows {
            cols[0].push(Some(r.prefix.clone()));
            cols[1].push(Some(r.key.clone()));
            cols[2].push(Some(String::from_utf8(r.value.clone()).map_err(|_| {
                anyhow!(
                    "store item '{}' / '{}': its value is not UTF-8 JSON text",
                    r.prefix,
                    r.key
                )
            })?));
            cols[3].push(r.created_at.clone());
            cols[4].push(r.updated_at.clone());
            cols[5].push(r.expires_at.clone());
            ttl.push(r.ttl_minutes);
        }
        let conflict = if overwrite {
            "DO UPDATE SET value = EXCLUDED.value, created_at = EXCLUDED.created_at, \
                 updated_at = EXCLUDED.updated_at, expires_at = EXCLUDED.expires_at, \
                 ttl_minutes = EXCLUDED.ttl_minutes"
        } else {
            "DO NOTHING"
        };
        let sql = format!(
            "INSERT INTO store (prefix, key, value, created_at, updated_at, expires_at, ttl_minutes) \
             SELECT p, k, v::jsonb, c::timestamptz, u::timestamptz, e::timestamptz, t \
             FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::float8[]) \
                  AS x(p, k, v, c, u, e, t) \
             ON CONFLICT (prefix, key) {conflict} RETURNING prefix, key"
        );
        let mut c = self.client.borrow_mut();
        let mut tx = c.transaction().map_err(|e| self.err(e))?;
        let written = tx
            .query(
                &sql,
                &[
                    &cols[0], &cols[1], &cols[2], &cols[3], &cols[4], &cols[5], &ttl,
                ],
            )
            .map_err(|e| self.err(e))?;
        tx.commit().map_err(|e| self.err(e))?;
        let mut written: std::collections::HashSet<(String, String)> = written
            .iter()
            .map(|r| Ok((r.try_get(0)?, r.try_get(1)?)))
            .collect::<std::result::Result<_, postgres::Error>>()
            .map_err(|e| self.err(e))?;
        // Those not written were written in the target meanwhile (by its app): left as they are.
        Ok(rows
            .iter()
            .map(|r| (r.prefix.clone(), r.key.clone()))
            .filter(|pk| !written.remove(pk))
            .collect())
    }

    fn namespaces(&self, prefix: Option<&str>) -> Result<Vec<NamespaceSummary>> {
        let sql = format!(
            "SELECT prefix, count(*), coalesce(sum(octet_length(value::text)), 0)::bigint, \
                    count(*) FILTER (WHERE {}), {} \
             FROM store GROUP BY prefix ORDER BY prefix COLLATE \"C\"",
            self.expired_sql(),
            ts("max(updated_at)")
        );
        let rows = self.query(&sql, &[])?;
        let mut out = Vec::with_capacity(rows.len());
        for r in &rows {
            let n = NamespaceSummary {
                prefix: r.try_get(0).map_err(|e| self.err(e))?,
                items: r.try_get::<_, i64>(1).map_err(|e| self.err(e))?.max(0) as u64,
                bytes: r.try_get::<_, i64>(2).map_err(|e| self.err(e))?.max(0) as u64,
                expired: r.try_get::<_, i64>(3).map_err(|e| self.err(e))?.max(0) as u64,
                newest_update: r.try_get(4).map_err(|e| self.err(e))?,
            };
            if prefix.is_none_or(|p| is_under(&n.prefix, p)) {
                out.push(n);
            }
        }
        Ok(out)
    }

    fn items(&self, prefix: &str, limit: Option<usize>) -> Result<Vec<StoreItem>> {
        let limit: Option<i64> = limit.map(|l| i64::try_from(l).unwrap_or(i64::MAX));
        self.read_items("prefix = $1", "LIMIT $2", &[&prefix, &limit])
    }

    fn get(&self, prefix: &str, key: &str) -> Result<Option<StoreItem>> {
        Ok(self
            .read_items("prefix = $1 AND key = $2", "", &[&prefix, &key])?
            .into_iter()
            .next())
    }

    fn delete_at_once(&mut self, prefix: &str, keys: &[String], dry_run: bool) -> Result<Removal> {
        if keys.is_empty() {
            return self.remove("prefix = $1", &[&prefix], dry_run);
        }
        let keys: Vec<&str> = keys.iter().map(String::as_str).collect();
        self.remove("prefix = $1 AND key = ANY($2)", &[&prefix, &keys], dry_run)
    }

    fn for_each_item(&self, f: ItemVisitor<'_>) -> Result<()> {
        let mut c = self.client.borrow_mut();
        let params: [&(dyn ToSql + Sync); 0] = [];
        // Streamed from the server: a store of a million items is never held whole.
        let mut it = c
            .query_raw("SELECT prefix, key, value::text FROM store", params)
            .map_err(|e| self.err(e))?;
        while let Some(r) = it.next().map_err(|e| self.err(e))? {
            let prefix: String = r.try_get(0).map_err(|e| self.err(e))?;
            let key: String = r.try_get(1).map_err(|e| self.err(e))?;
            let value: String = r.try_get(2).map_err(|e| self.err(e))?;
            f(&prefix, &key, value.as_bytes())?;
        }
        Ok(())
    }

    fn delete_unchanged_batch(
        &mut self,
        prefix: &str,
        items: &[(String, Vec<u8>)],
        dry_run: bool,
    ) -> Result<Removal> {
        let keys: Vec<&str> = items.iter().map(|(k, _)| k.as_str()).collect();
        // The values as `value::text` gave them (what for_each_item read).
        let values: Vec<String> = items
            .iter()
            .map(|(_, v)| String::from_utf8_lossy(v).into_owned())
            .collect();
        self.remove(
            "prefix = $1 AND (key, value::text) IN (SELECT * FROM unnest($2::text[], $3::text[]))",
            &[&prefix, &keys, &values],
            dry_run,
        )
    }

    fn sweep(&mut self, dry_run: bool) -> Result<Removal> {
        if !self.has_ttl || dry_run {
            return self.remove(self.expired_sql(), &[], dry_run);
        }
        // One statement (its own transaction) per batch: row locks are held for one batch,
        // never for the whole sweep. A row the app holds is waited for, and its expires_at
        // checked again once the app commits (READ COMMITTED), so an item the app refreshed
        // meanwhile is not taken.
        let batch = format!(
            "{EXPIRED} AND (prefix, key) IN (SELECT prefix, key FROM store WHERE {EXPIRED} LIMIT {SWEEP_BATCH})"
        );
        in_batches(|| self.remove(&batch, &[], false))
    }

    fn vectors(&self) -> Option<&dyn crate::storage::store::Vectors> {
        Some(self)
    }

    fn maintenance(&self) -> Option<&dyn crate::storage::store::Maintenance> {
        Some(self)
    }
}

impl crate::storage::store::Vectors for PgItemStore {
    fn vectors_of(&self, items: &[(String, String)]) -> Result<u64> {
        if !self.has_vectors || items.is_empty() {
            return Ok(0);
        }
        let prefixes: Vec<&str> = items.iter().map(|(p, _)| p.as_str()).collect();
        let keys: Vec<&str> = items.iter().map(|(_, k)| k.as_str()).collect();
        let rows = self.query(
            "SELECT count(*) FROM store_vectors v \
             JOIN unnest($1::text[], $2::text[]) AS g(prefix, key) ON v.prefix = g.prefix AND v.key = g.key",
            &[&prefixes, &keys],
        )?;
        let n: i64 = rows
            .first()
            .map(|r| r.try_get(0))
            .transpose()
            .map_err(|e| self.err(e))?
            .unwrap_or(0);
        Ok(n.max(0) as u64)
    }

    fn vector_space(&self) -> Result<(u64, u64)> {
        if !self.has_vectors {
            return Ok((0, 0));
        }
        let rows = self.query(
            "SELECT count(*), coalesce(sum(pg_column_size(embedding)), 0)::bigint FROM store_vectors",
            &[],
        )?;
        let Some(r) = rows.first() else {
            return Ok((0, 0));
        };
        let n: i64 = r.try_get(0).map_err(|e| self.err(e))?;
        let b: i64 = r.try_get(1).map_err(|e| self.err(e))?;
        Ok((n.max(0) as u64, b.max(0) as u64))
    }
}

impl crate::storage::store::Maintenance for PgItemStore {
    fn vacuum(&self) -> Result<()> {
        let tables = if self.has_vectors {
            "store, store_vectors"
        } else {
            "store"
        };
        self.client
            .borrow_mut()
            .batch_execute(&format!("VACUUM (ANALYZE) {tables}"))
            .map_err(|e| self.err(e))
    }
}
