//! The service's memory, from `/proc/<pid>/status`, sampled once a second
//! on a thread of the soak runner: resident set (`VmRSS`) and its parts
//! (anonymous memory: buffers and heap; shared memory: the producers' SMBs
//! the service has touched) and the peak (`VmHWM`).

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU8, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// Which part of the soak a sample was taken in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    /// The service is up, no session yet.
    Idle = 0,
    /// Producers are writing.
    Writing = 1,
    /// Writing is over; the last reads, the end of the session.
    Draining = 2,
    /// The session's buffers are freed.
    Freed = 3,
}

impl Phase {
    fn from_u8(v: u8) -> Phase {
        match v {
            0 => Phase::Idle,
            1 => Phase::Writing,
            2 => Phase::Draining,
            _ => Phase::Freed,
        }
    }

    /// A short name for tables.
    pub fn name(self) -> &'static str {
        match self {
            Phase::Idle => "idle",
            Phase::Writing => "writing",
            Phase::Draining => "draining",
            Phase::Freed => "freed",
        }
    }
}

/// The memory figures of one `/proc/<pid>/status` read, in KiB.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Memory {
    /// `VmRSS`.
    pub rss_kb: u64,
    /// `RssAnon`.
    pub anon_kb: u64,
    /// `RssFile`.
    pub file_kb: u64,
    /// `RssShmem`.
    pub shmem_kb: u64,
    /// `VmHWM` (the peak of `VmRSS` so far).
    pub hwm_kb: u64,
}

impl Memory {
    /// Reads process `pid`'s figures.
    pub fn of(pid: u32) -> std::io::Result<Memory> {
        let text = std::fs::read_to_string(PathBuf::from(format!("/proc/{pid}/status")))?;
        let mut m = Memory::default();
        for line in text.lines() {
            let Some((key, rest)) = line.split_once(':') else {
                continue;
            };
            let kb = || {
                rest.split_whitespace()
                    .next()
                    .and_then(|v| v.parse().ok())
                    .unwrap_or(0)
            };
            match key {
                "VmRSS" => m.rss_kb = kb(),
                "RssAnon" => m.anon_kb = kb(),
                "RssFile" => m.file_kb = kb(),
                "RssShmem" => m.shmem_kb = kb(),
                "VmHWM" => m.hwm_kb = kb(),
                _ => {}
            }
        }
        Ok(m)
    }
}

/// One sample.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Sample {
    /// Seconds since the sampler started.
    pub t: f64,
    /// The phase it was taken in.
    pub phase: Phase,
    /// The service's memory.
    pub memory: Memory,
    /// Packets the consumer had read by then.
    pub packets_read: u64,
    /// Packets it had found lost (flagged gaps) by then.
    pub packets_lost: u64,
}

/// What the runner shares with the sampler.
#[derive(Debug, Default)]
pub struct Progress {
    phase: AtomicU8,
    packets_read: AtomicU64,
    packets_lost: AtomicU64,
}

impl Progress {
    /// Enters `phase`.
    pub fn set_phase(&self, phase: Phase) {
        self.phase.store(phase as u8, Ordering::Relaxed);
    }

    /// Records the packets read and found lost so far.
    pub fn set_packets(&self, read: u64, lost: u64) {
        self.packets_read.store(read, Ordering::Relaxed);
        self.packets_lost.store(lost, Ordering::Relaxed);
    }
}

/// Samples a process's memory every `period` until stopped.
#[derive(Debug)]
pub struct Sampler {
    stop: Arc<AtomicBool>,
    samples: Arc<Mutex<Vec<Sample>>>,
    thread: Option<JoinHandle<()>>,
    progress: Arc<Progress>,
    start: Instant,
    pid: u32,
}

impl Sampler {
    /// Starts sampling process `pid`.
    pub fn start(pid: u32, period: Duration) -> Sampler {
        let stop = Arc::new(AtomicBool::new(false));
        let samples = Arc::new(Mutex::new(Vec::new()));
        let progress = Arc::new(Progress::default());
        let start = Instant::now();
        let thread = {
            let (stop, samples, progress) = (stop.clone(), samples.clone(), progress.clone());
            std::thread::spawn(move || {
                let mut next = Instant::now();
                while !stop.load(Ordering::Relaxed) {
                    if let Ok(memory) = Memory::of(pid) {
                        let s = Sample {
                            t: start.elapsed().as_secs_f64(),
                            phase: Phase::from_u8(progress.phase.load(Ordering::Relaxed)),
                            memory,
                            packets_read: progress.packets_read.load(Ordering::Relaxed),
                            packets_lost: progress.packets_lost.load(Ordering::Relaxed),
                        };
                        samples
                            .lock()
                            .unwrap_or_else(PoisonError::into_inner)
                            .push(s);
                    }
                    next += period;
                    // Sleep in short steps so that stopping is prompt.
                    while !stop.load(Ordering::Relaxed) {
                        let now = Instant::now();
                        if now >= next {
                            break;
                        }
                        std::thread::sleep((next - now).min(Duration::from_millis(50)));
                    }
                }
            })
        };
        Sampler {
            stop,
            samples,
            thread: Some(thread),
            progress,
            start,
            pid,
        }
    }

    /// What the runner updates.
    pub fn progress(&self) -> &Progress {
        &self.progress
    }

    /// Takes one sample now (besides the periodic ones).
    pub fn sample_now(&self) {
        if let Ok(memory) = Memory::of(self.pid) {
            let s = Sample {
                t: self.start.elapsed().as_secs_f64(),
                phase: Phase::from_u8(self.progress.phase.load(Ordering::Relaxed)),
                memory,
                packets_read: self.progress.packets_read.load(Ordering::Relaxed),
                packets_lost: self.progress.packets_lost.load(Ordering::Relaxed),
            };
            self.samples
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .push(s);
        }
    }

    /// Stops and returns the samples in time order.
    pub fn finish(mut self) -> Vec<Sample> {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
        let mut v =
            std::mem::take(&mut *self.samples.lock().unwrap_or_else(PoisonError::into_inner));
        v.sort_by(|a, b| a.t.total_cmp(&b.t));
        v
    }
}

impl Drop for Sampler {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}
