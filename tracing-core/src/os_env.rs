//! The machine as the service core sees it, for the daemon: real clocks
//! (BOOTTIME and the others a clock snapshot holds), random trace uuids, the
//! host's description, sealed memfd SMBs, and the checks on a buffer a
//! producer passes.

use std::collections::HashMap;
use std::os::fd::OwnedFd;
use std::sync::{Arc, Mutex};

use rustix::time::{ClockId, clock_gettime};

use crate::service::{ClockReading, ProducerId, ServiceEnv};
use crate::shm::{MappedShm, SharedMemoryRegion};

/// Shared memory buffers the environment created, by producer, so the
/// driver can pass their fds.
pub type SmbTable = Arc<Mutex<HashMap<ProducerId, Arc<MappedShm>>>>;

/// The machine as the core sees it: real clocks, random uuids, uname, memfds.
pub struct OsEnv {
    smbs: SmbTable,
}

impl OsEnv {
    /// An environment that records the SMBs it creates in `smbs`.
    pub fn new(smbs: SmbTable) -> OsEnv {
        OsEnv { smbs }
    }
}

fn ns(id: ClockId) -> u64 {
    let t = clock_gettime(id);
    (t.tv_sec as u64)
        .saturating_mul(1_000_000_000)
        .saturating_add(t.tv_nsec as u64)
}

/// BOOTTIME in nanoseconds: the core's `now`.
pub fn boottime_ns() -> u64 {
    ns(ClockId::Boottime)
}

impl ServiceEnv for OsEnv {
    fn clock_snapshot(&mut self) -> Vec<ClockReading> {
        [
            (6, ClockId::Boottime),
            (2, ClockId::RealtimeCoarse),
            (4, ClockId::MonotonicCoarse),
            (1, ClockId::Realtime),
            (3, ClockId::Monotonic),
            (5, ClockId::MonotonicRaw),
        ]
        .into_iter()
        .map(|(clock_id, c)| ClockReading {
            clock_id,
            timestamp: ns(c),
        })
        .collect()
    }

    fn new_uuid(&mut self) -> u128 {
        let mut b = [0u8; 16];
        let _ = rustix::rand::getrandom(&mut b, rustix::rand::GetRandomFlags::empty());
        u128::from_le_bytes(b)
    }

    fn system_info(&mut self) -> Vec<u8> {
        let u = rustix::system::uname();
        crate::service::service_packets::encode(|m| {
            let mut s = zerotrace_protos::protos::SystemInfo::from_message(m);
            {
                let mut n = s.begin_utsname();
                n.set_sysname(&u.sysname().to_string_lossy());
                n.set_version(&u.version().to_string_lossy());
                n.set_release(&u.release().to_string_lossy());
                n.set_machine(&u.machine().to_string_lossy());
            }
            s.set_tracing_service_version(concat!("zerotrace ", env!("CARGO_PKG_VERSION")));
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
        let shm = Arc::new(MappedShm::create(size).map_err(|e| e.to_string())?);
        if let Ok(mut t) = self.smbs.lock() {
            t.insert(producer, shm.clone());
        }
        Ok(shm)
    }
}

/// Maps an SMB a producer passed; refused (`None`) unless it is a sealed
/// memfd of a valid size.
pub fn map_provided_smb(fd: OwnedFd) -> Option<Arc<dyn SharedMemoryRegion>> {
    let size = rustix::fs::fstat(&fd).ok()?.st_size;
    let size = usize::try_from(size).ok()?;
    // SAFETY: this mapping is the service's only view of the producer's
    // buffer; the core never claims it for an arbiter and views it with one
    // page size.
    let shm = unsafe { MappedShm::from_fd(fd, size, true) }.ok()?;
    Some(Arc::new(shm))
}

/// 32-bit FNV-1a, which Perfetto uses to turn a machine hint into an id.
pub fn fnv1a32(bytes: &[u8]) -> u32 {
    let mut h: u32 = 0x811c_9dc5;
    for &b in bytes {
        h ^= b as u32;
        h = h.wrapping_mul(0x0100_0193);
    }
    h
}
