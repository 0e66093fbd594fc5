//! What the `perf` oracle tests share (the probes' `perf_oracle.rs` and the
//! CLI's `perf_fixture_views.rs`): the fixture program built with `rustc`,
//! `perf record`/`perf script` run on it, `linux.perf` recorded on it
//! through the data source itself, and both read back to the same shape (a
//! sample's frames, leaf first, named).

#![allow(dead_code)]

use std::collections::HashMap;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Mutex, MutexGuard};
use std::time::Duration;

use protozero::{Decoder, HeapWriter, Message};
use zerotrace_probes::producer::perf::PerfSource;
use zerotrace_probes::producer::{BufferSink, DataSource, Probe, ProbeContext};
use zerotrace_protos::protos::{
    CallstackDecoder, FrameDecoder, InternedStringDecoder, PerfEventConfig, PerfSampleDecoder,
};
use zerotrace_protos::upstream_tables::{data_source_field, interned_data_field, packet_field};

/// `ZEROTRACE_REQUIRE_PERF=1`: a test that cannot run fails instead of
/// saying so (CI).
pub fn required() -> bool {
    std::env::var("ZEROTRACE_REQUIRE_PERF").is_ok_and(|v| v == "1")
}

/// One sampler at a time: the tests of a binary run in parallel, and two
/// CPU-bound fixtures sampled at 1 kHz each on two cores would starve the
/// samplers.
pub fn serial() -> MutexGuard<'static, ()> {
    static LOCK: Mutex<()> = Mutex::new(());
    LOCK.lock().unwrap_or_else(|e| e.into_inner())
}

/// Why a test cannot run here (no `perf`, no `rustc`, perf events closed),
/// or `None`. Under [`required`] that is a failure.
pub fn unavailable(test: &str) -> Option<String> {
    let why = if Command::new("perf").arg("--version").output().is_err() {
        Some("no `perf` command (Debian: linux-perf)".to_owned())
    } else if Command::new("rustc").arg("--version").output().is_err() {
        Some("no `rustc` to build the fixture".to_owned())
    } else {
        None
    };
    if let Some(why) = &why {
        assert!(!required(), "ZEROTRACE_REQUIRE_PERF=1 but {test}: {why}");
        println!("{test} did not run: {why}");
    }
    why
}

/// The fixture program, built once per test binary and build kind in the
/// target's temporary directory: release, with debug info, `fp` with frame
/// pointers forced.
pub fn fixture(fp: bool) -> PathBuf {
    static BUILT: Mutex<Vec<(bool, PathBuf)>> = Mutex::new(Vec::new());
    let mut built = BUILT.lock().unwrap_or_else(|e| e.into_inner());
    if let Some((_, p)) = built.iter().find(|(k, _)| *k == fp) {
        return p.clone();
    }
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("perf_fixture");
    std::fs::create_dir_all(&dir).expect("a directory for the fixture");
    let src = dir.join("fixture.rs");
    std::fs::write(&src, FIXTURE_SOURCE).expect("the fixture's source written");
    let out = dir.join(if fp { "fixture_fp" } else { "fixture_nofp" });
    let mut rustc = Command::new("rustc");
    rustc
        .args(["--edition", "2024", "-C", "opt-level=2", "-g", "-o"])
        .arg(&out)
        .arg(&src);
    if fp {
        rustc.args(["-C", "force-frame-pointers=yes"]);
    }
    let status = rustc.status().expect("rustc runs");
    assert!(status.success(), "the fixture builds: {rustc:?}");
    built.push((fp, out.clone()));
    out
}

/// The fixture's source (embedded, so that any package's tests can build it).
const FIXTURE_SOURCE: &str = include_str!("fixture.rs");

/// The fixture running in `mode`, once it printed `ready`.
pub struct Running(pub Child);

impl Running {
    /// Starts `bin mode` and waits for it to be ready.
    pub fn start(bin: &Path, mode: &str) -> Running {
        let mut child = Command::new(bin)
            .arg(mode)
            .stdout(Stdio::piped())
            .spawn()
            .expect("the fixture starts");
        let mut line = String::new();
        let out = child.stdout.take().expect("its stdout");
        BufReader::new(out)
            .read_line(&mut line)
            .expect("the fixture says it is ready");
        assert_eq!(line.trim(), "ready");
        Running(child)
    }

    /// Its pid.
    pub fn pid(&self) -> u32 {
        self.0.id()
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// A sample read back: its process, thread and frames' names, leaf first
/// (`?` for a frame with no name), and whether a frame was the kernel's.
#[derive(Debug, Clone)]
pub struct Stack {
    /// The process.
    pub pid: u32,
    /// The thread.
    pub tid: u32,
    /// Frame names, leaf first, normalized (see [`normalize`]).
    pub names: Vec<String>,
    /// For each frame, whether it is a kernel frame.
    pub kernel: Vec<bool>,
}

impl Stack {
    /// The user frames' names, leaf first.
    pub fn user(&self) -> Vec<&str> {
        self.names
            .iter()
            .zip(&self.kernel)
            .filter(|(_, k)| !**k)
            .map(|(n, _)| n.as_str())
            .collect()
    }

    /// The kernel frames' names, leaf first.
    pub fn kernel_names(&self) -> Vec<&str> {
        self.names
            .iter()
            .zip(&self.kernel)
            .filter(|(_, k)| **k)
            .map(|(n, _)| n.as_str())
            .collect()
    }

    /// The user frames from the leaf up to and including the fixture's
    /// `main` (what is further out is the Rust runtime's start).
    pub fn chain_to_main(&self) -> Vec<&str> {
        let user = self.user();
        match user.iter().position(|n| *n == "fixture::main") {
            Some(i) => user[..=i].to_vec(),
            None => user,
        }
    }
}

/// A function name as both tools' outputs are compared: no Rust hash
/// suffix, no symbol version, no offset.
pub fn normalize(name: &str) -> String {
    let name = name.split("+0x").next().unwrap_or(name);
    let name = name.split("@@").next().unwrap_or(name);
    let bytes = name.as_bytes();
    if bytes.len() > 19 && name[..bytes.len() - 16].ends_with("::h") {
        let hash = &name[bytes.len() - 16..];
        if hash.bytes().all(|b| b.is_ascii_hexdigit()) {
            return name[..bytes.len() - 19].to_owned();
        }
    }
    name.to_owned()
}

/// `perf record` running on a process until [`PerfRecord::finish`].
pub struct PerfRecord {
    child: Child,
    data: PathBuf,
}

impl PerfRecord {
    /// `perf record ARGS -p PID -o DATA` (its own output discarded), given
    /// time to attach.
    pub fn start(pid: u32, args: &[&str], data: &Path) -> PerfRecord {
        let child = Command::new("perf")
            .arg("record")
            .args(args)
            .arg("-p")
            .arg(pid.to_string())
            .arg("-o")
            .arg(data)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("perf record starts");
        std::thread::sleep(Duration::from_millis(300));
        PerfRecord {
            child,
            data: data.to_owned(),
        }
    }

    /// Stops the recording (SIGINT, as Ctrl-C) and reads it back with
    /// `perf script`.
    pub fn finish(mut self) -> Vec<Stack> {
        let _ = Command::new("kill")
            .args(["-INT", &self.child.id().to_string()])
            .status();
        let status = self.child.wait().expect("perf record ends");
        assert!(
            status.success() || status.code() == Some(130) || status.code().is_none(),
            "perf record: {status}"
        );
        perf_script(&self.data)
    }

    /// The size of the recording, in bytes (after [`PerfRecord::finish`]).
    pub fn data_size(data: &Path) -> u64 {
        std::fs::metadata(data).map(|m| m.len()).unwrap_or(0)
    }
}

/// `perf script`'s samples of `data`: each a header line (`comm pid/tid`)
/// and one indented line per frame (`ip sym+off (dso)`).
pub fn perf_script(data: &Path) -> Vec<Stack> {
    let out = Command::new("perf")
        .args(["script", "--no-inline", "-F", "pid,tid,ip,sym,dso", "-i"])
        .arg(data)
        .stderr(Stdio::null())
        .output()
        .expect("perf script runs");
    assert!(out.status.success(), "perf script: {}", out.status);
    let text = String::from_utf8_lossy(&out.stdout);
    let mut stacks = Vec::new();
    for block in text.split("\n\n") {
        let mut lines = block.lines().filter(|l| !l.trim().is_empty());
        let Some(header) = lines.next() else { continue };
        let Some((pid, tid)) = header
            .split_whitespace()
            .find_map(|w| w.split_once('/'))
            .and_then(|(p, t)| Some((p.parse().ok()?, t.parse().ok()?)))
        else {
            continue;
        };
        let mut names = Vec::new();
        let mut kernel = Vec::new();
        for l in lines {
            let l = l.trim();
            // `ip sym (dso)`: the symbol is what lies between.
            let Some((_, rest)) = l.split_once(' ') else {
                continue;
            };
            let (sym, dso) = match rest.rfind(" (") {
                Some(i) => (&rest[..i], &rest[i + 2..rest.len().saturating_sub(1)]),
                None => (rest, ""),
            };
            let sym = if sym == "[unknown]" { "?" } else { sym };
            names.push(normalize(sym.trim()));
            kernel.push(dso.starts_with("[kernel") || dso.ends_with(".ko"));
        }
        stacks.push(Stack {
            pid,
            tid,
            names,
            kernel,
        });
    }
    stacks
}

/// An encoded `linux.perf` `DataSourceConfig`; `f` fills the
/// `PerfEventConfig`.
pub fn perf_config(f: impl FnOnce(&mut PerfEventConfig<'_>)) -> Vec<u8> {
    let mut w = HeapWriter::new();
    {
        let mut root: Message<'_> = w.root();
        root.append_string(data_source_field::NAME, "linux.perf");
        let mut c =
            PerfEventConfig::from_message(root.begin_nested(data_source_field::PERF_EVENT_CONFIG));
        f(&mut c);
    }
    w.finish().expect("encodes")
}

/// `linux.perf` instances recording at once, each with its config, driven
/// as the probes' thread drives them: each polled at its own deadline, or
/// at once when it wakes the thread (a ring buffer half full).
pub struct Ours {
    probes: Vec<(Box<dyn Probe>, BufferSink)>,
    woken: std::sync::mpsc::Receiver<()>,
}

impl Ours {
    /// Creates and starts an instance per config.
    pub fn start(test: &str, configs: &[Vec<u8>]) -> Option<Ours> {
        let (tx, woken) = std::sync::mpsc::channel();
        let mut ctx = ProbeContext::system();
        ctx.wake = std::sync::Arc::new(move || {
            let _ = tx.send(());
        });
        let now = zerotrace_core::platform::boottime_ns();
        let mut probes = Vec::new();
        for c in configs {
            match PerfSource::system().create(c, &ctx) {
                Ok(mut p) => {
                    let mut sink = BufferSink::default();
                    p.start(now, &mut sink);
                    probes.push((p, sink));
                }
                Err(e) => {
                    assert!(!required(), "ZEROTRACE_REQUIRE_PERF=1 but {test}: {e}");
                    println!("{test} did not run: {e}");
                    return None;
                }
            }
        }
        Some(Ours { probes, woken })
    }

    /// Drives every instance for `ms` milliseconds.
    pub fn run_for(&mut self, ms: u64) {
        let now = zerotrace_core::platform::boottime_ns;
        let end = now() + ms * 1_000_000;
        loop {
            let t = now();
            if t >= end {
                return;
            }
            for (p, sink) in &mut self.probes {
                if p.next_deadline().is_some_and(|d| d <= t) {
                    p.poll(t, sink);
                }
            }
            let next = self
                .probes
                .iter()
                .filter_map(|(p, _)| p.next_deadline())
                .min()
                .unwrap_or(end)
                .min(end);
            let wait = next.saturating_sub(now());
            let _ = self.woken.recv_timeout(Duration::from_nanos(wait));
        }
    }

    /// Asks every instance to clear its incremental state, as the service
    /// does every `incremental_state_config.clear_period_ms`.
    pub fn clear_incremental_state(&mut self) {
        let now = zerotrace_core::platform::boottime_ns();
        for (p, sink) in &mut self.probes {
            p.clear_incremental_state(now, sink);
        }
    }

    /// Stops every instance: the packets each wrote.
    pub fn stop(self) -> Vec<Vec<Vec<u8>>> {
        let now = zerotrace_core::platform::boottime_ns();
        self.probes
            .into_iter()
            .map(|(mut p, mut sink)| {
                p.stop(now, &mut sink);
                sink.packets
            })
            .collect()
    }
}

/// How many packets clear the sequence's incremental state.
pub fn state_clears(packets: &[Vec<u8>]) -> usize {
    packets
        .iter()
        .filter(|p| {
            Decoder::new(p).filter_map(Result::ok).any(|f| {
                f.id == packet_field::SEQUENCE_FLAGS && f.as_u64().is_ok_and(|v| v & 1 != 0)
            })
        })
        .count()
}

/// The records the kernel lost, as the instance's packets report them
/// (`perf_sample.kernel_records_lost`).
pub fn records_lost(packets: &[Vec<u8>]) -> u64 {
    let mut lost = 0;
    for p in packets {
        for f in Decoder::new(p) {
            let f = f.expect("packet decodes");
            if f.id == packet_field::PERF_SAMPLE {
                let s = PerfSampleDecoder::new(f.as_bytes().expect("bytes"));
                lost += s.kernel_records_lost().unwrap_or(0);
            }
        }
    }
    lost
}

/// The samples of one instance's packets, callstacks resolved through the
/// sequence's interned data. A packet that clears the incremental state
/// (`SEQ_INCREMENTAL_STATE_CLEARED`) forgets every interned entry, as trace
/// processor does: a sample that refers to one not defined since panics.
pub fn read_back(packets: &[Vec<u8>]) -> Vec<Stack> {
    let mut names: HashMap<u64, String> = HashMap::new();
    let mut mapping_paths: HashMap<u64, String> = HashMap::new();
    let mut mappings: HashMap<u64, Vec<u64>> = HashMap::new();
    let mut frames: HashMap<u64, (u64, u64)> = HashMap::new();
    let mut stacks: HashMap<u64, Vec<u64>> = HashMap::new();
    let mut out = Vec::new();
    for p in packets {
        let cleared = Decoder::new(p)
            .filter_map(Result::ok)
            .any(|f| f.id == packet_field::SEQUENCE_FLAGS && f.as_u64().is_ok_and(|v| v & 1 != 0));
        if cleared {
            names.clear();
            mapping_paths.clear();
            mappings.clear();
            frames.clear();
            stacks.clear();
        }
        for f in Decoder::new(p) {
            let f = f.expect("packet decodes");
            match f.id {
                packet_field::INTERNED_DATA => {
                    for g in Decoder::new(f.as_bytes().expect("bytes")) {
                        let g = g.expect("interned data decodes");
                        let b = g.as_bytes().expect("bytes");
                        match g.id {
                            interned_data_field::FUNCTION_NAMES
                            | interned_data_field::MAPPING_PATHS => {
                                let s = InternedStringDecoder::new(b);
                                let text =
                                    String::from_utf8_lossy(s.str().unwrap_or_default()).into();
                                let iid = s.iid().expect("an iid");
                                if g.id == interned_data_field::FUNCTION_NAMES {
                                    names.insert(iid, text);
                                } else {
                                    mapping_paths.insert(iid, text);
                                }
                            }
                            interned_data_field::MAPPINGS => {
                                let m = zerotrace_protos::protos::MappingDecoder::new(b);
                                mappings.insert(
                                    m.iid().expect("an iid"),
                                    m.path_string_ids().collect(),
                                );
                            }
                            interned_data_field::FRAMES => {
                                let fr = FrameDecoder::new(b);
                                frames.insert(
                                    fr.iid().expect("an iid"),
                                    (
                                        fr.function_name_id().unwrap_or(0),
                                        fr.mapping_id().unwrap_or(0),
                                    ),
                                );
                            }
                            interned_data_field::CALLSTACKS => {
                                let c = CallstackDecoder::new(b);
                                stacks.insert(c.iid().expect("an iid"), c.frame_ids().collect());
                            }
                            _ => {}
                        }
                    }
                }
                packet_field::PERF_SAMPLE => {
                    let s = PerfSampleDecoder::new(f.as_bytes().expect("bytes"));
                    let Some(cs) = s.callstack_iid() else {
                        continue;
                    };
                    let mut n = Vec::new();
                    let mut k = Vec::new();
                    // Interned root first: read leaf first.
                    for fr in stacks[&cs].iter().rev() {
                        let (name, mapping) = frames[fr];
                        let name = names.get(&name).filter(|n| !n.is_empty());
                        n.push(name.map_or_else(|| "?".to_owned(), |n| normalize(n)));
                        let path: String = mappings
                            .get(&mapping)
                            .map(|ids| {
                                ids.iter()
                                    .filter_map(|i| mapping_paths.get(i).cloned())
                                    .collect::<Vec<_>>()
                                    .join("/")
                            })
                            .unwrap_or_default();
                        k.push(path == "kernel" || path == "/kernel");
                    }
                    out.push(Stack {
                        pid: s.pid().unwrap_or(0),
                        tid: s.tid().unwrap_or(0),
                        names: n,
                        kernel: k,
                    });
                }
                _ => {}
            }
        }
    }
    out
}

/// Each user leaf's share of `stacks` (of process `pid`), in percent.
pub fn leaf_shares(stacks: &[Stack], pid: u32) -> HashMap<String, f64> {
    let mine: Vec<&Stack> = stacks.iter().filter(|s| s.pid == pid).collect();
    let mut counts: HashMap<String, usize> = HashMap::new();
    for s in &mine {
        let leaf = s.user().first().map_or("?", |n| *n).to_owned();
        *counts.entry(leaf).or_default() += 1;
    }
    counts
        .into_iter()
        .map(|(k, v)| (k, 100.0 * v as f64 / mine.len().max(1) as f64))
        .collect()
}

/// The most frequent chain (leaf to the fixture's `main`) under `leaf`.
pub fn top_chain(stacks: &[Stack], pid: u32, leaf: &str) -> Option<Vec<String>> {
    let mut counts: HashMap<Vec<String>, usize> = HashMap::new();
    for s in stacks.iter().filter(|s| s.pid == pid) {
        let chain = s.chain_to_main();
        if chain.first() == Some(&leaf) {
            *counts
                .entry(chain.iter().map(|n| (*n).to_owned()).collect())
                .or_default() += 1;
        }
    }
    counts.into_iter().max_by_key(|(_, c)| *c).map(|(k, _)| k)
}

/// The packets as a trace file (`Trace.packet`, field 1), each stamped
/// with a `trusted_packet_sequence_id` as the tracing service stamps a
/// writer's packets (a packet without one has no interned state: the
/// trace processor, as upstream's, drops its interned data).
pub fn trace_file(packets: &[Vec<u8>]) -> Vec<u8> {
    let mut w = HeapWriter::new();
    {
        let mut root = w.root();
        for p in packets {
            let mut stamped = p.clone();
            let mut seq = HeapWriter::new();
            seq.root()
                .append_uint32(packet_field::TRUSTED_PACKET_SEQUENCE_ID, 1);
            stamped.extend(seq.finish().expect("encodes"));
            root.append_bytes(1, &stamped);
        }
    }
    w.finish().expect("encodes")
}
