//! The service's packet validation over a large trace, next to a
//! hand-written floor that makes the same checks: every packet of the trace
//! (its service-written trusted fields left out first, as a producer's
//! packet has none) goes through `validate` (or the floor, or nothing), a
//! number of rounds. For callgrind (`none` is the baseline to subtract):
//! `cargo run --release -p zerotrace-core --example validate_trace -- big.pftrace validate 5`
//! (`cargo xtask decode-data --only recorded --copies 10 --out DIR` writes
//! such a trace, `DIR/recorded.pftrace`).

use std::hint::black_box;
use std::time::Instant;
use zerotrace_core::service::__private::validate;

fn varint(b: &[u8], i: &mut usize) -> Option<u64> {
    let mut v = 0u64;
    for s in 0..10 {
        let c = *b.get(*i)?;
        *i += 1;
        v |= u64::from(c & 0x7f) << (7 * s);
        if c < 0x80 {
            return Some(v);
        }
    }
    None
}

/// The floor: the validator's checks (well-formed top-level fields, no
/// reserved id, no group, length bound), hand-written.
fn floor(p: &[u8]) -> bool {
    const RESERVED: [u32; 12] = [3, 10, 33, 35, 36, 50, 69, 79, 98, 124, 125, 133];
    let mut i = 0;
    while i < p.len() {
        let Some(tag) = varint(p, &mut i) else {
            return false;
        };
        let id = (tag >> 3) as u32;
        if id == 0 || RESERVED.contains(&id) {
            return false;
        }
        match tag & 7 {
            0 => {
                if varint(p, &mut i).is_none() {
                    return false;
                }
            }
            1 => i += 8,
            5 => i += 4,
            2 => {
                let Some(n) = varint(p, &mut i) else {
                    return false;
                };
                if n > 256 << 20 {
                    return false;
                }
                i += n as usize;
            }
            _ => return false,
        }
        if i > p.len() {
            return false;
        }
    }
    true
}

fn main() {
    let usage = "usage: validate_trace TRACE [validate|floor|none] [ROUNDS]";
    let mut args = std::env::args().skip(1);
    let Some(path) = args.next() else {
        eprintln!("{usage}");
        std::process::exit(2);
    };
    let mode = args.next().unwrap_or_else(|| "validate".into());
    let rounds: usize = args.next().and_then(|n| n.parse().ok()).unwrap_or(5);
    let data = std::fs::read(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    let mut packets = Vec::new();
    let mut i = 0;
    while i < data.len() {
        let tag = varint(&data, &mut i).unwrap();
        assert_eq!(tag, (1 << 3) | 2);
        let n = varint(&data, &mut i).unwrap() as usize;
        packets.push(&data[i..i + n]);
        i += n;
    }
    // The trace as written holds the service's trusted fields; a producer's
    // packets do not: they are left out here.
    const RESERVED: [u64; 12] = [3, 10, 33, 35, 36, 50, 69, 79, 98, 124, 125, 133];
    let owned: Vec<Vec<u8>> = packets
        .iter()
        .map(|p| {
            let mut out = Vec::with_capacity(p.len());
            let mut i = 0;
            while i < p.len() {
                let start = i;
                let tag = varint(p, &mut i).unwrap();
                match tag & 7 {
                    0 => {
                        varint(p, &mut i).unwrap();
                    }
                    1 => i += 8,
                    5 => i += 4,
                    2 => {
                        let n = varint(p, &mut i).unwrap() as usize;
                        i += n;
                    }
                    _ => panic!("wire type"),
                }
                if !RESERVED.contains(&(tag >> 3)) {
                    out.extend_from_slice(&p[start..i]);
                }
            }
            out
        })
        .collect();
    let packets: Vec<&[u8]> = owned.iter().map(|p| p.as_slice()).collect();
    let bytes: usize = packets.iter().map(|p| p.len()).sum();
    let t = Instant::now();
    let mut ok = 0usize;
    for _ in 0..rounds {
        for p in &packets {
            let good = match mode.as_str() {
                "floor" => floor(black_box(p)),
                "none" => !black_box(p).is_empty(),
                _ => validate(black_box(p)).is_ok(),
            };
            ok += usize::from(good);
        }
    }
    let s = t.elapsed().as_secs_f64();
    println!(
        "{mode}: {} packets, {:.1} MB, {rounds} rounds: {:.3} s, {:.0} MB/s, {:.1} ns/packet, valid {}",
        packets.len(),
        bytes as f64 / 1e6,
        s,
        (bytes * rounds) as f64 / 1e6 / s,
        s * 1e9 / (packets.len() * rounds) as f64,
        ok / rounds
    );
}
