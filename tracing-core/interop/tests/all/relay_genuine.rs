//! `zerotrace relay` between Perfetto's genuine SDK producer and a central
//! service with its relay endpoint on: Perfetto's genuine service (read by
//! our consumer) and `zerotraced` (read by the genuine consumer). The
//! genuine producer connects to the relay's socket as to any service; the
//! trace holds its whole workload intact, with the trusted pid and uid the
//! relay forwarded, every packet of its sequences stamped with the machine
//! id the central service derives from the relay's hint, the machine's
//! SystemInfo and its clock exchanges (`remote_clock_sync`).
#![cfg(target_os = "linux")]

use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use zerotrace_cli::relay::{Relay, RelayConfig};
use zerotrace_core::daemon::machine_id_from_hint;
use zerotrace_core::ipc::Endpoint;
use zerotrace_interop::oracle::{check_genuine_workload, oracle_config, record_genuine};
use zerotrace_interop::services::{Service, Which};
use zerotrace_interop::trace_check as check;

const WAIT: Duration = Duration::from_secs(30);
const HINT: &str = "interop-relay-machine";
/// `TraceConfig.trace_all_machines` (field 43) = true, appended to the
/// recorded config: Perfetto v54 and later enable a remote machine's data
/// sources only with it (or a `machine_name_filter`).
const TRACE_ALL_MACHINES: [u8; 2] = [0xd8, 0x02];

fn config() -> Vec<u8> {
    let mut c = oracle_config();
    c.extend_from_slice(&[TRACE_ALL_MACHINES[0], TRACE_ALL_MACHINES[1], 0x01]);
    c
}

fn machine_of(p: &[u8]) -> Option<u64> {
    check::varint(p, 98)
}

fn record_through_relay(which: Which) {
    let who = format!("{which:?} through the relay");
    let svc = Service::start_with_relay(which, "relay");
    let relay_socket = svc.dir.join("relay-producer");
    let relay = Relay::start(RelayConfig {
        listen: Endpoint::Path(relay_socket.clone()),
        listen_mode: None,
        central: Endpoint::Tcp(svc.relay.clone().expect("a relay endpoint")),
        machine_id_hint: HINT.into(),
        machine_name: "vm-relay".into(),
    })
    .expect("the relay");
    let start = Instant::now();
    while relay.counters().clock_rounds.load(Ordering::Relaxed) < 1 {
        assert!(start.elapsed() < WAIT, "{who}: no clock round");
        std::thread::sleep(Duration::from_millis(10));
    }
    let relay_socket = relay_socket.to_str().expect("UTF-8").to_owned();
    // Our consumer reads the genuine service; the genuine consumer ours.
    let (trace, pid) = record_genuine(&svc, &relay_socket, &config(), which == Which::Zerotraced);
    check_genuine_workload(&trace, pid, &who);

    let machine = u64::from(machine_id_from_hint(HINT.as_bytes()));
    for (seq, packets) in check::data_sequences(&trace) {
        for (i, p) in packets.iter().enumerate() {
            assert_eq!(
                machine_of(p),
                Some(machine),
                "{who}: machine_id of packet {i} of sequence {seq}"
            );
        }
    }
    let packets = check::packets(&trace);
    let remote_info = packets
        .iter()
        .filter(|p| check::bytes(p, 45).is_some() && machine_of(p) == Some(machine))
        .count();
    assert_eq!(remote_info, 1, "{who}: the relay's SystemInfo, once");
    let syncs: Vec<&Vec<u8>> = packets
        .iter()
        .filter(|p| check::bytes(p, 107).is_some())
        .collect();
    assert!(!syncs.is_empty(), "{who}: no remote_clock_sync");
    for s in syncs {
        assert_eq!(machine_of(s), Some(machine), "{who}: remote_clock_sync");
        let sync = check::bytes(s, 107).unwrap();
        let exchanges = check::fields(sync).iter().filter(|f| f.id == 1).count();
        assert!(exchanges >= 2, "{who}: PING and UPDATE ({exchanges})");
    }
    relay.stop();
}

#[test]
fn genuine_producer_through_our_relay_into_the_genuine_service() {
    record_through_relay(Which::Genuine);
}

#[test]
fn genuine_producer_through_our_relay_into_zerotraced() {
    record_through_relay(Which::Zerotraced);
}
