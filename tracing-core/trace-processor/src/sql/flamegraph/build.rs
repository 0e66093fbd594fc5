//! The flamegraph algorithm: from a source tree (`source.rs`) and a
//! resolved configuration, the merged tree of frames. Rows whose frames
//! are equal (same name and grouping values) under the same merged parent
//! become one node; HIDE_FRAME folds a frame into its caller, HIDE_STACK
//! drops every stack through a frame, SHOW_STACK keeps only the stacks
//! through a frame of every such filter. The downward half (TOP_DOWN,
//! PIVOT, FROM_FRAME) holds callees under callers, the upward half
//! (BOTTOM_UP, PIVOT) callers under callees; each value column becomes a
//! self and a cumulative column, and nodes whose every cumulative value
//! is zero are left out. Aggregate columns are `aggregate.rs`'s, the
//! presentation geometry `layout.rs`'s.

use std::collections::HashMap;

use super::aggregate;
use super::config::View;
use super::error::FlamegraphError;
pub(crate) use super::resolve::{OutColumn, Resolved, resolve};
use super::routing::{EMPTY_PATH, HIDE_STACK_BIT, Num, PathState, Routing, add_at, at};
use super::source::{Column, NONE, Source};

/// What a frame matched.
#[derive(Debug, Clone, Copy, Default)]
struct Matches {
    show: u64,
    view: bool,
    hide_stack: bool,
    hide_frame: bool,
}

/// Merged nodes keyed by (parent node, frame), in creation order (a
/// parent before its children).
#[derive(Debug, Default)]
pub(crate) struct Interner {
    parent: Vec<u32>,
    representative: Vec<u32>,
    index: HashMap<(u32, u32), u32>,
}

impl Interner {
    fn intern(&mut self, parent: u32, frame: u32, row: u32) -> u32 {
        let next = self.parent.len() as u32;
        let (parents, reps) = (&mut self.parent, &mut self.representative);
        *self.index.entry((parent, frame)).or_insert_with(|| {
            parents.push(parent);
            reps.push(row);
            next
        })
    }

    fn len(&self) -> usize {
        self.parent.len()
    }
}

fn propagate<T: Num>(parent: &[u32], cumulative: &mut [T]) -> Result<(), FlamegraphError> {
    for node in (0..parent.len()).rev() {
        let p = at(parent, node as u32, NONE);
        if p != NONE {
            let v = at(cumulative, node as u32, T::default());
            add_at(cumulative, p, v)?;
        }
    }
    Ok(())
}

/// The built tree.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Built {
    /// Each node's depth: 1, 2, ... downward; -1, -2, ... upward.
    pub depth: Vec<i64>,
    /// Each node's parent node, [`NONE`] for a root.
    pub parent: Vec<u32>,
    /// Column names: name, the grouping columns, `self_X` and
    /// `cumulative_X` per value column, the aggregates.
    pub names: Vec<String>,
    /// The columns.
    pub columns: Vec<OutColumn>,
}

/// A value column's self and cumulative values over the combined nodes.
enum Metric {
    Int(Vec<i64>, Vec<i64>),
    Real(Vec<f64>, Vec<f64>),
}

impl Metric {
    fn nonzero(&self, node: usize) -> bool {
        match self {
            Metric::Int(_, c) => c.get(node).is_some_and(|v| *v != 0),
            Metric::Real(_, c) => c.get(node).is_some_and(|v| !v.is_zero()),
        }
    }
}

struct Builder<'a, 's> {
    source: &'a Source,
    cfg: &'a Resolved<'s>,
    frame: Vec<u32>,
    states: Vec<PathState>,
    pattern_match: Vec<bool>,
    required: u64,
    down: Interner,
    down_node: Vec<u32>,
    up: Interner,
    paths: Vec<(u32, u32)>,
    anchors: Vec<(u32, (u32, u32))>,
    constituents: Vec<(u32, u32)>,
}

#[derive(Hash, PartialEq, Eq, Clone)]
enum Part {
    Null,
    Int(i64),
    Real(u64),
    Str(u32),
}

fn part(c: &Column, row: usize) -> Part {
    match c {
        Column::Int(v) => v.get(row).copied().flatten().map_or(Part::Null, Part::Int),
        Column::Real(v) => v
            .get(row)
            .copied()
            .flatten()
            .map_or(Part::Null, |x| Part::Real(x.to_bits())),
        Column::Str(v) => v.get(row).copied().flatten().map_or(Part::Null, Part::Str),
        Column::Null => Part::Null,
    }
}

impl<'a, 's> Builder<'a, 's> {
    /// Each row's frame: equal ids for equal name and grouping values.
    fn frames(&mut self) {
        let rows = self.source.rows;
        if self.cfg.grouping.is_empty() {
            self.frame = (0..rows)
                .map(|r| at(self.cfg.name, r as u32, None).map_or(0, |i| i.saturating_add(1)))
                .collect();
            return;
        }
        let mut index: HashMap<Vec<Part>, u32> = HashMap::new();
        self.frame = Vec::with_capacity(rows);
        for row in 0..rows {
            let mut key = Vec::with_capacity(1 + self.cfg.grouping.len());
            key.push(at(self.cfg.name, row as u32, None).map_or(Part::Null, Part::Str));
            key.extend(self.cfg.grouping.iter().map(|(_, c)| part(c, row)));
            let next = index.len() as u32;
            self.frame.push(*index.entry(key).or_insert(next));
        }
    }

    fn match_text(&self, text: &str) -> Matches {
        let mut m = Matches::default();
        if let Some(p) = &self.cfg.view_pattern {
            m.view = p.is_match(text);
        }
        for (i, f) in self.cfg.show.iter().enumerate() {
            if f.is_match(text) {
                m.show |= 1 << i;
            }
        }
        m.hide_stack = self.cfg.hide_stack.iter().any(|f| f.is_match(text));
        m.hide_frame = self.cfg.hide_frame.iter().any(|f| f.is_match(text));
        m
    }

    fn match_row(&self, row: usize) -> Matches {
        let mut m = match at(self.cfg.name, row as u32, None) {
            Some(s) => self.match_text(self.source.string(s)),
            None => Matches::default(),
        };
        for (_, c) in &self.cfg.grouping {
            let text = match c {
                Column::Str(v) => v
                    .get(row)
                    .copied()
                    .flatten()
                    .map(|s| self.source.string(s).to_owned()),
                Column::Int(v) => v.get(row).copied().flatten().map(|x| x.to_string()),
                Column::Real(v) => v.get(row).copied().flatten().map(aggregate::format_g15),
                Column::Null => None,
            };
            if let Some(t) = text {
                let g = self.match_text(&t);
                m.show |= g.show;
                m.view |= g.view;
                m.hide_stack |= g.hide_stack;
                m.hide_frame |= g.hide_frame;
            }
        }
        m
    }

    /// Each row's path state and whether it matches the view pattern.
    fn analyze(&mut self) {
        let rows = self.source.rows;
        let needs = self.cfg.view_pattern.is_some()
            || !self.cfg.show.is_empty()
            || !self.cfg.hide_stack.is_empty()
            || !self.cfg.hide_frame.is_empty();
        let mut cache: HashMap<u32, Matches> = HashMap::new();
        self.states = Vec::with_capacity(rows);
        self.pattern_match = vec![false; rows];
        for row in 0..rows {
            let p = at(&self.source.parent, row as u32, NONE);
            let inherited = if p == NONE {
                EMPTY_PATH
            } else {
                at(&self.states, p, EMPTY_PATH)
            };
            let m = if needs {
                let f = at(&self.frame, row as u32, 0);
                match cache.get(&f) {
                    Some(m) => *m,
                    None => {
                        let m = self.match_row(row);
                        cache.insert(f, m);
                        m
                    }
                }
            } else {
                Matches::default()
            };
            if m.hide_frame {
                self.states.push(inherited);
                continue;
            }
            if m.view
                && let Some(s) = self.pattern_match.get_mut(row)
            {
                *s = true;
            }
            self.states.push(PathState {
                bits: if m.hide_stack {
                    HIDE_STACK_BIT
                } else {
                    m.show | inherited.bits
                },
                retained: row as u32,
            });
        }
    }

    fn retained(&self, row: u32) -> bool {
        at(&self.states, row, EMPTY_PATH).retained == row
    }

    fn downward(&mut self) {
        let rows = self.source.rows;
        self.down_node = vec![NONE; rows];
        if !self.cfg.view.downward() {
            return;
        }
        for row in 0..rows as u32 {
            let p = at(&self.source.parent, row, NONE);
            let parent_node = if p == NONE {
                NONE
            } else {
                at(&self.down_node, p, NONE)
            };
            let node = if !self.retained(row) {
                parent_node
            } else {
                let has_retained_parent =
                    p != NONE && at(&self.states, p, EMPTY_PATH).retained != NONE;
                let starts = at(&self.pattern_match, row, false)
                    || (self.cfg.view == View::TopDown && !has_retained_parent);
                if !starts && parent_node == NONE {
                    NONE
                } else {
                    let under = if starts { NONE } else { parent_node };
                    self.down.intern(under, at(&self.frame, row, 0), row)
                }
            };
            if let Some(n) = self.down_node.get_mut(row as usize) {
                *n = node;
            }
        }
    }

    /// Interns the path from `frame` up through its retained callers;
    /// (its first node, its last node).
    fn upward_path(&mut self, mut frame: u32, aggregates: bool) -> (u32, u32) {
        let (mut root, mut parent) = (NONE, NONE);
        let mut steps = 0usize;
        while frame != NONE && steps <= self.source.rows {
            parent = self.up.intern(parent, at(&self.frame, frame, 0), frame);
            if root == NONE {
                root = parent;
            }
            if aggregates {
                self.constituents.push((frame, parent));
            }
            let p = at(&self.source.parent, frame, NONE);
            frame = if p == NONE {
                NONE
            } else {
                at(&self.states, p, EMPTY_PATH).retained
            };
            steps += 1;
        }
        (root, parent)
    }

    fn mark_active<T: Num>(
        &self,
        values: &[Option<T>],
        active: &mut [bool],
    ) -> Result<(), FlamegraphError> {
        for (row, v) in values.iter().enumerate() {
            let Some(v) = *v else { continue };
            if v < T::default() {
                return Err(FlamegraphError::Negative);
            }
            let s = at(&self.states, row as u32, EMPTY_PATH);
            if !v.is_zero()
                && s.contributes(self.required)
                && let Some(a) = active.get_mut(s.retained as usize)
            {
                *a = true;
            }
        }
        Ok(())
    }

    fn upward(&mut self) -> Result<(), FlamegraphError> {
        let rows = self.source.rows;
        match self.cfg.view {
            View::Pivot => {
                for row in 0..rows as u32 {
                    if !at(&self.pattern_match, row, false) {
                        continue;
                    }
                    let aggregates = !self.cfg.aggregates.is_empty()
                        && at(&self.states, row, EMPTY_PATH).contributes(self.required);
                    let path = self.upward_path(row, aggregates);
                    self.anchors.push((row, path));
                }
            }
            View::BottomUp => {
                let mut active = vec![false; rows];
                for (_, c) in &self.cfg.values {
                    match c {
                        Column::Int(v) => self.mark_active(v, &mut active)?,
                        Column::Real(v) => self.mark_active(v, &mut active)?,
                        _ => {}
                    }
                }
                self.paths = vec![(NONE, NONE); rows];
                for row in 0..rows as u32 {
                    if at(&active, row, false) {
                        let path = self.upward_path(row, true);
                        if let Some(p) = self.paths.get_mut(row as usize) {
                            *p = path;
                        }
                    }
                }
            }
            View::TopDown | View::FromFrame => {}
        }
        Ok(())
    }

    fn metric<T: Num>(&self, values: &[Option<T>]) -> Result<(Vec<T>, Vec<T>), FlamegraphError> {
        let ds = self.down.len();
        let total = ds + self.up.len();
        let mut own = vec![T::default(); total];
        let mut cum = vec![T::default(); total];
        let (down_self, up_self) = own.split_at_mut(ds);
        let (down_cum, up_cum) = cum.split_at_mut(ds);
        if self.cfg.view.downward() {
            for (row, v) in values.iter().enumerate() {
                let Some(v) = *v else { continue };
                if v < T::default() {
                    return Err(FlamegraphError::Negative);
                }
                let node = at(&self.down_node, row as u32, NONE);
                if node == NONE
                    || !at(&self.states, row as u32, EMPTY_PATH).contributes(self.required)
                {
                    continue;
                }
                add_at(down_self, node, v)?;
                add_at(down_cum, node, v)?;
            }
            propagate(&self.down.parent, down_cum)?;
        }
        match self.cfg.view {
            View::BottomUp => {
                for (row, v) in values.iter().enumerate() {
                    let Some(v) = *v else { continue };
                    let s = at(&self.states, row as u32, EMPTY_PATH);
                    if v.is_zero() || !s.contributes(self.required) {
                        continue;
                    }
                    let (root, leaf) = at(&self.paths, s.retained, (NONE, NONE));
                    add_at(up_self, root, v)?;
                    add_at(up_cum, leaf, v)?;
                }
                propagate(&self.up.parent, up_cum)?;
            }
            View::Pivot => {
                let rows = self.source.rows;
                let mut weight = vec![T::default(); rows];
                for (row, v) in values.iter().enumerate() {
                    let Some(v) = *v else { continue };
                    let r = row as u32;
                    if at(&self.down_node, r, NONE) != NONE
                        && at(&self.states, r, EMPTY_PATH).contributes(self.required)
                    {
                        add_at(&mut weight, at(&self.states, r, EMPTY_PATH).retained, v)?;
                    }
                }
                for row in (0..rows as u32).rev() {
                    let node = at(&self.down_node, row, NONE);
                    if !self.retained(row)
                        || node == NONE
                        || at(&self.down.parent, node, NONE) == NONE
                    {
                        continue;
                    }
                    let p = at(&self.source.parent, row, NONE);
                    let rp = if p == NONE {
                        NONE
                    } else {
                        at(&self.states, p, EMPTY_PATH).retained
                    };
                    let w = at(&weight, row, T::default());
                    add_at(&mut weight, rp, w)?;
                }
                for &(frame, (root, leaf)) in &self.anchors {
                    let w = at(&weight, frame, T::default());
                    add_at(up_self, root, w)?;
                    add_at(up_cum, leaf, w)?;
                }
                propagate(&self.up.parent, up_cum)?;
            }
            View::TopDown | View::FromFrame => {}
        }
        Ok((own, cum))
    }
}

/// Builds the flamegraph of `source` as `cfg` says.
pub(crate) fn build(source: &Source, cfg: &Resolved<'_>) -> Result<Built, FlamegraphError> {
    let mut b = Builder {
        source,
        cfg,
        frame: Vec::new(),
        states: Vec::new(),
        pattern_match: Vec::new(),
        required: (1u64 << cfg.show.len()) - 1,
        down: Interner::default(),
        down_node: Vec::new(),
        up: Interner::default(),
        paths: Vec::new(),
        anchors: Vec::new(),
        constituents: Vec::new(),
    };
    b.frames();
    b.analyze();
    b.downward();
    b.upward()?;
    let mut metrics = Vec::with_capacity(cfg.values.len());
    for (_, c) in &cfg.values {
        metrics.push(match c {
            Column::Int(v) => {
                let (s, c) = b.metric(v)?;
                Metric::Int(s, c)
            }
            Column::Real(v) => {
                let (s, c) = b.metric(v)?;
                Metric::Real(s, c)
            }
            _ => {
                return Err(FlamegraphError::Invalid(
                    "value columns must be numeric".into(),
                ));
            }
        });
    }
    let ds = b.down.len();
    let nodes = ds + b.up.len();
    let routing = Routing {
        states: &b.states,
        down_node: &b.down_node,
        constituents: &b.constituents,
        down_size: ds as u32,
        nodes: nodes as u32,
        required: b.required,
        has_downward: cfg.view.downward(),
    };
    let mut aggregates = Vec::with_capacity(cfg.aggregates.len());
    for (c, how, _) in &cfg.aggregates {
        aggregates.push(aggregate::aggregate(source, c, *how, &routing)?);
    }

    // Pack: the kept nodes of the downward half, then of the upward one.
    let mut depth = Vec::new();
    let mut parent = Vec::new();
    let mut sources = Vec::new();
    let mut reps = Vec::new();
    for (tree, offset, step) in [(&b.down, 0usize, 1i64), (&b.up, ds, -1i64)] {
        let mut out_row = vec![NONE; tree.len()];
        for node in 0..tree.len() {
            if !metrics.iter().any(|m| m.nonzero(offset + node)) {
                continue;
            }
            let p = at(&tree.parent, node as u32, NONE);
            let packed = if p == NONE {
                NONE
            } else {
                at(&out_row, p, NONE)
            };
            let d = if packed == NONE {
                step
            } else {
                at(&depth, packed, 0) + step
            };
            if let Some(o) = out_row.get_mut(node) {
                *o = parent.len() as u32;
            }
            depth.push(d);
            parent.push(packed);
            sources.push((offset + node) as u32);
            reps.push(at(&tree.representative, node as u32, NONE));
        }
    }
    let all = sources.len() == nodes;
    let mut names = vec!["name".to_owned()];
    let mut columns = vec![OutColumn::Str(
        reps.iter().map(|&r| at(cfg.name, r, None)).collect(),
    )];
    for (g, c) in &cfg.grouping {
        names.push(g.to_string());
        columns.push(OutColumn::gather(c, &reps));
    }
    for ((v, _), m) in cfg.values.iter().zip(metrics) {
        let (s, c) = match m {
            Metric::Int(s, c) => (
                OutColumn::Int(s.into_iter().map(Some).collect()),
                OutColumn::Int(c.into_iter().map(Some).collect()),
            ),
            Metric::Real(s, c) => (
                OutColumn::Real(s.into_iter().map(Some).collect()),
                OutColumn::Real(c.into_iter().map(Some).collect()),
            ),
        };
        names.push(format!("self_{v}"));
        columns.push(s.gather_out(&sources, all));
        names.push(format!("cumulative_{v}"));
        columns.push(c.gather_out(&sources, all));
    }
    for ((_, _, out), c) in cfg.aggregates.iter().zip(aggregates) {
        names.push(out.clone());
        columns.push(c.gather_out(&sources, all));
    }
    Ok(Built {
        depth,
        parent,
        names,
        columns,
    })
}
