//! `StackSample`: the transport-neutral stack sample. Its task (process,
//! thread, async context chain), execution context (CPU, mode), callstack
//! (interned, or inline frames known by name and source location), and
//! weights (the primary and followers, as counter rows on a session's
//! counter tracks named by their descriptors, or the sequence's
//! `StackSampleDefaults`) become one row of the generic sample table with
//! the sequence's source.

use crate::hash::HashMap;
use crate::tables::opt_u32::OptU32;

use protozero::Decoder;

use super::Parser;
use crate::column_store::strings::StrId;
use crate::sequence_state::Generation;
use crate::storage::args::ArgValue;
use crate::storage::profiling_rows::{
    AsyncContextRow, ExecutionContextRow, ProfilerSampleRow, ProfilerSessionRow, TaskContextRow,
};
use crate::storage::rows::CounterRow;
use crate::tracker::profiler_samples::{ProfilerSampleTracker, ucpu};
use crate::tracker::stack_profile::DummyOwner;
use crate::tracker::tracks::{EventType, TrackSpec};

/// `TracePacketDefaults.stack_sample_defaults`.
const DEFAULTS: u32 = 100;
/// `InternedData` kinds of StackSample.
const INTERNED_TASK_CONTEXTS: u32 = 48;
const INTERNED_EXECUTION_CONTEXTS: u32 = 49;
const INTERNED_COUNTER_DESCRIPTORS: u32 = 50;
const INTERNED_ASYNC_CONTEXTS: u32 = 51;

/// Sessions per sequence, async contexts per (generation, iid).
#[derive(Debug, Default)]
pub struct StackSampleState {
    sessions: HashMap<u32, u32>,
    async_contexts: HashMap<(u32, u64), u32>,
}

fn fields(msg: &[u8], id: u32) -> Vec<protozero::Field<'_>> {
    let mut out = Vec::new();
    let mut d = Decoder::new(msg);
    while let Some(Ok(f)) = d.read_field() {
        if f.id == id {
            out.push(f);
        }
    }
    out
}

fn last_u64(msg: &[u8], id: u32) -> Option<u64> {
    Decoder::new(msg)
        .find_last(id)
        .and_then(|f| f.as_u64().ok())
}

fn last_bytes(msg: &[u8], id: u32) -> Option<&[u8]> {
    Decoder::new(msg)
        .find_last(id)
        .and_then(|f| f.as_bytes().ok())
}

fn last_str(msg: &[u8], id: u32) -> Option<&str> {
    Decoder::new(msg)
        .find_last(id)
        .and_then(|f| f.as_str().ok())
}

/// Values of a repeated scalar field, packed or not.
fn scalars(msg: &[u8], id: u32) -> Vec<u64> {
    let mut out = Vec::new();
    for f in fields(msg, id) {
        if let Ok(v) = f.as_u64() {
            out.push(v);
        } else if let Ok(mut rest) = f.as_bytes() {
            while !rest.is_empty() {
                match protozero::varint::decode_varint(rest) {
                    Ok((v, n)) if n > 0 => {
                        out.push(v);
                        rest = rest.get(n..).unwrap_or(&[]);
                    }
                    _ => break,
                }
            }
        }
    }
    out
}

fn unit_name(unit: u64) -> &'static str {
    match unit {
        1 => "ns",
        2 => "cycles",
        3 => "instructions",
        4 => "bytes",
        5 => "page-faults",
        6 => "cache-misses",
        7 => "cache-references",
        8 => "branch-misses",
        9 => "count",
        _ => "",
    }
}

fn mode_name(mode: u64) -> Option<&'static str> {
    Some(match mode {
        1 => "user",
        2 => "kernel",
        3 => "hypervisor",
        4 => "guest_user",
        5 => "guest_kernel",
        _ => return None,
    })
}

/// The counter track of a descriptor (None: CPU-scoped without a CPU).
fn counter_track(
    p: &mut Parser,
    session: u32,
    source: &str,
    desc: &[u8],
    timebase: bool,
    cpu: Option<u32>,
) -> Option<u32> {
    let name = last_str(desc, 2).unwrap_or("").to_owned();
    let unit = match last_u64(desc, 3) {
        Some(u) if u != 0 => Some(unit_name(u).to_owned()),
        _ => last_str(desc, 4)
            .filter(|s| !s.is_empty())
            .map(str::to_owned),
    };
    if timebase {
        if let Some(u) = &unit {
            let u = p.storage.strings.intern(u);
            if let Some(s) = p.storage.profiling.sessions.get_mut(session as usize) {
                if s.timebase_unit.is_null() {
                    s.timebase_unit = u;
                }
            }
        }
    }
    let source_id = p.storage.strings.intern(source);
    let name_id = p.storage.strings.intern(&name);
    let mut source_args = vec![("is_timebase", ArgValue::Bool(timebase))];
    if let Some(m) = last_u64(desc, 5) {
        source_args.push(("unit_multiplier", ArgValue::Int(m as i64)));
    }
    if let Some(d) = last_str(desc, 6).filter(|d| !d.is_empty()) {
        source_args.push(("description", ArgValue::String(p.storage.strings.intern(d))));
    }
    // SCOPE_CPU = 2; unset is global.
    let mut dims = Vec::new();
    let classification = if last_u64(desc, 7) == Some(2) {
        dims.push(("cpu", ArgValue::Uint(u64::from(cpu?))));
        "stack_sample_cpu_counter"
    } else {
        "stack_sample_session_counter"
    };
    dims.push(("session_id", ArgValue::Uint(u64::from(session))));
    dims.push(("source", ArgValue::String(source_id)));
    dims.push(("counter_name", ArgValue::String(name_id)));
    let mut spec = TrackSpec::new(Some(&name), classification, EventType::Counter);
    spec.dimensions = dims;
    spec.source_args = source_args;
    spec.unit = unit.as_deref();
    Some(p.tracks.interned_counter(&mut p.storage, &spec))
}

fn push_counter(p: &mut Parser, ts: i64, track_id: u32, value: f64) -> u32 {
    let id = u32::try_from(p.storage.counters.len()).unwrap_or(u32::MAX);
    p.storage.counters.push(CounterRow {
        ts,
        track_id,
        value,
        arg_set_id: OptU32::NONE,
    });
    id
}

fn async_context(p: &mut Parser, gen_idx: u32, generation: &Generation, iid: u64) -> Option<u32> {
    let mut unresolved: Vec<(u64, &[u8])> = Vec::new();
    // The chain's iids, to stop at a cycle without walking it (a chain of
    // N contexts was N² steps).
    let mut seen = crate::hash::HashSet::default();
    let mut parent = None;
    let mut iid = iid;
    while iid != 0 {
        if let Some(id) = p
            .profiling
            .stack_samples
            .async_contexts
            .get(&(gen_idx, iid))
        {
            parent = Some(*id);
            break;
        }
        let Some(desc) = generation.interned(INTERNED_ASYNC_CONTEXTS, iid) else {
            break;
        };
        if !seen.insert(iid) {
            break;
        }
        unresolved.push((iid, desc));
        iid = last_u64(desc, 4).unwrap_or(0);
    }
    for (iid, desc) in unresolved.into_iter().rev() {
        let name = last_str(desc, 2).filter(|s| !s.is_empty());
        let kind = last_str(desc, 3).filter(|s| !s.is_empty());
        let row = AsyncContextRow {
            name: p.storage.strings.intern_opt(name),
            kind: p.storage.strings.intern_opt(kind),
            parent_id: parent,
        };
        let id = u32::try_from(p.storage.profiling.async_contexts.len()).unwrap_or(u32::MAX);
        p.storage.profiling.async_contexts.push(row);
        p.profiling
            .stack_samples
            .async_contexts
            .insert((gen_idx, iid), id);
        parent = Some(id);
    }
    parent
}

/// Parses one `StackSample` of sequence `seq`.
pub fn parse(
    p: &mut Parser,
    bytes: &[u8],
    ts: i64,
    seq: u32,
    gen_idx: u32,
    generation: &Generation,
) {
    let defaults = generation
        .defaults
        .as_deref()
        .and_then(|d| last_bytes(d, DEFAULTS));
    let source = defaults
        .and_then(|d| last_str(d, 1))
        .unwrap_or("")
        .to_owned();
    let source_id = if source.is_empty() {
        StrId::NULL
    } else {
        p.storage.strings.intern(&source)
    };
    let mut upid = None;
    let task = last_bytes(bytes, 1).or_else(|| {
        last_u64(bytes, 2).and_then(|i| generation.interned(INTERNED_TASK_CONTEXTS, i))
    });
    let task_context_id = task.map(|t| {
        let mut row = TaskContextRow::default();
        let pid = last_u64(t, 2).map(|v| v as i64);
        if let Some(pid) = pid {
            upid = Some(p.processes.get_or_create_process(&mut p.storage, pid));
            row.upid = upid;
        }
        if let Some(tid) = last_u64(t, 3).map(|v| v as i64) {
            row.utid = Some(match pid {
                Some(pid) => p.processes.update_thread(&mut p.storage, tid, pid),
                None => p.processes.get_or_create_thread(&mut p.storage, tid),
            });
        }
        if let Some(a) = last_u64(t, 4) {
            row.async_context_id = async_context(p, gen_idx, generation, a);
        }
        p.profiling.samples.task_context(&mut p.storage, row)
    });
    let mut cpu = None;
    let exec = last_bytes(bytes, 3).or_else(|| {
        last_u64(bytes, 4).and_then(|i| generation.interned(INTERNED_EXECUTION_CONTEXTS, i))
    });
    let execution_context_id = exec.map(|e| {
        let mut row = ExecutionContextRow::default();
        if let Some(c) = last_u64(e, 2) {
            let c = c as u32;
            cpu = Some(c);
            row.ucpu = Some(ucpu(&mut p.storage, c));
        }
        if let Some(m) = last_u64(e, 3).and_then(mode_name) {
            row.cpu_mode = p.storage.strings.intern(m);
        }
        p.profiling.samples.execution_context(&mut p.storage, row)
    });
    let session = match p.profiling.stack_samples.sessions.get(&seq) {
        Some(s) => *s,
        None => {
            let id = u32::try_from(p.storage.profiling.sessions.len()).unwrap_or(u32::MAX);
            p.storage.profiling.sessions.push(ProfilerSessionRow {
                source: source_id,
                timebase_unit: StrId::NULL,
                cmdline: StrId::NULL,
            });
            p.profiling.stack_samples.sessions.insert(seq, id);
            id
        }
    };
    // Weights.
    let mut counters = Vec::new();
    let primary = last_bytes(bytes, 9)
        .or_else(|| {
            last_u64(bytes, 10).and_then(|i| generation.interned(INTERNED_COUNTER_DESCRIPTORS, i))
        })
        .or_else(|| defaults.and_then(|d| last_bytes(d, 2)));
    let timebase = primary.and_then(|d| counter_track(p, session, &source, d, true, cpu));
    if let (Some(track), Some(w)) = (timebase, last_u64(bytes, 11)) {
        counters.push(push_counter(p, ts, track, w as f64));
    }
    let mut followers: Vec<Option<u32>> = Vec::new();
    for f in fields(bytes, 12) {
        if let Ok(d) = f.as_bytes() {
            followers.push(counter_track(p, session, &source, d, false, cpu));
        }
    }
    if followers.is_empty() {
        for iid in scalars(bytes, 13) {
            let t = generation
                .interned(INTERNED_COUNTER_DESCRIPTORS, iid)
                .and_then(|d| counter_track(p, session, &source, d, false, cpu));
            followers.push(t);
        }
    }
    if followers.is_empty() {
        if let Some(d) = defaults {
            for f in fields(d, 3) {
                if let Ok(desc) = f.as_bytes() {
                    followers.push(counter_track(p, session, &source, desc, false, cpu));
                }
            }
        }
    }
    for (w, t) in scalars(bytes, 14).into_iter().zip(followers.iter()) {
        if let Some(t) = t {
            counters.push(push_counter(p, ts, *t, w as f64));
        }
    }
    // Callstack.
    let callsite_id = if let Some(iid) = last_u64(bytes, 6) {
        p.profiling
            .stacks
            .interned_callstack(&mut p.storage, gen_idx, generation, upid, iid)
    } else if let Some(cs) = last_bytes(bytes, 5) {
        let mut frames = Vec::new();
        for f in fields(cs, 1) {
            let Ok(f) = f.as_bytes() else { continue };
            let name = last_str(f, 1).unwrap_or("").to_owned();
            let file = last_str(f, 2).map(str::to_owned);
            let line = last_u64(f, 3).map(|l| l as u32);
            frames.push(p.profiling.stacks.intern_dummy_frame(
                &mut p.storage,
                DummyOwner::StackSampleInline,
                &name,
                file.as_deref(),
                line,
            ));
        }
        let mut parent = None;
        for (depth, f) in frames.iter().enumerate() {
            let depth = u32::try_from(depth).unwrap_or(u32::MAX);
            parent = Some(
                p.profiling
                    .stacks
                    .intern_callsite(&mut p.storage, parent, *f, depth),
            );
        }
        parent
    } else {
        None
    };
    let counter_set_id = ProfilerSampleTracker::counter_set(&mut p.storage, &counters);
    ProfilerSampleTracker::add_sample(
        &mut p.storage,
        ProfilerSampleRow {
            ts,
            source: source_id,
            task_context_id,
            execution_context_id,
            callsite_id,
            unwind_error: StrId::NULL,
            session_id: Some(session),
            counter_set_id,
        },
    );
}
