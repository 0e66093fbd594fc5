//! `drain_buffer_percent`: read a CPU's ring buffer as soon as it is that
//! full, not only on the drain period. The kernel's `buffer_percent` makes
//! a poll of `per_cpu/cpuN/trace_pipe_raw` wait until the buffer passes
//! the watermark; a thread of its own waits on every CPU's pipe and wakes
//! the probes' thread, which reads the whole instance (as upstream's
//! controller does on such a wake-up).
//!
//! Poll readiness on these pipes is reliable from Linux 6.9 on (upstream
//! requires it: earlier ring buffers could miss the wake-up); elsewhere
//! the drain period alone reads, and the trace says so.

use std::os::fd::OwnedFd;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;
use std::time::Duration;

use rustix::event::{PollFd, PollFlags, Timespec, poll};

/// How often the watcher looks at its stop flag while nothing happens.
const IDLE: Duration = Duration::from_millis(100);
/// How long the watcher waits for a read pass after waking the reader.
const AFTER_WAKE: Duration = Duration::from_millis(1);

/// Whether kernel release `release` (`uname -r`) wakes pollers of
/// `trace_pipe_raw` reliably at `buffer_percent`: 6.9 and later.
pub fn poll_supported(release: &str) -> bool {
    let mut parts = release.split(|c: char| !c.is_ascii_digit());
    let major: u32 = parts.next().and_then(|p| p.parse().ok()).unwrap_or(0);
    let minor: u32 = parts.next().and_then(|p| p.parse().ok()).unwrap_or(0);
    (major, minor) >= (6, 9)
}

/// Wakes the reader when a CPU's buffer passes the watermark.
pub struct Watermark {
    stop: Arc<AtomicBool>,
    ready: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl std::fmt::Debug for Watermark {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Watermark")
            .field("ready", &self.ready.load(Ordering::Relaxed))
            .finish_non_exhaustive()
    }
}

impl Watermark {
    /// Watches `pipes` (each CPU's `trace_pipe_raw`, as opened by the
    /// reader); `wake` is called once per crossing, and again only after
    /// [`Watermark::take_ready`].
    pub fn start(
        pipes: Vec<OwnedFd>,
        wake: Arc<dyn Fn() + Send + Sync>,
    ) -> std::io::Result<Watermark> {
        let stop = Arc::new(AtomicBool::new(false));
        let ready = Arc::new(AtomicBool::new(false));
        let thread = {
            let (stop, ready) = (stop.clone(), ready.clone());
            std::thread::Builder::new()
                .name("ftrace-watermark".into())
                .spawn(move || watch(pipes, &stop, &ready, &*wake))?
        };
        Ok(Watermark {
            stop,
            ready,
            thread: Some(thread),
        })
    }

    /// Whether a buffer passed the watermark since the last read pass.
    pub fn is_ready(&self) -> bool {
        self.ready.load(Ordering::Acquire)
    }

    /// Before a read pass: clears the flag, so that the next crossing
    /// wakes the reader again.
    pub fn take_ready(&self) -> bool {
        self.ready.swap(false, Ordering::AcqRel)
    }
}

impl Drop for Watermark {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

fn watch(mut pipes: Vec<OwnedFd>, stop: &AtomicBool, ready: &AtomicBool, wake: &dyn Fn()) {
    let idle = Timespec {
        tv_sec: 0,
        tv_nsec: IDLE.as_nanos() as i64,
    };
    while !stop.load(Ordering::Relaxed) && !pipes.is_empty() {
        if ready.load(Ordering::Acquire) {
            // The reader has not read since the last wake-up.
            std::thread::sleep(AFTER_WAKE);
            continue;
        }
        let mut fds: Vec<PollFd<'_>> = pipes
            .iter()
            .map(|p| PollFd::new(p, PollFlags::IN))
            .collect();
        match poll(&mut fds, Some(&idle)) {
            Ok(0) | Err(rustix::io::Errno::INTR) => continue,
            Ok(_) => {}
            Err(_) => return,
        }
        let revents: Vec<PollFlags> = fds.iter().map(|f| f.revents()).collect();
        drop(fds);
        if revents.iter().any(|r| r.contains(PollFlags::IN)) {
            ready.store(true, Ordering::Release);
            wake();
        }
        // A CPU whose pipe errs (offline) is left out, not spun on.
        let mut i = 0;
        pipes.retain(|_| {
            let bad = revents[i].intersects(PollFlags::ERR | PollFlags::NVAL | PollFlags::HUP)
                && !revents[i].contains(PollFlags::IN);
            i += 1;
            !bad
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kernels_from_6_9_on() {
        for (r, ok) in [
            ("6.18.0-1-amd64", true),
            ("6.9.0", true),
            ("6.10", true),
            ("7.0.1", true),
            ("6.8.12-generic", false),
            ("5.15.0", false),
            ("garbage", false),
            ("", false),
        ] {
            assert_eq!(poll_supported(r), ok, "{r}");
        }
    }

    /// A pipe that becomes readable wakes once, and again only after the
    /// reader took the flag.
    #[test]
    fn wakes_once_per_crossing() {
        let (r, w) = std::io::pipe().unwrap();
        let woken = Arc::new(std::sync::atomic::AtomicU32::new(0));
        let count = woken.clone();
        let m = Watermark::start(
            vec![OwnedFd::from(r)],
            Arc::new(move || {
                count.fetch_add(1, Ordering::Relaxed);
            }),
        )
        .unwrap();
        use std::io::Write;
        (&w).write_all(b"x").unwrap();
        let start = std::time::Instant::now();
        while !m.is_ready() {
            assert!(start.elapsed() < Duration::from_secs(10));
            std::thread::sleep(Duration::from_millis(1));
        }
        std::thread::sleep(Duration::from_millis(20));
        assert_eq!(woken.load(Ordering::Relaxed), 1, "not again until taken");
        assert!(m.take_ready());
        let start = std::time::Instant::now();
        while woken.load(Ordering::Relaxed) < 2 {
            assert!(start.elapsed() < Duration::from_secs(10));
            std::thread::sleep(Duration::from_millis(1));
        }
        drop(m);
    }
}
