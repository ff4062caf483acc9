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

/// The first `max` characters of `s` on one line, with `…` when cut.
pub fn preview(s: &str, max: usize) -> String {
    // Escaping only lengthens text, so the first max + 1 characters decide the result.
    let head = s.char_indices().nth(max + 1).map_or(s, |(i, _)| &s[..i]);
    let flat = super::sanitize::one_line(head);
    if flat.chars().count() <= max {
        flat
    } else {
        let mut cut: String = flat.chars().take(max.saturating_sub(1)).collect();
        cut.push('…');
        cut
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
    fn checkpoint_timestamps_parse() {
        let t = parse_ts("2026-12-01T04:38:50.880437+00:00").expect("parses");
        assert_eq!(utc(&t), "2026-12-01T04:38:50Z");
        assert!(parse_ts("yesterday").is_none());
    }
}
