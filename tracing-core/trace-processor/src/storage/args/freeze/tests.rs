//! [`ArgTable::freeze`] against the declared rows' generic freeze, column
//! by column and encoding by encoding.

use super::*;
use crate::storage::args::ArgSetBuilder;

/// A small deterministic generator (xorshift).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// A pool with the value types' texts and `keys` keys, `values` string
/// values.
fn pool(keys: u32, values: u32) -> (StringPool, Vec<StrId>, Vec<StrId>) {
    let mut p = StringPool::default();
    for t in ArgValue::TYPE_NAMES {
        p.intern(t);
    }
    let k = (0..keys).map(|i| p.intern(&format!("key{i}"))).collect();
    let v = (0..values)
        .map(|i| p.intern(&format!("value{i}")))
        .collect();
    (p, k, v)
}

/// A value of a random kind; strings from `values`.
fn value(rng: &mut Rng, values: &[StrId], kinds: u64) -> ArgValue {
    let x = rng.next();
    let s = values
        .get(rng.below(values.len().max(1) as u64) as usize)
        .copied()
        .unwrap_or(StrId::NULL);
    match rng.below(kinds) {
        0 => ArgValue::Int(x as i64 >> rng.below(64)),
        1 => ArgValue::Uint(x >> rng.below(64)),
        2 => ArgValue::String(s),
        3 => ArgValue::Real(f64::from_bits(x)),
        4 => ArgValue::Pointer(x),
        5 => ArgValue::Bool(x & 1 == 1),
        6 => ArgValue::Json(s),
        _ => ArgValue::Null,
    }
}

/// `sets` random sets of 1 to 5 args over `keys` (a key with two flat
/// keys among them), every seventh retired when `retire`.
fn table(
    rng: &mut Rng,
    sets: usize,
    keys: &[StrId],
    values: &[StrId],
    kinds: u64,
    retire: bool,
) -> ArgTable {
    let mut t = ArgTable::default();
    for n in 0..sets {
        let mut b = ArgSetBuilder::default();
        for _ in 0..=rng.below(5) {
            let key = keys
                .get(rng.below(keys.len() as u64) as usize)
                .copied()
                .unwrap_or(StrId::NULL);
            // Key 0 goes with two flat keys.
            let flat = if key == keys[0] && rng.below(2) == 0 {
                keys[keys.len() - 1]
            } else {
                key
            };
            b.add(flat, key, value(rng, values, kinds));
        }
        let id = t.add_set(&b);
        if retire && n % 7 == 3 {
            if let Some(id) = id {
                t.retire(id);
            }
        }
    }
    t
}

/// The two freezes agree: the same columns (names, types, encodings,
/// values), length and sorted column.
fn check(t: &ArgTable, strings: &Arc<StringPool>) {
    let fast = t.freeze(strings);
    let slow = ArgRow::freeze_iter(t.rows(), strings);
    assert_eq!(fast.len, slow.len);
    assert_eq!(fast.sorted_by, slow.sorted_by);
    assert_eq!(fast.columns.len(), slow.columns.len());
    for (f, s) in fast.columns.iter().zip(&slow.columns) {
        assert_eq!(format!("{f:?}"), format!("{s:?}"), "column {}", s.name);
    }
}

#[test]
fn the_freeze_is_the_generic_freeze_of_the_rows() {
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    // (sets, keys, string values, kinds, retire)
    let shapes = [
        (0, 3, 3, 8, false),
        (5, 3, 3, 8, false),
        (20, 3, 3, 8, true),
        (3000, 4, 5, 8, false),
        (3000, 4, 5, 8, true),
        (3000, 40, 2000, 8, true),
        // Keys past a byte's codes.
        (4000, 600, 50, 8, true),
        // Strings alone, then no strings at all.
        (2000, 5, 30, 3, false),
        (2000, 5, 30, 2, false),
    ];
    for (sets, keys, values, kinds, retire) in shapes {
        let (p, k, v) = pool(keys, values);
        let strings = Arc::new(p);
        let t = table(&mut rng, sets, &k, &v, kinds, retire);
        check(&t, &strings);
    }
}

/// Text columns with NULL among their strings (a NULL key, NULL string
/// values), and value types whose texts were never pooled, agree too.
#[test]
fn null_strings_and_unpooled_type_texts_agree() {
    let mut rng = Rng(7);
    let mut p = StringPool::default();
    let k: Vec<StrId> = (0..6).map(|i| p.intern(&format!("k{i}"))).collect();
    let mut keys = k.clone();
    keys.push(StrId::NULL);
    let values = [StrId::NULL, k[1], k[2]];
    let strings = Arc::new(p);
    let t = table(&mut rng, 3000, &keys, &values, 8, true);
    check(&t, &strings);
}

/// A table whose pairs are past the most the stored bits name keeps them
/// by the arg's place: its freeze is the generic one.
#[test]
fn pairs_kept_apart_freeze_alike() {
    let mut rng = Rng(11);
    let (p, k, v) = pool(10, 10);
    let strings = Arc::new(p);
    let mut t = ArgTable::default();
    t.keys.most = 2;
    let mut b = ArgSetBuilder::default();
    for n in 0..500 {
        b.clear();
        b.add(k[n % 10], k[n % 10], value(&mut rng, &v, 8));
        b.add(k[(n + 3) % 10], k[(n + 3) % 10], value(&mut rng, &v, 8));
        t.add_set(&b);
    }
    assert!(!t.keys.overflow.is_empty());
    check(&t, &strings);
}
