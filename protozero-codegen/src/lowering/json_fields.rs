//! The lowering's reading of JSON names: whether a message sets
//! `deprecated_legacy_json_field_conflicts`, and each field's name and
//! custom `json_name` where they are written, so that clashing fields can
//! be given stand-in names for protox (`json_names.rs`).

use super::*;

impl Lowering<'_, '_> {
    /// Whether the statement at hand is `option
    /// deprecated_legacy_json_field_conflicts = true;`.
    pub(super) fn is_legacy_json_option(&self) -> bool {
        let words = [
            "option",
            "deprecated_legacy_json_field_conflicts",
            "=",
            "true",
            ";",
        ];
        words
            .iter()
            .enumerate()
            .all(|(i, w)| self.tok(i).is_some_and(|t| self.text(t) == *w))
    }

    /// Notes the proto2 or proto3 field statement at hand (not skipping it): its
    /// name, its `json_name` and where one could be added. For a group,
    /// its message's name and the token index of the `{` of its body.
    pub(super) fn json_field(&mut self) -> Option<(String, usize)> {
        let mut name = String::new();
        let mut name_at = (0, 0);
        let mut group = false;
        let is_map = self.is_word("map") && self.tok(1).is_some_and(|n| self.text(n) == "<");
        let mut i = self.at;
        while let Some(t) = self.toks.get(i) {
            let s = self.text(*t);
            if s == "=" || s == ";" || s == "{" || s == "}" {
                break;
            }
            if t.kind == Kind::Word {
                group |= s == "group";
                name = s.to_owned();
                name_at = (t.start, t.end);
            }
            i += 1;
        }
        // `=`, the number, then maybe `[`.
        let (Some(eq), Some(number)) = (self.toks.get(i), self.toks.get(i + 1)) else {
            return None;
        };
        if self.text(*eq) != "=" || number.kind != Kind::Number {
            return None;
        }
        let message_name = name.clone();
        let open = self.toks.get(i + 2).filter(|t| self.text(**t) == "[");
        let mut custom = None;
        let mut custom_at = None;
        let mut custom_exact = false;
        // The token after the options, if any.
        let mut after = i + 2;
        if open.is_some() {
            let mut j = i + 3;
            let mut depth = 0usize;
            while let Some(t) = self.toks.get(j) {
                match self.text(*t) {
                    "[" | "{" | "(" => depth += 1,
                    "]" | "}" | ")" if depth == 0 => break,
                    "]" | "}" | ")" => depth -= 1,
                    ";" => break,
                    "json_name" if depth == 0 => {
                        // One string literal, or several written one after
                        // the other (they are concatenated).
                        let mut k = j + 2;
                        let mut value = Some(Vec::new());
                        while let Some(v) = self.toks.get(k).filter(|v| v.kind == Kind::Str) {
                            let part = crate::proto_tokens::string_value(self.text(*v));
                            value = value.zip(part).map(|(mut a, b)| {
                                a.extend(b);
                                a
                            });
                            custom_at = Some((self.toks[j + 2].start, v.end));
                            k += 1;
                        }
                        if let Some((start, end)) = custom_at {
                            // A value whose escapes protoc refuses, or that
                            // is not UTF-8, is left to protox to refuse.
                            let text = value.and_then(|v| String::from_utf8(v).ok());
                            custom_exact = text.is_some();
                            custom = Some(text.unwrap_or_else(|| self.src[start..end].to_owned()));
                        }
                    }
                    _ => {}
                }
                j += 1;
            }
            after = j + 1;
        }
        if group {
            name = name.to_ascii_lowercase();
        }
        let field = JsonField {
            name,
            name_at,
            is_map,
            custom,
            custom_at,
            custom_exact,
            insert_at: open.map_or(number.end, |o| o.end),
            in_list: open.is_some(),
        };
        if let Some(fields) = self.json_fields.last_mut() {
            fields.push(field);
        }
        let body = self.toks.get(after).is_some_and(|t| self.text(*t) == "{");
        (group && body).then_some((message_name, after))
    }
}
