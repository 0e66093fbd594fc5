//! Android's shared-memory allocators as counters, as upstream's ftrace
//! parser imports them:
//!
//! - ION (`ion_stat`, and Pixel kernels' `ion_heap_grow`/`ion_heap_shrink`):
//!   the heap's total (`mem.ion`, or `mem.ion.<heap>`, classified `ion`)
//!   and the allocating thread's change (`mem.ion_change[.<heap>]`,
//!   `ion_change`). A grow or shrink reports the total before its change,
//!   so the change is added. `ion_stat` also shows each buffer as a slice
//!   (`<size> kB`) from its allocation to its release on the
//!   `mem.ion_buffer` tracks, one per buffer alive at once.
//! - FastRPC DMA buffers (`fastrpc_dma_stat`): per remote processor
//!   (`cid`: ASDP, MDSP, SDSP, CDSP, else its number) the total
//!   (`mem.fastrpc[...]`) and the thread's change
//!   (`mem.fastrpc_change[...]`).
//! - A process's DMA-BUF RSS (`dmabuf_rss_stat`): `mem.dmabuf_rss` of the
//!   emitting thread's process, found at the end as the other per-thread
//!   process counters are (`tracker/thread_counters.rs`).
//! - Memory event statistics (`mm_event_record`): of each kind (minor and
//!   major faults, read I/O, compaction, reclaim, swap faults, kernel
//!   allocations) the count, maximum and average latency as the emitting
//!   thread's process's `mem.mm.<kind>.<count|max_lat|avg_lat>`, found at
//!   the end as well; an unknown kind counts `mm_unknown_type`.

use super::Parser;
use super::fields::Fields;
use super::importer::{FtraceHandler, FtraceInput};
use crate::storage::args::ArgValue;
use crate::storage::rows::{CounterRow, SliceRow};
use crate::tables::opt_u32::OptU32;
use crate::tracker::thread_counters::ProcessCounter;
use crate::tracker::tracks::{EventType, TrackSpec};

/// `FtraceEvent.ion_heap_shrink` {heap_name 1, len 2, total_allocated 3}.
const ION_HEAP_SHRINK: u32 = 314;
/// `FtraceEvent.ion_heap_grow` (the same fields).
const ION_HEAP_GROW: u32 = 315;
/// `FtraceEvent.ion_stat` {buffer_id 1, len 2, total_allocated 3}.
const ION_STAT: u32 = 335;
/// `FtraceEvent.fastrpc_dma_stat` {cid 1, len 2, total_allocated 3}.
const FASTRPC_DMA_STAT: u32 = 347;
/// `FtraceEvent.mm_event_record` {avg_lat 1, count 2, max_lat 3, type 4}.
const MM_EVENT_RECORD: u32 = 328;
/// `FtraceEvent.dmabuf_rss_stat` {rss 1}.
const DMABUF_RSS_STAT: u32 = 579;

/// The events this module handles (gathered by `ftrace_registry.rs`).
pub const FTRACE_HANDLERS: &[(u32, FtraceHandler)] = &[
    (ION_HEAP_SHRINK, ion_heap_shrink),
    (ION_HEAP_GROW, ion_heap_grow),
    (ION_STAT, ion_stat),
    (FASTRPC_DMA_STAT, fastrpc_dma_stat),
    (DMABUF_RSS_STAT, dmabuf_rss_stat),
    (MM_EVENT_RECORD, mm_event_record),
];

fn push(p: &mut Parser, track_id: u32, ts: i64, value: f64) {
    p.storage.counters.push(CounterRow {
        ts,
        track_id,
        value,
        arg_set_id: OptU32::NONE,
    });
}

/// The heap's total and the thread's change, on the ION tracks of `heap`
/// (empty: the tracks of every heap).
fn ion_counters(p: &mut Parser, e: &FtraceInput<'_>, heap: &str, total: f64, change: f64) {
    let heap_id = p.storage.strings.intern(heap);
    let suffix = if heap.is_empty() {
        String::new()
    } else {
        format!(".{heap}")
    };
    let name = format!("mem.ion{suffix}");
    let mut spec = TrackSpec::new(Some(&name), "ion", EventType::Counter);
    spec.dimensions = vec![("heap_name", ArgValue::String(heap_id))];
    let track = p.tracks.interned_counter(&mut p.storage, &spec);
    push(p, track, e.ts, total);
    let utid = p.processes.get_or_create_thread(&mut p.storage, e.tid);
    let name = format!("mem.ion_change{suffix}");
    let mut spec = TrackSpec::new(Some(&name), "ion_change", EventType::Counter);
    spec.dimensions = vec![("heap_name", ArgValue::String(heap_id))];
    spec.utid = Some(utid);
    let track = p.tracks.interned_counter(&mut p.storage, &spec);
    push(p, track, e.ts, change);
}

fn ion_heap(p: &mut Parser, e: &FtraceInput<'_>, sign: i64) {
    let f = Fields::new(e.body);
    let change = (f.uint(2).unwrap_or(0) as i64).wrapping_mul(sign);
    let total = (f.uint(3).unwrap_or(0) as i64).wrapping_add(change);
    let heap = f
        .str(1)
        .map_or_else(|| "unknown".to_owned(), |h| h.into_owned());
    ion_counters(p, e, &heap, total as f64, change as f64);
}

fn ion_heap_grow(p: &mut Parser, e: &FtraceInput<'_>) {
    ion_heap(p, e, 1);
}

fn ion_heap_shrink(p: &mut Parser, e: &FtraceInput<'_>) {
    ion_heap(p, e, -1);
}

/// The pool of the ION buffer slices' tracks.
const ION_BUFFERS: &str = "android_ion_allocations";

fn ion_stat(p: &mut Parser, e: &FtraceInput<'_>) {
    let f = Fields::new(e.body);
    let len = f.int(2).unwrap_or(0);
    let total = f.uint(3).unwrap_or(0);
    ion_counters(p, e, "", total as f64, len as f64);
    let buffer = f.uint(1).unwrap_or(0) as i64;
    if len > 0 {
        let Parser {
            async_tracks,
            tracks,
            storage,
            ..
        } = p;
        let track_id = async_tracks.begin(ION_BUFFERS, buffer, |idx| {
            let mut spec = TrackSpec::new(Some("mem.ion_buffer"), ION_BUFFERS, EventType::Slice);
            spec.dimensions = vec![("track_compressor_idx", ArgValue::Int(i64::from(idx)))];
            tracks.create(storage, &spec)
        });
        let name = p.storage.strings.intern(&format!("{} kB", len / 1024));
        p.slices.begin(
            &mut p.storage,
            SliceRow {
                ts: e.ts,
                dur: -1,
                track_id,
                name,
                ..SliceRow::default()
            },
        );
    } else if let Some(track) = p.async_tracks.end(ION_BUFFERS, buffer) {
        p.slices.end(&mut p.storage, track, e.ts, None);
    }
}

/// A FastRPC remote processor's name by channel id.
fn fastrpc_name(cid: u64) -> String {
    match cid {
        0 => "ASDP".into(),
        1 => "MDSP".into(),
        2 => "SDSP".into(),
        3 => "CDSP".into(),
        n => n.to_string(),
    }
}

fn fastrpc_dma_stat(p: &mut Parser, e: &FtraceInput<'_>) {
    let f = Fields::new(e.body);
    let cid = u64::from(f.int32(1).unwrap_or(0) as u32);
    let processor = fastrpc_name(cid);
    let name = format!("mem.fastrpc[{processor}]");
    let mut spec = TrackSpec::new(Some(&name), "fastrpc", EventType::Counter);
    spec.dimensions = vec![("cid", ArgValue::Uint(cid))];
    let track = p.tracks.interned_counter(&mut p.storage, &spec);
    push(p, track, e.ts, f.uint(3).unwrap_or(0) as f64);
    let utid = p.processes.get_or_create_thread(&mut p.storage, e.tid);
    let name = format!("mem.fastrpc_change[{processor}]");
    let mut spec = TrackSpec::new(Some(&name), "fastrpc_change", EventType::Counter);
    spec.dimensions = vec![("cid", ArgValue::Uint(cid))];
    spec.utid = Some(utid);
    let track = p.tracks.interned_counter(&mut p.storage, &spec);
    push(p, track, e.ts, f.int(2).unwrap_or(0) as f64);
}

fn dmabuf_rss_stat(p: &mut Parser, e: &FtraceInput<'_>) {
    let rss = Fields::new(e.body).uint(1).unwrap_or(0);
    let utid = p.processes.get_or_create_thread(&mut p.storage, e.tid);
    p.thread_counters.push(
        &mut p.storage,
        p.machine,
        e.ts,
        rss as f64,
        utid,
        ProcessCounter::Memory("dmabuf_rss"),
    );
}

/// The kinds of `mm_event_record`, by `type`.
const MM_EVENT_KINDS: [&str; 7] = [
    "min_flt",
    "maj_flt",
    "read_io",
    "compaction",
    "reclaim",
    "swp_flt",
    "kern_alloc",
];

fn mm_event_record(p: &mut Parser, e: &FtraceInput<'_>) {
    let f = Fields::new(e.body);
    let kind = f.uint(4).unwrap_or(0) as u32;
    let utid = p.processes.get_or_create_thread(&mut p.storage, e.tid);
    let Some(kind) = MM_EVENT_KINDS.get(kind as usize) else {
        p.storage.stats.incr("mm_unknown_type");
        return;
    };
    for (metric, field) in [("count", 2), ("max_lat", 3), ("avg_lat", 1)] {
        let value = f.uint(field).unwrap_or(0) as u32;
        p.thread_counters.push(
            &mut p.storage,
            p.machine,
            e.ts,
            f64::from(value),
            utid,
            ProcessCounter::MmEvent(kind, metric),
        );
    }
}
