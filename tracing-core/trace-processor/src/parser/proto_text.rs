//! Protobuf bytes printed as text format the way upstream's trace processor
//! prints them (the `trace_config_pbtxt` metadata is the trace config so
//! printed): fields in wire order, one per line, nested messages indented
//! by two spaces, enums by name, strings quoted with C escapes and octal
//! for every byte outside printable ASCII, floating point with six
//! decimals, a length-delimited field of a scalar type read as packed
//! values, and fields the schema does not know printed by number (varints
//! signed, fixed-width ones in hex, the rest as quoted bytes). Bytes left
//! after a malformed field end the text with an `# Extra bytes:` comment.
//!
//! The schema is the full trace and config schema (`perfetto_descriptor.bin`
//! in this crate's generated directory), which the command line's `--txt`
//! reads through [`crate::perfetto_descriptor_set`].

use std::fmt::Write;
use std::sync::OnceLock;

use prost_reflect::{DescriptorPool, EnumDescriptor, Kind, MessageDescriptor};
use protozero::varint::decode_varint;
use protozero::{Decoder, Field, FieldValue};

/// The trace and config schema, as the schema pipeline compiles it.
static DESCRIPTOR_SET: &[u8] = include_bytes!("../generated/perfetto_descriptor.bin");

/// The encoded `FileDescriptorSet` of the trace and config schema.
pub fn descriptor_set() -> &'static [u8] {
    DESCRIPTOR_SET
}

/// The schema, decoded once (None if the embedded set were unreadable,
/// which the tests rule out).
pub fn pool() -> Option<&'static DescriptorPool> {
    static POOL: OnceLock<Option<DescriptorPool>> = OnceLock::new();
    POOL.get_or_init(|| DescriptorPool::decode(DESCRIPTOR_SET).ok())
        .as_ref()
}

/// A message of the schema by full name (`perfetto.protos.TraceConfig`).
pub fn message(full_name: &str) -> Option<MessageDescriptor> {
    pool()?.get_message_by_name(full_name)
}

/// `bytes`, a `message`, as multi-line text format.
pub fn to_text(message: Option<&MessageDescriptor>, bytes: &[u8]) -> String {
    let mut out = String::new();
    let mut indent = String::new();
    print_message(message, bytes, &mut indent, &mut out);
    out
}

/// What the schema says of one field.
struct FieldInfo {
    /// The name printed before a nested message (`[full.name]` for an
    /// extension).
    message_name: String,
    /// The name printed before a value.
    name: String,
    kind: Kind,
}

fn field_info(message: Option<&MessageDescriptor>, id: u32) -> Option<FieldInfo> {
    let message = message?;
    if let Some(f) = message.get_field(id) {
        return Some(FieldInfo {
            message_name: f.name().to_string(),
            name: f.name().to_string(),
            kind: f.kind(),
        });
    }
    let ext = message.get_extension(id)?;
    Some(FieldInfo {
        message_name: format!("[{}]", ext.full_name()),
        name: ext.name().to_string(),
        kind: ext.kind(),
    })
}

/// The separator before an item: a new line at the current indent, or
/// just the indent for the very first item of the text.
fn separate(out: &mut String, indent: &str) {
    if !out.is_empty() {
        out.push('\n');
    }
    out.push_str(indent);
}

fn print_message(
    message: Option<&MessageDescriptor>,
    bytes: &[u8],
    indent: &mut String,
    out: &mut String,
) {
    let mut d = Decoder::new(bytes);
    let mut failed = false;
    while let Some(field) = d.read_field() {
        let Ok(field) = field else {
            failed = true;
            break;
        };
        separate(out, indent);
        let info = field_info(message, field.id);
        print_field(&field, info.as_ref(), indent, out);
    }
    let left = d.remaining();
    if failed && !left.is_empty() {
        if !out.is_empty() {
            out.push('\n');
            out.push_str(indent);
        }
        out.push_str("# Extra bytes: ");
        out.push_str(&quote(left));
        out.push('\n');
    }
}

fn print_field(field: &Field<'_>, info: Option<&FieldInfo>, indent: &mut String, out: &mut String) {
    let id = field.id;
    match field.value {
        FieldValue::Varint(v) => match info {
            Some(info) => print_varint(&info.name, &info.kind, id, v, out),
            None => {
                let _ = write!(out, "{id}: {}", v as i64);
            }
        },
        FieldValue::Fixed32(v) => match info.map(|i| (&i.name, &i.kind)) {
            Some((name, Kind::Sfixed32)) => {
                let _ = write!(out, "{name}: {}", v as i32);
            }
            Some((name, Kind::Fixed32)) => {
                let _ = write!(out, "{name}: {v}");
            }
            Some((name, Kind::Float)) => {
                let _ = write!(
                    out,
                    "{name}: {}",
                    fixed_decimals(f64::from(f32::from_bits(v)))
                );
            }
            _ => {
                let _ = write!(out, "{id}: 0x{v:08x}");
            }
        },
        FieldValue::Fixed64(v) => match info.map(|i| (&i.name, &i.kind)) {
            Some((name, Kind::Sfixed64)) => {
                let _ = write!(out, "{name}: {}", v as i64);
            }
            Some((name, Kind::Fixed64)) => {
                let _ = write!(out, "{name}: {v}");
            }
            Some((name, Kind::Double)) => {
                let _ = write!(out, "{name}: {}", fixed_decimals(f64::from_bits(v)));
            }
            _ => {
                let _ = write!(out, "{id}: 0x{v:016x}");
            }
        },
        FieldValue::Bytes(b) => print_delimited(id, b, info, indent, out),
        FieldValue::Group(b) => {
            let _ = write!(out, "{id}: {}", quote(b));
        }
    }
}

/// A varint of a known field.
fn print_varint(name: &str, kind: &Kind, id: u32, v: u64, out: &mut String) {
    let _ = match kind {
        Kind::Int32 => write!(out, "{name}: {}", v as i32),
        Kind::Sint32 => write!(out, "{name}: {}", unzigzag32(v as u32)),
        Kind::Uint32 => write!(out, "{name}: {}", v as u32),
        Kind::Int64 => write!(out, "{name}: {}", v as i64),
        Kind::Sint64 => write!(out, "{name}: {}", unzigzag64(v)),
        Kind::Uint64 => write!(out, "{name}: {v}"),
        Kind::Bool => write!(out, "{name}: {}", v != 0),
        Kind::Enum(e) => {
            print_enum(name, e, id, v as i32, out);
            Ok(())
        }
        _ => write!(out, "{id}: {}", v as i64),
    };
}

fn print_enum(name: &str, e: &EnumDescriptor, id: u32, v: i32, out: &mut String) {
    let _ = match e.get_value(v) {
        Some(value) => write!(out, "{name}: {}", value.name()),
        None => write!(out, "{id}: {v}"),
    };
}

/// A length-delimited field: a string, a nested message, packed scalars,
/// or bytes of an unknown field.
fn print_delimited(
    id: u32,
    b: &[u8],
    info: Option<&FieldInfo>,
    indent: &mut String,
    out: &mut String,
) {
    let Some(info) = info else {
        let _ = write!(out, "{id}: {}", quote(b));
        return;
    };
    let name = &info.name;
    match &info.kind {
        Kind::String | Kind::Bytes => {
            let _ = write!(out, "{name}: {}", quote(b));
        }
        Kind::Message(m) => {
            let _ = write!(out, "{} {{", info.message_name);
            indent.push_str("  ");
            print_message(Some(m), b, indent, out);
            indent.truncate(indent.len().saturating_sub(2));
            out.push('\n');
            out.push_str(indent);
            out.push('}');
        }
        Kind::Bool | Kind::Sint32 | Kind::Sint64 => {
            let number = match info.kind {
                Kind::Bool => 8,
                Kind::Sint32 => 17,
                _ => 18,
            };
            let _ = write!(
                out,
                "# Packed type {number} not supported. Printing raw string.\n{indent}"
            );
            let _ = write!(out, "{id}: {}", quote(b));
        }
        kind => print_packed(name, kind, id, b, indent, out),
    }
}

/// Packed scalars, one `name: value` per line.
fn print_packed(name: &str, kind: &Kind, id: u32, b: &[u8], indent: &str, out: &mut String) {
    let mut first = true;
    let mut next = |out: &mut String| {
        if !first {
            out.push('\n');
            out.push_str(indent);
        }
        first = false;
    };
    let width = match kind {
        Kind::Double | Kind::Fixed64 | Kind::Sfixed64 => 8,
        Kind::Float | Kind::Fixed32 | Kind::Sfixed32 => 4,
        _ => 0,
    };
    let mut failed = false;
    if width == 0 {
        let mut rest = b;
        while !rest.is_empty() {
            let Ok((v, n)) = decode_varint(rest) else {
                failed = true;
                break;
            };
            rest = rest.get(n..).unwrap_or(&[]);
            next(out);
            let _ = match kind {
                Kind::Int32 => write!(out, "{name}: {}", v as i32),
                Kind::Uint32 => write!(out, "{name}: {}", v as u32),
                Kind::Int64 => write!(out, "{name}: {}", v as i64),
                Kind::Enum(e) => {
                    print_enum(name, e, id, v as i32, out);
                    Ok(())
                }
                _ => write!(out, "{name}: {v}"),
            };
        }
    } else {
        failed = b.len() % width != 0;
        for chunk in b.chunks_exact(width) {
            let mut bits = [0u8; 8];
            bits[..width].copy_from_slice(chunk);
            let v = u64::from_le_bytes(bits);
            next(out);
            let _ = match kind {
                Kind::Double => write!(out, "{name}: {}", fixed_decimals(f64::from_bits(v))),
                Kind::Float => write!(
                    out,
                    "{name}: {}",
                    fixed_decimals(f64::from(f32::from_bits(v as u32)))
                ),
                Kind::Sfixed32 => write!(out, "{name}: {}", v as u32 as i32),
                Kind::Sfixed64 => write!(out, "{name}: {}", v as i64),
                _ => write!(out, "{name}: {v}"),
            };
        }
    }
    if failed {
        next(out);
        let _ = writeln!(out, "# Packed decoding failure for field {name}");
    }
}

fn unzigzag32(v: u32) -> i32 {
    ((v >> 1) as i32) ^ -((v & 1) as i32)
}

fn unzigzag64(v: u64) -> i64 {
    ((v >> 1) as i64) ^ -((v & 1) as i64)
}

/// A floating point value with six decimals, as C's `%f` prints it.
fn fixed_decimals(v: f64) -> String {
    if v.is_nan() {
        if v.is_sign_negative() { "-nan" } else { "nan" }.to_string()
    } else if v.is_infinite() {
        if v < 0.0 { "-inf" } else { "inf" }.to_string()
    } else {
        format!("{v:.6}")
    }
}

/// Bytes as a quoted text-format string: C escapes for the usual control
/// characters, quotes and backslash, octal for every other byte outside
/// printable ASCII.
pub fn quote(raw: &[u8]) -> String {
    let mut s = String::with_capacity(raw.len() + 2);
    s.push('"');
    for &c in raw {
        match c {
            0x07 => s.push_str("\\a"),
            0x08 => s.push_str("\\b"),
            0x0c => s.push_str("\\f"),
            b'\n' => s.push_str("\\n"),
            b'\r' => s.push_str("\\r"),
            b'\t' => s.push_str("\\t"),
            0x0b => s.push_str("\\v"),
            b'\\' => s.push_str("\\\\"),
            b'\'' => s.push_str("\\'"),
            b'"' => s.push_str("\\\""),
            0x20..=0x7e => s.push(char::from(c)),
            _ => {
                let _ = write!(s, "\\{}{}{}", (c >> 6) & 3, (c >> 3) & 7, c & 7);
            }
        }
    }
    s.push('"');
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Wire bytes of (field, wire type, payload) triples.
    fn wire(fields: &[(u32, u8, &[u8])]) -> Vec<u8> {
        let mut out = Vec::new();
        for (id, ty, payload) in fields {
            out.push(((id << 3) | u32::from(*ty)) as u8);
            if *ty == 2 {
                out.push(payload.len() as u8);
            }
            out.extend_from_slice(payload);
        }
        out
    }

    fn config_text(bytes: &[u8]) -> String {
        to_text(message("perfetto.protos.TraceConfig").as_ref(), bytes)
    }

    #[test]
    fn the_schema_has_the_trace_config() {
        assert!(message("perfetto.protos.TraceConfig").is_some());
        assert!(message("perfetto.protos.TracePacket").is_some());
    }

    #[test]
    fn nested_messages_enums_and_numbers() {
        // buffers { size_kb: 32768 fill_policy: DISCARD(2) } duration_ms: 10000
        let buffer = wire(&[(1, 0, &[0x80, 0x80, 0x02]), (4, 0, &[2])]);
        let config = [wire(&[(1, 2, &buffer)]), wire(&[(3, 0, &[0x90, 0x4e])])].concat();
        assert_eq!(
            config_text(&config),
            "buffers {\n  size_kb: 32768\n  fill_policy: DISCARD\n}\nduration_ms: 10000"
        );
    }

    #[test]
    fn negative_int64_and_unknown_fields() {
        // trace_uuid_lsb (28, int64) = -2; field 999 is unknown.
        let mut config = vec![0xe0, 0x01];
        config.extend([0xfe, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01]);
        config.extend([0xb8, 0x3e, 0x05]);
        assert_eq!(config_text(&config), "trace_uuid_lsb: -2\n999: 5");
    }

    #[test]
    fn strings_are_escaped_as_upstream_escapes_them() {
        assert_eq!(
            quote(b"a\"b\\c\n\x01\xc3\xa9'"),
            "\"a\\\"b\\\\c\\n\\001\\303\\251\\'\""
        );
    }

    #[test]
    fn empty_nested_message_and_trailing_garbage() {
        let config = [wire(&[(1, 2, &[])]), vec![0x0a, 0x05, 0x01]].concat();
        assert_eq!(
            config_text(&config),
            "buffers {\n}\n# Extra bytes: \"\\n\\005\\001\"\n"
        );
    }
}
