//! `dump`'s JSON: the messages of a state as `model_dump()` dictionaries, streamed (decoded
//! and serialized a chunk at a time on all cores, never held whole), and what `dump --raw`
//! says of each DeltaChannel ([`delta_json`], built by the job).

use std::io::Write;
use std::ops::Range;

use anyhow::Result;
use serde_json::Value as Json;

use super::stream::{element_bytes, placeholder, write_streamed};
use super::Format;
use crate::model::checkpoint::StoredList;

/// Writes the messages of `list` (none: the state has no messages channel) as `dump` does:
/// a JSON array, or one object per line.
pub fn write_messages(
    out: &mut dyn Write,
    format: Format,
    list: Option<&StoredList>,
) -> Result<()> {
    let Some(list) = list else {
        return super::write_records::<Json>(out, format, &[]);
    };
    let spans = list.spans()?;
    let elements = dumps(list, &spans, format);
    if format == Format::Jsonl {
        for element in elements {
            out.write_all(&element?)?;
            out.write_all(b"\n")?;
        }
        return Ok(());
    }
    write_streamed(out, format, &Json::String(placeholder(0)), vec![elements])
}

pub use crate::jobs::dump::delta_json;

/// Every message of `list` at `spans` as its `model_dump()` dictionary, serialized for
/// `format`, in order.
pub fn dumps<'a>(
    list: &'a StoredList,
    spans: &'a [Range<usize>],
    format: Format,
) -> impl Iterator<Item = Result<Vec<u8>>> + 'a {
    crate::par::par_in_order(spans.len(), move |i| {
        let m = list.message(i, &spans[i])?;
        element_bytes(format, &Json::Object(m.fields))
    })
}
