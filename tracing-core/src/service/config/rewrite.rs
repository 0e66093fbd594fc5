//! The DataSourceConfig each producer receives: the consumer's bytes with
//! the fields the service sets replaced.

use protozero::{Decoder, FieldValue, HeapWriter, Message};

/// The fields of a DataSourceConfig that the service sets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DataSourceOverrides {
    /// `target_buffer` (2): the global buffer id.
    pub target_buffer: u32,
    /// `trace_duration_ms` (3).
    pub trace_duration_ms: u32,
    /// `tracing_session_id` (4).
    pub tracing_session_id: u64,
    /// `enable_extra_guardrails` (6).
    pub enable_extra_guardrails: bool,
    /// `stop_timeout_ms` (7).
    pub stop_timeout_ms: u32,
    /// `session_initiator` (8).
    pub session_initiator: i32,
    /// `prefer_suspend_clock_for_duration` (122): set (to true) only when
    /// the session prefers the suspend clock, as Perfetto's service does
    /// (an SDK hashing a startup config expects no new field otherwise).
    pub prefer_suspend_clock_for_duration: bool,
}

/// Field numbers of DataSourceConfig that the service sets.
const SERVICE_SET_FIELDS: [u32; 6] = [2, 3, 4, 6, 7, 8];

/// The DataSourceConfig a producer receives: the consumer's fields byte for
/// byte, in their order, without the ones the service sets, which follow.
pub fn rewrite_data_source_config(consumer: &[u8], o: &DataSourceOverrides) -> Vec<u8> {
    let mut w = HeapWriter::new();
    {
        let mut m: Message<'_> = w.root();
        let mut dec = Decoder::new(consumer);
        loop {
            let start = dec.offset();
            let Some(Ok(field)) = dec.read_field() else {
                break;
            };
            if SERVICE_SET_FIELDS.contains(&field.id)
                || field.id == 122 && o.prefer_suspend_clock_for_duration
            {
                continue;
            }
            if let FieldValue::Group(_) = field.value {
                continue;
            }
            m.append_raw_bytes(&consumer[start..dec.offset()]);
        }
        m.append_uint32(2, o.target_buffer);
        m.append_uint32(3, o.trace_duration_ms);
        m.append_uint64(4, o.tracing_session_id);
        m.append_bool(6, o.enable_extra_guardrails);
        m.append_uint32(7, o.stop_timeout_ms);
        m.append_enum(8, o.session_initiator);
        if o.prefer_suspend_clock_for_duration {
            m.append_bool(122, true);
        }
    }
    w.finish().unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unknown_fields_pass_through_in_order() {
        // name = "linux.ftrace" (1), ftrace_config (100, unmodelled bytes),
        // target_buffer = 1 (2), a field number nobody defines (7777).
        let mut w = HeapWriter::new();
        {
            let mut m = w.root();
            m.append_string(1, "linux.ftrace");
            m.append_bytes(100, b"\x0a\x0csched_switch");
            m.append_uint32(2, 1);
            m.append_bytes(7777, b"mine");
        }
        let consumer = w.finish().unwrap();
        let out = rewrite_data_source_config(
            &consumer,
            &DataSourceOverrides {
                target_buffer: 9,
                trace_duration_ms: 0,
                tracing_session_id: 3,
                enable_extra_guardrails: false,
                stop_timeout_ms: 5000,
                session_initiator: 0,
                prefer_suspend_clock_for_duration: false,
            },
        );
        let mut dec = Decoder::new(&out);
        let ids: Vec<u32> =
            std::iter::from_fn(|| dec.read_field().map(|f| f.unwrap().id)).collect();
        assert_eq!(ids, vec![1, 100, 7777, 2, 3, 4, 6, 7, 8]);
        let d = Decoder::new(&out);
        assert_eq!(
            d.find_last(100).unwrap().as_bytes().unwrap(),
            b"\x0a\x0csched_switch"
        );
        assert_eq!(d.find_last(2).unwrap().as_u32().unwrap(), 9);
    }
}
