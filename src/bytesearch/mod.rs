//! Many strings looked for in bytes at once (a database file's pages, stored rows): below
//! storage, which searches with them, and ops, which decides what to search for; it knows
//! neither.
//!
//! - [`anchors`]: whether a haystack may hold any of many strings (Aho-Corasick over short
//!   anchors, a packed SIMD searcher first);
//! - [`needles`]: many strings looked for at once, each until it is found.

pub mod anchors;
pub mod needles;
