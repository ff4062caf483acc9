//! The switch `--features env-tests` promises the environment scripts/test.sh sets up: with it
//! on and any part missing, this fails first and says what to run, instead of each
//! environment-bound test failing on its own.

mod common;

use std::process::Command;

#[test]
fn the_test_environment_is_all_there() {
    let mut missing = Vec::new();
    for (gen, module) in [
        ("new", "langgraph.checkpoint.sqlite"),
        ("old", "langgraph.checkpoint.sqlite"),
        ("pg", "langgraph.checkpoint.postgres"),
        ("deep", "deepagents"),
    ] {
        let var = format!("MEMCTL_PYTHON_{}", gen.to_uppercase());
        let python = std::env::var_os(&var)
            .map(std::path::PathBuf::from)
            .unwrap_or_else(|| common::root().join(".venv").join(gen).join("bin/python"));
        let imported = Command::new(&python)
            .args(["-c", &format!("import {module}")])
            .output()
            .is_ok_and(|o| o.status.success());
        if !imported {
            missing.push(format!(
                "{var}: no Python with {module} at {} (scripts/pyenv.sh makes it)",
                python.display()
            ));
        }
    }
    let node_modules = std::env::var_os("MEMCTL_NODE_MODULES")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| common::root().join("fixtures/js/node_modules"));
    if !node_modules.join("@langchain/langgraph").is_dir() {
        missing.push(format!(
            "MEMCTL_NODE_MODULES: no @langchain/langgraph in {} (scripts/jsenv.sh installs it)",
            node_modules.display()
        ));
    }
    match std::env::var("MEMCTL_TEST_PG") {
        Err(_) => {
            missing.push("MEMCTL_TEST_PG: not set (scripts/pg.sh start DIR prints it)".into())
        }
        Ok(url) => {
            if let Err(e) = postgres::Client::connect(&url, postgres::NoTls) {
                missing.push(format!("MEMCTL_TEST_PG: the server does not answer: {e}"));
            }
        }
    }
    assert!(
        missing.is_empty(),
        "--features env-tests is on but the environment is not all there: run scripts/test.sh \
         (it sets everything up), or set what is missing:\n{}",
        missing.join("\n")
    );
}
