//! Systrace (atrace) text written through `trace_marker`: `B|tgid|name`
//! opens a slice on the thread's atrace track, `E|tgid` closes it,
//! `C|tgid|name|value` is a value on the process's counter track named
//! `name`. Lines that are not systrace are ignored; malformed ones are
//! counted in `systrace_parse_failure`.

use super::Parser;
use crate::storage::rows::{CounterRow, SliceRow};

/// Parses one `print` buffer written by thread `tid` at `ts`.
pub fn parse(p: &mut Parser, ts: i64, tid: i64, buf: &str) {
    let line = buf.trim_end_matches(['\n', '\0']);
    let mut parts = line.splitn(4, '|');
    let Some(phase) = parts.next() else {
        return;
    };
    let phase = match phase {
        "B" | "E" | "C" => phase,
        _ => return,
    };
    let tgid: Option<i64> = parts.next().and_then(|s| s.trim().parse().ok());
    let utid = match tgid {
        Some(tgid) if tgid != 0 => p.processes.update_thread(&mut p.storage, tid, tgid),
        _ => p.processes.get_or_create_thread(&mut p.storage, tid),
    };
    match phase {
        "B" => {
            let Some(name) = parts.next() else {
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
        "E" => {
            let track = p.tracks.atrace_thread_track(&mut p.storage, utid);
            if p.slices.end(&mut p.storage, track, ts, None).is_none() {
                p.storage.stats.incr("misplaced_end_event");
            }
        }
        _ => {
            let (Some(name), Some(value), Some(tgid)) = (
                parts.next(),
                parts.next().and_then(|v| v.trim().parse::<f64>().ok()),
                tgid,
            ) else {
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
    }
}
