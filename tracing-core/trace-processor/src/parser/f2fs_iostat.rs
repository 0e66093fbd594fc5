//! f2fs I/O statistics (ftrace `f2fs_iostat`, FtraceEvent field 419, and
//! `f2fs_iostat_latency`, 420) as one counter track per device and counter,
//! named `f2fs_iostat.[major:minor].<counter>` as upstream names them.
//!
//! The counters' names and the fields they read are facts of upstream's
//! importer and `ftrace/f2fs.proto`; the events are read with protozero's
//! schema-less decoder.

use protozero::Decoder;

use super::Parser;
use super::importer::FtraceHandler;
use crate::storage::args::ArgValue;
use crate::storage::rows::CounterRow;
use crate::tables::opt_u32::OptU32;
use crate::tracker::tracks::{EventType, TrackSpec};

/// FtraceEvent.f2fs_iostat.
const F2FS_IOSTAT: u32 = 419;
/// FtraceEvent.f2fs_iostat_latency.
const F2FS_IOSTAT_LATENCY: u32 = 420;
/// `dev` of F2fsIostatFtraceEvent.
const IOSTAT_DEV: u32 = 9;
/// `dev` of F2fsIostatLatencyFtraceEvent.
const IOSTAT_LATENCY_DEV: u32 = 10;

/// `F2fsIostatFtraceEvent`: (counter name, field number), upstream's order.
const IOSTAT_COUNTERS: &[(&str, u32)] = &[
    ("write_app_total", 8),
    ("write_app_direct", 3),
    ("write_app_buffered", 1),
    ("write_app_mapped", 5),
    ("write_fs_data", 14),
    ("write_fs_node", 22),
    ("write_fs_meta", 20),
    ("write_gc_data", 17),
    ("write_gc_node", 18),
    ("write_cp_data", 11),
    ("write_cp_node", 13),
    ("write_cp_meta", 12),
    ("read_app_total", 7),
    ("read_app_direct", 4),
    ("read_app_buffered", 2),
    ("read_app_mapped", 6),
    ("read_fs_data", 16),
    ("read_fs_gdata", 19),
    ("read_fs_cdata", 10),
    ("read_fs_node", 23),
    ("read_fs_meta", 21),
    ("other_fs_discard", 15),
];

/// `F2fsIostatLatencyFtraceEvent`: (counter name, field number), upstream's order.
const IOSTAT_LATENCY_COUNTERS: &[(&str, u32)] = &[
    ("read_data_peak", 3),
    ("read_data_avg", 1),
    ("read_data_cnt", 2),
    ("read_node_peak", 22),
    ("read_node_avg", 20),
    ("read_node_cnt", 21),
    ("read_meta_peak", 13),
    ("read_meta_avg", 11),
    ("read_meta_cnt", 12),
    ("write_sync_data_peak", 9),
    ("write_sync_data_avg", 7),
    ("write_sync_data_cnt", 8),
    ("write_sync_node_peak", 28),
    ("write_sync_node_avg", 26),
    ("write_sync_node_cnt", 27),
    ("write_sync_meta_peak", 19),
    ("write_sync_meta_avg", 17),
    ("write_sync_meta_cnt", 18),
    ("write_async_data_peak", 6),
    ("write_async_data_avg", 4),
    ("write_async_data_cnt", 5),
    ("write_async_node_peak", 25),
    ("write_async_node_avg", 23),
    ("write_async_node_cnt", 24),
    ("write_async_meta_peak", 16),
    ("write_async_meta_avg", 14),
    ("write_async_meta_cnt", 15),
];

/// The two events (gathered by `ftrace_registry.rs`).
pub const FTRACE_HANDLERS: &[(u32, FtraceHandler)] = &[
    (F2FS_IOSTAT, |p, e| parse(p, e.ts, e.body, false)),
    (F2FS_IOSTAT_LATENCY, |p, e| parse(p, e.ts, e.body, true)),
];

/// Parses an f2fs_iostat (`latency` false) or f2fs_iostat_latency event.
fn parse(p: &mut Parser, ts: i64, event: &[u8], latency: bool) {
    let (prefix, dev_field, counters) = if latency {
        (
            "f2fs_iostat_latency",
            IOSTAT_LATENCY_DEV,
            IOSTAT_LATENCY_COUNTERS,
        )
    } else {
        ("f2fs_iostat", IOSTAT_DEV, IOSTAT_COUNTERS)
    };
    let get = |id: u32| {
        Decoder::new(event)
            .find_last(id)
            .and_then(|f| f.as_u64().ok())
            .unwrap_or(0)
    };
    let dev = get(dev_field);
    let device = format!("{}:{}", (dev & 0xff00) >> 8, dev & 0xff);
    let device_id = p.storage.strings.intern(&device);
    for &(counter, field) in counters {
        let name = format!("{prefix}.[{device}].{counter}");
        let key = p.storage.strings.intern(counter);
        let mut spec = TrackSpec::new(Some(&name), prefix, EventType::Counter);
        spec.dimensions = vec![
            ("linux_device", ArgValue::String(device_id)),
            ("counter_key", ArgValue::String(key)),
        ];
        let track = p.tracks.interned_counter(&mut p.storage, &spec);
        p.storage.counters.push(CounterRow {
            ts,
            track_id: track,
            value: get(field) as f64,
            arg_set_id: OptU32::NONE,
        });
    }
}
