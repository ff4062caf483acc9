//! `memctl export`: threads into a new SQLite file in SqliteSaver's layout (LangGraph opens it
//! with `SqliteSaver.from_conn_string`), optionally redacted. The archive is built under a
//! temporary name beside the target, one transaction per thread, then vacuumed (written with
//! `secure_delete`, so no freed byte keeps anything) and searched: every decoded value for
//! the patterns, every byte of the file for what they matched (`forget`'s search). Only an
//! archive with no match left is moved into place; otherwise it is deleted and the command
//! fails.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{anyhow, bail, Context, Result};

use crate::cli::{ExportArgs, GlobalArgs};
use crate::exit::Usage;
use crate::ops::copy::Redaction;
use crate::ops::forget::searchable;
use crate::output::copy::{write_export, ExportReport, ExportedThread, LeftOut, RedactionReport};
use crate::storage::{self, Access, CheckpointStore, Maintenance, RawBytes, SqliteStore};

/// How far a match of a pattern in the archive's raw bytes may reach across two pieces of
/// the file read for the search (see `read_in_pieces`).
const RAW_OVERLAP: usize = 64 << 10;

/// Runs `export`.
pub fn run(g: &GlobalArgs, args: &ExportArgs, out: &mut dyn Write) -> Result<()> {
    let mut redaction = match args.redact.is_empty() {
        true => None,
        false => Some(
            Redaction::new(&args.redact)
                .map_err(|e| Usage(format!("{e:#}")))?
                .with_keys(super::keys(g)),
        ),
    };
    if let Ok(storage::Location::Postgres(_)) = storage::locate_as(&args.output, "-o") {
        return Err(Usage("-o takes a file path: an export is a SQLite file (copy --to writes into a PostgreSQL database)".into()).into());
    }
    let shown = storage::shown_path(&args.output);
    let existed = std::fs::symlink_metadata(&args.output).is_ok();
    if existed && !args.force {
        bail!("'{shown}' exists; nothing written (--force replaces it)");
    }
    if existed && std::fs::metadata(&args.output).is_ok_and(|m| m.is_dir()) {
        bail!("'{shown}' is a directory; nothing written");
    }
    let source = super::open(g, Access::ReadOnly)?;
    if let Some(db) = &g.db {
        if existed && super::copy::same_database(db, &args.output)? {
            return Err(Usage("-o names the database being exported".into()).into());
        }
    }
    let threads: Vec<String> = match args.all {
        false => {
            let mut seen = Vec::new();
            for t in &args.thread {
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
            let all = super::copy::thread_ids(&*source)?;
            if all.is_empty() {
                bail!("the database holds no thread; nothing written");
            }
            all
        }
    };
    let tmp = temp_beside(&args.output)?;
    for stale in remove_stale_temporaries(&args.output) {
        if !g.quiet {
            eprintln!(
                "memctl: removed '{}', the unfinished archive of an export that was killed (process {} is gone)",
                crate::output::sanitize::one_line(&storage::shown_path(&stale.0)),
                stale.1
            );
        }
    }
    let mut left_out = Vec::new();
    let built = build(
        g,
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
    let placed = match args.force {
        true => std::fs::rename(&tmp, &args.output),
        false => std::fs::hard_link(&tmp, &args.output),
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
            patterns: args.redact.len(),
            strings_redacted: r.counts.strings_redacted,
            rows_redacted: r.counts.rows_redacted,
            texts_searched: searched.0,
            short_texts: searched.1,
        }),
    };
    let partial = super::copy::left_out_partial(&report.left_out, report.threads.len());
    write_export(out, crate::output::resolve_format(g.format), &report)?;
    partial.map_or(Ok(()), |p| Err(p.into()))
}

/// Writes the archive at `tmp` and verifies it; returns the threads written and, with a
/// redaction, how many matched texts the byte search looked for and how many were too short
/// for it. A thread with a row that does not decode goes to `left_out` instead (nothing of it
/// in the archive); when every thread does, nothing is written.
fn build(
    g: &GlobalArgs,
    source: &dyn CheckpointStore,
    threads: &[String],
    mut redaction: Option<&mut Redaction>,
    tmp: &Path,
    left_out: &mut Vec<LeftOut>,
) -> Result<(Vec<ExportedThread>, (usize, usize))> {
    let busy = Duration::from_millis(g.busy_timeout);
    let keys = super::keys(g);
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
            match super::copy::left_out(t, &e) {
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
