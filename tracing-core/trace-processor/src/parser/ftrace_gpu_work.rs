//! GPU work periods (`gpu_work_period`) as slices, as upstream imports
//! them: each period a uid's work on a GPU ran, from `start_time_ns` to
//! `end_time_ns` on the MONOTONIC_RAW clock (converted to the trace's), on
//! an `android_gpu_work_period` track per GPU (`ugpu`, `gpu`) and uid,
//! named by the part of it the GPU was active (`%<percent, two
//! decimals>`), the active time also its `thread_dur` (with `thread_ts` its
//! start). A period without a start is dropped with its raw row
//! (`ftrace.rs`, `ftrace_bundle_tokenizer_errors`); one that ends before it
//! starts is
//! dropped and logged (`gpu_work_period_negative_duration`).

use super::Parser;
use super::fields::Fields;
use super::importer::{FtraceHandler, FtraceInput};
use crate::storage::args::ArgValue;
use crate::storage::import_logs::LogPlace;
use crate::storage::rows::SliceRow;
use crate::tracker::tracks::{EventType, TrackSpec};

/// `FtraceEvent.gpu_work_period` {gpu_id 1, uid 2, start_time_ns 3,
/// end_time_ns 4, total_active_duration_ns 5}.
const GPU_WORK_PERIOD: u32 = 488;

/// The kernel's MONOTONIC_RAW, as a builtin clock id.
const MONOTONIC_RAW: u64 = 5;

/// The events this module handles (gathered by `ftrace_registry.rs`).
pub const FTRACE_HANDLERS: &[(u32, FtraceHandler)] = &[(GPU_WORK_PERIOD, gpu_work_period)];

fn gpu_work_period(p: &mut Parser, e: &FtraceInput<'_>) {
    let f = Fields::new(e.body);
    // `ftrace.rs` drops a period without its start.
    let Some(start) = f.uint(3) else {
        return;
    };
    let key = crate::clock::machine_clock(MONOTONIC_RAW, p.machine);
    let Ok(ts) = p.clocks.trace_time(key, start as i64) else {
        return;
    };
    let gpu = f.uint(1).unwrap_or(0) as u32;
    let uid = f.uint(2).unwrap_or(0) as u32;
    let end = f.uint(4).unwrap_or(0);
    let dur = end.wrapping_sub(start) as i64;
    if dur < 0 {
        let args = [
            ("start_time_ns", ArgValue::Int(start as i64)),
            ("end_time_ns", ArgValue::Int(end as i64)),
            ("gpu_id", ArgValue::Int(i64::from(gpu))),
        ];
        let place = LogPlace {
            ts: Some(ts),
            byte_offset: None,
        };
        p.storage
            .record_import_log_typed("gpu_work_period_negative_duration", place, &args);
        return;
    }
    let ugpu = p.gpus.ugpu(&mut p.storage, p.machine, gpu);
    let mut spec = TrackSpec::new(None, "android_gpu_work_period", EventType::Slice);
    spec.dimensions = vec![
        ("ugpu", ArgValue::Int(i64::from(ugpu))),
        ("gpu", ArgValue::Int(i64::from(gpu))),
        ("uid", ArgValue::Int(i64::from(uid as i32))),
    ];
    let track_id = p.tracks.interned_counter(&mut p.storage, &spec);
    let active = f.uint(5).unwrap_or(0) as i64;
    let percent = 100.0 * (active as f64 / dur as f64);
    // As C's printf writes a period with no length (0/0) or no active time.
    let text = if percent.is_nan() {
        "%-nan".to_owned()
    } else if percent.is_infinite() {
        "%inf".to_owned()
    } else {
        format!("%{percent:.2}")
    };
    let name = p.storage.strings.intern(&text);
    let row = SliceRow {
        ts,
        dur,
        track_id,
        name,
        ..SliceRow::default()
    };
    if let Some(id) = p.slices.complete(&mut p.storage, row) {
        p.storage.slice_threads.update(id, |t| {
            t.ts = Some(ts);
            t.dur = Some(active);
        });
    }
}
