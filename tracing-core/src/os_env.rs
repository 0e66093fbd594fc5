//! The machine as the service core sees it, for the daemon: real clocks
//! (BOOTTIME and the others a clock snapshot holds), random trace uuids, the
//! host's description, sealed memfd SMBs, and the checks on a buffer a
//! producer passes; and the clock and thread ids the producer side stamps
//! events with.
//!
//! Linux has all of it. Elsewhere: there is no BOOTTIME, and the monotonic
//! clock stands in for it ([`boottime_ns`]); SMBs are unlinked tmpfiles on
//! other unix systems, which a service never accepts from a producer (only a
//! sealed memfd is safe to map), and do not exist on Windows, where every
//! producer is on TCP and emulates its buffer.

#[cfg(feature = "service")]
use std::collections::HashMap;
#[cfg(feature = "service")]
use std::sync::{Arc, Mutex};

#[cfg(feature = "service")]
use crate::ipc::fd::OwnedFd;
#[cfg(feature = "service")]
use crate::service::{ClockReading, ProducerId, ServiceEnv};
#[cfg(feature = "service")]
use crate::shm::SharedMemoryRegion;

/// A shared memory buffer whose fd the driver passes to its producer: a
/// [`MappedShm`](crate::shm::MappedShm).
#[cfg(unix)]
#[cfg(feature = "service")]
pub type PassedSmb = crate::shm::MappedShm;

/// A shared memory buffer whose fd the driver passes to its producer. There
/// are none on this platform (no fd can be passed).
#[cfg(not(unix))]
#[derive(Debug)]
#[cfg(feature = "service")]
pub enum PassedSmb {}

#[cfg(not(unix))]
#[cfg(feature = "service")]
impl PassedSmb {
    /// The fd to pass (unreachable: there are no values).
    pub fn fd(&self) -> crate::ipc::fd::BorrowedFd<'_> {
        match *self {}
    }
}

/// Shared memory buffers the environment created, by producer, so the
/// driver can pass their fds.
#[cfg(feature = "service")]
pub type SmbTable = Arc<Mutex<HashMap<ProducerId, Arc<PassedSmb>>>>;

/// The machine as the core sees it: real clocks, random uuids, uname, memfds.
#[cfg(feature = "service")]
pub struct OsEnv {
    smbs: SmbTable,
}

#[cfg(feature = "service")]
impl OsEnv {
    /// An environment that records the SMBs it creates in `smbs`.
    pub fn new(smbs: SmbTable) -> OsEnv {
        OsEnv { smbs }
    }
}

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

/// The uid the daemon runs as (0 where there are no uids: Windows).
#[cfg(feature = "service")]
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

#[cfg(feature = "service")]
impl ServiceEnv for OsEnv {
    fn clock_snapshot(&mut self) -> Vec<ClockReading> {
        clock_readings()
            .into_iter()
            .map(|(clock_id, timestamp)| ClockReading {
                clock_id,
                timestamp,
            })
            .collect()
    }

    fn monotonic_ns(&mut self) -> Option<u64> {
        // Elsewhere the BOOTTIME stand-in is the monotonic clock already.
        #[cfg(target_os = "linux")]
        let mono = Some(ns(rustix::time::ClockId::Monotonic));
        #[cfg(not(target_os = "linux"))]
        let mono = None;
        mono
    }

    fn new_uuid(&mut self) -> u128 {
        random_u128()
    }

    fn system_info(&mut self) -> Vec<u8> {
        crate::service::service_packets::encode(|m| {
            let mut s = zerotrace_protos::protos::SystemInfo::from_message(m);
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
        })
    }

    fn allocate_smb(
        &mut self,
        producer: ProducerId,
        size: usize,
        _page_size: usize,
    ) -> Result<Arc<dyn SharedMemoryRegion>, String> {
        #[cfg(unix)]
        {
            let shm = Arc::new(crate::shm::MappedShm::create(size).map_err(|e| e.to_string())?);
            if let Ok(mut t) = self.smbs.lock() {
                t.insert(producer, shm.clone());
            }
            Ok(shm)
        }
        #[cfg(not(unix))]
        {
            // Unreachable in practice: producers here are on TCP, and the
            // core makes no SMB for them.
            let _ = (producer, size, &self.smbs);
            Err(crate::ipc::socket::unsupported("shared memory buffers", "unix").to_string())
        }
    }
}

/// The clocks of a clock snapshot, as (BuiltinClock id, nanoseconds).
#[cfg(target_os = "linux")]
#[cfg(feature = "service")]
fn clock_readings() -> Vec<(u32, u64)> {
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
#[cfg(feature = "service")]
fn clock_readings() -> Vec<(u32, u64)> {
    let now = boottime_ns();
    let realtime = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64);
    vec![(6, now), (1, realtime), (3, now)]
}

/// A fresh random trace uuid: `getrandom` on Linux; elsewhere two hashes
/// by std's randomly keyed `RandomState` (unique, if not secret, which is
/// all a trace uuid needs to be).
#[cfg(feature = "service")]
fn random_u128() -> u128 {
    #[cfg(target_os = "linux")]
    let r = {
        let mut b = [0u8; 16];
        let _ = rustix::rand::getrandom(&mut b, rustix::rand::GetRandomFlags::empty());
        u128::from_le_bytes(b)
    };
    #[cfg(not(target_os = "linux"))]
    let r = {
        use std::hash::{BuildHasher, RandomState};
        use std::sync::atomic::{AtomicU64, Ordering};
        static COUNTER: AtomicU64 = AtomicU64::new(0);
        let seed = (
            COUNTER.fetch_add(1, Ordering::Relaxed),
            std::process::id(),
            std::time::SystemTime::now(),
        );
        let high = RandomState::new().hash_one(seed);
        let low = RandomState::new().hash_one(seed);
        (high as u128) << 64 | low as u128
    };
    r
}

/// Maps an SMB a producer passed; refused (`None`) unless it is a sealed
/// memfd of a valid size (so always outside Linux).
#[cfg(unix)]
#[cfg(feature = "service")]
pub fn map_provided_smb(fd: OwnedFd) -> Option<Arc<dyn SharedMemoryRegion>> {
    let size = rustix::fs::fstat(&fd).ok()?.st_size;
    let size = usize::try_from(size).ok()?;
    // SAFETY: this mapping is the service's only view of the producer's
    // buffer; the core never claims it for an arbiter and views it with one
    // page size.
    let shm = unsafe { crate::shm::MappedShm::from_fd(fd, size, true) }.ok()?;
    Some(Arc::new(shm))
}

/// Maps an SMB a producer passed (unreachable: no fd can be passed here).
#[cfg(not(unix))]
#[cfg(feature = "service")]
pub fn map_provided_smb(fd: OwnedFd) -> Option<Arc<dyn SharedMemoryRegion>> {
    match fd {}
}

/// The machine id Perfetto derives from a relay's `machine_id_hint` (or,
/// without one, from the peer's address without its port): the low 32 bits
/// of the 64-bit FNV-1a hash, with 1 standing in for 0 (0 is the local
/// machine).
#[cfg(feature = "service")]
pub fn machine_id_from_hint(hint: &[u8]) -> u32 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in hint {
        h ^= b as u64;
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    match h as u32 {
        0 => 1,
        id => id,
    }
}

/// This machine's name, as Perfetto's service names it: `$PERFETTO_MACHINE_NAME`
/// when set, else the kernel's name (`uname -s`: "Linux"; "Windows" there).
/// Producers of this machine carry it, and `machine_name_filter` matches it.
#[cfg(feature = "service")]
pub fn local_machine_name() -> String {
    machine_name_from(std::env::var_os("PERFETTO_MACHINE_NAME"))
}

/// The machine's name given `$PERFETTO_MACHINE_NAME` (set, even empty, it
/// wins, as in Perfetto).
#[cfg(feature = "service")]
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
#[cfg(feature = "service")]
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

    #[test]
    fn machine_ids_are_perfettos() {
        // FNV-1a 64 of "" is the offset basis; its low half.
        assert_eq!(machine_id_from_hint(b""), 0x8422_2325);
        // FNV-1a 64 of "a" is 0xaf63dc4c8601ec8c.
        assert_eq!(machine_id_from_hint(b"a"), 0x8601_ec8c);
    }
}
