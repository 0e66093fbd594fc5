//! TrackDescriptors in sorted order: the thread or process they describe
//! gets its name, and the descriptor's track is made (its uuid resolves to
//! it from then on).

use zerotrace_protos::protos::{TracePacket, TrackDescriptorDecoder};

use super::Parser;
use super::importer::{Importer, Input};
use super::process_tree::{add_process_arg, add_process_arg_keyed};
use crate::storage::args::{ArgSetBuilder, ArgValue};
use crate::tracker::process::NamePriority;

/// `TrackDescriptor.ProcessOrdering` / `ThreadOrdering`: EXPLICIT.
const ORDERING_EXPLICIT: i32 = 1;

/// Parses a TrackDescriptor packet.
/// The payload this module imports.
pub const IMPORTERS: &[(u32, Importer)] = &[(TracePacket::FIELD_TRACK_DESCRIPTOR, import)];

fn import(p: &mut Parser, input: &Input<'_>) {
    parse(p, input.bytes, input.ts);
}

fn parse(p: &mut Parser, bytes: &[u8], ts: i64) {
    let td = TrackDescriptorDecoder::new(bytes);
    let Some(uuid) = td.uuid() else {
        return;
    };
    // The root descriptor (uuid 0) may ask for explicit ordering: then the
    // rank of a process's or thread's track is its sort index hint.
    let root = p.track_resolution.descriptor_bytes(0);
    let root = root.as_deref().map(TrackDescriptorDecoder::new);
    let explicit_processes = root
        .as_ref()
        .is_some_and(|r| r.process_ordering_raw() == Some(ORDERING_EXPLICIT));
    let explicit_threads = root
        .as_ref()
        .is_some_and(|r| r.thread_ordering_raw() == Some(ORDERING_EXPLICIT));
    let rank = td.sibling_order_rank();
    // Resolving first: a descriptor for a reused pid or tid makes a new
    // process or thread, and the names below go to it. The default track's
    // descriptor giving it a parent was refused (`load/state_packets.rs`).
    if uuid != 0 || td.parent_uuid().unwrap_or(0) == 0 {
        p.track_resolution
            .update_descriptor(&mut p.storage, uuid, bytes);
    }
    let (resolution, mut cx) = p.track_resolver();
    // A descriptor whose parents do not resolve names nothing, as upstream
    // drops it (its chain's fault is logged by the resolution).
    let Some(scope) = resolution.resolve_scope(&mut cx, uuid) else {
        p.storage.stats.incr("track_event_parser_errors");
        return;
    };
    let resolved = Some(scope);
    if let Some(process) = td.process() {
        let pid = i64::from(process.pid().unwrap_or(0));
        let upid = match resolved.and_then(|(_, upid)| upid) {
            Some(u) => u,
            None => p.processes.get_or_create_process(&mut p.storage, pid),
        };
        // A process's own descriptor (not a thread's naming its process)
        // is what Chrome writes with its active-process lists.
        if td.thread().is_none() {
            super::chrome_active_processes::add_descriptor(p, ts, upid);
        }
        if let (true, Some(rank)) = (explicit_processes, rank) {
            add_process_arg(
                p,
                upid,
                "process_sort_index_hint",
                ArgValue::Int(i64::from(rank)),
            );
        }
        // An empty name does not replace the system's.
        if let Some(name) = process.process_name().filter(|n| !n.is_empty()) {
            let name = p.storage.strings.intern(name);
            p.processes
                .set_process_name(&mut p.storage, upid, name, NamePriority::TrackDescriptor);
        }
        if let Some(start) = process.start_timestamp_ns().filter(|&t| t > 0) {
            if let Some(row) = p.storage.processes.get_mut(upid as usize) {
                row.start_ts.get_or_insert(start);
            }
        }
        super::chrome_process::legacy_type(p, upid, &process);
        // The labels Chrome gives a process, an array of args.
        for (i, label) in process.process_labels().enumerate() {
            let value = ArgValue::String(p.storage.strings.intern(label));
            let key = format!("chrome.process_label[{i}]");
            add_process_arg_keyed(p, upid, "chrome.process_label", &key, value);
        }
        if let Some(chrome) = td.chrome_process() {
            super::chrome_process::descriptor(p, upid, &chrome);
        }
        let cmdline: Vec<&str> = process.cmdline().collect();
        if !cmdline.is_empty() {
            let c = p.storage.strings.intern(&cmdline.join(" "));
            if let Some(row) = p.storage.processes.get_mut(upid as usize) {
                row.cmdline = c;
            }
        }
    }
    if let Some(thread) = td.thread() {
        let pid = i64::from(thread.pid().unwrap_or(0));
        let tid = thread.tid().unwrap_or(0);
        let utid = match resolved.and_then(|(utid, _)| utid) {
            Some(u) => u,
            None => p.processes.update_thread(&mut p.storage, tid, pid),
        };
        if let (true, Some(rank)) = (explicit_threads, rank) {
            add_thread_arg(
                p,
                utid,
                "thread_sort_index_hint",
                ArgValue::Int(i64::from(rank)),
            );
        }
        if let Some(name) = thread.thread_name() {
            let name = p.storage.strings.intern(name);
            p.processes
                .set_thread_name(&mut p.storage, utid, name, NamePriority::TrackDescriptor);
        }
    }
}

/// Adds one arg to a thread's arg set.
fn add_thread_arg(p: &mut Parser, utid: u32, key: &str, value: ArgValue) {
    let Some(row) = p.storage.threads.get(utid as usize) else {
        return;
    };
    let mut b = ArgSetBuilder::default();
    if let Some(set) = row.arg_set_id {
        let existing: Vec<_> = p.storage.args.set(set).copied().collect();
        for a in existing {
            b.add(a.flat_key, a.key, a.value);
        }
    }
    let k = p.storage.strings.intern(key);
    b.add(k, k, value);
    let id = p.storage.args.add_set(&b);
    if let Some(row) = p.storage.threads.get_mut(utid as usize) {
        row.arg_set_id = id;
    }
}

#[cfg(test)]
mod tests {
    use crate::Loader;
    use crate::storage::args::ArgValue;

    #[test]
    fn a_process_descriptor_gives_its_labels_and_start() {
        // track_descriptor { uuid: 1 process { pid: 5 process_name: ""
        // start_timestamp_ns: 7 process_labels: "a" process_labels: "bc" } }
        let process = [
            0x08, 0x05, 0x32, 0x00, 0x38, 0x07, 0x42, 0x01, b'a', 0x42, 0x02, b'b', b'c',
        ];
        let mut td = vec![0x08, 0x01, 0x1a, process.len() as u8];
        td.extend_from_slice(&process);
        // trusted_packet_sequence_id: 1, timestamp: 1, track_descriptor.
        let mut packet = vec![0x50, 0x01, 0x40, 0x01, 0xe2, 0x03, td.len() as u8];
        packet.extend_from_slice(&td);
        let mut trace = vec![0x0a, packet.len() as u8];
        trace.extend_from_slice(&packet);
        let mut loader = Loader::new();
        loader.push(&trace).unwrap();
        let s = loader.finish().unwrap();
        let row = s.processes.iter().find(|r| r.pid == 5).unwrap();
        assert_eq!(row.start_ts, Some(7));
        assert!(row.name.is_null(), "an empty name names nothing");
        let set = row.arg_set_id.unwrap();
        let labels: Vec<(&str, &str, &str)> = s
            .args
            .rows()
            .filter(|r| r.arg_set_id == set)
            .filter_map(|r| match r.arg.value {
                ArgValue::String(v) => Some((
                    s.strings.get(r.arg.flat_key)?,
                    s.strings.get(r.arg.key)?,
                    s.strings.get(v)?,
                )),
                _ => None,
            })
            .collect();
        assert_eq!(
            labels,
            [
                ("chrome.process_label", "chrome.process_label[0]", "a"),
                ("chrome.process_label", "chrome.process_label[1]", "bc"),
            ]
        );
    }
}
