//! A Store item moved between backends (`migrate`): a `store` row in one backend's form put
//! into the other's, keeping its timestamps and TTL, and whether two rows hold the same item.
//!
//! SQLite (`SqliteStore`) keeps `value` as orjson's compact bytes and its timestamps as UTC
//! text: `created_at` / `updated_at` as `CURRENT_TIMESTAMP` writes them (`YYYY-MM-DD
//! HH:MM:SS`), `expires_at` as a Python datetime (`YYYY-MM-DD HH:MM:SS.ffffff+00:00`) or
//! `DATETIME(...)` text. Postgres (`PostgresStore`) keeps JSONB and `timestamptz`s (read here
//! as RFC 3339 with microseconds, UTC), `ttl_minutes` as an INT. Moving a row keeps each instant
//! exactly (to the microsecond), so LangGraph's `get` on the target returns the same value,
//! namespace, key, `created_at` and `updated_at` as on the source, and `sweep_ttl` expires
//! the same items.

use anyhow::Result;

use crate::storage::store::{Backend, StoreRow};
use crate::storage::{Refused, Unreadable};

/// An instant as the stores write it, UTC: the date, the time of day to the second and the
/// microseconds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct Instant<'a> {
    date: &'a str,
    time: &'a str,
    micros: u32,
}

/// Reads `YYYY-MM-DD[ T]HH:MM:SS[.f…][+00:00|Z]` (the forms both stores write, always UTC);
/// `None` for anything else.
pub fn parse_instant(text: &str) -> Option<Instant<'_>> {
    let b = text.as_bytes();
    let digits = |r: std::ops::Range<usize>| b[r].iter().all(u8::is_ascii_digit);
    if b.len() < 19
        || !(digits(0..4) && b[4] == b'-' && digits(5..7) && b[7] == b'-' && digits(8..10))
        || !(b[10] == b' ' || b[10] == b'T')
        || !(digits(11..13) && b[13] == b':' && digits(14..16) && b[16] == b':' && digits(17..19))
    {
        return None;
    }
    let mut rest = &text[19..];
    let mut micros = 0u32;
    if let Some(frac) = rest.strip_prefix('.') {
        let n = frac.bytes().take_while(u8::is_ascii_digit).count();
        if n == 0 || n > 6 {
            return None;
        }
        let padded = format!("{:0<6}", &frac[..n]);
        micros = padded.parse().ok()?;
        rest = &frac[n..];
    }
    if !matches!(rest, "" | "+00:00" | "Z") {
        return None;
    }
    Some(Instant {
        date: &text[..10],
        time: &text[11..19],
        micros,
    })
}

impl Instant<'_> {
    fn fraction(&self) -> String {
        match self.micros {
            0 => String::new(),
            m => format!(".{m:06}"),
        }
    }

    /// RFC 3339, UTC, with microseconds: what Postgres's `timestamptz` input takes exactly.
    pub fn rfc3339(&self) -> String {
        format!("{}T{}.{:06}+00:00", self.date, self.time, self.micros)
    }

    /// As `CURRENT_TIMESTAMP` writes `created_at` / `updated_at` on SQLite (`YYYY-MM-DD
    /// HH:MM:SS`), with the microseconds of an instant that has them.
    pub fn sqlite_naive(&self) -> String {
        format!("{} {}{}", self.date, self.time, self.fraction())
    }

    /// As `SqliteStore.put` writes `expires_at` (a UTC datetime: `YYYY-MM-DD
    /// HH:MM:SS[.ffffff]+00:00`).
    pub fn sqlite_aware(&self) -> String {
        format!("{} {}{}+00:00", self.date, self.time, self.fraction())
    }
}

/// A timestamp column of `row` in the target's form (`how` picks the SQLite form); one that is
/// not a timestamp as LangGraph writes it is an [`Unreadable`] error.
fn convert(
    row: &StoreRow,
    column: &str,
    value: &Option<String>,
    how: impl Fn(&Instant<'_>) -> String,
) -> Result<Option<String>> {
    let Some(text) = value else {
        return Ok(None);
    };
    match parse_instant(text) {
        Some(i) => Ok(Some(how(&i))),
        None => Err(Unreadable(format!(
            "store item '{}' / '{}': its {column} '{}' is not a UTC timestamp as LangGraph writes it",
            row.prefix,
            row.key,
            text.escape_debug()
        ))
        .into()),
    }
}

/// `row` (in `from`'s form) in `to`'s form, as `to`'s store would hold the same item with the
/// same timestamps and TTL. An item LangGraph could not read back (a value that is not JSON,
/// a timestamp it does not write) is an [`Unreadable`] error, one the target cannot hold (a
/// NUL character, which PostgreSQL stores neither in its text columns nor, as `\u0000`, in
/// JSONB) a [`Refused`] one: one line naming the item, never its value.
pub fn to_backend(row: &StoreRow, from: Backend, to: Backend) -> Result<StoreRow> {
    let value: serde_json::Value = match serde_json::from_slice(&row.value) {
        Ok(v) => v,
        Err(e) => {
            return Err(Unreadable(format!(
                "store item '{}' / '{}': its value is not JSON ({e})",
                row.prefix, row.key
            ))
            .into())
        }
    };
    if from == to {
        return Ok(row.clone());
    }
    if to == Backend::Postgres {
        holds_no_nul(row, &value)?;
    }
    let mut out = row.clone();
    out.value_is_text = false;
    match to {
        Backend::Sqlite => {
            // orjson.dumps of the dict Postgres's get returns: compact, keys in JSONB's order.
            out.value = serde_json::to_vec(&value)?;
            out.created_at = convert(row, "created_at", &row.created_at, |i| i.sqlite_naive())?;
            out.updated_at = convert(row, "updated_at", &row.updated_at, |i| i.sqlite_naive())?;
            out.expires_at = convert(row, "expires_at", &row.expires_at, |i| i.sqlite_aware())?;
        }
        Backend::Postgres => {
            out.created_at = convert(row, "created_at", &row.created_at, |i| i.rfc3339())?;
            out.updated_at = convert(row, "updated_at", &row.updated_at, |i| i.rfc3339())?;
            out.expires_at = convert(row, "expires_at", &row.expires_at, |i| i.rfc3339())?;
            // The INT column rounds a float as Postgres rounds it (half to even).
            out.ttl_minutes = row.ttl_minutes.map(f64::round_ties_even);
        }
    }
    Ok(out)
}

/// A [`Refused`] error when the item's namespace, key or value (`value`, parsed) holds a NUL
/// character: PostgreSQL's text columns cannot store one, nor its JSONB `\u0000` (the server
/// refuses them, as it refuses `PostgresStore.put` the same item).
fn holds_no_nul(row: &StoreRow, value: &serde_json::Value) -> Result<()> {
    fn has_nul(j: &serde_json::Value) -> bool {
        match j {
            serde_json::Value::String(s) => s.contains('\0'),
            serde_json::Value::Array(a) => a.iter().any(has_nul),
            serde_json::Value::Object(o) => o.iter().any(|(k, v)| k.contains('\0') || has_nul(v)),
            _ => false,
        }
    }
    let part = match () {
        _ if row.prefix.contains('\0') => {
            "namespace holds a NUL character (U+0000), which a PostgreSQL text column cannot store"
        }
        _ if row.key.contains('\0') => {
            "key holds a NUL character (U+0000), which a PostgreSQL text column cannot store"
        }
        _ if has_nul(value) => {
            "value holds a NUL character (\\u0000), which PostgreSQL's JSONB cannot store"
        }
        _ => return Ok(()),
    };
    Err(Refused(format!(
        "store item '{}' / '{}': its {part}",
        row.prefix, row.key
    ))
    .into())
}

/// Two rows of the same backend hold the same item: the same value (as JSON), the same
/// instants, the same TTL.
pub fn same_item(a: &StoreRow, b: &StoreRow) -> bool {
    let value = match (
        serde_json::from_slice::<serde_json::Value>(&a.value),
        serde_json::from_slice::<serde_json::Value>(&b.value),
    ) {
        (Ok(x), Ok(y)) => x == y,
        _ => a.value == b.value,
    };
    let instant = |x: &Option<String>, y: &Option<String>| match (x, y) {
        (Some(x), Some(y)) => match (parse_instant(x), parse_instant(y)) {
            (Some(p), Some(q)) => p == q,
            _ => x == y,
        },
        (None, None) => true,
        _ => false,
    };
    a.prefix == b.prefix
        && a.key == b.key
        && value
        && instant(&a.created_at, &b.created_at)
        && instant(&a.updated_at, &b.updated_at)
        && instant(&a.expires_at, &b.expires_at)
        && a.ttl_minutes == b.ttl_minutes
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(value: &str, ts: [Option<&str>; 3], ttl: Option<f64>) -> StoreRow {
        StoreRow {
            prefix: "users.u-42".into(),
            key: "k".into(),
            value: value.as_bytes().to_vec(),
            value_is_text: false,
            created_at: ts[0].map(str::to_owned),
            updated_at: ts[1].map(str::to_owned),
            expires_at: ts[2].map(str::to_owned),
            ttl_minutes: ttl,
        }
    }

    #[test]
    fn instants_read_both_stores_forms() {
        let a = parse_instant("2026-12-03 10:02:45").expect("naive");
        assert_eq!(a.rfc3339(), "2026-12-03T10:02:45.000000+00:00");
        assert_eq!(a.sqlite_naive(), "2026-12-03 10:02:45");
        assert_eq!(a.sqlite_aware(), "2026-12-03 10:02:45+00:00");
        let b = parse_instant("2026-12-03T10:02:45.120000+00:00").expect("pg");
        assert_eq!(b.sqlite_naive(), "2026-12-03 10:02:45.120000");
        assert_eq!(
            b,
            parse_instant("2026-12-03 10:02:45.12+00:00").expect("short")
        );
        assert_ne!(a, b);
        for bad in [
            "2026-12-03 10:02:45+02:00",
            "yesterday",
            "2026-12-03 10:02:45.1234567",
        ] {
            assert!(parse_instant(bad).is_none(), "{bad}");
        }
    }

    #[test]
    fn a_row_crosses_backends_and_back_unchanged() {
        let pg = row(
            r#"{"text": "Grüße", "n": 1.5}"#,
            [
                Some("2026-12-03T10:02:45.123456+00:00"),
                Some("2026-12-03T10:02:46.000000+00:00"),
                Some("2126-01-01T00:00:00.500000+00:00"),
            ],
            Some(30.0),
        );
        let lite = to_backend(&pg, Backend::Postgres, Backend::Sqlite).expect("to sqlite");
        assert_eq!(lite.value, r#"{"text":"Grüße","n":1.5}"#.as_bytes());
        assert_eq!(
            lite.created_at.as_deref(),
            Some("2026-12-03 10:02:45.123456")
        );
        assert_eq!(lite.updated_at.as_deref(), Some("2026-12-03 10:02:46"));
        assert_eq!(
            lite.expires_at.as_deref(),
            Some("2126-01-01 00:00:00.500000+00:00")
        );
        let back = to_backend(&lite, Backend::Sqlite, Backend::Postgres).expect("back");
        assert!(same_item(&back, &pg));
        let mut changed = pg.clone();
        changed.value = br#"{"text": "other", "n": 1.5}"#.to_vec();
        assert!(!same_item(&back, &changed));
        let mut later = pg.clone();
        later.expires_at = None;
        assert!(!same_item(&back, &later));
    }

    #[test]
    fn bad_rows_fail_with_the_item_named() {
        let bad = row("not json", [None, None, None], None);
        for (from, to) in [
            (Backend::Sqlite, Backend::Postgres),
            (Backend::Sqlite, Backend::Sqlite),
        ] {
            let e = to_backend(&bad, from, to).expect_err("not JSON");
            assert!(e.to_string().contains("'users.u-42' / 'k'"), "{e}");
            assert!(e.is::<Unreadable>(), "{e}");
        }
        // A NUL: SQLite holds it, PostgreSQL does not (text columns, JSONB's \u0000).
        let nul = row(r#"{"text": "a\u0000b"}"#, [None, None, None], None);
        assert!(to_backend(&nul, Backend::Sqlite, Backend::Sqlite).is_ok());
        let e = to_backend(&nul, Backend::Sqlite, Backend::Postgres).expect_err("refused");
        assert!(e.is::<Refused>(), "{e}");
        assert!(!e.to_string().contains("a\\u0000b"), "never the value: {e}");
        let mut key = row("{}", [None, None, None], None);
        key.key = "k\u{0}".into();
        let e = to_backend(&key, Backend::Sqlite, Backend::Postgres).expect_err("refused");
        assert!(e.is::<Refused>(), "{e}");
        let bad = row("{}", [Some("Tuesday"), None, None], None);
        let e = to_backend(&bad, Backend::Sqlite, Backend::Postgres).expect_err("no time");
        assert!(e.is::<Unreadable>(), "{e}");
        let ttl = row("{}", [None, None, None], Some(0.5));
        let pg = to_backend(&ttl, Backend::Sqlite, Backend::Postgres).expect("ok");
        assert_eq!(pg.ttl_minutes, Some(0.0));
    }
}
