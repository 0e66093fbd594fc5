//! Adreno GPU command batches (`kgsl_adreno_cmdbatch_*`) as slices of GPU
//! time, as upstream imports them: a batch retired
//! (`kgsl_adreno_cmdbatch_retired`) ran on the GPU from `start` to
//! `retire`, counted in ticks of the GPU's 19.2 MHz always-on clock; a
//! sync event (`kgsl_adreno_cmdbatch_sync`) of the same submission
//! (`timestamp`) pairs that clock's `ticks` with the trace's time, which
//! places the batch. The batch is a `GPU` slice on an
//! `adreno_gpu_cmdbatch` track per context and priority, named after the
//! process that queued the context (`kgsl_adreno_cmdbatch_queued`), `GPU
//! <process> (Ctx=<id>, Prio=<prio>)`, or `GPU (Ctx=<id>, Prio=<prio>)`
//! when that is unknown. A retire before its sync waits for it; one that
//! ends before it starts is dropped.

use super::Parser;
use super::fields::Fields;
use super::importer::{FtraceHandler, FtraceInput};
use crate::hash::HashMap;
use crate::storage::args::ArgValue;
use crate::storage::rows::SliceRow;
use crate::tracker::tracks::{EventType, TrackSpec};

/// `FtraceEvent.kgsl_adreno_cmdbatch_queued` {id 1}.
const QUEUED: u32 = 534;
/// `FtraceEvent.kgsl_adreno_cmdbatch_sync` {timestamp 2, ticks 3}.
const SYNC: u32 = 536;
/// `FtraceEvent.kgsl_adreno_cmdbatch_retired` {id 1, timestamp 2, start 6,
/// retire 7, prio 8}.
const RETIRED: u32 = 537;

/// The GPU's always-on clock, in ticks per second.
const XO_HZ: i64 = 19_200_000;

/// The events this module handles (gathered by `ftrace_registry.rs`).
pub const FTRACE_HANDLERS: &[(u32, FtraceHandler)] =
    &[(QUEUED, queued), (SYNC, sync), (RETIRED, retired)];

/// A retired batch: (context id, priority, start and retire ticks).
#[derive(Debug, Clone, Copy)]
pub struct Batch {
    context: u32,
    prio: u32,
    start: u64,
    retire: u64,
}

/// What the Adreno events keep between events.
#[derive(Debug, Default)]
pub struct AdrenoState {
    /// The thread that queued each context.
    queued_by: HashMap<u32, i64>,
    /// Per submission: (trace time, GPU ticks) of its sync event.
    syncs: HashMap<u32, (i64, u64)>,
    /// Per submission: a batch retired before its sync.
    pending: HashMap<u32, Batch>,
}

fn queued(p: &mut Parser, e: &FtraceInput<'_>) {
    let context = Fields::new(e.body).uint(1).unwrap_or(0) as u32;
    p.ftrace_state.adreno.queued_by.insert(context, e.tid);
}

fn sync(p: &mut Parser, e: &FtraceInput<'_>) {
    let f = Fields::new(e.body);
    let submission = f.uint(2).unwrap_or(0) as u32;
    let sync = (e.ts, f.uint(3).unwrap_or(0));
    match p.ftrace_state.adreno.pending.remove(&submission) {
        Some(batch) => place(p, sync, batch),
        None => {
            p.ftrace_state.adreno.syncs.insert(submission, sync);
        }
    }
}

fn retired(p: &mut Parser, e: &FtraceInput<'_>) {
    let f = Fields::new(e.body);
    let submission = f.uint(2).unwrap_or(0) as u32;
    let batch = Batch {
        context: f.uint(1).unwrap_or(0) as u32,
        prio: f.int32(8).unwrap_or(0) as u32,
        start: f.uint(6).unwrap_or(0),
        retire: f.uint(7).unwrap_or(0),
    };
    match p.ftrace_state.adreno.syncs.remove(&submission) {
        Some(sync) => place(p, sync, batch),
        None => {
            p.ftrace_state.adreno.pending.insert(submission, batch);
        }
    }
}

/// Ticks of the GPU clock as nanoseconds.
fn ticks_ns(ticks: i64) -> i64 {
    ticks.saturating_mul(1_000_000_000) / XO_HZ
}

/// The name of the process that queued `context`, if known.
fn process_name(p: &mut Parser, context: u32) -> Option<String> {
    let tid = *p.ftrace_state.adreno.queued_by.get(&context)?;
    let utid = p.processes.get_or_create_thread(&mut p.storage, tid);
    let upid = p.storage.threads.get(utid as usize)?.upid?;
    let name = p.storage.processes.get(upid as usize)?.name;
    p.storage.strings.get(name).map(str::to_owned)
}

/// The batch's slice, placed by its sync's (trace time, ticks).
fn place(p: &mut Parser, (sync_ts, sync_ticks): (i64, u64), b: Batch) {
    if b.retire < b.start {
        return;
    }
    let ts = sync_ts.saturating_add(ticks_ns(b.start.wrapping_sub(sync_ticks) as i64));
    let dur = ticks_ns(b.retire.wrapping_sub(b.start) as i64);
    let (context, prio) = (b.context, b.prio);
    let pname = process_name(p, context);
    let name = match &pname {
        Some(n) => format!("GPU {n} (Ctx={context}, Prio={prio})"),
        None => format!("GPU (Ctx={context}, Prio={prio})"),
    };
    let key = format!("adreno_gpu_cmdbatch:{}:{context}:{prio}", p.machine);
    let Parser {
        async_tracks,
        tracks,
        storage,
        ..
    } = p;
    let track_id = async_tracks.scoped(&key, ts, dur, |idx| {
        let mut spec = TrackSpec::new(Some(&name), "adreno_gpu_cmdbatch", EventType::Slice);
        spec.dimensions = vec![
            ("context_id", ArgValue::Int(i64::from(context))),
            ("prio", ArgValue::Int(i64::from(prio))),
            ("track_compressor_idx", ArgValue::Int(i64::from(idx))),
        ];
        tracks.create(storage, &spec)
    });
    // A track made before the process was known takes its name now.
    if pname.is_some() {
        let name = p.storage.strings.intern(&name);
        if let Some(t) = p.storage.tracks.get_mut(track_id as usize) {
            t.name = name;
        }
    }
    let name = p.storage.strings.intern("GPU");
    p.slices.complete(
        &mut p.storage,
        SliceRow {
            ts,
            dur,
            track_id,
            name,
            ..SliceRow::default()
        },
    );
}
