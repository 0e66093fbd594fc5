//! `sys_stats` (TracePacket field 7) into counter tracks named, typed and
//! dimensioned as upstream names them: meminfo (bytes), vmstat, per-CPU
//! times, frequencies (cpufreq, devfreq, gpufreq), interrupt and fork
//! counts, buddy allocator fragmentation, disk I/O (amounts and throughput
//! between two readings), pressure stall, thermal zones and CPU idle state
//! residency. Unknown keys are counted as upstream counts them.

use crate::hash::HashMap;
use crate::tables::opt_u32::OptU32;

use zerotrace_protos::protos::SysStatsDecoder;
use zerotrace_protos::protos::sys_stats::DiskStatDecoder;
use zerotrace_protos::{meminfo_keys, upstream_tables::VMSTAT_KEYS};

use super::Parser;
use super::importer::{Importer, Input};
use crate::storage::args::ArgValue;
use crate::storage::rows::CounterRow;
use crate::tracker::tracks::{EventType, TrackSpec};
use zerotrace_protos::upstream_tables::packet_field;

/// Sectors of /proc/diskstats (512 B) per MiB.
const SECTORS_PER_MB: f64 = 2048.0;

/// The page size buddy info is counted in (upstream's default).
const PAGE_SIZE: u64 = 4096;

/// What sys stats keep between packets.
#[derive(Debug, Default)]
pub struct SysStatsState {
    /// The last reading of each disk.
    disks: HashMap<String, [u64; 8]>,
    /// vmstat names by counter number.
    vmstat_names: Vec<Option<&'static str>>,
}

impl SysStatsState {
    fn vmstat_name(&mut self, key: i32) -> Option<&'static str> {
        if self.vmstat_names.is_empty() {
            let max = VMSTAT_KEYS.iter().map(|(_, k)| *k).max().unwrap_or(0);
            self.vmstat_names = vec![None; usize::try_from(max).unwrap_or(0) + 1];
            for (name, k) in VMSTAT_KEYS {
                if let Some(slot) = usize::try_from(*k)
                    .ok()
                    .and_then(|i| self.vmstat_names.get_mut(i))
                {
                    *slot = Some(name);
                }
            }
        }
        usize::try_from(key)
            .ok()
            .and_then(|i| self.vmstat_names.get(i).copied().flatten())
    }
}

fn push(p: &mut Parser, track: u32, ts: i64, value: f64) {
    p.storage.counters.push(CounterRow {
        ts,
        track_id: track,
        value,
        arg_set_id: OptU32::NONE,
    });
}

/// The payload this module imports.
pub const IMPORTERS: &[(u32, Importer)] = &[(packet_field::SYS_STATS, import)];

/// Parses a packet's sys stats; false when it has none.
fn import(p: &mut Parser, input: &Input<'_>) {
    let bytes = input.bytes;
    let ts = input.ts;
    let s = SysStatsDecoder::new(bytes);
    for m in s.meminfo() {
        let key = m.key_raw().unwrap_or(0);
        let Some(name) = meminfo_keys::meminfo_key(key) else {
            p.storage.stats.incr("meminfo_unknown_keys");
            continue;
        };
        let key_id = p.storage.strings.intern(name);
        let mut spec = TrackSpec::new(Some(name), "meminfo", EventType::Counter);
        spec.unit = Some("bytes");
        spec.dimensions = vec![("meminfo_key", ArgValue::String(key_id))];
        let track = p.tracks.interned_counter(&mut p.storage, &spec);
        push(p, track, ts, m.value().unwrap_or(0) as f64 * 1024.0);
    }
    for d in s.devfreq() {
        let key = d.key().unwrap_or("");
        let name = format!("{key} Frequency");
        let key_id = p.storage.strings.intern(key);
        let mut spec = TrackSpec::new(Some(&name), "clock_frequency", EventType::Counter);
        spec.dimensions = vec![("linux_device", ArgValue::String(key_id))];
        let track = p.tracks.interned_counter(&mut p.storage, &spec);
        push(p, track, ts, d.value().unwrap_or(0) as f64);
    }
    for (cpu, khz) in s.cpufreq_khz().enumerate() {
        let mut spec = TrackSpec::new(Some("cpufreq"), "cpu_frequency", EventType::Counter);
        spec.dimensions = vec![("cpu", ArgValue::Int(cpu as i64))];
        let track = p.tracks.interned_counter(&mut p.storage, &spec);
        push(p, track, ts, f64::from(khz));
    }
    for v in s.vmstat() {
        let Some(name) = p.sys_stats.vmstat_name(v.key_raw().unwrap_or(0)) else {
            p.storage.stats.incr("vmstat_unknown_keys");
            continue;
        };
        let key_id = p.storage.strings.intern(name);
        let mut spec = TrackSpec::new(Some(name), "vmstat", EventType::Counter);
        spec.dimensions = vec![("vmstat_key", ArgValue::String(key_id))];
        let track = p.tracks.interned_counter(&mut p.storage, &spec);
        push(p, track, ts, v.value().unwrap_or(0) as f64);
    }
    for c in s.cpu_stat() {
        let Some(cpu) = c.cpu_id() else {
            p.storage.stats.incr("invalid_cpu_times");
            continue;
        };
        for (key, value) in [
            ("user_ns", c.user_ns()),
            ("user_nice_ns", c.user_nice_ns()),
            ("system_mode_ns", c.system_mode_ns()),
            ("idle_ns", c.idle_ns()),
            ("io_wait_ns", c.io_wait_ns()),
            ("irq_ns", c.irq_ns()),
            ("softirq_ns", c.softirq_ns()),
            ("steal_ns", c.steal_ns()),
        ] {
            let name = format!("cpu.times.{key}");
            let key_id = p.storage.strings.intern(key);
            let mut spec = TrackSpec::new(Some(&name), "cpustat", EventType::Counter);
            spec.dimensions = vec![
                ("cpu", ArgValue::Int(i64::from(cpu))),
                ("cpustat_key", ArgValue::String(key_id)),
            ];
            let track = p.tracks.interned_counter(&mut p.storage, &spec);
            push(p, track, ts, value.unwrap_or(0) as f64);
        }
    }
    for (classification, list) in [("num_irq", s.num_irq()), ("num_softirq", s.num_softirq())] {
        for i in list {
            let irq = i.irq().unwrap_or(0);
            let name = format!("{classification} (id: {})", irq as u32);
            let mut spec = TrackSpec::new(Some(&name), classification, EventType::Counter);
            spec.dimensions = vec![("irq", ArgValue::Int(i64::from(irq as u32)))];
            let track = p.tracks.interned_counter(&mut p.storage, &spec);
            push(p, track, ts, i.count().unwrap_or(0) as f64);
        }
    }
    for (name, value) in [
        ("num_forks", s.num_forks()),
        ("num_irq_total", s.num_irq_total()),
        ("num_softirq_total", s.num_softirq_total()),
    ] {
        if let Some(v) = value {
            let spec = TrackSpec::new(Some(name), name, EventType::Counter);
            let track = p.tracks.interned_counter(&mut p.storage, &spec);
            push(p, track, ts, v as f64);
        }
    }
    for b in s.buddy_info() {
        let node = b.node().unwrap_or("");
        let zone = b.zone().unwrap_or("");
        let node_id = p.storage.strings.intern(node);
        let zone_id = p.storage.strings.intern(zone);
        for (order, pages) in b.order_pages().enumerate() {
            let Some(chunk_kb) = 1u64
                .checked_shl(order as u32)
                .and_then(|n| n.checked_mul(PAGE_SIZE))
                .map(|b| b / 1024)
            else {
                break;
            };
            let name = format!("mem.buddyinfo[{node}][{zone}][{chunk_kb} kB]");
            let mut spec = TrackSpec::new(Some(&name), "buddyinfo", EventType::Counter);
            spec.dimensions = vec![
                ("buddyinfo_node", ArgValue::String(node_id)),
                ("buddyinfo_zone", ArgValue::String(zone_id)),
                ("buddyinfo_chunk_size_kb", ArgValue::Int(chunk_kb as i64)),
            ];
            let track = p.tracks.interned_counter(&mut p.storage, &spec);
            push(p, track, ts, f64::from(pages));
        }
    }
    for d in s.disk_stat() {
        disk_stat(p, ts, &d);
    }
    for psi in s.psi() {
        let key = match psi.resource_raw().unwrap_or(0) {
            0 => "resource.unspecified",
            1 => "cpu.some",
            2 => "cpu.full",
            3 => "io.some",
            4 => "io.full",
            5 => "mem.some",
            6 => "mem.full",
            _ => {
                p.storage.stats.incr("psi_unknown_resource");
                continue;
            }
        };
        let name = format!("psi.{key}");
        let key_id = p.storage.strings.intern(key);
        let mut spec = TrackSpec::new(Some(&name), "psi", EventType::Counter);
        spec.dimensions = vec![("psi_resource", ArgValue::String(key_id))];
        let track = p.tracks.interned_counter(&mut p.storage, &spec);
        push(p, track, ts, psi.total_ns().unwrap_or(0) as f64);
    }
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
}

/// One disk's reading: amounts, throughputs and flushes since the last
/// reading of the same disk (the first reading only sets the base).
fn disk_stat(p: &mut Parser, ts: i64, d: &DiskStatDecoder<'_>) {
    let device = d.device_name().unwrap_or("").to_owned();
    let cur = [
        d.read_sectors().unwrap_or(0),
        d.write_sectors().unwrap_or(0),
        d.discard_sectors().unwrap_or(0),
        d.flush_count().unwrap_or(0),
        d.read_time_ms().unwrap_or(0),
        d.write_time_ms().unwrap_or(0),
        d.discard_time_ms().unwrap_or(0),
        d.flush_time_ms().unwrap_or(0),
    ];
    let Some(prev) = p.sys_stats.disks.insert(device.clone(), cur) else {
        return;
    };
    let diff = |i: usize| cur[i] as f64 - prev[i] as f64;
    let throughput = |amount: f64, ms: f64| {
        if ms == 0.0 { 0.0 } else { amount * 1000.0 / ms }
    };
    let read = diff(0) / SECTORS_PER_MB;
    let write = diff(1) / SECTORS_PER_MB;
    let discard = diff(2) / SECTORS_PER_MB;
    let values = [
        ("read_amount", "MB", read),
        ("read_throughput", "MB/s", throughput(read, diff(4))),
        ("write_amount", "MB", write),
        ("write_throughput", "MB/s", throughput(write, diff(5))),
        ("discard_amount", "MB", discard),
        ("discard_throughput", "MB/s", throughput(discard, diff(6))),
        ("flush_amount", "count", diff(3)),
        ("flush_time", "ms", diff(7)),
    ];
    let device_id = p.storage.strings.intern(&device);
    for (counter, unit, value) in values {
        let name = format!("diskstat.[{device}].{counter}");
        let counter_id = p.storage.strings.intern(counter);
        let mut spec = TrackSpec::new(Some(&name), "diskstat", EventType::Counter);
        spec.unit = Some(unit);
        spec.dimensions = vec![
            ("device_name", ArgValue::String(device_id)),
            ("counter_name", ArgValue::String(counter_id)),
        ];
        let track = p.tracks.interned_counter(&mut p.storage, &spec);
        push(p, track, ts, value);
    }
}
