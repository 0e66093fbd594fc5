//! Systrace (atrace) text written through `trace_marker`: `B|tgid|name`
//! opens a slice on the thread's atrace track, `E|tgid` closes it,
//! `C|tgid|name|value` is a value on the process's counter track named
//! `name`. Lines that are not systrace are ignored; malformed ones are
//! counted in `systrace_parse_failure`. The kernel's own
//! tracing_mark_write events enter through [`apply`].

use super::Parser;
use crate::storage::rows::{CounterRow, SliceRow};

/// Parses one `print` buffer written by thread `tid` at `ts`.
pub fn parse(p: &mut Parser, ts: i64, tid: i64, buf: &str) {
    let line = buf.trim_end_matches(['\n', '\0']);
    let mut parts = line.splitn(4, '|');
    let phase = match parts.next() {
        Some("B") => 'B',
        Some("E") => 'E',
        Some("C") => 'C',
        _ => return,
    };
    let tgid: Option<i64> = parts.next().and_then(|s| s.trim().parse().ok());
    let name = parts.next();
    let value = parts.next().and_then(|v| v.trim().parse::<f64>().ok());
    apply(p, ts, tid, phase, tgid, name, value);
}

/// Applies one systrace event: `B` (name), `E`, or `C` (name, value) by
/// thread `tid` of process `tgid`; also the entry of the kernel's own
/// tracing_mark_write events.
pub fn apply(
    p: &mut Parser,
    ts: i64,
    tid: i64,
    phase: char,
    tgid: Option<i64>,
    name: Option<&str>,
    value: Option<f64>,
) {
    let utid = match tgid {
        Some(tgid) if tgid != 0 => p.processes.update_thread(&mut p.storage, tid, tgid),
        _ => p.processes.get_or_create_thread(&mut p.storage, tid),
    };
    match phase {
        'B' => {
            let Some(name) = name else {
                p.storage.stats.incr("systrace_parse_failure");
                return;
            };
            let track = p.tracks.atrace_thread_track(&mut p.storage, utid);
            let name = p.storage.strings.intern(name);
            p.slices.begin(
                &mut p.storage,
                SliceRow {
                    ts,
                    dur: -1,
                    track_id: track,
                    name,
                    ..SliceRow::default()
                },
            );
        }
        'E' => {
            let track = p.tracks.atrace_thread_track(&mut p.storage, utid);
            if p.slices.end(&mut p.storage, track, ts, None).is_none() {
                p.storage.stats.incr("misplaced_end_event");
            }
        }
        'C' => {
            let (Some(name), Some(value), Some(tgid)) = (name, value, tgid) else {
                p.storage.stats.incr("systrace_parse_failure");
                return;
            };
            let upid = p.processes.get_or_create_process(&mut p.storage, tgid);
            let track =
                p.tracks
                    .process_counter(&mut p.storage, name, "atrace_counter", Some(upid));
            p.storage.counters.push(CounterRow {
                ts,
                track_id: track,
                value,
                arg_set_id: None,
            });
        }
        _ => p.storage.stats.incr("systrace_parse_failure"),
    }
}
