//! `__intrinsic_logs`: log entries, whatever wrote them (TrackEvent log
//! messages, Android's logcat), as upstream keeps them in one table that
//! the `logs` view shows whole and `android_logs` shows for logcat's
//! entries (`tables/views.rs`).

use super::table;
use crate::column_store::strings::StrId;

table! {
    /// A row of `__intrinsic_logs`: one log entry (not sorted by time, as
    /// upstream's is not).
    pub struct LogRow in "__intrinsic_logs", views ["logs", "android_logs"] {
        /// When it was written.
        ts: i64,
        /// The thread that wrote it, if known.
        utid: Option<u32>,
        /// Its priority (Android: 3 DEBUG to 7 FATAL).
        prio: i64,
        /// Which log it is from (`android_logcat`, ...).
        log_source: StrId,
        /// Its tag.
        tag: StrId,
        /// Its text.
        msg: StrId,
        /// Args of the source's own details.
        arg_set_id: Option<u32>,
    }
}

/// The table's declaration.
pub const TABLES: &[super::TableDecl] = &[LogRow::TABLE];
