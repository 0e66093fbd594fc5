//! Option values `protoc` reads and protox 0.10 does not, respelled in
//! the token stream before protox reads the file (part of the lowering,
//! `lowering.rs`): `inf`, `nan` and `-nan` after `=`, and decimal integers
//! beyond 64 bits; the edits are kept with the lowering's others, so that
//! error positions map back and the descriptors are raised back.
//!
//! The text alone does not say whether `option (x) = nan;` sets a float
//! option or an enum option to a value named `nan` (declared in this file
//! or an imported one). Such values are respelled all the same, and where
//! protox then finds a number for an enum option, the front end compiles
//! the file again with those words kept as written (`pure.rs`).

use crate::lowered::Edit;
use crate::proto_tokens::{Kind, Token};

/// Option values protox does not read, respelled: `inf` (after `=`, not
/// as a default, which protox reads) as `1e999`, `nan` and `-nan` there as
/// [`crate::non_finite::NAN_STAND_IN`] (whether one was is returned), and
/// a decimal integer beyond 64 bits (anywhere) as a floating-point
/// literal. Values that start at an offset in `kept` (enum values named
/// `inf` or `nan`) are left as written; the place of each value respelled
/// (its first and last byte, a sign included) is added to `respelled`.
pub(crate) fn respell_values(
    src: &str,
    toks: &[Token],
    kept: &[usize],
    edits: &mut Vec<Edit>,
    respelled: &mut Vec<(usize, usize)>,
) -> bool {
    let text = |t: &Token| &src[t.start..t.end];
    let mut nan = false;
    for (i, t) in toks.iter().enumerate() {
        let negative = i >= 1 && text(&toks[i - 1]) == "-";
        let value_at = if negative { toks[i - 1].start } else { t.start };
        let is_kept = kept.contains(&value_at);
        match t.kind {
            Kind::Word if text(t) == "nan" && !is_kept => {
                let sign = usize::from(negative);
                let before = i.checked_sub(1 + sign).and_then(|j| toks.get(j));
                let is_default = i
                    .checked_sub(2 + sign)
                    .and_then(|j| toks.get(j))
                    .is_some_and(|n| text(n) == "default");
                if before.is_some_and(|b| text(b) == "=") && !is_default {
                    edits.push(Edit {
                        at: value_at,
                        old: t.end - value_at,
                        new: crate::non_finite::NAN_STAND_IN.to_owned(),
                    });
                    respelled.push((value_at, t.end - 1));
                    nan = true;
                }
            }
            Kind::Word if text(t) == "inf" && !is_kept => {
                let mut before = i.checked_sub(1).and_then(|j| toks.get(j));
                if before.is_some_and(|b| text(b) == "-") {
                    before = i.checked_sub(2).and_then(|j| toks.get(j));
                }
                let after_eq = before.is_some_and(|b| text(b) == "=");
                let name_at = if negative { 3 } else { 2 };
                let is_default = i
                    .checked_sub(name_at)
                    .and_then(|j| toks.get(j))
                    .is_some_and(|n| text(n) == "default");
                if after_eq && !is_default {
                    edits.push(Edit {
                        at: t.start,
                        old: t.end - t.start,
                        new: "1e999".to_owned(),
                    });
                    respelled.push((value_at, t.end - 1));
                }
            }
            Kind::Number => {
                let digits = text(t);
                if digits.bytes().all(|b| b.is_ascii_digit())
                    && !digits.starts_with('0')
                    && digits.parse::<u64>().is_err()
                {
                    edits.push(Edit {
                        at: t.end,
                        old: 0,
                        new: ".0".to_owned(),
                    });
                }
            }
            _ => {}
        }
    }
    nan
}
