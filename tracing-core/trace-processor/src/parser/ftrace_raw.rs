//! Every ftrace event (but `sched_switch`, whose row the scheduler parser
//! writes) as a row of `ftrace_event`, Perfetto's raw table: its name, the
//! emitting thread, the CPU, and each field of the event's message as an
//! arg keyed by the field's name, typed by the field's declared type
//! (signed → `int`, unsigned → `uint`, strings). The message layouts are
//! upstream's, as the schema pipeline emits them
//! (`zerotrace_protos::upstream_tables::FTRACE_EVENT_MESSAGES`); a kernel
//! function field (a `caller` or workqueue `function`) becomes the
//! sequence's interned kernel symbol when there is one. Two events the
//! generated schema does not keep, `sched_blocked_reason` and
//! `cgroup_attach_task`, are laid out here at upstream's field numbers;
//! other events it lacks get no row yet.

use protozero::Decoder;
use zerotrace_protos::upstream_tables::{
    EventMessage, FTRACE_EVENT_MESSAGES, ProtoField, ProtoType,
};

use super::Parser;
use crate::load::sequence::Generation;
use crate::storage::args::{ArgSetBuilder, ArgValue};
use crate::storage::sched_rows::FtraceEventRow;

/// `FtraceEvent.timestamp`, `.pid` and `.common_flags`: the envelope
/// (upstream leaves a typed event's `common_flags` column 0).
const TIMESTAMP: u32 = 1;
const PID: u32 = 2;
const COMMON_FLAGS: u32 = 5;
/// `FtraceEvent.sched_switch` (its row comes from the scheduler parser).
const SCHED_SWITCH: u32 = 4;

/// `sched_blocked_reason`, laid out at upstream's numbers.
const SCHED_BLOCKED_REASON: EventMessage = EventMessage {
    name: "sched_blocked_reason",
    field: super::sched::SCHED_BLOCKED_REASON,
    fields: &[
        ProtoField {
            name: "pid",
            number: 1,
            ty: ProtoType::Int32,
        },
        ProtoField {
            name: "caller",
            number: 2,
            ty: ProtoType::Uint64,
        },
        ProtoField {
            name: "io_wait",
            number: 3,
            ty: ProtoType::Uint32,
        },
    ],
};

/// `cgroup_attach_task` (`FtraceEvent` field 67), at upstream's numbers.
const CGROUP_ATTACH_TASK: EventMessage = EventMessage {
    name: "cgroup_attach_task",
    field: 67,
    fields: &[
        ProtoField {
            name: "dst_root",
            number: 1,
            ty: ProtoType::Int32,
        },
        ProtoField {
            name: "dst_id",
            number: 2,
            ty: ProtoType::Int32,
        },
        ProtoField {
            name: "pid",
            number: 3,
            ty: ProtoType::Int32,
        },
        ProtoField {
            name: "comm",
            number: 4,
            ty: ProtoType::String,
        },
        ProtoField {
            name: "cname",
            number: 5,
            ty: ProtoType::String,
        },
        ProtoField {
            name: "dst_level",
            number: 6,
            ty: ProtoType::Int32,
        },
        ProtoField {
            name: "dst_path",
            number: 7,
            ty: ProtoType::String,
        },
    ],
};

/// The (event, field) pairs holding a kernel function's address.
const KERNEL_FUNCTION_FIELDS: [(&str, &str); 5] = [
    ("sched_blocked_reason", "caller"),
    ("workqueue_queue_work", "function"),
    ("workqueue_activate_work", "function"),
    ("workqueue_execute_start", "function"),
    ("workqueue_execute_end", "function"),
];

/// The message layout of `FtraceEvent` field `field`, when known.
pub fn message(field: u32) -> Option<&'static EventMessage> {
    for m in [&SCHED_BLOCKED_REASON, &CGROUP_ATTACH_TASK] {
        if m.field == field {
            return Some(m);
        }
    }
    FTRACE_EVENT_MESSAGES.iter().find(|m| m.field == field)
}

/// Adds the `ftrace_event` row of one event (the `FtraceEvent` bytes),
/// recorded on `cpu` by thread `tid`.
pub fn insert(p: &mut Parser, cpu: u32, ts: i64, tid: i64, bytes: &[u8], generation: &Generation) {
    let mut d = Decoder::new(bytes);
    let mut payload = None;
    while let Some(Ok(f)) = d.read_field() {
        match f.id {
            TIMESTAMP | PID | COMMON_FLAGS => {}
            id => {
                if let Ok(b) = f.as_bytes() {
                    payload = Some((id, b));
                }
            }
        }
    }
    let Some((id, body)) = payload else {
        return;
    };
    if id == SCHED_SWITCH {
        return;
    }
    let Some(m) = message(id) else {
        return;
    };
    let utid = p.processes.get_or_create_thread(&mut p.storage, tid);
    let mut args = ArgSetBuilder::default();
    let mut fd = Decoder::new(body);
    while let Some(Ok(f)) = fd.read_field() {
        let Some(pf) = m.fields.iter().find(|pf| pf.number == f.id) else {
            continue;
        };
        let key = p.storage.strings.intern(pf.name);
        let value = match pf.ty {
            ProtoType::String => match f.as_bytes() {
                Ok(b) => ArgValue::String(p.storage.strings.intern(&String::from_utf8_lossy(b))),
                Err(_) => continue,
            },
            ProtoType::Int32 | ProtoType::Int64 => match f.as_u64() {
                Ok(v) => ArgValue::Int(v as i64),
                Err(_) => continue,
            },
            ProtoType::Uint32 | ProtoType::Uint64 | ProtoType::RepeatedUint64 => {
                let Ok(v) = f.as_u64() else {
                    continue;
                };
                if KERNEL_FUNCTION_FIELDS.contains(&(m.name, pf.name)) {
                    if let Some(sym) = super::sched::kernel_symbol(p, generation, v) {
                        args.add(key, key, ArgValue::String(sym));
                        continue;
                    }
                }
                ArgValue::Uint(v)
            }
        };
        args.add(key, key, value);
    }
    let arg_set_id = p.storage.args.add_set(&args);
    let name = p.storage.strings.intern(m.name);
    p.storage.sched.ftrace_events.push(FtraceEventRow {
        ts,
        name,
        utid,
        arg_set_id,
        common_flags: 0,
        ucpu: cpu,
    });
}
