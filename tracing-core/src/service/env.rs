//! What the core needs from the world, as a trait the driver implements:
//! clocks (the snapshot's, and MONOTONIC beside the driver's BOOTTIME),
//! fresh uuids and random numbers, the host description and shared memory
//! allocation.
//! Tests and fuzzers implement it with a fake clock and heap buffers, so the
//! core stays deterministic and never touches the machine itself.

use std::sync::Arc;

use crate::shm::SharedMemoryRegion;

use super::ids::ProducerId;

/// One clock reading of a clock snapshot (`ClockSnapshot.Clock`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ClockReading {
    /// `BuiltinClock` number (e.g. 6 = BOOTTIME) or a custom id.
    pub clock_id: u32,
    /// The clock's value in nanoseconds.
    pub timestamp: u64,
}

/// The uid of a peer whose uid nobody vouches for (a TCP consumer, a
/// WebSocket peer the kernel does not name): Perfetto's `kInvalidUid`, the
/// all-ones `uid_t`. Such a consumer may record and read its own session,
/// and nothing that a uid grants: it clones, attaches to and sees the
/// details of no other session (not even another unknown one's), and it
/// never names an `output_path`.
pub const UNKNOWN_UID: u32 = u32::MAX;

/// Who is on the other end of a connection, as the transport tells it
/// (SO_PEERCRED over unix sockets), never as the peer claims.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct PeerIdentity {
    /// The peer's uid; [`UNKNOWN_UID`] where nothing vouches for one.
    pub uid: u32,
    /// The peer's pid, where the transport tells it.
    pub pid: Option<i32>,
    /// A producer on another machine (e.g. over TCP through a relay): its
    /// packets carry a `machine_id`.
    pub machine_id: Option<u32>,
}

impl PeerIdentity {
    /// A peer whose uid nobody vouches for ([`UNKNOWN_UID`]).
    pub const UNKNOWN: PeerIdentity = PeerIdentity {
        uid: UNKNOWN_UID,
        pid: None,
        machine_id: None,
    };

    /// Whether the transport vouched for the uid.
    pub fn uid_is_known(&self) -> bool {
        self.uid != UNKNOWN_UID
    }
}

/// The services the driver provides to the core.
pub trait ServiceEnv {
    /// Reads every clock the trace should be able to convert between, at
    /// about the same instant (BOOTTIME, MONOTONIC, REALTIME, ...).
    fn clock_snapshot(&mut self) -> Vec<ClockReading>;

    /// CLOCK_MONOTONIC in nanoseconds: like BOOTTIME (the `now` the driver
    /// passes) but stopped while the machine is suspended. Most deadlines
    /// run on it, as Perfetto's do. `None` (the default) for a machine that
    /// does not tell the two apart: every deadline then runs on BOOTTIME.
    fn monotonic_ns(&mut self) -> Option<u64> {
        None
    }

    /// A fresh random 128-bit trace uuid.
    fn new_uuid(&mut self) -> u128;

    /// A random number in [0, 1), for `skip_probability` of triggers. The
    /// default draws it from [`new_uuid`](Self::new_uuid); tests inject
    /// their own.
    fn random_unit(&mut self) -> f64 {
        // 53 random bits, the precision of an f64 in [0, 1).
        (self.new_uuid() >> 75) as f64 / (1u64 << 53) as f64
    }

    /// The encoded `SystemInfo` message describing this host (may be empty).
    fn system_info(&mut self) -> Vec<u8>;

    /// Creates the shared memory buffer of `producer`: `size` bytes, viewed
    /// as pages of `page_size`. The driver keeps whatever it needs to pass
    /// the buffer to the producer (the memfd) and attaches it when a reply
    /// asks for it ([`Reply::Ok`](super::Reply)'s `attach_smb`).
    fn allocate_smb(
        &mut self,
        producer: ProducerId,
        size: usize,
        page_size: usize,
    ) -> Result<Arc<dyn SharedMemoryRegion>, String>;
}
