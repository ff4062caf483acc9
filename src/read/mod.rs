//! Reading a thread's state, below the commands and above `ops`, `storage` and `model`:
//! which threads and checkpoints there are ([`thread`]), a checkpoint loaded whole or shallow
//! ([`checkpoint`]), its DeltaChannels replayed as `get_state` shows them ([`replay`]), the
//! channels of its state ([`state`]), a thread's history ([`history`]), the latest
//! checkpoints of threads in batches ([`latest`]) on one connection or several
//! ([`readers`]), every thread streamed in thread-id order ([`stream`]), and whether
//! LangGraph can read a thread's rows ([`readable`]). Nothing here knows clap or renders: the commands and `browse` read
//! through these functions and hand what they read to `output`.

pub mod checkpoint;
pub mod history;
pub mod latest;
pub mod readable;
pub mod readers;
pub mod replay;
pub mod state;
pub mod stream;
pub mod thread;

pub use crate::ops::edit::{decode_writes, LoadedCheckpoint};
pub use checkpoint::{
    decode_shallow, fetch_checkpoint, load_checkpoint, load_shallow, load_state, load_stored,
    load_writes, message_list, stored_list, State,
};
pub use latest::{load_editable, map_latest, read_latest};
pub use readers::Readers;
pub use replay::{needs_replay, DeltaValue, Origin};
pub use state::state_values;
pub use thread::{
    meta_select, no_thread, no_thread_among, require_thread, resolve_checkpoint_id, unknown_thread,
    Missing,
};
