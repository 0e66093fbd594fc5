//! The profiler's thread for one session (heapprofd's unwinding worker
//! and bookkeeping): it takes the hook's records in order (from the
//! in-process queue, or from a preloaded client's shared ring in the
//! helper process: a [`RecordSource`]),
//! unwinds each sampled allocation's stack copy (DWARF CFI through
//! `zerotrace-unwind`, as the CPU profiler does), interns the callstack,
//! keeps the books, and writes a dump on every continuous-dump tick and at
//! the end. Its own allocations are never recorded, and guardrails
//! (`max_heapprofd_memory_kb`, `max_heapprofd_cpu_secs`) stop the profile
//! with `hit_guardrail` in its last dump.

use std::collections::HashMap;

use rustc_hash::FxBuildHasher;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use zerotrace_unwind::{Frame, StackCopy, UnwindErrorKind, UnwindMode, Unwinder, UserRegs};

use super::allocator::{current_interval, deactivate, exclude_this_thread, is_active, own_bytes};
use super::config::HeapConfig;
use super::dump::{ClientError, DumpSample, DumpStats, DumpWriter, ProcessHeader};
use super::heap_table::HeapTable;
use super::live_blocks::StackId;
use super::record_queue::{Overrun, QUEUE, Record};
use super::session_link::SessionLink;
use zerotrace_profiling::PacketSink;
use zerotrace_profiling::frame_desc::{error_frame, frame_desc};
use zerotrace_profiling::guardrail::MemoryGuardrail;
use zerotrace_profiling::intern::{FrameDesc, Interner};

/// How often the thread takes the queue's records when none come.
pub(crate) const DRAIN_PERIOD: Duration = Duration::from_millis(5);

/// While records come, the thread drains again at once; after the last
/// came, every `BUSY_DRAIN_PERIOD` for `BUSY_DRAINS` drains (a client
/// producing faster than a `DRAIN_PERIOD` would fill its ring, and wait).
const BUSY_DRAIN_PERIOD: Duration = Duration::from_micros(100);
const BUSY_DRAINS: u32 = 50;

/// What the data source and the thread share.
#[derive(Debug, Default)]
pub(crate) struct Control {
    /// Set by the data source's stop: drain, dump, flush, end.
    pub stop: AtomicBool,
    /// Set by a flush request.
    pub flush: AtomicBool,
    /// Set when the process is going away: the last dump says so.
    pub disconnected: AtomicBool,
}

/// One session's books.
pub(crate) struct Books {
    pid: u32,
    heap_name: String,
    orig_interval: u64,
    skip_symbol_prefix: Vec<String>,
    dump_at_max: bool,
    unwinder: Unwinder,
    interner: Interner,
    table: HeapTable,
    /// Callstack iids by the table's stack id.
    iids: Vec<u64>,
    stack_ids: HashMap<u64, u32, FxBuildHasher>,
    stats: DumpStats,
    from_startup: bool,
    /// The client went away: the last dump says so.
    pub(crate) disconnected: bool,
    /// Unwinding time histogram: count per power-of-two bucket of us.
    hist: [u64; 21],
    /// A guardrail stopped the profile: the last dump says so.
    pub(crate) hit_guardrail: bool,
    /// Interned frames by pc as unwound (and whether past the first
    /// frame), and whether each is the profiler's own (cleared when the
    /// process's maps are read again).
    pc_frames: HashMap<(u64, bool), (u64, bool), FxBuildHasher>,
    /// The table's stack ids by the unwind's pcs and error (cleared when
    /// the maps are read again, or when it holds `MAX_CACHED_STACKS`).
    stacks: HashMap<Box<[u64]>, StackId, FxBuildHasher>,
    /// Recycled buffers: a callstack's pcs, its frame ids.
    pcs: Vec<u64>,
    ids: Vec<u64>,
    /// Allocations still to take before the next one is timed.
    untimed: u64,
}

/// One allocation in `TIMED_EVERY` has its unwinding timed, and counts for
/// that many in `unwinding_time_us` and `total_unwinding_time_us` (two
/// clock reads a sample would be a tenth of what the books cost now).
const TIMED_EVERY: u64 = 16;

/// The most callstacks [`Books`] remembers by their pcs (about 100 bytes
/// each): past it, it starts over.
const MAX_CACHED_STACKS: usize = 1 << 15;

/// A sampled allocation's registers and stack copy.
pub(crate) struct SampleStack<'a> {
    /// The registers at the hook.
    pub regs: UserRegs,
    /// The stack from `regs.sp` up.
    pub copy: StackCopy<'a>,
    /// The copy filled its maximum (the stack was probably cut).
    pub maxed: bool,
}

impl Books {
    /// Books for a session of process `pid`'s heap `heap_name`.
    pub(crate) fn new(
        pid: u32,
        heap_name: &str,
        cfg: &HeapConfig,
        interval: u64,
        from_startup: bool,
    ) -> Books {
        Books {
            pid,
            heap_name: heap_name.to_owned(),
            orig_interval: interval,
            skip_symbol_prefix: cfg.skip_symbol_prefix.clone(),
            dump_at_max: cfg.dump_at_max,
            unwinder: Unwinder::new(),
            interner: Interner::new(),
            table: HeapTable::new(),
            iids: Vec::new(),
            stack_ids: HashMap::with_hasher(FxBuildHasher),
            stats: DumpStats::default(),
            from_startup,
            disconnected: false,
            hist: [0; 21],
            hit_guardrail: false,
            pc_frames: HashMap::with_hasher(FxBuildHasher),
            stacks: HashMap::with_hasher(FxBuildHasher),
            pcs: Vec::new(),
            ids: Vec::new(),
            untimed: 0,
        }
    }

    /// The profiled process.
    #[cfg_attr(zerotrace_loom, allow(dead_code))]
    pub(crate) fn pid(&self) -> u32 {
        self.pid
    }

    /// Takes one record: its stack buffer, to be handed back for reuse,
    /// and, when a live sampled block left the books, its address, to be
    /// released from the hook's filter.
    pub(crate) fn take(&mut self, rec: Record) -> (Option<Vec<u8>>, Option<u64>) {
        match rec {
            Record::Alloc(a) => {
                let stack = a.stack.as_ref().map(|c| SampleStack {
                    regs: UserRegs {
                        ip: c.ip,
                        sp: c.sp,
                        bp: c.bp,
                    },
                    copy: StackCopy::new(c.sp, &c.stack),
                    maxed: c.maxed,
                });
                let left = self.alloc(a.addr, a.sample_size, stack);
                (a.stack.map(|c| c.stack), left.then_some(a.addr))
            }
            Record::Free { addr } => (None, self.free(addr).then_some(addr)),
        }
    }

    /// A sampled allocation of `sample_size` bytes at `addr`, with its
    /// thread's registers and stack if captured; whether a live sampled
    /// block left the books (one whose address was reused without its
    /// free).
    pub(crate) fn alloc(
        &mut self,
        addr: u64,
        sample_size: u64,
        stack: Option<SampleStack<'_>>,
    ) -> bool {
        let reused = self.table.stats().unmatched_reuse;
        let timed = self.untimed == 0;
        self.untimed = if timed {
            TIMED_EVERY - 1
        } else {
            self.untimed - 1
        };
        let started = timed.then(Instant::now);
        let id = self.stack_id(stack);
        if let Some(started) = started {
            let us = started.elapsed().as_micros() as u64;
            self.stats.total_unwinding_time_us += us * TIMED_EVERY;
            let bucket = (64 - us.leading_zeros() as usize).min(self.hist.len() - 1);
            self.hist[bucket] += TIMED_EVERY;
        }
        self.table.on_alloc(addr, sample_size, id);
        self.table.stats().unmatched_reuse != reused
    }

    /// The free of a sampled block's address; whether a live sampled block
    /// left the books.
    pub(crate) fn free(&mut self, addr: u64) -> bool {
        self.table.on_free(addr)
    }

    /// The table's id of the allocation's callstack. The unwind gives the
    /// frames' pcs only; a callstack seen before (same pcs, same error)
    /// costs one lookup, and a new one has its frames described (a pc seen
    /// before costs one lookup: its frame's mapping and symbol are made
    /// once), until the process's maps are read again.
    fn stack_id(&mut self, stack: Option<SampleStack<'_>>) -> StackId {
        let mut pcs = std::mem::take(&mut self.pcs);
        let error = match &stack {
            None => {
                pcs.clear();
                UnwindErrorKind::InvalidParameter
            }
            Some(s) => {
                let u = self.unwinder.unwind_pcs(
                    self.pid,
                    s.regs,
                    &s.copy,
                    s.maxed,
                    UnwindMode::Dwarf,
                    &mut pcs,
                );
                if u.maps_reread {
                    self.stats.map_reparses += 1;
                    self.pc_frames.clear();
                    self.stacks.clear();
                }
                u.error
            }
        };
        if error != UnwindErrorKind::None {
            self.stats.unwinding_errors += 1;
        }
        // The key: the pcs, then the error (the same pcs may end either way).
        pcs.push(error as u64);
        let id = match self.stacks.get(pcs.as_slice()) {
            Some(&id) => id,
            None => {
                let id = self.intern_stack(&pcs[..pcs.len() - 1], error);
                if self.stacks.len() >= MAX_CACHED_STACKS {
                    self.stacks.clear();
                }
                self.stacks.insert(pcs.clone().into_boxed_slice(), id);
                id
            }
        };
        self.pcs = pcs;
        id
    }

    /// Interns the callstack of `pcs` (leaf first, as the unwind gave
    /// them) ended by `error`: the profiler's own frames at the leaf left
    /// out, upstream's `ERROR` frame last when unwinding failed, stored root
    /// first as the trace stores callstacks.
    fn intern_stack(&mut self, pcs: &[u64], error: UnwindErrorKind) -> StackId {
        let mut ids = std::mem::take(&mut self.ids);
        ids.clear();
        let mut own = true;
        for (i, &pc) in pcs.iter().enumerate() {
            let key = (pc, i > 0);
            let (iid, profiler) = match self.pc_frames.get(&key) {
                Some(&known) => known,
                None => {
                    let f = self.unwinder.frame_of(self.pid, pc, i > 0);
                    let d = self.describe(&f);
                    let profiler = d.function.as_deref().is_some_and(is_profiler_frame);
                    let known = (self.interner.frame(&d), profiler);
                    self.pc_frames.insert(key, known);
                    known
                }
            };
            if own && profiler {
                continue;
            }
            own = false;
            ids.push(iid);
        }
        ids.extend(error_frame(error).map(|d| self.interner.frame(&d)));
        ids.reverse();
        let iid = self.interner.callstack_of(&ids);
        self.ids = ids;
        *self.stack_ids.entry(iid).or_insert_with(|| {
            self.iids.push(iid);
            (self.iids.len() - 1) as u32
        })
    }

    fn describe(&mut self, f: &Frame) -> FrameDesc {
        let skip = f.mapping.as_ref().is_some_and(|m| {
            let path = String::from_utf8_lossy(&m.mapping.name);
            self.skip_symbol_prefix
                .iter()
                .any(|p| path.starts_with(p.as_str()))
        });
        let function = if skip {
            None
        } else {
            self.unwinder.symbolize(self.pid, f).map(|s| s.name)
        };
        frame_desc(f, function)
    }

    /// Writes a dump of the books as they stand.
    pub(crate) fn dump(
        &mut self,
        sink: &mut dyn PacketSink,
        writer: &mut DumpWriter,
        client: ClientStatus,
    ) {
        let now = zerotrace_core::platform::boottime_ns();
        let books_at = monotonic_coarse_ns();
        let ClientStatus {
            overrun,
            blocked_ns,
            interval,
            corrupted,
        } = client;
        let mut stats = self.stats.clone();
        stats.heap_samples = self.table.stats().heap_samples;
        stats.client_spinlock_blocked_us = blocked_ns / 1000;
        stats.unwinding_time_us = self
            .hist
            .iter()
            .enumerate()
            .filter(|(_, c)| **c > 0)
            .map(|(i, c)| {
                let limit = (i + 1 < self.hist.len()).then(|| 1u64 << i);
                (limit, *c)
            })
            .collect();
        let header = ProcessHeader {
            pid: u64::from(self.pid),
            timestamp: books_at,
            from_startup: self.from_startup,
            disconnected: self.disconnected,
            buffer_overran: overrun.is_some(),
            client_error: match overrun {
                Some(Overrun::Timeout) => ClientError::HitTimeout,
                _ => ClientError::None,
            },
            buffer_corrupted: corrupted,
            hit_guardrail: self.hit_guardrail,
            heap_name: self.heap_name.clone(),
            sampling_interval_bytes: interval,
            orig_sampling_interval_bytes: self.orig_interval,
            stats,
        };
        let g = self.table.peak_gen();
        let samples: Vec<DumpSample> = self
            .table
            .totals()
            .map(|(id, t)| DumpSample {
                callstack_iid: self.iids[id as usize],
                allocated: t.allocated,
                freed: t.freed,
                alloc_count: t.alloc_count,
                free_count: t.free_count,
                at_max: self.dump_at_max.then(|| t.at_peak(g).0),
            })
            .collect();
        writer.dump(sink, now, &header, &samples, &mut self.interner);
    }
}

/// Whether a frame is the profiler's own (the hook's frames at the leaf).
fn is_profiler_frame(name: &str) -> bool {
    name.contains("zerotrace_heap_profile::")
}

/// What the client side says of itself in a dump's header.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct ClientStatus {
    /// Why the client stopped queueing, if it did.
    pub overrun: Option<Overrun>,
    /// Nanoseconds allocating threads waited for room.
    pub blocked_ns: u64,
    /// The sampling interval in force (adaptive sampling may raise it).
    pub interval: u64,
    /// The records could not be read (the profile stopped there).
    pub corrupted: bool,
}

/// Where a session's records come from: the in-process queue
/// ([`QueueSource`]) or a preloaded client's shared ring (the helper
/// process's source).
pub(crate) trait RecordSource {
    /// Called once on the profiler's thread before the first record.
    fn on_thread_start(&mut self) {}
    /// Hands every pending record of the session to `books`, in order;
    /// whether the thread should come back at once (records came, and
    /// draining again soon costs the client nothing).
    fn drain_into(&mut self, books: &mut Books) -> bool;
    /// The client's side of the dump's header.
    fn status(&self) -> ClientStatus;
    /// Bytes the profiler holds for the guardrail: its own heap and the
    /// records waiting.
    fn held_bytes(&self) -> u64;
    /// Stops the client sampling (a guardrail was hit).
    fn stop_sampling(&mut self);
    /// Whether the session is over on the client's side (its hook stopped
    /// and nothing of it is left to take).
    fn finished(&self) -> bool;
    /// The session's connection to the service is gone: the client stops
    /// sampling for it, and no thread stays waiting for room.
    fn end_lost(&mut self) {
        self.stop_sampling();
    }
}

/// The in-process queue of a [`HeapProfiler`](super::HeapProfiler)'s hook.
pub(crate) struct QueueSource {
    /// The session whose records are taken.
    pub session: u32,
}

impl RecordSource for QueueSource {
    fn on_thread_start(&mut self) {
        exclude_this_thread();
    }

    fn drain_into(&mut self, books: &mut Books) -> bool {
        let records = {
            let mut q = QUEUE.lock();
            if q.session == self.session {
                q.drain()
            } else {
                Default::default()
            }
        };
        let (mut buffers, mut released) = (Vec::new(), Vec::new());
        for r in records {
            let (buffer, left) = books.take(r);
            buffers.extend(buffer);
            released.extend(left);
        }
        if !buffers.is_empty() || !released.is_empty() {
            let mut q = QUEUE.lock();
            q.give_back(buffers);
            q.release(self.session, released);
        }
        // The queue's lock is the hook's: the thread keeps to its period
        // rather than contend for it with the allocating threads.
        false
    }

    fn status(&self) -> ClientStatus {
        let q = QUEUE.lock();
        ClientStatus {
            overrun: if q.session == self.session {
                q.overrun
            } else {
                None
            },
            blocked_ns: q.blocked_ns,
            interval: current_interval(),
            corrupted: false,
        }
    }

    fn held_bytes(&self) -> u64 {
        own_bytes() + QUEUE.lock().pending_bytes() as u64
    }

    fn stop_sampling(&mut self) {
        deactivate();
    }

    fn finished(&self) -> bool {
        !is_active() && QUEUE.lock().session != self.session
    }

    fn end_lost(&mut self) {
        deactivate();
        let mut q = QUEUE.lock();
        if q.session == self.session {
            // A thread waiting for room (block_client) is refused now.
            q.end();
        }
    }
}

/// The thread's loop: take records every [`DRAIN_PERIOD`], dump on
/// schedule, stop on `ctl.stop` (taking what is left first), a guardrail
/// or the client's end; the last dump, then a flush of the sink. When the
/// connection the session came on is gone (`link`), the client stops and
/// the thread ends with no last dump: its instance went with the
/// connection, and so did the buffer a dump would go to.
pub(crate) fn run(
    ctl: Arc<Control>,
    mut books: Books,
    cfg: HeapConfig,
    sink: &mut dyn PacketSink,
    source: &mut dyn RecordSource,
    link: &SessionLink,
) {
    source.on_thread_start();
    let mut writer = DumpWriter::new();
    writer.start(sink, zerotrace_core::platform::boottime_ns());
    let started = Instant::now();
    let cpu_start = thread_cpu_time();
    let mut next_dump = cfg
        .continuous_dump
        .map(|(phase, _)| started + Duration::from_millis(u64::from(phase)));
    // Drains since records last came: the thread comes back at once while
    // they come, soon for a while after, then every DRAIN_PERIOD.
    let mut quiet = u32::MAX;
    loop {
        let stopping = ctl.stop.load(Ordering::Acquire);
        quiet = if source.drain_into(&mut books) {
            0
        } else {
            quiet.saturating_add(1)
        };
        if link.gone() {
            source.end_lost();
            return;
        }
        if stopping {
            books.disconnected = ctl.disconnected.load(Ordering::Acquire);
            break;
        }
        if guardrail_hit(&cfg, cpu_start, || source.held_bytes()) {
            books.hit_guardrail = true;
            source.stop_sampling();
            break;
        }
        if let (Some(at), Some((_, every))) = (next_dump, cfg.continuous_dump) {
            if Instant::now() >= at {
                books.dump(sink, &mut writer, source.status());
                next_dump = Some(at + Duration::from_millis(u64::from(every)));
            }
        }
        if ctl.flush.swap(false, Ordering::AcqRel) {
            sink.flush();
        }
        if source.finished() {
            break;
        }
        match quiet {
            0 => {}
            q if q < BUSY_DRAINS => std::thread::sleep(BUSY_DRAIN_PERIOD),
            _ => std::thread::sleep(DRAIN_PERIOD),
        }
    }
    books.dump(sink, &mut writer, source.status());
    sink.flush();
}

/// Whether `max_heapprofd_memory_kb` (against `held` bytes) or
/// `max_heapprofd_cpu_secs` (this thread's CPU time) is passed.
fn guardrail_hit(
    cfg: &HeapConfig,
    cpu_start: Option<Duration>,
    held: impl FnOnce() -> u64,
) -> bool {
    let memory = MemoryGuardrail::new(cfg.max_memory_kb);
    if !memory.is_off() && memory.is_passed_by(held() / 1024) {
        return true;
    }
    if cfg.max_cpu_secs > 0 {
        if let (Some(start), Some(now)) = (cpu_start, thread_cpu_time()) {
            return now.saturating_sub(start).as_secs() >= cfg.max_cpu_secs;
        }
    }
    false
}

/// `CLOCK_MONOTONIC_COARSE` in nanoseconds: the clock of a dump's
/// `ProcessHeapSamples.timestamp`, as heapprofd stamps it (the packet
/// itself stays on BOOTTIME), and the clock Perfetto's trace processor
/// converts it from.
fn monotonic_coarse_ns() -> u64 {
    let t = rustix::time::clock_gettime(rustix::time::ClockId::MonotonicCoarse);
    (t.tv_sec as u64)
        .saturating_mul(1_000_000_000)
        .saturating_add(t.tv_nsec as u64)
}

/// This thread's CPU time.
fn thread_cpu_time() -> Option<Duration> {
    let t = rustix::time::clock_gettime(rustix::time::ClockId::ThreadCPUTime);
    Some(Duration::new(
        u64::try_from(t.tv_sec).ok()?,
        u32::try_from(t.tv_nsec).ok()?,
    ))
}

#[cfg(all(test, not(miri)))]
mod tests {
    use super::*;
    use zerotrace_profiling::BufferSink;
    use zerotrace_protos::protos::TracePacketDecoder;

    #[test]
    fn a_dumps_process_timestamp_is_on_monotonic_coarse_and_its_packet_on_boottime() {
        // sampling_interval_bytes (field 1): 4096.
        let cfg = HeapConfig::parse(&[0x08, 0x80, 0x20]).unwrap();
        let mut books = Books::new(7, "libc.malloc", &cfg, 4096, false);
        let mut sink = BufferSink::default();
        let mut writer = DumpWriter::new();
        let coarse_before = monotonic_coarse_ns();
        let boot_before = zerotrace_core::platform::boottime_ns();
        books.dump(&mut sink, &mut writer, ClientStatus::default());
        let coarse_after = monotonic_coarse_ns();
        let boot_after = zerotrace_core::platform::boottime_ns();
        let (packet_ts, dump_ts) = sink
            .packets
            .iter()
            .find_map(|b| {
                let p = TracePacketDecoder::new(b);
                let d = p.profile_packet()?.process_dumps().next()?;
                Some((p.timestamp().unwrap(), d.timestamp().unwrap()))
            })
            .expect("a process dump");
        assert!((boot_before..=boot_after).contains(&packet_ts));
        assert!(
            (coarse_before..=coarse_after).contains(&dump_ts),
            "{dump_ts} not in MONOTONIC_COARSE [{coarse_before}, {coarse_after}]"
        );
    }
}
