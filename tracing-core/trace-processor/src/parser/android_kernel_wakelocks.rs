//! `kernel_wakelock_data` (TracePacket field 115): how long each kernel or
//! native wakelock has been held, as `android_kernel_wakelock` counter
//! tracks (named after the wakelock, dimensioned by name and type, in ns
//! held since the trace began) kept sparse as upstream keeps them.
//!
//! A packet may describe wakelocks (id, name, type) for its sequence's
//! incremental state and lists the time each id held its wakelock since
//! the previous packet; every known wakelock's total is then reported. An
//! id described twice or never described, and the errors the probe flags,
//! are counted as upstream counts them.

use std::collections::BTreeMap;

use crate::hash::HashMap;

use protozero::Decoder;

use super::Parser;
use super::importer::{Importer, Input};
use super::sparse_counters::SparseCounters;
use crate::storage::args::ArgValue;
use crate::tracker::tracks::{EventType, TrackSpec};

/// TracePacket.kernel_wakelock_data.
const KERNEL_WAKELOCK_DATA: u32 = 115;

/// The error flags the probe sets, with the stat each is counted as.
const ERRORS: &[(u64, &str)] = &[
    (1, "kernel_wakelock_zero_value_reported"),
    (2, "kernel_wakelock_non_monotonic_value_reported"),
    (4, "kernel_wakelock_implausibly_large_value_reported"),
];

/// The payload this module imports.
pub const IMPORTERS: &[(u32, Importer)] = &[(KERNEL_WAKELOCK_DATA, import)];

/// A wakelock as its sequence described it: name and type.
#[derive(Debug, Clone)]
struct Wakelock {
    name: String,
    kind: i32,
}

/// One sequence generation's incremental state.
#[derive(Debug, Default)]
struct GenerationState {
    wakelocks: HashMap<u32, Wakelock>,
    /// Total time held (ms) and type, by wakelock name.
    totals: BTreeMap<String, (u64, i32)>,
}

/// What the importer keeps between packets and to the end of the trace.
#[derive(Debug, Default)]
pub struct KernelWakelockState {
    generations: HashMap<u32, GenerationState>,
    sparse: SparseCounters,
}

/// Reads a packed (or unpacked) list of varints.
fn varints(bytes: &[u8], id: u32) -> Vec<u64> {
    let mut out = Vec::new();
    for f in Decoder::new(bytes)
        .map_while(Result::ok)
        .filter(|f| f.id == id)
    {
        match f.packed_varints() {
            Ok(packed) => out.extend(packed),
            Err(_) => out.extend(f.as_u64().ok()),
        }
    }
    out
}

fn type_name(kind: i32) -> &'static str {
    match kind {
        1 => "kernel",
        2 => "native",
        _ => "unknown",
    }
}

fn import(p: &mut Parser, input: &Input<'_>) {
    let generation = input.packet.generation;
    let mut errors = 0u64;
    let mut described = Vec::new();
    for f in Decoder::new(input.bytes).map_while(Result::ok) {
        match f.id {
            1 => described.extend(f.as_bytes().ok()),
            4 => errors = f.as_u64().unwrap_or(0),
            _ => {}
        }
    }
    let ids = varints(input.bytes, 2);
    let times = varints(input.bytes, 3);
    let state = p
        .kernel_wakelocks
        .generations
        .entry(generation)
        .or_default();
    let mut reused = 0;
    for bytes in described {
        let (mut id, mut name, mut kind) = (0u32, "", 0i32);
        for f in Decoder::new(bytes).map_while(Result::ok) {
            match f.id {
                1 => id = f.as_u32().unwrap_or(0),
                2 => name = f.as_str().unwrap_or(""),
                3 => kind = f.as_i32().unwrap_or(0),
                _ => {}
            }
        }
        if state.wakelocks.contains_key(&id) {
            reused += 1;
            continue;
        }
        state.wakelocks.insert(
            id,
            Wakelock {
                name: name.to_owned(),
                kind,
            },
        );
    }
    let mut unknown = 0;
    for (id, held) in ids.iter().zip(&times) {
        let Some(w) = state.wakelocks.get(&(*id as u32)) else {
            unknown += 1;
            continue;
        };
        let total = state.totals.entry(w.name.clone()).or_insert((0, w.kind));
        total.0 = total.0.saturating_add(*held);
        total.1 = w.kind;
    }
    let totals: Vec<(String, u64, i32)> = state
        .totals
        .iter()
        .map(|(n, (v, k))| (n.clone(), *v, *k))
        .collect();
    p.storage.stats.add("kernel_wakelock_reused_id", reused);
    p.storage.stats.add("kernel_wakelock_unknown_id", unknown);
    for (bit, stat) in ERRORS {
        if errors & bit != 0 {
            p.storage.stats.incr(stat);
        }
    }
    for (name, held_ms, kind) in totals {
        let name_id = p.storage.strings.intern(&name);
        let type_id = p.storage.strings.intern(type_name(kind));
        let mut spec = TrackSpec::new(Some(&name), "android_kernel_wakelock", EventType::Counter);
        spec.unit = Some("ms");
        spec.dimensions = vec![
            ("wakelock_name", ArgValue::String(name_id)),
            ("wakelock_type", ArgValue::String(type_id)),
        ];
        let track = p.tracks.interned_counter(&mut p.storage, &spec);
        p.kernel_wakelocks
            .sparse
            .push(input.ts, track, 1e6 * held_ms as f64);
    }
}

/// The end of the trace: the values in time order.
pub fn finish(p: &mut Parser) {
    p.kernel_wakelocks.sparse.flush(&mut p.storage);
}
