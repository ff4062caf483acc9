//! What a move changes in the values on the way (`--materialize`, `--key-env` /
//! `--new-key-env`), shared by the `copy`, `import` and `migrate` jobs.

use anyhow::{anyhow, bail, Context, Result};

use crate::codec::aes::{self, AesKey, KeyIssue, Keyring};
use crate::jobs::Ctx;
use crate::model::checkpoint::{StoredMessages, MESSAGES};
use crate::storage::{self, CheckpointStore, ThreadRow, ThreadRows};

/// The changes a move is asked for, as plain values (`--materialize`, `--new-key-env`; the
/// key the source is read with is the context's `--key-env`).
#[derive(Debug, Clone, Default)]
pub struct ValueChanges {
    /// Write DeltaChannel values in full.
    pub materialize: bool,
    /// The variable holding the key every value is put under.
    pub new_key_env: Option<String>,
}

/// What a copy changes in the values on the way (`--materialize`, `--key-env` /
/// `--new-key-env`), shared by `copy`, `import` and `migrate`. Applied to a thread's rows as
/// read from the source, before anything of it is written.
pub struct Changes {
    /// Write DeltaChannel values in full (`--materialize`).
    materialize: bool,
    /// The key the source's encrypted values are read with (`--key-env`, default
    /// `LANGGRAPH_AES_KEY`).
    read: Keyring,
    /// What becomes of encrypted and plain values.
    recrypt: Recrypt,
}

/// What becomes of the values' encryption.
enum Recrypt {
    /// Copied as stored.
    AsStored,
    /// Encrypted values decrypted (`--key-env` without `--new-key-env`).
    Decrypt,
    /// Every value under this key (`--new-key-env`).
    Encrypt(Keyring),
}

/// What [`Changes::apply`] did to one thread.
#[derive(Debug, Default)]
pub struct Changed {
    /// Checkpoints whose DeltaChannel values were written in full.
    pub materialized: u64,
    /// Values decrypted.
    pub decrypted: u64,
    /// Values under the new key.
    pub encrypted: u64,
    /// An encrypted value was opened (so the key was checked).
    pub opened_sealed: bool,
}

impl Changed {
    /// Adds the counts to a copy's counts.
    pub fn add_to(&self, counts: &mut crate::ops::copy::CopyCounts) {
        counts.materialized += self.materialized;
        counts.values_decrypted += self.decrypted;
        counts.values_encrypted += self.encrypted;
    }
}

impl Changes {
    /// The changes `asked` (with the context's `--key-env`): `--new-key-env` encrypts,
    /// `--key-env` alone decrypts, neither keeps the values as stored. A key variable that is
    /// unset or holds no valid key is an error here, before anything is read.
    pub fn new(ctx: &Ctx, asked: &ValueChanges) -> Result<Changes> {
        let (materialize, new_key_env) = (asked.materialize, asked.new_key_env.as_deref());
        let read = ctx.keys();
        let loaded = |var: &str, flag: &str| -> Result<Keyring> {
            match AesKey::from_env(var) {
                Ok(_) => Ok(Keyring::from_env(var)),
                Err(KeyIssue::NotSet) => Err(anyhow!("{var} (given with --{flag}) is not set")),
                Err(other) => Err(anyhow!(aes::describe_issue(var, &other, ""))),
            }
        };
        let recrypt = match (new_key_env, ctx.key_env.as_deref()) {
            (Some(var), _) => Recrypt::Encrypt(loaded(var, "new-key-env")?),
            (None, Some(var)) => {
                loaded(var, "key-env")?;
                Recrypt::Decrypt
            }
            (None, None) => Recrypt::AsStored,
        };
        Ok(Changes {
            materialize,
            read,
            recrypt,
        })
    }

    /// Checks that a row of thread `thread`, as read from the source, decodes as LangGraph
    /// loads it (encrypted values opened with the source's key when it is given): an
    /// [`storage::Unreadable`] error when it does not (see [`crate::read::readable`]).
    pub fn check_row(&self, thread: &str, row: storage::RowRef<'_>) -> Result<()> {
        use crate::read::readable;
        match readable::check_row(&self.read, thread, row) {
            Err(e) if e.is::<aes::KeyError>() => match &self.recrypt {
                // Copied as stored (no key needed): a value the key given does not open is
                // left to its AES tag, as without a key.
                Recrypt::AsStored => Ok(()),
                // Already under the new key, it stays as it is: checked with that key.
                Recrypt::Encrypt(new) => readable::check_row(new, thread, row).map_err(|again| {
                    match again.is::<aes::KeyError>() {
                        true => e,
                        false => again,
                    }
                }),
                Recrypt::Decrypt => Err(e),
            },
            other => other,
        }
    }

    /// [`Changes::check_row`] of every row of thread `thread`.
    pub fn check_thread(&self, thread: &str, rows: &ThreadRows) -> Result<()> {
        let checkpoints = rows.checkpoints.iter().map(storage::RowRef::Checkpoint);
        let writes = rows.writes.iter().map(storage::RowRef::Write);
        checkpoints
            .chain(writes)
            .try_for_each(|r| self.check_row(thread, r))
    }

    /// True when the changes can be made a row at a time, as a copy streams a thread
    /// ([`Changes::apply_row`]): all but `--materialize`, which reads other checkpoints of the
    /// source to rebuild a checkpoint's values.
    pub fn streams(&self) -> bool {
        !self.materialize
    }

    /// True when the values' encryption changes (the key is then checked before anything is
    /// written, see [`Changes::check_keys`]).
    pub fn recrypts(&self) -> bool {
        !matches!(self.recrypt, Recrypt::AsStored)
    }

    /// True when the copy is put under a new key (`--new-key-env`).
    pub fn encrypts(&self) -> bool {
        matches!(self.recrypt, Recrypt::Encrypt(_))
    }

    /// The key a target database seals with what it is given to write (a Postgres target
    /// splits each checkpoint into values and encrypts each as `EncryptedSerializer` does).
    pub fn target_keys(&self) -> Keyring {
        match &self.recrypt {
            Recrypt::Encrypt(keys) => keys.clone(),
            _ => self.read.clone(),
        }
    }

    /// The rows of thread `thread` as the copy writes them (the thread id not yet changed).
    pub fn apply(
        &self,
        source: &dyn CheckpointStore,
        thread: &str,
        rows: &mut ThreadRows,
    ) -> Result<Changed> {
        let mut changed = Changed::default();
        if self.materialize {
            self.materialize(source, thread, rows, &mut changed)?;
        }
        if !self.recrypts() {
            return Ok(changed);
        }
        for c in &mut rows.checkpoints {
            self.recrypt_checkpoint(thread, c, &mut changed)?;
        }
        for w in &mut rows.writes {
            self.recrypt_write(thread, w, &mut changed)?;
        }
        Ok(changed)
    }

    /// [`Changes::apply`] to one row of thread `thread`, for a copy that streams it (counted
    /// in `changed`): the changes that [`Changes::streams`] allows, an error for the others.
    pub fn apply_row(
        &self,
        thread: &str,
        row: &mut ThreadRow,
        changed: &mut Changed,
    ) -> Result<()> {
        if self.materialize {
            bail!("--materialize reads the whole thread: it cannot be applied a row at a time");
        }
        self.recrypt_row(thread, row, changed)
    }

    /// One row's value decrypted or put under the new key, as the flags ask.
    fn recrypt_row(&self, thread: &str, row: &mut ThreadRow, changed: &mut Changed) -> Result<()> {
        if !self.recrypts() {
            return Ok(());
        }
        match row {
            ThreadRow::Checkpoint(c) => self.recrypt_checkpoint(thread, c, changed),
            ThreadRow::Write(w) => self.recrypt_write(thread, w, changed),
        }
    }

    /// A checkpoint's value decrypted or put under the new key.
    fn recrypt_checkpoint(
        &self,
        thread: &str,
        c: &mut storage::CheckpointRow,
        changed: &mut Changed,
    ) -> Result<()> {
        let what = format!("checkpoint {} of thread '{thread}'", c.checkpoint_id);
        self.recrypt_value(&mut c.type_name, &mut c.checkpoint, &what, changed)
    }

    /// A pending write's value decrypted or put under the new key.
    fn recrypt_write(
        &self,
        thread: &str,
        w: &mut storage::ThreadWrite,
        changed: &mut Changed,
    ) -> Result<()> {
        let what = format!(
            "the '{}' write of task {} on checkpoint {} of thread '{thread}'",
            w.row.channel, w.row.task_id, w.checkpoint_id
        );
        self.recrypt_value(&mut w.row.type_name, &mut w.row.value, &what, changed)
    }

    /// Checks the keys on the source before anything is written: applies the changes to
    /// `threads` in turn (writing nothing) until one holds an encrypted value, so that a
    /// wrong key stops the run before its first thread is written.
    pub fn check_keys(&self, source: &dyn CheckpointStore, threads: &[String]) -> Result<()> {
        if !self.recrypts() {
            return Ok(());
        }
        /// The visit's stop: a value was opened.
        #[derive(Debug, thiserror::Error)]
        #[error("a key was checked")]
        struct Opened;
        for t in threads {
            let mut changed = Changed::default();
            // A row at a time (the encryption's changes need nothing else: --materialize,
            // which does, is made when the thread is copied).
            let visited = source.visit_thread(t, &mut |mut row| {
                self.recrypt_row(t, &mut row, &mut changed)?;
                match changed.opened_sealed {
                    true => Err(Opened.into()),
                    false => Ok(()),
                }
            });
            match visited {
                Err(e) if e.is::<Opened>() => break,
                other => other?,
            }
        }
        Ok(())
    }

    /// `rows` with every value the new key opens decrypted, to compare a thread put under
    /// the new key on the way with what a target holds (each sealing draws a fresh nonce);
    /// unchanged without `--new-key-env`.
    pub fn comparable(&self, mut rows: ThreadRows) -> ThreadRows {
        let Recrypt::Encrypt(new) = &self.recrypt else {
            return rows;
        };
        let open = |t: &mut String, b: &mut Vec<u8>| {
            let opened = new
                .open(t, b, "a value")
                .ok()
                .filter(|o| o.sealed)
                .map(|o| (o.type_name.to_owned(), o.bytes.into_owned()));
            if let Some((nt, nb)) = opened {
                (*t, *b) = (nt, nb);
            }
        };
        for c in &mut rows.checkpoints {
            open(&mut c.type_name, &mut c.checkpoint);
        }
        for w in &mut rows.writes {
            open(&mut w.row.type_name, &mut w.row.value);
        }
        rows
    }

    /// One stored value (type and bytes) decrypted or put under the new key.
    fn recrypt_value(
        &self,
        type_name: &mut String,
        bytes: &mut Vec<u8>,
        what: &str,
        changed: &mut Changed,
    ) -> Result<()> {
        if type_name.is_empty() {
            return Ok(());
        }
        let sealed = aes::split_type(type_name).1.is_some();
        match &self.recrypt {
            Recrypt::AsStored => {}
            Recrypt::Decrypt if !sealed => {}
            Recrypt::Decrypt => {
                let opened = self.read.open(type_name, bytes, what)?;
                let (t, b) = (opened.type_name.to_owned(), opened.bytes.into_owned());
                (*type_name, *bytes) = (t, b);
                changed.decrypted += 1;
                changed.opened_sealed = true;
            }
            Recrypt::Encrypt(new) => {
                let key = new.key(what)?;
                let plain = match sealed {
                    false => Some((type_name.clone(), std::mem::take(bytes))),
                    // Already under the new key: left as it is.
                    true if key.decrypt(bytes).is_ok() => None,
                    true => {
                        let opened = self.read.open(type_name, bytes, what)?;
                        Some((opened.type_name.to_owned(), opened.bytes.into_owned()))
                    }
                };
                changed.opened_sealed |= sealed;
                if let Some((inner, plain)) = plain {
                    (*type_name, *bytes) = aes::seal(key, &inner, &plain);
                }
                changed.encrypted += 1;
            }
        }
        Ok(())
    }

    /// `--materialize`: every checkpoint of `rows` whose DeltaChannels LangGraph rebuilds
    /// (from a snapshot, or from older checkpoints and their writes) gets their values as
    /// `get_state` rebuilds them before the checkpoint's own input (what a graph with plain
    /// reducer channels stores; its own input stays a pending write, as there), and its
    /// metadata loses the DeltaChannel counters. Channel versions, writes and everything
    /// else stay as they are. An encrypted checkpoint is sealed again with its key.
    fn materialize(
        &self,
        source: &dyn CheckpointStore,
        thread: &str,
        rows: &mut ThreadRows,
        changed: &mut Changed,
    ) -> Result<()> {
        use crate::read::replay::Origin;
        for c in &mut rows.checkpoints {
            let what = format!("checkpoint {} of thread '{thread}'", c.checkpoint_id);
            let mut read = c.clone();
            read.thread_id = thread.to_owned();
            if let Some(m) = &c.metadata {
                if let Some(new) = crate::ops::copy::without_delta_counters(m) {
                    c.metadata = Some(new);
                }
            }
            let (shallow, messages) = crate::read::decode_shallow(&self.read, read.clone())?;
            if !crate::read::needs_replay(&shallow, &messages) {
                continue;
            }
            let deltas = crate::read::replay::base_values(source, &self.read, &shallow, &messages)?;
            let mut values = Vec::new();
            for d in deltas {
                let value = match (&d.origin, d.value) {
                    (Origin::Unwritten | Origin::Stored(false), _) => continue,
                    (Origin::Stored(true), Some(v)) | (Origin::Replayed { .. }, Some(v)) => v,
                    (Origin::Stored(true), None) => match messages.list() {
                        Some(l) => l.value()?,
                        None => continue,
                    },
                    (Origin::Replayed { .. }, None) => bail!(
                        "{what}: DeltaChannel '{}' has a reducer memctl does not know, so --materialize cannot write its value in full; nothing written",
                        d.channel.escape_debug()
                    ),
                };
                values.push((d.channel, value));
            }
            let omitted = matches!(messages, StoredMessages::DeltaOmitted);
            if omitted && !values.iter().any(|(ch, _)| ch == MESSAGES) {
                bail!(
                    "{what} leaves its DeltaChannel 'messages' out and memctl finds no history to rebuild it from; nothing written"
                );
            }
            if values.is_empty() {
                continue;
            }
            let (plain, sealed) = crate::ops::edit::open_checkpoint(&self.read, read)?;
            if plain.type_name != "msgpack" {
                bail!(
                    "{what} is a '{}' checkpoint (LangGraph.js writes JSON): --materialize writes msgpack checkpoints, as LangGraph (Python) stores them; nothing written",
                    plain.type_name.escape_debug()
                );
            }
            let mut root = crate::codec::msgpack::decode(&plain.checkpoint)
                .with_context(|| format!("{what} does not decode"))?;
            for (channel, value) in values {
                if !crate::ops::copy::set_channel_value(&mut root, &channel, value) {
                    bail!("{what} has no channel_values map; nothing written");
                }
            }
            let bytes = crate::codec::msgpack::encode(&root);
            (c.type_name, c.checkpoint) = match sealed {
                true => aes::seal(self.read.key(&what)?, "msgpack", &bytes),
                false => ("msgpack".to_owned(), bytes),
            };
            changed.materialized += 1;
            changed.opened_sealed |= sealed;
        }
        Ok(())
    }
}
