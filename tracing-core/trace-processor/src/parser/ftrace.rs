//! One ftrace event (split from its bundle by the loader, at its own
//! time), walked once ([`EventFields`]): its `ftrace_event` row, then its
//! payload to the handler `ftrace_registry.rs` has for its field number
//! (each kind of event has its module; the core kernel events are
//! `ftrace_common.rs`'s), or else to its rule (`ftrace_rules.rs`); an
//! event the trace describes itself goes to `ftrace_generic.rs` instead,
//! raw row included. The first event also makes tid 0 the swapper (utid
//! 0). Events from before tracing started are dropped, and
//! before every CPU's data is valid only the raw row is kept
//! (`sched::drop_bounds`).

use protozero::Decoder;
use zerotrace_protos::protos::FtraceEvent;

use super::Parser;
use super::importer::FtraceInput;
use crate::sequence_state::Generation;

/// What one walk over an `FtraceEvent` reads: the emitting thread and
/// the payload (the last message field that is not the envelope: which
/// event it is, and its bytes).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct EventFields<'a> {
    /// `FtraceEvent.pid`.
    pub pid: Option<u32>,
    /// (field number, bytes) of the event's payload.
    pub payload: Option<(u32, &'a [u8])>,
}

#[cfg(test)]
thread_local! {
    /// Walks over an `FtraceEvent` made on this thread (tests count them).
    static WALKS: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
}

/// Walks over an `FtraceEvent` made on this thread so far (tests only).
#[cfg(test)]
pub fn walks() -> u64 {
    WALKS.with(std::cell::Cell::get)
}

/// Counts one walk over an `FtraceEvent` (tests only).
#[inline]
pub fn count_walk() {
    #[cfg(test)]
    WALKS.with(|w| w.set(w.get() + 1));
}

impl<'a> EventFields<'a> {
    /// Walks the event's bytes once. A malformed field ends the walk:
    /// what came before it is kept.
    pub fn walk(bytes: &'a [u8]) -> Self {
        count_walk();
        let mut out = EventFields::default();
        let mut d = Decoder::new(bytes);
        while let Some(Ok(f)) = d.read_field() {
            match f.id {
                FtraceEvent::FIELD_TIMESTAMP | FtraceEvent::FIELD_COMMON_FLAGS => {}
                FtraceEvent::FIELD_PID => {
                    out.pid = f.as_u64().ok().map(|v| v as u32).or(out.pid);
                }
                id => {
                    if let Ok(b) = f.as_bytes() {
                        out.payload = Some((id, b));
                    }
                }
            }
        }
        out
    }
}

/// Parses one event recorded on `cpu`: one walk, its raw row, then its
/// payload to the handler the registry has for its field number.
pub fn parse(p: &mut Parser, cpu: u32, bytes: &[u8], ts: i64, generation: &Generation) {
    if !p.saw_ftrace {
        // A Linux system trace: tid/pid 0 are the idle task, utid/upid 0.
        p.saw_ftrace = true;
        p.processes.set_pid_zero_is_idle(&mut p.storage);
    }
    let ev = EventFields::walk(bytes);
    let tid = i64::from(ev.pid.unwrap_or(0));
    let (hard, soft) = super::sched::drop_bounds(p);
    if ts < hard {
        p.storage.stats.incr("ftrace_packet_before_tracing_start");
        return;
    }
    let Some((field, body)) = ev.payload else {
        return;
    };
    if lacks_own_time(field, body) {
        // Upstream's tokenizer drops such an event whole, raw row included.
        p.storage.stats.incr("ftrace_bundle_tokenizer_errors");
        return;
    }
    if field >= super::ftrace_generic::FIRST_DESCRIBED
        || field == super::ftrace_generic::LEGACY_GENERIC
    {
        super::ftrace_generic::parse(p, cpu, ts, tid, field, body, ts >= soft);
        return;
    }
    super::ftrace_raw::insert(p, cpu, ts, tid, field, body, generation);
    if ts < soft {
        return;
    }
    if let Some(handle) = super::ftrace_registry::handler(field) {
        let input = FtraceInput {
            cpu,
            ts,
            tid,
            body,
            generation,
        };
        handle(p, &input);
    } else if let Some(shape) = super::ftrace_rules::rule(field) {
        let input = FtraceInput {
            cpu,
            ts,
            tid,
            body,
            generation,
        };
        super::ftrace_rules::apply(p, shape, &input);
    }
}

/// The events whose values are placed at a time they carry: (event's
/// field number, the field holding that time) (`gpu_work_period`,
/// `thermal_exynos_acpm_bulk`, `param_set_value_cpm`,
/// `fwtp_perfetto_counter`, `fwtp_perfetto_slice`).
const OWN_TIME: [(u32, u32); 5] = [(488, 3), (506, 11), (543, 3), (596, 1), (600, 1)];

/// Whether the event is one of [`OWN_TIME`] without its time.
fn lacks_own_time(field: u32, body: &[u8]) -> bool {
    match OWN_TIME.iter().find(|(f, _)| *f == field) {
        Some((_, time)) => Decoder::new(body).find_last(*time).is_none(),
        None => false,
    }
}

/// Imports one event read from ftrace's text (a systrace line made into
/// its payload, field number `field`, by `load/systrace/`): the handler of
/// the payload, without a raw `ftrace_event` row (upstream's text reader
/// writes none).
pub fn parse_text(p: &mut Parser, cpu: u32, tid: i64, field: u32, body: &[u8], ts: i64) {
    if !p.saw_ftrace {
        p.saw_ftrace = true;
        p.processes.set_pid_zero_is_idle(&mut p.storage);
    }
    let generation = Generation::default();
    if let Some(handle) = super::ftrace_registry::handler(field) {
        let input = FtraceInput {
            cpu,
            ts,
            tid,
            body,
            generation: &generation,
        };
        handle(p, &input);
    } else if let Some(shape) = super::ftrace_rules::rule(field) {
        let input = FtraceInput {
            cpu,
            ts,
            tid,
            body,
            generation: &generation,
        };
        super::ftrace_rules::apply(p, shape, &input);
    }
}
