//! Chrome's own tables: `experimental_missing_chrome_processes`, the
//! processes whose data a Chrome trace lost (`parser/chrome_active_processes.rs`),
//! and `__intrinsic_chrome_raw`, the legacy event bundles' metadata and
//! traces (`parser/chrome_events.rs`).

use super::table;
use crate::column_store::strings::StrId;

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

table! {
    /// A row of `__intrinsic_chrome_raw`: one part of a legacy Chrome event
    /// bundle, its content as args.
    pub struct ChromeRawRow in "__intrinsic_chrome_raw" sorted by ts {
        /// The bundle's packet's time.
        ts: i64,
        /// `chrome_event.metadata`, `chrome_event.legacy_system_trace` or
        /// `chrome_event.legacy_user_trace`.
        name: StrId,
        /// The thread (always 0, the swapper).
        utid: u32,
        /// The content: the metadata entries, or the trace as `data`.
        arg_set_id: u32,
    }
}

/// Chrome's tables' declarations.
pub const TABLES: &[super::TableDecl] = &[MissingChromeProcessRow::TABLE, ChromeRawRow::TABLE];
