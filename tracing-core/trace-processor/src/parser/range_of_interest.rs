//! TrackEvent's range of interest (`TracePacket.track_event_range_of_interest`):
//! the time from which a trace's TrackEvent data is meant to be complete
//! (Chrome writes it when a ring buffer may have lost its start). It goes
//! into `metadata` as `range_of_interest_start_us`, where the reliable-range
//! computations read it; a packet without `start_us` is logged in
//! `track_event_range_of_interest_missing_start_us`, as upstream's
//! TrackEvent tokenizer logs it. (Upstream drops earlier TrackEvents only
//! under a load option, off by default, that we do not offer.)

use protozero::Decoder;

use super::Parser;
use super::importer::Importer;
use crate::storage::import_logs::LogPlace;

/// TracePacket.track_event_range_of_interest.
const TRACK_EVENT_RANGE_OF_INTEREST: u32 = 90;
/// TrackEventRangeOfInterest.start_us.
const START_US: u32 = 1;

/// The payload this module imports.
pub const IMPORTERS: &[(u32, Importer)] = &[(TRACK_EVENT_RANGE_OF_INTEREST, |p, input| {
    range_of_interest(p, input.bytes, input.ts)
})];

fn range_of_interest(p: &mut Parser, bytes: &[u8], ts: i64) {
    let start_us = Decoder::new(bytes)
        .find_last(START_US)
        .and_then(|f| f.as_u64().ok());
    match start_us {
        Some(us) => p
            .storage
            .set_metadata_int("range_of_interest_start_us", us as i64),
        None => p.storage.record_import_log_typed(
            "track_event_range_of_interest_missing_start_us",
            LogPlace {
                ts: Some(ts),
                byte_offset: None,
            },
            &[],
        ),
    }
}

#[cfg(test)]
mod tests {
    use crate::{TraceProcessor, Value};

    /// A trace of one range-of-interest packet (`start_us` when given).
    fn trace(start_us: Option<i64>) -> TraceProcessor {
        let mut w = protozero::HeapWriter::new();
        {
            let mut p = zerotrace_protos::protos::TracePacket::from_message(w.root());
            p.set_trusted_packet_sequence_id(1);
            let mut r = p
                .message()
                .begin_nested(super::TRACK_EVENT_RANGE_OF_INTEREST);
            if let Some(us) = start_us {
                r.append_int64(super::START_US, us);
            }
        }
        let p = w.finish().expect("writer");
        let mut t = vec![0x0a, p.len() as u8];
        t.extend_from_slice(&p);
        TraceProcessor::from_bytes(&t).expect("trace")
    }

    fn rows(tp: &TraceProcessor, sql: &str) -> Vec<Vec<Value>> {
        tp.query(sql).expect("query").rows
    }

    #[test]
    fn the_start_goes_into_metadata() {
        let tp = trace(Some(1_500_000));
        assert_eq!(
            rows(
                &tp,
                "SELECT int_value FROM metadata WHERE name = 'range_of_interest_start_us'"
            ),
            vec![vec![Value::Int(1_500_000)]]
        );
        assert_eq!(
            rows(
                &tp,
                "SELECT value FROM stats WHERE name = 'track_event_range_of_interest_missing_start_us'"
            ),
            vec![vec![Value::Int(0)]]
        );
    }

    #[test]
    fn a_packet_without_a_start_is_counted() {
        let tp = trace(None);
        assert!(
            rows(
                &tp,
                "SELECT int_value FROM metadata WHERE name = 'range_of_interest_start_us'"
            )
            .is_empty()
        );
        assert_eq!(
            rows(
                &tp,
                "SELECT value FROM stats WHERE name = 'track_event_range_of_interest_missing_start_us'"
            ),
            vec![vec![Value::Int(1)]]
        );
    }
}
