//! Connecting to PostgreSQL the way libpq users expect: a `postgresql://` / `postgres://` URL
//! (or its `key=value` parameters), the password from the URL, `PGPASSWORD` or `~/.pgpass`
//! (`PGPASSFILE`, `passfile=`), the `PGHOST` / `PGPORT` / `PGUSER` / `PGDATABASE` /
//! `PGSSLMODE` / `PGSSLROOTCERT` defaults, every `sslmode` (`disable` … `verify-full`) and
//! unix-socket hosts (`host=/run/postgresql` or a percent-encoded path as the URL's host).
//! Passwords never reach a message: every URL shown goes through [`redact`].

use std::path::{Path, PathBuf};
use std::str::FromStr;
use std::sync::Arc;
use std::time::Duration;

use anyhow::{anyhow, bail, Context, Result};
use postgres::config::{Host, SslMode};

/// The URL schemes memctl connects with: libpq's two, and SQLAlchemy's for the psycopg
/// drivers (`postgresql+psycopg://`, `postgresql+psycopg2://`), which LangGraph users have in
/// their configuration; the latter are read as `postgresql://`.
const SCHEMES: [&str; 4] = [
    "postgresql://",
    "postgres://",
    "postgresql+psycopg://",
    "postgresql+psycopg2://",
];

/// The keywords of libpq's keyword/value connection strings (PostgreSQL 17's list), and
/// memctl's own `schema`. A string made only of `keyword=value` pairs with these keywords is
/// a connection string, not a file name.
const KEYWORDS: &[&str] = &[
    "host",
    "hostaddr",
    "port",
    "dbname",
    "user",
    "password",
    "passfile",
    "require_auth",
    "channel_binding",
    "connect_timeout",
    "client_encoding",
    "options",
    "application_name",
    "fallback_application_name",
    "keepalives",
    "keepalives_idle",
    "keepalives_interval",
    "keepalives_count",
    "keepalives_retries",
    "tcp_user_timeout",
    "replication",
    "gssencmode",
    "sslmode",
    "sslnegotiation",
    "sslcompression",
    "sslcert",
    "sslkey",
    "sslpassword",
    "sslcertmode",
    "sslrootcert",
    "sslcrl",
    "sslcrldir",
    "sslsni",
    "requirepeer",
    "ssl_min_protocol_version",
    "ssl_max_protocol_version",
    "krbsrvname",
    "gsslib",
    "gssdelegation",
    "service",
    "target_session_attrs",
    "load_balance_hosts",
    "schema",
];

/// True when `db` is a PostgreSQL URL memctl connects with (see `SCHEMES`).
pub fn is_url(db: &str) -> bool {
    scheme_of(db).is_some()
}

/// The scheme of [`SCHEMES`] that `db` starts with (any case).
fn scheme_of(db: &str) -> Option<&'static str> {
    SCHEMES.into_iter().find(|s| {
        db.get(..s.len())
            .is_some_and(|head| head.eq_ignore_ascii_case(s))
    })
}

/// True when `db` names a PostgreSQL database rather than a SQLite file: a URL memctl
/// connects with, or libpq's keyword/value form (`host=… dbname=… user=… password=…`, as
/// psycopg and `PostgresSaver.from_conn_string` take it) with libpq's keywords only.
pub fn is_connection_string(db: &str) -> bool {
    is_url(db) || keyword_pairs(db).is_some()
}

/// True when `db`, which is neither a file nor a connection string memctl accepts, looks
/// like a connection string all the same (a `scheme://` URL such as a JDBC URL or a typo,
/// `key=value` pairs, a `password=`): it is refused as such, masked ([`mask_secrets`]),
/// rather than taken for a missing file.
pub fn looks_like_connection_string(db: &str) -> bool {
    let lower = db.to_ascii_lowercase();
    let trimmed = lower.trim_start();
    let key_len = trimmed
        .bytes()
        .take_while(|b| b.is_ascii_alphanumeric() || *b == b'_')
        .count();
    let starts_with_pair = key_len > 0 && trimmed[key_len..].trim_start().starts_with('=');
    lower.contains("://")
        || trimmed.starts_with("jdbc:")
        || starts_with_pair
        || !secret_spans(db, false).is_empty()
}

/// The error for a `--db` that is no file and no connection string memctl accepts, but looks
/// like a connection string ([`looks_like_connection_string`]). `shown` is masked.
#[derive(Debug, thiserror::Error)]
#[error("{flag} '{shown}' is not a file, and not a connection string memctl accepts{why}: give a postgresql:// URL (or postgres://, postgresql+psycopg://, postgresql+psycopg2://), libpq's keyword form (host=… port=… user=… password=… dbname=…), or a SQLite file")]
pub struct NotAConnectionString {
    /// The flag the value was given with (`--db`, `--to`, …).
    pub flag: String,
    /// The value given, every password masked.
    pub shown: String,
    /// Why, when known (` (unknown keyword 'foo')`), or empty.
    pub why: String,
}

/// A `--db` value as it may be shown: [`mask_secrets`] for one value given whole (a URL, a
/// keyword string, a path), where a password may hold spaces: a `USER:PASS@` runs to the
/// value's last `@`, and an unquoted `password=` value to the next ` key=` (or the end).
pub fn redact(given: &str) -> String {
    mask(given, true)
}

/// `text` with every password it may hold replaced by `***`: the `PASS` of each `USER:PASS@`
/// (in a `scheme://` URL, or a whole word before an `@`), and the value of each
/// `password=` / `passwd=` / `pwd=` / `pass=` / `…password=` parameter (any case, spaces
/// around `=` allowed; a value in single or double quotes, with backslash escapes, up to its
/// closing quote; else up to a space, `&` or `;`). Errs on the side of masking too much. For
/// a message that quotes a value; a value alone goes through [`redact`].
pub fn mask_secrets(text: &str) -> String {
    mask(text, false)
}

/// [`mask_secrets`] (`whole`: [`redact`]).
fn mask(text: &str, whole: bool) -> String {
    let mut spans = secret_spans(text, whole);
    spans.extend(userinfo_spans(text, whole));
    spans.sort_unstable();
    let mut out = String::with_capacity(text.len());
    let mut at = 0;
    for (start, end) in spans {
        if end <= at {
            continue;
        }
        let start = start.max(at);
        out.push_str(&text[at..start]);
        out.push_str("***");
        at = end;
    }
    out.push_str(&text[at..]);
    out
}

/// Byte ranges of the passwords of `USER:PASS@` parts: in each whitespace-separated word
/// (with `whole`, in the whole text) with an `@`, from the first `:` after its `scheme://`
/// (if any) to its last `@`.
fn userinfo_spans(text: &str, whole: bool) -> Vec<(usize, usize)> {
    let words: Vec<&str> = if whole {
        vec![text]
    } else {
        text.split_inclusive(char::is_whitespace).collect()
    };
    let mut spans = Vec::new();
    let mut offset = 0;
    for word in words {
        let start = word.find("://").map_or(0, |i| i + 3);
        if let Some(at) = word.rfind('@').filter(|&at| at > start) {
            if let Some(colon) = word[start..at].find(':') {
                let from = start + colon + 1;
                if from < at {
                    spans.push((offset + from, offset + at));
                }
            }
        }
        offset += word.len();
    }
    spans
}

/// Byte ranges of the values of password parameters (see [`mask_secrets`]).
/// With `whole`, an unquoted value runs to the next whitespace-separated `key=` (a password
/// with spaces in a value given whole), not to the first space.
fn secret_spans(text: &str, whole: bool) -> Vec<(usize, usize)> {
    let bytes = text.as_bytes();
    let mut spans = Vec::new();
    for (eq, _) in text.match_indices('=') {
        let mut key_end = eq;
        while key_end > 0 && bytes[key_end - 1] == b' ' {
            key_end -= 1;
        }
        let mut key_start = key_end;
        while key_start > 0
            && (bytes[key_start - 1].is_ascii_alphanumeric() || bytes[key_start - 1] == b'_')
        {
            key_start -= 1;
        }
        let key = text[key_start..key_end].to_ascii_lowercase();
        let secret =
            key.ends_with("password") || key.ends_with("passwd") || key == "pwd" || key == "pass";
        if !secret {
            continue;
        }
        let mut start = eq + 1;
        while start < bytes.len() && bytes[start] == b' ' {
            start += 1;
        }
        let end = match bytes.get(start) {
            Some(&q @ (b'\'' | b'"')) => {
                let mut i = start + 1;
                loop {
                    match bytes.get(i) {
                        None => break bytes.len(),
                        Some(b'\\') => i += 2,
                        Some(&c) if c == q => break i + 1,
                        Some(_) => i += 1,
                    }
                }
            }
            _ if whole => {
                let rest = &text[start..];
                let mut end = rest.find(['&', ';']).unwrap_or(rest.len());
                let mut offset = 0;
                for word in rest.split_inclusive(char::is_whitespace) {
                    let key = word.split('=').next().unwrap_or("");
                    let pair = word.contains('=')
                        && !key.is_empty()
                        && key.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_');
                    if offset > 0 && pair {
                        // The whitespace before the next key stays.
                        let value = rest[..offset].trim_end();
                        end = end.min(value.len());
                        break;
                    }
                    offset += word.len();
                }
                start + end
            }
            _ => text[start..]
                .find(|c: char| c.is_whitespace() || c == '&' || c == ';')
                .map_or(text.len(), |i| start + i),
        };
        let end = end.min(text.len());
        if end > start {
            spans.push((start, end));
        }
    }
    spans
}

/// The `keyword=value` pairs of libpq's keyword/value connection string `s`, when it is one:
/// at least one pair, every keyword one of libpq's (`KEYWORDS`), values parsed by libpq's
/// rules (spaces around `=` allowed; a value in single quotes may hold spaces, `\'` and
/// `\\` escape a quote and a backslash, quoted or not; `''` is the empty value).
pub fn keyword_pairs(s: &str) -> Option<Vec<(String, String)>> {
    let pairs = any_keyword_pairs(s)?;
    pairs
        .iter()
        .all(|(k, _)| KEYWORDS.contains(&k.as_str()))
        .then_some(pairs)
}

/// The keywords of `s` that are not libpq's, when `s` has the keyword/value syntax (for
/// saying why it is refused).
pub fn unknown_keywords(s: &str) -> Vec<String> {
    any_keyword_pairs(s)
        .unwrap_or_default()
        .into_iter()
        .map(|(k, _)| k)
        .filter(|k| !KEYWORDS.contains(&k.as_str()))
        .collect()
}

/// True when `s` starts like libpq's keyword/value form (`key=`) but does not follow its
/// syntax (a value with a space outside quotes, an unterminated quote): for saying why it is
/// refused.
pub fn bad_keyword_syntax(s: &str) -> bool {
    let t = s.trim_start();
    let key = t.split('=').next().unwrap_or("").trim_end();
    t.contains('=')
        && !key.is_empty()
        && key.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
        && any_keyword_pairs(s).is_none()
}

/// The pairs of `s` read with libpq's keyword/value syntax, whatever the keywords.
fn any_keyword_pairs(s: &str) -> Option<Vec<(String, String)>> {
    let mut chars = s.chars().peekable();
    let mut pairs = Vec::new();
    loop {
        while chars.next_if(|c| c.is_whitespace()).is_some() {}
        if chars.peek().is_none() {
            break;
        }
        let mut key = String::new();
        while let Some(c) = chars.next_if(|c| !c.is_whitespace() && *c != '=') {
            key.push(c);
        }
        while chars.next_if(|c| c.is_whitespace()).is_some() {}
        chars.next_if_eq(&'=')?;
        while chars.next_if(|c| c.is_whitespace()).is_some() {}
        let mut value = String::new();
        if chars.next_if_eq(&'\'').is_some() {
            loop {
                match chars.next()? {
                    '\'' => break,
                    '\\' => value.push(chars.next()?),
                    c => value.push(c),
                }
            }
        } else {
            while let Some(c) = chars.next_if(|c| !c.is_whitespace()) {
                if c == '\\' {
                    value.push(chars.next()?);
                } else {
                    value.push(c);
                }
            }
        }
        pairs.push((key, value));
    }
    (!pairs.is_empty()).then_some(pairs)
}

/// `pairs` written back in libpq's keyword/value form (values quoted when they must be);
/// with `mask`, every password value is `***`.
fn keyword_string<'a>(pairs: impl IntoIterator<Item = &'a (String, String)>, mask: bool) -> String {
    let mut out = Vec::new();
    for (k, v) in pairs {
        let v = if mask && (k == "password" || k == "sslpassword") {
            "***".to_owned()
        } else if !v.is_empty()
            && !v.contains(|c: char| c.is_whitespace() || c == '\'' || c == '\\')
        {
            v.clone()
        } else {
            format!("'{}'", v.replace('\\', "\\\\").replace('\'', "\\'"))
        };
        out.push(format!("{k}={v}"));
    }
    out.join(" ")
}

/// A schema given apart from the URL (`--schema`) that differs from the URL's own
/// `schema=` parameter: memctl will not guess which one holds the saver's tables.
#[derive(Debug, thiserror::Error)]
#[error("the URL '{url}' says schema={in_url}, but schema '{given}' was given too: name the schema once")]
pub struct SchemaConflict {
    /// The URL, password redacted.
    pub url: String,
    /// The URL's `schema=` parameter.
    pub in_url: String,
    /// The schema given apart from it.
    pub given: String,
}

/// How the connection is encrypted, from `sslmode`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Tls {
    /// `disable` (and every unix-socket connection).
    Off,
    /// `allow` / `prefer`: TLS when the server offers it, certificate not checked.
    Prefer,
    /// `require`: TLS or nothing, certificate not checked (checked against `sslrootcert`
    /// when one is given, as libpq does).
    Require,
    /// `verify-ca`: the certificate must chain to a trusted root.
    VerifyCa,
    /// `verify-full`: and name the host.
    VerifyFull,
}

/// A parsed connection target.
pub struct Target {
    config: postgres::Config,
    tls: Tls,
    root_cert: Option<String>,
    /// The URL as it may be shown (password redacted).
    pub shown: String,
    /// `schema=NAME` (memctl's parameter; LangGraph.js's `schema` option): the saver's tables
    /// live there. `None`: the server's `search_path` (normally `public`).
    pub schema: Option<String>,
    password: Option<String>,
}

impl Target {
    /// Parses `url` and fills in what it leaves out from libpq's environment variables and
    /// password file. `connect_timeout` bounds the connection attempt.
    pub fn parse(url: &str, connect_timeout: Duration) -> Result<Target> {
        let given = match keyword_pairs(url) {
            Some(pairs) => Given::from_keywords(pairs),
            None => Given::from_url(url)?,
        };
        let shown = given.shown;
        let mut config = postgres::Config::from_str(&given.rebuilt).map_err(|e| {
            anyhow!(
                "{}",
                mask_secrets(&format!(
                    "invalid PostgreSQL {} '{shown}': {e} (expected {})",
                    given.what, given.expected
                ))
            )
        })?;
        libpq_defaults(&mut config, &shown, connect_timeout)?;
        let ours = given.ours;
        let sslmode = ours
            .sslmode
            .or_else(|| env_var("PGSSLMODE"))
            .unwrap_or_else(|| "prefer".into());
        let root_cert = ours.root_cert.or_else(|| env_var("PGSSLROOTCERT"));
        let tls = tls_of(&sslmode, root_cert.is_some(), &config, &shown)?;
        config.ssl_mode(match tls {
            Tls::Off => SslMode::Disable,
            Tls::Prefer => SslMode::Prefer,
            _ => SslMode::Require,
        });
        if config.get_password().is_none() {
            let password = env_var("PGPASSWORD").or_else(|| {
                let file = ours
                    .passfile
                    .map(PathBuf::from)
                    .or_else(|| env_var("PGPASSFILE").map(PathBuf::from))
                    .or_else(|| env_var("HOME").map(|h| Path::new(&h).join(".pgpass")))?;
                pgpass_lookup(&file, &config)
            });
            if let Some(p) = password {
                config.password(&p);
            }
        }
        let password = config
            .get_password()
            .map(|p| String::from_utf8_lossy(p).into_owned())
            .filter(|p| !p.is_empty());
        Ok(Target {
            config,
            tls,
            root_cert,
            shown,
            schema: ours.schema,
            password,
        })
    }

    /// Puts the saver's tables in `schema`, given apart from the URL (`--schema`). The same
    /// schema in the URL is fine; another one is a [`SchemaConflict`].
    pub fn use_schema(&mut self, schema: &str) -> Result<()> {
        match &self.schema {
            Some(in_url) if in_url != schema => Err(SchemaConflict {
                url: self.shown.clone(),
                in_url: in_url.clone(),
                given: schema.to_owned(),
            }
            .into()),
            _ => {
                self.schema = Some(schema.to_owned());
                Ok(())
            }
        }
    }

    /// Opens the connection.
    pub fn connect(&self) -> Result<postgres::Client> {
        let result = match self.tls {
            Tls::Off => self.config.connect(postgres::NoTls),
            _ => {
                let tls = tokio_postgres_rustls::MakeRustlsConnect::new(self.tls_config()?);
                self.config.connect(tls)
            }
        };
        result.map_err(|e| {
            let hint = connect_hint(&e);
            anyhow!(
                "{}",
                self.scrub(&format!(
                    "cannot connect to '{}': {}{hint}",
                    self.shown,
                    error_text(&e)
                ))
            )
        })
    }

    /// Opens the connection and sets memctl's session up on it: the named schema (if any)
    /// first on the `search_path`, and `lock_timeout` = `busy_timeout`.
    pub fn connect_session(&self, busy_timeout: Duration) -> Result<postgres::Client> {
        let mut client = self.connect()?;
        let mut sql = String::new();
        if let Some(schema) = &self.schema {
            sql.push_str(&format!(
                "SET search_path TO {}; ",
                super::quote_ident(schema)
            ));
        }
        let ms = busy_timeout.as_millis().min(i32::MAX as u128);
        sql.push_str(&format!("SET lock_timeout = {ms}"));
        client.batch_execute(&sql).map_err(|e| self.error(&e))?;
        Ok(client)
    }

    /// A server error as one line that names the database (its password scrubbed).
    pub fn error(&self, e: &postgres::Error) -> anyhow::Error {
        let hint = match e.code() {
            Some(c) if *c == postgres::error::SqlState::INSUFFICIENT_PRIVILEGE => {
                " (memctl needs SELECT on the tables it reads, and INSERT, UPDATE and DELETE on those it rewrites: ask the tables' owner for a GRANT)"
            }
            _ => "",
        };
        anyhow!(
            "{}",
            self.scrub(&format!(
                "PostgreSQL error on '{}': {}{hint}",
                self.shown,
                error_text(e)
            ))
        )
    }

    /// `text` with the password (if any) replaced by `***`: the last guard before anything
    /// reaches the user.
    pub fn scrub(&self, text: &str) -> String {
        match &self.password {
            Some(p) if p.len() >= 3 => text.replace(p.as_str(), "***"),
            _ => text.to_owned(),
        }
    }

    fn tls_config(&self) -> Result<rustls::ClientConfig> {
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let builder = rustls::ClientConfig::builder_with_provider(provider.clone())
            .with_safe_default_protocol_versions()
            .context("TLS setup failed")?;
        let verifier: Arc<dyn rustls::client::danger::ServerCertVerifier> = match self.tls {
            Tls::Off | Tls::Prefer | Tls::Require => Arc::new(NoVerify(provider)),
            Tls::VerifyCa | Tls::VerifyFull => {
                let roots = self.roots()?;
                let inner = rustls::client::WebPkiServerVerifier::builder_with_provider(
                    Arc::new(roots),
                    provider,
                )
                .build()
                .context("TLS setup failed")?;
                Arc::new(Verify {
                    inner,
                    check_name: self.tls == Tls::VerifyFull,
                })
            }
        };
        Ok(builder
            .dangerous()
            .with_custom_certificate_verifier(verifier)
            .with_no_client_auth())
    }

    /// The trusted roots: `sslrootcert` (a PEM file, or `system` for the bundled web PKI
    /// roots), else `~/.postgresql/root.crt` as libpq reads it.
    fn roots(&self) -> Result<rustls::RootCertStore> {
        use rustls::pki_types::pem::PemObject;
        let mut roots = rustls::RootCertStore::empty();
        let file = match self.root_cert.as_deref() {
            Some("system") => {
                roots.extend(webpki_roots::TLS_SERVER_ROOTS.iter().cloned());
                return Ok(roots);
            }
            Some(f) => PathBuf::from(f),
            None => std::env::var_os("HOME")
                .map(|h| Path::new(&h).join(".postgresql/root.crt"))
                .unwrap_or_default(),
        };
        let certs = rustls::pki_types::CertificateDer::pem_file_iter(&file)
            .and_then(|it| it.collect::<std::result::Result<Vec<_>, _>>())
            .map_err(|e| {
                anyhow!(
                    "cannot read the root certificate '{}' that sslmode=verify-ca/verify-full needs: {e} (set sslrootcert=FILE, or sslrootcert=system)",
                    file.display()
                )
            })?;
        for c in certs {
            roots
                .add(c)
                .with_context(|| format!("bad certificate in '{}'", file.display()))?;
        }
        Ok(roots)
    }
}

/// The whole chain of a client error on one line.
pub fn error_text(e: &postgres::Error) -> String {
    if let Some(db) = e.as_db_error() {
        return format!("{}: {}", db.severity(), db.message());
    }
    let mut text = e.to_string();
    let mut source = std::error::Error::source(e);
    while let Some(s) = source {
        let part = s.to_string();
        if !text.contains(&part) {
            text = format!("{text}: {part}");
        }
        source = s.source();
    }
    text
}

fn connect_hint(e: &postgres::Error) -> &'static str {
    use postgres::error::SqlState;
    match e.code() {
        Some(c) if *c == SqlState::INVALID_PASSWORD => {
            " (check the password: URL, PGPASSWORD or ~/.pgpass)"
        }
        Some(c) if *c == SqlState::INVALID_CATALOG_NAME => " (check the database name in the URL)",
        Some(_) => "",
        None => " (check the host, port and that the server is running)",
    }
}

/// `%XX` sequences decoded.
fn percent_decode(s: &str) -> Result<String> {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' && i + 2 < b.len() {
            if let Ok(n) = u8::from_str_radix(&s[i + 1..i + 3], 16) {
                out.push(n);
                i += 3;
                continue;
            }
        }
        out.push(b[i]);
        i += 1;
    }
    String::from_utf8(out).context("not UTF-8 after percent-decoding")
}

/// The password `~/.pgpass` gives for the connection (`host:port:database:user:password`,
/// `*` matches anything, `\:` and `\\` escape; a unix socket matches `localhost`). As libpq,
/// a file that others can read is ignored, with a warning.
fn pgpass_lookup(file: &Path, config: &postgres::Config) -> Option<String> {
    let text = crate::files::Whole {
        named: "password file",
        holds: "a password file",
        hint: "",
        cap: 1 << 20,
    }
    .read(file)
    .ok()?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(file).ok()?.permissions().mode();
        if mode & 0o077 != 0 {
            crate::notes::note(&format!(
                "warning: password file '{}' has group or world access; permissions should be u=rw (0600) or less (ignored, as libpq does)",
                file.display()
            ));
            return None;
        }
    }
    let user = config.get_user().unwrap_or_default();
    let db = config.get_dbname().unwrap_or(user);
    let port = config
        .get_ports()
        .first()
        .copied()
        .unwrap_or(5432)
        .to_string();
    let hosts: Vec<String> = config
        .get_hosts()
        .iter()
        .map(|h| match h {
            Host::Tcp(name) => name.clone(),
            Host::Unix(_) => "localhost".into(),
        })
        .collect();
    for line in text.lines() {
        if line.starts_with('#') || line.trim().is_empty() {
            continue;
        }
        let fields = split_pgpass(line);
        if fields.len() < 5 {
            continue;
        }
        let ok = |field: &str, value: &str| field == "*" || field == value;
        if hosts.iter().any(|h| ok(&fields[0], h))
            && ok(&fields[1], &port)
            && ok(&fields[2], db)
            && ok(&fields[3], user)
        {
            return Some(fields[4..].join(":"));
        }
    }
    None
}

fn split_pgpass(line: &str) -> Vec<String> {
    let mut fields = Vec::new();
    let mut current = String::new();
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => current.extend(chars.next()),
            ':' if fields.len() < 4 => fields.push(std::mem::take(&mut current)),
            _ => current.push(c),
        }
    }
    fields.push(current);
    fields
}

/// `sslmode=prefer/require`: encrypted, certificate not checked (libpq's meaning).
#[derive(Debug)]
struct NoVerify(Arc<rustls::crypto::CryptoProvider>);

impl rustls::client::danger::ServerCertVerifier for NoVerify {
    fn verify_server_cert(
        &self,
        _end_entity: &rustls::pki_types::CertificateDer<'_>,
        _intermediates: &[rustls::pki_types::CertificateDer<'_>],
        _server_name: &rustls::pki_types::ServerName<'_>,
        _ocsp_response: &[u8],
        _now: rustls::pki_types::UnixTime,
    ) -> std::result::Result<rustls::client::danger::ServerCertVerified, rustls::Error> {
        Ok(rustls::client::danger::ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &rustls::pki_types::CertificateDer<'_>,
        dss: &rustls::DigitallySignedStruct,
    ) -> std::result::Result<rustls::client::danger::HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls12_signature(
            message,
            cert,
            dss,
            &self.0.signature_verification_algorithms,
        )
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &rustls::pki_types::CertificateDer<'_>,
        dss: &rustls::DigitallySignedStruct,
    ) -> std::result::Result<rustls::client::danger::HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(
            message,
            cert,
            dss,
            &self.0.signature_verification_algorithms,
        )
    }

    fn supported_verify_schemes(&self) -> Vec<rustls::SignatureScheme> {
        self.0.signature_verification_algorithms.supported_schemes()
    }
}

/// `verify-ca` (chain only) and `verify-full` (chain and host name).
#[derive(Debug)]
struct Verify {
    inner: Arc<rustls::client::WebPkiServerVerifier>,
    check_name: bool,
}

impl rustls::client::danger::ServerCertVerifier for Verify {
    fn verify_server_cert(
        &self,
        end_entity: &rustls::pki_types::CertificateDer<'_>,
        intermediates: &[rustls::pki_types::CertificateDer<'_>],
        server_name: &rustls::pki_types::ServerName<'_>,
        ocsp_response: &[u8],
        now: rustls::pki_types::UnixTime,
    ) -> std::result::Result<rustls::client::danger::ServerCertVerified, rustls::Error> {
        match self.inner.verify_server_cert(
            end_entity,
            intermediates,
            server_name,
            ocsp_response,
            now,
        ) {
            Err(rustls::Error::InvalidCertificate(rustls::CertificateError::NotValidForName))
            | Err(rustls::Error::InvalidCertificate(
                rustls::CertificateError::NotValidForNameContext { .. },
            )) if !self.check_name => Ok(rustls::client::danger::ServerCertVerified::assertion()),
            other => other,
        }
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &rustls::pki_types::CertificateDer<'_>,
        dss: &rustls::DigitallySignedStruct,
    ) -> std::result::Result<rustls::client::danger::HandshakeSignatureValid, rustls::Error> {
        self.inner.verify_tls12_signature(message, cert, dss)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &rustls::pki_types::CertificateDer<'_>,
        dss: &rustls::DigitallySignedStruct,
    ) -> std::result::Result<rustls::client::danger::HandshakeSignatureValid, rustls::Error> {
        self.inner.verify_tls13_signature(message, cert, dss)
    }

    fn supported_verify_schemes(&self) -> Vec<rustls::SignatureScheme> {
        self.inner.supported_verify_schemes()
    }
}

/// The parameters memctl takes out of a connection string (libpq's, not the driver's).
#[derive(Default)]
struct OwnParams {
    sslmode: Option<String>,
    root_cert: Option<String>,
    passfile: Option<String>,
    schema: Option<String>,
}

impl OwnParams {
    /// Takes `key` when it is one of memctl's parameters; false for the driver's.
    fn take(&mut self, key: &str, value: impl FnOnce() -> Result<String>) -> Result<bool> {
        let slot = match key {
            "sslmode" => &mut self.sslmode,
            "sslrootcert" => &mut self.root_cert,
            "passfile" => &mut self.passfile,
            "schema" => &mut self.schema,
            _ => return Ok(false),
        };
        *slot = Some(value()?);
        Ok(true)
    }
}

/// A connection string as given: its printable form (no password), the form's name and
/// expected shape for errors, what the driver is handed, and memctl's own parameters.
struct Given {
    shown: String,
    what: &'static str,
    expected: &'static str,
    rebuilt: String,
    ours: OwnParams,
}

impl Given {
    /// libpq's keyword/value form: memctl's parameters taken out, the rest handed to the
    /// driver in the same form.
    fn from_keywords(pairs: Vec<(String, String)>) -> Given {
        let shown = keyword_string(&pairs, true);
        let mut ours = OwnParams::default();
        let mut passthrough = Vec::new();
        for (k, v) in pairs {
            let value = v.clone();
            if !matches!(ours.take(&k, || Ok(value)), Ok(true)) {
                passthrough.push((k, v));
            }
        }
        Given {
            shown,
            what: "connection string",
            expected: "host=HOST port=PORT user=USER password=PASSWORD dbname=DATABASE",
            rebuilt: keyword_string(&passthrough, false),
            ours,
        }
    }

    /// A URL (SQLAlchemy's `postgresql+psycopg[2]://` is libpq's `postgresql://`): memctl's
    /// query parameters taken out, percent-decoded.
    fn from_url(url: &str) -> Result<Given> {
        let shown = redact(url);
        let url = match scheme_of(url) {
            Some(s) if s.contains('+') => format!("postgresql://{}", &url[s.len()..]),
            _ => url.to_owned(),
        };
        let (base, params) = url.split_once('?').unwrap_or((url.as_str(), ""));
        let mut ours = OwnParams::default();
        let mut passthrough = Vec::new();
        for p in params.split('&').filter(|p| !p.is_empty()) {
            let (k, v) = p.split_once('=').unwrap_or((p, ""));
            let value = || {
                percent_decode(v).with_context(|| {
                    format!("invalid PostgreSQL URL '{shown}': parameter '{k}' is not UTF-8")
                })
            };
            if !ours.take(k, value)? {
                passthrough.push(p);
            }
        }
        let rebuilt = if passthrough.is_empty() {
            base.to_owned()
        } else {
            format!("{base}?{}", passthrough.join("&"))
        };
        Ok(Given {
            shown,
            what: "URL",
            expected: "postgresql://USER[:PASSWORD]@HOST[:PORT]/DATABASE[?sslmode=...]",
            rebuilt,
            ours,
        })
    }
}

/// An environment variable, unless unset or empty (as libpq reads them).
fn env_var(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|v| !v.is_empty())
}

/// What libpq fills in when the string leaves it out: host (`PGHOST`, the local socket
/// directory, localhost), port, user, database, and memctl's connect timeout and
/// application name.
fn libpq_defaults(
    config: &mut postgres::Config,
    shown: &str,
    connect_timeout: Duration,
) -> Result<()> {
    if config.get_hosts().is_empty() {
        match env_var("PGHOST") {
            Some(hosts) => {
                for h in hosts.split(',') {
                    config.host(h);
                }
            }
            None if Path::new("/var/run/postgresql").is_dir() => {
                config.host_path("/var/run/postgresql");
            }
            None => {
                config.host("localhost");
            }
        }
    }
    if config.get_ports().is_empty() {
        if let Some(port) = env_var("PGPORT") {
            let port: u16 = port
                .parse()
                .map_err(|_| anyhow!("PGPORT '{port}' is not a port number"))?;
            config.port(port);
        }
    }
    if config.get_user().is_none() {
        let user = env_var("PGUSER")
            .or_else(|| env_var("USER"))
            .or_else(|| env_var("LOGNAME"))
            .ok_or_else(|| {
                anyhow!("no user name for '{shown}': put it in the URL (postgresql://USER@HOST/DB) or set PGUSER")
            })?;
        config.user(&user);
    }
    if config.get_dbname().is_none() {
        if let Some(db) = env_var("PGDATABASE") {
            config.dbname(&db);
        }
    }
    if config.get_connect_timeout().is_none() {
        config.connect_timeout(connect_timeout);
    }
    if config.get_application_name().is_none() {
        config.application_name("memctl");
    }
    Ok(())
}

/// The TLS memctl uses for an `sslmode` (libpq's meanings; `require` with a root
/// certificate verifies it, as libpq does; unix sockets never encrypt).
fn tls_of(sslmode: &str, root_cert: bool, config: &postgres::Config, shown: &str) -> Result<Tls> {
    let tls = match sslmode {
        "disable" => Tls::Off,
        "allow" | "prefer" => Tls::Prefer,
        "require" if root_cert => Tls::VerifyCa,
        "require" => Tls::Require,
        "verify-ca" => Tls::VerifyCa,
        "verify-full" => Tls::VerifyFull,
        other => bail!(
            "invalid sslmode '{other}' for '{shown}' (use disable, allow, prefer, require, verify-ca or verify-full)"
        ),
    };
    // libpq ignores sslmode on unix sockets: there is nothing to encrypt.
    let all_sockets = config
        .get_hosts()
        .iter()
        .all(|h| matches!(h, Host::Unix(_)));
    Ok(if all_sockets { Tls::Off } else { tls })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn passwords_are_redacted() {
        assert_eq!(
            redact("postgresql://bob:s3cret@db:5432/app?sslmode=require"),
            "postgresql://bob:***@db:5432/app?sslmode=require"
        );
        assert_eq!(
            redact("postgres://bob@db/app?password=s3cret&sslmode=disable"),
            "postgres://bob@db/app?password=***&sslmode=disable"
        );
        assert_eq!(redact("postgres://db/app"), "postgres://db/app");
        assert_eq!(
            redact("postgresql://u:p%40ss@h/d"),
            "postgresql://u:***@h/d",
            "an encoded @ in the password"
        );
    }

    #[test]
    fn urls_are_told_apart_from_paths() {
        assert!(is_url("postgresql://h/d"));
        assert!(is_url("POSTGRES://h/d"));
        assert!(is_url("postgresql+psycopg://h/d"));
        assert!(is_url("postgresql+psycopg2://h/d"));
        assert!(!is_url("postgresql+asyncpg://h/d"));
        assert!(!is_url("postgres.sqlite"));
        assert!(!is_url("/tmp/postgresql://x"));
        assert!(is_connection_string("host=h dbname=d"));
        assert!(!is_connection_string("run=3/checkpoints.sqlite"));
        assert!(!is_connection_string("checkpoints.sqlite"));
        for like in [
            "jdbc:postgresql://h/d",
            "postgresq://u:p@h/d",
            "run=3/checkpoints.sqlite",
            "Server=h;Pwd=x",
            "a.sqlite password=x",
        ] {
            assert!(looks_like_connection_string(like), "{like}");
        }
        for path in ["checkpoints.sqlite", "/data/a=b.sqlite", "./x y.db"] {
            assert!(!looks_like_connection_string(path), "{path}");
        }
    }

    #[test]
    fn keyword_form_follows_libpqs_quoting() {
        let pairs = keyword_pairs(
            r"host=h  port = 5432 user=bob password='it\'s a \\pw' dbname=app options='' sslmode=disable",
        )
        .expect("a keyword string");
        let get = |k: &str| {
            pairs
                .iter()
                .find(|(key, _)| key == k)
                .map(|(_, v)| v.as_str())
        };
        assert_eq!(get("port"), Some("5432"));
        assert_eq!(get("password"), Some(r"it's a \pw"));
        assert_eq!(get("options"), Some(""));
        assert_eq!(
            keyword_pairs(r"password=a\ b host=h").expect("escaped space")[0].1,
            "a b"
        );
        assert!(keyword_pairs("host='unterminated").is_none());
        assert!(keyword_pairs("host").is_none());
        assert!(
            keyword_pairs("host=h pasword=x").is_none(),
            "libpq's keywords only"
        );
        assert_eq!(unknown_keywords("host=h pasword=x"), ["pasword"]);
        // Written back, it reads the same; shown, the password is masked.
        let again = keyword_pairs(&keyword_string(&pairs, false)).expect("round trip");
        assert_eq!(again, pairs);
        assert_eq!(
            keyword_string(&pairs, true),
            "host=h port=5432 user=bob password=*** dbname=app options='' sslmode=disable"
        );
        let t = Target::parse(
            r"host=127.0.0.1 port=5999 user=bob password='p w\'d' dbname=app schema=lg sslmode=disable",
            Duration::from_secs(1),
        )
        .expect("parses");
        assert_eq!(t.schema.as_deref(), Some("lg"));
        assert_eq!(t.tls, Tls::Off);
        assert_eq!(t.config.get_password(), Some(&b"p w'd"[..]));
        assert_eq!(t.config.get_dbname(), Some("app"));
        assert!(!t.shown.contains("p w"), "{}", t.shown);
        let t = Target::parse(
            "postgresql+psycopg://bob:pw@127.0.0.1:5999/app",
            Duration::from_secs(1),
        )
        .expect("parses");
        assert_eq!(t.config.get_user(), Some("bob"));
        assert_eq!(t.shown, "postgresql+psycopg://bob:***@127.0.0.1:5999/app");
    }

    #[test]
    fn every_password_form_is_masked() {
        for (given, shown) in [
            (
                "jdbc:postgresql://h:5432/app?user=bob&password=Hunter2&ssl=true",
                "jdbc:postgresql://h:5432/app?user=bob&password=***&ssl=true",
            ),
            (
                "postgresq://bob:Hun/ter2@h/app",
                "postgresq://bob:***@h/app",
            ),
            ("bob:Hunter2@h/app", "bob:***@h/app"),
            (
                "host=h PASSWORD = 'Hun ter\\' 2' dbname=x",
                "host=h PASSWORD = *** dbname=x",
            ),
            ("Server=h;Pwd=Hunter2;Uid=u", "Server=h;Pwd=***;Uid=u"),
            ("x sslpassword=Hunter2 y", "x sslpassword=*** y"),
            ("postgresql://h/app", "postgresql://h/app"),
            ("postgresql://bob@h/app", "postgresql://bob@h/app"),
            ("/data/checkpoints.sqlite", "/data/checkpoints.sqlite"),
        ] {
            assert_eq!(mask_secrets(given), shown, "{given}");
            assert!(!mask_secrets(given).contains("Hun"), "{given}");
            assert!(!redact(given).contains("Hun"), "{given}");
        }
        // A value given whole: a password with spaces is masked whole.
        for (given, shown) in [
            (
                "postgresql://bob:Hun ter2@h/app",
                "postgresql://bob:***@h/app",
            ),
            ("password=Hun ter 2 host=h", "password=*** host=h"),
            ("host=h password=Hun ter2", "host=h password=***"),
            (
                "jdbc:x://h/app?password=Hun ter2&ssl=1",
                "jdbc:x://h/app?password=***&ssl=1",
            ),
        ] {
            assert_eq!(redact(given), shown, "{given}");
        }
    }

    #[test]
    fn pgpass_lines_split_with_escapes() {
        assert_eq!(
            split_pgpass(r"h\:x:5432:*:bob:pa:ss\\w"),
            ["h:x", "5432", "*", "bob", r"pa:ss\w"]
        );
    }

    #[test]
    fn parse_keeps_memctl_parameters_out_of_the_server_options() {
        let t = Target::parse(
            "postgresql://bob:pw@127.0.0.1:5999/app?schema=lg&sslmode=disable&application_name=x",
            Duration::from_secs(1),
        )
        .expect("parses");
        assert_eq!(t.schema.as_deref(), Some("lg"));
        assert_eq!(t.tls, Tls::Off);
        assert_eq!(t.config.get_application_name(), Some("x"));
        let err = Target::parse(
            "postgresql://bob:pw@h/app?sslmode=bogus",
            Duration::from_secs(1),
        )
        .err()
        .expect("fails");
        assert!(!err.to_string().contains("pw@"), "{err}");
        let sock = Target::parse(
            "postgresql://bob@%2Ftmp%2Fpg/app?sslmode=require",
            Duration::from_secs(1),
        )
        .expect("parses");
        assert_eq!(sock.tls, Tls::Off, "no TLS over a unix socket");
    }

    #[test]
    fn a_schema_given_apart_must_agree_with_the_urls() {
        let timeout = Duration::from_secs(1);
        let mut t = Target::parse("postgresql://bob@h/app", timeout).expect("parses");
        t.use_schema("lg").expect("no schema in the URL");
        assert_eq!(t.schema.as_deref(), Some("lg"));
        let mut t = Target::parse("postgresql://bob@h/app?schema=lg", timeout).expect("parses");
        t.use_schema("lg").expect("the same schema");
        let e = t.use_schema("other").expect_err("another schema");
        assert!(e.is::<SchemaConflict>(), "{e}");
        assert!(e.to_string().contains("schema=lg"), "{e}");
        assert_eq!(t.schema.as_deref(), Some("lg"), "unchanged");
    }
}
