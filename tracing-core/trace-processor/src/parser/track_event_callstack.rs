//! The callstack a TrackEvent carries (`callstack`, inline frames of a
//! function name and a source location, or `callstack_iid`, a sequence's
//! interned callstack as CPU samples use them) becomes a callsite of the
//! stack profile tables, and a row of `__intrinsic_track_event_callstacks`
//! joins it, and its `callstack_weight`, to the slice the event began,
//! ended or was, as upstream's TrackEvent importer records them.

use zerotrace_protos::protos::TrackEventDecoder;

use super::Parser;
use crate::sequence_state::Generation;
use crate::storage::rows::TrackEventCallstackRow;
use crate::tracker::stack_profile::DummyOwner;

/// The callsite of the event's callstack (None when it has none; a
/// callstack that does not resolve counts a parser error).
pub fn callsite(
    p: &mut Parser,
    ev: &TrackEventDecoder<'_>,
    generation_idx: u32,
    generation: &Generation,
    upid: Option<u32>,
) -> Option<u32> {
    if let Some(iid) = ev.callstack_iid() {
        let id = p.profiling.stacks.interned_callstack(
            &mut p.storage,
            generation_idx,
            generation,
            upid,
            iid,
        );
        if id.is_none() {
            p.storage.stats.incr("track_event_parser_errors");
        }
        return id;
    }
    let stack = ev.callstack()?;
    let mut parent = None;
    for (depth, frame) in stack.frames().enumerate() {
        let frame_id = p.profiling.stacks.intern_dummy_frame(
            &mut p.storage,
            DummyOwner::TrackEventInline,
            frame.function_name().unwrap_or(""),
            frame.source_file(),
            frame.line_number(),
        );
        let depth = u32::try_from(depth).unwrap_or(u32::MAX);
        parent = Some(
            p.profiling
                .stacks
                .intern_callsite(&mut p.storage, parent, frame_id, depth),
        );
    }
    parent
}

/// Joins `callsite` (and the event's weight) to the slice it began, ended
/// (`is_end`) or was.
pub fn record(
    p: &mut Parser,
    ev: &TrackEventDecoder<'_>,
    slice_id: u32,
    track_id: u32,
    callsite: u32,
    is_end: bool,
) {
    let (callsite_id, end_callsite_id) = if is_end {
        (None, Some(callsite))
    } else {
        (Some(callsite), None)
    };
    p.storage
        .track_event_callstacks
        .push(TrackEventCallstackRow {
            slice_id,
            track_id,
            callsite_id,
            end_callsite_id,
            weight: ev.callstack_weight(),
        });
}
