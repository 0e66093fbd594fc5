//! The flamegraph's configuration resolved against a source
//! (`source.rs`): the output columns, the grouping, value and aggregate
//! columns found by name, and the filters' patterns compiled. The tree
//! built from it is `build.rs`'s.

use regex::{Regex, RegexBuilder};

use super::config::{Aggregate, FilterKind, Pattern, Query, View};
use super::error::FlamegraphError;
use super::source::{Column, Source};

/// The most SHOW_STACK filters one flamegraph takes (one bit each).
const MAX_SHOW_STACK: usize = 61;

/// An output column of the built tree.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum OutColumn {
    /// Every value NULL.
    Null,
    /// Integers.
    Int(Vec<Option<i64>>),
    /// Doubles.
    Real(Vec<Option<f64>>),
    /// Strings of the source's pool.
    Str(Vec<Option<u32>>),
    /// Strings made by an aggregate.
    Text(Vec<Option<String>>),
}

impl OutColumn {
    pub(crate) fn gather(c: &Column, rows: &[u32]) -> OutColumn {
        fn pick<T: Copy>(v: &[Option<T>], rows: &[u32]) -> Vec<Option<T>> {
            rows.iter()
                .map(|&r| v.get(r as usize).copied().flatten())
                .collect()
        }
        match c {
            Column::Null => OutColumn::Null,
            Column::Int(v) => OutColumn::Int(pick(v, rows)),
            Column::Real(v) => OutColumn::Real(pick(v, rows)),
            Column::Str(v) => OutColumn::Str(pick(v, rows)),
        }
    }

    pub(crate) fn gather_out(self, rows: &[u32], all: bool) -> OutColumn {
        if all {
            return self;
        }
        fn pick<T: Clone>(v: &[Option<T>], rows: &[u32]) -> Vec<Option<T>> {
            rows.iter()
                .map(|&r| v.get(r as usize).cloned().flatten())
                .collect()
        }
        match &self {
            OutColumn::Null => OutColumn::Null,
            OutColumn::Int(v) => OutColumn::Int(pick(v, rows)),
            OutColumn::Real(v) => OutColumn::Real(pick(v, rows)),
            OutColumn::Str(v) => OutColumn::Str(pick(v, rows)),
            OutColumn::Text(v) => OutColumn::Text(pick(v, rows)),
        }
    }
}

/// The configuration resolved against a source.
#[derive(Debug)]
pub(crate) struct Resolved<'s> {
    pub(crate) view: View,
    pub(crate) view_pattern: Option<Regex>,
    pub(crate) name: &'s [Option<u32>],
    pub(crate) grouping: Vec<(&'s str, &'s Column)>,
    pub(crate) show: Vec<Regex>,
    pub(crate) hide_stack: Vec<Regex>,
    pub(crate) hide_frame: Vec<Regex>,
    pub(crate) values: Vec<(&'s str, &'s Column)>,
    pub(crate) aggregates: Vec<(&'s Column, Aggregate, String)>,
}

fn compile(p: &Pattern) -> Result<Regex, FlamegraphError> {
    RegexBuilder::new(&p.pattern)
        .case_insensitive(p.case_insensitive)
        .build()
        .map_err(|e| FlamegraphError::Regex {
            pattern: p.pattern.clone(),
            reason: e.to_string(),
        })
}

fn find<'s>(
    source: &'s Source,
    context: &str,
    name: &str,
) -> Result<(&'s str, &'s Column), FlamegraphError> {
    source
        .names
        .iter()
        .zip(&source.columns)
        .find(|(n, _)| *n == name)
        .map(|(n, c)| (n.as_str(), c))
        .ok_or_else(|| {
            FlamegraphError::Invalid(format!("{context}: column '{name}' does not exist"))
        })
}

/// Resolves `query`'s column names against `source`, compiles its
/// patterns, and checks it as upstream does.
pub(crate) fn resolve<'s>(
    source: &'s Source,
    query: &Query,
) -> Result<Resolved<'s>, FlamegraphError> {
    let view_pattern = query.view_pattern.as_ref().map(compile).transpose()?;
    let name = match find(source, "name", "name")?.1 {
        Column::Str(v) => v.as_slice(),
        _ => {
            return Err(FlamegraphError::Invalid(
                "name column must be a string".into(),
            ));
        }
    };
    let grouping = query
        .grouping
        .iter()
        .map(|g| find(source, "grouping column", g))
        .collect::<Result<Vec<_>, _>>()?;
    let mut values = Vec::new();
    for v in &query.values {
        let c = find(source, "value column", v)?;
        if !c.1.is_numeric() {
            return Err(FlamegraphError::Invalid(
                "value columns must be numeric".into(),
            ));
        }
        values.push(c);
    }
    if values.is_empty() {
        return Err(FlamegraphError::Invalid(
            "at least one value column is required".into(),
        ));
    }
    let (mut show, mut hide_stack, mut hide_frame) = (Vec::new(), Vec::new(), Vec::new());
    for f in &query.filters {
        let r = compile(&f.pattern)?;
        match f.kind {
            FilterKind::ShowStack => show.push(r),
            FilterKind::HideStack => hide_stack.push(r),
            FilterKind::HideFrame => hide_frame.push(r),
        }
    }
    if show.len() > MAX_SHOW_STACK {
        return Err(FlamegraphError::Invalid(
            "too many SHOW_STACK filters".into(),
        ));
    }
    let mut aggregates = Vec::new();
    for a in &query.aggregates {
        if a.output != a.input {
            return Err(FlamegraphError::Invalid(
                "aggregate output must match its source column".into(),
            ));
        }
        let c = find(source, "aggregate column", &a.input)?.1;
        if a.aggregate == Aggregate::Sum && !matches!(c, Column::Null) && !c.is_numeric() {
            return Err(FlamegraphError::Invalid(
                "SUM aggregate columns must be numeric".into(),
            ));
        }
        aggregates.push((c, a.aggregate, a.output.clone()));
    }
    let mut outputs = vec!["depth".to_owned(), "name".to_owned()];
    let names = grouping
        .iter()
        .map(|(g, _)| g.to_string())
        .chain(
            values
                .iter()
                .flat_map(|(v, _)| [format!("self_{v}"), format!("cumulative_{v}")]),
        )
        .chain(aggregates.iter().map(|a| a.2.clone()));
    for n in names {
        if n.is_empty() || outputs.contains(&n) {
            return Err(FlamegraphError::Invalid("invalid configuration".into()));
        }
        outputs.push(n);
    }
    Ok(Resolved {
        view: query.view,
        view_pattern,
        name,
        grouping,
        show,
        hide_stack,
        hide_frame,
        values,
        aggregates,
    })
}
