//! Model endpoints memctl talks to.
//!
//! - [`chat`]: the OpenAI-compatible chat completions API (OpenAI, Ollama, vLLM, llama.cpp
//!   server, DeepSeek…);
//! - [`redact`]: credentials kept out of everything shown about an endpoint.

pub mod chat;
pub mod redact;
