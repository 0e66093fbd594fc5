//! `SmapsPacket`: a process's memory mappings as /proc/pid/smaps has them,
//! one `profiler_smaps` row per entry (the path with and without a
//! trailing " (deleted)"). Packed entries are not read yet.

use protozero::Decoder;

use super::Parser;
use crate::storage::profiling_rows::SmapsRow;

/// `SmapsPacket.entries`.
const ENTRIES: u32 = 2;
/// `SmapsPacket.pid`.
const PID: u32 = 1;

fn u(msg: &[u8], id: u32) -> i64 {
    Decoder::new(msg)
        .find_last(id)
        .and_then(|f| f.as_u64().ok())
        .map_or(0, |v| v as i64)
}

fn s(msg: &[u8], id: u32) -> &str {
    Decoder::new(msg)
        .find_last(id)
        .and_then(|f| f.as_str().ok())
        .unwrap_or("")
}

/// Parses one `SmapsPacket` at `ts`.
pub fn parse(p: &mut Parser, bytes: &[u8], ts: i64) {
    let pid = u(bytes, PID);
    let upid = p.processes.get_or_create_process(&mut p.storage, pid);
    let mut d = Decoder::new(bytes);
    while let Some(field) = d.read_field() {
        let Ok(field) = field else {
            p.storage.stats.incr("smaps_parser_errors");
            return;
        };
        if field.id != ENTRIES {
            continue;
        }
        let Ok(e) = field.as_bytes() else {
            continue;
        };
        let path = s(e, 1);
        let (trimmed, is_deleted) = match path.strip_suffix(" (deleted)") {
            Some(t) => (t, true),
            None => (path, false),
        };
        let strings = &mut p.storage.strings;
        let row = SmapsRow {
            upid,
            ts,
            path: strings.intern(path),
            path_trimmed: strings.intern(trimmed),
            is_deleted,
            size_kb: u(e, 2),
            private_dirty_kb: u(e, 3),
            swap_kb: u(e, 4),
            file_name: strings.intern(s(e, 5)),
            start_address: u(e, 6),
            module_timestamp: u(e, 7),
            module_debugid: strings.intern(s(e, 8)),
            module_debug_path: strings.intern(s(e, 9)),
            protection_flags: u(e, 10),
            private_clean_resident_kb: u(e, 11),
            shared_dirty_resident_kb: u(e, 12),
            shared_clean_resident_kb: u(e, 13),
            locked_kb: u(e, 14),
            proportional_resident_kb: u(e, 15),
        };
        p.storage.profiling.smaps.push(row);
    }
}
