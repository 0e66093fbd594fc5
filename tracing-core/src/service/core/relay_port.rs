//! RelayPort in the service core: what relays on other machines tell the
//! central service about their machine, and how it reaches the trace.
//!
//! A relay (`zerotrace relay`, Perfetto's `traced_relay`) opens its own
//! connection to a producer socket that exposes RelayPort, names its machine
//! with `set_peer_identity`, describes the machine once (`InitRelay`, its
//! `SystemInfo`) and exchanges clocks every 30 s (`SyncClock`, PING then
//! UPDATE: the relay's clocks as it sent the call, the service's as the call
//! arrived). The core keeps both per machine, after the relay's connection
//! is gone too, and every session writes them into its trace stamped with
//! the machine's id: the `SystemInfo` once, and a `remote_clock_sync` packet
//! whenever exchanges arrived since the session last wrote one (Perfetto's
//! service writes one at the first read only; later rounds keep a long
//! trace aligned as the clocks drift).
//!
//! A relay on a unix socket has no machine id (`set_peer_identity` is
//! ignored there): it is this machine, whose own system info the session
//! already has, so what it tells is answered and dropped.

use std::collections::{BTreeMap, VecDeque};

use crate::service::action::{Peer, Reply};
use crate::service::env::ClockReading;
use crate::service::ids::{ProducerId, RequestId, SessionId};
use crate::service::service_packets::{remote_clock_sync_packet, remote_system_info_packet};

use super::TracingService;

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
pub(super) struct RemoteMachine {
    /// Its `SystemInfo`, encoded (empty until `InitRelay`).
    pub system_info: Vec<u8>,
    /// The last exchanges, oldest first.
    pub synced: VecDeque<SyncedClocks>,
    /// Exchanges ever received: a session compares it with what it wrote.
    pub syncs_total: u64,
}

/// What one session has written of the remote machines.
#[derive(Debug, Default)]
pub(super) struct RemoteWritten {
    /// Machines whose `SystemInfo` is in the trace.
    pub system_info: std::collections::BTreeSet<u32>,
    /// Per machine, `syncs_total` when its last `remote_clock_sync` was
    /// written.
    pub syncs: BTreeMap<u32, u64>,
}

impl TracingService {
    /// RelayPort's `InitRelay` from producer-socket connection `id`.
    pub(super) fn handle_init_relay(
        &mut self,
        id: ProducerId,
        request: RequestId,
        system_info: Vec<u8>,
    ) {
        let to = Peer::Producer(id);
        if system_info.len() > MAX_SYSTEM_INFO_BYTES {
            self.stats.protocol_errors += 1;
            self.reply(to, request, Reply::Err("system_info too large".into()));
            return;
        }
        match self.remote_machine(id) {
            Ok(Some(m)) => m.system_info = system_info,
            Ok(None) => {}
            Err(e) => return self.reply(to, request, Reply::Err(e)),
        }
        self.reply(to, request, Reply::done(Vec::new()));
    }

    /// RelayPort's `SyncClock`: the service's clocks are read first, as
    /// close to the call's arrival as the core can, and the reply goes at
    /// once (the relay times the round trip).
    pub(super) fn handle_sync_clock(
        &mut self,
        id: ProducerId,
        request: RequestId,
        client: Vec<ClockReading>,
    ) {
        let host = self.env.clock_snapshot();
        let to = Peer::Producer(id);
        match self.remote_machine(id) {
            Ok(Some(m)) => {
                if m.synced.len() >= SYNCED_CLOCKS_KEPT {
                    m.synced.pop_front();
                }
                m.synced.push_back(SyncedClocks { client, host });
                m.syncs_total += 1;
            }
            Ok(None) => {}
            Err(e) => return self.reply(to, request, Reply::Err(e)),
        }
        self.reply(to, request, Reply::done(Vec::new()));
    }

    /// The machine of connection `id`: `None` for this machine (no machine
    /// id), an error when the service already keeps as many machines as it
    /// will.
    fn remote_machine(&mut self, id: ProducerId) -> Result<Option<&mut RemoteMachine>, String> {
        let Some(machine) = self.producers.get(&id).and_then(|p| p.identity.machine_id) else {
            return Ok(None);
        };
        if !self.remote_machines.contains_key(&machine)
            && self.remote_machines.len() >= MAX_REMOTE_MACHINES
        {
            self.stats.protocol_errors += 1;
            return Err(format!(
                "the service keeps {MAX_REMOTE_MACHINES} machines at most"
            ));
        }
        Ok(Some(self.remote_machines.entry(machine).or_default()))
    }

    /// The packets about remote machines that `session` has not written
    /// yet: each machine's `SystemInfo` once (unless the config disables
    /// system info), and its clock exchanges when new ones came (unless it
    /// disables clock snapshots).
    pub(super) fn remote_machine_packets(&mut self, session: SessionId) -> Vec<Vec<u8>> {
        let uid = self.opts.service_uid;
        let Some(s) = self.sessions.get_mut(&session) else {
            return Vec::new();
        };
        let mut out = Vec::new();
        for (&machine, m) in &self.remote_machines {
            if !s.config.disable_system_info
                && !m.system_info.is_empty()
                && s.remote_written.system_info.insert(machine)
            {
                out.push(remote_system_info_packet(uid, machine, &m.system_info));
            }
            let written = s.remote_written.syncs.get(&machine).copied().unwrap_or(0);
            if !s.config.disable_clock_snapshotting
                && !m.synced.is_empty()
                && m.syncs_total > written
            {
                let synced: Vec<&SyncedClocks> = m.synced.iter().collect();
                out.push(remote_clock_sync_packet(uid, machine, &synced));
                s.remote_written.syncs.insert(machine, m.syncs_total);
            }
        }
        out
    }
}
