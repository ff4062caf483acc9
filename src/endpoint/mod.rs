//! Model endpoints memctl talks to.
//!
//! - [`chat`]: the OpenAI-compatible chat completions API (OpenAI, Ollama, vLLM, llama.cpp
//!   server, DeepSeek…);
//! - [`redact`]: credentials kept out of everything shown about an endpoint;
//! - [`prompt_file`]: reading a prompt template, capped.

pub mod chat;
pub mod prompt_file;
pub mod redact;
