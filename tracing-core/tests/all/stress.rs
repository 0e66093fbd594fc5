//! Multi-threaded stress: 8 writer threads × 100k packets into a 256 KiB SMB
//! under the drop policy, with a concurrent reader thread playing the service
//! (acquire complete chunks for reading, copy, release as free, apply patches).
//!
//! Every packet carries its writer and sequence number and a payload derived
//! from them. Afterwards every delivered packet must be intact, sequence
//! numbers must increase per writer, every gap must be announced by
//! `previous_packet_dropped` on the next delivered packet (or be a trailing
//! loss of a writer that ended in drop mode), and delivered + lost = written.
//! The same scenario under the stall policy must deliver every packet.

use crate::common;

use std::sync::{Arc, Barrier};
use std::thread;

use protozero::{Decoder, FieldValue};
use zerotrace_core::abi::SharedMemoryAbi;
use zerotrace_core::producer::{
    ArbiterConfig, BufferExhaustedPolicy, ChannelCommitSink, SharedMemoryArbiter, SinkMessage,
};
use zerotrace_core::shm::{HeapShm, SharedMemoryRegion};

const THREADS: u64 = 8;
const PACKETS: u64 = 100_000;
const SMB_SIZE: usize = 256 * 1024;

fn payload(writer: u64, seq: u64) -> Vec<u8> {
    let len = if seq % 997 == 0 {
        6000
    } else {
        (seq * 7 + writer) % 64
    } as usize;
    (0..len).map(|i| (i as u64 ^ seq ^ writer) as u8).collect()
}

struct Decoded {
    writer: u64,
    seq: u64,
    dropped_flag: bool,
}

fn decode(bytes: &[u8]) -> Result<Decoded, String> {
    let mut d = Decoder::new(bytes);
    let (mut writer, mut seq, mut body, mut dropped_flag) = (None, None, None, false);
    while let Some(f) = d.read_field() {
        let f = f.map_err(|e| e.to_string())?;
        match (f.id, f.value) {
            (1, FieldValue::Varint(v)) => writer = Some(v),
            (2, FieldValue::Varint(v)) => seq = Some(v),
            (4, FieldValue::Bytes(b)) => {
                let mut inner = Decoder::new(b);
                match inner.read_field() {
                    Some(Ok(g)) if g.id == 1 => {
                        body = Some(g.as_bytes().map_err(|e| e.to_string())?.to_vec())
                    }
                    _ => return Err("bad nested message".into()),
                }
            }
            (42, FieldValue::Varint(257)) => dropped_flag = true,
            (87, FieldValue::Varint(1)) => {}
            (id, _) => return Err(format!("unexpected field {id}")),
        }
    }
    let (writer, seq, body) = (
        writer.ok_or("no writer")?,
        seq.ok_or("no seq")?,
        body.ok_or("no body")?,
    );
    if body != payload(writer, seq) {
        return Err(format!("payload of {writer}/{seq} corrupted"));
    }
    Ok(Decoded {
        writer,
        seq,
        dropped_flag,
    })
}

/// Runs the scenario; returns (delivered, drop periods).
fn run(policy: BufferExhaustedPolicy) -> (u64, u64) {
    let region = Arc::new(HeapShm::new(SMB_SIZE).unwrap());
    let (sink, rx) = ChannelCommitSink::new();
    let arbiter = SharedMemoryArbiter::new(
        region.clone(),
        4096,
        Arc::new(sink),
        ArbiterConfig::default(),
    )
    .unwrap();

    let reader_region = region.clone();
    let reader = thread::spawn(move || {
        // SAFETY: `reader_region` keeps the memory mapped while the view lives.
        let abi = unsafe { SharedMemoryAbi::new(reader_region.as_ptr(), SMB_SIZE, 4096) }.unwrap();
        let mut r = common::ReferenceReader::default();
        for msg in rx {
            if let SinkMessage::Commit(req) = msg {
                r.process_commit(&abi, &req);
            }
        }
        r
    });

    let barrier = Arc::new(Barrier::new(THREADS as usize));
    let handles: Vec<_> = (0..THREADS)
        .map(|t| {
            let arbiter = arbiter.clone();
            let barrier = barrier.clone();
            thread::spawn(move || {
                let mut w = arbiter.create_trace_writer(0, policy).unwrap();
                barrier.wait();
                for seq in 0..PACKETS {
                    let body = payload(t, seq);
                    w.write_packet(|p| {
                        p.append_uint64(1, t);
                        p.append_uint64(2, seq);
                        let mut n = p.begin_nested(4);
                        n.append_bytes(1, &body);
                    });
                }
                let ended_dropping = w.is_dropping();
                let drops = w.drop_count();
                let id = w.writer_id();
                w.flush(None);
                (id, t, ended_dropping, drops)
            })
        })
        .collect();
    let results: Vec<_> = handles.into_iter().map(|h| h.join().unwrap()).collect();
    let stats = arbiter.stats();
    drop(arbiter);
    let r = reader.join().unwrap();

    let (out, errors) = r.reassemble();
    assert!(errors.is_empty(), "{errors:?}");
    assert_eq!(stats.abi_errors, 0);
    let mut total_delivered = 0;
    let mut total_dropped_entries = 0;
    for (id, t, ended_dropping, drops) in results {
        let wp = out.get(&id).cloned().unwrap_or_default();
        assert_eq!(wp.incomplete, 0, "writer {id}: incomplete packets");
        let mut expected = 0u64;
        let mut delivered = 0u64;
        let mut lost_runs = 0u64;
        for bytes in &wp.packets {
            let d = decode(bytes).unwrap_or_else(|e| panic!("writer {id}: corrupt packet: {e}"));
            assert_eq!(d.writer, t);
            assert!(d.seq >= expected, "writer {id}: sequence went back");
            let gap = d.seq > expected;
            assert_eq!(
                gap, d.dropped_flag,
                "writer {id}: seq {} gap {gap} flag {}",
                d.seq, d.dropped_flag
            );
            lost_runs += u64::from(gap);
            expected = d.seq + 1;
            delivered += 1;
        }
        let trailing = PACKETS - expected;
        assert!(
            trailing == 0 || ended_dropping,
            "writer {id}: lost its tail without dropping"
        );
        lost_runs += u64::from(trailing > 0);
        // Every entry into drop mode loses at least one packet and shows up as
        // one announced (or trailing) gap, except that a packet begun when a
        // drop period ended and cut by the next one (abandoned: its first
        // fragments went out) joins the two periods into one gap.
        assert!(
            lost_runs <= drops && drops <= lost_runs + wp.abandoned as u64,
            "writer {id}: {lost_runs} gaps, {drops} drop periods, {} abandoned",
            wp.abandoned
        );
        assert!(wp.abandoned as u64 <= drops);
        total_delivered += delivered;
        total_dropped_entries += drops;
    }
    eprintln!(
        "delivered {total_delivered} of {} packets; {total_dropped_entries} drop periods; {} chunks, {} commits",
        THREADS * PACKETS,
        r.chunks.len(),
        r.commits
    );
    assert!(total_delivered > 0);
    (total_delivered, total_dropped_entries)
}

#[test]
fn eight_writers_drop_policy_every_packet_delivered_or_accounted() {
    run(BufferExhaustedPolicy::Drop);
}

#[test]
fn eight_writers_stall_policy_delivers_everything() {
    let (delivered, drops) = run(BufferExhaustedPolicy::StallThenAbort);
    assert_eq!(drops, 0);
    assert_eq!(delivered, THREADS * PACKETS);
}
