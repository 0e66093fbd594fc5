//! System calls (`raw_syscalls/sys_enter` and `sys_exit`) as slices on
//! the calling thread's track, as upstream's syscall tracker makes them:
//! named `sys_<call>` from the table of the architecture `system_info`
//! named (`syscall_names/`), `sys_<number>` for a number the table lacks
//! or before an architecture is known; numbers from [`MAX_SYSCALLS`] up are
//! dropped. The entry's arguments are args (`args[i]`), the exit's return
//! value `ret`. `rt_sigreturn` never returns, so it is an instant.
//!
//! A `write` is tracked per thread because atrace text is written with
//! it: an atrace slice written to `trace_marker` would begin and end in
//! the middle of two `sys_write` slices, which cannot nest. As upstream
//! does, the ongoing write is ended where the atrace event is (counted in
//! `truncated_sys_write_duration`), and its own exit is then ignored; an
//! exit of a write whose entry was not seen is ignored too. A call's args
//! are stored once, when it ends (or at the end of the trace).

use super::Parser;
use super::importer::{FtraceHandler, FtraceInput};
use super::syscall_names;
use crate::hash::{HashMap, HashSet};
use crate::storage::args::{ArgSetBuilder, ArgValue};
use crate::storage::rows::SliceRow;

/// `FtraceEvent.sys_enter`: {id 1, args 2 (repeated uint64)}.
const SYS_ENTER: u32 = 329;
/// `FtraceEvent.sys_exit`: {id 1, ret 2}.
const SYS_EXIT: u32 = 330;

/// Syscall numbers at or past this are not calls (upstream's bound).
pub const MAX_SYSCALLS: u64 = 550;

/// The events this module handles (gathered by `ftrace_registry.rs`).
pub const FTRACE_HANDLERS: &[(u32, FtraceHandler)] =
    &[(SYS_ENTER, sys_enter), (SYS_EXIT, sys_exit)];

/// An architecture with a table of calls.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Arch {
    /// `aarch64`.
    Arm64,
    /// `x86_64`.
    X86_64,
    /// `i686`.
    X86,
}

impl Arch {
    /// The architecture a `uname` machine string names, if its calls are
    /// known.
    pub fn from_machine(machine: &str) -> Option<Arch> {
        match machine {
            "aarch64" => Some(Arch::Arm64),
            "x86_64" => Some(Arch::X86_64),
            "i686" => Some(Arch::X86),
            _ => None,
        }
    }

    fn table(self) -> &'static [&'static str] {
        match self {
            Arch::Arm64 => &syscall_names::ARM64,
            Arch::X86_64 => &syscall_names::X86_64,
            Arch::X86 => &syscall_names::X86,
        }
    }
}

/// What the syscall tracker keeps between events.
#[derive(Debug, Default)]
pub struct SyscallState {
    /// The trace's architecture, once `system_info` named a known one.
    pub arch: Option<Arch>,
    /// Threads (utids) inside a `write` whose slice is open.
    in_write: HashSet<u32>,
    /// Open calls' entry args, by slice id: stored with the exit's return
    /// value when the call ends (or as they are at the end of the trace),
    /// so that no arg set is stored twice.
    pending: HashMap<u32, ArgSetBuilder>,
}

impl SyscallState {
    /// The slice name of call `number`; None past [`MAX_SYSCALLS`].
    fn name(&self, number: u64) -> Option<String> {
        if number >= MAX_SYSCALLS {
            return None;
        }
        let known = self
            .arch
            .and_then(|a| a.table().get(number as usize).copied())
            .filter(|n| !n.is_empty());
        Some(known.map_or_else(|| format!("sys_{number}"), str::to_owned))
    }
}

/// The call number of a `sys_enter`/`sys_exit` body.
fn number(body: &[u8]) -> Option<u64> {
    let n = protozero::Decoder::new(body)
        .find_last(1)
        .and_then(|f| f.as_u64().ok())?;
    // `id` is an int64: a negative number is no call.
    (n as i64 >= 0).then_some(n)
}

fn sys_enter(p: &mut Parser, e: &FtraceInput<'_>) {
    let Some(name) = number(e.body).and_then(|n| p.syscalls.name(n)) else {
        return;
    };
    let utid = p.processes.get_or_create_thread(&mut p.storage, e.tid);
    let track_id = p.tracks.thread_track(&mut p.storage, utid);
    let mut args = ArgSetBuilder::default();
    let flat = p.storage.strings.intern("args");
    let mut i = 0usize;
    for f in protozero::Decoder::new(e.body).map_while(Result::ok) {
        if f.id != 2 {
            continue;
        }
        let mut push = |v: u64, p: &mut Parser| {
            let key = p.storage.strings.intern(&format!("args[{i}]"));
            args.add(flat, key, ArgValue::Uint(v));
            i += 1;
        };
        match f.value {
            protozero::FieldValue::Varint(v) => push(v, p),
            protozero::FieldValue::Bytes(packed) => {
                for v in protozero::PackedVarints::new(packed) {
                    push(v, p);
                }
            }
            _ => {}
        }
    }
    let is_write = name == "sys_write";
    let instant = name == "sys_rt_sigreturn";
    let name = p.storage.strings.intern(&name);
    let row = SliceRow {
        ts: e.ts,
        dur: -1,
        track_id,
        name,
        ..SliceRow::default()
    };
    if instant {
        let arg_set_id = p.storage.args.add_set(&args);
        p.slices.instant(
            &mut p.storage,
            SliceRow {
                arg_set_id: arg_set_id.into(),
                ..row
            },
        );
        return;
    }
    let Some(id) = p.slices.begin(&mut p.storage, row) else {
        return;
    };
    p.syscalls.pending.insert(id, args);
    if is_write {
        p.syscalls.in_write.insert(utid);
    }
}

fn sys_exit(p: &mut Parser, e: &FtraceInput<'_>) {
    let Some(name) = number(e.body).and_then(|n| p.syscalls.name(n)) else {
        return;
    };
    let utid = p.processes.get_or_create_thread(&mut p.storage, e.tid);
    if name == "sys_write" && !p.syscalls.in_write.remove(&utid) {
        return;
    }
    let track_id = p.tracks.thread_track(&mut p.storage, utid);
    let Some(id) = p.slices.end(&mut p.storage, track_id, e.ts, None) else {
        return;
    };
    let ret = protozero::Decoder::new(e.body)
        .find_last(2)
        .and_then(|f| f.as_u64().ok());
    let mut args = p.syscalls.pending.remove(&id).unwrap_or_default();
    if let Some(ret) = ret {
        let k = p.storage.strings.intern("ret");
        args.add(k, k, ArgValue::Int(ret as i64));
    }
    store_args(p, id, &args);
}

/// Adds `args` to slice `id`'s args (a call's slice has none of its own
/// until then; a slice the exit closed in its place keeps its own first).
fn store_args(p: &mut Parser, id: u32, args: &ArgSetBuilder) {
    if args.is_empty() {
        return;
    }
    let mut all = ArgSetBuilder::default();
    if let Some(set) = p
        .storage
        .slices
        .get(id as usize)
        .and_then(|s| s.arg_set_id.get())
    {
        let old: Vec<_> = p.storage.args.set(set).copied().collect();
        for a in old {
            all.add(a.flat_key, a.key, a.value);
        }
    }
    for a in args.args() {
        all.add(a.flat_key, a.key, a.value);
    }
    let set = p.storage.args.add_set(&all);
    if let Some(s) = p.storage.slices.get_mut(id as usize) {
        s.arg_set_id = set.into();
    }
}

/// Stores the entry args of the calls still open at the end of the trace.
pub fn finish(p: &mut Parser) {
    let mut open: Vec<(u32, ArgSetBuilder)> = p.syscalls.pending.drain().collect();
    open.sort_by_key(|(id, _)| *id);
    for (id, args) in open {
        store_args(p, id, &args);
    }
}

/// Ends thread `tid`'s ongoing `write` at `ts`, if it has one, because an
/// atrace event it wrote is about to begin or end a slice there.
pub fn truncate_write(p: &mut Parser, ts: i64, tid: i64) {
    let Some(utid) = p.processes.thread_or_null(&p.storage, tid) else {
        return;
    };
    if !p.syscalls.in_write.remove(&utid) {
        return;
    }
    p.storage.stats.incr("truncated_sys_write_duration");
    let track_id = p.tracks.thread_track(&mut p.storage, utid);
    if let Some(id) = p.slices.end(&mut p.storage, track_id, ts, None) {
        let args = p.syscalls.pending.remove(&id).unwrap_or_default();
        store_args(p, id, &args);
    }
}
