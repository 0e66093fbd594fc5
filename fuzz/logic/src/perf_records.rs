//! The `linux.perf` ring-buffer reader on hostile bytes: the input picks a
//! sample layout (which `PERF_SAMPLE_*` fields, which user registers) and a
//! ring's tail, head and size; the rest is what the kernel would have
//! written between them.
//!
//! Invariants: no panic; the ring's span lies inside the buffer and covers
//! exactly head − tail bytes; every framed record lies inside the bytes;
//! every slice a parsed sample holds (callchain, raw data, registers, stack
//! copy) lies inside its record, and the stack copy is never longer than
//! the record says it copied. Copied out as the drain thread does (stack
//! copies cut to what was filled, across a wrap), the bytes never grow and
//! frame as records again.

use zerotrace_probes::perf::abi::{read_format, sample};
use zerotrace_probes::perf::compact::{TwoRuns, copy_compacted};
use zerotrace_probes::perf::records::{Record, SampleLayout, parse_record};
use zerotrace_probes::perf::ring::{records, span};

use crate::support::Cursor;

/// The sample fields the layout may hold, one input bit each.
const FIELDS: [u64; 11] = [
    sample::IP,
    sample::TID,
    sample::TIME,
    sample::ADDR,
    sample::READ,
    sample::CALLCHAIN,
    sample::ID,
    sample::CPU,
    sample::PERIOD,
    sample::RAW,
    sample::STACK_USER,
];

fn inside(inner: &[u8], outer: &[u8]) -> bool {
    let o = outer.as_ptr() as usize;
    let i = inner.as_ptr() as usize;
    inner.is_empty() || (i >= o && i + inner.len() <= o + outer.len())
}

fn u64_at(c: &mut Cursor<'_>) -> u64 {
    let b = c.bytes(8);
    let mut a = [0u8; 8];
    a[..b.len()].copy_from_slice(b);
    u64::from_le_bytes(a)
}

/// The fuzz target.
pub fn perf_records(data: &[u8]) {
    let mut c = Cursor(data);
    let bits = u16::from(c.byte().unwrap_or(0)) | (u16::from(c.byte().unwrap_or(0)) << 8);
    let mut sample_type = sample::IDENTIFIER * u64::from(bits >> 15);
    for (i, f) in FIELDS.iter().enumerate() {
        if bits & (1 << i) != 0 {
            sample_type |= f;
        }
    }
    let regs_user_mask = match c.byte().unwrap_or(0) % 4 {
        0 => 0,
        1 => (1 << 6) | (1 << 7) | (1 << 8),
        2 => u64::MAX >> 40,
        _ => u64_at(&mut c),
    };
    if regs_user_mask != 0 {
        sample_type |= sample::REGS_USER;
    }
    let read = c.byte().unwrap_or(0);
    let layout = SampleLayout {
        sample_type,
        read_format: u64::from(read & 0x1f)
            & (read_format::GROUP
                | read_format::ID
                | read_format::LOST
                | read_format::TOTAL_TIME_ENABLED
                | read_format::TOTAL_TIME_RUNNING),
        regs_user_mask,
    };

    // The ring's positions: the span never leaves the buffer.
    let (tail, head) = (u64_at(&mut c), u64_at(&mut c));
    let size = 1usize << (c.byte().unwrap_or(12) % 24);
    if let Ok(s) = span(tail, head, size) {
        assert!(s.first.0 + s.first.1 <= size && s.second.0 + s.second.1 <= size);
        assert_eq!((s.first.1 + s.second.1) as u64, head.wrapping_sub(tail));
    }

    let c_cut = c.byte().unwrap_or(0);
    let bytes = c.0;
    let mut framed = 0;
    for rec in records(bytes) {
        let Ok(rec) = rec else { break };
        assert!(inside(rec, bytes), "a record outside the ring's bytes");
        framed += rec.len();
        if let Ok(Record::Sample(s)) = parse_record(rec, &layout) {
            if let Some(raw) = s.raw {
                assert!(inside(raw, rec));
            }
            if let Some(stack) = s.stack_user {
                assert!(inside(stack, rec));
            }
            if let Some(chain) = s.callchain {
                assert!(chain.len() * 8 <= rec.len());
                let _ = chain.iter().count();
            }
            if let Some(r) = s.read {
                let _ = r.values().count();
            }
            if let Some(regs) = s.regs_user {
                for b in 0..64 {
                    let _ = regs.get(b);
                }
            }
        }
    }
    assert!(framed <= bytes.len());

    // Copied out as the drain thread copies them (each sample's stack cut
    // to what was filled), across a wrap anywhere: never longer, and what
    // was whole reads back as records again.
    let cut = usize::from(c_cut).min(bytes.len());
    let mut out = Vec::new();
    let copied = copy_compacted(
        TwoRuns {
            first: &bytes[..cut],
            second: &bytes[cut..],
        },
        STACK,
        &mut out,
    );
    assert!(out.len() <= bytes.len());
    if copied.is_ok() {
        for rec in records(&out) {
            let rec = rec.expect("a compacted ring frames");
            let _ = parse_record(rec, &layout);
        }
    }
}

/// The stack copy size the compaction is tried with.
const STACK: u64 = 64;
