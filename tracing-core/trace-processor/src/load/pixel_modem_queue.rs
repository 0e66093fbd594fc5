//! Pixel modem events (`TracePacket.pixel_modem_events`) queued event by
//! event, and their token database (`pixel_modem_token_database`), read
//! as it arrives since it carries no time, as upstream's pixel modem
//! module reads them. A packet lists its tokenized events and, in a
//! parallel list, their times as deltas (each event at the sum of the
//! deltas so far; one at a negative time is dropped and counted in
//! `pixel_modem_negative_timestamp`). Each event becomes a packet record
//! of its own for `parser/pixel_modem.rs`: a `PixelModemEvents` of that one
//! event, with its packet's time (field 3, ours) for the `packet_ts` arg.
//! A database that does not read fails the load with its reason, as
//! upstream's does.

use protozero::varint::encode_varint;
use protozero::{Decoder, FieldValue};

use super::Loader;
use crate::clock::{clock_key, machine_clock};
use crate::error::TraceError;
use crate::packet_fields::PacketFields;
use crate::parser::pigweed_detokenizer::Detokenizer;

/// `TracePacket.pixel_modem_events`.
pub const PIXEL_MODEM_EVENTS: u32 = 110;
/// `TracePacket.pixel_modem_token_database`.
pub const PIXEL_MODEM_TOKEN_DATABASE: u32 = 111;
/// `PixelModemEvents.events`.
const EVENTS: u32 = 1;
/// `PixelModemEvents.event_time_nanos`.
const EVENT_TIME_NANOS: u32 = 2;
/// The forged record's packet time (not a field of `PixelModemEvents`).
const PACKET_TS: u32 = 3;

/// A `PixelModemEvents` of one event and its packet's time.
fn single_event(event: &[u8], packet_ts: i64) -> Vec<u8> {
    let mut out = Vec::with_capacity(event.len() + 16);
    let mut buf = [0u8; 10];
    out.push((EVENTS << 3 | 2) as u8);
    let n = encode_varint(event.len() as u64, &mut buf);
    out.extend_from_slice(&buf[..n]);
    out.extend_from_slice(event);
    out.push((PACKET_TS << 3) as u8);
    let n = encode_varint(packet_ts as u64, &mut buf);
    out.extend_from_slice(&buf[..n]);
    out
}

impl Loader {
    /// Reads the token database the events are detokenized with.
    pub(super) fn on_pixel_modem_database(&mut self, payload: &[u8]) {
        let db = Decoder::new(payload)
            .find_last(1)
            .and_then(|f| f.as_bytes().ok())
            .unwrap_or_default();
        match Detokenizer::new(db) {
            Ok(d) => self.parser.pixel_modem.detokenizer = d,
            Err(e) => {
                self.failed = Some(TraceError::Malformed {
                    format: "protobuf",
                    offset: self.bytes_pushed,
                    message: format!("pixel modem token database: {e}"),
                });
            }
        }
    }

    /// Queues each event of a `pixel_modem_events` packet at its own time.
    pub(super) fn split_pixel_modem_events(
        &mut self,
        payload: &[u8],
        pkt: &PacketFields<'_>,
        seq: u32,
        gen_idx: u32,
    ) {
        let packet_ts = self.packet_trace_time(pkt, seq, gen_idx);
        let fields = || Decoder::new(payload).map_while(Result::ok);
        let mut deltas = fields().filter_map(|f| match (f.id, f.value) {
            (EVENT_TIME_NANOS, FieldValue::Varint(v)) => Some(v),
            _ => None,
        });
        let mut ts = 0i64;
        for f in fields() {
            let (EVENTS, FieldValue::Bytes(event)) = (f.id, f.value) else {
                continue;
            };
            let Some(delta) = deltas.next() else {
                break;
            };
            ts = ts.wrapping_add(delta as i64);
            if ts < 0 {
                self.parser
                    .storage
                    .stats
                    .incr("pixel_modem_negative_timestamp");
                continue;
            }
            self.queue_split(
                &single_event(event, packet_ts),
                ts,
                gen_idx,
                PIXEL_MODEM_EVENTS,
            );
        }
    }

    /// The packet's time on the trace clock, as it would be queued (its
    /// raw time when its clock does not convert yet; the loader's latest
    /// time for a packet without one).
    fn packet_trace_time(&mut self, pkt: &PacketFields<'_>, seq: u32, gen_idx: u32) -> i64 {
        let Some(raw) = pkt.timestamp else {
            return self.latest_ts;
        };
        let mut clock_id = pkt.timestamp_clock_id.unwrap_or(0);
        if clock_id == 0 {
            if let Some(g) = self.generations.get(gen_idx as usize) {
                clock_id = g.decoded_defaults.timestamp_clock_id.unwrap_or(0);
            }
        }
        let default = self.archive.default_clock;
        let raw = i64::try_from(raw).unwrap_or(i64::MAX);
        let direct = clock_id == 0 && self.machine == 0 && default.is_none();
        let key = if clock_id == 0 {
            machine_clock(
                default.unwrap_or(self.parser.clocks.trace_clock()),
                self.machine,
            )
        } else {
            clock_key(u64::from(clock_id), seq, self.machine)
        };
        let Ok(ns) = self.parser.clocks.clock_ns(key, raw) else {
            return raw;
        };
        if direct {
            return ns;
        }
        self.parser.clocks.trace_time(key, ns).unwrap_or(ns)
    }
}
