//! Numbers and times for people: sizes, ages, short previews.

use anyhow::{Context, Result};
use jiff::Timestamp;

/// A byte count as `512 B`, `12.3 KiB`, `4.0 MiB`….
pub fn bytes(n: u64) -> String {
    const UNITS: [&str; 5] = ["KiB", "MiB", "GiB", "TiB", "PiB"];
    if n < 1024 {
        return format!("{n} B");
    }
    let mut v = n as f64 / 1024.0;
    let mut unit = 0;
    while v >= 1024.0 && unit < UNITS.len() - 1 {
        v /= 1024.0;
        unit += 1;
    }
    format!("{v:.1} {}", UNITS[unit])
}

/// `n` things, singular or plural: `1 message`, `2 messages`, `0 threads`.
pub fn count(n: impl Into<u64>, singular: &str) -> String {
    let n = n.into();
    if n == 1 {
        format!("1 {singular}")
    } else {
        format!("{n} {singular}s")
    }
}

/// An age in seconds as `45s`, `12m`, `3h 5m`, `4d 2h`.
pub fn age(seconds: i64) -> String {
    if seconds < 0 {
        return "in the future".into();
    }
    let (d, h, m) = (
        seconds / 86_400,
        seconds % 86_400 / 3600,
        seconds % 3600 / 60,
    );
    match (d, h, m) {
        (0, 0, 0) => format!("{seconds}s"),
        (0, 0, m) => format!("{m}m"),
        (0, h, m) => format!("{h}h {m}m"),
        (d, h, _) => format!("{d}d {h}h"),
    }
}

/// The current time, or the hidden `--now` value.
pub fn now(override_ts: Option<&str>) -> Result<Timestamp> {
    match override_ts {
        Some(s) => s
            .parse()
            .with_context(|| format!("--now '{s}' is not an RFC 3339 timestamp")),
        None => Ok(Timestamp::now()),
    }
}

/// Parses a checkpoint `ts` (ISO 8601 with offset) into a timestamp.
pub fn parse_ts(ts: &str) -> Option<Timestamp> {
    ts.parse().ok()
}

/// A checkpoint `ts` shown in UTC with second precision: `2026-12-01T04:38:50Z`.
pub fn utc(ts: &Timestamp) -> String {
    ts.strftime("%Y-%m-%dT%H:%M:%SZ").to_string()
}

/// A stored RFC 3339 time as tables show every time, whatever the backend wrote (SQLite's
/// `2026-12-03T10:03:00+00:00`, Postgres' `2026-12-03T10:03:00.000000+00:00`): in UTC, to
/// the second, `2026-12-03T10:03:00Z`, as [`utc`]. Text that is no such time is shown as it
/// is, escaped.
pub fn instant(stored: &str) -> String {
    match parse_ts(stored) {
        Some(ts) => utc(&ts),
        None => id(stored),
    }
}

/// An id for a table cell or a line of text: whole (never cut), on one line, escaped for the
/// terminal.
pub fn id(s: &str) -> String {
    preview(s, usize::MAX)
}

/// The first `max` characters of `s` on one line, with `…` when cut.
pub fn preview(s: &str, max: usize) -> String {
    let mut out = String::with_capacity(max.min(s.len()) + 8);
    let keep = max.saturating_sub(1); // characters kept when the text is cut
    let (mut n, mut cut) = (0, 0); // characters written; byte length of the first `keep`
    for c in s.chars() {
        let before = out.len();
        super::escape::push_char(&mut out, c, true);
        // An escape is ASCII and longer than the character it stands for.
        let added = out.len() - before;
        let k = if added == c.len_utf8() { 1 } else { added };
        if n <= keep && keep < n + k {
            cut = before + (keep - n);
        }
        n += k;
        if n > max {
            out.truncate(cut);
            out.push('…');
            return out;
        }
    }
    out
}

/// What erasing freed space did, for a report: free pages zeroed (SQLite, `Some`), a VACUUM
/// after them or instead (`vacuumed`; on a server, `server`, its `VACUUM (ANALYZE)`), or
/// nothing.
pub fn erased(pages_zeroed: Option<u64>, vacuumed: bool, server: bool) -> String {
    match (pages_zeroed, vacuumed) {
        (Some(n), false) => format!("{} zeroed, WAL truncated", count(n, "free page")),
        (Some(n), true) => format!(
            "{} zeroed, then vacuumed (an erased text was still in a freed part of a page), WAL truncated",
            count(n, "free page")
        ),
        (None, true) if server => "VACUUM (ANALYZE)".into(),
        (None, true) => "vacuumed, WAL truncated".into(),
        (None, false) => "NOT erased".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_and_ages_read_well() {
        assert_eq!(bytes(10), "10 B");
        assert_eq!(bytes(1536), "1.5 KiB");
        assert_eq!(bytes(5 * 1024 * 1024), "5.0 MiB");
        assert_eq!(age(59), "59s");
        assert_eq!(age(3 * 3600 + 120), "3h 2m");
        assert_eq!(age(2 * 86_400 + 3600), "2d 1h");
    }

    #[test]
    fn previews_cut_to_one_line() {
        assert_eq!(preview("", 5), "");
        assert_eq!(preview("0123456789", 10), "0123456789");
        assert_eq!(preview("0123456789a", 10), "012345678…");
        assert_eq!(preview("中文😀x", 4), "中文😀x");
        assert_eq!(preview("a\nb", 3), "a\\…");
        assert_eq!(preview("\u{1b}[31m", 60), "\\u{1b}[31m");
        assert_eq!(preview("ab\u{1b}", 4), "ab\\…");
    }

    #[test]
    fn previews_equal_escaping_then_cutting() {
        // The one-pass preview against its definition: escape the text, then cut it.
        let reference = |s: &str, max: usize| {
            let flat = super::super::escape::one_line(s);
            if flat.chars().count() <= max {
                flat
            } else {
                let mut cut: String = flat.chars().take(max.saturating_sub(1)).collect();
                cut.push('…');
                cut
            }
        };
        let alphabet = ['a', '\n', '\t', '中', '😀', '\u{1b}', '\u{202e}'];
        for len in 0..=5u32 {
            for code in 0..alphabet.len().pow(len) {
                let mut rest = code;
                let s: String = (0..len)
                    .map(|_| {
                        let c = alphabet[rest % alphabet.len()];
                        rest /= alphabet.len();
                        c
                    })
                    .collect();
                for max in 0..8 {
                    assert_eq!(preview(&s, max), reference(&s, max), "{s:?} max {max}");
                }
            }
        }
    }

    #[test]
    fn checkpoint_timestamps_parse() {
        let t = parse_ts("2026-12-01T04:38:50.880437+00:00").expect("parses");
        assert_eq!(utc(&t), "2026-12-01T04:38:50Z");
        assert!(parse_ts("yesterday").is_none());
    }
}
