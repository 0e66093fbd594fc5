//! Scalar functions Perfetto's SQL offers: `EXTRACT_ARG(arg_set_id, key)`,
//! the value of one arg of a set (typed as stored; NULL when absent).

use crate::hash::HashMap;
use std::sync::{Arc, OnceLock};

use rusqlite::Connection;
use rusqlite::functions::FunctionFlags;
use rusqlite::types::{Value, ValueRef};

use crate::column_store::table::{Cell, Table};

/// (arg_set_id, key) → row of `__intrinsic_args`: a binary search over the
/// table in arg set order, or (should it not be in that order) a map built
/// on the first `EXTRACT_ARG` call, so a load whose queries never call it
/// does not pay for it.
struct ArgIndex {
    table: Arc<Table>,
    rows: OnceLock<HashMap<(i64, String), usize>>,
}

impl ArgIndex {
    fn new(table: Arc<Table>) -> Self {
        ArgIndex {
            table,
            rows: OnceLock::new(),
        }
    }

    fn rows(&self) -> &HashMap<(i64, String), usize> {
        self.rows.get_or_init(|| {
            let table = &self.table;
            let mut rows = HashMap::default();
            for r in 0..table.len {
                if let (Cell::Int(set), Cell::Str(key)) = (table.cell(r, 1), table.cell(r, 3)) {
                    rows.insert((set, key.to_owned()), r);
                }
            }
            rows
        })
    }

    /// The row of (`set`, `key`): by a binary search when the table is in
    /// arg set order (as the loader writes it: no index to build or keep),
    /// else through the map.
    fn row(&self, set: i64, key: &str) -> Option<usize> {
        let table = &self.table;
        if table.sorted_by != Some(1) {
            return self.rows().get(&(set, key.to_owned())).copied();
        }
        let set_of = |r: usize| table.columns.get(1).and_then(|c| c.int_at(r));
        let (mut lo, mut hi) = (0usize, table.len);
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            if set_of(mid) < Some(set) {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        (lo..table.len)
            .take_while(|&r| set_of(r) == Some(set))
            .find(|&r| table.cell(r, 3) == Cell::Str(key))
    }

    fn get(&self, set: i64, key: &str) -> Value {
        let Some(r) = self.row(set, key) else {
            return Value::Null;
        };
        // int_value, string_value, real_value: whichever is set.
        for col in [4, 5, 6] {
            match self.table.cell(r, col) {
                Cell::Int(v) => return Value::Integer(v),
                Cell::Str(s) => return Value::Text(s.to_owned()),
                Cell::Real(v) => return Value::Real(v),
                Cell::Null => {}
            }
        }
        Value::Null
    }
}

/// Registers the functions over the `__intrinsic_args` table.
pub fn register(conn: &Connection, args: Arc<Table>) -> rusqlite::Result<()> {
    let index = Arc::new(ArgIndex::new(args));
    conn.create_scalar_function(
        "extract_arg",
        2,
        FunctionFlags::SQLITE_UTF8 | FunctionFlags::SQLITE_DETERMINISTIC,
        move |ctx| {
            let set = match ctx.get_raw(0) {
                ValueRef::Integer(v) => v,
                _ => return Ok(Value::Null),
            };
            Ok(match ctx.get_raw(1) {
                ValueRef::Text(k) => index.get(set, &String::from_utf8_lossy(k)),
                _ => Value::Null,
            })
        },
    )
}
