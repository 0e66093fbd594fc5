//! `linux.perf`'s config: a `PerfEventConfig` read into typed options with
//! upstream's defaults (10 Hz on the CPU clock, 256 ring-buffer pages read
//! every 100 ms), every field either taken or refused by name, and the
//! configs upstream rejects (an unknown counter, a malformed tracepoint
//! name, a ring buffer that is not a power of two pages) rejected with the
//! reason, as is a ring buffer past [`MAX_RING_BUFFER_PAGES`].

use zerotrace_protos::protos::perf_event_config::{
    CallstackSamplingDecoder, ScopeDecoder, UnwindMode,
};
use zerotrace_protos::protos::perf_events::{
    self, Counter, PerfClock, RawEventDecoder, TimebaseDecoder, TracepointDecoder,
};
use zerotrace_protos::protos::{FollowerEventDecoder, PerfEventConfigDecoder, follower_event};

/// The sampling rate when the config names none (upstream's default).
pub const DEFAULT_FREQUENCY_HZ: u64 = 10;
/// Ring buffer data pages per CPU when the config names none (1 MiB).
pub const DEFAULT_RING_BUFFER_PAGES: u32 = 256;
/// The most ring buffer data pages per CPU a config may ask for (128 MiB
/// of 4 KiB pages, 128 times the default). Upstream asks only for a power
/// of two; the pages are locked kernel memory on every CPU, so a config
/// past this is refused rather than left to exhaust the machine's memory
/// (or to fail in `mmap` on one CPU after another).
pub const MAX_RING_BUFFER_PAGES: u32 = 1 << 15;
/// How often the ring buffers are read when the config names no period.
pub const DEFAULT_READ_PERIOD_MS: u32 = 100;
/// How often the unwinder's cached state is dropped when the config names
/// no period (upstream's: five minutes).
pub const DEFAULT_UNWIND_STATE_CLEAR_PERIOD_MS: u32 = 300_000;

/// What a sample counts: the event the kernel opens.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EventKind {
    /// A counter the kernel names (`PERF_TYPE_SOFTWARE`/`HARDWARE`).
    Counter(Counter),
    /// A tracepoint, `group`/`name`, with an optional filter.
    Tracepoint {
        /// Its name as the config gave it (`sched/sched_switch` or
        /// `sched:sched_switch`), as the defaults describe it.
        config_name: String,
        /// Its group (`sched`).
        group: String,
        /// Its name (`sched_switch`).
        name: String,
        /// The kernel filter expression, if any.
        filter: Option<String>,
    },
    /// An event given by its `perf_event_attr` numbers.
    Raw {
        /// `type`.
        kind: u32,
        /// `pmu_name` (field 5, newer than the schema here): the dynamic
        /// PMU whose `type` is read from
        /// `/sys/bus/event_source/devices/NAME/type` when the event opens
        /// (`kind` is then unset).
        pmu: Option<String>,
        /// `config`.
        config: u64,
        /// `config1`.
        config1: u64,
        /// `config2`.
        config2: u64,
    },
}

/// One event (the timebase or a follower), with the name the config gave.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EventSpec {
    /// What it counts.
    pub kind: EventKind,
    /// The config's `name`, if any.
    pub name: Option<String>,
    /// The privilege levels counted (`modifiers`); `None`: the event's
    /// default (all that the caller may count).
    pub modifiers: Option<Modifiers>,
}

/// `PerfEvents.EventModifier`s: which privilege levels an event counts.
/// Upstream added the field after the schema this crate is generated
/// from (`Timebase.modifiers` = 12, `FollowerEvent.modifiers` = 5, values
/// 1 user space, 2 kernel, 3 hypervisor); it is read from the raw bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Modifiers {
    /// `EVENT_MODIFIER_COUNT_USERSPACE`.
    pub user: bool,
    /// `EVENT_MODIFIER_COUNT_KERNEL`.
    pub kernel: bool,
    /// `EVENT_MODIFIER_COUNT_HYPERVISOR`.
    pub hypervisor: bool,
}

/// `Timebase.modifiers`' field number.
const TIMEBASE_MODIFIERS: u32 = 12;
/// `FollowerEvent.modifiers`' field number.
const FOLLOWER_MODIFIERS: u32 = 5;
/// `PerfEventConfig.ignore_open_failure`'s field number.
const IGNORE_OPEN_FAILURE: u32 = 21;
/// `PerfEventConfig.cpuid`'s field number.
const CPUID: u32 = 22;

/// The modifiers of an event message (`field`, repeated enum, packed or
/// not); `None` when it lists none of the known values. A value upstream
/// does not name is left out, as upstream's parser leaves it out, and
/// refused by name: `what` is pushed to `refused`.
fn modifiers(msg: &[u8], field: u32, what: &str, refused: &mut Vec<String>) -> Option<Modifiers> {
    let mut values = Vec::new();
    let mut unknown = false;
    for f in protozero::Decoder::new(msg) {
        let Ok(f) = f else { break };
        if f.id != field {
            continue;
        }
        match f.value {
            // Packed.
            protozero::FieldValue::Bytes(b) => {
                let mut rest = b;
                while !rest.is_empty() {
                    let Ok((v, n)) = protozero::varint::decode_varint(rest) else {
                        unknown = true;
                        break;
                    };
                    values.push(v);
                    rest = &rest[n..];
                }
            }
            protozero::FieldValue::Varint(v) => values.push(v),
            _ => unknown = true,
        }
    }
    let mut m = Modifiers::default();
    let mut any = false;
    for v in values {
        match v {
            1 => m.user = true,
            2 => m.kernel = true,
            3 => m.hypervisor = true,
            _ => {
                unknown = true;
                continue;
            }
        }
        any = true;
    }
    if unknown && !refused.iter().any(|r| r == what) {
        refused.push(what.to_owned());
    }
    any.then_some(m)
}

/// How often the timebase samples.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Interval {
    /// Samples per second (the kernel adjusts the period).
    Frequency(u64),
    /// One sample every N events.
    Period(u64),
}

/// How user frames are found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UserFrames {
    /// From the stack copy, by the binaries' DWARF call frame information.
    Dwarf,
    /// By the frame-pointer chain, walked in the stack copy
    /// (`UNWIND_FRAME_POINTER`).
    FramePointer,
    /// By the frame-pointer chain as the kernel walks it into the sample's
    /// callchain, no stack copied (`UNWIND_KERNEL_FRAME_POINTER`, value 4,
    /// newer than the schema this crate is generated from).
    KernelFramePointer,
    /// Not at all (kernel frames only, if asked).
    Skip,
}

/// Which processes' callstacks are unwound (`CallstackSampling.scope`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Scope {
    /// Only these pids, if any are given.
    pub target_pids: Vec<i32>,
    /// Only processes whose cmdline matches one of these, if any are given.
    pub target_cmdlines: Vec<String>,
    /// Never these pids.
    pub exclude_pids: Vec<i32>,
    /// Never processes whose cmdline matches one of these.
    pub exclude_cmdlines: Vec<String>,
    /// This many further processes, first come first served.
    pub additional_cmdline_count: u32,
    /// Processes fall in `pid % N` bins; one chosen bin is unwound.
    pub process_shard_count: u32,
}

/// Callstack sampling.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Callstacks {
    /// Which processes.
    pub scope: Scope,
    /// Kernel frames too.
    pub kernel_frames: bool,
    /// How user frames are found.
    pub user_frames: UserFrames,
}

/// A `PerfEventConfig`, read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PerfOptions {
    /// The event that samples.
    pub timebase: EventSpec,
    /// How often.
    pub interval: Interval,
    /// The clock samples are stamped with.
    pub clock: PerfClock,
    /// Whether the config named the clock (`timebase.timestamp_clock`);
    /// if not, BOOTTIME is asked for and MONOTONIC_RAW taken where the
    /// kernel refuses BOOTTIME for the event.
    pub clock_explicit: bool,
    /// Events read with each sample.
    pub followers: Vec<EventSpec>,
    /// Callstacks, if sampled (else only counts are recorded).
    pub callstacks: Option<Callstacks>,
    /// The CPUs to sample (all when empty).
    pub target_cpus: Vec<u32>,
    /// Data pages per ring buffer (a power of two).
    pub ring_buffer_pages: u32,
    /// How often the buffers are read.
    pub read_period_ms: u32,
    /// Samples read in one pass beyond this many bytes are skipped (0: no limit).
    pub max_enqueued_footprint_bytes: u64,
    /// The data source stops if its own footprint (`perf::footprint`) exceeds it (0: no limit).
    pub max_daemon_memory_kb: u32,
    /// The unwinder's caches are dropped this often
    /// ([`DEFAULT_UNWIND_STATE_CLEAR_PERIOD_MS`] unless the config says).
    pub unwind_state_clear_period_ms: u32,
    /// `ignore_open_failure` (field 21, newer than the schema here): a CPU
    /// whose event cannot be opened is left out (said in the log) instead
    /// of failing the instance, unless no CPU opens.
    pub ignore_open_failure: bool,
    /// Fields these probes do not implement (recorded without them), by
    /// name; fields newer than the table as `Message.field N`.
    pub refused: Vec<String>,
}

/// Why a `PerfEventConfig` is rejected (the data source does not start).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PerfConfigError {
    /// It does not decode.
    #[error("PerfEventConfig does not decode: {0}")]
    Decode(protozero::DecodeError),
    /// A counter number the schema does not name.
    #[error("PerfEventConfig: unknown counter {0}")]
    UnknownCounter(i32),
    /// `UNKNOWN_COUNTER` or no counter where one is needed.
    #[error("PerfEventConfig: counter UNKNOWN_COUNTER is not an event")]
    NoCounter,
    /// A tracepoint name that is not `group/name` or `group:name`.
    #[error("PerfEventConfig: tracepoint {0:?} is not of the form group/name or group:name")]
    TracepointName(String),
    /// `ring_buffer_pages` is not a power of two.
    #[error("PerfEventConfig.ring_buffer_pages: {0} is not a power of two")]
    RingBufferPages(u32),
    /// `ring_buffer_pages` is past [`MAX_RING_BUFFER_PAGES`].
    #[error(
        "PerfEventConfig.ring_buffer_pages: {0} is more than these probes map per CPU (at most {MAX_RING_BUFFER_PAGES})"
    )]
    RingBufferTooLarge(u32),
    /// A CPU index past what a `u32` mask can name sensibly.
    #[error("PerfEventConfig.target_cpu: {0} is not a CPU of this machine")]
    TargetCpu(u32),
    /// A raw event naming both its `type` and a `pmu_name` (upstream
    /// rejects it).
    #[error("PerfEventConfig: raw_event sets both type and pmu_name")]
    RawTypeAndPmu,
    /// An unwinding mode the schema does not name.
    #[error("PerfEventConfig.callstack_sampling.user_frames: unknown mode {0}")]
    UnwindMode(i32),
}

impl PerfOptions {
    /// Reads `bytes`, an encoded `PerfEventConfig`.
    pub fn from_config(bytes: &[u8]) -> Result<PerfOptions, PerfConfigError> {
        let c = PerfEventConfigDecoder::new(bytes);
        if let Some(e) = c.decode_error() {
            return Err(PerfConfigError::Decode(e));
        }
        let mut refused: Vec<String> = Vec::new();
        let tb = c.timebase();
        let tb = tb.as_ref();
        let interval = match (
            tb.and_then(TimebaseDecoder::period).filter(|&p| p != 0),
            tb.and_then(TimebaseDecoder::frequency).filter(|&f| f != 0),
            c.sampling_frequency().filter(|&f| f != 0),
        ) {
            (Some(p), _, _) => Interval::Period(p),
            (None, Some(f), _) => Interval::Frequency(f),
            (None, None, Some(f)) => Interval::Frequency(u64::from(f)),
            (None, None, None) => Interval::Frequency(DEFAULT_FREQUENCY_HZ),
        };
        if tb.is_some_and(TimebaseDecoder::has_poll_period_ms) {
            refused.push("timebase.poll_period_ms".into());
        }
        let timebase_raw = c.timebase_bytes().unwrap_or_default();
        let timebase = match tb {
            Some(tb) => {
                let name = tb.name().map(str::to_owned);
                let modifiers = modifiers(
                    timebase_raw,
                    TIMEBASE_MODIFIERS,
                    "timebase.modifiers",
                    &mut refused,
                );
                match timebase_event(tb)? {
                    Some(kind) => EventSpec {
                        kind,
                        name,
                        modifiers,
                    },
                    None => EventSpec {
                        kind: EventKind::Counter(Counter::SwCpuClock),
                        name,
                        modifiers,
                    },
                }
            }
            None => EventSpec {
                kind: EventKind::Counter(Counter::SwCpuClock),
                name: None,
                modifiers: None,
            },
        };
        let (clock, clock_explicit) = match tb.and_then(TimebaseDecoder::timestamp_clock_raw) {
            None | Some(0) => (PerfClock::Boottime, false),
            Some(n) => match PerfClock::from_i32(n) {
                Some(c) => (c, true),
                // A clock this schema does not name: refused, not guessed.
                None => {
                    refused.push("timebase.timestamp_clock".into());
                    (PerfClock::Boottime, false)
                }
            },
        };
        let mut followers = Vec::new();
        for (f, raw) in c.followers().zip(c.followers_bytes()) {
            let mut spec = follower(&f)?;
            spec.modifiers =
                modifiers(raw, FOLLOWER_MODIFIERS, "followers.modifiers", &mut refused);
            followers.push(spec);
        }
        let legacy = c.all_cpus() == Some(true);
        let callstacks = match c.callstack_sampling() {
            Some(cs) => Some(callstacks(&cs, &c)?),
            None if legacy => Some(Callstacks {
                scope: legacy_scope(&c),
                kernel_frames: c.kernel_frames() == Some(true),
                user_frames: UserFrames::Dwarf,
            }),
            None => None,
        };
        let ring_buffer_pages = match c.ring_buffer_pages().unwrap_or(0) {
            0 => DEFAULT_RING_BUFFER_PAGES,
            n if n > MAX_RING_BUFFER_PAGES => return Err(PerfConfigError::RingBufferTooLarge(n)),
            n if n.is_power_of_two() => n,
            n => return Err(PerfConfigError::RingBufferPages(n)),
        };
        let mut target_cpus: Vec<u32> = c.target_cpu().collect();
        target_cpus.sort_unstable();
        target_cpus.dedup();
        if let Some(&cpu) = target_cpus.iter().find(|&&c| c >= 4096) {
            return Err(PerfConfigError::TargetCpu(cpu));
        }
        if c.target_installed_by().next().is_some() {
            refused.push("target_installed_by".into());
        }
        let raw_field = |id: u32| {
            protozero::Decoder::new(bytes)
                .filter_map(Result::ok)
                .filter(|f| f.id == id)
                .last()
        };
        let ignore_open_failure = raw_field(IGNORE_OPEN_FAILURE)
            .and_then(|f| f.as_u64().ok())
            .is_some_and(|v| v != 0);
        if raw_field(CPUID).is_some() {
            refused.push("cpuid".into());
        }
        refused.extend(super::config_fields::unknown_fields(bytes));
        Ok(PerfOptions {
            timebase,
            interval,
            clock,
            clock_explicit,
            followers,
            callstacks,
            target_cpus,
            ring_buffer_pages,
            read_period_ms: c
                .ring_buffer_read_period_ms()
                .filter(|&p| p != 0)
                .unwrap_or(DEFAULT_READ_PERIOD_MS),
            max_enqueued_footprint_bytes: c
                .max_enqueued_footprint_kb()
                .unwrap_or(0)
                .saturating_mul(1024),
            max_daemon_memory_kb: c.max_daemon_memory_kb().unwrap_or(0),
            unwind_state_clear_period_ms: c
                .unwind_state_clear_period_ms()
                .filter(|&p| p != 0)
                .unwrap_or(DEFAULT_UNWIND_STATE_CLEAR_PERIOD_MS),
            ignore_open_failure,
            refused,
        })
    }

    /// The refusals, one line each, as the probes report them.
    pub fn refusal_lines(&self) -> Vec<String> {
        self.refused
            .iter()
            .map(|f| {
                format!("PerfEventConfig.{f}: not supported by these probes, recorded without it")
            })
            .collect()
    }
}

/// Whether a counter is a hardware (PMU) counter.
pub fn is_hardware(c: Counter) -> bool {
    matches!(
        c,
        Counter::HwCpuCycles
            | Counter::HwInstructions
            | Counter::HwCacheReferences
            | Counter::HwCacheMisses
            | Counter::HwBranchInstructions
            | Counter::HwBranchMisses
            | Counter::HwBusCycles
            | Counter::HwStalledCyclesFrontend
            | Counter::HwStalledCyclesBackend
            | Counter::HwRefCpuCycles
    )
}

fn timebase_event(tb: &TimebaseDecoder<'_>) -> Result<Option<EventKind>, PerfConfigError> {
    Ok(match tb.which_event() {
        Some(perf_events::timebase::Event::Counter(c)) => Some(counter(c)?),
        Some(perf_events::timebase::Event::Tracepoint(t)) => Some(tracepoint(&t)?),
        Some(perf_events::timebase::Event::RawEvent(r)) => {
            Some(raw(&r, tb.raw_event_bytes().unwrap_or_default())?)
        }
        None => match tb.counter_raw() {
            // A counter number the enum does not name.
            Some(n) => return Err(PerfConfigError::UnknownCounter(n)),
            None => None,
        },
    })
}

fn follower(f: &FollowerEventDecoder<'_>) -> Result<EventSpec, PerfConfigError> {
    let kind = match f.which_event() {
        Some(follower_event::Event::Counter(c)) => counter(c)?,
        Some(follower_event::Event::Tracepoint(t)) => tracepoint(&t)?,
        Some(follower_event::Event::RawEvent(r)) => {
            raw(&r, f.raw_event_bytes().unwrap_or_default())?
        }
        None => match f.counter_raw() {
            Some(n) => return Err(PerfConfigError::UnknownCounter(n)),
            None => return Err(PerfConfigError::NoCounter),
        },
    };
    Ok(EventSpec {
        kind,
        name: f.name().map(str::to_owned),
        modifiers: None,
    })
}

fn counter(c: Counter) -> Result<EventKind, PerfConfigError> {
    if c == Counter::UnknownCounter {
        return Err(PerfConfigError::NoCounter);
    }
    Ok(EventKind::Counter(c))
}

fn tracepoint(t: &TracepointDecoder<'_>) -> Result<EventKind, PerfConfigError> {
    let full = t.name().unwrap_or_default();
    let split = full.split_once('/').or_else(|| full.split_once(':'));
    match split {
        Some((group, name)) if !group.is_empty() && !name.is_empty() => Ok(EventKind::Tracepoint {
            config_name: full.to_owned(),
            group: group.to_owned(),
            name: name.to_owned(),
            filter: t.filter().filter(|f| !f.is_empty()).map(str::to_owned),
        }),
        _ => Err(PerfConfigError::TracepointName(full.to_owned())),
    }
}

/// `RawEvent.pmu_name`'s field number (newer than the schema here).
const RAW_PMU_NAME: u32 = 5;

/// A raw event: its numbers, or the dynamic PMU named by `pmu_name` (read
/// from `bytes`, the encoded `RawEvent`); both is an error, as upstream's.
fn raw(r: &RawEventDecoder<'_>, bytes: &[u8]) -> Result<EventKind, PerfConfigError> {
    let pmu = protozero::Decoder::new(bytes)
        .filter_map(Result::ok)
        .filter(|f| f.id == RAW_PMU_NAME)
        .last()
        .and_then(|f| f.as_bytes().ok())
        .map(|b| String::from_utf8_lossy(b).into_owned())
        .filter(|p| !p.is_empty());
    if pmu.is_some() && r.r#type().is_some() {
        return Err(PerfConfigError::RawTypeAndPmu);
    }
    Ok(EventKind::Raw {
        kind: r.r#type().unwrap_or(0),
        pmu,
        config: r.config().unwrap_or(0),
        config1: r.config1().unwrap_or(0),
        config2: r.config2().unwrap_or(0),
    })
}

/// `UNWIND_KERNEL_FRAME_POINTER`: upstream's value, not in the generated enum.
const UNWIND_KERNEL_FRAME_POINTER: i32 = 4;

fn callstacks(
    cs: &CallstackSamplingDecoder<'_>,
    c: &PerfEventConfigDecoder<'_>,
) -> Result<Callstacks, PerfConfigError> {
    let scope = match cs.scope() {
        Some(s) => scope(&s),
        None => legacy_scope(c),
    };
    let user_frames = match cs.user_frames_raw() {
        None | Some(0) => UserFrames::Dwarf,
        Some(n) => match UnwindMode::from_i32(n) {
            Some(UnwindMode::UnwindSkip) => UserFrames::Skip,
            Some(UnwindMode::UnwindFramePointer) => UserFrames::FramePointer,
            Some(UnwindMode::UnwindDwarf | UnwindMode::UnwindUnknown) => UserFrames::Dwarf,
            None if n == UNWIND_KERNEL_FRAME_POINTER => UserFrames::KernelFramePointer,
            None => return Err(PerfConfigError::UnwindMode(n)),
        },
    };
    Ok(Callstacks {
        scope,
        kernel_frames: cs.kernel_frames() == Some(true) || c.kernel_frames() == Some(true),
        user_frames,
    })
}

fn scope(s: &ScopeDecoder<'_>) -> Scope {
    Scope {
        target_pids: s.target_pid().collect(),
        target_cmdlines: s.target_cmdline().map(str::to_owned).collect(),
        exclude_pids: s.exclude_pid().collect(),
        exclude_cmdlines: s.exclude_cmdline().map(str::to_owned).collect(),
        additional_cmdline_count: s.additional_cmdline_count().unwrap_or(0),
        process_shard_count: s.process_shard_count().unwrap_or(0),
    }
}

/// The scope of configs older than `callstack_sampling`: its fields at the
/// top level of `PerfEventConfig`.
fn legacy_scope(c: &PerfEventConfigDecoder<'_>) -> Scope {
    Scope {
        target_pids: c.target_pid().collect(),
        target_cmdlines: c.target_cmdline().map(str::to_owned).collect(),
        exclude_pids: c.exclude_pid().collect(),
        exclude_cmdlines: c.exclude_cmdline().map(str::to_owned).collect(),
        additional_cmdline_count: c.additional_cmdline_count().unwrap_or(0),
        process_shard_count: 0,
    }
}

#[cfg(test)]
#[path = "config_tests.rs"]
mod tests;
