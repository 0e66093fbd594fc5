//! Debug annotations as args: `debug.<name>`, dictionaries as dotted keys,
//! arrays as `[i]` in the key (left out of the flat key), each value typed
//! as upstream types it; interned names and string values resolved through
//! the packet's sequence.

use std::borrow::Cow;

use zerotrace_protos::protos::DebugAnnotationDecoder;
use zerotrace_protos::protos::debug_annotation::NestedValueDecoder;

use super::interned_strings::{Derived, InternedStrings, interned_str};
use crate::sequence_state::Generation;
use crate::storage::Storage;
use crate::storage::args::{ArgSetBuilder, ArgValue};

/// InternedData field of debug annotation names.
const DEBUG_ANNOTATION_NAMES: u32 = 3;
/// InternedData field of interned debug annotation string values.
const DEBUG_ANNOTATION_STRING_VALUES: u32 = 29;

/// Deepest nesting of dictionaries and arrays read.
const MAX_DEPTH: u32 = 32;

/// The next index of each array of one event's annotations, by the
/// array's key: two annotations of one name append to the same array, as
/// upstream's args parser numbers them (an element that adds no arg takes
/// no index).
pub type ArrayIndexes = crate::hash::HashMap<String, usize>;

/// Where an annotation's name is resolved: the event's sequence
/// generation (and its index) and the ids of interned names kept across
/// events.
#[derive(Debug)]
pub struct NameSource<'a> {
    /// The generation the event was read in.
    pub generation: &'a Generation,
    /// Its index in the loader's list.
    pub generation_idx: u32,
    /// Interned names already resolved.
    pub cache: &'a mut InternedStrings,
}

/// Adds one annotation under `debug.`; false when a name was missing.
pub fn add(
    storage: &mut Storage,
    args: &mut ArgSetBuilder,
    arrays: &mut ArrayIndexes,
    names: &mut NameSource<'_>,
    a: &DebugAnnotationDecoder<'_>,
) -> bool {
    let generation = names.generation;
    let interned_name = if a.name().is_none() {
        a.name_iid()
    } else {
        None
    };
    // The common case, an interned name with a plain value: the key's pool
    // id, kept from an earlier event of the sequence, is used as it is (the
    // strings are interned in the order the general path interns them).
    if let Some(iid) = interned_name {
        let kept = names.cache.get(
            names.generation_idx,
            generation,
            Derived::DebugKey,
            DEBUG_ANNOTATION_NAMES,
            iid,
        );
        if let Some(key) = kept {
            match scalar(storage, generation, a) {
                Scalar::Value(v) => {
                    args.add(key, key, v);
                    return true;
                }
                Scalar::Missing => return false,
                Scalar::Other => {}
            }
        }
    }
    let name = match (a.name(), a.name_iid()) {
        (Some(n), _) => Cow::Borrowed(n),
        (None, Some(iid)) => match interned_str(generation, DEBUG_ANNOTATION_NAMES, iid) {
            Some(n) => n,
            None => return false,
        },
        (None, None) => return false,
    };
    let key = format!("debug.{name}");
    let ok = add_value(storage, args, arrays, generation, a, &key, &key, 0).0;
    if let Some(iid) = interned_name {
        if let Some(id) = storage.strings.find(&key) {
            names.cache.put(
                names.generation_idx,
                generation,
                Derived::DebugKey,
                DEBUG_ANNOTATION_NAMES,
                iid,
                id,
            );
        }
    }
    ok
}

/// Adds one annotation met inside a message reflected into args, under
/// the message's keys (`<flat_key>.<name>`, `<key>.<name>`), as upstream's
/// parser adds a `DebugAnnotation` field; false when its name was missing.
pub fn add_under(
    storage: &mut Storage,
    args: &mut ArgSetBuilder,
    arrays: &mut ArrayIndexes,
    generation: &Generation,
    a: &DebugAnnotationDecoder<'_>,
    flat_key: &str,
    key: &str,
) -> bool {
    let name = match (a.name(), a.name_iid()) {
        (Some(n), _) => Cow::Borrowed(n),
        (None, Some(iid)) => match interned_str(generation, DEBUG_ANNOTATION_NAMES, iid) {
            Some(n) => n,
            None => return false,
        },
        (None, None) => return false,
    };
    let join = |prefix: &str| {
        if prefix.is_empty() {
            name.to_string()
        } else {
            format!("{prefix}.{name}")
        }
    };
    let (fk, k) = (join(flat_key), join(key));
    add_value(storage, args, arrays, generation, a, &fk, &k, 0).0
}

/// An annotation's value when it is a plain one.
enum Scalar {
    /// A plain value.
    Value(ArgValue),
    /// An interned string value the sequence lacks.
    Missing,
    /// Not a plain value (JSON, nested, a dictionary, an array, none).
    Other,
}

/// The annotation's plain value, in the order its oneof members are tried.
fn scalar(
    storage: &mut Storage,
    generation: &Generation,
    a: &DebugAnnotationDecoder<'_>,
) -> Scalar {
    if let Some(v) = a.bool_value() {
        Scalar::Value(ArgValue::Bool(v))
    } else if let Some(v) = a.uint_value() {
        Scalar::Value(ArgValue::Uint(v))
    } else if let Some(v) = a.int_value() {
        Scalar::Value(ArgValue::Int(v))
    } else if let Some(v) = a.double_value() {
        Scalar::Value(ArgValue::Real(v))
    } else if let Some(v) = a.string_value() {
        Scalar::Value(ArgValue::String(storage.strings.intern(v)))
    } else if let Some(iid) = a.string_value_iid() {
        match interned_str(generation, DEBUG_ANNOTATION_STRING_VALUES, iid) {
            Some(s) => Scalar::Value(ArgValue::String(storage.strings.intern(&s))),
            None => Scalar::Missing,
        }
    } else if let Some(v) = a.pointer_value() {
        Scalar::Value(ArgValue::Pointer(v))
    } else {
        Scalar::Other
    }
}

/// Adds one value; (no name was missing, an arg was added).
#[allow(clippy::too_many_arguments)]
fn add_value(
    storage: &mut Storage,
    args: &mut ArgSetBuilder,
    arrays: &mut ArrayIndexes,
    generation: &Generation,
    a: &DebugAnnotationDecoder<'_>,
    flat_key: &str,
    key: &str,
    depth: u32,
) -> (bool, bool) {
    if depth > MAX_DEPTH {
        return (false, false);
    }
    let value = match scalar(storage, generation, a) {
        Scalar::Value(v) => Some(v),
        Scalar::Missing => return (false, false),
        Scalar::Other => match a.legacy_json_value() {
            // JSON becomes args as upstream reads it: objects as dotted
            // keys, arrays as `[i]`; what does not parse stays one JSON arg.
            Some(v) => match serde_json::from_str::<serde_json::Value>(v) {
                Ok(json) => {
                    return (
                        add_json(storage, args, arrays, &json, flat_key, key, depth + 1),
                        true,
                    );
                }
                Err(_) => Some(ArgValue::Json(storage.strings.intern(v))),
            },
            None => None,
        },
    };
    if let Some(v) = value {
        let fk = storage.strings.intern(flat_key);
        let k = if key == flat_key {
            fk
        } else {
            storage.strings.intern(key)
        };
        args.add(fk, k, v);
        return (true, true);
    }
    if let Some(nested) = a.nested_value() {
        return add_nested(storage, args, arrays, &nested, flat_key, key, depth + 1);
    }
    let mut ok = true;
    if a.has_dict_entries() {
        for entry in a.dict_entries() {
            let Some(n) = entry.name().map(Cow::Borrowed).or_else(|| {
                entry
                    .name_iid()
                    .and_then(|i| interned_str(generation, DEBUG_ANNOTATION_NAMES, i))
            }) else {
                ok = false;
                continue;
            };
            ok &= add_value(
                storage,
                args,
                arrays,
                generation,
                &entry,
                &format!("{flat_key}.{n}"),
                &format!("{key}.{n}"),
                depth + 1,
            )
            .0;
        }
        // A dictionary counts as an entry, even an empty one.
        return (ok, true);
    }
    if a.has_array_values() {
        let mut added = false;
        for v in a.array_values() {
            let i = arrays.get(key).copied().unwrap_or(0);
            let (o, one) = add_value(
                storage,
                args,
                arrays,
                generation,
                &v,
                flat_key,
                &format!("{key}[{i}]"),
                depth + 1,
            );
            ok &= o;
            if one {
                arrays.insert(key.to_owned(), i + 1);
                added = true;
            }
        }
        return (ok, added);
    }
    // An annotation with no value: upstream records nothing.
    (true, false)
}

/// Adds a nested value; (always true: nested values have no names to
/// miss, an arg was added).
fn add_nested(
    storage: &mut Storage,
    args: &mut ArgSetBuilder,
    arrays: &mut ArrayIndexes,
    v: &NestedValueDecoder<'_>,
    flat_key: &str,
    key: &str,
    depth: u32,
) -> (bool, bool) {
    if depth > MAX_DEPTH {
        return (false, false);
    }
    let fk = storage.strings.intern(flat_key);
    let k = storage.strings.intern(key);
    match v.nested_type_raw().unwrap_or(0) {
        1 => {
            let keys: Vec<&str> = v.dict_keys().collect();
            let mut added = false;
            for (name, value) in keys.iter().zip(v.dict_values()) {
                added |= add_nested(
                    storage,
                    args,
                    arrays,
                    &value,
                    &format!("{flat_key}.{name}"),
                    &format!("{key}.{name}"),
                    depth + 1,
                )
                .1;
            }
            (true, added)
        }
        2 => {
            let mut added = false;
            for value in v.array_values() {
                let i = arrays.get(key).copied().unwrap_or(0);
                let one = add_nested(
                    storage,
                    args,
                    arrays,
                    &value,
                    flat_key,
                    &format!("{key}[{i}]"),
                    depth + 1,
                )
                .1;
                if one {
                    arrays.insert(key.to_owned(), i + 1);
                    added = true;
                }
            }
            (true, added)
        }
        _ => {
            let value = if let Some(x) = v.int_value() {
                ArgValue::Int(x)
            } else if let Some(x) = v.double_value() {
                ArgValue::Real(x)
            } else if let Some(x) = v.bool_value() {
                ArgValue::Bool(x)
            } else if let Some(x) = v.string_value() {
                ArgValue::String(storage.strings.intern(x))
            } else {
                return (true, false);
            };
            args.add(fk, k, value);
            (true, true)
        }
    }
}

/// A JSON value as args under `flat_key`/`key` (objects' members in key
/// order, as upstream's JSON reader keeps them; an array's entries numbered
/// on from the set's earlier entries under the same key, nulls taking no
/// index).
fn add_json(
    storage: &mut Storage,
    args: &mut ArgSetBuilder,
    arrays: &mut ArrayIndexes,
    v: &serde_json::Value,
    flat_key: &str,
    key: &str,
    depth: u32,
) -> bool {
    use serde_json::Value as J;
    if depth > MAX_DEPTH {
        return false;
    }
    let value = match v {
        J::Object(members) => {
            let mut sorted: Vec<(&String, &J)> = members.iter().collect();
            sorted.sort_by(|a, b| a.0.cmp(b.0));
            let mut ok = true;
            for (name, m) in sorted {
                ok &= add_json(
                    storage,
                    args,
                    arrays,
                    m,
                    &format!("{flat_key}.{name}"),
                    &format!("{key}.{name}"),
                    depth + 1,
                );
            }
            return ok;
        }
        J::Array(items) => {
            let mut ok = true;
            for m in items.iter().filter(|m| !m.is_null()) {
                let i = arrays.get(key).copied().unwrap_or(0);
                arrays.insert(key.to_owned(), i + 1);
                ok &= add_json(
                    storage,
                    args,
                    arrays,
                    m,
                    flat_key,
                    &format!("{key}[{i}]"),
                    depth + 1,
                );
            }
            return ok;
        }
        J::Null => return true,
        J::Bool(b) => ArgValue::Bool(*b),
        J::Number(n) => match (n.as_i64(), n.as_u64(), n.as_f64()) {
            (Some(i), _, _) => ArgValue::Int(i),
            (None, Some(u), _) => ArgValue::Uint(u),
            (_, _, Some(f)) => ArgValue::Real(f),
            _ => return false,
        },
        J::String(s) => ArgValue::String(storage.strings.intern(s)),
    };
    let fk = storage.strings.intern(flat_key);
    let k = storage.strings.intern(key);
    args.add(fk, k, value);
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Two annotations of one name append to one array (indices go on
    /// from the first's), and an element that adds no arg takes no index,
    /// as upstream's args parser numbers array entries.
    #[test]
    fn arrays_of_annotations_with_one_name_are_merged() {
        // DebugAnnotation: name 10, int_value 4, array_values 12.
        let annotation = |values: &[Option<i64>]| {
            let mut w = protozero::HeapWriter::new();
            {
                let mut m = w.root();
                m.append_string(10, "d");
                for v in values {
                    let mut e = m.begin_nested(12);
                    if let Some(v) = v {
                        e.append_int64(4, *v);
                    }
                }
            }
            w.finish().expect("writer")
        };
        let first = annotation(&[None, Some(1), Some(2)]);
        let second = annotation(&[Some(3)]);
        let mut storage = Storage::default();
        let mut args = ArgSetBuilder::default();
        let mut arrays = ArrayIndexes::default();
        let generation = Generation::default();
        let mut cache = InternedStrings::default();
        let mut names = NameSource {
            generation: &generation,
            generation_idx: 0,
            cache: &mut cache,
        };
        for bytes in [&first, &second] {
            let a = DebugAnnotationDecoder::new(bytes);
            assert!(add(&mut storage, &mut args, &mut arrays, &mut names, &a));
        }
        let got: Vec<(String, ArgValue)> = args
            .args()
            .iter()
            .map(|a| (storage.strings.get(a.key).unwrap().to_owned(), a.value))
            .collect();
        assert_eq!(
            got,
            vec![
                ("debug.d[0]".to_owned(), ArgValue::Int(1)),
                ("debug.d[1]".to_owned(), ArgValue::Int(2)),
                ("debug.d[2]".to_owned(), ArgValue::Int(3)),
            ]
        );
    }

    /// An interned name's key is kept from one event to the next, for
    /// plain values and for a dictionary under the same name alike, and
    /// the args are those of the name resolved anew.
    #[test]
    fn an_interned_name_keeps_its_key_across_events() {
        // DebugAnnotation: name_iid 1, int_value 4, dict_entries 11.
        let plain = |v: i64| {
            let mut w = protozero::HeapWriter::new();
            {
                let mut m = w.root();
                m.append_uint64(1, 7);
                m.append_int64(4, v);
            }
            w.finish().expect("writer")
        };
        let dict = {
            let mut w = protozero::HeapWriter::new();
            {
                let mut m = w.root();
                m.append_uint64(1, 7);
                let mut e = m.begin_nested(11);
                e.append_string(10, "x");
                e.append_int64(4, 9);
            }
            w.finish().expect("writer")
        };
        // DebugAnnotationName: iid 1, name 2.
        let mut name = protozero::HeapWriter::new();
        {
            let mut m = name.root();
            m.append_uint64(1, 7);
            m.append_string(2, "w");
        }
        let mut generation = Generation::default();
        generation.intern((DEBUG_ANNOTATION_NAMES, 7), name.finish().expect("writer"));
        let mut storage = Storage::default();
        let mut cache = InternedStrings::default();
        let mut keys = Vec::new();
        for bytes in [plain(1), plain(2), dict.clone(), dict] {
            let mut args = ArgSetBuilder::default();
            let mut names = NameSource {
                generation: &generation,
                generation_idx: 3,
                cache: &mut cache,
            };
            let a = DebugAnnotationDecoder::new(&bytes);
            assert!(add(
                &mut storage,
                &mut args,
                &mut ArrayIndexes::default(),
                &mut names,
                &a
            ));
            for arg in args.args() {
                let key = storage.strings.get(arg.key).unwrap().to_owned();
                assert_eq!(arg.key, arg.flat_key);
                keys.push((key, arg.value));
            }
        }
        assert_eq!(
            keys,
            vec![
                ("debug.w".to_owned(), ArgValue::Int(1)),
                ("debug.w".to_owned(), ArgValue::Int(2)),
                ("debug.w.x".to_owned(), ArgValue::Int(9)),
                ("debug.w.x".to_owned(), ArgValue::Int(9)),
            ]
        );
        assert!(
            cache
                .get(3, &generation, Derived::DebugKey, DEBUG_ANNOTATION_NAMES, 7)
                .is_some()
        );
    }

    #[test]
    fn json_annotations_become_dotted_and_indexed_args() {
        let mut storage = Storage::default();
        let mut args = ArgSetBuilder::default();
        let json: serde_json::Value =
            serde_json::from_str(r#"{"b": [1, null, 2.5], "a": {"x": "s", "y": true}, "n": null}"#)
                .unwrap();
        let mut arrays = ArrayIndexes::default();
        assert!(add_json(
            &mut storage,
            &mut args,
            &mut arrays,
            &json,
            "debug.j",
            "debug.j",
            0
        ));
        let got: Vec<(String, String, ArgValue)> = args
            .args()
            .iter()
            .map(|a| {
                (
                    storage.strings.get(a.flat_key).unwrap().to_owned(),
                    storage.strings.get(a.key).unwrap().to_owned(),
                    a.value,
                )
            })
            .collect();
        let x = storage.strings.find("s").unwrap();
        assert_eq!(
            got,
            vec![
                (
                    "debug.j.a.x".into(),
                    "debug.j.a.x".into(),
                    ArgValue::String(x)
                ),
                (
                    "debug.j.a.y".into(),
                    "debug.j.a.y".into(),
                    ArgValue::Bool(true)
                ),
                ("debug.j.b".into(), "debug.j.b[0]".into(), ArgValue::Int(1)),
                (
                    "debug.j.b".into(),
                    "debug.j.b[1]".into(),
                    ArgValue::Real(2.5)
                ),
            ]
        );
    }
}
