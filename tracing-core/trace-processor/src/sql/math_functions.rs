//! SQLite's math functions (`sqrt`, `ln`, `log`, `pow`, `ceil`, `pi`, ...),
//! which Perfetto's SQLite is built with and the bundled one is not
//! (`SQLITE_ENABLE_MATH_FUNCTIONS` is off in libsqlite3-sys's build):
//! registered here with SQLite's semantics. An argument that is NULL or
//! not a number gives NULL, as does a result outside the domain (NaN);
//! `ceil`, `floor` and `trunc` keep an integer an integer.

use rusqlite::Connection;
use rusqlite::functions::{Context, FunctionFlags};
use rusqlite::types::{Value, ValueRef};

/// A numeric argument as SQLite's math functions read it: integers and
/// reals, and text that reads as one; None for anything else.
enum Num {
    Int(i64),
    Real(f64),
}

impl Num {
    fn f(&self) -> f64 {
        match self {
            Num::Int(v) => *v as f64,
            Num::Real(v) => *v,
        }
    }
}

fn num(ctx: &Context<'_>, i: usize) -> Option<Num> {
    match ctx.get_raw(i) {
        ValueRef::Integer(v) => Some(Num::Int(v)),
        ValueRef::Real(v) => Some(Num::Real(v)),
        ValueRef::Text(t) => {
            let t = std::str::from_utf8(t).ok()?.trim();
            t.parse::<i64>()
                .map(Num::Int)
                .or_else(|_| t.parse::<f64>().map(Num::Real))
                .ok()
        }
        _ => None,
    }
}

/// A real result, NULL when it is NaN (as SQLite stores one).
fn real(v: f64) -> Value {
    if v.is_nan() {
        Value::Null
    } else {
        Value::Real(v)
    }
}

/// `log(x)` is base 10; `log(b, x)` is base b; NULL outside the domain.
fn log(ctx: &Context<'_>) -> Value {
    let (base, x) = if ctx.len() == 2 {
        match (num(ctx, 0), num(ctx, 1)) {
            (Some(b), Some(x)) => (Some(b.f()), x.f()),
            _ => return Value::Null,
        }
    } else {
        match num(ctx, 0) {
            Some(x) => (None, x.f()),
            None => return Value::Null,
        }
    };
    if x <= 0.0 {
        return Value::Null;
    }
    match base {
        None => real(x.log10()),
        Some(b) if b <= 0.0 || b == 1.0 => Value::Null,
        Some(b) => real(x.ln() / b.ln()),
    }
}

/// `ceil`, `floor` or `trunc`: an integer stays itself, a real is rounded.
fn rounding(ctx: &Context<'_>, f: fn(f64) -> f64) -> Value {
    match num(ctx, 0) {
        Some(Num::Int(v)) => Value::Integer(v),
        Some(Num::Real(v)) => real(f(v)),
        None => Value::Null,
    }
}

/// A one-argument function and its name.
type Unary = (&'static str, fn(f64) -> f64);
/// A two-argument function and its name.
type Binary = (&'static str, fn(f64, f64) -> f64);

/// Registers the functions on `conn`.
pub fn register(conn: &Connection) -> rusqlite::Result<()> {
    let flags = FunctionFlags::SQLITE_UTF8 | FunctionFlags::SQLITE_DETERMINISTIC;
    let unary: &[Unary] = &[
        ("acos", f64::acos),
        ("acosh", f64::acosh),
        ("asin", f64::asin),
        ("asinh", f64::asinh),
        ("atan", f64::atan),
        ("atanh", f64::atanh),
        ("cos", f64::cos),
        ("cosh", f64::cosh),
        ("sin", f64::sin),
        ("sinh", f64::sinh),
        ("tan", f64::tan),
        ("tanh", f64::tanh),
        ("exp", f64::exp),
        ("sqrt", f64::sqrt),
        ("degrees", f64::to_degrees),
        ("radians", f64::to_radians),
    ];
    for (name, f) in unary {
        let f = *f;
        conn.create_scalar_function(*name, 1, flags, move |ctx| {
            Ok(num(ctx, 0).map_or(Value::Null, |x| real(f(x.f()))))
        })?;
    }
    // Logarithms of zero or less are NULL, not -inf or NaN.
    let logs: &[Unary] = &[("ln", f64::ln), ("log2", f64::log2), ("log10", f64::log10)];
    for (name, f) in logs {
        let f = *f;
        conn.create_scalar_function(*name, 1, flags, move |ctx| {
            Ok(match num(ctx, 0) {
                Some(x) if x.f() > 0.0 => real(f(x.f())),
                _ => Value::Null,
            })
        })?;
    }
    conn.create_scalar_function("log", 1, flags, |ctx| Ok(log(ctx)))?;
    conn.create_scalar_function("log", 2, flags, |ctx| Ok(log(ctx)))?;
    let binary: &[Binary] = &[
        ("atan2", f64::atan2),
        ("pow", f64::powf),
        ("power", f64::powf),
        ("mod", |a, b| a % b),
    ];
    for (name, f) in binary {
        let f = *f;
        conn.create_scalar_function(*name, 2, flags, move |ctx| {
            Ok(match (num(ctx, 0), num(ctx, 1)) {
                (Some(a), Some(b)) => real(f(a.f(), b.f())),
                _ => Value::Null,
            })
        })?;
    }
    let rounders: &[Unary] = &[
        ("ceil", f64::ceil),
        ("ceiling", f64::ceil),
        ("floor", f64::floor),
        ("trunc", f64::trunc),
    ];
    for (name, f) in rounders {
        let f = *f;
        conn.create_scalar_function(*name, 1, flags, move |ctx| Ok(rounding(ctx, f)))?;
    }
    conn.create_scalar_function("pi", 0, flags, |_| Ok(std::f64::consts::PI))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn one(sql: &str) -> Value {
        let c = Connection::open_in_memory().expect("sqlite");
        register(&c).expect("register");
        c.query_row(sql, [], |r| r.get::<_, Value>(0)).expect(sql)
    }

    #[test]
    fn math_functions_answer_as_sqlite_s() {
        assert_eq!(one("SELECT sqrt(16)"), Value::Real(4.0));
        assert_eq!(one("SELECT sqrt('16')"), Value::Real(4.0));
        assert_eq!(one("SELECT sqrt(-1)"), Value::Null);
        assert_eq!(one("SELECT sqrt(NULL)"), Value::Null);
        assert_eq!(one("SELECT sqrt('x')"), Value::Null);
        assert_eq!(one("SELECT ln(0)"), Value::Null);
        assert_eq!(one("SELECT log(100)"), Value::Real(2.0));
        assert_eq!(one("SELECT log(2, 8)"), Value::Real(3.0));
        assert_eq!(one("SELECT log(1, 8)"), Value::Null);
        assert_eq!(one("SELECT log2(8)"), Value::Real(3.0));
        assert_eq!(one("SELECT pow(2, 10)"), Value::Real(1024.0));
        assert_eq!(one("SELECT power(2, 0.5) = sqrt(2)"), Value::Integer(1));
        assert_eq!(one("SELECT mod(7, 3)"), Value::Real(1.0));
        assert_eq!(one("SELECT mod(7, 0)"), Value::Null);
        assert_eq!(one("SELECT ceil(1.2)"), Value::Real(2.0));
        assert_eq!(one("SELECT ceil(5)"), Value::Integer(5));
        assert_eq!(one("SELECT floor(-1.5)"), Value::Real(-2.0));
        assert_eq!(one("SELECT trunc(-1.5)"), Value::Real(-1.0));
        assert_eq!(one("SELECT pi()"), Value::Real(std::f64::consts::PI));
        assert_eq!(one("SELECT degrees(pi())"), Value::Real(180.0));
        assert_eq!(one("SELECT exp(0)"), Value::Real(1.0));
    }

    #[test]
    fn a_trace_s_engine_offers_them() {
        let tp = crate::TraceProcessor::from_storage(crate::Storage::default()).expect("engine");
        let rows = tp.query("SELECT sqrt(4), floor(2.5)").expect("query").rows;
        assert_eq!(
            rows,
            vec![vec![crate::Value::Real(2.0), crate::Value::Real(2.0)]]
        );
    }
}
