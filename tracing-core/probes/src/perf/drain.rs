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
//! While the queue is full the thread sleeps until the data source takes
//! from it (a condition variable), not polling descriptors that stay
//! readable. At the data source's stop ([`Drain::finish`]) the thread is
//! stopped, and what it queued and everything left in the (disabled)
//! buffers is handed back, whatever the cap: the buffers end empty.

use std::collections::VecDeque;
use std::os::fd::OwnedFd;
use std::sync::atomic::AtomicU64;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::Duration;

use rustix::event::{PollFd, PollFlags, Timespec, poll};

use super::buffer::PerfBuffer;

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

/// The buffers a drain reads.
pub type Buffers = Vec<Box<dyn PerfBuffer>>;

struct Shared {
    events: Mutex<Buffers>,
    /// The requested stack copy of each sample, cut to what was filled as
    /// it is copied out (`perf::compact`); `None`: records copied whole.
    stack_size: Option<u64>,
    queue: Mutex<Queue>,
    /// Signalled when the queue is taken from, and at the stop.
    room: Condvar,
    /// The queue's bound in bytes.
    cap: u64,
    stop: AtomicBool,
    /// Passes of the thread's loop (each a poll or sleep, maybe a read).
    passes: AtomicU64,
    /// Times the thread found the queue full and waited for room.
    room_waits: AtomicU64,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl Shared {
    /// Copies every buffer's new bytes into the queue, up to the cap;
    /// whether any came.
    fn read(&self) -> bool {
        let mut events = lock(&self.events);
        let mut any = false;
        for ev in events.iter_mut() {
            if lock(&self.queue).bytes >= self.cap {
                break;
            }
            let Some(chunk) = read_chunk(ev.as_mut(), self.stack_size) else {
                continue;
            };
            any = true;
            let mut q = lock(&self.queue);
            q.bytes += chunk.bytes.len() as u64;
            q.chunks.push_back(chunk);
        }
        any
    }

    /// Sleeps while the queue is full, until the data source takes from
    /// it or the drain stops.
    fn wait_for_room(&self) {
        let mut q = lock(&self.queue);
        if q.bytes < self.cap || self.stop.load(Ordering::SeqCst) {
            return;
        }
        self.room_waits.fetch_add(1, Ordering::SeqCst);
        while q.bytes >= self.cap && !self.stop.load(Ordering::SeqCst) {
            q = self.room.wait(q).unwrap_or_else(|e| e.into_inner());
        }
    }
}

/// Everything `ev` holds now, as a chunk (`None`: nothing, no error).
fn read_chunk(ev: &mut dyn PerfBuffer, stack_size: Option<u64>) -> Option<Chunk> {
    let mut bytes = Vec::new();
    let malformed = ev.read(&mut bytes, stack_size).is_err();
    (!bytes.is_empty() || malformed).then(|| Chunk {
        cpu: ev.cpu(),
        bytes,
        malformed,
    })
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
        events: Buffers,
        period: Duration,
        stack_size: Option<u64>,
        wake: Arc<dyn Fn() + Send + Sync>,
    ) -> Result<Drain, (Buffers, std::io::Error)> {
        Drain::start_capped(events, period, stack_size, QUEUE_CAP, wake)
    }

    /// As [`Drain::start`], the queue bounded at `cap` bytes.
    pub fn start_capped(
        events: Buffers,
        period: Duration,
        stack_size: Option<u64>,
        cap: u64,
        wake: Arc<dyn Fn() + Send + Sync>,
    ) -> Result<Drain, (Buffers, std::io::Error)> {
        let fds = match events
            .iter()
            .map(|e| e.watch_fd())
            .collect::<std::io::Result<Vec<_>>>()
        {
            Ok(fds) => fds,
            Err(e) => return Err((events, e)),
        };
        let shared = Arc::new(Shared {
            events: Mutex::new(events),
            stack_size,
            queue: Mutex::new(Queue::default()),
            room: Condvar::new(),
            cap,
            stop: AtomicBool::new(false),
            passes: AtomicU64::new(0),
            room_waits: AtomicU64::new(0),
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
    pub fn events(&self) -> MutexGuard<'_, Buffers> {
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

    /// Takes every waiting chunk (the thread, if it waits for room, reads
    /// again).
    pub fn take(&self) -> Vec<Chunk> {
        let mut q = lock(&self.shared.queue);
        q.bytes = 0;
        let chunks = q.chunks.drain(..).collect();
        self.shared.room.notify_all();
        chunks
    }

    /// Passes the thread made so far (each a poll or a sleep).
    pub fn passes(&self) -> u64 {
        self.shared.passes.load(Ordering::SeqCst)
    }

    /// Times the thread found the queue full and waited for room.
    pub fn room_waits(&self) -> u64 {
        self.shared.room_waits.load(Ordering::SeqCst)
    }

    /// The stop: ends the thread, then hands back what it queued and
    /// everything still in the buffers (disabled by the caller), read
    /// whatever the cap, in order per CPU; the buffers end empty.
    pub fn finish(mut self) -> Vec<Chunk> {
        self.stop_thread();
        let mut chunks = self.take();
        let mut events = lock(&self.shared.events);
        for ev in events.iter_mut() {
            chunks.extend(read_chunk(ev.as_mut(), self.shared.stack_size));
        }
        chunks
    }

    fn stop_thread(&mut self) {
        {
            // Under the queue's lock, so that a thread about to wait for
            // room sees the flag or gets the signal.
            let _q = lock(&self.shared.queue);
            self.shared.stop.store(true, Ordering::SeqCst);
            self.shared.room.notify_all();
        }
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

impl Drop for Drain {
    fn drop(&mut self) {
        self.stop_thread();
    }
}

fn run(shared: &Shared, mut fds: Vec<OwnedFd>, period: Duration, wake: &dyn Fn()) {
    let period = period.max(Duration::from_millis(1));
    let mut next = std::time::Instant::now() + period;
    while !shared.stop.load(Ordering::SeqCst) {
        // A full queue: the data stays in the kernel until there is room
        // (the buffers' descriptors stay readable, so polling them now
        // would spin).
        shared.wait_for_room();
        if shared.stop.load(Ordering::SeqCst) {
            break;
        }
        shared.passes.fetch_add(1, Ordering::SeqCst);
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

#[cfg(test)]
#[path = "drain_tests.rs"]
mod tests;
