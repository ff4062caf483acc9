//! The `forget` job: erase a person's data from the whole database, with proof.

pub mod findings;

pub use findings::findings;
