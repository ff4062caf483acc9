//! How a rewrite writes new rows of a plain thread in a database whose app encrypts.

use anyhow::Result;

use crate::codec::aes::{self, Keyring};
use crate::ops::edit::{Editable, Planned};
use crate::ops::outcome::Status;
use crate::storage::CheckpointStore;

/// How new rows of a plain thread are written, decided once per run: an app that encrypts
/// (encrypted rows anywhere in the database) would encrypt them through its
/// `EncryptedSerializer`, so memctl does too.
#[derive(Clone)]
pub enum AppSeal {
    /// Every row is plain: new rows of a plain thread are plain.
    Plain,
    /// The database holds encrypted rows and the key opens them: new rows are encrypted.
    Seal(std::sync::Arc<aes::AesKey>),
    /// The database holds encrypted rows and there is no key that opens them: a plain
    /// thread is not written (why, as a key error's line).
    Refuse(String),
}

impl AppSeal {
    /// What the database and `keys` call for.
    pub fn of(store: &dyn CheckpointStore, keys: &Keyring) -> Result<AppSeal> {
        let Some((type_name, bytes)) = store.an_encrypted_value()? else {
            return Ok(AppSeal::Plain);
        };
        if keys.is_unset() {
            return Ok(AppSeal::Refuse(format!(
                "set {} to the app's key (or name another variable with --key-env)",
                keys.var()
            )));
        }
        let what = "an encrypted row of the database";
        // The key must open the app's rows: rows sealed with another key the app could not read.
        let why = match keys.open(&type_name, &bytes, what) {
            Ok(_) => match keys.key(what) {
                Ok(key) => return Ok(AppSeal::Seal(key.clone())),
                Err(e) => e.to_string(),
            },
            // A wrong key, another cipher, a truncated value: memctl cannot encrypt as the
            // app does.
            Err(e) => format!("{e:#}"),
        };
        Ok(AppSeal::Refuse(why))
    }

    /// `ed` as it is edited: a plain thread's new rows are encrypted when the app encrypts
    /// and memctl has its key.
    pub fn apply(&self, mut ed: Editable) -> Editable {
        if let (None, AppSeal::Seal(key)) = (&ed.seal, self) {
            ed.seal = Some(key.clone());
        }
        ed
    }

    /// A key error (nothing is written) when `ed`'s new rows would be plain in a database
    /// whose app encrypts and memctl has no key that opens its rows.
    pub fn check(&self, ed: &Editable) -> Result<()> {
        match (self, &ed.seal) {
            (AppSeal::Refuse(why), None) => Err(aes::KeyError(format!(
                "thread '{}' is plain, but the database holds encrypted rows: the app encrypts (LangGraph's EncryptedSerializer), so memctl writes the thread's new rows encrypted too and needs the key: {why}",
                ed.thread_id
            ))
            .into()),
            _ => Ok(()),
        }
    }

    /// [`AppSeal::check`] for a planned edit that adds rows (or would, in a dry run): an edit
    /// that only scrubs old rows in place (forget) writes no new row.
    pub(super) fn check_planned(&self, ed: &Editable, planned: &Planned) -> Result<()> {
        let adds = planned.update.is_some()
            || matches!(
                planned.outcome.status,
                Status::WouldRewrite | Status::WouldSummarize
            ) && planned.scrub_at.is_none()
                && planned.purge.is_none();
        match adds {
            true => self.check(ed),
            false => Ok(()),
        }
    }
}
