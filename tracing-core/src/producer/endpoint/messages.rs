//! The ProducerPort call arguments the endpoint sends, encoded: the
//! `InitializeConnection` request (with or without our startup buffer),
//! data source (un)registration, notifications, writer (un)registration
//! and triggers.

use protozero::HeapWriter;
use zerotrace_protos::protos::{
    DataSourceDescriptor as DescriptorWriter, InitializeConnectionRequest,
};

use super::DataSourceSpec;
use super::startup::StartupOffer;

/// Encodes one message with `f`.
pub(crate) fn encode(f: impl FnOnce(protozero::Message<'_>)) -> Vec<u8> {
    let mut w = HeapWriter::new();
    f(w.root());
    w.finish().unwrap_or_default()
}

/// `InitializeConnection`: our name and hints, or the startup buffer we
/// offer (its size and page size, `producer_provided_shmem`).
pub(crate) fn initialize_connection(
    name: &str,
    smb_size_hint: u32,
    page_size_hint: u32,
    offer: Option<StartupOffer>,
) -> Vec<u8> {
    let (page_hint, size_hint) = match offer {
        Some(o) => (o.page_size, o.smb_size),
        None => (page_size_hint, smb_size_hint),
    };
    encode(|m| {
        let mut r = InitializeConnectionRequest::from_message(m);
        r.set_shared_memory_page_size_hint_bytes(page_hint);
        r.set_shared_memory_size_hint_bytes(size_hint);
        r.set_producer_name(name);
        r.set_smb_scraping_mode_raw(1);
        if offer.is_some() {
            r.set_producer_provided_shmem(true);
        }
        r.set_sdk_version(concat!("zerotrace ", env!("CARGO_PKG_VERSION")));
    })
}

/// `RegisterDataSource` for `spec`.
pub(crate) fn register_data_source(spec: &DataSourceSpec) -> Vec<u8> {
    let desc = encode(|m| {
        let mut d = DescriptorWriter::from_message(m);
        d.set_name(&spec.name);
        d.set_will_notify_on_stop(spec.will_notify_on_stop);
        d.set_will_notify_on_start(spec.will_notify_on_start);
        d.set_handles_incremental_state_clear(spec.handles_incremental_state_clear);
        d.set_no_flush(spec.no_flush);
        d.message().append_raw_bytes(&spec.extra_descriptor);
    });
    encode(|mut m| m.append_bytes(1, &desc))
}

/// `UnregisterDataSource` of `name`.
pub(crate) fn unregister_data_source(name: &str) -> Vec<u8> {
    encode(|mut m| m.append_string(1, name))
}

/// `NotifyDataSourceStarted`/`Stopped` of `instance`.
pub(crate) fn notification(instance: u64) -> Vec<u8> {
    encode(|mut m| m.append_uint64(1, instance))
}

/// `RegisterTraceWriter`.
pub(crate) fn register_trace_writer(writer_id: u16, target_buffer: u16) -> Vec<u8> {
    encode(|mut m| {
        m.append_uint32(1, u32::from(writer_id));
        m.append_uint32(2, u32::from(target_buffer));
    })
}

/// `UnregisterTraceWriter`.
pub(crate) fn unregister_trace_writer(writer_id: u16) -> Vec<u8> {
    encode(|mut m| m.append_uint32(1, u32::from(writer_id)))
}

/// `ActivateTriggers`.
pub(crate) fn activate_triggers(names: &[&str]) -> Vec<u8> {
    encode(|mut m| {
        for n in names {
            m.append_string(1, n);
        }
    })
}
