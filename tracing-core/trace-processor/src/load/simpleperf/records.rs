//! The records of simpleperf's protobuf record file (its
//! `cmd_report_sample.proto`: `Record` with one of `sample`, `lost`,
//! `file`, `thread`, `meta_info`, `context_switch`) into the tables as
//! Perfetto imports them: a file record is a mapping named by the binary's
//! path (a stand-in mapping covering every address) and its symbol table;
//! a sample is a callsite built root first from its leaf-first callchain,
//! each entry a frame of its file's mapping at its address named by its
//! symbol (NULL when the symbol is unknown), and one profiler sample of
//! source `simpleperf` on its thread; a thread record names a thread and
//! puts it in its process. A sample naming a file never described is
//! dropped and counted (`simpleperf_missing_file_mapping`). Context
//! switches and lost-sample counts are read past, as upstream does.

use protozero::{Decoder, Field, FieldValue};

use crate::column_store::strings::StrId;
use crate::hash::HashMap;
use crate::parser::Parser;
use crate::storage::profiling_rows::{FrameRow, ProfilerSampleRow, TaskContextRow};
use crate::tracker::process::NamePriority;
use crate::tracker::profiler_samples::ProfilerSampleTracker;
use crate::tracker::stack_profile::MappingParams;

/// `Record`'s fields.
const SAMPLE: u32 = 1;
const FILE: u32 = 3;
const THREAD: u32 = 4;
const META_INFO: u32 = 5;
const CONTEXT_SWITCH: u32 = 6;

/// What file records said, kept for the samples.
#[derive(Debug, Default)]
pub struct Symbols {
    /// File id → its mapping and its symbols.
    files: HashMap<u32, (u32, Vec<StrId>)>,
    /// (mapping, address, name) → frame.
    frames: HashMap<(u32, u64, StrId), u32>,
    /// The meta record's event types, in order.
    pub event_types: Vec<StrId>,
}

fn fields(bytes: &[u8]) -> impl Iterator<Item = Field<'_>> {
    Decoder::new(bytes).map_while(Result::ok)
}

fn message(bytes: &[u8], id: u32) -> Option<&[u8]> {
    match Decoder::new(bytes).find_last(id)?.value {
        FieldValue::Bytes(b) => Some(b),
        _ => None,
    }
}

fn varint(bytes: &[u8], id: u32) -> Option<u64> {
    Decoder::new(bytes).find_last(id)?.as_varint().ok()
}

/// Takes a record as it is read: file and meta records go in at once;
/// the time a sample, context switch or thread record is imported at
/// (a thread record's is that of the last sample or switch), or None.
pub fn tokenize(
    p: &mut Parser,
    symbols: &mut Symbols,
    record: &[u8],
    last_ts: &mut i64,
) -> Option<i64> {
    if let Some(file) = message(record, FILE) {
        add_file(p, symbols, file);
        return None;
    }
    if let Some(meta) = message(record, META_INFO) {
        for f in fields(meta).filter(|f| f.id == 1) {
            if let Ok(s) = f.as_str() {
                let id = p.storage.strings.intern(s);
                symbols.event_types.push(id);
            }
        }
        return None;
    }
    for id in [SAMPLE, CONTEXT_SWITCH] {
        if let Some(m) = message(record, id) {
            let time_field = if id == SAMPLE { 1 } else { 2 };
            if let Some(t) = varint(m, time_field) {
                *last_ts = t as i64;
            }
            return Some(*last_ts);
        }
    }
    message(record, THREAD).map(|_| *last_ts)
}

/// A file record: its mapping and symbol table.
fn add_file(p: &mut Parser, symbols: &mut Symbols, file: &[u8]) {
    let id = varint(file, 1).map_or(0, |v| v as u32);
    let path = Decoder::new(file)
        .find_last(2)
        .and_then(|f| f.as_bytes().ok())
        .map(|b| String::from_utf8_lossy(b).into_owned())
        .unwrap_or_default();
    let mapping = p.profiling.stacks.intern_mapping(
        &mut p.storage,
        MappingParams {
            end: u64::MAX,
            name: path,
            ..MappingParams::default()
        },
    );
    let names: Vec<StrId> = fields(file)
        .filter(|f| f.id == 3)
        .map(|f| {
            let b = f.as_bytes().unwrap_or(&[]);
            p.storage.strings.intern(&String::from_utf8_lossy(b))
        })
        .collect();
    symbols.files.insert(id, (mapping, names));
}

/// Imports a kept record at its time.
pub fn import(p: &mut Parser, symbols: &mut Symbols, ts: i64, record: &[u8]) {
    if let Some(sample) = message(record, SAMPLE) {
        import_sample(p, symbols, ts, sample);
    } else if let Some(thread) = message(record, THREAD) {
        let tid = varint(thread, 1).map_or(0, |v| i64::from(v as u32));
        let pid = varint(thread, 2).map_or(0, |v| i64::from(v as u32));
        if tid != 0 && pid != 0 {
            let utid = p.processes.update_thread(&mut p.storage, tid, pid);
            let name = Decoder::new(thread)
                .find_last(3)
                .and_then(|f| f.as_bytes().ok());
            if let Some(name) = name {
                let name = p.storage.strings.intern(&String::from_utf8_lossy(name));
                p.processes
                    .set_thread_name(&mut p.storage, utid, name, NamePriority::Other);
            }
        }
    }
}

/// One callchain entry: address, file, symbol index.
struct Entry {
    vaddr: u64,
    file: u32,
    symbol: i32,
}

fn import_sample(p: &mut Parser, symbols: &mut Symbols, ts: i64, sample: &[u8]) {
    let tid = varint(sample, 2).map_or(0, |v| i64::from(v as i32 as u32));
    let utid = p.processes.get_or_create_thread(&mut p.storage, tid);
    let entries: Vec<Entry> = fields(sample)
        .filter(|f| f.id == 3)
        .filter_map(|f| f.as_bytes().ok())
        .map(|e| Entry {
            vaddr: varint(e, 1).unwrap_or(0),
            file: varint(e, 2).map_or(0, |v| v as u32),
            symbol: varint(e, 3).map_or(0, |v| v as i32),
        })
        .collect();
    let mut callsite = None;
    // Leaf first in the file; the root is depth 0.
    for (depth, e) in entries.iter().rev().enumerate() {
        let Some((mapping, names)) = symbols.files.get(&e.file) else {
            p.storage.stats.incr("simpleperf_missing_file_mapping");
            return;
        };
        let name = usize::try_from(e.symbol)
            .ok()
            .and_then(|i| names.get(i).copied())
            .unwrap_or(StrId::NULL);
        let mapping = *mapping;
        let frame = *symbols
            .frames
            .entry((mapping, e.vaddr, name))
            .or_insert_with(|| {
                let id = u32::try_from(p.storage.profiling.frames.len()).unwrap_or(u32::MAX);
                p.storage.profiling.frames.push(FrameRow {
                    name,
                    mapping,
                    rel_pc: e.vaddr as i64,
                    symbol_set_id: None,
                    deobfuscated_name: StrId::NULL,
                    frame_type: StrId::NULL,
                });
                id
            });
        let depth = u32::try_from(depth).unwrap_or(u32::MAX);
        callsite = Some(
            p.profiling
                .stacks
                .intern_callsite(&mut p.storage, callsite, frame, depth),
        );
    }
    let Some(callsite) = callsite else {
        return;
    };
    let task = p.profiling.samples.task_context(
        &mut p.storage,
        TaskContextRow {
            upid: None,
            utid: Some(utid),
            async_context_id: None,
        },
    );
    let source = p.storage.strings.intern("simpleperf");
    let row = ProfilerSampleTracker::add_sample(
        &mut p.storage,
        ProfilerSampleRow {
            ts,
            source,
            task_context_id: Some(task),
            execution_context_id: None,
            callsite_id: Some(callsite),
            unwind_error: StrId::NULL,
            session_id: None,
            counter_set_id: None,
        },
    );
    crate::load::gecko::profile_facts(p, row, callsite);
}
