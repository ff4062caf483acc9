//! A borrowing, on-demand msgpack reader for hot paths (listing and counting whole
//! databases): it walks a blob without building values, and hands out the byte span of any
//! part that needs a full [`super::msgpack::decode`].

use std::ops::Range;

use super::msgpack::{skip, Bytes, DecodeError};

/// One msgpack value, borrowed from the blob.
#[derive(Debug, Clone, Copy)]
pub enum Lazy<'a> {
    /// nil
    Nil,
    /// A boolean.
    Bool(bool),
    /// An integer (as i128 so every msgpack integer fits).
    Int(i128),
    /// A float.
    Float(f64),
    /// A string.
    Str(&'a str),
    /// Bytes.
    Bin(&'a [u8]),
    /// An array: item count and where the items start.
    Array(Seq<'a>),
    /// A map: entry count and where the entries start.
    Map(Seq<'a>),
    /// An extension: code and payload bytes (itself a msgpack document).
    Ext(i8, &'a [u8]),
}

/// The items of an array or the entries of a map, not yet read.
#[derive(Debug, Clone, Copy)]
pub struct Seq<'a> {
    data: &'a [u8],
    start: usize,
    /// Items (arrays) or entries (maps).
    pub len: usize,
}

/// A value and where it sits in the blob (its end is found only when asked for).
#[derive(Debug, Clone, Copy)]
pub struct Spanned<'a> {
    /// The value.
    pub value: Lazy<'a>,
    data: &'a [u8],
    pos: usize,
}

fn be(data: &[u8], at: usize, n: usize) -> Result<u64, DecodeError> {
    let bytes = data
        .get(at..at + n)
        .ok_or(DecodeError::Truncated { offset: at })?;
    Ok(bytes.iter().fold(0u64, |acc, b| (acc << 8) | u64::from(*b)))
}

fn slice(data: &[u8], start: usize, len: usize) -> Result<&[u8], DecodeError> {
    start
        .checked_add(len)
        .and_then(|end| data.get(start..end))
        .ok_or(DecodeError::Truncated { offset: start })
}

/// Reads the value at `pos` from its header alone (containers are not walked).
pub fn read(data: &[u8], pos: usize) -> Result<Spanned<'_>, DecodeError> {
    let m = *data
        .get(pos)
        .ok_or(DecodeError::Truncated { offset: pos })?;
    let str_at = |start: usize, len: usize| -> Result<Lazy<'_>, DecodeError> {
        simdutf8::basic::from_utf8(slice(data, start, len)?)
            .map(Lazy::Str)
            .map_err(|_| DecodeError::BadUtf8 { offset: start })
    };
    let seq = |start: usize, len: usize| Seq { data, start, len };
    let value = match m {
        0x00..=0x7f => Lazy::Int(i128::from(m)),
        0xe0..=0xff => Lazy::Int(i128::from(m as i8)),
        0x80..=0x8f => Lazy::Map(seq(pos + 1, usize::from(m & 0x0f))),
        0x90..=0x9f => Lazy::Array(seq(pos + 1, usize::from(m & 0x0f))),
        0xa0..=0xbf => str_at(pos + 1, usize::from(m & 0x1f))?,
        0xc0 => Lazy::Nil,
        0xc2 => Lazy::Bool(false),
        0xc3 => Lazy::Bool(true),
        0xc4..=0xc6 => {
            let w = 1 << (m - 0xc4);
            Lazy::Bin(slice(data, pos + 1 + w, be(data, pos + 1, w)? as usize)?)
        }
        0xc7..=0xc9 => {
            let w = 1 << (m - 0xc7);
            let n = be(data, pos + 1, w)? as usize;
            let code = *data
                .get(pos + 1 + w)
                .ok_or(DecodeError::Truncated { offset: pos })? as i8;
            Lazy::Ext(code, slice(data, pos + 2 + w, n)?)
        }
        0xd4..=0xd8 => {
            let code = *data
                .get(pos + 1)
                .ok_or(DecodeError::Truncated { offset: pos })? as i8;
            Lazy::Ext(code, slice(data, pos + 2, 1 << (m - 0xd4))?)
        }
        0xca => Lazy::Float(f64::from(f32::from_bits(be(data, pos + 1, 4)? as u32))),
        0xcb => Lazy::Float(f64::from_bits(be(data, pos + 1, 8)?)),
        0xcc..=0xcf => Lazy::Int(i128::from(be(data, pos + 1, 1 << (m - 0xcc))?)),
        0xd0 => Lazy::Int(i128::from(be(data, pos + 1, 1)? as u8 as i8)),
        0xd1 => Lazy::Int(i128::from(be(data, pos + 1, 2)? as u16 as i16)),
        0xd2 => Lazy::Int(i128::from(be(data, pos + 1, 4)? as u32 as i32)),
        0xd3 => Lazy::Int(i128::from(be(data, pos + 1, 8)? as i64)),
        0xd9..=0xdb => {
            let w = 1 << (m - 0xd9);
            str_at(pos + 1 + w, be(data, pos + 1, w)? as usize)?
        }
        0xdc => Lazy::Array(seq(pos + 3, be(data, pos + 1, 2)? as usize)),
        0xdd => Lazy::Array(seq(pos + 5, be(data, pos + 1, 4)? as usize)),
        0xde => Lazy::Map(seq(pos + 3, be(data, pos + 1, 2)? as usize)),
        0xdf => Lazy::Map(seq(pos + 5, be(data, pos + 1, 4)? as usize)),
        0xc1 => {
            return Err(DecodeError::BadMarker {
                byte: m,
                offset: pos,
            })
        }
    };
    Ok(Spanned { value, data, pos })
}

/// Reads a whole document (an ext payload, a blob).
pub fn root(data: &[u8]) -> Result<Spanned<'_>, DecodeError> {
    read(data, 0)
}

impl<'a> Seq<'a> {
    /// The items of an array (each walked, so a truncated item is an error here).
    pub fn items(&self) -> Result<Vec<Spanned<'a>>, DecodeError> {
        let mut out = Vec::with_capacity(self.len.min(self.data.len()));
        for item in self.iter() {
            out.push(item?);
        }
        if let Some(last) = out.last() {
            last.raw()?;
        }
        Ok(out)
    }

    /// The items of an array, read one by one: an item is walked (to find where the next
    /// starts) only when the next is asked for, so taking the first few items of a list never
    /// walks the last one taken.
    pub fn iter(&self) -> Iter<'a> {
        Iter {
            data: self.data,
            pos: self.start,
            last: false,
            left: self.len,
        }
    }

    /// The items of an array with the byte range of each (`start..end` in the data the
    /// sequence was read from), each item walked once: for reading a long list item by item.
    pub fn spans(
        &self,
    ) -> impl Iterator<Item = Result<(Spanned<'a>, Range<usize>), DecodeError>> + 'a {
        let data = self.data;
        let mut pos = self.start;
        let mut left = self.len;
        std::iter::from_fn(move || {
            if left == 0 {
                return None;
            }
            left -= 1;
            let item = read(data, pos).and_then(|item| Ok((item, pos..skip(data, pos)?)));
            match &item {
                Ok((_, span)) => pos = span.end,
                Err(_) => left = 0,
            }
            Some(item)
        })
    }

    /// The entries of a map (any keys), read one by one like [`Seq::iter`].
    pub fn pairs(&self) -> impl Iterator<Item = Result<(Spanned<'a>, Spanned<'a>), DecodeError>> {
        let mut items = Iter {
            data: self.data,
            pos: self.start,
            last: false,
            left: self.len.saturating_mul(2),
        };
        std::iter::from_fn(move || {
            let key = match items.next()? {
                Ok(k) => k,
                Err(e) => return Some(Err(e)),
            };
            Some(items.next()?.map(|v| (key, v)))
        })
    }

    /// The value of a string key in a map (first match). The entries before it are walked;
    /// the value itself is not, so a value cut short shows only when it is read.
    pub fn get(&self, key: &str) -> Result<Option<Spanned<'a>>, DecodeError> {
        for pair in self.pairs() {
            let (k, v) = pair?;
            if matches!(k.value, Lazy::Str(s) if s == key) {
                return Ok(Some(v));
            }
        }
        Ok(None)
    }
}

/// The items of an array as [`Seq::iter`] reads them.
#[derive(Debug, Clone)]
pub struct Iter<'a> {
    data: &'a [u8],
    /// Where the last item read starts (`last`), or where the next starts.
    pos: usize,
    last: bool,
    left: usize,
}

impl<'a> Iterator for Iter<'a> {
    type Item = Result<Spanned<'a>, DecodeError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.left == 0 {
            return None;
        }
        self.left -= 1;
        if self.last {
            match skip(self.data, self.pos) {
                Ok(end) => self.pos = end,
                Err(e) => {
                    self.left = 0;
                    return Some(Err(e));
                }
            }
        }
        self.last = true;
        let item = read(self.data, self.pos);
        if item.is_err() {
            self.left = 0;
        }
        Some(item)
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        (0, Some(self.left))
    }
}

/// The entries of a map with string keys, read in one pass (values not walked).
#[derive(Debug, Clone, Default)]
pub struct Fields<'a> {
    entries: Vec<(&'a str, Spanned<'a>)>,
    /// True when an entry was left out (its key is not a string).
    left_out: bool,
}

impl<'a> Fields<'a> {
    /// The value of `key` (first match).
    pub fn get(&self, key: &str) -> Option<Spanned<'a>> {
        self.entries
            .iter()
            .find(|(k, _)| *k == key)
            .map(|(_, v)| *v)
    }

    /// True when every key of the map is a string and none is repeated: then [`Fields::get`]
    /// finds what a lookup in the decoded map's JSON form finds (which keeps a repeated key's
    /// last value, and tags maps with other keys).
    pub fn is_plain(&self) -> bool {
        !self.left_out
            && self
                .entries
                .iter()
                .enumerate()
                .all(|(i, (k, _))| self.entries[..i].iter().all(|(other, _)| other != k))
    }
}

impl<'a> Seq<'a> {
    /// The entries of a map in one pass; entries whose key is not a string are left out.
    pub fn fields(&self) -> Result<Fields<'a>, DecodeError> {
        let mut out = Vec::with_capacity(self.len.min(self.data.len()));
        let mut last = None;
        let mut left_out = false;
        for pair in self.pairs() {
            let (k, v) = pair?;
            last = Some(v);
            match k.value {
                Lazy::Str(key) => out.push((key, v)),
                _ => left_out = true,
            }
        }
        // Every value is walked, the last one too (a value cut short is an error here).
        if let Some(v) = last {
            v.raw()?;
        }
        Ok(Fields {
            entries: out,
            left_out,
        })
    }
}

impl<'a> Spanned<'a> {
    /// Where the value starts in the data it was read from.
    pub fn offset(&self) -> usize {
        self.pos
    }

    /// Where the value starts in `outer`, a buffer its data is a part of (e.g. a checkpoint
    /// blob, for a value read from an ext payload inside it).
    pub fn raw_start(&self, outer: &[u8]) -> usize {
        self.data.as_ptr() as usize - outer.as_ptr() as usize + self.pos
    }

    /// The value's encoded bytes (walks it once to find its end).
    pub fn raw(&self) -> Result<&'a [u8], DecodeError> {
        Ok(&self.data[self.pos..skip(self.data, self.pos)?])
    }

    /// The string, if this is one.
    pub fn as_str(&self) -> Option<&'a str> {
        match self.value {
            Lazy::Str(s) => Some(s),
            _ => None,
        }
    }

    /// `self[key]` when this is a map.
    pub fn get(&self, key: &str) -> Result<Option<Spanned<'a>>, DecodeError> {
        match self.value {
            Lazy::Map(m) => m.get(key),
            _ => Ok(None),
        }
    }

    /// The items when this is an array.
    pub fn items(&self) -> Result<Option<Vec<Spanned<'a>>>, DecodeError> {
        match self.value {
            Lazy::Array(a) => a.items().map(Some),
            _ => Ok(None),
        }
    }
}

/// The deepest nesting [`check`] accepts: the limit of [`super::msgpack::decode`].
const MAX_DEPTH: usize = 256;

/// Checks that `data` is one complete msgpack document that [`super::msgpack::decode`]
/// accepts, without building anything: for data it refuses, the same error (kind and offset,
/// offsets inside an extension counted from its payload) in the same order. What lets a
/// command read a large blob in place and still refuse exactly what a full decode refuses.
pub fn check(data: &[u8]) -> Result<(), DecodeError> {
    let mut c = Checker { data, pos: 0 };
    c.value(0)?;
    if c.pos != data.len() {
        return Err(DecodeError::TrailingBytes {
            count: data.len() - c.pos,
        });
    }
    Ok(())
}

/// [`super::msgpack::decode`]'s reader, step for step, keeping nothing.
struct Checker<'a> {
    data: &'a [u8],
    pos: usize,
}

impl<'a> Bytes<'a> for Checker<'a> {
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

impl<'a> Checker<'a> {
    fn value(&mut self, depth: usize) -> Result<(), DecodeError> {
        if depth > MAX_DEPTH {
            return Err(DecodeError::TooDeep);
        }
        let at = self.pos;
        let m = self.take(1)?[0];
        match m {
            0x00..=0x7f | 0xe0..=0xff | 0xc0 | 0xc2 | 0xc3 => {}
            0x80..=0x8f => self.map(usize::from(m & 0x0f), depth)?,
            0x90..=0x9f => self.array(usize::from(m & 0x0f), depth)?,
            0xa0..=0xbf => self.string(usize::from(m & 0x1f))?,
            0xc1 => {
                return Err(DecodeError::BadMarker {
                    byte: m,
                    offset: at,
                })
            }
            0xc4..=0xc6 => {
                let n = self.len(1 << (m - 0xc4))?;
                self.take(n)?;
            }
            0xc7..=0xc9 => {
                let n = self.len(1 << (m - 0xc7))?;
                self.ext(n, depth)?;
            }
            0xca => {
                self.be(4)?;
            }
            0xcb => {
                self.be(8)?;
            }
            0xcc..=0xcf => {
                self.be(1 << (m - 0xcc))?;
            }
            0xd0..=0xd3 => {
                self.be(1 << (m - 0xd0))?;
            }
            0xd4..=0xd8 => self.ext(1 << (m - 0xd4), depth)?,
            0xd9..=0xdb => {
                let n = self.len(1 << (m - 0xd9))?;
                self.string(n)?;
            }
            0xdc | 0xdd => {
                let n = self.len(if m == 0xdc { 2 } else { 4 })?;
                self.array(n, depth)?;
            }
            0xde | 0xdf => {
                let n = self.len(if m == 0xde { 2 } else { 4 })?;
                self.map(n, depth)?;
            }
        }
        Ok(())
    }

    fn string(&mut self, n: usize) -> Result<(), DecodeError> {
        let at = self.pos;
        let bytes = self.take(n)?;
        simdutf8::basic::from_utf8(bytes).map_err(|_| DecodeError::BadUtf8 { offset: at })?;
        Ok(())
    }

    fn array(&mut self, n: usize, depth: usize) -> Result<(), DecodeError> {
        if n > self.data.len() - self.pos {
            return Err(DecodeError::Truncated { offset: self.pos });
        }
        for _ in 0..n {
            self.value(depth + 1)?;
        }
        Ok(())
    }

    fn map(&mut self, n: usize, depth: usize) -> Result<(), DecodeError> {
        if n.saturating_mul(2) > self.data.len() - self.pos {
            return Err(DecodeError::Truncated { offset: self.pos });
        }
        for _ in 0..n {
            self.value(depth + 1)?;
            self.value(depth + 1)?;
        }
        Ok(())
    }

    fn ext(&mut self, n: usize, depth: usize) -> Result<(), DecodeError> {
        let code = self.take(1)?[0] as i8;
        let body = self.take(n)?;
        if !(0..=super::msgpack::MAX_EXT_CODE).contains(&code) {
            return Err(DecodeError::UnknownExt { code });
        }
        let mut inner = Checker { data: body, pos: 0 };
        inner.value(depth + 1)?;
        if inner.pos != body.len() {
            return Err(DecodeError::TrailingBytes {
                count: body.len() - inner.pos,
            });
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::codec::msgpack::{encode, Value};

    #[test]
    fn reads_in_place() {
        let v = Value::map(vec![
            (Value::str("ts"), Value::str("2026-12-01")),
            (Value::str("n"), Value::int(-300)),
            (
                Value::str("list"),
                Value::array(vec![Value::str("a"), Value::ext(5, Value::Nil)]),
            ),
        ]);
        let bytes = encode(&v);
        let r = root(&bytes).expect("root");
        assert_eq!(
            r.get("ts").expect("ok").and_then(|s| s.as_str()),
            Some("2026-12-01")
        );
        assert!(matches!(
            r.get("n").expect("ok").map(|s| s.value),
            Some(Lazy::Int(-300))
        ));
        let items = r
            .get("list")
            .expect("ok")
            .expect("present")
            .items()
            .expect("ok")
            .expect("array");
        assert_eq!(items.len(), 2);
        assert!(matches!(items[1].value, Lazy::Ext(5, [0xc0])));
        assert!(r.get("missing").expect("ok").is_none());
        assert_eq!(r.raw().expect("raw").len(), bytes.len());
        // Item by item: the first items of a list read even when a later one is cut off.
        let list = root(&bytes)
            .expect("root")
            .get("list")
            .expect("ok")
            .expect("present");
        let Lazy::Array(seq) = list.value else {
            panic!("an array")
        };
        assert_eq!(seq.iter().count(), 2);
        let cut = &bytes[..bytes.len() - 1];
        let Lazy::Array(seq) = root(cut)
            .expect("root")
            .get("list")
            .expect("ok")
            .expect("present")
            .value
        else {
            panic!("an array")
        };
        let mut items = seq.iter();
        assert_eq!(
            items.next().and_then(|i| i.ok()).and_then(|i| i.as_str()),
            Some("a")
        );
        assert!(items.next().is_some_and(|i| i.is_err()));
        assert!(items.next().is_none());
        assert!(root(&bytes[..bytes.len() - 2])
            .and_then(|r| r.raw().map(<[u8]>::len))
            .is_err());
    }

    /// `check` refuses exactly what `decode` refuses, with the same error, on every
    /// truncation and on single-byte corruptions of a document with every kind of value.
    #[test]
    fn check_agrees_with_decode() {
        use crate::codec::msgpack::decode;
        let v = Value::map(vec![
            (Value::str("s"), Value::str("héllo")),
            (Value::str("long"), Value::str("x".repeat(40))),
            (Value::str("i"), Value::int(-300)),
            (Value::str("u"), Value::int(70_000)),
            (Value::str("f"), Value::F64(1.5)),
            (Value::str("b"), Value::Bool(true)),
            (Value::str("n"), Value::Nil),
            (
                Value::str("list"),
                Value::array(vec![
                    Value::str("a"),
                    Value::ext(5, Value::array(vec![Value::str("m"), Value::int(1)])),
                    Value::ext(0, Value::Nil),
                ]),
            ),
            (
                Value::str("bin"),
                Value::Bin(crate::codec::msgpack::Bin {
                    bytes: vec![1, 2, 3],
                    marker: None,
                }),
            ),
        ]);
        let bytes = encode(&v);
        let same = |data: &[u8]| assert_eq!(check(data).err(), decode(data).err(), "{data:02x?}");
        same(&bytes);
        for cut in 0..bytes.len() {
            same(&bytes[..cut]);
        }
        let mut extra = bytes.clone();
        extra.push(0xc0);
        same(&extra);
        for at in 0..bytes.len() {
            for byte in [
                0x00, 0x7f, 0x91, 0xc1, 0xd4, 0xdc, 0xdf, 0xff, 0xa3, 0xc7, 0xd9, 0x80,
            ] {
                let mut b = bytes.clone();
                b[at] = byte;
                same(&b);
            }
        }
        // Too deep: 300 nested arrays.
        let mut deep = vec![0x91; 300];
        deep.push(0xc0);
        same(&deep);
    }
}
