//! Durations such as `30d`, `12h`, `90m`, `1d12h` (units s, m, h, d, w).

use anyhow::{bail, Result};

/// Parses a duration into seconds.
pub fn parse_seconds(text: &str) -> Result<i64> {
    let s = text.trim();
    if s.is_empty() {
        bail!("empty duration (use e.g. 30d, 12h, 90m)");
    }
    let mut total: i64 = 0;
    let mut number = String::new();
    for c in s.chars() {
        if c.is_ascii_digit() {
            number.push(c);
            continue;
        }
        let unit = match c {
            's' => 1,
            'm' => 60,
            'h' => 3600,
            'd' => 86_400,
            'w' => 7 * 86_400,
            _ => bail!("'{text}' is not a duration: unknown unit '{c}' (use s, m, h, d or w)"),
        };
        let n: i64 = number.parse().map_err(|_| {
            anyhow::anyhow!("'{text}' is not a duration: a number must come before '{c}'")
        })?;
        total = n
            .checked_mul(unit)
            .and_then(|v| total.checked_add(v))
            .ok_or_else(|| anyhow::anyhow!("duration '{text}' is too large"))?;
        number.clear();
    }
    if !number.is_empty() {
        bail!("'{text}' is not a duration: '{number}' needs a unit (s, m, h, d or w)");
    }
    Ok(total)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_units() {
        assert_eq!(parse_seconds("30d").ok(), Some(30 * 86_400));
        assert_eq!(parse_seconds("1d12h").ok(), Some(36 * 3600));
        assert_eq!(parse_seconds("90m").ok(), Some(5400));
        assert!(parse_seconds("12").is_err());
        assert!(parse_seconds("3y").is_err());
        assert!(parse_seconds("h").is_err());
    }
}
