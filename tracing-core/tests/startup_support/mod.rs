//! The startup-tracing workload both startup tests run: against `zerotraced`
//! (`tracing-core/tests/all/startup_tracing.rs`) and against Perfetto's genuine
//! service (`tracing-core/interop/tests/all/startup_tracing_genuine_service.rs`,
//! which includes this file with `#[path]`). The packets, their payloads, the
//! session's config, the check of what came back and the writer that starts
//! before the service were copied in both; now a fix to one is a fix to both.
#![allow(dead_code)]

use std::sync::Arc;
use std::sync::mpsc::{Receiver, Sender, channel};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use protozero::{Decoder, HeapWriter};
use zerotrace_core::platform::boottime_ns;
use zerotrace_core::producer::{ProducerClient, TraceWriter};
use zerotrace_protos::protos::{TraceConfig, TracePacketDecoder};

/// Field of our test payload (an unknown TracePacket field, kept verbatim).
pub const PAYLOAD_FIELD: u32 = 900;
/// Field carrying the packet's sequence number.
pub const SEQ_FIELD: u32 = 901;

/// A session's config: one 4 MiB discard buffer, data source `ds`.
pub fn config(ds: &str) -> Vec<u8> {
    let mut w = HeapWriter::new();
    {
        let mut c = TraceConfig::from_message(w.root());
        c.add_buffers().set_size_kb(4096).set_fill_policy_raw(2);
        c.add_data_sources().begin_config().set_name(ds);
    }
    w.finish().unwrap()
}

/// Packet `i`'s payload: mostly small, every 25th spans several chunks
/// (size patches).
pub fn payload(i: u64) -> Vec<u8> {
    let n = if i % 25 == 7 {
        9_000
    } else {
        30 + (i as usize * 13) % 200
    };
    (0..n).map(|k| (k as u64 ^ i) as u8).collect()
}

/// Writes packet `i`: timestamped now, its number and its payload.
pub fn write(w: &mut TraceWriter, i: u64) {
    w.packet(|p| {
        p.set_timestamp(boottime_ns());
        p.message().append_uint64(SEQ_FIELD, i);
        p.message().append_bytes(PAYLOAD_FIELD, &payload(i));
    });
}

/// The data packets (not the service's), as (sequence number, timestamp),
/// each payload checked.
pub fn data_packets(trace: &[u8]) -> Vec<(u64, u64)> {
    Decoder::new(trace)
        .map(|f| f.unwrap().as_bytes().unwrap().to_vec())
        .filter(|p| TracePacketDecoder::new(p).trusted_packet_sequence_id() != Some(1))
        .filter_map(|p| {
            let seq = Decoder::new(&p).find_last(SEQ_FIELD)?.as_u64().ok()?;
            let data = Decoder::new(&p).find_last(PAYLOAD_FIELD)?;
            assert_eq!(data.as_bytes().unwrap(), payload(seq), "packet {seq}");
            Some((seq, TracePacketDecoder::new(&p).timestamp().unwrap()))
        })
        .collect()
}

/// A startup trace writer on its own thread that wrote packets `0..n` for
/// a second (one every 10 ms), before any service exists, and waits for
/// [`EarlyWriter::start_and_join`] to write 100 more.
pub struct EarlyWriter {
    /// How many packets it wrote in its first second.
    pub before_service: u64,
    started: Sender<()>,
    thread: JoinHandle<u64>,
}

impl EarlyWriter {
    /// Starts the writer for data source `ds` and returns after its first
    /// second of writing.
    pub fn spawn(producer: &Arc<ProducerClient>, ds: &str) -> EarlyWriter {
        let (started_tx, started): (Sender<()>, Receiver<()>) = channel();
        let (early_tx, early) = channel::<u64>();
        let thread = {
            let producer = producer.clone();
            let ds = ds.to_owned();
            std::thread::spawn(move || {
                let mut w = producer.create_startup_trace_writer(&ds).unwrap();
                let deadline = Instant::now() + Duration::from_secs(1);
                let mut i = 0;
                while Instant::now() < deadline {
                    write(&mut w, i);
                    i += 1;
                    std::thread::sleep(Duration::from_millis(10));
                }
                early_tx.send(i).unwrap();
                // Until the session starts the data source, and after.
                started.recv().unwrap();
                for k in i..i + 100 {
                    write(&mut w, k);
                }
                w.flush(None);
                i + 100
            })
        };
        let before_service = early.recv().unwrap();
        EarlyWriter {
            before_service,
            started: started_tx,
            thread,
        }
    }

    /// Once the data source started: writes the 100 more packets, flushes,
    /// and returns how many packets it wrote in all.
    pub fn start_and_join(self) -> u64 {
        self.started.send(()).unwrap();
        self.thread.join().unwrap()
    }
}
