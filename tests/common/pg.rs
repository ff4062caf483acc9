//! A PostgreSQL database per test, made from the committed `fixtures/postgres.sql` or
//! `fixtures/postgres-delta.sql` (written by real LangGraph's `PostgresSaver`, see
//! fixtures/generate_pg.py).
//!
//! `MEMCTL_TEST_PG` is the URL of a superuser on a throwaway server (scripts/test.sh starts
//! one with scripts/pg.sh). Without it the tests fail, never skip.

use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::OnceLock;

/// The admin URL, or a failure that says how to get one.
pub fn admin_url() -> String {
    std::env::var("MEMCTL_TEST_PG").unwrap_or_else(|_| {
        panic!(
            "MEMCTL_TEST_PG is not set: the Postgres tests need a throwaway server. \
             scripts/test.sh starts one; by hand: URL=$(scripts/pg.sh start /tmp/memctl-pg) && \
             MEMCTL_TEST_PG=$URL cargo test --test postgres"
        )
    })
}

/// `url` with its database replaced by `db`.
pub fn with_db(url: &str, db: &str) -> String {
    let (base, query) = match url.split_once('?') {
        Some((b, q)) => (b, format!("?{q}")),
        None => (url, String::new()),
    };
    let scheme_end = base.find("://").map_or(0, |i| i + 3);
    let base = match base[scheme_end..].find('/') {
        Some(i) => &base[..scheme_end + i],
        None => base,
    };
    format!("{base}/{db}{query}")
}

/// libpq's keyword/value form of a test URL `postgresql://USER@HOST:PORT/DB`, with
/// `password` (quoted as libpq wants: the test server trusts every local connection, so
/// the password only has to be parsed, never checked).
pub fn keyword_form(url: &str, password: &str) -> String {
    let rest = url
        .strip_prefix("postgresql://")
        .expect("the test URL is postgresql://");
    let (user, rest) = rest.split_once('@').expect("USER@");
    let (hostport, db) = rest.split_once('/').expect("/DB");
    let db = db.split('?').next().unwrap_or(db);
    let (host, port) = hostport.split_once(':').expect("HOST:PORT");
    let quoted = password.replace('\\', "\\\\").replace('\'', "\\'");
    format!("host={host} port = {port} user={user} password='{quoted}' dbname={db} sslmode=disable")
}

/// A client for `url` (no TLS: the test server is local).
pub fn client(url: &str) -> postgres::Client {
    postgres::Client::connect(url, postgres::NoTls)
        .unwrap_or_else(|e| panic!("cannot connect to the test server {url}: {e}"))
}

/// The template database holding the committed dump `file` (in fixtures/), made once per
/// test process and dump.
fn template(file: &str) -> String {
    static TEMPLATES: OnceLock<std::sync::Mutex<std::collections::HashMap<String, String>>> =
        OnceLock::new();
    let mut made = TEMPLATES
        .get_or_init(Default::default)
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    if let Some(name) = made.get(file) {
        return name.clone();
    }
    let name = format!(
        "memctl_tpl_{}_{}",
        std::process::id(),
        file.trim_end_matches(".sql")
            .replace(|c: char| !c.is_ascii_alphanumeric(), "_")
    );
    let admin = admin_url();
    let mut c = client(&admin);
    c.batch_execute(&format!("DROP DATABASE IF EXISTS {name}"))
        .expect("drop an old template");
    c.batch_execute(&format!("CREATE DATABASE {name}"))
        .expect("create the template database");
    let dump = std::fs::read_to_string(super::fixture(file))
        .unwrap_or_else(|e| panic!("fixtures/{file}: {e}"));
    let mut t = client(&with_db(&admin, &name));
    t.batch_execute(&dump)
        .unwrap_or_else(|e| panic!("load fixtures/{file}: {e}"));
    drop(t);
    made.insert(file.to_owned(), name.clone());
    name
}

/// The committed dump.
pub fn fixture_sql() -> PathBuf {
    super::fixture("postgres.sql")
}

/// A database of its own for one test, dropped when it goes out of scope.
pub struct TestDb {
    /// Its name.
    pub name: String,
    /// A URL memctl and LangGraph connect with.
    pub url: String,
}

impl TestDb {
    /// A fresh copy of the fixture.
    pub fn fixture(hint: &str) -> TestDb {
        TestDb::create(hint, Some(&template("postgres.sql")))
    }

    /// A fresh copy of the DeltaChannel fixture (fixtures/postgres-delta.sql).
    pub fn delta_fixture(hint: &str) -> TestDb {
        TestDb::create(hint, Some(&template("postgres-delta.sql")))
    }

    /// A fresh copy of the encrypted fixture (fixtures/postgres-encrypted.sql).
    pub fn encrypted(hint: &str) -> TestDb {
        TestDb::create(hint, Some(&template("postgres-encrypted.sql")))
    }

    /// A fresh copy of the Store fixture (fixtures/postgres-store.sql: PostgresStore's
    /// tables, see fixtures/generate_store.py).
    pub fn store_fixture(hint: &str) -> TestDb {
        TestDb::create(hint, Some(&template("postgres-store.sql")))
    }

    /// A fresh copy of LangGraph.js's Store fixture (fixtures/postgres-store-js.sql: the
    /// tables @langchain/langgraph-checkpoint-postgres/store writes, see
    /// fixtures/js-store/generate_store_js.mjs).
    pub fn js_store_fixture(hint: &str) -> TestDb {
        TestDb::create(hint, Some(&template("postgres-store-js.sql")))
    }

    /// A database with PostgresSaver's tables (the fixture's, at its level) and no thread.
    pub fn empty_saver(hint: &str) -> TestDb {
        let db = TestDb::fixture(hint);
        db.client()
            .batch_execute(
                "DELETE FROM checkpoint_writes; DELETE FROM checkpoint_blobs; DELETE FROM checkpoints",
            )
            .expect("empties");
        db
    }

    /// An empty database.
    pub fn empty(hint: &str) -> TestDb {
        TestDb::create(hint, None)
    }

    /// A fresh copy of this database (nothing may be connected to it meanwhile).
    pub fn copy(&self, hint: &str) -> TestDb {
        TestDb::create(hint, Some(&self.name))
    }

    /// A digest of every row of the saver's three tables, in a fixed order.
    pub fn rows_digest(&self) -> Vec<(String, i64, String)> {
        ["checkpoints", "checkpoint_blobs", "checkpoint_writes"]
            .iter()
            .map(|t| {
                let sql = format!(
                    "SELECT count(*), coalesce(md5(string_agg(r::text, ',' ORDER BY r::text COLLATE \"C\")), '') FROM {t} r"
                );
                let row = self
                    .client()
                    .query_one(sql.as_str(), &[])
                    .unwrap_or_else(|e| panic!("{sql}: {e}"));
                ((*t).to_owned(), row.get(0), row.get(1))
            })
            .collect()
    }

    fn create(hint: &str, template: Option<&str>) -> TestDb {
        static N: AtomicUsize = AtomicUsize::new(0);
        let clean: String = hint
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() {
                    c.to_ascii_lowercase()
                } else {
                    '_'
                }
            })
            .take(30)
            .collect();
        let name = format!(
            "t_{clean}_{}_{}",
            std::process::id(),
            N.fetch_add(1, Ordering::SeqCst)
        );
        let admin = admin_url();
        let mut c = client(&admin);
        let sql = match template {
            Some(t) => format!("CREATE DATABASE {name} TEMPLATE {t}"),
            None => format!("CREATE DATABASE {name}"),
        };
        // Two CREATE DATABASE from one template at the same moment can collide: retry.
        let mut tries = 0;
        loop {
            match c.batch_execute(&sql) {
                Ok(()) => break,
                Err(e) if tries < 20 => {
                    tries += 1;
                    let _ = e;
                    std::thread::sleep(std::time::Duration::from_millis(100 * tries));
                }
                Err(e) => panic!("{sql}: {e}"),
            }
        }
        TestDb {
            url: with_db(&admin, &name),
            name,
        }
    }

    /// A client on this database.
    pub fn client(&self) -> postgres::Client {
        client(&self.url)
    }

    /// One integer from a query.
    pub fn count(&self, sql: &str) -> i64 {
        self.client()
            .query_one(sql, &[])
            .unwrap_or_else(|e| panic!("{sql}: {e}"))
            .get(0)
    }
}

impl Drop for TestDb {
    fn drop(&mut self) {
        if let Ok(mut c) = postgres::Client::connect(&admin_url(), postgres::NoTls) {
            let _ = c.batch_execute(&format!(
                "DROP DATABASE IF EXISTS {} WITH (FORCE)",
                self.name
            ));
        }
    }
}
