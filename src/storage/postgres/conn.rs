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

/// True when `db` names a PostgreSQL database rather than a SQLite file.
pub fn is_url(db: &str) -> bool {
    let lower = db.get(..13).unwrap_or(db).to_ascii_lowercase();
    lower.starts_with("postgresql://") || lower.starts_with("postgres://")
}

/// The URL with its password (userinfo, `password=` parameter) replaced by `***`.
pub fn redact(url: &str) -> String {
    let mut out = url.to_owned();
    if let Some(scheme_end) = out.find("://") {
        let rest_start = scheme_end + 3;
        let authority_end = out[rest_start..]
            .find(['/', '?'])
            .map_or(out.len(), |i| rest_start + i);
        if let Some(at) = out[rest_start..authority_end].rfind('@') {
            let userinfo = &out[rest_start..rest_start + at];
            if let Some(colon) = userinfo.find(':') {
                out.replace_range(rest_start + colon + 1..rest_start + at, "***");
            }
        }
    }
    if let Some(q) = out.find('?') {
        let (head, query) = out.split_at(q + 1);
        let params: Vec<String> = query
            .split('&')
            .map(|p| match p.split_once('=') {
                Some((k, _)) if k.eq_ignore_ascii_case("password") => format!("{k}=***"),
                _ => p.to_owned(),
            })
            .collect();
        out = format!("{head}{}", params.join("&"));
    }
    out
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
        let shown = redact(url);
        let (base, params) = match url.split_once('?') {
            Some((b, q)) => (b, q),
            None => (url, ""),
        };
        let mut passthrough = Vec::new();
        let (mut sslmode, mut root_cert, mut passfile, mut schema) = (None, None, None, None);
        for p in params.split('&').filter(|p| !p.is_empty()) {
            let (k, v) = p.split_once('=').unwrap_or((p, ""));
            let value = || -> Result<String> {
                percent_decode(v).with_context(|| {
                    format!("invalid PostgreSQL URL '{shown}': parameter '{k}' is not UTF-8")
                })
            };
            match k {
                "sslmode" => sslmode = Some(value()?),
                "sslrootcert" => root_cert = Some(value()?),
                "passfile" => passfile = Some(value()?),
                "schema" => schema = Some(value()?),
                _ => passthrough.push(p),
            }
        }
        let rebuilt = if passthrough.is_empty() {
            base.to_owned()
        } else {
            format!("{base}?{}", passthrough.join("&"))
        };
        let mut config = postgres::Config::from_str(&rebuilt).map_err(|e| {
            anyhow!("invalid PostgreSQL URL '{shown}': {e} (expected postgresql://USER[:PASSWORD]@HOST[:PORT]/DATABASE[?sslmode=...])")
        })?;
        let env = |name: &str| std::env::var(name).ok().filter(|v| !v.is_empty());
        if config.get_hosts().is_empty() {
            match env("PGHOST") {
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
            if let Some(port) = env("PGPORT") {
                let port: u16 = port
                    .parse()
                    .map_err(|_| anyhow!("PGPORT '{port}' is not a port number"))?;
                config.port(port);
            }
        }
        if config.get_user().is_none() {
            let user = env("PGUSER")
                .or_else(|| env("USER"))
                .or_else(|| env("LOGNAME"))
                .ok_or_else(|| {
                    anyhow!("no user name for '{shown}': put it in the URL (postgresql://USER@HOST/DB) or set PGUSER")
                })?;
            config.user(&user);
        }
        if config.get_dbname().is_none() {
            if let Some(db) = env("PGDATABASE") {
                config.dbname(&db);
            }
        }
        if config.get_connect_timeout().is_none() {
            config.connect_timeout(connect_timeout);
        }
        if config.get_application_name().is_none() {
            config.application_name("memctl");
        }
        let sslmode = sslmode
            .or_else(|| env("PGSSLMODE"))
            .unwrap_or_else(|| "prefer".into());
        let root_cert = root_cert.or_else(|| env("PGSSLROOTCERT"));
        let mut tls = match sslmode.as_str() {
            "disable" => Tls::Off,
            "allow" | "prefer" => Tls::Prefer,
            "require" if root_cert.is_some() => Tls::VerifyCa,
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
        if all_sockets {
            tls = Tls::Off;
        }
        config.ssl_mode(match tls {
            Tls::Off => SslMode::Disable,
            Tls::Prefer => SslMode::Prefer,
            _ => SslMode::Require,
        });
        if config.get_password().is_none() {
            let password = env("PGPASSWORD").or_else(|| {
                let file = passfile
                    .map(PathBuf::from)
                    .or_else(|| env("PGPASSFILE").map(PathBuf::from))
                    .or_else(|| env("HOME").map(|h| Path::new(&h).join(".pgpass")))?;
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
            schema,
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
    let text = std::fs::read_to_string(file).ok()?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(file).ok()?.permissions().mode();
        if mode & 0o077 != 0 {
            eprintln!(
                "memctl: warning: password file '{}' has group or world access; permissions should be u=rw (0600) or less (ignored, as libpq does)",
                file.display()
            );
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
        assert!(!is_url("postgres.sqlite"));
        assert!(!is_url("/tmp/postgresql://x"));
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
