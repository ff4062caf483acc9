//! What `memctl --version` prints: Cargo's version, then the LangGraph formats this build
//! knows, so that a bug report carries them. Every format comes from the constant the code
//! itself checks against (no second copy here); `-V` prints the version line alone.

use std::sync::LazyLock;

use crate::codec::{aes, msgpack, typed};
use crate::storage::{postgres, sqlite, SchemaGeneration};

/// The checkpointer schema generations memctl reads and writes, oldest first.
pub const GENERATIONS: [SchemaGeneration; 2] = [SchemaGeneration::V2, SchemaGeneration::V3];

/// How `--version` names a generation. The match is exhaustive: a new generation does not
/// compile until it is named here (and added to [`GENERATIONS`]).
pub fn generation_name(generation: SchemaGeneration) -> &'static str {
    match generation {
        SchemaGeneration::V2 => "2.x (writes without task_path)",
        SchemaGeneration::V3 => "3.x (writes.task_path)",
    }
}

/// The text after `memctl ` that `memctl --version` prints: the version, then one line per
/// format family.
pub fn long_version() -> String {
    let generations: Vec<&str> = GENERATIONS.iter().map(|g| generation_name(*g)).collect();
    format!(
        "{version}\n\
         LangGraph formats:\n  \
         checkpointer generations (SqliteSaver, PostgresSaver): {generations}\n  \
         PostgresSaver checkpoint_migrations: up to level {pg}\n  \
         serializer types: {types}; encrypted: <type>+{cipher} (EncryptedSerializer, key in {key_env})\n  \
         msgpack extension codes: 0-{ext}\n  \
         SqliteStore store_migrations: up to level {sqlite_store}\n  \
         PostgresStore store_migrations: up to level {pg_store}",
        version = env!("CARGO_PKG_VERSION"),
        generations = generations.join(", "),
        pg = postgres::KNOWN_MIGRATION,
        types = typed::TYPES.join(", "),
        cipher = aes::CIPHER,
        key_env = aes::KEY_ENV,
        ext = msgpack::MAX_EXT_CODE,
        sqlite_store = sqlite::store::KNOWN_MIGRATION,
        pg_store = postgres::store::KNOWN_MIGRATION,
    )
}

/// [`long_version`], built once: clap's `long_version` takes a `&'static str`.
pub fn long_version_str() -> &'static str {
    static TEXT: LazyLock<String> = LazyLock::new(long_version);
    TEXT.as_str()
}
