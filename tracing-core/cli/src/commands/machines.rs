//! The machines of a trace, for `stats` and `dump`: a trace recorded
//! through relays holds packets of several machines, each stamped with its
//! `machine_id` (none for the central service's own machine), with each
//! machine's `system_info` and its clock exchanges (`remote_clock_sync`).

use std::collections::BTreeMap;

use protozero::Decoder;
use zerotrace_protos::protos::{SystemInfoDecoder, TracePacketDecoder};

/// `TracePacket.machine_id`.
const MACHINE_ID: u32 = 98;
/// `TracePacket.remote_clock_sync`.
const REMOTE_CLOCK_SYNC: u32 = 107;

/// What a trace says of one machine.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Machine {
    /// Its id in the trace; 0 for the service's own machine.
    pub id: u32,
    /// The kernel its `system_info` names ("Linux 6.1.0 x86_64"), if any.
    pub system: Option<String>,
    /// Its packets.
    pub packets: u64,
    /// Their bytes.
    pub bytes: u64,
    /// Clock exchanges with the central service (`remote_clock_sync`
    /// entries).
    pub clock_exchanges: u64,
}

impl Machine {
    /// "this machine" or "machine N", with its system when known.
    pub fn label(&self) -> String {
        let who = if self.id == 0 {
            "this machine".to_owned()
        } else {
            format!("machine {}", self.id)
        };
        match &self.system {
            Some(s) => format!("{who} ({s})"),
            None => who,
        }
    }
}

/// A packet's machine id (0 when it has none).
pub fn machine_of(packet: &[u8]) -> u32 {
    Decoder::new(packet)
        .find_last(MACHINE_ID)
        .and_then(|f| f.as_u32().ok())
        .unwrap_or(0)
}

/// The machines of `packets`, by id.
pub fn machines<P: AsRef<[u8]>>(packets: &[P]) -> Vec<Machine> {
    let mut by_id: BTreeMap<u32, Machine> = BTreeMap::new();
    for raw in packets {
        let raw = raw.as_ref();
        let id = machine_of(raw);
        let m = by_id.entry(id).or_insert_with(|| Machine {
            id,
            ..Machine::default()
        });
        m.packets += 1;
        m.bytes += raw.len() as u64;
        let p = TracePacketDecoder::new(raw);
        if let Some(info) = p.system_info_bytes() {
            m.system = system_of(info).or(m.system.take());
        }
        if let Some(sync) = Decoder::new(raw)
            .find_last(REMOTE_CLOCK_SYNC)
            .and_then(|f| f.as_bytes().ok())
        {
            m.clock_exchanges += Decoder::new(sync)
                .filter(|f| f.as_ref().is_ok_and(|f| f.id == 1))
                .count() as u64;
        }
    }
    by_id.into_values().collect()
}

fn system_of(info: &[u8]) -> Option<String> {
    let u = SystemInfoDecoder::new(info).utsname()?;
    let parts: Vec<&str> = [u.sysname(), u.release(), u.machine()]
        .into_iter()
        .flatten()
        .filter(|s| !s.is_empty())
        .collect();
    (!parts.is_empty()).then(|| parts.join(" "))
}

#[cfg(test)]
mod tests {
    use protozero::HeapWriter;
    use zerotrace_protos::protos::TracePacket;

    use super::*;

    fn packet(f: impl FnOnce(&mut TracePacket<'_>)) -> Vec<u8> {
        let mut w = HeapWriter::new();
        {
            let mut p = TracePacket::from_message(w.root());
            f(&mut p);
        }
        w.finish().unwrap()
    }

    #[test]
    fn packets_systems_and_clock_exchanges_per_machine() {
        let packets = vec![
            packet(|p| {
                let mut info = p.begin_system_info();
                let mut u = info.begin_utsname();
                u.set_sysname("Linux");
                u.set_release("6.1.0");
                u.set_machine("x86_64");
            }),
            packet(|p| {
                p.begin_system_info().begin_utsname().set_sysname("VmOS");
                p.set_machine_id(7);
            }),
            packet(|p| {
                p.set_machine_id(7);
                let mut r = p.begin_remote_clock_sync();
                r.add_synced_clocks();
                r.add_synced_clocks();
            }),
            packet(|p| {
                p.set_timestamp(1);
                p.set_machine_id(7);
            }),
            packet(|p| {
                p.set_timestamp(2);
            }),
        ];
        let m = machines(&packets);
        assert_eq!(m.len(), 2);
        assert_eq!(m[0].label(), "this machine (Linux 6.1.0 x86_64)");
        assert_eq!(m[0].packets, 2);
        assert_eq!(m[1].label(), "machine 7 (VmOS)");
        assert_eq!((m[1].packets, m[1].clock_exchanges), (3, 2));
    }
}
