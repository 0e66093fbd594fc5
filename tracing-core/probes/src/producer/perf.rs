//! `linux.perf`: the CPU profiler as a data source of the probes. An
//! instance opens its timebase event on every CPU asked for, reads the
//! ring buffers every `ring_buffer_read_period_ms`, turns each sample
//! into a `perf_sample` with its interned callstack (kernel frames named
//! from `/proc/kallsyms` and written without their address, user frames
//! from the [`UserStacks`] unwinder, which runs on a thread of its own
//! from the start (`perf_unwinder`: the probes' thread never waits on
//! unwinding)) and reports every loss: kernel records lost, samples
//! skipped (out of scope, the unwind queue full, not unwound by the stop),
//! malformed records, and the guardrail stop when the instance's own
//! footprint (`perf::footprint`, not the process's memory) passes
//! `max_daemon_memory_kb`.

use std::path::PathBuf;
use std::sync::{Arc, Mutex, Weak};

use zerotrace_profiling::guardrail::MemoryGuardrail;

use super::ds_config;
pub use super::perf_scope::{Cmdline, ProcessSharding, cmdline_matches};
use super::perf_scope::{ScopeState, read_cmdline};
use super::perf_unwinder::UnwindWorker;
use super::probe::{DataSource, PacketSink, Probe, ProbeContext, ProbeError, ProbeStats};
use crate::ftrace::ksyms::KernelSymbols;
use crate::perf::abi::context;
use crate::perf::buffer::PerfBuffer;
use crate::perf::config::{Callstacks, PerfOptions, UserFrames};
use crate::perf::cpus::{parse_cpu_list, select_cpus};
use crate::perf::drain::{Buffers, Chunk, Drain};
use crate::perf::event::{CpuEvent, PerfOpenError, layout};
use crate::perf::footprint::Footprint;
use crate::perf::intern::{FrameDesc, Interner};
use crate::perf::kernel_frames::kernel_frame;
use crate::perf::packets::{self, Defaults, SampleHeader};
use crate::perf::records::{Record, Sample, SampleLayout, parse_record};
use crate::perf::ring::records;
use crate::perf::unwind_queue::{self, Handover, NotUnwound, Task, UnwindJob, Unwound};
use zerotrace_protos::protos::perf_events::PerfClock;
use zerotrace_protos::protos::perf_sample::SampleSkipReason;
use zerotrace_protos::upstream_tables::data_source_field;

/// The data source's name.
pub const NAME: &str = "linux.perf";

pub use super::perf_user_stacks::{ChainOnly, DwarfStacks, UserInput, UserStacks};

/// Makes the unwinder of each instance.
pub type UnwinderFactory = fn() -> Box<dyn UserStacks>;

/// The process shard each live tracing session chose, shared by its
/// instances (upstream keeps one random choice per session): the session,
/// its sharding, and a token its instances hold (the entry is dropped when
/// none is left).
type SessionShards = Arc<Mutex<Vec<(Option<u64>, ProcessSharding, Weak<()>)>>>;

/// The `linux.perf` data source.
#[derive(Clone)]
pub struct PerfSource {
    tracefs: Option<PathBuf>,
    unwinder: UnwinderFactory,
    shards: SessionShards,
}

impl std::fmt::Debug for PerfSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PerfSource")
            .field("tracefs", &self.tracefs)
            .finish_non_exhaustive()
    }
}

impl PerfSource {
    /// The running system's (tracefs for tracepoint timebases is found
    /// when an instance asks for one).
    pub fn system() -> Self {
        PerfSource {
            tracefs: None,
            unwinder: || Box::new(DwarfStacks::default()),
            shards: SessionShards::default(),
        }
    }

    /// With another user-stack unwinder.
    pub fn with_unwinder(mut self, unwinder: UnwinderFactory) -> Self {
        self.unwinder = unwinder;
        self
    }

    /// The sharding of tracing session `session` for `count` shards: the
    /// choice an instance of the session already made (its count wins over
    /// a different one, as upstream's, said in the log), else a random
    /// shard; and the token that keeps the choice while the instance lives.
    fn session_shard(
        &self,
        session: Option<u64>,
        count: u32,
        ctx: &ProbeContext,
    ) -> (ProcessSharding, Arc<()>) {
        let token = Arc::new(());
        let mut shards = self
            .shards
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        shards.retain(|(_, _, live)| live.strong_count() > 0);
        let found = session.and_then(|id| {
            shards
                .iter()
                .find(|(s, _, _)| *s == Some(id))
                .map(|&(_, sharding, _)| sharding)
        });
        let sharding = match found {
            Some(sharding) => {
                if sharding.count != count {
                    (ctx.log)(&format!(
                        "{NAME}: process_shard_count {count} differs from the session's {}; \
                         the session's is used",
                        sharding.count
                    ));
                }
                sharding
            }
            None => ProcessSharding {
                count,
                chosen: random_below(count),
            },
        };
        shards.push((session, sharding, Arc::downgrade(&token)));
        (sharding, token)
    }
}

/// A random number below `n` (> 0), from the standard library's per-map
/// random keys (no dependency for one draw per session).
fn random_below(n: u32) -> u32 {
    use std::hash::{BuildHasher, Hasher};
    let r = std::collections::hash_map::RandomState::new()
        .build_hasher()
        .finish();
    (r % u64::from(n.max(1))) as u32
}

impl DataSource for PerfSource {
    fn name(&self) -> &'static str {
        NAME
    }

    fn create(&self, config: &[u8], ctx: &ProbeContext) -> Result<Box<dyn Probe>, ProbeError> {
        let nested = ds_config::nested(config, data_source_field::PERF_EVENT_CONFIG)?;
        let options = PerfOptions::from_config(nested)
            .map_err(|e| ProbeError::Unavailable(format!("{NAME}: {e}")))?;
        for line in options.refusal_lines() {
            (ctx.log)(&format!("{NAME}: {line}"));
        }
        let cpus = sampled_cpus(&options.target_cpus, ctx)?;
        let tracefs = match &self.tracefs {
            Some(p) => p.clone(),
            None => crate::ftrace::tracefs::find_or_mount()
                .unwrap_or_else(|_| PathBuf::from("/sys/kernel/tracing")),
        };
        let mut options = options;
        crate::perf::event::resolve_pmus(&mut options)
            .map_err(|e| ProbeError::Unavailable(format!("{NAME}: {e}")))?;
        let events = match open_events(&options, &cpus, &tracefs, ctx) {
            // The kernel stamps this event's samples with BOOTTIME only
            // where it cannot be sampled in NMI context (software events
            // can, tracepoints and hardware counters often cannot): unless
            // the config named the clock, take MONOTONIC_RAW (upstream's
            // default) and say so in the defaults' clock.
            Err(e)
                if e.is_invalid_argument()
                    && !options.clock_explicit
                    && options.clock == PerfClock::Boottime =>
            {
                (ctx.log)(&format!(
                    "{NAME}: the kernel refuses BOOTTIME for this event ({e}); samples are stamped with MONOTONIC_RAW"
                ));
                options.clock = PerfClock::MonotonicRaw;
                open_events(&options, &cpus, &tracefs, ctx)
            }
            other => other,
        }
        .map_err(|e| ProbeError::Unavailable(format!("{NAME}: {e}")))?;
        let kernel_symbols = options
            .callstacks
            .as_ref()
            .filter(|c| c.kernel_frames)
            .and_then(|_| read_kernel_symbols(ctx));
        let session = ds_config::tracing_session_id(config);
        let (sharding, session_token) = match options
            .callstacks
            .as_ref()
            .map(|c| c.scope.process_shard_count)
            .filter(|&n| n > 0)
        {
            Some(n) => {
                let (s, t) = self.session_shard(session, n, ctx);
                (Some(s), Some(t))
            }
            None => (None, None),
        };
        let events: Buffers = events
            .into_iter()
            .map(|e| Box::new(e) as Box<dyn PerfBuffer>)
            .collect();
        let mut probe = PerfProbe::new(options, events, ctx.clone(), (self.unwinder)(), sharding);
        probe.kernel_symbols = kernel_symbols;
        probe.session_token = session_token;
        Ok(Box::new(probe))
    }
}

/// The kernel's symbols that name kernel frames; said in the log when
/// there are none (then every kernel frame is the unnamed one: kernel
/// addresses are never written in their place).
fn read_kernel_symbols(ctx: &ProbeContext) -> Option<KernelSymbols> {
    match KernelSymbols::read(&ctx.root.path("proc/kallsyms")) {
        Ok(k) if k.is_empty() => {
            (ctx.log)(&format!(
                "{NAME}: /proc/kallsyms shows no addresses ({} hidden, kptr_restrict?): \
                 kernel frames are written unnamed",
                k.hidden()
            ));
            None
        }
        Ok(k) => Some(k),
        Err(e) => {
            (ctx.log)(&format!(
                "{NAME}: /proc/kallsyms: {e}: kernel frames are written unnamed"
            ));
            None
        }
    }
}

/// Opens the events on every CPU of `cpus`; with `ignore_open_failure` a
/// CPU whose event does not open is left out (and said), unless none opens.
fn open_events(
    options: &PerfOptions,
    cpus: &[u32],
    tracefs: &std::path::Path,
    ctx: &ProbeContext,
) -> Result<Vec<CpuEvent>, PerfOpenError> {
    let mut events = Vec::with_capacity(cpus.len());
    let mut first_error = None;
    for &cpu in cpus {
        match CpuEvent::open(options, cpu, tracefs) {
            Ok(ev) => events.push(ev),
            Err(e) if options.ignore_open_failure => {
                (ctx.log)(&format!("{NAME}: cpu {cpu} left out: {e}"));
                first_error.get_or_insert(e);
            }
            Err(e) => return Err(e),
        }
    }
    match first_error {
        Some(e) if events.is_empty() => Err(e),
        _ => Ok(events),
    }
}

/// The CPUs to sample: those online, narrowed to `target_cpu` (a target
/// CPU that does not exist or is offline dropped and said in the log);
/// none left refuses the instance with the reason.
fn sampled_cpus(targets: &[u32], ctx: &ProbeContext) -> Result<Vec<u32>, ProbeError> {
    let selection = select_cpus(targets, &online_cpus(ctx))
        .map_err(|e| ProbeError::Unavailable(format!("{NAME}: {e}")))?;
    if !selection.dropped.is_empty() {
        (ctx.log)(&format!(
            "{NAME}: target_cpu {:?} left out: no such CPU, or offline",
            selection.dropped
        ));
    }
    Ok(selection.cpus)
}

/// The CPUs the kernel says are online, from `/sys/devices/system/cpu/online`
/// (`0-3,5`), or the CPUs the process can count when that is unreadable.
fn online_cpus(ctx: &ProbeContext) -> Vec<u32> {
    let text =
        std::fs::read_to_string(ctx.root.path("sys/devices/system/cpu/online")).unwrap_or_default();
    let cpus = parse_cpu_list(&text);
    if cpus.is_empty() {
        let n = std::thread::available_parallelism().map_or(1, std::num::NonZero::get);
        return (0..u32::try_from(n).unwrap_or(1)).collect();
    }
    cpus
}

/// What an instance counted.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PerfStats {
    /// Samples written with their callstacks or counts.
    pub samples: u64,
    /// Records the kernel lost (buffer full).
    pub kernel_records_lost: u64,
    /// Samples skipped (not in scope, over the footprint limit, the unwind
    /// queue full, not unwound by the stop).
    pub skipped: u64,
    /// Of those, samples the unwind queue had no room for.
    pub unwind_queue_full: u64,
    /// Of those, samples still queued for unwinding when the stop could
    /// wait no longer ([`STOP_UNWIND_LIMIT`]).
    pub unwind_abandoned: u64,
    /// Records that did not parse, and ring positions out of range.
    pub malformed: u64,
    /// Samples whose unwinding ended with an error.
    pub unwind_errors: u64,
    /// Processes whose cached state was dropped (they exec'd or exited).
    pub processes_forgotten: u64,
}

/// `PERF_RECORD_MISC_USER`: a sample taken in user mode.
const CPU_MODE_USER: u16 = 2;

/// Weighs an instance's footprint in kB for the memory guardrail (tests
/// inject their own reading); `None` when it cannot be had.
pub type MemoryReader = fn(&Footprint) -> Option<u64>;

/// How often the memory guardrail is checked (upstream's period).
const MEMORY_CHECK_PERIOD_NS: u64 = 1_000_000_000;

/// How long a stop waits for the unwinder to finish the samples queued
/// (below the runtime's answer timeout, so the stop is answered in time).
pub const STOP_UNWIND_LIMIT: std::time::Duration = std::time::Duration::from_secs(3);

struct PerfProbe {
    options: PerfOptions,
    layout: SampleLayout,
    events: Buffers,
    ctx: ProbeContext,
    interner: Interner,
    /// The unwinder while it runs on the probes' thread (before the start,
    /// or where its thread could not be had).
    unwinder: Option<Box<dyn UserStacks>>,
    /// The unwinder's thread (from `start`).
    worker: Option<UnwindWorker>,
    /// Samples the unwinder's queue holds at once
    /// ([`unwind_queue::CAPACITY`]).
    unwind_capacity: usize,
    kernel_symbols: Option<KernelSymbols>,
    sharding: Option<ProcessSharding>,
    /// Keeps the session's shard choice for its other instances.
    session_token: Option<Arc<()>>,
    scope: ScopeState,
    memory: MemoryReader,
    next_memory_check: Option<u64>,
    buf: Vec<u8>,
    next: Option<u64>,
    next_clear: Option<u64>,
    /// The thread that keeps the ring buffers empty (from `start`; the
    /// events stay in `events` only where it could not be started).
    drain: Option<Drain>,
    /// The drain's queue bound ([`crate::perf::drain::QUEUE_CAP`]).
    queue_cap: u64,
    stopped: bool,
    stats: PerfStats,
}

mod sampling;

#[cfg(test)]
#[path = "perf_tests.rs"]
mod tests;
