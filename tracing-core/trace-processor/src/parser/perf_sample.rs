//! `PerfSample`: traced_perf's (and our `linux.perf` probe's) CPU samples.
//! Each sequence is one perf session; per CPU, the timebase and each
//! follower of the sequence's `PerfSampleDefaults` get a counter track
//! (`perf_cpu_counter`), a sample's counts become counter rows grouped in
//! one counter set, and the sample a row of the generic sample table
//! (source `linux.perf`) with its thread, CPU, mode, callstack and
//! unwinding error. Lost records, skipped samples and guardrail stops are
//! stats, as upstream counts them.

use crate::hash::HashMap;
use crate::tables::opt_u32::OptU32;

use protozero::Decoder;
use zerotrace_protos::protos::{PerfSampleDecoder, PerfSampleDefaultsDecoder};

use super::Parser;
use crate::column_store::strings::StrId;
use crate::sequence_state::Generation;
use crate::storage::args::ArgValue;
use crate::storage::profile_facts::{PerfSampleFacts, Timebase};
use crate::storage::profiling_rows::{
    ExecutionContextRow, ProfilerSampleRow, ProfilerSessionRow, TaskContextRow,
};
use crate::storage::rows::CounterRow;
use crate::tracker::profiler_samples::{ProfilerSampleTracker, ucpu};
use crate::tracker::tracks::{EventType, TrackSpec};

/// `TracePacketDefaults.perf_sample_defaults`.
const PERF_SAMPLE_DEFAULTS: u32 = 12;

/// One sequence's session and its tracks per CPU.
#[derive(Debug, Default)]
pub struct PerfSequence {
    session_id: u32,
    per_cpu: HashMap<u32, (u32, Vec<u32>)>,
}

/// A perf counter's name as upstream spells it.
fn counter_name(counter: u64) -> &'static str {
    match counter {
        1 => "cpu-clock",
        2 => "page-faults",
        3 => "task-clock",
        4 => "context-switches",
        5 => "cpu-migrations",
        6 => "minor-faults",
        7 => "major-faults",
        8 => "alignment-faults",
        9 => "emulation-faults",
        20 => "dummy",
        10 => "cpu-cycles",
        11 => "instructions",
        12 => "cache-references",
        13 => "cache-misses",
        14 => "branch-instructions",
        15 => "branch-misses",
        16 => "bus-cycles",
        17 => "stalled-cycles-frontend",
        18 => "stalled-cycles-backend",
        19 => "ref-cycles",
        _ => "unknown",
    }
}

/// Field numbers of an event description: (name, counter, tracepoint,
/// raw_event, modifiers).
struct EventFields {
    name: u32,
    counter: u32,
    tracepoint: u32,
    raw_event: u32,
    modifiers: u32,
}

const TIMEBASE: EventFields = EventFields {
    name: 10,
    counter: 4,
    tracepoint: 3,
    raw_event: 5,
    modifiers: 12,
};
const FOLLOWER: EventFields = EventFields {
    name: 4,
    counter: 1,
    tracepoint: 2,
    raw_event: 3,
    modifiers: 5,
};

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

/// The name of a timebase or follower: its own, its counter's, its
/// tracepoint's or its raw event's, with `:ukh` modifiers.
fn event_name(msg: &[u8], f: &EventFields) -> String {
    let mut name = match last_bytes(msg, f.name).filter(|n| !n.is_empty()) {
        Some(n) => String::from_utf8_lossy(n).into_owned(),
        None => {
            if let Some(c) = last_u64(msg, f.counter) {
                counter_name(c).to_owned()
            } else if let Some(tp) = last_bytes(msg, f.tracepoint) {
                String::from_utf8_lossy(last_bytes(tp, 1).unwrap_or(&[])).into_owned()
            } else if let Some(raw) = last_bytes(msg, f.raw_event) {
                format!(
                    "raw.0x{:x}.0x{:x}.0x{:x}.0x{:x}",
                    last_u64(raw, 1).unwrap_or(0) as u32,
                    last_u64(raw, 2).unwrap_or(0),
                    last_u64(raw, 3).unwrap_or(0),
                    last_u64(raw, 4).unwrap_or(0)
                )
            } else {
                "unknown".to_owned()
            }
        }
    };
    let mut modifiers = String::new();
    let mut d = Decoder::new(msg);
    while let Some(Ok(field)) = d.read_field() {
        if field.id != f.modifiers {
            continue;
        }
        let mut push = |v: u64| match v {
            1 => modifiers.push('u'),
            2 => modifiers.push('k'),
            3 => modifiers.push('h'),
            _ => {}
        };
        if let Ok(v) = field.as_u64() {
            push(v);
        } else if let Ok(packed) = field.as_bytes() {
            let mut rest = packed;
            while let Ok((v, n)) = protozero::varint::decode_varint(rest) {
                push(v);
                rest = rest.get(n..).unwrap_or(&[]);
                if n == 0 || rest.is_empty() {
                    break;
                }
            }
        }
    }
    if !modifiers.is_empty() {
        name.push(':');
        name.push_str(&modifiers);
    }
    name
}

/// The unit of what a timebase counts.
fn timebase_unit(msg: &[u8]) -> Option<&'static str> {
    if let Some(c) = last_u64(msg, TIMEBASE.counter) {
        return Some(match c {
            1 | 3 => "ns",
            10 | 16 | 19 => "cycles",
            11 => "instructions",
            _ => "count",
        });
    }
    last_bytes(msg, TIMEBASE.tracepoint).map(|_| "count")
}

fn counter_track(p: &mut Parser, cpu: u32, session: u32, name: &str, timebase: bool) -> u32 {
    let name_id = p.storage.strings.intern(name);
    let mut spec = TrackSpec::new(Some(name), "perf_cpu_counter", EventType::Counter);
    spec.dimensions = vec![
        ("cpu", ArgValue::Uint(u64::from(cpu))),
        ("perf_session_id", ArgValue::Uint(u64::from(session))),
        ("name", ArgValue::String(name_id)),
    ];
    spec.source_args = vec![("is_timebase", ArgValue::Bool(timebase))];
    p.tracks.interned_counter(&mut p.storage, &spec)
}

/// The session and tracks of a sequence on a CPU.
fn stream(p: &mut Parser, seq: u32, cpu: u32, generation: &Generation) -> (u32, u32, Vec<u32>) {
    let session_id = match p.profiling.perf.get(&seq) {
        Some(s) => s.session_id,
        None => {
            let source = p.storage.strings.intern("linux.perf");
            let id = u32::try_from(p.storage.profiling.sessions.len()).unwrap_or(u32::MAX);
            p.storage.profiling.sessions.push(ProfilerSessionRow {
                source,
                timebase_unit: StrId::NULL,
                cmdline: StrId::NULL,
            });
            p.profiling.perf.insert(
                seq,
                PerfSequence {
                    session_id: id,
                    per_cpu: HashMap::default(),
                },
            );
            id
        }
    };
    if let Some((tb, f)) = p.profiling.perf.get(&seq).and_then(|s| s.per_cpu.get(&cpu)) {
        return (session_id, *tb, f.clone());
    }
    let defaults = generation
        .defaults
        .as_deref()
        .and_then(|d| last_bytes(d, PERF_SAMPLE_DEFAULTS))
        .map(<[u8]>::to_vec);
    let (name, unit) = match &defaults {
        Some(d) => {
            let tb = PerfSampleDefaultsDecoder::new(d)
                .timebase_bytes()
                .unwrap_or(&[]);
            (event_name(tb, &TIMEBASE), timebase_unit(tb))
        }
        None => ("cpu-clock".to_owned(), Some("ns")),
    };
    if let Some(unit) = unit {
        let unit = p.storage.strings.intern(unit);
        if let Some(s) = p.storage.profiling.sessions.get_mut(session_id as usize) {
            if s.timebase_unit.is_null() {
                s.timebase_unit = unit;
            }
        }
    }
    let timebase = counter_track(p, cpu, session_id, &name, true);
    let mut followers = Vec::new();
    if let Some(d) = &defaults {
        let dec = PerfSampleDefaultsDecoder::new(d);
        for f in dec.followers_bytes() {
            let n = event_name(f, &FOLLOWER);
            followers.push(counter_track(p, cpu, session_id, &n, false));
        }
        if let Some(count) = dec.process_shard_count().filter(|c| *c > 0) {
            let idx = i64::from(session_id);
            p.storage
                .stats
                .set_indexed("perf_process_shard_count", idx, i64::from(count));
            let chosen = dec.chosen_process_shard().unwrap_or(0);
            p.storage
                .stats
                .set_indexed("perf_chosen_process_shard", idx, i64::from(chosen));
        }
    }
    if let Some(s) = p.profiling.perf.get_mut(&seq) {
        s.per_cpu.insert(cpu, (timebase, followers.clone()));
    }
    (session_id, timebase, followers)
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

/// A cpu mode's name (`Profiling.CpuMode`).
pub fn cpu_mode_name(mode: i32) -> &'static str {
    match mode {
        1 => "kernel",
        2 => "user",
        3 => "hypervisor",
        4 => "guest_kernel",
        5 => "guest_user",
        _ => "unknown",
    }
}

/// An unwinding error's name (`Profiling.StackUnwindError`).
fn unwind_error_name(e: i32) -> &'static str {
    match e {
        1 => "none",
        2 => "memory_invalid",
        3 => "unwind_info",
        4 => "unsupported",
        5 => "invalid_map",
        6 => "max_frames_exceeded",
        7 => "repeated_frame",
        8 => "invalid_elf",
        9 => "system_call",
        10 => "thread_timeout",
        11 => "thread_does_not_exist",
        12 => "bad_arch",
        13 => "maps_parse",
        14 => "invalid_parameter",
        15 => "ptrace_call",
        _ => "unknown",
    }
}

/// The timebase of a generation's `PerfSampleDefaults`, if it has one.
fn timebase_of(generation: &Generation) -> Option<Timebase> {
    let defaults = last_bytes(generation.defaults.as_deref()?, PERF_SAMPLE_DEFAULTS)?;
    let t = PerfSampleDefaultsDecoder::new(defaults).timebase()?;
    Some(Timebase {
        counter: t.counter_raw(),
        period: t.period(),
        frequency: t.frequency(),
    })
}

/// Parses one `PerfSample` of sequence `seq`, held by trace packet
/// `packet`.
pub fn parse(
    p: &mut Parser,
    bytes: &[u8],
    ts: i64,
    seq: u32,
    packet: u64,
    generation_idx: u32,
    generation: &Generation,
) {
    let s = PerfSampleDecoder::new(bytes);
    let facts = &mut p.storage.profile_facts;
    if facts.gathered {
        match timebase_of(generation) {
            Some(t) => {
                facts.perf_timebases.insert(seq, t);
            }
            None => {
                facts.perf_timebases.remove(&seq);
            }
        }
    }
    if s.decode_error().is_some() {
        facts.losses.perf_malformed += 1;
    }
    if let Some(ev) = s.producer_event() {
        let reason = ev.source_stop_reason_raw().unwrap_or(0);
        *facts.losses.perf_producer_events.entry(reason).or_default() += 1;
    }
    // A packet without a callstack that reports a loss or a skip is no
    // sample for the views (upstream counts it in the stats).
    let mut reports_loss = s.kernel_records_lost().is_some() || s.has_producer_event();
    if s.callstack_iid().is_none() {
        if let Some(r) = s.sample_skipped_reason_raw() {
            *facts.losses.perf_skipped.entry(r).or_default() += 1;
            reports_loss = true;
        }
    }
    let view_sample = s.decode_error().is_none() && (s.callstack_iid().is_some() || !reports_loss);
    let cpu = s.cpu().unwrap_or(0);
    let (session_id, timebase_track, followers) = stream(p, seq, cpu, generation);
    if let Some(lost) = s.kernel_records_lost().filter(|l| *l > 0) {
        p.storage
            .stats
            .add_indexed("perf_cpu_lost_records", i64::from(cpu), lost as i64);
        return;
    }
    if let Some(ev) = s.producer_event() {
        // PROFILER_STOP_GUARDRAIL = 1.
        if ev.source_stop_reason_raw() == Some(1) {
            p.storage
                .stats
                .set_indexed("perf_guardrail_stop_ts", i64::from(session_id), ts);
        }
        return;
    }
    match s.sample_skipped_reason_raw() {
        Some(2) | Some(3) => p.storage.stats.incr("perf_samples_skipped"),
        Some(4) => p.storage.stats.incr("perf_samples_skipped_dataloss"),
        _ => {}
    }
    let mut counters = Vec::new();
    if let Some(c) = s.timebase_count() {
        counters.push(push_counter(p, ts, timebase_track, c as f64));
    }
    for (value, track) in s.follower_counts().zip(followers.iter()) {
        counters.push(push_counter(p, ts, *track, value as f64));
    }
    let counter_set_id = ProfilerSampleTracker::counter_set(&mut p.storage, &counters);
    let pid = i64::from(s.pid().unwrap_or(0));
    let tid = i64::from(s.tid().unwrap_or(0));
    let utid = p.processes.update_thread(&mut p.storage, tid, pid);
    let upid = p.processes.get_or_create_process(&mut p.storage, pid);
    let resolved = s.callstack_iid().map(|iid| {
        p.profiling.stacks.resolve_callstack(
            &mut p.storage,
            generation_idx,
            generation,
            Some(upid),
            iid,
        )
    });
    let callsite_id = resolved.and_then(Result::ok);
    let mode = s.cpu_mode_raw().unwrap_or(0);
    let cpu_mode = if mode == 0 {
        StrId::NULL
    } else {
        p.storage.strings.intern(cpu_mode_name(mode))
    };
    let unwind_error = match s.unwind_error_raw() {
        Some(e) => p.storage.strings.intern(unwind_error_name(e)),
        None => StrId::NULL,
    };
    let source = p.storage.strings.intern("linux.perf");
    let task_context_id = p.profiling.samples.task_context(
        &mut p.storage,
        TaskContextRow {
            upid: Some(upid),
            utid: Some(utid),
            async_context_id: None,
        },
    );
    let ucpu = s.cpu().map(|c| ucpu(&mut p.storage, c));
    let execution_context_id = (ucpu.is_some() || !cpu_mode.is_null()).then(|| {
        p.profiling
            .samples
            .execution_context(&mut p.storage, ExecutionContextRow { ucpu, cpu_mode })
    });
    let row = ProfilerSampleTracker::add_sample(
        &mut p.storage,
        ProfilerSampleRow {
            ts,
            source,
            task_context_id: Some(task_context_id),
            execution_context_id,
            callsite_id,
            unwind_error,
            session_id: Some(session_id),
            counter_set_id,
        },
    );
    if view_sample && p.storage.profile_facts.gathered {
        p.storage.profile_facts.perf_samples.push(PerfSampleFacts {
            row,
            sequence: seq,
            packet,
            cpu: s.cpu(),
            callstack_iid: s.callstack_iid(),
            unresolved: resolved.and_then(Result::err),
            timebase_count: s.timebase_count(),
        });
    }
}
