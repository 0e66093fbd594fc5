//! `__intrinsic_winscope_surfaceflinger_hierarchy_path()`: for each layer
//! of each SurfaceFlinger layers snapshot, its path in the layer tree, one
//! row per ancestor from the root down to the layer itself (rows numbered
//! by `id`, as upstream's table functions number theirs), read from the
//! snapshots' raw protos (a parent chain that loops is cut where it meets
//! a layer already on the path).

use std::sync::Arc;

use base64::Engine as _;
use protozero::{Decoder, FieldValue};
use rusqlite::Connection;
use rusqlite::types::Value;

use super::prelude::table_function::{self, TableFn};
use crate::column_store::strings::StrId;
use crate::column_store::table::{Cell, Table};
use crate::hash::{HashMap, HashSet};

/// The function's name.
const NAME: &str = "__intrinsic_winscope_surfaceflinger_hierarchy_path";
/// The table it reads.
const SNAPSHOTS: &str = "__intrinsic_surfaceflinger_layers_snapshot";

/// The operator over the snapshots.
struct HierarchyPaths {
    snapshots: Option<Arc<Table>>,
}

/// A layer's (id, parent) as its proto has them (0 when unset, as
/// upstream's decoder reads them).
fn id_and_parent(layer: &[u8]) -> (Option<i32>, i32) {
    let d = Decoder::new(layer);
    let int = |id| d.find_last(id).and_then(|f| f.as_i32().ok());
    (int(1), int(25).unwrap_or(0))
}

/// The rows of one snapshot's proto.
fn paths(snapshot_id: i64, proto: &[u8], out: &mut Vec<Vec<Value>>) {
    let Some(FieldValue::Bytes(layers)) = Decoder::new(proto).find_last(3).map(|f| f.value) else {
        return;
    };
    let layers: Vec<(Option<i32>, i32)> = Decoder::new(layers)
        .map_while(Result::ok)
        .filter(|f| f.id == 1)
        .filter_map(|f| match f.value {
            FieldValue::Bytes(b) => Some(id_and_parent(b)),
            _ => None,
        })
        .collect();
    let mut by_id: HashMap<i32, i32> = HashMap::default();
    for &(id, parent) in &layers {
        if let Some(id) = id {
            by_id.entry(id).or_insert(parent);
        }
    }
    for &(id, parent) in &layers {
        let Some(id) = id else {
            continue;
        };
        let mut path = vec![id];
        let mut on_path: HashSet<i32> = HashSet::default();
        on_path.insert(id);
        let mut next = parent;
        while let Some(&grand) = by_id.get(&next) {
            if next == grand || !on_path.insert(next) {
                break;
            }
            path.push(next);
            next = grand;
        }
        for ancestor in path.iter().rev() {
            out.push(vec![
                Value::Integer(out.len() as i64),
                Value::Integer(snapshot_id),
                Value::Integer(i64::from(id as u32)),
                Value::Integer(i64::from(*ancestor as u32)),
            ]);
        }
    }
}

impl TableFn for HierarchyPaths {
    fn columns(&self) -> Vec<(&'static str, &'static str)> {
        vec![
            ("id", "BIGINT"),
            ("snapshot_id", "BIGINT"),
            ("layer_id", "BIGINT"),
            ("ancestor_id", "BIGINT"),
        ]
    }

    fn arguments(&self) -> Vec<&'static str> {
        Vec::new()
    }

    fn run(&self, _args: &[Value]) -> Result<Vec<Vec<Value>>, String> {
        let t = self
            .snapshots
            .as_ref()
            .ok_or_else(|| format!("Failed to find {SNAPSHOTS} table."))?;
        let col = t
            .columns
            .iter()
            .position(|c| c.name == "base64_proto_id")
            .ok_or("the snapshots have no base64_proto_id column")?;
        let mut out = Vec::new();
        for r in 0..t.len {
            let Cell::Int(proto) = t.cell(r, col) else {
                continue;
            };
            let text = u32::try_from(proto)
                .ok()
                .and_then(|id| t.strings.get(StrId(id)))
                .unwrap_or_default();
            let bytes = base64::engine::general_purpose::STANDARD
                .decode(text)
                .map_err(|e| format!("proto {proto} is not base64: {e}"))?;
            paths(r as i64, &bytes, &mut out);
        }
        Ok(out)
    }
}

/// Registers the function over the trace's layers snapshots.
pub fn register(conn: &Connection, all: &[Arc<Table>]) -> rusqlite::Result<()> {
    let snapshots = all.iter().find(|t| t.name == SNAPSHOTS).cloned();
    table_function::register(conn, NAME, Arc::new(HierarchyPaths { snapshots }))
}
