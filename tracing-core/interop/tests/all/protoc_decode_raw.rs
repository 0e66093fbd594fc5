//! Bytes from protozero's raw writer, decoded by Google's protoc with the
//! upstream Perfetto schema: proves field numbers and encodings, including the
//! 4-byte redundant and 1-byte compacted lengths.

use protozero::HeapWriter;
use zerotrace_interop::protoc_decode;

#[test]
fn upstream_protoc_reads_raw_writer_trace() {
    let mut w = HeapWriter::new();
    {
        let mut trace = w.root();
        let mut packet = trace.begin_nested(1);
        packet.append_uint64(8, 1234); // timestamp
        packet.append_uint32(10, 7); // trusted_packet_sequence_id
        let mut ev = packet.begin_nested(11); // track_event
        ev.append_enum(9, 1); // TYPE_SLICE_BEGIN
        ev.append_uint64(11, 42); // track_uuid
        ev.append_string(23, "slice"); // name
        let mut ann = ev.begin_nested(4); // debug_annotations
        ann.append_string(10, "arg"); // name
        ann.append_int64(4, -5); // int_value
        ann.finalize();
        // A payload over 127 bytes keeps the 4-byte redundant length.
        let mut big = ev.begin_nested(4);
        big.append_string(10, "long");
        big.append_string(6, &"x".repeat(200));
    }
    let bytes = w.finish().expect("encode");
    let text = protoc_decode(
        "perfetto.protos.Trace",
        "protos/perfetto/trace/trace.proto",
        &bytes,
    )
    .expect("protoc decode");
    // protoc prints fields in schema order.
    let expected = format!(
        "packet {{\n  timestamp: 1234\n  trusted_packet_sequence_id: 7\n  track_event {{\n    \
         debug_annotations {{\n      int_value: -5\n      name: \"arg\"\n    }}\n    \
         debug_annotations {{\n      string_value: \"{}\"\n      name: \"long\"\n    }}\n    \
         type: TYPE_SLICE_BEGIN\n    track_uuid: 42\n    name: \"slice\"\n  }}\n}}\n",
        "x".repeat(200)
    );
    assert_eq!(text, expected);
}
