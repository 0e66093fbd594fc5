//! The machine as the service core sees it, for the daemon: the
//! [`ServiceEnv`] it gives the core (clock snapshots and MONOTONIC from
//! [`crate::platform`], random trace uuids, the host's description, sealed
//! memfd SMBs whose fds the daemon passes), the checks on a buffer a
//! producer passes, and the machine id of a relay's peer.
//!
//! SMBs are unlinked tmpfiles on unix systems other than Linux, which a
//! service never accepts from a producer (only a sealed memfd is safe to
//! map), and do not exist on Windows, where every producer is on TCP and
//! emulates its buffer.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use crate::ipc::fd::OwnedFd;
use crate::platform;
use crate::service::{ClockReading, ProducerId, ServiceEnv};
use crate::shm::SharedMemoryRegion;

/// A shared memory buffer whose fd the driver passes to its producer: a
/// [`MappedShm`](crate::shm::MappedShm).
#[cfg(unix)]
pub type PassedSmb = crate::shm::MappedShm;

/// A shared memory buffer whose fd the driver passes to its producer. There
/// are none on this platform (no fd can be passed).
#[cfg(not(unix))]
#[derive(Debug)]
pub enum PassedSmb {}

#[cfg(not(unix))]
impl PassedSmb {
    /// The fd to pass (unreachable: there are no values).
    pub fn fd(&self) -> crate::ipc::fd::BorrowedFd<'_> {
        match *self {}
    }
}

/// Shared memory buffers the environment created, by producer, so the
/// driver can pass their fds.
pub type SmbTable = Arc<Mutex<HashMap<ProducerId, Arc<PassedSmb>>>>;

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

impl ServiceEnv for OsEnv {
    fn clock_snapshot(&mut self) -> Vec<ClockReading> {
        platform::clock_readings()
            .into_iter()
            .map(|(clock_id, timestamp)| ClockReading {
                clock_id,
                timestamp,
            })
            .collect()
    }

    fn monotonic_ns(&mut self) -> Option<u64> {
        platform::monotonic_ns()
    }

    fn new_uuid(&mut self) -> u128 {
        random_u128()
    }

    fn system_info(&mut self) -> Vec<u8> {
        platform::system_info()
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

/// A fresh random trace uuid: `getrandom` on Linux; elsewhere two hashes
/// by std's randomly keyed `RandomState` (unique, if not secret, which is
/// all a trace uuid needs to be).
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
pub fn map_provided_smb(fd: OwnedFd) -> Option<Arc<dyn SharedMemoryRegion>> {
    match fd {}
}

/// The machine id Perfetto derives from a relay's `machine_id_hint` (or,
/// without one, from the peer's address without its port): the low 32 bits
/// of the 64-bit FNV-1a hash, with 1 standing in for 0 (0 is the local
/// machine).
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn machine_ids_are_perfettos() {
        // FNV-1a 64 of "" is the offset basis; its low half.
        assert_eq!(machine_id_from_hint(b""), 0x8422_2325);
        // FNV-1a 64 of "a" is 0xaf63dc4c8601ec8c.
        assert_eq!(machine_id_from_hint(b"a"), 0x8601_ec8c);
    }
}
