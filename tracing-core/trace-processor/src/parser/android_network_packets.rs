//! Android's network packet trace (`android.network_packets`: TracePacket
//! fields `network_packet` 88 and `network_packet_bundle` 92) as upstream
//! imports it: every packet, or every aggregate of packets, becomes a
//! slice named after the app that sent or received it (its package, else
//! `uid=<uid>`) on a track per interface and direction (`<iface>
//! Transmitted`/`Received`; slices that overlap go on further tracks of
//! the same kind), with the packet's details as args and as a row of
//! `__intrinsic_android_network_packets`. A bundle of per-packet
//! timestamps and lengths is one event per packet, at the bundle's time
//! plus its offset; a bundle with totals is one event lasting
//! `total_duration`. A bundle's context may be interned
//! (`InternedData.packet_context`); an unknown iid is counted in
//! `network_trace_intern_errors`, malformed packed arrays in
//! `network_trace_parse_errors`.
//!
//! Per-packet events are later than their packet's time, so the events
//! are kept until the trace has been read and placed in time order then.

use protozero::Decoder;

use super::Parser;
use super::importer::{Importer, Input};
use crate::column_store::strings::StrId;
use crate::storage::args::{ArgSetBuilder, ArgValue};
use crate::storage::rows::SliceRow;
use crate::tables::android_network::AndroidNetworkPacketRow;
use crate::tracker::tracks::{EventType, TrackSpec};

/// TracePacket.network_packet.
const NETWORK_PACKET: u32 = 88;
/// TracePacket.network_packet_bundle.
const NETWORK_PACKET_BUNDLE: u32 = 92;
/// InternedData.packet_context.
const INTERNED_PACKET_CONTEXT: u32 = 30;
/// `android.os.UserHandle.PER_USER_RANGE`: a uid is user * this + app id.
const PER_USER_RANGE: u32 = 100_000;

/// The payloads this module imports.
pub const IMPORTERS: &[(u32, Importer)] = &[
    (NETWORK_PACKET, import_packet),
    (NETWORK_PACKET_BUNDLE, import_bundle),
];

/// One event waiting for the end of the trace: its time, duration, bytes
/// and packet count, and its `NetworkPacketEvent` context.
#[derive(Debug, Clone)]
struct Pending {
    ts: i64,
    dur: i64,
    length: i64,
    count: i64,
    ctx: Vec<u8>,
}

/// The events read so far, in the order read.
#[derive(Debug, Default)]
pub struct NetworkPacketsState {
    pending: Vec<Pending>,
}

/// The tracks of one interface and direction while events are placed (in
/// time order): each track's id and the end of its last slice.
type Pool = Vec<(u32, i64)>;

fn fields(bytes: &[u8]) -> impl Iterator<Item = protozero::Field<'_>> {
    Decoder::new(bytes).map_while(Result::ok)
}

fn import_packet(p: &mut Parser, input: &Input<'_>) {
    let length = fields(input.bytes)
        .filter(|f| f.id == 3)
        .filter_map(|f| f.as_u64().ok())
        .last()
        .unwrap_or(0);
    p.network_packets.pending.push(Pending {
        ts: input.ts,
        dur: 0,
        length: i64::from(length as u32),
        count: 1,
        ctx: input.bytes.to_vec(),
    });
}

/// The values of a packed repeated varint field; None when malformed.
fn packed(bytes: &[u8]) -> Option<Vec<u64>> {
    let mut out = Vec::new();
    let mut rest = bytes;
    while !rest.is_empty() {
        let (v, n) = protozero::varint::decode_varint(rest).ok()?;
        out.push(v);
        rest = rest.get(n..)?;
    }
    Some(out)
}

fn import_bundle(p: &mut Parser, input: &Input<'_>) {
    let mut ctx: &[u8] = &[];
    let mut iid = None;
    let (mut stamps, mut lengths) = (Vec::new(), Vec::new());
    let (mut total_length, mut total_packets, mut total_duration) = (None, 0u64, 0u64);
    let mut malformed = false;
    for f in fields(input.bytes) {
        match f.id {
            1 => iid = f.as_u64().ok(),
            2 => ctx = f.as_bytes().unwrap_or(&[]),
            3 | 4 => {
                // Packed, or (tolerated) one value per occurrence.
                let values = match f.as_bytes() {
                    Ok(b) => packed(b),
                    Err(_) => f.as_u64().ok().map(|v| vec![v]),
                };
                match values {
                    Some(v) if f.id == 3 => stamps.extend(v),
                    Some(v) => lengths.extend(v),
                    None => malformed = true,
                }
            }
            5 => total_packets = f.as_u64().unwrap_or(0),
            6 => total_duration = f.as_u64().unwrap_or(0),
            7 => total_length = f.as_u64().ok(),
            _ => {}
        }
    }
    let mut ctx = ctx.to_vec();
    if let Some(iid) = iid {
        match input.generation.interned(INTERNED_PACKET_CONTEXT, iid) {
            Some(interned) => {
                if let Some(c) = fields(interned)
                    .filter(|f| f.id == 2)
                    .filter_map(|f| f.as_bytes().ok())
                    .last()
                {
                    ctx = c.to_vec();
                }
            }
            None => p.storage.stats.incr("network_trace_intern_errors"),
        }
    }
    if let Some(total) = total_length {
        p.network_packets.pending.push(Pending {
            ts: input.ts,
            dur: i64::try_from(total_duration).unwrap_or(i64::MAX),
            length: i64::try_from(total).unwrap_or(i64::MAX),
            count: i64::from(total_packets as u32),
            ctx,
        });
        return;
    }
    if malformed {
        p.storage.stats.incr("network_trace_parse_errors");
        return;
    }
    for (offset, length) in stamps.iter().zip(lengths.iter()) {
        let offset = i64::try_from(*offset).unwrap_or(i64::MAX);
        p.network_packets.pending.push(Pending {
            ts: input.ts.saturating_add(offset),
            dur: 0,
            length: i64::from(*length as u32),
            count: 1,
            ctx: ctx.clone(),
        });
    }
}

/// A `NetworkPacketEvent` context, decoded.
#[derive(Debug, Default)]
struct Context<'a> {
    direction: u64,
    iface: &'a str,
    uid: u32,
    tag: u32,
    ip_proto: u32,
    tcp_flags: Option<u32>,
    local_port: Option<u32>,
    remote_port: Option<u32>,
    icmp_type: Option<u32>,
    icmp_code: Option<u32>,
}

fn context(bytes: &[u8]) -> Context<'_> {
    let mut c = Context::default();
    for f in fields(bytes) {
        let v = || f.as_u64().ok().map(|v| v as u32);
        match f.id {
            1 => c.direction = f.as_u64().unwrap_or(0),
            2 => c.iface = f.as_str().unwrap_or(""),
            4 => c.uid = v().unwrap_or(0),
            5 => c.tag = v().unwrap_or(0),
            6 => c.ip_proto = v().unwrap_or(0),
            7 => c.tcp_flags = v(),
            8 => c.local_port = v(),
            9 => c.remote_port = v(),
            10 => c.icmp_type = v(),
            11 => c.icmp_code = v(),
            _ => {}
        }
    }
    c
}

/// The transport's name (`IPPROTO_TCP`, ...).
fn transport(ip_proto: u32) -> String {
    match ip_proto {
        6 => "IPPROTO_TCP".to_owned(),
        17 => "IPPROTO_UDP".to_owned(),
        1 => "IPPROTO_ICMP".to_owned(),
        58 => "IPPROTO_ICMPV6".to_owned(),
        n => format!("IPPROTO ({n})"),
    }
}

/// TCP flags as eight letters, `.` for each flag not set (fin, syn, rst,
/// psh, ack, urg, ece, cwr from the lowest bit).
fn tcp_flags(flags: u32) -> String {
    b"fsrpauec"
        .iter()
        .enumerate()
        .map(|(bit, &c)| {
            if flags & (1 << bit) != 0 {
                c as char
            } else {
                '.'
            }
        })
        .collect()
}

/// Places the events read, in time order (then reading order).
pub fn finish(p: &mut Parser) {
    let mut pending = std::mem::take(&mut p.network_packets.pending);
    if pending.is_empty() {
        return;
    }
    pending.sort_by_key(|e| e.ts);
    let packages: crate::hash::HashMap<i64, StrId> = p
        .storage
        .android
        .packages
        .iter()
        .map(|r| (r.uid, r.package_name))
        .collect();
    let mut pools: crate::hash::HashMap<String, Pool> = Default::default();
    for e in &pending {
        event(p, e, &packages, &mut pools);
    }
}

/// The track of a slice from `ts` lasting `dur` in `pool`: the first whose
/// last slice has ended by `ts` (slices that overlap go on further tracks,
/// as upstream's track compressor places them), or a new one `create`
/// makes given its index.
fn place(pool: &mut Pool, ts: i64, dur: i64, create: impl FnOnce(u32) -> u32) -> u32 {
    let end = ts.saturating_add(dur.max(0));
    if let Some(slot) = pool.iter_mut().find(|(_, last_end)| *last_end <= ts) {
        slot.1 = end;
        return slot.0;
    }
    let track = create(u32::try_from(pool.len()).unwrap_or(u32::MAX));
    pool.push((track, end));
    track
}

fn event(
    p: &mut Parser,
    e: &Pending,
    packages: &crate::hash::HashMap<i64, StrId>,
    pools: &mut crate::hash::HashMap<String, Pool>,
) {
    let c = context(&e.ctx);
    let direction = match c.direction {
        1 => "Received",
        2 => "Transmitted",
        _ => "DIR_UNKNOWN",
    };
    let name = match packages.get(&i64::from(c.uid % PER_USER_RANGE)) {
        Some(&n) if c.uid > 0 => n,
        _ => p.storage.strings.intern(&format!("uid={}", c.uid)),
    };
    let key = format!("network_packets:{}:{direction}", c.iface);
    let track_name = format!("{} {direction}", c.iface);
    let (iface, direction_id) = (
        p.storage.strings.intern(c.iface),
        p.storage.strings.intern(direction),
    );
    let pool = pools.entry(key).or_default();
    let track_id = place(pool, e.ts, e.dur, |idx| {
        let mut spec = TrackSpec::new(Some(&track_name), "network_packets", EventType::Slice);
        spec.dimensions = vec![
            ("net_interface", ArgValue::String(iface)),
            ("net_direction", ArgValue::String(direction_id)),
            ("track_compressor_idx", ArgValue::Int(i64::from(idx))),
        ];
        p.tracks.create(&mut p.storage, &spec)
    });
    let mut row = AndroidNetworkPacketRow {
        iface,
        direction: direction_id,
        packet_transport: p.storage.strings.intern(&transport(c.ip_proto)),
        packet_length: e.length,
        packet_count: e.count,
        socket_tag: i64::from(c.tag),
        socket_tag_str: p.storage.strings.intern(&format!("{:#x}", c.tag)),
        socket_uid: i64::from(c.uid),
        local_port: c.local_port.map(i64::from),
        remote_port: c.remote_port.map(i64::from),
        packet_icmp_type: c.icmp_type.map(i64::from),
        packet_icmp_code: c.icmp_code.map(i64::from),
        packet_tcp_flags: c.tcp_flags.map(i64::from),
        packet_tcp_flags_str: c
            .tcp_flags
            .map_or(StrId::NULL, |f| p.storage.strings.intern(&tcp_flags(f))),
        ..Default::default()
    };
    // Upstream's arg order.
    let mut args: Vec<(&str, ArgValue)> = vec![
        ("packet_transport", ArgValue::String(row.packet_transport)),
        ("socket_uid", ArgValue::Int(row.socket_uid)),
        ("socket_tag", ArgValue::String(row.socket_tag_str)),
    ];
    if c.tcp_flags.is_some() {
        args.push((
            "packet_tcp_flags",
            ArgValue::String(row.packet_tcp_flags_str),
        ));
    }
    for (key, v) in [
        ("local_port", c.local_port),
        ("remote_port", c.remote_port),
        ("packet_icmp_type", c.icmp_type),
        ("packet_icmp_code", c.icmp_code),
    ] {
        if let Some(v) = v {
            args.push((key, ArgValue::Int(i64::from(v))));
        }
    }
    args.push(("packet_length", ArgValue::Int(e.length)));
    args.push(("packet_count", ArgValue::Int(e.count)));
    let mut b = ArgSetBuilder::default();
    for (k, v) in args {
        let k = p.storage.strings.intern(k);
        b.add(k, k, v);
    }
    let arg_set_id = p.storage.args.add_set(&b);
    let Some(id) = p.slices.begin(
        &mut p.storage,
        SliceRow {
            ts: e.ts,
            dur: e.dur,
            track_id,
            name,
            arg_set_id: arg_set_id.into(),
            ..Default::default()
        },
    ) else {
        return;
    };
    row.slice_id = id;
    p.storage.network_packets.push(row);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tcp_flags_are_letters_with_dots_for_unset_bits() {
        assert_eq!(tcp_flags(0), "........");
        assert_eq!(tcp_flags(0x12), ".s..a...");
        assert_eq!(tcp_flags(0xff), "fsrpauec");
    }

    #[test]
    fn overlapping_slices_take_further_tracks_and_freed_ones_are_reused() {
        let mut pool = Pool::new();
        let mut made = 0;
        let mut mk = |idx: u32| {
            made += 1;
            100 + idx
        };
        assert_eq!(place(&mut pool, 0, 10, &mut mk), 100);
        assert_eq!(place(&mut pool, 5, 10, &mut mk), 101);
        assert_eq!(place(&mut pool, 10, 0, &mut mk), 100);
        assert_eq!(place(&mut pool, 12, 1, &mut mk), 100);
        assert_eq!(made, 2);
    }

    #[test]
    fn transports_are_named_or_numbered() {
        assert_eq!(transport(6), "IPPROTO_TCP");
        assert_eq!(transport(99), "IPPROTO (99)");
    }
}
