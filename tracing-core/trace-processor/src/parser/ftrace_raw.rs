//! Every ftrace event (but `sched_switch`, whose row the scheduler parser
//! writes) as a row of `ftrace_event`, Perfetto's raw table: its name, the
//! emitting thread, the CPU, and each field of the event's message as an
//! arg keyed by the field's name, typed as upstream stores the field's
//! declared type (signed → `int`, unsigned → `uint`, strings and bytes →
//! `string`, floating → `real`). The layouts are upstream's whole
//! `FtraceEvent` as the schema pipeline emits them
//! (`zerotrace_protos::upstream_tables::FTRACE_EVENT_SCHEMA`), so any event
//! upstream declares decodes without its generated type; a kernel function
//! field (a `caller` or workqueue `function`) becomes the sequence's
//! interned kernel symbol when there is one. Events upstream added after
//! that schema are declared in `ftrace_schema_newer.rs`. An event upstream
//! does not declare gets no row, as upstream gives it none.

use protozero::Decoder;
use protozero::FieldValue;
use zerotrace_protos::upstream_tables::{ArgType, ftrace_event_schema};

use super::Parser;
use crate::sequence_state::Generation;
use crate::storage::args::{ArgSetBuilder, ArgValue};
use crate::storage::sched_rows::FtraceEventRow;

/// `FtraceEvent.sched_switch` (its row comes from the scheduler parser).
const SCHED_SWITCH: u32 = 4;

/// The (event, field) pairs holding a kernel function's address.
const KERNEL_FUNCTION_FIELDS: [(&str, &str); 9] = [
    ("sched_blocked_reason", "caller"),
    ("workqueue_queue_work", "function"),
    ("workqueue_activate_work", "function"),
    ("workqueue_execute_start", "function"),
    ("workqueue_execute_end", "function"),
    ("funcgraph_entry", "func"),
    ("funcgraph_exit", "func"),
    ("mm_shrink_slab_start", "shrink"),
    ("hrtimer_expire_entry", "function"),
];

/// Adds the `ftrace_event` row of one event, recorded on `cpu` by thread
/// `tid`: its payload (field `id` of `FtraceEvent`, bytes `body`) as the
/// event's walk (`ftrace.rs`) found it.
pub fn insert(
    p: &mut Parser,
    cpu: u32,
    ts: i64,
    tid: i64,
    id: u32,
    body: &[u8],
    generation: &Generation,
) {
    if id == SCHED_SWITCH {
        return;
    }
    let Some(m) = ftrace_event_schema(id).or_else(|| super::ftrace_schema_newer::event(id)) else {
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
        let int = match f.value {
            FieldValue::Varint(v) | FieldValue::Fixed64(v) => Some(v),
            FieldValue::Fixed32(v) => Some(u64::from(v)),
            _ => None,
        };
        let value = match (pf.ty, int) {
            (ArgType::String, _) => match f.as_bytes() {
                Ok(b) => ArgValue::String(p.storage.strings.intern(&String::from_utf8_lossy(b))),
                Err(_) => continue,
            },
            (ArgType::Int, Some(v)) => match f.value {
                // A 32-bit fixed field is sign-extended from its own width.
                FieldValue::Fixed32(x) => ArgValue::Int(i64::from(x as i32)),
                _ => ArgValue::Int(v as i64),
            },
            (ArgType::Sint, Some(v)) => ArgValue::Int(((v >> 1) as i64) ^ -((v & 1) as i64)),
            (ArgType::Uint, Some(v)) => {
                if KERNEL_FUNCTION_FIELDS.contains(&(m.name, pf.name)) {
                    if let Some(sym) = super::sched::kernel_symbol(p, generation, v) {
                        args.add(key, key, ArgValue::String(sym));
                        continue;
                    }
                }
                ArgValue::Uint(v)
            }
            (ArgType::Double, Some(v)) => ArgValue::Real(f64::from_bits(v)),
            (ArgType::Float, Some(v)) => ArgValue::Real(f64::from(f32::from_bits(v as u32))),
            _ => continue,
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
