//! The other machines of a multi-machine trace, as plain data: what relays
//! told about each (its `SystemInfo`, its last clock exchanges), what each
//! session has written of them, and which packets a session still owes.
//! No protocol and no core state here: the core's RelayPort handlers
//! (`core/relay_port.rs`) feed it, a session's read takes its packets, and
//! the packets themselves are built from these values
//! (`service_packets.rs`).

use std::collections::{BTreeMap, BTreeSet, VecDeque};

use crate::service::env::ClockReading;
use crate::service::service_packets::{remote_clock_sync_packet, remote_system_info_packet};

/// Clock exchanges kept per machine (Perfetto keeps as many).
pub const SYNCED_CLOCKS_KEPT: usize = 5;

/// Machines whose descriptions the service keeps; a relay naming one more
/// is answered with an error (machine ids come from hints a peer chooses).
pub const MAX_REMOTE_MACHINES: usize = 256;

/// Largest `SystemInfo` kept of a machine.
pub const MAX_SYSTEM_INFO_BYTES: usize = 64 * 1024;

/// One `SyncClock` call: the relay's readings and the service's.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SyncedClocks {
    /// The relay's clocks when it sent the call.
    pub client: Vec<ClockReading>,
    /// The service's clocks when the call arrived.
    pub host: Vec<ClockReading>,
}

/// What relays told about one machine.
#[derive(Debug, Default)]
struct RemoteMachine {
    /// Its `SystemInfo`, encoded (empty until `InitRelay`).
    system_info: Vec<u8>,
    /// The last exchanges, oldest first.
    synced: VecDeque<SyncedClocks>,
    /// Exchanges ever received: a session compares it with what it wrote.
    syncs_total: u64,
}

/// What one session has written of the remote machines.
#[derive(Debug, Default)]
pub struct RemoteWritten {
    /// Machines whose `SystemInfo` is in the trace.
    system_info: BTreeSet<u32>,
    /// Per machine, `syncs_total` when its last `remote_clock_sync` was
    /// written.
    syncs: BTreeMap<u32, u64>,
}

/// Why a machine's description was not kept.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum MachineError {
    /// The service keeps [`MAX_REMOTE_MACHINES`] already.
    #[error("the service keeps {MAX_REMOTE_MACHINES} machines at most")]
    TooMany,
    /// A `SystemInfo` over [`MAX_SYSTEM_INFO_BYTES`].
    #[error("system_info too large")]
    SystemInfoTooLarge,
}

/// Which of a session's owed packets it wants (its config's switches).
#[derive(Debug, Clone, Copy, Default)]
pub struct MachinePacketsWanted {
    /// Each machine's `SystemInfo` (unless `disable_system_info`).
    pub system_info: bool,
    /// Clock exchanges (unless `disable_clock_snapshotting`).
    pub clock_sync: bool,
}

/// Every remote machine the service heard of, by machine id.
#[derive(Debug, Default)]
pub struct Machines {
    by_id: BTreeMap<u32, RemoteMachine>,
}

impl Machines {
    /// The entry of `machine`, made if there is room for one more.
    fn entry(&mut self, machine: u32) -> Result<&mut RemoteMachine, MachineError> {
        if !self.by_id.contains_key(&machine) && self.by_id.len() >= MAX_REMOTE_MACHINES {
            return Err(MachineError::TooMany);
        }
        Ok(self.by_id.entry(machine).or_default())
    }

    /// `InitRelay`: the machine's `SystemInfo`, encoded.
    pub fn describe(&mut self, machine: u32, system_info: Vec<u8>) -> Result<(), MachineError> {
        if system_info.len() > MAX_SYSTEM_INFO_BYTES {
            return Err(MachineError::SystemInfoTooLarge);
        }
        self.entry(machine)?.system_info = system_info;
        Ok(())
    }

    /// A `SyncClock` exchange with the machine's relay; the oldest of more
    /// than [`SYNCED_CLOCKS_KEPT`] is forgotten.
    pub fn synced(&mut self, machine: u32, clocks: SyncedClocks) -> Result<(), MachineError> {
        let m = self.entry(machine)?;
        if m.synced.len() >= SYNCED_CLOCKS_KEPT {
            m.synced.pop_front();
        }
        m.synced.push_back(clocks);
        m.syncs_total += 1;
        Ok(())
    }

    /// The packets (stamped with the service's `uid`) a session that has
    /// written `written` still owes: each machine's `SystemInfo` once, and
    /// its clock exchanges when new ones came. `written` is updated.
    pub fn packets_owed(
        &self,
        uid: u32,
        wanted: MachinePacketsWanted,
        written: &mut RemoteWritten,
    ) -> Vec<Vec<u8>> {
        let mut out = Vec::new();
        for (&machine, m) in &self.by_id {
            if wanted.system_info
                && !m.system_info.is_empty()
                && written.system_info.insert(machine)
            {
                out.push(remote_system_info_packet(uid, machine, &m.system_info));
            }
            let done = written.syncs.get(&machine).copied().unwrap_or(0);
            if wanted.clock_sync && !m.synced.is_empty() && m.syncs_total > done {
                let synced = m.synced.iter().map(|s| (&s.client[..], &s.host[..]));
                out.push(remote_clock_sync_packet(uid, machine, synced));
                written.syncs.insert(machine, m.syncs_total);
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn clocks(t: u64) -> SyncedClocks {
        let r = |t| {
            vec![ClockReading {
                clock_id: 6,
                timestamp: t,
            }]
        };
        SyncedClocks {
            client: r(t),
            host: r(t + 1),
        }
    }

    #[test]
    fn a_session_is_owed_each_description_once_and_new_exchanges_only() {
        let mut m = Machines::default();
        let all = MachinePacketsWanted {
            system_info: true,
            clock_sync: true,
        };
        let mut w = RemoteWritten::default();
        assert!(m.packets_owed(0, all, &mut w).is_empty());
        m.describe(7, vec![1, 2, 3]).unwrap();
        m.synced(7, clocks(10)).unwrap();
        assert_eq!(m.packets_owed(0, all, &mut w).len(), 2);
        assert!(m.packets_owed(0, all, &mut w).is_empty(), "nothing new");
        m.synced(7, clocks(20)).unwrap();
        assert_eq!(m.packets_owed(0, all, &mut w).len(), 1, "the new exchange");
        let none = MachinePacketsWanted::default();
        let mut w2 = RemoteWritten::default();
        assert!(m.packets_owed(0, none, &mut w2).is_empty());
    }

    #[test]
    fn bounded_in_machines_exchanges_and_size() {
        let mut m = Machines::default();
        for id in 0..MAX_REMOTE_MACHINES as u32 {
            m.describe(id, Vec::new()).unwrap();
        }
        assert_eq!(m.describe(9999, Vec::new()), Err(MachineError::TooMany));
        assert_eq!(
            m.describe(0, vec![0; MAX_SYSTEM_INFO_BYTES + 1]),
            Err(MachineError::SystemInfoTooLarge)
        );
        for t in 0..20 {
            m.synced(1, clocks(t)).unwrap();
        }
        assert_eq!(m.by_id[&1].synced.len(), SYNCED_CLOCKS_KEPT);
        assert_eq!(m.by_id[&1].syncs_total, 20);
    }
}
