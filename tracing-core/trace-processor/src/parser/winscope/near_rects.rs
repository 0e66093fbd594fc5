//! A set of rectangles asked "is any of you almost equal to this one?"
//! once per layer of a snapshot. A linear scan made that question cost
//! displays × layers, both counts the trace chooses; here each rectangle
//! sits in a grid cell keyed by its coordinates, and a question looks in
//! the few cells a rectangle within the tolerance can fall in.

use crate::hash::HashMap;

use super::geometry::{CLOSE, Rect};

/// The grid's cell side: twice the tolerance, so that the coordinates
/// within [`CLOSE`] of a value fall in at most two cells per axis.
const CELL: f64 = 2.0 * CLOSE;

/// Rectangles looked up by [`Rect::almost_eq`] in constant time.
#[derive(Debug, Default)]
pub struct NearRects {
    cells: HashMap<[i64; 4], Vec<Rect>>,
}

/// The cell a coordinate lies in (saturating for huge values; a NaN
/// lands in cell 0, where `almost_eq` still decides).
fn cell(v: f64) -> i64 {
    (v / CELL).floor() as i64
}

fn coords(r: &Rect) -> [f64; 4] {
    [r.x, r.y, r.w, r.h]
}

impl NearRects {
    /// The set of `rects`, exact duplicates kept once.
    pub fn new(rects: impl IntoIterator<Item = Rect>) -> Self {
        let mut set = Self::default();
        for r in rects {
            let bucket = set.cells.entry(coords(&r).map(cell)).or_default();
            if !bucket.contains(&r) {
                bucket.push(r);
            }
        }
        set
    }

    /// Whether some rectangle of the set is almost equal to `r`.
    pub fn any_almost_eq(&self, r: &Rect) -> bool {
        if self.cells.is_empty() {
            return false;
        }
        let c = coords(r);
        // Per axis, the cells of `v - CLOSE` and `v + CLOSE` (the same
        // cell, or two neighbours).
        let span = c.map(|v| (cell(v - CLOSE), cell(v + CLOSE)));
        let mut key = [0i64; 4];
        for mask in 0u8..16 {
            for (axis, (lo, hi)) in span.iter().enumerate() {
                key[axis] = if mask & (1 << axis) == 0 { *lo } else { *hi };
            }
            // A duplicate corner (lo == hi) is skipped after its first visit.
            if (0..4).any(|a| mask & (1 << a) != 0 && span[a].0 == span[a].1) {
                continue;
            }
            if self
                .cells
                .get(&key)
                .is_some_and(|b| b.iter().any(|s| s.almost_eq(r)))
            {
                return true;
            }
        }
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn linear(set: &[Rect], r: &Rect) -> bool {
        set.iter().any(|s| s.almost_eq(r))
    }

    #[test]
    fn answers_as_a_linear_scan_near_cell_edges() {
        let base = [
            Rect::ltrb(-10_800.0, -24_000.0, 10_800.0, 24_000.0),
            Rect::ltrb(0.019_999, 0.0, 100.0, 50.0),
            Rect::ltrb(-0.005, 0.0, 1.0, 1.0),
            Rect::ltrb(f64::NAN, 0.0, 1.0, 1.0),
            Rect::ltrb(1e300, -1e300, 1e301, 1e301),
        ];
        let set = NearRects::new(base);
        let steps = [-0.011, -0.0099, -0.005, 0.0, 0.004, 0.0099, 0.0101, 0.02];
        for b in &base {
            for dx in steps {
                for dh in steps {
                    let q = Rect {
                        x: b.x + dx,
                        h: b.h + dh,
                        ..*b
                    };
                    assert_eq!(set.any_almost_eq(&q), linear(&base, &q), "{q:?}");
                }
            }
        }
    }

    #[test]
    fn many_rects_are_asked_without_a_scan() {
        // 20 000 distinct rectangles: a question touches at most 16 cells.
        let rects: Vec<Rect> = (0..20_000)
            .map(|i| Rect::ltrb(0.0, 0.0, f64::from(i), 10.0))
            .collect();
        let set = NearRects::new(rects.iter().copied());
        assert!(set.cells.values().all(|b| b.len() == 1));
        assert!(set.any_almost_eq(&Rect::ltrb(0.0, 0.0, 1234.005, 10.0)));
        assert!(!set.any_almost_eq(&Rect::ltrb(0.0, 0.0, 1234.5, 10.0)));
    }
}
