//! A data source whose payload is defined in Rust, written into Perfetto
//! TracePackets and read back zero-copy.
//!
//! The packets are written the way a TraceWriter would: raw `Message` calls
//! for the TracePacket fields (timestamp = 8, trusted_packet_sequence_id =
//! 10) and the derived payload nested under field 1000, the first number of
//! Perfetto's range for out-of-tree extensions. The result is a `Trace`
//! (repeated TracePacket packet = 1), the same framing as a trace file.
//!
//! Run with `cargo run -p protozero --features derive --example derived_payload`.

use protozero::{HeapWriter, ProtoRead, ProtoWrite, ReadError, Repeated, SliceWriter};

/// Field number of our payload inside TracePacket.
const GPU_FREQ_FIELD: u32 = 1000;

/// The payload: one reading of a GPU's frequency governor.
#[derive(ProtoWrite, ProtoRead, Debug, PartialEq)]
struct GpuFreqEvent<'a> {
    #[proto(tag = 1)]
    gpu: &'a str,
    #[proto(tag = 2)]
    khz: u32,
    #[proto(tag = 3)]
    governor: Governor,
    /// Per-core frequency changes since the last event, zigzag-packed.
    #[proto(tag = 4, sint, packed)]
    core_deltas_khz: Vec<i32>,
    #[proto(oneof)]
    reason: Option<Reason<'a>>,
}

/// A protobuf enum.
#[derive(ProtoWrite, ProtoRead, Debug, PartialEq, Clone, Copy)]
enum Governor {
    Unspecified = 0,
    Performance = 1,
    Powersave = 2,
    Schedutil = 3,
}

/// A oneof: why the frequency changed.
#[derive(ProtoWrite, ProtoRead, Debug, PartialEq)]
enum Reason<'a> {
    #[proto(tag = 10)]
    ThermalZone(&'a str),
    #[proto(tag = 11)]
    UserRequestKhz(u32),
}

/// What a reader wants from each TracePacket; everything else is skipped.
#[derive(ProtoRead, Debug)]
struct PacketView<'a> {
    #[proto(tag = 8)]
    timestamp: u64,
    #[proto(tag = 10)]
    sequence_id: u32,
    #[proto(tag = 1000)]
    gpu_freq: Option<GpuFreqEvent<'a>>,
}

/// A trace file: TracePackets decoded lazily, one at a time.
#[derive(ProtoRead, Debug)]
struct TraceView<'a> {
    #[proto(tag = 1)]
    packets: Repeated<'a, PacketView<'a>>,
}

fn events() -> Vec<(u64, GpuFreqEvent<'static>)> {
    vec![
        (
            1_000,
            GpuFreqEvent {
                gpu: "gpu0",
                khz: 585_000,
                governor: Governor::Schedutil,
                core_deltas_khz: vec![0, -15_000, 30_000],
                reason: Some(Reason::ThermalZone("skin-therm")),
            },
        ),
        (
            2_500,
            GpuFreqEvent {
                gpu: "gpu0",
                khz: 848_000,
                governor: Governor::Performance,
                core_deltas_khz: vec![],
                reason: Some(Reason::UserRequestKhz(850_000)),
            },
        ),
    ]
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    // Write a Trace with one TracePacket per event, plus a packet from some
    // other data source that the reader does not know.
    let mut w = HeapWriter::new();
    {
        let mut trace = w.root();
        for (ts, event) in &events() {
            let mut packet = trace.begin_nested(1); // Trace.packet
            packet.append_uint64(8, *ts); // TracePacket.timestamp
            packet.append_uint32(10, 1); // trusted_packet_sequence_id
            event.write_nested(&mut packet, GPU_FREQ_FIELD);
        }
        let mut other = trace.begin_nested(1);
        other.append_uint64(8, 3_000);
        let mut for_testing = other.begin_nested(900); // TracePacket.for_testing
        for_testing.append_string(1, "another data source's payload, skipped by our reader");
    }
    let trace_bytes = w.finish()?;
    println!(
        "trace: {} bytes, {:02x?}...",
        trace_bytes.len(),
        &trace_bytes[..16]
    );

    // The same payload can go into a fixed buffer (e.g. a shared-memory
    // chunk): the derived writer never allocates.
    let mut chunk = [0u8; 128];
    let mut sw = SliceWriter::new(&mut chunk);
    events()[0].1.write_fields(&mut sw.root());
    println!("one payload in a fixed slice: {} bytes", sw.finish()?.len());

    // Read it back. Strings borrow from `trace_bytes`.
    let trace = TraceView::decode(&trace_bytes)?;
    let mut seen = 0;
    for packet in &trace.packets {
        let packet: PacketView<'_> = packet?;
        match &packet.gpu_freq {
            Some(event) => {
                println!(
                    "ts={} seq={} {} at {} kHz ({:?}), deltas {:?}, reason {:?}",
                    packet.timestamp,
                    packet.sequence_id,
                    event.gpu,
                    event.khz,
                    event.governor,
                    event.core_deltas_khz,
                    event.reason
                );
                assert_eq!(event, &events()[seen].1);
                seen += 1;
            }
            None => println!(
                "ts={} (no GPU payload: another data source)",
                packet.timestamp
            ),
        }
    }
    assert_eq!(seen, 2);

    // Malformed input is an error with the path to the problem.
    let mut corrupt = trace_bytes.clone();
    let at = corrupt
        .windows(4)
        .position(|w| w == b"gpu0")
        .ok_or("payload not found")?;
    corrupt[at] = 0xFF; // no longer UTF-8
    let err: ReadError = TraceView::decode(&corrupt)?
        .packets
        .iter()
        .find_map(Result::err)
        .ok_or("corruption not detected")?;
    println!("corrupted copy: {err}");
    Ok(())
}
