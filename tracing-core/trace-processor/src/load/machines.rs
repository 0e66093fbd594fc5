//! Which machine a packet came from (a relay's traces name it in
//! `TracePacket.machine_id`), and a remote machine's `RemoteClockSync`
//! turned into clock snapshots joining its clocks to the host's.

use super::{Loader, remote_clock};
use crate::clock::machine_clock;

impl Loader {
    /// The index of a packet's machine (0: the host), a new one for a raw
    /// id not seen before.
    pub(super) fn machine_index(&mut self, machine_id: Option<u32>) -> u32 {
        let raw = machine_id.map_or(0, i64::from);
        if let Some(i) = self.archive.machine_for(raw) {
            // An archive member whose machines its manifest names.
            return i;
        }
        if raw == 0 {
            self.archive.host_used = true;
            return 0;
        }
        if let Some(i) = self.machine_ids.get(&raw) {
            return *i;
        }
        if !self.archive.host_used && self.machines.len() == 1 && self.machines[0] == 0 {
            // The first machine to send packets before the host sent any
            // is adopted onto the host's row, as upstream adopts it: its
            // packets are the host's (machine 0, on the trace's own
            // clocks), its raw id the host row's; one machine, not an
            // empty host beside it. (Upstream does not count the host's
            // synchronization markers as its data; we do.)
            self.archive.host_used = true;
            self.machines[0] = raw;
            self.machine_ids.insert(raw, 0);
            if let Some(host) = self.parser.storage.machines.get_mut(0) {
                host.raw_id = raw;
            }
            return 0;
        }
        let i = u32::try_from(self.machines.len()).unwrap_or(u32::MAX);
        self.machines.push(raw);
        self.machine_ids.insert(raw, i);
        if !self.archive.active {
            // Without a `RemoteClockSync` its boot clock is taken as the
            // host's (an archive's manifest places its machines itself).
            self.parser.clocks.defer_machine_bridge(i);
        }
        self.parser
            .storage
            .machines
            .push(crate::storage::rows::MachineRow {
                raw_id: raw,
                ..Default::default()
            });
        i
    }

    /// A remote machine's clock exchanges with the host: its own clocks'
    /// snapshots, and for each clock seen on both sides the offset
    /// estimated from round trips, as an edge between the two machines'
    /// clocks.
    pub(super) fn on_remote_clock_sync(&mut self, bytes: &[u8]) {
        let rounds = remote_clock::rounds(bytes);
        for round in &rounds {
            let clocks: Vec<(u64, u64, u64, bool)> = round
                .iter()
                .filter(|(_, (_, client))| *client != 0)
                .map(|(id, (_, client))| (machine_clock(*id, self.machine), *client, 1, false))
                .collect();
            if !clocks.is_empty() && self.parser.clocks.add_snapshot(&clocks).is_none() {
                self.parser.storage.stats.incr("invalid_clock_snapshots");
            }
        }
        // The host's index: 0, unless an archive's manifest renamed it.
        let host = self.archive.machine_for(0).unwrap_or(0);
        for (id, offset, host_anchor) in remote_clock::offsets(&rounds) {
            let (Ok(anchor), Some(client)) =
                (u64::try_from(host_anchor), host_anchor.checked_add(offset))
            else {
                continue;
            };
            let Ok(client) = u64::try_from(client) else {
                continue;
            };
            let edge = [
                (machine_clock(id, host), anchor, 1, false),
                (machine_clock(id, self.machine), client, 1, false),
            ];
            if self.parser.clocks.add_snapshot(&edge).is_none() {
                self.parser.storage.stats.incr("invalid_clock_snapshots");
            }
        }
    }
}
