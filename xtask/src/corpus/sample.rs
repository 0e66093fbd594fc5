//! Picks a deterministic sample of a corpus' messages and, for each seed,
//! synthesizes one instance of it twice over: as protobuf text format (for
//! `protoc --encode`, the independent encoder) and as the Rust assertions
//! that the generated decoder must satisfy on protoc's bytes.
//!
//! Every singular scalar, string, bytes and enum field gets a non-default
//! pseudo-random value (so it is on the wire even under implicit presence)
//! and is checked through its generated accessor; repeated fields get 0–3
//! elements, checked element by element; at most one member per oneof is
//! set; singular and repeated message fields are filled down to
//! [`MAX_DEPTH`] and checked recursively (group-encoded ones included).
//! Extensions are left unset. Messages without fields are not sampled.

use std::collections::HashMap;
use std::fmt::Write as _;

use protozero_codegen::Schema;
use protozero_codegen::model::{EnumDef, FieldDef, FieldType, Label, MessageDef, Presence, Scalar};

use super::rustnames;

/// Messages per corpus.
pub const MESSAGES: usize = 20;
/// Instances (seeds) per message.
pub const SEEDS: u64 = 3;
/// Nesting depth below the sampled message that is still filled.
pub const MAX_DEPTH: usize = 2;

/// One message chosen for the round trip.
#[derive(Debug, Clone)]
pub struct Sampled<'s> {
    /// Fully qualified name, for `protoc --encode`.
    pub full_name: String,
    /// The `.proto` file declaring it (as named in the descriptor set).
    pub file: String,
    /// Rust path of its decoder from the crate root.
    pub decoder: String,
    /// The message.
    pub msg: &'s MessageDef,
}

/// Every message and enum of a schema by fully qualified name.
pub struct Index<'s> {
    messages: HashMap<&'s str, &'s MessageDef>,
    enums: HashMap<&'s str, &'s EnumDef>,
    /// Candidates for sampling, sorted by name.
    candidates: Vec<Sampled<'s>>,
}

impl<'s> Index<'s> {
    /// Indexes `schema`.
    pub fn new(schema: &'s Schema) -> Self {
        let mut ix = Index {
            messages: HashMap::new(),
            enums: HashMap::new(),
            candidates: Vec::new(),
        };
        for f in &schema.files {
            for e in &f.enums {
                ix.enums.insert(&e.full_name, e);
            }
            for m in &f.messages {
                ix.add(&f.name, &f.package, &mut Vec::new(), m);
            }
        }
        ix.candidates.sort_by(|a, b| a.full_name.cmp(&b.full_name));
        ix
    }

    fn add(
        &mut self,
        file: &str,
        package: &str,
        outer: &mut Vec<&'s MessageDef>,
        m: &'s MessageDef,
    ) {
        self.messages.insert(&m.full_name, m);
        for e in &m.enums {
            self.enums.insert(&e.full_name, e);
        }
        if !m.map_entry && !m.message_set && !m.fields.is_empty() {
            self.candidates.push(Sampled {
                full_name: m.full_name.clone(),
                file: file.to_owned(),
                decoder: rustnames::decoder_path(package, outer, m),
                msg: m,
            });
        }
        outer.push(m);
        for n in &m.messages {
            self.add(file, package, outer, n);
        }
        outer.pop();
    }

    /// Up to [`MESSAGES`] messages spread evenly over the sorted candidates.
    pub fn sample(&self) -> Vec<Sampled<'s>> {
        let n = self.candidates.len();
        let k = n.min(MESSAGES);
        (0..k).map(|i| self.candidates[i * n / k].clone()).collect()
    }
}

/// A small deterministic generator (SplitMix64).
pub struct Rng(u64);

impl Rng {
    /// A generator for `seed` of message `name`.
    pub fn new(name: &str, seed: u64) -> Self {
        let h = name.bytes().fold(0xcbf2_9ce4_8422_2325_u64, |h, b| {
            (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3)
        });
        Rng(h ^ seed.wrapping_mul(0x9e37_79b9_7f4a_7c15))
    }

    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
}

/// One synthesized instance: protoc's input and the decoder's checks.
#[derive(Debug, Default)]
pub struct Instance {
    /// Text-format message.
    pub text: String,
    /// Rust statements checking a decoder bound to `d`.
    pub checks: String,
}

/// A value in both spellings.
struct Value {
    text: String,
    rust: String,
}

impl Index<'_> {
    /// Synthesizes an instance of `msg` for `rng`.
    pub fn instance(&self, msg: &MessageDef, rng: &mut Rng) -> Instance {
        let mut inst = Instance::default();
        self.fill(msg, 0, "d", rng, &mut inst);
        inst
    }

    fn fill(&self, msg: &MessageDef, depth: usize, var: &str, rng: &mut Rng, out: &mut Instance) {
        let accessors = rustnames::accessors(msg);
        // One member (or none) per oneof.
        let chosen: Vec<Option<u32>> = (0..msg.oneofs.len())
            .map(|i| {
                let members: Vec<u32> = msg
                    .fields
                    .iter()
                    .filter(|f| f.oneof == Some(i))
                    .map(|f| f.number)
                    .collect();
                let pick = rng.below(members.len() as u64 + 1) as usize;
                members.get(pick).copied()
            })
            .collect();
        for (f, acc) in msg.fields.iter().zip(&accessors) {
            if f.oneof.is_some_and(|o| chosen[o] != Some(f.number)) {
                continue;
            }
            let what = format!("{}.{}", msg.full_name, f.name);
            match (&f.ty, f.label) {
                (FieldType::Message(name), label) => {
                    let Some(sub) = self.messages.get(name.as_str()) else {
                        continue;
                    };
                    if depth >= MAX_DEPTH || sub.message_set {
                        continue;
                    }
                    let count = match label {
                        Label::Singular => 1,
                        Label::Repeated if sub.map_entry => rng.below(2) as usize,
                        Label::Repeated => rng.below(3) as usize,
                    };
                    let items = format!("v{depth}_{}", f.number);
                    if label == Label::Repeated {
                        let _ = writeln!(
                            out.checks,
                            "let {items}: Vec<_> = {var}.{acc}().collect();\n\
                             assert_eq!({items}.len(), {count}, {what:?});"
                        );
                    }
                    for i in 0..count {
                        let sub_var = format!("m{}_{}_{i}", depth + 1, f.number);
                        let _ = writeln!(out.text, "{} {{", text_name(f, sub));
                        let _ = if label == Label::Repeated {
                            writeln!(out.checks, "{{ let {sub_var} = &{items}[{i}];")
                        } else {
                            writeln!(
                                out.checks,
                                "{{ let {sub_var} = {var}.{acc}().expect({what:?});"
                            )
                        };
                        let _ = writeln!(
                            out.checks,
                            "assert_eq!({sub_var}.decode_error(), None, {what:?});"
                        );
                        self.fill(sub, depth + 1, &sub_var, rng, out);
                        out.text.push_str("}\n");
                        out.checks.push_str("}\n");
                    }
                }
                (ty, Label::Singular) => {
                    let Some(v) = self.value(ty, f, rng) else {
                        continue;
                    };
                    let _ = writeln!(out.text, "{}: {}", f.name, v.text);
                    let get = getter(ty, var, acc);
                    let _ = writeln!(out.checks, "assert_eq!({get}, Some({}), {what:?});", v.rust);
                }
                (ty, Label::Repeated) => {
                    let count = rng.below(4) as usize;
                    let mut vals = Vec::new();
                    for _ in 0..count {
                        let Some(v) = self.value(ty, f, rng) else {
                            break;
                        };
                        let _ = writeln!(out.text, "{}: {}", f.name, v.text);
                        vals.push(v.rust);
                    }
                    let map = if matches!(ty, FieldType::Enum(_)) {
                        ".map(i32::from)"
                    } else {
                        ""
                    };
                    let _ = if vals.is_empty() {
                        writeln!(
                            out.checks,
                            "assert_eq!({var}.{acc}().count(), 0, {what:?});"
                        )
                    } else {
                        writeln!(
                            out.checks,
                            "assert_eq!({var}.{acc}(){map}.collect::<Vec<_>>(), vec![{}], {what:?});",
                            vals.join(", ")
                        )
                    };
                }
            }
        }
    }

    /// A non-default value of a scalar or enum field (`None`: an enum
    /// whose only value is the default under implicit presence, or unknown).
    fn value(&self, ty: &FieldType, f: &FieldDef, rng: &mut Rng) -> Option<Value> {
        let s = match ty {
            FieldType::Scalar(s) => *s,
            FieldType::Enum(name) => {
                let e = self.enums.get(name.as_str())?;
                let usable: Vec<_> = e.values.iter().filter(|v| v.number != 0).collect();
                let v = if usable.is_empty() {
                    if f.presence == Presence::Implicit || f.label == Label::Repeated {
                        return None;
                    }
                    e.values.first()?
                } else {
                    usable[rng.below(usable.len() as u64) as usize]
                };
                return Some(Value {
                    text: v.name.clone(),
                    rust: format!("{}i32", v.number),
                });
            }
            FieldType::Message(_) => return None,
        };
        Some(scalar(s, rng))
    }
}

/// The field's name in text format: a group-like delimited field (its
/// name is its type's name in lower case) is spelled by the type's name.
fn text_name<'a>(f: &'a FieldDef, ty: &'a MessageDef) -> &'a str {
    if f.delimited && ty.name.to_lowercase() == f.name {
        &ty.name
    } else {
        &f.name
    }
}

/// The accessor call reading a singular field (enums as their numbers).
fn getter(ty: &FieldType, var: &str, acc: &str) -> String {
    match ty {
        FieldType::Enum(_) => format!("{var}.{acc}().map(i32::from)"),
        _ => format!("{var}.{acc}()"),
    }
}

fn nonzero(rng: &mut Rng) -> u64 {
    // Mostly small values, sometimes the full width (long varints).
    let v = if rng.below(2) == 0 {
        rng.below(300)
    } else {
        rng.next()
    };
    v.max(1)
}

fn scalar(s: Scalar, rng: &mut Rng) -> Value {
    let num = |text: String, suffix: &str| Value {
        rust: format!("{text}{suffix}"),
        text,
    };
    let neg = rng.below(2) == 0;
    match s {
        Scalar::Int32 | Scalar::Sint32 | Scalar::Sfixed32 => {
            let v = match nonzero(rng) as u32 as i32 {
                0 => 1,
                v => v,
            };
            let v = if neg { v.wrapping_neg() } else { v };
            num(v.to_string(), "i32")
        }
        Scalar::Int64 | Scalar::Sint64 | Scalar::Sfixed64 => {
            let v = nonzero(rng) as i64;
            let v = if neg { v.wrapping_neg() } else { v };
            num(v.to_string(), "i64")
        }
        Scalar::Uint32 | Scalar::Fixed32 => num((nonzero(rng) as u32).max(1).to_string(), "u32"),
        Scalar::Uint64 | Scalar::Fixed64 => num(nonzero(rng).to_string(), "u64"),
        Scalar::Float | Scalar::Double => {
            // Quarters are exact in both widths.
            let v = (rng.below(4000) as f64 + 1.0) / 4.0;
            let v = if neg { -v } else { v };
            num(
                format!("{v:?}"),
                if s == Scalar::Float { "f32" } else { "f64" },
            )
        }
        Scalar::Bool => Value {
            text: "true".to_owned(),
            rust: "true".to_owned(),
        },
        Scalar::String => {
            const CHARS: &[&str] = &["a", "z", "Q", "0", "9", " ", "_", "-", "é", "☃", "𝄞"];
            let len = 1 + rng.below(8);
            let v: String = (0..len)
                .map(|_| CHARS[rng.below(CHARS.len() as u64) as usize])
                .collect();
            Value {
                text: format!("\"{v}\""),
                rust: format!("{v:?}"),
            }
        }
        Scalar::Bytes => {
            let len = 1 + rng.below(6);
            let v: Vec<u8> = (0..len).map(|_| rng.below(256) as u8).collect();
            Value {
                text: format!(
                    "\"{}\"",
                    v.iter().map(|b| format!("\\{b:03o}")).collect::<String>()
                ),
                rust: format!(
                    "&b\"{}\"[..]",
                    v.iter().map(|b| format!("\\x{b:02x}")).collect::<String>()
                ),
            }
        }
    }
}
