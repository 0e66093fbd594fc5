//! Systrace (atrace) text written through `trace_marker`, read as upstream
//! reads it: `B|tgid|name` opens a slice on the thread's track, `E|tgid`
//! closes it, `C|tgid|name|value` is a value on the process's counter
//! track, `I|tgid|name` an instant on the thread; `S`/`F|tgid|name|cookie`
//! are async slices of the process (a second `S` of an open cookie is
//! dropped, as Android's wakelocks need) and `N`, `G`, `H` put instants and
//! async slices on a named track of the process. Async tracks are shared
//! through the track compressor. Anything else counts
//! `systrace_parse_failure` (clock sync markers are skipped). The kernel's
//! own tracing_mark_write events enter through [`apply`].

use super::Parser;
use crate::storage::args::{ArgSetBuilder, ArgValue};
use crate::storage::rows::{CounterRow, SliceRow};
use crate::tables::opt_u32::OptU32;
use crate::tracker::tracks::{EventType, TrackSpec};

/// One parsed systrace line.
#[derive(Debug, Default, PartialEq)]
struct Point<'a> {
    phase: char,
    tgid: i64,
    name: &'a str,
    track: &'a str,
    value: i64,
}

/// Reads a line as upstream's systrace tokenizer does; Err(true) for a
/// line to skip silently, Err(false) for a malformed one.
fn tokenize(buf: &str) -> Result<Point<'_>, bool> {
    let line = buf.trim_end_matches(['\n', '\0']);
    let mut fields = line.split('|');
    let phase = fields.next().and_then(|f| f.chars().next()).ok_or(false)?;
    let tgid_field = fields.next().unwrap_or("");
    let tgid: Option<u32> = tgid_field.parse().ok();
    let mut p = Point {
        phase,
        tgid: i64::from(tgid.unwrap_or(0)),
        ..Point::default()
    };
    let mut next = || fields.next().unwrap_or("");
    let int = |s: &str| s.parse::<i64>().ok();
    match phase {
        'B' => {
            tgid.ok_or(false)?;
            // The name is the rest of the line, separators included.
            let rest = line.splitn(3, '|').nth(2).unwrap_or("");
            p.name = if rest.is_empty() {
                "[empty slice name]"
            } else {
                rest
            };
        }
        'E' => {}
        'S' | 'F' => {
            p.name = next();
            let cookie = next();
            p.value = int(cookie).ok_or(false)?;
            if tgid.is_none() || p.name.is_empty() {
                return Err(false);
            }
        }
        'I' => {
            p.name = next();
            if tgid.is_none() || p.name.is_empty() {
                return Err(false);
            }
        }
        'N' => {
            p.track = next();
            p.name = next();
            if tgid.is_none() || p.track.is_empty() || p.name.is_empty() {
                return Err(false);
            }
        }
        'C' => {
            p.name = next();
            p.value = int(next()).ok_or(false)?;
            if tgid.is_none() || p.name.is_empty() {
                return Err(false);
            }
        }
        'G' => {
            p.track = next();
            p.name = next();
            p.value = int(next()).ok_or(false)?;
            if tgid.is_none() || p.track.is_empty() || p.name.is_empty() {
                return Err(false);
            }
        }
        'H' => {
            p.track = next();
            let f3 = next();
            let f4 = next();
            p.value = int(if f4.is_empty() { f3 } else { f4 }).ok_or(false)?;
            if tgid.is_none() || p.track.is_empty() {
                return Err(false);
            }
        }
        _ => return Err(line.starts_with("trace_event_clock_sync:")),
    }
    Ok(p)
}

/// Parses one `print` buffer written by thread `tid` at `ts`.
pub fn parse(p: &mut Parser, ts: i64, tid: i64, buf: &str) {
    let point = match tokenize(buf) {
        Ok(point) => point,
        Err(true) => return,
        Err(false) => {
            p.storage.stats.incr("systrace_parse_failure");
            return;
        }
    };
    let tgid = (point.tgid != 0).then_some(point.tgid);
    match point.phase {
        'B' => apply(p, ts, tid, 'B', tgid, Some(point.name), None),
        'E' => apply(p, ts, tid, 'E', tgid, None, None),
        'C' => apply(
            p,
            ts,
            tid,
            'C',
            tgid,
            Some(point.name),
            Some(point.value as f64),
        ),
        'I' => {
            let utid = match tgid {
                Some(tgid) => p.processes.update_thread(&mut p.storage, tid, tgid),
                None => p.processes.get_or_create_thread(&mut p.storage, tid),
            };
            let track = p.tracks.thread_track(&mut p.storage, utid);
            let name = p.storage.strings.intern(point.name);
            p.slices.instant(
                &mut p.storage,
                SliceRow {
                    ts,
                    track_id: track,
                    name,
                    ..SliceRow::default()
                },
            );
        }
        'S' | 'F' => async_slice(p, ts, &point),
        _ => track_slice(p, ts, tid, &point),
    }
}

/// The compressor's track of an async slice kind in a process.
fn async_track(
    p: &mut Parser,
    classification: &'static str,
    upid: u32,
    track_name: &str,
    cookie: i64,
    begin: bool,
) -> Option<u32> {
    let key = format!("{classification}|{upid}|{track_name}");
    if !begin {
        return p.async_tracks.end(&key, cookie);
    }
    let Parser {
        async_tracks,
        tracks,
        storage,
        ..
    } = p;
    Some(async_tracks.begin(&key, cookie, |idx| {
        let name_id = storage.strings.intern(track_name);
        let mut spec = TrackSpec::new(Some(track_name), classification, EventType::Slice);
        spec.upid = Some(upid);
        spec.dimensions = vec![
            ("name", ArgValue::String(name_id)),
            ("track_compressor_idx", ArgValue::Int(i64::from(idx))),
        ];
        tracks.create(storage, &spec)
    }))
}

/// `S` and `F`: async slices of a process, one open per cookie.
fn async_slice(p: &mut Parser, ts: i64, point: &Point<'_>) {
    let upid = p
        .processes
        .get_or_create_process(&mut p.storage, point.tgid);
    let classification = "atrace_async_slice";
    let cookie = point.value;
    if point.phase == 'F' {
        let key = format!("{classification}|{upid}|{}", point.name);
        let Some(track) = p.async_tracks.open_track(&key, cookie) else {
            p.storage.stats.incr("misplaced_end_event");
            return;
        };
        if p.slices.end(&mut p.storage, track, ts, None).is_some() {
            let _ = async_track(p, classification, upid, point.name, cookie, false);
        }
        return;
    }
    let key = format!("{classification}|{upid}|{}", point.name);
    if p.async_tracks.open_track(&key, cookie).is_some() {
        // A begin back to back with an open one: only the first counts.
        return;
    }
    let Some(track) = async_track(p, classification, upid, point.name, cookie, true) else {
        return;
    };
    let name = p.storage.strings.intern(point.name);
    let mut args = ArgSetBuilder::default();
    let k = p.storage.strings.intern("cookie");
    args.add(k, k, ArgValue::Int(cookie));
    let arg_set_id = p.storage.args.add_set(&args);
    p.slices.begin(
        &mut p.storage,
        SliceRow {
            ts,
            dur: -1,
            track_id: track,
            name,
            arg_set_id: arg_set_id.into(),
            ..SliceRow::default()
        },
    );
}

/// `N`, `G`, `H`: instants and async slices on a named track of a process,
/// with the emitting thread as an arg.
fn track_slice(p: &mut Parser, ts: i64, tid: i64, point: &Point<'_>) {
    let upid = p
        .processes
        .get_or_create_process(&mut p.storage, point.tgid);
    let utid = p.processes.get_or_create_thread(&mut p.storage, tid);
    let classification = "atrace_async_slice_for_track";
    let name = p.storage.strings.intern(point.name);
    let utid_arg = |p: &mut Parser, key: &str| {
        let mut args = ArgSetBuilder::default();
        let k = p.storage.strings.intern(key);
        args.add(k, k, ArgValue::Uint(u64::from(utid)));
        p.storage.args.add_set(&args)
    };
    match point.phase {
        // The device's state has a global track of its own.
        'N' if point.track == "DeviceStateChanged" => {
            let track = super::android_system_property::device_state_track(p);
            p.slices.instant(
                &mut p.storage,
                SliceRow {
                    ts,
                    track_id: track,
                    name,
                    ..SliceRow::default()
                },
            );
        }
        'N' => {
            let Some(track) = async_track(p, classification, upid, point.track, 0, true) else {
                return;
            };
            let _ = async_track(p, classification, upid, point.track, 0, false);
            let arg_set_id = utid_arg(p, "utid");
            p.slices.instant(
                &mut p.storage,
                SliceRow {
                    ts,
                    track_id: track,
                    name,
                    arg_set_id: arg_set_id.into(),
                    ..SliceRow::default()
                },
            );
        }
        'G' => {
            let Some(track) = async_track(p, classification, upid, point.track, point.value, true)
            else {
                return;
            };
            let arg_set_id = utid_arg(p, "utid");
            p.slices.begin(
                &mut p.storage,
                SliceRow {
                    ts,
                    dur: -1,
                    track_id: track,
                    name,
                    arg_set_id: arg_set_id.into(),
                    ..SliceRow::default()
                },
            );
        }
        _ => {
            let key = format!("{classification}|{upid}|{}", point.track);
            let Some(track) = p.async_tracks.open_track(&key, point.value) else {
                p.storage.stats.incr("misplaced_end_event");
                return;
            };
            let _ = async_track(p, classification, upid, point.track, point.value, false);
            if let Some(id) = p.slices.end(&mut p.storage, track, ts, None) {
                let end_args = utid_arg(p, "end_utid");
                merge_end_args(p, id, end_args);
            }
        }
    }
}

/// Adds an end's args to a slice's own.
fn merge_end_args(p: &mut Parser, slice: u32, end: Option<u32>) {
    let Some(end) = end else {
        return;
    };
    let mut b = ArgSetBuilder::default();
    if let Some(set) = p
        .storage
        .slices
        .get(slice as usize)
        .and_then(|s| s.arg_set_id.get())
    {
        let own: Vec<_> = p.storage.args.set(set).copied().collect();
        for a in own {
            b.add(a.flat_key, a.key, a.value);
        }
    }
    let extra: Vec<_> = p.storage.args.set(end).copied().collect();
    for a in extra {
        b.add(a.flat_key, a.key, a.value);
    }
    let id = p.storage.args.add_set(&b);
    if let Some(s) = p.storage.slices.get_mut(slice as usize) {
        s.arg_set_id = id.into();
    }
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
            let track = p.tracks.thread_track(&mut p.storage, utid);
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
            let track = p.tracks.thread_track(&mut p.storage, utid);
            let _ = p.slices.end(&mut p.storage, track, ts, None);
        }
        'C' => {
            let (Some(name), Some(value), Some(tgid)) = (name, value, tgid) else {
                p.storage.stats.incr("systrace_parse_failure");
                return;
            };
            // The screen state and battery stats have global tracks.
            if name == "ScreenState" {
                let track = super::android_system_property::screen_state_track(p);
                p.storage.counters.push(CounterRow {
                    ts,
                    track_id: track,
                    value,
                    arg_set_id: OptU32::NONE,
                });
                return;
            }
            if name.starts_with("battery_stats.") {
                let track = super::android_system_property::battery_stats_track(p, name);
                p.storage.counters.push(CounterRow {
                    ts,
                    track_id: track,
                    value,
                    arg_set_id: OptU32::NONE,
                });
                return;
            }
            let upid = p.processes.get_or_create_process(&mut p.storage, tgid);
            let track =
                p.tracks
                    .process_counter(&mut p.storage, name, "atrace_counter", Some(upid));
            p.storage.counters.push(CounterRow {
                ts,
                track_id: track,
                value,
                arg_set_id: OptU32::NONE,
            });
        }
        _ => p.storage.stats.incr("systrace_parse_failure"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_tokenize_as_upstream_reads_them() {
        let b = tokenize("B|12|a|b\n").expect("B");
        assert_eq!((b.phase, b.tgid, b.name), ('B', 12, "a|b"));
        assert_eq!(tokenize("B|12|").expect("B").name, "[empty slice name]");
        let s = tokenize("S|1204|multistart|10\n").expect("S");
        assert_eq!((s.name, s.value), ("multistart", 10));
        let h = tokenize("H|1|track|7").expect("H");
        assert_eq!((h.track, h.value), ("track", 7));
        let g = tokenize("G|1|track|name|-3").expect("G");
        assert_eq!((g.track, g.name, g.value), ("track", "name", -3));
        assert_eq!(tokenize("C|1|c|1.5"), Err(false));
        assert_eq!(tokenize("S|x|name|1"), Err(false));
        assert_eq!(tokenize("hello"), Err(false));
        assert_eq!(tokenize("trace_event_clock_sync: parent_ts=1"), Err(true));
        assert_eq!(tokenize(""), Err(false));
    }
}
