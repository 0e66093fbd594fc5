//! ftrace bundles queued event by event: each event (or `compact_sched`
//! entry) becomes its own packet record at its own time, as upstream sorts
//! ftrace events one by one, after the bundle's clock snapshot joins the
//! ftrace clock to BOOTTIME; a CPU's first bundle says from when its data
//! is valid.

use super::{Loader, ftrace_bundle};
use crate::arena::ByteRange;
use crate::clock::{self, clock_key, machine_clock};
use crate::packet_view::{NO_EXTRA, Packet, PacketKind};

impl Loader {
    /// Queues each event of an ftrace bundle on its own, at its own time
    /// (BOOTTIME), as upstream sorts ftrace events one by one.
    pub(super) fn split_ftrace(&mut self, bundle: &[u8], gen_idx: u32, seq: u32) {
        let Some(bc) = ftrace_bundle::clock(bundle) else {
            self.parser
                .storage
                .stats
                .incr("ftrace_bundle_tokenizer_errors");
            return;
        };
        let key = clock_key(bc.clock_id, seq, self.machine);
        if let Some((ftrace_ts, boot_ts)) = bc.snapshot {
            if self.ftrace_clock_ts != Some(ftrace_ts) {
                self.ftrace_clock_ts = Some(ftrace_ts);
                let pair = [
                    (key, ftrace_ts as u64, 1, false),
                    (
                        machine_clock(clock::BOOTTIME, self.machine),
                        boot_ts as u64,
                        1,
                        false,
                    ),
                ];
                if self.parser.clocks.add_snapshot(&pair).is_none() {
                    self.parser.storage.stats.incr("invalid_clock_snapshots");
                }
            }
        }
        self.ftrace_data_start(bundle, key);
        crate::parser::ftrace_generic::add_descriptors(&mut self.parser, bundle);
        for ev in self.split_bundle(bundle) {
            let (bytes, extra, kind) = match ev.item {
                ftrace_bundle::FtraceItem::Event(b) => {
                    let Some(r) = self.arena.push(b) else {
                        self.parser
                            .storage
                            .stats
                            .incr("ftrace_bundle_tokenizer_errors");
                        continue;
                    };
                    (r, NO_EXTRA, PacketKind::Ftrace)
                }
                ftrace_bundle::FtraceItem::Inline(i) => {
                    let slot = self.side.inline_sched.insert(i);
                    let Ok(extra) = u32::try_from(slot) else {
                        self.side.inline_sched.try_remove(slot);
                        self.parser
                            .storage
                            .stats
                            .incr("ftrace_bundle_tokenizer_errors");
                        continue;
                    };
                    (ByteRange::default(), extra, PacketKind::InlineSched)
                }
            };
            let mut packet = Packet {
                ts: ev.raw_ts,
                bytes,
                generation: gen_idx,
                machine: self.machine,
                cpu: ev.cpu,
                extra,
                kind,
                field: 0,
            };
            let pending = match self.parser.clocks.trace_time(key, ev.raw_ts) {
                Ok(ts) => {
                    self.latest_ts = self.latest_ts.max(ts);
                    packet.ts = ts;
                    None
                }
                Err(_) => Some((key, ev.raw_ts)),
            };
            self.enqueue(packet, pending);
        }
    }

    /// A CPU's first bundle says from when its data is valid: the latest
    /// such time over CPUs is `ftrace_latest_data_start_ns`, before which
    /// the parsers only keep raw events.
    fn ftrace_data_start(&mut self, bundle: &[u8], key: u64) {
        let Some((cpu, raw)) = ftrace_bundle::data_start(bundle) else {
            return;
        };
        // Each machine's CPUs: upstream keeps the time per machine.
        if !self.ftrace_cpus_seen.insert((self.machine, cpu)) {
            return;
        }
        let Ok(ts) = self.parser.clocks.trace_time(key, raw) else {
            return;
        };
        const KEY: &str = "ftrace_latest_data_start_ns";
        let storage = &mut self.parser.storage;
        let host = storage.machine();
        storage.set_machine(self.machine);
        if storage.metadata_int(KEY).is_none_or(|cur| ts > cur) {
            storage.set_metadata_int(KEY, ts);
        }
        storage.set_machine(host);
    }
}
