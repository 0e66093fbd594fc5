//! A systrace text line into the tables through the same importers the
//! protobuf ftrace events go to: the line's task names its thread (and its
//! tgid its process), then its event's `key=value` args are written as the
//! event's protobuf payload and handed to the ftrace handler of that
//! payload (`sched_switch` with its `prev_state` letters as the kernel's
//! bits, `sched_waking`, `print`/`tracing_mark_write`, `cpu_frequency`,
//! `cpu_frequency_limits`, `cpu_idle`, `rss_stat`); the binder events go
//! to the binder tracker; `sched_blocked_reason` (whose caller is a name,
//! not an address) and the workqueue slices are imported here. A line whose args do not read counts `systrace_parse_failure`.

use crate::parser::Parser;
use crate::parser::binder::{BinderTracker, Transaction};
use crate::parser::ftrace;
use crate::tracker::process::NamePriority;

use super::line::SystraceLine;

/// `FtraceEvent` payload field numbers.
const PRINT: u32 = 3;
const SCHED_SWITCH: u32 = 4;
const CPU_FREQUENCY: u32 = 11;
const CPU_FREQUENCY_LIMITS: u32 = 12;
const CPU_IDLE: u32 = 13;
const SCHED_WAKING: u32 = 20;
const RSS_STAT: u32 = 313;

fn varint(mut v: u64, out: &mut Vec<u8>) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

fn int(out: &mut Vec<u8>, id: u32, v: i64) {
    varint(u64::from(id) << 3, out);
    varint(v as u64, out);
}

fn text(out: &mut Vec<u8>, id: u32, s: &str) {
    varint((u64::from(id) << 3) | 2, out);
    varint(s.len() as u64, out);
    out.extend_from_slice(s.as_bytes());
}

/// The `key=value` args of a line (a bare word is `name`), the first of a
/// key kept, as upstream's map keeps it.
fn args(s: &str) -> Vec<(&str, &str)> {
    let mut out: Vec<(&str, &str)> = Vec::new();
    // The keys seen, so that a line of many args costs their number, not
    // its square (a line may be up to a MiB long); filled once it is long.
    let mut seen: crate::hash::HashSet<&str> = crate::hash::HashSet::default();
    for tok in s.split(' ').filter(|t| !t.is_empty()) {
        let (k, v) = if tok.contains('=') {
            let mut parts = tok.split('=').filter(|p| !p.is_empty());
            let k = parts.next().unwrap_or("");
            let v = parts.next_back().unwrap_or("");
            (k, v)
        } else {
            ("name", tok)
        };
        // Few args: a scan; past 16, a set of the keys.
        let new = if out.len() < 16 {
            !out.iter().any(|(e, _)| *e == k)
        } else {
            if seen.is_empty() {
                seen.extend(out.iter().map(|(e, _)| *e));
            }
            seen.insert(k)
        };
        if new {
            out.push((k, v));
        }
    }
    out
}

/// A `sched_switch` `prev_state` in letters (`R`, `R+`, `S`, `D|K`, ...)
/// as the kernel's bits (the layout assumed when no kernel version is
/// known), as upstream converts systrace's letters.
pub fn state_bits(s: &str) -> Option<i64> {
    let mut bits = 0i64;
    let mut chars = s.chars().peekable();
    if s.is_empty() {
        return None;
    }
    while let Some(c) = chars.next() {
        bits |= match c {
            'R' => {
                if chars.peek() == Some(&'+') {
                    chars.next();
                    0x800
                } else {
                    0
                }
            }
            'S' => 0x1,
            'D' => 0x2,
            'T' => 0x4,
            't' => 0x8,
            'X' => 0x10,
            'Z' => 0x20,
            'x' => 0x40,
            'K' => 0x80,
            'W' => 0x100,
            'P' => 0x200,
            'N' => 0x400,
            'I' => 0x402,
            '|' => 0,
            _ => return None,
        };
    }
    Some(bits)
}

/// Imports one line (in time order).
pub fn import(p: &mut Parser, line: &SystraceLine) {
    let tid = i64::from(line.pid);
    let utid = p.processes.get_or_create_thread(&mut p.storage, tid);
    if line.task != "<...>" {
        let name = p.storage.strings.intern(&line.task);
        p.processes
            .set_thread_name(&mut p.storage, utid, name, NamePriority::Ftrace);
    }
    if !line.tgid.is_empty() && !line.tgid.starts_with('-') {
        if let Ok(tgid) = line.tgid.parse::<u32>() {
            p.processes
                .update_thread(&mut p.storage, tid, i64::from(tgid));
        }
    }
    if event(p, line, utid).is_none() {
        p.storage.stats.incr("systrace_parse_failure");
    }
}

/// The event's own import; None when its args do not read.
fn event(p: &mut Parser, line: &SystraceLine, utid: u32) -> Option<()> {
    let a = args(&line.args);
    let get = |k: &str| a.iter().find(|(e, _)| *e == k).map(|(_, v)| *v);
    let num = |k: &str| get(k).and_then(|v| v.parse::<i64>().ok());
    let real = |k: &str| get(k).and_then(|v| v.parse::<f64>().ok());
    let tid = i64::from(line.pid);
    let mut body = Vec::new();
    let field = match line.event.as_str() {
        "sched_switch" => {
            let state = state_bits(get("prev_state").unwrap_or(""));
            text(&mut body, 1, get("prev_comm").unwrap_or(""));
            int(&mut body, 2, num("prev_pid")?);
            int(&mut body, 3, num("prev_prio")?);
            int(&mut body, 4, state.unwrap_or(0));
            text(&mut body, 5, get("next_comm").unwrap_or(""));
            int(&mut body, 6, num("next_pid")?);
            int(&mut body, 7, num("next_prio")?);
            SCHED_SWITCH
        }
        "tracing_mark_write" | "0" | "print" => {
            text(&mut body, 2, &line.args);
            PRINT
        }
        "sched_waking" => {
            let pid = num("pid")?;
            text(&mut body, 1, get("comm").unwrap_or(""));
            int(&mut body, 2, pid);
            if let Some(prio) = num("prio") {
                int(&mut body, 3, prio);
            }
            if let Some(cpu) = num("target_cpu") {
                int(&mut body, 5, cpu);
            }
            SCHED_WAKING
        }
        "cpu_frequency" | "cpu_idle" => {
            let cpu = num("cpu_id")?;
            int(&mut body, 1, real("state")? as i64);
            int(&mut body, 2, cpu);
            if line.event == "cpu_idle" {
                CPU_IDLE
            } else {
                CPU_FREQUENCY
            }
        }
        "cpu_frequency_limits" => {
            let cpu = num("cpu_id")?;
            let max = real("max").or_else(|| real("max_freq"));
            let min = real("min").or_else(|| real("min_freq"));
            if max.is_none() && min.is_none() {
                return None;
            }
            int(&mut body, 1, min.unwrap_or(0.0) as i64);
            int(&mut body, 2, max.unwrap_or(0.0) as i64);
            int(&mut body, 3, cpu);
            CPU_FREQUENCY_LIMITS
        }
        "sched_blocked_reason" => {
            let pid = num("pid")?;
            let io_wait = num("iowait")? != 0;
            let wakee = p.processes.get_or_create_thread(&mut p.storage, pid);
            let caller = p.storage.strings.intern(get("caller").unwrap_or(""));
            p.sched
                .blocked_reason(&mut p.storage, wakee, Some(io_wait), Some(caller));
            return Some(());
        }
        "workqueue_execute_start" => {
            let function = line.args.split("function ").nth(1)?;
            let track = p.tracks.thread_track(&mut p.storage, utid);
            let row = crate::storage::rows::SliceRow {
                ts: line.ts,
                dur: -1,
                track_id: track,
                category: p.storage.strings.intern("workqueue"),
                name: p.storage.strings.intern(function),
                ..Default::default()
            };
            p.slices.begin(&mut p.storage, row);
            return Some(());
        }
        "workqueue_execute_end" => {
            let track = p.tracks.thread_track(&mut p.storage, utid);
            p.slices.end(&mut p.storage, track, line.ts, None);
            return Some(());
        }
        "rss_stat" => {
            // Upstream's text reader never reads `curr` (and so not the
            // mm's owner either): the counter goes to the emitting thread.
            let size = num("size")?;
            let member = num("member")?;
            int(&mut body, 1, member);
            int(&mut body, 2, size);
            RSS_STAT
        }
        "binder_transaction"
        | "binder_transaction_received"
        | "binder_command"
        | "binder_return"
        | "binder_lock"
        | "binder_locked"
        | "binder_unlock"
        | "binder_transaction_alloc_buf" => return binder(p, line, &get),
        // Events upstream's text reader does not import either.
        _ => return Some(()),
    };
    ftrace::parse_text(p, line.cpu, tid, field, &body, line.ts);
    Some(())
}

/// A number as C's `strtol` with base 0 reads it: `0x` hex, `0` octal,
/// else decimal.
fn number_base0(s: &str) -> Option<u32> {
    if let Some(h) = s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
        u32::from_str_radix(h, 16).ok()
    } else if s.len() > 1 && s.starts_with('0') {
        u32::from_str_radix(s.get(1..)?, 8).ok()
    } else {
        s.parse().ok()
    }
}

/// The binder events, through the binder tracker.
fn binder<'a>(
    p: &mut Parser,
    line: &SystraceLine,
    get: &dyn Fn(&str) -> Option<&'a str>,
) -> Option<()> {
    let tid = i64::from(line.pid);
    let ts = line.ts;
    match line.event.as_str() {
        "binder_transaction" => {
            let is_reply = get("reply")?.parse::<i32>().ok()? == 1;
            let flags = get("flags").unwrap_or("");
            let flags = flags
                .strip_prefix("0x")
                .or_else(|| flags.strip_prefix("0X"))
                .unwrap_or(flags);
            // As `strtol` reads it: the leading hex digits, 0 without any.
            let digits = flags
                .find(|c: char| !c.is_ascii_hexdigit())
                .unwrap_or(flags.len());
            let flags = u32::from_str_radix(flags.get(..digits)?, 16).unwrap_or(0);
            let code = format!("{} Java Layer Dependent", get("code").unwrap_or(""));
            let t = Transaction {
                tid,
                dest_tgid: get("dest_proc")?.parse().ok()?,
                dest_tid: get("dest_thread")?.parse().ok()?,
                id: get("transaction")?.parse().ok()?,
                dest_node: get("dest_node")?.parse().ok()?,
                is_reply,
                flags,
                code: p.storage.strings.intern(&code),
            };
            BinderTracker::transaction(p, ts, &t);
        }
        "binder_transaction_received" => {
            let id = get("transaction")?.parse().ok()?;
            BinderTracker::transaction_received(p, ts, tid, id);
        }
        "binder_command" => BinderTracker::command(p, tid, number_base0(get("cmd")?)?),
        "binder_return" => BinderTracker::ret(p, ts, tid, number_base0(get("cmd")?)?),
        "binder_lock" => BinderTracker::lock(p, ts, tid),
        "binder_locked" => BinderTracker::locked(p, ts, tid),
        "binder_unlock" => BinderTracker::unlock(p, ts, tid),
        _ => {
            let data = get("data_size")?.parse().ok()?;
            let offsets = get("offsets_size")?.parse().ok()?;
            BinderTracker::alloc_buf(p, ts, tid, data, offsets);
        }
    }
    Some(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn state_letters_become_the_old_layouts_bits() {
        assert_eq!(state_bits("R"), Some(0));
        assert_eq!(state_bits("R+"), Some(0x800));
        assert_eq!(state_bits("S"), Some(1));
        assert_eq!(state_bits("D|K"), Some(0x82));
        assert_eq!(state_bits("?"), None);
    }

    #[test]
    fn args_keep_the_first_of_a_key_and_name_bare_words() {
        assert_eq!(
            args("prev_comm=a b=c=d prev_comm=z word"),
            vec![("prev_comm", "a"), ("b", "d"), ("name", "word")]
        );
    }

    #[test]
    fn a_line_of_many_args_keeps_the_first_of_each_key_past_the_scan() {
        let line: Vec<String> = (0..40)
            .map(|i| format!("k{}={i}", i % 20))
            .chain(["k3=late".to_owned(), "k25=x".to_owned()])
            .collect();
        let text = line.join(" ");
        let a = args(&text);
        assert_eq!(a.len(), 21);
        assert!(a.contains(&("k3", "3")) && !a.contains(&("k3", "late")));
        assert_eq!(a.last(), Some(&("k25", "x")));
    }
}
