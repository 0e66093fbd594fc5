//! The `linux.irqs` module over interrupts the ftrace importer made slices
//! of: hard IRQs (a handler that preempted another names it as its
//! parent), soft IRQs (no parent, even when one ran inside another on its
//! CPU), both together with `is_soft_irq`, and none of the trace's other
//! slices; the views stay empty, not missing, on a trace without
//! interrupts.

use crate::common::{i, packet, rows, s, trace};
use protozero::Message;
use zerotrace_trace_processor::{TraceProcessor, Value};

/// `TracePacket.ftrace_events`.
const FTRACE_EVENTS: u32 = 1;
/// `FtraceEvent.softirq_entry` / `_exit`: {vec 1}.
const SOFTIRQ_ENTRY: u32 = 24;
const SOFTIRQ_EXIT: u32 = 25;
/// `FtraceEvent.irq_handler_entry`: {irq 1, name 2}; `_exit`: {irq 1, ret 2}.
const IRQ_ENTRY: u32 = 36;
const IRQ_EXIT: u32 = 37;
/// `FtraceEvent.local_timer_entry` / `_exit`.
const LOCAL_TIMER_ENTRY: u32 = 559;
const LOCAL_TIMER_EXIT: u32 = 560;
/// `FtraceEvent.zero` (the kernel's systrace events): {flag 1, name 2, pid 3}.
const ZERO: u32 = 331;

/// One ftrace event of pid `pid` at `ts`: payload `field` written by `f`.
fn event(b: &mut Message<'_>, ts: u64, pid: u32, field: u32, f: impl FnOnce(&mut Message<'_>)) {
    let mut e = b.begin_nested(2);
    e.append_uint64(1, ts);
    e.append_uint32(2, pid);
    let mut m = e.begin_nested(field);
    f(&mut m);
}

/// A bundle of CPU `cpu` holding what `f` writes.
fn bundle(cpu: u32, f: impl FnOnce(&mut Message<'_>)) -> Vec<u8> {
    packet(|p| {
        p.set_trusted_packet_sequence_id(1);
        let mut b = p.message().begin_nested(FTRACE_EVENTS);
        b.append_uint32(1, cpu);
        f(&mut b);
    })
}

fn irq_entry(b: &mut Message<'_>, ts: u64, irq: i32, name: &str) {
    event(b, ts, 0, IRQ_ENTRY, |m| {
        m.append_int32(1, irq);
        m.append_string(2, name);
    });
}

fn irq_exit(b: &mut Message<'_>, ts: u64, irq: i32) {
    event(b, ts, 0, IRQ_EXIT, |m| {
        m.append_int32(1, irq);
        m.append_int32(2, 1);
    });
}

fn softirq(b: &mut Message<'_>, ts: u64, field: u32, vec: u32) {
    event(b, ts, 0, field, |m| m.append_uint32(1, vec));
}

/// CPU 0: IRQ 11 (`arch_timer`, 100..160) preempted by IRQ 9 (`vgic`,
/// 120..130), the local timer (200..220), softirq TIMER (300..350) with
/// NET_RX (310..320) inside it; CPU 1: softirq RCU (400..450); and a
/// kernel systrace slice of thread 30 (500..550) that is no interrupt.
fn irq_trace() -> TraceProcessor {
    let t = trace(&[
        bundle(0, |b| {
            irq_entry(b, 100, 11, "arch_timer");
            irq_entry(b, 120, 9, "vgic");
            irq_exit(b, 130, 9);
            irq_exit(b, 160, 11);
            event(b, 200, 0, LOCAL_TIMER_ENTRY, |_| {});
            event(b, 220, 0, LOCAL_TIMER_EXIT, |_| {});
            softirq(b, 300, SOFTIRQ_ENTRY, 1);
            softirq(b, 310, SOFTIRQ_ENTRY, 3);
            softirq(b, 320, SOFTIRQ_EXIT, 3);
            softirq(b, 350, SOFTIRQ_EXIT, 1);
        }),
        bundle(1, |b| {
            softirq(b, 400, SOFTIRQ_ENTRY, 9);
            softirq(b, 450, SOFTIRQ_EXIT, 9);
            event(b, 500, 30, ZERO, |m| {
                m.append_int32(1, 1);
                m.append_string(2, "bottom half");
                m.append_int32(3, 0);
            });
            event(b, 550, 30, ZERO, |m| {
                m.append_int32(1, 2);
                m.append_string(2, "");
            });
        }),
    ]);
    TraceProcessor::from_bytes(&t).expect("load")
}

#[test]
fn hard_irqs_name_the_irq_they_preempted() {
    let tp = irq_trace();
    assert_eq!(
        rows(
            &tp,
            "INCLUDE PERFETTO MODULE linux.irqs; \
             SELECT h.ts, h.dur, h.name, p.name FROM linux_hard_irqs h \
             LEFT JOIN slice p ON p.id = h.parent_id ORDER BY h.ts"
        ),
        vec![
            vec![i(100), i(60), s("IRQ (arch_timer)"), Value::Null],
            vec![i(120), i(10), s("IRQ (vgic)"), s("IRQ (arch_timer)")],
            vec![i(200), i(20), s("IRQ (LocalTimer)"), Value::Null],
        ]
    );
}

#[test]
fn soft_irqs_are_the_softirq_tracks_slices() {
    let tp = irq_trace();
    assert_eq!(
        rows(
            &tp,
            "INCLUDE PERFETTO MODULE linux.irqs; \
             SELECT ts, dur, name FROM linux_soft_irqs ORDER BY ts"
        ),
        vec![
            vec![i(300), i(50), s("TIMER")],
            vec![i(310), i(10), s("NET_RX")],
            vec![i(400), i(50), s("RCU")],
        ]
    );
}

#[test]
fn all_irqs_flag_the_soft_ones_and_drop_their_parents() {
    let tp = irq_trace();
    assert_eq!(
        rows(
            &tp,
            "INCLUDE PERFETTO MODULE linux.irqs; \
             SELECT i.ts, i.name, i.is_soft_irq, p.name FROM linux_irqs i \
             LEFT JOIN slice p ON p.id = i.parent_id ORDER BY i.ts"
        ),
        vec![
            vec![i(100), s("IRQ (arch_timer)"), i(0), Value::Null],
            vec![i(120), s("IRQ (vgic)"), i(0), s("IRQ (arch_timer)")],
            vec![i(200), s("IRQ (LocalTimer)"), i(0), Value::Null],
            vec![i(300), s("TIMER"), i(1), Value::Null],
            vec![i(310), s("NET_RX"), i(1), Value::Null],
            vec![i(400), s("RCU"), i(1), Value::Null],
        ]
    );
    // NET_RX did run inside TIMER: the slice table keeps that nesting,
    // which the module leaves out for soft IRQs.
    assert_eq!(
        rows(
            &tp,
            "SELECT p.name FROM slice c JOIN slice p ON p.id = c.parent_id \
             WHERE c.name = 'NET_RX'"
        ),
        vec![vec![s("TIMER")]]
    );
    // Every row is its slice: same id, start, duration and name.
    assert_eq!(
        rows(
            &tp,
            "SELECT count(*) FROM linux_irqs i JOIN slice sl ON sl.id = i.id \
             WHERE sl.ts = i.ts AND sl.dur = i.dur AND sl.name = i.name"
        ),
        vec![vec![i(6)]]
    );
    assert_eq!(
        rows(&tp, "SELECT count(*) FROM slice"),
        vec![vec![i(7)]],
        "the systrace slice is in the trace but no interrupt"
    );
}

#[test]
fn the_views_are_empty_on_a_trace_without_interrupts() {
    let t = trace(&[bundle(0, |b| {
        event(b, 500, 30, ZERO, |m| {
            m.append_int32(1, 1);
            m.append_string(2, "bottom half");
            m.append_int32(3, 0);
        });
    })]);
    let tp = TraceProcessor::from_bytes(&t).expect("load");
    assert_eq!(
        rows(
            &tp,
            "INCLUDE PERFETTO MODULE linux.irqs; \
             SELECT (SELECT count(*) FROM linux_hard_irqs), \
             (SELECT count(*) FROM linux_soft_irqs), (SELECT count(*) FROM linux_irqs), \
             (SELECT count(*) FROM linux_interrupt_mapping)"
        ),
        vec![vec![i(0), i(0), i(0), i(0)]]
    );
}
