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

use zerotrace_protos::protos::FtraceEventBundleDecoder;
use zerotrace_protos::protos::FtraceEventDecoder;
use zerotrace_protos::protos::ftrace_event_bundle::CompactSchedDecoder;

use crate::storage::stats::Stats;

/// CPUs upstream accepts in a bundle (more is a corrupt trace).
pub const MAX_CPUS: u32 = 1024;

/// A scheduler event decoded from `compact_sched`.
#[derive(Debug, Clone, PartialEq)]
pub enum InlineSched {
    /// A sched_switch without its `prev_*` fields (the CPU's previous
    /// switch names the task leaving).
    Switch {
        /// The leaving task's state bits.
        prev_state: i64,
        /// The task switched in.
        next_pid: i64,
        /// Its priority.
        next_prio: i32,
        /// Its comm.
        next_comm: String,
    },
    /// A sched_waking (the task running on the CPU is the waker).
    Waking {
        /// The woken task.
        pid: i64,
        /// The CPU it will run on.
        target_cpu: u32,
        /// Its priority.
        prio: i32,
        /// Its comm.
        comm: String,
        /// The kernel's common_flags, when recorded.
        common_flags: Option<u32>,
    },
}

/// What one event of a bundle carries.
#[derive(Debug, Clone, PartialEq)]
pub enum FtraceItem {
    /// An `FtraceEvent`'s bytes.
    Event(Vec<u8>),
    /// An event from `compact_sched`.
    Inline(InlineSched),
}

/// One event of a bundle, with its raw (ftrace clock) timestamp.
#[derive(Debug, Clone, PartialEq)]
pub struct BundleEvent {
    /// Timestamp on the bundle's clock (BOOTTIME).
    pub raw_ts: i64,
    /// The CPU.
    pub cpu: u32,
    /// The event.
    pub item: FtraceItem,
}

/// Splits a bundle into its events (compact ones first, as upstream reads
/// them), counting what is malformed.
pub fn split(bundle: &[u8], stats: &mut Stats) -> Vec<BundleEvent> {
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
        let raw = FtraceEventDecoder::new(ev)
            .timestamp()
            .and_then(|t| i64::try_from(t).ok());
        let Some(raw_ts) = raw else {
            stats.incr("ftrace_bundle_tokenizer_errors");
            continue;
        };
        out.push(BundleEvent {
            raw_ts,
            cpu,
            item: FtraceItem::Event(ev.to_vec()),
        });
    }
    out
}

fn compact(c: &CompactSchedDecoder<'_>, cpu: u32, stats: &mut Stats, out: &mut Vec<BundleEvent>) {
    let table: Vec<&str> = c.intern_table().collect();
    let mut error = false;

    let mut ts_it = c.switch_timestamp();
    let mut state_it = c.switch_prev_state();
    let mut pid_it = c.switch_next_pid();
    let mut prio_it = c.switch_next_prio();
    let mut comm_it = c.switch_next_comm_index();
    let mut ts: i64 = 0;
    loop {
        let (Some(dt), Some(state), Some(pid), Some(prio), Some(comm)) = (
            ts_it.next(),
            state_it.next(),
            pid_it.next(),
            prio_it.next(),
            comm_it.next(),
        ) else {
            break;
        };
        ts = ts.wrapping_add(dt as i64);
        let Some(name) = table.get(comm as usize) else {
            error = true;
            break;
        };
        out.push(BundleEvent {
            raw_ts: ts,
            cpu,
            item: FtraceItem::Inline(InlineSched::Switch {
                prev_state: state,
                next_pid: i64::from(pid),
                next_prio: prio,
                next_comm: (*name).to_string(),
            }),
        });
    }
    // Every array must end together, and decode cleanly.
    let uneven = ts_it.next().is_some()
        || state_it.next().is_some()
        || pid_it.next().is_some()
        || prio_it.next().is_some()
        || comm_it.next().is_some();
    let bad = ts_it.error().is_some()
        || state_it.error().is_some()
        || pid_it.error().is_some()
        || prio_it.error().is_some()
        || comm_it.error().is_some();
    if error || uneven || bad {
        stats.incr("compact_sched_has_parse_errors");
    }

    let mut error = false;
    let mut ts_it = c.waking_timestamp();
    let mut pid_it = c.waking_pid();
    let mut cpu_it = c.waking_target_cpu();
    let mut prio_it = c.waking_prio();
    let mut comm_it = c.waking_comm_index();
    let mut flags_it = c.waking_common_flags();
    let mut ts: i64 = 0;
    loop {
        let (Some(dt), Some(pid), Some(target), Some(prio), Some(comm)) = (
            ts_it.next(),
            pid_it.next(),
            cpu_it.next(),
            prio_it.next(),
            comm_it.next(),
        ) else {
            break;
        };
        ts = ts.wrapping_add(dt as i64);
        let Some(name) = table.get(comm as usize) else {
            error = true;
            break;
        };
        out.push(BundleEvent {
            raw_ts: ts,
            cpu,
            item: FtraceItem::Inline(InlineSched::Waking {
                pid: i64::from(pid),
                target_cpu: u32::from(target as u16),
                prio: i32::from(prio as u16),
                comm: (*name).to_string(),
                common_flags: flags_it.next().map(|f| u32::from(f as u16)),
            }),
        });
    }
    let uneven = ts_it.next().is_some()
        || pid_it.next().is_some()
        || cpu_it.next().is_some()
        || prio_it.next().is_some()
        || comm_it.next().is_some();
    let bad = ts_it.error().is_some()
        || pid_it.error().is_some()
        || cpu_it.error().is_some()
        || prio_it.error().is_some()
        || comm_it.error().is_some();
    if error || uneven || bad {
        stats.incr("compact_sched_has_parse_errors");
    }
}
