//! Exit codes (documented in the README).

/// Everything worked.
pub const SUCCESS: u8 = 0;
/// An error: bad input, a missing file, an unknown thread…
pub const ERROR: u8 = 1;
/// A usage error (clap's own code).
pub const USAGE: u8 = 2;
