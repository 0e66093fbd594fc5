//! `cpu_info` (TracePacket field 67): the `cpu` table (processor, capacity,
//! clusters: CPUs grouped by capacity, else by top frequency), the
//! frequencies of `cpu_available_frequencies`, the ARM identifier and
//! feature flags as args (unknown feature bits counted).
//!
//! Field numbers are those of upstream's `system_info/cpu_info.proto`, read
//! with protozero's schema-less decoder (our schemas do not carry it yet).

use protozero::Decoder;

use super::Parser;
use super::importer::{Importer, Input};
use crate::storage::args::{ArgSetBuilder, ArgValue};
use crate::storage::import_logs::LogPlace;
use crate::storage::rows::{CpuFreqRow, CpuRow};
use zerotrace_protos::upstream_tables::packet_field;

/// Upstream's known feature bits, in bit order.
const FEATURES: &[&str] = &["mte", "mte3"];
/// The ARM identifier's fields, in field-number order.
const ARM_KEYS: &[&str] = &[
    "arm_cpu_implementer",
    "arm_cpu_architecture",
    "arm_cpu_variant",
    "arm_cpu_part",
    "arm_cpu_revision",
];

#[derive(Default)]
struct Cpu {
    processor: String,
    freqs: Vec<u32>,
    capacity: Option<u32>,
    arm: Option<[u32; 5]>,
    features: u64,
}

/// The payload this module imports.
pub const IMPORTERS: &[(u32, Importer)] = &[(packet_field::CPU_INFO, import)];

/// Parses a packet's CPU info; false when it has none.
fn import(p: &mut Parser, input: &Input<'_>) {
    let info = input.bytes;
    let mut cpus: Vec<Cpu> = Vec::new();
    let mut d = Decoder::new(info);
    while let Some(Ok(f)) = d.read_field() {
        let (1, Ok(b)) = (f.id, f.as_bytes()) else {
            continue;
        };
        let mut c = Cpu::default();
        let mut cd = Decoder::new(b);
        while let Some(Ok(cf)) = cd.read_field() {
            match cf.id {
                1 => {
                    c.processor = cf
                        .as_bytes()
                        .map(|b| String::from_utf8_lossy(b).into_owned())
                        .unwrap_or_default()
                }
                2 => {
                    if let Ok(packed) = cf.packed_varints() {
                        c.freqs.extend(packed.map(|v| v as u32));
                    } else if let Ok(v) = cf.as_u32() {
                        c.freqs.push(v);
                    }
                }
                3 => c.capacity = cf.as_u32().ok(),
                4 => {
                    let mut arm = [0u32; 5];
                    if let Ok(b) = cf.as_bytes() {
                        let mut ad = Decoder::new(b);
                        while let Some(Ok(af)) = ad.read_field() {
                            if (1..=5).contains(&af.id) {
                                arm[af.id as usize - 1] = af.as_u32().unwrap_or(0);
                            }
                        }
                    }
                    c.arm = Some(arm);
                }
                5 => c.features = cf.as_u64().unwrap_or(0),
                _ => {}
            }
        }
        cpus.push(c);
    }
    if cpus.is_empty() {
        // Counted and logged (no time or place: the whole packet), as
        // upstream does.
        p.storage
            .record_import_log("cpu_info_empty", LogPlace::default(), &[]);
        return;
    }
    // Clusters: by capacity when every CPU has one, else by top frequency.
    let mut cluster = vec![0i64; cpus.len()];
    let keys: Option<Vec<u64>> = if cpus.iter().all(|c| c.capacity.is_some()) {
        Some(
            cpus.iter()
                .map(|c| u64::from(c.capacity.unwrap_or(0)))
                .collect(),
        )
    } else if cpus.iter().all(|c| !c.freqs.is_empty()) {
        Some(
            cpus.iter()
                .map(|c| u64::from(c.freqs.iter().copied().max().unwrap_or(0)))
                .collect(),
        )
    } else {
        None
    };
    if let Some(keys) = keys {
        let mut order: Vec<usize> = (0..cpus.len()).collect();
        order.sort_by_key(|&i| keys[i]);
        let mut id = 0;
        let mut prev = keys[order[0]];
        for i in order {
            if keys[i] > prev {
                prev = keys[i];
                id += 1;
            }
            cluster[i] = id;
        }
    }
    for (i, c) in cpus.iter().enumerate() {
        // The host's CPU i is ucpu i (a row its ftrace tracks may have
        // made already, as upstream's CPU tracker keeps one row per CPU);
        // another machine's CPUs follow the rows there are.
        let ucpu = if p.machine == 0 {
            crate::tracker::profiler_samples::ucpu(&mut p.storage, i as u32)
        } else {
            u32::try_from(p.storage.cpus.len()).unwrap_or(u32::MAX)
        };
        let mut args = ArgSetBuilder::default();
        if let Some(arm) = c.arm {
            for (k, v) in ARM_KEYS.iter().zip(arm) {
                let k = p.storage.strings.intern(k);
                args.add(k, k, ArgValue::Uint(u64::from(v)));
            }
        }
        for (bit, name) in FEATURES.iter().enumerate() {
            if c.features & (1 << bit) != 0 {
                let k = p.storage.strings.intern(&format!("cpu_features.{name}"));
                args.add(k, k, ArgValue::Bool(true));
            }
        }
        if c.features != 0 {
            let k = p.storage.strings.intern("cpu_features.raw_bitmap");
            args.add(k, k, ArgValue::Uint(c.features));
        }
        if c.features >> FEATURES.len() != 0 {
            p.storage
                .record_import_log("cpu_info_unknown_cpu_features", LogPlace::default(), &[]);
        }
        let row = CpuRow {
            cpu: Some(i as i64),
            cluster_id: cluster[i],
            processor: p.storage.strings.intern(&c.processor),
            capacity: c.capacity.map(i64::from),
            arg_set_id: p.storage.args.add_set(&args),
            machine: p.machine,
        };
        match p.storage.cpus.get_mut(ucpu as usize) {
            Some(slot) => *slot = row,
            None => p.storage.cpus.push(row),
        }
        for &f in &c.freqs {
            p.storage.cpu_freqs.push(CpuFreqRow {
                ucpu,
                freq: i64::from(f),
            });
        }
    }
}
