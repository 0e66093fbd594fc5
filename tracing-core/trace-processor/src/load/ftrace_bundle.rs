//! An `FtraceEventBundle` split into its events, each to be sorted on its
//! own time: the `event`s (their bytes) and the `compact_sched` arrays
//! (sched_switch and sched_waking stored column-wise, timestamps as deltas,
//! comms as indexes into the bundle's intern table) turned back into one
//! [`InlineSched`] per event. Malformed input is counted as upstream names
//! it, never trusted: a bundle without a CPU or with an impossible one
//! (`ftrace_bundle_tokenizer_errors`), an event without a timestamp (the
//! same), compact arrays of unequal length or a comm index past the table
//! (`compact_sched_has_parse_errors`); `lost_events` marks the CPU in
//! `ftrace_cpu_has_data_loss`.
//!
//! A bundle recorded on another ftrace clock than BOOTTIME says which
//! (`ftrace_clock`) and, for the kernel's `global` and `local` clocks, a
//! (clock, BOOTTIME) pair read together: those clocks become a
//! sequence-scoped clock snapshotted against BOOTTIME, `mono_raw` is
//! MONOTONIC_RAW, as upstream reads them; an unknown clock loses the
//! bundle (`ftrace_bundle_tokenizer_errors`; upstream refuses the trace).

use crate::packet_view::InlineSched;
use protozero::Decoder;
use zerotrace_protos::protos::FtraceEventBundleDecoder;
use zerotrace_protos::protos::ftrace_event_bundle::CompactSchedDecoder;
use zerotrace_protos::protos::{FtraceEvent, FtraceEventDecoder};

use crate::storage::stats::Stats;

/// CPUs upstream accepts in a bundle (more is a corrupt trace).
pub const MAX_CPUS: u32 = 1024;

/// What one event of a bundle carries.
#[derive(Debug, Clone, PartialEq)]
pub enum FtraceItem<'a> {
    /// An `FtraceEvent`'s bytes.
    Event(&'a [u8]),
    /// An event from `compact_sched`.
    Inline(InlineSched),
}

/// `FtraceClock` values.
const FTRACE_CLOCK_UNSPECIFIED: i32 = 0;
const FTRACE_CLOCK_GLOBAL: i32 = 2;
const FTRACE_CLOCK_LOCAL: i32 = 3;
const FTRACE_CLOCK_MONO_RAW: i32 = 4;
/// MONOTONIC_RAW's builtin id.
const MONOTONIC_RAW: u64 = 5;
/// The sequence-scoped clock id upstream gives a bundle's own clock.
pub const SEQUENCE_SCOPED_CLOCK: u64 = 64;

/// The clock a bundle's timestamps are on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BundleClock {
    /// A builtin clock id, or [`SEQUENCE_SCOPED_CLOCK`] (to key with the
    /// packet's sequence).
    pub clock_id: u64,
    /// (the clock's value, BOOTTIME's value) read together, if given.
    pub snapshot: Option<(i64, i64)>,
}

/// The bundle's clock; None for a clock upstream does not know.
pub fn clock(bundle: &[u8]) -> Option<BundleClock> {
    let b = FtraceEventBundleDecoder::new(bundle);
    let clock_id = match b.ftrace_clock_raw() {
        None | Some(FTRACE_CLOCK_UNSPECIFIED) => crate::clock::BOOTTIME,
        Some(FTRACE_CLOCK_MONO_RAW) => MONOTONIC_RAW,
        Some(FTRACE_CLOCK_GLOBAL | FTRACE_CLOCK_LOCAL) => SEQUENCE_SCOPED_CLOCK,
        Some(_) => return None,
    };
    let snapshot = match (b.ftrace_timestamp(), b.boot_timestamp()) {
        (Some(f), Some(boot)) if clock_id != crate::clock::BOOTTIME => Some((f, boot)),
        _ => None,
    };
    Some(BundleClock { clock_id, snapshot })
}

/// The bundle's CPU and the time from which that CPU's data is valid
/// (`previous_bundle_end_timestamp`, or the older
/// `last_read_event_timestamp`), on the bundle's clock, when it says.
pub fn data_start(bundle: &[u8]) -> Option<(u32, i64)> {
    let b = FtraceEventBundleDecoder::new(bundle);
    let cpu = b.cpu().filter(|c| *c < MAX_CPUS)?;
    let raw = b
        .previous_bundle_end_timestamp()
        .or_else(|| b.last_read_event_timestamp())?;
    Some((cpu, i64::try_from(raw).ok()?))
}

/// One event of a bundle, with its raw (ftrace clock) timestamp.
#[derive(Debug, Clone, PartialEq)]
pub struct BundleEvent<'a> {
    /// Timestamp on the bundle's clock (BOOTTIME).
    pub raw_ts: i64,
    /// The CPU.
    pub cpu: u32,
    /// The event.
    pub item: FtraceItem<'a>,
}

/// Splits a bundle into its events (compact ones first, as upstream reads
/// them), counting what is malformed.
pub fn split<'a>(bundle: &'a [u8], stats: &mut Stats) -> Vec<BundleEvent<'a>> {
    let b = FtraceEventBundleDecoder::new(bundle);
    let mut out = Vec::new();
    let Some(cpu) = b.cpu() else {
        stats.incr("ftrace_bundle_tokenizer_errors");
        return out;
    };
    if cpu >= MAX_CPUS {
        stats.incr("ftrace_bundle_tokenizer_errors");
        return out;
    }
    if b.lost_events().unwrap_or(false) {
        stats.set_indexed("ftrace_cpu_has_data_loss", i64::from(cpu), 1);
    }
    if let Some(c) = b.compact_sched() {
        compact(&c, cpu, stats, &mut out);
    }
    for ev in b.event_bytes() {
        let raw = timestamp(ev).and_then(|t| i64::try_from(t).ok());
        let Some(raw_ts) = raw else {
            stats.incr("ftrace_bundle_tokenizer_errors");
            continue;
        };
        out.push(BundleEvent {
            raw_ts,
            cpu,
            item: FtraceItem::Event(ev),
        });
    }
    out
}

/// An event's timestamp: its first field, as writers put it (upstream's
/// tokenizer reads it so too), without walking the event, whose one walk
/// is the parser's (`parser/ftrace.rs`); an event that does not start with
/// it is decoded whole (a walk more, counted as one).
fn timestamp(ev: &[u8]) -> Option<u64> {
    let mut d = Decoder::new(ev);
    if let Some(Ok(f)) = d.read_field() {
        if f.id == FtraceEvent::FIELD_TIMESTAMP {
            if let Ok(t) = f.as_u64() {
                return Some(t);
            }
        }
    }
    crate::parser::ftrace::count_walk();
    FtraceEventDecoder::new(ev).timestamp()
}

/// A packed column's values, and whether it decoded cleanly.
fn column<I: Iterator>(it: I, ok: impl FnOnce(&I) -> bool) -> (Vec<I::Item>, bool) {
    let mut it = it;
    let v: Vec<I::Item> = it.by_ref().collect();
    let clean = ok(&it);
    (v, clean)
}

fn compact(
    c: &CompactSchedDecoder<'_>,
    cpu: u32,
    stats: &mut Stats,
    out: &mut Vec<BundleEvent<'_>>,
) {
    let table: Vec<&str> = c.intern_table().collect();

    let (ts, a) = column(c.switch_timestamp(), |i| i.error().is_none());
    let (state, b) = column(c.switch_prev_state(), |i| i.error().is_none());
    let (pid, d) = column(c.switch_next_pid(), |i| i.error().is_none());
    let (prio, e) = column(c.switch_next_prio(), |i| i.error().is_none());
    let (comm, f) = column(c.switch_next_comm_index(), |i| i.error().is_none());
    let n = ts.len();
    // Every column must decode cleanly and be as long as the others.
    let mut error =
        !(a && b && d && e && f) || [state.len(), pid.len(), prio.len(), comm.len()] != [n; 4];
    let mut t: i64 = 0;
    for (k, dt) in ts.iter().enumerate() {
        let (Some(st), Some(p), Some(pr), Some(ci)) =
            (state.get(k), pid.get(k), prio.get(k), comm.get(k))
        else {
            break;
        };
        t = t.wrapping_add(*dt as i64);
        let Some(name) = table.get(*ci as usize) else {
            error = true;
            break;
        };
        out.push(BundleEvent {
            raw_ts: t,
            cpu,
            item: FtraceItem::Inline(InlineSched::Switch {
                prev_state: *st,
                next_pid: i64::from(*p),
                next_prio: *pr,
                next_comm: (*name).to_string(),
            }),
        });
    }
    if error {
        stats.incr("compact_sched_has_parse_errors");
    }

    let (ts, a) = column(c.waking_timestamp(), |i| i.error().is_none());
    let (pid, b) = column(c.waking_pid(), |i| i.error().is_none());
    let (target, d) = column(c.waking_target_cpu(), |i| i.error().is_none());
    let (prio, e) = column(c.waking_prio(), |i| i.error().is_none());
    let (comm, f) = column(c.waking_comm_index(), |i| i.error().is_none());
    // common_flags is optional (older traces lack it).
    let (flags, g) = column(c.waking_common_flags(), |i| i.error().is_none());
    let n = ts.len();
    let mut error = !(a && b && d && e && f && g)
        || [pid.len(), target.len(), prio.len(), comm.len()] != [n; 4];
    let mut t: i64 = 0;
    for (k, dt) in ts.iter().enumerate() {
        let (Some(p), Some(tc), Some(pr), Some(ci)) =
            (pid.get(k), target.get(k), prio.get(k), comm.get(k))
        else {
            break;
        };
        t = t.wrapping_add(*dt as i64);
        let Some(name) = table.get(*ci as usize) else {
            error = true;
            break;
        };
        out.push(BundleEvent {
            raw_ts: t,
            cpu,
            item: FtraceItem::Inline(InlineSched::Waking {
                pid: i64::from(*p),
                target_cpu: u32::from(*tc as u16),
                prio: i32::from(*pr as u16),
                comm: (*name).to_string(),
                common_flags: flags.get(k).map(|f| u32::from(*f as u16)),
            }),
        });
    }
    if error {
        stats.incr("compact_sched_has_parse_errors");
    }
}
