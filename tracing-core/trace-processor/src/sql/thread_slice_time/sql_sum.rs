//! SQLite's `sum()` as the bundled SQLite computes it, for operators that
//! replace a `sum` in SQL and must answer the same bits: integers add
//! exactly until a double arrives (or they overflow), from then on every
//! value is added with Kahan-Babuska-Neumaier compensation, and the result
//! is the running sum plus its compensation. The values come in the order
//! the operator sees them.

/// A value added or answered: an integer or a double.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Num {
    /// An integer.
    Int(i64),
    /// A double.
    Real(f64),
}

/// Integers from this magnitude on do not fit a double's mantissa and are
/// added in two parts.
const BIG: i64 = 4_503_599_627_370_496;

/// A running `sum()`.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct SqlSum {
    int: i64,
    approx: bool,
    sum: f64,
    err: f64,
    overflow: bool,
    any: bool,
}

impl SqlSum {
    /// Adds `v`.
    pub(crate) fn add(&mut self, v: Num) {
        self.any = true;
        match (self.approx, v) {
            (false, Num::Int(x)) => match self.int.checked_add(x) {
                Some(s) => self.int = s,
                None => {
                    self.overflow = true;
                    self.start_approx();
                    self.add_int(x);
                }
            },
            (false, Num::Real(x)) => {
                self.start_approx();
                self.step(x);
            }
            (true, Num::Int(x)) => self.add_int(x),
            (true, Num::Real(x)) => {
                self.overflow = false;
                self.step(x);
            }
        }
    }

    /// The sum; None when nothing was added. An integer overflow that no
    /// double followed, which SQLite reports as an error, answers the
    /// approximate sum.
    pub(crate) fn finish(&self) -> Option<Num> {
        if !self.any {
            return None;
        }
        Some(if !self.approx {
            Num::Int(self.int)
        } else if self.err.is_finite() {
            Num::Real(self.sum + self.err)
        } else {
            Num::Real(self.sum)
        })
    }

    /// Turns the exact integer sum into the compensated one.
    fn start_approx(&mut self) {
        self.approx = true;
        let i = self.int;
        if i <= -BIG || i >= BIG {
            let small = i % 16384;
            self.sum = (i - small) as f64;
            self.err = small as f64;
        } else {
            self.sum = i as f64;
            self.err = 0.0;
        }
    }

    /// Adds integer `x` to the compensated sum.
    fn add_int(&mut self, x: i64) {
        if x <= -BIG || x >= BIG {
            let small = x % 16384;
            self.step((x - small) as f64);
            self.step(small as f64);
        } else {
            self.step(x as f64);
        }
    }

    /// One compensated step.
    fn step(&mut self, r: f64) {
        let s = self.sum;
        let t = s + r;
        if s.abs() > r.abs() {
            self.err += (s - t) + r;
        } else {
            self.err += (r - t) + s;
        }
        self.sum = t;
    }
}

/// `CAST(v AS INT)`: a double truncated toward zero (saturating; NaN is 0).
pub(crate) fn cast_int(v: Num) -> i64 {
    match v {
        Num::Int(x) => x,
        Num::Real(x) => x as i64,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rusqlite::Connection;

    /// SQLite's own `sum` of `values`, as a double or an integer.
    fn sqlite_sum(values: &[Num]) -> Option<Num> {
        let conn = Connection::open_in_memory().expect("sqlite");
        conn.execute_batch("CREATE TABLE v(x)").expect("table");
        for v in values {
            match v {
                Num::Int(x) => conn.execute("INSERT INTO v VALUES (?1)", [x]),
                Num::Real(x) => conn.execute("INSERT INTO v VALUES (?1)", [x]),
            }
            .expect("insert");
        }
        conn.query_row("SELECT sum(x) FROM v", [], |r| {
            Ok(match r.get_ref(0)? {
                rusqlite::types::ValueRef::Integer(x) => Some(Num::Int(x)),
                rusqlite::types::ValueRef::Real(x) => Some(Num::Real(x)),
                _ => None,
            })
        })
        .expect("sum")
    }

    fn ours(values: &[Num]) -> Option<Num> {
        let mut s = SqlSum::default();
        for v in values {
            s.add(*v);
        }
        s.finish()
    }

    #[test]
    fn the_sum_is_sqlites_to_the_bit() {
        let cases: Vec<Vec<Num>> = vec![
            vec![],
            vec![Num::Int(3), Num::Int(-7)],
            vec![Num::Real(0.1), Num::Real(0.2), Num::Real(0.3)],
            vec![
                Num::Int(1),
                Num::Real(1e16),
                Num::Real(1.0),
                Num::Real(-1e16),
            ],
            vec![
                Num::Int(i64::MAX - 5),
                Num::Real(0.5),
                Num::Int(4_503_599_627_370_497),
            ],
            vec![Num::Real(1e300), Num::Real(1e300), Num::Real(-1e300)],
            (0..1000)
                .map(|i| Num::Real(f64::from(i) * 1.1e-3 + 7.77e9))
                .collect(),
        ];
        for c in cases {
            let (a, b) = (ours(&c), sqlite_sum(&c));
            match (a, b) {
                (Some(Num::Real(x)), Some(Num::Real(y))) => {
                    assert_eq!(x.to_bits(), y.to_bits(), "{c:?}");
                }
                _ => assert_eq!(a, b, "{c:?}"),
            }
        }
        assert_eq!(cast_int(Num::Real(-2.9)), -2);
        assert_eq!(cast_int(Num::Real(1e30)), i64::MAX);
    }
}
