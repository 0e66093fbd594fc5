//! The import logs: upstream keeps, beside a stat's count, one row per
//! occurrence of some stats (what the importer skipped or was told went
//! wrong while recording) with when or where it happened and its details
//! as args, so that a user can find the event behind a count. This records
//! both at once: the stat is counted and the row added.
//!
//! Code that holds only the stats (the loader's tokenizing steps) counts
//! and queues an entry with number-valued details ([`Stats::log_tokenization`](super::stats::Stats::log_tokenization));
//! the loader turns the queue into rows after each packet it reads
//! ([`Storage::take_pending_logs`]), so that their arg sets are made about
//! where upstream makes them.

use super::Storage;
use super::args::{ArgSetBuilder, ArgValue};
use crate::stat_vocabulary::stat_index;
use crate::tables::core::ImportLogRow;

/// Where an import log entry happened.
#[derive(Debug, Clone, Copy, Default)]
pub struct LogPlace {
    /// The event's time, if it has one.
    pub ts: Option<i64>,
    /// The byte of the trace it was read at, if known.
    pub byte_offset: Option<i64>,
}

impl LogPlace {
    /// Where a field of the packet being read (`field`, a slice of
    /// `packet`'s bytes) starts in the trace, the packet starting at
    /// `packet_offset`, as upstream places the logs of a packet's defaults
    /// and interned data; inside `compressed_packets` (`depth` > 0), where
    /// their container starts.
    pub fn of_field(packet_offset: Option<i64>, packet: &[u8], field: &[u8], depth: u32) -> Self {
        let within = if depth == 0 {
            (field.as_ptr() as usize).saturating_sub(packet.as_ptr() as usize)
        } else {
            0
        };
        LogPlace {
            ts: None,
            byte_offset: packet_offset.map(|o| o.saturating_add(within as i64)),
        }
    }
}

/// An import log entry counted where the strings and args were out of
/// reach: its stat (index in the vocabulary), place and number details.
#[derive(Debug, Clone)]
pub struct PendingLog {
    pub(super) stat: usize,
    pub(super) place: LogPlace,
    pub(super) args: Vec<(&'static str, ArgValue)>,
}

impl Storage {
    /// Turns the queued log entries into rows, their details into arg
    /// sets, in the order they were counted.
    pub fn take_pending_logs(&mut self) {
        let pending = std::mem::take(&mut self.stats.pending_logs);
        for log in pending {
            self.push_import_log(log.stat, log.place, &log.args);
        }
    }

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
        self.push_import_log(stat_key, place, args);
    }

    /// Adds the row of a counted stat's log entry.
    fn push_import_log(&mut self, stat_key: usize, place: LogPlace, args: &[(&str, ArgValue)]) {
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

#[cfg(test)]
mod tests {
    use crate::Loader;
    use crate::stat_vocabulary::stat_index;
    use crate::storage::Storage;
    use crate::storage::args::ArgValue;

    /// Loads `trace` (its packets' bytes, framed here).
    fn load(packets: &[&[u8]]) -> Storage {
        let mut trace = Vec::new();
        for p in packets {
            trace.push(0x0a);
            trace.push(u8::try_from(p.len()).unwrap());
            trace.extend_from_slice(p);
        }
        let mut loader = Loader::new();
        loader.push(&trace).unwrap();
        loader.finish().unwrap()
    }

    /// (stat name, byte offset) of each import log row.
    fn logs(s: &Storage) -> Vec<(&'static str, Option<i64>)> {
        s.import_logs
            .iter()
            .map(|r| {
                let name = crate::storage::stats::STATS[usize::try_from(r.stat_key).unwrap()].0;
                (name, r.byte_offset)
            })
            .collect()
    }

    #[test]
    fn tokenizing_logs_say_where_their_packet_was() {
        let s = load(&[
            // timestamp: 1 (its bytes at 2)
            &[0x40, 0x01],
            // interned_data {} without a sequence (the packet at 6, the
            // interned data's bytes at 8)
            &[0x62, 0x00],
            // thread_descriptor {} without a sequence (at 10)
            &[0xe2, 0x02, 0x00],
        ]);
        assert_eq!(
            logs(&s),
            vec![
                ("interned_data_missing_sequence_id", Some(8)),
                ("thread_descriptor_missing_sequence_id", Some(10)),
            ]
        );
        assert_eq!(s.stats.get("interned_data_missing_sequence_id"), 1);
        assert!(s.import_logs.iter().all(|r| r.ts.is_none()));
    }

    #[test]
    fn a_skipped_packet_names_its_sequence() {
        // trusted_packet_sequence_id: 7, sequence_flags:
        // SEQ_NEEDS_INCREMENTAL_STATE, before any clear.
        let s = load(&[&[0x50, 0x07, 0x68, 0x02]]);
        assert_eq!(
            logs(&s),
            vec![(
                "packet_skipped_seq_needs_incremental_state_invalid",
                Some(2)
            )]
        );
        let set = s.import_logs[0].arg_set_id.unwrap();
        let args: Vec<_> = s.args.rows().filter(|r| r.arg_set_id == set).collect();
        assert_eq!(args.len(), 1);
        assert_eq!(s.strings.get(args[0].arg.key), Some("packet_sequence_id"));
        assert_eq!(args[0].arg.value, ArgValue::Uint(7));
    }

    #[test]
    fn ftrace_setup_errors_are_logged_once_per_sequence() {
        // trusted_packet_sequence_id: 1, ftrace_stats { phase:
        // START_OF_TRACE, unknown_ftrace_events: "a/b", atrace_errors: "x" }
        let packet: &[u8] = &[
            0x50, 0x01, 0x92, 0x02, 0x0a, 0x08, 0x01, 0x32, 0x03, b'a', b'/', b'b', 0x2a, 0x01,
            b'x',
        ];
        let s = load(&[packet, packet]);
        let key = i64::try_from(stat_index("ftrace_setup_errors").unwrap()).unwrap();
        let messages: Vec<&str> = s
            .import_logs
            .iter()
            .filter(|r| r.stat_key == key)
            .map(|r| {
                let set = r.arg_set_id.unwrap();
                let arg = s.args.rows().find(|a| a.arg_set_id == set).unwrap();
                match arg.arg.value {
                    ArgValue::String(id) => s.strings.get(id).unwrap(),
                    _ => "",
                }
            })
            .collect();
        assert_eq!(
            messages,
            ["Ftrace event unknown: a/b", "Atrace failures: x"]
        );
        assert_eq!(s.stats.get("ftrace_setup_errors"), 2);
    }
}
