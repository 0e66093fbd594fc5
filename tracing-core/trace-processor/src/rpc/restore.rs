//! `/restore_initial_tables`: the tables, views, indexes and triggers a
//! trace's SQL starts with are noted once it loads; restoring drops every
//! one created since (views and triggers before tables, since dropping a
//! table takes its indexes and triggers with it), and detaches every
//! database the client attached (`PRAGMA database_list` beyond `main` and
//! `temp`), and forgets what PerfettoSQL statements defined (macros,
//! functions, included modules: `sql/perfetto_sql/`, whose tables and views
//! were among the objects dropped), so the next client starts from the
//! trace as loaded.

use crate::{TraceProcessor, Value};

/// What lists a schema's objects, the temporary ones too.
const OBJECTS_SQL: &str = "SELECT type, name FROM sqlite_master \
     WHERE type IN ('table', 'view', 'index', 'trigger') AND name NOT LIKE 'sqlite_%' \
     UNION ALL SELECT type, name FROM sqlite_temp_master \
     WHERE type IN ('table', 'view', 'index', 'trigger') AND name NOT LIKE 'sqlite_%'";

/// The objects a trace's SQL started with, as (type, name).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct InitialObjects(Vec<(String, String)>);

impl InitialObjects {
    /// Notes `tp`'s objects now.
    pub(crate) fn of(tp: &TraceProcessor) -> Self {
        InitialObjects(objects(tp))
    }

    /// Detaches what the client attached, then drops from `tp` each
    /// object not noted.
    pub(crate) fn restore(&self, tp: &TraceProcessor) {
        for name in attached(tp) {
            let quoted = name.replace('"', "\"\"");
            let _ = tp.query(&format!("DETACH DATABASE \"{quoted}\""));
        }
        let mut created: Vec<(String, String)> = objects(tp)
            .into_iter()
            .filter(|o| !self.0.contains(o))
            .collect();
        // Views and triggers first, then indexes, then tables.
        created.sort_by_key(|(ty, _)| match ty.as_str() {
            "view" | "trigger" => 0,
            "index" => 1,
            _ => 2,
        });
        for (ty, name) in created {
            let quoted = name.replace('"', "\"\"");
            // An index or trigger already gone with its table fails; fine.
            let _ = tp.query(&format!(
                "DROP {} IF EXISTS \"{quoted}\"",
                ty.to_uppercase()
            ));
        }
        tp.engine.reset_perfetto_sql();
    }
}

fn objects(tp: &TraceProcessor) -> Vec<(String, String)> {
    let Ok(r) = tp.query(OBJECTS_SQL) else {
        return Vec::new();
    };
    r.rows
        .into_iter()
        .filter_map(|row| match row.as_slice() {
            [Value::Text(ty), Value::Text(name)] => Some((ty.clone(), name.clone())),
            _ => None,
        })
        .collect()
}

/// The databases attached beside `main` and `temp`.
fn attached(tp: &TraceProcessor) -> Vec<String> {
    let Ok(r) = tp.query("PRAGMA database_list") else {
        return Vec::new();
    };
    r.rows
        .into_iter()
        .filter_map(|row| match row.as_slice() {
            [_, Value::Text(name), ..] if name != "main" && name != "temp" => Some(name.clone()),
            _ => None,
        })
        .collect()
}
