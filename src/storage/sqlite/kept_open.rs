//! The database's files as memctl reads them outside SQLite (its header, the byte search of
//! a purge, the lock probe of `-shm`): through descriptors kept open until the process exits.
//!
//! POSIX `fcntl` locks belong to a process, and closing *any* descriptor of a file drops all
//! of that process's locks on it. SQLite's connections hold such locks for as long as they
//! are open (in WAL mode a shared lock on the database file, which tells a closing app that
//! it is not the last connection and must not delete the `-wal`; and a shared lock on the
//! `-shm`). A plain `File::open` + close of the database beside memctl's own connection would
//! silently release them. SQLite avoids this for its own connections; memctl's other reads
//! do it by never closing.

use std::fs::File;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};

/// A descriptor and the path it was opened by.
type Kept = (PathBuf, Arc<File>);

/// Every descriptor opened so far. A file replaced on disk (another inode at the same path)
/// gets a new descriptor; the old one stays open too.
static KEPT: OnceLock<Mutex<Vec<Kept>>> = OnceLock::new();

/// `path` opened read-only, through a descriptor this process never closes. The file's
/// position is shared: read it with positioned reads (`FileExt::read_at`).
pub fn open(path: &Path) -> io::Result<Arc<File>> {
    let on_disk = std::fs::metadata(path)?;
    let mut kept = KEPT
        .get_or_init(Default::default)
        .lock()
        .map_err(|_| io::Error::other("a thread panicked while opening a file"))?;
    for (p, f) in kept.iter() {
        if p == path && same_file(f, &on_disk) {
            return Ok(Arc::clone(f));
        }
    }
    let file = Arc::new(File::open(path)?);
    kept.push((path.to_owned(), Arc::clone(&file)));
    Ok(file)
}

#[cfg(unix)]
fn same_file(f: &File, on_disk: &std::fs::Metadata) -> bool {
    use std::os::unix::fs::MetadataExt;
    f.metadata()
        .is_ok_and(|m| m.dev() == on_disk.dev() && m.ino() == on_disk.ino())
}

#[cfg(not(unix))]
fn same_file(_f: &File, _on_disk: &std::fs::Metadata) -> bool {
    true
}

/// Reads up to `buf.len()` bytes at `offset` (fewer only at the end of the file).
pub fn read_at(file: &File, buf: &mut [u8], offset: u64) -> io::Result<usize> {
    let mut done = 0;
    while done < buf.len() {
        #[cfg(unix)]
        let n = std::os::unix::fs::FileExt::read_at(file, &mut buf[done..], offset + done as u64);
        #[cfg(windows)]
        let n =
            std::os::windows::fs::FileExt::seek_read(file, &mut buf[done..], offset + done as u64);
        match n {
            Ok(0) => break,
            Ok(n) => done += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(done)
}
