//! The state of a checkpoint as `get_state` shows it, beside its messages: the channels it
//! shows (LangGraph's internal ones left out) and their values.

use crate::codec::Value;
use crate::model::channels::is_internal_channel;
use crate::model::checkpoint::MESSAGES;

use super::replay::DeltaValue;
use super::LoadedCheckpoint;

/// The state's channels other than messages, as `get_state` shows them: the stored values
/// in stored order (a DeltaChannel's snapshot as the value it holds), then the DeltaChannels
/// the checkpoint leaves out, rebuilt (`None`: a reducer memctl does not know).
pub fn state_values<'a>(
    cp: &'a LoadedCheckpoint,
    deltas: &'a [DeltaValue],
) -> Vec<(&'a str, Option<&'a Value>)> {
    let delta = |k: &str| deltas.iter().find(|d| d.channel == k);
    let mut out: Vec<(&str, Option<&Value>)> = cp
        .checkpoint
        .channel_values()
        .into_iter()
        .filter(|(k, _)| *k != MESSAGES && !is_internal_channel(k))
        .map(|(k, v)| match delta(k) {
            Some(d) => (k, d.value.as_ref()),
            None => (k, Some(v)),
        })
        .collect();
    for d in deltas {
        if d.channel != MESSAGES && !out.iter().any(|(k, _)| *k == d.channel) {
            out.push((&d.channel, d.value.as_ref()));
        }
    }
    out
}
