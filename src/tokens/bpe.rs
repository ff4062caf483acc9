//! tiktoken's byte-pair encoding, counting only: the rank table of an encoding and
//! tiktoken's `_byte_pair_merge`, merge for merge.
//!
//! The tables are tiktoken's own token lists, committed in `data/tiktoken/` as the tokens'
//! bytes in rank order, each after its length, gzipped (1.5 MB for o200k_base and cl100k_base
//! together; fixtures/bpe_files.py rebuilds tiktoken's `.tiktoken` files from them, to the
//! byte, and checks their sha256). At first use a list is unzipped and indexed by an
//! open-addressing hash table of ranks (~6 MB for o200k, ~20 ms).

use std::io::Read;

use anyhow::{ensure, Context, Result};

/// A token's rank (its id): lower ranks merge first.
pub type Rank = u32;

/// The rank table of an encoding: token bytes → rank.
///
/// Lookups are what counting spends its time on, and they are random accesses: the table is
/// kept small so that more of it stays in the caches. A slot is 8 bytes (the rank, the key's
/// length and 24 bits of its hash), so a key that is no token is mostly rejected by one slot;
/// a hit is confirmed against the token's first 8 bytes, kept by rank (frequent tokens have
/// low ranks, so the often-read part of that array is small), and longer tokens against their
/// stored bytes. Two-byte keys (the first round of every merge) are read from a plain
/// 256 × 256 array.
pub struct Ranks {
    /// The token list as stored: every token's length (one byte) and bytes, in rank order.
    bytes: Vec<u8>,
    /// Where token `r`'s bytes start in `bytes`; they end one byte (the next length) before
    /// `starts[r + 1]`.
    starts: Vec<u32>,
    /// The first 8 bytes of token `r`, little-endian, zero-padded.
    heads: Vec<u64>,
    /// Open addressing, linear probing, at most 80% full: 0 is an empty slot, otherwise
    /// `(rank + 1) << 32 | len << 24 | (hash & 0xff_ffff)`.
    slots: Vec<u64>,
    /// `64 - log2(slots.len())`: a slot index is the hash's high bits.
    shift: u32,
    /// The rank of each two-byte token, by `first << 8 | second`; `Rank::MAX` for none.
    pairs: Vec<Rank>,
    /// A blocked Bloom filter of the tokens (256 KiB; 3 bits in one word per token): most
    /// lookups in a merge are of keys that are no token, and this rejects ~98% of them
    /// without touching the slots.
    filter: Vec<u64>,
}

/// Words of [`Ranks::filter`].
const FILTER_WORDS: usize = 1 << 15;

/// The bits a key with hash `h` sets in its filter word (`filter[h >> 49]`): three bit
/// positions taken from hash bits that neither the slot index nor the slot's check uses.
#[inline(always)]
fn filter_bits(h: u64) -> u64 {
    1 << ((h >> 24) & 63) | 1 << ((h >> 30) & 63) | 1 << ((h >> 36) & 63)
}

/// The longest key the table can hold (the list and the slots keep lengths in 8 bits).
const KEY_MAX: usize = 255;

/// The first 8 bytes of a key as a little-endian number, zero-padded: two overlapping loads
/// of 4 (or 2) bytes, not a call to `memcpy` for a copy of variable length.
#[inline(always)]
fn head(key: &[u8]) -> u64 {
    let n = key.len();
    let u32_at = |i: usize| u32::from_le_bytes([key[i], key[i + 1], key[i + 2], key[i + 3]]) as u64;
    let u16_at = |i: usize| u16::from_le_bytes([key[i], key[i + 1]]) as u64;
    match n {
        8.. => u64::from_le_bytes([
            key[0], key[1], key[2], key[3], key[4], key[5], key[6], key[7],
        ]),
        4..=7 => u32_at(0) | u32_at(n - 4) << (8 * (n - 4)),
        2..=3 => u16_at(0) | u16_at(n - 2) << (8 * (n - 2)),
        1 => key[0] as u64,
        0 => 0,
    }
}

/// The hash of a key whose first 8 bytes are `head`: multiply and rotate (as FxHash), then
/// the high bits (which pick the slot) folded with the low ones.
#[inline(always)]
fn hash(head: u64, key: &[u8]) -> u64 {
    const K: u64 = 0xf135_7aea_2e62_a9c5;
    let mut h = (head ^ ((key.len() as u64) << 58)).wrapping_mul(K);
    if key.len() > 8 {
        for c in key[8..].chunks(8) {
            let mut w = [0u8; 8];
            w[..c.len()].copy_from_slice(c);
            h = (h.rotate_left(26) ^ u64::from_le_bytes(w)).wrapping_mul(K);
        }
    }
    (h ^ (h >> 29)).wrapping_mul(K)
}

/// The low 32 bits of a slot for a key of `len` bytes with hash `h`.
#[inline(always)]
fn check(len: usize, h: u64) -> u32 {
    (len as u32) << 24 | (h as u32 & 0xff_ffff)
}

impl Ranks {
    /// Reads a gzipped token list (see [`Ranks::from_packed`]), unzipped into one buffer
    /// reserved once, which the table then keeps: no large buffer is freed (glibc would keep
    /// such memory from then on).
    pub fn from_packed_gz(gz: &[u8]) -> Result<Ranks> {
        // The gzip trailer ends with the unzipped size (mod 2^32).
        let size = gz
            .last_chunk::<4>()
            .map_or(0, |s| u32::from_le_bytes(*s) as usize);
        let mut packed = Vec::with_capacity(size.min(1 << 26) + 64);
        flate2::read::GzDecoder::new(gz)
            .read_to_end(&mut packed)
            .context("cannot unzip the table")?;
        Ranks::from_packed(packed)
    }

    /// Reads a token list: for every rank from 0, the token's length (one byte) and bytes
    /// (data/tiktoken/README.md).
    pub fn from_packed(packed: Vec<u8>) -> Result<Ranks> {
        let total = u32::try_from(packed.len()).context("the table is too large")?;
        // starts[r]: where token r's bytes begin, after its length byte; the last entry is
        // one past the end, as if another length byte followed.
        let mut starts = Vec::with_capacity(packed.len() / 4 + 2);
        let mut at = 0usize;
        while at < packed.len() {
            let len = packed[at] as usize;
            ensure!(len > 0, "token {} is empty", starts.len());
            ensure!(
                at + 1 + len <= packed.len(),
                "token {} is cut short",
                starts.len()
            );
            starts.push(at as u32 + 1);
            at += 1 + len;
        }
        starts.push(total + 1);
        let n = starts.len() - 1;
        ensure!(n > 256, "the table has {n} tokens");
        let bits = (n + n / 4).next_power_of_two().trailing_zeros().max(4);
        let mut ranks = Ranks {
            bytes: packed,
            starts,
            heads: Vec::with_capacity(n),
            slots: vec![0; 1 << bits],
            shift: 64 - bits,
            pairs: vec![Rank::MAX; 1 << 16],
            filter: vec![0; FILTER_WORDS],
        };
        let mask = ranks.slots.len() - 1;
        for r in 0..n as Rank {
            let token = ranks.token(r);
            let hd = head(token);
            let h = hash(hd, token);
            let want = check(token.len(), h);
            let pair = match *token {
                [a, b] => Some((a as usize) << 8 | b as usize),
                _ => None,
            };
            let mut i = (h >> ranks.shift) as usize;
            while ranks.slots[i] != 0 {
                let s = ranks.slots[i];
                let other = (s >> 32) as u32 - 1;
                ensure!(
                    s as u32 != want || ranks.token(other) != token,
                    "token {r} repeats token {other}"
                );
                i = (i + 1) & mask;
            }
            ranks.slots[i] = (r as u64 + 1) << 32 | want as u64;
            ranks.filter[(h >> (64 - FILTER_WORDS.trailing_zeros())) as usize] |= filter_bits(h);
            ranks.heads.push(hd);
            if let Some(p) = pair {
                ranks.pairs[p] = r;
            }
        }
        for b in 0..=255u8 {
            ensure!(ranks.rank(&[b]).is_some(), "byte {b} has no token");
        }
        Ok(ranks)
    }

    /// How many tokens the table has.
    pub fn len(&self) -> usize {
        self.starts.len() - 1
    }

    /// Whether the table has no token (never, once read).
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The bytes of token `r` (`r` < [`Ranks::len`]).
    #[inline]
    pub fn token(&self, r: Rank) -> &[u8] {
        let r = r as usize;
        &self.bytes[self.starts[r] as usize..self.starts[r + 1] as usize - 1]
    }

    /// The rank of a token, if `bytes` is one.
    #[inline]
    pub fn rank(&self, bytes: &[u8]) -> Option<Rank> {
        if bytes.len() > KEY_MAX {
            return None;
        }
        let hd = head(bytes);
        let h = hash(hd, bytes);
        let bits = filter_bits(h);
        if self.filter[(h >> (64 - FILTER_WORDS.trailing_zeros())) as usize] & bits != bits {
            return None;
        }
        let want = check(bytes.len(), h);
        let mask = self.slots.len() - 1;
        let mut i = (h >> self.shift) as usize;
        loop {
            let s = self.slots[i];
            if s == 0 {
                return None;
            }
            if s as u32 == want {
                let r = (s >> 32) as u32 - 1;
                if self.heads[r as usize] == hd
                    && (bytes.len() <= 8 || self.token(r)[8..] == bytes[8..])
                {
                    return Some(r);
                }
            }
            i = (i + 1) & mask;
        }
    }

    /// The share of keys that are no token which [`Ranks::filter`] lets through (each word
    /// passes a random key with probability (bits set / 64)³).
    #[cfg(test)]
    pub(crate) fn filter_pass_rate(&self) -> f64 {
        let p = |w: &u64| (w.count_ones() as f64 / 64.0).powi(3);
        self.filter.iter().map(p).sum::<f64>() / self.filter.len() as f64
    }

    /// The rank of `bytes`, or `Rank::MAX` when it is no token (tiktoken's sentinel).
    #[inline]
    fn rank_or_max(&self, bytes: &[u8]) -> Rank {
        self.rank(bytes).unwrap_or(Rank::MAX)
    }

    /// The rank of the two-byte token `a b`, or `Rank::MAX`.
    #[inline]
    fn pair(&self, a: u8, b: u8) -> Rank {
        self.pairs[(a as usize) << 8 | b as usize]
    }
}

/// Pieces longer than this are merged with a heap ([`merge_count_heap`]) instead of tiktoken's
/// scan of all parts per merge, which is quadratic in the piece's length.
const SCAN_MAX: usize = 128;

/// How many tokens tiktoken encodes a piece (one match of the pre-tokenizer) into: one if
/// the piece is a token, else the parts `_byte_pair_merge` leaves. `rank` looks keys up.
pub fn count_piece(
    ranks: &Ranks,
    piece: &[u8],
    parts: &mut Vec<(u32, Rank)>,
    rank: &mut impl FnMut(&[u8]) -> Rank,
) -> usize {
    if piece.len() <= 1 || ranks.rank(piece).is_some() {
        return piece.len().min(1);
    }
    if piece.len() > SCAN_MAX {
        return merge_count_heap(ranks, piece, rank);
    }
    merge_count(ranks, piece, parts, rank)
}

/// tiktoken's `_byte_pair_merge` (src/lib.rs), returning the number of parts: `parts` holds
/// (start, rank of the pair starting there); the lowest rank merges first, the leftmost of
/// equal ranks first. `piece` has at least 2 bytes; `rank` looks up keys of 3 bytes or more.
pub fn merge_count(
    ranks: &Ranks,
    piece: &[u8],
    parts: &mut Vec<(u32, Rank)>,
    rank: &mut impl FnMut(&[u8]) -> Rank,
) -> usize {
    parts.clear();
    let mut min_rank: (Rank, usize) = (Rank::MAX, usize::MAX);
    for i in 0..piece.len() - 1 {
        let r = ranks.pair(piece[i], piece[i + 1]);
        if r < min_rank.0 {
            min_rank = (r, i);
        }
        parts.push((i as u32, r));
    }
    parts.push((piece.len() as u32 - 1, Rank::MAX));
    parts.push((piece.len() as u32, Rank::MAX));
    let mut get_rank = |parts: &[(u32, Rank)], i: usize| {
        if i + 3 < parts.len() {
            rank(&piece[parts[i].0 as usize..parts[i + 3].0 as usize])
        } else {
            Rank::MAX
        }
    };
    while min_rank.0 != Rank::MAX {
        let i = min_rank.1;
        if i > 0 {
            parts[i - 1].1 = get_rank(parts, i - 1);
        }
        parts[i].1 = get_rank(parts, i);
        parts.remove(i + 1);
        min_rank = (Rank::MAX, usize::MAX);
        for (i, &(_, r)) in parts[..parts.len() - 1].iter().enumerate() {
            if r < min_rank.0 {
                min_rank = (r, i);
            }
        }
    }
    parts.len() - 1
}

/// The same merges as [`merge_count`] in O(n log n): the pairs wait in a heap ordered by
/// (rank, start), which is tiktoken's order (lowest rank, then leftmost); a popped pair whose
/// rank changed since it was pushed (or whose part was merged away: its rank is then
/// `Rank::MAX`) is skipped. A part's pair only grows, and a rank names one byte string, so a
/// stale entry never looks current. Memory: 12 bytes per byte of the piece and 8 per pair
/// waiting in the heap (positions are `u32`: a piece comes from one stored string, and SQLite
/// stores at most 1 GB in a value).
pub fn merge_count_heap(
    ranks: &Ranks,
    piece: &[u8],
    rank_of: &mut impl FnMut(&[u8]) -> Rank,
) -> usize {
    use std::cmp::Reverse;
    use std::collections::BinaryHeap;
    let n = piece.len();
    let end = n as u32;
    // next[i] / prev[i]: where the part starting at i ends / the previous part starts (only
    // part starts are kept up to date; `u32::MAX` before the first).
    let mut next: Vec<u32> = (1..=end).collect();
    let mut prev: Vec<u32> = (0..end).map(|i| i.wrapping_sub(1)).collect();
    let mut rank: Vec<Rank> = piece
        .windows(2)
        .map(|w| ranks.pair(w[0], w[1]))
        .chain([Rank::MAX])
        .collect();
    // (rank << 32 | start), smallest first.
    let mut heap: BinaryHeap<Reverse<u64>> = rank
        .iter()
        .enumerate()
        .filter(|(_, &r)| r != Rank::MAX)
        .map(|(i, &r)| Reverse((r as u64) << 32 | i as u64))
        .collect();
    let mut parts = n;
    // The rank of the pair starting at part `a` (its part and the next), or MAX.
    let mut pair = |next: &[u32], a: u32| {
        let b = next[a as usize];
        if b >= end {
            return Rank::MAX;
        }
        rank_of(&piece[a as usize..next[b as usize] as usize])
    };
    while let Some(Reverse(entry)) = heap.pop() {
        let (r, a) = ((entry >> 32) as Rank, entry as u32);
        if rank[a as usize] != r {
            continue;
        }
        // Merge part a with the next one (b), which is gone from now on.
        let b = next[a as usize];
        rank[b as usize] = Rank::MAX;
        next[a as usize] = next[b as usize];
        if next[a as usize] < end {
            prev[next[a as usize] as usize] = a;
        }
        parts -= 1;
        for p in [a, prev[a as usize]] {
            if p >= end {
                continue;
            }
            rank[p as usize] = pair(&next, p);
            if rank[p as usize] != Rank::MAX {
                heap.push(Reverse((rank[p as usize] as u64) << 32 | p as u64));
            }
        }
    }
    parts
}

/// Pieces up to this many bytes are kept in a [`Counter`]'s piece cache.
const PIECE_MAX: usize = 16;
/// Sets of the piece cache (two entries of 32 bytes each): 256 KiB.
const PIECE_SETS: usize = 1 << 12;
/// Entries of the rank memo (16 bytes each): 256 KiB.
const MEMO_ENTRIES: usize = 1 << 14;

/// One thread's state for counting: where the rank table (6 MB, a random access per lookup,
/// mostly a cache miss) is kept from being read too often, in 512 KiB that stay in a core's
/// cache.
///
/// - The piece cache: the token counts of recently seen pieces of up to 16 bytes. Texts
///   repeat their words, and a repeated piece that is no token skips its merge. Two-way
///   set-associative: a new piece takes the first way and moves the old one to the second.
/// - The rank memo: the results of recent lookups of keys up to 8 bytes (found or not), which
///   merges repeat (the same characters and word parts, over and over). Direct-mapped.
pub struct Counter {
    pieces: Vec<PieceEntry>,
    memo: Vec<MemoEntry>,
    parts: Vec<(u32, Rank)>,
}

/// One cached piece: its bytes (zero-padded), length (0: empty) and token count.
#[derive(Clone, Copy, Default)]
#[repr(C, align(32))]
struct PieceEntry {
    key: [u64; 2],
    len: u32,
    count: u32,
}

/// One remembered lookup: the key's bytes (zero-padded), its length (0: empty) and rank.
#[derive(Clone, Copy, Default)]
#[repr(C, align(16))]
struct MemoEntry {
    head: u64,
    len: u32,
    rank: Rank,
}

impl Default for Counter {
    fn default() -> Self {
        Counter {
            pieces: vec![PieceEntry::default(); 2 * PIECE_SETS],
            memo: vec![MemoEntry::default(); MEMO_ENTRIES],
            parts: Vec::new(),
        }
    }
}

/// A multiplier for the caches' hashes (the golden ratio, as Fibonacci hashing).
const GOLDEN: u64 = 0x9e37_79b9_7f4a_7c15;

impl Counter {
    /// [`count_piece`] through the caches. A counter must be used with one table only.
    #[inline]
    pub fn count(&mut self, ranks: &Ranks, piece: &[u8]) -> usize {
        let Counter {
            pieces,
            memo,
            parts,
        } = self;
        let mut rank = |key: &[u8]| Self::memo_rank(memo, ranks, key);
        if piece.len() > PIECE_MAX || piece.len() <= 1 {
            return count_piece(ranks, piece, parts, &mut rank);
        }
        let key = [head(piece), head(piece.get(8..).unwrap_or_default())];
        let len = piece.len() as u32;
        let h = ((key[0] ^ (len as u64) << 59).wrapping_mul(GOLDEN) ^ key[1]).wrapping_mul(GOLDEN);
        let set = (h >> (64 - PIECE_SETS.trailing_zeros())) as usize * 2;
        let ways = &mut pieces[set..set + 2];
        for e in ways.iter() {
            if e.len == len && e.key == key {
                return e.count as usize;
            }
        }
        let count = count_piece(ranks, piece, parts, &mut rank);
        ways[1] = ways[0];
        ways[0] = PieceEntry {
            key,
            len,
            count: count as u32,
        };
        count
    }

    /// The rank of `key` (`Rank::MAX` for none), remembered when the key is short.
    #[inline(always)]
    fn memo_rank(memo: &mut [MemoEntry], ranks: &Ranks, key: &[u8]) -> Rank {
        if key.len() > 8 {
            return ranks.rank_or_max(key);
        }
        let hd = head(key);
        let len = key.len() as u32;
        let h = (hd ^ (len as u64) << 59).wrapping_mul(GOLDEN);
        let e = &mut memo[(h >> (64 - MEMO_ENTRIES.trailing_zeros())) as usize];
        if e.head == hd && e.len == len {
            return e.rank;
        }
        let rank = ranks.rank_or_max(key);
        *e = MemoEntry {
            head: hd,
            len,
            rank,
        };
        rank
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A token list as `data/tiktoken/` stores it.
    fn pack(tokens: &[&[u8]]) -> Vec<u8> {
        tokens
            .iter()
            .flat_map(|t| std::iter::once(t.len() as u8).chain(t.iter().copied()))
            .collect()
    }

    fn table() -> Ranks {
        // A toy table: every byte, then a few merges (ranks follow the order).
        let bytes: Vec<[u8; 1]> = (0..=255u8).map(|b| [b]).collect();
        let mut tokens: Vec<&[u8]> = bytes.iter().map(|b| &b[..]).collect();
        for t in [
            "ab", "aa", "abab", "aaaa", "ba", "bab", "aab", "abc", "cc", "ccc",
        ] {
            tokens.push(t.as_bytes());
        }
        Ranks::from_packed(pack(&tokens)).expect("a table")
    }

    #[test]
    fn heads_are_the_first_eight_bytes() {
        let bytes: Vec<u8> = (1..=12).map(|b| b * 17).collect();
        for n in 0..=12 {
            let mut w = [0u8; 8];
            let k = n.min(8);
            w[..k].copy_from_slice(&bytes[..k]);
            assert_eq!(head(&bytes[..n]), u64::from_le_bytes(w), "{n} bytes");
        }
    }

    #[test]
    fn lookups_and_bad_tables() {
        let t = table();
        assert_eq!(t.len(), 266);
        assert_eq!(t.rank(b"a"), Some(97));
        assert_eq!(t.rank(b"ab"), Some(256));
        assert_eq!(t.rank(b"ccc"), Some(265));
        assert_eq!(t.rank(b"abcd"), None);
        assert_eq!(t.token(259), b"aaaa");
        let bytes: Vec<[u8; 1]> = (0..=255u8).map(|b| [b]).collect();
        let all: Vec<&[u8]> = bytes.iter().map(|b| &b[..]).collect();
        let with = |extra: &[&[u8]]| {
            let mut t = all.clone();
            t.extend_from_slice(extra);
            Ranks::from_packed(pack(&t))
        };
        assert!(with(&[b"xy"]).is_ok());
        assert!(with(&[b"xy", b"xy"]).is_err(), "a repeated token");
        assert!(with(&[b""]).is_err(), "an empty token");
        assert!(
            Ranks::from_packed(pack(&all[1..])).is_err(),
            "a byte missing"
        );
        let mut cut = pack(&all);
        cut.extend([3, b'x']);
        assert!(Ranks::from_packed(cut).is_err(), "cut short");
        assert!(Ranks::from_packed_gz(b"not gzip").is_err());
    }

    #[test]
    fn merges_like_tiktoken() {
        let t = table();
        let mut scratch = Vec::new();
        let mut rank = |key: &[u8]| t.rank_or_max(key);
        // "abab" is a token; "ababab" = abab + ab; "aaaaa" = aaaa + a; "abcc" = ab + cc.
        for (piece, want) in [
            ("abab", 1),
            ("ababab", 2),
            ("aaaaa", 2),
            ("abcc", 2),
            ("xyz", 3),
            ("a", 1),
        ] {
            assert_eq!(
                count_piece(&t, piece.as_bytes(), &mut scratch, &mut rank),
                want,
                "{piece}"
            );
            assert_eq!(
                Counter::default().count(&t, piece.as_bytes()),
                want,
                "{piece}"
            );
        }
        // The heap merges exactly as the scan, on random pieces over a small alphabet.
        let mut seed = 11u64;
        for len in (2..400).chain([1000, 3000]) {
            let piece: Vec<u8> = (0..len)
                .map(|_| {
                    seed = seed
                        .wrapping_mul(6364136223846793005)
                        .wrapping_add(1442695040888963407);
                    b"aabbcx"[(seed >> 33) as usize % 6]
                })
                .collect();
            assert_eq!(
                merge_count_heap(&t, &piece, &mut rank),
                merge_count(&t, &piece, &mut scratch, &mut rank),
                "{}",
                String::from_utf8_lossy(&piece)
            );
        }
    }
}
