//! The aggregate columns of a flamegraph: how the values of a property
//! column fold when frames merge into one node. SUM adds (per retained
//! frame first, then per node); ONE_OR_SUMMARY keeps the first value, or
//! the first and the count of distinct values (`a and 2 others`);
//! CONCAT_WITH_COMMA joins every value. Numbers print as upstream prints
//! them (`%lld`, `%.15g` with SQLite's trailing `.0`).

use super::config::Aggregate;
use super::error::FlamegraphError;
use super::resolve::OutColumn;
use super::routing::{Num, Routing, add_at};
use super::source::{Column, NONE, Source};

/// `v` as C's `%.15g` prints it.
pub(crate) fn format_g15(v: f64) -> String {
    if v.is_nan() {
        return if v.is_sign_negative() { "-nan" } else { "nan" }.into();
    }
    if v.is_infinite() {
        return if v < 0.0 { "-inf" } else { "inf" }.into();
    }
    if v == 0.0 {
        return if v.is_sign_negative() { "-0" } else { "0" }.into();
    }
    let sci = format!("{v:.14e}");
    let (mantissa, exp) = sci.split_once('e').unwrap_or((&sci, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    let trim = |s: &str| -> String {
        if s.contains('.') {
            s.trim_end_matches('0').trim_end_matches('.').to_owned()
        } else {
            s.to_owned()
        }
    };
    if !(-4..15).contains(&exp) {
        let sign = if exp < 0 { '-' } else { '+' };
        format!("{}e{sign}{:02}", trim(mantissa), exp.abs())
    } else {
        let decimals = usize::try_from(14 - exp).unwrap_or(0);
        trim(&format!("{v:.decimals$}"))
    }
}

/// A double as an aggregate prints it: `%.15g`, and `.0` when that
/// reads as an integer.
fn format_real(v: f64) -> String {
    let mut s = format_g15(v);
    if !s.contains(['.', 'e', 'E', 'n', 'N']) {
        s.push_str(".0");
    }
    s
}

fn sum<T: Num>(values: &[Option<T>], r: &Routing<'_>) -> Result<Vec<Option<T>>, FlamegraphError> {
    let rows = r.states.len();
    let mut totals: Vec<Option<T>> = vec![None; rows];
    fn acc<T: Num>(slot: Option<&mut Option<T>>, v: T) -> Result<(), FlamegraphError> {
        match slot {
            Some(Some(s)) => add_at(std::slice::from_mut(s), 0, v),
            Some(none) => {
                *none = Some(v);
                Ok(())
            }
            None => Ok(()),
        }
    }
    for (row, v) in values.iter().enumerate() {
        let (Some(v), Some(s)) = (*v, r.states.get(row)) else {
            continue;
        };
        if s.retained == NONE || s.hidden() {
            continue;
        }
        acc(totals.get_mut(s.retained as usize), v)?;
    }
    let mut out: Vec<Option<T>> = vec![None; r.nodes as usize];
    if r.has_downward {
        for (frame, total) in totals.iter().enumerate() {
            let Some(t) = *total else { continue };
            let f = frame as u32;
            let retained = r.states.get(frame).is_some_and(|s| s.retained == f);
            if !retained || !r.down_contributes(f) {
                continue;
            }
            let node = r.down_node.get(frame).copied().unwrap_or(NONE);
            acc(out.get_mut(node as usize), t)?;
        }
    }
    for &(frame, node) in r.constituents {
        if let Some(Some(t)) = totals.get(frame as usize) {
            acc(out.get_mut((r.down_size + node) as usize), *t)?;
        }
    }
    Ok(out)
}

/// (node, row) for every input row folded into every node, node by node.
fn route(r: &Routing<'_>) -> Vec<(u32, u32)> {
    let rows = r.states.len();
    let mut frame_rows: Vec<Vec<u32>> = vec![Vec::new(); rows];
    for (row, s) in r.states.iter().enumerate() {
        if s.retained != NONE
            && !s.hidden()
            && let Some(f) = frame_rows.get_mut(s.retained as usize)
        {
            f.push(row as u32);
        }
    }
    let mut node_frames: Vec<Vec<u32>> = vec![Vec::new(); r.nodes as usize];
    if r.has_downward {
        for (frame, s) in r.states.iter().enumerate() {
            let f = frame as u32;
            if s.retained == f
                && r.down_contributes(f)
                && let Some(n) = r
                    .down_node
                    .get(frame)
                    .and_then(|&n| node_frames.get_mut(n as usize))
            {
                n.push(f);
            }
        }
    }
    for &(frame, node) in r.constituents {
        if let Some(n) = node_frames.get_mut((r.down_size + node) as usize) {
            n.push(frame);
        }
    }
    let mut out = Vec::new();
    for (node, frames) in node_frames.iter().enumerate() {
        for &f in frames {
            for &row in frame_rows.get(f as usize).map_or(&[][..], |v| v) {
                out.push((node as u32, row));
            }
        }
    }
    out
}

/// A value's distinct key and its text.
fn value(source: &Source, c: &Column, row: u32) -> Option<(u64, String)> {
    let i = row as usize;
    match c {
        Column::Null => None,
        Column::Int(v) => v
            .get(i)
            .copied()
            .flatten()
            .map(|x| (x as u64, x.to_string())),
        Column::Real(v) => v.get(i).copied().flatten().map(|x| {
            let key = if x == 0.0 { 0 } else { x.to_bits() };
            (key, format_real(x))
        }),
        Column::Str(v) => v
            .get(i)
            .copied()
            .flatten()
            .map(|s| (u64::from(s), source.string(s).to_owned())),
    }
}

fn one_or_summary(source: &Source, c: &Column, r: &Routing<'_>) -> Vec<Option<String>> {
    let mut out = vec![None; r.nodes as usize];
    let mut group: Option<(u32, String, Vec<u64>)> = None;
    let finish = |g: Option<(u32, String, Vec<u64>)>, out: &mut Vec<Option<String>>| {
        if let Some((node, first, mut keys)) = g {
            keys.sort_unstable();
            keys.dedup();
            let text = if keys.len() > 1 {
                format!("{first} and {} others", keys.len())
            } else {
                first
            };
            if let Some(o) = out.get_mut(node as usize) {
                *o = Some(text);
            }
        }
    };
    for (node, row) in route(r) {
        let Some((key, text)) = value(source, c, row) else {
            continue;
        };
        match &mut group {
            Some((n, _, keys)) if *n == node => keys.push(key),
            _ => {
                finish(group.take(), &mut out);
                group = Some((node, text, vec![key]));
            }
        }
    }
    finish(group, &mut out);
    out
}

fn concat(source: &Source, c: &Column, r: &Routing<'_>) -> Vec<Option<String>> {
    let mut out = vec![None; r.nodes as usize];
    let mut current = NONE;
    let mut text = String::new();
    let finish = |node: u32, text: &mut String, out: &mut Vec<Option<String>>| {
        if !text.is_empty()
            && let Some(o) = out.get_mut(node as usize)
        {
            *o = Some(std::mem::take(text));
        }
        text.clear();
    };
    for (node, row) in route(r) {
        let Some((_, v)) = value(source, c, row) else {
            continue;
        };
        if node != current {
            finish(current, &mut text, &mut out);
            current = node;
        }
        if !text.is_empty() {
            text.push(',');
        }
        text.push_str(&v);
    }
    finish(current, &mut text, &mut out);
    out
}

/// Column `c` aggregated over the nodes of a build.
pub(crate) fn aggregate(
    source: &Source,
    c: &Column,
    how: Aggregate,
    r: &Routing<'_>,
) -> Result<OutColumn, FlamegraphError> {
    if matches!(c, Column::Null) {
        return Ok(OutColumn::Null);
    }
    Ok(match how {
        Aggregate::Sum => match c {
            Column::Int(v) => OutColumn::Int(sum(v, r)?),
            Column::Real(v) => OutColumn::Real(sum(v, r)?),
            _ => {
                return Err(FlamegraphError::Invalid(
                    "SUM aggregate columns must be numeric".into(),
                ));
            }
        },
        Aggregate::OneOrSummary => OutColumn::Text(one_or_summary(source, c, r)),
        Aggregate::ConcatWithComma => OutColumn::Text(concat(source, c, r)),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn doubles_print_as_c_and_sqlite_print_them() {
        assert_eq!(format_g15(1.5), "1.5");
        assert_eq!(format_g15(0.1 + 0.2), "0.3");
        assert_eq!(format_g15(1e20), "1e+20");
        assert_eq!(format_g15(1.25e-7), "1.25e-07");
        assert_eq!(format_g15(123456789012345.0), "123456789012345");
        assert_eq!(format_g15(-2.0), "-2");
        assert_eq!(format_real(2.0), "2.0");
        assert_eq!(format_real(2.5), "2.5");
        assert_eq!(format_real(1e20), "1e+20");
    }
}
