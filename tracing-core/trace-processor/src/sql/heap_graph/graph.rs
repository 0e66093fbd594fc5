//! The Java heap graph as the graph algorithms need it: every object of
//! every dump with its dump, sizes, root kind, heap and class name, and its
//! outgoing references as edges (the referent of a weak, finalizer or
//! phantom reference left out, as upstream's `_excluded_refs`), read once
//! from the frozen `heap_graph_*` tables; and the shortest-path tree from
//! the roots (upstream's `_heap_graph_object_min_depth_tree`).

use std::collections::VecDeque;

use crate::column_store::table::{Cell, Table};

fn col(t: &Table, name: &str) -> Option<usize> {
    t.columns.iter().position(|c| c.name == name)
}

fn int(t: &Table, row: usize, c: Option<usize>) -> Option<i64> {
    match t.cell(row, c?) {
        Cell::Int(v) => Some(v),
        _ => None,
    }
}

fn text(t: &Table, row: usize, c: Option<usize>) -> Option<String> {
    match t.cell(row, c?) {
        Cell::Str(s) => Some(s.to_owned()),
        _ => None,
    }
}

/// Every object of every dump, by id.
#[derive(Debug, Default)]
pub(crate) struct ObjectGraph {
    /// The dump's process.
    pub upid: Vec<i64>,
    /// The dump's time.
    pub ts: Vec<i64>,
    /// The object's class (`type_id`).
    pub type_id: Vec<i64>,
    /// `self_size`.
    pub self_size: Vec<i64>,
    /// `native_size`.
    pub native_size: Vec<i64>,
    /// `reachable`.
    pub reachable: Vec<bool>,
    /// `root_type`.
    pub root_type: Vec<Option<String>>,
    /// `heap_type`.
    pub heap_type: Vec<Option<String>>,
    /// The class's name as shown: deobfuscated when known, else its name
    /// ("" when none).
    pub class_name: Vec<String>,
    /// The class's own (possibly obfuscated) name ("" when none).
    pub raw_class_name: Vec<String>,
    /// Outgoing references kept, each list sorted by the object referred to.
    pub edges: Vec<Vec<usize>>,
}

impl ObjectGraph {
    /// Reads the graph from `__intrinsic_heap_graph_object`, `_class` and
    /// `_reference`.
    pub(crate) fn read(objects: &Table, classes: &Table, references: &Table) -> Self {
        let o = objects;
        let (o_upid, o_ts, o_type, o_root, o_heap, o_self, o_native, o_refs, o_reach) = (
            col(o, "upid"),
            col(o, "graph_sample_ts"),
            col(o, "type_id"),
            col(o, "root_type"),
            col(o, "heap_type"),
            col(o, "self_size"),
            col(o, "native_size"),
            col(o, "reference_set_id"),
            col(o, "reachable"),
        );
        let c = classes;
        let (c_name, c_deobf, c_kind) =
            (col(c, "name"), col(c, "deobfuscated_name"), col(c, "kind"));
        let r = references;
        let (r_set, r_owned, r_field) = (
            col(r, "reference_set_id"),
            col(r, "owned_id"),
            col(r, "field_name"),
        );
        let n = o.len;
        let mut g = ObjectGraph::default();
        for row in 0..n {
            let class = int(o, row, o_type).and_then(|t| usize::try_from(t).ok());
            let raw = class.and_then(|cl| text(c, cl, c_name));
            let shown = class
                .and_then(|cl| text(c, cl, c_deobf))
                .or_else(|| raw.clone());
            g.upid.push(int(o, row, o_upid).unwrap_or(0));
            g.ts.push(int(o, row, o_ts).unwrap_or(0));
            g.type_id.push(int(o, row, o_type).unwrap_or(-1));
            g.self_size.push(int(o, row, o_self).unwrap_or(0));
            g.native_size.push(int(o, row, o_native).unwrap_or(0));
            g.reachable.push(int(o, row, o_reach).unwrap_or(0) != 0);
            g.root_type.push(text(o, row, o_root));
            g.heap_type.push(text(o, row, o_heap));
            g.class_name.push(shown.unwrap_or_default());
            g.raw_class_name.push(raw.unwrap_or_default());
            let weak = class.is_some_and(|cl| {
                matches!(
                    text(c, cl, c_kind).as_deref(),
                    Some(
                        "KIND_WEAK_REFERENCE"
                            | "KIND_FINALIZER_REFERENCE"
                            | "KIND_PHANTOM_REFERENCE"
                    )
                )
            });
            let mut out = Vec::new();
            if let Some(set) = int(o, row, o_refs) {
                let mut ref_row = usize::try_from(set).unwrap_or(usize::MAX);
                while ref_row < r.len && int(r, ref_row, r_set) == Some(set) {
                    let excluded = weak
                        && text(r, ref_row, r_field).as_deref()
                            == Some("java.lang.ref.Reference.referent");
                    if let Some(owned) =
                        int(r, ref_row, r_owned).and_then(|v| usize::try_from(v).ok())
                    {
                        if !excluded && owned < n {
                            out.push(owned);
                        }
                    }
                    ref_row += 1;
                }
            }
            out.sort_unstable();
            g.edges.push(out);
        }
        g
    }

    /// How many objects.
    pub(crate) fn len(&self) -> usize {
        self.edges.len()
    }

    /// Each object's parent in one breadth-first walk from every root
    /// (roots by class name, then id; references in the order of the
    /// objects they point to): `Some(None)` for a root, `None` when no
    /// root reaches the object.
    pub(crate) fn min_depth_tree(&self) -> Vec<Option<Option<usize>>> {
        let n = self.len();
        let mut roots: Vec<(&str, usize)> = (0..n)
            .filter(|&i| self.root_type[i].is_some())
            .map(|i| (self.raw_class_name[i].as_str(), i))
            .collect();
        roots.sort();
        let mut parent: Vec<Option<Option<usize>>> = vec![None; n];
        let mut queue = VecDeque::new();
        for &(_, i) in &roots {
            if parent[i].is_none() {
                parent[i] = Some(None);
                queue.push_back(i);
            }
        }
        while let Some(node) = queue.pop_front() {
            for &next in &self.edges[node] {
                if parent[next].is_none() {
                    parent[next] = Some(Some(node));
                    queue.push_back(next);
                }
            }
        }
        parent
    }
}
