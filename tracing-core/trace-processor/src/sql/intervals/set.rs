//! The values that carry a table's intervals from SQL to the native
//! operators inside one statement: an aggregate gathers a table's rows
//! (`aggregate.rs`) into a [`PartitionedIntervals`] or a sorted list of
//! timestamps, encoded as a blob, so that the rows of a CTE or a subquery
//! reach an operator as a value of the same query. Decoding checks every
//! length against the blob: a blob that is not ours is an error, never a
//! panic or an allocation it asks for.

use std::collections::HashMap;

/// One interval: the id of its row, its start and its end (`end >=
/// start`; `end == start` is an instant).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Interval {
    /// The row's id.
    pub id: i64,
    /// Its start.
    pub start: i64,
    /// Its end.
    pub end: i64,
}

/// A partition column's value; partitions are equal when every value
/// is, of the same type (NULL equal to NULL, reals by their bits).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) enum Key {
    /// NULL.
    Null,
    /// An integer.
    Int(i64),
    /// A real, as its bits.
    Real(u64),
    /// Text.
    Text(String),
}

/// One partition: its values and its intervals, sorted by start.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Partition {
    /// The partition columns' values.
    pub key: Vec<Key>,
    /// Its intervals, sorted by start (then end, then id).
    pub intervals: Vec<Interval>,
}

/// A table's intervals by partition, partitions in the order they were
/// first seen.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct PartitionedIntervals {
    /// The partition columns' names.
    pub columns: Vec<String>,
    /// The partitions.
    pub partitions: Vec<Partition>,
    /// Where each key's partition is in `partitions`.
    index: HashMap<Vec<Key>, usize>,
}

const INTERVALS_MAGIC: &[u8] = b"ztiv1";
const TIMESTAMPS_MAGIC: &[u8] = b"ztts1";

impl PartitionedIntervals {
    /// An empty set partitioned by `columns`.
    pub(crate) fn new(columns: Vec<String>) -> Self {
        PartitionedIntervals {
            columns,
            ..Default::default()
        }
    }

    /// Adds `interval` to the partition of `key`.
    pub(crate) fn push(&mut self, key: Vec<Key>, interval: Interval) {
        let at = match self.index.get(&key) {
            Some(&at) => at,
            None => {
                let at = self.partitions.len();
                self.index.insert(key.clone(), at);
                self.partitions.push(Partition {
                    key,
                    intervals: Vec::new(),
                });
                at
            }
        };
        if let Some(p) = self.partitions.get_mut(at) {
            p.intervals.push(interval);
        }
    }

    /// Sorts every partition's intervals by start.
    pub(crate) fn sort(&mut self) {
        for p in &mut self.partitions {
            p.intervals.sort_by_key(|i| (i.start, i.end, i.id));
        }
    }

    /// The partition of `key`.
    pub(crate) fn get(&self, key: &[Key]) -> Option<&Partition> {
        self.index.get(key).and_then(|&i| self.partitions.get(i))
    }

    /// The set as a blob.
    pub(crate) fn encode(&self) -> Vec<u8> {
        let mut out = INTERVALS_MAGIC.to_vec();
        put_len(&mut out, self.columns.len());
        for c in &self.columns {
            put_bytes(&mut out, c.as_bytes());
        }
        put_len(&mut out, self.partitions.len());
        for p in &self.partitions {
            for k in &p.key {
                match k {
                    Key::Null => out.push(0),
                    Key::Int(v) => {
                        out.push(1);
                        out.extend_from_slice(&v.to_le_bytes());
                    }
                    Key::Real(v) => {
                        out.push(2);
                        out.extend_from_slice(&v.to_le_bytes());
                    }
                    Key::Text(s) => {
                        out.push(3);
                        put_bytes(&mut out, s.as_bytes());
                    }
                }
            }
            put_len(&mut out, p.intervals.len());
            for i in &p.intervals {
                for v in [i.id, i.start, i.end] {
                    out.extend_from_slice(&v.to_le_bytes());
                }
            }
        }
        out
    }

    /// The set `blob` encodes; None when it is not one.
    pub(crate) fn decode(blob: &[u8]) -> Option<Self> {
        let mut r = Reader(blob.strip_prefix(INTERVALS_MAGIC)?);
        let n_cols = r.len(4)?;
        let mut columns = Vec::with_capacity(n_cols);
        for _ in 0..n_cols {
            columns.push(String::from_utf8(r.bytes()?.to_vec()).ok()?);
        }
        let mut set = PartitionedIntervals::new(columns);
        let n_parts = r.len(4)?;
        for _ in 0..n_parts {
            let mut key = Vec::with_capacity(n_cols);
            for _ in 0..n_cols {
                key.push(match r.byte()? {
                    0 => Key::Null,
                    1 => Key::Int(r.i64()?),
                    2 => Key::Real(u64::from_le_bytes(r.take(8)?.try_into().ok()?)),
                    3 => Key::Text(String::from_utf8(r.bytes()?.to_vec()).ok()?),
                    _ => return None,
                });
            }
            let n = r.len(24)?;
            let mut intervals = Vec::with_capacity(n);
            for _ in 0..n {
                intervals.push(Interval {
                    id: r.i64()?,
                    start: r.i64()?,
                    end: r.i64()?,
                });
            }
            if set.index.contains_key(&key) {
                return None;
            }
            set.index.insert(key.clone(), set.partitions.len());
            set.partitions.push(Partition { key, intervals });
        }
        r.0.is_empty().then_some(set)
    }
}

/// Timestamps, sorted, as a blob.
pub(crate) fn encode_timestamps(ts: &[i64]) -> Vec<u8> {
    let mut out = TIMESTAMPS_MAGIC.to_vec();
    put_len(&mut out, ts.len());
    for v in ts {
        out.extend_from_slice(&v.to_le_bytes());
    }
    out
}

/// The timestamps `blob` encodes; None when it is no such list.
pub(crate) fn decode_timestamps(blob: &[u8]) -> Option<Vec<i64>> {
    let mut r = Reader(blob.strip_prefix(TIMESTAMPS_MAGIC)?);
    let n = r.len(8)?;
    let mut out = Vec::with_capacity(n);
    for _ in 0..n {
        out.push(r.i64()?);
    }
    r.0.is_empty().then_some(out)
}

fn put_len(out: &mut Vec<u8>, n: usize) {
    out.extend_from_slice(&(n as u64).to_le_bytes());
}

fn put_bytes(out: &mut Vec<u8>, b: &[u8]) {
    put_len(out, b.len());
    out.extend_from_slice(b);
}

/// Reads a blob front to back, every read checked against what is left.
struct Reader<'a>(&'a [u8]);

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        if n > self.0.len() {
            return None;
        }
        let (head, tail) = self.0.split_at(n);
        self.0 = tail;
        Some(head)
    }

    fn byte(&mut self) -> Option<u8> {
        self.take(1)?.first().copied()
    }

    fn i64(&mut self) -> Option<i64> {
        Some(i64::from_le_bytes(self.take(8)?.try_into().ok()?))
    }

    /// A count of items of at least `item` bytes each, no more than the
    /// blob has room for.
    fn len(&mut self, item: usize) -> Option<usize> {
        let n = usize::try_from(u64::from_le_bytes(self.take(8)?.try_into().ok()?)).ok()?;
        (n <= self.0.len() / item.max(1)).then_some(n)
    }

    fn bytes(&mut self) -> Option<&'a [u8]> {
        let n = self.len(1)?;
        self.take(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sets_round_trip_and_foreign_blobs_are_refused() {
        let mut set = PartitionedIntervals::new(vec!["utid".into(), "name".into()]);
        let iv = |id, start, end| Interval { id, start, end };
        set.push(vec![Key::Int(1), Key::Text("a".into())], iv(5, 10, 20));
        set.push(vec![Key::Null, Key::Real(2.5f64.to_bits())], iv(6, 0, 0));
        set.push(vec![Key::Int(1), Key::Text("a".into())], iv(7, 1, 2));
        set.sort();
        let blob = set.encode();
        let back = PartitionedIntervals::decode(&blob).unwrap();
        assert_eq!(back, set);
        assert_eq!(
            back.get(&[Key::Int(1), Key::Text("a".into())])
                .unwrap()
                .intervals,
            [iv(7, 1, 2), iv(5, 10, 20)]
        );
        for cut in 0..blob.len() {
            assert!(PartitionedIntervals::decode(&blob[..cut]).is_none());
        }
        let mut huge = INTERVALS_MAGIC.to_vec();
        huge.extend_from_slice(&u64::MAX.to_le_bytes());
        assert!(PartitionedIntervals::decode(&huge).is_none());
        let ts = encode_timestamps(&[1, 5, 9]);
        assert_eq!(decode_timestamps(&ts).unwrap(), [1, 5, 9]);
        assert!(decode_timestamps(&blob).is_none());
        assert!(PartitionedIntervals::decode(&ts).is_none());
    }
}
