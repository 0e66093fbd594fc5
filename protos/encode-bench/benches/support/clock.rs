//! The clock the benchmark measures with: this thread's CPU time where it is
//! available (64-bit Linux), wall time elsewhere or when `BENCH_CLOCK=wall`.
//!
//! The machines these benchmarks run on are shared; a thread that is
//! descheduled for a few milliseconds inflates wall-clock samples, while its
//! CPU time only counts the cycles it actually ran. Ratios between variants
//! measured in one run are what matters, and CPU time keeps them stable.

use std::time::{Duration, Instant};

use criterion::measurement::{Measurement, ValueFormatter, WallTime};

/// Thread CPU time (or wall time), reported in the same units as wall time.
pub struct BenchClock {
    cpu: bool,
}

impl BenchClock {
    /// CPU time unless unavailable or `BENCH_CLOCK=wall` is set.
    pub fn from_env() -> BenchClock {
        let want_wall = std::env::var("BENCH_CLOCK").is_ok_and(|v| v == "wall");
        BenchClock {
            cpu: !want_wall && thread_cpu_time().is_some(),
        }
    }

    /// Which clock is in use, for the log.
    pub fn name(&self) -> &'static str {
        if self.cpu {
            "thread CPU time"
        } else {
            "wall time"
        }
    }
}

/// A point in time of either clock.
pub enum Stamp {
    /// CPU time consumed by this thread so far.
    Cpu(Duration),
    /// A wall-clock instant.
    Wall(Instant),
}

impl Measurement for BenchClock {
    type Intermediate = Stamp;
    type Value = Duration;

    fn start(&self) -> Stamp {
        match self.cpu.then(thread_cpu_time).flatten() {
            Some(t) => Stamp::Cpu(t),
            None => Stamp::Wall(Instant::now()),
        }
    }

    fn end(&self, start: Stamp) -> Duration {
        match start {
            Stamp::Cpu(t0) => thread_cpu_time().map_or(Duration::ZERO, |t1| t1.saturating_sub(t0)),
            Stamp::Wall(t0) => t0.elapsed(),
        }
    }

    fn add(&self, a: &Duration, b: &Duration) -> Duration {
        *a + *b
    }

    fn zero(&self) -> Duration {
        Duration::ZERO
    }

    fn to_f64(&self, value: &Duration) -> f64 {
        value.as_nanos() as f64
    }

    fn formatter(&self) -> &dyn ValueFormatter {
        WallTime.formatter()
    }
}

#[cfg(all(target_os = "linux", target_pointer_width = "64"))]
fn thread_cpu_time() -> Option<Duration> {
    /// `struct timespec` on 64-bit Linux.
    #[repr(C)]
    struct Timespec {
        tv_sec: i64,
        tv_nsec: i64,
    }
    /// `CLOCK_THREAD_CPUTIME_ID` on Linux.
    const CLOCK_THREAD_CPUTIME_ID: i32 = 3;
    unsafe extern "C" {
        fn clock_gettime(clock: i32, ts: *mut Timespec) -> i32;
    }
    let mut ts = Timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `clock_gettime` (from the C library std already links) writes
    // one `struct timespec`, whose 64-bit Linux layout `Timespec` matches.
    let rc = unsafe { clock_gettime(CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    (rc == 0).then(|| Duration::new(ts.tv_sec as u64, ts.tv_nsec as u32))
}

#[cfg(not(all(target_os = "linux", target_pointer_width = "64")))]
fn thread_cpu_time() -> Option<Duration> {
    None
}
