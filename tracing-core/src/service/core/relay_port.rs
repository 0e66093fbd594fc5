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

use crate::service::action::{Peer, Reply};
use crate::service::env::ClockReading;
use crate::service::ids::{ProducerId, RequestId, SessionId};
use crate::service::machines::{MachineError, MachinePacketsWanted, SyncedClocks};

use super::TracingService;

impl TracingService {
    /// RelayPort's `InitRelay` from producer-socket connection `id`.
    pub(super) fn handle_init_relay(
        &mut self,
        id: ProducerId,
        request: RequestId,
        system_info: Vec<u8>,
    ) {
        let to = Peer::Producer(id);
        let result = match self.machine_of(id) {
            Some(machine) => self.machines.describe(machine, system_info),
            None => Ok(()),
        };
        self.answer_relay(to, request, result);
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
        let result = match self.machine_of(id) {
            Some(machine) => self.machines.synced(machine, SyncedClocks { client, host }),
            None => Ok(()),
        };
        self.answer_relay(to, request, result);
    }

    /// The machine id of connection `id`: `None` for this machine.
    fn machine_of(&self, id: ProducerId) -> Option<u32> {
        self.producers.get(&id).and_then(|p| p.identity.machine_id)
    }

    /// The reply to a RelayPort call; a description not kept is a
    /// protocol error of the relay's.
    fn answer_relay(&mut self, to: Peer, request: RequestId, result: Result<(), MachineError>) {
        match result {
            Ok(()) => self.reply(to, request, Reply::done(Vec::new())),
            Err(e) => {
                self.stats.protocol_errors += 1;
                self.reply(to, request, Reply::Err(e.to_string()));
            }
        }
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
        let wanted = MachinePacketsWanted {
            system_info: !s.config.disable_system_info,
            clock_sync: !s.config.disable_clock_snapshotting,
        };
        self.machines
            .packets_owed(uid, wanted, &mut s.remote_written)
    }
}
