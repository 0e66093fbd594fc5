//! Which group each selected row falls in, as SQLite's GROUP BY groups:
//! equal keys together, NULLs one group, text by its bytes (the BINARY
//! collation; a string pooled twice is still one text), -0.0 with 0.0. A
//! single integer key whose values span a dense range (ids, as
//! `track_id` or `utid` are) indexes an array of groups; any other key
//! goes through a hash map, the last key remembered (rows of one key often
//! follow each other).

use super::read::{Reader, Sel, V, scan};
use crate::column_store::strings::{StrId, StringPool};
use crate::hash::HashMap;

/// A key's part: its value as grouping compares it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Part {
    Null,
    Int(i64),
    /// A double's bits (-0.0 as 0.0: they are one group).
    Real(u64),
    /// A distinct text (strings equal in bytes share it).
    Text(u32),
}

/// Rows and their groups.
pub(crate) struct Assigned {
    /// Per selected row (by position), its group; empty without keys
    /// (every row is group 0).
    pub ids: Vec<u32>,
    /// Per group, the first row of it (usize::MAX for the one group of
    /// no rows a query without keys has).
    pub firsts: Vec<usize>,
}

/// Numbers the groups of `sel`'s rows by `keys`, in order of first
/// appearance.
pub(crate) fn assign(sel: &Sel, keys: &[Reader<'_>], strings: &StringPool) -> Assigned {
    match keys {
        [] => Assigned {
            ids: Vec::new(),
            firsts: vec![sel.first().unwrap_or(usize::MAX)],
        },
        [k] => dense(sel, k).unwrap_or_else(|| hashed(sel, keys, strings)),
        _ => hashed(sel, keys, strings),
    }
}

/// One integer key of dense values: an array of groups.
fn dense(sel: &Sel, key: &Reader<'_>) -> Option<Assigned> {
    if key.is_real() || key.is_text() {
        return None;
    }
    let (mut min, mut max) = (i64::MAX, i64::MIN);
    scan(key, sel, |_, _, v| {
        if let V::Int(x) = v {
            min = min.min(x);
            max = max.max(x);
        }
    });
    let n = sel.len();
    let span = max
        .checked_sub(min)
        .and_then(|s| usize::try_from(s).ok())
        .filter(|s| *s <= 4 * n + 4096);
    let mut slots = vec![u32::MAX; span.map_or(0, |s| s + 1)];
    if span.is_none() && min <= max {
        return None;
    }
    let mut null = u32::MAX;
    let mut ids = Vec::with_capacity(n);
    let mut firsts = Vec::new();
    scan(key, sel, |_, row, v| {
        let slot = match v {
            V::Int(x) => slots.get_mut(x.wrapping_sub(min) as usize),
            _ => Some(&mut null),
        };
        let g = match slot {
            Some(g) if *g != u32::MAX => *g,
            Some(g) => {
                *g = u32::try_from(firsts.len()).unwrap_or(u32::MAX);
                firsts.push(row);
                *g
            }
            None => u32::MAX,
        };
        ids.push(g);
    });
    Some(Assigned { ids, firsts })
}

/// Any keys: a hash map.
fn hashed(sel: &Sel, keys: &[Reader<'_>], strings: &StringPool) -> Assigned {
    let n = sel.len();
    let mut texts = Texts::default();
    let mut ids = Vec::with_capacity(n);
    let mut firsts = Vec::new();
    if let [k] = keys {
        let mut map: HashMap<Part, u32> = HashMap::default();
        let mut last: Option<(V, u32)> = None;
        scan(k, sel, |_, row, v| {
            if let Some((lv, g)) = last {
                if lv == v {
                    ids.push(g);
                    return;
                }
            }
            let p = texts.part(v, strings);
            let g = *map.entry(p).or_insert_with(|| {
                firsts.push(row);
                u32::try_from(firsts.len() - 1).unwrap_or(u32::MAX)
            });
            last = Some((v, g));
            ids.push(g);
        });
        return Assigned { ids, firsts };
    }
    // Several keys: the parts of each row, column by column, then the map.
    let mut parts: Vec<Part> = vec![Part::Null; n * keys.len()];
    let mut rows: Vec<usize> = vec![0; n];
    for (c, k) in keys.iter().enumerate() {
        scan(k, sel, |i, row, v| {
            if let Some(p) = parts.get_mut(i * keys.len() + c) {
                *p = texts.part(v, strings);
            }
            if let Some(r) = rows.get_mut(i) {
                *r = row;
            }
        });
    }
    let mut map: HashMap<&[Part], u32> = HashMap::default();
    for (key, row) in parts.chunks(keys.len().max(1)).zip(&rows) {
        let g = *map.entry(key).or_insert_with(|| {
            firsts.push(*row);
            u32::try_from(firsts.len() - 1).unwrap_or(u32::MAX)
        });
        ids.push(g);
    }
    Assigned { ids, firsts }
}

/// Distinct texts, numbered.
#[derive(Default)]
struct Texts {
    of_id: HashMap<StrId, u32>,
    ids: HashMap<String, u32>,
}

impl Texts {
    fn part(&mut self, v: V, strings: &StringPool) -> Part {
        match v {
            V::Null => Part::Null,
            V::Int(x) => Part::Int(x),
            V::Real(x) => Part::Real(if x == 0.0 { 0 } else { x.to_bits() }),
            V::Str(id) => {
                if let Some(t) = self.of_id.get(&id) {
                    return Part::Text(*t);
                }
                let s = strings.get(id).unwrap_or("");
                let next = u32::try_from(self.ids.len()).unwrap_or(u32::MAX);
                let t = *self.ids.entry(s.to_owned()).or_insert(next);
                self.of_id.insert(id, t);
                Part::Text(t)
            }
        }
    }
}
