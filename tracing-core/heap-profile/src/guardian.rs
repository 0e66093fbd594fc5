//! A profile lost to a dead helper still says so. The helper process
//! (`helper.rs`) writes every dump; a helper killed with SIGKILL (or
//! crashed) writes none, and the program goes on unprofiled (its hook sees
//! the liveness pipe hang up, `client.rs`). A session that was profiling
//! the program would then end with no word of it. So the helper runs under
//! a guardian: the process it was forked from, which holds nothing of the
//! helper's (not its liveness pipe, not its producer) and sleeps in
//! `waitpid`. When the helper ends other than cleanly while the program
//! lives on, the guardian becomes a producer of data source
//! `android.heapprofd` itself: each session that names the program (the
//! one the helper was in, which the service starts on the guardian as soon
//! as it registers, and any later one) gets a dump of the program's heap
//! marked `disconnected` (the program's connection to its profiler is
//! gone, as heapprofd marks a client that went away) with no samples, and
//! the guardian says why on stderr. It goes when the program does.

use std::os::fd::OwnedFd;
use std::sync::Arc;
use std::time::{Duration, Instant};

use super::config::{HEAPPROFD_DATA_SOURCE, HeapConfig, heapprofd_config_of};
use super::dump::{DumpWriter, ProcessHeader};
use zerotrace_core::ipc::{Endpoint, producer_socket_name};
use zerotrace_core::producer::{
    DataSourceEvent, DataSourceSpec, Instance, ProducerClient, ProducerOptions,
};
use zerotrace_profiling::PacketSink;
use zerotrace_profiling::intern::Interner;

/// How the helper ended, as `waitpid` tells it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum HelperEnd {
    /// It left with status 0: the program is gone, its last dump written.
    Clean,
    /// It left with another status (a caught panic, a failed start).
    Failed(i32),
    /// A signal killed it.
    Killed(i32),
}

impl HelperEnd {
    /// Reads a `waitpid` status.
    pub(crate) fn of_status(status: i32) -> HelperEnd {
        if libc::WIFSIGNALED(status) {
            HelperEnd::Killed(libc::WTERMSIG(status))
        } else {
            match libc::WEXITSTATUS(status) {
                0 => HelperEnd::Clean,
                code => HelperEnd::Failed(code),
            }
        }
    }
}

/// The guardian process's start: the program's standard input and output
/// put away, only `program` kept of its descriptors, a name of its own
/// (`zt-heapguard`); then [`guard`].
pub(crate) fn guardian_main(
    helper: libc::pid_t,
    target: u32,
    heap: &'static str,
    program: OwnedFd,
) {
    super::forked::quiet_stdio();
    let [program] = super::forked::keep_only([program]);
    // SAFETY: PR_SET_NAME with a NUL-terminated name.
    unsafe { libc::prctl(libc::PR_SET_NAME, c"zt-heapguard".as_ptr()) };
    guard(helper, target, heap, program);
}

/// The guardian's life (in the process the helper was forked from, which
/// never returns into the program's code): waits for the helper `helper`
/// of program `target`; if it ended other than cleanly while the program
/// lives, answers every session that names the program with a dump marked
/// `disconnected`, until the program is gone. `program` is the read end of
/// the pipe the program holds (it hangs up at the program's exit or
/// `exec`).
pub(crate) fn guard(helper: libc::pid_t, target: u32, heap: &'static str, program: OwnedFd) {
    let end = loop {
        let mut status = 0;
        // SAFETY: waits for the helper, this process's only child.
        let r = unsafe { libc::waitpid(helper, &mut status, 0) };
        if r == helper {
            break HelperEnd::of_status(status);
        }
        if r < 0 && std::io::Error::last_os_error().kind() != std::io::ErrorKind::Interrupted {
            // No child to wait for: nothing to guard.
            return;
        }
    };
    let pidfd = rustix::process::Pid::from_raw(target as i32)
        .and_then(|p| rustix::process::pidfd_open(p, rustix::process::PidfdFlags::empty()).ok());
    if end == HelperEnd::Clean
        || super::forked::program_gone(pidfd.as_ref(), &program, Duration::ZERO)
    {
        return;
    }
    let why = match end {
        HelperEnd::Killed(sig) => format!("was killed by signal {sig}"),
        HelperEnd::Failed(code) => format!("failed (exit status {code})"),
        HelperEnd::Clean => String::new(),
    };
    eprintln!(
        "{HEAPPROFD_DATA_SOURCE}: the heap profiler's helper of process {target} {why}; \
         the process runs on unprofiled, and each session that names it gets a dump marked \
         `disconnected`"
    );
    let endpoint = Endpoint::parse(&producer_socket_name());
    let mut producer: Option<Arc<ProducerClient>> = None;
    let mut next_try = Instant::now();
    loop {
        // Once connected, the client reconnects on its own (a restarted
        // service gets the data source again).
        if producer.is_none() && Instant::now() >= next_try {
            producer = connect(&endpoint, target, heap);
            if producer.is_none() {
                next_try = Instant::now() + Duration::from_secs(1);
            }
        }
        if super::forked::program_gone(pidfd.as_ref(), &program, Duration::from_millis(100)) {
            if let Some(p) = producer {
                let _ = p.flush_blocking(Duration::from_secs(2));
            }
            return;
        }
    }
}

/// Connects as the program's heap producer and registers the data source
/// whose instances get the mark.
fn connect(endpoint: &Endpoint, target: u32, heap: &'static str) -> Option<Arc<ProducerClient>> {
    let opts = ProducerOptions {
        name: format!("heapprofd.{target}"),
        // One short try: the loop tries again, and watches the
        // program in between.
        connect_timeout: super::forked::CONNECT_TRY,
        ..ProducerOptions::default()
    };
    let p = Arc::new(ProducerClient::connect(endpoint, opts).ok()?);
    let writer_of = Arc::clone(&p);
    p.register_data_source(
        DataSourceSpec {
            name: HEAPPROFD_DATA_SOURCE.into(),
            ..DataSourceSpec::default()
        },
        move |e| {
            if let DataSourceEvent::Start(i) = e {
                mark(&writer_of, i, target, heap);
            }
        },
    )
    .ok()?;
    Some(p)
}

/// Writes the mark on instance `i` if its session names the program.
fn mark(producer: &ProducerClient, i: &Instance, target: u32, heap: &str) {
    let Some(header) = lost_profile(i, target, heap, zerotrace_core::platform::boottime_ns())
    else {
        return;
    };
    let Ok(mut writer) = producer.create_trace_writer_for(i) else {
        return;
    };
    DumpWriter::new().dump(
        &mut writer,
        header.timestamp,
        &header,
        &[],
        &mut Interner::new(),
    );
    PacketSink::flush(&mut writer);
}

/// The header of the lost profile of process `pid`'s heap `heap` for
/// instance `i`, at `now`: `None` if its session does not name the process
/// or that heap. Unlike a profile's admission, neither `no_running` nor
/// `min_anonymous_memory_kb` keeps the mark out: it reports a loss, it
/// starts no profile.
pub(crate) fn lost_profile(i: &Instance, pid: u32, heap: &str, now: u64) -> Option<ProcessHeader> {
    let cfg = HeapConfig::parse(heapprofd_config_of(&i.config)).ok()?;
    let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
    if !cfg.targets(pid, &String::from_utf8_lossy(&cmdline)) {
        return None;
    }
    let interval = cfg.heaps.interval(heap, true)?;
    Some(ProcessHeader {
        pid: u64::from(pid),
        timestamp: now,
        disconnected: true,
        heap_name: heap.to_owned(),
        sampling_interval_bytes: interval,
        orig_sampling_interval_bytes: interval,
        ..ProcessHeader::default()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A `DataSourceConfig` of `android.heapprofd` with its
    /// `HeapprofdConfig` set by `f`.
    fn instance(f: impl FnOnce(&mut zerotrace_protos::protos::HeapprofdConfig<'_>)) -> Instance {
        let mut w = protozero::HeapWriter::new();
        {
            let mut dc = zerotrace_protos::protos::DataSourceConfig::from_message(w.root());
            dc.set_name(HEAPPROFD_DATA_SOURCE);
            let mut h = dc.begin_heapprofd_config();
            h.set_sampling_interval_bytes(4096);
            f(&mut h);
        }
        Instance {
            id: 1,
            name: HEAPPROFD_DATA_SOURCE.into(),
            target_buffer: 0,
            config: w.finish().unwrap(),
        }
    }

    #[test]
    fn a_waitpid_status_tells_a_clean_end_from_a_failure_and_a_kill() {
        assert_eq!(HelperEnd::of_status(0), HelperEnd::Clean);
        assert_eq!(HelperEnd::of_status(1 << 8), HelperEnd::Failed(1));
        assert_eq!(HelperEnd::of_status(libc::SIGKILL), HelperEnd::Killed(9));
        assert_eq!(
            HelperEnd::of_status(libc::SIGSEGV | 0x80),
            HelperEnd::Killed(11)
        );
    }

    #[test]
    #[cfg_attr(miri, ignore = "reads /proc")]
    fn a_session_that_names_the_process_gets_an_empty_dump_marked_disconnected() {
        let pid = std::process::id();
        // `no_running` keeps a profile out, not the report of a lost one.
        let i = instance(|h| {
            h.add_pid(u64::from(pid)).set_no_running(true);
        });
        let h = lost_profile(&i, pid, "libc.malloc", 77).expect("named by pid");
        assert_eq!(
            h,
            ProcessHeader {
                pid: u64::from(pid),
                timestamp: 77,
                disconnected: true,
                heap_name: "libc.malloc".into(),
                sampling_interval_bytes: 4096,
                orig_sampling_interval_bytes: 4096,
                ..ProcessHeader::default()
            }
        );
        let mut sink = zerotrace_profiling::BufferSink::default();
        DumpWriter::new().dump(&mut sink, 77, &h, &[], &mut Interner::new());
        let dumps: Vec<_> = sink
            .packets
            .iter()
            .filter_map(|b| {
                let p = zerotrace_protos::protos::TracePacketDecoder::new(b);
                let pp = p.profile_packet()?;
                let d = pp.process_dumps().next()?;
                Some((d.pid(), d.disconnected(), d.samples().count()))
            })
            .collect();
        assert_eq!(dumps, vec![(Some(u64::from(pid)), Some(true), 0)]);
    }

    #[test]
    #[cfg_attr(miri, ignore = "reads /proc")]
    fn a_session_of_another_process_or_heap_gets_nothing() {
        let pid = std::process::id();
        let other = instance(|h| {
            h.add_pid(u64::from(pid) + 1);
        });
        assert_eq!(lost_profile(&other, pid, "libc.malloc", 1), None);
        let other_heap = instance(|h| {
            h.add_pid(u64::from(pid)).add_heaps("com.example.arena");
        });
        assert_eq!(lost_profile(&other_heap, pid, "libc.malloc", 1), None);
    }
}
