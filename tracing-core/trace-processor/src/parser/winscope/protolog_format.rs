//! ProtoLog messages are logged as a format string's id and its arguments
//! split by kind (integers, doubles, booleans, interned strings); the
//! format strings come separately, in a viewer config. This fills a format
//! string with its arguments as Android's ProtoLog viewer does (`%d %o %x`
//! integers, `%f %e %g` doubles as C's printf writes them, `%b`, `%s`,
//! `%%`), counting a missing or a left-over argument, and tells which of
//! several formats sharing one id fits the arguments given.

/// A message's arguments, each kind in the order logged.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Params {
    /// `%d`, `%o`, `%x` arguments.
    pub ints: Vec<i64>,
    /// `%f`, `%e`, `%g` arguments.
    pub doubles: Vec<f64>,
    /// `%b` arguments.
    pub bools: Vec<bool>,
    /// `%s` arguments.
    pub strings: Vec<String>,
}

/// What stands for an argument the message lacks.
const MISSING: &str = "[MISSING_PARAM]";

/// A filled format and whether its arguments and conversions disagreed
/// (one missing, or some left over).
pub fn format(fmt: &str, params: &Params) -> (String, bool) {
    let mut out = String::with_capacity(fmt.len());
    let (mut ints, mut doubles) = (params.ints.iter(), params.doubles.iter());
    let (mut bools, mut strings) = (params.bools.iter(), params.strings.iter());
    let mut mismatch = false;
    let mut chars = fmt.chars().peekable();
    while let Some(c) = chars.next() {
        let spec = match (c, chars.peek()) {
            ('%', Some(&s)) => s,
            _ => {
                out.push(c);
                continue;
            }
        };
        chars.next();
        let text = match spec {
            '%' => Some("%".to_owned()),
            'd' => ints.next().map(|v| v.to_string()),
            'o' => ints.next().map(|v| format!("{:o}", *v as u64)),
            'x' => ints.next().map(|v| format!("{:x}", *v as u64)),
            'f' => doubles.next().map(|v| c_fixed(*v)),
            'e' => doubles.next().map(|v| c_exp(*v, 6, false)),
            'g' => doubles.next().map(|v| c_general(*v)),
            'b' => bools.next().map(|v| v.to_string()),
            's' => strings.next().cloned(),
            other => {
                out.push('%');
                out.push(other);
                continue;
            }
        };
        match text {
            Some(t) => out.push_str(&t),
            None => {
                mismatch = true;
                out.push_str(MISSING);
            }
        }
    }
    let left_over = ints.next().is_some()
        || doubles.next().is_some()
        || bools.next().is_some()
        || strings.next().is_some();
    (out, mismatch || left_over)
}

/// Whether a format's conversions take exactly the arguments given, kind
/// by kind.
pub fn fits(fmt: &str, params: &Params) -> bool {
    let mut need = [0usize; 4];
    let mut chars = fmt.chars();
    while let Some(c) = chars.next() {
        if c != '%' {
            continue;
        }
        match chars.next() {
            Some('d' | 'o' | 'x') => need[0] += 1,
            Some('f' | 'e' | 'g') => need[1] += 1,
            Some('b') => need[2] += 1,
            Some('s') => need[3] += 1,
            _ => {}
        }
    }
    need == [
        params.ints.len(),
        params.doubles.len(),
        params.bools.len(),
        params.strings.len(),
    ]
}

/// C's text of a value that is not finite, if it is not.
fn not_finite(v: f64) -> Option<String> {
    if v.is_nan() {
        Some(if v.is_sign_negative() { "-nan" } else { "nan" }.to_owned())
    } else if v.is_infinite() {
        Some(if v < 0.0 { "-inf" } else { "inf" }.to_owned())
    } else {
        None
    }
}

/// `%f`: six decimals.
fn c_fixed(v: f64) -> String {
    not_finite(v).unwrap_or_else(|| format!("{v:.6}"))
}

/// `%.<precision>e`: mantissa, `e`, sign and at least two exponent digits;
/// with `strip`, the mantissa's trailing zeros (and point) go, as `%g`
/// drops them.
fn c_exp(v: f64, precision: usize, strip: bool) -> String {
    if let Some(s) = not_finite(v) {
        return s;
    }
    let text = format!("{v:.precision$e}");
    let (mantissa, exp) = text.split_once('e').unwrap_or((text.as_str(), "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    let mantissa = if strip {
        strip_zeros(mantissa)
    } else {
        mantissa.to_owned()
    };
    let sign = if exp < 0 { '-' } else { '+' };
    format!("{mantissa}e{sign}{:02}", exp.unsigned_abs())
}

/// A decimal's trailing zeros after the point, and a bare point, removed.
fn strip_zeros(s: &str) -> String {
    if !s.contains('.') {
        return s.to_owned();
    }
    s.trim_end_matches('0').trim_end_matches('.').to_owned()
}

/// `%g`: six significant digits, in `%e` style when the exponent is below
/// -4 or at least 6, without trailing zeros.
fn c_general(v: f64) -> String {
    if let Some(s) = not_finite(v) {
        return s;
    }
    if v == 0.0 {
        return if v.is_sign_negative() { "-0" } else { "0" }.to_owned();
    }
    // The exponent after rounding to six significant digits.
    let rounded = format!("{v:.5e}");
    let exp: i32 = rounded
        .split_once('e')
        .and_then(|(_, e)| e.parse().ok())
        .unwrap_or(0);
    if !(-4..6).contains(&exp) {
        c_exp(v, 5, true)
    } else {
        let decimals = usize::try_from(5 - exp).unwrap_or(0);
        strip_zeros(&format!("{v:.decimals$}"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn params() -> Params {
        Params {
            ints: vec![888, 888, 888],
            doubles: vec![8.88, 888.0, 888.0],
            bools: vec![true],
            strings: vec!["s".into()],
        }
    }

    #[test]
    fn conversions_are_written_as_c_printf_writes_them() {
        let (text, mismatch) = format("%d %o %x %f %e %g %b %s 100%%", &params());
        assert_eq!(text, "888 1570 378 8.880000 8.880000e+02 888 true s 100%");
        assert!(!mismatch);
    }

    #[test]
    fn general_format_switches_to_exponents_outside_its_range() {
        assert_eq!(c_general(0.0001), "0.0001");
        assert_eq!(c_general(0.00001), "1e-05");
        assert_eq!(c_general(123456.0), "123456");
        assert_eq!(c_general(1234567.0), "1.23457e+06");
        assert_eq!(c_general(-2.5), "-2.5");
        assert_eq!(c_exp(-1.0e-300, 6, false), "-1.000000e-300");
    }

    #[test]
    fn a_missing_argument_is_marked_and_a_left_over_one_counted() {
        let p = Params {
            ints: vec![1],
            ..Params::default()
        };
        assert_eq!(format("%d %d", &p), ("1 [MISSING_PARAM]".to_owned(), true));
        assert_eq!(format("none", &p), ("none".to_owned(), true));
        assert_eq!(format("%q %", &p).0, "%q %");
    }

    #[test]
    fn a_format_fits_arguments_of_exactly_its_kinds() {
        let p = Params {
            ints: vec![1],
            strings: vec!["a".into()],
            ..Params::default()
        };
        assert!(fits("%s is %x", &p));
        assert!(!fits("%s is %f", &p));
        assert!(!fits("%s", &p));
    }
}
