-- android.memory.heap_graph.excluded_refs, written for zerotrace: the
-- references a heap graph walk must not follow because they do not keep
-- their object alive (the referent field of weak, finalizer and phantom
-- references).
--   _ref_type_ids   (type_id): the classes of such references.
--   _excluded_refs  (id): the heap_graph_reference rows of their referents.

CREATE PERFETTO TABLE _ref_type_ids AS
SELECT id AS type_id
FROM heap_graph_class
WHERE kind IN ('KIND_WEAK_REFERENCE', 'KIND_FINALIZER_REFERENCE', 'KIND_PHANTOM_REFERENCE')
ORDER BY type_id;

CREATE PERFETTO TABLE _excluded_refs AS
SELECT r.id
FROM heap_graph_object o
JOIN _ref_type_ids t ON t.type_id = o.type_id
JOIN heap_graph_reference r ON r.reference_set_id = o.reference_set_id
WHERE r.field_name = 'java.lang.ref.Reference.referent'
ORDER BY r.id;
