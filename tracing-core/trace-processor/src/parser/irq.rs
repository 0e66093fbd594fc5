//! Interrupts as slices on per-CPU tracks, as upstream's ftrace importer
//! shows them: a hard IRQ handler (`irq_handler_entry`/`_exit`) is an
//! `IRQ (<name>)` slice, and the local timer interrupt an
//! `IRQ (LocalTimer)` slice, on the CPU's `cpu_irq` track (`Irq Cpu N`);
//! a softirq (`softirq_entry`/`_exit`) is a slice named for its action
//! (`TIMER`, `NET_RX`, ...) on the CPU's `cpu_softirq` track
//! (`SoftIrq Cpu N`). All are in category `irq`. The exit adds the
//! handler's result (`ret`: `handled` or `unhandled`) or the softirq's
//! vector (`vec`) to the slice's args. An exit with nothing open is
//! ignored, and a softirq vector without an action name is dropped, as
//! upstream does.

use super::Parser;
use super::fields::Fields;
use super::importer::{FtraceHandler, FtraceInput};
use crate::storage::args::{ArgSetBuilder, ArgValue};
use crate::storage::rows::SliceRow;
use crate::tracker::tracks::{EventType, TrackSpec};

/// `FtraceEvent.softirq_entry`: {vec 1}.
const SOFTIRQ_ENTRY: u32 = 24;
/// `FtraceEvent.softirq_exit`: {vec 1}.
const SOFTIRQ_EXIT: u32 = 25;
/// `FtraceEvent.irq_handler_entry`: {irq 1, name 2, handler 3}.
const IRQ_HANDLER_ENTRY: u32 = 36;
/// `FtraceEvent.irq_handler_exit`: {irq 1, ret 2}.
const IRQ_HANDLER_EXIT: u32 = 37;
/// `FtraceEvent.local_timer_entry`.
const LOCAL_TIMER_ENTRY: u32 = 559;
/// `FtraceEvent.local_timer_exit`.
const LOCAL_TIMER_EXIT: u32 = 560;

/// The events this module handles (gathered by `ftrace_registry.rs`).
pub const FTRACE_HANDLERS: &[(u32, FtraceHandler)] = &[
    (SOFTIRQ_ENTRY, softirq_entry),
    (SOFTIRQ_EXIT, softirq_exit),
    (IRQ_HANDLER_ENTRY, irq_entry),
    (IRQ_HANDLER_EXIT, irq_exit),
    (LOCAL_TIMER_ENTRY, local_timer_entry),
    (LOCAL_TIMER_EXIT, local_timer_exit),
];

/// The kernel's softirq actions, by vector (`include/linux/interrupt.h`).
const SOFTIRQ_ACTIONS: [&str; 10] = [
    "HI",
    "TIMER",
    "NET_TX",
    "NET_RX",
    "BLOCK",
    "BLOCK_IOPOLL",
    "TASKLET",
    "SCHED",
    "HRTIMER",
    "RCU",
];

/// Which per-CPU track an interrupt goes on.
#[derive(Clone, Copy)]
enum Kind {
    Hard,
    Soft,
}

/// The CPU's track of this kind, made on first use.
fn track(p: &mut Parser, cpu: u32, kind: Kind) -> u32 {
    let (name, classification) = match kind {
        Kind::Hard => (format!("Irq Cpu {cpu}"), "cpu_irq"),
        Kind::Soft => (format!("SoftIrq Cpu {cpu}"), "cpu_softirq"),
    };
    let mut spec = TrackSpec::new(Some(&name), classification, EventType::Slice);
    spec.dimensions = vec![("cpu", ArgValue::Int(i64::from(cpu)))];
    p.tracks.interned_counter(&mut p.storage, &spec)
}

fn begin(p: &mut Parser, e: &FtraceInput<'_>, kind: Kind, name: &str) {
    let track_id = track(p, e.cpu, kind);
    let name = p.storage.strings.intern(name);
    let category = p.storage.strings.intern("irq");
    p.slices.begin(
        &mut p.storage,
        SliceRow {
            ts: e.ts,
            dur: -1,
            track_id,
            category,
            name,
            ..SliceRow::default()
        },
    );
}

/// Ends the innermost open slice on the CPU's track, adding `arg` to it.
fn end(p: &mut Parser, e: &FtraceInput<'_>, kind: Kind, arg: Option<(&str, ArgValue)>) {
    let track_id = track(p, e.cpu, kind);
    let Some(id) = p.slices.end(&mut p.storage, track_id, e.ts, None) else {
        return;
    };
    let Some((key, value)) = arg else {
        return;
    };
    let mut args = ArgSetBuilder::default();
    if let Some(set) = p
        .storage
        .slices
        .get(id as usize)
        .and_then(|s| s.arg_set_id.get())
    {
        let old: Vec<_> = p.storage.args.set(set).copied().collect();
        for a in old {
            args.add(a.flat_key, a.key, a.value);
        }
    }
    let k = p.storage.strings.intern(key);
    args.add(k, k, value);
    let set = p.storage.args.add_set(&args);
    if let Some(s) = p.storage.slices.get_mut(id as usize) {
        s.arg_set_id = set.into();
    }
}

fn irq_entry(p: &mut Parser, e: &FtraceInput<'_>) {
    let name = Fields::new(e.body).str(2).unwrap_or_default();
    begin(p, e, Kind::Hard, &format!("IRQ ({name})"));
}

fn irq_exit(p: &mut Parser, e: &FtraceInput<'_>) {
    let ret = Fields::new(e.body).int32(2).unwrap_or(0);
    let ret = if ret == 1 { "handled" } else { "unhandled" };
    let ret = ArgValue::String(p.storage.strings.intern(ret));
    end(p, e, Kind::Hard, Some(("ret", ret)));
}

fn local_timer_entry(p: &mut Parser, e: &FtraceInput<'_>) {
    begin(p, e, Kind::Hard, "IRQ (LocalTimer)");
}

fn local_timer_exit(p: &mut Parser, e: &FtraceInput<'_>) {
    end(p, e, Kind::Hard, None);
}

fn softirq_entry(p: &mut Parser, e: &FtraceInput<'_>) {
    let vec = Fields::new(e.body).uint(1).unwrap_or(0) & 0xffff_ffff;
    let Some(action) = usize::try_from(vec)
        .ok()
        .and_then(|v| SOFTIRQ_ACTIONS.get(v))
    else {
        return;
    };
    begin(p, e, Kind::Soft, action);
}

fn softirq_exit(p: &mut Parser, e: &FtraceInput<'_>) {
    let vec = Fields::new(e.body).uint(1).unwrap_or(0) & 0xffff_ffff;
    end(p, e, Kind::Soft, Some(("vec", ArgValue::Int(vec as i64))));
}
