//! The prelude's metadata lookups: `extract_metadata(name)` (the first
//! `metadata` row of that name), `extract_metadata_for_machine(machine_id,
//! name)`, `extract_metadata_for_trace(trace_id, name)` and
//! `extract_exact_metadata(machine_id, trace_id, name)` (the first row
//! that also has that machine and/or trace). The answer is the row's
//! string value, else its integer value, else NULL; NULL when no row
//! matches or an argument is NULL.

use std::sync::Arc;

use rusqlite::Connection;
use rusqlite::functions::{Context, FunctionFlags};
use rusqlite::types::{Value, ValueRef};

use crate::column_store::table::{Cell, Table};

/// Which of `machine_id` and `trace_id` a function matches besides the
/// name.
#[derive(Debug, Clone, Copy)]
struct Scope {
    machine: bool,
    trace: bool,
}

fn col(t: &Table, name: &str) -> Option<usize> {
    t.columns.iter().position(|c| c.name == name)
}

/// The value of the first row named `name` whose machine and trace are
/// `machine` and `trace` (when given).
fn lookup(t: &Table, name: &str, machine: Option<i64>, trace: Option<i64>) -> Value {
    let (Some(n), m, tr) = (col(t, "name"), col(t, "machine_id"), col(t, "trace_id")) else {
        return Value::Null;
    };
    let int_of = |r: usize, c: Option<usize>| c.and_then(|c| t.columns.get(c)?.int_at(r));
    for r in 0..t.len {
        if t.cell(r, n) != Cell::Str(name) {
            continue;
        }
        if machine.is_some() && int_of(r, m) != machine {
            continue;
        }
        if trace.is_some() && int_of(r, tr) != trace {
            continue;
        }
        if let Some(Cell::Str(s)) = col(t, "str_value").map(|c| t.cell(r, c)) {
            return Value::Text(s.to_owned());
        }
        return int_of(r, col(t, "int_value")).map_or(Value::Null, Value::Integer);
    }
    Value::Null
}

fn call(t: &Table, scope: Scope, ctx: &Context<'_>) -> Value {
    let mut i = 0;
    let mut int_arg = |on: bool| -> Option<Option<i64>> {
        if !on {
            return Some(None);
        }
        let v = match ctx.get_raw(i) {
            ValueRef::Integer(v) => Some(Some(v)),
            ValueRef::Real(v) => Some(Some(v as i64)),
            _ => None,
        };
        i += 1;
        v
    };
    let (Some(machine), Some(trace)) = (int_arg(scope.machine), int_arg(scope.trace)) else {
        return Value::Null;
    };
    match ctx.get_raw(i) {
        ValueRef::Text(name) => lookup(t, &String::from_utf8_lossy(name), machine, trace),
        _ => Value::Null,
    }
}

/// Registers the four functions over `metadata` (`__intrinsic_metadata`).
pub fn register(conn: &Connection, metadata: Arc<Table>) -> rusqlite::Result<()> {
    for (name, scope) in [
        (
            "extract_metadata",
            Scope {
                machine: false,
                trace: false,
            },
        ),
        (
            "extract_metadata_for_machine",
            Scope {
                machine: true,
                trace: false,
            },
        ),
        (
            "extract_metadata_for_trace",
            Scope {
                machine: false,
                trace: true,
            },
        ),
        (
            "extract_exact_metadata",
            Scope {
                machine: true,
                trace: true,
            },
        ),
    ] {
        let t = metadata.clone();
        let arity = 1 + i32::from(scope.machine) + i32::from(scope.trace);
        conn.create_scalar_function(
            name,
            arity,
            FunctionFlags::SQLITE_UTF8 | FunctionFlags::SQLITE_DETERMINISTIC,
            move |ctx| Ok(call(&t, scope, ctx)),
        )?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use crate::storage::Storage;
    use crate::{TraceProcessor, Value};

    #[test]
    fn the_first_row_of_the_name_answers_its_value() {
        let mut s = Storage::default();
        s.set_metadata_str("trace_uuid", "abc");
        s.set_metadata_int("trace_size_bytes", 42);
        let tp = TraceProcessor::from_storage(s).expect("engine");
        let r = tp
            .query(
                "SELECT extract_metadata('trace_uuid'), extract_metadata('trace_size_bytes'), \
                 extract_metadata('nothing'), extract_metadata(NULL), \
                 extract_metadata_for_machine(1, 'trace_uuid'), \
                 extract_exact_metadata(NULL, 0, 'trace_uuid')",
            )
            .expect("query");
        assert_eq!(
            r.rows,
            vec![vec![
                Value::Text("abc".into()),
                Value::Int(42),
                Value::Null,
                Value::Null,
                Value::Null,
                Value::Null
            ]]
        );
    }
}
