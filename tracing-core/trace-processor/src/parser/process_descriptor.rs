//! The legacy `TracePacket.process_descriptor` (field 43), which Chrome
//! wrote before track descriptors carried a process: read as upstream
//! reads a track descriptor's process. The process gets its name (an
//! empty one does not replace the system's), its start time when it has
//! none, the name of its legacy Chrome process type and its labels
//! (`chrome.process_label[i]`), and the descriptor counts for Chrome's
//! active-process bookkeeping at the packet's time.

use zerotrace_protos::protos::ProcessDescriptorDecoder;

use super::Parser;
use super::importer::{Importer, Input};
use super::process_tree::add_process_arg_keyed;
use crate::storage::args::ArgValue;
use crate::tracker::process::NamePriority;

/// `TracePacket.process_descriptor`.
const PROCESS_DESCRIPTOR: u32 = 43;

/// The payload this module imports.
pub const IMPORTERS: &[(u32, Importer)] = &[(PROCESS_DESCRIPTOR, import)];

fn import(p: &mut Parser, input: &Input<'_>) {
    let process = ProcessDescriptorDecoder::new(input.bytes);
    // The pid is read as an unsigned 32-bit number.
    let pid = i64::from(process.pid().unwrap_or(0) as u32);
    let upid = p.processes.get_or_create_process(&mut p.storage, pid);
    super::chrome_active_processes::add_descriptor(p, input.ts, upid);
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
    for (i, label) in process.process_labels().enumerate() {
        let value = ArgValue::String(p.storage.strings.intern(label));
        let key = format!("chrome.process_label[{i}]");
        add_process_arg_keyed(p, upid, "chrome.process_label", &key, value);
    }
}
