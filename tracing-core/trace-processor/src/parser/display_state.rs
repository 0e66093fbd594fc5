//! `initial_display_state` (TracePacket field 70): the screen's state at
//! the start of the trace, as a value on the global `ScreenState` counter
//! track (the track atrace's `ScreenState` counter also names).

use protozero::Decoder;

use super::Parser;
use super::importer::{Importer, Input};
use crate::storage::rows::CounterRow;
use crate::tables::opt_u32::OptU32;
use crate::tracker::tracks::{EventType, TrackSpec};

/// TracePacket.initial_display_state.
const INITIAL_DISPLAY_STATE: u32 = 70;

/// The payload this module imports.
pub const IMPORTERS: &[(u32, Importer)] = &[(INITIAL_DISPLAY_STATE, import)];

/// Parses a packet's initial display state; false when it has none.
fn import(p: &mut Parser, input: &Input<'_>) {
    let bytes = input.bytes;
    let ts = input.ts;
    let state = Decoder::new(bytes)
        .find_last(1)
        .and_then(|f| f.as_i32().ok())
        .unwrap_or(0);
    let spec = TrackSpec::new(Some("ScreenState"), "screen_state", EventType::Counter);
    let track = p.tracks.interned_counter(&mut p.storage, &spec);
    p.storage.counters.push(CounterRow {
        ts,
        track_id: track,
        value: f64::from(state),
        arg_set_id: OptU32::NONE,
    });
}
