//! The drivers' own tracing_mark_write events (display: `sde_`, `dpu_`,
//! Samsung's, `panel_write_generic`; GPU: `mali_`; camera: `lwis_`): each is an atrace point
//! written by the kernel, a phase letter (`B`, `E`, `C` or `I`; or, where
//! the event has no letter, a begin flag) with a name, the process it
//! claims (`pid` in the payload) and a counter's value. Begins and ends
//! are slices on the emitting thread's track, instants zero-length slices
//! there, counters values on the claimed process's counter track named
//! after the point, as atrace's own points are (`systrace.rs`).
//!
//! As upstream reads them: an event without its letter (or flag) counts
//! `systrace_parse_failure`, as does an unknown letter; the `dpu_` events
//! are trusted about their process only for counters (some drivers claim
//! another process for their slices), their begins and ends going on the
//! emitting thread alone.

use super::Parser;
use super::fields::Fields;
use super::importer::{FtraceHandler, FtraceInput};
use crate::storage::rows::SliceRow;

/// `FtraceEvent.sde_tracing_mark_write`: {pid 1, trace_name 2,
/// trace_type 3, value 4, trace_begin 5}.
const SDE: u32 = 333;
/// `FtraceEvent.dpu_tracing_mark_write`: {pid 1, name 4, type 5, value 6}.
const DPU: u32 = 348;
/// `FtraceEvent.mali_tracing_mark_write`: {name 1, pid 2, type 3, value 4}.
const MALI: u32 = 350;
/// `FtraceEvent.lwis_tracing_mark_write`: {type 2, pid 3, func_name 4,
/// value 5}.
const LWIS: u32 = 467;
/// `FtraceEvent.samsung_tracing_mark_write`: {pid 1, trace_name 2,
/// trace_type 4, value 5}.
const SAMSUNG: u32 = 484;
/// `FtraceEvent.panel_write_generic`: {pid 1, name 4, type 5, value 6}.
const PANEL_WRITE_GENERIC: u32 = 490;

/// The events this module handles (gathered by `ftrace_registry.rs`).
pub const FTRACE_HANDLERS: &[(u32, FtraceHandler)] = &[
    (SDE, sde),
    (DPU, dpu),
    (MALI, mali),
    (LWIS, lwis),
    (SAMSUNG, samsung),
    (PANEL_WRITE_GENERIC, panel_write_generic),
];

/// One kernel atrace point: `kind` the phase letter (0: none, then
/// `begin` decides between `B` and `E`).
struct Mark<'a> {
    kind: u64,
    begin: bool,
    name: &'a str,
    tgid: i64,
    value: i64,
}

fn sde(p: &mut Parser, e: &FtraceInput<'_>) {
    let f = Fields::new(e.body);
    if f.uint(3).is_none() && f.uint(5).is_none() {
        p.storage.stats.incr("systrace_parse_failure");
        return;
    }
    let name = f.str(2).unwrap_or_default();
    let mark = Mark {
        kind: f.uint(3).unwrap_or(0) & 0xff,
        begin: f.uint(5).unwrap_or(0) != 0,
        name: &name,
        tgid: i64::from(f.int32(1).unwrap_or(0) as u32),
        value: i64::from(f.int32(4).unwrap_or(0)),
    };
    apply(p, e, &mark);
}

fn samsung(p: &mut Parser, e: &FtraceInput<'_>) {
    let f = Fields::new(e.body);
    let Some(kind) = f.uint(4) else {
        p.storage.stats.incr("systrace_parse_failure");
        return;
    };
    let name = f.str(2).unwrap_or_default();
    let mark = Mark {
        kind: kind & 0xff,
        begin: false,
        name: &name,
        tgid: i64::from(f.int32(1).unwrap_or(0) as u32),
        value: i64::from(f.int32(5).unwrap_or(0)),
    };
    apply(p, e, &mark);
}

fn dpu(p: &mut Parser, e: &FtraceInput<'_>) {
    let f = Fields::new(e.body);
    let kind = f.uint(5).unwrap_or(0) & 0xff;
    if kind == 0 {
        p.storage.stats.incr("systrace_parse_failure");
        return;
    }
    let name = f.str(4).unwrap_or_default();
    // Only a counter keeps the process the payload claims.
    let tgid = if kind == u64::from(b'C') {
        i64::from(f.int32(1).unwrap_or(0) as u32)
    } else {
        0
    };
    let mark = Mark {
        kind,
        begin: false,
        name: &name,
        tgid,
        value: i64::from(f.int32(6).unwrap_or(0)),
    };
    apply(p, e, &mark);
}

/// Where a lettered point's fields are: the phase letter, the name, the
/// claimed pid and the value (`wide`: an int64 value, else an int32).
struct Layout {
    kind: u32,
    name: u32,
    pid: u32,
    value: u32,
    wide: bool,
}

/// A point whose phase letter is required (none counts a parse failure).
fn lettered(p: &mut Parser, e: &FtraceInput<'_>, l: &Layout) {
    let f = Fields::new(e.body);
    let kind = f.uint(l.kind).unwrap_or(0) & 0xff;
    if kind == 0 {
        p.storage.stats.incr("systrace_parse_failure");
        return;
    }
    let name = f.str(l.name).unwrap_or_default();
    let value = if l.wide {
        f.int(l.value).unwrap_or(0)
    } else {
        i64::from(f.int32(l.value).unwrap_or(0))
    };
    let mark = Mark {
        kind,
        begin: false,
        name: &name,
        tgid: i64::from(f.int32(l.pid).unwrap_or(0) as u32),
        value,
    };
    apply(p, e, &mark);
}

fn panel_write_generic(p: &mut Parser, e: &FtraceInput<'_>) {
    let layout = Layout {
        kind: 5,
        name: 4,
        pid: 1,
        value: 6,
        wide: false,
    };
    lettered(p, e, &layout);
}

fn mali(p: &mut Parser, e: &FtraceInput<'_>) {
    let layout = Layout {
        kind: 3,
        name: 1,
        pid: 2,
        value: 4,
        wide: false,
    };
    lettered(p, e, &layout);
}

fn lwis(p: &mut Parser, e: &FtraceInput<'_>) {
    let layout = Layout {
        kind: 2,
        name: 4,
        pid: 3,
        value: 5,
        wide: true,
    };
    lettered(p, e, &layout);
}

/// Applies one point by the thread that emitted the event.
fn apply(p: &mut Parser, e: &FtraceInput<'_>, m: &Mark<'_>) {
    let phase = match m.kind {
        0 if m.begin => 'B',
        0 => 'E',
        k => match char::from(k as u8) {
            c @ ('B' | 'E' | 'C' | 'I') => c,
            _ => {
                p.storage.stats.incr("systrace_parse_failure");
                return;
            }
        },
    };
    let tgid = (m.tgid != 0).then_some(m.tgid);
    match phase {
        'I' => {
            let utid = match tgid {
                Some(tgid) => p.processes.update_thread(&mut p.storage, e.tid, tgid),
                None => p.processes.get_or_create_thread(&mut p.storage, e.tid),
            };
            let track = p.tracks.thread_track(&mut p.storage, utid);
            let name = p.storage.strings.intern(m.name);
            p.slices.instant(
                &mut p.storage,
                SliceRow {
                    ts: e.ts,
                    track_id: track,
                    name,
                    ..SliceRow::default()
                },
            );
        }
        'C' => super::systrace::apply(
            p,
            e.ts,
            e.tid,
            'C',
            Some(m.tgid),
            Some(m.name),
            Some(m.value as f64),
        ),
        _ => super::systrace::apply(p, e.ts, e.tid, phase, tgid, Some(m.name), None),
    }
}
