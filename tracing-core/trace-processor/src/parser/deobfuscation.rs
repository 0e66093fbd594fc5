//! `DeobfuscationMapping`: ProGuard/R8 maps of obfuscated Java names. Held
//! to the end of the trace, then applied to the Java frames (names with a
//! `.`) of JIT caches (`/memfd:` mappings): `class.method` obfuscated
//! gets the deobfuscated name, ambiguous ones all of them joined by " | ".

use std::collections::{BTreeSet, HashMap};

use protozero::Decoder;

use super::Parser;

fn str_field(msg: &[u8], id: u32) -> &str {
    Decoder::new(msg)
        .find_last(id)
        .and_then(|f| f.as_str().ok())
        .unwrap_or("")
}

fn repeated(msg: &[u8], id: u32) -> Vec<&[u8]> {
    let mut out = Vec::new();
    let mut d = Decoder::new(msg);
    while let Some(Ok(f)) = d.read_field() {
        if f.id == id {
            if let Ok(b) = f.as_bytes() {
                out.push(b);
            }
        }
    }
    out
}

/// Applies the held mappings to the frames.
pub fn finish(p: &mut Parser) {
    let packets = std::mem::take(&mut p.profiling.deobfuscation);
    for packet in &packets {
        if str_field(packet, 1).is_empty() {
            continue;
        }
        // obfuscated "class.method" -> deobfuscated names.
        let mut methods: HashMap<String, Vec<String>> = HashMap::new();
        for cls in repeated(packet, 3) {
            let obf_cls = str_field(cls, 1);
            let deobf_cls = str_field(cls, 2);
            for m in repeated(cls, 4) {
                let deobf = str_field(m, 2);
                let full = if deobf.contains('.') {
                    deobf.to_owned()
                } else {
                    format!("{deobf_cls}.{deobf}")
                };
                methods
                    .entry(format!("{obf_cls}.{}", str_field(m, 1)))
                    .or_default()
                    .push(full);
            }
        }
        let n = p.storage.profiling.frames.len();
        for i in 0..n {
            let Some(frame) = p.storage.profiling.frames.get(i) else {
                continue;
            };
            let name = p.storage.strings.get(frame.name).unwrap_or("").to_owned();
            let mapping = p
                .storage
                .profiling
                .mappings
                .get(frame.mapping as usize)
                .and_then(|m| p.storage.strings.get(m.name))
                .unwrap_or("");
            if !name.contains('.') || !mapping.starts_with("/memfd:") {
                continue;
            }
            let Some(names) = methods.get(&name) else {
                continue;
            };
            let unique: BTreeSet<&String> = names.iter().collect();
            let joined = unique
                .into_iter()
                .map(String::as_str)
                .collect::<Vec<_>>()
                .join(" | ");
            let id = p.storage.strings.intern(&joined);
            if let Some(f) = p.storage.profiling.frames.get_mut(i) {
                f.deobfuscated_name = id;
            }
        }
    }
}
