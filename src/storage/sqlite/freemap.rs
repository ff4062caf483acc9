//! Where a SQLite file holds no row: the byte ranges of its free pages, of the unused parts of
//! its b-tree pages (the gap between the cell pointers and the cells, freeblocks, the
//! reserved tail) and of its overflow chains' last pages, found by walking every b-tree from
//! its root (SQLite's file format, <https://www.sqlite.org/fileformat2.html>).
//!
//! A verification that searches only these ranges for an erased text is not fooled by the
//! text standing, as LangGraph's own structure, inside live rows (a thread named `human` is
//! in every message's type tag), and still finds it where a delete left it behind. Pages the
//! walk does not reach count as free (a page memctl cannot place is searched, never skipped).

use std::fs::File;
use std::path::Path;
use std::sync::Arc;

use anyhow::{bail, ensure, Context, Result};

/// Byte ranges (start, length) of `path` that hold no live row, sorted and merged. `roots`
/// are the root pages of every table and index (from `sqlite_master`; page 1 is added). The
/// caller holds a read transaction so that the file does not change underneath, and has
/// made sure no WAL frame supersedes a page of the file. An error means the file is not laid
/// out as expected: the caller then searches every byte.
pub fn free_ranges(path: &Path, roots: &[u64]) -> Result<Vec<(u64, u64)>> {
    free_ranges_in(path, roots, crate::par::cores().min(MOST_PARTS))
}

/// [`free_ranges`], the b-trees' subtrees shared across `parts` threads.
fn free_ranges_in(path: &Path, roots: &[u64], parts: usize) -> Result<Vec<(u64, u64)>> {
    // Never closed: closing a descriptor of the file would drop SQLite's locks on it.
    let file = super::kept_open::open(path)
        .with_context(|| format!("cannot open '{}'", path.display()))?;
    let len = file.metadata()?.len();
    let mut header = [0u8; 100];
    read_exact_at(&file, &mut header, 0)?;
    ensure!(&header[..16] == b"SQLite format 3\0", "not a SQLite file");
    let page_size = match u16::from_be_bytes([header[16], header[17]]) {
        1 => 65536u64,
        n => u64::from(n),
    };
    ensure!(
        page_size >= 512 && page_size.is_power_of_two(),
        "bad page size"
    );
    let usable = page_size - u64::from(header[20]);
    let pages = len / page_size;
    let mut walk = Walk {
        file,
        page_size,
        usable,
        pages,
        seen: vec![false; pages as usize + 1],
        free: Vec::new(),
        buf: vec![0; page_size as usize],
    };
    // The free list: trunk pages (their unused tail) and leaf pages (whole).
    let mut trunk = u64::from(be32(&header[32..36]));
    while trunk != 0 {
        walk.claim(trunk)?;
        walk.read(trunk)?;
        let next = u64::from(be32(&walk.buf[0..4]));
        let n = u64::from(be32(&walk.buf[4..8]));
        ensure!(8 + 4 * n <= usable, "bad free-list trunk page {trunk}");
        let leaves: Vec<u64> = (0..n as usize)
            .map(|i| u64::from(be32(&walk.buf[8 + 4 * i..12 + 4 * i])))
            .collect();
        walk.range(trunk, 8 + 4 * n, page_size);
        for leaf in leaves {
            walk.claim(leaf)?;
            walk.range(leaf, 0, page_size);
        }
        trunk = next;
    }
    // The top levels of the b-trees here, breadth first, until there are subtrees enough to
    // share out evenly (a whole tree is not one subtree: the largest table is most of the
    // file); the subtrees on the machine's cores, each walked as one walk would, then joined.
    let parts = parts.max(1);
    let mut top: std::collections::VecDeque<u64> =
        std::iter::once(1).chain(roots.iter().copied()).collect();
    let mut children = Vec::new();
    while top.len() < SUBTREES_PER_PART * parts {
        let Some(p) = top.pop_front() else { break };
        if p != 1 || !walk.seen[1] {
            walk.btree_page(p, &mut children)?;
            top.extend(children.drain(..));
        }
    }
    let shares: Vec<Vec<u64>> = (0..parts)
        .map(|i| top.iter().skip(i).step_by(parts).copied().collect())
        .collect();
    let walked = crate::par::map_owned(shares, parts, |mut stack| -> Result<Walk> {
        let mut w = walk.beside()?;
        while let Some(p) = stack.pop() {
            if p != 1 || !walk.seen[1] {
                w.btree_page(p, &mut stack)?;
            }
        }
        Ok(w)
    });
    for w in walked {
        walk.join(w?)?;
    }
    // Pages nothing points to (pointer-map pages, the lock-byte page, a page a crash lost):
    // searched whole.
    for p in 1..=pages {
        if !walk.seen[p as usize] {
            walk.range(p, 0, page_size);
        }
    }
    // Bytes past the last whole page.
    if len > pages * page_size {
        walk.free.push((pages * page_size, len - pages * page_size));
    }
    let mut free = walk.free;
    free.sort_unstable();
    let mut merged: Vec<(u64, u64)> = Vec::with_capacity(free.len());
    for (start, n) in free {
        match merged.last_mut() {
            Some((s, m)) if *s + *m >= start => *m = (*m).max(start + n - *s),
            _ => merged.push((start, n)),
        }
    }
    Ok(merged)
}

/// Fills `buf` from `offset` of `file`.
fn read_exact_at(file: &File, buf: &mut [u8], offset: u64) -> Result<()> {
    let mut have = 0;
    while have < buf.len() {
        let n = super::kept_open::read_at(file, &mut buf[have..], offset + have as u64)
            .context("cannot read the database file")?;
        ensure!(n > 0, "the database file ends inside a page");
        have += n;
    }
    Ok(())
}

/// Calls `f` with the bytes of each of `ranges` of `path` (long ranges in pieces of 8 MiB
/// that overlap by `overlap` bytes); stops when `f` returns false.
pub fn search_ranges(
    path: &Path,
    ranges: &[(u64, u64)],
    overlap: usize,
    f: &mut dyn FnMut(&[u8]) -> bool,
) -> Result<()> {
    const PIECE: u64 = 8 << 20;
    let file = super::kept_open::open(path)
        .with_context(|| format!("cannot open '{}'", path.display()))?;
    let mut buf = Vec::new();
    for &(start, len) in ranges {
        let mut at = start;
        let end = start + len;
        while at < end {
            let n = (end - at).min(PIECE + overlap as u64);
            buf.resize(n as usize, 0);
            read_exact_at(&file, &mut buf, at)?;
            if !f(&buf) {
                return Ok(());
            }
            if at + n >= end {
                break;
            }
            at += n - (overlap as u64).min(n - 1);
        }
    }
    Ok(())
}

fn be32(b: &[u8]) -> u32 {
    u32::from_be_bytes([b[0], b[1], b[2], b[3]])
}

fn be16(b: &[u8]) -> u64 {
    u64::from(u16::from_be_bytes([b[0], b[1]]))
}

/// A SQLite varint at `b[at..]`: (value, length).
fn varint(b: &[u8], at: usize) -> Result<(u64, usize)> {
    let mut v: u64 = 0;
    for i in 0..9 {
        let Some(&byte) = b.get(at + i) else {
            bail!("a varint past the end of its page");
        };
        if i == 8 {
            return Ok(((v << 8) | u64::from(byte), 9));
        }
        v = (v << 7) | u64::from(byte & 0x7f);
        if byte & 0x80 == 0 {
            return Ok((v, i + 1));
        }
    }
    bail!("a bad varint")
}

/// The most threads a walk is shared across.
pub(super) const MOST_PARTS: usize = 4;

/// Subtrees per thread before the walk is shared out (enough that one thread drawing the
/// large ones does not leave the others idle for long).
const SUBTREES_PER_PART: usize = 64;

struct Walk {
    file: Arc<File>,
    page_size: u64,
    usable: u64,
    pages: u64,
    seen: Vec<bool>,
    free: Vec<(u64, u64)>,
    buf: Vec<u8>,
}

impl Walk {
    /// A walk of other subtrees of the same file, on another thread: the pages it places
    /// and the ranges it finds are its own until [`Walk::join`].
    fn beside(&self) -> Result<Walk> {
        Ok(Walk {
            file: self.file.clone(),
            page_size: self.page_size,
            usable: self.usable,
            pages: self.pages,
            seen: vec![false; self.seen.len()],
            free: Vec::new(),
            buf: vec![0; self.buf.len()],
        })
    }

    /// Takes in what a walk [`Walk::beside`] this one found; a page both placed is an error,
    /// as it is when one walk reaches a page twice.
    fn join(&mut self, other: Walk) -> Result<()> {
        for (p, (mine, theirs)) in self.seen.iter_mut().zip(other.seen).enumerate() {
            if theirs {
                ensure!(!*mine, "page {p} is reached twice");
                *mine = true;
            }
        }
        self.free.extend(other.free);
        Ok(())
    }

    /// Marks page `p` as placed; a page placed twice or out of the file is an error.
    fn claim(&mut self, p: u64) -> Result<()> {
        ensure!(p >= 1 && p <= self.pages, "page {p} is outside the file");
        ensure!(!self.seen[p as usize], "page {p} is reached twice");
        self.seen[p as usize] = true;
        Ok(())
    }

    fn read(&mut self, p: u64) -> Result<()> {
        read_exact_at(&self.file, &mut self.buf, (p - 1) * self.page_size)
    }

    /// Bytes `from..to` of page `p` hold no row.
    fn range(&mut self, p: u64, from: u64, to: u64) {
        if to > from {
            self.free.push(((p - 1) * self.page_size + from, to - from));
        }
    }

    /// A b-tree page: its free parts, its children (pushed on `stack`), and the overflow
    /// chains of its cells.
    fn btree_page(&mut self, p: u64, stack: &mut Vec<u64>) -> Result<()> {
        self.claim(p)?;
        self.read(p)?;
        let h = if p == 1 { 100 } else { 0 };
        let b = &self.buf;
        let kind = b[h];
        let (interior, table) = match kind {
            2 => (true, false),
            5 => (true, true),
            10 => (false, false),
            13 => (false, true),
            _ => bail!("page {p} is not a b-tree page"),
        };
        let hsize = if interior { 12 } else { 8 };
        let cells = be16(&b[h + 3..]) as usize;
        let content = match be16(&b[h + 5..]) {
            0 => 65536,
            n => n,
        };
        let pointers_end = (h + hsize + 2 * cells) as u64;
        ensure!(
            pointers_end <= content && content <= self.usable,
            "page {p} has a bad header"
        );
        let usable = self.usable;
        let mut free = vec![(pointers_end, content), (usable, self.page_size)];
        let mut block = be16(&b[h + 1..]);
        let mut hops = 0;
        while block != 0 {
            ensure!(
                block + 4 <= usable && hops < 10_000,
                "page {p}: bad freeblock"
            );
            let size = be16(&b[block as usize + 2..]);
            free.push((block, (block + size).min(usable)));
            block = be16(&b[block as usize..]);
            hops += 1;
        }
        let mut children = Vec::new();
        let mut chains = Vec::new();
        if interior {
            children.push(u64::from(be32(&b[h + 8..h + 12])));
        }
        let u = usable;
        let max_local = if table {
            u - 35
        } else {
            (u - 12) * 64 / 255 - 23
        };
        let min_local = (u - 12) * 32 / 255 - 23;
        for i in 0..cells {
            let at = be16(&b[h + hsize + 2 * i..]) as usize;
            ensure!(at < usable as usize, "page {p}: bad cell pointer");
            let mut c = at;
            if interior {
                ensure!(c + 4 <= usable as usize, "page {p}: bad cell");
                children.push(u64::from(be32(&b[c..c + 4])));
                c += 4;
                if table {
                    continue;
                }
            }
            let (payload, n) = varint(b, c)?;
            c += n;
            if table {
                c += varint(b, c)?.1;
            }
            if payload > max_local {
                let k = min_local + (payload - min_local) % (u - 4);
                let local = if k <= max_local { k } else { min_local };
                let at = c + local as usize;
                ensure!(at + 4 <= usable as usize, "page {p}: bad overflow pointer");
                chains.push((u64::from(be32(&b[at..at + 4])), payload - local));
            }
        }
        for (from, to) in free {
            self.range(p, from, to);
        }
        stack.extend(children);
        for (first, rest) in chains {
            self.overflow(first, rest)?;
        }
        Ok(())
    }

    /// An overflow chain holding `rest` bytes of a payload: the unused tail of its last page
    /// holds no row.
    fn overflow(&mut self, first: u64, mut rest: u64) -> Result<()> {
        let mut page = first;
        while rest > 0 {
            self.claim(page)?;
            self.read(page)?;
            let here = rest.min(self.usable - 4);
            rest -= here;
            if rest == 0 {
                self.range(page, 4 + here, self.page_size);
            }
            page = u64::from(be32(&self.buf[0..4]));
            ensure!(rest == 0 || page != 0, "an overflow chain ends early");
        }
        Ok(())
    }
}

impl super::SqliteStore {
    /// The byte ranges of the file that hold no live row (see [`free_ranges`]), read under a
    /// read transaction. `None` when they cannot be told apart: the `-wal` holds frames
    /// (pages of the file may be superseded), or the walk met a page it could not place.
    pub(super) fn free_space(&self) -> Result<Option<Vec<(u64, u64)>>> {
        let wal = std::path::PathBuf::from(format!("{}-wal", self.path().display()));
        if std::fs::metadata(&wal).is_ok_and(|m| m.len() > 0) {
            return Ok(None);
        }
        let conn = self.connection();
        // Inside a transaction (a batch's) the file may not hold what the connection sees.
        if !conn.is_autocommit() {
            return Ok(None);
        }
        let Ok(tx) = conn.unchecked_transaction() else {
            return Ok(None);
        };
        let roots: Vec<u64> = {
            let mut st = tx
                .prepare("SELECT rootpage FROM sqlite_master WHERE rootpage > 0")
                .map_err(|e| self.sql_error(e))?;
            let rows = st
                .query_map([], |r| r.get::<_, i64>(0))
                .map_err(|e| self.sql_error(e))?;
            rows.collect::<rusqlite::Result<Vec<i64>>>()
                .map_err(|e| self.sql_error(e))?
                .into_iter()
                .map(|p| p.max(0) as u64)
                .collect()
        };
        // A frame written since the check above (an app beside memctl) may supersede a page.
        if std::fs::metadata(&wal).is_ok_and(|m| m.len() > 0) {
            return Ok(None);
        }
        let ranges = free_ranges(self.path(), &roots).ok();
        drop(tx);
        Ok(ranges)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The root pages of every table and index of `conn`'s file.
    fn roots_of(conn: &rusqlite::Connection) -> Vec<u64> {
        let mut st = conn
            .prepare("SELECT rootpage FROM sqlite_master WHERE rootpage > 0")
            .expect("prepare");
        st.query_map([], |r| r.get::<_, i64>(0))
            .expect("query")
            .map(|r| r.expect("row") as u64)
            .collect()
    }

    #[test]
    fn free_ranges_hold_a_deleted_rows_text_and_no_live_one() {
        let dir = std::env::temp_dir().join(format!("memctl-freemap-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("dir");
        let path = dir.join("t.sqlite");
        let _ = std::fs::remove_file(&path);
        let conn = rusqlite::Connection::open(&path).expect("open");
        conn.execute_batch(
            "PRAGMA secure_delete = OFF; CREATE TABLE t (k TEXT PRIMARY KEY, v BLOB);",
        )
        .expect("schema");
        let big = "LIVE-OVERFLOW ".repeat(2000);
        for (k, v) in [
            ("a", "live text human".to_owned()),
            ("b", "gone text human".to_owned()),
            ("c", big),
            ("d", "GONE-OVERFLOW ".repeat(2000)),
        ] {
            conn.execute("INSERT INTO t VALUES (?, ?)", rusqlite::params![k, v])
                .expect("insert");
        }
        conn.execute("DELETE FROM t WHERE k IN ('b', 'd')", [])
            .expect("delete");
        let roots = roots_of(&conn);
        let ranges = free_ranges(&path, &roots).expect("walks");
        let mut free = Vec::new();
        search_ranges(&path, &ranges, 0, &mut |b| {
            free.extend_from_slice(b);
            true
        })
        .expect("reads");
        let holds = |t: &str| free.windows(t.len()).any(|w| w == t.as_bytes());
        assert!(holds("gone text human"));
        assert!(holds("GONE-OVERFLOW"));
        // The live rows' bytes are outside every range (a page SQLite freed while it moved
        // cells may still hold an old copy, which is inside one: a real remnant).
        let all = std::fs::read(&path).expect("read");
        let inside = |at: usize| {
            ranges
                .iter()
                .any(|&(s, n)| (s..s + n).contains(&(at as u64)))
        };
        for live in ["live text", "LIVE-OVERFLOW", "CREATE TABLE"] {
            let at: Vec<usize> = all
                .windows(live.len())
                .enumerate()
                .filter(|(_, w)| *w == live.as_bytes())
                .map(|(i, _)| i)
                .collect();
            assert!(at.iter().any(|&i| !inside(i)), "{live}: {at:?} {ranges:?}");
        }
        let _ = std::fs::remove_dir_all(&dir);
    }

    /// The walk shared across threads finds exactly what one walk finds, on a file whose
    /// largest table spans thousands of pages (deleted rows, freeblocks, free pages and
    /// overflow chains among them).
    #[test]
    fn a_shared_walk_finds_what_one_walk_finds() {
        let dir = tempfile::tempdir().expect("dir");
        let path = dir.path().join("big.sqlite");
        let conn = rusqlite::Connection::open(&path).expect("open");
        conn.execute_batch(
            "PRAGMA secure_delete = OFF; CREATE TABLE t (k INTEGER PRIMARY KEY, v BLOB); \
             CREATE INDEX t_v ON t (substr(v, 1, 8)); BEGIN;",
        )
        .expect("schema");
        for k in 0..20_000i64 {
            let size = if k % 997 == 0 { 9_000 } else { 300 + (k % 700) };
            conn.execute(
                "INSERT INTO t VALUES (?1, randomblob(?2))",
                rusqlite::params![k, size],
            )
            .expect("insert");
        }
        conn.execute_batch("COMMIT; DELETE FROM t WHERE k % 7 = 0 OR k BETWEEN 5000 AND 6000;")
            .expect("delete");
        let roots = roots_of(&conn);
        let one = free_ranges_in(&path, &roots, 1).expect("one walk");
        assert!(one.len() > 1000, "{} ranges", one.len());
        for parts in [2, 3, 4] {
            assert_eq!(free_ranges_in(&path, &roots, parts).expect("shared"), one);
        }
        // A page two walks both reach is an error, as it is for one.
        let twice: Vec<u64> = roots.iter().chain(&roots).copied().collect();
        assert!(free_ranges_in(&path, &twice, 1).is_err());
        assert!(free_ranges_in(&path, &twice, 3).is_err());
    }
}
