//! The stream-order part of a TrackEvent: its timestamp (the packet's, or
//! the legacy µs deltas and absolutes against the sequence's
//! ThreadDescriptor reference, on CLOCK_MONOTONIC), thread time and
//! instruction count, and counter values made absolute for incremental
//! counter tracks. These depend on the packets before it in its sequence,
//! so they are resolved before the sort.

use crate::packet_view::TrackEventTimes;
use zerotrace_protos::protos::{TracePacketDefaultsDecoder, TrackEventDecoder};

use crate::clock::MachineClocks;
use crate::descriptors::Descriptors;
use crate::sequence_state::{Generation, SequenceState};
use crate::storage::stats::Stats;

/// CLOCK_MONOTONIC's id: legacy TrackEvent µs timestamps are on it.
const MONOTONIC: u64 = 3;

fn us_to_ns(us: i64) -> i64 {
    us.saturating_mul(1000)
}

/// Resolves one TrackEvent (its bytes; whether its packet has a
/// timestamp); None when it is dropped (counted).
#[allow(clippy::too_many_arguments)]
pub fn tokenize(
    event: &[u8],
    has_timestamp: bool,
    packet_ts: i64,
    seq: &mut SequenceState,
    generation: Option<&Generation>,
    descriptors: &Descriptors,
    mut clocks: MachineClocks<'_>,
    stats: &mut Stats,
) -> Option<TrackEventTimes> {
    let event = TrackEventDecoder::new(event);
    let defaults = generation
        .and_then(|g| g.defaults.as_deref())
        .map(TracePacketDefaultsDecoder::new);
    let te_defaults = defaults.as_ref().and_then(|d| d.track_event_defaults());
    let mut out = TrackEventTimes::default();
    let mut legacy = false;
    let ts = if let Some(delta) = event.timestamp_delta_us() {
        let Some(base) = seq.track_event_timestamp_ns else {
            stats.incr("track_event_skipped_timestamp_delta_without_valid_state");
            return None;
        };
        let v = base.saturating_add(us_to_ns(delta));
        seq.track_event_timestamp_ns = Some(v);
        legacy = true;
        v
    } else if let Some(abs) = event.timestamp_absolute_us().filter(|v| *v != 0) {
        legacy = true;
        us_to_ns(abs)
    } else if has_timestamp {
        packet_ts
    } else {
        stats.incr("track_event_missing_timestamp");
        return None;
    };
    // Negative times are dropped before the clock conversion, whose offset
    // could otherwise bring them back to positive.
    if ts < 0 {
        stats.incr("track_event_invalid_timestamp");
        return None;
    }
    out.ts = if legacy {
        clocks.trace_time(MONOTONIC, ts).unwrap_or(ts)
    } else {
        ts
    };

    if let Some(delta) = event.thread_time_delta_us() {
        let Some(base) = seq.track_event_thread_time_us else {
            stats.incr("track_event_skipped_thread_time_delta_without_valid_state");
            return None;
        };
        let v = base.saturating_add(delta);
        seq.track_event_thread_time_us = Some(v);
        out.thread_ts = Some(us_to_ns(v));
    } else if let Some(abs) = event.thread_time_absolute_us() {
        out.thread_ts = Some(us_to_ns(abs));
    }
    if let Some(delta) = event.thread_instruction_count_delta() {
        let base = seq.track_event_instruction_count.unwrap_or(0);
        let v = base.saturating_add(delta);
        seq.track_event_instruction_count = Some(v);
        out.thread_instruction_count = Some(v);
    } else if let Some(abs) = event.thread_instruction_count_absolute() {
        out.thread_instruction_count = Some(abs);
    }

    let default_uuid = te_defaults.as_ref().and_then(|d| d.track_uuid());
    match event.type_raw() {
        Some(4) => {
            // TYPE_COUNTER
            let Some(uuid) = event.track_uuid().or(default_uuid) else {
                stats.incr("track_event_counter_missing_track_uuid");
                return None;
            };
            let value = match (event.counter_value(), event.double_counter_value()) {
                (Some(v), _) => v as f64,
                (None, Some(v)) => v,
                (None, None) => {
                    stats.incr("track_event_counter_missing_value");
                    return None;
                }
            };
            out.counter_value = Some(absolute(seq, descriptors, uuid, value));
        }
        Some(5) if event.track_uuid().or(default_uuid).is_none() => {
            stats.incr("track_event_state_missing_track_uuid");
            return None;
        }
        _ => {}
    }

    let int_values: Vec<f64> = event.extra_counter_values().map(|v| v as f64).collect();
    let dbl_values: Vec<f64> = event.extra_double_counter_values().collect();
    for (values, uuids, default_uuids) in [
        (
            int_values,
            event.extra_counter_track_uuids().collect::<Vec<u64>>(),
            te_defaults
                .as_ref()
                .map(|d| d.extra_counter_track_uuids().collect::<Vec<u64>>())
                .unwrap_or_default(),
        ),
        (
            dbl_values,
            event
                .extra_double_counter_track_uuids()
                .collect::<Vec<u64>>(),
            te_defaults
                .as_ref()
                .map(|d| d.extra_double_counter_track_uuids().collect::<Vec<u64>>())
                .unwrap_or_default(),
        ),
    ] {
        if values.is_empty() {
            continue;
        }
        let uuids = if uuids.is_empty() {
            default_uuids
        } else {
            uuids
        };
        if uuids.is_empty() {
            stats.incr("track_event_extra_counter_missing_track_uuids");
            return None;
        }
        for (i, v) in values.into_iter().enumerate() {
            let Some(&uuid) = uuids.get(i) else {
                stats.incr("track_event_extra_counter_track_uuid_mismatch");
                return None;
            };
            let abs = absolute(seq, descriptors, uuid, v);
            out.extra_counters.push((uuid, abs));
        }
    }
    Some(out)
}

/// The absolute value of a counter sample: incremental tracks add it to
/// their running value on this sequence.
fn absolute(seq: &mut SequenceState, descriptors: &Descriptors, uuid: u64, value: f64) -> f64 {
    if descriptors
        .get(uuid)
        .is_some_and(|d| d.is_incremental_counter)
    {
        let v = seq.incremental_counters.entry(uuid).or_insert(0.0);
        *v += value;
        *v
    } else {
        value
    }
}
