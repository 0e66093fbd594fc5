//! The soak (issue #22): many producer processes write into one
//! ring-buffer session for a while, a consumer reads it periodically, and
//! the service's memory is sampled every second, for our service and for
//! Perfetto's genuine one in the same workload.
//!
//! Each party is a process of its own, so the service's resident set is
//! its alone: `soak_service` (ours or the genuine service), `soak_producer`
//! (our `ProducerClient`, which speaks to both) and the runner, [`run`],
//! which is also the consumer (our `ConsumerClient`). The runner checks
//! every packet as it reads it ([`check`]): intact, in order per sequence,
//! every loss flagged; and reports the memory over time ([`rss`],
//! [`report`]). `cargo xtask soak` runs the long form (16 producers × 4
//! threads × 60 s on both services); `tests/soak.rs` a short one.

pub mod check;
pub mod cpu;
pub mod payload;
pub mod report;
pub mod rss;
pub mod scale;

use std::collections::HashMap;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError, Sender, channel};
use std::time::{Duration, Instant};

use protozero::HeapWriter;
use zerotrace_core::consumer::ConsumerClient;
use zerotrace_core::ipc::ChannelError;
use zerotrace_core::ipc::Endpoint;
use zerotrace_protos::protos::TraceConfig;

use crate::services::Which;
use check::{CheckCounts, Checker};
pub use report::SoakReport;
use rss::{Memory, Phase, Sampler};

/// The data source the soak producers register.
pub const DATA_SOURCE: &str = "zerotrace.soak";

/// How long the runner waits for a process to say something it expects.
const WAIT: Duration = Duration::from_secs(60);

/// What a soak runs.
#[derive(Debug, Clone, PartialEq)]
pub struct SoakOptions {
    /// The service.
    pub which: Which,
    /// Producer processes.
    pub producers: u32,
    /// Writer threads in each.
    pub threads: u32,
    /// How long they write.
    pub seconds: f64,
    /// Packets a second per thread (0: as fast as each can).
    pub rate: u32,
    /// The session's one ring buffer, in KiB.
    pub buffer_kb: u32,
    /// Each producer's SMB size hint, in KiB (the same for both services).
    pub smb_kb: u32,
    /// How often the consumer reads.
    pub read_every: Duration,
}

impl SoakOptions {
    /// The long form: 16 producers × 4 threads × 60 s into a 32 MiB ring.
    pub fn long(which: Which) -> SoakOptions {
        SoakOptions {
            which,
            producers: 16,
            threads: 4,
            seconds: 60.0,
            rate: 2_000,
            buffer_kb: 32 * 1024,
            smb_kb: 512,
            read_every: Duration::from_secs(1),
        }
    }
}

/// The soak's programs.
#[derive(Debug, Clone)]
pub struct SoakBins {
    /// `soak_service`.
    pub service: PathBuf,
    /// `soak_producer`.
    pub producer: PathBuf,
}

impl SoakBins {
    /// The programs next to the running executable (as `cargo build` puts
    /// a package's binaries).
    pub fn beside_current_exe() -> std::io::Result<SoakBins> {
        let exe = std::env::current_exe()?;
        let dir = exe.parent().unwrap_or(Path::new("."));
        Ok(SoakBins {
            service: dir.join("soak_service"),
            producer: dir.join("soak_producer"),
        })
    }
}

/// Why a soak could not run to its end (what it found in the trace is in
/// the [`SoakReport`], not here).
#[derive(Debug, thiserror::Error)]
pub enum SoakError {
    /// Spawning or talking to a process failed.
    #[error("i/o: {0}")]
    Io(#[from] std::io::Error),
    /// The consumer connection failed.
    #[error("consumer: {0}")]
    Consumer(#[from] ChannelError),
    /// A process said something unexpected, said nothing, or died.
    #[error("{who}: {what}")]
    Process {
        /// Which process.
        who: String,
        /// What went wrong.
        what: String,
    },
}

fn process_error(who: impl Into<String>, what: impl Into<String>) -> SoakError {
    SoakError::Process {
        who: who.into(),
        what: what.into(),
    }
}

/// A child process with its stdin held (closing it stops the child) and
/// its stdout lines forwarded to a channel as `(index, line)`.
struct Party {
    child: Child,
    stdin: Option<ChildStdin>,
}

impl Party {
    fn spawn(
        cmd: &mut Command,
        index: usize,
        lines: Sender<(usize, String)>,
    ) -> std::io::Result<Party> {
        let mut child = cmd
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()?;
        let stdin = child.stdin.take();
        if let Some(out) = child.stdout.take() {
            std::thread::spawn(move || {
                for line in BufReader::new(out).lines().map_while(Result::ok) {
                    if lines.send((index, line)).is_err() {
                        break;
                    }
                }
                let _ = lines.send((index, String::from("eof")));
            });
        }
        Ok(Party { child, stdin })
    }

    /// Closes stdin and waits for the exit; whether it exited with success.
    fn stop(&mut self) -> std::io::Result<bool> {
        drop(self.stdin.take());
        Ok(self.child.wait()?.success())
    }
}

impl Drop for Party {
    fn drop(&mut self) {
        drop(self.stdin.take());
        if matches!(self.child.try_wait(), Ok(None)) {
            std::thread::sleep(Duration::from_millis(200));
            if matches!(self.child.try_wait(), Ok(None)) {
                let _ = self.child.kill();
            }
        }
        let _ = self.child.wait();
    }
}

/// Waits for `index` to say `want` (other lines go to `other`).
fn expect_line(
    rx: &Receiver<(usize, String)>,
    who: &str,
    want: &str,
    mut other: impl FnMut(usize, &str),
) -> Result<(), SoakError> {
    let deadline = Instant::now() + WAIT;
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        match rx.recv_timeout(left) {
            Ok((_, line)) if line == want => return Ok(()),
            Ok((_, line)) if line == "eof" => return Err(process_error(who, "exited")),
            Ok((i, line)) => other(i, &line),
            Err(_) => return Err(process_error(who, format!("no `{want}` in {WAIT:?}"))),
        }
    }
}

/// The TraceConfig: one ring buffer, the soak's data source.
fn trace_config(buffer_kb: u32) -> Vec<u8> {
    let mut w = HeapWriter::new();
    {
        let mut c = TraceConfig::from_message(w.root());
        // fill_policy 1: RING_BUFFER.
        c.add_buffers()
            .set_size_kb(buffer_kb)
            .set_fill_policy_raw(1);
        c.add_data_sources().begin_config().set_name(DATA_SOURCE);
    }
    w.finish().unwrap_or_default()
}

/// BufferStats fields worth reporting, from an encoded TraceStats.
fn buffer_stats(trace_stats: &[u8]) -> Vec<(&'static str, u64)> {
    const FIELDS: &[(&str, u32)] = &[
        ("bytes_written", 1),
        ("chunks_written", 2),
        ("chunks_overwritten", 3),
        ("write_wrap_count", 4),
        ("patches_succeeded", 5),
        ("patches_failed", 6),
        ("abi_violations", 9),
        ("chunks_discarded", 18),
        ("trace_writer_packet_loss", 19),
    ];
    let buffer = protozero::Decoder::new(trace_stats)
        .filter_map(Result::ok)
        .find(|f| f.id == 1)
        .and_then(|f| f.as_bytes().ok())
        .unwrap_or(&[]);
    let mut out = Vec::new();
    for &(name, id) in FIELDS {
        let v = protozero::Decoder::new(buffer)
            .filter_map(Result::ok)
            .filter(|f| f.id == id)
            .filter_map(|f| f.as_varint().ok())
            .last()
            .unwrap_or(0);
        out.push((name, v));
    }
    out
}

/// Runs one soak and reports what it saw.
pub fn run(opts: &SoakOptions, bins: &SoakBins) -> Result<SoakReport, SoakError> {
    let tag = match opts.which {
        Which::Zerotraced => "ours",
        Which::Genuine => "genuine",
    };
    let dir = std::env::temp_dir().join(format!("zt-soak-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir)?;
    let result = run_in(opts, bins, tag, &dir);
    let _ = std::fs::remove_dir_all(&dir);
    result
}

fn run_in(
    opts: &SoakOptions,
    bins: &SoakBins,
    tag: &str,
    dir: &Path,
) -> Result<SoakReport, SoakError> {
    let (svc_tx, svc_rx) = channel();
    let mut service = Party::spawn(
        Command::new(&bins.service)
            .args(["--which", tag])
            .arg("--dir")
            .arg(dir),
        0,
        svc_tx,
    )?;
    expect_line(&svc_rx, "soak_service", "ready", |_, _| {})?;
    let service_pid = service.child.id();
    let sampler = Sampler::start(service_pid, Duration::from_secs(1));
    sampler.sample_now();

    let socket = dir.join("producer");
    let (tx, rx) = channel();
    let mut producers = Vec::new();
    for id in 0..opts.producers {
        let mut cmd = Command::new(&bins.producer);
        cmd.arg("--socket")
            .arg(&socket)
            .args(["--id", &id.to_string()])
            .args(["--threads", &opts.threads.to_string()])
            .args(["--seconds", &opts.seconds.to_string()])
            .args(["--rate", &opts.rate.to_string()])
            .args(["--smb-kb", &opts.smb_kb.to_string()]);
        producers.push(Party::spawn(&mut cmd, id as usize, tx.clone())?);
    }
    drop(tx);
    for _ in 0..opts.producers {
        expect_line(&rx, "soak_producer", "ready", |_, _| {})?;
    }

    let mut consumer = ConsumerClient::connect(&Endpoint::Path(dir.join("consumer")))?;
    let session = consumer.enable_tracing(&trace_config(opts.buffer_kb), None)?;
    // The service's own CPU from here to the last read: ingesting the
    // producers' commits and serving the consumer's reads.
    let cpu_start = cpu::process_cpu(service_pid).ok();
    sampler.progress().set_phase(Phase::Writing);
    let writing_started = Instant::now();

    let mut checker = Checker::new();
    let mut written: HashMap<u64, u64> = HashMap::new();
    let mut producer_drops = 0u64;
    let mut flushed = 0u32;
    let mut next_read = Instant::now() + opts.read_every;
    let mut reads = 0u64;
    let mut stats_mid = Vec::new();
    while flushed < opts.producers {
        match rx.recv_timeout(next_read.saturating_duration_since(Instant::now())) {
            Ok((id, line)) => {
                let words: Vec<&str> = line.split_whitespace().collect();
                match words.as_slice() {
                    ["started"] | ["ready"] => {}
                    ["flushed"] => flushed += 1,
                    ["eof"] => {
                        return Err(process_error(
                            format!("soak_producer {id}"),
                            "exited before it flushed",
                        ));
                    }
                    ["written", t, n, d] => {
                        let parse = |s: &str| s.parse::<u64>().ok();
                        let (Some(t), Some(n), Some(d)) = (parse(t), parse(n), parse(d)) else {
                            return Err(process_error("soak_producer", format!("said {line:?}")));
                        };
                        written.insert(payload::writer_tag(id as u32, t as u32), n);
                        producer_drops += d;
                    }
                    _ => {
                        return Err(process_error(
                            format!("soak_producer {id}"),
                            format!("said {line:?}"),
                        ));
                    }
                }
            }
            Err(RecvTimeoutError::Timeout) => {
                consumer.read_buffers(|p| checker.packet(p))?;
                reads += 1;
                sampler
                    .progress()
                    .set_packets(checker.counts().test_packets, checker.counts().lost);
                next_read += opts.read_every;
                if writing_started.elapsed().as_secs_f64() > opts.seconds + WAIT.as_secs_f64() {
                    return Err(process_error(
                        "soak_producer",
                        "still writing long after the end",
                    ));
                }
            }
            Err(RecvTimeoutError::Disconnected) => {
                return Err(process_error("soak_producer", "exited before it flushed"));
            }
        }
        if let Ok(Some(status)) = service.child.try_wait() {
            return Err(process_error("soak_service", format!("died: {status}")));
        }
        if stats_mid.is_empty() && writing_started.elapsed().as_secs_f64() > opts.seconds / 2.0 {
            stats_mid = buffer_stats(&consumer.trace_stats()?);
        }
    }
    let writing_secs = writing_started.elapsed().as_secs_f64();
    sampler.progress().set_phase(Phase::Draining);
    let stats = buffer_stats(&consumer.trace_stats()?);
    consumer.read_buffers(|p| checker.packet(p))?;
    consumer.disable_tracing()?;
    let end = consumer.wait_for_end(session, Some(WAIT))?;
    consumer.read_buffers(|p| checker.packet(p))?;
    reads += 3;
    let service_cpu_secs = match (cpu_start, cpu::process_cpu(service_pid).ok()) {
        (Some(a), Some(b)) => Some(b.saturating_sub(a).as_secs_f64()),
        _ => None,
    };
    sampler
        .progress()
        .set_packets(checker.counts().test_packets, checker.counts().lost);
    let peak = Memory::of(service_pid)?;
    sampler.sample_now();
    consumer.free_buffers()?;
    sampler.progress().set_phase(Phase::Freed);
    std::thread::sleep(Duration::from_secs(1));
    sampler.sample_now();
    drop(consumer);

    let mut producers_ok = true;
    for p in &mut producers {
        producers_ok &= p.stop()?;
    }
    let samples = sampler.finish();
    let service_ok = service.stop()?;
    let counts: CheckCounts = checker.finish(&written);
    let (problems, problem_count) = checker.problems();
    Ok(SoakReport {
        options: opts.clone(),
        samples,
        peak_hwm_kb: peak.hwm_kb,
        written: written.values().sum(),
        writers: written.len() as u64,
        producer_drops,
        counts,
        problems: problems.to_vec(),
        problem_count,
        reads,
        writing_secs,
        session_end: format!("{end:?}"),
        buffer_stats: stats,
        buffer_stats_mid: stats_mid,
        exits_ok: service_ok && producers_ok,
        service_cpu_secs,
    })
}
