//! The global memory graph of a Chrome memory-infra dump, and the sizes
//! computed over it, as upstream's memory tracker graph processor computes
//! them (`parser/memory_tracker_snapshot.rs` emits the result as rows).
//!
//! Each process's allocator nodes are placed in a tree by their `/`
//! separated paths (the missing parents made implicitly), nodes under
//! `global/` in the one shared tree; a node with an id another process
//! already created is the same node. Ownership edges (an owner node and the
//! node it owns, with an importance) join the trees. Sizes are then
//! computed in upstream's passes: each node's size is the largest of its
//! own, the sum of its descendants' (a descendant owning a node under the
//! same root counting nothing) and its largest owner's, any remainder going
//! to an `<unspecified>` child; then the not-owned and not-owning
//! sub-sizes, the ownership coefficients splitting owned memory among the
//! owners by importance, their products down the trees and along the
//! ownership chains, and the effective sizes.
//!
//! Nodes live in one arena and refer to each other by index. Children are
//! kept sorted by name and entries by key (upstream's ordered maps), which
//! fixes the order the rows are emitted in. A graph nests only as deep as
//! its paths, and paths deeper than [`MAX_PATH_DEPTH`] parts are refused,
//! so the recursive walks stay shallow; ownership cycles, on which
//! upstream's traversal would not end, are walked once.

use std::collections::BTreeMap;

/// Most `/`-separated parts a node's path may have.
pub const MAX_PATH_DEPTH: usize = 64;

/// A node's entry value.
#[derive(Debug, Clone, PartialEq)]
pub enum EntryValue {
    /// A number, with its units (`true`: bytes, `false`: objects).
    Scalar {
        /// Whether the value is in bytes (else a count of objects).
        bytes: bool,
        /// The value.
        value: u64,
    },
    /// A string.
    Text(String),
}

/// An index into the graph's node arena.
pub type NodeIdx = usize;

/// An ownership edge: the owner (`source`) owns `target`'s memory.
#[derive(Debug, Clone, Copy)]
pub struct Edge {
    /// The owner.
    pub source: NodeIdx,
    /// The owned node.
    pub target: NodeIdx,
    /// The edge's importance.
    pub priority: i32,
}

/// One node of the graph.
#[derive(Debug, Default)]
pub struct Node {
    /// The allocator node's id (0: none, an implicit node).
    pub id: u64,
    /// The parent (None for a root).
    pub parent: Option<NodeIdx>,
    /// Children by name.
    pub children: BTreeMap<String, NodeIdx>,
    /// Entries by name.
    pub entries: BTreeMap<String, EntryValue>,
    /// The edge this node owns through, an index into the graph's edges.
    pub owns_edge: Option<usize>,
    /// The edges of the nodes owning this one.
    pub owned_by_edges: Vec<usize>,
    weak: bool,
    explicit: bool,
    not_owning_sub_size: u64,
    not_owned_sub_size: u64,
    owning_coefficient: f64,
    owned_coefficient: f64,
    cumulative_owning_coefficient: f64,
    cumulative_owned_coefficient: f64,
}

impl Node {
    fn new(parent: Option<NodeIdx>) -> Self {
        Node {
            parent,
            owning_coefficient: 1.0,
            owned_coefficient: 1.0,
            cumulative_owning_coefficient: 1.0,
            cumulative_owned_coefficient: 1.0,
            ..Node::default()
        }
    }

    fn size(&self) -> Option<u64> {
        match self.entries.get(SIZE) {
            Some(EntryValue::Scalar { value, .. }) => Some(*value),
            _ => None,
        }
    }

    fn add_entry(&mut self, name: &str, value: EntryValue) {
        self.entries.entry(name.to_owned()).or_insert(value);
    }
}

/// The `size` entry's name.
pub const SIZE: &str = "size";
/// The `effective_size` entry's name.
pub const EFFECTIVE_SIZE: &str = "effective_size";

/// One allocator node as a process's dump gives it.
#[derive(Debug, Clone, Default)]
pub struct RawNode {
    /// Its id.
    pub id: u64,
    /// Whether it is weak.
    pub weak: bool,
    /// Its entries in the order read (`size` first when given).
    pub entries: Vec<(String, EntryValue)>,
}

/// One process's dump: its nodes by path and its edges by owner id (the
/// first of each kept).
#[derive(Debug, Clone, Default)]
pub struct RawProcess {
    /// Nodes by absolute path.
    pub nodes: BTreeMap<String, RawNode>,
    /// Edges by owner id: (owned id, importance).
    pub edges: BTreeMap<u64, (u64, i32)>,
}

/// The graph: every process's tree and the shared one.
#[derive(Debug, Default)]
pub struct Graph {
    /// Every node.
    pub nodes: Vec<Node>,
    /// Every edge, in the order added.
    pub edges: Vec<Edge>,
    /// Each process's root, by pid.
    pub processes: BTreeMap<i64, NodeIdx>,
    /// The shared (`global/`) tree's root.
    pub shared_root: NodeIdx,
    by_id: BTreeMap<u64, NodeIdx>,
}

impl Graph {
    /// The graph of the processes' dumps, sizes computed.
    pub fn build(raw: &BTreeMap<i64, RawProcess>) -> Self {
        let mut g = Graph {
            nodes: vec![Node::new(None)],
            shared_root: 0,
            ..Graph::default()
        };
        for (&pid, process) in raw {
            let root = g.new_node(None);
            g.processes.insert(pid, root);
            g.collect(process, root);
        }
        for process in raw.values() {
            for (&source, &(target, priority)) in &process.edges {
                let (Some(&s), Some(&t)) = (g.by_id.get(&source), g.by_id.get(&target)) else {
                    continue;
                };
                let e = g.edges.len();
                g.edges.push(Edge {
                    source: s,
                    target: t,
                    priority,
                });
                g.nodes[s].owns_edge = Some(e);
                g.nodes[t].owned_by_edges.push(e);
            }
        }
        g.calculate_sizes();
        g
    }

    fn new_node(&mut self, parent: Option<NodeIdx>) -> NodeIdx {
        self.nodes.push(Node::new(parent));
        self.nodes.len() - 1
    }

    fn collect(&mut self, process: &RawProcess, root: NodeIdx) {
        for (path, raw) in &process.nodes {
            let global = path.starts_with("global/");
            let node = match self.by_id.get(&raw.id) {
                Some(&n) if raw.id != 0 => n,
                _ => {
                    let tree = if global { self.shared_root } else { root };
                    self.create_node(tree, raw.id, path, raw.weak)
                }
            };
            for (name, value) in &raw.entries {
                self.nodes[node].add_entry(name, value.clone());
            }
        }
    }

    fn create_node(&mut self, root: NodeIdx, id: u64, path: &str, weak: bool) -> NodeIdx {
        let mut current = root;
        for key in path.split('/').filter(|k| !k.is_empty()) {
            current = match self.nodes[current].children.get(key) {
                Some(&c) => c,
                None => {
                    let c = self.new_node(Some(current));
                    self.nodes[current].children.insert(key.to_owned(), c);
                    c
                }
            };
        }
        let node = &mut self.nodes[current];
        node.weak = weak;
        node.explicit = true;
        node.id = id;
        if id != 0 {
            self.by_id.entry(id).or_insert(current);
        }
        current
    }

    /// The roots in the order the traversals start from them: the shared
    /// root first, then the processes by descending pid (a stack, so the
    /// last pushed is visited first).
    fn roots(&self) -> Vec<NodeIdx> {
        let mut roots: Vec<NodeIdx> = self.processes.values().rev().copied().collect();
        roots.push(self.shared_root);
        roots
    }

    fn children_rev(&self, n: NodeIdx) -> impl Iterator<Item = NodeIdx> + '_ {
        self.nodes[n].children.values().rev().copied()
    }

    fn owners_rev(&self, n: NodeIdx) -> impl Iterator<Item = NodeIdx> + '_ {
        self.nodes[n]
            .owned_by_edges
            .iter()
            .rev()
            .map(|&e| self.edges[e].source)
    }

    /// Every node after its children and owners.
    fn post_order(&self) -> Vec<NodeIdx> {
        let mut visited = vec![false; self.nodes.len()];
        let mut on_path = vec![false; self.nodes.len()];
        let mut path: Vec<NodeIdx> = Vec::new();
        let mut stack = self.roots();
        let mut out = Vec::with_capacity(self.nodes.len());
        while let Some(n) = stack.pop() {
            if visited[n] {
                continue;
            }
            if path.last() == Some(&n) {
                visited[n] = true;
                on_path[n] = false;
                path.pop();
                out.push(n);
                continue;
            }
            if on_path[n] {
                // An ownership cycle: walked once.
                continue;
            }
            path.push(n);
            on_path[n] = true;
            stack.push(n);
            stack.extend(self.children_rev(n));
            stack.extend(self.owners_rev(n));
        }
        out
    }

    /// Every node after its parent and the node it owns.
    fn pre_order(&self) -> Vec<NodeIdx> {
        let mut visited = vec![false; self.nodes.len()];
        let mut stack = self.roots();
        let mut out = Vec::with_capacity(self.nodes.len());
        while let Some(n) = stack.pop() {
            if visited[n] {
                continue;
            }
            let node = &self.nodes[n];
            if node
                .owns_edge
                .is_some_and(|e| !visited[self.edges[e].target])
            {
                continue;
            }
            if node.parent.is_some_and(|p| !visited[p]) {
                continue;
            }
            stack.extend(self.children_rev(n));
            stack.extend(self.owners_rev(n));
            visited[n] = true;
            out.push(n);
        }
        out
    }

    fn is_descendant_of(&self, mut n: NodeIdx, ancestor: NodeIdx) -> bool {
        loop {
            if n == ancestor {
                return true;
            }
            match self.nodes[n].parent {
                Some(p) => n = p,
                None => return false,
            }
        }
    }

    fn aggregate_descendant(&self, root: NodeIdx, d: NodeIdx) -> Option<u64> {
        let node = &self.nodes[d];
        if let Some(e) = node.owns_edge {
            if self.is_descendant_of(self.edges[e].target, root) {
                return Some(0);
            }
        }
        if node.children.is_empty() {
            return Some(node.size().unwrap_or(0));
        }
        let mut size: Option<u64> = None;
        for &c in node.children.values() {
            let c_size = self.aggregate_descendant(root, c);
            size = match size {
                Some(s) => Some(s.wrapping_add(c_size.unwrap_or(0))),
                None => c_size,
            };
        }
        size
    }

    fn owner_size(&self, e: usize) -> Option<u64> {
        self.nodes[self.edges[e].source].size()
    }

    fn calculate_size(&mut self, n: NodeIdx) {
        let node_size = self.nodes[n].size();
        let mut aggregated: Option<u64> = None;
        for &c in self.nodes[n].children.values() {
            let c_size = self.aggregate_descendant(n, c);
            aggregated = match aggregated {
                Some(s) => Some(s.wrapping_add(c_size.unwrap_or(0))),
                None => c_size,
            };
        }
        let mut max_owner: Option<u64> = None;
        for &e in &self.nodes[n].owned_by_edges {
            let o_size = self.owner_size(e);
            max_owner = match max_owner {
                Some(m) => Some(m.max(o_size.unwrap_or(0))),
                None => o_size,
            };
        }
        self.nodes[n].entries.remove(SIZE);
        if node_size.is_none() && aggregated.is_none() && max_owner.is_none() {
            return;
        }
        let aggregated = aggregated.unwrap_or(0);
        let size = node_size
            .unwrap_or(0)
            .max(aggregated)
            .max(max_owner.unwrap_or(0));
        let scalar = |value| EntryValue::Scalar { bytes: true, value };
        self.nodes[n].add_entry(SIZE, scalar(size));
        let unaccounted = size - aggregated;
        if unaccounted > 0 && !self.nodes[n].children.is_empty() {
            const UNSPECIFIED: &str = "<unspecified>";
            if !self.nodes[n].children.contains_key(UNSPECIFIED) {
                let c = self.new_node(Some(n));
                self.nodes[n].children.insert(UNSPECIFIED.to_owned(), c);
                self.nodes[c].add_entry(SIZE, scalar(unaccounted));
            }
        }
    }

    fn calculate_sub_sizes(&mut self, n: NodeIdx) {
        let Some(size) = self.nodes[n].size() else {
            return;
        };
        if self.nodes[n].children.is_empty() {
            let node = &mut self.nodes[n];
            node.not_owning_sub_size = node.not_owning_sub_size.wrapping_add(size);
            node.not_owned_sub_size = node.not_owned_sub_size.wrapping_add(size);
            return;
        }
        let (mut not_owning, mut not_owned) = (0u64, 0u64);
        for &c in self.nodes[n].children.values() {
            let child = &self.nodes[c];
            if child.owns_edge.is_none() {
                not_owning = not_owning.wrapping_add(child.not_owning_sub_size);
            }
        }
        for &c in self.nodes[n].children.values() {
            let child = &self.nodes[c];
            if child.owned_by_edges.is_empty() {
                not_owned = not_owned.wrapping_add(child.not_owned_sub_size);
                continue;
            }
            let largest_owner = child
                .owned_by_edges
                .iter()
                .map(|&e| self.owner_size(e).unwrap_or(0))
                .max()
                .unwrap_or(0);
            let child_size = child.size().unwrap_or(0);
            not_owned = not_owned.wrapping_add(child_size.wrapping_sub(largest_owner));
        }
        let node = &mut self.nodes[n];
        node.not_owning_sub_size = node.not_owning_sub_size.wrapping_add(not_owning);
        node.not_owned_sub_size = node.not_owned_sub_size.wrapping_add(not_owned);
    }

    fn calculate_ownership_coefficient(&mut self, n: NodeIdx) {
        if self.nodes[n].size().is_none() || self.nodes[n].owned_by_edges.is_empty() {
            return;
        }
        // Owners by decreasing importance, then increasing not-owning
        // sub-size (a stable sort, as the order of equal owners matters).
        let mut owners: Vec<Edge> = self.nodes[n]
            .owned_by_edges
            .iter()
            .map(|&e| self.edges[e])
            .collect();
        owners.sort_by(|a, b| {
            b.priority.cmp(&a.priority).then_with(|| {
                let sa = self.nodes[a.source].not_owning_sub_size;
                let sb = self.nodes[b.source].not_owning_sub_size;
                sa.cmp(&sb)
            })
        });
        let mut already_attributed = 0u64;
        let mut i = 0;
        while i < owners.len() {
            let priority = owners[i].priority;
            let next = owners[i..]
                .iter()
                .position(|e| e.priority < priority)
                .map_or(owners.len(), |p| i + p);
            let mut remaining = next - i;
            let mut attributed = 0f64;
            for owner in &owners[i..next] {
                let not_owning = self.nodes[owner.source].not_owning_sub_size;
                if not_owning > already_attributed {
                    attributed += (not_owning - already_attributed) as f64 / remaining as f64;
                    already_attributed = not_owning;
                }
                if not_owning != 0 {
                    self.nodes[owner.source].owning_coefficient = attributed / not_owning as f64;
                }
                remaining -= 1;
            }
            i = next;
        }
        let not_owned = self.nodes[n].not_owned_sub_size;
        if not_owned != 0 {
            let remainder = not_owned.wrapping_sub(already_attributed) as f64;
            self.nodes[n].owned_coefficient = remainder / not_owned as f64;
        }
    }

    fn calculate_cumulative_coefficients(&mut self, n: NodeIdx) {
        if self.nodes[n].size().is_none() {
            return;
        }
        let parent = self.nodes[n].parent;
        let mut owned = self.nodes[n].owned_coefficient;
        if let Some(p) = parent {
            owned *= self.nodes[p].cumulative_owned_coefficient;
        }
        let owning = match (self.nodes[n].owns_edge, parent) {
            (Some(e), _) => {
                let target = self.edges[e].target;
                self.nodes[n].owning_coefficient * self.nodes[target].cumulative_owning_coefficient
            }
            (None, Some(p)) => self.nodes[p].cumulative_owning_coefficient,
            (None, None) => 1.0,
        };
        let node = &mut self.nodes[n];
        node.cumulative_owned_coefficient = owned;
        node.cumulative_owning_coefficient = owning;
    }

    fn calculate_effective_size(&mut self, n: NodeIdx) {
        let Some(size) = self.nodes[n].size() else {
            self.nodes[n].entries.remove(EFFECTIVE_SIZE);
            return;
        };
        let node = &self.nodes[n];
        let effective = if node.children.is_empty() {
            (size as f64 * node.cumulative_owning_coefficient * node.cumulative_owned_coefficient)
                as u64
        } else {
            let mut sum = 0u64;
            for &c in node.children.values() {
                let child = &self.nodes[c];
                if child.size().is_none() {
                    continue;
                }
                if let Some(EntryValue::Scalar { value, .. }) = child.entries.get(EFFECTIVE_SIZE) {
                    sum = sum.wrapping_add(*value);
                }
            }
            sum
        };
        self.nodes[n].add_entry(
            EFFECTIVE_SIZE,
            EntryValue::Scalar {
                bytes: true,
                value: effective,
            },
        );
    }

    fn calculate_sizes(&mut self) {
        for n in self.post_order() {
            self.calculate_size(n);
        }
        for n in self.post_order() {
            self.calculate_sub_sizes(n);
        }
        for n in self.post_order() {
            self.calculate_ownership_coefficient(n);
        }
        for n in self.pre_order() {
            self.calculate_cumulative_coefficients(n);
        }
        for n in self.post_order() {
            self.calculate_effective_size(n);
        }
    }
}
