//! A JSON event's `args` into an arg set, keyed as Perfetto keys them:
//! `args.a.b` for nested objects, `args.list[0]` for array elements (the
//! flat key leaves the index out), nulls left out, booleans as booleans.

use crate::storage::Storage;
use crate::storage::args::{ArgSetBuilder, ArgValue};

use super::scan::{Elements, Fields, ScanError, Value};

/// Deepest nesting of objects and arrays read (a hostile `args` cannot
/// make the reading recurse without bound).
const MAX_NESTING: u32 = 64;

/// Adds the args of the object `obj` under `prefix` (`args`) to `out`.
/// An error leaves the args read before it.
pub fn add(
    storage: &mut Storage,
    obj: &[u8],
    prefix: &str,
    out: &mut ArgSetBuilder,
) -> Result<(), ScanError> {
    let mut flat = prefix.to_owned();
    let mut key = prefix.to_owned();
    let mut counters: Vec<(String, usize)> = Vec::new();
    walk(
        storage,
        &Value::Object(obj),
        &mut flat,
        &mut key,
        out,
        &mut counters,
        0,
    )
}

fn leaf(storage: &mut Storage, v: &Value<'_>) -> Option<ArgValue> {
    Some(match v {
        Value::Int(i) => ArgValue::Int(*i),
        Value::Float(d) => ArgValue::Real(*d),
        Value::Bool(b) => ArgValue::Bool(*b),
        Value::Str(s) => ArgValue::String(storage.strings.intern(s)),
        _ => return None,
    })
}

fn walk(
    storage: &mut Storage,
    v: &Value<'_>,
    flat: &mut String,
    key: &mut String,
    out: &mut ArgSetBuilder,
    counters: &mut Vec<(String, usize)>,
    depth: u32,
) -> Result<(), ScanError> {
    if depth > MAX_NESTING {
        return Err(ScanError::Invalid("args nested too deep".to_owned()));
    }
    let (flat_len, key_len) = (flat.len(), key.len());
    match v {
        Value::Object(bytes) => {
            let mut f = Fields::new(bytes, 0)?;
            while let Some((k, child)) = f.next_field()? {
                if child == Value::Null {
                    continue;
                }
                flat.truncate(flat_len);
                key.truncate(key_len);
                flat.push('.');
                flat.push_str(&k);
                key.push('.');
                key.push_str(&k);
                walk(storage, &child, flat, key, out, counters, depth + 1)?;
            }
        }
        Value::Array(bytes) => {
            let mut e = Elements::new(bytes, 0)?;
            while let Some(child) = e.next_element()? {
                if child == Value::Null {
                    continue;
                }
                flat.truncate(flat_len);
                key.truncate(key_len);
                // The next index of this key within the set.
                let base = key.clone();
                let idx = match counters.iter_mut().find(|(k, _)| *k == base) {
                    Some((_, n)) => {
                        *n += 1;
                        *n - 1
                    }
                    None => {
                        counters.push((base, 1));
                        0
                    }
                };
                key.push_str(&format!("[{idx}]"));
                walk(storage, &child, flat, key, out, counters, depth + 1)?;
            }
        }
        other => {
            if let Some(val) = leaf(storage, other) {
                let fk = storage.strings.intern(flat);
                // Outside arrays both keys are one string.
                let k = if flat == key {
                    fk
                } else {
                    storage.strings.intern(key)
                };
                out.add(fk, k, val);
            }
        }
    }
    flat.truncate(flat_len);
    key.truncate(key_len);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nested_objects_and_arrays_get_upstreams_keys() {
        let mut st = Storage::default();
        let mut b = ArgSetBuilder::default();
        add(
            &mut st,
            br#"{"s":"x","n":null,"o":{"i":1,"b":true},"a":[1.5,{"k":2}],}"#,
            "args",
            &mut b,
        )
        .unwrap();
        let got: Vec<(String, String, ArgValue)> = b
            .args()
            .iter()
            .map(|a| {
                (
                    st.strings.get(a.flat_key).unwrap().to_owned(),
                    st.strings.get(a.key).unwrap().to_owned(),
                    a.value,
                )
            })
            .collect();
        let s = st.strings.find("x").unwrap();
        assert_eq!(
            got,
            vec![
                ("args.s".into(), "args.s".into(), ArgValue::String(s)),
                ("args.o.i".into(), "args.o.i".into(), ArgValue::Int(1)),
                ("args.o.b".into(), "args.o.b".into(), ArgValue::Bool(true)),
                ("args.a".into(), "args.a[0]".into(), ArgValue::Real(1.5)),
                ("args.a.k".into(), "args.a[1].k".into(), ArgValue::Int(2)),
            ]
        );
    }
}
