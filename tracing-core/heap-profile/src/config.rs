//! What a session asks of the heap profiler (`HeapprofdConfig`, data source
//! `android.heapprofd`), read as upstream's heapprofd reads it, and which
//! of it an in-process profiler does, keeps or refuses: every field of the
//! schema is decided in [`HEAPPROFD_CONFIG_FIELDS`], a field number the
//! schema does not know is refused by number, and a refusal is a line the
//! person who asked sees (`zerotrace record`, the trace's stats), never
//! only a log.
//!
//! Upstream's rules kept here: no `heaps` and no `all_heaps` means the
//! default heap (`libc.malloc`, and in this profiler also the in-process
//! allocator's own heap, which upstream has no notion of); each heap's
//! interval is `sampling_interval_bytes` unless `heap_sampling_intervals`
//! gives one per heap (a length mismatch or a zero interval rejects the
//! config); `exclude_heaps` switch heaps off; command lines are
//! normalised (up to the last `/` and from the first `@` dropped) on both
//! sides; continuous dumps start after `dump_phase_ms` and repeat every
//! `dump_interval_ms`.

use protozero::{Decoder, FieldValue};
use zerotrace_protos::protos::HeapprofdConfigDecoder;

/// The data source's name.
pub const HEAPPROFD_DATA_SOURCE: &str = "android.heapprofd";

/// `DataSourceConfig.heapprofd_config`.
pub const HEAPPROFD_CONFIG_FIELD: u32 = 105;

/// Upstream's default heap, the C allocator.
pub const LIBC_MALLOC_HEAP: &str = "libc.malloc";

/// Upstream's default shared buffer (here: the record queue) size.
pub const DEFAULT_SHMEM_SIZE: u64 = 8 << 20;
/// The largest ring (the record queue's size) a session gets: 256 MiB,
/// upstream's cap of 500 MiB rounded down to a power of two. Upstream's
/// producer cuts a larger request to 500 MiB, a size its own client
/// refuses to map (a ring is a power of two of pages); here every size
/// a config yields is one the client's ring takes. Larger requests are
/// cut to it, with a line saying so.
pub const MAX_SHMEM_SIZE: u64 = 256 << 20;
/// Upstream's cap on `shmem_size_bytes` (500 MiB), named in the line a
/// larger request gets.
const UPSTREAM_MAX_SHMEM_SIZE: u64 = 500 << 20;
/// The smallest ring a config asks for: two 4 KiB pages.
const MIN_SHMEM_SIZE: u64 = 8192;

const _: () =
    assert!(MAX_SHMEM_SIZE.is_power_of_two() && MAX_SHMEM_SIZE <= UPSTREAM_MAX_SHMEM_SIZE);
const _: () = assert!(DEFAULT_SHMEM_SIZE.is_power_of_two() && DEFAULT_SHMEM_SIZE <= MAX_SHMEM_SIZE);

/// What the profiler does with a field.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Handling {
    /// Done as upstream does it.
    Implemented,
    /// Refused, with a line naming the field, when set; the profile is
    /// recorded without it.
    Refused,
    /// Accepted and not acted on: upstream acts on it only on Android, or
    /// it changes nothing an in-process profiler records.
    Kept,
}

/// Every `HeapprofdConfig` field of upstream v51: (number, name, handling).
pub const HEAPPROFD_CONFIG_FIELDS: &[(u32, &str, Handling)] = &[
    (1, "sampling_interval_bytes", Handling::Implemented),
    (
        24,
        "adaptive_sampling_shmem_threshold",
        Handling::Implemented,
    ),
    (
        25,
        "adaptive_sampling_max_sampling_interval_bytes",
        Handling::Implemented,
    ),
    (2, "process_cmdline", Handling::Implemented),
    (4, "pid", Handling::Implemented),
    // Android's package installer; nothing installs packages on Linux.
    (26, "target_installed_by", Handling::Kept),
    (20, "heaps", Handling::Implemented),
    (27, "exclude_heaps", Handling::Implemented),
    // Every allocation and free as its own packet: not written yet.
    (23, "stream_allocations", Handling::Refused),
    (22, "heap_sampling_intervals", Handling::Implemented),
    (21, "all_heaps", Handling::Implemented),
    (5, "all", Handling::Implemented),
    (15, "min_anonymous_memory_kb", Handling::Implemented),
    (16, "max_heapprofd_memory_kb", Handling::Implemented),
    (17, "max_heapprofd_cpu_secs", Handling::Implemented),
    (7, "skip_symbol_prefix", Handling::Implemented),
    (6, "continuous_dump_config", Handling::Implemented),
    (8, "shmem_size_bytes", Handling::Implemented),
    (9, "block_client", Handling::Implemented),
    (14, "block_client_timeout_us", Handling::Implemented),
    // Every program a session reaches is taken as running (the profiler
    // cannot tell a program that starts inside a session from one that was
    // running before it), so `no_running` leaves it out, and `no_startup`,
    // which would leave out only programs starting inside the session,
    // cannot be honoured: refused by name.
    (10, "no_startup", Handling::Refused),
    (11, "no_running", Handling::Implemented),
    (13, "dump_at_max", Handling::Implemented),
    // The child of a fork is never profiled (upstream's default); keeping a
    // child that shares the parent's memory is not offered.
    (18, "disable_fork_teardown", Handling::Refused),
    // There is no vfork detection to switch off: a vfork child allocates
    // nothing through the profiler before it execs.
    (19, "disable_vfork_detection", Handling::Kept),
];

/// Why a config cannot be used at all (upstream rejects the data source).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum HeapConfigError {
    /// The bytes do not decode as a `HeapprofdConfig`.
    #[error("HeapprofdConfig does not decode: {0}")]
    Malformed(String),
    /// A heap would be sampled with an interval of 0 (upstream: "zero
    /// sampling interval"): `sampling_interval_bytes` unset or 0.
    #[error("HeapprofdConfig: a heap's sampling interval is 0 (set sampling_interval_bytes)")]
    ZeroInterval,
    /// `heap_sampling_intervals` does not give one interval per heap.
    #[error("HeapprofdConfig: {intervals} heap_sampling_intervals for {heaps} heaps")]
    IntervalsMismatch {
        /// Heaps named.
        heaps: usize,
        /// Intervals given.
        intervals: usize,
    },
    /// `no_startup` and `no_running` together leave no process to profile.
    #[error("HeapprofdConfig: no_startup and no_running together profile nothing")]
    NoProcess,
}

/// Which heaps are sampled, and at which interval.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HeapSelection {
    /// Heaps named, with their intervals (0: excluded).
    named: Vec<(String, u64)>,
    /// `all_heaps`: every heap not named, at the default interval.
    all_heaps: bool,
    /// The interval of heaps taken by `all_heaps`.
    default_interval: u64,
    /// No heap was named and `all_heaps` was not set: upstream's default
    /// heap alone was taken.
    by_default: bool,
}

impl HeapSelection {
    /// The interval heap `name` is sampled at, or `None` when it is not
    /// profiled. `own_default`: the heap is the in-process allocator's own,
    /// which the default selection (no heaps named) takes too.
    pub fn interval(&self, name: &str, own_default: bool) -> Option<u64> {
        if let Some((_, i)) = self.named.iter().find(|(n, _)| n == name) {
            return (*i > 0).then_some(*i);
        }
        if self.all_heaps || (own_default && self.by_default) {
            return (self.default_interval > 0).then_some(self.default_interval);
        }
        None
    }
}

/// The config as the profiler uses it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HeapConfig {
    /// `sampling_interval_bytes`: the default interval.
    pub sampling_interval_bytes: u64,
    /// Adaptive sampling: above this many queued bytes the interval
    /// doubles (0: off).
    pub adaptive_threshold: u64,
    /// ... up to this interval (0: no cap).
    pub adaptive_max_interval: u64,
    /// `process_cmdline`, normalised.
    pub cmdlines: Vec<String>,
    /// `pid`.
    pub pids: Vec<u64>,
    /// `all`.
    pub all: bool,
    /// The heaps.
    pub heaps: HeapSelection,
    /// `min_anonymous_memory_kb` (0: none).
    pub min_anonymous_memory_kb: u32,
    /// `max_heapprofd_memory_kb` (0: none).
    pub max_memory_kb: u32,
    /// `max_heapprofd_cpu_secs` (0: none).
    pub max_cpu_secs: u64,
    /// `skip_symbol_prefix`: mappings whose frames get no function names.
    pub skip_symbol_prefix: Vec<String>,
    /// `continuous_dump_config`: (phase, interval) in ms, when the
    /// interval is not 0.
    pub continuous_dump: Option<(u32, u32)>,
    /// The record queue's size: `shmem_size_bytes` (default 8 MiB), always
    /// a power of two from 8 KiB to [`MAX_SHMEM_SIZE`] (see
    /// [`queue_size`]).
    pub queue_bytes: u64,
    /// `block_client`: a full queue makes the allocating thread wait.
    pub block_client: bool,
    /// `block_client_timeout_us` (0: wait as long as it takes).
    pub block_client_timeout_us: u32,
    /// `no_startup`.
    pub no_startup: bool,
    /// `no_running`.
    pub no_running: bool,
    /// `dump_at_max`: dumps hold each callstack's bytes live at the peak.
    pub dump_at_max: bool,
    /// The fields refused, as lines for the person who asked.
    pub refused: Vec<String>,
}

impl HeapSelection {
    fn new(
        named: Vec<(String, u64)>,
        all_heaps: bool,
        default_interval: u64,
        by_default: bool,
    ) -> Self {
        HeapSelection {
            named,
            all_heaps,
            default_interval,
            by_default,
        }
    }
}

impl HeapConfig {
    /// Reads an encoded `HeapprofdConfig`.
    pub fn parse(bytes: &[u8]) -> Result<HeapConfig, HeapConfigError> {
        let mut refused = Vec::new();
        for f in Decoder::new(bytes) {
            let f = f.map_err(|e| HeapConfigError::Malformed(e.to_string()))?;
            match HEAPPROFD_CONFIG_FIELDS.iter().find(|(n, _, _)| *n == f.id) {
                Some((_, name, Handling::Refused)) if is_set(&f.value) => {
                    let line = refusal(name);
                    if !refused.contains(&line) {
                        refused.push(line);
                    }
                }
                Some(_) => {}
                None => refused.push(format!(
                    "HeapprofdConfig field {}: unknown to this profiler, recorded without it",
                    f.id
                )),
            }
        }
        let d = HeapprofdConfigDecoder::new(bytes);
        if let Some(e) = d.decode_error() {
            return Err(HeapConfigError::Malformed(e.to_string()));
        }
        let interval = d.sampling_interval_bytes().unwrap_or(0);
        let all_heaps = d.all_heaps().unwrap_or(false);
        let mut heaps: Vec<String> = d.heaps().map(str::to_owned).collect();
        let by_default = heaps.is_empty() && !all_heaps;
        if by_default {
            heaps.push(LIBC_MALLOC_HEAP.to_owned());
        }
        let mut intervals: Vec<u64> = d.heap_sampling_intervals().collect();
        if intervals.is_empty() {
            intervals = vec![interval; heaps.len()];
        }
        if intervals.len() != heaps.len() {
            return Err(HeapConfigError::IntervalsMismatch {
                heaps: heaps.len(),
                intervals: intervals.len(),
            });
        }
        if intervals.contains(&0) || (all_heaps && interval == 0) {
            return Err(HeapConfigError::ZeroInterval);
        }
        let mut named: Vec<(String, u64)> = heaps.into_iter().zip(intervals).collect();
        for h in d.exclude_heaps() {
            match named.iter_mut().find(|(n, _)| n == h) {
                Some(e) => e.1 = 0,
                None => named.push((h.to_owned(), 0)),
            }
        }
        let no_startup = d.no_startup().unwrap_or(false);
        let no_running = d.no_running().unwrap_or(false);
        if no_startup && no_running {
            return Err(HeapConfigError::NoProcess);
        }
        let continuous_dump = d.continuous_dump_config().and_then(|c| {
            let every = c.dump_interval_ms().unwrap_or(0);
            (every > 0).then(|| (c.dump_phase_ms().unwrap_or(0), every))
        });
        let (queue_bytes, line) = queue_size(d.shmem_size_bytes().unwrap_or(0));
        refused.extend(line);
        Ok(HeapConfig {
            sampling_interval_bytes: interval,
            adaptive_threshold: d.adaptive_sampling_shmem_threshold().unwrap_or(0),
            adaptive_max_interval: d
                .adaptive_sampling_max_sampling_interval_bytes()
                .unwrap_or(0),
            cmdlines: d.process_cmdline().map(normalize_cmdline).collect(),
            pids: d.pid().collect(),
            all: d.all().unwrap_or(false),
            heaps: HeapSelection::new(named, all_heaps, interval, by_default),
            min_anonymous_memory_kb: d.min_anonymous_memory_kb().unwrap_or(0),
            max_memory_kb: d.max_heapprofd_memory_kb().unwrap_or(0),
            max_cpu_secs: d.max_heapprofd_cpu_secs().unwrap_or(0),
            skip_symbol_prefix: d.skip_symbol_prefix().map(str::to_owned).collect(),
            continuous_dump,
            queue_bytes,
            block_client: d.block_client().unwrap_or(false),
            block_client_timeout_us: d.block_client_timeout_us().unwrap_or(0),
            no_startup,
            no_running,
            dump_at_max: d.dump_at_max().unwrap_or(false),
            refused,
        })
    }

    /// Whether the process (`pid`, its command line `cmdline`) is one the
    /// config targets, as upstream decides it: `all`, a listed pid, or a
    /// listed command line (both sides normalised).
    pub fn targets(&self, pid: u32, cmdline: &str) -> bool {
        if self.all || self.pids.contains(&u64::from(pid)) {
            return true;
        }
        let own = normalize_cmdline(cmdline);
        self.cmdlines.contains(&own)
    }
}

/// The ring's size for a `shmem_size_bytes` of `asked`, and the line the
/// person who asked gets when it is not what they asked: 0 is the default
/// (8 MiB); less than 8 KiB is the default too; more than
/// [`MAX_SHMEM_SIZE`] is cut to it; any other size that is not a power of
/// two is rounded down to one. So the size is always a power of two (a
/// whole number of pages), which the client's ring needs.
pub fn queue_size(asked: u64) -> (u64, Option<String>) {
    let field = "HeapprofdConfig.shmem_size_bytes";
    if asked == 0 {
        (DEFAULT_SHMEM_SIZE, None)
    } else if asked < MIN_SHMEM_SIZE {
        (
            DEFAULT_SHMEM_SIZE,
            Some(format!(
                "{field}: {asked} is less than {MIN_SHMEM_SIZE}; {DEFAULT_SHMEM_SIZE} used"
            )),
        )
    } else if asked > MAX_SHMEM_SIZE {
        (
            MAX_SHMEM_SIZE,
            Some(format!(
                "{field}: {asked} is more than the largest ring, {MAX_SHMEM_SIZE} (upstream's cap of {UPSTREAM_MAX_SHMEM_SIZE} rounded down to a power of two); {MAX_SHMEM_SIZE} used"
            )),
        )
    } else if !asked.is_power_of_two() {
        let down = 1u64 << asked.ilog2();
        (
            down,
            Some(format!(
                "{field}: {asked} is not a power of two; {down} used"
            )),
        )
    } else {
        (asked, None)
    }
}

/// The `heapprofd_config` of an encoded `DataSourceConfig` (empty when
/// absent).
pub fn heapprofd_config_of(ds_config: &[u8]) -> &[u8] {
    Decoder::new(ds_config)
        .find_last(HEAPPROFD_CONFIG_FIELD)
        .and_then(|f| f.as_bytes().ok())
        .unwrap_or(&[])
}

/// What this profiler will not do of an encoded `DataSourceConfig` for
/// `android.heapprofd`, as lines for the person who asked: the fields it
/// refuses, or why the config cannot be used at all.
pub fn config_refusals(ds_config: &[u8]) -> Vec<String> {
    match HeapConfig::parse(heapprofd_config_of(ds_config)) {
        Ok(c) => c.refused,
        Err(e) => vec![format!(
            "{HEAPPROFD_DATA_SOURCE}: {e}; no process is profiled"
        )],
    }
}

/// A refused field's line.
fn refusal(field: &str) -> String {
    format!("HeapprofdConfig.{field}: not supported by this profiler, recorded without it")
}

/// Whether a field's value differs from its default (a refused field set
/// to its default asks nothing).
fn is_set(v: &FieldValue<'_>) -> bool {
    match v {
        FieldValue::Varint(x) | FieldValue::Fixed64(x) => *x != 0,
        FieldValue::Fixed32(x) => *x != 0,
        FieldValue::Bytes(b) => !b.is_empty(),
        _ => true,
    }
}

/// Upstream's command-line normalisation: everything up to the last `/`
/// and from the first `@` dropped (`/system/bin/surfaceflinger@1.0` is
/// `surfaceflinger`). The argv0 of a NUL-separated `/proc/PID/cmdline` is
/// taken.
pub fn normalize_cmdline(cmdline: &str) -> String {
    let argv0 = cmdline.split('\0').next().unwrap_or("");
    let base = argv0.rsplit('/').next().unwrap_or(argv0);
    base.split('@').next().unwrap_or(base).to_owned()
}

#[cfg(test)]
#[path = "config_tests.rs"]
mod tests;
