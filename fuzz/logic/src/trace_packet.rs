//! The generated TracePacket decoder and field enums on arbitrary bytes:
//! every accessor, the Debug rendering (which walks nested messages), and a
//! one-pass visit through the field enums down into TrackEvents, debug
//! annotations (nested to any depth the bytes claim, visited to a bound)
//! and interned data must not panic, and the visit must see the same
//! timestamp as the decoder.

use protozero::Lazy;
use zerotrace_protos::protos::{
    DebugAnnotationDecoder, DebugAnnotationField, InternedDataField, TracePacketDecoder,
    TracePacketField, TrackEventField,
};

/// How deep the visit follows debug annotations nested in each other.
const MAX_VISIT_DEPTH: usize = 32;

/// The `trace_packet` target.
pub fn trace_packet(data: &[u8]) {
    let p = TracePacketDecoder::new(data);
    let _ = (
        p.timestamp(),
        p.trusted_packet_sequence_id(),
        p.sequence_flags(),
    );
    let _ = format!("{p:?}");
    let mut last_timestamp = None;
    let mut fields = TracePacketField::read(data);
    for f in fields.by_ref() {
        match f {
            TracePacketField::Timestamp(t) => last_timestamp = Some(t),
            // A timestamp with another wire type hides the earlier ones, as
            // it does for the decoder.
            TracePacketField::Other(f) if f.id == 8 => last_timestamp = None,
            TracePacketField::TrackEvent(e) => {
                let _ = format!("{:?}", e.decode());
                for f in e.fields() {
                    if let TrackEventField::DebugAnnotations(a) = f {
                        annotation(a, 0);
                    }
                }
            }
            TracePacketField::InternedData(d) => {
                for f in d.fields() {
                    if let InternedDataField::EventNames(n) = f {
                        let _ = n.decode().name();
                    }
                }
            }
            _ => {}
        }
    }
    // Both readers stop at the same malformed field, so they agree.
    assert_eq!(fields.error(), p.decode_error());
    if p.decode_error().is_none() {
        assert_eq!(last_timestamp, p.timestamp());
    }
}

fn annotation(a: Lazy<'_, DebugAnnotationDecoder<'_>>, depth: usize) {
    if depth >= MAX_VISIT_DEPTH {
        return;
    }
    for f in a.fields() {
        match f {
            DebugAnnotationField::DictEntries(d) | DebugAnnotationField::ArrayValues(d) => {
                annotation(d, depth + 1)
            }
            DebugAnnotationField::NestedValue(n) => {
                let _ = n.decode().string_value();
            }
            _ => {}
        }
    }
}
