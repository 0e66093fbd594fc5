//! Perfetto's full upstream schema (v51) with the fields Perfetto added
//! since merged in from `protos/proto`, as one descriptor pool made by the
//! schema pipeline (`protos/pipeline`; `cargo xtask codegen` writes it
//! into the trace processor's `src/generated`, which embeds it): every TraceConfig field and data source config, and
//! every TracePacket field, by name.

use std::sync::OnceLock;

use prost_reflect::{DescriptorPool, MessageDescriptor};

/// The pool; built on first use.
pub fn pool() -> &'static DescriptorPool {
    static POOL: OnceLock<DescriptorPool> = OnceLock::new();
    POOL.get_or_init(|| {
        match DescriptorPool::decode(zerotrace_trace_processor::perfetto_descriptor_set()) {
            Ok(p) => p,
            // The set is checked in and checked (a test decodes it).
            Err(e) => panic!("the built-in Perfetto descriptor set is invalid: {e}"),
        }
    })
}

fn message(name: &str) -> MessageDescriptor {
    match pool().get_message_by_name(name) {
        Some(m) => m,
        None => panic!("the built-in schema has no {name}"),
    }
}

/// `perfetto.protos.TraceConfig`.
pub fn trace_config() -> MessageDescriptor {
    message("perfetto.protos.TraceConfig")
}

/// `perfetto.protos.TracePacket`.
pub fn trace_packet() -> MessageDescriptor {
    message("perfetto.protos.TracePacket")
}

/// `perfetto.protos.Trace`.
pub fn trace() -> MessageDescriptor {
    message("perfetto.protos.Trace")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn upstream_and_newer_fields_are_there() {
        let tc = trace_config();
        for (name, number) in [
            ("buffers", 1),
            ("data_sources", 2),
            ("write_flush_mode", 44),
            ("compression", 47),
        ] {
            let f = tc
                .get_field_by_name(name)
                .unwrap_or_else(|| panic!("{name}"));
            assert_eq!(f.number(), number, "{name}");
        }
        let buffer = pool()
            .get_message_by_name("perfetto.protos.TraceConfig.BufferConfig")
            .unwrap();
        assert_eq!(buffer.get_field_by_name("name").unwrap().number(), 7);
        assert_eq!(
            trace_packet()
                .get_field_by_name("trace_provenance")
                .unwrap()
                .number(),
            124
        );
        // A data source config we do not model, in full.
        let ftrace = pool()
            .get_message_by_name("perfetto.protos.FtraceConfig")
            .unwrap();
        assert!(ftrace.get_field_by_name("ftrace_events").is_some());
        assert!(trace().get_field_by_name("packet").is_some());
    }
}
