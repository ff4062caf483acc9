//! Reading `--prompt-file`, capped: a template is a few paragraphs, and a path such as
//! `/dev/zero` (or a pipe that never ends) must not be read without limit.

use std::path::Path;

use anyhow::Result;

use crate::files::Whole;

/// The largest prompt template memctl reads (1 MiB).
pub const MAX_PROMPT_FILE: u64 = 1 << 20;

/// Reads the prompt template at `path`: at most [`MAX_PROMPT_FILE`] bytes of UTF-8 text.
/// A longer file (or one that never ends) is refused after reading one byte more than the cap.
pub fn read_prompt_file(path: &Path) -> Result<String> {
    Whole {
        named: "--prompt-file",
        holds: "a prompt template",
        hint: "; give a shorter template (the transcript goes where it says {messages}, not in the file)",
        cap: MAX_PROMPT_FILE,
    }
    .read(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_that_never_ends_is_refused() {
        let e = format!(
            "{:#}",
            read_prompt_file(Path::new("/dev/zero")).expect_err("endless")
        );
        assert!(
            e.contains("--prompt-file '/dev/zero'") && e.contains("larger than 1 MiB"),
            "{e}"
        );
    }
}
