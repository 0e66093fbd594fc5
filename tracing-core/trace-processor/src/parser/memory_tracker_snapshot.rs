//! Chrome's memory-infra dumps (`TracePacket.memory_tracker_snapshot`,
//! field 73) into the memory snapshot tables, as upstream's memory tracker
//! snapshot parser fills them.
//!
//! Each packet holds some processes' dumps; the packets of one time make
//! one global dump (a process dumped twice keeps its first dump, the
//! level of detail is the last packet's). When the time changes, and at
//! the end of the trace, the dump's graph is built and sized
//! (`memory_graph.rs`) and emitted: a `memory_snapshot` row on the global
//! instants' track, a `process_memory_snapshot` per process (by pid order)
//! and one for the shared nodes (pid 0), each process's nodes depth first
//! with their parents, sizes and other entries as args, then the edges
//! between emitted nodes. An entry with neither a number nor a string
//! counts `memory_snapshot_parser_failure`, as does (here only) a node
//! whose path nests deeper than [`memory_graph::MAX_PATH_DEPTH`].

use std::collections::BTreeMap;

use protozero::Decoder;

use super::Parser;
use super::importer::{Importer, Input};
use super::memory_graph::{self, EntryValue, Graph, NodeIdx, RawNode, RawProcess};
use crate::storage::args::{ArgSetBuilder, ArgValue};
use crate::tables::memory_snapshot::{
    MemorySnapshotEdgeRow, MemorySnapshotNodeRow, MemorySnapshotRow, ProcessMemorySnapshotRow,
};

/// `TracePacket.memory_tracker_snapshot`.
const MEMORY_TRACKER_SNAPSHOT: u32 = 73;

/// The payload this module imports.
pub const IMPORTERS: &[(u32, Importer)] = &[(MEMORY_TRACKER_SNAPSHOT, import)];

/// The dump being gathered: the packets of one time.
#[derive(Debug, Default)]
pub struct MemorySnapshotState {
    processes: BTreeMap<i64, RawProcess>,
    ts: i64,
    level: &'static str,
}

fn fields(bytes: &[u8]) -> impl Iterator<Item = protozero::Field<'_>> {
    Decoder::new(bytes).map_while(Result::ok)
}

fn import(p: &mut Parser, input: &Input<'_>) {
    if !p.memory_snapshots.processes.is_empty() && input.ts != p.memory_snapshots.ts {
        emit(p);
    }
    let mut level = "detailed";
    let mut dumps = Vec::new();
    for f in fields(input.bytes) {
        match f.id {
            2 => {
                level = match f.as_u32().unwrap_or(0) {
                    1 => "light",
                    2 => "background",
                    _ => "detailed",
                }
            }
            3 => dumps.extend(f.as_bytes().ok()),
            _ => {}
        }
    }
    for dump in dumps {
        let (pid, process) = read_process(p, dump);
        p.memory_snapshots.processes.entry(pid).or_insert(process);
    }
    p.memory_snapshots.ts = input.ts;
    p.memory_snapshots.level = level;
}

/// A process's dump: its pid and nodes by path (the first of each path
/// and of each owner's edge kept).
fn read_process(p: &mut Parser, dump: &[u8]) -> (i64, RawProcess) {
    let mut pid = 0i64;
    let mut process = RawProcess::default();
    for f in fields(dump) {
        match f.id {
            1 => pid = i64::from(f.as_i32().unwrap_or(0)),
            2 => {
                let Ok(node) = f.as_bytes() else { continue };
                let (path, raw) = read_node(p, node);
                if path.split('/').filter(|k| !k.is_empty()).count() > memory_graph::MAX_PATH_DEPTH
                {
                    p.storage.stats.incr("memory_snapshot_parser_failure");
                    continue;
                }
                process.nodes.entry(path).or_insert(raw);
            }
            3 => {
                let Ok(edge) = f.as_bytes() else { continue };
                let (mut source, mut target, mut importance) = (0u64, 0u64, 0u32);
                for e in fields(edge) {
                    match e.id {
                        1 => source = e.as_u64().unwrap_or(0),
                        2 => target = e.as_u64().unwrap_or(0),
                        3 => importance = e.as_u32().unwrap_or(0),
                        _ => {}
                    }
                }
                process
                    .edges
                    .entry(source)
                    .or_insert((target, importance as i32));
            }
            _ => {}
        }
    }
    (pid, process)
}

fn read_node(p: &mut Parser, node: &[u8]) -> (String, RawNode) {
    let mut path = String::new();
    let mut raw = RawNode::default();
    let mut size = None;
    let mut entries = Vec::new();
    for f in fields(node) {
        match f.id {
            1 => raw.id = f.as_u64().unwrap_or(0),
            2 => path = String::from_utf8_lossy(f.as_bytes().unwrap_or_default()).into_owned(),
            3 => raw.weak = f.as_bool().unwrap_or(false),
            4 => size = f.as_u64().ok(),
            5 => entries.extend(f.as_bytes().ok()),
            _ => {}
        }
    }
    if let Some(value) = size {
        let size = EntryValue::Scalar { bytes: true, value };
        raw.entries.push((memory_graph::SIZE.to_owned(), size));
    }
    for entry in entries {
        let (mut name, mut units, mut number, mut text) = ("", 0u32, None, None);
        for e in fields(entry) {
            match e.id {
                1 => name = e.as_str().unwrap_or(""),
                2 => units = e.as_u32().unwrap_or(0),
                3 => number = e.as_u64().ok(),
                4 => text = e.as_bytes().ok(),
                _ => {}
            }
        }
        let value = match (number, text) {
            (Some(value), _) => EntryValue::Scalar {
                bytes: units == 1,
                value,
            },
            (None, Some(t)) => EntryValue::Text(String::from_utf8_lossy(t).into_owned()),
            (None, None) => {
                p.storage.stats.incr("memory_snapshot_parser_failure");
                continue;
            }
        };
        raw.entries.push((name.to_owned(), value));
    }
    (path, raw)
}

/// Builds the gathered dump's graph and emits its rows.
fn emit(p: &mut Parser) {
    let state = std::mem::take(&mut p.memory_snapshots);
    let graph = Graph::build(&state.processes);
    let track_id = {
        let (resolution, mut cx) = p.track_resolver();
        resolution.global_instants(&mut cx)
    };
    let snapshot_id = p.storage.memory_snapshots.snapshots.len() as u32;
    let detail_level = p.storage.strings.intern(state.level);
    p.storage
        .memory_snapshots
        .snapshots
        .push(MemorySnapshotRow {
            timestamp: state.ts,
            track_id,
            detail_level,
        });
    let mut emitted: BTreeMap<u64, u32> = BTreeMap::new();
    let trees = graph
        .processes
        .iter()
        .map(|(&pid, &root)| (pid, root))
        .chain([(0, graph.shared_root)]);
    for (pid, root) in trees {
        let upid = p.processes.get_or_create_process(&mut p.storage, pid);
        let process_snapshot_id = p.storage.memory_snapshots.processes.len() as u32;
        p.storage
            .memory_snapshots
            .processes
            .push(ProcessMemorySnapshotRow { snapshot_id, upid });
        emit_tree(p, &graph, root, process_snapshot_id, &mut emitted);
    }
    // Upstream lists the edges newest first.
    for edge in graph.edges.iter().rev() {
        let source = emitted.get(&graph.nodes[edge.source].id);
        let target = emitted.get(&graph.nodes[edge.target].id);
        let (Some(&source_node_id), Some(&target_node_id)) = (source, target) else {
            continue;
        };
        p.storage
            .memory_snapshots
            .edges
            .push(MemorySnapshotEdgeRow {
                source_node_id,
                target_node_id,
                importance: edge.priority as u32,
            });
    }
}

/// Emits a tree's nodes depth first (its root, which is no real node,
/// left out), each child by name, recording the first row of each node id.
fn emit_tree(
    p: &mut Parser,
    graph: &Graph,
    root: NodeIdx,
    process_snapshot_id: u32,
    emitted: &mut BTreeMap<u64, u32>,
) {
    // (node, its path, its parent's row)
    let mut stack: Vec<(NodeIdx, String, Option<u32>)> = graph.nodes[root]
        .children
        .iter()
        .rev()
        .map(|(name, &c)| (c, name.clone(), None))
        .collect();
    while let Some((n, path, parent_node_id)) = stack.pop() {
        let node = &graph.nodes[n];
        let mut row = MemorySnapshotNodeRow {
            process_snapshot_id,
            parent_node_id,
            path: p.storage.strings.intern(&path),
            ..Default::default()
        };
        let mut b = ArgSetBuilder::default();
        for (name, value) in &node.entries {
            match value {
                EntryValue::Scalar { bytes, value } => {
                    let v = *value as i64;
                    if name == memory_graph::SIZE {
                        row.size = v;
                    } else if name == memory_graph::EFFECTIVE_SIZE {
                        row.effective_size = v;
                    } else {
                        let k = p.storage.strings.intern(&format!("{name}.value"));
                        b.add(k, k, ArgValue::Int(v));
                        let k = p.storage.strings.intern(&format!("{name}.unit"));
                        let unit =
                            p.storage
                                .strings
                                .intern(if *bytes { "bytes" } else { "objects" });
                        b.add(k, k, ArgValue::String(unit));
                    }
                }
                EntryValue::Text(text) => {
                    let k = p.storage.strings.intern(&format!("{name}.value"));
                    let text = p.storage.strings.intern(text);
                    b.add(k, k, ArgValue::String(text));
                }
            }
        }
        row.arg_set_id = p.storage.args.add_set(&b);
        let id = p.storage.memory_snapshots.nodes.len() as u32;
        p.storage.memory_snapshots.nodes.push(row);
        emitted.entry(node.id).or_insert(id);
        for (name, &c) in node.children.iter().rev() {
            stack.push((c, format!("{path}/{name}"), Some(id)));
        }
    }
}

/// The end of the trace: the last dump gathered is emitted.
pub fn finish(p: &mut Parser) {
    if !p.memory_snapshots.processes.is_empty() {
        emit(p);
    }
}
