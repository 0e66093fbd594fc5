//! `float` and `double` field defaults spelled as `protoc` spells them in
//! the descriptors it writes (`1e-07`, not `0.0000001`; C's `%g` with the
//! shortest precision that reads back), so the pure front end's
//! descriptors equal protoc's.

use protobuf::descriptor::field_descriptor_proto::Type as PbType;
use protobuf::descriptor::{DescriptorProto, FieldDescriptorProto};

pub(crate) fn protoc_float_defaults_in(m: &mut DescriptorProto) {
    for f in m.field.iter_mut().chain(m.extension.iter_mut()) {
        protoc_float_default(f);
    }
    for n in &mut m.nested_type {
        protoc_float_defaults_in(n);
    }
}

/// Respells a `float` or `double` default the way `protoc` writes it.
pub(crate) fn protoc_float_default(f: &mut FieldDescriptorProto) {
    let ty = f.type_();
    let Some(d) = f.default_value.as_mut() else {
        return;
    };
    let spelled = match ty {
        PbType::TYPE_DOUBLE => d.parse::<f64>().ok().map(protoc_double),
        PbType::TYPE_FLOAT => d.parse::<f32>().ok().map(protoc_float),
        _ => None,
    };
    if let Some(s) = spelled {
        *d = s;
    }
}

/// `protoc`'s `SimpleDtoa`: `%.15g`, or `%.17g` when 15 digits do not
/// read back as the same value.
pub(crate) fn protoc_double(v: f64) -> String {
    if let Some(s) = non_finite(v) {
        return s.to_owned();
    }
    let short = printf_g(v, 15);
    if short.parse::<f64>().ok() == Some(v) {
        short
    } else {
        printf_g(v, 17)
    }
}

/// `protoc`'s `SimpleFtoa`: `%.6g`, or `%.9g` when 6 digits do not read
/// back as the same `float`.
pub(crate) fn protoc_float(v: f32) -> String {
    if let Some(s) = non_finite(f64::from(v)) {
        return s.to_owned();
    }
    let short = printf_g(f64::from(v), 6);
    if short.parse::<f32>().ok() == Some(v) {
        short
    } else {
        printf_g(f64::from(v), 9)
    }
}

fn non_finite(v: f64) -> Option<&'static str> {
    if v.is_nan() {
        Some("nan")
    } else if v == f64::INFINITY {
        Some("inf")
    } else if v == f64::NEG_INFINITY {
        Some("-inf")
    } else {
        None
    }
}

/// C's `printf("%.*g", precision, v)` for a finite `v`.
fn printf_g(v: f64, precision: usize) -> String {
    if v == 0.0 {
        return if v.is_sign_negative() { "-0" } else { "0" }.to_owned();
    }
    let precision = precision.max(1);
    // The exponent after rounding to `precision` significant digits.
    let sci = format!("{:.*e}", precision - 1, v);
    let (mantissa, exp) = sci.split_once('e').unwrap_or((&sci, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    let p = i32::try_from(precision).unwrap_or(i32::MAX);
    if exp < -4 || exp >= p {
        let sign = if exp < 0 { '-' } else { '+' };
        format!(
            "{}e{sign}{:02}",
            trim_fraction(mantissa),
            exp.unsigned_abs()
        )
    } else {
        let decimals = usize::try_from(p - 1 - exp).unwrap_or(0);
        trim_fraction(&format!("{v:.decimals$}")).to_owned()
    }
}

/// `1.500` → `1.5`, `2.000` → `2`; text without a `.` is left alone.
fn trim_fraction(s: &str) -> &str {
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.')
    } else {
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn doubles_as_protoc_spells_them() {
        for (v, s) in [
            (1.5e10, "15000000000"),
            (0.5, "0.5"),
            (-0.0, "-0"),
            (0.0, "0"),
            (1e-7, "1e-07"),
            (1e-4, "0.0001"),
            (1e15, "1e+15"),
            (123456789012345.0, "123456789012345"),
            (0.1, "0.1"),
            (1.2345678901234568e29, "1.2345678901234568e+29"),
            (f64::MAX, "1.7976931348623157e+308"),
            (-1.0, "-1"),
            (100.0, "100"),
            (f64::NAN, "nan"),
            (f64::NEG_INFINITY, "-inf"),
        ] {
            assert_eq!(protoc_double(v), s, "{v:e}");
        }
    }

    #[test]
    fn floats_as_protoc_spells_them() {
        for (v, s) in [
            (f32::MAX, "3.40282347e+38"),
            (0.1f32, "0.1"),
            (1.5f32, "1.5"),
            (16_777_217.0f32, "16777216"),
            (1e-7f32, "1e-07"),
            (f32::INFINITY, "inf"),
        ] {
            assert_eq!(protoc_float(v), s, "{v:e}");
        }
    }
}
