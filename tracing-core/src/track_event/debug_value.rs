//! Debug annotation values (`DebugAnnotation`): the scalar kinds and
//! nested dictionaries and arrays an event carries, and how each is
//! written into the annotation's generated writer.

/// A debug annotation value.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum DebugValue<'a> {
    /// `int_value`.
    Int(i64),
    /// `uint_value`.
    Uint(u64),
    /// `double_value`.
    Double(f64),
    /// `bool_value`.
    Bool(bool),
    /// `string_value`.
    Str(&'a str),
    /// `pointer_value`.
    Pointer(u64),
    /// A dictionary (`dict_entries`, each entry named).
    Dict(&'a [(&'a str, DebugValue<'a>)]),
    /// An array (`array_values`).
    Array(&'a [DebugValue<'a>]),
}

/// Writes `v` into annotation `a` (nested values recursively).
#[inline]
pub(super) fn write_value(
    a: &mut zerotrace_protos::protos::DebugAnnotation<'_>,
    v: &DebugValue<'_>,
) {
    match *v {
        DebugValue::Int(x) => {
            a.set_int_value(x);
        }
        DebugValue::Uint(x) => {
            a.set_uint_value(x);
        }
        DebugValue::Double(x) => {
            a.set_double_value(x);
        }
        DebugValue::Bool(x) => {
            a.set_bool_value(x);
        }
        DebugValue::Str(x) => {
            a.set_string_value(x);
        }
        DebugValue::Pointer(x) => {
            a.set_pointer_value(x);
        }
        DebugValue::Dict(_) | DebugValue::Array(_) => write_nested(a, v),
    }
}

/// Writes a dictionary or array value (out of line: the scalar values are
/// the hot path).
#[inline(never)]
fn write_nested(a: &mut zerotrace_protos::protos::DebugAnnotation<'_>, v: &DebugValue<'_>) {
    match *v {
        DebugValue::Dict(entries) => {
            for (k, v) in entries {
                let mut e = a.add_dict_entries();
                e.set_name(k);
                write_value(&mut e, v);
            }
        }
        DebugValue::Array(values) => {
            for v in values {
                write_value(&mut a.add_array_values(), v);
            }
        }
        _ => write_value(a, v),
    }
}
