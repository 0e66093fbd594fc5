//! Not-a-number as an option's value. `protoc` reads `option (x) = nan;`
//! and `-nan` for a `float` or `double` option (a quiet NaN, positive
//! either way); protox 0.10 has no spelling for it outside message
//! literals and defaults. The lowering writes such a value as a stand-in
//! number instead ([`NAN_STAND_IN`]), and [`restore_nans`] turns every
//! option value equal to it back into the NaN `protoc` writes.
//!
//! The stand-in is exactly representable as an `f32` and as an `f64`, so
//! that it survives as either; a schema that writes this very number as an
//! option value next to a `nan` one would see it read as NaN too. The
//! lowering cannot tell a float option from an enum one: where an enum
//! option is set to an enum value named `nan`, protox finds the stand-in,
//! and the file is read again with that `nan` as written (`pure.rs`).

use protox::prost_reflect::{DynamicMessage, Kind, Value};

/// The number the lowering writes for `nan`: -(1 + 2⁻²⁰)·2⁻¹⁰⁰.
pub(crate) const NAN_STAND_IN: &str = "-7.888616575373963e-31";

/// [`NAN_STAND_IN`]'s value.
const STAND_IN: f64 = -7.888616575373963e-31;

/// Replaces every `float` and `double` value equal to the stand-in, in
/// `msg` and the messages it holds, with a quiet NaN.
pub(crate) fn restore_nans(msg: &mut DynamicMessage) {
    let fields: Vec<_> = msg.fields().map(|(f, _)| f).collect();
    for f in fields {
        if is_candidate(&f.kind()) {
            restore_value(msg.get_field_mut(&f));
        }
    }
    let extensions: Vec<_> = msg.extensions().map(|(x, _)| x).collect();
    for x in extensions {
        if is_candidate(&x.kind()) {
            restore_value(msg.get_extension_mut(&x));
        }
    }
}

/// Whether a field of this kind can hold the stand-in, itself or in a
/// message it holds.
fn is_candidate(kind: &Kind) -> bool {
    matches!(kind, Kind::Float | Kind::Double | Kind::Message(_))
}

fn restore_value(value: &mut Value) {
    match value {
        Value::F64(v) if *v == STAND_IN => *v = f64::NAN,
        #[allow(clippy::cast_possible_truncation)]
        Value::F32(v) if *v == STAND_IN as f32 => *v = f32::NAN,
        Value::Message(m) => restore_nans(m),
        Value::List(items) => items.iter_mut().for_each(restore_value),
        Value::Map(entries) => entries.values_mut().for_each(restore_value),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_stand_in_is_exact_in_both_widths() {
        assert_eq!(NAN_STAND_IN.parse::<f64>().ok(), Some(STAND_IN));
        let narrow = STAND_IN as f32;
        assert_eq!(f64::from(narrow), STAND_IN);
        assert_eq!(STAND_IN, -(1.0 + 2f64.powi(-20)) * 2f64.powi(-100));
    }

    #[test]
    fn nan_is_a_quiet_positive_nan_as_protoc_writes_it() {
        let mut v = Value::F64(STAND_IN);
        restore_value(&mut v);
        assert!(matches!(v, Value::F64(x) if x.to_bits() == 0x7ff8_0000_0000_0000));
        let mut v = Value::F32(STAND_IN as f32);
        restore_value(&mut v);
        assert!(matches!(v, Value::F32(x) if x.to_bits() == 0x7fc0_0000));
        let mut v = Value::F64(1.5);
        restore_value(&mut v);
        assert!(matches!(v, Value::F64(x) if x == 1.5));
    }
}
