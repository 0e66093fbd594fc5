//! `linux.ftrace` as a data source of the probes. Each started instance
//! resolves its `FtraceConfig` against the kernel's events, joins the
//! tracefs instance it names (sessions on one instance are merged by the
//! [`Controller`], whose last stop restores what the first start found),
//! and at every drain reads each CPU's raw ring-buffer pages once for all
//! sessions of that instance. Every session translates the same pages with
//! its own [`Translator`], built over the formats of its own events only,
//! so it writes the events it asked for and not another session's.
//! `ftrace_stats` packets open and close the data; where ftrace cannot be
//! had (no tracefs, no permission, a tracer in use) the opening one lists
//! every requested event as failed, the log says why, and the other data
//! sources go on.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::PathBuf;
use std::sync::{Arc, Mutex, MutexGuard};

use super::ds_config;
use super::probe::{DataSource, PacketSink, Probe, ProbeContext, ProbeError, ProbeStats};
use crate::ftrace::config::{EventSelection, EventSpec, FtraceOptions, refusal};
use crate::ftrace::cpu_reader::{CpuReader, CpuStats, StatsExtra, StatsPhase, write_ftrace_stats};
use crate::ftrace::ksyms::KernelSymbols;
use crate::ftrace::tracefs::{self, Controller, Instance};
use crate::ftrace::translate::{ClockSnapshot, ftrace_clock_of, has_typed_translation};
use crate::ftrace::watermark::{self, Watermark};
use crate::ftrace::{EventFormat, FormatTable, HeaderPage, Options, PageLayout, Translator};
use zerotrace_protos::upstream_tables::{
    data_source_field, interned_data_field, interned_string_field, packet_field,
};

/// The data source's name.
pub const NAME: &str = "linux.ftrace";

/// Sub-buffers read from one CPU per read call.
const READ_PAGES: usize = 64;

/// At most this many times the instance's buffer is read from one CPU in
/// one drain, so a CPU that writes as fast as we read cannot hold the
/// drain forever (what is left is read at the next one).
const DRAIN_ROUNDS: usize = 2;

/// How many read errors are logged in full.
const LOGGED_READ_ERRORS: u64 = 5;

/// A copy of every raw read: `(cpu, whole sub-buffers)` in read order.
pub type RawCopy = Arc<Mutex<Vec<(u32, Vec<u8>)>>>;

/// The `linux.ftrace` data source.
#[derive(Debug, Clone, Default)]
pub struct FtraceSource {
    tracefs: Option<PathBuf>,
    raw_copy: Option<RawCopy>,
    shared: Arc<Mutex<Shared>>,
}

impl FtraceSource {
    /// Ftrace of the running kernel: tracefs found (or mounted at
    /// `/sys/kernel/tracing`) when the first session starts.
    pub fn system() -> Self {
        FtraceSource::default()
    }

    /// Ftrace at the tracefs mount `root` (tests, or a mount elsewhere).
    pub fn at(root: impl Into<PathBuf>) -> Self {
        FtraceSource {
            tracefs: Some(root.into()),
            raw_copy: None,
            shared: Arc::default(),
        }
    }

    /// Also appends every raw read to `copy`, as read (for tests and tools
    /// that hold the pages against another decoder, such as trace-cmd).
    pub fn with_raw_copy(mut self, copy: RawCopy) -> Self {
        self.raw_copy = Some(copy);
        self
    }
}

impl DataSource for FtraceSource {
    fn name(&self) -> &'static str {
        NAME
    }

    fn create(&self, config: &[u8], ctx: &ProbeContext) -> Result<Box<dyn Probe>, ProbeError> {
        let bytes = ds_config::nested(config, data_source_field::FTRACE_CONFIG)?;
        let options = FtraceOptions::from_config(bytes).map_err(ProbeError::Ftrace)?;
        Ok(Box::new(FtraceProbe {
            source: self.clone(),
            ctx: ctx.clone(),
            options,
            run: None,
            next_drain: None,
            packets: 0,
            read_errors: 0,
        }))
    }
}

/// The sessions of every tracefs instance in use.
#[derive(Debug, Default)]
struct Shared {
    next_session: u64,
    /// By `instance_name` (`None`: the top level).
    instances: HashMap<Option<String>, Reader>,
}

/// One read of a CPU's ring buffer: the CPU and whole sub-buffers.
type RawRead = (u32, Arc<[u8]>);

/// One tracefs instance being read: its sessions, its per-CPU readers and
/// the raw reads each session has yet to translate.
#[derive(Debug)]
struct Reader {
    controller: Controller,
    cpus: Vec<CpuReader>,
    buf: Vec<u8>,
    /// Bytes of one CPU's whole buffer (bounds a drain).
    cpu_buffer_bytes: usize,
    pending: BTreeMap<u64, Vec<RawRead>>,
    raw_copy: Option<RawCopy>,
}

impl Reader {
    /// Reads every CPU's ready pages into each session's queue; the read
    /// errors met.
    fn drain(&mut self) -> Vec<String> {
        let mut errors = Vec::new();
        let cap = self.cpu_buffer_bytes.saturating_mul(DRAIN_ROUNDS);
        for reader in &mut self.cpus {
            let mut total = 0usize;
            while total < cap.max(self.buf.len()) {
                match reader.read_pages(&mut self.buf) {
                    Ok(0) => break,
                    Ok(n) => {
                        total += n;
                        let chunk: Arc<[u8]> = Arc::from(&self.buf[..n]);
                        let cpu = u32::try_from(reader.cpu()).unwrap_or(u32::MAX);
                        for q in self.pending.values_mut() {
                            q.push((cpu, chunk.clone()));
                        }
                        if let Some(copy) = &self.raw_copy {
                            copy.lock()
                                .unwrap_or_else(|e| e.into_inner())
                                .push((cpu, chunk.to_vec()));
                        }
                    }
                    Err(e) => {
                        errors.push(e.to_string());
                        break;
                    }
                }
            }
        }
        errors
    }
}

fn lock(m: &Mutex<Shared>) -> MutexGuard<'_, Shared> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// A started instance that records.
#[derive(Debug)]
struct Run {
    key: Option<String>,
    session: u64,
    instance: Instance,
    layout: PageLayout,
    translator: Translator,
    unknown: Vec<String>,
    failed: Vec<String>,
    cpus: Vec<usize>,
    /// `symbolize_ksyms`: the kernel's symbols and how many of the
    /// translator's address indices were written as interned names.
    ksyms: Option<Symbols>,
    /// The ring buffer's clock where it is not `boot` (`FtraceClock`):
    /// each read pass then snapshots it beside BOOTTIME.
    clock: Option<i32>,
    /// `drain_buffer_percent`: wakes the probes' thread when a CPU's
    /// buffer passes the watermark.
    watermark: Option<Watermark>,
}

/// The kernel symbols of a session and what of them was written.
#[derive(Debug)]
struct Symbols {
    table: KernelSymbols,
    /// Address indices (1-based, dense) already written.
    written: u32,
    /// Whether a packet cleared the sequence's incremental state.
    cleared: bool,
}

/// The drain period where `drain_buffer_percent` wakes the reader and the
/// config sets no period (upstream's tick while buffers are polled).
const WATCHED_DRAIN_PERIOD_MS: u32 = 1000;

/// Reads of the ftrace clock beside BOOTTIME per read pass, at most (the
/// tightest kept); fewer once one is tighter than [`CLOCK_TIGHT_NS`].
const CLOCK_TRIES: usize = 8;

/// A clock read this tight (BOOTTIME before and after the `stats` read)
/// puts the pair within half of it: no need to try again.
const CLOCK_TIGHT_NS: u64 = 10_000;

/// `TracePacket.SequenceFlags.SEQ_INCREMENTAL_STATE_CLEARED`.
const SEQ_INCREMENTAL_STATE_CLEARED: u64 = 1;
/// `TracePacket.SequenceFlags.SEQ_NEEDS_INCREMENTAL_STATE`.
const SEQ_NEEDS_INCREMENTAL_STATE: u64 = 2;

impl Symbols {
    /// After a bundle was written into `packet`: the names of the kernel
    /// addresses first seen in it, as `interned_data.kernel_symbols` of the
    /// same packet, and the sequence flags that make a reader keep them
    /// (the first such packet clears the sequence's incremental state).
    fn write_new(&mut self, packet: &mut protozero::Message<'_>, translator: &Translator) {
        let addrs = translator.kernel_addrs();
        let total = u32::try_from(addrs.len()).unwrap_or(u32::MAX);
        if total > self.written {
            let mut new: Vec<(u32, u64)> = addrs
                .iter()
                .filter(|&(_, &i)| i > self.written)
                .map(|(&a, &i)| (i, a))
                .collect();
            new.sort_unstable();
            {
                let mut data = packet.begin_nested(packet_field::INTERNED_DATA);
                for (iid, addr) in new {
                    // An address in no symbol keeps its bare index.
                    if let Some((name, _)) = self.table.lookup(addr) {
                        let mut sym = data.begin_nested(interned_data_field::KERNEL_SYMBOLS);
                        sym.append_varint(interned_string_field::IID, u64::from(iid));
                        sym.append_bytes(interned_string_field::STR, name.as_bytes());
                    }
                }
            }
            self.written = total;
            let mut flags = SEQ_NEEDS_INCREMENTAL_STATE;
            if !self.cleared {
                flags |= SEQ_INCREMENTAL_STATE_CLEARED;
                self.cleared = true;
            }
            packet.append_varint(packet_field::SEQUENCE_FLAGS, flags);
        } else if self.cleared {
            packet.append_varint(packet_field::SEQUENCE_FLAGS, SEQ_NEEDS_INCREMENTAL_STATE);
        }
    }
}

struct FtraceProbe {
    source: FtraceSource,
    ctx: ProbeContext,
    options: FtraceOptions,
    run: Option<Run>,
    next_drain: Option<u64>,
    packets: u64,
    read_errors: u64,
}

/// `group/name` (or the spec as written) of every requested event.
fn requested(options: &FtraceOptions) -> Vec<String> {
    let mut out: Vec<String> = options
        .events
        .iter()
        .map(|s| match s {
            EventSpec::Event { group, name } => format!("{group}/{name}"),
            EventSpec::Group(g) => format!("{g}/*"),
            EventSpec::Bare(n) => n.clone(),
        })
        .collect();
    out.extend(options.atrace_categories.iter().cloned());
    out
}

/// `MemTotal` of `/proc/meminfo`, bytes.
fn ram_bytes(ctx: &ProbeContext) -> Option<u64> {
    let text = ctx.root.read_text("proc/meminfo").ok()?;
    let line = text.lines().find(|l| l.starts_with("MemTotal:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    kb.checked_mul(1024)
}

impl FtraceProbe {
    fn log(&self, line: &str) {
        (self.ctx.log)(&format!("{NAME}: {line}"));
    }

    fn read_error(&mut self, what: &str) {
        self.read_errors = self.read_errors.saturating_add(1);
        if self.read_errors <= LOGGED_READ_ERRORS {
            self.log(what);
        }
    }

    fn cpu_stats(&mut self) -> Vec<(usize, CpuStats)> {
        let Some(run) = &self.run else {
            return Vec::new();
        };
        let mut out = Vec::new();
        let mut errors = Vec::new();
        for &cpu in &run.cpus {
            match CpuStats::read(run.instance.dir(), cpu) {
                Ok(s) => out.push((cpu, s)),
                Err(e) => errors.push(e.to_string()),
            }
        }
        for e in errors {
            self.read_error(&e);
        }
        out
    }

    /// Reads what the kernel has and writes this session's bundles.
    fn drain(&mut self, sink: &mut dyn PacketSink) {
        let Some(run) = &self.run else { return };
        let (errors, chunks) = {
            let mut shared = lock(&self.source.shared);
            match shared.instances.get_mut(&run.key) {
                Some(reader) => {
                    let errors = reader.drain();
                    let chunks = reader
                        .pending
                        .get_mut(&run.session)
                        .map(std::mem::take)
                        .unwrap_or_default();
                    (errors, chunks)
                }
                None => (Vec::new(), Vec::new()),
            }
        };
        for e in errors {
            self.read_error(&e);
        }
        if chunks.is_empty() {
            return;
        }
        let snapshot = self.clock_snapshot();
        if let Some(run) = self.run.as_mut() {
            run.translator.set_clock_snapshot(snapshot);
        }
        for (cpu, bytes) in chunks {
            self.translate(cpu, &bytes, sink);
        }
    }

    /// Where the instance's clock is not `boot`: its reading (cpu0's
    /// `now ts`) and BOOTTIME's, taken together once per read pass, for
    /// every bundle of the pass (as upstream's probes write them).
    /// BOOTTIME is read on both sides of the file read and the middle
    /// taken; of up to [`CLOCK_TRIES`] tries the tightest pair is kept, so
    /// that a preempted read does not skew the conversion.
    fn clock_snapshot(&mut self) -> Option<ClockSnapshot> {
        let run = self.run.as_ref()?;
        let clock = run.clock?;
        let mut best: Option<(u64, ClockSnapshot)> = None;
        let mut failure = None;
        for _ in 0..CLOCK_TRIES {
            let before = (self.ctx.clock)();
            let stats = CpuStats::read(run.instance.dir(), 0);
            let after = (self.ctx.clock)();
            match stats {
                Ok(CpuStats {
                    now_ts: Some(secs), ..
                }) => {
                    let window = after.saturating_sub(before);
                    let snap = ClockSnapshot {
                        clock,
                        ftrace_ts: (secs * 1e9).round() as i64,
                        boot_ts: before.saturating_add(window / 2) as i64,
                    };
                    if best.is_none_or(|(w, _)| window < w) {
                        best = Some((window, snap));
                    }
                    if window < CLOCK_TIGHT_NS {
                        break;
                    }
                }
                Ok(_) => failure = Some("cpu0/stats has no \"now ts\"".to_owned()),
                Err(e) => failure = Some(e.to_string()),
            }
        }
        if let Some((_, snap)) = best {
            return Some(snap);
        }
        // As upstream: the clock said, the pair zero (no conversion).
        if let Some(e) = failure {
            self.read_error(&format!("the ftrace clock's offset to BOOTTIME: {e}"));
        }
        Some(ClockSnapshot {
            clock,
            ftrace_ts: 0,
            boot_ts: 0,
        })
    }

    fn translate(&mut self, cpu: u32, bytes: &[u8], sink: &mut dyn PacketSink) {
        let Some(run) = self.run.as_mut() else { return };
        let mut pages = Vec::new();
        let mut bad = Vec::new();
        for p in run.layout.pages(bytes) {
            match p {
                Ok(p) => pages.push(p),
                Err(e) => {
                    run.translator.note_page_error(&e);
                    bad.push(format!("cpu{cpu}: page skipped: {e}"));
                }
            }
        }
        let mut rest = &pages[..];
        let mut written = 0u64;
        while !rest.is_empty() {
            let mut taken = 0;
            let translator = &mut run.translator;
            let ksyms = &mut run.ksyms;
            sink.write_packet(&mut |p| {
                taken = translator.write_bundle(p, cpu, rest);
                if let Some(k) = ksyms.as_mut() {
                    k.write_new(p, translator);
                }
            });
            written += 1;
            // write_bundle takes at least one page; guard all the same.
            rest = &rest[taken.clamp(1, rest.len())..];
        }
        self.packets = self.packets.saturating_add(written);
        for e in bad {
            self.read_error(&e);
        }
    }

    /// Leaves the instance: the last session restores it.
    fn leave(&mut self) {
        let Some(run) = &self.run else { return };
        let mut shared = lock(&self.source.shared);
        let mut result = None;
        if let Some(reader) = shared.instances.get_mut(&run.key) {
            reader.pending.remove(&run.session);
            result = Some(reader.controller.stop(run.session));
            if reader.controller.sessions().is_idle() {
                shared.instances.remove(&run.key);
            }
        }
        drop(shared);
        if let Some(Err(e)) = result {
            self.log(&format!("restoring the instance: {e}"));
        }
    }

    fn is_last_session(&self) -> bool {
        let Some(run) = &self.run else { return false };
        let shared = lock(&self.source.shared);
        shared
            .instances
            .get(&run.key)
            .is_some_and(|r| r.pending.len() == 1)
    }
}

impl Probe for FtraceProbe {
    fn start(&mut self, now_ns: u64, sink: &mut dyn PacketSink) {
        match self.setup() {
            Ok(mut run) => {
                if self.options.symbolize_ksyms {
                    match KernelSymbols::read(&self.ctx.root.path("proc/kallsyms")) {
                        Ok(table) => {
                            run.ksyms = Some(Symbols {
                                table,
                                written: 0,
                                cleared: false,
                            })
                        }
                        Err(e) => self.read_error(&format!("kallsyms: {e}")),
                    }
                }
                self.run = Some(run);
                self.next_drain = Some(now_ns.saturating_add(self.drain_ns()));
                let cpus = self.cpu_stats();
                let Some(run) = &self.run else { return };
                let atrace = self.options.atrace_error();
                // As upstream: the start says the buffer was kept, so that
                // a reader keeps the events from before the start.
                let preserve = self.options.preserve_ftrace_buffer;
                sink.write_packet(&mut |p| {
                    write_ftrace_stats(
                        p,
                        now_ns,
                        StatsPhase::Start,
                        &cpus,
                        &StatsExtra {
                            atrace_errors: atrace,
                            unknown_ftrace_events: &run.unknown,
                            failed_ftrace_events: &run.failed,
                            preserve_ftrace_buffer: preserve,
                            ..StatsExtra::default()
                        },
                    )
                });
                self.packets += 1;
            }
            Err(why) => {
                self.log(&format!("not recording: {why}"));
                // Why, then every event asked for: the trace says both.
                let mut failed = vec![format!("linux.ftrace not recording: {why}")];
                failed.extend(self.options.refused.iter().map(|f| refusal(f)));
                failed.extend(requested(&self.options));
                sink.write_packet(&mut |p| {
                    write_ftrace_stats(
                        p,
                        now_ns,
                        StatsPhase::Start,
                        &[],
                        &StatsExtra {
                            failed_ftrace_events: &failed,
                            ..StatsExtra::default()
                        },
                    )
                });
                self.packets += 1;
            }
        }
    }

    fn next_deadline(&self) -> Option<u64> {
        // A buffer past its watermark is read now.
        let ready = self
            .run
            .as_ref()
            .and_then(|r| r.watermark.as_ref())
            .is_some_and(Watermark::is_ready);
        if ready { Some(0) } else { self.next_drain }
    }

    fn poll(&mut self, now_ns: u64, sink: &mut dyn PacketSink) {
        let Some(run) = &self.run else {
            self.next_drain = None;
            return;
        };
        let woken = run.watermark.as_ref().is_some_and(Watermark::take_ready);
        let due = self.next_drain.is_some_and(|d| d <= now_ns);
        self.drain(sink);
        if due || !woken {
            self.next_drain = Some(now_ns.saturating_add(self.drain_ns()));
        }
    }

    fn stop(&mut self, now_ns: u64, sink: &mut dyn PacketSink) {
        let Some(run) = self.run.as_mut() else {
            return;
        };
        // No more wake-ups; the pipes it watched close with it.
        run.watermark = None;
        if self.is_last_session() {
            // Nothing more is recorded for anyone: stop the kernel writing
            // before the last read, so the end stats match what was read.
            if let Some(run) = &self.run {
                if let Err(e) = run.instance.write("tracing_on", "0") {
                    self.log(&format!("tracing_on: {e}"));
                }
            }
        }
        self.drain(sink);
        let cpus = self.cpu_stats();
        if let Some(run) = &self.run {
            let parse_errors = run.translator.parse_errors();
            sink.write_packet(&mut |p| {
                write_ftrace_stats(
                    p,
                    now_ns,
                    StatsPhase::End,
                    &cpus,
                    &StatsExtra {
                        kernel_symbols_parsed: run
                            .ksyms
                            .as_ref()
                            .map(|k| u32::try_from(k.table.len()).unwrap_or(u32::MAX)),
                        kernel_symbols_mem_kb: run.ksyms.as_ref().map(|k| k.table.mem_kb()),
                        unknown_ftrace_events: &run.unknown,
                        failed_ftrace_events: &run.failed,
                        parse_errors: &parse_errors,
                        ..StatsExtra::default()
                    },
                )
            });
            self.packets += 1;
            let s = run.translator.stats();
            if s.unknown_ids + s.short_records + s.bad_fields + s.page_errors > 0 {
                self.log(&format!(
                    "skipped: {} records of unknown ids, {} short records, {} fields, {} page ends",
                    s.unknown_ids, s.short_records, s.bad_fields, s.page_errors
                ));
            }
        }
        self.leave();
        self.run = None;
        self.next_drain = None;
    }

    fn flush(&mut self, _now_ns: u64, sink: &mut dyn PacketSink) {
        // What the kernel holds up to now goes into the trace before the
        // flush is answered.
        self.drain(sink);
    }

    fn take_seen_pids(&mut self) -> Vec<i32> {
        self.run
            .as_mut()
            .map(|r| r.translator.take_pids())
            .unwrap_or_default()
    }

    fn take_renamed_pids(&mut self) -> Vec<i32> {
        self.run
            .as_mut()
            .map(|r| r.translator.take_renamed_pids())
            .unwrap_or_default()
    }

    fn stats(&self) -> ProbeStats {
        ProbeStats {
            packets: self.packets,
            read_errors: self.read_errors,
            skipped_polls: 0,
        }
    }
}

impl FtraceProbe {
    fn drain_ns(&self) -> u64 {
        let watched = self.run.as_ref().is_some_and(|r| r.watermark.is_some());
        let ms = if watched && !self.options.drain_period_set {
            // The watermark reads in time; the period only backs it up.
            WATCHED_DRAIN_PERIOD_MS
        } else {
            self.options.drain_period_ms
        };
        u64::from(ms).saturating_mul(1_000_000)
    }
}

impl Drop for FtraceProbe {
    /// An instance dropped without a stop (its connection was lost) still
    /// gives the tracefs instance back.
    fn drop(&mut self) {
        self.leave();
    }
}

#[path = "ftrace_setup.rs"]
mod setup;
