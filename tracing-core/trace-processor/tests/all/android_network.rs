//! Android's network packet trace: packets and bundles become slices per
//! interface and direction named after the app (its package through the
//! uid's app id, else `uid=<uid>`), `android.network_packets` shows their
//! details, its uptime macros model the radio's idle timeout, and the v1
//! metric file `android/network_activity_template.sql` turns them into
//! activity spans.

use crate::common;

use common::{i, packet, rows, s, trace};
use zerotrace_trace_processor::{TraceProcessor, Value};

/// `TracePacket.packages_list`.
const PACKAGES_LIST: u32 = 47;
/// `TracePacket.network_packet`.
const NETWORK_PACKET: u32 = 88;
/// `TracePacket.network_packet_bundle`.
const NETWORK_PACKET_BUNDLE: u32 = 92;

/// A bundle at `ts` from `uid` on `iface`, egress: per-packet offsets and
/// lengths, or totals (duration, packets, bytes).
fn bundle(
    ts: u64,
    uid: u64,
    iface: &str,
    per_packet: &[(u64, u64)],
    totals: Option<(u64, u64, u64)>,
) -> Vec<u8> {
    packet(|p| {
        p.set_timestamp(ts);
        let mut b = p.message().begin_nested(NETWORK_PACKET_BUNDLE);
        {
            let mut ctx = b.begin_nested(2);
            ctx.append_uint32(1, 2);
            ctx.append_string(2, iface);
            ctx.append_uint64(4, uid);
        }
        if !per_packet.is_empty() {
            b.append_packed_varint(3, per_packet.iter().map(|x| x.0));
            b.append_packed_varint(4, per_packet.iter().map(|x| x.1));
        }
        if let Some((dur, n, len)) = totals {
            b.append_uint64(6, dur);
            b.append_uint64(5, n);
            b.append_uint64(7, len);
        }
    })
}

fn load() -> TraceProcessor {
    let packages = packet(|p| {
        p.set_timestamp(1);
        let mut m = p.message().begin_nested(PACKAGES_LIST);
        let mut info = m.begin_nested(1);
        info.append_string(1, "com.example");
        info.append_uint64(2, 123);
    });
    // One TCP packet received on loopback.
    let single = packet(|p| {
        p.set_timestamp(3000);
        let mut e = p.message().begin_nested(NETWORK_PACKET);
        e.append_uint32(1, 1);
        e.append_string(2, "lo");
        e.append_uint32(3, 64);
        e.append_uint32(6, 6);
        e.append_uint32(7, 0x12);
        e.append_uint32(8, 80);
    });
    TraceProcessor::from_bytes(&trace(&[
        packages,
        // User 1's app 123: com.example; its packets are late in the bundle.
        bundle(
            0,
            100_123,
            "wlan",
            &[(1000, 10), (1010, 20), (5000, 30)],
            None,
        ),
        bundle(2000, 456, "wlan", &[], Some((100, 2, 300))),
        single,
    ]))
    .expect("trace")
}

#[test]
fn packets_and_bundles_are_slices_named_after_their_app() {
    let tp = load();
    assert_eq!(
        rows(
            &tp,
            "INCLUDE PERFETTO MODULE android.network_packets;
             SELECT ts, dur, package_name, iface, direction, packet_count, packet_length,
                    packet_transport, packet_tcp_flags, packet_tcp_flags_int, socket_tag,
                    local_port, remote_port
             FROM android_network_packets ORDER BY ts",
        ),
        vec![
            vec![
                i(1000),
                i(0),
                s("com.example"),
                s("wlan"),
                s("Transmitted"),
                i(1),
                i(10),
                s("IPPROTO (0)"),
                Value::Null,
                Value::Null,
                s("0x0"),
                Value::Null,
                Value::Null
            ],
            vec![
                i(1010),
                i(0),
                s("com.example"),
                s("wlan"),
                s("Transmitted"),
                i(1),
                i(20),
                s("IPPROTO (0)"),
                Value::Null,
                Value::Null,
                s("0x0"),
                Value::Null,
                Value::Null
            ],
            vec![
                i(2000),
                i(100),
                s("uid=456"),
                s("wlan"),
                s("Transmitted"),
                i(2),
                i(300),
                s("IPPROTO (0)"),
                Value::Null,
                Value::Null,
                s("0x0"),
                Value::Null,
                Value::Null
            ],
            vec![
                i(3000),
                i(0),
                s("uid=0"),
                s("lo"),
                s("Received"),
                i(1),
                i(64),
                s("IPPROTO_TCP"),
                s(".s..a..."),
                i(18),
                s("0x0"),
                i(80),
                Value::Null
            ],
            vec![
                i(5000),
                i(0),
                s("com.example"),
                s("wlan"),
                s("Transmitted"),
                i(1),
                i(30),
                s("IPPROTO (0)"),
                Value::Null,
                Value::Null,
                s("0x0"),
                Value::Null,
                Value::Null
            ],
        ]
    );
    // One track per interface and direction, while slices do not overlap.
    assert_eq!(
        rows(
            &tp,
            "SELECT DISTINCT t.name FROM slice s JOIN track t ON t.id = s.track_id ORDER BY 1",
        ),
        vec![vec![s("lo Received")], vec![s("wlan Transmitted")]]
    );
    assert_eq!(
        rows(
            &tp,
            "SELECT extract_arg(arg_set_id, 'packet_tcp_flags'), extract_arg(arg_set_id, 'local_port'),
                    extract_arg(arg_set_id, 'packet_count')
             FROM slice WHERE ts = 3000",
        ),
        vec![vec![s(".s..a..."), i(80), i(1)]]
    );
}

#[test]
fn the_uptime_macros_and_the_activity_metric_model_an_idle_timeout() {
    let tp = load();
    // With a 1000 ns timeout: com.example's first two packets are one span
    // (1000 to 2010), its last another (5000 to 6000).
    assert_eq!(
        rows(
            &tp,
            "INCLUDE PERFETTO MODULE android.network_packets;
             SELECT package_name, ts, dur, packet_count FROM android_network_uptime_spans!(
               (SELECT * FROM android_network_packets WHERE iface = 'wlan'), (package_name), 1000)
             ORDER BY package_name, ts",
        ),
        vec![
            vec![s("com.example"), i(1000), i(1010), i(2)],
            vec![s("com.example"), i(5000), i(1000), i(1)],
            vec![s("uid=456"), i(2000), i(1100), i(2)],
        ]
    );
    // The first packet pays the whole timeout, the next the 10 ns it adds.
    assert_eq!(
        rows(
            &tp,
            "SELECT p.ts, c.uptime_cost FROM android_network_uptime_cost!(
               (SELECT * FROM android_network_packets WHERE package_name = 'com.example'),
               (package_name), 1000) AS c
             JOIN android_network_packets AS p USING (id) ORDER BY p.ts",
        ),
        vec![
            vec![i(1000), i(1000)],
            vec![i(1010), i(10)],
            vec![i(5000), i(1000)]
        ]
    );
    let out = tp
        .query_outputs(
            "SELECT RUN_METRIC('android/network_activity_template.sql',
               'view_name', 'activity', 'group_by', 'package_name',
               'filter', 'iface = ''wlan''', 'idle_ns', '1000', 'quant_ns', '100');
             SELECT package_name, ts, dur, packet_count, packet_length FROM activity
             ORDER BY package_name, ts",
        )
        .expect("query");
    assert_eq!(out.len(), 1, "{out:?}");
    assert_eq!(
        out[0].rows,
        vec![
            vec![s("com.example"), i(1000), i(1010), i(2), i(30)],
            vec![s("com.example"), i(5000), i(1000), i(1), i(30)],
            vec![s("uid=456"), i(2000), i(1100), i(2), i(300)],
        ]
    );
}
