//! The public views that are more than a projection of one table, with
//! Perfetto's names and column order: `slices` (another name of `slice`)
//! and `instant` (slices of no duration). The views that project one
//! table (`slice`, `thread`, `process`, `args`, `track` and its kinds,
//! `counter`, `state`, `flow`, `cpu`, `stats`, `metadata`, `machine`, ...)
//! take their column lists from the tables' declarations
//! (`tables/views.rs`) and are created first.

/// The statements that create the views.
pub const VIEWS: &str = r#"
CREATE VIEW slices AS SELECT * FROM slice;
CREATE VIEW instant AS SELECT ts, track_id, name, arg_set_id FROM slice WHERE dur = 0;
"#;
