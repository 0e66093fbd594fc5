//! Freezes the `args` table straight from the stored 12-byte args
//! ([`ArgTable::freeze`]). The declared rows' generic freeze
//! (`ArgRow::freeze_iter` over [`ArgTable::rows`]) walks the rows once or
//! more per column, about 17 walks over millions of args, and makes each
//! row whole (its set, its key pair, its value) on every walk. Here the
//! key, flat key and value type columns come from each arg's pair index
//! and kind: one walk counts the rows of each pair and kind in order of
//! first appearance (the order a column's distinct strings take), a second
//! writes the three codes of every row; the set ids and the values are
//! encoded as before, from walks that read only what their column takes.
//! The table is the generic freeze's, encoding for encoding (the tests
//! compare them).

use std::ops::Range;
use std::sync::Arc;

use super::{ArgTable, StoredArg};
use crate::column_store::encodings::{Coded, Codes, Dict, strs_take_dict};
use crate::column_store::strings::{StrId, StringPool};
use crate::column_store::table::{Column, ColumnData, Table};
use crate::hash::HashMap;
use crate::tables::ColumnValue;
use crate::tables::args::{ArgRow, ArgValue};

/// The stored args of the sets not retired, in order, with their places.
#[derive(Debug, Clone)]
struct Kept<'a> {
    args: &'a [StoredArg],
    /// The ranges still to walk after the current one.
    ranges: &'a [Range<usize>],
    /// The current range's next place and its end.
    at: usize,
    end: usize,
    /// Rows left.
    left: usize,
}

impl<'a> Kept<'a> {
    fn new(args: &'a [StoredArg], ranges: &'a [Range<usize>]) -> Self {
        Kept {
            args,
            ranges,
            at: 0,
            end: 0,
            left: ranges.iter().map(|r| r.len()).sum(),
        }
    }
}

impl Iterator for Kept<'_> {
    type Item = (usize, StoredArg);

    #[inline(always)]
    fn next(&mut self) -> Option<(usize, StoredArg)> {
        while self.at >= self.end {
            let (r, rest) = self.ranges.split_first()?;
            self.ranges = rest;
            self.at = r.start;
            self.end = r.end;
        }
        let at = self.at;
        self.at += 1;
        self.left = self.left.saturating_sub(1);
        Some((at, *self.args.get(at)?))
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.left, Some(self.left))
    }
}

impl ExactSizeIterator for Kept<'_> {}

/// The set id of each kept arg: the place of the latest set start.
#[derive(Debug, Clone)]
struct SetIds<'a> {
    kept: Kept<'a>,
    table: &'a ArgTable,
    set: u32,
}

impl Iterator for SetIds<'_> {
    type Item = u32;

    #[inline(always)]
    fn next(&mut self) -> Option<u32> {
        let (at, _) = self.kept.next()?;
        if self.table.starts_at(at) {
            self.set = u32::try_from(at).unwrap_or(u32::MAX);
        }
        Some(self.set)
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        self.kept.size_hint()
    }
}

impl ExactSizeIterator for SetIds<'_> {}

/// One text column's distinct strings in order of first appearance, and
/// its rows that hold one (not NULL).
#[derive(Debug, Default)]
struct Distinct {
    strings: Vec<StrId>,
    code_of: HashMap<StrId, u32>,
    present: usize,
}

impl Distinct {
    /// The code of `s` (new when first seen); `rows` more rows hold it.
    fn code(&mut self, s: StrId, rows: usize) -> u32 {
        if !s.is_null() {
            self.present += rows;
        }
        let strings = &mut self.strings;
        *self.code_of.entry(s).or_insert_with(|| {
            strings.push(s);
            u32::try_from(strings.len() - 1).unwrap_or(u32::MAX)
        })
    }

    /// Whether the generic encoder stores a column of `len` rows with
    /// these strings as a dictionary (else sparse or plain): its rule,
    /// from the counts alone.
    fn is_dict(&self, len: usize) -> bool {
        strs_take_dict(len, self.present, self.strings.len())
    }

    /// An empty list of `len` codes in the dictionary's width.
    fn codes(&self, len: usize) -> Codes {
        Codes::with_capacity(self.strings.len(), len)
    }
}

/// The column `name` of the declaration, as the generic freeze names and
/// types it.
fn text_column(name: &'static str, data: ColumnData) -> Column {
    Column {
        name,
        sql_type: crate::tables::SqlType::Text.declared(),
        data,
    }
}

impl ArgTable {
    /// The frozen `args` table: every arg of a set not retired, in set
    /// order, as `ArgRow::freeze_iter(self.rows(), strings)` gives it, in
    /// fewer walks over the args (the module's doc). The value types'
    /// texts ([`ArgValue::TYPE_NAMES`]) are read from `strings`.
    pub fn freeze(&self, strings: &Arc<StringPool>) -> Table {
        if !self.keys.overflow.is_empty() {
            // Pairs kept by the arg's place: the generic walk reads them.
            return ArgRow::freeze_iter(self.rows(), strings);
        }
        let ranges = self.kept_ranges();
        let kept = Kept::new(&self.args, &ranges);
        let len = kept.len();

        // Walk 1: the rows of each pair and each kind, in order of first
        // appearance.
        let mut pair_rows = vec![0usize; self.keys.pairs.len()];
        let mut pair_order = Vec::new();
        let mut kind_rows = [0usize; 8];
        let mut kind_order = Vec::new();
        for (_, a) in kept.clone() {
            let pair = a.pair() as usize;
            if let Some(n) = pair_rows.get_mut(pair) {
                if *n == 0 {
                    pair_order.push(pair);
                }
                *n += 1;
            }
            let kind = usize::from(a.kind() & 7);
            if let Some(n) = kind_rows.get_mut(kind) {
                if *n == 0 {
                    kind_order.push(kind);
                }
                *n += 1;
            }
        }
        // Each pair's and kind's codes, the strings in the order their
        // first rows came.
        let mut keys = Distinct::default();
        let mut flat_keys = Distinct::default();
        let mut types = Distinct::default();
        let mut pair_codes = vec![(0u32, 0u32); self.keys.pairs.len()];
        for &pair in &pair_order {
            let rows = pair_rows.get(pair).copied().unwrap_or(0);
            let (key, flat_key) = self.keys.pairs.get(pair).copied().unwrap_or_default();
            if let Some(c) = pair_codes.get_mut(pair) {
                *c = (flat_keys.code(flat_key, rows), keys.code(key, rows));
            }
        }
        let mut kind_codes = [0u32; 8];
        for &kind in &kind_order {
            let rows = kind_rows.get(kind).copied().unwrap_or(0);
            let name = kind_value(kind as u8).type_name();
            let text = strings.find(name).unwrap_or(StrId::NULL);
            if let Some(c) = kind_codes.get_mut(kind) {
                *c = types.code(text, rows);
            }
        }

        // Walk 2: the codes of the dictionary columns.
        let mut flat_codes = flat_keys.is_dict(len).then(|| flat_keys.codes(len));
        let mut key_codes = keys.is_dict(len).then(|| keys.codes(len));
        let mut type_codes = types.is_dict(len).then(|| types.codes(len));
        if flat_codes.is_some() || key_codes.is_some() || type_codes.is_some() {
            for (_, a) in kept.clone() {
                let (flat, key) = pair_codes.get(a.pair() as usize).copied().unwrap_or((0, 0));
                if let Some(c) = flat_codes.as_mut() {
                    c.push(flat);
                }
                if let Some(c) = key_codes.as_mut() {
                    c.push(key);
                }
                if let Some(c) = type_codes.as_mut() {
                    let kind = usize::from(a.kind() & 7);
                    c.push(kind_codes.get(kind).copied().unwrap_or(0));
                }
            }
        }
        let dict_or = |codes: Option<Codes>,
                       d: &mut Distinct,
                       each: &dyn Fn(StoredArg) -> StrId| match codes {
            Some(codes) => ColumnData::Coded(Coded::Dict(Dict {
                codes,
                strings: std::mem::take(&mut d.strings),
            })),
            None => ColumnData::strs_iter(kept.clone().map(|(_, a)| each(a))),
        };
        let pairs = &self.keys.pairs;
        let pair_of = |a: StoredArg| pairs.get(a.pair() as usize).copied().unwrap_or_default();
        let flat_key = dict_or(flat_codes, &mut flat_keys, &|a| pair_of(a).1);
        let key = dict_or(key_codes, &mut keys, &|a| pair_of(a).0);
        let value_type = dict_or(type_codes, &mut types, &|a| {
            strings.find(a.value().type_name()).unwrap_or(StrId::NULL)
        });

        let decl = &ArgRow::TABLE;
        let name = |i: usize| decl.columns.get(i).map_or("", |c| c.name);
        let set_ids = SetIds {
            kept: kept.clone(),
            table: self,
            set: 0,
        };
        let columns = vec![
            <u32 as ColumnValue>::column(name(1), set_ids),
            text_column(name(2), flat_key),
            text_column(name(3), key),
            <Option<i64> as ColumnValue>::column(
                name(4),
                kept.clone().map(|(_, a)| a.value().int_value()),
            ),
            <StrId as ColumnValue>::column(
                name(5),
                kept.clone().map(|(_, a)| a.value().string_value()),
            ),
            <Option<f64> as ColumnValue>::column(
                name(6),
                kept.clone().map(|(_, a)| a.value().real_value()),
            ),
            text_column(name(7), value_type),
        ];
        crate::tables::freeze(decl, len, columns, strings)
    }

    /// The places of the args of the sets not retired, as ranges in
    /// order.
    fn kept_ranges(&self) -> Vec<Range<usize>> {
        let mut gone: Vec<Range<usize>> = self
            .retired
            .iter()
            .map(|&id| self.range_of(id))
            .filter(|r| !r.is_empty())
            .collect();
        gone.sort_unstable_by_key(|r| r.start);
        let mut kept = Vec::with_capacity(gone.len() + 1);
        let mut from = 0;
        for r in gone {
            if r.start > from {
                kept.push(from..r.start);
            }
            from = from.max(r.end);
        }
        if from < self.args.len() {
            kept.push(from..self.args.len());
        }
        kept
    }
}

/// A value of kind `kind` ([`StoredArg::kind`]), for its type's name.
fn kind_value(kind: u8) -> ArgValue {
    StoredArg {
        keys: u32::from(kind) << super::PAIR_BITS,
        lo: 0,
        hi: 0,
    }
    .value()
}

#[cfg(test)]
mod tests;
