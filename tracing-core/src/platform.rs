//! The machine as every part of the crate reads it, whoever asks: the
//! BOOTTIME clock that producers stamp events with and the service runs
//! on, the clocks of a clock snapshot, the calling thread's id, and who
//! this process is (its uid, its machine's name). The producer, TrackEvent
//! and the daemon use it; it uses none of them.
//!
//! Linux has all of it. Elsewhere there is no BOOTTIME, and the monotonic
//! clock stands in for it ([`boottime_ns`]).

#[cfg(unix)]
fn ns(id: rustix::time::ClockId) -> u64 {
    let t = rustix::time::clock_gettime(id);
    (t.tv_sec as u64)
        .saturating_mul(1_000_000_000)
        .saturating_add(t.tv_nsec as u64)
}

/// BOOTTIME in nanoseconds: the core's `now`, and the clock of the events
/// producers write. Outside Linux, the monotonic clock stands in for it:
/// `CLOCK_MONOTONIC` on other unix systems (on Apple's it goes on during
/// sleep, as BOOTTIME does), the performance counter on Windows. Either is
/// one clock for every process of the machine.
pub fn boottime_ns() -> u64 {
    #[cfg(target_os = "linux")]
    let now = ns(rustix::time::ClockId::Boottime);
    #[cfg(all(unix, not(target_os = "linux")))]
    let now = ns(rustix::time::ClockId::Monotonic);
    #[cfg(windows)]
    let now = windows::performance_counter_ns();
    now
}

/// The calling thread's id as the system names it: `gettid` on Linux,
/// `pthread_threadid_np` on Apple's systems, `GetCurrentThreadId` on
/// Windows; elsewhere a number unique within the process.
pub fn current_thread_id() -> i64 {
    #[cfg(target_os = "linux")]
    let tid = rustix::thread::gettid().as_raw_nonzero().get() as i64;
    #[cfg(target_vendor = "apple")]
    let tid = {
        let mut id = 0u64;
        // SAFETY: a null thread asks for the calling thread's id, written
        // through a valid pointer to a live u64.
        let _ = unsafe { libc::pthread_threadid_np(0, &mut id) };
        id as i64
    };
    #[cfg(windows)]
    let tid = windows::current_thread_id();
    #[cfg(not(any(target_os = "linux", target_vendor = "apple", windows)))]
    let tid = {
        use std::sync::atomic::{AtomicI64, Ordering};
        static NEXT: AtomicI64 = AtomicI64::new(1);
        thread_local! {
            static TID: i64 = NEXT.fetch_add(1, Ordering::Relaxed);
        }
        TID.with(|t| *t)
    };
    tid
}

/// The kernel's boot id as it prints it (`/proc/sys/kernel/random/boot_id`);
/// `None` where there is none (not Linux).
pub fn boot_id() -> Option<String> {
    std::fs::read_to_string("/proc/sys/kernel/random/boot_id").ok()
}

/// The uid the daemon runs as (0 where there are no uids: Windows).
pub fn current_uid() -> u32 {
    #[cfg(unix)]
    let uid = rustix::process::getuid().as_raw();
    #[cfg(not(unix))]
    let uid = 0;
    uid
}

/// The performance counter, which is what Windows has for a machine-wide
/// monotonic clock (`std::time::Instant` reads it too, but keeps its value
/// opaque).
#[cfg(windows)]
mod windows {
    use std::sync::OnceLock;

    use windows_sys::Win32::System::Performance::{
        QueryPerformanceCounter, QueryPerformanceFrequency,
    };

    /// The counter in nanoseconds.
    pub(super) fn performance_counter_ns() -> u64 {
        static FREQUENCY: OnceLock<u64> = OnceLock::new();
        let frequency = *FREQUENCY.get_or_init(|| {
            let mut f = 0i64;
            // SAFETY: writes one i64 through a valid pointer; it cannot fail
            // on any Windows that Rust supports.
            unsafe { QueryPerformanceFrequency(&mut f) };
            (f as u64).max(1)
        });
        let mut count = 0i64;
        // SAFETY: as above.
        unsafe { QueryPerformanceCounter(&mut count) };
        (count as u128 * 1_000_000_000 / frequency as u128) as u64
    }

    /// `GetCurrentThreadId`.
    pub(super) fn current_thread_id() -> i64 {
        // SAFETY: no arguments, no failure.
        i64::from(unsafe { windows_sys::Win32::System::Threading::GetCurrentThreadId() })
    }
}

/// MONOTONIC in nanoseconds where it differs from [`boottime_ns`] (Linux);
/// `None` elsewhere, where the BOOTTIME stand-in is the monotonic clock
/// already.
pub fn monotonic_ns() -> Option<u64> {
    #[cfg(target_os = "linux")]
    let mono = Some(ns(rustix::time::ClockId::Monotonic));
    #[cfg(not(target_os = "linux"))]
    let mono = None;
    mono
}

/// The clocks of a clock snapshot, as (BuiltinClock id, nanoseconds).
#[cfg(target_os = "linux")]
pub fn clock_readings() -> Vec<(u32, u64)> {
    use rustix::time::ClockId;
    [
        (6, ClockId::Boottime),
        (2, ClockId::RealtimeCoarse),
        (4, ClockId::MonotonicCoarse),
        (1, ClockId::Realtime),
        (3, ClockId::Monotonic),
        (5, ClockId::MonotonicRaw),
    ]
    .into_iter()
    .map(|(clock_id, c)| (clock_id, ns(c)))
    .collect()
}

/// The clocks of a clock snapshot, as (BuiltinClock id, nanoseconds): the
/// stand-in for BOOTTIME ([`boottime_ns`]), reported as BOOTTIME and as
/// MONOTONIC (what Perfetto's SDK stamps events with on these systems), and
/// the wall clock.
#[cfg(not(target_os = "linux"))]
pub fn clock_readings() -> Vec<(u32, u64)> {
    let now = boottime_ns();
    let realtime = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64);
    vec![(6, now), (1, realtime), (3, now)]
}

/// This machine's `SystemInfo`, encoded: the kernel (`uname`), the page
/// size, the CPUs and this tracer's version. The service writes it into
/// every trace; a relay sends it to the central service for its machine.
pub fn system_info() -> Vec<u8> {
    let mut w = protozero::HeapWriter::new();
    {
        let mut s = zerotrace_protos::protos::SystemInfo::from_message(w.root());
        #[cfg(unix)]
        {
            let u = rustix::system::uname();
            let mut n = s.begin_utsname();
            n.set_sysname(&u.sysname().to_string_lossy());
            n.set_version(&u.version().to_string_lossy());
            n.set_release(&u.release().to_string_lossy());
            n.set_machine(&u.machine().to_string_lossy());
        }
        #[cfg(not(unix))]
        {
            let mut n = s.begin_utsname();
            n.set_sysname("Windows");
            n.set_machine(std::env::consts::ARCH);
        }
        s.set_tracing_service_version(concat!("zerotrace ", env!("CARGO_PKG_VERSION")));
        #[cfg(unix)]
        s.set_page_size(rustix::param::page_size() as u32);
        if let Ok(n) = std::thread::available_parallelism() {
            s.set_num_cpus(n.get() as u32);
        }
    }
    w.finish().unwrap_or_default()
}

/// This machine's name, as Perfetto's service names it: `$PERFETTO_MACHINE_NAME`
/// when set, else the kernel's name (`uname -s`: "Linux"; "Windows" there).
/// Producers of this machine carry it, and `machine_name_filter` matches it.
pub fn local_machine_name() -> String {
    machine_name_from(std::env::var_os("PERFETTO_MACHINE_NAME"))
}

/// The machine's name given `$PERFETTO_MACHINE_NAME` (set, even empty, it
/// wins, as in Perfetto).
fn machine_name_from(variable: Option<std::ffi::OsString>) -> String {
    if let Some(name) = variable {
        return name.to_string_lossy().into_owned();
    }
    #[cfg(unix)]
    let name = rustix::system::uname()
        .sysname()
        .to_string_lossy()
        .into_owned();
    #[cfg(not(unix))]
    let name = String::from("Windows");
    name
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn machine_name_from_the_variable_else_the_kernel() {
        assert_eq!(machine_name_from(Some("vm-7".into())), "vm-7");
        assert_eq!(machine_name_from(Some("".into())), "");
        // Miri's `uname` shim leaves the name fields uninitialized, so the
        // kernel half is checked natively only.
        #[cfg(all(target_os = "linux", not(miri)))]
        assert_eq!(machine_name_from(None), "Linux");
    }
}
