//! The report of `rekey`: a table of what became of the values (checkpoints and writes) with
//! a summary line, or one JSON document with the same counts and totals.

use std::io::Write;

use anyhow::Result;

use super::{human, table, Format};

pub use crate::jobs::rekey::{FateCounts, Mode, RekeyReport};

impl FateCounts {
    /// The counts in table order, each with its row label (`dry`: what a dry run would do).
    fn rows(&self, dry: bool) -> [(&'static str, u64); 6] {
        let would = |done: &'static str, would: &'static str| if dry { would } else { done };
        [
            (
                would(
                    "re-encrypted (old key → new key)",
                    "would re-encrypt (old key → new key)",
                ),
                self.reencrypted,
            ),
            (
                would("encrypted (were plain)", "would encrypt (plain now)"),
                self.encrypted,
            ),
            (would("decrypted", "would decrypt"), self.decrypted),
            (
                "left alone: already under the new key",
                self.already_under_new_key,
            ),
            ("left alone: plain", self.already_plain),
            ("left alone: no type tag", self.untyped),
        ]
    }
}

/// Writes the `rekey` report in `format`.
pub fn render(out: &mut dyn Write, format: Format, r: &RekeyReport) -> Result<()> {
    if format != Format::Table {
        return super::write_document(out, format, r);
    }
    let mut t = table::new_table(&["values", "checkpoints", "writes"]);
    table::align_right(&mut t, &[1, 2]);
    let rows = r.checkpoints.rows(r.dry_run).into_iter();
    for ((label, c), (_, w)) in rows.zip(r.writes.rows(r.dry_run)) {
        if c + w > 0 {
            t.add_row(vec![label.to_owned(), c.to_string(), w.to_string()]);
        }
    }
    t.add_row(vec![
        "total".to_owned(),
        r.checkpoints.total.to_string(),
        r.writes.total.to_string(),
    ]);
    writeln!(out, "{}", table::render(&t))?;
    let what = match r.mode {
        Mode::Rotate => "put under the new key",
        Mode::Encrypt => "encrypted",
        Mode::Decrypt => "decrypted",
    };
    if r.dry_run {
        writeln!(
            out,
            "dry run: every value was read and decrypted; {} would be {what}; nothing was written",
            human::count(r.changed, "value")
        )?;
    } else {
        writeln!(
            out,
            "{} {what} in {}{}",
            human::count(r.changed, "value"),
            human::count(r.transactions, "transaction"),
            if r.vacuumed { "; file vacuumed" } else { "" }
        )?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn report(dry_run: bool) -> RekeyReport {
        RekeyReport {
            dry_run,
            mode: Mode::Rotate,
            old_key_env: Some("OLD".into()),
            new_key_env: Some("NEW".into()),
            checkpoints: FateCounts {
                reencrypted: 3,
                untyped: 1,
                total: 4,
                ..FateCounts::default()
            },
            writes: FateCounts {
                reencrypted: 2,
                total: 2,
                ..FateCounts::default()
            },
            changed: 5,
            transactions: 2,
            vacuumed: false,
        }
    }

    /// The JSON keys in the order scripts have read them since rekey's first release, and the
    /// table's rows only for the fates some value met.
    #[test]
    fn json_keys_keep_their_order_and_the_table_its_rows() {
        let mut json = Vec::new();
        render(&mut json, Format::Jsonl, &report(false)).expect("renders");
        let text = String::from_utf8(json).expect("utf-8");
        assert!(
            text.starts_with(
                r#"{"dry_run":false,"mode":"rotate","old_key_env":"OLD","new_key_env":"NEW","checkpoints":{"reencrypted":3,"encrypted":0,"decrypted":0,"already_under_new_key":0,"already_plain":0,"untyped":1,"total":4},"writes":{"reencrypted":2,"#
            ),
            "{text}"
        );
        assert!(
            text.ends_with("\"changed\":5,\"transactions\":2,\"vacuumed\":false}\n"),
            "{text}"
        );
        let mut table = Vec::new();
        render(&mut table, Format::Table, &report(true)).expect("renders");
        let table = String::from_utf8(table).expect("utf-8");
        assert!(
            table.contains("would re-encrypt (old key → new key)"),
            "{table}"
        );
        assert!(table.contains("left alone: no type tag"), "{table}");
        assert!(!table.contains("left alone: plain"), "{table}");
        assert!(
            table.contains("dry run: every value was read and decrypted; 5 values would be put under the new key; nothing was written"),
            "{table}"
        );
    }
}
