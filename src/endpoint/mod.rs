//! Model endpoints memctl talks to.
//!
//! - [`chat`]: the OpenAI-compatible chat completions API (OpenAI, Ollama, vLLM, llama.cpp
//!   server, DeepSeek…).

pub mod chat;
