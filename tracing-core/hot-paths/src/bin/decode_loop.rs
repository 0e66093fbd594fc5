//! Instruction counts of the generated decoders on the packets TrackEvent
//! writes most: a slice begin with two debug annotations, a slice end with
//! a flow id, and a packet of interned names. `N` rounds decode the three
//! in a function of its own (`decode_loop::run_decode`), reading the fields
//! a trace processor reads, so that callgrind can count it alone:
//!
//! ```sh
//! cargo build --release -p zerotrace-hot-paths --bin decode_loop
//! valgrind --tool=callgrind --toggle-collect='decode_loop::run_*' \
//!     target/release/decode_loop 100000
//! ```
//!
//! `cargo xtask instructions` runs it at two counts and divides the
//! difference of the totals by the difference of the counts.

use std::hint::black_box;

use protozero::HeapWriter;
use zerotrace_protos::protos::{
    DebugAnnotationDecoder, InternedDataDecoder, TracePacket, TracePacketDecoder, TrackEventDecoder,
};

/// The three packets, encoded once.
fn packets() -> Vec<Vec<u8>> {
    let mut out = Vec::new();
    let mut w = HeapWriter::new();
    {
        let mut p = TracePacket::from_message(w.root());
        p.set_timestamp(1_718_000_123_456_789);
        p.set_sequence_flags(2);
        p.set_trusted_packet_sequence_id(7);
        let mut e = p.begin_track_event();
        e.set_type_raw(1);
        e.add_category_iids(1);
        e.set_name_iid(3);
        e.set_source_location_iid(2);
        {
            let mut a = e.add_debug_annotations();
            a.set_name_iid(1);
            a.set_int_value(1_234_567);
        }
        let mut a = e.add_debug_annotations();
        a.set_name_iid(2);
        a.set_string_value("https://example.org/");
    }
    out.push(w.finish().unwrap_or_default());
    let mut w = HeapWriter::new();
    {
        let mut p = TracePacket::from_message(w.root());
        p.set_timestamp(1_718_000_123_459_000);
        p.set_sequence_flags(2);
        p.set_trusted_packet_sequence_id(7);
        let mut e = p.begin_track_event();
        e.set_type_raw(2);
        e.add_flow_ids(0x0100_0000_0000_0042);
    }
    out.push(w.finish().unwrap_or_default());
    let mut w = HeapWriter::new();
    {
        let mut p = TracePacket::from_message(w.root());
        p.set_timestamp(1_718_000_123_456_789);
        p.set_sequence_flags(2);
        p.set_trusted_packet_sequence_id(7);
        let mut d = p.begin_interned_data();
        d.add_event_categories().set_iid(1).set_name("bench");
        d.add_event_names().set_iid(3).set_name("parse_request");
        d.add_debug_annotation_names().set_iid(1).set_name("count");
        d.add_debug_annotation_names().set_iid(2).set_name("url");
    }
    out.push(w.finish().unwrap_or_default());
    out
}

/// A sum of what one packet holds (so nothing is optimised away).
fn packet(p: &TracePacketDecoder<'_>) -> u64 {
    let mut sum = p.timestamp().unwrap_or(0);
    sum = sum.wrapping_add(u64::from(p.sequence_flags().unwrap_or(0)));
    sum = sum.wrapping_add(u64::from(p.trusted_packet_sequence_id().unwrap_or(0)));
    if let Some(e) = p.track_event() {
        sum = sum.wrapping_add(track_event(&e));
    }
    if let Some(d) = p.interned_data() {
        sum = sum.wrapping_add(interned(&d));
    }
    sum
}

fn track_event(e: &TrackEventDecoder<'_>) -> u64 {
    let mut sum = e.type_raw().unwrap_or(0) as u64;
    sum = sum.wrapping_add(e.track_uuid().unwrap_or(0));
    sum = sum.wrapping_add(e.name_iid().unwrap_or(0));
    sum = sum.wrapping_add(e.source_location_iid().unwrap_or(0));
    for c in e.category_iids() {
        sum = sum.wrapping_add(c);
    }
    for f in e.flow_ids() {
        sum = sum.wrapping_add(f);
    }
    for f in e.terminating_flow_ids() {
        sum = sum.wrapping_add(f);
    }
    for a in e.debug_annotations() {
        sum = sum.wrapping_add(annotation(&a));
    }
    sum
}

fn annotation(a: &DebugAnnotationDecoder<'_>) -> u64 {
    let mut sum = a.name_iid().unwrap_or(0);
    sum = sum.wrapping_add(a.int_value().unwrap_or(0) as u64);
    sum = sum.wrapping_add(a.uint_value().unwrap_or(0));
    sum.wrapping_add(a.string_value().map_or(0, |s| s.len() as u64))
}

fn interned(d: &InternedDataDecoder<'_>) -> u64 {
    let mut sum = 0u64;
    for c in d.event_categories() {
        sum = sum.wrapping_add(c.iid().unwrap_or(0) + c.name().map_or(0, |s| s.len() as u64));
    }
    for n in d.event_names() {
        sum = sum.wrapping_add(n.iid().unwrap_or(0) + n.name().map_or(0, |s| s.len() as u64));
    }
    for n in d.debug_annotation_names() {
        sum = sum.wrapping_add(n.iid().unwrap_or(0) + n.name().map_or(0, |s| s.len() as u64));
    }
    sum
}

#[inline(never)]
fn run_decode(n: u64, packets: &[Vec<u8>]) -> u64 {
    let mut sum = 0u64;
    for _ in 0..n {
        for p in packets {
            sum = sum.wrapping_add(packet(&TracePacketDecoder::new(black_box(p))));
        }
    }
    sum
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let n: u64 = std::env::args()
        .nth(1)
        .as_deref()
        .unwrap_or("100000")
        .parse()?;
    let packets = packets();
    let sum = run_decode(n, &packets);
    println!("{n} rounds of {} packets decoded: {sum}", packets.len());
    Ok(())
}
