//! RelayPort through the sans-IO core: a relay's own connection (named by
//! `set_peer_identity`, never initialized as a producer) describes its
//! machine and syncs clocks; every session writes the machine's
//! `SystemInfo` once and its clock exchanges as `remote_clock_sync`
//! packets, each stamped with the machine's id, and writes new exchanges
//! again when more rounds came. A relay without a machine id is this
//! machine and adds nothing; machines are bounded.

use crate::service_support;

use protozero::{Decoder, HeapWriter};
use service_support::*;
use zerotrace_core::service::{
    ClockReading, PeerIdentity, ProducerCall, ProducerId, ProducerTransport,
};
use zerotrace_protos::protos::{
    QueryServiceStateResponseDecoder, RemoteClockSyncDecoder, SystemInfo, TracePacketDecoder,
};

/// A relay's connection, of machine `machine` when given.
fn relay(h: &mut Harness, machine: Option<(u32, &str)>) -> ProducerId {
    let id = h
        .svc
        .producer_connected(
            h.now,
            PeerIdentity::default(),
            ProducerTransport {
                can_pass_fds: false,
            },
        )
        .expect("accepted");
    if let Some((m, name)) = machine {
        h.svc.set_producer_identity(
            id,
            PeerIdentity {
                uid: 1000,
                pid: Some(42),
                machine_id: Some(m),
            },
            name.into(),
        );
    }
    id
}

fn system_info(sysname: &str) -> Vec<u8> {
    let mut w = HeapWriter::new();
    SystemInfo::from_message(w.root())
        .begin_utsname()
        .set_sysname(sysname);
    w.finish().unwrap()
}

fn clocks(boot: u64) -> Vec<ClockReading> {
    vec![
        ClockReading {
            clock_id: 6,
            timestamp: boot,
        },
        ClockReading {
            clock_id: 3,
            timestamp: boot + 5,
        },
    ]
}

/// Calls `call` and checks it was answered with success.
fn ok(h: &mut Harness, p: ProducerId, call: ProducerCall) {
    let r = h.pcall(p, call);
    let replies = h.producer_replies(p, r);
    assert!(
        matches!(
            replies.as_slice(),
            [zerotrace_core::service::Reply::Ok { .. }]
        ),
        "{replies:?}"
    );
}

fn sync_round(h: &mut Harness, p: ProducerId, boot: u64) {
    ok(
        h,
        p,
        ProducerCall::SyncClock {
            phase: 1,
            clocks: clocks(boot),
        },
    );
    h.advance_ms(1);
    ok(
        h,
        p,
        ProducerCall::SyncClock {
            phase: 2,
            clocks: clocks(boot + 1_000_000),
        },
    );
}

fn machine_of(p: &[u8]) -> Option<u32> {
    Decoder::new(p).find_last(98).and_then(|f| f.as_u32().ok())
}

/// (machine, sysname) of every remote `system_info` packet.
fn remote_infos(packets: &[Vec<u8>]) -> Vec<(u32, String)> {
    packets
        .iter()
        .filter_map(|p| {
            let d = TracePacketDecoder::new(p);
            let info = d.system_info()?;
            let m = machine_of(p)?;
            let name = info
                .utsname()
                .and_then(|u| u.sysname().map(str::to_owned))
                .unwrap_or_default();
            Some((m, name))
        })
        .collect()
}

/// (machine, [(client BOOTTIME, host BOOTTIME)]) of every
/// `remote_clock_sync` packet.
fn remote_syncs(packets: &[Vec<u8>]) -> Vec<(u32, Vec<(u64, u64)>)> {
    packets
        .iter()
        .filter_map(|p| {
            let raw = Decoder::new(p).find_last(107)?.as_bytes().ok()?.to_vec();
            let boot = |snapshot: Option<zerotrace_protos::protos::ClockSnapshotDecoder<'_>>| {
                snapshot
                    .and_then(|s| {
                        s.clocks()
                            .find(|c| c.clock_id() == Some(6))
                            .and_then(|c| c.timestamp())
                    })
                    .unwrap_or(0)
            };
            let pairs = RemoteClockSyncDecoder::new(&raw)
                .synced_clocks()
                .map(|e| (boot(e.client_clocks()), boot(e.host_clocks())))
                .collect();
            Some((machine_of(p).expect("stamped"), pairs))
        })
        .collect()
}

#[test]
fn a_relays_machine_and_clock_exchanges_reach_every_session() {
    let mut h = Harness::new();
    h.advance_ms(10);
    let vm = relay(&mut h, Some((0x51, "vm1")));
    ok(
        &mut h,
        vm,
        ProducerCall::InitRelay {
            system_info: system_info("VmKernel"),
        },
    );
    let host_at_ping = h.now;
    sync_round(&mut h, vm, 7_000_000);
    let c = h.consumer(0);
    h.enable(
        c,
        config(&[(64, false)], &[("ds", 0)], |c| {
            c.set_trace_all_machines(true);
        }),
    );
    let first = h.read(c);
    assert_eq!(remote_infos(&first), [(0x51, "VmKernel".to_owned())]);
    let packet = first
        .iter()
        .find(|p| Decoder::new(p).find_last(107).is_some())
        .expect("a remote_clock_sync packet");
    let local_info = first
        .iter()
        .find(|p| TracePacketDecoder::new(p).has_system_info() && machine_of(p).is_none())
        .expect("this machine's system_info");
    assert_eq!(
        TracePacketDecoder::new(packet).trusted_uid(),
        TracePacketDecoder::new(local_info).trusted_uid(),
        "a service packet, in the service's uid"
    );
    assert_eq!(
        remote_syncs(&first),
        [(
            0x51,
            vec![
                (7_000_000, host_at_ping),
                (8_000_000, host_at_ping + 1_000_000)
            ]
        )]
    );
    // Nothing new: nothing written again.
    let second = h.read(c);
    assert!(remote_infos(&second).is_empty());
    assert!(remote_syncs(&second).is_empty());
    // Another round: written again, with the earlier ones (at most five).
    h.advance_ms(30_000);
    sync_round(&mut h, vm, 40_000_000);
    sync_round(&mut h, vm, 80_000_000);
    let third = h.read(c);
    assert!(remote_infos(&third).is_empty(), "system info once");
    let syncs = remote_syncs(&third);
    assert_eq!(syncs.len(), 1);
    let clients: Vec<u64> = syncs[0].1.iter().map(|e| e.0).collect();
    assert_eq!(
        clients,
        [8_000_000, 40_000_000, 41_000_000, 80_000_000, 81_000_000],
        "the last five exchanges"
    );
    // The relay goes away; what it told stays for the next session.
    h.disconnect_producer(vm);
    let c2 = h.consumer(0);
    h.enable(c2, config(&[(64, false)], &[("ds", 0)], |_| {}));
    let other = h.read(c2);
    assert_eq!(remote_infos(&other), [(0x51, "VmKernel".to_owned())]);
    assert_eq!(remote_syncs(&other).len(), 1);
}

#[test]
fn config_switches_leave_them_out() {
    let mut h = Harness::new();
    let vm = relay(&mut h, Some((9, "vm")));
    ok(
        &mut h,
        vm,
        ProducerCall::InitRelay {
            system_info: system_info("X"),
        },
    );
    sync_round(&mut h, vm, 1_000_000);
    let c = h.consumer(0);
    h.enable(
        c,
        config(&[(64, false)], &[("ds", 0)], |c| {
            let mut b = c.begin_builtin_data_sources();
            b.set_disable_system_info(true);
            b.set_disable_clock_snapshotting(true);
        }),
    );
    let packets = h.read(c);
    assert!(remote_infos(&packets).is_empty());
    assert!(remote_syncs(&packets).is_empty());
}

/// A relay on a unix socket has no machine id: it is this machine; its
/// calls are answered and add nothing. No relay connection is listed as a
/// producer.
#[test]
fn a_relay_of_this_machine_adds_nothing_and_relays_are_not_producers() {
    let mut h = Harness::new();
    let local = relay(&mut h, None);
    ok(
        &mut h,
        local,
        ProducerCall::InitRelay {
            system_info: system_info("Local"),
        },
    );
    sync_round(&mut h, local, 5_000_000);
    let _vm = relay(&mut h, Some((3, "vm")));
    let c = h.consumer(0);
    h.enable(c, config(&[(64, false)], &[("ds", 0)], |_| {}));
    let packets = h.read(c);
    assert!(remote_infos(&packets).is_empty());
    assert!(remote_syncs(&packets).is_empty());
    let q = h.ccall(
        c,
        zerotrace_core::service::ConsumerCall::QueryServiceState {
            sessions_only: false,
        },
    );
    let replies = h.replies(c, q);
    let zerotrace_core::service::Reply::Ok { data, .. } = &replies[0] else {
        panic!("{replies:?}");
    };
    let state = QueryServiceStateResponseDecoder::new(data)
        .service_state()
        .expect("state");
    assert_eq!(
        state.producers().count(),
        0,
        "relay connections are no producers"
    );
}

/// Machine ids come from hints a peer picks: the service keeps a bounded
/// number of machines, and a relay naming one more gets an error.
#[test]
fn machines_are_bounded() {
    let mut h = Harness::new();
    for m in 1..=256u32 {
        let p = relay(&mut h, Some((m, "vm")));
        ok(
            &mut h,
            p,
            ProducerCall::InitRelay {
                system_info: system_info("X"),
            },
        );
    }
    let extra = relay(&mut h, Some((1000, "vm")));
    let r = h.pcall(
        extra,
        ProducerCall::InitRelay {
            system_info: system_info("X"),
        },
    );
    let replies = h.producer_replies(extra, r);
    assert!(
        matches!(replies.as_slice(), [zerotrace_core::service::Reply::Err(_)]),
        "{replies:?}"
    );
    // A machine already known is still served.
    let again = relay(&mut h, Some((5, "vm")));
    sync_round(&mut h, again, 1);
    // An oversized SystemInfo is refused.
    let r = h.pcall(
        again,
        ProducerCall::InitRelay {
            system_info: vec![0; 65 * 1024],
        },
    );
    assert!(matches!(
        h.producer_replies(again, r).as_slice(),
        [zerotrace_core::service::Reply::Err(_)]
    ));
}
