//! The scanner floor: the least a loader must do with a trace, walking the
//! same packets the trace processor walks and building nothing: the
//! `Trace` framing, each `TracePacket`'s fields one level deep, and inside
//! an ftrace bundle each event's fields, with protozero's [`Decoder`]. The
//! walk also counts the packets per kind, which is the trace's
//! composition.

use protozero::Decoder;

/// `Trace.packet`.
const TRACE_PACKET: u32 = 1;
/// `TracePacket.ftrace_events`.
const FTRACE_EVENTS: u32 = 1;
/// `FtraceEventBundle.event`.
const BUNDLE_EVENT: u32 = 2;
/// Field numbers above this count as one kind, "other".
const MAX_KIND: usize = 1024;

/// `TracePacket` fields that say how to read a packet, not what it holds:
/// a packet's kind is its first field not among them.
const HEADER_FIELDS: [u32; 12] = [3, 8, 10, 12, 13, 41, 42, 58, 59, 79, 87, 98];

/// What one walk counted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Scan {
    /// Packets.
    pub packets: u64,
    /// Fields read, at every level walked.
    pub fields: u64,
    /// Events inside ftrace bundles.
    pub ftrace_events: u64,
    /// Packets per kind (the `TracePacket` field number; 0: only header
    /// fields; [`MAX_KIND`]: a field number above it).
    pub kinds: Vec<u64>,
}

impl Default for Scan {
    fn default() -> Self {
        Scan {
            packets: 0,
            fields: 0,
            ftrace_events: 0,
            kinds: vec![0; MAX_KIND + 1],
        }
    }
}

/// Walks `trace` (a serialized `Trace`); an error names the first
/// malformed field.
pub fn scan(trace: &[u8]) -> Result<Scan, String> {
    let mut s = Scan::default();
    let mut d = Decoder::new(trace);
    while let Some(f) = d.read_field() {
        let f = f.map_err(|e| format!("Trace at byte {}: {e}", d.offset()))?;
        s.fields += 1;
        if f.id != TRACE_PACKET {
            continue;
        }
        let packet = f.as_bytes().map_err(|e| format!("Trace.packet: {e}"))?;
        s.packets += 1;
        let mut kind = 0u32;
        let mut p = Decoder::new(packet);
        while let Some(f) = p.read_field() {
            let f = f.map_err(|e| format!("TracePacket {}: {e}", s.packets))?;
            s.fields += 1;
            if kind == 0 && !HEADER_FIELDS.contains(&f.id) {
                kind = f.id;
            }
            if f.id == FTRACE_EVENTS {
                if let Ok(bundle) = f.as_bytes() {
                    walk_bundle(bundle, &mut s)?;
                }
            }
        }
        if kind == 0 && Decoder::new(packet).find_last(12).is_some() {
            kind = 12;
        }
        let slot = (kind as usize).min(MAX_KIND);
        s.kinds[slot] += 1;
    }
    Ok(s)
}

/// An ftrace bundle's fields, and each event's fields one level deep.
fn walk_bundle(bundle: &[u8], s: &mut Scan) -> Result<(), String> {
    let mut b = Decoder::new(bundle);
    while let Some(f) = b.read_field() {
        let f = f.map_err(|e| format!("FtraceEventBundle: {e}"))?;
        s.fields += 1;
        if f.id != BUNDLE_EVENT {
            continue;
        }
        s.ftrace_events += 1;
        let Ok(event) = f.as_bytes() else { continue };
        let mut e = Decoder::new(event);
        while let Some(f) = e.read_field() {
            f.map_err(|e| format!("FtraceEvent: {e}"))?;
            s.fields += 1;
        }
    }
    Ok(())
}

/// The name of a packet kind (a `TracePacket` field number).
pub fn kind_name(kind: usize) -> String {
    let name = match kind {
        0 => "(header fields only)",
        1 => "ftrace_events",
        2 => "process_tree",
        6 => "clock_snapshot",
        7 => "sys_stats",
        9 => "process_stats",
        11 => "track_event",
        12 => "interned_data only",
        33 => "trace_config",
        34 => "ftrace_stats",
        35 => "trace_stats",
        36 => "synchronization_marker",
        37 => "profile_packet",
        43 => "process_descriptor",
        44 => "thread_descriptor",
        45 => "system_info",
        46 => "trigger",
        50 => "compressed_packets",
        54 => "streaming_profile_packet",
        60 => "track_descriptor",
        61 => "module_symbols",
        66 => "perf_sample",
        67 => "cpu_info",
        69 => "service_event",
        89 => "trace_uuid",
        MAX_KIND => "(field number above 1023)",
        _ => return format!("field {kind}"),
    };
    name.to_string()
}

/// The kinds seen, most packets first: (name, packets).
pub fn composition(s: &Scan) -> Vec<(String, u64)> {
    let mut v: Vec<(String, u64)> = s
        .kinds
        .iter()
        .enumerate()
        .filter(|(_, n)| **n > 0)
        .map(|(k, n)| (kind_name(k), *n))
        .collect();
    v.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    v
}

#[cfg(test)]
mod tests {
    use super::*;
    use protozero::HeapWriter;

    fn trace() -> Vec<u8> {
        let mut w = HeapWriter::new();
        {
            let mut root = w.root();
            {
                // A TrackEvent packet with a sequence and a timestamp.
                let mut p = root.begin_nested(1);
                p.append_varint(10, 1);
                p.append_varint(8, 100);
                p.begin_nested(11).append_varint(9, 1);
            }
            {
                // An ftrace bundle of two events of two fields each.
                let mut p = root.begin_nested(1);
                let mut b = p.begin_nested(1);
                b.append_varint(1, 0);
                for ts in [5u64, 6] {
                    let mut e = b.begin_nested(2);
                    e.append_varint(1, ts);
                    e.append_varint(2, 7);
                }
            }
            {
                // Only interned data.
                let mut p = root.begin_nested(1);
                p.append_varint(10, 1);
                p.begin_nested(12).append_varint(1, 1);
            }
        }
        w.finish().unwrap()
    }

    #[test]
    fn the_walk_counts_packets_per_kind_and_ftrace_events() {
        let s = scan(&trace()).unwrap();
        assert_eq!(s.packets, 3);
        assert_eq!(s.ftrace_events, 2);
        assert_eq!(
            composition(&s),
            vec![
                ("ftrace_events".to_string(), 1),
                ("interned_data only".to_string(), 1),
                ("track_event".to_string(), 1),
            ]
        );
        // 3 packets; 3 + 1 + 2 packet fields; the bundle's 3 fields and
        // the events' 4.
        assert_eq!(s.fields, 3 + 6 + 3 + 4);
    }

    #[test]
    fn a_malformed_packet_is_an_error_not_a_panic() {
        let mut t = trace();
        t.truncate(t.len() - 1);
        assert!(scan(&t).is_err());
        assert_eq!(kind_name(999), "field 999");
    }
}
