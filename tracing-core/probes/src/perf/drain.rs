//! Keeping the kernel's ring buffers empty while samples are unwound. A
//! DWARF sample carries a 64 KiB stack copy, so the default 1 MiB buffer
//! of a CPU holds 16 of them: at 1 kHz it fills in 16 ms, and the first
//! sample of a process (its ELF files read and parsed) can take longer
//! than that to unwind. As `traced_perf` reads on one thread and unwinds
//! on another, a thread of its own here copies every buffer out as soon as
//! the kernel says it is a quarter full (`wakeup_watermark`), and at least every
//! `ring_buffer_read_period_ms`, into a queue that the data source
//! unwinds from on the probes' thread (woken for it). Each sample's stack
//! copy is cut to the bytes the kernel filled on the way (`compact.rs`):
//! a few KiB of the 64 KiB reserved, so the copy and the queue stay small.
//!
//! The queue is bounded ([`QUEUE_CAP`]): past it the thread leaves the data
//! in the kernel, whose buffer then overflows and says how many records it
//! lost (written as `kernel_records_lost`): nothing is dropped unsaid.

use std::collections::VecDeque;
use std::os::fd::OwnedFd;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::Duration;

use rustix::event::{PollFd, PollFlags, Timespec, poll};

use super::event::CpuEvent;

/// The most bytes the queue holds before the thread stops reading.
pub const QUEUE_CAP: u64 = 64 << 20;

/// How long the thread waits at most between looks at its stop flag.
const MAX_WAIT: Duration = Duration::from_millis(50);

/// Bytes read from one CPU's buffer.
#[derive(Debug)]
pub struct Chunk {
    /// The CPU.
    pub cpu: u32,
    /// Whole records, as the kernel wrote them.
    pub bytes: Vec<u8>,
    /// Whether the buffer's positions were inconsistent (the reader
    /// skipped to the head).
    pub malformed: bool,
}

#[derive(Debug, Default)]
struct Queue {
    chunks: VecDeque<Chunk>,
    bytes: u64,
}

struct Shared {
    events: Mutex<Vec<CpuEvent>>,
    /// The requested stack copy of each sample, cut to what was filled as
    /// it is copied out (`perf::compact`); `None`: records copied whole.
    stack_size: Option<u64>,
    queue: Mutex<Queue>,
    stop: AtomicBool,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl Shared {
    /// Copies every buffer's new bytes into the queue; whether any came.
    fn read(&self) -> bool {
        let mut events = lock(&self.events);
        let mut any = false;
        for ev in events.iter_mut() {
            if lock(&self.queue).bytes >= QUEUE_CAP {
                break;
            }
            let mut bytes = Vec::new();
            let malformed = match self.stack_size {
                Some(n) => ev.read_compacted_into(&mut bytes, n),
                None => ev.read_into(&mut bytes),
            }
            .is_err();
            if bytes.is_empty() && !malformed {
                continue;
            }
            any = true;
            let mut q = lock(&self.queue);
            q.bytes += bytes.len() as u64;
            q.chunks.push_back(Chunk {
                cpu: ev.cpu(),
                bytes,
                malformed,
            });
        }
        any
    }
}

/// The ring buffers of one data source instance and the thread that
/// drains them.
pub struct Drain {
    shared: Arc<Shared>,
    thread: Option<JoinHandle<()>>,
}

impl std::fmt::Debug for Drain {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Drain")
            .field("queued_bytes", &self.queued_bytes())
            .finish_non_exhaustive()
    }
}

impl Drain {
    /// Takes `events` (already enabled or not) and starts the thread:
    /// it reads when a buffer passes its watermark and every `period`,
    /// and calls `wake` after a read that found something. With
    /// `stack_size` (the samples' requested `sample_stack_user`), each
    /// sample's stack copy is cut to what the kernel filled as it is copied
    /// out. Where the thread cannot be had, the events come back with the
    /// reason.
    pub fn start(
        events: Vec<CpuEvent>,
        period: Duration,
        stack_size: Option<u64>,
        wake: Arc<dyn Fn() + Send + Sync>,
    ) -> Result<Drain, (Vec<CpuEvent>, std::io::Error)> {
        let fds = match events
            .iter()
            .map(CpuEvent::watch_fd)
            .collect::<std::io::Result<Vec<_>>>()
        {
            Ok(fds) => fds,
            Err(e) => return Err((events, e)),
        };
        let shared = Arc::new(Shared {
            events: Mutex::new(events),
            stack_size,
            queue: Mutex::new(Queue::default()),
            stop: AtomicBool::new(false),
        });
        let spawned = {
            let shared = shared.clone();
            std::thread::Builder::new()
                .name("perf-drain".into())
                .spawn(move || run(&shared, fds, period, &*wake))
        };
        match spawned {
            Ok(thread) => Ok(Drain {
                shared,
                thread: Some(thread),
            }),
            Err(e) => {
                let events = match Arc::try_unwrap(shared) {
                    Ok(s) => s.events.into_inner().unwrap_or_else(|e| e.into_inner()),
                    Err(s) => std::mem::take(&mut *lock(&s.events)),
                };
                Err((events, e))
            }
        }
    }

    /// The events, for enabling and disabling (the thread may be reading).
    pub fn events(&self) -> MutexGuard<'_, Vec<CpuEvent>> {
        lock(&self.shared.events)
    }

    /// Reads every buffer now, on the caller's thread (a flush or stop).
    pub fn read_now(&self) {
        self.shared.read();
    }

    /// Whether chunks are waiting.
    pub fn has_chunks(&self) -> bool {
        !lock(&self.shared.queue).chunks.is_empty()
    }

    /// Bytes waiting in the queue.
    pub fn queued_bytes(&self) -> u64 {
        lock(&self.shared.queue).bytes
    }

    /// Takes every waiting chunk.
    pub fn take(&self) -> Vec<Chunk> {
        let mut q = lock(&self.shared.queue);
        q.bytes = 0;
        q.chunks.drain(..).collect()
    }
}

impl Drop for Drain {
    fn drop(&mut self) {
        self.shared.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

fn run(shared: &Shared, mut fds: Vec<OwnedFd>, period: Duration, wake: &dyn Fn()) {
    let period = period.max(Duration::from_millis(1));
    let mut next = std::time::Instant::now() + period;
    while !shared.stop.load(Ordering::Relaxed) {
        let now = std::time::Instant::now();
        let wait = next.saturating_duration_since(now).min(MAX_WAIT);
        let timeout = Timespec {
            tv_sec: wait.as_secs() as i64,
            tv_nsec: i64::from(wait.subsec_nanos()),
        };
        let mut ready = false;
        if fds.is_empty() {
            std::thread::sleep(wait);
        } else {
            let mut polled: Vec<PollFd<'_>> =
                fds.iter().map(|f| PollFd::new(f, PollFlags::IN)).collect();
            match poll(&mut polled, Some(&timeout)) {
                Ok(0) | Err(rustix::io::Errno::INTR) => {}
                Ok(_) => {
                    let revents: Vec<PollFlags> = polled.iter().map(|p| p.revents()).collect();
                    drop(polled);
                    ready = revents.iter().any(|r| r.contains(PollFlags::IN));
                    // A descriptor in error (its CPU went offline) is no
                    // longer polled; the period still reads its buffer.
                    let mut i = 0;
                    fds.retain(|_| {
                        let bad = revents[i]
                            .intersects(PollFlags::ERR | PollFlags::NVAL | PollFlags::HUP)
                            && !revents[i].contains(PollFlags::IN);
                        i += 1;
                        !bad
                    });
                }
                Err(_) => fds.clear(),
            }
        }
        let due = std::time::Instant::now() >= next;
        if ready || due {
            if due {
                next = std::time::Instant::now() + period;
            }
            if shared.read() {
                wake();
            }
        }
    }
}
