//! `memctl -V` is Cargo's version alone; `memctl --version` adds the LangGraph formats this
//! build knows, each taken from the constant the code checks against (issue #32).

mod common;

use common::memctl;
use memctl::codec::{aes, msgpack, typed};
use memctl::storage::{postgres, sqlite};
use memctl::version::{generation_name, GENERATIONS};

fn stdout_of(flag: &str) -> String {
    let out = memctl().arg(flag).output().expect("runs");
    assert!(out.status.success(), "{flag}: {out:?}");
    assert!(out.stderr.is_empty(), "{flag}: {out:?}");
    String::from_utf8(out.stdout).expect("utf-8")
}

#[test]
fn short_version_is_the_cargo_version_line_alone() {
    let want = format!("memctl {}\n", env!("CARGO_PKG_VERSION"));
    assert_eq!(stdout_of("-V"), want);
}

#[test]
fn long_version_lists_the_formats_the_code_knows() {
    let text = stdout_of("--version");
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(
        lines.first().copied(),
        Some(format!("memctl {}", env!("CARGO_PKG_VERSION")).as_str()),
        "{text}"
    );
    let generations: Vec<&str> = GENERATIONS.iter().map(|g| generation_name(*g)).collect();
    let want = [
        "LangGraph formats:".to_owned(),
        format!(
            "  checkpointer generations (SqliteSaver, PostgresSaver): {}",
            generations.join(", ")
        ),
        format!(
            "  PostgresSaver checkpoint_migrations: up to level {}",
            postgres::KNOWN_MIGRATION
        ),
        format!(
            "  serializer types: {}; encrypted: <type>+{} (EncryptedSerializer, key in {})",
            typed::TYPES.join(", "),
            aes::CIPHER,
            aes::KEY_ENV
        ),
        format!("  msgpack extension codes: 0-{}", msgpack::MAX_EXT_CODE),
        format!(
            "  SqliteStore store_migrations: up to level {}",
            sqlite::store::KNOWN_MIGRATION
        ),
        format!(
            "  PostgresStore store_migrations: up to level {}",
            postgres::store::KNOWN_MIGRATION
        ),
    ];
    assert_eq!(lines[1..], want, "{text}");
    // The text is the library's, byte for byte (clap adds the name and a newline).
    assert_eq!(
        text,
        format!("memctl {}\n", memctl::version::long_version())
    );
}

/// The serializer types `--version` lists are the ones the decoder takes, and a type outside
/// the list is refused with the same list.
#[test]
fn listed_serializer_types_are_the_decoders() {
    for name in typed::TYPES {
        if let Err(e) = typed::decode_typed(name, b"\xc0") {
            assert!(
                !format!("{e:#}").contains("unknown serialization type"),
                "{name}: {e:#}"
            );
        }
    }
    let e = typed::decode_typed("cbor", b"\xc0").expect_err("not a LangGraph type");
    assert!(
        format!("{e:#}").contains(&format!("(known: {})", typed::TYPES.join(", "))),
        "{e:#}"
    );
    // Each generation has its own name.
    let mut names: Vec<&str> = GENERATIONS.iter().map(|g| generation_name(*g)).collect();
    names.dedup();
    assert_eq!(names.len(), GENERATIONS.len());
}
