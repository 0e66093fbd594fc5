//! What the preload library's tests share: the library cargo built, the C
//! fixtures built with the system's compiler, and a trace's heap dumps
//! read back per function.
#![allow(dead_code)]

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use zerotrace_core::ipc::Endpoint;
use zerotrace_protos::protos::TracePacketDecoder;

/// Per function: (bytes, blocks, bytes live at the end, blocks live).
pub type Totals = HashMap<&'static str, (u64, u64, u64, u64)>;
/// A dump's samples: (callstack, allocated, freed, allocs, frees).
pub type DumpRows = Vec<(u64, u64, u64, u64, u64)>;

/// Where the tests put what they build and write.
pub fn tmp() -> PathBuf {
    PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
}

/// The preload library cargo built beside this test.
pub fn library() -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    let deps = exe.parent().unwrap();
    for dir in [deps, deps.parent().unwrap()] {
        let lib = dir.join("libzerotrace_heapprofd.so");
        if lib.exists() {
            return lib;
        }
    }
    panic!(
        "libzerotrace_heapprofd.so not built beside {}",
        exe.display()
    );
}

/// `tests/fixture/NAME.c`, built. Each call builds into a directory of its
/// own (the file keeps its name, which sessions match by command line):
/// tests running at once that share a fixture would otherwise exec it
/// while another's linker holds it open for writing (ETXTBSY, "Text file
/// busy").
pub fn fixture(name: &str) -> PathBuf {
    static BUILT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = BUILT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("tests/fixture/{name}.c"));
    let dir = tmp().join(format!("fixtures-{}-{n}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("a directory for the fixture");
    let bin = dir.join(name);
    let out = Command::new("cc")
        .args(["-O0", "-g", "-pthread", "-o"])
        .arg(&bin)
        .arg(&src)
        .output()
        .expect("a C compiler (cc)");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    bin
}

/// Per function of `functions`, from the last dump: (allocated,
/// alloc_count, live bytes, live blocks); the last dump's flags
/// (from_startup, disconnected); the pids the dumps are of.
pub fn profile(trace: &[u8], functions: &[&'static str]) -> (Totals, (bool, bool), Vec<u64>) {
    let packets: Vec<&[u8]> = protozero::Decoder::new(trace)
        .filter_map(|f| f.ok())
        .filter(|f| f.id == 1)
        .filter_map(|f| f.as_bytes().ok())
        .collect();
    let (mut names, mut frames, mut stacks) = (HashMap::new(), HashMap::new(), HashMap::new());
    let mut dumps: Vec<DumpRows> = vec![Vec::new()];
    let mut flags = (false, false);
    let mut pids = Vec::new();
    for b in &packets {
        let p = TracePacketDecoder::new(b);
        if let Some(d) = p.interned_data() {
            for s in d.function_names() {
                names.insert(s.iid().unwrap(), s.str().unwrap_or(b"").to_vec());
            }
            for f in d.frames() {
                frames.insert(f.iid().unwrap(), f.function_name_id().unwrap_or(0));
            }
            for c in d.callstacks() {
                stacks.insert(c.iid().unwrap(), c.frame_ids().collect::<Vec<u64>>());
            }
        }
        let Some(pp) = p.profile_packet() else {
            continue;
        };
        for d in pp.process_dumps() {
            assert_eq!(d.heap_name(), Some("libc.malloc"));
            pids.push(d.pid().unwrap_or(0));
            flags = (
                d.from_startup().unwrap_or(false),
                d.disconnected().unwrap_or(false),
            );
            for s in d.samples() {
                dumps.last_mut().unwrap().push((
                    s.callstack_id().unwrap(),
                    s.self_allocated().unwrap_or(0),
                    s.self_freed().unwrap_or(0),
                    s.alloc_count().unwrap_or(0),
                    s.free_count().unwrap_or(0),
                ));
            }
        }
        if !pp.continued().unwrap_or(false) {
            dumps.push(Vec::new());
        }
    }
    dumps.retain(|d| !d.is_empty());
    let mut out = HashMap::new();
    for (iid, a, f, ac, fc) in dumps.last().expect("a heap dump") {
        let named: Vec<String> = stacks[iid]
            .iter()
            .map(|fr| {
                String::from_utf8_lossy(names.get(&frames[fr]).map_or(&b""[..], |v| v)).into_owned()
            })
            .collect();
        for func in functions {
            if named.iter().any(|n| n == func) {
                let t: &mut (u64, u64, u64, u64) = out.entry(*func).or_default();
                t.0 += a;
                t.1 += ac;
                t.2 += a - f;
                t.3 += ac - fc;
            }
        }
    }
    (out, flags, pids)
}

/// A tracing service of a test's own, on abstract sockets named after the
/// test process and `name`, and a consumer of it.
pub struct Service {
    /// The service's thread (dropping it ends the service).
    pub daemon: zerotrace_core::daemon::DaemonThread,
    /// Where producers connect (`PERFETTO_PRODUCER_SOCK_NAME`).
    pub producer_socket: String,
    /// The consumer connected to it.
    pub consumer: zerotrace_core::consumer::ConsumerClient,
}

/// The endpoints of the service named `name` (the same after a restart).
pub fn endpoints(name: &str) -> (Endpoint, Endpoint) {
    let base = format!("zerotrace-preload-{name}-{}", std::process::id());
    (
        Endpoint::Abstract(format!("{base}-p")),
        Endpoint::Abstract(format!("{base}-c")),
    )
}

/// Starts the service named `name` (again, after a restart).
pub fn service(name: &str) -> Service {
    let (p, c) = endpoints(name);
    let daemon =
        zerotrace_core::daemon::DaemonThread::spawn(zerotrace_core::daemon::DaemonConfig {
            producer_sockets: vec![p],
            consumer_socket: c,
            log_level: 0,
            ..zerotrace_core::daemon::DaemonConfig::default()
        })
        .expect("service");
    let producer_socket = daemon.producer_endpoints()[0].to_string();
    let consumer = zerotrace_core::consumer::ConsumerClient::connect(daemon.consumer_endpoint())
        .expect("consumer");
    Service {
        daemon,
        producer_socket,
        consumer,
    }
}

/// A session of process `cmdline`'s heap at `interval` bytes, the rest of
/// its `HeapprofdConfig` set by `f`.
pub fn heap_session(
    cmdline: &str,
    interval: u64,
    f: impl FnOnce(&mut zerotrace_protos::protos::HeapprofdConfig<'_>),
) -> Vec<u8> {
    let mut w = protozero::HeapWriter::new();
    {
        let mut c = zerotrace_protos::protos::TraceConfig::from_message(w.root());
        c.add_buffers().set_size_kb(32 * 1024);
        let mut ds = c.add_data_sources();
        let mut dc = ds.begin_config();
        dc.set_name("android.heapprofd");
        let mut h = dc.begin_heapprofd_config();
        h.set_sampling_interval_bytes(interval)
            .add_process_cmdline(cmdline);
        f(&mut h);
    }
    w.finish().unwrap()
}

/// Each heap dump's header in the trace, in order: (pid, disconnected,
/// buffer_overran, client_error, rejected_concurrent).
pub fn dump_flags(trace: &[u8]) -> Vec<(u64, bool, bool, i32, bool)> {
    let mut out = Vec::new();
    for f in protozero::Decoder::new(trace).filter_map(Result::ok) {
        if f.id != 1 {
            continue;
        }
        let Ok(b) = f.as_bytes() else { continue };
        if let Some(pp) = TracePacketDecoder::new(b).profile_packet() {
            for d in pp.process_dumps() {
                out.push((
                    d.pid().unwrap_or(0),
                    d.disconnected().unwrap_or(false),
                    d.buffer_overran().unwrap_or(false),
                    d.client_error_raw().unwrap_or(0),
                    d.rejected_concurrent().unwrap_or(false),
                ));
            }
        }
    }
    out
}
