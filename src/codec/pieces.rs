//! An encoded value in pieces: bytes of its own, and slices of shared buffers (the stored blob
//! kept messages were read from). What a rewrite hands storage, which writes the pieces one
//! after the other, so a new checkpoint that keeps a 37 MB message list is never assembled
//! in memory.

use std::ops::Range;
use std::sync::Arc;

use super::msgpack::{write_value, Out, Raw};
use super::Value;

/// Kept values shorter than this are copied (a slice costs more than a short copy), unless
/// they continue the slice before them.
const SHARE_FROM: usize = 64;

/// One piece of an encoded value.
#[derive(Debug, Clone)]
enum Piece {
    /// Bytes of its own.
    Owned(Vec<u8>),
    /// A slice of a shared buffer.
    Shared(Arc<Vec<u8>>, Range<usize>),
}

/// An encoded value in pieces (see the module docs).
#[derive(Debug, Clone, Default)]
pub struct Pieces {
    pieces: Vec<Piece>,
    len: usize,
}

/// Encodes a value into pieces (msgpack, as [`super::msgpack::encode`] writes it): large kept
/// values ([`Value::Raw`]) are referenced, not copied, so a 37 MB message list costs no second
/// 37 MB.
pub fn encode_pieces(v: &Value) -> Pieces {
    let mut out = Pieces::default();
    write_value(&mut out, v);
    out
}

impl Pieces {
    /// The length of the whole value in bytes.
    pub fn len(&self) -> usize {
        self.len
    }

    /// True for no bytes at all.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The pieces' bytes, in order.
    pub fn chunks(&self) -> impl Iterator<Item = &[u8]> {
        self.pieces.iter().map(|p| match p {
            Piece::Owned(b) => b.as_slice(),
            Piece::Shared(buf, range) => &buf[range.clone()],
        })
    }

    /// The whole value in one buffer.
    pub fn to_vec(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(self.len);
        self.chunks().for_each(|c| out.extend_from_slice(c));
        out
    }

    fn owned(&mut self) -> &mut Vec<u8> {
        if !matches!(self.pieces.last(), Some(Piece::Owned(_))) {
            self.pieces.push(Piece::Owned(Vec::with_capacity(256)));
        }
        match self.pieces.last_mut() {
            Some(Piece::Owned(b)) => b,
            _ => unreachable!("an owned piece was just pushed"),
        }
    }
}

impl From<Vec<u8>> for Pieces {
    fn from(bytes: Vec<u8>) -> Pieces {
        Pieces {
            len: bytes.len(),
            pieces: vec![Piece::Owned(bytes)],
        }
    }
}

impl Out for Pieces {
    fn push(&mut self, b: u8) {
        self.len += 1;
        self.owned().push(b);
    }

    fn extend_from_slice(&mut self, b: &[u8]) {
        self.len += b.len();
        self.owned().extend_from_slice(b);
    }

    fn raw(&mut self, r: &Raw) {
        let (buf, range) = r.parts();
        // Kept messages are usually neighbours in their blob: one slice covers them all.
        if let Some(Piece::Shared(last, prev)) = self.pieces.last_mut() {
            if Arc::ptr_eq(last, buf) && prev.end == range.start {
                self.len += range.len();
                prev.end = range.end;
                return;
            }
        }
        if range.len() < SHARE_FROM {
            self.extend_from_slice(r.bytes());
        } else {
            self.len += range.len();
            self.pieces.push(Piece::Shared(buf.clone(), range));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::encode_pieces;
    use super::*;
    use crate::codec::msgpack::encode;
    use crate::codec::Value;

    #[test]
    fn pieces_hold_the_same_bytes_as_one_buffer() {
        let big = encode(&Value::str("x".repeat(10_000)));
        let small = encode(&Value::str("short"));
        let buf = Arc::new([big.clone(), small.clone()].concat());
        let v = Value::array(vec![
            Value::Raw(Raw::shared(&buf, 0..big.len()).expect("a value")),
            Value::Raw(Raw::shared(&buf, big.len()..buf.len()).expect("a value")),
            Value::int(7),
        ]);
        let pieces = encode_pieces(&v);
        assert_eq!(pieces.to_vec(), encode(&v));
        assert_eq!(pieces.len(), encode(&v).len());
        // The two neighbours are one shared slice, not copied: header, slice, the rest.
        assert_eq!(pieces.chunks().count(), 3);
        assert!(Raw::shared(&buf, 0..buf.len() + 1).is_err());
    }
}
