//! Typed views over stored objects: checkpoints, their metadata, messages and pending work.

pub mod approx;
pub mod channels;
pub mod checkpoint;
pub mod delta;
pub mod message;
pub mod metadata;
pub mod outline;
pub mod state;
pub mod stored_text;

pub use checkpoint::{Checkpoint, MessagesChannel};
pub use message::{Kind, Message};
pub use metadata::Metadata;
