//! The `rekey` job: every stored value (checkpoint blobs and write values of every thread)
//! put under a new AES key, or encrypted for the first time, or decrypted (`--decrypt`), as
//! LangGraph's `EncryptedSerializer` would have stored it. The one command that rewrites rows
//! in place rather than appending.
//!
//! Two passes over the values, a page (`--batch` values, at most 4 MiB) per short
//! transaction: the first decrypts every value and changes nothing (it is all a `--dry-run`
//! does), so a wrong key is found before anything is written; the second rewrites. A value
//! already in its final form (under the new key, or plain for `--decrypt`) is left alone, so
//! a run that was interrupted finishes when run again. Beside a live app the second pass
//! pauses between pages as long as each page held the write lock.

use std::time::Instant;

use anyhow::{anyhow, bail, Result};
use serde::Serialize;

use crate::codec::aes::{self, AesKey, KeyIssue, OpenError};
use crate::storage::{BlobKind, CheckpointStore, PageSize, StoredValue, ValueCursor};
use crate::text::human;

use super::{Ctx, Question, Sink};

/// What `rekey` is asked to do.
#[derive(Debug, Clone, Default)]
pub struct Request {
    /// The variable holding the key values are under now (`--old-key-env`).
    pub old_key_env: Option<String>,
    /// The variable holding the key to encrypt with (`--new-key-env`).
    pub new_key_env: Option<String>,
    /// Decrypt every value (`--decrypt`): the new key is not used.
    pub decrypt: bool,
    /// Plan only: every value read and decrypted, nothing written.
    pub dry_run: bool,
    /// Values per transaction at most (`--batch`).
    pub batch: u64,
    /// `VACUUM` the file afterwards (`--vacuum`).
    pub vacuum: bool,
}

/// What a run did (or would do): the report, and a vacuum that found the database busy (the
/// run is then a partial success, after the report).
#[derive(Debug)]
pub struct Report {
    /// What became of the values.
    pub rekey: RekeyReport,
    /// The `--vacuum` that failed, if it did.
    pub vacuum: Option<anyhow::Error>,
}

impl Report {
    /// The exit the run calls for once its report is written: a busy vacuum is exit code 3.
    pub fn verdict(self) -> Result<()> {
        match self.vacuum {
            Some(e) => Err(super::partial_if_busy(e)),
            None => Ok(()),
        }
    }
}

/// What a run makes of the values (JSON: `rotate`, `encrypt`, `decrypt`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Mode {
    /// Values under the old key go under the new one (plain ones are encrypted too).
    Rotate,
    /// Plain values are encrypted with the new key (no old key given).
    Encrypt,
    /// Values under the old key are decrypted.
    Decrypt,
}

/// How many values met each fate, and their total.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct FateCounts {
    /// Under the old key: encrypted again with the new one.
    pub reencrypted: u64,
    /// Plain: encrypted with the new key.
    pub encrypted: u64,
    /// Under the old key: decrypted (`--decrypt`).
    pub decrypted: u64,
    /// Already under the new key: left alone.
    pub already_under_new_key: u64,
    /// Plain, and to stay plain (`--decrypt`): left alone.
    pub already_plain: u64,
    /// No type tag: not a value LangGraph wrote, left alone.
    pub untyped: u64,
    /// All of them.
    pub total: u64,
}

/// The report of `rekey`.
#[derive(Debug, Clone, Serialize)]
pub struct RekeyReport {
    /// Nothing was written (every value was read and decrypted).
    pub dry_run: bool,
    /// What the run makes of the values.
    pub mode: Mode,
    /// The variable of the key the values were under (`--old-key-env`).
    pub old_key_env: Option<String>,
    /// The variable of the key they go under (`--new-key-env`).
    pub new_key_env: Option<String>,
    /// The checkpoint values (SQLite rows; Postgres checkpoints and blob rows).
    pub checkpoints: FateCounts,
    /// The pending writes' values.
    pub writes: FateCounts,
    /// Values rewritten (would be, in a dry run).
    pub changed: u64,
    /// Transactions the rewrite took.
    pub transactions: u64,
    /// `--vacuum` ran and succeeded.
    pub vacuumed: bool,
}

/// Stored bytes per transaction at most (with `--batch` values at most).
const PAGE_BYTES: u64 = 4 << 20;

/// The keys of a run, each with the variable it came from.
pub struct Keys {
    /// The key values are under now (`--old-key-env`).
    pub old: Option<(String, AesKey)>,
    /// The key to encrypt with (`--new-key-env`); `None` with `--decrypt`.
    pub new: Option<(String, AesKey)>,
}

impl Keys {
    /// What the keys given make of the values.
    pub fn mode(&self) -> Mode {
        match (&self.old, &self.new) {
            (_, None) => Mode::Decrypt,
            (None, Some(_)) => Mode::Encrypt,
            (Some(_), Some(_)) => Mode::Rotate,
        }
    }
}

/// What happens to one value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fate {
    /// Under the old key: encrypted again with the new one.
    Reencrypted,
    /// Plain: encrypted with the new key.
    Encrypted,
    /// Under the old key: decrypted (`--decrypt`).
    Decrypted,
    /// Already under the new key: left alone.
    AlreadyNew,
    /// Plain, and to stay plain (`--decrypt`): left alone.
    AlreadyPlain,
    /// No type tag: not a value LangGraph wrote, left alone.
    Untyped,
}

impl Fate {
    const ALL: [Fate; 6] = [
        Fate::Reencrypted,
        Fate::Encrypted,
        Fate::Decrypted,
        Fate::AlreadyNew,
        Fate::AlreadyPlain,
        Fate::Untyped,
    ];

    /// True when the value is rewritten.
    fn changes(self) -> bool {
        matches!(self, Fate::Reencrypted | Fate::Encrypted | Fate::Decrypted)
    }
}

/// A value's replacement: its new type and bytes.
pub type Replacement = (String, Vec<u8>);

/// Decides what becomes of a stored value of type `type_name`, and makes its replacement
/// (type and bytes, with a fresh nonce) unless `dry`. The error says why the value cannot be
/// rekeyed (for a person; the caller names the value).
pub fn rekey_value(
    keys: &Keys,
    type_name: &str,
    bytes: &[u8],
    dry: bool,
) -> std::result::Result<(Fate, Option<Replacement>), String> {
    if type_name.is_empty() {
        return Ok((Fate::Untyped, None));
    }
    let (inner, cipher) = aes::split_type(type_name);
    let Some(cipher) = cipher else {
        return Ok(match &keys.new {
            Some((_, new)) => (
                Fate::Encrypted,
                (!dry).then(|| aes::seal(new, type_name, bytes)),
            ),
            None => (Fate::AlreadyPlain, None),
        });
    };
    if cipher != aes::CIPHER {
        return Err(format!(
            "it is encrypted with '{}' (type '{}'), not LangGraph's 'aes'",
            cipher.escape_debug(),
            type_name.escape_debug()
        ));
    }
    if let Some((_, new)) = &keys.new {
        match new.decrypt(bytes) {
            Ok(_) => return Ok((Fate::AlreadyNew, None)),
            Err(OpenError::Truncated(n)) => return Err(truncated(n)),
            Err(OpenError::WrongKey) => {}
        }
    }
    let Some((old_var, old)) = &keys.old else {
        let new_var = keys.new.as_ref().map_or("", |(v, _)| v.as_str());
        return Err(format!(
            "it is encrypted and {new_var} does not decrypt it; name the key it is under with --old-key-env"
        ));
    };
    let plain = match old.decrypt(bytes) {
        Ok(plain) => plain,
        Err(OpenError::Truncated(n)) => return Err(truncated(n)),
        Err(OpenError::WrongKey) => {
            return Err(match &keys.new {
                Some((new_var, _)) => {
                    format!("neither {old_var} nor {new_var} decrypts it (the AES-EAX tag does not verify)")
                }
                None => format!("{old_var} does not decrypt it (the AES-EAX tag does not verify)"),
            })
        }
    };
    Ok(match &keys.new {
        Some((_, new)) => (
            Fate::Reencrypted,
            (!dry).then(|| aes::seal(new, inner, &plain)),
        ),
        None => (Fate::Decrypted, (!dry).then(|| (inner.to_owned(), plain))),
    })
}

fn truncated(n: usize) -> String {
    format!(
        "it is {n} bytes, fewer than the 16-byte nonce and 16-byte tag of an AES-EAX value (truncated?)"
    )
}

/// How many values of each kind met each fate.
#[derive(Debug, Clone, Copy, Default)]
struct Tally {
    checkpoints: [u64; 6],
    writes: [u64; 6],
}

impl Tally {
    fn add(&mut self, kind: BlobKind, fate: Fate) {
        let i = Fate::ALL.iter().position(|f| *f == fate).unwrap_or(0);
        match kind {
            BlobKind::Checkpoint => self.checkpoints[i] += 1,
            BlobKind::Write => self.writes[i] += 1,
        }
    }

    /// The counts of `kind` as the report gives them.
    fn counts(&self, kind: BlobKind) -> FateCounts {
        let a = match kind {
            BlobKind::Checkpoint => &self.checkpoints,
            BlobKind::Write => &self.writes,
        };
        FateCounts {
            reencrypted: a[0],
            encrypted: a[1],
            decrypted: a[2],
            already_under_new_key: a[3],
            already_plain: a[4],
            untyped: a[5],
            total: a.iter().sum(),
        }
    }

    fn changed(&self) -> u64 {
        Fate::ALL
            .iter()
            .enumerate()
            .filter(|(_, f)| f.changes())
            .map(|(i, _)| self.checkpoints[i] + self.writes[i])
            .sum()
    }
}

/// A stored value named for a person.
fn place(v: &StoredValue<'_>) -> String {
    match (v.kind, v.channel) {
        (BlobKind::Write, Some(ch)) => format!(
            "the '{ch}' write on checkpoint {} of thread '{}'",
            v.checkpoint_id, v.thread_id
        ),
        // A Postgres blob row: one channel's value, shared by the checkpoints naming its
        // version.
        (BlobKind::Checkpoint, Some(ch)) => format!(
            "the '{ch}' value (version {}) of thread '{}'",
            v.checkpoint_id, v.thread_id
        ),
        _ => format!("checkpoint {} of thread '{}'", v.checkpoint_id, v.thread_id),
    }
}

/// Reads a key from the variable `var` given with `--{flag}`.
fn load_key(var: &str, flag: &str) -> Result<(String, AesKey)> {
    let key = AesKey::from_env(var).map_err(|issue| match issue {
        KeyIssue::NotSet => anyhow!("{var} (given with --{flag}) is not set"),
        other => anyhow!(aes::describe_issue(var, &other, "")),
    })?;
    Ok((var.to_owned(), key))
}

/// Runs `rekey`: the values checked (pass 1), the question asked, the values rewritten a page
/// per transaction (pass 2).
pub fn run(args: &Request, ctx: &Ctx, sink: &dyn Sink) -> Result<Report> {
    if ctx.key_env.is_some() {
        return Err(crate::exit::Usage(
            "rekey takes its keys from --old-key-env and --new-key-env; drop --key-env".into(),
        )
        .into());
    }
    let keys = Keys {
        old: args
            .old_key_env
            .as_deref()
            .map(|v| load_key(v, "old-key-env"))
            .transpose()?,
        new: match (&args.new_key_env, args.decrypt) {
            (Some(v), false) => Some(load_key(v, "new-key-env")?),
            _ => None,
        },
    };
    if let (Some((old_var, old)), Some((new_var, new))) = (&keys.old, &keys.new) {
        if old.same_as(new) {
            bail!("{old_var} and {new_var} hold the same key: nothing to rotate");
        }
    }
    let store = ctx.open_for_writing(args.dry_run)?;
    let (checkpoints, writes) = store.row_counts()?;
    let size = PageSize {
        rows: usize::try_from(args.batch).unwrap_or(usize::MAX),
        bytes: PAGE_BYTES,
    };

    // Pass 1: decrypt everything, change nothing.
    let (plan, failures) = scan(&*store, &keys, size, checkpoints + writes, sink)?;
    if let Some((first, n)) = failures {
        match n {
            1 => bail!("a value cannot be rekeyed: {first}; nothing was written"),
            n => bail!("{n} values cannot be rekeyed (the first: {first}); nothing was written"),
        }
    }
    if args.dry_run {
        return Ok(report(&keys, true, &plan, 0, None));
    }

    if plan.changed() > 0 {
        let what = match keys.mode() {
            Mode::Rotate => "put under the new key",
            Mode::Encrypt => "encrypt",
            Mode::Decrypt => "decrypt",
        };
        let action = match keys.mode() {
            Mode::Rotate => format!(
                "rewrite {} to {what}",
                human::count(plan.changed(), "value")
            ),
            _ => format!("{what} {} in place", human::count(plan.changed(), "value")),
        };
        sink.confirm(&Question {
            command: "rekey",
            action,
            threads: vec![],
        })?;
    }

    // Pass 2: rewrite, a page per transaction.
    let mut done = Tally::default();
    let mut transactions = 0u64;
    let shared = store.sharing().is_none_or(|s| s.might_be_shared());
    let pb = sink.bar(checkpoints + writes, "rekey");
    let mut cursor = Some(ValueCursor::default());
    while let Some(from) = cursor {
        let started = Instant::now();
        let mut failed: Option<String> = None;
        let mut tally = Tally::default();
        let mut rewrite = |v: &StoredValue<'_>| -> Result<Option<(String, Vec<u8>)>> {
            match rekey_value(&keys, v.type_name, v.bytes, false) {
                Ok((fate, replacement)) => {
                    tally.add(v.kind, fate);
                    Ok(replacement)
                }
                Err(why) => {
                    let line = format!("{}: {why}", place(v));
                    failed = Some(line.clone());
                    Err(anyhow!(line))
                }
            }
        };
        let rewriter = store
            .rewriter()
            .ok_or_else(|| store.lacks("rewrite_values"))?;
        let page = match rewriter.rewrite_values(from, size, true, &mut rewrite) {
            Ok(page) => page,
            Err(e) => {
                pb.finish_and_clear();
                let what = failed.unwrap_or_else(|| format!("{e:#}"));
                bail!(
                    "{what}; {} values were rekeyed in earlier transactions (committed); fix the keys and run rekey again to finish (values already under the new key are left alone)",
                    done.changed()
                );
            }
        };
        for (i, n) in tally.checkpoints.iter().enumerate() {
            done.checkpoints[i] += n;
        }
        for (i, n) in tally.writes.iter().enumerate() {
            done.writes[i] += n;
        }
        transactions += 1;
        pb.inc(page.values);
        cursor = page.next;
        if shared && page.changed > 0 {
            std::thread::sleep(crate::ops::batch::pause_after(started.elapsed()));
        }
    }
    pb.finish_and_clear();
    let vacuum = args.vacuum.then(|| match store.maintenance() {
        Some(m) => m.vacuum(),
        None => Err(store.lacks("vacuum")),
    });
    Ok(report(&keys, false, &done, transactions, vacuum))
}

/// Pass 1: every value decrypted, nothing written. Returns what each would become, and the
/// first value that cannot be rekeyed (named) with the count of such values.
fn scan(
    store: &dyn CheckpointStore,
    keys: &Keys,
    size: PageSize,
    total: u64,
    sink: &dyn Sink,
) -> Result<(Tally, Option<(String, u64)>)> {
    let pb = sink.bar(total, "checking");
    let mut tally = Tally::default();
    let mut first: Option<String> = None;
    let mut failures = 0u64;
    let mut cursor = Some(ValueCursor::default());
    while let Some(from) = cursor {
        let mut look = |v: &StoredValue<'_>| -> Result<Option<(String, Vec<u8>)>> {
            match rekey_value(keys, v.type_name, v.bytes, true) {
                Ok((fate, _)) => tally.add(v.kind, fate),
                Err(why) => {
                    failures += 1;
                    first.get_or_insert_with(|| format!("{}: {why}", place(v)));
                }
            }
            Ok(None)
        };
        let page = store
            .rewriter()
            .ok_or_else(|| store.lacks("rewrite_values"))?
            .rewrite_values(from, size, false, &mut look)?;
        pb.inc(page.values);
        cursor = page.next;
    }
    pb.finish_and_clear();
    Ok((tally, first.map(|f| (f, failures))))
}

/// What a run did (or, `dry`, would do).
fn report(
    keys: &Keys,
    dry: bool,
    tally: &Tally,
    transactions: u64,
    vacuum: Option<Result<()>>,
) -> Report {
    let rekey = RekeyReport {
        dry_run: dry,
        mode: keys.mode(),
        old_key_env: keys.old.as_ref().map(|(v, _)| v.clone()),
        new_key_env: keys.new.as_ref().map(|(v, _)| v.clone()),
        checkpoints: tally.counts(BlobKind::Checkpoint),
        writes: tally.counts(BlobKind::Write),
        changed: tally.changed(),
        transactions,
        vacuumed: matches!(vacuum, Some(Ok(()))),
    };
    Report {
        rekey,
        vacuum: vacuum.and_then(Result::err),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use zeroize::Zeroizing;

    fn key(text: &str) -> AesKey {
        AesKey::new(Zeroizing::new(text.as_bytes().to_vec())).expect("a valid key")
    }

    fn keys(old: Option<&str>, new: Option<&str>) -> Keys {
        Keys {
            old: old.map(|k| ("OLD".to_owned(), key(k))),
            new: new.map(|k| ("NEW".to_owned(), key(k))),
        }
    }

    const A: &str = "0123456789abcdef";
    const B: &str = "fedcba9876543210fedcba98";

    #[test]
    fn rotation_re_encrypts_old_values_and_leaves_new_ones() {
        let k = keys(Some(A), Some(B));
        let under_a = key(A).encrypt(b"\x81\xa1a\x01");
        let (fate, new) = rekey_value(&k, "msgpack+aes", &under_a, false).expect("rekeys");
        assert_eq!(fate, Fate::Reencrypted);
        let (t, bytes) = new.expect("a replacement");
        assert_eq!(t, "msgpack+aes");
        assert_eq!(key(B).decrypt(&bytes).expect("under B"), b"\x81\xa1a\x01");
        // Run again (resumed): recognised, left alone.
        let (fate, new) = rekey_value(&k, "msgpack+aes", &bytes, false).expect("recognised");
        assert_eq!((fate, new), (Fate::AlreadyNew, None));
        // Plain values are encrypted with the new key, with their type inside.
        let (fate, new) = rekey_value(&k, "null", b"", false).expect("encrypts");
        assert_eq!(fate, Fate::Encrypted);
        let (t, bytes) = new.expect("a replacement");
        assert_eq!((t.as_str(), bytes.len()), ("null+aes", 32));
        // A dry run decides the same and makes nothing.
        let (fate, new) = rekey_value(&k, "msgpack+aes", &under_a, true).expect("dry");
        assert_eq!((fate, new), (Fate::Reencrypted, None));
    }

    #[test]
    fn decrypt_gives_back_the_plain_bytes_and_type() {
        let k = keys(Some(A), None);
        let sealed = key(A).encrypt(b"plain bytes");
        let (fate, new) = rekey_value(&k, "bytes+aes", &sealed, false).expect("decrypts");
        assert_eq!(fate, Fate::Decrypted);
        assert_eq!(new, Some(("bytes".to_owned(), b"plain bytes".to_vec())));
        let (fate, _) = rekey_value(&k, "msgpack", b"\xc0", false).expect("plain");
        assert_eq!(fate, Fate::AlreadyPlain);
        assert_eq!(
            rekey_value(&k, "", b"", false).expect("untyped").0,
            Fate::Untyped
        );
    }

    #[test]
    fn values_no_key_opens_are_refused_with_the_reason() {
        let third = key("0000000000000000").encrypt(b"x");
        let err = rekey_value(&keys(Some(A), Some(B)), "msgpack+aes", &third, false)
            .expect_err("neither key");
        assert!(err.contains("neither OLD nor NEW decrypts it"), "{err}");
        let err = rekey_value(&keys(None, Some(B)), "msgpack+aes", &third, false)
            .expect_err("no old key");
        assert!(err.contains("--old-key-env"), "{err}");
        let err = rekey_value(&keys(Some(A), None), "msgpack+aes", &third[..20], false)
            .expect_err("truncated");
        assert!(err.contains("20 bytes"), "{err}");
        let err = rekey_value(&keys(Some(A), None), "msgpack+rot13", &third, false)
            .expect_err("unknown cipher");
        assert!(err.contains("'rot13'"), "{err}");
    }
}
