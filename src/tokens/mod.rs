//! Token counting that matches the libraries people trust, to the token.
//!
//! - [`approx`]: LangChain's `count_tokens_approximately` (default parameters).

pub mod approx;
pub mod pyrepr;
