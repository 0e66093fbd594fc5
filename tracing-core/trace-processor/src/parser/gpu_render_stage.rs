//! GPU render stages (`gpu_render_stage_event`, TracePacket field 53) as
//! upstream imports them: each event with an id is a slice of its duration
//! on a `gpu_render_stage` track of its hardware queue (named by the
//! queue's interned specification, by the legacy in-packet specification,
//! or `Unknown GPU Queue <id>` until one names it), overlapping stages of
//! a queue spread over several tracks of the same name; the slice is named
//! by the event's name, its interned name or its stage, and carries the
//! stage's category and description, the compute kernel and launch, the
//! extra data, the Vulkan handles with their debug names (from
//! `vulkan_api_event`'s object names), the subpasses, the submission, the
//! queue and the process as args. A graphics context an event names goes
//! into `__intrinsic_gpu_context` once; an event waiting on others gets
//! flows from their slices.

use protozero::Decoder;

use super::Parser;
use super::fields::Fields;
use super::gpu_log_vulkan::repeated_u64;
use super::importer::{Importer, Input};
use crate::column_store::strings::StrId;
use crate::hash::{HashMap, HashSet};
use crate::sequence_state::Generation;
use crate::storage::args::{ArgSetBuilder, ArgValue};
use crate::storage::rows::{FlowRow, SliceRow};
use crate::tables::gpu::GpuContextRow;
use crate::tracker::tracks::{EventType, TrackSpec};

/// TracePacket.gpu_render_stage_event.
const GPU_RENDER_STAGE_EVENT: u32 = 53;
/// TrackEvent's `GpuTrackEvent.gpu_correlation` extension.
const GPU_CORRELATION: u32 = 3000;
/// TrackEvent's `GpuTrackEvent.gpu_api` extension.
const GPU_API: u32 = 3001;

/// The packets this module imports.
pub const IMPORTERS: &[(u32, Importer)] = &[(GPU_RENDER_STAGE_EVENT, render_stage_event)];

/// InternedData fields this module reads.
const INTERNED_EVENT_NAMES: u32 = 2;
const INTERNED_GRAPHICS_CONTEXTS: u32 = 23;
const INTERNED_GPU_SPECIFICATIONS: u32 = 24;
const INTERNED_DEBUG_STRING_VALUES: u32 = 29;
const INTERNED_COMPUTE_KERNELS: u32 = 1000;
const INTERNED_COMPUTE_ARG_NAMES: u32 = 1001;

/// Vulkan object types whose debug names the slices show.
const VK_OBJECT_TYPE_COMMAND_BUFFER: i32 = 6;
const VK_OBJECT_TYPE_RENDER_PASS: i32 = 18;
const VK_OBJECT_TYPE_FRAMEBUFFER: i32 = 24;

/// `GpuRenderStageEvent` fields.
mod ev {
    pub const EVENT_ID: u32 = 1;
    pub const DURATION: u32 = 2;
    pub const HW_QUEUE_ID: u32 = 3;
    pub const STAGE_ID: u32 = 4;
    pub const CONTEXT: u32 = 5;
    pub const EXTRA_DATA: u32 = 6;
    pub const SPECIFICATIONS: u32 = 7;
    pub const RENDER_TARGET: u32 = 8;
    pub const RENDER_PASS: u32 = 9;
    pub const SUBMISSION_ID: u32 = 10;
    pub const GPU_ID: u32 = 11;
    pub const COMMAND_BUFFER: u32 = 12;
    pub const HW_QUEUE_IID: u32 = 13;
    pub const STAGE_IID: u32 = 14;
    pub const SUBPASS_MASK: u32 = 15;
    pub const RENDER_PASS_INSTANCE_ID: u32 = 16;
    pub const NAME: u32 = 17;
    pub const EVENT_WAIT_IDS: u32 = 18;
    pub const KERNEL_IID: u32 = 19;
    pub const NAME_IID: u32 = 20;
    pub const LAUNCH: u32 = 21;
}

/// A hardware queue's or a stage's name and description.
type Described = (StrId, StrId);

/// What the render stages keep between packets.
#[derive(Debug, Default)]
pub struct RenderStageState {
    /// Hardware queues the legacy specifications named, by index.
    hw_queues: Vec<Option<Described>>,
    /// Stages the legacy specifications named, by index.
    stages: Vec<Described>,
    /// Queues seen before any specification named them: their first
    /// track, renamed once one does.
    unnamed_queues: HashMap<u64, Option<u32>>,
    /// Contexts already in `__intrinsic_gpu_context`.
    contexts: HashSet<u64>,
    /// Vulkan debug names by (object type, handle).
    pub debug_names: HashMap<(i32, u64), String>,
    /// Each queue's tracks with the end of their last slice.
    pools: HashMap<String, Vec<(u32, i64)>>,
    /// Slices of each event id, and slices waiting on each event id.
    event_slices: HashMap<u64, Vec<u32>>,
    waiting: HashMap<u64, Vec<u32>>,
    /// The TrackEvent slice that submitted each event id, and the one that
    /// waited for it (`GpuCorrelation`).
    submitted_by: HashMap<u64, u32>,
    waited_by: HashMap<u64, u32>,
}

/// A string interned, the empty one as NULL (upstream's pool has no empty
/// string).
fn intern(p: &mut Parser, s: &[u8]) -> StrId {
    if s.is_empty() {
        return StrId::NULL;
    }
    p.storage.strings.intern(&String::from_utf8_lossy(s))
}

/// An interned message's string field.
fn interned_str(g: &Generation, kind: u32, iid: u64, field: u32) -> Option<&[u8]> {
    Fields::new(g.interned(kind, iid)?).bytes(field)
}

fn graphics_api(api: u64) -> &'static str {
    match api {
        1 => "OPEN_GL",
        2 => "VULKAN",
        3 => "OPEN_CL",
        4 => "CUDA",
        5 => "HIP",
        _ => "UNDEFINED",
    }
}

/// The render subpasses of a mask: the indices of its set bits, each word
/// of the mask 64 bits further.
fn subpasses(words: &[u64]) -> String {
    let mut out = String::new();
    for (w, bits) in words.iter().enumerate() {
        for b in 0..64 {
            if (bits >> b) & 1 == 1 {
                if !out.is_empty() {
                    out.push(',');
                }
                out.push_str(&(w * 64 + b).to_string());
            }
        }
    }
    out
}

fn fields_of(bytes: &[u8], id: u32) -> impl Iterator<Item = &[u8]> {
    Decoder::new(bytes)
        .map_while(Result::ok)
        .filter(move |f| f.id == id)
        .filter_map(|f| f.as_bytes().ok())
}

/// The legacy in-packet specifications: queues (renaming a queue's
/// placeholder track), stages and the context's pid.
fn specifications(p: &mut Parser, spec: &[u8], pid: &mut i64) {
    for (i, q) in fields_of(spec, 2).enumerate() {
        let q = Fields::new(q);
        let Some(name) = q.bytes(1) else { continue };
        let name = intern(p, name);
        let description = intern(p, q.bytes(2).unwrap_or_default());
        let st = &mut p.gpu_render_stage;
        if st.hw_queues.len() <= i {
            st.hw_queues.resize(i + 1, None);
        }
        if let Some(slot) = st.hw_queues.get_mut(i) {
            *slot = Some((name, description));
        }
        if let Some(Some(track)) = st.unnamed_queues.get_mut(&(i as u64)).map(Option::take) {
            if let Some(t) = p.storage.tracks.get_mut(track as usize) {
                t.name = name;
            }
            let key = p.storage.strings.intern("description");
            let mut b = ArgSetBuilder::default();
            b.add(key, key, ArgValue::String(description));
            let set = p.storage.args.add_set(&b);
            if let Some(t) = p.storage.tracks.get_mut(track as usize) {
                t.source_arg_set_id = set;
            }
        }
    }
    for s in fields_of(spec, 3) {
        let s = Fields::new(s);
        let Some(name) = s.bytes(1) else { continue };
        let name = intern(p, name);
        let description = intern(p, s.bytes(2).unwrap_or_default());
        p.gpu_render_stage.stages.push((name, description));
    }
    if let Some(pid_field) = Fields::new(spec)
        .bytes(1)
        .and_then(|c| Fields::new(c).int32(2))
    {
        *pid = i64::from(pid_field);
    }
}

/// The track a stage of `dur` at `ts` goes on: the first track of its
/// queue free by then, or a new one.
fn stage_track(p: &mut Parser, key: String, ts: i64, dur: i64, spec: &TrackSpec<'_>) -> u32 {
    let end = ts.saturating_add(dur);
    if let Some(slot) = p
        .gpu_render_stage
        .pools
        .get_mut(&key)
        .and_then(|pool| pool.iter_mut().find(|(_, e)| *e <= ts))
    {
        slot.1 = end;
        return slot.0;
    }
    let track = p.tracks.create(&mut p.storage, spec);
    p.gpu_render_stage
        .pools
        .entry(key)
        .or_default()
        .push((track, end));
    track
}

fn add(p: &mut Parser, b: &mut ArgSetBuilder, key: &str, v: ArgValue) {
    let k = p.storage.strings.intern(key);
    b.add(k, k, v);
}

/// An `ExtraComputeArg`: named inline or by interned name, valued by one
/// of its typed fields.
fn compute_arg(p: &mut Parser, g: &Generation, bytes: &[u8], b: &mut ArgSetBuilder) {
    let a = Fields::new(bytes);
    let name = match a.uint(1) {
        Some(iid) => interned_str(g, INTERNED_COMPUTE_ARG_NAMES, iid, 2).map(|n| intern(p, n)),
        None => a.bytes(2).map(|n| intern(p, n)),
    };
    let Some(name) = name.filter(|n| !n.is_null()) else {
        return;
    };
    let value = if let Some(v) = a.int(3) {
        ArgValue::Int(v)
    } else if let Some(v) = a.uint(4) {
        ArgValue::Uint(v)
    } else if let Some(v) = a.real(5) {
        ArgValue::Real(v)
    } else if let Some(v) = a.uint(7) {
        match interned_str(g, INTERNED_DEBUG_STRING_VALUES, v, 2) {
            Some(s) => ArgValue::String(intern(p, s)),
            None => return,
        }
    } else if let Some(v) = a.bytes(6) {
        ArgValue::String(intern(p, v))
    } else {
        return;
    };
    b.add(name, name, value);
}

fn compute_kernel(p: &mut Parser, g: &Generation, iid: u64, b: &mut ArgSetBuilder) {
    let Some(kernel) = g.interned(INTERNED_COMPUTE_KERNELS, iid) else {
        return;
    };
    let k = Fields::new(kernel);
    for (field, key) in [
        (2, "kernel_name"),
        (3, "kernel_demangled_name"),
        (4, "arch"),
    ] {
        if let Some(v) = k.bytes(field) {
            let v = intern(p, v);
            add(p, b, key, ArgValue::String(v));
        }
    }
    for a in fields_of(kernel, 5) {
        compute_arg(p, g, a, b);
    }
}

fn kernel_launch(p: &mut Parser, g: &Generation, launch: &[u8], b: &mut ArgSetBuilder) {
    let l = Fields::new(launch);
    for (field, prefix) in [(1, "launch.grid_size"), (2, "launch.workgroup_size")] {
        let Some(dim) = l.bytes(field) else { continue };
        let d = Fields::new(dim);
        for (i, axis) in ["x", "y", "z"].iter().enumerate() {
            if let Some(v) = d.uint(i as u32 + 1) {
                add(p, b, &format!("{prefix}.{axis}"), ArgValue::Uint(v));
            }
        }
    }
    for a in fields_of(launch, 3) {
        compute_arg(p, g, a, b);
    }
}

fn debug_name(p: &mut Parser, object_type: i32, handle: u64) -> StrId {
    match p.gpu_render_stage.debug_names.get(&(object_type, handle)) {
        Some(name) if !name.is_empty() => {
            let name = name.clone();
            p.storage.strings.intern(&name)
        }
        Some(_) => StrId::NULL,
        None => StrId::NULL,
    }
}

fn render_stage_event(p: &mut Parser, input: &Input<'_>) {
    let g = input.generation;
    let e = Fields::new(input.bytes);
    let gpu = e.int32(ev::GPU_ID).unwrap_or(0) as u32;
    let mut pid = 0i64;
    if let Some(spec) = e.bytes(ev::SPECIFICATIONS) {
        specifications(p, spec, &mut pid);
    }
    let context = e.uint(ev::CONTEXT);
    if let Some(ctx) = context
        && let Some(bytes) = g.interned(INTERNED_GRAPHICS_CONTEXTS, ctx)
    {
        let c = Fields::new(bytes);
        pid = i64::from(c.int32(2).unwrap_or(0));
        if p.gpu_render_stage.contexts.insert(ctx) {
            let api = c
                .uint(3)
                .map_or(StrId::NULL, |a| p.storage.strings.intern(graphics_api(a)));
            p.storage.gpu.contexts.push(GpuContextRow {
                context_id: i64::from(ctx as u32),
                pid: c.int32(2).map(|v| i64::from(v as u32)),
                api,
            });
        }
    }
    let Some(event_id) = e.uint(ev::EVENT_ID) else {
        return;
    };

    // The queue: its track's name, description and naming dimension.
    let (source, hw_queue_id, name, description, dim_name) = match e.uint(ev::HW_QUEUE_IID) {
        Some(iid) => {
            let Some(spec) = g.interned(INTERNED_GPU_SPECIFICATIONS, iid) else {
                return;
            };
            let s = Fields::new(spec);
            let name = intern(p, s.bytes(2).unwrap_or_default());
            let description = intern(p, s.bytes(3).unwrap_or_default());
            ("iid", iid, name, description, name)
        }
        None => {
            let id = u64::from(e.int32(ev::HW_QUEUE_ID).unwrap_or(0) as u32);
            match p
                .gpu_render_stage
                .hw_queues
                .get(id as usize)
                .copied()
                .flatten()
            {
                Some((name, description)) => ("id", id, name, description, name),
                None => {
                    let name = p.storage.strings.intern(&format!("Unknown GPU Queue {id}"));
                    p.gpu_render_stage.unnamed_queues.entry(id).or_insert(None);
                    ("id", id, name, StrId::NULL, StrId::NULL)
                }
            }
        }
    };
    let ts = input.ts;
    let dur = e.uint(ev::DURATION).unwrap_or(0) as i64;
    let ugpu = p.gpus.ugpu(&mut p.storage, p.machine, gpu);
    let name_text = p.storage.strings.get(name).unwrap_or_default().to_owned();
    let source_id = p.storage.strings.intern(source);
    let mut spec = TrackSpec::new(
        (!name.is_null()).then_some(name_text.as_str()),
        "gpu_render_stage",
        EventType::Slice,
    );
    spec.dimensions = vec![
        ("ugpu", ArgValue::Int(i64::from(ugpu))),
        ("gpu", ArgValue::Int(i64::from(gpu))),
        ("render_stage_source", ArgValue::String(source_id)),
        ("hwqueue_id", ArgValue::Int(hw_queue_id as u32 as i64)),
        ("hwqueue_name", ArgValue::String(dim_name)),
    ];
    if !description.is_null() {
        spec.source_args = vec![("description", ArgValue::String(description))];
    }
    let key = format!(
        "{}|{ugpu}|{gpu}|{source}|{}|{}",
        p.machine, hw_queue_id as u32, dim_name.0
    );
    let fresh = !p.gpu_render_stage.pools.contains_key(&key);
    let track = stage_track(p, key, ts, dur, &spec);
    if fresh
        && dim_name.is_null()
        && let Some(slot) = p.gpu_render_stage.unnamed_queues.get_mut(&hw_queue_id)
        && slot.is_none()
    {
        *slot = Some(track);
    }

    // The slice's name.
    let slice_name = if let Some(iid) = e.uint(ev::NAME_IID) {
        interned_str(g, INTERNED_EVENT_NAMES, iid, 2).map_or(StrId::NULL, |n| intern(p, n))
    } else if let Some(n) = e.bytes(ev::NAME) {
        intern(p, n)
    } else if let Some(iid) = e.uint(ev::STAGE_IID) {
        interned_str(g, INTERNED_GPU_SPECIFICATIONS, iid, 2).map_or(StrId::NULL, |n| intern(p, n))
    } else {
        let stage = e.int32(ev::STAGE_ID).unwrap_or(0) as i64 as u64;
        match p.gpu_render_stage.stages.get(stage as usize) {
            Some((n, _)) => *n,
            None => p.storage.strings.intern(&format!("render stage({stage})")),
        }
    };

    let mut b = ArgSetBuilder::default();
    if let Some(iid) = e.uint(ev::STAGE_IID) {
        if let Some(spec) = g.interned(INTERNED_GPU_SPECIFICATIONS, iid) {
            let s = Fields::new(spec);
            add(
                p,
                &mut b,
                "render_stage_category",
                ArgValue::Int(s.uint(4).unwrap_or(0) as i64),
            );
            let d = intern(p, s.bytes(3).unwrap_or_default());
            add(p, &mut b, "description", ArgValue::String(d));
        }
    } else if let Some(stage) = e.int32(ev::STAGE_ID) {
        if let Some(&(_, d)) = p.gpu_render_stage.stages.get(stage as u32 as usize)
            && !d.is_null()
        {
            add(p, &mut b, "description", ArgValue::String(d));
        }
    }
    if let Some(iid) = e.uint(ev::KERNEL_IID) {
        compute_kernel(p, g, iid, &mut b);
    }
    if let Some(launch) = e.bytes(ev::LAUNCH) {
        kernel_launch(p, g, launch, &mut b);
    }
    if let Some(rp) = e.uint(ev::RENDER_PASS_INSTANCE_ID).filter(|&v| v != 0) {
        let v = p.storage.strings.intern(&format!("rp:#{rp}"));
        add(p, &mut b, "correlation_id", ArgValue::String(v));
    }
    for d in fields_of(input.bytes, ev::EXTRA_DATA) {
        let d = Fields::new(d);
        let key = intern(p, d.bytes(1).unwrap_or_default());
        let value = intern(p, d.bytes(2).unwrap_or_default());
        b.add(key, key, ArgValue::String(value));
    }
    let render_target = e.uint(ev::RENDER_TARGET).unwrap_or(0);
    let render_pass = e.uint(ev::RENDER_PASS).unwrap_or(0);
    let command_buffer = e.uint(ev::COMMAND_BUFFER).unwrap_or(0);
    add(
        p,
        &mut b,
        "context_id",
        ArgValue::Uint(context.unwrap_or(0)),
    );
    add(p, &mut b, "render_target", ArgValue::Uint(render_target));
    let n = debug_name(p, VK_OBJECT_TYPE_FRAMEBUFFER, render_target);
    add(p, &mut b, "render_target_name", ArgValue::String(n));
    add(p, &mut b, "render_pass", ArgValue::Uint(render_pass));
    let n = debug_name(p, VK_OBJECT_TYPE_RENDER_PASS, render_pass);
    add(p, &mut b, "render_pass_name", ArgValue::String(n));
    let words = repeated_u64(input.bytes, ev::SUBPASS_MASK);
    let sub = if Fields::new(input.bytes).bytes(ev::SUBPASS_MASK).is_some() || !words.is_empty() {
        let s = subpasses(&words);
        p.storage.strings.intern(&s)
    } else {
        StrId::NULL
    };
    add(p, &mut b, "render_subpasses", ArgValue::String(sub));
    add(p, &mut b, "command_buffer", ArgValue::Uint(command_buffer));
    let n = debug_name(p, VK_OBJECT_TYPE_COMMAND_BUFFER, command_buffer);
    add(p, &mut b, "command_buffer_name", ArgValue::String(n));
    add(
        p,
        &mut b,
        "submission_id",
        ArgValue::Int(i64::from(e.uint(ev::SUBMISSION_ID).unwrap_or(0) as u32)),
    );
    add(p, &mut b, "hw_queue_id", ArgValue::Uint(hw_queue_id));
    let upid = p
        .processes
        .get_or_create_process(&mut p.storage, i64::from(pid as u32));
    add(p, &mut b, "upid", ArgValue::Int(i64::from(upid)));

    let arg_set_id = p.storage.args.add_set(&b);
    let Some(slice) = p.slices.begin(
        &mut p.storage,
        SliceRow {
            ts,
            dur,
            track_id: track,
            name: slice_name,
            arg_set_id: arg_set_id.into(),
            ..SliceRow::default()
        },
    ) else {
        return;
    };
    flows(
        p,
        event_id,
        slice,
        &repeated_u64(input.bytes, ev::EVENT_WAIT_IDS),
    );
}

fn push_flows(p: &mut Parser, flows: Vec<(u32, u32)>) {
    for (slice_out, slice_in) in flows {
        p.storage.flows.push(FlowRow {
            slice_out,
            slice_in,
            trace_id: None,
            arg_set_id: None,
        });
    }
}

/// Flows of a render stage's slice: from the TrackEvent that submitted
/// its event, to the one that waited for it, to the stages that waited on
/// it before it came, and from the stages of the events it waits on.
fn flows(p: &mut Parser, event_id: u64, slice: u32, waits: &[u64]) {
    let st = &mut p.gpu_render_stage;
    st.event_slices.entry(event_id).or_default().push(slice);
    let mut out = Vec::new();
    if let Some(&te) = st.submitted_by.get(&event_id) {
        out.push((te, slice));
    }
    if let Some(&te) = st.waited_by.get(&event_id) {
        out.push((slice, te));
    }
    if let Some(waiting) = st.waiting.get(&event_id) {
        out.extend(waiting.iter().map(|&w| (slice, w)));
    }
    for &w in waits {
        if let Some(sources) = st.event_slices.get(&w) {
            out.extend(sources.iter().map(|&s| (s, slice)));
        }
        st.waiting.entry(w).or_default().push(slice);
    }
    push_flows(p, out);
}

/// The `GpuApi` enum's value names.
fn gpu_api_name(api: u64) -> Option<&'static str> {
    const NAMES: [&str; 6] = [
        "GPU_API_UNDEFINED",
        "GPU_API_OPEN_GL",
        "GPU_API_VULKAN",
        "GPU_API_OPEN_CL",
        "GPU_API_CUDA",
        "GPU_API_HIP",
    ];
    usize::try_from(api)
        .ok()
        .and_then(|i| NAMES.get(i))
        .copied()
}

/// A TrackEvent's `gpu_api` (extension field 3001) as the slice's
/// `gpu_api` arg, the enum's value name (its number when unnamed), as
/// upstream's extension args show it.
fn track_event_gpu_api(p: &mut Parser, rest: &[u8], slice: u32) {
    let Some(api) = protozero::Decoder::new(rest)
        .map_while(Result::ok)
        .filter(|f| f.id == GPU_API)
        .filter_map(|f| f.as_u64().ok())
        .last()
    else {
        return;
    };
    let value = match gpu_api_name(api) {
        Some(name) => ArgValue::String(p.storage.strings.intern(name)),
        None => ArgValue::Int(api as i64),
    };
    let key = p.storage.strings.intern("gpu_api");
    if let Some(open) = p.slices.open_args_of(&p.storage, slice) {
        // The slice is still on its stack: its args are stored as it
        // leaves it, this one with them.
        open.args.add(key, key, value);
        return;
    }
    let Some(existing) = p
        .storage
        .slices
        .get(slice as usize)
        .map(|s| s.arg_set_id.get())
    else {
        return;
    };
    let mut b = ArgSetBuilder::default();
    if let Some(set) = existing {
        let args: Vec<_> = p.storage.args.set(set).copied().collect();
        for a in args {
            b.add(a.flat_key, a.key, a.value);
        }
    }
    add(p, &mut b, "gpu_api", value);
    let id = p.storage.args.add_set(&b);
    if let Some(s) = p.storage.slices.get_mut(slice as usize) {
        s.arg_set_id = id.into();
    }
}

/// A TrackEvent's GPU extensions: its `gpu_api` becomes an arg; with its
/// `gpu_correlation` (extension field 3000), the render stage events it
/// submitted flow from its slice and those it waited for flow to it
/// (`rest`: the event's fields the loader left).
pub(super) fn track_event_correlation(p: &mut Parser, rest: &[u8], slice: u32) {
    track_event_gpu_api(p, rest, slice);
    let Some(correlation) = fields_of(rest, GPU_CORRELATION).last() else {
        return;
    };
    let mut out = Vec::new();
    let st = &mut p.gpu_render_stage;
    for id in repeated_u64(correlation, 1) {
        st.submitted_by.insert(id, slice);
        if let Some(stages) = st.event_slices.get(&id) {
            out.extend(stages.iter().map(|&s| (slice, s)));
        }
    }
    for id in repeated_u64(correlation, 2) {
        st.waited_by.insert(id, slice);
        if let Some(stages) = st.event_slices.get(&id) {
            out.extend(stages.iter().map(|&s| (s, slice)));
        }
    }
    push_flows(p, out);
}

#[cfg(test)]
mod tests {
    use super::subpasses;

    #[test]
    fn subpasses_are_the_set_bits_of_each_word_64_further() {
        assert_eq!(subpasses(&[1]), "0");
        assert_eq!(subpasses(&[1 << 63, 1]), "63,64");
        assert_eq!(subpasses(&[0, 1]), "64");
        assert_eq!(subpasses(&[0b1000, 0b11110000]), "3,68,69,70,71");
    }
}
