//! `android.memory.heap_graph.experimental_flamegraph`: the frames a heap
//! dump's flamegraph is built from, and the dump's state, on the dump
//! `heap_graph::tree_dump` writes (a root `Node` holding a `Node` that
//! holds a third, and a Bitmap; an unreachable Bitmap).

use zerotrace_trace_processor::Value;

use crate::common::{i, rows, s};
use crate::heap_graph::{load, tree_dump};

#[test]
fn each_object_on_the_shortest_path_tree_is_a_java_frame() {
    let tp = load(tree_dump());
    let upid = "(SELECT upid FROM process WHERE pid = 2)";
    assert_eq!(
        rows(
            &tp,
            &format!(
                "INCLUDE PERFETTO MODULE android.memory.heap_graph.experimental_flamegraph;
                 SELECT * FROM _experimental_flamegraph_heap_graph_frames!({upid}, 10)
                 ORDER BY id"
            )
        ),
        vec![
            vec![
                i(0),
                Value::Null,
                s("Node [ROOT_JAVA_FRAME]"),
                s("JAVA"),
                i(1),
                i(100),
                i(0),
                i(0)
            ],
            vec![i(2), i(0), s("Node"), s("JAVA"), i(1), i(10), i(0), i(0)],
            vec![
                i(4),
                i(0),
                s("android.graphics.Bitmap"),
                s("JAVA"),
                i(1),
                i(20),
                i(0),
                i(0)
            ],
            vec![i(6), i(2), s("Node"), s("JAVA"), i(1), i(30), i(0), i(0)],
        ]
    );
    assert_eq!(
        rows(
            &tp,
            &format!(
                "SELECT * FROM _experimental_flamegraph_heap_graph_state!({upid}, 10)
                 UNION ALL
                 SELECT * FROM _experimental_flamegraph_heap_graph_state!({upid}, 11)"
            )
        ),
        vec![vec![i(1), i(0)], vec![i(0), Value::Null]]
    );
}
