//! Fuzzing: memctl against the blobs and rows of an operator's worst day.
//!
//! A deterministic, seeded harness (xorshift; no nightly, no extra crate): every failure is
//! reproduced by its seed, and the input that failed is saved under
//! `target/fuzz-failures/`. Mutants come from the committed corpus `tests/fuzz-corpus/` (blobs
//! of both fixture generations, plus hand-made nasty ones): bit flips, truncation, absurd and
//! off-by-some lengths in msgpack headers (array32 / map32 / str32 / bin32 / ext32 claiming up
//! to 4 GiB), nesting thousands deep, random type tags and ext codes, nodes spliced from other
//! blobs, and structural edits of the decoded value (odd strings of the same length, extreme
//! numbers, duplicate keys…).
//!
//! - `in_process_mutants_never_panic_hang_or_blow_up_memory`: every codec and model entry point
//!   on each mutant, on a worker thread with the default stack: no panic (caught and reported
//!   with the input), no hang (each input is timed), and memory bounded by the input's size (a
//!   counting allocator measures the peak of each input: no allocation is driven by a length a
//!   header claims). Decoded mutants must re-encode to the same bytes (lossless).
//! - `commands_on_mutated_databases_fail_cleanly`: mutated blobs, metadata and type tags written
//!   into copies of the fixtures, then the real binary (read commands, tokens, trim, gc, stats):
//!   exit code 0, 1 or 3, never a panic or a signal, never a hang, one line on stderr on exit 1.
//!
//! Bounded by default (a few seconds each). The long run is `scripts/fuzz.sh --minutes N`,
//! which sets `MEMCTL_FUZZ_SECONDS` (run until the time is up), or set
//! `MEMCTL_FUZZ_MUTANTS` / `MEMCTL_FUZZ_COMMAND_RUNS`, and `MEMCTL_FUZZ_SEED` to replay.

mod common;

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::collections::BTreeMap;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use memctl::codec::msgpack::{self, Value};
use memctl::codec::{ext, json::to_json, lazy};
use memctl::model::checkpoint::{brief_value, message_list};
use memctl::model::outline::{outline_list, read_message, Outline};
use memctl::model::state::{pending_work, PendingWrite};
use memctl::model::{Checkpoint, Message, Metadata};
use memctl::tokens::{approx, openai};

// ------------------------------------------------------------------------------------------
// Knobs
// ------------------------------------------------------------------------------------------

fn env_u64(name: &str) -> Option<u64> {
    let v = std::env::var(name).ok()?;
    Some(
        v.trim()
            .parse()
            .unwrap_or_else(|_| panic!("{name}={v:?} is not a number")),
    )
}

/// The run's seed: `MEMCTL_FUZZ_SEED`, else a fixed one (the bounded run is deterministic).
fn seed() -> u64 {
    env_u64("MEMCTL_FUZZ_SEED").unwrap_or(0x6d65_6d63_746c_0012)
}

/// When set, each test runs until this many seconds have passed (the long run).
fn time_budget() -> Option<Duration> {
    env_u64("MEMCTL_FUZZ_SECONDS").map(Duration::from_secs)
}

/// Runs `n` or more cases, or until the time budget (if any) is spent.
struct Budget {
    min_cases: u64,
    deadline: Option<Instant>,
}

impl Budget {
    fn new(default_cases: u64, var: &str) -> Budget {
        let deadline = time_budget().map(|d| Instant::now() + d);
        let min_cases = env_u64(var).unwrap_or(if deadline.is_some() { 0 } else { default_cases });
        Budget {
            min_cases,
            deadline,
        }
    }

    fn more(&self, done: u64) -> bool {
        match self.deadline {
            Some(d) => Instant::now() < d || done < self.min_cases,
            None => done < self.min_cases,
        }
    }
}

/// Where a test saves the inputs that failed: `target/fuzz-failures/<test>/`, emptied when
/// the test starts.
fn failures_dir(test: &str) -> PathBuf {
    common::root()
        .join("target")
        .join("fuzz-failures")
        .join(test)
}

fn fresh_failures_dir(test: &str) -> PathBuf {
    let dir = failures_dir(test);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("create target/fuzz-failures");
    dir
}

// ------------------------------------------------------------------------------------------
// A seeded xorshift RNG
// ------------------------------------------------------------------------------------------

struct Rng(u64);

impl Rng {
    fn new(seed: u64) -> Rng {
        Rng(seed ^ 0x9e37_79b9_7f4a_7c15 | 1)
    }

    fn next(&mut self) -> u64 {
        // xorshift64*
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    fn below(&mut self, n: usize) -> usize {
        if n == 0 {
            0
        } else {
            (self.next() % n as u64) as usize
        }
    }

    /// True with probability `num / den`.
    fn chance(&mut self, num: u64, den: u64) -> bool {
        self.next() % den < num
    }

    fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }
}

// ------------------------------------------------------------------------------------------
// A counting allocator: the peak bytes live on the fuzzing thread, per input
// ------------------------------------------------------------------------------------------

struct Counting;

thread_local! {
    static LIVE: Cell<isize> = const { Cell::new(0) };
    static PEAK: Cell<isize> = const { Cell::new(0) };
}

fn count(delta: isize) {
    let _ = LIVE.try_with(|live| {
        let now = live.get() + delta;
        live.set(now);
        let _ = PEAK.try_with(|p| {
            if now > p.get() {
                p.set(now);
            }
        });
    });
}

// SAFETY: every call is forwarded to `System` unchanged; the counters are plain thread-local
// cells (const-initialized, no destructor), so counting never allocates or unwinds.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let p = unsafe { System.alloc(layout) };
        if !p.is_null() {
            count(layout.size() as isize);
        }
        p
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        let p = unsafe { System.alloc_zeroed(layout) };
        if !p.is_null() {
            count(layout.size() as isize);
        }
        p
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) };
        count(-(layout.size() as isize));
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let p = unsafe { System.realloc(ptr, layout, new_size) };
        if !p.is_null() {
            count(new_size as isize - layout.size() as isize);
        }
        p
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

/// Starts measuring this thread's peak; returns the baseline.
fn mem_start() -> isize {
    let live = LIVE.with(Cell::get);
    PEAK.with(|p| p.set(live));
    live
}

/// Peak bytes allocated on this thread above `baseline` since [`mem_start`].
fn mem_peak(baseline: isize) -> usize {
    (PEAK.with(Cell::get) - baseline).max(0) as usize
}

/// The most an input of `len` bytes may make memctl allocate at once. Decoding builds a tree
/// and its JSON view (tens of bytes per input byte); a length claimed by a header must add
/// nothing beyond that.
fn memory_bound(len: usize) -> usize {
    256 * len + (4 << 20)
}

// ------------------------------------------------------------------------------------------
// The corpus
// ------------------------------------------------------------------------------------------

/// One committed seed: its file name, the `type` column it goes with (`metadata` for the
/// metadata column) and its bytes.
#[derive(Clone)]
struct Seed {
    name: String,
    type_name: String,
    bytes: Vec<u8>,
}

fn corpus_dir() -> PathBuf {
    common::root().join("tests").join("fuzz-corpus")
}

fn corpus() -> Vec<Seed> {
    let mut seeds = Vec::new();
    for entry in std::fs::read_dir(corpus_dir()).expect("tests/fuzz-corpus exists") {
        let path = entry.expect("corpus entry").path();
        let name = path
            .file_name()
            .and_then(|n| n.to_str())
            .expect("UTF-8 name")
            .to_owned();
        let Some((stem, ext)) = name.rsplit_once('.') else {
            continue;
        };
        let type_name = if stem.starts_with("meta-") {
            "metadata".to_owned()
        } else {
            match ext {
                "msgpack" | "json" | "bytes" | "null" | "pickle" => ext.to_owned(),
                _ => continue, // README.md
            }
        };
        let bytes = std::fs::read(&path).expect("read corpus file");
        seeds.push(Seed {
            name,
            type_name,
            bytes,
        });
    }
    seeds.sort_by(|a, b| a.name.cmp(&b.name));
    assert!(seeds.len() >= 20, "the corpus has {} files", seeds.len());
    seeds
}

// ------------------------------------------------------------------------------------------
// A msgpack structure walker of its own (so the mutator does not share the decoder's bugs)
// ------------------------------------------------------------------------------------------

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum NodeKind {
    Scalar,
    Str,
    Bin,
    Array,
    Map,
    Ext,
}

/// A value's header: where it starts, what it is, how many header bytes (marker, length, ext
/// code), the length it claims (bytes or items) and how many values follow inside it.
#[derive(Debug, Clone, Copy)]
struct Node {
    at: usize,
    kind: NodeKind,
    header: usize,
    claimed: u64,
}

fn be(data: &[u8], at: usize, n: usize) -> Option<u64> {
    let bytes = data.get(at..at.checked_add(n)?)?;
    Some(bytes.iter().fold(0u64, |a, b| (a << 8) | u64::from(*b)))
}

/// `(kind, header bytes, claimed length, payload bytes, child values)` of the value at `at`.
fn header(data: &[u8], at: usize) -> Option<(NodeKind, usize, u64, u64, u64)> {
    use NodeKind::*;
    let m = *data.get(at)?;
    Some(match m {
        0x00..=0x7f | 0xe0..=0xff | 0xc0 | 0xc2 | 0xc3 => (Scalar, 1, 0, 0, 0),
        0x80..=0x8f => {
            let n = u64::from(m & 0x0f);
            (Map, 1, n, 0, 2 * n)
        }
        0x90..=0x9f => {
            let n = u64::from(m & 0x0f);
            (Array, 1, n, 0, n)
        }
        0xa0..=0xbf => {
            let n = u64::from(m & 0x1f);
            (Str, 1, n, n, 0)
        }
        0xc4..=0xc6 => {
            let w = 1usize << (m - 0xc4);
            let n = be(data, at + 1, w)?;
            (Bin, 1 + w, n, n, 0)
        }
        0xc7..=0xc9 => {
            let w = 1usize << (m - 0xc7);
            let n = be(data, at + 1, w)?;
            (Ext, 2 + w, n, 0, 1)
        }
        0xca => (Scalar, 5, 0, 0, 0),
        0xcb => (Scalar, 9, 0, 0, 0),
        0xcc..=0xcf => (Scalar, 1 + (1 << (m - 0xcc)), 0, 0, 0),
        0xd0..=0xd3 => (Scalar, 1 + (1 << (m - 0xd0)), 0, 0, 0),
        0xd4..=0xd8 => (Ext, 2, 1 << (m - 0xd4), 0, 1),
        0xd9..=0xdb => {
            let w = 1usize << (m - 0xd9);
            let n = be(data, at + 1, w)?;
            (Str, 1 + w, n, n, 0)
        }
        0xdc | 0xdd => {
            let w = if m == 0xdc { 2 } else { 4 };
            let n = be(data, at + 1, w)?;
            (Array, 1 + w, n, 0, n)
        }
        0xde | 0xdf => {
            let w = if m == 0xde { 2 } else { 4 };
            let n = be(data, at + 1, w)?;
            (Map, 1 + w, n, 0, 2 * n)
        }
        0xc1 => return None,
    })
}

/// Every value header reachable in `data` (best effort: stops where the data stops making
/// sense), at most `limit`.
fn walk(data: &[u8], limit: usize) -> Vec<Node> {
    let mut nodes = Vec::new();
    let mut stack: Vec<u64> = vec![1];
    let mut pos = 0usize;
    while let Some(left) = stack.last_mut() {
        if *left == 0 {
            stack.pop();
            continue;
        }
        *left -= 1;
        if nodes.len() >= limit || stack.len() > 2000 {
            break;
        }
        let Some((kind, hdr, claimed, payload, children)) = header(data, pos) else {
            break;
        };
        if pos + hdr > data.len() {
            break;
        }
        nodes.push(Node {
            at: pos,
            kind,
            header: hdr,
            claimed,
        });
        let Some(next) = (pos + hdr).checked_add(payload as usize) else {
            break;
        };
        if next > data.len() {
            break;
        }
        pos = next;
        if children > 0 {
            stack.push(children);
        }
    }
    nodes
}

/// Where the value at `at` ends, by the same walk.
fn end_of(data: &[u8], at: usize) -> Option<usize> {
    let mut stack: Vec<u64> = vec![1];
    let mut pos = at;
    let mut steps = 0u32;
    while let Some(left) = stack.last_mut() {
        if *left == 0 {
            stack.pop();
            continue;
        }
        *left -= 1;
        steps += 1;
        if steps > 1_000_000 || stack.len() > 2000 {
            return None;
        }
        let (_, hdr, _, payload, children) = header(data, pos)?;
        pos = (pos + hdr).checked_add(usize::try_from(payload).ok()?)?;
        if pos > data.len() {
            return None;
        }
        if children > 0 {
            stack.push(children);
        }
    }
    Some(pos)
}

// ------------------------------------------------------------------------------------------
// Mutators
// ------------------------------------------------------------------------------------------

const INTERESTING_BYTES: [u8; 24] = [
    0x00, 0x01, 0x7f, 0x80, 0x8f, 0x90, 0x9f, 0xa0, 0xbf, 0xc0, 0xc1, 0xc4, 0xc6, 0xc7, 0xc9, 0xd4,
    0xd8, 0xd9, 0xdb, 0xdc, 0xdd, 0xde, 0xdf, 0xff,
];

/// Lengths a hostile header claims.
fn absurd_len(rng: &mut Rng, data_len: usize) -> u32 {
    let random = rng.next() as u32;
    *rng.pick(&[
        u32::MAX,
        u32::MAX - 1,
        0x8000_0000,
        0x7fff_ffff,
        0x0100_0000,
        0xffff,
        0x1_0000,
        (data_len as u32).saturating_mul(2),
        data_len as u32,
        (data_len as u32).saturating_add(1),
        random,
    ])
}

/// The 32-bit-length header of a value of `kind` claiming `n` (`code` for ext).
fn wide_header(kind: NodeKind, n: u32, code: u8) -> Vec<u8> {
    let marker = match kind {
        NodeKind::Array => 0xdd,
        NodeKind::Map => 0xdf,
        NodeKind::Str => 0xdb,
        NodeKind::Bin => 0xc6,
        NodeKind::Ext => 0xc9,
        NodeKind::Scalar => 0xdd,
    };
    let mut h = vec![marker];
    h.extend_from_slice(&n.to_be_bytes());
    if kind == NodeKind::Ext {
        h.push(code);
    }
    h
}

/// A deep nest of `depth` levels around `inner`.
fn nest(rng: &mut Rng, depth: usize, inner: &[u8]) -> Vec<u8> {
    match rng.below(4) {
        0 => {
            let mut v = vec![0x91; depth];
            v.extend_from_slice(inner);
            v
        }
        1 => {
            let mut v = Vec::with_capacity(depth * 3 + inner.len());
            for _ in 0..depth {
                v.extend_from_slice(&[0x81, 0xa1, b'k']);
            }
            v.extend_from_slice(inner);
            v
        }
        2 => {
            // array16 / map16 markers (non-minimal) nested
            let mut v = Vec::new();
            for i in 0..depth {
                if i % 2 == 0 {
                    v.extend_from_slice(&[0xdc, 0x00, 0x01]);
                } else {
                    v.extend_from_slice(&[0xde, 0x00, 0x01, 0xa0]);
                }
            }
            v.extend_from_slice(inner);
            v
        }
        _ => {
            // ext in ext in ext… (each payload is a document of its own)
            let mut v = inner.to_vec();
            for _ in 0..depth.min(3000) {
                let code = *rng.pick(&[0u8, 1, 2, 5, 7]);
                let mut outer = vec![0xc9];
                outer.extend_from_slice(&(v.len() as u32).to_be_bytes());
                outer.push(code);
                outer.extend_from_slice(&v);
                v = outer;
            }
            v
        }
    }
}

/// A random string that is hard to display or slice: multi-byte characters, control
/// characters, bidi overrides, and exactly `len` bytes when asked.
fn odd_string(rng: &mut Rng, len: Option<usize>) -> String {
    const PIECES: [&str; 16] = [
        "a",
        "€",
        "é",
        "😀",
        "\u{202e}",
        "\u{0}",
        "\n",
        "\u{1b}[31m",
        "\\",
        "\"",
        "日本",
        "\u{fffd}",
        "\u{200d}",
        "\t",
        "0",
        "-",
    ];
    let mut s = String::new();
    match len {
        Some(n) => {
            while s.len() < n {
                let p = *rng.pick(&PIECES);
                if s.len() + p.len() <= n {
                    s.push_str(p);
                } else {
                    s.push('x');
                }
            }
        }
        None => {
            let n = *rng.pick(&[0usize, 1, 5, 40, 300, 5000]);
            for _ in 0..n {
                let p: &&str = rng.pick(&PIECES);
                s.push_str(p);
            }
        }
    }
    s
}

fn random_value(rng: &mut Rng, depth: usize) -> Value {
    match rng.below(if depth > 3 { 8 } else { 11 }) {
        0 => Value::Nil,
        1 => Value::Bool(rng.chance(1, 2)),
        2 => Value::int(*rng.pick(&[0, -1, 1, i64::MIN, i64::MAX, 255, -129, 65536])),
        3 => Value::Int(msgpack::Int {
            pos: u64::MAX,
            neg: 0,
            marker: None,
        }),
        4 => Value::F64(*rng.pick(&[f64::NAN, f64::INFINITY, -0.0, 1e308, 5e-324])),
        5 => Value::str(odd_string(rng, None)),
        6 => Value::Bin(msgpack::Bin {
            bytes: (0..rng.below(64)).map(|_| rng.next() as u8).collect(),
            marker: None,
        }),
        7 => Value::str(*rng.pick(&[
            "messages",
            "channel_values",
            "langchain_core.messages.ai",
            "AIMessage",
            "ToolMessage",
            "model_validate",
            "uuid",
            "UUID",
            "datetime",
            "fromisoformat",
            "langgraph.types",
            "Send",
            "Interrupt",
            "__interrupt__",
            "tool_calls",
            "content",
            "id",
            "type",
            "text",
        ])),
        8 => Value::array(
            (0..rng.below(4))
                .map(|_| random_value(rng, depth + 1))
                .collect(),
        ),
        9 => Value::map(
            (0..rng.below(4))
                .map(|_| (random_value(rng, depth + 1), random_value(rng, depth + 1)))
                .collect(),
        ),
        _ => Value::ext(rng.below(8) as i8, random_value(rng, depth + 1)),
    }
}

fn count_nodes(v: &Value) -> usize {
    1 + match v {
        Value::Array(a) => a.items.iter().map(count_nodes).sum(),
        Value::Map(m) => m
            .entries
            .iter()
            .map(|(k, v)| count_nodes(k) + count_nodes(v))
            .sum(),
        Value::Ext(e) => count_nodes(&e.payload),
        _ => 0,
    }
}

/// Applies one structural edit to the `k`-th node (pre-order); returns true once done.
fn edit_nth(v: &mut Value, k: &mut usize, rng: &mut Rng) -> bool {
    if *k == 0 {
        edit_node(v, rng);
        return true;
    }
    *k -= 1;
    match v {
        Value::Array(a) => a.items.iter_mut().any(|i| edit_nth(i, k, rng)),
        Value::Map(m) => m
            .entries
            .iter_mut()
            .any(|(key, val)| edit_nth(key, k, rng) || edit_nth(val, k, rng)),
        Value::Ext(e) => edit_nth(&mut e.payload, k, rng),
        _ => false,
    }
}

fn edit_node(v: &mut Value, rng: &mut Rng) {
    match v {
        Value::Str(s) if rng.chance(2, 3) => {
            // Same length in bytes, other characters (e.g. a UUID hex that is not ASCII).
            let len = if rng.chance(1, 4) {
                None
            } else {
                Some(s.text.len())
            };
            s.text = odd_string(rng, len);
        }
        Value::Array(a) if !a.items.is_empty() && rng.chance(2, 3) => {
            match rng.below(4) {
                0 => {
                    let i = rng.below(a.items.len());
                    a.items.remove(i);
                }
                1 => {
                    let i = rng.below(a.items.len());
                    let dup = a.items[i].clone();
                    a.items.insert(i, dup);
                }
                2 => a.items.reverse(),
                _ => a.items.clear(),
            };
        }
        Value::Map(m) if !m.entries.is_empty() && rng.chance(2, 3) => {
            let i = rng.below(m.entries.len());
            match rng.below(4) {
                0 => {
                    m.entries.remove(i);
                }
                1 => {
                    let dup = m.entries[i].clone();
                    m.entries.push(dup); // duplicate key
                }
                2 => m.entries[i].0 = random_value(rng, 3), // a non-string key
                _ => m.entries[i].1 = random_value(rng, 0),
            }
        }
        Value::Ext(e) if rng.chance(2, 3) => {
            if rng.chance(1, 2) {
                e.code = rng.below(8) as i8;
            } else {
                e.payload = random_value(rng, 0);
            }
        }
        _ => *v = random_value(rng, 0),
    }
}

/// One mutation of `data`; returns the mutant and the mutator's name.
fn mutate_once(rng: &mut Rng, data: &[u8], corpus: &[Seed]) -> (Vec<u8>, &'static str) {
    let mut d = data.to_vec();
    let nodes = walk(&d, 20_000);
    let node = |rng: &mut Rng| -> Option<Node> {
        if nodes.is_empty() {
            None
        } else {
            Some(*rng.pick(&nodes))
        }
    };
    // Structure-keeping edits (tree edits, grafts) are weighted up, so that about half the
    // mutants still decode and reach the model and command layers.
    let name = match *rng.pick(&[0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 11, 12, 12, 12, 12]) {
        0 => {
            if !d.is_empty() {
                for _ in 0..1 + rng.below(8) {
                    let i = rng.below(d.len());
                    d[i] ^= 1 << rng.below(8);
                }
            }
            "bitflip"
        }
        1 => {
            if !d.is_empty() {
                let i = rng.below(d.len());
                d[i] = if rng.chance(1, 2) {
                    *rng.pick(&INTERESTING_BYTES)
                } else {
                    rng.next() as u8
                };
            }
            "byte"
        }
        2 => {
            let at = rng.below(d.len() + 1);
            d.truncate(at);
            "truncate"
        }
        3 => {
            if !d.is_empty() {
                let a = rng.below(d.len());
                let b = (a + 1 + rng.below(64)).min(d.len());
                d.drain(a..b);
            }
            "delete"
        }
        4 => {
            if !d.is_empty() {
                let a = rng.below(d.len());
                let b = (a + 1 + rng.below(256)).min(d.len());
                let chunk = d[a..b].to_vec();
                let at = rng.below(d.len() + 1);
                d.splice(at..at, chunk);
            }
            "duplicate"
        }
        5 => {
            let other = &rng.pick(corpus).bytes;
            if !other.is_empty() {
                let a = rng.below(other.len());
                let b = (a + 1 + rng.below(512)).min(other.len());
                let at = rng.below(d.len() + 1);
                let end = (at + rng.below(64)).min(d.len());
                d.splice(at..end, other[a..b].iter().copied());
            }
            "splice"
        }
        6 => {
            // An absurd length in a container / string / bin / ext header.
            let candidates: Vec<Node> = nodes
                .iter()
                .copied()
                .filter(|n| n.kind != NodeKind::Scalar)
                .collect();
            if let Some(n) = (!candidates.is_empty()).then(|| *rng.pick(&candidates)) {
                let code = if n.kind == NodeKind::Ext {
                    d[n.at + n.header - 1]
                } else {
                    0
                };
                let new = wide_header(n.kind, absurd_len(rng, d.len()), code);
                d.splice(n.at..n.at + n.header, new);
            }
            "absurd-length"
        }
        7 => {
            // A length off by a little (claims one item or byte more or less).
            if let Some(n) = node(rng).filter(|n| n.kind != NodeKind::Scalar) {
                let code = if n.kind == NodeKind::Ext {
                    d[n.at + n.header - 1]
                } else {
                    0
                };
                let delta = *rng.pick(&[-3i64, -2, -1, 1, 2, 3, 16]);
                let claimed = (n.claimed as i64 + delta).clamp(0, u32::MAX as i64) as u32;
                d.splice(n.at..n.at + n.header, wide_header(n.kind, claimed, code));
            }
            "length-off-by-some"
        }
        8 => {
            // Nesting hundreds or thousands deep around a value.
            if let Some(n) = node(rng) {
                let depth = *rng.pick(&[100usize, 250, 254, 255, 256, 257, 300, 1000, 5000]);
                let end = end_of(&d, n.at).unwrap_or(d.len());
                let inner = d[n.at..end].to_vec();
                let deep = nest(rng, depth, &inner);
                d.splice(n.at..end, deep);
            }
            "deep-nesting"
        }
        9 => {
            // A random type tag (marker byte) at a value boundary.
            if let Some(n) = node(rng) {
                d[n.at] = if rng.chance(1, 2) {
                    *rng.pick(&INTERESTING_BYTES)
                } else {
                    rng.next() as u8
                };
            }
            "type-tag"
        }
        10 => {
            // A random ext code (half the time another valid one).
            let exts: Vec<Node> = nodes
                .iter()
                .copied()
                .filter(|n| n.kind == NodeKind::Ext)
                .collect();
            if !exts.is_empty() {
                let n = *rng.pick(&exts);
                d[n.at + n.header - 1] = if rng.chance(1, 2) {
                    rng.below(8) as u8
                } else {
                    rng.next() as u8
                };
            }
            "ext-code"
        }
        11 => {
            // Replace a value with a value from another blob.
            let other = &rng.pick(corpus).bytes;
            let theirs = walk(other, 20_000);
            if let (Some(n), false) = (node(rng), theirs.is_empty()) {
                let t = *rng.pick(&theirs);
                if let (Some(end), Some(tend)) = (end_of(&d, n.at), end_of(other, t.at)) {
                    d.splice(n.at..end, other[t.at..tend].iter().copied());
                }
            }
            "graft"
        }
        _ => {
            // A structural edit of the decoded value, re-encoded.
            if let Ok(mut v) = msgpack::decode(&d) {
                let n = count_nodes(&v);
                let mut k = rng.below(n);
                edit_nth(&mut v, &mut k, rng);
                d = msgpack::encode(&v);
            }
            "tree-edit"
        }
    };
    (d, name)
}

/// One to four stacked mutations.
fn mutate(rng: &mut Rng, data: &[u8], corpus: &[Seed]) -> (Vec<u8>, String) {
    let mut d = data.to_vec();
    let mut names = Vec::new();
    let rounds = *rng.pick(&[1, 1, 1, 1, 1, 1, 2, 2, 2, 3]);
    for _ in 0..rounds {
        let (m, name) = mutate_once(rng, &d, corpus);
        d = m;
        names.push(name);
        if d.len() > 4 << 20 {
            break;
        }
    }
    (d, names.join("+"))
}

const TYPE_TAGS: [&str; 10] = [
    "msgpack",
    "json",
    "null",
    "bytes",
    "bytearray",
    "pickle",
    "msgpack+aes",
    "",
    "yaml",
    "MSGPACK",
];

// ------------------------------------------------------------------------------------------
// (a) In process: every entry point on every mutant
// ------------------------------------------------------------------------------------------

/// Every codec and model entry point on one input (as the `type` column says and as the
/// other columns it could land in), checking the properties that must hold. Returns whether
/// the input decodes as msgpack.
fn exercise(type_name: &str, data: &[u8]) -> bool {
    if type_name == "metadata" {
        if let Ok(md) = Metadata::parse(Some(data)) {
            let _ = (md.step(), md.source());
        }
    }

    // The lossless decoder.
    let decoded = msgpack::decode(data);
    if let Ok(v) = &decoded {
        assert_eq!(msgpack::encode(v), data, "re-encoding is not lossless");
        assert_eq!(msgpack::skip(data, 0).ok(), Some(data.len()), "skip");
        let json = to_json(v);
        let _ = serde_json::to_string(&json).expect("JSON serializes");
        // Each node where memctl could meet it (channel values near the top, messages and
        // their lists a few levels down); deeper nodes only through their parents.
        visit(v, 0, &mut |node, depth| {
            if let Value::Ext(e) = node {
                let _ = (ext::brief(e), ext::type_path(e), ext::code_name(e.code));
            }
            if depth <= 3 {
                let _ = brief_value(node, 80);
            }
            if depth <= 8 {
                if let Some(m) = Message::from_value(node) {
                    exercise_message(&m);
                }
                let _ = approx::count_value(node);
                let _ = approx::count_values(node);
                let _ = message_list(node);
            }
        });
        let _ = memctl::codec::msgpack::Raw::new(data.to_vec()).expect("decodes, so Raw takes it");
    } else {
        let _ = msgpack::skip(data, 0);
    }
    let _ = msgpack::channel_sizes(data);

    // The messages left in place, as rewrites read them.
    if let Ok((root, span)) = msgpack::decode_except(data, "channel_values", "messages") {
        let _ = to_json(&root);
        if let Some(span) = span {
            let _ = msgpack::decode(&data[span.clone()]);
            if let Some(outlines) = outline_list(data, span) {
                for o in &outlines {
                    assert!(o.span.end <= data.len(), "outline span inside the blob");
                }
            }
        }
    } else if let Ok(Value::Map(_)) = &decoded {
        panic!("decode_except fails on a map that decode reads");
    }

    // The lazy reader, walked everywhere.
    if let Ok(root) = lazy::root(data) {
        if decoded.is_ok() {
            assert_eq!(root.raw().ok().map(<[u8]>::len), Some(data.len()));
        }
        let mut budget = 50_000u32;
        walk_lazy(root, 0, &mut budget);
    }
    let _ = approx::count_checkpoint_blob(data);

    // The typed envelope under this tag and under the tags an operator's file might hold.
    let mut tags = vec![type_name, "msgpack", "json"];
    tags.dedup();
    if type_name == "json" {
        tags.truncate(2);
    }
    for tag in tags {
        if let Ok(d) = memctl::codec::decode_typed(tag, data) {
            let _ = serde_json::to_string(&d.to_json());
        }
        if let Ok(cp) = Checkpoint::decode(tag, data) {
            exercise_checkpoint(&cp, data);
        }
    }
    decoded.is_ok()
}

fn exercise_checkpoint(cp: &Checkpoint, data: &[u8]) {
    let _ = (cp.v(), cp.ts(), cp.channel_versions(), cp.pending_sends());
    let _ = cp.versions_seen("model");
    for (_, v) in cp.channel_values() {
        let _ = brief_value(v, 60);
    }
    if let Ok(ch) = cp.messages() {
        for m in ch.messages().unwrap_or(&[]) {
            exercise_message(m);
        }
    }
    // The blob as the pending writes of itself (interrupts, sends, resumes, messages).
    let writes: Vec<PendingWrite> = ["__interrupt__", "__pregel_tasks", "messages", "__resume__"]
        .iter()
        .filter_map(|channel| {
            Some(PendingWrite {
                task_id: "t".into(),
                task_path: "~__pregel_pull, model".into(),
                idx: 0,
                channel: (*channel).into(),
                value: memctl::codec::decode_typed("msgpack", data).ok()?,
            })
        })
        .collect();
    let work = pending_work(cp, &writes);
    let _ = work.is_idle();
}

fn exercise_message(m: &Message) {
    let _ = (
        m.class_name(),
        m.id(),
        m.name(),
        m.tool_call_ids(),
        m.tool_call_id(),
    );
    let _ = (m.usage_metadata(), m.tool_calls().len());
    let text = m.summary_text();
    let _ = memctl::output::human::preview(&text, 60);
    let _ = memctl::output::human::preview(&text, 1);
    let _ = memctl::output::sanitize::for_terminal(&m.text());
    let _ = (m.searchable_text(), m.private_strings());
    let _ = approx::count_message(m);
    let _ = Outline::of(m, 0..0);
    let _ = openai::count_message(m, openai::Framing::for_encoding(openai::Encoding::O200k));
    let _ = openai::openai_dict(m);
}

fn visit(v: &Value, depth: usize, f: &mut dyn FnMut(&Value, usize)) {
    f(v, depth);
    match v {
        Value::Array(a) => a.items.iter().for_each(|i| visit(i, depth + 1, f)),
        Value::Map(m) => m.entries.iter().for_each(|(k, x)| {
            visit(k, depth + 1, f);
            visit(x, depth + 1, f)
        }),
        Value::Ext(e) => visit(&e.payload, depth + 1, f),
        _ => {}
    }
}

fn walk_lazy(v: lazy::Spanned<'_>, depth: usize, budget: &mut u32) {
    // memctl reads in place ten or so levels down (channel values, messages, fields,
    // content blocks); deeper levels are the full decoder's business.
    if depth > 16 || *budget == 0 {
        return;
    }
    *budget -= 1;
    // What walks a whole subtree runs near the top only (where memctl uses it), so that the
    // walk stays linear in the input.
    let shallow = depth < 4;
    if shallow {
        let _ = v.raw();
        let _ = read_message(&v);
        let _ = approx::count_lazy(&v);
    }
    let _ = v.as_str();
    match v.value {
        lazy::Lazy::Array(seq) => {
            if shallow {
                let _ = seq.items();
            }
            for item in seq.iter().take(10_000) {
                match item {
                    Ok(item) => walk_lazy(item, depth + 1, budget),
                    Err(_) => break,
                }
            }
        }
        lazy::Lazy::Map(seq) => {
            if shallow {
                let _ = seq.fields();
                let _ = seq.get("messages");
            }
            for pair in seq.pairs().take(10_000) {
                match pair {
                    Ok((k, x)) => {
                        walk_lazy(k, depth + 1, budget);
                        walk_lazy(x, depth + 1, budget);
                    }
                    Err(_) => break,
                }
            }
        }
        lazy::Lazy::Ext(_, payload) => {
            if let Ok(inner) = lazy::root(payload) {
                walk_lazy(inner, depth + 1, budget);
            }
        }
        _ => {}
    }
}

/// One input: its label (for reports), type tag and bytes.
struct Case {
    label: String,
    type_name: String,
    bytes: Vec<u8>,
}

/// Tallies of the in-process run.
#[derive(Default)]
struct Tally {
    mutants: u64,
    seeds: u64,
    decoded_ok: u64,
    panics: Vec<String>,
    over_memory: Vec<String>,
    slowest: Duration,
    slowest_label: String,
    max_peak: usize,
    by_mutator: BTreeMap<String, u64>,
    by_seed: BTreeMap<String, (u64, Duration)>,
}

fn save_failure(kind: &str, n: usize, case: &Case) -> PathBuf {
    let path = failures_dir("in-process").join(format!(
        "{kind}-{n}-{}.{}",
        case.label.replace(['/', ' ', '+', '(', ')'], "_"),
        if case.type_name.is_empty() {
            "empty"
        } else {
            &case.type_name
        }
    ));
    std::fs::write(&path, &case.bytes).expect("save failing input");
    path
}

/// How long one input may take before it counts as a hang (debug build, shared cores).
const PER_INPUT_LIMIT: Duration = Duration::from_secs(10);

/// What the watchdog sees of the worker: the case running and since when.
#[derive(Default)]
struct Progress {
    label: String,
    since: Option<Instant>,
}

/// The worker: runs the corpus, then mutants until the budget is spent. Each input is saved
/// to `current` before it runs (a crash of the whole process leaves it there).
fn fuzz_worker(
    seed: u64,
    corpus: &[Seed],
    budget: &Budget,
    current: &Path,
    progress: &std::sync::Mutex<Progress>,
) -> Tally {
    // Load the BPE tables once, outside the measured inputs.
    let _ = openai::encode_len(openai::Encoding::O200k, "warm up");
    let mut rng = Rng::new(seed);
    let mut t = Tally::default();
    let mut seeds = corpus.iter();
    let real: Vec<&Seed> = corpus
        .iter()
        .filter(|s| s.type_name == "msgpack" && !s.name.starts_with("nasty-"))
        .collect();
    loop {
        let mut origin = String::new();
        let case = if let Some(s) = seeds.next() {
            t.seeds += 1;
            Case {
                label: format!("seed {}", s.name),
                type_name: s.type_name.clone(),
                bytes: s.bytes.clone(),
            }
        } else if budget.more(t.mutants) {
            // Half the time a real blob (the checkpoints and writes of the fixtures).
            let s = if rng.chance(1, 2) {
                rng.pick(&real)
            } else {
                rng.pick(corpus)
            };
            origin = s.name.clone();
            let (bytes, how) = mutate(&mut rng, &s.bytes, corpus);
            let type_name = if rng.chance(1, 8) {
                (*rng.pick(&TYPE_TAGS)).to_owned()
            } else {
                s.type_name.clone()
            };
            *t.by_mutator.entry(how.clone()).or_default() += 1;
            t.mutants += 1;
            Case {
                label: format!("mutant {} of {} ({how})", t.mutants, s.name),
                type_name,
                bytes,
            }
        } else {
            break;
        };
        std::fs::write(current, &case.bytes).expect("write the current input");
        let start = Instant::now();
        *progress.lock().expect("progress") = Progress {
            label: format!(
                "{} ({} bytes, type {:?})",
                case.label,
                case.bytes.len(),
                case.type_name
            ),
            since: Some(start),
        };
        let base = mem_start();
        let r = std::panic::catch_unwind(|| exercise(&case.type_name, &case.bytes));
        let peak = mem_peak(base);
        let elapsed = start.elapsed();
        let len = case.bytes.len();
        let e = t.by_seed.entry(origin).or_default();
        e.0 += 1;
        e.1 += elapsed;
        match r {
            Ok(decoded) => t.decoded_ok += u64::from(decoded),
            Err(p) => {
                let msg = p
                    .downcast_ref::<String>()
                    .cloned()
                    .or_else(|| p.downcast_ref::<&str>().map(|s| (*s).to_owned()))
                    .unwrap_or_default();
                let path = save_failure("panic", t.panics.len(), &case);
                t.panics.push(format!(
                    "{} ({len} bytes, type {:?}) panicked: {msg}: {}",
                    case.label,
                    case.type_name,
                    path.display()
                ));
            }
        }
        if elapsed > t.slowest {
            t.slowest = elapsed;
            t.slowest_label = format!("{} ({len} bytes)", case.label);
            let keep = failures_dir("in-process").join("slowest-input");
            std::fs::write(keep, &case.bytes).expect("keep the slowest input");
        }
        t.max_peak = t.max_peak.max(peak);
        if peak > memory_bound(len) {
            let path = save_failure("memory", t.over_memory.len(), &case);
            t.over_memory.push(format!(
                "{} ({len} bytes, type {:?}) allocated {peak} bytes at its peak (bound {}): {}",
                case.label,
                case.type_name,
                memory_bound(len),
                path.display()
            ));
        }
    }
    progress.lock().expect("progress").since = None;
    t
}

#[test]
fn in_process_mutants_never_panic_hang_or_blow_up_memory() {
    let seed = seed();
    let corpus = corpus();
    let budget = Budget::new(3000, "MEMCTL_FUZZ_MUTANTS");
    let current = fresh_failures_dir("in-process").join("current-input");
    eprintln!(
        "fuzz in-process: seed {seed:#x} (replay: MEMCTL_FUZZ_SEED={seed}); the input being run is kept in {} until it returns",
        current.display()
    );
    let started = Instant::now();
    let progress = std::sync::Arc::new(std::sync::Mutex::new(Progress::default()));
    let (done_tx, done) = mpsc::channel::<Tally>();
    let (worker_progress, worker_current) = (progress.clone(), current.clone());
    // The default stack (what the binary's worker threads get), not the main thread's 8 MiB.
    std::thread::Builder::new()
        .name("fuzz-worker".into())
        .spawn(move || {
            let t = fuzz_worker(seed, &corpus, &budget, &worker_current, &worker_progress);
            let _ = done_tx.send(t);
        })
        .expect("spawn the fuzz worker");
    // The watchdog: an input that runs longer than the limit is a hang.
    let t = loop {
        match done.recv_timeout(Duration::from_millis(200)) {
            Ok(t) => break t,
            Err(mpsc::RecvTimeoutError::Disconnected) => {
                panic!(
                    "the fuzz worker died (see above); its input is in {}",
                    current.display()
                )
            }
            Err(mpsc::RecvTimeoutError::Timeout) => {
                let p = progress.lock().expect("progress");
                if let Some(since) = p.since.filter(|s| s.elapsed() > PER_INPUT_LIMIT) {
                    let keep = failures_dir("in-process").join("hang-input");
                    let _ = std::fs::copy(&current, &keep);
                    panic!(
                        "hang (seed {seed}): {} has run for {:?}; saved as {}",
                        p.label,
                        since.elapsed(),
                        keep.display()
                    );
                }
            }
        }
    };
    let _ = std::fs::remove_file(&current);
    eprintln!(
        "fuzz in-process: seed {seed:#x}: {} corpus seeds + {} mutants ({} decode as msgpack) in {:.1} s; panics={} hangs=0 over-memory={}; slowest input {} ms; largest peak {} KiB",
        t.seeds,
        t.mutants,
        t.decoded_ok,
        started.elapsed().as_secs_f64(),
        t.panics.len(),
        t.over_memory.len(),
        t.slowest.as_millis(),
        t.max_peak / 1024,
    );
    if std::env::var_os("MEMCTL_FUZZ_VERBOSE").is_some() {
        eprintln!("  slowest: {}", t.slowest_label);
        for (how, n) in &t.by_mutator {
            eprintln!("  {n:6} {how}");
        }
        for (seed, (n, time)) in &t.by_seed {
            eprintln!("  {n:6} mutants of {seed:40} {} ms", time.as_millis());
        }
    }
    let problems: Vec<&String> = t.panics.iter().chain(&t.over_memory).collect();
    assert!(
        problems.is_empty(),
        "{} failing inputs (seed {seed}):\n{}",
        problems.len(),
        problems
            .iter()
            .map(|s| s.as_str())
            .collect::<Vec<_>>()
            .join("\n")
    );
}

// ------------------------------------------------------------------------------------------
// (b) The real binary on mutated databases
// ------------------------------------------------------------------------------------------

/// The output of a run that ended, or `None` when it was killed at the time limit.
struct Run {
    code: Option<i32>,
    stdout: Vec<u8>,
    stderr: String,
    elapsed: Duration,
}

/// Runs memctl with a time limit; the child is killed (and reported) when it is exceeded.
fn run_limited(args: &[String], limit: Duration) -> Option<Run> {
    let bin = env!("CARGO_BIN_EXE_memctl");
    let start = Instant::now();
    let mut child = Command::new(bin)
        .args(args)
        .env_remove("MEMCTL_DB")
        .env("NO_COLOR", "1")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("memctl starts");
    let mut out = child.stdout.take().expect("stdout");
    let mut err = child.stderr.take().expect("stderr");
    let out_reader = std::thread::spawn(move || {
        let mut b = Vec::new();
        let _ = out.read_to_end(&mut b);
        b
    });
    let err_reader = std::thread::spawn(move || {
        let mut b = Vec::new();
        let _ = err.read_to_end(&mut b);
        b
    });
    loop {
        if let Some(status) = child.try_wait().expect("wait") {
            let stdout = out_reader.join().expect("stdout reader");
            let stderr = err_reader.join().expect("stderr reader");
            use std::os::unix::process::ExitStatusExt;
            return Some(Run {
                code: status.code().or(status.signal().map(|s| 128 + s)),
                stdout,
                stderr: String::from_utf8_lossy(&stderr).into_owned(),
                elapsed: start.elapsed(),
            });
        }
        if start.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            return None;
        }
        std::thread::sleep(Duration::from_millis(2));
    }
}

/// The rows of a fixture copy that the mutator may change.
struct Target {
    thread: String,
    ns: String,
    checkpoint_id: String,
}

/// Writes `count` mutated cells into the database; returns the threads touched and a log.
fn mutate_database(
    rng: &mut Rng,
    db: &Path,
    corpus: &[Seed],
    count: usize,
) -> (Vec<String>, Vec<String>) {
    let conn = rusqlite::Connection::open(db).expect("open copy");
    let latest: Vec<Target> = conn
        .prepare(
            "SELECT thread_id, checkpoint_ns, max(checkpoint_id) FROM checkpoints \
             GROUP BY thread_id, checkpoint_ns",
        )
        .expect("prepare")
        .query_map([], |r| {
            Ok(Target {
                thread: r.get(0)?,
                ns: r.get(1)?,
                checkpoint_id: r.get(2)?,
            })
        })
        .expect("query")
        .collect::<Result<_, _>>()
        .expect("rows");
    let all: Vec<Target> = conn
        .prepare("SELECT thread_id, checkpoint_ns, checkpoint_id FROM checkpoints")
        .expect("prepare")
        .query_map([], |r| {
            Ok(Target {
                thread: r.get(0)?,
                ns: r.get(1)?,
                checkpoint_id: r.get(2)?,
            })
        })
        .expect("query")
        .collect::<Result<_, _>>()
        .expect("rows");
    let mut threads = Vec::new();
    let mut log = Vec::new();
    for _ in 0..count {
        // Mostly the latest checkpoint of a thread (what every command reads).
        let t = if rng.chance(3, 4) {
            rng.pick(&latest)
        } else {
            rng.pick(&all)
        };
        let key = rusqlite::params![t.thread, t.ns, t.checkpoint_id];
        let where_ = "thread_id = ?1 AND checkpoint_ns = ?2 AND checkpoint_id = ?3";
        let what = rng.below(10);
        let (column, table) = match what {
            0..=4 => ("checkpoint", "checkpoints"),
            5 | 6 => ("value", "writes"),
            7 => ("metadata", "checkpoints"),
            _ => (
                "type",
                if rng.chance(1, 2) {
                    "checkpoints"
                } else {
                    "writes"
                },
            ),
        };
        if column == "type" {
            let tag = *rng.pick(&TYPE_TAGS);
            let n = conn
                .execute(
                    &format!("UPDATE {table} SET type = ?4 WHERE {where_}"),
                    rusqlite::params![t.thread, t.ns, t.checkpoint_id, tag],
                )
                .expect("update type");
            log.push(format!(
                "{table}.type of {}/{:?}/{} = {tag:?} ({n} rows)",
                t.thread, t.ns, t.checkpoint_id
            ));
        } else {
            // One row: for writes, one of that checkpoint's (chosen by the seeded RNG).
            let rows: Vec<(i64, Vec<u8>)> = conn
                .prepare(&format!(
                    "SELECT rowid, {column} FROM {table} WHERE {where_} ORDER BY rowid"
                ))
                .expect("prepare")
                .query_map(key, |r| {
                    let bytes = match r.get_ref(1)? {
                        rusqlite::types::ValueRef::Blob(b) | rusqlite::types::ValueRef::Text(b) => {
                            b.to_vec()
                        }
                        _ => Vec::new(),
                    };
                    Ok((r.get(0)?, bytes))
                })
                .expect("query")
                .collect::<Result<_, _>>()
                .expect("rows");
            if rows.is_empty() {
                continue;
            }
            let (rowid, old) = rows[rng.below(rows.len())].clone();
            let (new, how) = if rng.chance(1, 10) {
                let s = rng.pick(corpus);
                (s.bytes.clone(), format!("corpus {}", s.name))
            } else {
                mutate(rng, &old, corpus)
            };
            conn.execute(
                &format!("UPDATE {table} SET {column} = ?1 WHERE rowid = ?2"),
                rusqlite::params![new, rowid],
            )
            .expect("update blob");
            log.push(format!(
                "{table}.{column} of {}/{:?}/{} ({how}, {} -> {} bytes)",
                t.thread,
                t.ns,
                t.checkpoint_id,
                old.len(),
                new.len()
            ));
        }
        threads.push(t.thread.clone());
    }
    (threads, log)
}

/// The commands run on each mutated database, in this order (the rewrites last).
fn command_lines(db: &str, thread: &str) -> Vec<Vec<String>> {
    let v = |a: &[&str]| {
        let mut x: Vec<String> = a.iter().map(|s| (*s).to_owned()).collect();
        x.extend(["--db".to_owned(), db.to_owned()]);
        x
    };
    vec![
        v(&["threads", "list", "--format", "json"]),
        v(&["show", "--thread", thread, "--format", "table"]),
        v(&["dump", "--thread", thread, "--format", "json"]),
        v(&["dump", "--raw", "--thread", thread, "--format", "json"]),
        v(&["history", "--thread", thread, "--format", "table"]),
        v(&["diff", "--thread", thread, "--format", "json"]),
        v(&["tokens", "--all", "--format", "json"]),
        v(&["stats", "--format", "json"]),
        v(&[
            "trim",
            "--all",
            "--keep",
            "2",
            "--dry-run",
            "--format",
            "json",
        ]),
        v(&[
            "trim", "--all", "--keep", "2", "--settle", "0s", "--format", "json",
        ]),
        v(&[
            "gc",
            "--all",
            "--keep-checkpoints",
            "1",
            "--min-idle",
            "0s",
            "--format",
            "json",
        ]),
    ]
}

/// True when `out` is one JSON document. serde_json stops at 128 levels; memctl's JSON of
/// a value nested deeper than that (the decoder allows 256) is checked by a plain
/// iterative syntax check instead.
fn is_json(out: &[u8]) -> bool {
    match serde_json::from_slice::<serde_json::Value>(out) {
        Ok(_) => true,
        Err(e) if e.to_string().contains("recursion limit") => json_syntax_ok(out),
        Err(_) => false,
    }
}

fn json_syntax_ok(b: &[u8]) -> bool {
    // Expecting: a value, or (inside a container) a key / `,` / `:` / the closing bracket.
    let mut stack: Vec<u8> = Vec::new(); // b'[' or b'{'
    let mut i = 0;
    let skip_ws = |i: &mut usize| {
        while *i < b.len() && b[*i].is_ascii_whitespace() {
            *i += 1;
        }
    };
    let scalar = |i: &mut usize| -> bool {
        match b.get(*i) {
            Some(b'"') => {
                *i += 1;
                while *i < b.len() {
                    match b[*i] {
                        b'\\' => *i += 2,
                        b'"' => {
                            *i += 1;
                            return true;
                        }
                        c if c < 0x20 => return false,
                        _ => *i += 1,
                    }
                }
                false
            }
            Some(b't') if b[*i..].starts_with(b"true") => {
                *i += 4;
                true
            }
            Some(b'f') if b[*i..].starts_with(b"false") => {
                *i += 5;
                true
            }
            Some(b'n') if b[*i..].starts_with(b"null") => {
                *i += 4;
                true
            }
            Some(c) if c.is_ascii_digit() || *c == b'-' => {
                while *i < b.len()
                    && matches!(b[*i], b'0'..=b'9' | b'-' | b'+' | b'.' | b'e' | b'E')
                {
                    *i += 1;
                }
                true
            }
            _ => false,
        }
    };
    loop {
        // A value.
        skip_ws(&mut i);
        match b.get(i) {
            Some(b'[') | Some(b'{') => {
                let open = b[i];
                stack.push(open);
                i += 1;
                skip_ws(&mut i);
                let close = if open == b'[' { b']' } else { b'}' };
                if b.get(i) == Some(&close) {
                    i += 1;
                    stack.pop();
                } else {
                    if open == b'{' {
                        if b.get(i) != Some(&b'"') || !scalar(&mut i) {
                            return false;
                        }
                        skip_ws(&mut i);
                        if b.get(i) != Some(&b':') {
                            return false;
                        }
                        i += 1;
                    }
                    continue;
                }
            }
            _ => {
                if !scalar(&mut i) {
                    return false;
                }
            }
        }
        // After a value: `,` and the next item, or closing brackets.
        loop {
            skip_ws(&mut i);
            let Some(&open) = stack.last() else {
                return i == b.len();
            };
            let close = if open == b'[' { b']' } else { b'}' };
            match b.get(i) {
                Some(c) if *c == close => {
                    i += 1;
                    stack.pop();
                }
                Some(b',') => {
                    i += 1;
                    if open == b'{' {
                        skip_ws(&mut i);
                        if b.get(i) != Some(&b'"') || !scalar(&mut i) {
                            return false;
                        }
                        skip_ws(&mut i);
                        if b.get(i) != Some(&b':') {
                            return false;
                        }
                        i += 1;
                    }
                    break;
                }
                _ => return false,
            }
        }
    }
}

#[test]
fn the_json_check_reads_any_depth() {
    let deep = format!("{}{}", "[".repeat(300), "]".repeat(300));
    assert!(is_json(deep.as_bytes()));
    assert!(is_json(
        br#"{"a": [1, -2.5e3, "x\"y", {"b": null}], "c": true}"#
    ));
    for bad in [&b"[1,]"[..], b"{\"a\" 1}", b"[[1]", b"[1]]", b"\"open", b""] {
        assert!(!json_syntax_ok(bad), "{}", String::from_utf8_lossy(bad));
    }
    let bad_deep = format!("{}1,{}", "[".repeat(300), "]".repeat(300));
    assert!(!is_json(bad_deep.as_bytes()));
}

/// How long one command may run (debug build, two shared cores).
const PER_COMMAND_LIMIT: Duration = Duration::from_secs(60);

#[test]
fn commands_on_mutated_databases_fail_cleanly() {
    let seed = seed().wrapping_add(1);
    let corpus = corpus();
    let budget = Budget::new(88, "MEMCTL_FUZZ_COMMAND_RUNS");
    let mut rng = Rng::new(seed);
    fresh_failures_dir("commands");
    eprintln!(
        "fuzz commands: seed {seed:#x} (replay: MEMCTL_FUZZ_SEED={})",
        seed.wrapping_sub(1)
    );
    let mut runs = 0u64;
    let mut databases = 0u64;
    let mut rows = 0u64;
    let mut codes: BTreeMap<i32, u64> = BTreeMap::new();
    let mut failures = Vec::new();
    let mut hangs = 0u64;
    let mut panics = 0u64;
    let mut slowest = Duration::ZERO;
    let started = Instant::now();
    while budget.more(runs) {
        let gen = *rng.pick(&common::GENERATIONS);
        let (dir, db) = common::temp_copy(&common::fixture(&format!("{gen}.sqlite")));
        let pristine = dir.path().join("before-mutation.sqlite");
        std::fs::copy(&db, &pristine).expect("keep a copy");
        let n = 1 + rng.below(16);
        let (threads, log) = mutate_database(&mut rng, &db, &corpus, n);
        databases += 1;
        rows += log.len() as u64;
        let thread = if threads.is_empty() {
            "1".to_owned()
        } else {
            rng.pick(&threads).clone()
        };
        let mutated = dir.path().join("mutated.sqlite");
        std::fs::copy(&db, &mutated).expect("keep the mutated file");
        for args in command_lines(common::s(&db), &thread) {
            runs += 1;
            let what = format!(
                "memctl {} (database {databases}: {gen}.sqlite with {})",
                args.join(" "),
                log.join("; ")
            );
            let problem = match run_limited(&args, PER_COMMAND_LIMIT) {
                None => {
                    hangs += 1;
                    Some(format!("hang (over {PER_COMMAND_LIMIT:?}): {what}"))
                }
                Some(r) => {
                    if r.elapsed > slowest {
                        // Kept to look at: the slowest run's database and command.
                        slowest = r.elapsed;
                        let keep = failures_dir("commands");
                        std::fs::copy(&mutated, keep.join("slowest.sqlite"))
                            .expect("keep the slowest run's database");
                        std::fs::write(
                            keep.join("slowest.txt"),
                            format!("{:?}\n{what}\n", r.elapsed),
                        )
                        .expect("describe the slowest run");
                    }
                    let code = r.code.unwrap_or(-1);
                    *codes.entry(code).or_default() += 1;
                    let json_out = args.iter().any(|a| a == "json");
                    if r.stderr.contains("panicked") || code == 101 {
                        panics += 1;
                        Some(format!("panic (exit {code}): {what}\n{}", r.stderr))
                    } else if ![0, 1, 3].contains(&code) {
                        Some(format!("exit {code}: {what}\n{}", r.stderr))
                    } else if code == 0 && json_out && !is_json(&r.stdout) {
                        Some(format!("exit 0 without JSON on stdout: {what}"))
                    } else if code == 1 && r.stderr.trim_end().lines().count() != 1 {
                        Some(format!(
                            "exit 1 with {} lines on stderr: {what}\n{}",
                            r.stderr.trim_end().lines().count(),
                            r.stderr
                        ))
                    } else {
                        None
                    }
                }
            };
            if let Some(p) = problem {
                let keep = failures_dir("commands").join(format!("{}.sqlite", failures.len()));
                std::fs::copy(&mutated, &keep).expect("save the database");
                failures.push(format!("{p}\n  database saved as {}", keep.display()));
            }
        }
        drop(dir);
    }
    eprintln!(
        "fuzz commands: seed {seed:#x}: {runs} runs on {databases} mutated databases ({rows} mutated cells) in {:.1} s; exit codes {codes:?}; panics={panics} hangs={hangs} other failures={}; slowest run {} ms",
        started.elapsed().as_secs_f64(),
        failures.len() as u64 - panics - hangs,
        slowest.as_millis()
    );
    assert!(
        failures.is_empty(),
        "{} failing command runs:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// Replays one saved input (`MEMCTL_FUZZ_REPLAY=path`, the type from its extension, e.g. a
/// file from `target/fuzz-failures/in-process/`) through every entry point, timed:
/// `MEMCTL_FUZZ_REPLAY=… cargo test --test fuzz replay -- --ignored --nocapture`.
#[test]
#[ignore]
fn replay() {
    let path = std::env::var("MEMCTL_FUZZ_REPLAY").expect("MEMCTL_FUZZ_REPLAY=path");
    let data = std::fs::read(&path).expect("read the input");
    let type_name = Path::new(&path)
        .extension()
        .and_then(|e| e.to_str())
        .filter(|e| TYPE_TAGS.contains(e) || *e == "metadata")
        .unwrap_or("msgpack");
    let _ = openai::encode_len(openai::Encoding::O200k, "warm up");
    let base = mem_start();
    let start = Instant::now();
    let decoded = exercise(type_name, &data);
    eprintln!(
        "{path}: {} bytes, type {type_name}, decodes as msgpack: {decoded}; {:?}, peak {} KiB",
        data.len(),
        start.elapsed(),
        mem_peak(base) / 1024
    );
}
