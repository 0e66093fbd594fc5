//! TraceConfig and DataSourceConfig bytes from a hostile consumer: parsing
//! never panics, and rewriting a DataSourceConfig keeps every field the
//! service does not set, byte for byte and in order.

use protozero::Decoder;
use zerotrace_core::service::__private::{
    DataSourceOverrides, SessionConfig, rewrite_data_source_config,
};
use zerotrace_core::service::Limits;

/// The `trace_config` target.
pub fn trace_config(data: &[u8]) {
    let _ = SessionConfig::parse(data, &Limits::default());
    let out = rewrite_data_source_config(
        data,
        &DataSourceOverrides {
            target_buffer: 3,
            trace_duration_ms: 0,
            tracing_session_id: 9,
            enable_extra_guardrails: false,
            stop_timeout_ms: 5000,
            session_initiator: 0,
            prefer_suspend_clock_for_duration: false,
        },
    );
    // The kept fields: the input's fields up to its first error, minus the
    // ones the service sets (and groups).
    let mut kept = Vec::new();
    let mut d = Decoder::new(data);
    loop {
        let start = d.offset();
        match d.read_field() {
            Some(Ok(f))
                if ![2, 3, 4, 6, 7, 8].contains(&f.id)
                    && !matches!(f.value, protozero::FieldValue::Group(_)) =>
            {
                kept.extend_from_slice(&data[start..d.offset()]);
            }
            Some(Ok(_)) => {}
            _ => break,
        }
    }
    assert!(out.starts_with(&kept));
    assert_eq!(
        Decoder::new(&out)
            .find_last(2)
            .and_then(|f| f.as_u32().ok()),
        Some(3)
    );
}
