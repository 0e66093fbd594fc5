//! PerfettoSQL's types (`LONG`, `DOUBLE`, `STRING`, `TIMESTAMP`,
//! `JOINID(table.col)`, …) as the value SQLite holds for each, and the
//! check a function applies to its arguments: a value of another storage
//! class than its declared type's is refused, NULL always passes.

use rusqlite::types::ValueRef;

/// The storage class a PerfettoSQL type stands for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ArgType {
    /// `BOOL`, `BOOLEAN`: an integer.
    Bool,
    /// `LONG`, `INT`, `UINT`, `TIMESTAMP`, `DURATION`, `ID`, `JOINID`,
    /// `ARGSETID` (with or without a `(table.column)`): an integer.
    Long,
    /// `DOUBLE`, `FLOAT`: a real.
    Double,
    /// `STRING`: text.
    String,
    /// `BYTES`, `PROTO`: a blob.
    Bytes,
    /// `ANY`: anything.
    Any,
}

impl ArgType {
    /// The type named `name` (any case), None when PerfettoSQL has none.
    pub(crate) fn parse(name: &str) -> Option<ArgType> {
        let is = |w: &str| name.eq_ignore_ascii_case(w);
        Some(if is("bool") || is("boolean") {
            ArgType::Bool
        } else if [
            "long",
            "int",
            "uint",
            "timestamp",
            "duration",
            "id",
            "joinid",
            "argsetid",
        ]
        .iter()
        .any(|w| is(w))
        {
            ArgType::Long
        } else if is("double") || is("float") {
            ArgType::Double
        } else if is("string") {
            ArgType::String
        } else if is("bytes") || is("proto") {
            ArgType::Bytes
        } else if is("any") {
            ArgType::Any
        } else {
            return None;
        })
    }

    /// Its name in messages.
    pub(crate) fn name(self) -> &'static str {
        match self {
            ArgType::Bool => "BOOL",
            ArgType::Long => "LONG",
            ArgType::Double => "DOUBLE",
            ArgType::String => "STRING",
            ArgType::Bytes => "BYTES",
            ArgType::Any => "ANY",
        }
    }

    /// Whether `v` may be passed where this type is declared; the message
    /// saying why not.
    pub(crate) fn check(self, v: ValueRef<'_>) -> Result<(), String> {
        let actual = match v {
            ValueRef::Null => return Ok(()),
            ValueRef::Integer(_) => "LONG",
            ValueRef::Real(_) => "DOUBLE",
            ValueRef::Text(_) => "STRING",
            ValueRef::Blob(_) => "BYTES",
        };
        let ok = match self {
            ArgType::Any => true,
            ArgType::Bool | ArgType::Long => matches!(v, ValueRef::Integer(_)),
            ArgType::Double => matches!(v, ValueRef::Real(_)),
            ArgType::String => matches!(v, ValueRef::Text(_)),
            ArgType::Bytes => matches!(v, ValueRef::Blob(_)),
        };
        if ok {
            Ok(())
        } else {
            Err(format!(
                "does not have expected type: expected {}, actual {actual}",
                self.name()
            ))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn types_parse_by_name_and_check_storage_classes() {
        assert_eq!(ArgType::parse("TimeStamp"), Some(ArgType::Long));
        assert_eq!(ArgType::parse("joinid"), Some(ArgType::Long));
        assert_eq!(ArgType::parse("PROTO"), Some(ArgType::Bytes));
        assert_eq!(ArgType::parse("Expr"), None);
        assert!(ArgType::Long.check(ValueRef::Integer(1)).is_ok());
        assert!(ArgType::Long.check(ValueRef::Null).is_ok());
        assert_eq!(
            ArgType::Long.check(ValueRef::Text(b"a")),
            Err("does not have expected type: expected LONG, actual STRING".to_owned())
        );
        assert!(ArgType::Double.check(ValueRef::Integer(1)).is_err());
        assert!(ArgType::Any.check(ValueRef::Blob(b"")).is_ok());
    }
}
