//! `__intrinsic_arg_set_to_json(arg_set_id)`: one arg set as a JSON
//! object, the way Perfetto's prelude prints it. Keys are paths (`a.b`,
//! `a[2].c`): each dot opens an object and each `[n]` an array (missing
//! elements before `n` become `null`), in the order the args are stored.
//! Integers are written as they are, unsigned values unsigned, pointers as
//! `0x…` strings, booleans as `true`/`false`, doubles as C's `%.16g` (NaN
//! and infinities as strings), and strings with every byte outside
//! printable ASCII escaped as `\uXXXX`. NULL for a NULL set; `{}` for a set
//! without args.

use std::sync::Arc;

use rusqlite::Connection;
use rusqlite::functions::FunctionFlags;
use rusqlite::types::{Value, ValueRef};

use crate::column_store::table::{Cell, Table};

/// The columns of `__intrinsic_args` this reads.
const ARG_SET_ID: usize = 1;
const KEY: usize = 3;
const INT_VALUE: usize = 4;
const STRING_VALUE: usize = 5;
const REAL_VALUE: usize = 6;
const VALUE_TYPE: usize = 7;

/// Why an arg set could not be written.
#[derive(Debug, thiserror::Error)]
pub enum ArgJsonError {
    /// The argument was neither NULL nor an integer.
    #[error("__intrinsic_arg_set_to_json: 1st argument should be arg set id")]
    NotAnArgSetId,
    /// A key that puts a member into something that is not an object.
    #[error("Failed to insert key {0}: {1} is not inside an object")]
    NotAnObject(String, String),
    /// A key that indexes something that is not an array.
    #[error("Failed to insert key {0}: {1} is not inside an array")]
    NotAnArray(String, String),
    /// A key whose `[…]` is not an index.
    #[error("Expected an index in {1} of key {0}")]
    BadIndex(String, String),
}

/// One arg's value, typed as stored.
#[derive(Debug, Clone, PartialEq)]
enum Leaf {
    Null,
    Int(i64),
    Uint(u64),
    Pointer(u64),
    Bool(bool),
    Real(f64),
    Str(String),
}

/// A node of the arg set's tree.
#[derive(Debug, Clone, PartialEq)]
enum Node {
    Leaf(Leaf),
    Array(Vec<Node>),
    /// Members in the order they were first added.
    Object(Vec<(String, Node)>),
}

impl Node {
    fn is_null(&self) -> bool {
        matches!(self, Node::Leaf(Leaf::Null))
    }

    /// The member `name` of this object, added (as NULL) when absent.
    fn member(&mut self, name: &str) -> Option<&mut Node> {
        let Node::Object(members) = self else {
            return None;
        };
        let at = match members.iter().position(|(k, _)| k == name) {
            Some(at) => at,
            None => {
                members.push((name.to_owned(), Node::Leaf(Leaf::Null)));
                members.len() - 1
            }
        };
        members.get_mut(at).map(|(_, n)| n)
    }

    /// The element `index` of this array, NULLs added up to it.
    fn element(&mut self, index: usize) -> Option<&mut Node> {
        let Node::Array(items) = self else {
            return None;
        };
        while items.len() <= index {
            items.push(Node::Leaf(Leaf::Null));
        }
        items.get_mut(index)
    }
}

/// Puts `value` at path `key` under `root` (an object).
fn insert(root: &mut Node, key: &str, value: Leaf) -> Result<(), ArgJsonError> {
    let mut target = root;
    for part in key.split('.').filter(|p| !p.is_empty()) {
        if target.is_null() {
            *target = Node::Object(Vec::new());
        }
        let (name, mut rest) = match part.find('[') {
            Some(at) => part.split_at(at),
            None => (part, ""),
        };
        target = target
            .member(name)
            .ok_or_else(|| ArgJsonError::NotAnObject(key.to_owned(), part.to_owned()))?;
        while let Some(open) = rest.strip_prefix('[') {
            let close = open.find(']').unwrap_or(open.len());
            let index: usize = open
                .get(..close)
                .and_then(|s| s.parse::<u32>().ok())
                .and_then(|i| usize::try_from(i).ok())
                .ok_or_else(|| ArgJsonError::BadIndex(key.to_owned(), part.to_owned()))?;
            rest = open.get(close + 1..).unwrap_or("");
            rest = rest.find('[').and_then(|at| rest.get(at..)).unwrap_or("");
            if target.is_null() {
                *target = Node::Array(Vec::new());
            }
            target = target
                .element(index)
                .ok_or_else(|| ArgJsonError::NotAnArray(key.to_owned(), part.to_owned()))?;
        }
    }
    *target = Node::Leaf(value);
    Ok(())
}

/// `v` as C's `printf("%.16g")` writes it.
pub(crate) fn format_g16(v: f64) -> String {
    const PRECISION: i32 = 16;
    if v == 0.0 {
        return if v.is_sign_negative() { "-0" } else { "0" }.to_owned();
    }
    // The exponent after rounding to PRECISION significant digits.
    let sci = format!("{:.*e}", (PRECISION - 1) as usize, v);
    let (mantissa, exp) = sci.split_once('e').unwrap_or((&sci, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    let strip = |s: &str| -> String {
        if s.contains('.') {
            s.trim_end_matches('0').trim_end_matches('.').to_owned()
        } else {
            s.to_owned()
        }
    };
    if (-4..PRECISION).contains(&exp) {
        let decimals = (PRECISION - 1 - exp).max(0) as usize;
        strip(&format!("{v:.decimals$}"))
    } else {
        let sign = if exp < 0 { '-' } else { '+' };
        format!("{}e{}{:02}", strip(mantissa), sign, exp.unsigned_abs())
    }
}

/// Appends `s` quoted, as upstream's serializer escapes it.
fn write_string(out: &mut String, s: &str) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            ' '..='~' => out.push(c),
            _ => {
                let mut units = [0u16; 2];
                for u in c.encode_utf16(&mut units) {
                    out.push_str(&format!("\\u{u:04x}"));
                }
            }
        }
    }
    out.push('"');
}

fn write_node(out: &mut String, node: &Node) {
    match node {
        Node::Leaf(leaf) => match leaf {
            Leaf::Null => out.push_str("null"),
            Leaf::Int(v) => out.push_str(&v.to_string()),
            Leaf::Uint(v) => out.push_str(&v.to_string()),
            Leaf::Pointer(v) => write_string(out, &format!("0x{v:x}")),
            Leaf::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
            Leaf::Real(v) if v.is_nan() => out.push_str("\"NaN\""),
            Leaf::Real(v) if v.is_infinite() => out.push_str(if *v > 0.0 {
                "\"Infinity\""
            } else {
                "\"-Infinity\""
            }),
            Leaf::Real(v) => out.push_str(&format_g16(*v)),
            Leaf::Str(s) => write_string(out, s),
        },
        Node::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_node(out, item);
            }
            out.push(']');
        }
        Node::Object(members) => {
            out.push('{');
            for (i, (k, v)) in members.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_string(out, k);
                out.push(':');
                write_node(out, v);
            }
            out.push('}');
        }
    }
}

/// The value of row `r` of the args table, by its `value_type`.
fn leaf(args: &Table, r: usize) -> Leaf {
    let int = match args.cell(r, INT_VALUE) {
        Cell::Int(v) => Some(v),
        _ => None,
    };
    let string = match args.cell(r, STRING_VALUE) {
        Cell::Str(s) => Some(s.to_owned()),
        _ => None,
    };
    let ty = match args.cell(r, VALUE_TYPE) {
        Cell::Str(s) => s,
        _ => "",
    };
    match (ty, int, string) {
        ("int", Some(v), _) => Leaf::Int(v),
        ("uint", Some(v), _) => Leaf::Uint(v as u64),
        ("pointer", Some(v), _) => Leaf::Pointer(v as u64),
        ("bool", Some(v), _) => Leaf::Bool(v != 0),
        ("string" | "json", _, Some(s)) => Leaf::Str(s),
        ("real", _, _) => match args.cell(r, REAL_VALUE) {
            Cell::Real(v) => Leaf::Real(v),
            Cell::Int(v) => Leaf::Real(v as f64),
            _ => Leaf::Null,
        },
        _ => Leaf::Null,
    }
}

/// The rows of set `set`: a binary search when the table is in set order
/// (as the loader writes it), a scan otherwise.
fn rows_of(args: &Table, set: i64) -> Vec<usize> {
    let set_of = |r: usize| args.columns.get(ARG_SET_ID).and_then(|c| c.int_at(r));
    if args.sorted_by != Some(ARG_SET_ID) {
        return (0..args.len).filter(|&r| set_of(r) == Some(set)).collect();
    }
    let (mut lo, mut hi) = (0usize, args.len);
    while lo < hi {
        let mid = lo + (hi - lo) / 2;
        if set_of(mid) < Some(set) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    (lo..args.len)
        .take_while(|&r| set_of(r) == Some(set))
        .collect()
}

/// The JSON text of arg set `set`.
fn to_json(args: &Table, set: i64) -> Result<String, ArgJsonError> {
    let mut root = Node::Object(Vec::new());
    for r in rows_of(args, set) {
        let key = match args.cell(r, KEY) {
            Cell::Str(k) => k,
            _ => "",
        };
        insert(&mut root, key, leaf(args, r))?;
    }
    let mut out = String::new();
    write_node(&mut out, &root);
    Ok(out)
}

/// Registers `__intrinsic_arg_set_to_json` over `args` (`__intrinsic_args`).
pub fn register(conn: &Connection, args: Arc<Table>) -> rusqlite::Result<()> {
    conn.create_scalar_function(
        "__intrinsic_arg_set_to_json",
        1,
        FunctionFlags::SQLITE_UTF8 | FunctionFlags::SQLITE_DETERMINISTIC,
        move |ctx| {
            let set = match ctx.get_raw(0) {
                ValueRef::Null => return Ok(Value::Null),
                ValueRef::Integer(v) => v,
                _ => {
                    return Err(rusqlite::Error::UserFunctionError(Box::new(
                        ArgJsonError::NotAnArgSetId,
                    )));
                }
            };
            to_json(&args, set)
                .map(Value::Text)
                .map_err(|e| rusqlite::Error::UserFunctionError(Box::new(e)))
        },
    )
}

#[cfg(test)]
mod tests {
    use super::format_g16;
    use crate::storage::Storage;
    use crate::storage::args::ArgSetBuilder;
    use crate::tables::args::ArgValue;
    use crate::{TraceProcessor, Value};

    #[test]
    fn doubles_are_written_as_cs_g16() {
        assert_eq!(format_g16(1.5), "1.5");
        assert_eq!(format_g16(100.0), "100");
        assert_eq!(format_g16(0.1), "0.1");
        assert_eq!(format_g16(1e20), "1e+20");
        assert_eq!(format_g16(1.25e-7), "1.25e-07");
        assert_eq!(format_g16(0.0001), "0.0001");
        assert_eq!(format_g16(-3.0), "-3");
    }

    #[test]
    fn an_arg_set_becomes_nested_json_in_stored_order() {
        let mut s = Storage::default();
        let mut b = ArgSetBuilder::default();
        let mut add = |s: &mut Storage, flat: &str, key: &str, v: ArgValue| {
            let (f, k) = (s.strings.intern(flat), s.strings.intern(key));
            b.add(f, k, v);
        };
        let text = s.strings.intern("a \"q\"\n\u{e9}");
        add(&mut s, "z", "z", ArgValue::Int(-4));
        add(&mut s, "a.b", "a.b", ArgValue::Bool(true));
        add(&mut s, "arr", "arr[2]", ArgValue::Real(2.5));
        add(&mut s, "arr.x", "arr[0].x", ArgValue::Pointer(255));
        add(&mut s, "a.c", "a.c", ArgValue::String(text));
        add(&mut s, "u", "u", ArgValue::Uint(u64::MAX));
        let set = s.args.add_set(&b).expect("a set");
        let tp = TraceProcessor::from_storage(s).expect("engine");
        let r = tp
            .query(&format!(
                "SELECT __intrinsic_arg_set_to_json({set}), __intrinsic_arg_set_to_json(NULL)"
            ))
            .expect("query");
        assert_eq!(
            r.rows,
            vec![vec![
                Value::Text(
                    "{\"z\":-4,\"a\":{\"b\":true,\"c\":\"a \\\"q\\\"\\n\\u00e9\"},\
                     \"arr\":[{\"x\":\"0xff\"},null,2.5],\"u\":18446744073709551615}"
                        .into()
                ),
                Value::Null
            ]]
        );
    }

    #[test]
    fn a_set_without_args_is_an_empty_object() {
        let tp = TraceProcessor::from_storage(Storage::default()).expect("engine");
        let r = tp
            .query("SELECT __intrinsic_arg_set_to_json(12345)")
            .expect("query");
        assert_eq!(r.rows, vec![vec![Value::Text("{}".into())]]);
    }
}
