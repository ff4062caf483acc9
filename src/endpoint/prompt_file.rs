//! Reading `--prompt-file`, capped: a template is a few paragraphs, and a path such as
//! `/dev/zero` (or a pipe that never ends) must not be read without limit.

use std::io::Read;
use std::path::Path;

use anyhow::{bail, Context, Result};

/// The largest prompt template memctl reads (1 MiB).
pub const MAX_PROMPT_FILE: u64 = 1 << 20;

/// Reads the prompt template at `path`: at most [`MAX_PROMPT_FILE`] bytes of UTF-8 text.
/// A longer file (or one that never ends) is refused after reading one byte more than the cap.
pub fn read_prompt_file(path: &Path) -> Result<String> {
    read_capped(path, MAX_PROMPT_FILE)
}

/// Reads at most `cap` bytes of UTF-8 text from `path` (the `--prompt-file`).
fn read_capped(path: &Path, cap: u64) -> Result<String> {
    let file = std::fs::File::open(path)
        .with_context(|| format!("cannot read --prompt-file '{}'", path.display()))?;
    let mut bytes = Vec::new();
    file.take(cap + 1)
        .read_to_end(&mut bytes)
        .with_context(|| format!("cannot read --prompt-file '{}'", path.display()))?;
    if bytes.len() as u64 > cap {
        bail!(
            "--prompt-file '{}' is larger than {}, the most memctl reads for a prompt template; give a shorter template (the transcript goes where it says {{messages}}, not in the file)",
            path.display(),
            size(cap)
        );
    }
    String::from_utf8(bytes).map_err(|e| {
        anyhow::anyhow!(
            "--prompt-file '{}' is not UTF-8 text (invalid byte at offset {}); save it as UTF-8",
            path.display(),
            e.utf8_error().valid_up_to()
        )
    })
}

/// `1 MiB`, `512 KiB`, `100 bytes`.
fn size(bytes: u64) -> String {
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

    #[test]
    fn templates_up_to_the_cap_are_read_and_longer_ones_refused() {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join("p.txt");
        std::fs::write(&path, "Summarize {messages}").expect("write");
        assert_eq!(
            read_capped(&path, 20).expect("at the cap"),
            "Summarize {messages}"
        );
        let e = read_capped(&path, 19).expect_err("over the cap");
        let e = format!("{e:#}");
        assert!(
            e.contains(&path.display().to_string()) && e.contains("larger than 19 bytes"),
            "{e}"
        );
        std::fs::write(&path, b"caf\xe9 {messages}").expect("write");
        let e = format!("{:#}", read_capped(&path, 100).expect_err("latin-1"));
        assert!(e.contains("not UTF-8") && e.contains("offset 3"), "{e}");
        let e = format!(
            "{:#}",
            read_capped(&dir.path().join("no"), 100).expect_err("missing")
        );
        assert!(e.contains("cannot read --prompt-file"), "{e}");
    }

    #[test]
    fn a_file_that_never_ends_is_refused() {
        let zero = Path::new("/dev/zero");
        if zero.exists() {
            let e = format!("{:#}", read_prompt_file(zero).expect_err("endless"));
            assert!(
                e.contains("/dev/zero") && e.contains("larger than 1 MiB"),
                "{e}"
            );
        }
    }

    #[test]
    fn sizes() {
        assert_eq!(size(1 << 20), "1 MiB");
        assert_eq!(size(16 << 10), "16 KiB");
        assert_eq!(size(1000), "1000 bytes");
    }
}
