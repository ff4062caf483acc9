//! The `export` job: threads into a new SQLite file in SqliteSaver's layout (LangGraph opens it
//! with `SqliteSaver.from_conn_string`), optionally redacted. The archive is built under a
//! temporary name beside the target, one transaction per thread, then vacuumed (written with
//! `secure_delete`, so no freed byte keeps anything) and searched: every decoded value for
//! the patterns, every byte of the file for what they matched (`forget`'s search). Only an
//! archive with no match left is moved into place; otherwise it is deleted and the command
//! fails.

use std::path::{Path, PathBuf};

use anyhow::{anyhow, bail, Context, Result};

use super::copy::report::{ExportReport, ExportedThread, LeftOut, RedactionReport};
use super::copy::threads::{self, left_out_partial, same_database, thread_ids};
use super::{Ctx, Sink};
use crate::exit::{Partial, Usage};
use crate::ops::copy::Redaction;
use crate::ops::forget::searchable;
use crate::storage::{self, Access, CheckpointStore, Maintenance, RawBytes, SqliteStore};

/// What to export.
#[derive(Debug, Clone)]
pub struct Request {
    /// The threads (`--thread`; not with [`Request::all`]).
    pub threads: Vec<String>,
    /// Every thread of the database (`--all`).
    pub all: bool,
    /// The archive to write (`-o`).
    pub output: PathBuf,
    /// Replace the file if it exists (`--force`).
    pub force: bool,
    /// Patterns whose matches are erased (`--redact`).
    pub redact: Vec<String>,
}

/// What an export wrote, and how the run ends once the report is shown.
#[derive(Debug)]
pub struct Report {
    /// The report.
    pub export: ExportReport,
    /// Threads were left out of the archive (exit code 3), when some were.
    pub partial: Option<Partial>,
}

impl Report {
    /// The run's result once the report is shown.
    pub fn finish(self) -> Result<()> {
        self.partial.map_or(Ok(()), |p| Err(p.into()))
    }
}

/// How far a match of a pattern in the archive's raw bytes may reach across two pieces of
/// the file read for the search (see `read_in_pieces`).
const RAW_OVERLAP: usize = 64 << 10;

/// Runs `export`: the archive built under a temporary name, checked, then moved into place;
/// the unfinished archives of killed exports beside it are removed (a note each).
pub fn run(req: &Request, ctx: &Ctx, sink: &dyn Sink) -> Result<Report> {
    let mut redaction = match req.redact.is_empty() {
        true => None,
        false => Some(
            Redaction::new(&req.redact)
                .map_err(|e| Usage(format!("{e:#}")))?
                .with_keys(ctx.keys()),
        ),
    };
    if let Ok(storage::Location::Postgres(_)) = storage::locate_as(&req.output, "-o") {
        return Err(Usage("-o takes a file path: an export is a SQLite file (copy --to writes into a PostgreSQL database)".into()).into());
    }
    let shown = storage::shown_path(&req.output);
    let existed = std::fs::symlink_metadata(&req.output).is_ok();
    if existed && !req.force {
        bail!("'{shown}' exists; nothing written (--force replaces it)");
    }
    if existed && std::fs::metadata(&req.output).is_ok_and(|m| m.is_dir()) {
        bail!("'{shown}' is a directory; nothing written");
    }
    let source = ctx.open(Access::ReadOnly)?;
    if let Some(db) = &ctx.db {
        if existed && same_database(db, &req.output)? {
            return Err(Usage("-o names the database being exported".into()).into());
        }
    }
    let threads: Vec<String> = match req.all {
        false => {
            let mut seen = Vec::new();
            for t in &req.threads {
                if !source.thread_exists(t)? {
                    bail!("no thread '{t}' in the database; nothing written");
                }
                if !seen.contains(t) {
                    seen.push(t.clone());
                }
            }
            seen
        }
        true => {
            let all = thread_ids(&*source)?;
            if all.is_empty() {
                bail!("the database holds no thread; nothing written");
            }
            all
        }
    };
    let tmp = temp_beside(&req.output)?;
    for stale in remove_stale_temporaries(&req.output) {
        sink.note(&format!(
            "removed '{}', the unfinished archive of an export that was killed (process {} is gone)",
            storage::shown_path(&stale.0),
            stale.1
        ));
    }
    let mut left_out = Vec::new();
    let built = build(
        ctx,
        &*source,
        &threads,
        redaction.as_mut(),
        &tmp,
        &mut left_out,
    );
    let (exported, searched) = match built {
        Ok(b) => b,
        Err(e) => {
            remove_file_set(&tmp);
            return Err(e);
        }
    };
    // Into place: over the old file with --force (an atomic rename), else only if the name
    // is still free (a hard link fails on an existing name; a rename would overwrite it).
    let placed = match req.force {
        true => std::fs::rename(&tmp, &req.output),
        false => std::fs::hard_link(&tmp, &req.output),
    };
    remove_file_set(&tmp);
    placed.with_context(|| format!("cannot write '{shown}'; nothing written"))?;
    let mut totals = crate::ops::copy::CopyCounts::default();
    exported.iter().for_each(|t| totals.add(&t.counts));
    let report = ExportReport {
        file: shown,
        replaced_file: existed,
        threads: exported,
        totals,
        left_out,
        redaction: redaction.map(|r| RedactionReport {
            patterns: req.redact.len(),
            strings_redacted: r.counts.strings_redacted,
            rows_redacted: r.counts.rows_redacted,
            texts_searched: searched.0,
            short_texts: searched.1,
        }),
    };
    let partial = left_out_partial(&report.left_out, report.threads.len());
    Ok(Report {
        export: report,
        partial,
    })
}

/// Writes the archive at `tmp` and verifies it; returns the threads written and, with a
/// redaction, how many matched texts the byte search looked for and how many were too short
/// for it. A thread with a row that does not decode goes to `left_out` instead (nothing of it
/// in the archive); when every thread does, nothing is written.
fn build(
    ctx: &Ctx,
    source: &dyn CheckpointStore,
    threads: &[String],
    mut redaction: Option<&mut Redaction>,
    tmp: &Path,
    left_out: &mut Vec<LeftOut>,
) -> Result<(Vec<ExportedThread>, (usize, usize))> {
    let busy = ctx.busy_timeout;
    let keys = ctx.keys();
    let archive = SqliteStore::create_new(tmp, busy)?;
    // Freed space is zeroed as it is freed: no byte of a row outlives it.
    archive.zero_deleted_content()?;
    let mut exported = Vec::with_capacity(threads.len());
    for t in threads {
        let rows = source.read_thread(t)?;
        if rows.checkpoints.is_empty() {
            bail!("thread '{t}' has no checkpoint any more (deleted while memctl worked); nothing written");
        }
        // An archive LangGraph cannot read is no archive: such a thread is left out.
        if let Err(e) = crate::read::readable::check_thread_as_stored(&keys, t, &rows) {
            match threads::left_out(t, &e) {
                Some(l) => {
                    left_out.push(l);
                    continue;
                }
                None => return Err(e),
            }
        }
        let mut plan = crate::ops::copy::plan(rows, t, t, None)?;
        if let Some(r) = redaction.as_deref_mut() {
            r.apply(t, &mut plan.rows)?;
        }
        archive.write_thread(t, &plan.rows, false)?;
        exported.push(ExportedThread {
            thread: t.clone(),
            counts: plan.counts,
        });
    }
    if exported.is_empty() {
        if let Some(first) = left_out.first() {
            bail!(
                "nothing to export: {} ({}{}); nothing written",
                match left_out.len() {
                    1 => "the thread cannot be read".to_owned(),
                    n => format!("none of the {n} threads can be read"),
                },
                first.why,
                match left_out.len() {
                    1 => String::new(),
                    n => format!(", and {} more", n - 1),
                }
            );
        }
    }
    archive.vacuum()?;
    let Some(r) = redaction else {
        return Ok((exported, (0, 0)));
    };
    // Every value, decoded: no match of the patterns left.
    let mut left = Vec::new();
    for t in threads {
        left.extend(r.remaining(t, &archive.read_thread(t)?));
    }
    drop(archive);
    if let Some(first) = left.first() {
        bail!(
            "a match of --redact is left in the archive ({first}{}: a value memctl leaves as it is, such as an id or a name); the archive was deleted",
            match left.len() {
                1 => String::new(),
                n => format!(" and {} more", n - 1),
            }
        );
    }
    // Every byte of the file (and any WAL), for every matched text as msgpack and JSON hold it.
    let (texts, short) = searchable(r.matched());
    let mut needles: Vec<String> = Vec::new();
    for t in &texts {
        needles.push(t.clone());
        let escaped = crate::storage::json_escaped(t);
        if escaped != *t {
            needles.push(escaped);
        }
    }
    let files = [tmp.to_path_buf(), suffixed(tmp, "-wal")];
    let hits = crate::storage::sqlite::find_in_files(&files, &needles)?;
    // And every pattern itself, over every byte: a match in what memctl leaves as it is
    // (an id, a name, a message type, a map key) is a match left too.
    let raw = r.patterns().bytes_regexes()?;
    let mut raw_hit = false;
    for f in &files {
        crate::storage::sqlite::read_in_pieces(f, RAW_OVERLAP, &mut |piece| {
            raw_hit |= raw.iter().any(|re| re.is_match(piece));
            !raw_hit
        })?;
    }
    if raw_hit || hits.iter().any(|h| !h.is_empty()) {
        bail!("the archive's bytes still hold a match of --redact (in a place memctl leaves as it is: an id, a name, a message type, a key); the archive was deleted");
    }
    Ok((exported, (texts.len(), short)))
}

/// What the name of an archive being built for `-o NAME` starts with: `.NAME` and this,
/// then the building process's id (see [`temp_beside`]).
const TEMP_MARK: &str = ".memctl-export-";

/// A name beside `path` for the archive while it is built (same directory: the final rename
/// stays on one file system).
fn temp_beside(path: &Path) -> Result<PathBuf> {
    let name = path
        .file_name()
        .ok_or_else(|| anyhow!("-o '{}' names no file", storage::shown_path(path)))?;
    let mut tmp = std::ffi::OsString::from(".");
    tmp.push(name);
    tmp.push(format!("{TEMP_MARK}{}", std::process::id()));
    Ok(path.with_file_name(tmp))
}

/// Removes the archives that exports to `path` left unfinished when they were killed
/// (`kill -9`, a crash, a power cut: no code of theirs ran to remove them), with their
/// `-wal` / `-shm` / `-journal`: those named by [`temp_beside`] for a process that no longer
/// runs. One of a process that still runs (another export, or a process that took the
/// number since) is left alone. Returns each archive removed and its process id.
fn remove_stale_temporaries(path: &Path) -> Vec<(PathBuf, u32)> {
    let (Some(dir), Some(name)) = (path.parent(), path.file_name()) else {
        return Vec::new();
    };
    let dir = match dir.as_os_str().is_empty() {
        true => Path::new("."),
        false => dir,
    };
    let mut prefix = std::ffi::OsString::from(".");
    prefix.push(name);
    prefix.push(TEMP_MARK);
    let prefix = prefix.as_encoded_bytes().to_vec();
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut stale = std::collections::BTreeMap::new();
    for entry in entries.flatten() {
        let file = entry.file_name();
        let Some(rest) = file.as_encoded_bytes().strip_prefix(prefix.as_slice()) else {
            continue;
        };
        // The archive, or one of its side files (the archive may be gone already).
        let id = ["-wal", "-shm", "-journal"]
            .iter()
            .find_map(|suffix| rest.strip_suffix(suffix.as_bytes()))
            .unwrap_or(rest);
        let Some((digits, pid)) = std::str::from_utf8(id)
            .ok()
            .filter(|r| !r.is_empty() && r.bytes().all(|b| b.is_ascii_digit()))
            .and_then(|r| Some((r, r.parse::<u32>().ok()?)))
        else {
            continue;
        };
        if pid != std::process::id() && !process_runs(pid) {
            let mut base = std::ffi::OsString::from(".");
            base.push(name);
            base.push(TEMP_MARK);
            base.push(digits);
            stale.insert(dir.join(base), pid);
        }
    }
    stale
        .into_iter()
        .inspect(|(archive, _)| remove_file_set(archive))
        .collect()
}

/// True when a process with id `pid` runs (or may: one memctl cannot signal is another
/// user's, and so alive).
fn process_runs(pid: u32) -> bool {
    let Ok(pid) = libc::pid_t::try_from(pid) else {
        return true;
    };
    // SAFETY: signal 0 only checks whether the process exists; nothing is sent.
    let rc = unsafe { libc::kill(pid, 0) };
    rc == 0 || std::io::Error::last_os_error().raw_os_error() == Some(libc::EPERM)
}

fn suffixed(path: &Path, suffix: &str) -> PathBuf {
    let mut p = path.as_os_str().to_owned();
    p.push(suffix);
    PathBuf::from(p)
}

/// Removes a SQLite file and its `-wal` / `-shm` / `-journal`.
fn remove_file_set(path: &Path) {
    for suffix in ["", "-wal", "-shm", "-journal"] {
        let _ = std::fs::remove_file(suffixed(path, suffix));
    }
}
