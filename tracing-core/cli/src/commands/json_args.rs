//! The trace processor's `args` rows of one arg set (flat keys such as
//! `debug.d.b[0]`) rebuilt as the JSON object Chrome's trace format puts
//! under an event's `args`: dotted keys become nested objects, `[i]`
//! array elements, each value typed as its `value_type` says; debug
//! annotations (`debug.*`) lifted to the top, as Perfetto's JSON exporter
//! lifts them, and its internal `legacy_event.*` keys left out.

use serde_json::{Map, Value, json};
use zerotrace_trace_processor::Value as Sql;

/// How deep an arg's key is followed (a hostile trace may name a debug
/// annotation with thousands of dots); deeper values become `null`.
pub const MAX_ARG_DEPTH: usize = 64;

/// One step of an arg's key: a dict member or an array element.
#[derive(Debug, PartialEq)]
enum Step<'a> {
    Key(&'a str),
    Index(usize),
}

/// The steps of `key`: `a.b[1][2].c` is `a`, `b`, 1, 2, `c`. A bracket
/// that does not hold a number is part of the name.
fn steps(key: &str) -> Vec<Step<'_>> {
    let mut out = Vec::new();
    for part in key.split('.') {
        let mut name = part;
        let mut indices = Vec::new();
        while let Some(open) = name.rfind('[') {
            let Some(inner) = name[open..]
                .strip_prefix('[')
                .and_then(|s| s.strip_suffix(']'))
            else {
                break;
            };
            let Ok(i) = inner.parse::<usize>() else { break };
            indices.push(i);
            name = &name[..open];
        }
        out.push(Step::Key(name));
        out.extend(indices.into_iter().rev().map(Step::Index));
    }
    out
}

/// A row's value as JSON, by its `value_type`: pointers as hex strings,
/// bools as bools, unsigned integers unsigned, JSON parsed (kept as the
/// string when it does not parse), non-finite reals as the strings
/// Perfetto's exporter writes.
pub fn arg_value(value_type: &str, int: &Sql, string: &Sql, real: &Sql) -> Value {
    let int = match int {
        Sql::Int(i) => Some(*i),
        _ => None,
    };
    let string = match string {
        Sql::Text(s) => Some(s.as_str()),
        _ => None,
    };
    let real = match real {
        Sql::Real(r) => Some(*r),
        Sql::Int(i) => Some(*i as f64),
        _ => None,
    };
    match (value_type, int, string, real) {
        ("int", Some(i), _, _) => json!(i),
        ("uint", Some(i), _, _) => json!(i as u64),
        ("bool", Some(i), _, _) => json!(i != 0),
        ("pointer", Some(i), _, _) => json!(format!("0x{:x}", i as u64)),
        ("string", _, Some(s), _) => json!(s),
        ("json", _, Some(s), _) => serde_json::from_str(s).unwrap_or_else(|_| json!(s)),
        ("real", _, _, Some(r)) if r.is_nan() => json!("NaN"),
        ("real", _, _, Some(r)) if r.is_infinite() => {
            json!(if r > 0.0 { "Infinity" } else { "-Infinity" })
        }
        ("real", _, _, Some(r)) => json!(r),
        _ => Value::Null,
    }
}

/// Puts `value` at `key` under `args`. What the key walks through that is
/// not yet an object (or array) becomes one; an array index past the end
/// appends (rows come in order), so a hostile index allocates nothing.
pub fn insert(args: &mut Map<String, Value>, key: &str, value: Value) {
    let mut all = steps(key);
    // Debug annotations at the top, as Perfetto's exporter puts them.
    match all.first() {
        Some(Step::Key("debug")) if all.len() > 1 => {
            all.remove(0);
        }
        Some(Step::Key("legacy_event")) => return,
        _ => {}
    }
    let (value, all) = if all.len() > MAX_ARG_DEPTH {
        (Value::Null, &all[..MAX_ARG_DEPTH])
    } else {
        (value, &all[..])
    };
    let Some((Step::Key(first), rest)) = all.split_first() else {
        return;
    };
    let mut slot = args.entry(first.to_string()).or_insert(Value::Null);
    for step in rest {
        slot = match step {
            Step::Key(k) => {
                if !slot.is_object() {
                    *slot = Value::Object(Map::new());
                }
                let Value::Object(m) = slot else { return };
                m.entry(k.to_string()).or_insert(Value::Null)
            }
            Step::Index(i) => {
                if !slot.is_array() {
                    *slot = Value::Array(Vec::new());
                }
                let Value::Array(a) = slot else { return };
                if *i >= a.len() {
                    a.push(Value::Null);
                }
                let last = a.len() - 1;
                &mut a[(*i).min(last)]
            }
        };
    }
    *slot = value;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_nest_into_objects_and_arrays() {
        let mut m = Map::new();
        insert(&mut m, "debug.d.a", json!(1));
        insert(&mut m, "debug.d.b[0]", json!("x"));
        insert(&mut m, "debug.d.b[1]", json!(true));
        insert(&mut m, "debug.arr[0]", json!(1));
        insert(&mut m, "debug.arr[1]", json!(2));
        insert(&mut m, "debug.m[0][1]", json!(3));
        insert(&mut m, "task.posted_from.file_name", json!("f.cc"));
        insert(&mut m, "legacy_event.passthrough_utid", json!(4));
        insert(&mut m, "debug.odd[x]", json!(5));
        assert_eq!(
            Value::Object(m),
            json!({
                "d": {"a": 1, "b": ["x", true]},
                "arr": [1, 2],
                "m": [[3]],
                "task": {"posted_from": {"file_name": "f.cc"}},
                "odd[x]": 5,
            })
        );
    }

    #[test]
    fn hostile_keys_are_bounded() {
        let mut m = Map::new();
        insert(&mut m, "debug.a[4000000000]", json!(1));
        assert_eq!(m["a"], json!([1]));
        let deep = vec!["k"; 10_000].join(".");
        insert(&mut m, &format!("debug.{deep}"), json!(1));
        let mut v = &m["k"];
        let mut depth = 1;
        while let Some(next) = v.get("k") {
            v = next;
            depth += 1;
        }
        assert_eq!((depth, v), (MAX_ARG_DEPTH, &Value::Null));
        // A leaf made a dict, a dict made a leaf: no panic, the last wins.
        insert(&mut m, "debug.x", json!(1));
        insert(&mut m, "debug.x.y", json!(2));
        insert(&mut m, "debug.x", json!(3));
        assert_eq!(m["x"], json!(3));
        insert(&mut m, "", json!(1));
        insert(&mut m, "debug", json!(9));
        assert_eq!(m["debug"], json!(9));
    }

    #[test]
    fn values_are_typed() {
        let (n, i, t, r) = (
            Sql::Null,
            Sql::Int(-1),
            Sql::Text("{\"a\": [1]}".into()),
            Sql::Real(f64::NAN),
        );
        assert_eq!(arg_value("int", &i, &n, &n), json!(-1));
        assert_eq!(arg_value("uint", &i, &n, &n), json!(u64::MAX));
        assert_eq!(arg_value("bool", &i, &n, &n), json!(true));
        assert_eq!(arg_value("pointer", &Sql::Int(255), &n, &n), json!("0xff"));
        assert_eq!(arg_value("json", &n, &t, &n), json!({"a": [1]}));
        assert_eq!(
            arg_value("json", &n, &Sql::Text("{".into()), &n),
            json!("{")
        );
        assert_eq!(arg_value("string", &n, &t, &n), json!("{\"a\": [1]}"));
        assert_eq!(arg_value("real", &n, &n, &r), json!("NaN"));
        assert_eq!(
            arg_value("real", &n, &n, &Sql::Real(f64::NEG_INFINITY)),
            json!("-Infinity")
        );
        assert_eq!(arg_value("real", &n, &n, &Sql::Real(0.5)), json!(0.5));
        assert_eq!(arg_value("null", &n, &n, &n), Value::Null);
    }
}
