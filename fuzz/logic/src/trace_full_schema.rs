//! The decoders generated for Perfetto's *full* upstream trace schema
//! (`zerotrace-fuzz-full-schema`: the closure of upstream's
//! `protos/perfetto/trace/trace.proto`, generated at build time) on
//! arbitrary bytes read as a `Trace`. The `trace_packet` target covers our
//! own subset of the schema; this one reaches every message type a trace
//! can hold (ftrace events, Android, Chrome, GPU, profiling, configs, ...).
//!
//! The walk ([`walk_trace`], in the schema's crate, where it is
//! instantiated over the generated types) reads every field of every
//! message reachable through each message's generated field enum, runs its
//! generated decoder's pass on the same bytes, follows nested messages
//! through `FieldEnum::visit_message` down to [`MAX_WALK_DEPTH`] levels and
//! renders a trace of at most [`MAX_RENDERED_BYTES`] through the decoder's
//! `Debug`.
//!
//! Invariants: nothing panics; the walk and the rendering allocate nothing
//! (counted by this crate's global allocator, see the crate docs); the
//! field enum and the decoder stop at the same malformed field of every
//! message; the recursion is bounded (the walk's by [`MAX_WALK_DEPTH`], the
//! decoders' own `Debug` by `protozero`'s cap; the decoders and field enums
//! themselves never recurse, nested messages being read only on demand).

pub use zerotrace_fuzz_full_schema::walk::{
    MAX_RENDERED_BYTES, MAX_WALK_DEPTH, WalkStats, walk_trace,
};

/// The `trace_full_schema` target.
pub fn trace_full_schema(data: &[u8]) {
    let (allocations, stats) = zerotrace_test_alloc::allocations_during(|| walk_trace(data));
    assert_eq!(
        allocations, 0,
        "decoding allocated ({stats:?}): the generated decoders and field enums must not"
    );
    assert_eq!(
        stats.disagreement, None,
        "the field enum and the decoder stop at different places"
    );
    assert!(stats.max_depth <= MAX_WALK_DEPTH, "{stats:?}");
    assert!(stats.messages >= 1, "{stats:?}");
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `bytes` as a length-delimited field `id`.
    fn wrap(id: u8, bytes: &[u8]) -> Vec<u8> {
        let mut out = vec![id << 3 | 2];
        let mut len = bytes.len();
        while len >= 0x80 {
            out.push(len as u8 | 0x80);
            len >>= 7;
        }
        out.push(len as u8);
        out.extend(bytes);
        out
    }

    /// A trace whose one packet's TrackEvent holds a debug annotation with
    /// `levels` levels of `dict_entries` below it.
    fn deep_trace(levels: usize) -> Vec<u8> {
        let mut annotation = Vec::new();
        for _ in 0..levels {
            annotation = wrap(11, &annotation);
        }
        // Trace.packet 1 > TracePacket.track_event 11 > TrackEvent.debug_annotations 4.
        wrap(1, &wrap(11, &wrap(4, &annotation)))
    }

    /// The zero-allocation assertion is not vacuous: this crate's global
    /// allocator counts.
    #[test]
    fn the_allocator_counts() {
        let (n, b) = zerotrace_test_alloc::allocations_during(|| Box::new(7u8));
        assert!(n >= 1, "{n}");
        assert_eq!(*b, 7);
    }

    /// Bytes nested 20,000 messages deep, and 300 deep in under
    /// [`MAX_RENDERED_BYTES`]: the walk stops at its bound and the
    /// decoders' `Debug` at its own, on a thread with a stack of 1 MiB (an
    /// unbounded recursion would overflow it).
    #[test]
    fn deep_nesting_is_cut_at_the_bound() {
        for (levels, rendered) in [(300, true), (20_000, false)] {
            let trace = deep_trace(levels);
            let stats = std::thread::Builder::new()
                .stack_size(1 << 20)
                .spawn(move || {
                    trace_full_schema(&trace);
                    // The same bytes for a plain `{:?}` user.
                    let text = format!(
                        "{:?}",
                        zerotrace_fuzz_full_schema::protos::TraceDecoder::new(&trace)
                    );
                    assert!(text.contains("DebugAnnotationDecoder { .. }"), "{text}");
                    walk_trace(&trace)
                })
                .expect("spawn")
                .join()
                .expect("the walk");
            assert_eq!(stats.rendered, rendered, "{levels}");
            assert_eq!(stats.max_depth, MAX_WALK_DEPTH);
            assert_eq!(stats.cut, 1);
            assert_eq!(stats.malformed, 0);
            // Trace, packet, TrackEvent, then annotations to the bound.
            assert_eq!(stats.messages, MAX_WALK_DEPTH as u64 + 1);
        }
    }

    /// A shallow nesting is read to its end.
    #[test]
    fn shallow_nesting_is_read_whole() {
        // Trace, packet, TrackEvent, the annotation, 5 levels of entries.
        let stats = walk_trace(&deep_trace(5));
        assert_eq!(stats.max_depth, 3 + 5);
        assert_eq!(stats.cut, 0);
        assert_eq!(stats.messages, 4 + 5);
    }
}
