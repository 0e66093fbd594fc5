//! Kernel power and hypervisor ftrace events: `suspend_resume` actions as
//! slices on the `Suspend/Resume Latency` tracks (with the workaround for
//! a `suspend_enter` that a failed `suspend_prepare()` never ends),
//! `suspend_resume_minimal` as `Suspended` slices that `android.suspend`
//! turns into the device's suspended and awake intervals, clock rates and
//! states as counters per clock (which `android.dvfs` reads for the DVFS
//! domains), and pKVM's hypervisor entries as `hyp` slices per CPU with
//! their reason, which `pkvm.hypervisor` lists.

use protozero::Message;
use zerotrace_protos::protos::FtraceEventBundle;
use zerotrace_trace_processor::{TraceProcessor, Value};

use crate::common;
use common::{i, packet, rows, s, trace};

/// `TracePacket.ftrace_events`.
const FTRACE_EVENTS: u32 = 1;
/// `FtraceEvent.suspend_resume`.
const SUSPEND_RESUME: u32 = 113;
/// `FtraceEvent.suspend_resume_minimal`.
const SUSPEND_RESUME_MINIMAL: u32 = 481;
/// `FtraceEvent.hyp_enter`, `hyp_exit`, `host_hcall`.
const HYP_ENTER: u32 = 476;
const HYP_EXIT: u32 = 477;
const HOST_HCALL: u32 = 478;
/// `FtraceEvent.clock_enable` and `clock_set_rate`.
const CLOCK_ENABLE: u32 = 14;
const CLOCK_SET_RATE: u32 = 16;

/// An event: its time, its payload's field and the payload's writer.
type Event<'a> = (u64, u32, &'a dyn Fn(&mut Message<'_>));

/// One bundle of CPU `cpu` holding `events` (pid 10).
fn bundle(cpu: u32, events: &[Event<'_>]) -> Vec<u8> {
    packet(|p| {
        p.set_trusted_packet_sequence_id(1);
        let mut b = FtraceEventBundle::from_message(p.message().begin_nested(FTRACE_EVENTS));
        b.set_cpu(cpu);
        for (ts, field, write) in events {
            let mut e = b.add_event();
            e.set_timestamp(*ts);
            e.set_pid(10);
            let mut body = e.message().begin_nested(*field);
            write(&mut body);
        }
    })
}

/// A `suspend_resume` action's payload writer.
fn action(name: &'static str, val: i32, start: bool) -> impl Fn(&mut Message<'_>) {
    move |m| {
        m.append_string(1, name);
        m.append_int32(2, val);
        m.append_uint32(3, u32::from(start));
    }
}

/// A `suspend_resume_minimal` payload writer.
fn minimal(start: bool) -> impl Fn(&mut Message<'_>) {
    move |m| m.append_uint32(1, u32::from(start))
}

#[test]
fn suspend_actions_are_slices_and_a_stuck_suspend_enter_is_ended() {
    let a = [
        action("suspend_enter", 3, true),
        action("freeze_processes", 0, true),
        action("thaw_processes", 0, true),
        action("thaw_processes", 0, false),
        action("freeze_processes", 0, false),
        action("timekeeping_freeze", 5, true),
        action("timekeeping_freeze", 5, false),
    ];
    let (on, off) = (minimal(true), minimal(false));
    let tp = TraceProcessor::from_bytes(&trace(&[bundle(
        2,
        &[
            (100, SUSPEND_RESUME, &a[0]),
            (110, SUSPEND_RESUME, &a[1]),
            (120, SUSPEND_RESUME, &a[2]),
            // Ends thaw_processes and, as freeze_processes runs inside
            // suspend_enter, suspend_enter too.
            (130, SUSPEND_RESUME, &a[3]),
            (140, SUSPEND_RESUME, &a[4]),
            // Its val is a CPU: read as 0.
            (150, SUSPEND_RESUME, &a[5]),
            (160, SUSPEND_RESUME, &a[6]),
            (200, SUSPEND_RESUME_MINIMAL, &on),
            (300, SUSPEND_RESUME_MINIMAL, &off),
        ],
    )]))
    .expect("trace");
    assert_eq!(
        rows(
            &tp,
            "SELECT s.ts, s.dur, s.name, extract_arg(s.arg_set_id, 'event_type'),
                    extract_arg(s.arg_set_id, 'cpu')
             FROM slice s JOIN track t ON t.id = s.track_id
             WHERE t.name = 'Suspend/Resume Latency' ORDER BY s.ts",
        ),
        vec![
            vec![
                i(100),
                i(30),
                s("suspend_enter(3)"),
                s("Main Kernel Suspend Event"),
                i(2)
            ],
            vec![
                i(110),
                i(30),
                s("freeze_processes(0)"),
                s("Main Kernel Suspend Event"),
                i(2)
            ],
            vec![
                i(120),
                i(10),
                s("thaw_processes(0)"),
                s("Main Kernel Suspend Event"),
                i(2)
            ],
            vec![
                i(150),
                i(10),
                s("timekeeping_freeze(0)"),
                s("Main Kernel Suspend Event"),
                i(2)
            ],
        ]
    );
    assert_eq!(
        rows(
            &tp,
            "SELECT s.ts, s.dur, s.name FROM slice s JOIN track t ON t.id = s.track_id
             WHERE t.name = 'Suspend/Resume Minimal'",
        ),
        vec![vec![i(200), i(100), s("Suspended")]]
    );
    assert_eq!(
        rows(
            &tp,
            "INCLUDE PERFETTO MODULE android.suspend;
             SELECT ts, dur FROM android_suspend_state WHERE power_state = 'suspended'",
        ),
        vec![vec![i(200), i(100)]]
    );
}

#[test]
fn hypervisor_entries_are_slices_per_cpu_with_their_reason() {
    let none = |_: &mut Message<'_>| {};
    let hcall = |m: &mut Message<'_>| {
        m.append_uint32(1, 7);
        m.append_uint32(2, 0);
    };
    let tp = TraceProcessor::from_bytes(&trace(&[
        bundle(
            1,
            &[
                (100, HYP_ENTER, &none),
                (105, HOST_HCALL, &hcall),
                (120, HYP_EXIT, &none),
            ],
        ),
        bundle(3, &[(200, HYP_ENTER, &none), (230, HYP_EXIT, &none)]),
    ]))
    .expect("trace");
    assert_eq!(
        rows(
            &tp,
            "INCLUDE PERFETTO MODULE pkvm.hypervisor;
             SELECT e.cpu, e.ts, e.dur, e.reason, extract_arg(s.arg_set_id, 'id')
             FROM pkvm_hypervisor_events AS e JOIN slice AS s ON s.id = e.slice_id
             ORDER BY e.ts",
        ),
        vec![
            vec![i(1), i(100), i(20), s("host_hcall"), i(7)],
            vec![i(3), i(200), i(30), Value::Null, Value::Null],
        ]
    );
}

#[test]
fn clock_rates_and_states_are_counters_per_clock() {
    let clock = |name: &'static str, state: u64| {
        move |m: &mut Message<'_>| {
            m.append_string(1, name);
            m.append_uint64(2, state);
        }
    };
    let (a, b, c) = (
        clock("domain@1", 400_000),
        clock("domain@1", 1_024_000),
        clock("gpu_cc", 1),
    );
    let tp = TraceProcessor::from_bytes(&trace(&[bundle(
        0,
        &[
            (1000, CLOCK_SET_RATE, &a),
            (3000, CLOCK_SET_RATE, &b),
            (4000, CLOCK_ENABLE, &c),
        ],
    )]))
    .expect("trace");
    assert_eq!(
        rows(
            &tp,
            "SELECT t.name, c.ts, c.value, extract_arg(t.dimension_arg_set_id, 'linux_device')
             FROM counter c JOIN counter_track t ON t.id = c.track_id ORDER BY c.ts",
        ),
        vec![
            vec![
                s("domain@1 Frequency"),
                i(1000),
                Value::Real(400_000.0),
                s("domain@1")
            ],
            vec![
                s("domain@1 Frequency"),
                i(3000),
                Value::Real(1_024_000.0),
                s("domain@1")
            ],
            vec![s("gpu_cc State"), i(4000), Value::Real(1.0), s("gpu_cc")],
        ]
    );
    assert_eq!(
        rows(
            &tp,
            "INCLUDE PERFETTO MODULE android.dvfs;
             SELECT name, ts, dur FROM android_dvfs_counters",
        ),
        vec![
            vec![s("domain@1 Frequency"), i(1000), i(2000)],
            vec![s("domain@1 Frequency"), i(3000), i(1000)],
        ]
    );
}
