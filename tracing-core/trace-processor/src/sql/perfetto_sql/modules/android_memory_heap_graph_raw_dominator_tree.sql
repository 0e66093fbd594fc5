-- android.memory.heap_graph.raw_dominator_tree, written for zerotrace:
-- each reachable Java object's immediate dominator (the last object all
-- paths from the roots to it go through; NULL for the objects only the
-- roots as a whole keep alive), from zerotrace's native operator.
--   _raw_heap_graph_dominator_tree  (id, idom_id)

INCLUDE PERFETTO MODULE android.memory.heap_graph.excluded_refs;

CREATE PERFETTO TABLE _raw_heap_graph_dominator_tree AS
SELECT id, idom_id
FROM __intrinsic_heap_graph_dominator_tree()
ORDER BY id;
