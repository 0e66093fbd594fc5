//! Windows ETW bundles queued event by event: an `EtwTraceEventBundle`
//! holds events of many times (context switches, ready threads, file and
//! disk I/O), which upstream sorts one by one as it sorts ftrace events, so
//! each `EtwTraceEvent` becomes its own packet record at its own time, for
//! `parser/etw/` to import. The times are taken as they are written (trace
//! clock nanoseconds, as upstream takes them); an event whose CPU is
//! neither its own nor its bundle's, or one past upstream's CPU limit, or
//! one without a time is left out, as upstream's tokenizer leaves it.

use protozero::{Decoder, FieldValue};

use super::Loader;
use crate::packet_fields;

/// `EtwTraceEventBundle.cpu`.
const BUNDLE_CPU: u32 = 1;
/// `EtwTraceEventBundle.event`.
const BUNDLE_EVENT: u32 = 2;
/// `EtwTraceEvent.timestamp`.
const EVENT_TIMESTAMP: u32 = 1;
/// `EtwTraceEvent.cpu`.
const EVENT_CPU: u32 = 4;
/// Upstream's limit: a CPU number at or past it is a corrupt event.
const MAX_CPUS: u64 = 1024;

/// One event of a bundle: its time and its bytes, with the bundle's CPU
/// appended when the event has none of its own (a later field wins, so
/// the parser reads one CPU either way).
#[derive(Debug, PartialEq, Eq)]
pub struct EtwItem {
    /// The event's time.
    pub ts: i64,
    /// The event's bytes.
    pub bytes: Vec<u8>,
}

/// The events of a bundle, in the bundle's order.
pub fn split(bundle: &[u8]) -> Vec<EtwItem> {
    let fields: Vec<_> = Decoder::new(bundle).map_while(Result::ok).collect();
    let bundle_cpu = fields.iter().rev().find_map(|f| match (f.id, f.value) {
        (BUNDLE_CPU, FieldValue::Varint(v)) => Some(v),
        _ => None,
    });
    let mut out = Vec::new();
    for f in &fields {
        let (BUNDLE_EVENT, FieldValue::Bytes(ev)) = (f.id, f.value) else {
            continue;
        };
        let mut ts = None;
        let mut cpu = None;
        for g in Decoder::new(ev).map_while(Result::ok) {
            match (g.id, g.value) {
                (EVENT_TIMESTAMP, FieldValue::Varint(v)) => ts = Some(v),
                (EVENT_CPU, FieldValue::Varint(v)) => cpu = Some(v),
                _ => {}
            }
        }
        let own_cpu = cpu.is_some();
        let Some(cpu) = cpu.or(bundle_cpu) else {
            continue;
        };
        // The CPU is a uint32: its varint's low 32 bits.
        if cpu & 0xffff_ffff >= MAX_CPUS {
            continue;
        }
        let Some(ts) = ts else {
            continue;
        };
        let mut bytes = ev.to_vec();
        if !own_cpu {
            bytes.push((EVENT_CPU << 3) as u8);
            let mut v = cpu & 0xffff_ffff;
            loop {
                let b = (v & 0x7f) as u8;
                v >>= 7;
                if v == 0 {
                    bytes.push(b);
                    break;
                }
                bytes.push(b | 0x80);
            }
        }
        out.push(EtwItem {
            ts: ts as i64,
            bytes,
        });
    }
    out
}

impl Loader {
    /// Queues each event of an ETW bundle on its own, at its own time.
    pub(super) fn split_etw(&mut self, bundle: &[u8], gen_idx: u32) {
        for item in split(bundle) {
            self.queue_split(&item.bytes, item.ts, gen_idx, packet_fields::ETW_EVENTS);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_take_the_bundles_cpu_unless_they_have_their_own() {
        let mut w = protozero::HeapWriter::new();
        {
            let mut b = w.root();
            b.append_uint32(BUNDLE_CPU, 3);
            {
                let mut e = b.begin_nested(BUNDLE_EVENT);
                e.append_uint64(EVENT_TIMESTAMP, 200);
            }
            {
                let mut e = b.begin_nested(BUNDLE_EVENT);
                e.append_uint64(EVENT_TIMESTAMP, 100);
                e.append_uint32(EVENT_CPU, 1);
            }
            {
                // No time: left out.
                let mut e = b.begin_nested(BUNDLE_EVENT);
                e.append_uint32(EVENT_CPU, 1);
            }
            {
                // Past the CPU limit: left out.
                let mut e = b.begin_nested(BUNDLE_EVENT);
                e.append_uint64(EVENT_TIMESTAMP, 300);
                e.append_uint32(EVENT_CPU, 5000);
            }
        }
        let bytes = w.finish().expect("writer");
        let items = split(&bytes);
        assert_eq!(items.len(), 2);
        assert_eq!(items[0].ts, 200);
        let cpu = |b: &[u8]| {
            Decoder::new(b)
                .map_while(Result::ok)
                .filter(|f| f.id == EVENT_CPU)
                .filter_map(|f| f.as_u64().ok())
                .last()
        };
        assert_eq!(cpu(&items[0].bytes), Some(3));
        assert_eq!(items[1].ts, 100);
        assert_eq!(cpu(&items[1].bytes), Some(1));
    }
}
