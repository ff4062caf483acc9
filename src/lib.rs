//! memctl: inspect and maintain LangGraph SQLite checkpoint databases.
//!
//! Layers, bottom up:
//! - [`storage`]: the SQLite file (schema detection, queries, read-only opening);
//! - [`codec`]: LangGraph's serializer, decoded losslessly;
//! - [`model`]: checkpoints, metadata, messages, pending work;
//! - [`endpoint`]: the OpenAI-compatible chat API (for summaries);
//! - [`read`]: a thread's state read through the store (checkpoints, DeltaChannel replay,
//!   the latest checkpoints in batches);
//! - [`commands`]: one module per subcommand;
//! - [`tokens`]: token counters (LangChain approximate);
//! - [`output`]: tables, JSON, terminal-safe text;
//! - [`par`]: work split across cores;
//! - [`interrupt`]: Ctrl-C during a batch.
//! - [`ids`]: checkpoint ids (uuid6): the time they hold, their order;
//! - [`bytesearch`]: many strings looked for in bytes at once (below storage);
//! - [`files`]: files read whole (a config, a template), capped.
//! - [`version`]: what `--version` prints (the LangGraph formats this build knows).
//! - [`tui`]: `memctl browse`, the read-only terminal browser.

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
