//! Pure operations over messages and checkpoints, unit-tested without a database.
//!
//! - [`window`]: which messages a trim keeps (LangChain's `trim_messages` rules);
//! - [`remove`]: which messages a removal takes, with their tool-call partners;
//! - [`summarize`]: what a summary replaces, its prompt and its message;
//! - [`update`]: the checkpoint and write row `graph.update_state` would append;
//! - [`patterns`]: what a redaction erases (the union of every pattern's matches);
//! - [`purge`]: scrubbing removed messages from history (`rm --purge`, `forget`);
//! - [`forget`]: what erasing a person's data takes, its verification and its receipt;
//! - [`find`]: what `find` matches;
//! - [`gc`]: which old checkpoints of a thread can go;
//! - [`store`]: the LangGraph Store's namespaces (labels, grouping to a depth);
//! - [`migrate_store`]: a Store item moved between backends, and item equality;
//! - [`duration`]: `30d`, `12h` style durations for `--idle`;
//! - [`activity`]: a thread's age (the app's last activity), for every command;
//! - [`suggest`]: "did you mean" for a mistyped thread id.

pub mod activity;
pub mod batch;
pub mod copy;
pub mod duration;
pub mod edit;
pub mod find;
pub mod forget;
pub mod gc;
pub mod migrate_store;
pub mod outcome;
pub mod patterns;
pub mod purge;
pub mod remove;
pub mod sizes;
pub mod store;
pub mod suggest;
pub mod summarize;
pub mod ttl;
pub mod update;
pub mod window;
