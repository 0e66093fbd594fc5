//! `cpu_frequency` and `cpu_idle` ftrace events as counters on per-CPU
//! tracks named as upstream names them: `cpufreq` (classification
//! `cpu_frequency`) and `cpuidle` (`cpu_idle`), the CPU as the track's
//! dimension.

use zerotrace_protos::protos::{
    CpuFrequencyFtraceEventDecoder, CpuIdleFtraceEventDecoder, FtraceEvent,
};

use super::Parser;
use super::importer::{FtraceHandler, FtraceInput};
use crate::storage::args::ArgValue;
use crate::storage::rows::CounterRow;
use crate::tables::opt_u32::OptU32;
use crate::tracker::tracks::{EventType, TrackSpec};

/// The two events (gathered by `ftrace_registry.rs`).
pub const FTRACE_HANDLERS: &[(u32, FtraceHandler)] = &[
    (FtraceEvent::FIELD_CPU_FREQUENCY, cpu_frequency),
    (FtraceEvent::FIELD_CPU_IDLE, cpu_idle),
];

fn cpu_frequency(p: &mut Parser, e: &FtraceInput<'_>) {
    let f = CpuFrequencyFtraceEventDecoder::new(e.body);
    counter(p, e.ts, "cpufreq", "cpu_frequency", f.cpu_id(), f.state());
}

fn cpu_idle(p: &mut Parser, e: &FtraceInput<'_>) {
    let i = CpuIdleFtraceEventDecoder::new(e.body);
    counter(p, e.ts, "cpuidle", "cpu_idle", i.cpu_id(), i.state());
}

fn counter(
    p: &mut Parser,
    ts: i64,
    name: &str,
    classification: &str,
    cpu: Option<u32>,
    value: Option<u32>,
) {
    let mut spec = TrackSpec::new(Some(name), classification, EventType::Counter);
    spec.dimensions = vec![("cpu", ArgValue::Int(i64::from(cpu.unwrap_or(0))))];
    let track = p.tracks.interned_counter(&mut p.storage, &spec);
    p.storage.counters.push(CounterRow {
        ts,
        track_id: track,
        value: f64::from(value.unwrap_or(0)),
        arg_set_id: OptU32::NONE,
    });
}
