//! Intersecting tables of intervals, partition by partition: a row of the
//! result is a span where one interval of every table overlaps, with the
//! id of each, for every partition all the tables have (instants as
//! `overlaps.rs` says). Sans-IO: sets in, rows out.
//!
//! Each partition starts from the table with the fewest intervals there
//! and narrows the spans found so far by each next table in turn (fewest
//! first), each span's overlaps found by `overlaps.rs`.

use super::error::IntervalError;
use super::overlaps::Finder;
use super::set::{Key, Partition, PartitionedIntervals};

/// The most tables one intersection takes.
pub(crate) const MAX_TABLES: usize = 15;
/// The most partition columns one intersection takes.
pub(crate) const MAX_PARTITIONS: usize = 4;

/// The rows of an intersection, by column.
#[derive(Debug, Default, PartialEq)]
pub(crate) struct Intersection {
    /// How many tables were intersected.
    pub tables: usize,
    /// Each row's start.
    pub starts: Vec<i64>,
    /// Each row's end.
    pub ends: Vec<i64>,
    /// Each row's ids, `tables` per row, in the order of the tables.
    pub ids: Vec<i64>,
    /// The partitions' values: the first row of each and its key, in
    /// row order.
    pub partitions: Vec<(usize, Vec<Key>)>,
}

impl Intersection {
    /// How many rows it has.
    pub(crate) fn len(&self) -> usize {
        self.starts.len()
    }

    /// Row `row`'s id in table `table`.
    pub(crate) fn id(&self, row: usize, table: usize) -> Option<i64> {
        if table >= self.tables {
            return None;
        }
        self.ids.get(row * self.tables + table).copied()
    }

    /// Row `row`'s value of partition column `col`.
    pub(crate) fn key(&self, row: usize, col: usize) -> Option<&Key> {
        let at = self.partitions.partition_point(|(first, _)| *first <= row);
        self.partitions.get(at.checked_sub(1)?)?.1.get(col)
    }
}

/// The partition columns a list such as `(utid, cpu)` names; `()` none.
pub(crate) fn partition_list(text: &str) -> Vec<String> {
    text.trim()
        .trim_matches(|c| c == '(' || c == ')' || c == ' ')
        .split(',')
        .map(|c| c.trim().to_owned())
        .filter(|c| !c.is_empty())
        .collect()
}

/// The intersection of `tables` (None: a table without rows), whose
/// partition columns are `columns`.
pub(crate) fn intersect(
    tables: &[Option<PartitionedIntervals>],
    columns: &[String],
) -> Result<Intersection, IntervalError> {
    if tables.len() > MAX_TABLES {
        return Err(IntervalError::TooManyTables { max: MAX_TABLES });
    }
    if columns.len() > MAX_PARTITIONS {
        return Err(IntervalError::TooManyPartitions {
            max: MAX_PARTITIONS,
        });
    }
    let mut out = Intersection {
        tables: tables.len(),
        ..Default::default()
    };
    let mut sets = Vec::with_capacity(tables.len());
    for t in tables {
        match t {
            Some(t) if !t.partitions.is_empty() => sets.push(t),
            _ => return Ok(out),
        }
    }
    let Some(first) = sets.first() else {
        return Ok(out);
    };
    let n_cols = first.partitions.first().map_or(0, |p| p.key.len());
    for index in 0..n_cols {
        let known = first
            .partitions
            .iter()
            .any(|p| p.key.get(index).is_some_and(|k| *k != Key::Null));
        if !known {
            return Err(IntervalError::UnknownPartitionType { index });
        }
    }
    if n_cols != columns.len() {
        return Err(IntervalError::PartitionCount);
    }
    // Partitions come from the table that has the fewest.
    let mut fewest = 0;
    for (i, s) in sets.iter().enumerate() {
        if s.partitions.len() < sets.get(fewest).map_or(usize::MAX, |f| f.partitions.len()) {
            fewest = i;
        }
    }
    let Some(driver) = sets.get(fewest) else {
        return Ok(out);
    };
    for p in &driver.partitions {
        let parts: Option<Vec<&Partition>> = sets.iter().map(|s| s.get(&p.key)).collect();
        let Some(parts) = parts else { continue };
        let first_row = out.len();
        push_partition(&parts, &mut out);
        if out.len() > first_row {
            out.partitions.push((first_row, p.key.clone()));
        }
    }
    Ok(out)
}

/// A span found so far: where, and the id in each table joined.
struct Span {
    start: i64,
    end: i64,
    ids: [i64; MAX_TABLES],
}

/// Appends the intersection of one partition of every table to `out`.
fn push_partition(parts: &[&Partition], out: &mut Intersection) {
    let mut order: Vec<usize> = (0..parts.len()).collect();
    order.sort_by_key(|&i| parts.get(i).map_or(0, |p| p.intervals.len()));
    let Some((&smallest, rest)) = order.split_first() else {
        return;
    };
    let Some(base) = parts.get(smallest) else {
        return;
    };
    let mut spans: Vec<Span> = base
        .intervals
        .iter()
        .map(|iv| {
            let mut ids = [0; MAX_TABLES];
            if let Some(slot) = ids.get_mut(smallest) {
                *slot = iv.id;
            }
            Span {
                start: iv.start,
                end: iv.end,
                ids,
            }
        })
        .collect();
    for &t in rest {
        if spans.is_empty() {
            return;
        }
        let Some(part) = parts.get(t) else { return };
        let finder = Finder::new(&part.intervals);
        let mut next = Vec::new();
        for span in &spans {
            finder.overlaps(span.start, span.end, |iv, start, end| {
                let mut ids = span.ids;
                if let Some(slot) = ids.get_mut(t) {
                    *slot = iv.id;
                }
                next.push(Span { start, end, ids });
            });
        }
        spans = next;
    }
    for s in spans {
        out.starts.push(s.start);
        out.ends.push(s.end);
        out.ids
            .extend_from_slice(s.ids.get(..out.tables).unwrap_or_default());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sql::intervals::set::Interval;

    fn set(cols: &[&str], rows: &[(&[Key], i64, i64, i64)]) -> Option<PartitionedIntervals> {
        let mut s = PartitionedIntervals::new(cols.iter().map(|c| c.to_string()).collect());
        for (key, id, start, dur) in rows {
            s.push(
                key.to_vec(),
                Interval {
                    id: *id,
                    start: *start,
                    end: start + dur,
                },
            );
        }
        s.sort();
        Some(s)
    }

    /// (start, dur, ids) of every row, sorted.
    fn rows(x: &Intersection) -> Vec<(i64, i64, Vec<i64>)> {
        let mut v: Vec<_> = (0..x.len())
            .map(|r| {
                (
                    x.starts[r],
                    x.ends[r] - x.starts[r],
                    (0..x.tables).map(|t| x.id(r, t).unwrap()).collect(),
                )
            })
            .collect();
        v.sort();
        v
    }

    #[test]
    fn spans_where_every_table_overlaps_with_each_id() {
        let a = set(&[], &[(&[], 0, 0, 10), (&[], 1, 20, 10)]);
        let b = set(&[], &[(&[], 10, 5, 20), (&[], 11, 8, 1)]);
        let c = set(&[], &[(&[], 100, 0, 100)]);
        let x = intersect(&[a.clone(), b.clone()], &[]).unwrap();
        assert_eq!(
            rows(&x),
            [
                (5, 5, vec![0, 10]),
                (8, 1, vec![0, 11]),
                (20, 5, vec![1, 10])
            ]
        );
        let x = intersect(&[a.clone(), b.clone(), c], &[]).unwrap();
        assert_eq!(rows(&x).len(), 3);
        assert_eq!(rows(&x)[0], (5, 5, vec![0, 10, 100]));
        // Touching ends do not overlap; an empty table empties all.
        let d = set(&[], &[(&[], 7, 10, 10)]);
        assert!(
            intersect(&[set(&[], &[(&[], 1, 0, 10)]), d], &[])
                .unwrap()
                .len()
                == 0
        );
        assert_eq!(intersect(&[a, None], &[]).unwrap().len(), 0);
    }

    #[test]
    fn instants_overlap_intervals_holding_them_and_equal_instants() {
        let inst = set(&[], &[(&[], 1, 10, 0), (&[], 2, 20, 0), (&[], 3, 30, 0)]);
        let span = set(&[], &[(&[], 9, 10, 10)]);
        let x = intersect(&[inst.clone(), span], &[]).unwrap();
        assert_eq!(rows(&x), [(10, 0, vec![1, 9])]);
        let same = set(&[], &[(&[], 8, 20, 0)]);
        assert_eq!(
            rows(&intersect(&[inst, same], &[]).unwrap()),
            [(20, 0, vec![2, 8])]
        );
    }

    #[test]
    fn partitions_must_match_in_every_table_and_in_the_list() {
        let k = |v| vec![Key::Int(v)];
        let a = set(
            &["cpu"],
            &[
                (&k(1), 0, 0, 10),
                (&k(2), 1, 0, 10),
                (&[Key::Null], 2, 0, 10),
            ],
        );
        let b = set(
            &["cpu"],
            &[
                (&k(2), 5, 5, 10),
                (&k(3), 6, 0, 10),
                (&[Key::Null], 7, 1, 1),
            ],
        );
        let x = intersect(&[a.clone(), b.clone()], &["cpu".into()]).unwrap();
        assert_eq!(rows(&x), [(1, 1, vec![2, 7]), (5, 5, vec![1, 5])]);
        let cpu_of = |id| {
            let r = (0..x.len()).find(|&r| x.id(r, 0) == Some(id)).unwrap();
            x.key(r, 0).cloned()
        };
        assert_eq!(cpu_of(1), Some(Key::Int(2)));
        assert_eq!(cpu_of(2), Some(Key::Null));
        assert_eq!(
            intersect(&[a.clone(), b], &[]).unwrap_err(),
            IntervalError::PartitionCount
        );
        let nulls = set(&["p"], &[(&[Key::Null], 1, 0, 1)]);
        assert_eq!(
            intersect(&[nulls.clone(), nulls], &["p".into()]).unwrap_err(),
            IntervalError::UnknownPartitionType { index: 0 }
        );
        assert!(matches!(
            intersect(&vec![a; 16], &["cpu".into()]),
            Err(IntervalError::TooManyTables { .. })
        ));
        assert_eq!(partition_list(" ( a, b ) "), ["a", "b"]);
        assert!(partition_list("()").is_empty());
    }
}
