//! memctl: inspect and maintain LangGraph agents' memory (checkpoints and the Store) in
//! SQLite and PostgreSQL.
//!
//! Layers, top down (every arrow points down; `tests/layering.rs` checks it):
//! - [`cli`] (clap) and [`commands`]: the command line, each command mapping its flags onto a
//!   job's request and rendering the report;
//! - [`tui`]: `memctl browse`, the read-only terminal browser, on the same jobs;
//! - [`output`]: the reports as tables, JSON, JSONL; the one writer of stdout and stderr;
//! - [`jobs`]: one per command, a request in, a typed report out, notes through a sink;
//! - [`read`]: a thread's state read through the store (checkpoints, DeltaChannel replay,
//!   the latest checkpoints in batches);
//! - [`ops`]: pure operations (edits, plans, selections);
//! - [`model`]: checkpoints, metadata, messages, pending work;
//! - [`codec`]: LangGraph's serializer, decoded losslessly;
//! - [`storage`]: the backends (a core trait per surface and capabilities);
//! - [`tokens`]: token counters; [`endpoint`]: the OpenAI-compatible chat API (summaries);
//! - below them all: [`text`] (words and escapes for people), [`overflow`] (rows past a few
//!   MB in a temporary file), [`ids`] (checkpoint ids' time), [`bytesearch`] (many strings in
//!   bytes), [`files`] (files read whole, capped), [`notes`] (the note writer for layers
//!   without a sink), [`par`] (work split across cores), [`interrupt`] (Ctrl-C during a
//!   batch), [`exit`] (exit codes), [`version`] (what `--version` prints).

pub mod bytesearch;
pub mod cli;
pub mod codec;
pub mod commands;
pub mod endpoint;
pub mod exit;
pub mod files;
pub mod ids;
pub mod interrupt;
pub mod jobs;
pub mod model;
pub mod notes;
pub mod ops;
pub mod output;
pub mod overflow;
pub mod par;
pub mod read;
pub mod storage;
pub mod text;
pub mod tokens;
pub mod tui;
pub mod version;
