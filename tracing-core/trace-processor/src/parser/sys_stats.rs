//! `sys_stats` (TracePacket field 7), the parts read so far: thermal zones
//! (a counter track per zone type, °C), CPU idle state residency (a track
//! per CPU and state, µs, with `cpu` and `state` dimensions) and the GPU
//! frequency (`gpufreq`, MHz).

use protozero::Decoder;
use zerotrace_protos::protos::SysStatsDecoder;

use super::Parser;
use crate::storage::args::ArgValue;
use crate::storage::rows::CounterRow;
use crate::tracker::tracks::{EventType, TrackSpec};

/// TracePacket.sys_stats.
const SYS_STATS: u32 = 7;

fn push(p: &mut Parser, track: u32, ts: i64, value: f64) {
    p.storage.counters.push(CounterRow {
        ts,
        track_id: track,
        value,
        arg_set_id: None,
    });
}

/// Parses a packet's sys stats; false when it has none.
pub fn parse(p: &mut Parser, packet: &[u8], ts: i64) -> bool {
    let Some(f) = Decoder::new(packet).find_last(SYS_STATS) else {
        return false;
    };
    let Ok(bytes) = f.as_bytes() else {
        return true;
    };
    let s = SysStatsDecoder::new(bytes);
    for z in s.thermal_zone() {
        let ty = z.r#type().unwrap_or("").to_owned();
        let mut spec = TrackSpec::new(Some(&ty), "thermal_temperature_sys", EventType::Counter);
        spec.unit = Some("C");
        let zone = p.storage.strings.intern(&ty);
        spec.dimensions = vec![("thermal_zone", ArgValue::String(zone))];
        let track = p.tracks.interned_counter(&mut p.storage, &spec);
        push(p, track, ts, z.temp().unwrap_or(0) as f64);
    }
    for c in s.cpuidle_state() {
        let cpu = c.cpu_id().unwrap_or(0);
        for e in c.cpuidle_state_entry() {
            let state = e.state().unwrap_or("").to_owned();
            let name = format!("cpuidle{cpu}.{state}");
            let state_id = p.storage.strings.intern(&state);
            let mut spec = TrackSpec::new(Some(&name), "cpu_idle_state", EventType::Counter);
            spec.unit = Some("us");
            spec.dimensions = vec![
                ("cpu", ArgValue::Int(i64::from(cpu))),
                ("state", ArgValue::String(state_id)),
            ];
            let track = p.tracks.interned_counter(&mut p.storage, &spec);
            push(p, track, ts, e.duration_us().unwrap_or(0) as f64);
        }
    }
    for mhz in s.gpufreq_mhz() {
        let mut spec = TrackSpec::new(Some("gpufreq"), "gpu_frequency", EventType::Counter);
        spec.unit = Some("MHz");
        spec.dimensions = vec![("ugpu", ArgValue::Int(0)), ("gpu", ArgValue::Int(0))];
        let track = p.tracks.interned_counter(&mut p.storage, &spec);
        push(p, track, ts, mhz as f64);
    }
    true
}
