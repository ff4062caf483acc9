//! Notes from below the job layer (a warning a storage backend has while it connects, such as
//! a password file others can read), handed to the one writer the program installed.
//!
//! Jobs say what they have to say through their [`crate::jobs::Sink`]; this is for the few
//! layers that have no sink. The command line installs `output::notes::stderr`, which escapes
//! the text for the terminal; `browse` installs its status line; until something is
//! installed a note is dropped (a library caller did not ask for stderr).

use std::sync::RwLock;

/// Where notes go: installed once by the front end (command line, browse, MCP server).
type Writer = Box<dyn Fn(&str) + Send + Sync>;

static WRITER: RwLock<Option<Writer>> = RwLock::new(None);

/// Sends every note from now on to `writer` (replacing the one before).
pub fn install(writer: impl Fn(&str) + Send + Sync + 'static) {
    if let Ok(mut w) = WRITER.write() {
        *w = Some(Box::new(writer));
    }
}

/// Hands `text` (one line, unescaped) to the installed writer.
pub fn note(text: &str) {
    if let Ok(w) = WRITER.read() {
        if let Some(w) = w.as_ref() {
            w(text);
        }
    }
}
