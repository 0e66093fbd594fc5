//! `SmapsPacket`: a process's memory mappings as /proc/pid/smaps has them,
//! one `profiler_smaps` row per entry (the path with and without a
//! trailing " (deleted)"), from `entries` or from `packed_entries` (a
//! string table and one packed array per field, per mapping or aggregated
//! per path). Packed arrays of unequal lengths or a name outside the
//! string table count `smaps_parser_errors`, keeping the rows before.

use protozero::Decoder;

use super::Parser;
use crate::column_store::strings::StrId;
use crate::storage::profiling_rows::SmapsRow;

/// `SmapsPacket.pid`.
const PID: u32 = 1;
/// `SmapsPacket.entries`.
const ENTRIES: u32 = 2;
/// `SmapsPacket.packed_entries`.
const PACKED_ENTRIES: u32 = 3;

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

/// A path interned with and without " (deleted)".
fn path_ids(p: &mut Parser, path: &str) -> (StrId, StrId, bool) {
    let (trimmed, deleted) = match path.strip_suffix(" (deleted)") {
        Some(t) => (t, true),
        None => (path, false),
    };
    (
        p.storage.strings.intern(path),
        p.storage.strings.intern(trimmed),
        deleted,
    )
}

/// Parses one `SmapsPacket` at `ts`.
pub fn parse(p: &mut Parser, bytes: &[u8], ts: i64) {
    let pid = u(bytes, PID);
    let upid = p.processes.get_or_create_process(&mut p.storage, pid);
    if let Some(packed) = Decoder::new(bytes)
        .find_last(PACKED_ENTRIES)
        .and_then(|f| f.as_bytes().ok())
    {
        parse_packed(p, upid, ts, packed);
        return;
    }
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
        let (path, path_trimmed, is_deleted) = path_ids(p, s(e, 1));
        let strings = &mut p.storage.strings;
        let row = SmapsRow {
            upid,
            ts,
            path,
            path_trimmed,
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
            aggregate_count: 1,
            ..SmapsRow::default()
        };
        p.storage.profiling.smaps.push(row);
    }
}

/// `PackedSmaps` field numbers: the string table, then the arrays.
mod packed {
    pub const STRING_TABLE: u32 = 1;
    pub const NAME_ID: u32 = 2;
    pub const AGGREGATE_COUNT: u32 = 3;
    pub const SIZE_KB: u32 = 4;
    pub const RSS_KB: u32 = 5;
    pub const ANONYMOUS_KB: u32 = 6;
    pub const SWAP_KB: u32 = 7;
    pub const SHARED_CLEAN_KB: u32 = 8;
    pub const SHARED_DIRTY_KB: u32 = 9;
    pub const PRIVATE_CLEAN_KB: u32 = 10;
    pub const PRIVATE_DIRTY_KB: u32 = 11;
    pub const LOCKED_KB: u32 = 12;
    pub const PSS_KB: u32 = 13;
    pub const PSS_DIRTY_KB: u32 = 14;
    pub const SWAP_PSS_KB: u32 = 15;
}

/// The values of a repeated scalar field (packed or not); None when the
/// field is absent, Err when it does not decode.
fn array(msg: &[u8], id: u32) -> Result<Option<Vec<u64>>, ()> {
    let mut out: Option<Vec<u64>> = None;
    let mut d = Decoder::new(msg);
    while let Some(f) = d.read_field() {
        let f = f.map_err(|_| ())?;
        if f.id != id {
            continue;
        }
        let v = out.get_or_insert_with(Vec::new);
        if let Ok(x) = f.as_u64() {
            v.push(x);
            continue;
        }
        let mut rest = f.as_bytes().map_err(|_| ())?;
        while !rest.is_empty() {
            let (x, n) = protozero::varint::decode_varint(rest).map_err(|_| ())?;
            v.push(x);
            rest = rest.get(n..).ok_or(())?;
        }
    }
    Ok(out)
}

fn parse_packed(p: &mut Parser, upid: u32, ts: i64, msg: &[u8]) {
    let mut strings = Vec::new();
    let mut d = Decoder::new(msg);
    while let Some(Ok(f)) = d.read_field() {
        if f.id == packed::STRING_TABLE {
            let path = String::from_utf8_lossy(f.as_bytes().unwrap_or(&[])).into_owned();
            strings.push(path_ids(p, &path));
        }
    }
    let ids = [
        packed::NAME_ID,
        packed::AGGREGATE_COUNT,
        packed::SIZE_KB,
        packed::RSS_KB,
        packed::ANONYMOUS_KB,
        packed::SWAP_KB,
        packed::SHARED_CLEAN_KB,
        packed::SHARED_DIRTY_KB,
        packed::PRIVATE_CLEAN_KB,
        packed::PRIVATE_DIRTY_KB,
        packed::LOCKED_KB,
        packed::PSS_KB,
        packed::PSS_DIRTY_KB,
        packed::SWAP_PSS_KB,
    ];
    let mut arrays: Vec<Option<Vec<u64>>> = Vec::with_capacity(ids.len());
    let mut error = false;
    for id in ids {
        match array(msg, id) {
            Ok(a) => arrays.push(a),
            Err(()) => {
                error = true;
                arrays.push(None);
            }
        }
    }
    let get = |id: u32| {
        arrays
            .get((id - packed::NAME_ID) as usize)
            .and_then(Option::as_ref)
    };
    let aggregated = get(packed::AGGREGATE_COUNT).is_some();
    // Rows: as many as every array present has (the names or counts
    // always count).
    let mut n = if aggregated {
        get(packed::AGGREGATE_COUNT).map_or(0, Vec::len)
    } else {
        get(packed::NAME_ID).map_or(0, Vec::len)
    };
    for a in arrays.iter().flatten() {
        n = n.min(a.len());
    }
    let at = |id: u32, i: usize| get(id).and_then(|a| a.get(i)).map_or(0, |v| *v as i64);
    let mut rows = 0;
    for i in 0..n {
        let name_idx = if aggregated {
            i
        } else {
            get(packed::NAME_ID)
                .and_then(|a| a.get(i))
                .map_or(usize::MAX, |v| *v as usize)
        };
        let Some(&(path, path_trimmed, is_deleted)) = strings.get(name_idx) else {
            error = true;
            break;
        };
        let row = SmapsRow {
            upid,
            ts,
            path,
            path_trimmed,
            is_deleted,
            aggregate_count: if aggregated {
                at(packed::AGGREGATE_COUNT, i) as u32
            } else {
                1
            },
            size_kb: at(packed::SIZE_KB, i),
            rss_kb: at(packed::RSS_KB, i),
            anonymous_kb: at(packed::ANONYMOUS_KB, i),
            swap_kb: at(packed::SWAP_KB, i),
            shared_clean_resident_kb: at(packed::SHARED_CLEAN_KB, i),
            shared_dirty_resident_kb: at(packed::SHARED_DIRTY_KB, i),
            private_clean_resident_kb: at(packed::PRIVATE_CLEAN_KB, i),
            private_dirty_kb: at(packed::PRIVATE_DIRTY_KB, i),
            locked_kb: at(packed::LOCKED_KB, i),
            proportional_resident_kb: at(packed::PSS_KB, i),
            pss_dirty_kb: at(packed::PSS_DIRTY_KB, i),
            swap_pss_kb: at(packed::SWAP_PSS_KB, i),
            ..SmapsRow::default()
        };
        p.storage.profiling.smaps.push(row);
        rows += 1;
    }
    let sizes_match = arrays.iter().flatten().all(|a| a.len() == rows)
        && (aggregated || get(packed::NAME_ID).is_some_and(|a| a.len() == rows))
        && (!aggregated || rows == strings.len());
    if error || !sizes_match {
        p.storage.stats.incr("smaps_parser_errors");
    }
}
