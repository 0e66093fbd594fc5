//! A GPU's memory and frequency as counters, as upstream tracks them: the
//! `gpu_mem_total` ftrace event and `GpuMemTotalEvent` packet (field 71)
//! on `GPU Memory` tracks in bytes (global for pid 0, else per process),
//! and the `gpu_frequency` and `kgsl_gpu_frequency` ftrace events and the
//! `GenericGpuFrequencyEvent` packet (field 129) on the GPU's `gpufreq`
//! track. Every track carries the GPU as its `gpu` dimension and the
//! GPU's index in the trace as its `ugpu` dimension (what
//! `gpu_counter_track` reads).

use super::Parser;
use super::fields::Fields;
use super::importer::{FtraceHandler, FtraceInput, Importer, Input};
use crate::hash::HashMap;
use crate::storage::Storage;
use crate::storage::args::ArgValue;
use crate::storage::rows::CounterRow;
use crate::tables::gpu::GpuRow;
use crate::tables::opt_u32::OptU32;
use crate::tracker::tracks::{EventType, TrackSpec};

/// TracePacket.gpu_mem_total_event.
const GPU_MEM_TOTAL_EVENT: u32 = 71;
/// TracePacket.generic_gpu_frequency_event.
const GENERIC_GPU_FREQUENCY_EVENT: u32 = 129;
/// FtraceEvent.gpu_frequency.
const FTRACE_GPU_FREQUENCY: u32 = 332;
/// FtraceEvent.gpu_mem_total.
const FTRACE_GPU_MEM_TOTAL: u32 = 340;
/// FtraceEvent.kgsl_gpu_frequency.
const FTRACE_KGSL_GPU_FREQUENCY: u32 = 509;

/// The packets this module imports.
pub const IMPORTERS: &[(u32, Importer)] = &[
    (GPU_MEM_TOTAL_EVENT, gpu_mem_total_packet),
    (GENERIC_GPU_FREQUENCY_EVENT, generic_gpu_frequency),
];

/// The ftrace events this module handles (gathered by `ftrace_registry.rs`).
pub const FTRACE_HANDLERS: &[(u32, FtraceHandler)] = &[
    (FTRACE_GPU_FREQUENCY, gpu_frequency),
    (FTRACE_GPU_MEM_TOTAL, gpu_mem_total_ftrace),
    (FTRACE_KGSL_GPU_FREQUENCY, kgsl_gpu_frequency),
];

/// The GPUs seen, each numbered (`ugpu`) in the order it was first seen,
/// per machine: the number is its row of `__intrinsic_gpu`, made on first
/// sight.
#[derive(Debug, Default)]
pub struct Gpus {
    ids: HashMap<(u32, u32), u32>,
}

impl Gpus {
    /// The index of GPU `gpu` of `machine`, its `gpu` row added on first
    /// sight.
    pub fn ugpu(&mut self, storage: &mut Storage, machine: u32, gpu: u32) -> u32 {
        if let Some(&id) = self.ids.get(&(machine, gpu)) {
            return id;
        }
        let id = u32::try_from(storage.gpu.gpus.len()).unwrap_or(u32::MAX);
        storage.gpu.gpus.push(GpuRow {
            gpu: Some(gpu),
            // Upstream's host machine is row 0 of `machine`, and its
            // `gpu` rows say so.
            machine_id: Some(machine),
            ..GpuRow::default()
        });
        self.ids.insert((machine, gpu), id);
        id
    }
}

/// A counter value on the one track of `spec` with the GPU's dimensions
/// (`upid`: a process's track).
fn push(
    p: &mut Parser,
    ts: i64,
    value: f64,
    gpu: u32,
    (name, classification, unit): (&str, &str, &str),
    upid: Option<u32>,
) {
    let ugpu = p.gpus.ugpu(&mut p.storage, p.machine, gpu);
    let mut spec = TrackSpec::new(Some(name), classification, EventType::Counter);
    spec.unit = Some(unit);
    spec.upid = upid;
    spec.dimensions = vec![
        ("ugpu", ArgValue::Int(i64::from(ugpu))),
        ("gpu", ArgValue::Int(i64::from(gpu))),
    ];
    let track = p.tracks.interned_counter(&mut p.storage, &spec);
    p.storage.counters.push(CounterRow {
        ts,
        track_id: track,
        value,
        arg_set_id: OptU32::NONE,
    });
}

const GPU_MEMORY: (&str, &str, &str) = ("GPU Memory", "gpu_memory", "bytes");
const PROCESS_GPU_MEMORY: (&str, &str, &str) = ("GPU Memory", "process_gpu_memory", "bytes");
const GPU_FREQUENCY: (&str, &str, &str) = ("gpufreq", "gpu_frequency", "kHz");

/// Field numbers of `GpuMemTotalEvent` and `GpuMemTotalFtraceEvent`.
const MEM_GPU_ID: u32 = 1;
const MEM_PID: u32 = 2;
const MEM_SIZE: u32 = 3;

/// The packet: a process's total (its pid names the process, which the
/// emitting process need not be), or the global one for pid 0.
fn gpu_mem_total_packet(p: &mut Parser, input: &Input<'_>) {
    let e = Fields::new(input.bytes);
    let gpu = e.uint(MEM_GPU_ID).unwrap_or(0) as u32;
    let pid = e.uint(MEM_PID).unwrap_or(0) as u32;
    let size = e.uint(MEM_SIZE).unwrap_or(0) as f64;
    if pid == 0 {
        push(p, input.ts, size, gpu, GPU_MEMORY, None);
        return;
    }
    let pid = i64::from(pid);
    let utid = p.processes.update_thread(&mut p.storage, pid, pid);
    let upid = p
        .storage
        .threads
        .get(utid as usize)
        .and_then(|t| t.upid)
        .unwrap_or(0);
    push(p, input.ts, size, gpu, PROCESS_GPU_MEMORY, Some(upid));
}

/// The ftrace event: as the packet, but an event naming a thread the
/// trace does not know is dropped, as upstream drops it (kernel workers
/// report totals of processes that already died; a process made up for
/// them would be false).
fn gpu_mem_total_ftrace(p: &mut Parser, ev: &FtraceInput<'_>) {
    let e = Fields::new(ev.body);
    let gpu = e.uint(MEM_GPU_ID).unwrap_or(0) as u32;
    let pid = e.uint(MEM_PID).unwrap_or(0) as u32;
    let size = e.uint(MEM_SIZE).unwrap_or(0) as f64;
    if pid == 0 {
        push(p, ev.ts, size, gpu, GPU_MEMORY, None);
        return;
    }
    let pid = i64::from(pid);
    if p.processes.thread_or_null(&p.storage, pid).is_none() {
        return;
    }
    let utid = p.processes.update_thread(&mut p.storage, pid, pid);
    let Some(upid) = p.storage.threads.get(utid as usize).and_then(|t| t.upid) else {
        return;
    };
    push(p, ev.ts, size, gpu, PROCESS_GPU_MEMORY, Some(upid));
}

/// `gpu_frequency`: gpu_id (1), state (2, kHz).
fn gpu_frequency(p: &mut Parser, ev: &FtraceInput<'_>) {
    let e = Fields::new(ev.body);
    let gpu = e.uint(1).unwrap_or(0) as u32;
    let khz = e.uint(2).unwrap_or(0) as u32;
    push(p, ev.ts, f64::from(khz), gpu, GPU_FREQUENCY, None);
}

/// `kgsl_gpu_frequency`: gpu_freq (1, the frequency in kHz / 1000), gpu_id (2).
fn kgsl_gpu_frequency(p: &mut Parser, ev: &FtraceInput<'_>) {
    let e = Fields::new(ev.body);
    let freq = e.uint(1).unwrap_or(0) as u32;
    let gpu = e.uint(2).unwrap_or(0) as u32;
    push(p, ev.ts, f64::from(freq) * 1000.0, gpu, GPU_FREQUENCY, None);
}

/// `GenericGpuFrequencyEvent`: gpu_id (1), frequency_khz (2).
fn generic_gpu_frequency(p: &mut Parser, input: &Input<'_>) {
    let e = Fields::new(input.bytes);
    let gpu = e.uint(1).unwrap_or(0) as u32;
    let khz = e.uint(2).unwrap_or(0) as u32;
    push(p, input.ts, f64::from(khz), gpu, GPU_FREQUENCY, None);
}
