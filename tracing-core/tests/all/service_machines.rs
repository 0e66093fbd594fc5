//! Which producers a session's data sources reach when producers come from
//! several machines, by Perfetto's rules (v54 and later): a producer is of
//! this machine unless it named another with `set_peer_identity`; this
//! machine's producers carry its name, and "host" also matches them; a data
//! source without a `machine_name_filter` goes to this machine's producers
//! only, unless the session sets `trace_all_machines`. Driven through the
//! sans-IO core with producers of several identities.

use crate::service_support;

use protozero::Decoder;
use service_support::*;
use zerotrace_core::protocol::{ChunkToMove, CommitDataRequest};
use zerotrace_core::service::{PeerIdentity, ProducerCall, ProducerId, ProducerTransport};
use zerotrace_protos::protos::{GetAsyncCommandResponseDecoder, TracePacketDecoder};

/// How a simulated producer reaches the service.
enum Via {
    /// A unix socket (kernel credentials, fds pass).
    Unix,
    /// TCP, no `set_peer_identity`.
    Tcp,
    /// TCP through a relay that names the machine (id, name).
    Relay(u32, &'static str),
}

/// Connects producer `name` and registers data source "ds" on it.
fn producer(h: &mut Harness, name: &str, via: Via) -> ProducerId {
    let transport = ProducerTransport {
        can_pass_fds: matches!(via, Via::Unix),
    };
    let id = h
        .svc
        .producer_connected(
            h.now,
            PeerIdentity {
                uid: 0,
                pid: None,
                machine_id: None,
            },
            transport,
        )
        .expect("accepted");
    if let Via::Relay(machine, machine_name) = via {
        h.svc.set_producer_identity(
            id,
            PeerIdentity {
                uid: 0,
                pid: Some(7),
                machine_id: Some(machine),
            },
            machine_name.into(),
        );
    }
    h.producers.insert(
        id,
        SimProducer {
            id,
            name: name.into(),
            async_request: zerotrace_core::service::RequestId(u64::MAX),
            arbiter: None,
            rx: None,
            commands: Vec::new(),
        },
    );
    h.pcall(
        id,
        ProducerCall::InitializeConnection {
            page_size_hint: 0,
            smb_size_hint: 0,
            name: name.into(),
            smb_scraping_mode: 1,
            producer_provided_shmem: false,
            sdk_version: String::new(),
        },
    );
    let r = h.request();
    h.producers.get_mut(&id).unwrap().async_request = r;
    h.svc
        .handle_producer_call(h.now, id, r, ProducerCall::GetAsyncCommand, None);
    h.drain();
    h.register(id, "ds", false, false);
    id
}

/// The names of the producers that got a `setup_data_source` since the last
/// look.
fn set_up(h: &mut Harness, all: &[(ProducerId, &'static str)]) -> Vec<&'static str> {
    let mut out = Vec::new();
    for &(p, name) in all {
        let got = h
            .take_commands(p)
            .iter()
            .any(|c| GetAsyncCommandResponseDecoder::new(c).has_setup_data_source());
        if got {
            out.push(name);
        }
    }
    out
}

/// Four producers: unix and TCP of this machine ("testbox"), and two behind
/// relays ("vm1", "vm2"); sessions with each kind of filter.
#[test]
fn data_sources_reach_the_machines_the_config_names() {
    let mut h = Harness::new();
    let all = [
        (producer(&mut h, "unix", Via::Unix), "unix"),
        (producer(&mut h, "tcp", Via::Tcp), "tcp"),
        (producer(&mut h, "vm1", Via::Relay(0x51, "vm1")), "vm1"),
        (producer(&mut h, "vm2", Via::Relay(0x52, "vm2")), "vm2"),
    ];
    set_up(&mut h, &all);
    let session =
        |h: &mut Harness, extra: &dyn Fn(&mut zerotrace_protos::protos::TraceConfig<'_>)| {
            let c = h.consumer(0);
            h.enable(c, config(&[(64, false)], &[], |c| extra(c)));
            assert!(h.svc.session_of(c).is_some(), "{:?}", h.log);
            // Done with it: the next session starts from a clean slate.
            h.ccall(c, zerotrace_core::service::ConsumerCall::FreeBuffers);
            h.log.clear();
        };
    let filtered = |filters: &'static [&'static str]| {
        move |c: &mut zerotrace_protos::protos::TraceConfig<'_>| {
            let mut ds = c.add_data_sources();
            for f in filters {
                ds.add_machine_name_filter(f);
            }
            ds.begin_config().set_name("ds");
        }
    };

    // No filter: this machine's producers only, TCP ones included.
    session(&mut h, &filtered(&[]));
    assert_eq!(set_up(&mut h, &all), ["unix", "tcp"]);

    // trace_all_machines: every machine.
    session(&mut h, &|c| {
        filtered(&[])(c);
        c.set_trace_all_machines(true);
    });
    assert_eq!(set_up(&mut h, &all), ["unix", "tcp", "vm1", "vm2"]);

    // A filter naming a remote machine: that machine only.
    session(&mut h, &filtered(&["vm2"]));
    assert_eq!(set_up(&mut h, &all), ["vm2"]);

    // "host" is this machine, whatever its name.
    session(&mut h, &filtered(&["host", "vm1"]));
    assert_eq!(set_up(&mut h, &all), ["unix", "tcp", "vm1"]);

    // This machine by its name.
    session(&mut h, &filtered(&["testbox"]));
    assert_eq!(set_up(&mut h, &all), ["unix", "tcp"]);

    // A filter wins over trace_all_machines.
    session(&mut h, &|c| {
        filtered(&["vm1"])(c);
        c.set_trace_all_machines(true);
    });
    assert_eq!(set_up(&mut h, &all), ["vm1"]);
}

/// A relay that names its machine "host" does not make it this one: a
/// filter naming this machine leaves it out (though a filter "host" takes
/// it too, since Perfetto matches the name as well); and a machine id of 0
/// is this machine, whatever name the relay gave.
#[test]
fn a_machine_named_host_and_machine_zero() {
    let mut h = Harness::new();
    let all = [
        (producer(&mut h, "fake", Via::Relay(9, "host")), "fake"),
        (producer(&mut h, "zero", Via::Relay(0, "elsewhere")), "zero"),
    ];
    set_up(&mut h, &all);
    let c = h.consumer(0);
    h.enable(
        c,
        config(&[(64, false)], &[], |c| {
            c.add_data_sources()
                .add_machine_name_filter("testbox")
                .begin_config()
                .set_name("ds");
        }),
    );
    assert_eq!(set_up(&mut h, &all), ["zero"]);
    // "host" names the fake too: it is the relay's name for its machine.
    let c2 = h.consumer(0);
    h.enable(
        c2,
        config(&[(64, false)], &[], |c| {
            c.add_data_sources()
                .add_machine_name_filter("host")
                .begin_config()
                .set_name("ds");
        }),
    );
    assert_eq!(set_up(&mut h, &all), ["fake", "zero"]);
}

/// The packets of a relayed producer carry its machine id; a local one's
/// (unix or TCP) none.
#[test]
fn remote_packets_carry_their_machine_id() {
    let mut h = Harness::new();
    let local = producer(&mut h, "unix", Via::Unix);
    let remote = producer(&mut h, "vm", Via::Relay(0x77, "vm"));
    let c = h.consumer(0);
    h.enable(
        c,
        config(&[(64, false)], &[("ds", 0)], |c| {
            c.set_trace_all_machines(true);
        }),
    );
    let b = h.svc.sessions()[0].buffers[0].0.0;
    let mut w = h.writer(local, b);
    w.packet(|p| {
        p.set_timestamp(1);
    });
    w.flush(None);
    h.pump(local);
    // The relayed producer emulates its SMB: a chunk inline in CommitData.
    let mut chunk = Vec::new();
    chunk.extend_from_slice(&1u32.to_le_bytes());
    chunk.extend_from_slice(&1u16.to_le_bytes());
    chunk.extend_from_slice(&1u16.to_le_bytes());
    let packet = [0x40u8, 0x02]; // timestamp (8) = 2
    chunk.extend_from_slice(&protozero::varint::redundant_varint4(packet.len() as u32));
    chunk.extend_from_slice(&packet);
    chunk.resize(1024, 0);
    let req = CommitDataRequest {
        chunks_to_move: vec![ChunkToMove {
            page: 0,
            chunk: 0,
            target_buffer: b as u32,
            data: Some(chunk),
            chunk_incomplete: false,
        }],
        chunks_to_patch: vec![],
        flush_request_id: None,
    };
    h.pcall(remote, ProducerCall::CommitData(req));
    let packets = h.read(c);
    let mut machines: Vec<(u64, Option<u32>)> = packets
        .iter()
        .filter(|p| TracePacketDecoder::new(p).trusted_packet_sequence_id() != Some(1))
        .map(|p| {
            let d = TracePacketDecoder::new(p);
            (
                d.timestamp().unwrap_or(0),
                Decoder::new(p).find_last(98).and_then(|f| f.as_u32().ok()),
            )
        })
        .collect();
    machines.sort();
    assert_eq!(machines, [(1, None), (2, Some(0x77))]);
}
