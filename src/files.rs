//! Files memctl reads whole (a `langgraph.json`, a prompt template, a password file), read
//! capped: a path such as `/dev/zero`, or a pipe that never ends, is refused after one byte
//! more than the cap instead of being read until memory runs out. Below every other layer:
//! it knows nothing of memctl's data.

use std::io::Read;
use std::path::Path;

use anyhow::{bail, Context, Result};

/// What a capped file is, for its messages.
#[derive(Debug, Clone, Copy)]
pub struct Whole<'a> {
    /// How the user named it: `--config`, `--prompt-file`, `password file`.
    pub named: &'a str,
    /// What it holds, for "the most memctl reads for …": `a langgraph.json`.
    pub holds: &'a str,
    /// What to do about a file over the cap (`; give a shorter template`), or empty.
    pub hint: &'a str,
    /// The most bytes memctl reads of it.
    pub cap: u64,
}

impl Whole<'_> {
    /// Reads `path`: at most [`Whole::cap`] bytes of UTF-8 text, else one line that says why.
    pub fn read(&self, path: &Path) -> Result<String> {
        let shown = path.display();
        let named = self.named;
        let file =
            std::fs::File::open(path).with_context(|| format!("cannot read {named} '{shown}'"))?;
        let mut bytes = Vec::new();
        file.take(self.cap + 1)
            .read_to_end(&mut bytes)
            .with_context(|| format!("cannot read {named} '{shown}'"))?;
        if bytes.len() as u64 > self.cap {
            bail!(
                "{named} '{shown}' is larger than {}, the most memctl reads for {}{}",
                size(self.cap),
                self.holds,
                self.hint
            );
        }
        String::from_utf8(bytes).map_err(|e| {
            anyhow::anyhow!(
                "{named} '{shown}' is not UTF-8 text (invalid byte at offset {}); save it as UTF-8",
                e.utf8_error().valid_up_to()
            )
        })
    }
}

/// `1 MiB`, `512 KiB`, `100 bytes`.
pub fn size(bytes: u64) -> String {
    if bytes >= 1 << 20 && bytes % (1 << 20) == 0 {
        format!("{} MiB", bytes >> 20)
    } else if bytes >= 1 << 10 && bytes % (1 << 10) == 0 {
        format!("{} KiB", bytes >> 10)
    } else {
        format!("{bytes} bytes")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn whole(cap: u64) -> Whole<'static> {
        Whole {
            named: "--config",
            holds: "a langgraph.json",
            hint: "",
            cap,
        }
    }

    #[test]
    fn files_up_to_the_cap_are_read_and_longer_ones_refused() {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join("p.txt");
        std::fs::write(&path, "Summarize {messages}").expect("write");
        assert_eq!(
            whole(20).read(&path).expect("at the cap"),
            "Summarize {messages}"
        );
        let e = format!("{:#}", whole(19).read(&path).expect_err("over the cap"));
        assert!(
            e.contains(&path.display().to_string())
                && e.contains("larger than 19 bytes")
                && e.contains("for a langgraph.json"),
            "{e}"
        );
        std::fs::write(&path, b"caf\xe9 {messages}").expect("write");
        let e = format!("{:#}", whole(100).read(&path).expect_err("latin-1"));
        assert!(e.contains("not UTF-8") && e.contains("offset 3"), "{e}");
        let e = format!(
            "{:#}",
            whole(100)
                .read(&dir.path().join("no"))
                .expect_err("missing")
        );
        assert!(e.contains("cannot read --config"), "{e}");
    }

    #[test]
    fn a_file_that_never_ends_is_refused() {
        let zero = Path::new("/dev/zero");
        assert!(zero.exists(), "a unix system has /dev/zero");
        let e = format!("{:#}", whole(1 << 20).read(zero).expect_err("endless"));
        assert!(
            e.contains("/dev/zero") && e.contains("larger than 1 MiB"),
            "{e}"
        );
    }

    #[test]
    fn sizes() {
        assert_eq!(size(1 << 20), "1 MiB");
        assert_eq!(size(16 << 10), "16 KiB");
        assert_eq!(size(1000), "1000 bytes");
    }
}
