//! A packet's time: what a `ClockSnapshot` tells the clock tracker (and
//! the `clock_snapshot` table), and how each packet's own timestamp is
//! brought to the trace's clock before it joins the sort window (or waits,
//! when its clock cannot be converted yet, until `finish`).

use zerotrace_protos::protos::{ClockSnapshotDecoder, TracePacket, TracingServiceEventDecoder};

use super::{Loader, track_event_times};
use crate::arena::ByteRange;
use crate::clock::{MachineClocks, clock_key, machine_clock};
use crate::packet_fields::{PacketFields, Payload};
use crate::packet_view::{NO_EXTRA, Packet, PacketKind};

impl Loader {
    /// A `ClockSnapshot`: the trace clock (the host's choice), the clocks'
    /// pairs for conversion, and its `clock_snapshot` rows.
    pub(super) fn on_clock_snapshot(&mut self, bytes: &[u8], seq: u32) {
        let snap = ClockSnapshotDecoder::new(bytes);
        if let Some(primary) = snap.primary_trace_clock_raw() {
            // Only the host's snapshots choose the trace clock.
            if primary > 0 && self.machine == 0 {
                self.parser.clocks.set_trace_clock(primary as u64);
            }
        }
        let clocks: Vec<(u64, u64, u64, bool)> = snap
            .clocks()
            .map(|c| {
                (
                    clock_key(u64::from(c.clock_id().unwrap_or(0)), seq, self.machine),
                    c.timestamp().unwrap_or(0),
                    c.unit_multiplier_ns().unwrap_or(1),
                    c.is_incremental().unwrap_or(false),
                )
            })
            .collect();
        let Some(snap) = self.parser.clocks.add_snapshot(&clocks) else {
            self.parser.storage.stats.incr("invalid_clock_snapshots");
            return;
        };
        let trace_clock = self.parser.clocks.trace_clock();
        let snapshot_id = self
            .parser
            .storage
            .clock_snapshots
            .last()
            .map_or(0, |r| r.snapshot_id + 1);
        let ts = snap
            .iter()
            .find(|c| c.key == trace_clock)
            .map(|c| c.ns)
            .or_else(|| {
                snap.first()
                    .and_then(|c| self.parser.clocks.trace_time(c.key, c.ns).ok())
            });
        if let Some(ts) = ts {
            for c in &snap {
                let id = c.key & 0xFFFF_FFFF;
                let name = builtin_clock_name(id);
                let clock_name = self.parser.storage.strings.intern_opt(name);
                self.parser
                    .storage
                    .clock_snapshots
                    .push(crate::storage::rows::ClockSnapshotRow {
                        ts,
                        clock_id: id as i64,
                        clock_name,
                        clock_value: c.ns,
                        snapshot_id,
                    });
            }
        }
    }

    /// A packet's timestamp in the trace's clock (or held until its clock
    /// converts), then its record (its payload's bytes and field number)
    /// in the queue the sort drains; whether it was queued (not dropped).
    pub(super) fn timestamp_and_queue(
        &mut self,
        payload: Payload<'_>,
        pkt: &PacketFields<'_>,
        seq: u32,
        has_seq: bool,
        gen_idx: u32,
    ) -> bool {
        // A GPU counter event without a timestamp: its descriptor is read
        // now, its samples dropped (`parser/gpu_counters.rs`).
        if pkt.timestamp.is_none() && payload.field == crate::parser::GPU_COUNTER_EVENT {
            if let Some(g) = self.generations.get(gen_idx as usize) {
                crate::parser::untimed_gpu_counter_event(&mut self.parser, payload.bytes, g);
            }
            return false;
        }
        let mut clock_id = pkt.timestamp_clock_id.unwrap_or(0);
        // The tracing service stamps its lifecycle events on BOOTTIME
        // whatever the trace clock (and whatever the sequence's defaults
        // say); one its clocks cannot convert keeps its raw value.
        let service = payload.field == TracePacket::FIELD_SERVICE_EVENT;
        if service && clock_id == 0 {
            clock_id = crate::clock::BOOTTIME as u32;
        }
        if clock_id == 0 {
            if let Some(g) = self.generations.get(gen_idx as usize) {
                clock_id = g.decoded_defaults.timestamp_clock_id.unwrap_or(0);
            }
        }
        let mut pending_clock = None;
        let ts = match pkt.timestamp {
            Some(raw) => {
                // Without a clock id a packet is on its machine's trace
                // clock; the host's needs no conversion.
                // (An archive's manifest that chose the trace clock leaves
                // packets without a clock id on BOOTTIME.)
                let default = self.archive.default_clock;
                let direct = clock_id == 0 && self.machine == 0 && default.is_none();
                let key = if clock_id == 0 {
                    let clock = default.unwrap_or(self.parser.clocks.trace_clock());
                    machine_clock(clock, self.machine)
                } else {
                    clock_key(u64::from(clock_id), seq, self.machine)
                };
                let raw = i64::try_from(raw).unwrap_or(i64::MAX);
                let ns = match self.parser.clocks.clock_ns(key, raw) {
                    Ok(ns) => ns,
                    Err(_) if service => raw,
                    Err(_) => {
                        self.parser.storage.stats.incr("clock_sync_failure");
                        return false;
                    }
                };
                if direct {
                    ns
                } else {
                    match self.parser.clocks.trace_time(key, ns) {
                        Ok(ts) => ts,
                        Err(_) if service => ns,
                        Err(_) => {
                            pending_clock = Some((key, ns));
                            ns
                        }
                    }
                }
            }
            None => self.latest_ts,
        };
        if pending_clock.is_none() {
            self.latest_ts = self.latest_ts.max(ts);
        }
        let mut packet = Packet {
            ts,
            bytes: ByteRange::default(),
            generation: gen_idx,
            machine: self.machine,
            cpu: 0,
            extra: self.packet_extra(),
            kind: PacketKind::Packet,
            field: u16::try_from(payload.field).unwrap_or(0),
        };
        let mut times = None;
        let mut te_start = 0;
        if payload.field == TracePacket::FIELD_TRACK_EVENT {
            if !has_seq {
                self.parser
                    .storage
                    .stats
                    .log_tokenization("track_event_missing_sequence_id", &[]);
                return false;
            }
            let scope = self.descriptor_scope();
            let tokenized = track_event_times::tokenize(
                payload.bytes,
                &mut self.track_event_rest,
                pkt.timestamp.is_some(),
                ts,
                self.sequences.entry(seq).or_default(),
                self.generations.get(gen_idx as usize),
                (self.parser.track_scopes).descriptors(&self.parser.track_resolution, scope),
                MachineClocks::new(&mut self.parser.clocks, self.machine),
                &mut self.parser.storage.stats,
            );
            let Some(t) = tokenized else {
                return false;
            };
            if t.ts != ts {
                // A TrackEvent's own timestamp replaces the packet's.
                pending_clock = None;
            }
            packet.ts = t.ts;
            packet.kind = PacketKind::TrackEvent;
            te_start = t.start;
            times = Some(t.times);
        }
        // A TrackEvent keeps only its facts and the fields its tokenizing
        // did not read.
        let bytes = if packet.kind == PacketKind::TrackEvent {
            self.track_event_rest.get(te_start..).unwrap_or_default()
        } else {
            payload.bytes
        };
        let Some(range) = self.arena.push(bytes) else {
            self.parser.storage.stats.incr("tokenizer_skipped_packets");
            return false;
        };
        packet.bytes = range;
        if let Some(times) = times {
            // The facts travel in front of the bytes; only what a
            // timestamp alone does not say is kept beside them.
            packet.extra = NO_EXTRA;
            if !times.is_empty() {
                let slot = self
                    .side
                    .track_event_times
                    .insert(crate::packet_view::WaitingTimes::of(times));
                packet.extra = u32::try_from(slot).unwrap_or(NO_EXTRA);
            }
        }
        let arrival = self.enqueue(packet, pending_clock);
        if payload.field == TracePacket::FIELD_SERVICE_EVENT
            && TracingServiceEventDecoder::new(payload.bytes).tracing_started() == Some(true)
        {
            if let Some(arrival) = arrival {
                let ts = pending_clock.is_none().then_some(packet.ts);
                self.tracing_started = Some((arrival, ts));
            }
        }
        arrival.is_some()
    }

    /// Queues one event split out of a packet (an atom, a log line, one
    /// event of a bundle) as a packet of its own at `ts`, already on the
    /// trace's clock, for `field`'s importer; an event the arena refuses
    /// is counted in `tokenizer_skipped_packets`.
    pub(super) fn queue_split(&mut self, bytes: &[u8], ts: i64, generation: u32, field: u32) {
        self.latest_ts = self.latest_ts.max(ts);
        let Some(bytes) = self.arena.push(bytes) else {
            self.parser.storage.stats.incr("tokenizer_skipped_packets");
            return;
        };
        let packet = Packet {
            ts,
            bytes,
            generation,
            machine: self.machine,
            cpu: 0,
            extra: self.packet_extra(),
            kind: PacketKind::Packet,
            field: field as u16,
        };
        self.enqueue(packet, None);
    }
}

/// Name of a builtin clock id.
fn builtin_clock_name(id: u64) -> Option<&'static str> {
    Some(match id {
        1 => "REALTIME",
        2 => "REALTIME_COARSE",
        3 => "MONOTONIC",
        4 => "MONOTONIC_COARSE",
        5 => "MONOTONIC_RAW",
        6 => "BOOTTIME",
        _ => return None,
    })
}
