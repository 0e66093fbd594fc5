//! Property tests: random packets (0 B to 200 KiB, random nesting) written by
//! several writers through random page sizes and layouts, with random flush
//! points and a service that reads the moves of each commit in random order,
//! come back out of the reference reader exactly as written.
//!
//! With compaction off the reassembled bytes must equal a `HeapWriter`
//! encoding of the same packet byte for byte. With compaction on (where a
//! nested message crossing a chunk keeps its 4-byte length but one staying in
//! a chunk is shortened) the decoded structure must match.

use crate::common;

use std::sync::Arc;

use proptest::prelude::*;
use protozero::{Decoder, FieldValue, HeapWriter, Message};
use zerotrace_core::abi::{PAGE_HEADER_SIZE, PageLayout};
use zerotrace_core::producer::{ArbiterConfig, BufferExhaustedPolicy, SharedMemoryArbiter};
use zerotrace_core::shm::HeapShm;

#[derive(Debug, Clone)]
enum Op {
    Varint(u32, u64),
    Bytes(u32, usize, u8),
    Nested(u32, Vec<Op>),
}

fn gen_bytes(len: usize, seed: u8) -> Vec<u8> {
    (0..len)
        .map(|i| (i as u8).wrapping_mul(31).wrapping_add(seed))
        .collect()
}

fn op() -> impl Strategy<Value = Op> {
    let len = prop_oneof![12 => 0usize..64, 4 => 0usize..6000, 1 => 0usize..200 * 1024];
    let leaf = prop_oneof![
        (1u32..100, any::<u64>()).prop_map(|(id, v)| Op::Varint(id, v)),
        (1u32..100, len, any::<u8>()).prop_map(|(id, n, s)| Op::Bytes(id, n, s)),
    ];
    leaf.prop_recursive(8, 48, 5, |inner| {
        (1u32..100, prop::collection::vec(inner, 0..5)).prop_map(|(id, ops)| Op::Nested(id, ops))
    })
}

#[derive(Debug, Clone)]
struct PacketSpec {
    writer: usize,
    ops: Vec<Op>,
    flush_after: bool,
}

fn packet(writers: usize) -> impl Strategy<Value = PacketSpec> {
    (
        0..writers,
        prop::collection::vec(op(), 0..5),
        prop::bool::weighted(0.15),
    )
        .prop_map(|(writer, ops, flush_after)| PacketSpec {
            writer,
            ops,
            flush_after,
        })
}

#[derive(Debug, Clone)]
struct Scenario {
    page_size: usize,
    layout: PageLayout,
    pages: usize,
    writers: usize,
    packets: Vec<PacketSpec>,
    shuffle_seed: u64,
    direct_patching: bool,
}

fn scenario() -> impl Strategy<Value = Scenario> {
    (
        prop::sample::select(vec![4096usize, 8192, 16384, 32768, 65536]),
        prop::sample::select(PageLayout::PARTITIONED.to_vec()),
        1usize..6,
        1usize..4,
        any::<u64>(),
        any::<bool>(),
    )
        .prop_flat_map(
            |(page_size, layout, pages, writers, shuffle_seed, direct_patching)| {
                prop::collection::vec(packet(writers), 0..16).prop_map(move |packets| {
                    // Each writer holds a chunk while it takes the next one.
                    let per_page = layout.num_chunks();
                    let pages = pages.max((writers + 2).div_ceil(per_page));
                    Scenario {
                        page_size,
                        layout,
                        pages,
                        writers,
                        packets,
                        shuffle_seed,
                        direct_patching,
                    }
                })
            },
        )
}

fn write_ops(m: &mut Message<'_>, ops: &[Op]) {
    for op in ops {
        match op {
            Op::Varint(id, v) => m.append_uint64(*id, *v),
            Op::Bytes(id, n, s) => m.append_bytes(*id, &gen_bytes(*n, *s)),
            Op::Nested(id, inner) => {
                let mut c = m.begin_nested(*id);
                write_ops(&mut c, inner);
            }
        }
    }
}

/// Checks that `bytes` decodes to exactly `ops` (either length encoding).
fn matches_ops(bytes: &[u8], ops: &[Op]) -> Result<(), String> {
    let mut d = Decoder::new(bytes);
    for op in ops {
        let f = d
            .read_field()
            .ok_or("missing field")?
            .map_err(|e| e.to_string())?;
        match (op, f.value) {
            (Op::Varint(id, v), FieldValue::Varint(x)) if f.id == *id && x == *v => {}
            (Op::Bytes(id, n, s), FieldValue::Bytes(b))
                if f.id == *id && b == gen_bytes(*n, *s).as_slice() => {}
            (Op::Nested(id, inner), FieldValue::Bytes(b)) if f.id == *id => matches_ops(b, inner)?,
            (op, _) => return Err(format!("mismatch at {op:?}, got field {}", f.id)),
        }
    }
    match d.read_field() {
        None => Ok(()),
        Some(_) => Err("trailing fields".into()),
    }
}

const FIRST_PACKET_PREFIX: [u8; 3] = [0xB8, 0x05, 0x01];

fn run(sc: &Scenario, compaction: bool) -> Result<(), TestCaseError> {
    let size = sc.pages * sc.page_size;
    let region = Arc::new(HeapShm::new(size).unwrap());
    let service = common::InProcessService::new(region.clone(), sc.page_size, sc.shuffle_seed | 1);
    let config = ArbiterConfig {
        page_layout: sc.layout,
        direct_patching: sc.direct_patching,
        ..ArbiterConfig::default()
    };
    let arbiter = SharedMemoryArbiter::new(region, sc.page_size, service.clone(), config).unwrap();
    let mut writers: Vec<_> = (0..sc.writers)
        .map(|i| {
            let mut w = arbiter
                .create_trace_writer(i as u16 + 1, BufferExhaustedPolicy::StallThenAbort)
                .unwrap();
            w.set_compaction(compaction);
            w
        })
        .collect();
    let ids: Vec<u16> = writers.iter().map(|w| w.writer_id()).collect();
    for p in &sc.packets {
        let w = &mut writers[p.writer];
        w.write_packet(|m| write_ops(m, &p.ops));
        if p.flush_after {
            w.flush(None);
        }
    }
    for w in &mut writers {
        w.flush(None);
        prop_assert_eq!(w.drop_count(), 0);
    }
    let reader = service.reader.lock().unwrap();
    let (out, errors) = reader.reassemble();
    prop_assert!(errors.is_empty(), "{:?}", errors);
    for (i, id) in ids.iter().enumerate() {
        let expected: Vec<&PacketSpec> = sc.packets.iter().filter(|p| p.writer == i).collect();
        let got = out.get(id).map(|w| w.packets.clone()).unwrap_or_default();
        if let Some(wp) = out.get(id) {
            prop_assert_eq!(wp.abandoned, 0);
            prop_assert_eq!(wp.incomplete, 0);
        }
        // Empty packets are skipped by readers, except that the first one
        // carries first_packet_on_sequence.
        let expected: Vec<(usize, &PacketSpec)> = expected
            .into_iter()
            .enumerate()
            .filter(|(k, p)| *k == 0 || !p.ops.is_empty())
            .collect();
        prop_assert_eq!(got.len(), expected.len(), "writer {}", id);
        for ((k, spec), bytes) in expected.iter().zip(&got) {
            let body = if *k == 0 {
                prop_assert_eq!(&bytes[..3], &FIRST_PACKET_PREFIX[..]);
                &bytes[3..]
            } else {
                &bytes[..]
            };
            if compaction {
                prop_assert_eq!(matches_ops(body, &spec.ops), Ok(()));
            } else {
                let mut hw = HeapWriter::new();
                hw.set_compaction(false);
                write_ops(&mut hw.root(), &spec.ops);
                let want = hw.finish().unwrap();
                prop_assert!(
                    body == want.as_slice(),
                    "packet {} of writer {} differs",
                    k,
                    id
                );
            }
        }
    }
    if std::env::var_os("PROPTEST_STATS").is_some() {
        let bytes: usize = out
            .values()
            .flat_map(|w| w.packets.iter())
            .map(Vec::len)
            .sum();
        eprintln!(
            "chunks={} commits={} bytes={bytes} page={} {:?}",
            reader.chunks.len(),
            reader.commits,
            sc.page_size,
            sc.layout
        );
    }
    prop_assert!(PAGE_HEADER_SIZE == 8);
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: if cfg!(miri) { 2 } else { 96 }, ..ProptestConfig::default() })]

    #[test]
    fn reassembled_packets_equal_heap_encoding_without_compaction(sc in scenario()) {
        run(&sc, false)?;
    }

    #[test]
    fn reassembled_packets_decode_to_what_was_written_with_compaction(sc in scenario()) {
        run(&sc, true)?;
    }
}
