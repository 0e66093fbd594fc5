//! ChromeOS embedded controller sensor samples (`cros_ec_sensorhub_data`,
//! FtraceEvent 364) as upstream imports them: per sensor, a counter
//! `cros_ec.cros_ec_sensorhub_data.<sensor>` of how late the sample was
//! read (the event's time minus the sample's), with the sensor, the EC's
//! FIFO delay and the sample time as args. Names and args are facts of
//! upstream's ftrace parser; the event is read with protozero's
//! schema-less decoder.

use protozero::Decoder;

use super::Parser;
use super::importer::{FtraceHandler, FtraceInput};
use crate::storage::args::{ArgSetBuilder, ArgValue};
use crate::storage::rows::CounterRow;
use crate::tracker::tracks::{EventType, TrackSpec};

const CROS_EC_SENSORHUB_DATA: u32 = 364;

/// The event (gathered by `ftrace_registry.rs`).
pub const FTRACE_HANDLERS: &[(u32, FtraceHandler)] =
    &[(CROS_EC_SENSORHUB_DATA, cros_ec_sensorhub_data)];

fn cros_ec_sensorhub_data(p: &mut Parser, e: &FtraceInput<'_>) {
    let d = Decoder::new(e.body);
    let int = |id: u32| d.find_last(id).and_then(|f| f.as_i64().ok()).unwrap_or(0);
    let (current_time, current_timestamp, fifo_timestamp) = (int(1), int(2), int(6));
    let sensor = int(5) as u32;
    let name = format!("cros_ec.cros_ec_sensorhub_data.{sensor}");
    let mut spec = TrackSpec::new(Some(&name), "cros_ec_sensorhub_data", EventType::Counter);
    spec.dimensions = vec![("ec_sensor_num", ArgValue::Int(i64::from(sensor)))];
    let track = p.tracks.interned_counter(&mut p.storage, &spec);
    let mut args = ArgSetBuilder::default();
    for (key, value) in [
        ("ec_num", i64::from(sensor)),
        ("ec_delta", fifo_timestamp.wrapping_sub(current_timestamp)),
        ("sample_ts", current_timestamp),
    ] {
        let k = p.storage.strings.intern(key);
        args.add(k, k, ArgValue::Int(value));
    }
    let arg_set_id = p.storage.args.add_set(&args);
    p.storage.counters.push(CounterRow {
        ts: e.ts,
        track_id: track,
        value: current_time.wrapping_sub(current_timestamp) as f64,
        arg_set_id: arg_set_id.into(),
    });
}

#[cfg(test)]
mod tests {
    use crate::{TraceProcessor, Value};
    use zerotrace_protos::protos::TracePacket;

    #[test]
    fn a_sample_is_its_read_delay_on_its_sensors_counter() {
        let mut w = protozero::HeapWriter::new();
        {
            let mut p = TracePacket::from_message(w.root());
            p.set_trusted_packet_sequence_id(1);
            let mut b = p.message().begin_nested(1);
            b.append_uint32(1, 0);
            let mut e = b.begin_nested(2);
            e.append_uint64(1, 5000);
            e.append_uint32(2, 1);
            let mut body = e.begin_nested(super::CROS_EC_SENSORHUB_DATA);
            body.append_int64(1, 900);
            body.append_int64(2, 600);
            body.append_uint32(5, 2);
            body.append_int64(6, 650);
        }
        let p = w.finish().expect("writer");
        let mut t = vec![0x0a, p.len() as u8];
        t.extend_from_slice(&p);
        let tp = TraceProcessor::from_bytes(&t).expect("trace");
        let r = tp
            .query(
                "SELECT t.name, c.ts, c.value, extract_arg(c.arg_set_id, 'ec_num'), \
                 extract_arg(c.arg_set_id, 'ec_delta'), extract_arg(c.arg_set_id, 'sample_ts') \
                 FROM counter c JOIN counter_track t ON c.track_id = t.id",
            )
            .expect("query")
            .rows;
        assert_eq!(
            r,
            vec![vec![
                Value::Text("cros_ec.cros_ec_sensorhub_data.2".to_owned()),
                Value::Int(5000),
                Value::Real(300.0),
                Value::Int(2),
                Value::Int(50),
                Value::Int(600),
            ]]
        );
    }
}
