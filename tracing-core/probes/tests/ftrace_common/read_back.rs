//! Our `ftrace_events` bundles read back with the decoders generated from
//! upstream's schema, each event rendered as the kernel's text renders it
//! where we know its print format (compact_sched expanded too), for the
//! tests that hold our packets against the kernel's own output.

use zerotrace_protos::protos::{FtraceEventBundleDecoder, FtraceEventDecoder};
use zerotrace_protos::upstream_tables::FTRACE_EVENT_MESSAGES;

use super::prev_state;

/// One event as read back from our packets.
#[derive(Debug, Clone, PartialEq)]
pub struct Back {
    pub cpu: u32,
    pub ts: u64,
    pub pid: Option<i64>,
    pub name: String,
    /// The kernel text's field part where we render it.
    pub fields: Option<String>,
}

pub fn switch_text(pc: &str, pp: i64, ppr: i64, st: i64, nc: &str, np: i64, npr: i64) -> String {
    format!(
        "prev_comm={pc} prev_pid={pp} prev_prio={ppr} prev_state={} ==> next_comm={nc} next_pid={np} next_prio={npr}",
        prev_state(st)
    )
}

pub fn wake_text(comm: &str, pid: i64, prio: i64, cpu: i64) -> String {
    format!("comm={comm} pid={pid} prio={prio} target_cpu={cpu:03}")
}

/// The name of the `FtraceEvent` oneof field an event was written under.
pub fn event_name(ev: &FtraceEventDecoder<'_>) -> String {
    let d = ev.typed_decoder();
    for m in FTRACE_EVENT_MESSAGES {
        if d.has(m.field) {
            return m.name.to_owned();
        }
    }
    if let Some(g) = ev.generic() {
        return g.event_name().expect("event_name").to_owned();
    }
    panic!("event without a payload: {ev:?}")
}

/// Reads the typed and generic events back (compact ones expanded too).
pub fn read_back(bundles: &[Vec<u8>]) -> Vec<Back> {
    let mut out = Vec::new();
    for b in bundles {
        let d = FtraceEventBundleDecoder::new(b);
        assert!(d.decode_error().is_none());
        let cpu = d.cpu().expect("cpu");
        for ev in d.event() {
            let ts = ev.timestamp().expect("timestamp");
            let pid = ev.pid().map(|p| i64::from(p as i32));
            let name = event_name(&ev);
            let fields = if let Some(s) = ev.sched_switch() {
                Some(switch_text(
                    s.prev_comm().unwrap_or(""),
                    i64::from(s.prev_pid().expect("prev_pid")),
                    i64::from(s.prev_prio().expect("prev_prio")),
                    s.prev_state().expect("prev_state"),
                    s.next_comm().unwrap_or(""),
                    i64::from(s.next_pid().expect("next_pid")),
                    i64::from(s.next_prio().expect("next_prio")),
                ))
            } else if let Some(w) = ev.sched_waking() {
                Some(wake_text(
                    w.comm().unwrap_or(""),
                    i64::from(w.pid().expect("pid")),
                    i64::from(w.prio().expect("prio")),
                    i64::from(w.target_cpu().expect("target_cpu")),
                ))
            } else if let Some(w) = ev.sched_wakeup() {
                Some(wake_text(
                    w.comm().unwrap_or(""),
                    i64::from(w.pid().expect("pid")),
                    i64::from(w.prio().expect("prio")),
                    i64::from(w.target_cpu().expect("target_cpu")),
                ))
            } else if let Some(w) = ev.sched_wakeup_new() {
                Some(wake_text(
                    w.comm().unwrap_or(""),
                    i64::from(w.pid().expect("pid")),
                    i64::from(w.prio().expect("prio")),
                    i64::from(w.target_cpu().expect("target_cpu")),
                ))
            } else if let Some(p) = ev.print() {
                assert!(p.ip().is_some());
                let buf = p.buf().expect("buf");
                Some(buf.strip_suffix('\n').unwrap_or(buf).to_owned())
            } else if let Some(f) = ev.sched_process_fork() {
                Some(format!(
                    "comm={} pid={} child_comm={} child_pid={}",
                    f.parent_comm().unwrap_or(""),
                    f.parent_pid().expect("pid"),
                    f.child_comm().unwrap_or(""),
                    f.child_pid().expect("pid")
                ))
            } else if let Some(s) = ev.sys_exit() {
                Some(format!(
                    "NR {} = {}",
                    s.id().expect("id"),
                    s.ret().expect("ret")
                ))
            } else if let Some(s) = ev.sys_enter() {
                let args: Vec<String> = s.args().map(|a| format!("{a:x}")).collect();
                assert_eq!(args.len(), 6);
                Some(format!("NR {} ({})", s.id().expect("id"), args.join(", ")))
            } else {
                None
            };
            out.push(Back {
                cpu,
                ts,
                pid,
                name,
                fields,
            });
        }
        if let Some(cs) = d.compact_sched() {
            let comms: Vec<&str> = cs.intern_table().collect();
            let mut ts = 0u64;
            let sw = cs
                .switch_timestamp()
                .zip(cs.switch_prev_state())
                .zip(cs.switch_next_pid())
                .zip(cs.switch_next_prio())
                .zip(cs.switch_next_comm_index());
            for ((((dt, st), np), npr), ci) in sw {
                ts += dt;
                out.push(Back {
                    cpu,
                    ts,
                    pid: None,
                    name: "sched_switch".into(),
                    fields: Some(format!(
                        "prev_state={} ==> next_comm={} next_pid={np} next_prio={npr}",
                        prev_state(st),
                        comms[ci as usize]
                    )),
                });
            }
            let mut ts = 0u64;
            let wk = cs
                .waking_timestamp()
                .zip(cs.waking_pid())
                .zip(cs.waking_target_cpu())
                .zip(cs.waking_prio())
                .zip(cs.waking_comm_index());
            for ((((dt, pid), tcpu), prio), ci) in wk {
                ts += dt;
                out.push(Back {
                    cpu,
                    ts,
                    pid: None,
                    name: "sched_waking".into(),
                    fields: Some(wake_text(
                        comms[ci as usize],
                        i64::from(pid),
                        i64::from(prio),
                        i64::from(tcpu),
                    )),
                });
            }
            assert_eq!(
                cs.waking_common_flags().count(),
                cs.waking_timestamp().count()
            );
        }
    }
    out
}
