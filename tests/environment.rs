//! The switch `--features env-tests` promises the environment scripts/test.sh sets up: with it
//! on and any part missing, this fails first and says what to run, instead of each
//! environment-bound test failing on its own.

mod common;

use std::process::Command;

#[test]
fn the_test_environment_is_all_there() {
    let mut missing = Vec::new();
    // The vec venv's sqlite3 must load the sqlite-vec extension (a pyenv Python may not).
    let vec_check = "import sqlite3, sqlite_vec, langgraph.store.sqlite; \
                     c = sqlite3.connect(':memory:'); c.enable_load_extension(True); sqlite_vec.load(c)";
    for (gen, module, code) in [
        ("new", "langgraph.checkpoint.sqlite", None),
        ("old", "langgraph.checkpoint.sqlite", None),
        ("pg", "langgraph.checkpoint.postgres", None),
        ("deep", "deepagents", None),
        (
            "vec",
            "sqlite_vec (loadable as a SQLite extension)",
            Some(vec_check),
        ),
    ] {
        let var = format!("MEMCTL_PYTHON_{}", gen.to_uppercase());
        let python = std::env::var_os(&var)
            .map(std::path::PathBuf::from)
            .unwrap_or_else(|| common::root().join(".venv").join(gen).join("bin/python"));
        let imported = Command::new(&python)
            .args([
                "-c",
                &code.map_or(format!("import {module}"), str::to_owned),
            ])
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
