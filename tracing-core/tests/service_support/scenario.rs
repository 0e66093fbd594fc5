//! Helpers the service scenario tests share (`service_sessions.rs`,
//! `service_buffers.rs`, `service_start_stop.rs`, `service_consumers.rs`,
//! `service_limits.rs`, `service_file_sessions.rs`): a one-producer session,
//! packets written and read back, replies and commands decoded.

use super::{Harness, config, varint};
use zerotrace_core::service::Reply;
use zerotrace_protos::protos::GetAsyncCommandResponseDecoder;

/// Sequence id of the service's own packets.
pub const SERVICE_SEQ: u64 = 1;

/// The producers' packets of a trace: every packet not on the service's
/// own sequence.
pub fn data_packets(packets: &[Vec<u8>]) -> Vec<&Vec<u8>> {
    packets
        .iter()
        .filter(|p| varint(p, 10) != Some(SERVICE_SEQ))
        .collect()
}

/// Writes `n` packets with timestamps `from..from + n`, each with `size`
/// bytes of payload in field 900.
pub fn write_packets(
    w: &mut zerotrace_core::producer::TraceWriter,
    from: u64,
    n: u64,
    size: usize,
) {
    for i in from..from + n {
        w.packet(|p| {
            p.set_timestamp(i);
            p.message().append_bytes(900, &vec![(i % 251) as u8; size]);
        });
    }
}

/// The data of an OK reply; panics on an error reply.
pub fn ok_data(reply: &Reply) -> &[u8] {
    match reply {
        Reply::Ok { data, .. } => data,
        Reply::Err(e) => panic!("error reply: {e}"),
    }
}

/// The kind of each async command a producer received, in order.
pub fn command_kinds(cmds: &[Vec<u8>]) -> Vec<&'static str> {
    cmds.iter()
        .map(|c| {
            let d = GetAsyncCommandResponseDecoder::new(c);
            if d.has_setup_tracing() {
                "setup_tracing"
            } else if d.has_setup_data_source() {
                "setup_data_source"
            } else if d.has_start_data_source() {
                "start_data_source"
            } else if d.has_stop_data_source() {
                "stop_data_source"
            } else if d.has_flush() {
                "flush"
            } else if d.has_clear_incremental_state() {
                "clear_incremental_state"
            } else {
                "?"
            }
        })
        .collect()
}

/// Starts a session of one producer ("app") with data source "ds".
pub fn simple_session(
    h: &mut Harness,
    extra: impl FnOnce(&mut zerotrace_protos::protos::TraceConfig<'_>),
) -> (
    zerotrace_core::service::ProducerId,
    zerotrace_core::service::ConsumerId,
    zerotrace_core::service::RequestId,
) {
    let p = h.producer("app", 2000);
    h.register(p, "ds", true, false);
    let c = h.consumer(2000);
    let r = h.enable(c, config(&[(256, false)], &[("ds", 0)], extra));
    (p, c, r)
}
