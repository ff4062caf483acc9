//! The committed completion scripts must match what the current CLI generates.

mod common;

#[test]
fn committed_completions_are_current() {
    for (shell, file) in [
        ("bash", "memctl.bash"),
        ("zsh", "_memctl"),
        ("fish", "memctl.fish"),
    ] {
        let generated = common::run_ok(&["completions", shell]);
        let path = common::root().join("completions").join(file);
        let committed = std::fs::read_to_string(&path).unwrap_or_default();
        assert!(
            generated == committed,
            "completions/{file} is stale: run `cargo run -- completions {shell} > completions/{file}`"
        );
    }
}

#[test]
fn clap_definition_is_consistent() {
    use clap::CommandFactory;
    memctl::cli::Cli::command().debug_assert();
}
