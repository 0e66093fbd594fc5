//! The profiler's side of a preloaded library's heap profile: a helper
//! process forked when the library loads (as heapprofd on Linux forks
//! itself off a preloaded process), so that the profiled program starts
//! no thread of its own. The helper is the producer (data source
//! `android.heapprofd`, heap `libc.malloc`) on the standard socket; when
//! a session names the program it sets up the shared ring and turns the
//! client's sampling on (`client.rs`), and its profiler thread takes the
//! ring's records, unwinds each stack copy against the program's own
//! mappings (`/proc/PID/maps` and its ELF files), keeps the books and
//! writes the dumps (`worker.rs`). It goes when the program does (a
//! pidfd, and a pipe the program holds that closes on `exec`), after the
//! last dump, marked `disconnected`. When the service goes away or
//! restarts, the session of the lost connection ends (sampling stops, no
//! thread of the program waits for room) and the helper stays, as
//! heapprofd's central mode does: its producer reconnects and registers
//! the data source again, so a session of the new service profiles the
//! program.

use std::os::fd::{FromRawFd, OwnedFd};
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use super::config::{HEAPPROFD_DATA_SOURCE, MAX_SHMEM_SIZE};
use super::data_source::admit;
use super::dump::DumpWriter;
use super::forked::{CONNECT_TRY, keep_only, program_gone, quiet_stdio};
use super::record_queue::Overrun;
use super::session_link::SessionLink;
use super::shared_ring::{
    CONTROL_BYTES, Control, FreeFilter, LaggedReleases, OVERRUN_CORRUPT, OVERRUN_FULL,
    OVERRUN_TIMEOUT, RING_OFFSET, RingReader, RingRecord, SESSION_MASK, close, close_session, open,
    word_pos, writers_done,
};
use super::worker::{
    Books, ClientStatus, Control as WorkerControl, RecordSource, SampleStack, run,
};
use zerotrace_core::ipc::{Endpoint, producer_socket_name};
use zerotrace_core::producer::{
    DataSourceEvent, DataSourceSpec, Instance, ProducerClient, ProducerClientError, ProducerOptions,
};
use zerotrace_profiling::PacketSink;
use zerotrace_profiling::guardrail::anon_and_swap_kb;
use zerotrace_unwind::UserRegs;

/// The shared mapping's size: the control block's page, the free filter,
/// and a ring as large as `shmem_size_bytes` may ask (reserved, not
/// committed: pages are backed only where a session's ring reaches).
pub(crate) const MAPPING_BYTES: usize = RING_OFFSET + MAX_SHMEM_SIZE as usize;

/// How long the last dump may take at the program's exit.
const EXIT_FLUSH_TIMEOUT: Duration = Duration::from_secs(2);
/// How long a new session waits for the client's threads to commit the
/// frames they reserved.
const QUIESCE_TIMEOUT: Duration = Duration::from_secs(1);

/// Why the helper did not start.
#[derive(Debug, thiserror::Error)]
pub enum StartError {
    /// The shared mapping, the pipe or the fork failed.
    #[error("the heap profiler's helper process did not start: {0}")]
    Os(#[from] std::io::Error),
}

/// Forks the helper off this process (call once, from a library's
/// initialiser, while the process has one thread) and attaches the hook
/// to the memory they share. The helper reports heap `heap`; with
/// `starting_up`, a session it starts before
/// [`wait_for_session`](super::client::wait_for_session) returns profiles
/// the process `from_startup`.
pub fn start(heap: &'static str, starting_up: bool) -> Result<(), StartError> {
    // SAFETY: a fresh anonymous shared mapping; no address is assumed.
    let base = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            MAPPING_BYTES,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_SHARED | libc::MAP_ANONYMOUS | libc::MAP_NORESERVE,
            -1,
            0,
        )
    };
    if base == libc::MAP_FAILED {
        return Err(std::io::Error::last_os_error().into());
    }
    let base = base.cast::<u8>();
    if starting_up {
        // Said before the helper exists, so that no session it starts can
        // miss it.
        // SAFETY: the control block at the start of the fresh mapping,
        // which is never unmapped.
        let ctl = unsafe { &*base.cast::<Control>() };
        ctl.starting_up.store(1, Ordering::Release);
    }
    let mut fds = [0; 2];
    // SAFETY: `fds` has room for the two descriptors.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        return Err(std::io::Error::last_os_error().into());
    }
    // SAFETY: pipe2 just opened both; each is owned once.
    let (read_end, write_end) =
        unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) };
    // The helper's liveness: it holds the write end, the program the read
    // end, which hangs up when the helper is gone, however it died (the
    // kernel closes a killed process's descriptors).
    let mut alive = [0; 2];
    // SAFETY: `alive` has room for the two descriptors.
    if unsafe { libc::pipe2(alive.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        return Err(std::io::Error::last_os_error().into());
    }
    // SAFETY: pipe2 just opened both; each is owned once.
    let (alive_read, alive_write) = unsafe {
        (
            OwnedFd::from_raw_fd(alive[0]),
            OwnedFd::from_raw_fd(alive[1]),
        )
    };
    let target = std::process::id();
    // SAFETY: the caller forks while the process has one thread; the
    // child only calls async-signal-safe functions before its second fork,
    // and the grandchild runs on as a process of its own.
    let pid = unsafe { libc::fork() };
    if pid < 0 {
        return Err(std::io::Error::last_os_error().into());
    }
    if pid == 0 {
        drop(write_end);
        drop(alive_read);
        // SAFETY: as above: setsid and fork in the child, then the
        // intermediate process leaves without running any handler.
        unsafe {
            libc::setsid();
            if libc::fork() != 0 {
                libc::_exit(0);
            }
        }
        // The grandchild forks the helper and stays as its guardian
        // (`guardian.rs`), holding neither the helper's liveness pipe nor
        // its producer. Where that fork fails, the grandchild is the
        // helper, unguarded.
        // SAFETY: this process has one thread (forked from one that had
        // one); both sides go on as processes of their own.
        let helper = unsafe { libc::fork() };
        if helper > 0 {
            drop(alive_write);
            let ok = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                super::guardian::guardian_main(helper, target, heap, read_end);
            }))
            .is_ok();
            // SAFETY: as the helper leaves below.
            unsafe { libc::_exit(if ok { 0 } else { 1 }) };
        }
        // Whatever happens in the helper, it never returns into the
        // program's code: a panic is caught here and the process leaves.
        let ok = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            helper_main(base, target, heap, read_end, alive_write);
        }))
        .is_ok();
        // SAFETY: leaves without the program's atexit handlers or
        // destructors, which belong to the program, not to the helper.
        unsafe { libc::_exit(if ok { 0 } else { 1 }) };
    }
    drop(read_end);
    drop(alive_write);
    let mut status = 0;
    // SAFETY: waits for the intermediate child forked above.
    unsafe { libc::waitpid(pid, &mut status, 0) };
    // The write end stays open (close-on-exec) for the life of the
    // program: its closing tells the helper the program is gone.
    std::mem::forget(write_end);
    // SAFETY: a zeroed shared mapping of MAPPING_BYTES, never unmapped,
    // shared with the helper only.
    unsafe { super::client::attach(base, MAPPING_BYTES) };
    super::client::watch_helper(alive_read);
    Ok(())
}

/// The mapping, as the helper sees it (never unmapped).
#[derive(Clone, Copy)]
struct Shared {
    ctl: &'static Control,
    filter: FreeFilter<'static>,
    data: *const u8,
}

// SAFETY: the mapping lives for the life of the process; `data` is read
// only through `RingReader`'s atomic copies, from any thread.
unsafe impl Send for Shared {}
// SAFETY: as for `Send`: shared access is atomic loads only.
unsafe impl Sync for Shared {}

struct Running {
    instance: u64,
    session: u32,
    ctl: Arc<WorkerControl>,
    thread: JoinHandle<()>,
    /// The producer connection the session came on.
    link: SessionLink,
}

struct Helper {
    shared: Shared,
    target: u32,
    heap: &'static str,
    running: Mutex<Option<Running>>,
    next_session: AtomicU32,
    /// The size of the ring the helper set up last (0: none yet): what the
    /// walk of a closed word's outstanding frames goes by, never the size
    /// in the shared control block.
    last_ring: AtomicU64,
}

fn helper_main(base: *mut u8, target: u32, heap: &'static str, parent_fd: OwnedFd, alive: OwnedFd) {
    quiet_stdio();
    // `_alive` is held for the life of the helper: the program's end hangs
    // up when it goes.
    let [parent_fd, _alive] = keep_only([parent_fd, alive]);
    // SAFETY: PR_SET_NAME with a NUL-terminated name.
    unsafe { libc::prctl(libc::PR_SET_NAME, c"zt-heapprofd".as_ptr()) };
    let shared = Shared {
        // SAFETY: the control block at the start of the zeroed mapping,
        // which outlives this process's use of it.
        ctl: unsafe { &*base.cast::<Control>() },
        // SAFETY: the filter's buckets follow the control block's page.
        filter: unsafe { FreeFilter::new(base.wrapping_add(CONTROL_BYTES)) },
        data: base.wrapping_add(RING_OFFSET),
    };
    let pidfd = rustix::process::Pid::from_raw(target as i32)
        .and_then(|p| rustix::process::pidfd_open(p, rustix::process::PidfdFlags::empty()).ok());
    let helper = Arc::new(Helper {
        shared,
        target,
        heap,
        running: Mutex::new(None),
        next_session: AtomicU32::new(1),
        last_ring: AtomicU64::new(0),
    });
    let endpoint = Endpoint::parse(&producer_socket_name());
    let mut producer: Option<Arc<ProducerClient>> = None;
    let mut next_try = Instant::now();
    loop {
        if producer.is_none() && Instant::now() >= next_try {
            let opts = ProducerOptions {
                name: format!("heapprofd.{target}"),
                // One short try: the loop tries again, and watches the
                // program in between.
                connect_timeout: CONNECT_TRY,
                ..ProducerOptions::default()
            };
            match ProducerClient::connect(&endpoint, opts) {
                Ok(p) => {
                    let p = Arc::new(p);
                    if register(&helper, &p).is_ok() {
                        producer = Some(p);
                    }
                }
                Err(_) => next_try = Instant::now() + Duration::from_secs(1),
            }
        }
        // A session whose connection to the service is gone is over (its
        // thread stopped the client); the producer reconnects on its own.
        helper.end_if_lost();
        let active = helper
            .running
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .is_some();
        let wait = if active {
            Duration::from_millis(5)
        } else {
            Duration::from_millis(100)
        };
        if shared.ctl.exiting.load(Ordering::Acquire) != 0
            || program_gone(pidfd.as_ref(), &parent_fd, wait)
        {
            helper.finish(producer.as_deref());
            return;
        }
    }
}

fn register(
    helper: &Arc<Helper>,
    producer: &Arc<ProducerClient>,
) -> Result<(), ProducerClientError> {
    let h = Arc::clone(helper);
    let p = Arc::clone(producer);
    producer.register_data_source(
        DataSourceSpec {
            name: HEAPPROFD_DATA_SOURCE.into(),
            will_notify_on_stop: true,
            ..DataSourceSpec::default()
        },
        move |e| match e {
            DataSourceEvent::Start(i) => h.start(&p, i),
            DataSourceEvent::Stop(i) => {
                // An instance id of a new connection may repeat an old one's.
                h.end_if_lost();
                h.stop(i.id, false);
            }
            DataSourceEvent::Flush(i) => {
                let r = h.running.lock().unwrap_or_else(PoisonError::into_inner);
                if let Some(r) = r.as_ref().filter(|r| r.instance == i.id) {
                    r.ctl.flush.store(true, Ordering::Release);
                }
            }
            _ => {}
        },
    )
}

impl Helper {
    /// Ends the session of a producer connection that is gone.
    fn end_if_lost(&self) {
        let lost = self
            .running
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .as_ref()
            .filter(|r| r.link.gone())
            .map(|r| r.instance);
        if let Some(instance) = lost {
            self.stop(instance, false);
        }
    }

    fn start(&self, producer: &Arc<ProducerClient>, i: &Instance) {
        let Some((cfg, interval)) = admit(i, self.target, self.heap) else {
            return;
        };
        // A session of a connection that is gone is over: this one's turn.
        self.end_if_lost();
        let mut running = self.running.lock().unwrap_or_else(PoisonError::into_inner);
        let Ok(mut writer) = producer.create_trace_writer_for(i) else {
            return;
        };
        let ctl = self.shared.ctl;
        if running.is_some() {
            // Another session profiles the program.
            DumpWriter::new().reject_concurrent(
                &mut writer,
                zerotrace_core::platform::boottime_ns(),
                u64::from(self.target),
            );
            PacketSink::flush(&mut writer);
            return;
        }
        ctl.active.store(0, Ordering::SeqCst);
        close(ctl);
        if !self.writers_done(QUIESCE_TIMEOUT) {
            eprintln!(
                "{HEAPPROFD_DATA_SOURCE}: process {} kept writing its ring; not profiled",
                self.target
            );
            return;
        }
        let ring = cfg.queue_bytes.clamp(8192, MAX_SHMEM_SIZE);
        self.shared.filter.clear();
        // The positions and their lap count from the start (`open` says so
        // again), before the writers' word opens.
        ctl.read_lap.store(0, Ordering::Relaxed);
        ctl.read_pos.store(0, Ordering::Relaxed);
        self.last_ring.store(ring, Ordering::Relaxed);
        ctl.overrun.store(0, Ordering::Relaxed);
        ctl.blocked_ns.store(0, Ordering::Relaxed);
        ctl.exit_done.store(0, Ordering::Relaxed);
        ctl.ring_bytes.store(ring, Ordering::Relaxed);
        ctl.interval.store(interval, Ordering::Relaxed);
        ctl.block
            .store(u32::from(cfg.block_client), Ordering::Relaxed);
        ctl.block_timeout_us
            .store(cfg.block_client_timeout_us, Ordering::Relaxed);
        ctl.adaptive_threshold
            .store(cfg.adaptive_threshold, Ordering::Relaxed);
        ctl.adaptive_max_interval
            .store(cfg.adaptive_max_interval, Ordering::Relaxed);
        let session = self.take_session();
        let from_startup = ctl.starting_up.load(Ordering::Acquire) != 0;
        let books = Books::new(self.target, self.heap, &cfg, interval, from_startup);
        let wctl = Arc::new(WorkerControl::default());
        let c = wctl.clone();
        let mut source = RingSource {
            shared: self.shared,
            session,
            ring,
            corrupted: false,
            releases: LaggedReleases::default(),
        };
        let link = SessionLink::new(producer);
        let l = link.clone();
        let spawned = std::thread::Builder::new()
            .name("zt-heapprofd".into())
            .spawn(move || run(c, books, cfg, &mut writer, &mut source, &l));
        match spawned {
            Ok(thread) => {
                ctl.epoch.fetch_add(1, Ordering::Release);
                open(ctl, session);
                ctl.active.store(session, Ordering::SeqCst);
                *running = Some(Running {
                    instance: i.id,
                    session,
                    ctl: wctl,
                    thread,
                    link,
                });
            }
            Err(e) => {
                eprintln!("{HEAPPROFD_DATA_SOURCE}: the profiler's thread did not start: {e}")
            }
        }
    }

    /// Ends the profile of `instance` (any, with `disconnected`): sampling
    /// off, the frames in flight taken, the last dump written.
    fn stop(&self, instance: u64, disconnected: bool) {
        let r = {
            let mut running = self.running.lock().unwrap_or_else(PoisonError::into_inner);
            match running.as_ref() {
                Some(r) if disconnected || r.instance == instance => running.take(),
                _ => None,
            }
        };
        let Some(r) = r else {
            return;
        };
        let ctl = self.shared.ctl;
        r.ctl.disconnected.store(disconnected, Ordering::Release);
        let _ = ctl
            .active
            .compare_exchange(r.session, 0, Ordering::SeqCst, Ordering::Relaxed);
        close_session(ctl, r.session);
        self.writers_done(Duration::from_millis(100));
        r.ctl.stop.store(true, Ordering::Release);
        if r.thread.join().is_err() {
            eprintln!("{HEAPPROFD_DATA_SOURCE}: the profiler's thread panicked");
        }
    }

    /// A session number (within the reservation word's bits, never 0).
    fn take_session(&self) -> u32 {
        loop {
            let s = self.next_session.fetch_add(1, Ordering::Relaxed) & SESSION_MASK;
            if s != 0 {
                return s;
            }
        }
    }

    /// Waits (at most `timeout`) until every frame the client's threads
    /// reserved before the word closed is committed (an impossible ring is
    /// not waited for: its reader stops at it anyway).
    fn writers_done(&self, timeout: Duration) -> bool {
        let ring = self.last_ring.load(Ordering::Relaxed);
        let until = Instant::now() + timeout;
        loop {
            // SAFETY: the ring's bytes follow the control block in a mapping
            // of MAPPING_BYTES, and `ring <= MAX_SHMEM_SIZE` (0: never set
            // up, the walk reads nothing).
            match unsafe { writers_done(self.shared.ctl, self.shared.data, ring.max(1024)) } {
                Ok(true) | Err(_) => return true,
                Ok(false) if Instant::now() >= until => return false,
                Ok(false) => std::thread::sleep(Duration::from_micros(100)),
            }
        }
    }

    /// The program is going: the last dump, handed to the service, then
    /// the program's exit may go on.
    fn finish(&self, producer: Option<&ProducerClient>) {
        self.stop(0, true);
        if let Some(p) = producer {
            let _ = p.flush_blocking(EXIT_FLUSH_TIMEOUT);
        }
        self.shared.ctl.exit_done.store(1, Ordering::Release);
    }
}

/// A session's records, from the shared ring.
struct RingSource {
    shared: Shared,
    session: u32,
    ring: u64,
    corrupted: bool,
    releases: LaggedReleases,
}

impl RecordSource for RingSource {
    fn drain_into(&mut self, books: &mut Books) -> bool {
        if self.corrupted {
            return false;
        }
        // SAFETY: the ring's bytes follow the control block in a mapping of
        // MAPPING_BYTES, and `ring <= MAX_SHMEM_SIZE`.
        let mut r =
            unsafe { RingReader::new(self.shared.ctl, self.shared.data, self.ring, self.session) };
        let mut n = 0u32;
        loop {
            match r.next_in_place() {
                Ok(Some((_, rec))) => {
                    let (addr, released) = match rec {
                        RingRecord::Alloc {
                            addr,
                            sample_size,
                            stack,
                        } => {
                            let stack = stack.as_ref().map(|s| SampleStack {
                                regs: UserRegs {
                                    ip: s.ip,
                                    sp: s.sp,
                                    bp: s.bp,
                                },
                                copy: s.copy(),
                                maxed: s.maxed,
                            });
                            (addr, books.alloc(addr, sample_size, stack))
                        }
                        RingRecord::Free { addr } => (addr, books.free(addr)),
                    };
                    if released {
                        self.releases.release(self.shared.filter, addr);
                    }
                    n += 1;
                    if n % 256 == 0 {
                        r.release();
                    }
                }
                Ok(None) => break,
                Err(e) => {
                    eprintln!("{HEAPPROFD_DATA_SOURCE}: process {}: {e}", books.pid());
                    self.corrupted = true;
                    self.stop_sampling();
                    break;
                }
            }
        }
        r.release();
        self.releases.flush(self.shared.filter);
        n > 0
    }

    fn status(&self) -> ClientStatus {
        let ctl = self.shared.ctl;
        let o = ctl.overrun.load(Ordering::Acquire);
        let why = if o >> 32 == u64::from(self.session) {
            o & 0xffff_ffff
        } else {
            0
        };
        ClientStatus {
            overrun: match why {
                OVERRUN_FULL => Some(Overrun::Full),
                OVERRUN_TIMEOUT => Some(Overrun::Timeout),
                _ => None,
            },
            blocked_ns: ctl.blocked_ns.load(Ordering::Relaxed),
            interval: ctl.interval.load(Ordering::Relaxed),
            corrupted: self.corrupted || why == OVERRUN_CORRUPT,
        }
    }

    /// The helper's own anonymous memory and swap, as heapprofd's guardrail
    /// counts its own. The ring is the client's shared mapping, of a fixed
    /// size, and its bytes reserved and unread are no measure of memory:
    /// the hot window's pad (`shared_ring/mod.rs`) makes them most of the
    /// ring for a moment every lap while nothing waits.
    fn held_bytes(&self) -> u64 {
        anon_and_swap_kb(std::process::id()).unwrap_or(0) * 1024
    }

    fn stop_sampling(&mut self) {
        let _ = self.shared.ctl.active.compare_exchange(
            self.session,
            0,
            Ordering::SeqCst,
            Ordering::Relaxed,
        );
        close_session(self.shared.ctl, self.session);
    }

    /// The client stopped this session on its own (a full ring, a timeout,
    /// impossible positions) and every record of it is taken. Not the
    /// `active` word: the helper writes that too (before this thread's
    /// first look, and at a stop, which ends the thread by its flag).
    fn finished(&self) -> bool {
        if self.corrupted {
            return true;
        }
        let ctl = self.shared.ctl;
        let o = ctl.overrun.load(Ordering::Acquire);
        o >> 32 == u64::from(self.session)
            && o & 0xffff_ffff != 0
            && word_pos(ctl.reserved.load(Ordering::Acquire))
                == ctl.read_pos.load(Ordering::Acquire)
    }
}
