//! Token counting that matches the libraries people trust, to the token.
//!
//! - [`approx`]: LangChain's `count_tokens_approximately` (default parameters);
//! - [`openai`]: langchain_openai's `get_num_tokens_from_messages` (tiktoken o200k / cl100k);
//! - [`pyrepr`]: Python `repr()` as those counters measure it.

pub mod approx;
pub mod openai;
pub mod pyrepr;
