//! protoc gives a method written with a body that sets no option
//! (`rpc M(A) returns (B) {}`, or `{ ; }`) an empty options message, and a
//! method ended by `;` none; protox gives none to either. The pure front
//! end finds such methods in the source text and gives each an empty
//! options message, so that its descriptors equal protoc's. (A body whose
//! only options have source retention loses its options message in both:
//! protoc drops an options message its stripping leaves empty.)

use std::collections::HashMap;

use protobuf::MessageField;
use protobuf::descriptor::{FileDescriptorProto, MethodOptions};

use crate::proto_tokens::{Kind, lex};

/// The methods of `src` written with a body of empty statements only:
/// (service name, method name).
pub(crate) fn scan(src: &str) -> Vec<(String, String)> {
    let toks = lex(src);
    let text = |i: usize| toks.get(i).map_or("", |t| &src[t.start..t.end]);
    let is =
        |i: usize, kind: Kind, s: &str| toks.get(i).is_some_and(|t| t.kind == kind) && text(i) == s;
    let mut out = Vec::new();
    let mut depth = 0usize;
    let mut service: Option<String> = None;
    let mut i = 0;
    while i < toks.len() {
        // A statement starts here if the token before it ends one.
        let starts = i == 0 || [";", "{", "}"].iter().any(|p| is(i - 1, Kind::Punct, p));
        if starts && depth == 0 && is(i, Kind::Word, "service") && is(i + 2, Kind::Punct, "{") {
            service = Some(text(i + 1).to_owned());
        } else if starts && depth == 1 && is(i, Kind::Word, "rpc") {
            if let (Some(s), Some(name)) = (&service, toks.get(i + 1)) {
                let name = src[name.start..name.end].to_owned();
                // The method's signature ends at the first `;` or `{`
                // outside its parentheses.
                let mut parens = 0usize;
                let mut j = i + 2;
                while j < toks.len() {
                    if toks[j].kind == Kind::Punct {
                        match text(j) {
                            "(" => parens += 1,
                            ")" => parens = parens.saturating_sub(1),
                            ";" | "{" if parens == 0 => break,
                            _ => {}
                        }
                    }
                    j += 1;
                }
                if is(j, Kind::Punct, "{") {
                    let mut k = j + 1;
                    while is(k, Kind::Punct, ";") {
                        k += 1;
                    }
                    if is(k, Kind::Punct, "}") {
                        out.push((s.clone(), name));
                    }
                }
                i = j;
                continue;
            }
        }
        if toks[i].kind == Kind::Punct {
            match text(i) {
                "{" => depth += 1,
                "}" => {
                    depth = depth.saturating_sub(1);
                    if depth == 0 {
                        service = None;
                    }
                }
                _ => {}
            }
        }
        i += 1;
    }
    out
}

/// Gives every method of `bodies` (by file name) an options message where
/// it has none.
pub(crate) fn restore(
    files: &mut [FileDescriptorProto],
    bodies: &HashMap<String, Vec<(String, String)>>,
) {
    for f in files.iter_mut() {
        let Some(methods) = bodies.get(f.name()) else {
            continue;
        };
        for s in &mut f.service {
            let service_name = s.name().to_owned();
            for m in &mut s.method {
                let written = methods
                    .iter()
                    .any(|(service, method)| *service == service_name && method == m.name());
                if written && m.options.is_none() {
                    m.options = MessageField::some(MethodOptions::new());
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::scan;

    #[test]
    fn methods_with_a_body_are_found_whatever_their_signature() {
        let src = r#"
            syntax = "proto3";
            message A { message rpc {} }
            service S {
              option (svc) = { rpc: "x" };
              rpc Plain(A) returns (A);
              rpc Empty(A) returns (A) {}
              rpc Streams(stream A) returns (stream .p.A) { option deprecated = true; }
              // rpc Commented(A) returns (A) {}
              rpc Spaced ( A ) returns ( A ) { ; }
            }
            service T { rpc Other(A) returns (A) {} }
        "#;
        let found = scan(src);
        let names: Vec<(&str, &str)> = found
            .iter()
            .map(|(s, m)| (s.as_str(), m.as_str()))
            .collect();
        assert_eq!(names, [("S", "Empty"), ("S", "Spaced"), ("T", "Other")]);
    }

    #[test]
    fn unbalanced_text_ends_the_scan_without_a_panic() {
        assert!(scan("service S { rpc M(A returns (B) {").is_empty());
        assert!(scan("service S { rpc").is_empty());
        assert!(scan("}}} service { rpc M() {").is_empty());
    }
}
