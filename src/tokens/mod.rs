//! Token counting that matches the libraries people trust, to the token.
//!
//! - [`approx`]: LangChain's `count_tokens_approximately` (default parameters);
//! - [`openai`]: langchain_openai's `get_num_tokens_from_messages` (tiktoken o200k / cl100k),
//!   on [`pretok`] (tiktoken's pre-tokenizers) and [`bpe`] (its rank tables and merge);

pub mod approx;
pub mod bpe;
pub mod openai;
pub mod pretok;

use anyhow::Result;

use crate::model::Message;

/// A token counter chosen on the command line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Counter {
    /// LangChain's `count_tokens_approximately`.
    Approx,
    /// langchain_openai's `get_num_tokens_from_messages` with this framing.
    OpenAi(openai::Framing),
}

impl Counter {
    /// Tokens of one message, without list overhead.
    pub fn count_message(&self, m: &Message) -> Result<u64> {
        Ok(match self {
            Counter::Approx => approx::count_message(m),
            Counter::OpenAi(f) => openai::count_message(m, *f)?.max(0) as u64,
        })
    }

    /// Tokens a list adds once, whatever its length (the reply priming for OpenAI).
    pub fn list_overhead(&self) -> u64 {
        match self {
            Counter::Approx => 0,
            Counter::OpenAi(_) => 3,
        }
    }

    /// Tokens of a list of messages, as the library counts it.
    pub fn count(&self, msgs: &[Message]) -> Result<u64> {
        let mut n = self.list_overhead();
        for m in msgs {
            n += self.count_message(m)?;
        }
        Ok(n)
    }

    /// A short name for reports.
    pub fn name(&self) -> String {
        match self {
            Counter::Approx => "approx".into(),
            Counter::OpenAi(f) => match f.encoding {
                openai::Encoding::O200k => "o200k".into(),
                openai::Encoding::Cl100k => "cl100k".into(),
            },
        }
    }
}
