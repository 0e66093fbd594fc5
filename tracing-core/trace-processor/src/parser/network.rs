//! The kernel's network ftrace events as upstream imports them: bytes a
//! device received (`netif_receive_skb`, FtraceEvent 360) and sent
//! (`net_dev_xmit`, 361, when the driver took the packet) as running
//! totals in KB per device (`<dev> Received KB`, `<dev> Transmitted KB`,
//! the CPU and length as args); a TCP socket's states (`inet_sock_set_state`,
//! 362) as back-to-back slices on one track per socket (`TCP stream#N`);
//! retransmissions (`tcp_retransmit_skb`, 363) as instants; NAPI GRO
//! receives (`napi_gro_receive_entry`/`_exit`, 365/366) as slices per CPU
//! (`Napi Gro Cpu N`); and freed IP packets (`kfree_skb`, 367) as a count.
//!
//! Track names, classifications, categories and args are facts of
//! upstream's ftrace parser; the events are read with protozero's
//! schema-less decoder.

use protozero::Decoder;

use super::Parser;
use super::importer::{FtraceHandler, FtraceInput};
use crate::hash::HashMap;
use crate::storage::args::{ArgSetBuilder, ArgValue};
use crate::storage::rows::{CounterRow, SliceRow};
use crate::tracker::tracks::{EventType, TrackSpec};

const NETIF_RECEIVE_SKB: u32 = 360;
const NET_DEV_XMIT: u32 = 361;
const INET_SOCK_SET_STATE: u32 = 362;
const TCP_RETRANSMIT_SKB: u32 = 363;
const NAPI_GRO_RECEIVE_ENTRY: u32 = 365;
const NAPI_GRO_RECEIVE_EXIT: u32 = 366;
const KFREE_SKB: u32 = 367;

/// The kernel's `AF_INET` and `AF_INET6`.
const AF_INET: u64 = 2;
const AF_INET6: u64 = 10;
/// The kernel's `IPPROTO_TCP`.
const IPPROTO_TCP: u64 = 6;
/// The kernel's `ETH_P_IP` and `ETH_P_IPV6`.
const ETH_P_IP: u64 = 0x800;
const ETH_P_IPV6: u64 = 0x86dd;

/// TCP states by number (`include/net/tcp_states.h`), 0 unused.
const TCP_STATES: [&str; 13] = [
    "TCP_UNKNOWN",
    "TCP_ESTABLISHED",
    "TCP_SYN_SENT",
    "TCP_SYN_RECV",
    "TCP_FIN_WAIT1",
    "TCP_FIN_WAIT2",
    "TCP_TIME_WAIT",
    "TCP_CLOSE",
    "TCP_CLOSE_WAIT",
    "TCP_LAST_ACK",
    "TCP_LISTEN",
    "TCP_CLOSING",
    "TCP_NEW_SYN_RECV",
];
const TCP_ESTABLISHED: usize = 1;
const TCP_SYN_SENT: usize = 2;

/// The events (gathered by `ftrace_registry.rs`).
pub const FTRACE_HANDLERS: &[(u32, FtraceHandler)] = &[
    (NETIF_RECEIVE_SKB, netif_receive_skb),
    (NET_DEV_XMIT, net_dev_xmit),
    (INET_SOCK_SET_STATE, inet_sock_set_state),
    (TCP_RETRANSMIT_SKB, tcp_retransmit_skb),
    (NAPI_GRO_RECEIVE_ENTRY, napi_gro_receive_entry),
    (NAPI_GRO_RECEIVE_EXIT, napi_gro_receive_exit),
    (KFREE_SKB, kfree_skb),
];

/// What the network events keep between events.
#[derive(Debug, Default)]
pub struct NetworkState {
    /// Bytes received so far, per device.
    received: HashMap<String, u64>,
    /// Bytes sent so far, per device.
    transmitted: HashMap<String, u64>,
    /// Each socket's stream number (from 1, in order of first sight).
    streams: HashMap<u64, u32>,
    /// IP packets freed so far.
    kfree_skb_ip: u64,
}

fn int(body: &[u8], id: u32) -> Option<i64> {
    Decoder::new(body)
        .find_last(id)
        .and_then(|f| f.as_i64().ok())
}

fn uint(body: &[u8], id: u32) -> u64 {
    Decoder::new(body)
        .find_last(id)
        .and_then(|f| f.as_u64().ok())
        .unwrap_or(0)
}

fn text(body: &[u8], id: u32) -> String {
    Decoder::new(body)
        .find_last(id)
        .and_then(|f| f.as_bytes().ok())
        .map(|b| String::from_utf8_lossy(b).into_owned())
        .unwrap_or_default()
}

fn arg_set(p: &mut Parser, args: &[(&str, ArgValue)]) -> Option<u32> {
    let mut b = ArgSetBuilder::default();
    for (k, v) in args {
        let k = p.storage.strings.intern(k);
        b.add(k, k, *v);
    }
    p.storage.args.add_set(&b)
}

/// A device's running total (`len` added to `totals`) in KB on its track.
fn device_total(p: &mut Parser, e: &FtraceInput<'_>, body: &[u8], received: bool) {
    let len = uint(body, 1) as u32;
    let dev = text(body, 2);
    let state = &mut p.network;
    let totals = if received {
        &mut state.received
    } else {
        &mut state.transmitted
    };
    let total = totals.entry(dev.clone()).or_default();
    *total = total.wrapping_add(u64::from(len));
    let kb = *total / 1024;
    let (suffix, classification) = if received {
        ("Received KB", "net_receive")
    } else {
        ("Transmitted KB", "net_transmit")
    };
    let name = format!("{dev} {suffix}");
    let dev_id = p.storage.strings.intern(&dev);
    let mut spec = TrackSpec::new(Some(&name), classification, EventType::Counter);
    spec.dimensions = vec![("network_interface", ArgValue::String(dev_id))];
    let track = p.tracks.interned_counter(&mut p.storage, &spec);
    let args = arg_set(
        p,
        &[
            ("cpu", ArgValue::Uint(u64::from(e.cpu))),
            ("len", ArgValue::Uint(u64::from(len))),
        ],
    );
    p.storage.counters.push(CounterRow {
        ts: e.ts,
        track_id: track,
        value: kb as f64,
        arg_set_id: args.into(),
    });
}

fn netif_receive_skb(p: &mut Parser, e: &FtraceInput<'_>) {
    device_total(p, e, e.body, true);
}

fn net_dev_xmit(p: &mut Parser, e: &FtraceInput<'_>) {
    // Only packets the driver took.
    if int(e.body, 3).unwrap_or(0) as i32 != 0 {
        return;
    }
    device_total(p, e, e.body, false);
}

fn inet_sock_set_state(p: &mut Parser, e: &FtraceInput<'_>) {
    let b = e.body;
    if uint(b, 6) as u32 as u64 != IPPROTO_TCP {
        return;
    }
    let family = uint(b, 3) as u32 as u64;
    if family != AF_INET && family != AF_INET6 {
        return;
    }
    let new = int(b, 4).unwrap_or(0) as i32;
    let old = int(b, 5).unwrap_or(0) as i32;
    let valid = |s: i32| usize::try_from(s).is_ok_and(|s| s < TCP_STATES.len());
    if !valid(new) || !valid(old) {
        return;
    }
    let new = new as usize;
    let skaddr = uint(b, 8);
    let next = u32::try_from(p.network.streams.len() + 1).unwrap_or(u32::MAX);
    let stream = *p.network.streams.entry(skaddr).or_insert(next);
    let state = TCP_STATES.get(new).copied().unwrap_or("TCP_UNKNOWN");
    let name = match new {
        // The emitting thread's pid, as upstream reads it (unsigned).
        TCP_SYN_SENT => format!("{state}(pid={})", e.tid as u32),
        TCP_ESTABLISHED => format!(
            "{state}(sport={},dport={})",
            uint(b, 9) as u32,
            uint(b, 2) as u32
        ),
        _ => state.to_owned(),
    };
    let track_name = format!("TCP stream#{stream}");
    let mut spec = TrackSpec::new(Some(&track_name), "net_socket_set_state", EventType::Slice);
    spec.dimensions = vec![("tcp_stream_idx", ArgValue::Int(i64::from(stream)))];
    let track = p.tracks.interned_counter(&mut p.storage, &spec);
    p.slices.end(&mut p.storage, track, e.ts, None);
    let category = p.storage.strings.intern("tcp_state");
    let name = p.storage.strings.intern(&name);
    p.slices.begin(
        &mut p.storage,
        SliceRow {
            ts: e.ts,
            dur: -1,
            track_id: track,
            category,
            name,
            ..Default::default()
        },
    );
}

fn tcp_retransmit_skb(p: &mut Parser, e: &FtraceInput<'_>) {
    let b = e.body;
    let name = format!("sport={},dport={}", uint(b, 6) as u32, uint(b, 2) as u32);
    let spec = TrackSpec::new(
        Some("TCP Retransmit Skb"),
        "net_tcp_retransmit_skb",
        EventType::Slice,
    );
    let track = p.tracks.interned_counter(&mut p.storage, &spec);
    let category = p.storage.strings.intern("tcp_event");
    let name = p.storage.strings.intern(&name);
    p.slices.begin(
        &mut p.storage,
        SliceRow {
            ts: e.ts,
            dur: 0,
            track_id: track,
            category,
            name,
            ..Default::default()
        },
    );
}

/// The CPU's NAPI GRO slice track.
fn napi_track(p: &mut Parser, cpu: u32) -> u32 {
    let name = format!("Napi Gro Cpu {cpu}");
    let mut spec = TrackSpec::new(Some(&name), "cpu_napi_gro", EventType::Slice);
    spec.dimensions = vec![("cpu", ArgValue::Int(i64::from(cpu)))];
    p.tracks.interned_counter(&mut p.storage, &spec)
}

fn napi_gro_receive_entry(p: &mut Parser, e: &FtraceInput<'_>) {
    let track = napi_track(p, e.cpu);
    let category = p.storage.strings.intern("napi_gro");
    let name = text(e.body, 10);
    let name = p.storage.strings.intern(&name);
    let len = uint(e.body, 7) as u32;
    let args = arg_set(p, &[("len", ArgValue::Int(i64::from(len)))]);
    p.slices.begin(
        &mut p.storage,
        SliceRow {
            ts: e.ts,
            dur: -1,
            track_id: track,
            category,
            name,
            arg_set_id: args.into(),
            ..Default::default()
        },
    );
}

fn napi_gro_receive_exit(p: &mut Parser, e: &FtraceInput<'_>) {
    let track = napi_track(p, e.cpu);
    let Some(id) = p.slices.end(&mut p.storage, track, e.ts, None) else {
        return;
    };
    let ret = int(e.body, 1).unwrap_or(0) as i32;
    // The slice's args with `ret` added.
    let mut b = ArgSetBuilder::default();
    let existing = p
        .storage
        .slices
        .get(id as usize)
        .and_then(|s| s.arg_set_id.get());
    if let Some(set) = existing {
        let args: Vec<_> = p.storage.args.set(set).copied().collect();
        for a in args {
            b.add(a.flat_key, a.key, a.value);
        }
    }
    let k = p.storage.strings.intern("ret");
    b.add(k, k, ArgValue::Int(i64::from(ret)));
    let set = p.storage.args.add_set(&b);
    if let Some(s) = p.storage.slices.get_mut(id as usize) {
        s.arg_set_id = set.into();
    }
}

fn kfree_skb(p: &mut Parser, e: &FtraceInput<'_>) {
    let protocol = uint(e.body, 2) as u32 as u64;
    let prot = match protocol {
        ETH_P_IP => "IP",
        ETH_P_IPV6 => "IPV6",
        _ => return,
    };
    p.network.kfree_skb_ip += 1;
    let count = p.network.kfree_skb_ip;
    let spec = TrackSpec::new(
        Some("Kfree Skb IP Prot"),
        "net_kfree_skb",
        EventType::Counter,
    );
    let track = p.tracks.interned_counter(&mut p.storage, &spec);
    let prot = p.storage.strings.intern(prot);
    let args = arg_set(p, &[("protocol", ArgValue::String(prot))]);
    p.storage.counters.push(CounterRow {
        ts: e.ts,
        track_id: track,
        value: count as f64,
        arg_set_id: args.into(),
    });
}

#[cfg(test)]
mod tests {
    use crate::{TraceProcessor, Value};
    use zerotrace_protos::protos::TracePacket;

    /// One ftrace event: (ts, emitting pid, event field, writer).
    type Event<'a> = (u64, u32, u32, &'a dyn Fn(&mut protozero::Message<'_>));

    /// A trace of one ftrace bundle of CPU `cpu` holding `events`.
    fn trace(cpu: u32, events: &[Event<'_>]) -> TraceProcessor {
        let mut w = protozero::HeapWriter::new();
        {
            let mut p = TracePacket::from_message(w.root());
            p.set_trusted_packet_sequence_id(1);
            let mut b = p.message().begin_nested(1);
            b.append_uint32(1, cpu);
            for (ts, pid, field, f) in events {
                let mut e = b.begin_nested(2);
                e.append_uint64(1, *ts);
                e.append_uint32(2, *pid);
                let mut body = e.begin_nested(*field);
                f(&mut body);
            }
        }
        let p = w.finish().expect("writer");
        let mut out = vec![0x0a];
        let mut n = p.len();
        while n >= 0x80 {
            out.push((n as u8) | 0x80);
            n >>= 7;
        }
        out.push(n as u8);
        out.extend_from_slice(&p);
        TraceProcessor::from_bytes(&out).expect("trace")
    }

    fn rows(tp: &TraceProcessor, sql: &str) -> Vec<Vec<Value>> {
        tp.query(sql).expect("query").rows
    }

    fn i(v: i64) -> Value {
        Value::Int(v)
    }

    fn s(v: &str) -> Value {
        Value::Text(v.to_owned())
    }

    #[test]
    fn device_bytes_are_running_totals_in_kb_and_refused_packets_are_not_sent() {
        let rx = |m: &mut protozero::Message<'_>| {
            m.append_uint32(1, 1000);
            m.append_string(2, "wlan0");
        };
        let tx = |rc: i32| {
            move |m: &mut protozero::Message<'_>| {
                m.append_uint32(1, 700);
                m.append_string(2, "wlan0");
                m.append_int32(3, rc);
            }
        };
        let (ok, refused) = (tx(0), tx(-1));
        let tp = trace(
            3,
            &[
                (10, 1, super::NETIF_RECEIVE_SKB, &rx),
                (20, 1, super::NETIF_RECEIVE_SKB, &rx),
                (30, 1, super::NET_DEV_XMIT, &ok),
                (40, 1, super::NET_DEV_XMIT, &refused),
                (50, 1, super::NET_DEV_XMIT, &ok),
            ],
        );
        assert_eq!(
            rows(
                &tp,
                "SELECT c.ts, t.name, t.type, c.value, extract_arg(c.arg_set_id, 'cpu'), \
                 extract_arg(c.arg_set_id, 'len') FROM counter c \
                 JOIN counter_track t ON c.track_id = t.id ORDER BY c.ts"
            ),
            vec![
                vec![
                    i(10),
                    s("wlan0 Received KB"),
                    s("net_receive"),
                    Value::Real(0.0),
                    i(3),
                    i(1000)
                ],
                vec![
                    i(20),
                    s("wlan0 Received KB"),
                    s("net_receive"),
                    Value::Real(1.0),
                    i(3),
                    i(1000)
                ],
                vec![
                    i(30),
                    s("wlan0 Transmitted KB"),
                    s("net_transmit"),
                    Value::Real(0.0),
                    i(3),
                    i(700)
                ],
                vec![
                    i(50),
                    s("wlan0 Transmitted KB"),
                    s("net_transmit"),
                    Value::Real(1.0),
                    i(3),
                    i(700)
                ],
            ]
        );
    }

    #[test]
    fn tcp_states_are_back_to_back_slices_per_socket_and_napi_receives_nest_per_cpu() {
        let state = |skaddr: u64, new: i32, protocol: u32| {
            move |m: &mut protozero::Message<'_>| {
                m.append_uint32(2, 443);
                m.append_uint32(3, 2);
                m.append_int32(4, new);
                m.append_int32(5, 7);
                m.append_uint32(6, protocol);
                m.append_uint64(8, skaddr);
                m.append_uint32(9, 5555);
            }
        };
        let (syn, est, close, udp, other) = (
            state(0xa, 2, 6),
            state(0xa, 1, 6),
            state(0xa, 8, 6),
            state(0xa, 7, 17),
            state(0xb, 2, 6),
        );
        let entry = |m: &mut protozero::Message<'_>| {
            m.append_uint32(7, 1500);
            m.append_string(10, "rmnet0");
        };
        let exit = |m: &mut protozero::Message<'_>| m.append_int32(1, 2);
        let retransmit = |m: &mut protozero::Message<'_>| {
            m.append_uint32(2, 443);
            m.append_uint32(6, 5555);
        };
        let tp = trace(
            1,
            &[
                (100, 42, super::INET_SOCK_SET_STATE, &syn),
                (200, 42, super::INET_SOCK_SET_STATE, &est),
                (250, 42, super::INET_SOCK_SET_STATE, &udp),
                (300, 42, super::INET_SOCK_SET_STATE, &other),
                (400, 42, super::INET_SOCK_SET_STATE, &close),
                (500, 0, super::NAPI_GRO_RECEIVE_ENTRY, &entry),
                (520, 0, super::NAPI_GRO_RECEIVE_EXIT, &exit),
                (600, 0, super::TCP_RETRANSMIT_SKB, &retransmit),
            ],
        );
        assert_eq!(
            rows(
                &tp,
                "SELECT s.ts, s.dur, s.category, s.name, t.name, \
                 extract_arg(s.arg_set_id, 'len'), extract_arg(s.arg_set_id, 'ret') \
                 FROM slice s JOIN track t ON s.track_id = t.id ORDER BY s.ts"
            ),
            vec![
                vec![
                    i(100),
                    i(100),
                    s("tcp_state"),
                    s("TCP_SYN_SENT(pid=42)"),
                    s("TCP stream#1"),
                    Value::Null,
                    Value::Null
                ],
                vec![
                    i(200),
                    i(200),
                    s("tcp_state"),
                    s("TCP_ESTABLISHED(sport=5555,dport=443)"),
                    s("TCP stream#1"),
                    Value::Null,
                    Value::Null
                ],
                vec![
                    i(300),
                    i(-1),
                    s("tcp_state"),
                    s("TCP_SYN_SENT(pid=42)"),
                    s("TCP stream#2"),
                    Value::Null,
                    Value::Null
                ],
                vec![
                    i(400),
                    i(-1),
                    s("tcp_state"),
                    s("TCP_CLOSE_WAIT"),
                    s("TCP stream#1"),
                    Value::Null,
                    Value::Null
                ],
                vec![
                    i(500),
                    i(20),
                    s("napi_gro"),
                    s("rmnet0"),
                    s("Napi Gro Cpu 1"),
                    i(1500),
                    i(2)
                ],
                vec![
                    i(600),
                    i(0),
                    s("tcp_event"),
                    s("sport=5555,dport=443"),
                    s("TCP Retransmit Skb"),
                    Value::Null,
                    Value::Null
                ],
            ]
        );
    }
}
