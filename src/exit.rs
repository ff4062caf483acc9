//! Exit codes (documented in docs/exit-codes-and-json.md).

/// Everything worked.
pub const SUCCESS: u8 = 0;
/// An error: bad input, a missing file, an unknown thread…
pub const ERROR: u8 = 1;
/// A usage error (clap's own code).
pub const USAGE: u8 = 2;
/// Some of the work was done and some failed (a batch where some threads failed, a vacuum
/// that could not get exclusive access).
pub const PARTIAL: u8 = 3;

/// Interrupted by Ctrl-C: a batch stopped after the threads it reported (128 + SIGINT, as
/// shells report a command Ctrl-C ended).
pub const INTERRUPTED: u8 = 130;

/// An error that means "partly done": the process exits with [`PARTIAL`].
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct Partial(pub String);

/// Nothing matched (`find`, like grep): the process exits with [`ERROR`] and prints no error
/// line (the empty result is the answer).
#[derive(Debug, thiserror::Error)]
#[error("nothing matched")]
pub struct NoMatch;

/// A usage error found after parsing (a flag's value that cannot work, e.g. an `--endpoint`
/// that is not an http URL): the process exits with [`USAGE`], as for clap's own errors.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct Usage(pub String);
