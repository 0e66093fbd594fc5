//! The `args` table declared once: the typed value of one arg
//! ([`ArgValue`]), one arg ([`Arg`]) and its row ([`ArgRow`]), whose
//! `int_value`, `string_value`, `real_value` and `value_type` columns are
//! derived from the value when the table freezes, so a set is stored as
//! compactly as its values and the columns SQL sees are declared in one
//! place. The sets themselves (dedup, ids) are `storage/args.rs`.

use super::table;
use crate::column_store::strings::StrId;

/// One arg's value, typed as the `value_type` column names it.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub enum ArgValue {
    /// A signed integer.
    Int(i64),
    /// An unsigned integer (stored as its two's complement bits).
    Uint(u64),
    /// A string.
    String(StrId),
    /// A double.
    Real(f64),
    /// A pointer (stored as an integer, shown in hex).
    Pointer(u64),
    /// A boolean.
    Bool(bool),
    /// A JSON text.
    Json(StrId),
    /// No value.
    #[default]
    Null,
}

impl ArgValue {
    /// Every `value_type` text, to be interned before the table freezes.
    pub const TYPE_NAMES: [&'static str; 8] = [
        "int", "uint", "string", "real", "pointer", "bool", "json", "null",
    ];

    /// The `value_type` column's text.
    pub fn type_name(&self) -> &'static str {
        match self {
            ArgValue::Int(_) => "int",
            ArgValue::Uint(_) => "uint",
            ArgValue::String(_) => "string",
            ArgValue::Real(_) => "real",
            ArgValue::Pointer(_) => "pointer",
            ArgValue::Bool(_) => "bool",
            ArgValue::Json(_) => "json",
            ArgValue::Null => "null",
        }
    }

    /// The `int_value` column: integers, pointers and booleans.
    pub fn int_value(&self) -> Option<i64> {
        match *self {
            ArgValue::Int(x) => Some(x),
            ArgValue::Uint(x) | ArgValue::Pointer(x) => Some(x as i64),
            ArgValue::Bool(b) => Some(i64::from(b)),
            _ => None,
        }
    }

    /// The `string_value` column: strings and JSON.
    pub fn string_value(&self) -> StrId {
        match *self {
            ArgValue::String(s) | ArgValue::Json(s) => s,
            _ => StrId::NULL,
        }
    }

    /// The `real_value` column.
    pub fn real_value(&self) -> Option<f64> {
        match *self {
            ArgValue::Real(x) => Some(x),
            _ => None,
        }
    }

    /// The value as the dedup of sets compares it: kind and bits.
    pub(crate) fn hash_key(&self) -> (u8, u64) {
        match *self {
            ArgValue::Int(v) => (0, v as u64),
            ArgValue::Uint(v) => (1, v),
            ArgValue::String(s) => (2, u64::from(s.0)),
            ArgValue::Real(v) => (3, v.to_bits()),
            ArgValue::Pointer(v) => (4, v),
            ArgValue::Bool(v) => (5, u64::from(v)),
            ArgValue::Json(s) => (6, u64::from(s.0)),
            ArgValue::Null => (7, 0),
        }
    }
}

/// One arg: its flat key (array indexes left out), key and value.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Arg {
    /// The key without array indexes (`a.b`).
    pub flat_key: StrId,
    /// The full key (`a[0].b`).
    pub key: StrId,
    /// The value.
    pub value: ArgValue,
}

table! {
    /// A row of `args`: one arg of a set (the `args` view adds
    /// `display_value`). The storage keeps the args without their set's id
    /// and makes these rows as the table freezes (`ArgTable::rows`).
    #[derive(Copy, PartialEq)]
    pub struct ArgRow in "__intrinsic_args" sorted by arg_set_id, views ["args"] {
        /// The set (the id of its first arg's row).
        arg_set_id: u32,
        /// The arg, whose columns follow.
        field arg: Arg,
        /// The key without array indexes.
        flat_key: StrId = |r| r.arg.flat_key,
        /// The full key.
        key: StrId = |r| r.arg.key,
        /// Integer, unsigned, pointer or boolean value.
        int_value: Option<i64> = |r| r.arg.value.int_value(),
        /// String or JSON value.
        string_value: StrId = |r| r.arg.value.string_value(),
        /// Double value.
        real_value: Option<f64> = |r| r.arg.value.real_value(),
        /// What the value is ([`ArgValue::TYPE_NAMES`]).
        value_type: StrId =
            |r, strings| strings.find(r.arg.value.type_name()).unwrap_or(StrId::NULL),
    }
}

/// The args table's declaration.
pub const TABLES: &[super::TableDecl] = &[ArgRow::TABLE];
