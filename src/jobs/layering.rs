//! The job layer's rule, checked on its sources: a job knows no clap type, no command, no
//! renderer and no screen, and writes nothing itself.

#[test]
fn jobs_import_nothing_above_them() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src/jobs");
    let mut files = vec![dir.clone()];
    let mut seen = 0;
    while let Some(path) = files.pop() {
        if path.is_dir() {
            for entry in std::fs::read_dir(&path).expect("src/jobs") {
                files.push(entry.expect("entry").path());
            }
            continue;
        }
        let text = std::fs::read_to_string(&path).expect("source");
        seen += 1;
        // A unit test may compare with what the layers above write.
        let code = text.split("#[cfg(test)]").next().unwrap_or_default();
        for line in code.lines().filter(|l| !l.trim_start().starts_with("//")) {
            // (spelt in pieces: this file is searched too)
            for above in [
                concat!("crate", "::cli"),
                concat!("crate", "::commands"),
                concat!("crate", "::output"),
                concat!("crate", "::tui"),
                concat!("clap", "::"),
                concat!("println", "!"),
                concat!("eprintln", "!"),
            ] {
                assert!(!line.contains(above), "{}: {line}", path.display());
            }
        }
    }
    assert!(seen > 5, "read {seen} files");
}
