//! What a data source of the probes is to the runtime: a factory that
//! makes one [`Probe`] per started instance from its `DataSourceConfig`,
//! and the probe, told `now` and given somewhere to write packets, which
//! says when it next wants to run. The runtime owns threads, clocks and
//! the producer connection; probes own their `/proc` reading and packets,
//! so tests run a probe on a fixture tree with a fake clock and a
//! [`BufferSink`].

use std::sync::Arc;

use crate::procfs::{ProcError, ProcRoot};

/// Where a probe writes its `TracePacket`s: the profilers' one sink
/// (`zerotrace-profiling`), a `TraceWriter` in the runtime and a
/// [`BufferSink`] in tests.
pub use zerotrace_profiling::{BufferSink, PacketSink};

/// The clock probes stamp packets with (boot-clock ns in the runtime).
pub type Clock = Arc<dyn Fn() -> u64 + Send + Sync>;

/// Where log lines go (stderr in the binaries, a buffer in tests).
pub type Logger = Arc<dyn Fn(&str) + Send + Sync>;

/// The logger of the binaries: one line on stderr, prefixed.
pub fn stderr_logger() -> Logger {
    Arc::new(|line| eprintln!("zerotrace-probes: {line}"))
}

/// Wakes the probes' thread before a probe's next deadline (a probe that
/// learnt that it has data to read now, e.g. an ftrace buffer past its
/// watermark): the thread then looks at every probe's
/// [`Probe::next_deadline`] again.
pub type Waker = Arc<dyn Fn() + Send + Sync>;

/// A waker that does nothing (probes driven by hand, in tests).
pub fn no_waker() -> Waker {
    Arc::new(|| {})
}

/// What a probe reads from and reports to.
#[derive(Clone)]
pub struct ProbeContext {
    /// Where `/proc` and `/sys` are.
    pub root: ProcRoot,
    /// The clock (for `collection_end_timestamp`s taken after a scan).
    pub clock: Clock,
    /// Where to log.
    pub log: Logger,
    /// Wakes the thread that drives the probes.
    pub wake: Waker,
}

impl std::fmt::Debug for ProbeContext {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ProbeContext")
            .field("root", &self.root)
            .finish_non_exhaustive()
    }
}

impl ProbeContext {
    /// The running system, the boot clock and stderr.
    pub fn system() -> Self {
        ProbeContext {
            root: ProcRoot::system(),
            clock: Arc::new(zerotrace_core::platform::boottime_ns),
            log: stderr_logger(),
            wake: no_waker(),
        }
    }
}

/// What a probe counted.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ProbeStats {
    /// Packets written.
    pub packets: u64,
    /// Files that could not be read or parsed (each also logged, the
    /// first few in full).
    pub read_errors: u64,
    /// Poll slots skipped because the previous poll ran late.
    pub skipped_polls: u64,
}

/// How many read errors a probe logs in full before only counting them
/// (the count is logged when it stops).
pub const LOGGED_ERRORS: u64 = 5;

/// Counts read errors and logs the first [`LOGGED_ERRORS`] of them.
#[derive(Debug, Default)]
pub struct ErrorLog {
    count: u64,
}

impl ErrorLog {
    /// Records `errors` met by data source `source`.
    pub fn record(&mut self, ctx: &ProbeContext, source: &str, errors: &[ProcError]) {
        for e in errors {
            self.count = self.count.saturating_add(1);
            if self.count <= LOGGED_ERRORS {
                (ctx.log)(&format!("{source}: {e}"));
            } else if self.count == LOGGED_ERRORS + 1 {
                (ctx.log)(&format!(
                    "{source}: more read errors; counting them from here on"
                ));
            }
        }
    }

    /// How many were recorded.
    pub fn count(&self) -> u64 {
        self.count
    }
}

/// One running instance of a data source.
pub trait Probe: Send {
    /// The session started at `now_ns`: writes what is written once.
    fn start(&mut self, now_ns: u64, sink: &mut dyn PacketSink);
    /// When the probe next wants [`Probe::poll`], if ever.
    fn next_deadline(&self) -> Option<u64>;
    /// Writes what is due at `now_ns`.
    fn poll(&mut self, now_ns: u64, sink: &mut dyn PacketSink);
    /// The session stops at `now_ns`: writes what is due (the runtime then
    /// flushes the writer).
    fn stop(&mut self, now_ns: u64, sink: &mut dyn PacketSink) {
        if self.next_deadline().is_some_and(|d| d <= now_ns) {
            self.poll(now_ns, sink);
        }
    }
    /// A flush was asked at `now_ns`: writes what it holds that is not
    /// written yet (the runtime then flushes the writer). Most probes
    /// write as they go and have nothing to do.
    fn flush(&mut self, _now_ns: u64, _sink: &mut dyn PacketSink) {}
    /// The service asked to clear the sequence's incremental state
    /// (`incremental_state_config.clear_period_ms`, so that a ring buffer
    /// that overwrote the first packets stays decodable): a probe that
    /// interns forgets what it emitted and writes its defaults and fixed
    /// entries again. Probes without incremental state do nothing.
    fn clear_incremental_state(&mut self, _now_ns: u64, _sink: &mut dyn PacketSink) {}
    /// The pids of the tasks it saw running since the last call (ftrace),
    /// for the process data source of the same tracing session.
    fn take_seen_pids(&mut self) -> Vec<i32> {
        Vec::new()
    }
    /// Tasks `pids` were seen running in this tracing session (by another
    /// probe): describes those not described yet (process_stats).
    fn on_pids(&mut self, _now_ns: u64, _pids: &[i32], _sink: &mut dyn PacketSink) {}
    /// The pids of the tasks it saw renamed or exec since the last call.
    fn take_renamed_pids(&mut self) -> Vec<i32> {
        Vec::new()
    }
    /// Tasks `pids` were renamed or exec'd in this tracing session: what
    /// describes them is stale (process_stats describes them again).
    fn on_renamed_pids(&mut self, _now_ns: u64, _pids: &[i32], _sink: &mut dyn PacketSink) {}
    /// Its counts so far.
    fn stats(&self) -> ProbeStats;
}

/// Why an instance could not be made.
#[derive(Debug, thiserror::Error)]
pub enum ProbeError {
    /// Its config does not decode.
    #[error(transparent)]
    Config(#[from] crate::procfs::config::ConfigError),
    /// Its `FtraceConfig` is not accepted.
    #[error(transparent)]
    Ftrace(crate::ftrace::config::FtraceConfigError),
    /// The `DataSourceConfig` itself does not decode.
    #[error("DataSourceConfig does not decode: {0}")]
    DataSourceConfig(protozero::DecodeError),
    /// The data source cannot run here (no tracefs, no permission, ...).
    #[error("{0}")]
    Unavailable(String),
}

/// A data source the probes serve: its name, and a probe per instance.
pub trait DataSource: Send + Sync {
    /// Its name, as the service and configs know it (`linux.sys_stats`).
    fn name(&self) -> &'static str;
    /// A probe for an instance whose `DataSourceConfig` is `config`.
    fn create(&self, config: &[u8], ctx: &ProbeContext) -> Result<Box<dyn Probe>, ProbeError>;
}
