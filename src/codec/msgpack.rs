//! A lossless MessagePack value model.
//!
//! LangGraph stores checkpoints with `ormsgpack`. To rewrite a checkpoint without disturbing
//! anything memctl did not mean to change, every decoded node remembers the exact marker byte
//! it was read with (`fixstr` vs `str8`, `uint8` vs `uint16`, …). Encoding an untouched value
//! therefore gives back the original bytes; values built by memctl (no marker) are written in
//! the smallest form, which is what `ormsgpack` writes too.
//!
//! Extension payloads are themselves MessagePack documents in LangGraph's serializer, so an
//! [`Ext`] holds a decoded [`Value`], not raw bytes. Decoding only reads data: nothing a blob
//! names is ever imported or executed.

use std::fmt;

/// The deepest nesting accepted before a blob is treated as corrupt (protects the stack).
const MAX_DEPTH: usize = 256;

/// One decoded MessagePack node.
#[derive(Debug, Clone)]
pub enum Value {
    /// `nil` (Python `None`).
    Nil,
    /// `true` / `false`.
    Bool(bool),
    /// An integer with the marker it was stored with.
    Int(Int),
    /// A 32-bit float.
    F32(f32),
    /// A 64-bit float (what Python floats become).
    F64(f64),
    /// A UTF-8 string with the marker it was stored with.
    Str(Str),
    /// A byte string (`bin8/16/32`).
    Bin(Bin),
    /// An array (Python lists and tuples).
    Array(Array),
    /// A map with its entries in stored order (keys need not be strings).
    Map(Map),
    /// An extension value: LangGraph's typed objects (messages, UUIDs, datetimes, Send…).
    Ext(Box<Ext>),
    /// A value kept as its encoded bytes (one complete msgpack value), written back as is:
    /// how rewrites carry the messages they keep without decoding them. Never produced by
    /// [`decode`].
    Raw(Raw),
}

/// The bytes of one complete encoded value (see [`Value::Raw`]): a slice of a shared buffer
/// (typically the stored checkpoint blob the value was read from), so that a rewrite keeping
/// 100,000 messages copies none of them.
#[derive(Debug, Clone)]
pub struct Raw {
    buf: std::sync::Arc<Vec<u8>>,
    range: std::ops::Range<usize>,
}

impl Raw {
    /// Wraps the bytes of one complete msgpack value after checking that they decode (valid
    /// UTF-8, known ext codes, nothing left over), so that only what memctl can read is
    /// written back.
    pub fn new(bytes: Vec<u8>) -> Result<Raw, DecodeError> {
        let range = 0..bytes.len();
        Raw::shared(&std::sync::Arc::new(bytes), range)
    }

    /// The value at `range` of a shared buffer, checked as [`Raw::new`] checks it (a range
    /// outside the buffer is an error).
    pub fn shared(
        buf: &std::sync::Arc<Vec<u8>>,
        range: std::ops::Range<usize>,
    ) -> Result<Raw, DecodeError> {
        let bytes = buf
            .get(range.clone())
            .ok_or(DecodeError::Truncated { offset: buf.len() })?;
        decode(bytes)?;
        Ok(Raw {
            buf: buf.clone(),
            range,
        })
    }

    /// The encoded bytes.
    pub fn bytes(&self) -> &[u8] {
        &self.buf[self.range.clone()]
    }

    /// The shared buffer and where the value is in it.
    pub fn parts(&self) -> (&std::sync::Arc<Vec<u8>>, std::ops::Range<usize>) {
        (&self.buf, self.range.clone())
    }
}

/// Where the encoder writes: a `Vec<u8>`, or `codec::pieces::Pieces`, which keeps large
/// [`Raw`] values as slices of their buffers instead of copying them.
pub trait Out {
    /// Appends one byte.
    fn push(&mut self, b: u8);
    /// Appends bytes.
    fn extend_from_slice(&mut self, b: &[u8]);
    /// Appends a value kept as its encoded bytes.
    fn raw(&mut self, r: &Raw) {
        self.extend_from_slice(r.bytes());
    }
}

impl Out for Vec<u8> {
    fn push(&mut self, b: u8) {
        Vec::push(self, b);
    }
    fn extend_from_slice(&mut self, b: &[u8]) {
        Vec::extend_from_slice(self, b);
    }
}

/// An integer value; `neg` holds values below zero.
#[derive(Debug, Clone, Copy)]
pub struct Int {
    /// The value when it is zero or more.
    pub pos: u64,
    /// The value when it is below zero (then `pos` is 0).
    pub neg: i64,
    /// The marker byte it was read with, if it was read.
    pub marker: Option<u8>,
}

/// A string and the marker it was read with.
#[derive(Debug, Clone)]
pub struct Str {
    /// The text.
    pub text: String,
    /// The marker byte it was read with, if it was read.
    pub marker: Option<u8>,
}

/// A byte string and the marker it was read with.
#[derive(Debug, Clone)]
pub struct Bin {
    /// The bytes.
    pub bytes: Vec<u8>,
    /// The marker byte it was read with, if it was read.
    pub marker: Option<u8>,
}

/// An array and the marker it was read with.
#[derive(Debug, Clone)]
pub struct Array {
    /// The items in order.
    pub items: Vec<Value>,
    /// The marker byte it was read with, if it was read.
    pub marker: Option<u8>,
}

/// A map (entries in stored order) and the marker it was read with.
#[derive(Debug, Clone)]
pub struct Map {
    /// Key / value pairs in stored order.
    pub entries: Vec<(Value, Value)>,
    /// The marker byte it was read with, if it was read.
    pub marker: Option<u8>,
}

/// An extension value: a type code and a nested MessagePack document.
#[derive(Debug, Clone)]
pub struct Ext {
    /// The extension type code (LangGraph uses 0–7).
    pub code: i8,
    /// The decoded payload document.
    pub payload: Value,
    /// The marker byte it was read with, if it was read.
    pub marker: Option<u8>,
}

/// Why a blob could not be decoded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DecodeError {
    /// The data ended before the value was complete.
    Truncated {
        /// Byte offset where more data was needed.
        offset: usize,
    },
    /// A marker byte MessagePack does not define (0xc1).
    BadMarker {
        /// The byte.
        byte: u8,
        /// Where it was found.
        offset: usize,
    },
    /// A string that is not valid UTF-8.
    BadUtf8 {
        /// Where the string starts.
        offset: usize,
    },
    /// Bytes left over after a complete value.
    TrailingBytes {
        /// How many bytes were left.
        count: usize,
    },
    /// Nested deeper than memctl accepts.
    TooDeep,
    /// An extension type code LangGraph's serializer does not define.
    UnknownExt {
        /// The code found.
        code: i8,
    },
}

impl fmt::Display for DecodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DecodeError::Truncated { offset } => {
                write!(
                    f,
                    "msgpack data is truncated (needed more bytes at offset {offset})"
                )
            }
            DecodeError::BadMarker { byte, offset } => {
                write!(f, "invalid msgpack marker 0x{byte:02x} at offset {offset}")
            }
            DecodeError::BadUtf8 { offset } => {
                write!(f, "msgpack string at offset {offset} is not valid UTF-8")
            }
            DecodeError::TrailingBytes { count } => {
                write!(f, "{count} unexpected bytes after the msgpack value")
            }
            DecodeError::TooDeep => write!(f, "msgpack value nested more than {MAX_DEPTH} levels"),
            DecodeError::UnknownExt { code } => write!(
                f,
                "unknown msgpack extension type {code} (LangGraph's serializer uses 0-7)"
            ),
        }
    }
}

impl std::error::Error for DecodeError {}

/// The highest extension code LangGraph's `JsonPlusSerializer` writes (7 = delta snapshot).
pub const MAX_EXT_CODE: i8 = 7;

/// Decodes one complete MessagePack document; trailing bytes are an error.
pub fn decode(data: &[u8]) -> Result<Value, DecodeError> {
    let mut r = Reader::new(data, 0);
    let v = r.value(0)?;
    if r.pos != data.len() {
        return Err(DecodeError::TrailingBytes {
            count: data.len() - r.pos,
        });
    }
    Ok(v)
}

/// Decodes a document whose root is a map, except the value at `root[outer][inner]` (the
/// messages of `channel_values`): that value is not decoded, [`Value::Nil`] stands in its
/// place, and its byte range is returned so it can be read in place. The rest is decoded and
/// checked exactly as [`decode`] does.
pub fn decode_except(
    data: &[u8],
    outer: &str,
    inner: &str,
) -> Result<(Value, Option<std::ops::Range<usize>>), DecodeError> {
    let mut r = Reader::new(data, 0);
    let mut span = None;
    let root = r.map_with(0, &mut |r, key, depth| {
        if key.as_str() != Some(outer) || !r.at_map() {
            return r.value(depth);
        }
        r.map_with(depth, &mut |r, key, depth| {
            if key.as_str() != Some(inner) {
                return r.value(depth);
            }
            let start = r.pos;
            r.skip_value(depth)?;
            span = Some(start..r.pos);
            Ok(Value::Nil)
        })
    })?;
    if r.pos != data.len() {
        return Err(DecodeError::TrailingBytes {
            count: data.len() - r.pos,
        });
    }
    Ok((root, span))
}

/// Encodes a value; untouched decoded values come back byte for byte.
pub fn encode(v: &Value) -> Vec<u8> {
    let mut out = Vec::with_capacity(64);
    write_value(&mut out, v);
    out
}

/// Encodes a value, appending to `out`.
pub fn encode_into(out: &mut impl Out, v: &Value) {
    write_value(out, v);
}

/// Writes the header of a map of `n` entries in the smallest form: what [`encode`] writes for
/// a map memctl built ([`Value::map`]), for writers that put the entries after it themselves.
pub fn write_map_header(out: &mut impl Out, n: usize) {
    write_len(out, n, None, Some(0x80), 15, [0, 0xde, 0xdf]);
}

/// The byte steps of msgpack's readers (this decoder and `lazy`'s checker): big-endian
/// integers and lengths taken from a position that moves forward.
pub(crate) trait Bytes<'a> {
    /// The whole document.
    fn data(&self) -> &'a [u8];
    /// Where the next read starts.
    fn pos(&self) -> usize;
    /// Moves the position.
    fn set_pos(&mut self, pos: usize);

    /// The next `n` bytes.
    fn take(&mut self, n: usize) -> Result<&'a [u8], DecodeError> {
        let (data, pos) = (self.data(), self.pos());
        let end = pos
            .checked_add(n)
            .filter(|&e| e <= data.len())
            .ok_or(DecodeError::Truncated { offset: pos })?;
        self.set_pos(end);
        Ok(&data[pos..end])
    }

    /// The next byte.
    fn u8(&mut self) -> Result<u8, DecodeError> {
        Ok(self.take(1)?[0])
    }

    /// A big-endian unsigned integer of `n` bytes.
    fn be(&mut self, n: usize) -> Result<u64, DecodeError> {
        Ok(self
            .take(n)?
            .iter()
            .fold(0u64, |acc, b| (acc << 8) | u64::from(*b)))
    }

    /// A length of `n` bytes.
    fn len(&mut self, n: usize) -> Result<usize, DecodeError> {
        let at = self.pos();
        let v = self.be(n)?;
        usize::try_from(v).map_err(|_| DecodeError::Truncated { offset: at })
    }
}

impl<'a> Bytes<'a> for Reader<'a> {
    fn data(&self) -> &'a [u8] {
        self.data
    }
    fn pos(&self) -> usize {
        self.pos
    }
    fn set_pos(&mut self, pos: usize) {
        self.pos = pos;
    }
}

struct Reader<'a> {
    data: &'a [u8],
    pos: usize,
    /// How many more items (array items, map entries) containers may reserve room for before
    /// reading them. It starts at the document's length: every item takes at least a byte, so
    /// real data never runs out, while headers that claim more than the data holds (up to
    /// 4 Gi each, or each of 256 nested ones claiming the rest) cannot reserve more in total.
    reserve: usize,
}

impl<'a> Reader<'a> {
    fn new(data: &'a [u8], pos: usize) -> Reader<'a> {
        Reader {
            data,
            pos,
            reserve: data.len(),
        }
    }

    /// Room to reserve for a container claiming `n` items, taken from the budget.
    fn reserve(&mut self, n: usize) -> usize {
        let k = n.min(self.reserve);
        self.reserve -= k;
        k
    }

    fn value(&mut self, depth: usize) -> Result<Value, DecodeError> {
        if depth > MAX_DEPTH {
            return Err(DecodeError::TooDeep);
        }
        let at = self.pos;
        let m = self.u8()?;
        let mk = Some(m);
        let pos_int = |v: u64| {
            Value::Int(Int {
                pos: v,
                neg: 0,
                marker: mk,
            })
        };
        let neg_int = |v: i64| {
            if v < 0 {
                Value::Int(Int {
                    pos: 0,
                    neg: v,
                    marker: mk,
                })
            } else {
                Value::Int(Int {
                    pos: v as u64,
                    neg: 0,
                    marker: mk,
                })
            }
        };
        Ok(match m {
            0x00..=0x7f => pos_int(u64::from(m)),
            0x80..=0x8f => self.map(usize::from(m & 0x0f), mk, depth)?,
            0x90..=0x9f => self.array(usize::from(m & 0x0f), mk, depth)?,
            0xa0..=0xbf => self.string(usize::from(m & 0x1f), mk)?,
            0xc0 => Value::Nil,
            0xc1 => {
                return Err(DecodeError::BadMarker {
                    byte: m,
                    offset: at,
                })
            }
            0xc2 => Value::Bool(false),
            0xc3 => Value::Bool(true),
            0xc4..=0xc6 => {
                let n = self.len(1 << (m - 0xc4))?;
                let bytes = self.take(n)?.to_vec();
                Value::Bin(Bin { bytes, marker: mk })
            }
            0xc7..=0xc9 => {
                let n = self.len(1 << (m - 0xc7))?;
                self.ext(n, mk, depth)?
            }
            0xca => Value::F32(f32::from_bits(self.be(4)? as u32)),
            0xcb => Value::F64(f64::from_bits(self.be(8)?)),
            0xcc => pos_int(self.be(1)?),
            0xcd => pos_int(self.be(2)?),
            0xce => pos_int(self.be(4)?),
            0xcf => pos_int(self.be(8)?),
            0xd0 => neg_int(i64::from(self.be(1)? as u8 as i8)),
            0xd1 => neg_int(i64::from(self.be(2)? as u16 as i16)),
            0xd2 => neg_int(i64::from(self.be(4)? as u32 as i32)),
            0xd3 => neg_int(self.be(8)? as i64),
            0xd4..=0xd8 => self.ext(1 << (m - 0xd4), mk, depth)?,
            0xd9..=0xdb => {
                let n = self.len(1 << (m - 0xd9))?;
                self.string(n, mk)?
            }
            0xdc => {
                let n = self.len(2)?;
                self.array(n, mk, depth)?
            }
            0xdd => {
                let n = self.len(4)?;
                self.array(n, mk, depth)?
            }
            0xde => {
                let n = self.len(2)?;
                self.map(n, mk, depth)?
            }
            0xdf => {
                let n = self.len(4)?;
                self.map(n, mk, depth)?
            }
            0xe0..=0xff => neg_int(i64::from(m as i8)),
        })
    }

    fn string(&mut self, n: usize, marker: Option<u8>) -> Result<Value, DecodeError> {
        let at = self.pos;
        let bytes = self.take(n)?;
        let text = simdutf8::basic::from_utf8(bytes)
            .map_err(|_| DecodeError::BadUtf8 { offset: at })?
            .to_owned();
        Ok(Value::Str(Str { text, marker }))
    }

    fn array(&mut self, n: usize, marker: Option<u8>, depth: usize) -> Result<Value, DecodeError> {
        // Every item takes at least one byte: a length beyond the data left is corrupt.
        if n > self.data.len() - self.pos {
            return Err(DecodeError::Truncated { offset: self.pos });
        }
        let mut items = Vec::with_capacity(self.reserve(n));
        for _ in 0..n {
            items.push(self.value(depth + 1)?);
        }
        Ok(Value::Array(Array { items, marker }))
    }

    fn map(&mut self, n: usize, marker: Option<u8>, depth: usize) -> Result<Value, DecodeError> {
        if n.saturating_mul(2) > self.data.len() - self.pos {
            return Err(DecodeError::Truncated { offset: self.pos });
        }
        let mut entries = Vec::with_capacity(self.reserve(n));
        for _ in 0..n {
            let k = self.value(depth + 1)?;
            let v = self.value(depth + 1)?;
            entries.push((k, v));
        }
        Ok(Value::Map(Map { entries, marker }))
    }

    fn ext(&mut self, n: usize, marker: Option<u8>, depth: usize) -> Result<Value, DecodeError> {
        let code = self.u8()? as i8;
        let body = self.take(n)?;
        if !(0..=MAX_EXT_CODE).contains(&code) {
            return Err(DecodeError::UnknownExt { code });
        }
        // The payload shares the document's reservation budget.
        let mut inner = Reader {
            data: body,
            pos: 0,
            reserve: self.reserve,
        };
        let payload = inner.value(depth + 1)?;
        self.reserve = inner.reserve;
        if inner.pos != body.len() {
            return Err(DecodeError::TrailingBytes {
                count: body.len() - inner.pos,
            });
        }
        Ok(Value::Ext(Box::new(Ext {
            code,
            payload,
            marker,
        })))
    }
}

pub(super) fn write_value<O: Out>(out: &mut O, v: &Value) {
    match v {
        Value::Raw(r) => out.raw(r),
        Value::Nil => out.push(0xc0),
        Value::Bool(b) => out.push(if *b { 0xc3 } else { 0xc2 }),
        Value::Int(i) => write_int(out, i),
        Value::F32(f) => {
            out.push(0xca);
            out.extend_from_slice(&f.to_bits().to_be_bytes());
        }
        Value::F64(f) => {
            out.push(0xcb);
            out.extend_from_slice(&f.to_bits().to_be_bytes());
        }
        Value::Str(s) => {
            let n = s.text.len();
            write_len(out, n, s.marker, Some(0xa0), 31, [0xd9, 0xda, 0xdb]);
            out.extend_from_slice(s.text.as_bytes());
        }
        Value::Bin(b) => {
            write_len(out, b.bytes.len(), b.marker, None, 0, [0xc4, 0xc5, 0xc6]);
            out.extend_from_slice(&b.bytes);
        }
        Value::Array(a) => {
            write_len(
                out,
                a.items.len(),
                a.marker,
                Some(0x90),
                15,
                [0, 0xdc, 0xdd],
            );
            for item in &a.items {
                write_value(out, item);
            }
        }
        Value::Map(m) => {
            write_len(
                out,
                m.entries.len(),
                m.marker,
                Some(0x80),
                15,
                [0, 0xde, 0xdf],
            );
            for (k, v) in &m.entries {
                write_value(out, k);
                write_value(out, v);
            }
        }
        Value::Ext(e) => write_ext(out, e),
    }
}

/// Writes a length-prefixed header. `fix` is the fix-form base (with `fix_max` its largest
/// length); `wide` are the 8/16/32-bit length markers (0 where a width does not exist).
fn write_len<O: Out>(
    out: &mut O,
    n: usize,
    marker: Option<u8>,
    fix: Option<u8>,
    fix_max: usize,
    wide: [u8; 3],
) {
    let widths = [1usize, 2, 4];
    // Reuse the stored marker when it can still hold this length.
    if let Some(m) = marker {
        if let Some(base) = fix {
            if m & !(fix_max as u8) == base && n <= fix_max {
                out.push(base | n as u8);
                return;
            }
        }
        if let Some(i) = wide.iter().position(|&w| w != 0 && w == m) {
            if (n as u64) < (1u64 << (8 * widths[i])) {
                out.push(m);
                out.extend_from_slice(&(n as u64).to_be_bytes()[8 - widths[i]..]);
                return;
            }
        }
    }
    if let Some(base) = fix {
        if n <= fix_max {
            out.push(base | n as u8);
            return;
        }
    }
    for (i, &w) in wide.iter().enumerate() {
        if w != 0 && (n as u64) < (1u64 << (8 * widths[i])) {
            out.push(w);
            out.extend_from_slice(&(n as u64).to_be_bytes()[8 - widths[i]..]);
            return;
        }
    }
}

fn write_int<O: Out>(out: &mut O, i: &Int) {
    let (pos, neg) = (i.pos, i.neg);
    let fits = |m: u8| -> bool {
        match m {
            0x00..=0x7f => neg == 0 && pos <= 0x7f,
            0xe0..=0xff => (-32..0).contains(&neg),
            0xcc => neg == 0 && pos <= 0xff,
            0xcd => neg == 0 && pos <= 0xffff,
            0xce => neg == 0 && pos <= 0xffff_ffff,
            0xcf => neg == 0,
            0xd0 => (neg < 0 && neg >= i64::from(i8::MIN)) || (neg == 0 && pos <= 0x7f),
            0xd1 => (neg < 0 && neg >= i64::from(i16::MIN)) || (neg == 0 && pos <= 0x7fff),
            0xd2 => (neg < 0 && neg >= i64::from(i32::MIN)) || (neg == 0 && pos <= 0x7fff_ffff),
            0xd3 => neg < 0 || pos <= i64::MAX as u64,
            _ => false,
        }
    };
    let marker = match i.marker.filter(|&m| fits(m)) {
        Some(m) => m,
        None if neg < 0 => {
            if neg >= -32 {
                0xe0
            } else if neg >= i64::from(i8::MIN) {
                0xd0
            } else if neg >= i64::from(i16::MIN) {
                0xd1
            } else if neg >= i64::from(i32::MIN) {
                0xd2
            } else {
                0xd3
            }
        }
        None => {
            if pos <= 0x7f {
                0x00
            } else if pos <= 0xff {
                0xcc
            } else if pos <= 0xffff {
                0xcd
            } else if pos <= 0xffff_ffff {
                0xce
            } else {
                0xcf
            }
        }
    };
    let signed: i64 = if neg < 0 { neg } else { pos as i64 };
    match marker {
        0x00..=0x7f => out.push(pos as u8),
        0xe0..=0xff => out.push(neg as i8 as u8),
        0xcc => out.extend_from_slice(&[0xcc, pos as u8]),
        0xcd => {
            out.push(0xcd);
            out.extend_from_slice(&(pos as u16).to_be_bytes());
        }
        0xce => {
            out.push(0xce);
            out.extend_from_slice(&(pos as u32).to_be_bytes());
        }
        0xcf => {
            out.push(0xcf);
            out.extend_from_slice(&pos.to_be_bytes());
        }
        0xd0 => out.extend_from_slice(&[0xd0, signed as i8 as u8]),
        0xd1 => {
            out.push(0xd1);
            out.extend_from_slice(&(signed as i16).to_be_bytes());
        }
        0xd2 => {
            out.push(0xd2);
            out.extend_from_slice(&(signed as i32).to_be_bytes());
        }
        _ => {
            out.push(0xd3);
            out.extend_from_slice(&signed.to_be_bytes());
        }
    }
}

fn write_ext<O: Out>(out: &mut O, e: &Ext) {
    let body = encode(&e.payload);
    let n = body.len();
    let fixed = |n: usize| match n {
        1 => Some(0xd4u8),
        2 => Some(0xd5),
        4 => Some(0xd6),
        8 => Some(0xd7),
        16 => Some(0xd8),
        _ => None,
    };
    let wide = |m: u8| -> Option<usize> {
        match m {
            0xc7 => Some(1),
            0xc8 => Some(2),
            0xc9 => Some(4),
            _ => None,
        }
    };
    let stored = e.marker.filter(|&m| match m {
        0xd4..=0xd8 => fixed(n) == Some(m),
        _ => wide(m).is_some_and(|w| (n as u64) < (1u64 << (8 * w))),
    });
    let marker = stored.or_else(|| fixed(n)).unwrap_or(if n <= 0xff {
        0xc7
    } else if n <= 0xffff {
        0xc8
    } else {
        0xc9
    });
    out.push(marker);
    if let Some(w) = wide(marker) {
        out.extend_from_slice(&(n as u64).to_be_bytes()[8 - w..]);
    }
    out.push(e.code as u8);
    out.extend_from_slice(&body);
}

impl Value {
    /// A new string value (smallest encoding).
    pub fn str(s: impl Into<String>) -> Value {
        Value::Str(Str {
            text: s.into(),
            marker: None,
        })
    }

    /// A new integer value (smallest encoding).
    pub fn int(i: i64) -> Value {
        if i < 0 {
            Value::Int(Int {
                pos: 0,
                neg: i,
                marker: None,
            })
        } else {
            Value::Int(Int {
                pos: i as u64,
                neg: 0,
                marker: None,
            })
        }
    }

    /// A new array value.
    pub fn array(items: Vec<Value>) -> Value {
        Value::Array(Array {
            items,
            marker: None,
        })
    }

    /// A new map value from entries in order.
    pub fn map(entries: Vec<(Value, Value)>) -> Value {
        Value::Map(Map {
            entries,
            marker: None,
        })
    }

    /// A new extension value.
    pub fn ext(code: i8, payload: Value) -> Value {
        Value::Ext(Box::new(Ext {
            code,
            payload,
            marker: None,
        }))
    }

    /// The text of a string value.
    pub fn as_str(&self) -> Option<&str> {
        match self {
            Value::Str(s) => Some(&s.text),
            _ => None,
        }
    }

    /// The value as an `i64`, if it is an integer that fits.
    pub fn as_i64(&self) -> Option<i64> {
        match self {
            Value::Int(i) if i.neg < 0 => Some(i.neg),
            Value::Int(i) => i64::try_from(i.pos).ok(),
            _ => None,
        }
    }

    /// The items of an array value.
    pub fn as_array(&self) -> Option<&[Value]> {
        match self {
            Value::Array(a) => Some(&a.items),
            _ => None,
        }
    }

    /// The entries of a map value.
    pub fn as_map(&self) -> Option<&[(Value, Value)]> {
        match self {
            Value::Map(m) => Some(&m.entries),
            _ => None,
        }
    }

    /// The extension inside, if this is one.
    pub fn as_ext(&self) -> Option<&Ext> {
        match self {
            Value::Ext(e) => Some(e),
            _ => None,
        }
    }

    /// Looks up a string key in a map value (first match in stored order).
    pub fn get(&self, key: &str) -> Option<&Value> {
        self.as_map()?
            .iter()
            .find(|(k, _)| k.as_str() == Some(key))
            .map(|(_, v)| v)
    }

    /// Mutable lookup of a string key in a map value.
    pub fn get_mut(&mut self, key: &str) -> Option<&mut Value> {
        match self {
            Value::Map(m) => m
                .entries
                .iter_mut()
                .find(|(k, _)| k.as_str() == Some(key))
                .map(|(_, v)| v),
            _ => None,
        }
    }

    /// True for `nil`.
    pub fn is_nil(&self) -> bool {
        matches!(self, Value::Nil)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn roundtrip(bytes: &[u8]) {
        let v = decode(bytes).expect("decodes");
        assert_eq!(encode(&v), bytes, "re-encoding {v:?}");
    }

    #[test]
    fn non_minimal_markers_survive() {
        // uint16 holding 1, str8 holding "a", array16 of one nil, map32 empty, fixext 1.
        roundtrip(&[0xcd, 0x00, 0x01]);
        roundtrip(&[0xd9, 0x01, b'a']);
        roundtrip(&[0xdc, 0x00, 0x01, 0xc0]);
        roundtrip(&[0xdf, 0x00, 0x00, 0x00, 0x00]);
        roundtrip(&[0xd4, 0x05, 0xc0]);
        roundtrip(&[0xc7, 0x01, 0x00, 0xc0]);
        roundtrip(&[0xd3, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xfe]);
        roundtrip(&[0xd0, 0x05]);
    }

    #[test]
    fn new_values_use_smallest_form() {
        assert_eq!(encode(&Value::int(5)), [0x05]);
        assert_eq!(encode(&Value::int(-1)), [0xff]);
        assert_eq!(encode(&Value::int(200)), [0xcc, 200]);
        assert_eq!(encode(&Value::int(-200)), [0xd1, 0xff, 0x38]);
        assert_eq!(encode(&Value::str("x".repeat(40)))[..2], [0xd9, 40]);
        let long = Value::array(vec![Value::Nil; 16]);
        assert_eq!(encode(&long)[..3], [0xdc, 0x00, 0x10]);
    }

    #[test]
    fn grown_values_switch_marker() {
        let mut v = decode(&[0x91, 0xc0]).expect("decodes");
        if let Value::Array(a) = &mut v {
            a.items.extend(std::iter::repeat_n(Value::Nil, 20));
        }
        assert_eq!(encode(&v)[..3], [0xdc, 0x00, 21]);
    }

    #[test]
    fn corrupt_input_is_an_error_not_a_panic() {
        assert!(matches!(
            decode(&[0x92, 0x01]),
            Err(DecodeError::Truncated { .. })
        ));
        assert!(matches!(
            decode(&[0xc1]),
            Err(DecodeError::BadMarker { .. })
        ));
        assert!(matches!(
            decode(&[0x01, 0x02]),
            Err(DecodeError::TrailingBytes { .. })
        ));
        assert!(matches!(
            decode(&[0xa1, 0xff]),
            Err(DecodeError::BadUtf8 { .. })
        ));
        assert!(matches!(
            decode(&[0xd4, 0x09, 0xc0]),
            Err(DecodeError::UnknownExt { code: 9 })
        ));
        assert!(matches!(
            decode(&[0xdd, 0xff, 0xff, 0xff, 0xff]),
            Err(DecodeError::Truncated { .. })
        ));
        let deep = vec![0x91u8; 10_000];
        assert!(decode(&deep).is_err());
    }
}

/// The end offset of the value starting at `pos`, without building it (for size accounting).
pub fn skip(data: &[u8], pos: usize) -> Result<usize, DecodeError> {
    let mut r = Reader::new(data, pos);
    r.skip_value(0)?;
    Ok(r.pos)
}

/// The encoded size of each channel in a checkpoint's `channel_values`, without decoding the
/// values: `(channel, bytes)` in stored order.
pub fn channel_sizes(blob: &[u8]) -> Result<Vec<(String, usize)>, DecodeError> {
    let mut r = Reader::new(blob, 0);
    let n = r.map_header()?;
    for _ in 0..n {
        let key = r.value(0)?;
        if key.as_str() == Some("channel_values") {
            let m = r.map_header()?;
            // Not `with_capacity(m)`: `m` is what the header claims (up to 4 Gi entries).
            let mut out = Vec::new();
            for _ in 0..m {
                let k = r.value(0)?;
                let start = r.pos;
                r.skip_value(0)?;
                out.push((k.as_str().unwrap_or("?").to_owned(), r.pos - start));
            }
            return Ok(out);
        }
        r.skip_value(0)?;
    }
    Ok(vec![])
}

impl Reader<'_> {
    /// True when the next value is a map.
    fn at_map(&self) -> bool {
        matches!(self.data.get(self.pos), Some(0x80..=0x8f | 0xde | 0xdf))
    }

    /// Reads a map whose values `value(reader, key, depth)` reads (keys are decoded as usual).
    fn map_with(
        &mut self,
        depth: usize,
        value: &mut dyn FnMut(&mut Self, &Value, usize) -> Result<Value, DecodeError>,
    ) -> Result<Value, DecodeError> {
        if depth > MAX_DEPTH {
            return Err(DecodeError::TooDeep);
        }
        let marker = self.data.get(self.pos).copied();
        let n = self.map_header()?;
        if n.saturating_mul(2) > self.data.len() - self.pos {
            return Err(DecodeError::Truncated { offset: self.pos });
        }
        let mut entries = Vec::with_capacity(self.reserve(n));
        for _ in 0..n {
            let k = self.value(depth + 1)?;
            let v = value(self, &k, depth + 1)?;
            entries.push((k, v));
        }
        Ok(Value::Map(Map { entries, marker }))
    }

    fn map_header(&mut self) -> Result<usize, DecodeError> {
        let at = self.pos;
        match self.u8()? {
            m @ 0x80..=0x8f => Ok(usize::from(m & 0x0f)),
            0xde => self.len(2),
            0xdf => self.len(4),
            byte => Err(DecodeError::BadMarker { byte, offset: at }),
        }
    }

    fn skip_value(&mut self, depth: usize) -> Result<(), DecodeError> {
        if depth > MAX_DEPTH {
            return Err(DecodeError::TooDeep);
        }
        let at = self.pos;
        let m = self.u8()?;
        let (skip_bytes, items) = match m {
            0x00..=0x7f | 0xe0..=0xff | 0xc0 | 0xc2 | 0xc3 => (0, 0),
            0x80..=0x8f => (0, 2 * usize::from(m & 0x0f)),
            0x90..=0x9f => (0, usize::from(m & 0x0f)),
            0xa0..=0xbf => (usize::from(m & 0x1f), 0),
            0xc4..=0xc6 => (self.len(1 << (m - 0xc4))?, 0),
            0xc7..=0xc9 => (self.len(1 << (m - 0xc7))? + 1, 0),
            0xca => (4, 0),
            0xcb => (8, 0),
            0xcc..=0xcf => (1 << (m - 0xcc), 0),
            0xd0..=0xd3 => (1 << (m - 0xd0), 0),
            0xd4..=0xd8 => ((1 << (m - 0xd4)) + 1, 0),
            0xd9..=0xdb => (self.len(1 << (m - 0xd9))?, 0),
            0xdc => (0, self.len(2)?),
            0xdd => (0, self.len(4)?),
            0xde => (0, 2 * self.len(2)?),
            0xdf => (0, 2 * self.len(4)?),
            0xc1 => {
                return Err(DecodeError::BadMarker {
                    byte: m,
                    offset: at,
                })
            }
        };
        self.take(skip_bytes)?;
        for _ in 0..items {
            self.skip_value(depth + 1)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod size_tests {
    use super::*;

    #[test]
    fn raw_values_are_written_back_as_is_and_only_when_they_decode() {
        let v = Value::array(vec![
            Value::str("kept"),
            Value::map(vec![(Value::str("k"), Value::ext(5, Value::str("v")))]),
        ]);
        let bytes = encode(&v);
        let raw = Raw::new(bytes.clone()).expect("a complete value");
        let outer = encode(&Value::array(vec![Value::Raw(raw), Value::Nil]));
        assert_eq!(&outer[1..=bytes.len()], &bytes[..]);
        // [{"k": "\xff"}]: valid structure, a string that is not UTF-8, nested.
        assert!(Raw::new(vec![0x91, 0x81, 0xa1, b'k', 0xa1, 0xff]).is_err());
        // An ext code LangGraph does not write; trailing bytes; a truncated value.
        assert!(Raw::new(vec![0xd4, 42, 0xc0]).is_err());
        assert!(Raw::new(vec![0xc0, 0xc0]).is_err());
        assert!(Raw::new(vec![0x92, 0xc0]).is_err());
    }

    #[test]
    fn decode_except_leaves_one_value_in_place() {
        let cp = Value::map(vec![
            (Value::str("v"), Value::int(4)),
            (
                Value::str("channel_values"),
                Value::map(vec![
                    (Value::str("x"), Value::str("kept")),
                    (
                        Value::str("messages"),
                        Value::array(vec![Value::ext(5, Value::str("m"))]),
                    ),
                ]),
            ),
        ]);
        let bytes = encode(&cp);
        let (root, span) = decode_except(&bytes, "channel_values", "messages").expect("decodes");
        let span = span.expect("found");
        let list = decode(&bytes[span]).expect("the span is the list");
        assert_eq!(
            encode(&list),
            encode(
                &cp.get("channel_values")
                    .and_then(|c| c.get("messages"))
                    .cloned()
                    .expect("list")
            )
        );
        let mut whole = root.clone();
        if let Some(m) = whole
            .get_mut("channel_values")
            .and_then(|c| c.get_mut("messages"))
        {
            *m = list;
        }
        assert_eq!(encode(&whole), bytes, "the rest is decoded losslessly");
        assert_eq!(
            root.get("channel_values")
                .and_then(|c| c.get("messages"))
                .map(Value::is_nil),
            Some(true)
        );
        let (_, none) = decode_except(&bytes, "channel_values", "absent").expect("decodes");
        assert!(none.is_none());
        assert!(decode_except(&bytes[..bytes.len() - 1], "channel_values", "messages").is_err());
        let mut trailing = bytes.clone();
        trailing.push(0xc0);
        assert!(decode_except(&trailing, "channel_values", "messages").is_err());
    }

    #[test]
    fn channel_sizes_do_not_reserve_what_a_header_claims() {
        // {"v": 4, "channel_values": <map32 claiming 2^32-1 entries> {"messages": []}}: the
        // claim sized a Vec up front (137 GB: the allocation failed, the process aborted).
        let mut blob = vec![0x82, 0xa1, b'v', 0x04, 0xae];
        blob.extend_from_slice(b"channel_values");
        blob.extend_from_slice(&[0xdf, 0xff, 0xff, 0xff, 0xff, 0xa8]);
        blob.extend_from_slice(b"messages");
        blob.push(0x90);
        assert!(matches!(
            channel_sizes(&blob),
            Err(DecodeError::Truncated { .. })
        ));
    }

    #[test]
    fn nested_claims_reserve_no_more_than_the_data_holds() {
        // 250 nested array16 headers, each claiming 4,000 items, then 4,000 items: every
        // header claimed no more than the bytes left, yet together they reserved 250 x 4,000
        // values (40 MB for a 4.7 KB blob; 10 GB for a 1 MB one).
        let mut blob = [0xdc, 0x0f, 0xa0].repeat(250);
        blob.extend(std::iter::repeat_n(0xc0, 4000));
        let mut r = Reader::new(&blob, 0);
        assert!(matches!(r.value(0), Err(DecodeError::Truncated { .. })));
        assert_eq!(
            r.reserve, 0,
            "the budget (the blob's length) is spent, no more"
        );
        // Real data reserves exactly what it holds.
        let v = decode(&[0x93, 0xc0, 0x91, 0xc0, 0x80]).expect("decodes");
        match v {
            Value::Array(a) => assert_eq!(a.items.capacity(), 3),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn channel_sizes_match_encoded_values() {
        let cp = Value::map(vec![
            (Value::str("v"), Value::int(4)),
            (
                Value::str("channel_values"),
                Value::map(vec![
                    (
                        Value::str("messages"),
                        Value::array(vec![Value::str("hello"), Value::int(300)]),
                    ),
                    (Value::str("n"), Value::Nil),
                ]),
            ),
        ]);
        let bytes = encode(&cp);
        let sizes = channel_sizes(&bytes).expect("sizes");
        assert_eq!(
            sizes,
            vec![("messages".to_owned(), 1 + 6 + 3), ("n".to_owned(), 1)]
        );
        assert_eq!(skip(&bytes, 0).expect("skip"), bytes.len());
        assert!(skip(&bytes[..bytes.len() - 1], 0).is_err());
    }
}
