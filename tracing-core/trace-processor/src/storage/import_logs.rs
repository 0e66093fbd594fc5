//! The import logs: upstream keeps, beside a stat's count, one row per
//! occurrence of some stats (what the importer skipped or was told went
//! wrong while recording) with when or where it happened and its details
//! as args, so that a user can find the event behind a count. This records
//! both at once: the stat is counted and the row added.

use super::Storage;
use super::args::{ArgSetBuilder, ArgValue};
use super::stats::stat_index;
use crate::tables::core::ImportLogRow;

/// Where an import log entry happened.
#[derive(Debug, Clone, Copy, Default)]
pub struct LogPlace {
    /// The event's time, if it has one.
    pub ts: Option<i64>,
    /// The byte of the trace it was read at, if known.
    pub byte_offset: Option<i64>,
}

impl Storage {
    /// Counts `stat` and logs the occurrence with `args` (key, string
    /// value) as its details. A stat name outside the vocabulary is
    /// neither counted nor logged.
    pub fn record_import_log(&mut self, stat: &str, place: LogPlace, args: &[(&str, &str)]) {
        let typed: Vec<(&str, ArgValue)> = args
            .iter()
            .map(|(key, value)| (*key, ArgValue::String(self.strings.intern(value))))
            .collect();
        self.record_import_log_typed(stat, place, &typed);
    }

    /// As [`Storage::record_import_log`], with details of any arg type
    /// (numbers stay numbers).
    pub fn record_import_log_typed(
        &mut self,
        stat: &str,
        place: LogPlace,
        args: &[(&str, ArgValue)],
    ) {
        let Some(stat_key) = stat_index(stat) else {
            return;
        };
        self.stats.incr(stat);
        let mut builder = ArgSetBuilder::default();
        for (key, value) in args {
            let k = self.strings.intern(key);
            builder.add(k, k, *value);
        }
        let arg_set_id = self.args.add_set(&builder);
        self.import_logs.push(ImportLogRow {
            trace_id: 0,
            ts: place.ts,
            byte_offset: place.byte_offset,
            stat_key: i64::try_from(stat_key).unwrap_or(i64::MAX),
            arg_set_id,
        });
    }
}
