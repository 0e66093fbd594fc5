//! Android logcat packets (`TracePacket.android_log`) queued entry by
//! entry: a packet holds many log entries, each stamped on the REALTIME
//! clock, which upstream converts to the trace clock and sorts one by one
//! as it sorts ftrace events; an entry whose time does not convert (no
//! clock snapshot joins REALTIME yet) is left out, as upstream leaves it.
//! Each entry becomes its own packet record for `parser/android_log.rs`;
//! the packet's logcat statistics become the `android_log_num_*` stats.

use protozero::{Decoder, FieldValue};

use super::Loader;
use crate::clock::MachineClocks;

/// `TracePacket.android_log`.
pub const ANDROID_LOG: u32 = 39;
/// `BuiltinClock.BUILTIN_CLOCK_REALTIME`.
const REALTIME: u64 = 1;
/// `AndroidLogPacket.events`.
const EVENTS: u32 = 1;
/// `AndroidLogPacket.stats`.
const STATS: u32 = 2;
/// `LogEvent.timestamp`.
const EVENT_TIMESTAMP: u32 = 5;

impl Loader {
    /// Queues each entry of a logcat packet at its own time.
    pub(super) fn split_android_log(&mut self, packet: &[u8], gen_idx: u32) {
        for f in Decoder::new(packet).map_while(Result::ok) {
            match (f.id, f.value) {
                (EVENTS, FieldValue::Bytes(ev)) => self.queue_log_entry(ev, gen_idx),
                (STATS, FieldValue::Bytes(st)) => {
                    for g in Decoder::new(st).map_while(Result::ok) {
                        let name = match g.id {
                            1 => "android_log_num_total",
                            2 => "android_log_num_failed",
                            3 => "android_log_num_skipped",
                            _ => continue,
                        };
                        if let FieldValue::Varint(v) = g.value {
                            self.parser.storage.stats.set(name, v as i64);
                        }
                    }
                }
                _ => {}
            }
        }
    }

    fn queue_log_entry(&mut self, ev: &[u8], gen_idx: u32) {
        let realtime = Decoder::new(ev)
            .find_last(EVENT_TIMESTAMP)
            .and_then(|f| f.as_u64().ok())
            .unwrap_or(0);
        let Ok(ts) = MachineClocks::new(&mut self.parser.clocks, self.machine)
            .trace_time(REALTIME, realtime as i64)
        else {
            return;
        };
        self.queue_split(ev, ts, gen_idx, ANDROID_LOG);
    }
}
