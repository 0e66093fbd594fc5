//! TrackDescriptors in sorted order: the thread or process they describe
//! gets its name, and the descriptor's track is made (its uuid resolves to
//! it from then on).

use zerotrace_protos::protos::TrackDescriptorDecoder;

use super::Parser;
use crate::tracker::process::NamePriority;

/// Parses a TrackDescriptor packet.
pub fn parse(p: &mut Parser, bytes: &[u8], _ts: i64) {
    let td = TrackDescriptorDecoder::new(bytes);
    let Some(uuid) = td.uuid() else {
        return;
    };
    if let Some(process) = td.process() {
        let pid = i64::from(process.pid().unwrap_or(0));
        let upid = p.processes.get_or_create_process(&mut p.storage, pid);
        if let Some(name) = process.process_name() {
            let name = p.storage.strings.intern(name);
            p.processes
                .set_process_name(&mut p.storage, upid, name, NamePriority::TrackDescriptor);
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
        let utid = p.processes.update_thread(&mut p.storage, tid, pid);
        if let Some(name) = thread.thread_name() {
            let name = p.storage.strings.intern(name);
            p.processes
                .set_thread_name(&mut p.storage, utid, name, NamePriority::TrackDescriptor);
        }
    }
    super::track_event::update_descriptor(p, uuid, bytes);
    let _ = super::track_event::resolve_track(p, uuid);
}
