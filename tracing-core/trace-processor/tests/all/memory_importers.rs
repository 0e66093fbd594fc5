//! Chrome's memory-infra dumps and Vulkan memory events: hand-built
//! packets into the memory snapshot tables, `vulkan_memory_allocations`
//! and the running-total counters, as upstream's importers fill them.

use zerotrace_trace_processor::{TraceProcessor, Value};

use crate::common;
use common::{i, packet, rows, s, trace};

fn load(packets: &[Vec<u8>]) -> TraceProcessor {
    TraceProcessor::from_bytes(&trace(packets)).expect("trace")
}

fn stat(tp: &TraceProcessor, name: &str) -> i64 {
    let r = rows(
        tp,
        &format!("SELECT SUM(value) FROM stats WHERE name = '{name}'"),
    );
    match r.first().and_then(|r| r.first()) {
        Some(Value::Int(v)) => *v,
        _ => 0,
    }
}

/// `TracePacket.memory_tracker_snapshot`.
const MEMORY_TRACKER_SNAPSHOT: u32 = 73;

/// A memory node's entry: name, units, number, text.
type MemEntry<'a> = (&'a str, u32, Option<u64>, Option<&'a str>);
/// A memory node: id, path, size, entries.
type MemNode<'a> = (u64, &'a str, Option<u64>, &'a [MemEntry<'a>]);
/// A process's dump: pid, nodes, edges (owner id, owned id, importance).
type MemProcess<'a> = (i32, &'a [MemNode<'a>], &'a [(u64, u64, u32)]);

fn memory_dump(ts: u64, level: Option<u32>, processes: &[MemProcess<'_>]) -> Vec<u8> {
    packet(|p| {
        p.set_timestamp(ts);
        let mut m = p.message().begin_nested(MEMORY_TRACKER_SNAPSHOT);
        if let Some(level) = level {
            m.append_uint32(2, level);
        }
        for (pid, nodes, edges) in processes {
            let mut dump = m.begin_nested(3);
            dump.append_int32(1, *pid);
            for (id, path, size, entries) in nodes.iter() {
                let mut n = dump.begin_nested(2);
                n.append_uint64(1, *id);
                n.append_string(2, path);
                if let Some(size) = size {
                    n.append_uint64(4, *size);
                }
                for (name, units, number, text) in entries.iter() {
                    let mut e = n.begin_nested(5);
                    e.append_string(1, name);
                    e.append_uint32(2, *units);
                    if let Some(v) = number {
                        e.append_uint64(3, *v);
                    }
                    if let Some(t) = text {
                        e.append_string(4, t);
                    }
                }
            }
            for (source, target, importance) in edges.iter() {
                let mut e = dump.begin_nested(3);
                e.append_uint64(1, *source);
                e.append_uint64(2, *target);
                e.append_uint32(3, *importance);
            }
        }
    })
}

#[test]
fn memory_dumps_become_sized_node_trees_with_ownership_edges() {
    let first = memory_dump(
        100,
        Some(1),
        &[
            (
                10,
                &[
                    (1, "malloc", Some(100), &[]),
                    (
                        2,
                        "malloc/partitions",
                        Some(60),
                        &[
                            ("object_count", 2, Some(5), None),
                            ("kind", 0, None, Some("x")),
                        ],
                    ),
                    (3, "shared/seg", Some(40), &[("broken", 1, None, None)]),
                ],
                &[(3, 5, 2)],
            ),
            (
                20,
                &[(5, "global/buf", Some(40), &[]), (6, "gpu", Some(30), &[])],
                &[(6, 5, 1)],
            ),
        ],
    );
    // A second dump: its two packets make one (pid 10's first kept).
    let second_a = memory_dump(200, None, &[(10, &[(7, "v8", Some(5), &[])], &[])]);
    let second_b = memory_dump(200, None, &[(10, &[(8, "blink", Some(9), &[])], &[])]);
    let tp = load(&[first, second_a, second_b]);
    assert_eq!(
        rows(
            &tp,
            "SELECT m.id, m.timestamp, m.detail_level, t.type
             FROM memory_snapshot m JOIN track t ON m.track_id = t.id ORDER BY m.id"
        ),
        vec![
            vec![i(0), i(100), s("light"), s("legacy_chrome_global_instants")],
            vec![
                i(1),
                i(200),
                s("detailed"),
                s("legacy_chrome_global_instants")
            ],
        ]
    );
    assert_eq!(
        rows(
            &tp,
            "SELECT ps.id, ps.snapshot_id, p.pid
             FROM process_memory_snapshot ps JOIN process p USING (upid) ORDER BY ps.id"
        ),
        vec![
            vec![i(0), i(0), i(10)],
            vec![i(1), i(0), i(20)],
            vec![i(2), i(0), i(0)],
            vec![i(3), i(1), i(10)],
            vec![i(4), i(1), i(0)],
        ]
    );
    let null = Value::Null;
    assert_eq!(
        rows(
            &tp,
            "SELECT id, process_snapshot_id, parent_node_id, path, size, effective_size
             FROM memory_snapshot_node ORDER BY id"
        ),
        vec![
            vec![i(0), i(0), null.clone(), s("malloc"), i(100), i(100)],
            vec![i(1), i(0), i(0), s("malloc/<unspecified>"), i(40), i(40)],
            vec![i(2), i(0), i(0), s("malloc/partitions"), i(60), i(60)],
            vec![i(3), i(0), null.clone(), s("shared"), i(40), i(40)],
            vec![i(4), i(0), i(3), s("shared/seg"), i(40), i(40)],
            vec![i(5), i(1), null.clone(), s("gpu"), i(30), i(0)],
            vec![i(6), i(2), null.clone(), s("global"), i(40), i(0)],
            vec![i(7), i(2), i(6), s("global/buf"), i(40), i(0)],
            vec![i(8), i(3), null.clone(), s("v8"), i(5), i(5)],
        ]
    );
    assert_eq!(
        rows(
            &tp,
            "SELECT n.path, a.key, a.display_value
             FROM memory_snapshot_node n JOIN args a USING (arg_set_id) ORDER BY n.id, a.key"
        ),
        vec![
            vec![s("malloc/partitions"), s("kind.value"), s("x")],
            vec![s("malloc/partitions"), s("object_count.unit"), s("objects")],
            vec![s("malloc/partitions"), s("object_count.value"), s("5")],
        ]
    );
    assert_eq!(
        rows(
            &tp,
            "SELECT id, source_node_id, target_node_id, importance
             FROM memory_snapshot_edge ORDER BY id"
        ),
        vec![vec![i(0), i(5), i(7), i(1)], vec![i(1), i(4), i(7), i(2)]]
    );
    assert_eq!(stat(&tp, "memory_snapshot_parser_failure"), 1);
}

/// `TracePacket.vulkan_memory_event`.
const VULKAN_MEMORY_EVENT: u32 = 62;

/// A Vulkan memory event: source, operation, timestamp, pid, size, scope,
/// memory type.
fn vulkan(seq_fields: bool, e: (u32, u32, i64, u32, u64, Option<u32>, Option<u32>)) -> Vec<u8> {
    let (source, operation, ts, pid, size, scope, memory_type) = e;
    packet(|p| {
        p.set_timestamp(ts as u64);
        p.set_trusted_packet_sequence_id(9);
        if seq_fields {
            p.set_incremental_state_cleared(true);
            let mut interned = p.message().begin_nested(12);
            {
                let mut f = interned.begin_nested(5);
                f.append_uint64(1, 1);
                f.append_string(2, "vkAllocateMemory");
            }
            let mut k = interned.begin_nested(22);
            k.append_uint64(1, 2);
            k.append_string(2, "tag");
        }
        let mut m = p.message().begin_nested(VULKAN_MEMORY_EVENT);
        m.append_uint32(1, source);
        m.append_uint32(2, operation);
        m.append_int64(3, ts);
        m.append_uint32(4, pid);
        m.append_uint64(6, size);
        m.append_uint64(7, 1);
        if let Some(scope) = scope {
            m.append_uint32(8, scope);
        }
        if let Some(t) = memory_type {
            m.append_uint32(18, t);
        }
        if seq_fields {
            let mut a = m.begin_nested(9);
            a.append_uint64(1, 2);
            a.append_int64(2, 7);
        }
    })
}

#[test]
fn vulkan_memory_events_are_rows_and_running_totals() {
    let tp = load(&[
        vulkan(true, (1, 1, 10, 42, 100, Some(2), None)),
        vulkan(false, (1, 1, 20, 42, 50, Some(2), None)),
        vulkan(false, (1, 2, 30, 42, 100, Some(2), None)),
        vulkan(false, (3, 1, 40, 42, 4096, None, Some(1))),
        vulkan(false, (4, 3, 50, 42, 1024, None, Some(1))),
        vulkan(false, (1, 1, 60, 42, 5, None, None)),
    ]);
    assert_eq!(
        rows(
            &tp,
            "SELECT source, operation, timestamp, p.pid, memory_type, function_name,
                    memory_size, scope, extract_arg(v.arg_set_id, 'tag')
             FROM vulkan_memory_allocations v JOIN process p USING (upid) ORDER BY v.id"
        ),
        vec![
            vec![
                s("DRIVER"),
                s("CREATE"),
                i(10),
                i(42),
                Value::Null,
                s("vkAllocateMemory"),
                i(100),
                s("OBJECT"),
                i(7)
            ],
            vec![
                s("DRIVER"),
                s("CREATE"),
                i(20),
                i(42),
                Value::Null,
                s("vkAllocateMemory"),
                i(50),
                s("OBJECT"),
                Value::Null
            ],
            vec![
                s("DRIVER"),
                s("DESTROY"),
                i(30),
                i(42),
                Value::Null,
                s("vkAllocateMemory"),
                i(100),
                s("OBJECT"),
                Value::Null
            ],
            vec![
                s("GPU_DEVICE_MEMORY"),
                s("CREATE"),
                i(40),
                i(42),
                i(1),
                s("vkAllocateMemory"),
                i(4096),
                Value::Null,
                Value::Null
            ],
            vec![
                s("GPU_BUFFER"),
                s("BIND"),
                i(50),
                i(42),
                i(1),
                s("vkAllocateMemory"),
                i(1024),
                Value::Null,
                Value::Null
            ],
            vec![
                s("DRIVER"),
                s("CREATE"),
                i(60),
                i(42),
                Value::Null,
                s("vkAllocateMemory"),
                i(5),
                Value::Null,
                Value::Null
            ],
        ]
    );
    assert_eq!(
        rows(
            &tp,
            "SELECT t.name, t.type, c.ts, CAST(c.value AS INT)
             FROM counter c JOIN process_counter_track t ON c.track_id = t.id ORDER BY c.ts"
        ),
        vec![
            vec![
                s("vulkan.mem.driver.scope.OBJECT"),
                s("vulkan_driver_mem"),
                i(10),
                i(100)
            ],
            vec![
                s("vulkan.mem.driver.scope.OBJECT"),
                s("vulkan_driver_mem"),
                i(20),
                i(150)
            ],
            vec![
                s("vulkan.mem.driver.scope.OBJECT"),
                s("vulkan_driver_mem"),
                i(30),
                i(50)
            ],
            vec![
                s("vulkan.mem.device.memory.type.1.allocation"),
                s("vulkan_device_mem_allocation"),
                i(40),
                i(4096)
            ],
            vec![
                s("vulkan.mem.device.memory.type.1.bind"),
                s("vulkan_device_mem_bind"),
                i(50),
                i(1024)
            ],
        ]
    );
}
