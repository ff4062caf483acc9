//! Decoding and encoding of LangGraph's serialized values.
//!
//! - [`msgpack`]: a lossless MessagePack value model (re-encoding gives the same bytes).
//! - [`typed`]: the `(type, blob)` envelope of `JsonPlusSerializer.dumps_typed`.
//! - [`aes`]: the `<type>+aes` envelope of LangGraph's `EncryptedSerializer`, and its key.
//! - [`ext`]: names and shapes of LangGraph's extension codes 0–7.
//! - [`json`]: a documented JSON rendering of decoded values;
//! - [`lazy`]: a borrowing reader for hot paths (listing, counting).
//! - [`pyrepr`], [`pyjson`]: Python's `repr()` and `json.dumps` of values, as LangChain's
//!   counters and prompts measure and print them.

pub mod aes;
pub mod ext;
pub mod json;
pub mod lazy;
pub mod msgpack;
pub mod pieces;
pub mod pyjson;
pub mod pyrepr;
pub mod typed;

pub use msgpack::Value;
pub use typed::{decode_opened, decode_typed, Decoded};
