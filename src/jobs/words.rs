//! The few words jobs put in their notes, questions and errors, written as `output::human`
//! writes them for people (a job imports nothing from `output`): counts, sizes, a name kept
//! on one line; and the time `--now` gives.

/// `n` things, singular or plural: `1 message`, `2 messages` (as `output::human::count`).
pub fn count(n: u64, singular: &str) -> String {
    if n == 1 {
        format!("1 {singular}")
    } else {
        format!("{n} {singular}s")
    }
}

/// A size in bytes for people: `512 B`, `2.1 MiB` (as `output::human::bytes`).
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

/// A stored name quoted in an error: its line breaks written `\n`, so that the error line
/// (which the program folds at line breaks, then escapes) keeps it whole; every other
/// character is escaped by that one writer.
pub fn one_line(name: &str) -> String {
    name.replace('\n', "\\n")
}

/// The time a job goes by: `--now` (hidden, for tests) when given, else the clock's reading
/// (as `output::human::now`).
pub fn now(given: Option<&str>) -> anyhow::Result<jiff::Timestamp> {
    use anyhow::Context;
    match given {
        Some(s) => s
            .parse()
            .with_context(|| format!("--now '{s}' is not an RFC 3339 timestamp")),
        None => Ok(jiff::Timestamp::now()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_are_output_human_s() {
        for n in [0, 1, 2, 1023, 1024, 5 << 20, u64::MAX] {
            assert_eq!(bytes(n), crate::text::human::bytes(n));
            assert_eq!(count(n, "item"), crate::text::human::count(n, "item"));
        }
        assert_eq!(one_line("a\nb\tc"), "a\\nb\tc");
    }
}
