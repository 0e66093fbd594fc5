//! ftrace events imported by rule: many kernel events are one of three
//! shapes, a slice opened by one event and closed by another on some track,
//! an instant on a track, or a counter value on a track. Each rule here
//! says, for one `FtraceEvent` field number, which shape, which track (the
//! emitting thread's, a thread the payload names, or a per-CPU track of a
//! kind), the slice's category and name (fixed, a field's kernel symbol,
//! a number written into a template) and which payload fields become the
//! slice's args, as upstream's ftrace parser imports these events. An end
//! adds its args to the slice it closes (replacing those of the same key);
//! an end with nothing open is ignored. A fourth shape is a state: each
//! event closes the track's open slice and opens its own.
//!
//! The rules themselves, and the words they are written in, are
//! `ftrace_rule_table.rs`'s. They are looked up
//! by field number ([`rule`]) by `ftrace.rs`
//! after the handlers of `ftrace_registry.rs`; no field has both (a test
//! checks).

use super::Parser;
use super::fields::Fields;
use super::ftrace_rule_table::{Arg, Name, RULES, Shape, Track};
use super::importer::FtraceInput;
use crate::column_store::strings::StrId;
use crate::storage::args::{ArgSetBuilder, ArgValue};
use crate::storage::rows::{CounterRow, SliceRow};
use crate::tables::opt_u32::OptU32;
use crate::tracker::tracks::{EventType, TrackSpec};

const NO_ARGS: &[Arg] = &[];

/// Field numbers the index covers (upstream's `FtraceEvent` ends below
/// 1024; past it there are no rules).
const FIELDS: usize = 1024;

/// Each field number's place in the table (`u16::MAX`: no rule); built
/// at compile time, which also stops the build on a field with two rules.
static INDEX: [u16; FIELDS] = index();

const fn index() -> [u16; FIELDS] {
    let rules = RULES;
    let mut t = [u16::MAX; FIELDS];
    let mut i = 0;
    while i < rules.len() {
        let field = rules[i].0 as usize;
        assert!(field < FIELDS, "a rule's field is out of range");
        assert!(t[field] == u16::MAX, "an ftrace event has two rules");
        t[field] = i as u16;
        i += 1;
    }
    t
}

/// The rule of field number `field`, if any.
pub fn rule(field: u32) -> Option<&'static Shape> {
    let i = *INDEX.get(field as usize)?;
    RULES.get(usize::from(i)).map(|(_, s)| s)
}

/// Applies a rule to one event.
pub fn apply(p: &mut Parser, shape: &Shape, e: &FtraceInput<'_>) {
    let f = Fields::new(e.body);
    let toggled;
    let shape = match *shape {
        Shape::Toggle(flag, track, name, args) => {
            toggled = if f.int(flag).unwrap_or(0) != 0 {
                Shape::Begin(track, None, name, args)
            } else {
                Shape::End(track, NO_ARGS)
            };
            &toggled
        }
        _ => shape,
    };
    match *shape {
        Shape::Begin(track, category, name, args) => {
            let track_id = track_of(p, track, &f, e);
            let name = name_of(p, name, &f, e);
            let category = category.map(|c| p.storage.strings.intern(c));
            let arg_set_id = args_of(p, args, &f, e, None);
            p.slices.begin(
                &mut p.storage,
                SliceRow {
                    ts: e.ts,
                    dur: -1,
                    track_id,
                    category: category.unwrap_or_default(),
                    name,
                    arg_set_id: arg_set_id.into(),
                    ..SliceRow::default()
                },
            );
        }
        Shape::End(track, args) => {
            let track_id = track_of(p, track, &f, e);
            let Some(id) = p.slices.end(&mut p.storage, track_id, e.ts, None) else {
                return;
            };
            if args.is_empty() {
                return;
            }
            let old = p
                .storage
                .slices
                .get(id as usize)
                .and_then(|s| s.arg_set_id.get());
            let set = args_of(p, args, &f, e, old);
            if let Some(s) = p.storage.slices.get_mut(id as usize) {
                s.arg_set_id = set.into();
            }
        }
        Shape::Instant(track, name, args) => {
            let track_id = track_of(p, track, &f, e);
            let name = name_of(p, name, &f, e);
            let arg_set_id = args_of(p, args, &f, e, None);
            p.slices.instant(
                &mut p.storage,
                SliceRow {
                    ts: e.ts,
                    track_id,
                    name,
                    arg_set_id: arg_set_id.into(),
                    ..SliceRow::default()
                },
            );
        }
        Shape::State(track, name) => {
            let track_id = track_of(p, track, &f, e);
            p.slices.end(&mut p.storage, track_id, e.ts, None);
            let name = name_of(p, name, &f, e);
            p.slices.begin(
                &mut p.storage,
                SliceRow {
                    ts: e.ts,
                    dur: -1,
                    track_id,
                    name,
                    ..SliceRow::default()
                },
            );
        }
        // Made a begin or an end above.
        Shape::Toggle(..) => {}
        Shape::Counter(classification, name, cpu, value) => {
            let mut spec = TrackSpec::new(Some(name), classification, EventType::Counter);
            if let Some(cpu) = cpu {
                let cpu = f.uint(cpu).unwrap_or(0) as u32;
                spec.dimensions = vec![("cpu", ArgValue::Int(i64::from(cpu)))];
            }
            let track_id = p.tracks.interned_counter(&mut p.storage, &spec);
            p.storage.counters.push(CounterRow {
                ts: e.ts,
                track_id,
                value: f.int(value).unwrap_or(0) as f64,
                arg_set_id: OptU32::NONE,
            });
        }
    }
}

fn track_of(p: &mut Parser, track: Track, f: &Fields<'_>, e: &FtraceInput<'_>) -> u32 {
    match track {
        Track::Thread => {
            let utid = p.processes.get_or_create_thread(&mut p.storage, e.tid);
            p.tracks.thread_track(&mut p.storage, utid)
        }
        Track::ThreadOf(field) => {
            let tid = i64::from(f.int32(field).unwrap_or(0) as u32);
            let utid = p.processes.get_or_create_thread(&mut p.storage, tid);
            p.tracks.thread_track(&mut p.storage, utid)
        }
        Track::Cpu(classification, prefix, field) => {
            let cpu = match field {
                None => e.cpu,
                Some(field) => f.uint(field).unwrap_or(0) as u32,
            };
            let name = format!("{prefix}{cpu}");
            let mut spec = TrackSpec::new(Some(&name), classification, EventType::Slice);
            spec.dimensions = vec![("cpu", ArgValue::Int(i64::from(cpu)))];
            p.tracks.interned_counter(&mut p.storage, &spec)
        }
        Track::Global(classification, name) => {
            let spec = TrackSpec::new(name, classification, EventType::Slice);
            p.tracks.interned_counter(&mut p.storage, &spec)
        }
        Track::Keyed(classification, prefix, key, field) => {
            let v = f.uint(field).unwrap_or(0) as u32;
            let name = format!("{prefix}{v}]");
            let mut spec = TrackSpec::new(Some(&name), classification, EventType::Slice);
            spec.dimensions = vec![(key, ArgValue::Int(i64::from(v)))];
            p.tracks.interned_counter(&mut p.storage, &spec)
        }
    }
}

/// The kernel symbol the sequence interned for `address`, or the address
/// in hex.
fn symbol(p: &mut Parser, e: &FtraceInput<'_>, address: u64) -> StrId {
    match super::sched::kernel_symbol(p, e.generation, address) {
        Some(s) => s,
        None => p.storage.strings.intern(&format!("{address:#x}")),
    }
}

fn name_of(p: &mut Parser, name: Name, f: &Fields<'_>, e: &FtraceInput<'_>) -> StrId {
    match name {
        Name::Fixed(s) => p.storage.strings.intern(s),
        Name::Symbol(field) => symbol(p, e, f.uint(field).unwrap_or(0)),
        Name::Hex(prefix, field) => {
            let v = f.uint(field).unwrap_or(0);
            // C's "%#x" writes zero without its prefix.
            let text = if v == 0 {
                format!("{prefix}0")
            } else {
                format!("{prefix}{v:#x}")
            };
            p.storage.strings.intern(&text)
        }
        Name::Int(prefix, field, suffix) => {
            let v = f.int32(field).unwrap_or(0);
            p.storage.strings.intern(&format!("{prefix}{v}{suffix}"))
        }
    }
}

/// The arg set of `args` read from the payload, after the args of set
/// `old` (if any).
fn args_of(
    p: &mut Parser,
    args: &[Arg],
    f: &Fields<'_>,
    e: &FtraceInput<'_>,
    old: Option<u32>,
) -> Option<u32> {
    if args.is_empty() {
        return old;
    }
    let mut b = ArgSetBuilder::default();
    if let Some(set) = old {
        let replaced: Vec<StrId> = args
            .iter()
            .map(|a| match *a {
                Arg::Int(k, _) | Arg::Uint(k, _) | Arg::Symbol(k, _) => k,
                Arg::EventCpu(k) | Arg::EventCpuUint(k) => k,
                Arg::Bool(k, _) => k,
            })
            .filter_map(|k| p.storage.strings.find(k))
            .collect();
        let old: Vec<_> = p.storage.args.set(set).copied().collect();
        for a in old.into_iter().filter(|a| !replaced.contains(&a.key)) {
            b.add(a.flat_key, a.key, a.value);
        }
    }
    for arg in args {
        let (key, value) = match *arg {
            Arg::Int(k, field) => (k, ArgValue::Int(f.int(field).unwrap_or(0))),
            Arg::Uint(k, field) => (k, ArgValue::Uint(f.uint(field).unwrap_or(0))),
            Arg::Symbol(k, field) => {
                let s = symbol(p, e, f.uint(field).unwrap_or(0));
                (k, ArgValue::String(s))
            }
            Arg::EventCpu(k) => (k, ArgValue::Int(i64::from(e.cpu))),
            Arg::EventCpuUint(k) => (k, ArgValue::Uint(u64::from(e.cpu))),
            Arg::Bool(k, field) => (k, ArgValue::Bool(f.uint(field).unwrap_or(0) != 0)),
        };
        let key = p.storage.strings.intern(key);
        b.add(key, key, value);
    }
    p.storage.args.add_set(&b)
}
