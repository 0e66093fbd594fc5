//! The kernel's DRM ftrace events as upstream tracks them: vblanks
//! (`drm_vblank_event`, `_delivered`) as `signal`/`deliver` instants on a
//! `vblank-<crtc>` track; GPU scheduler jobs (`drm_sched_job`,
//! `drm_run_job`, `drm_sched_process_job` before Linux 6.17, and
//! `drm_sched_job_queue`/`_run`/`_done` since) as a `drm_sched_job_queue`
//! instant on the queueing thread and `job` slices, one at a time in run
//! order, on a `sched-<ring>` track, with a flow from the queueing to the
//! run; and DMA fences (`dma_fence_init`/`_emit`/`_signaled`) as `fence`
//! slices, one pending fence at a time, on a `fence-<timeline>-<context>`
//! track (the `unbound` timelines of fence containers left out), and
//! `dma_fence_wait_start`/`_end` as `dma_fence_wait` slices on the waiting
//! thread.

use std::collections::VecDeque;

use super::Parser;
use super::fields::Fields;
use super::importer::{FtraceHandler, FtraceInput};
use crate::hash::HashMap;
use crate::storage::args::{ArgSetBuilder, ArgValue};
use crate::storage::rows::{FlowRow, SliceRow};
use crate::tracker::tracks::{EventType, TrackSpec};

/// FtraceEvent fields.
const DRM_VBLANK_EVENT: u32 = 409;
const DRM_VBLANK_EVENT_DELIVERED: u32 = 410;
const DRM_SCHED_JOB: u32 = 411;
const DRM_RUN_JOB: u32 = 412;
const DRM_SCHED_PROCESS_JOB: u32 = 413;
const DMA_FENCE_INIT: u32 = 414;
const DMA_FENCE_EMIT: u32 = 415;
const DMA_FENCE_SIGNALED: u32 = 416;
const DMA_FENCE_WAIT_START: u32 = 417;
const DMA_FENCE_WAIT_END: u32 = 418;
const DRM_SCHED_JOB_DONE: u32 = 592;
const DRM_SCHED_JOB_QUEUE: u32 = 593;
const DRM_SCHED_JOB_RUN: u32 = 594;

/// The ftrace events this module handles (gathered by `ftrace_registry.rs`).
pub const FTRACE_HANDLERS: &[(u32, FtraceHandler)] = &[
    (DRM_VBLANK_EVENT, vblank_signal),
    (DRM_VBLANK_EVENT_DELIVERED, vblank_deliver),
    (DRM_SCHED_JOB, sched_job),
    (DRM_RUN_JOB, run_job),
    (DRM_SCHED_PROCESS_JOB, sched_process_job),
    (DMA_FENCE_INIT, fence_init),
    (DMA_FENCE_EMIT, fence_emit),
    (DMA_FENCE_SIGNALED, fence_signaled),
    (DMA_FENCE_WAIT_START, fence_wait_start),
    (DMA_FENCE_WAIT_END, fence_wait_end),
    (DRM_SCHED_JOB_DONE, sched_job_done),
    (DRM_SCHED_JOB_QUEUE, sched_job_queue),
    (DRM_SCHED_JOB_RUN, sched_job_run),
];

/// The timeline name of fence containers (arrays, chains), not tracked.
const UNBOUND: &str = "unbound";

/// A scheduler job as its events name it: by fence (since 6.17), or by
/// the scheduler's global id (the fence's address) and the ring's local id.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Job {
    Fence(u64, u64),
    Ids {
        global: Option<u64>,
        local: Option<u64>,
    },
}

/// How a job is found among the running ones (by fence or global id) and
/// among a ring's queued ones (by fence or local id).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum JobKey {
    Fence(u64, u64),
    Global(u64),
    Local(u64),
}

impl Job {
    fn running_key(self) -> JobKey {
        match self {
            Job::Fence(c, s) => JobKey::Fence(c, s),
            Job::Ids { global, .. } => JobKey::Global(global.unwrap_or(0)),
        }
    }

    fn queued_key(self) -> JobKey {
        match self {
            Job::Fence(c, s) => JobKey::Fence(c, s),
            Job::Ids { local, .. } => JobKey::Local(local.unwrap_or(0)),
        }
    }
}

/// A scheduler ring: its track, its running jobs in order, and the
/// queueing instants of jobs not yet run.
#[derive(Debug, Default)]
struct Ring {
    track: u32,
    running: VecDeque<Job>,
    queued: HashMap<JobKey, u32>,
}

/// A fence timeline: its track, its pending fences in order, and whether
/// it has `dma_fence_emit` events (then those replace the inits).
#[derive(Debug, Default)]
struct Timeline {
    track: u32,
    pending: VecDeque<u32>,
    has_emit: bool,
}

/// What the DRM events keep between events.
#[derive(Debug, Default)]
pub struct DrmState {
    rings: HashMap<String, Ring>,
    /// The ring each running job is on.
    busy: HashMap<JobKey, String>,
    timelines: HashMap<u32, Timeline>,
}

fn add(p: &mut Parser, b: &mut ArgSetBuilder, key: &str, v: ArgValue) {
    let k = p.storage.strings.intern(key);
    b.add(k, k, v);
}

/// A slice on `track`: complete with `dur` >= 0, open with -1.
fn slice(
    p: &mut Parser,
    ts: i64,
    dur: i64,
    track: u32,
    name: &str,
    b: &ArgSetBuilder,
) -> Option<u32> {
    let name = p.storage.strings.intern(name);
    let arg_set_id = p.storage.args.add_set(b);
    p.slices.begin(
        &mut p.storage,
        SliceRow {
            ts,
            dur,
            track_id: track,
            name,
            arg_set_id: arg_set_id.into(),
            ..SliceRow::default()
        },
    )
}

fn end(p: &mut Parser, ts: i64, track: u32) {
    p.slices.end(&mut p.storage, track, ts, None);
}

fn named_track(
    p: &mut Parser,
    name: &str,
    classification: &str,
    dims: Vec<(&str, ArgValue)>,
) -> u32 {
    let mut spec = TrackSpec::new(Some(name), classification, EventType::Slice);
    spec.dimensions = dims;
    p.tracks.interned_counter(&mut p.storage, &spec)
}

fn thread_track(p: &mut Parser, tid: i64) -> u32 {
    let utid = p.processes.get_or_create_thread(&mut p.storage, tid);
    p.tracks.thread_track(&mut p.storage, utid)
}

fn vblank(p: &mut Parser, ev: &FtraceInput<'_>, name: &str) {
    let e = Fields::new(ev.body);
    let crtc = e.int32(1).unwrap_or(0);
    let seq = e.uint(3).unwrap_or(0) as u32;
    let track = named_track(
        p,
        &format!("vblank-{}", crtc as u32),
        "drm_vblank",
        vec![("drm_crtc", ArgValue::Int(i64::from(crtc as u32)))],
    );
    let mut b = ArgSetBuilder::default();
    add(p, &mut b, "vblank seqno", ArgValue::Uint(u64::from(seq)));
    slice(p, ev.ts, 0, track, name, &b);
}

fn vblank_signal(p: &mut Parser, ev: &FtraceInput<'_>) {
    vblank(p, ev, "signal");
}

fn vblank_deliver(p: &mut Parser, ev: &FtraceInput<'_>) {
    vblank(p, ev, "deliver");
}

/// The ring of this name, its track made on first use.
fn ring<'a>(p: &'a mut Parser, name: &str) -> &'a mut Ring {
    if !p.drm.rings.contains_key(name) {
        let n = p.storage.strings.intern(name);
        let track = named_track(
            p,
            &format!("sched-{name}"),
            "drm_sched_ring",
            vec![("name", ArgValue::String(n))],
        );
        p.drm.rings.insert(
            name.to_owned(),
            Ring {
                track,
                ..Ring::default()
            },
        );
    }
    p.drm.rings.entry(name.to_owned()).or_default()
}

fn job_args(p: &mut Parser, b: &mut ArgSetBuilder, job: Job) {
    match job {
        Job::Fence(c, s) => {
            add(p, b, "fence context", ArgValue::Uint(c));
            add(p, b, "fence seqno", ArgValue::Uint(s));
        }
        Job::Ids { local, .. } => {
            add(p, b, "gpu sched job", ArgValue::Uint(local.unwrap_or(0)));
        }
    }
}

fn queue(p: &mut Parser, ts: i64, tid: i64, name: &str, job: Job) {
    let track = thread_track(p, tid);
    let ring_name = p.storage.strings.intern(name);
    let mut b = ArgSetBuilder::default();
    add(p, &mut b, "gpu sched ring", ArgValue::String(ring_name));
    job_args(p, &mut b, job);
    if let Some(id) = slice(p, ts, 0, track, "drm_sched_job_queue", &b) {
        ring(p, name).queued.insert(job.queued_key(), id);
    }
}

/// Opens the slice of the ring's first running job.
fn begin_ring_slice(p: &mut Parser, ts: i64, name: &str) {
    let Some(r) = p.drm.rings.get(name) else {
        return;
    };
    let (track, Some(&job)) = (r.track, r.running.front()) else {
        return;
    };
    let mut b = ArgSetBuilder::default();
    job_args(p, &mut b, job);
    let Some(id) = slice(p, ts, -1, track, "job", &b) else {
        return;
    };
    if let Some(from) = ring(p, name).queued.remove(&job.queued_key()) {
        p.storage.flows.push(FlowRow {
            slice_out: from,
            slice_in: id,
            trace_id: None,
            arg_set_id: None,
        });
    }
}

fn run(p: &mut Parser, ts: i64, name: &str, job: Job) {
    let r = ring(p, name);
    r.running.push_back(job);
    let first = r.running.len() == 1;
    p.drm.busy.insert(job.running_key(), name.to_owned());
    if first {
        begin_ring_slice(p, ts, name);
    }
}

fn done(p: &mut Parser, ts: i64, key: JobKey) {
    let Some(name) = p.drm.busy.remove(&key) else {
        return;
    };
    let Some(r) = p.drm.rings.get_mut(&name) else {
        return;
    };
    r.running.pop_front();
    let (track, more) = (r.track, !r.running.is_empty());
    end(p, ts, track);
    if more {
        begin_ring_slice(p, ts, &name);
    }
}

fn sched_job(p: &mut Parser, ev: &FtraceInput<'_>) {
    let e = Fields::new(ev.body);
    let name = e.str(6).unwrap_or_default();
    let job = Job::Ids {
        global: None,
        local: Some(e.uint(4).unwrap_or(0)),
    };
    queue(p, ev.ts, ev.tid, &name, job);
}

fn run_job(p: &mut Parser, ev: &FtraceInput<'_>) {
    let e = Fields::new(ev.body);
    let name = e.str(6).unwrap_or_default();
    let job = Job::Ids {
        global: Some(e.uint(2).unwrap_or(0)),
        local: Some(e.uint(4).unwrap_or(0)),
    };
    run(p, ev.ts, &name, job);
}

fn sched_process_job(p: &mut Parser, ev: &FtraceInput<'_>) {
    let e = Fields::new(ev.body);
    done(p, ev.ts, JobKey::Global(e.uint(1).unwrap_or(0)));
}

fn fence_job(e: &Fields<'_>, context: u32, seqno: u32) -> Job {
    Job::Fence(e.uint(context).unwrap_or(0), e.uint(seqno).unwrap_or(0))
}

fn sched_job_queue(p: &mut Parser, ev: &FtraceInput<'_>) {
    let e = Fields::new(ev.body);
    let name = e.str(1).unwrap_or_default();
    queue(p, ev.ts, ev.tid, &name, fence_job(&e, 5, 6));
}

fn sched_job_run(p: &mut Parser, ev: &FtraceInput<'_>) {
    let e = Fields::new(ev.body);
    let name = e.str(1).unwrap_or_default();
    run(p, ev.ts, &name, fence_job(&e, 5, 6));
}

fn sched_job_done(p: &mut Parser, ev: &FtraceInput<'_>) {
    let e = Fields::new(ev.body);
    done(p, ev.ts, fence_job(&e, 1, 2).running_key());
}

/// A fence event's timeline: (context, seqno, its timeline), None for an
/// unbound one.
fn fence_fields(ev: &FtraceInput<'_>) -> Option<(u32, u32, String)> {
    let e = Fields::new(ev.body);
    let timeline = e.str(4).unwrap_or_default().into_owned();
    if timeline == UNBOUND {
        return None;
    }
    Some((
        e.uint(1).unwrap_or(0) as u32,
        e.uint(3).unwrap_or(0) as u32,
        timeline,
    ))
}

/// The timeline of a context, its track made on first use (named by the
/// first event's timeline).
fn timeline<'a>(p: &'a mut Parser, context: u32, name: &str) -> &'a mut Timeline {
    if !p.drm.timelines.contains_key(&context) {
        let n = p.storage.strings.intern(name);
        let track = named_track(
            p,
            &format!("fence-{name}-{context}"),
            "drm_fence",
            vec![
                ("name", ArgValue::String(n)),
                ("context", ArgValue::Int(i64::from(context))),
            ],
        );
        p.drm.timelines.insert(
            context,
            Timeline {
                track,
                ..Timeline::default()
            },
        );
    }
    p.drm.timelines.entry(context).or_default()
}

fn begin_fence_slice(p: &mut Parser, ts: i64, context: u32) {
    let Some(t) = p.drm.timelines.get(&context) else {
        return;
    };
    let (track, Some(&seqno)) = (t.track, t.pending.front()) else {
        return;
    };
    let mut b = ArgSetBuilder::default();
    add(p, &mut b, "fence seqno", ArgValue::Uint(u64::from(seqno)));
    slice(p, ts, -1, track, "fence", &b);
}

fn fence_init(p: &mut Parser, ev: &FtraceInput<'_>) {
    let Some((context, seqno, name)) = fence_fields(ev) else {
        return;
    };
    let t = timeline(p, context, &name);
    if t.has_emit {
        return;
    }
    t.pending.push_back(seqno);
    if t.pending.len() == 1 {
        begin_fence_slice(p, ev.ts, context);
    }
}

fn fence_emit(p: &mut Parser, ev: &FtraceInput<'_>) {
    let Some((context, seqno, name)) = fence_fields(ev) else {
        return;
    };
    let t = timeline(p, context, &name);
    if !t.has_emit {
        t.has_emit = true;
        if !t.pending.is_empty() {
            t.pending.clear();
            let track = t.track;
            end(p, ev.ts, track);
        }
    }
    let t = timeline(p, context, &name);
    t.pending.push_back(seqno);
    if t.pending.len() == 1 {
        begin_fence_slice(p, ev.ts, context);
    }
}

fn fence_signaled(p: &mut Parser, ev: &FtraceInput<'_>) {
    let Some((context, seqno, name)) = fence_fields(ev) else {
        return;
    };
    let t = timeline(p, context, &name);
    match t.pending.front() {
        Some(&first) if seqno >= first => {}
        _ => return,
    }
    t.pending.pop_front();
    let (track, more) = (t.track, !t.pending.is_empty());
    end(p, ev.ts, track);
    if more {
        begin_fence_slice(p, ev.ts, context);
    }
}

fn fence_wait_start(p: &mut Parser, ev: &FtraceInput<'_>) {
    let e = Fields::new(ev.body);
    let track = thread_track(p, ev.tid);
    let mut b = ArgSetBuilder::default();
    add(
        p,
        &mut b,
        "fence context",
        ArgValue::Uint(u64::from(e.uint(1).unwrap_or(0) as u32)),
    );
    add(
        p,
        &mut b,
        "fence seqno",
        ArgValue::Uint(u64::from(e.uint(3).unwrap_or(0) as u32)),
    );
    slice(p, ev.ts, -1, track, "dma_fence_wait", &b);
}

fn fence_wait_end(p: &mut Parser, ev: &FtraceInput<'_>) {
    let track = thread_track(p, ev.tid);
    end(p, ev.ts, track);
}
