//! `process_tree` (TracePacket field 2): processes with their parent,
//! command line, uid, start time and kernel-thread flag, and threads with
//! their process and name, as upstream's system probes parser reads them
//! (kworker names cut at their first `+` or `-`; a process's name is its
//! argv0, or the first word of a lone argument).
//!
//! Field numbers are those of upstream's `ps/process_tree.proto`, which
//! our schemas do not carry yet; the bytes are read with protozero's
//! schema-less decoder.

use protozero::{Decoder, Field};

use super::Parser;
use super::importer::{Importer, Input};
use crate::storage::args::{ArgSetBuilder, ArgValue};
use crate::tracker::process::NamePriority;
use zerotrace_protos::upstream_tables::packet_field;

/// kthreadd's pid: its children are kernel threads.
const KTHREADD_PID: i64 = 2;

fn fields(bytes: &[u8]) -> impl Iterator<Item = Field<'_>> {
    let mut d = Decoder::new(bytes);
    std::iter::from_fn(move || d.read_field().and_then(Result::ok))
}

fn kworker_name(comm: &str) -> &str {
    if let Some(rest) = comm.strip_prefix("kworker/") {
        if let Some(i) = rest.find(['+', '-']) {
            return &comm[..8 + i];
        }
    }
    comm
}

/// The payload this module imports.
pub const IMPORTERS: &[(u32, Importer)] = &[(packet_field::PROCESS_TREE, import)];

/// Parses a packet's process tree; false when it has none.
fn import(p: &mut Parser, input: &Input<'_>) {
    let tree = input.bytes;
    // A set: a packet of N kernel threads looked each up in a list (N²).
    let mut kthreads = crate::hash::HashSet::default();
    for f in fields(tree).filter(|f| f.id == 1) {
        let Ok(proc_bytes) = f.as_bytes() else {
            continue;
        };
        let (mut pid, mut ppid, mut uid, mut start, mut is_kthread, mut comm) =
            (0i64, 0i64, None, None, None, false);
        let mut cmdline: Vec<String> = Vec::new();
        for pf in fields(proc_bytes) {
            match pf.id {
                1 => pid = i64::from(pf.as_i32().unwrap_or(0)),
                2 => ppid = i64::from(pf.as_i32().unwrap_or(0)),
                3 => cmdline.push(
                    pf.as_bytes()
                        .map(|b| String::from_utf8_lossy(b).into_owned())
                        .unwrap_or_default(),
                ),
                5 => uid = pf.as_i32().ok(),
                7 => start = pf.as_u64().ok(),
                8 => is_kthread = pf.as_bool().ok(),
                9 => comm = pf.as_bool().unwrap_or(false),
                _ => {}
            }
        }
        if cmdline.is_empty() {
            continue;
        }
        let mut argv0 = cmdline[0].clone();
        let mut joined: Option<String> = None;
        if ppid == KTHREADD_PID {
            kthreads.insert(pid);
            let cut = kworker_name(&argv0).to_owned();
            if cut.len() != argv0.len() {
                argv0 = cut.clone();
                joined = Some(cut);
            }
        }
        if cmdline.len() == 1 {
            if let Some(i) = argv0.find(' ') {
                argv0.truncate(i);
            }
        }
        let joined = joined.unwrap_or_else(|| cmdline.join(" "));
        let pupid = p.processes.get_or_create_process(&mut p.storage, ppid);
        let upid = p.processes.get_or_create_process(&mut p.storage, pid);
        if let Some(row) = p.storage.processes.get_mut(upid as usize) {
            if row.parent_upid.is_none() {
                row.parent_upid = Some(pupid);
            }
        }
        let name = p.storage.strings.intern(&argv0);
        p.processes
            .set_process_name(&mut p.storage, upid, name, NamePriority::ProcessTree);
        let cmd = p.storage.strings.intern(&joined);
        if let Some(row) = p.storage.processes.get_mut(upid as usize) {
            row.cmdline = cmd;
        }
        if comm {
            let utid = p.processes.get_or_create_thread(&mut p.storage, pid);
            p.processes
                .set_thread_name(&mut p.storage, utid, cmd, NamePriority::ProcessTree);
        }
        if let Some(row) = p.storage.processes.get_mut(upid as usize) {
            if let Some(uid) = uid {
                let uid = i64::from(uid as u32);
                row.uid = Some(uid);
                row.android_appid = Some(uid % 100_000);
                row.android_user_id = Some(uid / 100_000);
            }
        }
        if let Some(start) = start {
            let start = i64::try_from(start).unwrap_or(i64::MAX);
            if let Ok(t) = p.clocks.trace_time(
                crate::clock::machine_clock(crate::clock::BOOTTIME, p.machine),
                start,
            ) {
                if let Some(row) = p.storage.processes.get_mut(upid as usize) {
                    row.start_ts.get_or_insert(t);
                }
            }
        }
        if let Some(k) = is_kthread {
            add_process_arg(p, upid, "is_kthread", ArgValue::Bool(k));
        }
    }
    for f in fields(tree).filter(|f| f.id == 2) {
        let Ok(t) = f.as_bytes() else { continue };
        let (mut tid, mut tgid, mut name) = (0i64, 0i64, None);
        for tf in fields(t) {
            match tf.id {
                1 => tid = i64::from(tf.as_i32().unwrap_or(0)),
                3 => tgid = i64::from(tf.as_i32().unwrap_or(0)),
                2 => {
                    name = tf
                        .as_bytes()
                        .ok()
                        .map(|b| String::from_utf8_lossy(b).into_owned())
                }
                _ => {}
            }
        }
        p.processes.update_thread(&mut p.storage, tid, tgid);
        if let Some(name) = name {
            let name = if tid == tgid && kthreads.contains(&tid) {
                kworker_name(&name).to_owned()
            } else {
                name
            };
            let id = p.storage.strings.intern(&name);
            let utid = p.processes.get_or_create_thread(&mut p.storage, tid);
            p.processes
                .set_thread_name(&mut p.storage, utid, id, NamePriority::ProcessTree);
        }
    }
}

/// Adds one arg to a process's arg set.
pub fn add_process_arg(p: &mut Parser, upid: u32, key: &str, value: ArgValue) {
    add_process_arg_keyed(p, upid, key, key, value);
}

/// As [`add_process_arg`], with a flat key apart from the key (an array's
/// element: `chrome.process_label` and `chrome.process_label[0]`).
pub fn add_process_arg_keyed(
    p: &mut Parser,
    upid: u32,
    flat_key: &str,
    key: &str,
    value: ArgValue,
) {
    let Some(row) = p.storage.processes.get(upid as usize) else {
        return;
    };
    let mut b = ArgSetBuilder::default();
    if let Some(set) = row.arg_set_id {
        let existing: Vec<_> = p.storage.args.set(set).copied().collect();
        for a in existing {
            b.add(a.flat_key, a.key, a.value);
        }
    }
    let flat = p.storage.strings.intern(flat_key);
    let k = p.storage.strings.intern(key);
    b.add(flat, k, value);
    let id = p.storage.args.add_set(&b);
    if let Some(row) = p.storage.processes.get_mut(upid as usize) {
        row.arg_set_id = id;
    }
}
