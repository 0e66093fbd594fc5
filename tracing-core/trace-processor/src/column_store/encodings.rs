//! Column encodings narrower than one full value per row, for the frozen
//! tables' largest columns: after a load most of the resident memory is
//! columns whose values repeat (an arg's key, its value type, a slice's
//! name and category, a set id repeated by each arg of its set) or span
//! little (a depth, a track id). Each encoding still finds a row's value
//! in constant time:
//!
//! - [`Codes`]: one byte or two per row, an index into a short list;
//! - [`Dict`]: pooled strings as codes into the distinct strings;
//! - [`Narrow`]: integers as codes added to the least value;
//! - [`Runs`]: integers stored once per run of equal values, a bit per
//!   row marking where a run starts and, per 64 rows, the runs before;
//! - [`Framed`]: 64-bit integers as 32-bit distances from the least of
//!   each 64 rows (times, durations).
//!
//! [`choose_ints`] and [`choose_strs`] pick the smallest for a column's
//! values (the plain vectors of `column_store/table.rs` when none is smaller), as
//! a [`Coded`] column.

use crate::column_store::strings::StrId;
use crate::hash::HashMap;

/// Columns of fewer rows are stored plainly: no encoding pays for itself.
pub(crate) const FEWEST_CODED: usize = 64;

/// Most entries a [`Codes`] list indexes (two bytes a row).
pub(crate) const MOST_CODES: usize = 1 << 16;

/// Indexes into a list of at most 2^16 entries, one byte each when the
/// list has at most 256.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Codes {
    /// Lists of up to 256 entries.
    U8(Vec<u8>),
    /// Lists of up to 65536 entries.
    U16(Vec<u16>),
}

impl Codes {
    /// The code of `row` (None past the end).
    #[inline]
    pub fn get(&self, row: usize) -> Option<usize> {
        match self {
            Codes::U8(v) => v.get(row).map(|c| usize::from(*c)),
            Codes::U16(v) => v.get(row).map(|c| usize::from(*c)),
        }
    }

    /// The codes `v` gives, in the narrowest width for `distinct` entries
    /// (None past 65536).
    fn pack(distinct: usize, v: impl Iterator<Item = usize>) -> Option<Codes> {
        if distinct <= 1 << 8 {
            Some(Codes::U8(v.map(|c| c as u8).collect()))
        } else if distinct <= MOST_CODES {
            Some(Codes::U16(v.map(|c| c as u16).collect()))
        } else {
            None
        }
    }

    /// Bytes per row.
    fn width(distinct: usize) -> usize {
        if distinct <= 1 << 8 { 1 } else { 2 }
    }

    /// An empty list with room for `len` codes, in the width for
    /// `distinct` entries (at most [`MOST_CODES`]), for [`Codes::push`].
    pub(crate) fn with_capacity(distinct: usize, len: usize) -> Codes {
        if Codes::width(distinct) == 1 {
            Codes::U8(Vec::with_capacity(len))
        } else {
            Codes::U16(Vec::with_capacity(len))
        }
    }

    /// Appends `code`, below the list's width (as
    /// [`Codes::with_capacity`] chose it).
    #[inline(always)]
    pub(crate) fn push(&mut self, code: u32) {
        match self {
            Codes::U8(v) => v.push(code as u8),
            Codes::U16(v) => v.push(code as u16),
        }
    }
}

/// Pooled strings (NULL as [`StrId::NULL`]) as codes into their distinct
/// values, in order of first appearance.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Dict {
    /// Per row, its string's place in `strings`.
    pub codes: Codes,
    /// The distinct strings.
    pub strings: Vec<StrId>,
}

impl Dict {
    /// The string of `row` (None past the end).
    #[inline]
    pub fn get(&self, row: usize) -> Option<StrId> {
        self.strings.get(self.codes.get(row)?).copied()
    }
}

/// Integers as unsigned codes added to the least of them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Narrow {
    /// The least value.
    pub base: i64,
    /// Per row, its value less `base`.
    pub codes: Codes,
}

impl Narrow {
    /// The value of `row` (None past the end).
    #[inline]
    pub fn get(&self, row: usize) -> Option<i64> {
        let c = self.codes.get(row)?;
        Some(self.base.wrapping_add(c as i64))
    }
}

/// Integers stored once per run of equal values.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Runs {
    /// A bit per row, set where a run starts (row 0 always).
    starts: Vec<u64>,
    /// Per word of `starts`, the runs started before it.
    before: Vec<u32>,
    /// Each run's value.
    values: Vec<i32>,
    len: usize,
}

impl Runs {
    /// The runs of `v` (None when a value does not fit 32 bits).
    fn pack(v: impl ExactSizeIterator<Item = i64>) -> Option<Runs> {
        let len = v.len();
        let words = len.div_ceil(64);
        let mut starts = vec![0u64; words];
        let mut before = Vec::with_capacity(words);
        let mut values: Vec<i32> = Vec::new();
        let mut last = None;
        for (i, x) in v.enumerate() {
            if i % 64 == 0 {
                before.push(u32::try_from(values.len()).ok()?);
            }
            let x = i32::try_from(x).ok()?;
            if last != Some(x) {
                if let Some(w) = starts.get_mut(i / 64) {
                    *w |= 1 << (i % 64);
                }
                values.push(x);
                last = Some(x);
            }
        }
        values.shrink_to_fit();
        Some(Runs {
            starts,
            before,
            values,
            len,
        })
    }

    /// The value of `row` (None past the end).
    #[inline]
    pub fn get(&self, row: usize) -> Option<i64> {
        if row >= self.len {
            return None;
        }
        let w = *self.starts.get(row / 64)?;
        let upto = w & (u64::MAX >> (63 - row % 64));
        let runs = *self.before.get(row / 64)? as usize + upto.count_ones() as usize;
        if runs == 0 {
            // Rows before the first start in this word: the run began in
            // an earlier word.
            return None;
        }
        self.values.get(runs - 1).map(|x| i64::from(*x))
    }

    /// Whether the values never descend.
    pub fn ascends(&self) -> bool {
        self.values.windows(2).all(|w| w[0] <= w[1])
    }
}

/// A column in one of these encodings.
#[derive(Debug)]
pub enum Coded {
    /// Integers as codes from the least.
    Narrow(Narrow),
    /// Integers by runs of equal values.
    Runs(Runs),
    /// Integers in frames of 64 rows.
    Framed(Framed),
    /// Strings as codes into the distinct ones.
    Dict(Dict),
    /// Strings mostly NULL: those present alone.
    Sparse(SparseStrs),
}

impl Coded {
    /// The integer of `row` (None for strings or past the end).
    #[inline]
    pub fn int_at(&self, row: usize) -> Option<i64> {
        match self {
            Coded::Narrow(n) => n.get(row),
            Coded::Runs(r) => r.get(row),
            Coded::Framed(f) => f.get(row),
            Coded::Dict(_) | Coded::Sparse(_) => None,
        }
    }

    /// The pooled string of `row` (None for integers or past the end).
    #[inline]
    pub fn str_at(&self, row: usize) -> Option<StrId> {
        match self {
            Coded::Dict(d) => d.get(row),
            Coded::Sparse(p) => p.get(row),
            _ => None,
        }
    }

    /// Whether it holds strings (else non-null integers).
    pub fn is_text(&self) -> bool {
        matches!(self, Coded::Dict(_) | Coded::Sparse(_))
    }

    /// Whether it holds integers that never descend.
    pub fn ascends(&self) -> bool {
        match self {
            Coded::Narrow(n) => match &n.codes {
                Codes::U8(v) => v.windows(2).all(|w| w[0] <= w[1]),
                Codes::U16(v) => v.windows(2).all(|w| w[0] <= w[1]),
            },
            Coded::Runs(r) => r.ascends(),
            Coded::Framed(f) => f.ascends(),
            Coded::Dict(_) | Coded::Sparse(_) => false,
        }
    }
}

/// The smallest encoding of non-null integers `v` (walked up to three
/// times) among [`Narrow`], [`Runs`] and [`Framed`], when it is smaller
/// than the plain vector (4 bytes a row when every value fits 32 bits,
/// else 8); None: store them plainly.
pub fn choose_ints(v: impl ExactSizeIterator<Item = i64> + Clone) -> Option<Coded> {
    let len = v.len();
    if len < FEWEST_CODED {
        return None;
    }
    let (mut min, mut max, mut runs) = (i64::MAX, i64::MIN, 0usize);
    let mut last = None;
    // Whether every frame of 64 rows spans less than 2^32.
    let (mut frames_fit, mut fmin, mut fmax) = (true, 0i64, 0i64);
    for (i, x) in v.clone().enumerate() {
        min = min.min(x);
        max = max.max(x);
        if last != Some(x) {
            runs += 1;
            last = Some(x);
        }
        if i % 64 == 0 {
            (fmin, fmax) = (x, x);
        } else {
            fmin = fmin.min(x);
            fmax = fmax.max(x);
            frames_fit &= (fmax.wrapping_sub(fmin) as u64) <= u64::from(u32::MAX);
        }
    }
    let span = usize::try_from(max.wrapping_sub(min) as u64).unwrap_or(usize::MAX);
    let fits = i32::try_from(min).is_ok() && i32::try_from(max).is_ok();
    let plain = if fits { 4 * len } else { 8 * len };
    let frames = len.div_ceil(64);
    let candidates = [
        (span < 1 << 16).then(|| (Codes::width(span + 1) * len, 0)),
        // A bit and a sixteenth of a count per row, 4 bytes per run.
        fits.then(|| (runs * 4 + frames * 12, 1)),
        frames_fit.then(|| (4 * len + 8 * frames, 2)),
    ];
    let (_, pick) = candidates
        .into_iter()
        .flatten()
        .filter(|(bytes, _)| *bytes < plain)
        .min()?;
    match pick {
        0 => {
            let codes = Codes::pack(span + 1, v.map(|x| x.wrapping_sub(min) as usize))?;
            Some(Coded::Narrow(Narrow { base: min, codes }))
        }
        1 => Runs::pack(v).map(Coded::Runs),
        _ => Some(Coded::Framed(Framed::pack(v))),
    }
}

/// Integers in frames of 64 rows: each frame's least value, and per row
/// its distance from it in 32 bits. For values too wide for 32 bits whose
/// frames span less (times in nanoseconds, durations): 4 bytes and an
/// eighth a row instead of 8.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Framed {
    /// Per frame, its least value.
    bases: Vec<i64>,
    /// Per row, its value less its frame's base.
    offsets: Vec<u32>,
}

impl Framed {
    /// The frames of `v`, whose every frame spans less than 2^32 (a wider
    /// one's values would read back wrong: [`choose_ints`] checks).
    fn pack(v: impl ExactSizeIterator<Item = i64> + Clone) -> Framed {
        let len = v.len();
        let mut bases = Vec::with_capacity(len.div_ceil(64));
        let mut base = 0i64;
        for (i, x) in v.clone().enumerate() {
            if i % 64 == 0 {
                bases.push(x);
                base = x;
            } else {
                base = base.min(x);
                if let Some(b) = bases.last_mut() {
                    *b = base;
                }
            }
        }
        let offsets = v
            .enumerate()
            .map(|(i, x)| {
                let b = bases.get(i / 64).copied().unwrap_or(0);
                x.wrapping_sub(b) as u32
            })
            .collect();
        Framed { bases, offsets }
    }

    /// The value of `row` (None past the end).
    #[inline]
    pub fn get(&self, row: usize) -> Option<i64> {
        let off = *self.offsets.get(row)?;
        Some(self.bases.get(row / 64)?.wrapping_add(i64::from(off)))
    }

    /// Whether the values never descend.
    fn ascends(&self) -> bool {
        let mut last = i64::MIN;
        (0..self.offsets.len()).all(|r| {
            let x = self.get(r).unwrap_or(i64::MIN);
            let up = x >= last;
            last = x;
            up
        })
    }
}

/// Pooled strings `v` as a [`Dict`] when they have at most 65536
/// distinct values (None: store them plainly).
pub fn choose_strs(v: &[StrId]) -> Option<Coded> {
    choose_strs_iter(v.iter().copied())
}

/// [`choose_strs`] over the strings `v` gives, walked a few times and
/// never collected (a table freezing from its rows holds no vector of the
/// column's ids beside its encoding): a [`Dict`] when the column has at
/// most 65536 distinct strings, or [`SparseStrs`] when most rows are NULL,
/// whichever is smaller, when it is smaller than 4 bytes a row.
pub fn choose_strs_iter(v: impl ExactSizeIterator<Item = StrId> + Clone) -> Option<Coded> {
    let len = v.len();
    if len < FEWEST_CODED {
        return None;
    }
    // One walk counts the strings present and finds the greatest id.
    let (present, top) = v.clone().fold((0usize, 0usize), |(n, top), s| {
        (n + usize::from(!s.is_null()), top.max(s.0 as usize))
    });
    let sparse = sparse_strs_bytes(len, present);
    // A dict takes at least a byte a row.
    if len < sparse.min(4 * len) {
        if let Some(d) = dict(v.clone(), top) {
            if strs_take_dict(len, present, d.strings.len()) {
                return Some(Coded::Dict(d));
            }
        }
    }
    (sparse < 4 * len).then(|| Coded::Sparse(SparseStrs::pack(v)))
}

/// Bytes of a [`SparseStrs`] of `len` rows, `present` of them strings.
fn sparse_strs_bytes(len: usize, present: usize) -> usize {
    present * 4 + len.div_ceil(64) * 12
}

/// Whether [`choose_strs_iter`] stores a column of `len` rows, `present`
/// of them strings, with `distinct` distinct strings (NULL counted) as a
/// [`Dict`]: from the counts alone, for a freeze that codes the column
/// itself.
pub(crate) fn strs_take_dict(len: usize, present: usize, distinct: usize) -> bool {
    if len < FEWEST_CODED || distinct > MOST_CODES {
        return false;
    }
    let best_else = sparse_strs_bytes(len, present).min(4 * len);
    len < best_else && Codes::width(distinct) * len + distinct * 4 <= best_else
}

/// The [`Dict`] of `v`, whose greatest pool id is `top` (None past 65536
/// distinct strings).
fn dict(v: impl ExactSizeIterator<Item = StrId> + Clone, top: usize) -> Option<Dict> {
    let len = v.len();
    // Pool ids are dense: codes by a list indexed by id when the column
    // is long beside the pool, else by a map.
    let mut strings = Vec::new();
    let codes = if top <= 4 * len {
        let mut code_of = vec![u32::MAX; top + 1];
        for s in v.clone() {
            let slot = code_of.get_mut(s.0 as usize)?;
            if *slot == u32::MAX {
                *slot = new_code(&mut strings, s)?;
            }
        }
        let code = |s: StrId| code_of.get(s.0 as usize).map_or(0, |c| *c as usize);
        Codes::pack(strings.len(), v.map(code))?
    } else {
        let mut code_of: HashMap<StrId, u32> = HashMap::default();
        for s in v.clone() {
            if let std::collections::hash_map::Entry::Vacant(e) = code_of.entry(s) {
                e.insert(new_code(&mut strings, s)?);
            }
        }
        let code = |s: StrId| code_of.get(&s).map_or(0, |c| *c as usize);
        Codes::pack(strings.len(), v.map(code))?
    };
    Some(Dict { codes, strings })
}

/// Pooled strings of which most rows are NULL: a bit per row, set where a
/// string is present, the present strings alone in row order, and per 64
/// rows the strings before them (an arg's `string_value`, NULL for every
/// arg that is no string).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SparseStrs {
    present: Vec<u64>,
    before: Vec<u32>,
    values: Vec<StrId>,
    len: usize,
}

impl SparseStrs {
    /// The strings of `v`.
    fn pack(v: impl ExactSizeIterator<Item = StrId>) -> SparseStrs {
        let len = v.len();
        let words = len.div_ceil(64);
        let mut present = vec![0u64; words];
        let mut before = Vec::with_capacity(words);
        let mut values = Vec::new();
        for (i, s) in v.enumerate() {
            if i % 64 == 0 {
                before.push(u32::try_from(values.len()).unwrap_or(u32::MAX));
            }
            if !s.is_null() {
                if let Some(w) = present.get_mut(i / 64) {
                    *w |= 1 << (i % 64);
                }
                values.push(s);
            }
        }
        values.shrink_to_fit();
        SparseStrs {
            present,
            before,
            values,
            len,
        }
    }

    /// The string of `row` ([`StrId::NULL`] where none; None past the
    /// end).
    #[inline]
    pub fn get(&self, row: usize) -> Option<StrId> {
        if row >= self.len {
            return None;
        }
        let w = *self.present.get(row / 64)?;
        let bit = 1u64 << (row % 64);
        if w & bit == 0 {
            return Some(StrId::NULL);
        }
        let before = *self.before.get(row / 64)? as usize;
        self.values
            .get(before + (w & (bit - 1)).count_ones() as usize)
            .copied()
    }
}

/// The code of `s`, new in `strings` (None past 2^16 strings).
fn new_code(strings: &mut Vec<StrId>, s: StrId) -> Option<u32> {
    if strings.len() == 1 << 16 {
        return None;
    }
    strings.push(s);
    u32::try_from(strings.len() - 1).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn runs_read_back_every_row() {
        // Runs of 1 to 150 rows, across words, a run at each word start.
        let mut v = Vec::new();
        let mut x = -5i64;
        for len in [1usize, 3, 64, 1, 150, 7, 63, 2, 129] {
            v.extend(std::iter::repeat_n(x, len));
            x += 3;
        }
        let r = Runs::pack(v.iter().copied()).expect("fits");
        assert_eq!(r.values.len(), 9);
        for (i, x) in v.iter().enumerate() {
            assert_eq!(r.get(i), Some(*x), "row {i}");
        }
        assert_eq!(r.get(v.len()), None);
        assert!(r.ascends());
        assert!(Runs::pack([1i64 << 40].into_iter()).is_none());
    }

    #[test]
    fn the_smallest_encoding_is_chosen() {
        // Few distinct and narrow: codes of a byte.
        let small: Vec<i64> = (0..1000).map(|i| 100 + i % 7).collect();
        match choose_ints(small.iter().copied()) {
            Some(Coded::Narrow(n)) => {
                assert!(matches!(n.codes, Codes::U8(_)));
                assert!((0..1000).all(|i| n.get(i) == Some(small[i])));
            }
            other => panic!("{other:?}"),
        }
        // Long runs of far apart values: runs.
        let sets: Vec<i64> = (0..1000).map(|i| (i / 10) * 100_000).collect();
        match choose_ints(sets.iter().copied()) {
            Some(Coded::Runs(r)) => {
                assert!((0..1000).all(|i| r.get(i) == Some(sets[i])));
            }
            other => panic!("{other:?}"),
        }
        // A span of two bytes.
        let mid: Vec<i64> = (0..1000).map(|i| (i * 37) % 40_000 - 20_000).collect();
        match choose_ints(mid.iter().copied()) {
            Some(Coded::Narrow(n)) => {
                assert!(matches!(n.codes, Codes::U16(_)));
                assert!((0..1000).all(|i| n.get(i) == Some(mid[i])));
            }
            other => panic!("{other:?}"),
        }
        // Wide and changing every row: plain.
        let wide: Vec<i64> = (0..1000).map(|i| i * 1_000_003).collect();
        assert!(choose_ints(wide.iter().copied()).is_none());
        // Past 32 bits, each frame of 64 rows spanning less: framed.
        let times: Vec<i64> = (0..1000)
            .map(|i| 1_700_000_000_000_000_000 + i * 3_000_000 - (i % 7) * 1000)
            .collect();
        match choose_ints(times.iter().copied()) {
            Some(Coded::Framed(f)) => {
                assert!((0..1000).all(|i| f.get(i) == Some(times[i])));
                assert_eq!(f.get(1000), None);
                assert!(Coded::Framed(f).ascends());
            }
            other => panic!("{other:?}"),
        }
        // A frame spanning 2^32 or more: plain.
        let mut far = times.clone();
        far[70] = i64::MIN;
        assert!(choose_ints(far.iter().copied()).is_none());
        assert!(choose_ints([1i64, 2].into_iter()).is_none());
    }

    /// A column mostly NULL with many distinct strings keeps the present
    /// ones alone; few distinct strings stay a dict.
    #[test]
    fn mostly_null_strings_keep_those_present() {
        let v: Vec<StrId> = (0..200_000u32)
            .map(|i| {
                if i % 9 == 4 {
                    StrId(i + 1)
                } else {
                    StrId::NULL
                }
            })
            .collect();
        let Some(Coded::Sparse(p)) = choose_strs(&v) else {
            panic!("sparse");
        };
        assert_eq!(p.values.len(), v.iter().filter(|s| !s.is_null()).count());
        assert!(v.iter().enumerate().all(|(i, s)| p.get(i) == Some(*s)));
        assert_eq!(p.get(v.len()), None);
        let few: Vec<StrId> = (0..1000u32)
            .map(|i| {
                if i % 2 == 0 {
                    StrId(i % 3 + 1)
                } else {
                    StrId::NULL
                }
            })
            .collect();
        assert!(matches!(choose_strs(&few), Some(Coded::Dict(_))));
    }

    #[test]
    fn a_dict_keeps_each_rows_string() {
        let v: Vec<StrId> = (0..500u32)
            .map(|i| {
                if i % 11 == 0 {
                    StrId::NULL
                } else {
                    StrId(i % 13 + 40)
                }
            })
            .collect();
        let Some(Coded::Dict(d)) = choose_strs(&v) else {
            panic!("few distinct");
        };
        assert!(matches!(d.codes, Codes::U8(_)));
        assert!(v.iter().enumerate().all(|(i, s)| d.get(i) == Some(*s)));
        assert_eq!(d.get(500), None);
        // Past 65536 distinct: plain.
        let many: Vec<StrId> = (0..70_000u32).map(StrId).collect();
        assert!(choose_strs(&many).is_none());
        let two_bytes: Vec<StrId> = (0..70_000u32).map(|i| StrId(i % 300)).collect();
        let Some(Coded::Dict(d)) = choose_strs(&two_bytes) else {
            panic!("300 distinct");
        };
        assert!(matches!(d.codes, Codes::U16(_)));
        assert_eq!(d.get(69_999), Some(StrId(69_999 % 300)));
        // Ids far past the column's length: found by a map.
        let far: Vec<StrId> = (0..100u32).map(|i| StrId(1_000_000 + i % 5)).collect();
        let Some(Coded::Dict(d)) = choose_strs(&far) else {
            panic!("5 distinct");
        };
        assert_eq!(d.strings.len(), 5);
        assert!(far.iter().enumerate().all(|(i, s)| d.get(i) == Some(*s)));
    }
}
