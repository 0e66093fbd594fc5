//! The `android.heapprofd` data source of a program that installed
//! [`HeapProfiler`](super::HeapProfiler): [`register`] it with the
//! program's producer (the in-process backend or a system service); when a
//! session enables it for this process (`pid`, `process_cmdline`, `all`;
//! not `no_running`, since the program is running; the allocator's heap
//! selected), sampling starts and the profiler's thread writes the dumps
//! to the session, the last one when the session stops.
//!
//! One session at a time, as heapprofd has it: a second one that asks for
//! this process gets a `rejected_concurrent` dump. A session lives as long
//! as the producer's connection it came on (`session_link.rs`): when the
//! service goes away or restarts, sampling stops, and the producer's next
//! connection may start a new one. A config that cannot be
//! used, or fields this profiler refuses, are said on standard error and
//! by `zerotrace record` (see [`HeapConfig::refused`](super::HeapConfig)).

use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::thread::JoinHandle;

use super::allocator::{RUST_HEAP, activate, deactivate};
use super::config::{HEAPPROFD_DATA_SOURCE, HeapConfig, heapprofd_config_of};
use super::dump::DumpWriter;
use super::record_queue::{QUEUE, QueueLimits};
use super::session_link::SessionLink;
use super::worker::{Books, Control, QueueSource, run};
use zerotrace_core::producer::{
    DataSourceEvent, DataSourceSpec, Instance, ProducerClient, ProducerClientError,
};
use zerotrace_profiling::PacketSink;
use zerotrace_profiling::guardrail::anon_and_swap_kb;

struct Running {
    instance: u64,
    ctl: Arc<Control>,
    thread: JoinHandle<()>,
    /// The connection the session came on (and the producer).
    link: SessionLink,
}

impl Running {
    /// Stops sampling and waits for the profiler's thread (which writes
    /// the last dump unless the connection is gone).
    fn end(self, disconnected: bool) {
        deactivate();
        self.ctl.disconnected.store(disconnected, Ordering::Release);
        self.ctl.stop.store(true, Ordering::Release);
        if self.thread.join().is_err() {
            eprintln!("{HEAPPROFD_DATA_SOURCE}: the profiler's thread panicked");
        }
        QUEUE.lock().end();
    }
}

/// Ends the profile in `running` if the connection it came on is gone
/// (its thread has ended, or ends now).
fn end_if_lost(running: &mut Option<Running>) {
    if running.as_ref().is_some_and(|r| r.link.gone()) {
        if let Some(r) = running.take() {
            r.end(false);
        }
    }
}

static RUNNING: Mutex<Option<Running>> = Mutex::new(None);
static NEXT_SESSION: AtomicU32 = AtomicU32::new(1);
/// Set while the process is starting up (a preload library's blocking
/// init): a session started now profiles it `from_startup`.
static STARTING_UP: AtomicBool = AtomicBool::new(false);

/// Registers `android.heapprofd` with `producer`, for a program whose
/// `#[global_allocator]` is a [`HeapProfiler`](super::HeapProfiler): its
/// blocks are the heap [`RUST_HEAP`](super::RUST_HEAP).
pub fn register(producer: &Arc<ProducerClient>) -> Result<(), ProducerClientError> {
    register_heap(producer, RUST_HEAP)
}

/// Registers `android.heapprofd` with `producer` for blocks reported as
/// heap `heap` (a `malloc` interposer reports `libc.malloc`).
pub fn register_heap(
    producer: &Arc<ProducerClient>,
    heap: &'static str,
) -> Result<(), ProducerClientError> {
    let p = Arc::clone(producer);
    producer.register_data_source(
        DataSourceSpec {
            name: HEAPPROFD_DATA_SOURCE.into(),
            will_notify_on_stop: true,
            ..DataSourceSpec::default()
        },
        move |e| match e {
            DataSourceEvent::Start(i) => start(&p, i, heap),
            DataSourceEvent::Stop(i) => stop(i.id),
            DataSourceEvent::Flush(i) => {
                let r = RUNNING.lock().unwrap_or_else(PoisonError::into_inner);
                if let Some(r) = r.as_ref().filter(|r| r.instance == i.id) {
                    r.ctl.flush.store(true, Ordering::Release);
                }
            }
            _ => {}
        },
    )
}

/// Says whether the process is starting up: a session that starts
/// meanwhile profiles it `from_startup`.
pub fn set_starting_up(starting: bool) {
    STARTING_UP.store(starting, Ordering::Release);
}

/// Whether a session profiles this process now.
pub fn profiling() -> bool {
    let mut running = RUNNING.lock().unwrap_or_else(PoisonError::into_inner);
    end_if_lost(&mut running);
    running.is_some()
}

/// Ends the running profile because the process is exiting: the last
/// dump (marked `disconnected`, as heapprofd marks a client that went
/// away) is written and handed to the service, waiting at most `timeout`.
pub fn finish_at_exit(timeout: std::time::Duration) {
    let r = RUNNING
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .take();
    let Some(r) = r else {
        return;
    };
    let producer = Arc::clone(r.link.producer());
    r.end(true);
    let _ = producer.flush_blocking(timeout);
}

/// Whether the session of instance `i` profiles process `pid`'s heap
/// `heap`, as heapprofd decides: its config (refusals said on standard
/// error) and sampling interval, or `None`.
pub(crate) fn admit(i: &Instance, pid: u32, heap: &str) -> Option<(HeapConfig, u64)> {
    let cfg = match HeapConfig::parse(heapprofd_config_of(&i.config)) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("{HEAPPROFD_DATA_SOURCE}: {e}; process {pid} is not profiled");
            return None;
        }
    };
    for line in &cfg.refused {
        eprintln!("{HEAPPROFD_DATA_SOURCE}: {line}");
    }
    let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
    if !cfg.targets(pid, &String::from_utf8_lossy(&cmdline)) || cfg.no_running {
        return None;
    }
    let interval = cfg.heaps.interval(heap, true)?;
    if cfg.min_anonymous_memory_kb > 0
        && anon_and_swap_kb(pid).is_none_or(|kb| kb < u64::from(cfg.min_anonymous_memory_kb))
    {
        return None;
    }
    Some((cfg, interval))
}

fn start(producer: &Arc<ProducerClient>, i: &Instance, heap: &'static str) {
    let Some((cfg, interval)) = admit(i, std::process::id(), heap) else {
        return;
    };
    let mut running = RUNNING.lock().unwrap_or_else(PoisonError::into_inner);
    // A profile of a connection that is gone is over: this session's turn.
    end_if_lost(&mut running);
    let Ok(mut writer) = producer.create_trace_writer_for(i) else {
        return;
    };
    if running.is_some() {
        // Another session profiles this process.
        let mut d = DumpWriter::new();
        d.reject_concurrent(
            &mut writer,
            zerotrace_core::platform::boottime_ns(),
            u64::from(std::process::id()),
        );
        PacketSink::flush(&mut writer);
        return;
    }
    let session = NEXT_SESSION.fetch_add(1, Ordering::Relaxed);
    QUEUE.lock().begin(
        session,
        QueueLimits {
            cap: usize::try_from(cfg.queue_bytes).unwrap_or(usize::MAX),
            block: cfg.block_client,
            block_timeout_us: cfg.block_client_timeout_us,
            adaptive_threshold: usize::try_from(cfg.adaptive_threshold).unwrap_or(usize::MAX),
            adaptive_max_interval: cfg.adaptive_max_interval,
        },
    );
    let from_startup = STARTING_UP.load(Ordering::Acquire);
    let books = Books::new(std::process::id(), heap, &cfg, interval, from_startup);
    let ctl = Arc::new(Control::default());
    let c = ctl.clone();
    let link = SessionLink::new(producer);
    let l = link.clone();
    let spawned = std::thread::Builder::new()
        .name("zt-heapprofd".into())
        .spawn(move || run(c, books, cfg, &mut writer, &mut QueueSource { session }, &l));
    match spawned {
        Ok(thread) => {
            activate(session, interval);
            *running = Some(Running {
                instance: i.id,
                ctl,
                thread,
                link,
            });
        }
        Err(e) => {
            QUEUE.lock().end();
            eprintln!("{HEAPPROFD_DATA_SOURCE}: the profiler's thread did not start: {e}");
        }
    }
}

fn stop(instance: u64) {
    let r = {
        let mut running = RUNNING.lock().unwrap_or_else(PoisonError::into_inner);
        // An instance id of a new connection may repeat an old one's.
        end_if_lost(&mut running);
        match running.as_ref() {
            Some(r) if r.instance == instance => running.take(),
            _ => None,
        }
    };
    if let Some(r) = r {
        r.end(false);
    }
}
