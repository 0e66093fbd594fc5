//! Option values `protoc` reads and protox 0.10 does not, respelled in
//! the token stream before protox reads the file (part of the lowering,
//! `lowering.rs`): `inf`, `nan` and `-nan` after `=`, and decimal integers
//! beyond 64 bits; the edits are kept with the lowering's others, so that
//! error positions map back and the descriptors are raised back.

use crate::lowering::Edit;
use crate::proto_tokens::{Kind, Token};

/// Option values protox does not read, respelled: `inf` (after `=`, not
/// as a default, which protox reads) as `1e999`, `nan` and `-nan` there as
/// [`crate::non_finite::NAN_STAND_IN`] (whether one was is returned), and
/// a decimal integer beyond 64 bits (anywhere) as a floating-point
/// literal. A file that declares something named `inf` or `nan` (an enum
/// value, which an option can name) keeps those words as they are.
pub(crate) fn respell_values(src: &str, toks: &[Token], edits: &mut Vec<Edit>) -> bool {
    let text = |t: &Token| &src[t.start..t.end];
    let declared = |word: &str| {
        toks.windows(2)
            .any(|w| text(&w[0]) == word && text(&w[1]) == "=")
    };
    let (inf_declared, nan_declared) = (declared("inf"), declared("nan"));
    let mut nan = false;
    for (i, t) in toks.iter().enumerate() {
        match t.kind {
            Kind::Word if text(t) == "nan" && !nan_declared => {
                let negative = i >= 1 && text(&toks[i - 1]) == "-";
                let sign = usize::from(negative);
                let before = i.checked_sub(1 + sign).and_then(|j| toks.get(j));
                let is_default = i
                    .checked_sub(2 + sign)
                    .and_then(|j| toks.get(j))
                    .is_some_and(|n| text(n) == "default");
                if before.is_some_and(|b| text(b) == "=") && !is_default {
                    let at = if negative { toks[i - 1].start } else { t.start };
                    edits.push(Edit {
                        at,
                        old: t.end - at,
                        new: crate::non_finite::NAN_STAND_IN.to_owned(),
                    });
                    nan = true;
                }
            }
            Kind::Word if text(t) == "inf" && !inf_declared => {
                let mut before = i.checked_sub(1).and_then(|j| toks.get(j));
                if before.is_some_and(|b| text(b) == "-") {
                    before = i.checked_sub(2).and_then(|j| toks.get(j));
                }
                let after_eq = before.is_some_and(|b| text(b) == "=");
                let name_at = if i >= 1 && text(&toks[i - 1]) == "-" {
                    3
                } else {
                    2
                };
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
