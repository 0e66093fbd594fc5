//! Chrome's own tables: `experimental_missing_chrome_processes`, the
//! processes whose data a Chrome trace lost (`parser/chrome_active_processes.rs`).

use super::table;

table! {
    /// A row of `experimental_missing_chrome_processes`: a process Chrome
    /// said was active when the trace held no descriptor of it.
    pub struct MissingChromeProcessRow in "__intrinsic_experimental_missing_chrome_processes",
        views ["experimental_missing_chrome_processes"] {
        /// The process.
        upid: u32,
        /// From when its data is complete until the trace's end (NULL:
        /// never).
        reliable_from: Option<i64>,
    }
}

/// Chrome's tables' declarations.
pub const TABLES: &[super::TableDecl] = &[MissingChromeProcessRow::TABLE];
