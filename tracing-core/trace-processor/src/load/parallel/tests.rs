//! The parallel load makes the one-thread load's tables, row for row,
//! however the reads split the trace: traces of TrackEvents on several
//! sequences (interned names, debug annotations, counters), ftrace bundles
//! of two CPUs (events and `compact_sched`), `compressed_packets` (one of them garbage), read in pieces
//! of random sizes, plain and gzip, on 2 to 5 threads; a truncated tail
//! and a stream that is not a trace end as they do on one thread.

use std::io::{Read, Write};
use std::sync::atomic::AtomicU64;

use proptest::prelude::*;

use crate::driver::load_counted;
use crate::{Error, LoadOptions, Loader, TraceProcessor};

fn varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

fn uint(field: u32, v: u64) -> Vec<u8> {
    let mut out = Vec::new();
    varint(&mut out, u64::from(field) << 3);
    varint(&mut out, v);
    out
}

fn bytes(field: u32, b: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    varint(&mut out, (u64::from(field) << 3) | 2);
    varint(&mut out, b.len() as u64);
    out.extend_from_slice(b);
    out
}

fn msg(field: u32, parts: &[Vec<u8>]) -> Vec<u8> {
    bytes(field, &parts.concat())
}

fn zlib(b: &[u8]) -> Vec<u8> {
    let mut enc = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::fast());
    enc.write_all(b).unwrap();
    enc.finish().unwrap()
}

/// A trace of `n` TrackEvents per sequence on three sequences, ftrace
/// bundles, counters, and every tenth group of packets compressed.
fn sample_trace(n: u64) -> Vec<u8> {
    let mut packets: Vec<Vec<u8>> = Vec::new();
    for seq in 1..=3u64 {
        let thread = msg(4, &[uint(1, 10), uint(2, 10 + seq), bytes(5, b"worker")]);
        let desc = msg(60, &[uint(1, 100 + seq), thread]);
        packets.push([uint(10, seq), uint(13, 1), desc].concat());
        let counter = msg(60, &[uint(1, 200 + seq), bytes(2, b"load"), msg(8, &[])]);
        packets.push([uint(10, seq), counter].concat());
        let names = msg(2, &[uint(1, 1), bytes(2, format!("outer{seq}").as_bytes())]);
        packets.push([uint(10, seq), uint(13, 2), msg(12, &[names])].concat());
    }
    let mut group = Vec::new();
    for i in 0..n {
        for seq in 1..=3u64 {
            // Later sequences run behind: the sort puts them in place.
            let ts = 10_000 + i * 20 + (3 - seq) * 7;
            let annotation = msg(4, &[bytes(10, b"i"), uint(4, i)]);
            let begin = msg(
                11,
                &[uint(9, 1), uint(11, 100 + seq), uint(10, 1), annotation],
            );
            let end = msg(11, &[uint(9, 2), uint(11, 100 + seq)]);
            let value = msg(11, &[uint(9, 4), uint(11, 200 + seq), uint(30, i % 17)]);
            for (dt, ev) in [(0, begin), (5, value), (9, end)] {
                let p = [uint(8, ts + dt), uint(10, seq), uint(13, 2), ev].concat();
                if i % 10 == 3 {
                    group.push(p);
                } else {
                    packets.push(p);
                }
            }
        }
        if i % 10 == 4 && !group.is_empty() {
            let inner: Vec<u8> = group.drain(..).flat_map(|p| bytes(1, &p)).collect();
            packets.push(bytes(50, &zlib(&inner)));
        }
        if i % 25 == 12 {
            // compact_sched: two switches and a waking, times as deltas.
            let packed = |f: u32, v: &[u64]| {
                let mut b = Vec::new();
                v.iter().for_each(|x| varint(&mut b, *x));
                bytes(f, &b)
            };
            let compact = msg(
                4,
                &[
                    bytes(5, b"a"),
                    bytes(5, b"b"),
                    packed(1, &[10_000 + i * 20, 3]),
                    packed(2, &[0, 1]),
                    packed(3, &[11, 12]),
                    packed(4, &[120, 120]),
                    packed(6, &[0, 1]),
                    packed(7, &[10_001 + i * 20]),
                    packed(8, &[12]),
                    packed(9, &[1]),
                    packed(10, &[120]),
                    packed(11, &[1]),
                    packed(12, &[0]),
                ],
            );
            packets.push([msg(1, &[uint(1, i % 2), compact]), uint(10, 9)].concat());
        }
        if i % 25 == 0 {
            let cpu = i % 2;
            let switch = msg(
                4,
                &[
                    bytes(1, b"a"),
                    uint(2, 11),
                    uint(4, 1),
                    bytes(5, b"b"),
                    uint(6, 12),
                ],
            );
            let event = msg(2, &[uint(1, 10_000 + i * 20), uint(2, 11), switch]);
            packets.push([msg(1, &[uint(1, cpu), event]), uint(10, 9)].concat());
        }
    }
    packets.push(bytes(50, b"not zlib"));
    packets.iter().flat_map(|p| bytes(1, p)).collect()
}

/// Every table's and view's rows (or its error) as text.
fn dump(tp: &TraceProcessor) -> Vec<(String, String)> {
    let names = tp.table_names().unwrap();
    names
        .into_iter()
        .map(|name| {
            let rows = match tp.query(&format!("SELECT * FROM \"{name}\"")) {
                Ok(r) => format!("{:?}", r.rows),
                Err(e) => format!("error: {e}"),
            };
            (name, rows)
        })
        .collect()
}

/// The one-thread load's outcome: its tables, or its error.
fn one_thread(trace: &[u8]) -> Result<Vec<(String, String)>, String> {
    let mut loader = Loader::new();
    loader
        .push(&trace[..trace.len().min(2)])
        .map_err(|e| e.to_string())?;
    let rest = trace.get(2..).unwrap_or(&[]);
    for c in rest.chunks(super::CHUNK) {
        loader.push(c).map_err(|e| e.to_string())?;
    }
    let storage = loader.finish().map_err(|e| e.to_string())?;
    Ok(dump(&TraceProcessor::from_storage(storage).unwrap()))
}

/// A reader handing out its bytes in reads of the sizes `sizes` cycles
/// through.
struct Jittery<'a> {
    bytes: &'a [u8],
    sizes: Vec<usize>,
    at: usize,
}

impl Read for Jittery<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let size = self.sizes[self.at % self.sizes.len()].max(1);
        self.at += 1;
        let n = size.min(buf.len()).min(self.bytes.len());
        buf[..n].copy_from_slice(&self.bytes[..n]);
        self.bytes = &self.bytes[n..];
        Ok(n)
    }
}

/// The parallel load's outcome on `threads` threads, read as `sizes` say.
fn parallel(
    trace: &[u8],
    threads: usize,
    sizes: Vec<usize>,
) -> Result<Vec<(String, String)>, String> {
    let r = Jittery {
        bytes: trace,
        sizes,
        at: 0,
    };
    let options = LoadOptions {
        threads,
        ..LoadOptions::default()
    };
    let read = AtomicU64::new(0);
    let storage = load_counted(r, &read, &options, &mut |_, _| {}).map_err(|e: Error| match e {
        Error::Trace(t) => t.to_string(),
        other => other.to_string(),
    })?;
    Ok(dump(&TraceProcessor::from_storage(storage).unwrap()))
}

#[test]
fn a_trace_read_in_pieces_makes_the_one_thread_tables() {
    let trace = sample_trace(300);
    let want = one_thread(&trace).unwrap();
    let rows = |table: &str| &want.iter().find(|(n, _)| n == table).unwrap().1;
    assert!(rows("slice").len() > 10_000, "the trace makes slices");
    assert!(rows("sched_slice").len() > 1_000, "and scheduling slices");
    for threads in [2, 3, 5] {
        let got = parallel(&trace, threads, vec![1, 700, 3, 4096, 129, 65_536]).unwrap();
        assert_eq!(got, want, "{threads} threads");
    }
}

#[test]
fn a_gzip_trace_makes_the_one_thread_tables() {
    let trace = sample_trace(120);
    let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    enc.write_all(&trace).unwrap();
    let gz = enc.finish().unwrap();
    let want = one_thread(&trace).unwrap();
    assert_eq!(parallel(&gz, 2, vec![333, 5000]).unwrap(), want);
}

#[test]
fn a_truncated_trace_or_one_that_is_not_a_trace_ends_as_on_one_thread() {
    let trace = sample_trace(40);
    let cut = &trace[..trace.len() - 3];
    assert_eq!(parallel(cut, 3, vec![97, 1]), one_thread(cut));
    // Field 0 between two copies: the stream stops being a trace there.
    let bad = [&trace[..], &[0, 0], &trace[..]].concat();
    let want = one_thread(&bad);
    assert!(want.is_err());
    assert_eq!(parallel(&bad, 2, vec![5000]), want);
    assert_eq!(parallel(&[], 2, vec![1]), one_thread(&[]));
}

#[test]
fn a_batch_inflates_its_compressed_packets_ahead() {
    let trace = sample_trace(40);
    let mut tokenizer = crate::load::tokenizer::TraceTokenizer::default();
    let mut batch = super::batch::Batch::default();
    let n = batch.read_from(&mut &trace[..], trace.len()).unwrap();
    assert_eq!(n, trace.len());
    batch.frame(&mut tokenizer);
    batch.prepare();
    assert!(batch.packets.iter().all(|p| p.ahead.walked()));
    // Every bundle splits cleanly, so each is split ahead.
    let bundles = (batch.packets.iter()).filter(|p| p.ahead.split()).count();
    assert_eq!(bundles, 4);
    let ready: Vec<bool> = (batch.packets.iter())
        .filter_map(|p| p.ahead.ready())
        .map(|r| r.clone_result().is_ok())
        .collect();
    // Four groups inflate; the garbage one is an error, as one thread finds.
    assert_eq!(ready, [true, true, true, true, false]);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(12))]

    /// Batch boundaries anywhere: reads of any sizes give the same tables.
    #[test]
    fn any_reads_make_the_one_thread_tables(
        sizes in prop::collection::vec(1usize..2000, 1..8),
        threads in 2usize..5,
    ) {
        let trace = sample_trace(30);
        let want = one_thread(&trace).unwrap();
        prop_assert_eq!(parallel(&trace, threads, sizes).unwrap(), want);
    }
}
