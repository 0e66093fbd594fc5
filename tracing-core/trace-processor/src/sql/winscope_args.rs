//! `__intrinsic_winscope_proto_to_args_with_defaults(table_name)`: the
//! raw protos of a Winscope table (its `base64_proto_id` column) flattened
//! again into args, this time with every field the proto left unset at its
//! default, as Winscope's UI shows an entry. Each distinct proto once, in
//! row order; the shell transitions' protos, several per transition, are
//! merged per transition (a key seen before in the transition updates its
//! row, and its default is not added again) and keyed as Android's newer
//! schema names their fields, as the transitions' own args are. The
//! ViewCapture tables' interned strings are looked up again: an `x_iid`
//! field becomes `x` with the string its proto's interned data gives it,
//! or an error text (then the iid is kept too).

use std::sync::Arc;

use base64::Engine as _;
use rusqlite::Connection;
use rusqlite::types::Value;

use super::prelude::table_function::{self, TableFn};
use crate::column_store::strings::StrId;
use crate::column_store::table::{Cell, Table};
use crate::hash::{HashMap, HashSet};
use crate::parser::proto_to_args::{self, ArgSink, FlatValue, Options};
use crate::parser::winscope::{message_name, pool, shell_transition_key};

/// The function's name.
const NAME: &str = "__intrinsic_winscope_proto_to_args_with_defaults";

/// The columns answered, in upstream's order.
const COLUMNS: [(&str, &str); 8] = [
    ("id", "BIGINT"),
    ("base64_proto_id", "BIGINT"),
    ("flat_key", "TEXT"),
    ("key", "TEXT"),
    ("int_value", "BIGINT"),
    ("string_value", "TEXT"),
    ("real_value", "DOUBLE"),
    ("value_type", "TEXT"),
];

/// The message each Winscope table's protos are.
fn proto_of(table: &str) -> Option<&'static str> {
    Some(match table {
        "__intrinsic_surfaceflinger_layer" => "LayerProto",
        "__intrinsic_surfaceflinger_layers_snapshot" => "LayersSnapshotProto",
        "__intrinsic_surfaceflinger_transactions" => "TransactionTraceEntry",
        "__intrinsic_window_manager_shell_transition_protos" => "ShellTransition",
        "__intrinsic_inputmethod_clients" => "InputMethodClientsTraceProto",
        "__intrinsic_inputmethod_manager_service" => "InputMethodManagerServiceTraceProto",
        "__intrinsic_inputmethod_service" => "InputMethodServiceTraceProto",
        "__intrinsic_viewcapture" => "ViewCapture",
        "__intrinsic_viewcapture_view" => "ViewCapture.View",
        "__intrinsic_windowmanager" => "WindowManagerTraceEntry",
        "__intrinsic_windowmanager_windowcontainer" => "WindowContainerChildProto",
        "__intrinsic_android_key_events" => "AndroidKeyEvent",
        "__intrinsic_android_motion_events" => "AndroidMotionEvent",
        "__intrinsic_android_input_event_dispatch" => "AndroidWindowInputDispatchEvent",
        _ => return None,
    })
}

/// The top-level fields a table's args keep (all when None).
fn allowed_fields(table: &str) -> Option<&'static [u32]> {
    match table {
        "__intrinsic_surfaceflinger_layers_snapshot" => Some(&[1, 2, 4, 5, 6, 7, 8]),
        "__intrinsic_viewcapture" => Some(&[1, 2]),
        "__intrinsic_windowmanager" => Some(&[1, 3, 4, 5, 6, 7, 8, 9, 19, 11, 12]),
        _ => None,
    }
}

/// The table holding the interned strings of a table's protos.
fn interned_table(table: &str) -> Option<&'static str> {
    matches!(
        table,
        "__intrinsic_viewcapture" | "__intrinsic_viewcapture_view"
    )
    .then_some(INTERNED_DATA)
}

/// ViewCapture's interned strings, by proto, field and iid.
const INTERNED_DATA: &str = "__intrinsic_viewcapture_interned_data";

/// What an iid field shows when its string is not found.
const DEINTERN_ERROR: &str = "STRING DE-INTERNING ERROR";

/// Per field (flat key), each iid's string.
type Interned = HashMap<String, HashMap<i64, String>>;

/// A table's interned strings, by proto (string id of its base64 text).
fn interned_by_proto(table: &Table) -> HashMap<i64, Interned> {
    let mut out: HashMap<i64, Interned> = HashMap::default();
    let col = |c: &str| table.columns.iter().position(|x| x.name == c);
    let (Some(proto), Some(flat), Some(iid), Some(value)) = (
        col("base64_proto_id"),
        col("flat_key"),
        col("iid"),
        col("deinterned_value"),
    ) else {
        return out;
    };
    let text = |c: Cell| match c {
        Cell::Str(s) => Some(s.to_owned()),
        _ => None,
    };
    for r in 0..table.len {
        let (Cell::Int(p), Cell::Int(i)) = (table.cell(r, proto), table.cell(r, iid)) else {
            continue;
        };
        let (Some(f), Some(v)) = (text(table.cell(r, flat)), text(table.cell(r, value))) else {
            continue;
        };
        out.entry(p)
            .or_default()
            .entry(f)
            .or_default()
            .entry(i)
            .or_insert(v);
    }
    out
}

/// The column whose rows' protos are merged into one group.
fn group_column(table: &str) -> Option<&'static str> {
    (table == "__intrinsic_window_manager_shell_transition_protos").then_some("transition_id")
}

/// One answered row.
#[derive(Debug, Clone, Default)]
struct Row {
    base64_proto_id: i64,
    flat_key: String,
    key: String,
    int_value: Option<i64>,
    string_value: Option<String>,
    real_value: Option<f64>,
}

/// The rows being built, and per key of the current group its row.
struct Sink<'a> {
    rows: &'a mut Vec<Row>,
    proto: i64,
    group: Option<&'a mut HashMap<String, usize>>,
    /// Whether keys are renamed as the shell transitions' args are.
    shell_transition: bool,
    /// The proto's interned strings, when its table has them.
    interned: Option<&'a Interned>,
}

impl Sink<'_> {
    fn row(&mut self, flat_key: &str, key: &str) -> &mut Row {
        let idx = match self.group.as_deref_mut() {
            Some(map) => match map.get(key) {
                Some(&i) => i,
                None => {
                    self.rows.push(Row::default());
                    let i = self.rows.len() - 1;
                    map.insert(key.to_string(), i);
                    i
                }
            },
            None => {
                self.rows.push(Row::default());
                self.rows.len() - 1
            }
        };
        let proto = self.proto;
        let r = &mut self.rows[idx];
        r.base64_proto_id = proto;
        r.flat_key = flat_key.to_string();
        r.key = key.to_string();
        r
    }
}

impl Sink<'_> {
    /// A key as the table's own args name it.
    fn key<'k>(&self, k: &'k str) -> std::borrow::Cow<'k, str> {
        if self.shell_transition {
            shell_transition_key(k)
        } else {
            std::borrow::Cow::Borrowed(k)
        }
    }
}

impl Sink<'_> {
    /// An `x_iid` field as `x` and its string; true when the string was
    /// found (else the error text is added and the iid is kept as well).
    fn deintern(&mut self, flat_key: &str, key: &str, iid: i64) -> bool {
        let Some(interned) = self.interned else {
            return false;
        };
        let (Some(flat_base), Some(key_base)) =
            (flat_key.strip_suffix("_iid"), key.strip_suffix("_iid"))
        else {
            return false;
        };
        let found = interned.get(flat_key).and_then(|m| m.get(&iid)).cloned();
        let r = self.row(flat_base, key_base);
        r.string_value = Some(found.clone().unwrap_or_else(|| DEINTERN_ERROR.to_owned()));
        found.is_some()
    }
}

impl ArgSink for Sink<'_> {
    fn add(&mut self, flat_key: &str, key: &str, value: FlatValue<'_>) {
        let (flat_key, key) = (self.key(flat_key), self.key(key));
        let iid = match value {
            FlatValue::Int(v) => Some(v),
            FlatValue::Uint(v) => Some(v as i64),
            _ => None,
        };
        if let Some(iid) = iid
            && self.deintern(&flat_key, &key, iid)
        {
            return;
        }
        let r = self.row(&flat_key, &key);
        match value {
            FlatValue::Int(v) => r.int_value = Some(v),
            FlatValue::Uint(v) => r.int_value = Some(v as i64),
            FlatValue::Bool(v) => r.int_value = Some(i64::from(v)),
            FlatValue::Real(v) => r.real_value = Some(v),
            FlatValue::Str(s) => r.string_value = Some(s.into_owned()),
            FlatValue::Bytes(b) => r.string_value = Some(String::from_utf8_lossy(b).into_owned()),
            FlatValue::Null => {}
        }
    }

    fn wants_default(&mut self, _flat_key: &str, key: &str) -> bool {
        let key = self.key(key);
        self.group
            .as_deref()
            .is_none_or(|map| !map.contains_key(key.as_ref()))
    }
}

/// The operator over the Winscope tables.
struct WithDefaults {
    tables: Vec<Arc<Table>>,
}

impl TableFn for WithDefaults {
    fn columns(&self) -> Vec<(&'static str, &'static str)> {
        COLUMNS.to_vec()
    }

    fn arguments(&self) -> Vec<&'static str> {
        vec!["table_name"]
    }

    fn run(&self, args: &[Value]) -> Result<Vec<Vec<Value>>, String> {
        let Some(Value::Text(name)) = args.first() else {
            return Err(format!("{NAME} takes table name as a string."));
        };
        let name = if name.starts_with("__intrinsic_") {
            name.clone()
        } else {
            format!("__intrinsic_{name}")
        };
        let table = self
            .tables
            .iter()
            .find(|t| t.name == name)
            .ok_or_else(|| format!("Failed to find {name} table."))?;
        let message = proto_of(&name)
            .ok_or_else(|| format!("{name} table does not have proto descriptor."))?;
        let pool = pool().ok_or("the Winscope schema is unreadable")?;
        let desc =
            proto_to_args::find_message(pool, &message_name(message)).map_err(|e| e.to_string())?;
        let col = |c: &str| table.columns.iter().position(|x| x.name == c);
        let proto_col =
            col("base64_proto_id").ok_or("Table does not have a base64_proto_id column.")?;
        let group_col = group_column(&name).and_then(col);
        let options = Options {
            allowed_fields: allowed_fields(&name),
            add_defaults: true,
        };
        let mut rows = Vec::new();
        let mut seen = HashSet::default();
        let mut groups: HashMap<i64, HashMap<String, usize>> = HashMap::default();
        let interned = interned_table(&name)
            .and_then(|t| self.tables.iter().find(|x| x.name == t))
            .map(|t| interned_by_proto(t))
            .unwrap_or_default();
        for r in 0..table.len {
            let Cell::Int(proto) = table.cell(r, proto_col) else {
                continue;
            };
            if !seen.insert(proto) {
                continue;
            }
            let text = u32::try_from(proto)
                .ok()
                .and_then(|id| table.strings.get(StrId(id)))
                .unwrap_or_default();
            let bytes = base64::engine::general_purpose::STANDARD
                .decode(text)
                .map_err(|e| format!("proto {proto} is not base64: {e}"))?;
            let group = match group_col.map(|c| table.cell(r, c)) {
                Some(Cell::Int(g)) => Some(groups.entry(g).or_default()),
                Some(_) => Some(groups.entry(0).or_default()),
                None => None,
            };
            let mut sink = Sink {
                rows: &mut rows,
                proto,
                group,
                shell_transition: message == "ShellTransition",
                interned: interned.get(&proto),
            };
            proto_to_args::flatten(&desc, &bytes, options, &mut sink).map_err(|e| e.to_string())?;
        }
        Ok(rows
            .into_iter()
            .enumerate()
            .map(|(id, r)| {
                vec![
                    Value::Integer(id as i64),
                    Value::Integer(r.base64_proto_id),
                    Value::Text(r.flat_key),
                    Value::Text(r.key),
                    r.int_value.map_or(Value::Null, Value::Integer),
                    r.string_value.map_or(Value::Null, Value::Text),
                    r.real_value.map_or(Value::Null, Value::Real),
                    Value::Null,
                ]
            })
            .collect())
    }
}

/// Registers the function over the trace's Winscope tables.
pub fn register(conn: &Connection, all: &[Arc<Table>]) -> rusqlite::Result<()> {
    let tables = all
        .iter()
        .filter(|t| proto_of(t.name).is_some() || t.name == INTERNED_DATA)
        .cloned()
        .collect();
    table_function::register(conn, NAME, Arc::new(WithDefaults { tables }))
}
