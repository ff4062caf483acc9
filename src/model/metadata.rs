//! Checkpoint metadata: the JSON document in the `metadata` column.

use anyhow::{Context, Result};
use serde_json::{Map as JsonMap, Value as Json};

/// Parsed checkpoint metadata (`{"source", "step", "parents", …config extras}`).
#[derive(Debug, Clone, Default)]
pub struct Metadata {
    /// All keys in stored order.
    pub fields: JsonMap<String, Json>,
}

impl Metadata {
    /// Parses the `metadata` column; an empty or missing column gives empty metadata.
    pub fn parse(blob: Option<&[u8]>) -> Result<Metadata> {
        let Some(bytes) = blob.filter(|b| !b.is_empty()) else {
            return Ok(Metadata::default());
        };
        let value: Json =
            serde_json::from_slice(bytes).context("checkpoint metadata is not valid JSON")?;
        match value {
            Json::Object(fields) => Ok(Metadata { fields }),
            Json::Null => Ok(Metadata::default()),
            _ => anyhow::bail!("checkpoint metadata is not a JSON object"),
        }
    }

    /// The superstep number (`-1` for the input checkpoint).
    pub fn step(&self) -> Option<i64> {
        self.fields.get("step").and_then(Json::as_i64)
    }

    /// What made the checkpoint: `input`, `loop`, `update` or `fork`.
    pub fn source(&self) -> Option<&str> {
        self.fields.get("source").and_then(Json::as_str)
    }
}
