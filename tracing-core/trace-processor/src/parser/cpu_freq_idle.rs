//! `cpu_frequency` and `cpu_idle` ftrace events as counters on per-CPU
//! tracks named as upstream names them: `cpufreq` (classification
//! `cpu_frequency`) and `cpuidle` (`cpu_idle`), the CPU as the track's
//! dimension.

use zerotrace_protos::protos::FtraceEventDecoder;

use super::Parser;
use crate::storage::args::ArgValue;
use crate::storage::rows::CounterRow;
use crate::tracker::tracks::{EventType, TrackSpec};

/// Handles the event if it is one of the two; whether it was.
pub fn parse(p: &mut Parser, ts: i64, ev: &FtraceEventDecoder<'_>) -> bool {
    let (name, classification, cpu, value) = if let Some(f) = ev.cpu_frequency() {
        ("cpufreq", "cpu_frequency", f.cpu_id(), f.state())
    } else if let Some(i) = ev.cpu_idle() {
        ("cpuidle", "cpu_idle", i.cpu_id(), i.state())
    } else {
        return false;
    };
    let mut spec = TrackSpec::new(Some(name), classification, EventType::Counter);
    spec.dimensions = vec![("cpu", ArgValue::Int(i64::from(cpu.unwrap_or(0))))];
    let track = p.tracks.interned_counter(&mut p.storage, &spec);
    p.storage.counters.push(CounterRow {
        ts,
        track_id: track,
        value: f64::from(value.unwrap_or(0)),
        arg_set_id: None,
    });
    true
}
