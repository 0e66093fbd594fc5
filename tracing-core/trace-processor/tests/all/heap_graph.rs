//! Java heap graphs end to end on small traces written with protozero: a
//! dump split over packets (ids as deltas, sizes and field names left to
//! the classes, superclass fields, roots, the zygote heap as VM-internal
//! roots, reachability), its deobfuscation, a truncated dump, and the
//! `experimental_flamegraph` operator over it.

use protozero::Message;
use zerotrace_protos::protos::TracePacket;
use zerotrace_trace_processor::{TraceProcessor, Value};

use crate::common;
use common::{i, rows, s, trace};

const NULL: Value = Value::Null;

/// One packet's bytes, written by `f`.
fn packet(f: impl FnOnce(&mut Message<'_>)) -> Vec<u8> {
    let mut w = protozero::HeapWriter::new();
    {
        let mut p = TracePacket::from_message(w.root());
        f(p.message());
    }
    w.finish().expect("heap writer")
}

fn interned(m: &mut Message<'_>, field: u32, iid: u64, text: &str) {
    let mut e = m.begin_nested(field);
    e.append_uint64(1, iid);
    e.append_bytes(2, text.as_bytes());
}

/// (id, class name, location, object size, superclass, kind, fields).
type TypeSpec<'a> = (u64, &'a str, Option<u64>, u64, u64, u64, &'a [u64]);

fn types(g: &mut Message<'_>, specs: &[TypeSpec<'_>]) {
    for (id, name, location, size, sup, kind, fields) in specs {
        let mut t = g.begin_nested(9);
        t.append_uint64(1, *id);
        if let Some(l) = location {
            t.append_uint64(2, *l);
        }
        t.append_bytes(3, name.as_bytes());
        t.append_uint64(4, *size);
        if *sup != 0 {
            t.append_uint64(5, *sup);
        }
        for f in *fields {
            t.append_uint64(6, *f);
        }
        t.append_uint64(7, *kind);
    }
}

/// An object: (id or delta, is delta, type, self size, heap type,
/// referred objects, their field ids).
type ObjSpec<'a> = (u64, bool, u64, u64, Option<u64>, &'a [u64], &'a [u64]);

fn objects(g: &mut Message<'_>, specs: &[ObjSpec<'_>]) {
    for (id, delta, ty, size, heap, refs, fields) in specs {
        let mut o = g.begin_nested(2);
        o.append_uint64(if *delta { 7 } else { 1 }, *id);
        o.append_uint64(2, *ty);
        o.append_uint64(3, *size);
        for f in *fields {
            o.append_uint64(4, *f);
        }
        for r in *refs {
            o.append_uint64(5, *r);
        }
        if let Some(h) = heap {
            o.append_uint64(9, *h);
        }
    }
}

fn root(g: &mut Message<'_>, root_type: u64, ids: &[u64]) {
    let mut r = g.begin_nested(7);
    for id in ids {
        r.append_uint64(1, *id);
    }
    r.append_uint64(2, root_type);
}

/// A dump of pid 2 (upid 1: 0 is the idle process) at 10 in two packets: a root `a` (obfuscated, its
/// field `a.b` naming its reference) referring to a `Foo` whose size the
/// class gives, an unreachable `Foo`, a zygote `Parcel`, and the class
/// objects of `Sub` and `Super` linked by `java.lang.Class.superClass`.
fn dump() -> Vec<Vec<u8>> {
    let first = packet(|p| {
        p.append_uint64(8, 10);
        p.append_uint32(10, 9);
        let mut g = p.begin_nested(56);
        g.append_int32(1, 2);
        objects(
            &mut g,
            &[
                (0x10, false, 1, 64, Some(1), &[0x11], &[]),
                (1, true, 2, 0, None, &[], &[]),
                (1, true, 2, 0, None, &[], &[]),
                (0x20, false, 3, 16, Some(2), &[], &[]),
            ],
        );
        g.append_uint64(5, 1);
        g.append_uint64(6, 0);
    });
    let second = packet(|p| {
        p.append_uint64(8, 10);
        p.append_uint32(10, 9);
        let mut g = p.begin_nested(56);
        g.append_int32(1, 2);
        objects(
            &mut g,
            &[
                (0x30, false, 4, 8, Some(1), &[0x31], &[7]),
                (0x31, false, 5, 8, Some(1), &[], &[]),
            ],
        );
        types(
            &mut g,
            &[
                (1, "a", Some(1), 64, 0, 1, &[5]),
                (2, "Foo", None, 32, 0, 1, &[]),
                (3, "android.os.Parcel", None, 16, 0, 1, &[]),
                (4, "java.lang.Class<Sub>", None, 8, 0, 5, &[]),
                (5, "java.lang.Class<Super>", None, 8, 0, 5, &[]),
                (6, "Sub", None, 8, 0, 1, &[]),
                (7, "Super", None, 8, 0, 1, &[]),
            ],
        );
        interned(&mut g, 4, 5, "Foo a.b");
        interned(&mut g, 4, 7, "java.lang.Class java.lang.Class.superClass");
        interned(&mut g, 8, 1, "/data/app/com.example.app-1/base.apk");
        root(&mut g, 3, &[0x10]);
        g.append_uint64(5, 0);
        g.append_uint64(6, 1);
    });
    vec![first, second]
}

fn mapping() -> Vec<u8> {
    packet(|p| {
        let mut m = p.begin_nested(64);
        m.append_bytes(1, b"com.example.app");
        let mut c = m.begin_nested(3);
        c.append_bytes(1, b"a");
        c.append_bytes(2, b"com.example.Real");
        let mut f = c.begin_nested(3);
        f.append_bytes(1, b"b");
        f.append_bytes(2, b"child");
    })
}

pub(crate) fn load(packets: Vec<Vec<u8>>) -> TraceProcessor {
    TraceProcessor::from_bytes(&trace(&packets)).expect("trace loads")
}

#[test]
fn a_dump_over_two_packets_becomes_objects_classes_and_references() {
    let mut packets = Vec::new();
    packets.extend(dump());
    let tp = load(packets);
    assert_eq!(
        rows(
            &tp,
            "SELECT o.id, o.upid, o.graph_sample_ts, o.self_size, o.reference_set_id, \
             o.reachable, o.heap_type, c.name, o.root_type \
             FROM heap_graph_object o JOIN heap_graph_class c ON o.type_id = c.id ORDER BY o.id"
        ),
        vec![
            vec![
                i(0),
                i(1),
                i(10),
                i(64),
                i(0),
                i(1),
                s("HEAP_TYPE_APP"),
                s("a"),
                s("ROOT_JAVA_FRAME")
            ],
            vec![
                i(1),
                i(1),
                i(10),
                i(32),
                NULL,
                i(1),
                s("HEAP_TYPE_APP"),
                s("Foo"),
                NULL
            ],
            vec![
                i(2),
                i(1),
                i(10),
                i(32),
                NULL,
                i(0),
                s("HEAP_TYPE_APP"),
                s("Foo"),
                NULL
            ],
            vec![
                i(3),
                i(1),
                i(10),
                i(16),
                NULL,
                i(1),
                s("HEAP_TYPE_ZYGOTE"),
                s("android.os.Parcel"),
                s("ROOT_VM_INTERNAL")
            ],
            vec![
                i(4),
                i(1),
                i(10),
                i(8),
                i(1),
                i(0),
                s("HEAP_TYPE_APP"),
                s("java.lang.Class<Sub>"),
                NULL
            ],
            vec![
                i(5),
                i(1),
                i(10),
                i(8),
                NULL,
                i(0),
                s("HEAP_TYPE_APP"),
                s("java.lang.Class<Super>"),
                NULL
            ],
        ]
    );
    assert_eq!(
        rows(
            &tp,
            "SELECT id, reference_set_id, owner_id, owned_id, field_name, field_type_name \
             FROM heap_graph_reference ORDER BY id"
        ),
        vec![
            vec![i(0), i(0), i(0), i(1), s("a.b"), s("Foo")],
            vec![
                i(1),
                i(1),
                i(4),
                i(5),
                s("java.lang.Class.superClass"),
                s("java.lang.Class")
            ],
        ]
    );
    assert_eq!(
        rows(
            &tp,
            "SELECT c.name, c.location, c.kind, s.name FROM heap_graph_class c \
             LEFT JOIN heap_graph_class s ON c.superclass_id = s.id ORDER BY c.id"
        ),
        vec![
            vec![
                s("a"),
                s("/data/app/com.example.app-1/base.apk"),
                s("KIND_NORMAL"),
                NULL
            ],
            vec![s("Foo"), NULL, s("KIND_NORMAL"), NULL],
            vec![s("android.os.Parcel"), NULL, s("KIND_NORMAL"), NULL],
            vec![s("java.lang.Class<Sub>"), NULL, s("KIND_CLASS"), NULL],
            vec![s("java.lang.Class<Super>"), NULL, s("KIND_CLASS"), NULL],
            vec![s("Sub"), NULL, s("KIND_NORMAL"), s("Super")],
            vec![s("Super"), NULL, s("KIND_NORMAL"), NULL],
        ]
    );
    assert_eq!(
        rows(&tp, "SELECT ts, upid, truncated, heap_size FROM heap_graph"),
        vec![vec![i(10), i(1), i(0), NULL]]
    );
}

#[test]
fn mappings_name_the_dumps_classes_and_fields() {
    let mut packets = Vec::new();
    packets.extend(dump());
    packets.push(mapping());
    let tp = load(packets);
    assert_eq!(
        rows(
            &tp,
            "SELECT name, deobfuscated_name FROM heap_graph_class \
             WHERE deobfuscated_name IS NOT NULL"
        ),
        vec![vec![s("a"), s("com.example.Real")]]
    );
    assert_eq!(
        rows(
            &tp,
            "SELECT field_name, deobfuscated_field_name FROM heap_graph_reference \
             WHERE deobfuscated_field_name IS NOT NULL"
        ),
        vec![vec![s("a.b"), s("com.example.Real.child")]]
    );
}

#[test]
fn a_dump_missing_its_first_packet_is_truncated_and_counted() {
    let lone = packet(|p| {
        p.append_uint64(8, 10);
        p.append_uint32(10, 9);
        let mut g = p.begin_nested(56);
        g.append_int32(1, 2);
        g.append_uint64(6, 1);
    });
    let tp = load(vec![lone]);
    assert_eq!(
        rows(&tp, "SELECT truncated FROM heap_graph"),
        vec![vec![i(1)]]
    );
    assert_eq!(
        rows(
            &tp,
            "SELECT sum(value) FROM stats WHERE name = 'heap_graph_missing_packet'"
        ),
        vec![vec![i(1)]]
    );
}

#[test]
fn the_flamegraph_hangs_objects_under_the_first_object_reaching_them() {
    let mut packets = dump();
    packets.push(mapping());
    let tp = load(packets);
    assert_eq!(
        rows(
            &tp,
            "SELECT id, depth, name, map_name, count, cumulative_count, size, cumulative_size, \
             parent_id FROM experimental_flamegraph('graph', 10, NULL, 1, NULL, NULL)"
        ),
        vec![
            vec![
                i(0),
                i(0),
                s("com.example.Real [ROOT_JAVA_FRAME]"),
                s("JAVA"),
                i(1),
                i(2),
                i(64),
                i(96),
                NULL
            ],
            vec![
                i(1),
                i(1),
                s("Foo"),
                s("JAVA"),
                i(1),
                i(1),
                i(32),
                i(32),
                i(0)
            ],
            vec![
                i(2),
                i(0),
                s("android.os.Parcel [ROOT_VM_INTERNAL]"),
                s("JAVA"),
                i(1),
                i(1),
                i(16),
                i(16),
                NULL
            ],
        ]
    );
    assert_eq!(
        rows(
            &tp,
            "SELECT name, cumulative_size FROM experimental_flamegraph('graph', 10, NULL, 1, NULL, 'foo')"
        ),
        vec![
            vec![s("com.example.Real [ROOT_JAVA_FRAME]"), i(96)],
            vec![s("Foo"), i(32)],
        ]
    );
    let err = tp
        .query("SELECT * FROM experimental_flamegraph('graph', NULL, '=10', 1, NULL, NULL)")
        .expect_err("no ts");
    assert!(
        err.to_string().contains("ts and upid must be present"),
        "{err}"
    );
}

#[test]
fn a_truncated_dump_without_roots_has_an_error_frame() {
    let lone = packet(|p| {
        p.append_uint64(8, 10);
        p.append_uint32(10, 9);
        let mut g = p.begin_nested(56);
        g.append_int32(1, 2);
        g.append_uint64(6, 1);
    });
    let tp = load(vec![lone]);
    assert_eq!(
        rows(
            &tp,
            "SELECT depth, name, count, size FROM experimental_flamegraph('graph', \
             (SELECT ts FROM heap_graph), NULL, (SELECT upid FROM heap_graph), NULL, NULL)"
        ),
        vec![vec![
            i(0),
            s("ERROR: INCOMPLETE GRAPH (try increasing buffer size)"),
            i(1),
            i(1)
        ]]
    );
}

#[test]
fn the_heap_graph_modules_fold_the_dump_into_trees() {
    let tp = load(dump());
    assert_eq!(
        rows(
            &tp,
            "INCLUDE PERFETTO MODULE android.memory.heap_graph.dominator_tree;
             SELECT id, idom_id, dominated_obj_count, dominated_size_bytes, depth
             FROM heap_graph_dominator_tree ORDER BY id"
        ),
        vec![
            vec![i(0), NULL, i(2), i(96), i(1)],
            vec![i(1), i(0), i(1), i(32), i(2)],
            vec![i(3), NULL, i(1), i(16), i(1)],
        ]
    );
    assert_eq!(
        rows(
            &tp,
            "INCLUDE PERFETTO MODULE android.memory.heap_graph.class_tree;
             SELECT id, parent_id FROM _heap_graph_object_min_depth_tree ORDER BY id"
        ),
        vec![vec![i(0), NULL], vec![i(1), i(0)], vec![i(3), NULL]]
    );
    assert_eq!(
        rows(
            &tp,
            "INCLUDE PERFETTO MODULE android.memory.heap_graph.class_summary_tree;
             SELECT t.name, p.name, t.root_type, t.self_count, t.self_size, t.cumulative_count,
               t.cumulative_size
             FROM android_heap_graph_class_summary_tree t
             LEFT JOIN android_heap_graph_class_summary_tree p ON t.parent_id = p.id
             ORDER BY t.name"
        ),
        vec![
            vec![s("Foo"), s("a"), NULL, i(1), i(32), i(1), i(32)],
            vec![s("a"), NULL, s("ROOT_JAVA_FRAME"), i(1), i(64), i(2), i(96)],
            vec![
                s("android.os.Parcel"),
                NULL,
                s("ROOT_VM_INTERNAL"),
                i(1),
                i(16),
                i(1),
                i(16)
            ],
        ]
    );
    assert_eq!(
        rows(
            &tp,
            "INCLUDE PERFETTO MODULE android.memory.heap_graph.dominator_class_tree;
             SELECT t.name, p.name, t.self_count FROM _heap_graph_dominator_class_tree t
             LEFT JOIN _heap_graph_dominator_class_tree p ON t.parent_id = p.id
             ORDER BY t.name"
        ),
        vec![
            vec![s("Foo"), s("a"), i(1)],
            vec![s("a"), NULL, i(1)],
            vec![s("android.os.Parcel"), NULL, i(1)],
        ]
    );
    assert_eq!(
        rows(
            &tp,
            "INCLUDE PERFETTO MODULE android.memory.heap_graph.oome;
             SELECT count(*) FROM android_heap_graph_java_oome_details"
        ),
        vec![vec![i(0)]]
    );
}

#[test]
fn heap_graph_stats_sum_each_dump_and_its_reachable_part() {
    let tp = load(dump());
    assert_eq!(
        rows(
            &tp,
            "INCLUDE PERFETTO MODULE android.memory.heap_graph.heap_graph_stats;
             SELECT upid, graph_sample_ts, total_heap_size, total_obj_count,
               reachable_heap_size, reachable_obj_count, art_bytes_allocated
             FROM android_heap_graph_stats"
        ),
        vec![vec![i(1), i(10), i(160), i(6), i(112), i(3), NULL]]
    );
}

#[test]
fn the_class_aggregation_counts_dominated_objects_once_per_class() {
    let tp = load(dump());
    assert_eq!(
        rows(
            &tp,
            "INCLUDE PERFETTO MODULE android.memory.heap_graph.heap_graph_class_aggregation;
             SELECT type_name, obj_count, size_bytes, reachable_obj_count,
               dominated_obj_count, dominated_size_bytes
             FROM android_heap_graph_class_aggregation ORDER BY type_id"
        ),
        vec![
            vec![s("a"), i(1), i(64), i(1), i(2), i(96)],
            vec![s("Foo"), i(2), i(64), i(1), i(1), i(32)],
            vec![s("android.os.Parcel"), i(1), i(16), i(1), i(1), i(16)],
            vec![s("java.lang.Class<Sub>"), i(1), i(8), i(0), i(0), i(0)],
            vec![s("java.lang.Class<Super>"), i(1), i(8), i(0), i(0), i(0)],
        ]
    );
}

/// A dump of pid 2 at 10 for the object and bitmap modules: a root `Node`
/// (100 bytes) holding a `Node` (10 bytes, holding a 30-byte `Node`) and a
/// 20-byte Bitmap, heap-stored by pid 2 and received from pid 3's
/// ashmem one; and an unreachable 7-byte Bitmap that was never sent.
/// Pid 3 is `sender`.
pub(crate) fn tree_dump() -> Vec<Vec<u8>> {
    let sender = packet(|p| {
        p.append_uint64(8, 1);
        let mut tree = p.begin_nested(2);
        let mut proc_ = tree.begin_nested(1);
        proc_.append_int32(1, 3);
        proc_.append_int32(2, 1);
        proc_.append_string(3, "sender");
    });
    let dump = packet(|p| {
        p.append_uint64(8, 10);
        p.append_uint32(10, 9);
        let mut g = p.begin_nested(56);
        g.append_int32(1, 2);
        objects(
            &mut g,
            &[
                (0x10, false, 1, 100, None, &[0x11, 0x12], &[]),
                (0x11, false, 1, 10, None, &[0x13], &[]),
            ],
        );
        let bitmap = |g: &mut Message<'_>, id: u64, size: u64, fields: &[(u32, u64)]| {
            let mut o = g.begin_nested(2);
            o.append_uint64(1, id);
            o.append_uint64(2, 2);
            o.append_uint64(3, size);
            for &(f, v) in fields {
                o.append_uint64(f, v);
            }
        };
        bitmap(
            &mut g,
            0x12,
            20,
            &[(11, 21_000_005), (12, 32_000_007), (13, 100), (14, 50)],
        );
        objects(&mut g, &[(0x13, false, 1, 30, None, &[], &[])]);
        bitmap(&mut g, 0x14, 7, &[(11, 21_000_006), (12, u64::MAX)]);
        types(
            &mut g,
            &[
                (1, "Node", None, 0, 0, 1, &[]),
                (2, "android.graphics.Bitmap", None, 0, 0, 1, &[]),
            ],
        );
        root(&mut g, 3, &[0x10]);
        g.append_uint64(6, 0);
    });
    vec![sender, dump]
}

#[test]
fn bitmaps_decode_their_ids_and_find_the_sending_process() {
    let tp = load(tree_dump());
    assert_eq!(
        rows(
            &tp,
            "INCLUDE PERFETTO MODULE android.memory.heap_graph.bitmap;
             SELECT b.object_id, p.pid, b.graph_sample_ts, b.width, b.height, b.density,
               b.bitmap_id, b.bitmap_pid, b.bitmap_storage_type, b.source_id, b.source_pid,
               b.source_storage_type, sp.pid, b.source_process_name, b.self_size,
               b.native_size, b.reachable
             FROM heap_graph_bitmaps b
             JOIN process p USING (upid)
             LEFT JOIN process sp ON sp.upid = b.source_upid
             ORDER BY b.object_id"
        ),
        vec![
            vec![
                i(2),
                i(2),
                i(10),
                i(100),
                i(50),
                NULL,
                i(21_000_005),
                i(2),
                s("heap"),
                i(32_000_007),
                i(3),
                s("ashmem"),
                i(3),
                s("sender"),
                i(20),
                i(0),
                i(1)
            ],
            vec![
                i(4),
                i(2),
                i(10),
                NULL,
                NULL,
                NULL,
                i(21_000_006),
                i(2),
                s("heap"),
                NULL,
                NULL,
                NULL,
                NULL,
                NULL,
                i(7),
                i(0),
                i(0)
            ],
        ]
    );
}

#[test]
fn class_descendants_follow_the_superclasses_down() {
    let tp = load(dump());
    assert_eq!(
        rows(
            &tp,
            "INCLUDE PERFETTO MODULE android.memory.heap_graph.class_relationship;
             SELECT c.name, d.ancestor_class_name, d.ancestor_class_id = a.id
             FROM android_heap_graph_class_find_descendants!(
               (SELECT id FROM heap_graph_class WHERE name IN ('Super', 'Foo'))
             ) d
             JOIN heap_graph_class c ON c.id = d.id
             JOIN heap_graph_class a ON a.name = d.ancestor_class_name
             ORDER BY d.ancestor_class_name, c.name"
        ),
        vec![
            vec![s("Foo"), s("Foo"), i(1)],
            vec![s("Sub"), s("Super"), i(1)],
            vec![s("Super"), s("Super"), i(1)],
        ]
    );
}

#[test]
fn object_totals_are_what_the_aggregating_scan_up_the_tree_gives() {
    let tp = load(tree_dump());
    let totals = "INCLUDE PERFETTO MODULE android.memory.heap_graph.object_tree;
         SELECT id, cumulative_size, cumulative_native_size, cumulative_count
         FROM _heap_graph_object_tree_aggregation ORDER BY id";
    // 1 holds 3 (30 bytes, more than its own 10); 0 holds three objects,
    // 60 bytes, less than its own 100; 4 is in no tree.
    assert_eq!(
        rows(&tp, totals),
        vec![
            vec![i(0), i(100), i(0), i(3)],
            vec![i(1), i(30), i(0), i(1)],
            vec![i(2), i(20), i(0), i(1)],
            vec![i(3), i(30), i(0), i(1)],
            vec![i(4), i(7), i(0), i(1)],
        ]
    );
    // The same numbers as graphs.scan's aggregating scan gives, run up the
    // shortest-path tree from every object's own values.
    let scanned = rows(
        &tp,
        "INCLUDE PERFETTO MODULE graphs.scan;
         SELECT id, max(cumulative_size), max(cumulative_native_size), max(cumulative_count)
         FROM _graph_aggregating_scan!(
           (SELECT id AS source_node_id, parent_id AS dest_node_id
            FROM _heap_graph_object_min_depth_tree WHERE parent_id IS NOT NULL),
           (SELECT id, self_size AS cumulative_size, native_size AS cumulative_native_size,
              1 AS cumulative_count FROM heap_graph_object),
           (cumulative_size, cumulative_native_size, cumulative_count),
           (SELECT id, sum(cumulative_size) AS cumulative_size,
              sum(cumulative_native_size) AS cumulative_native_size,
              sum(cumulative_count) AS cumulative_count
            FROM $table GROUP BY id))
         GROUP BY id ORDER BY id",
    );
    assert_eq!(rows(&tp, totals), scanned);
    // The references out of the root's class path (the three `Node`s),
    // largest totals first.
    assert_eq!(
        rows(
            &tp,
            "SELECT class_name, total_cumulative_size, cumulative_count, id
             FROM _heap_graph_outgoing_references_agg!(
               _heap_graph_path_hashes,
               (SELECT path_hash FROM _heap_graph_path_hashes WHERE id = 0))
             ORDER BY total_cumulative_size DESC, id"
        ),
        vec![
            vec![s("Node"), i(30), i(1), i(1)],
            vec![s("Node"), i(30), i(1), i(3)],
            vec![s("android.graphics.Bitmap"), i(20), i(1), i(2)],
        ]
    );
    assert_eq!(
        rows(
            &tp,
            "SELECT class_name, field_type_name IS NULL, total_cumulative_size, id
             FROM _heap_graph_incoming_references_agg!(
               _heap_graph_path_hashes,
               (SELECT path_hash FROM _heap_graph_path_hashes WHERE id = 2))"
        ),
        vec![vec![s("Node"), i(1), i(20), i(0)]]
    );
    assert_eq!(
        rows(
            &tp,
            "SELECT id, outgoing_reference_count FROM _heap_graph_object_references_agg!(
               _heap_graph_path_hashes,
               (SELECT path_hash FROM _heap_graph_path_hashes WHERE id = 0))"
        ),
        vec![vec![i(0), i(2)], vec![i(1), i(1)]]
    );
}

#[test]
fn every_object_of_a_class_node_has_that_nodes_path_hash() {
    let tp = load(tree_dump());
    let q = |sql: &str| {
        let includes = "INCLUDE PERFETTO MODULE android.memory.heap_graph.dominator_class_tree;
             INCLUDE PERFETTO MODULE android.memory.heap_graph.helpers;";
        rows(&tp, &format!("{includes} {sql}"))
    };
    let dominators = "(SELECT id, idom_id AS parent_id FROM _raw_heap_graph_dominator_tree)";
    for (tree, hashes, objects) in [
        (
            "_heap_graph_class_tree",
            "_heap_graph_path_hashes",
            "_heap_graph_object_min_depth_tree",
        ),
        (
            "_heap_graph_dominator_class_tree",
            "_heap_graph_dominator_path_hashes",
            dominators,
        ),
    ] {
        // The objects of each class node, counted by path hash, are the
        // node's self_count; the parent path is the parent node's.
        let got = q(&format!(
            "INCLUDE PERFETTO MODULE android.memory.heap_graph.class_tree;
             SELECT t.name, t.self_count, count(h.id),
               coalesce(max(h.parent_path_hash) = p.path_hash_stable, t.parent_id IS NULL)
             FROM {tree} t
             JOIN {hashes} h ON h.path_hash = t.path_hash_stable
             LEFT JOIN {tree} p ON p.id = t.parent_id
             GROUP BY t.id ORDER BY t.name"
        ));
        let want = vec![
            vec![s("Node"), i(3), i(3), i(1)],
            vec![s("android.graphics.Bitmap"), i(1), i(1), i(1)],
        ];
        assert_eq!(got, want, "{tree}");
        // The helpers' steps, run on the same object tree, give the same tree.
        let got = q(&format!(
            "CREATE OR REPLACE PERFETTO TABLE _paths AS SELECT * FROM \
             _heap_graph_path_hash_aggregate!(_heap_graph_type_path_hash!({objects}));
             SELECT * FROM _heap_graph_path_hashes_to_class_tree!(_paths)"
        ));
        assert_eq!(
            got,
            q(&format!("SELECT * FROM {tree} ORDER BY id")),
            "{tree}"
        );
    }
}
