//! TrackEvent's range of interest (`TracePacket.track_event_range_of_interest`):
//! the time from which a trace's TrackEvent data is meant to be complete
//! (Chrome writes it when a ring buffer may have lost its start). Read as
//! the packet is tokenized, as upstream's TrackEvent tokenizer reads it, so
//! that it holds for every event whatever its place in the file: it goes
//! into `metadata` as `range_of_interest_start_us`, where the reliable-range
//! computations read it, and under `--crop-track-events`
//! (`LoadOptions::crop_track_events`, as upstream's diff tests load) the
//! TrackEvents before it are dropped and counted in
//! `track_event_dropped_packets_outside_of_range_of_interest`. A packet
//! without `start_us` is logged in
//! `track_event_range_of_interest_missing_start_us`.

use protozero::Decoder;

use super::Parser;

/// TrackEventRangeOfInterest.start_us.
const START_US: u32 = 1;

/// Which TrackEvents a load drops for the range of interest.
#[derive(Debug, Default, Clone, Copy)]
pub struct Crop {
    /// Whether events before the range are dropped (off by default).
    pub enabled: bool,
    /// The range's start in µs, once a packet gave it.
    start_us: Option<i64>,
}

impl Crop {
    /// Whether a TrackEvent at `ts` (ns) is dropped.
    pub fn drops(&self, ts: i64) -> bool {
        self.enabled && self.start_us.is_some_and(|us| ts < us.saturating_mul(1000))
    }
}

/// A range-of-interest packet's bytes, read as it is tokenized.
pub fn on_range_of_interest(p: &mut Parser, bytes: &[u8]) {
    let start_us = Decoder::new(bytes)
        .find_last(START_US)
        .and_then(|f| f.as_u64().ok());
    match start_us {
        Some(us) => {
            let us = us as i64;
            p.track_event.crop.start_us = Some(us);
            p.storage.set_metadata_int("range_of_interest_start_us", us);
        }
        None => p
            .storage
            .stats
            .log_tokenization("track_event_range_of_interest_missing_start_us", &[]),
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
                .begin_nested(crate::packet_fields::TRACK_EVENT_RANGE_OF_INTEREST);
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

    #[test]
    fn only_a_crop_with_a_start_drops_and_only_before_it() {
        let mut crop = super::Crop::default();
        assert!(!crop.drops(0));
        crop.start_us = Some(12);
        assert!(!crop.drops(0), "off by default");
        crop.enabled = true;
        assert!(crop.drops(11_999));
        assert!(!crop.drops(12_000));
    }
}
