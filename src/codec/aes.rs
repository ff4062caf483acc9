//! The envelope of LangGraph's `EncryptedSerializer.from_pycryptodome_aes()`
//! (`langgraph/checkpoint/serde/encrypted.py`, langgraph-checkpoint 2.x to 4.x), and its key.
//!
//! - The type column is `"{inner}+{cipher}"` (`msgpack+aes`, `null+aes`, `bytes+aes`,
//!   `json+aes`…): Python splits it at the first `+`; a type without `+` is stored plain, so
//!   one database can mix plain and encrypted values.
//! - The only cipher is `aes`: AES in EAX mode with pycryptodome's defaults (16-byte nonce,
//!   16-byte tag, no associated data). The stored bytes are `nonce || tag || ciphertext`, the
//!   ciphertext as long as the plaintext (the inner serializer's bytes).
//! - The key is the raw UTF-8 bytes of the `LANGGRAPH_AES_KEY` environment variable, 16, 24 or
//!   32 bytes long (AES-128/192/256); LangGraph refuses any other length.
//! - Every encryption draws a fresh random nonce, as `AES.new(key, AES.MODE_EAX)` does.
//!
//! The key never leaves this module: it is not `Display`, its `Debug` shows only its length,
//! and every copy memctl holds is wiped when dropped (`zeroize`; the `aes` crate wipes its key
//! schedule; the `eax` crate keeps a plain copy of the key in its cipher value, which
//! [`AesKey`] overwrites on drop).

use std::borrow::Cow;
use std::fmt;
use std::sync::Arc;

use aes::{Aes128, Aes192, Aes256};
use eax::aead::generic_array::GenericArray;
use eax::aead::{AeadCore, AeadInPlace, KeyInit, OsRng};
use eax::Eax;
use zeroize::Zeroizing;

/// The variable LangGraph reads the key from.
pub const KEY_ENV: &str = "LANGGRAPH_AES_KEY";
/// The one cipher name LangGraph's AES cipher writes after the `+`.
pub const CIPHER: &str = "aes";
/// Bytes of the nonce at the start of a stored value.
pub const NONCE_LEN: usize = 16;
/// Bytes of the EAX tag after the nonce.
pub const TAG_LEN: usize = 16;

/// An AES key for LangGraph's EncryptedSerializer: 16, 24 or 32 bytes. Never printed; wiped
/// when dropped.
pub struct AesKey {
    bytes: Zeroizing<Vec<u8>>,
    cipher: Cipher,
}

impl fmt::Debug for AesKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "AesKey(AES-{}, redacted)", self.bytes.len() * 8)
    }
}

/// The EAX cipher of one key length.
enum Cipher {
    A128(Eax<Aes128>),
    A192(Eax<Aes192>),
    A256(Eax<Aes256>),
}

impl Drop for Cipher {
    /// `Eax` keeps a plain copy of the key and has no zeroize support: the value is replaced
    /// in place by one made from an all-zero key of the same length (the same bytes are
    /// overwritten), and `black_box` keeps the compiler from dropping that store as dead.
    fn drop(&mut self) {
        // The payload is overwritten where it lies (`Eax` itself has no drop code).
        match self {
            Cipher::A128(c) => *c = std::hint::black_box(Eax::new(&GenericArray::default())),
            Cipher::A192(c) => *c = std::hint::black_box(Eax::new(&GenericArray::default())),
            Cipher::A256(c) => *c = std::hint::black_box(Eax::new(&GenericArray::default())),
        }
        std::hint::black_box(&mut *self);
    }
}

/// Why a key cannot be used.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum KeyIssue {
    /// The variable is not set.
    NotSet,
    /// The variable is not valid Unicode (LangGraph encodes it as UTF-8).
    NotUnicode,
    /// The key is not 16, 24 or 32 bytes long (its length).
    BadLength(usize),
}

impl AesKey {
    /// A key from raw bytes, refused (with its length) unless 16, 24 or 32 bytes long, as
    /// LangGraph refuses `LANGGRAPH_AES_KEY`.
    pub fn new(bytes: Zeroizing<Vec<u8>>) -> Result<AesKey, KeyIssue> {
        let cipher = match bytes.len() {
            16 => Cipher::A128(Eax::new(GenericArray::from_slice(&bytes))),
            24 => Cipher::A192(Eax::new(GenericArray::from_slice(&bytes))),
            32 => Cipher::A256(Eax::new(GenericArray::from_slice(&bytes))),
            n => return Err(KeyIssue::BadLength(n)),
        };
        Ok(AesKey { bytes, cipher })
    }

    /// The key in the environment variable `var`, read as LangGraph reads it: the variable's
    /// UTF-8 bytes.
    pub fn from_env(var: &str) -> Result<AesKey, KeyIssue> {
        let value = std::env::var_os(var).ok_or(KeyIssue::NotSet)?;
        let bytes = Zeroizing::new(value.into_encoded_bytes());
        if std::str::from_utf8(&bytes).is_err() {
            return Err(KeyIssue::NotUnicode);
        }
        AesKey::new(bytes)
    }

    /// AES-128, -192 or -256.
    pub fn bits(&self) -> usize {
        self.bytes.len() * 8
    }

    /// True when both are the same key.
    pub fn same_as(&self, other: &AesKey) -> bool {
        *self.bytes == *other.bytes
    }

    /// Encrypts `plain` as LangGraph's cipher does: a fresh random nonce, then
    /// `nonce || tag || ciphertext`.
    pub fn encrypt(&self, plain: &[u8]) -> Vec<u8> {
        let nonce = Eax::<Aes128>::generate_nonce(OsRng);
        let mut out = Vec::with_capacity(NONCE_LEN + TAG_LEN + plain.len());
        out.extend_from_slice(&nonce);
        out.extend_from_slice(&[0; TAG_LEN]);
        out.extend_from_slice(plain);
        let (head, body) = out.split_at_mut(NONCE_LEN + TAG_LEN);
        let tag = match &self.cipher {
            Cipher::A128(c) => c.encrypt_in_place_detached(&nonce, b"", body),
            Cipher::A192(c) => c.encrypt_in_place_detached(&nonce, b"", body),
            Cipher::A256(c) => c.encrypt_in_place_detached(&nonce, b"", body),
        };
        // EAX refuses only plaintexts longer than 2^36 bytes; SQLite blobs are at most 2 GiB.
        let tag = tag.unwrap_or_default();
        head[NONCE_LEN..].copy_from_slice(&tag);
        out
    }

    /// Decrypts a stored `nonce || tag || ciphertext`, verifying the tag.
    pub fn decrypt(&self, stored: &[u8]) -> Result<Vec<u8>, OpenError> {
        if stored.len() < NONCE_LEN + TAG_LEN {
            return Err(OpenError::Truncated(stored.len()));
        }
        let (nonce, rest) = stored.split_at(NONCE_LEN);
        let (tag, body) = rest.split_at(TAG_LEN);
        let nonce = GenericArray::from_slice(nonce);
        let tag = GenericArray::from_slice(tag);
        let mut plain = body.to_vec();
        let verified = match &self.cipher {
            Cipher::A128(c) => c.decrypt_in_place_detached(nonce, b"", &mut plain, tag),
            Cipher::A192(c) => c.decrypt_in_place_detached(nonce, b"", &mut plain, tag),
            Cipher::A256(c) => c.decrypt_in_place_detached(nonce, b"", &mut plain, tag),
        };
        verified.map_err(|_| OpenError::WrongKey)?;
        Ok(plain)
    }
}

/// Why a stored value could not be decrypted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OpenError {
    /// Shorter than the nonce and tag (its length).
    Truncated(usize),
    /// The EAX tag does not verify: another key, or altered bytes.
    WrongKey,
}

/// A type tag split as LangGraph splits it: the inner serializer's type, and the cipher when
/// the value is encrypted (`msgpack+aes` → `("msgpack", Some("aes"))`).
pub fn split_type(type_name: &str) -> (&str, Option<&str>) {
    match type_name.split_once('+') {
        Some((inner, cipher)) => (inner, Some(cipher)),
        None => (type_name, None),
    }
}

/// The type tag LangGraph writes for an encrypted value of type `inner`.
pub fn sealed_type(inner: &str) -> String {
    format!("{inner}+{CIPHER}")
}

/// A key problem that stops memctl from reading or writing encrypted values: no key, a key
/// LangGraph would refuse, or one that does not decrypt. Its text is the one line the user
/// sees; commands recognise it in an error chain (a batch stops on it, see
/// `commands::batch`).
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct KeyError(pub String);

/// The key memctl was told to use (`--key-env`, default `LANGGRAPH_AES_KEY`), read once, or
/// why there is none. Cheap to share between threads.
#[derive(Clone)]
pub struct Keyring {
    var: String,
    key: Result<Arc<AesKey>, KeyIssue>,
}

impl fmt::Debug for Keyring {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Keyring")
            .field("var", &self.var)
            .field("key", &self.key.as_ref().map(|k| k.bits()))
            .finish()
    }
}

/// A stored value opened: its inner type and plain bytes, and whether it was encrypted.
#[derive(Debug)]
pub struct Opened<'a> {
    /// The inner serializer's type (`msgpack`, `null`, …).
    pub type_name: &'a str,
    /// The plain bytes (borrowed when the value was stored plain).
    pub bytes: Cow<'a, [u8]>,
    /// True when it was encrypted.
    pub sealed: bool,
}

impl Keyring {
    /// The key in the environment variable `var` (its problem is kept, and reported only
    /// when an encrypted value needs the key).
    pub fn from_env(var: &str) -> Keyring {
        Keyring {
            var: var.to_owned(),
            key: AesKey::from_env(var).map(Arc::new),
        }
    }

    /// No key (plain databases; tests).
    pub fn none() -> Keyring {
        Keyring {
            var: KEY_ENV.to_owned(),
            key: Err(KeyIssue::NotSet),
        }
    }

    /// A given key, named after `var` in messages.
    pub fn with_key(var: &str, key: AesKey) -> Keyring {
        Keyring {
            var: var.to_owned(),
            key: Ok(Arc::new(key)),
        }
    }

    /// The variable the key comes from.
    pub fn var(&self) -> &str {
        &self.var
    }

    /// True when a usable key was found.
    pub fn has_key(&self) -> bool {
        self.key.is_ok()
    }

    /// True when the variable is not set at all (commands that need no key, such as
    /// `threads list`, then show what they can without one).
    pub fn is_unset(&self) -> bool {
        self.key.as_ref().err() == Some(&KeyIssue::NotSet)
    }

    /// The key, or the [`KeyError`] that says why there is none; `what` names the encrypted
    /// value that needs it ("checkpoint … of thread …").
    pub fn key(&self, what: &str) -> Result<&Arc<AesKey>, KeyError> {
        self.key
            .as_ref()
            .map_err(|issue| KeyError(self.describe(issue, what)))
    }

    /// The one line for a key problem.
    pub fn describe(&self, issue: &KeyIssue, what: &str) -> String {
        describe_issue(&self.var, issue, what)
    }

    /// Opens a stored value of type `type_name`: a plain one as it is, an encrypted one
    /// decrypted. Errors name `what` (e.g. "checkpoint X of thread 'T'"): no key or a wrong
    /// one (a [`KeyError`]), a value too short to hold nonce and tag, an unknown cipher.
    pub fn open<'a>(
        &self,
        type_name: &'a str,
        bytes: &'a [u8],
        what: &str,
    ) -> anyhow::Result<Opened<'a>> {
        let (inner, cipher) = split_type(type_name);
        let Some(cipher) = cipher else {
            return Ok(Opened {
                type_name,
                bytes: Cow::Borrowed(bytes),
                sealed: false,
            });
        };
        if cipher != CIPHER {
            anyhow::bail!(
                "{what} is encrypted with '{}' (type '{}'); memctl reads LangGraph's 'aes' cipher only",
                cipher.escape_debug(),
                type_name.escape_debug()
            );
        }
        let key = self.key(what)?;
        let plain = key.decrypt(bytes).map_err(|e| self.open_error(&e, what))?;
        Ok(Opened {
            type_name: inner,
            bytes: Cow::Owned(plain),
            sealed: true,
        })
    }

    /// The error for a value `key` could not decrypt.
    pub fn open_error(&self, e: &OpenError, what: &str) -> anyhow::Error {
        match e {
            OpenError::Truncated(n) => anyhow::anyhow!(
                "{what} is not a complete AES-EAX value: {n} bytes, fewer than the 16-byte nonce and 16-byte tag stored before the ciphertext (truncated?)"
            ),
            OpenError::WrongKey => KeyError(format!(
                "{} does not decrypt {what}: the AES-EAX tag does not verify (it was encrypted with another key, or its bytes were altered)",
                self.var
            ))
            .into(),
        }
    }
}

/// The one line for a key problem of the variable `var`; `what` names the encrypted value
/// that needs the key.
pub fn describe_issue(var: &str, issue: &KeyIssue, what: &str) -> String {
    match issue {
        KeyIssue::NotSet => format!(
            "{what} is encrypted with AES (LangGraph's EncryptedSerializer); set {var} to the app's key{}",
            if var == KEY_ENV { " (or name another variable with --key-env)" } else { "" }
        ),
        KeyIssue::NotUnicode => format!(
            "{var} is not valid UTF-8; LangGraph takes the key as the variable's UTF-8 bytes"
        ),
        KeyIssue::BadLength(n) => format!(
            "{var} must be 16, 24, or 32 bytes long, as LangGraph requires (it is {n} bytes; the key is the variable's UTF-8 bytes)"
        ),
    }
}

/// Encrypts a plain value of type `inner` as the app's serializer would: `(inner+aes,
/// nonce || tag || ciphertext)` with a fresh nonce.
pub fn seal(key: &AesKey, inner: &str, plain: &[u8]) -> (String, Vec<u8>) {
    (sealed_type(inner), key.encrypt(plain))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(text: &str) -> AesKey {
        AesKey::new(Zeroizing::new(text.as_bytes().to_vec())).expect("a valid key")
    }

    /// What pycryptodome wrote: `EncryptedSerializer.from_pycryptodome_aes(key=…)
    /// .dumps_typed({"a": 1})` and `.dumps_typed(None)` with keys of all three lengths (made
    /// once with the pinned .venv/new; the nonces are random, so these are fixed test data).
    const PY: [(&str, &str, &str); 6] = [
        (
            "0123456789abcdef",
            "msgpack+aes",
            "04d0348cb8cc4f6729d5872381d08f194bc88974ecb0e5bbe9049c483de5a3d960fc999c",
        ),
        (
            "0123456789abcdef",
            "null+aes",
            "f02cced579b457e063c761c68e943964a26dc6cd424babd9d8455ae84d5ac806",
        ),
        (
            "0123456789abcdef01234567",
            "msgpack+aes",
            "a7f2160d9b82cee225577429caf16991cdb0994661104846d0bd969f7fde998ee5b95c66",
        ),
        (
            "0123456789abcdef01234567",
            "null+aes",
            "a649b2b1dc917f28ea0b7d1bf680192eb2f5f1dcae159f5e67d7abd3a071e057",
        ),
        (
            "0123456789abcdef0123456789abcdef",
            "msgpack+aes",
            "9ab24affb5e911a1f2455eaa0ae83a74d0f661e92d4ea3d46701d9a8485ec9922ad2c1fb",
        ),
        (
            "0123456789abcdef0123456789abcdef",
            "null+aes",
            "8857b57b015f653811681265a854fe69e19bd06882de8a7dbc4f286731f2709f",
        ),
    ];

    fn unhex(s: &str) -> Vec<u8> {
        (0..s.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&s[i..i + 2], 16).expect("hex"))
            .collect()
    }

    #[test]
    fn decrypts_what_pycryptodome_wrote() {
        for (k, type_name, stored) in PY {
            let ring = Keyring::with_key(KEY_ENV, key(k));
            let stored = unhex(stored);
            let opened = ring.open(type_name, &stored, "value").expect("decrypts");
            let want: &[u8] = if type_name == "null+aes" {
                b""
            } else {
                b"\x81\xa1a\x01"
            };
            assert_eq!(&*opened.bytes, want, "{k} {type_name}");
            assert!(opened.sealed);
        }
    }

    #[test]
    fn round_trip_with_every_key_length() {
        for k in [
            "0123456789abcdef",
            "0123456789abcdef01234567",
            "0123456789abcdef0123456789abcdef",
        ] {
            let key = key(k);
            let sealed = key.encrypt(b"\x81\xa1a\x01");
            assert_eq!(sealed.len(), 32 + 4);
            assert_eq!(key.decrypt(&sealed).expect("decrypts"), b"\x81\xa1a\x01");
            // A fresh nonce each time.
            assert_ne!(key.encrypt(b"\x81\xa1a\x01")[..16], sealed[..16]);
        }
    }

    #[test]
    fn wrong_key_truncated_and_tampered_are_refused() {
        let sealed = key("0123456789abcdef").encrypt(b"secret");
        assert_eq!(
            key("fedcba9876543210").decrypt(&sealed),
            Err(OpenError::WrongKey)
        );
        assert_eq!(
            key("0123456789abcdef").decrypt(&sealed[..31]),
            Err(OpenError::Truncated(31))
        );
        for i in [0, 16, 32] {
            let mut bad = sealed.clone();
            bad[i] ^= 1;
            assert_eq!(
                key("0123456789abcdef").decrypt(&bad),
                Err(OpenError::WrongKey),
                "byte {i} flipped"
            );
        }
    }

    #[test]
    fn keys_of_other_lengths_are_refused_and_never_shown() {
        for n in [0, 15, 17, 33] {
            let bytes = Zeroizing::new(vec![b'k'; n]);
            assert_eq!(AesKey::new(bytes).err(), Some(KeyIssue::BadLength(n)));
        }
        // Length counts UTF-8 bytes, as Python's str.encode() does: 8 two-byte characters.
        let k = AesKey::new(Zeroizing::new("éééééééé".as_bytes().to_vec())).expect("16 bytes");
        assert_eq!(k.bits(), 128);
        let shown = format!("{k:?}");
        assert!(!shown.contains("é"), "{shown}");
        let ring = Keyring::with_key("K", key("0123456789abcdef"));
        assert!(!format!("{ring:?}").contains("0123456789abcdef"));
    }

    #[test]
    fn open_says_which_problem() {
        let sealed = key("0123456789abcdef").encrypt(b"\xc0");
        let plain = Keyring::none()
            .open("msgpack", b"\xc0", "x")
            .expect("plain values need no key");
        assert!(!plain.sealed && plain.type_name == "msgpack");
        let err = Keyring::none()
            .open("msgpack+aes", &sealed, "checkpoint 1 of thread 't'")
            .expect_err("no key");
        assert!(err.is::<KeyError>());
        assert!(
            err.to_string()
                .starts_with("checkpoint 1 of thread 't' is encrypted with AES")
                && err.to_string().contains("set LANGGRAPH_AES_KEY"),
            "{err}"
        );
        let wrong = Keyring::with_key(KEY_ENV, key("fedcba9876543210"));
        let err = wrong
            .open("msgpack+aes", &sealed, "checkpoint 1 of thread 't'")
            .expect_err("wrong key");
        assert!(err.is::<KeyError>());
        assert!(
            err.to_string()
                .starts_with("LANGGRAPH_AES_KEY does not decrypt checkpoint 1 of thread 't'"),
            "{err}"
        );
        let right = Keyring::with_key(KEY_ENV, key("0123456789abcdef"));
        let opened = right.open("null+aes", &sealed, "x").expect("decrypts");
        assert!(opened.sealed && opened.type_name == "null" && &*opened.bytes == b"\xc0");
        let err = right
            .open("msgpack+rot13", &sealed, "x")
            .expect_err("unknown");
        assert!(err.to_string().contains("'rot13'"), "{err}");
        let err = right
            .open("msgpack+aes", &sealed[..10], "x")
            .expect_err("short");
        assert!(err.to_string().contains("10 bytes"), "{err}");
    }
}
