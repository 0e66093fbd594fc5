//! What a trace and its buffer stats add up to, as `record` (its progress
//! line and its closing per-data-source report) and `stats` (after the
//! fact) both print them: the buffers' stats summed, packets attributed to
//! data sources by their kinds, and sizes in human units. They lived in
//! `stats.rs` and `record.rs`, each command reaching into the other's file.

use std::collections::BTreeMap;

use zerotrace_protos::protos::{TracePacketDecoder, TraceStatsDecoder};

use super::packet_facts::HEADER_FIELDS;

/// What one trace buffer's stats say.
#[derive(Debug, Default, Clone, Copy)]
pub struct BufferSummary {
    /// Buffer size.
    pub size: u64,
    /// Bytes written into it.
    pub bytes_written: u64,
    /// Bytes overwritten before being read (ring buffers).
    pub bytes_overwritten: u64,
    /// Chunks overwritten before being read.
    pub chunks_overwritten: u64,
    /// Chunks refused (discard buffers when full).
    pub chunks_discarded: u64,
    /// Packets producers lost before they reached the service.
    pub writer_packet_loss: u64,
    /// Producer protocol violations.
    pub abi_violations: u64,
    /// Patches that arrived too late.
    pub patches_failed: u64,
}

impl BufferSummary {
    /// How full the buffers are (of what they hold at most).
    pub fn fill_percent(&self) -> f64 {
        if self.size == 0 {
            return 0.0;
        }
        let held = self.bytes_written.saturating_sub(self.bytes_overwritten);
        (held.min(self.size) as f64 / self.size as f64) * 100.0
    }

    /// Chunks and packets lost, all causes.
    pub fn losses(&self) -> u64 {
        self.chunks_overwritten + self.chunks_discarded + self.writer_packet_loss
    }
}

/// The sum over the buffers of an encoded `TraceStats`.
pub fn buffer_summary(trace_stats: &[u8]) -> BufferSummary {
    let mut s = BufferSummary::default();
    for b in TraceStatsDecoder::new(trace_stats).buffer_stats() {
        s.size += b.buffer_size().unwrap_or(0);
        s.bytes_written += b.bytes_written().unwrap_or(0);
        s.bytes_overwritten += b.bytes_overwritten().unwrap_or(0);
        s.chunks_overwritten += b.chunks_overwritten().unwrap_or(0);
        s.chunks_discarded += b.chunks_discarded().unwrap_or(0);
        s.writer_packet_loss += b.trace_writer_packet_loss().unwrap_or(0);
        s.abi_violations += b.abi_violations().unwrap_or(0);
        s.patches_failed += b.patches_failed().unwrap_or(0);
    }
    s
}

/// The name of the kind of `p`: its first field that is not one the
/// service or the sequence machinery adds.
pub fn packet_kind(p: &[u8]) -> String {
    let first = protozero::Decoder::new(p)
        .map_while(Result::ok)
        .map(|f| f.id)
        .find(|id| !HEADER_FIELDS.contains(id));
    kind_name(first)
}

/// The name of a packet kind by the number of its first non-header field
/// (see [`packet_kind`]); `None` is a packet of header fields alone.
pub fn kind_name(first: Option<u32>) -> String {
    let Some(id) = first else {
        return "interned data only".into();
    };
    crate::schema::trace_packet()
        .get_field(id)
        .map_or_else(|| format!("field {id}"), |d| d.name().to_owned())
}

/// The data source that writes packets of `kind` (a `TracePacket` field),
/// for the data sources whose packets say so.
fn data_source_of_kind(kind: &str) -> Option<&'static str> {
    Some(match kind {
        "track_event" | "track_descriptor" => "track_event",
        "ftrace_events" | "ftrace_stats" => "linux.ftrace",
        "process_tree" | "process_stats" => "linux.process_stats",
        "sys_stats" => "linux.sys_stats",
        "perf_sample" => "linux.perf",
        "cpu_info" => "linux.system_info",
        "inode_file_map" => "linux.inode_file_map",
        "android_log" => "android.log",
        "power_rails" | "battery" => "android.power",
        "packages_list" => "android.packages_list",
        "heap_graph" => "android.java_hprof",
        "profile_packet" | "streaming_profile_packet" => "android.heapprofd",
        "gpu_counter_event" => "gpu.counters",
        "gpu_render_stage_event" => "gpu.renderstages",
        "frame_timeline_event" => "android.surfaceflinger.frametimeline",
        "chrome_metadata" => "org.chromium.trace_metadata",
        _ => return None,
    })
}

/// One sequence's packets: how many, the data source they name (if
/// any), and how many of each kind.
type SequenceTally = (u64, Option<&'static str>, BTreeMap<String, u64>);

/// Packets per data source, as lines. A trace does not say which data
/// source wrote a sequence, so each sequence is attributed to the data
/// source whose packets it carries (a `track_event` or
/// `track_descriptor` packet: `track_event`; `ftrace_events`:
/// `linux.ftrace`, ...; sequence 1 is the tracing service's own). The
/// data sources of `configured` are listed even with no packets; sequences
/// whose packets name no data source are counted as "other", with their
/// kinds.
pub fn per_data_source<P: AsRef<[u8]>>(packets: &[P], configured: &[String]) -> Vec<String> {
    let mut seqs: BTreeMap<u32, SequenceTally> = BTreeMap::new();
    for raw in packets {
        let raw = raw.as_ref();
        let seq = TracePacketDecoder::new(raw)
            .trusted_packet_sequence_id()
            .unwrap_or(0);
        let kind = packet_kind(raw);
        let e = seqs.entry(seq).or_default();
        e.0 += 1;
        if e.1.is_none() {
            e.1 = data_source_of_kind(&kind);
        }
        *e.2.entry(kind).or_default() += 1;
    }
    let mut per_ds: BTreeMap<String, (u64, usize)> =
        configured.iter().map(|n| (n.clone(), (0, 0))).collect();
    let (mut service, mut other) = (0u64, 0u64);
    let mut other_kinds = BTreeMap::<String, u64>::new();
    for (seq, (n, ds, kinds)) in seqs {
        if seq == 1 {
            service += n;
            continue;
        }
        match ds {
            Some(ds) => {
                let e = per_ds.entry(ds.to_owned()).or_default();
                e.0 += n;
                e.1 += 1;
            }
            None => {
                other += n;
                for (k, c) in kinds {
                    *other_kinds.entry(k).or_default() += c;
                }
            }
        }
    }
    let mut lines: Vec<String> = per_ds
        .into_iter()
        .map(|(ds, (n, seqs))| match seqs {
            0 => format!("{ds:<32} {n:>9} packets"),
            1 => format!("{ds:<32} {n:>9} packets (1 sequence)"),
            _ => format!("{ds:<32} {n:>9} packets ({seqs} sequences)"),
        })
        .collect();
    lines.push(format!(
        "{:<32} {service:>9} packets",
        "(the tracing service)"
    ));
    if other > 0 {
        let kinds: Vec<String> = other_kinds
            .iter()
            .map(|(k, n)| format!("{k} {n}"))
            .collect();
        lines.push(format!(
            "{:<32} {other:>9} packets (kinds: {})",
            "(other sequences)",
            kinds.join(", ")
        ));
    }
    lines
}

/// `1.5 MB`-style sizes.
pub fn human_bytes(n: u64) -> String {
    const UNITS: [&str; 4] = ["B", "KB", "MB", "GB"];
    let mut v = n as f64;
    let mut u = 0;
    while v >= 1024.0 && u + 1 < UNITS.len() {
        v /= 1024.0;
        u += 1;
    }
    if u == 0 {
        format!("{n} B")
    } else {
        format!("{v:.1} {}", UNITS[u])
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use zerotrace_protos::protos::TracePacket;

    fn packet(seq: u32, f: impl FnOnce(&mut TracePacket<'_>)) -> Vec<u8> {
        let mut w = protozero::HeapWriter::new();
        {
            let mut p = TracePacket::from_message(w.root());
            p.set_trusted_packet_sequence_id(seq);
            f(&mut p);
        }
        w.finish().unwrap()
    }

    #[test]
    fn sequences_count_for_the_data_source_their_packets_name() {
        let mut packets = vec![
            packet(1, |p| {
                p.begin_clock_snapshot();
            }),
            packet(2, |p| {
                p.begin_track_descriptor().set_uuid(1);
            }),
            packet(3, |p| {
                p.message().append_bytes(900, b"x");
            }),
        ];
        for seq in [2, 4] {
            for _ in 0..3 {
                packets.push(packet(seq, |p| {
                    p.begin_track_event().set_type_raw(3);
                }));
            }
        }
        let lines = per_data_source(&packets, &["my.source".into(), "track_event".into()]);
        let find = |name: &str| {
            lines
                .iter()
                .find(|l| l.starts_with(name))
                .unwrap_or_else(|| panic!("{name} in {lines:?}"))
                .clone()
        };
        assert!(find("my.source").contains(" 0 packets"), "{lines:?}");
        assert!(
            find("track_event").contains(" 7 packets (2 sequences)"),
            "{lines:?}"
        );
        assert!(find("(the tracing service)").contains(" 1 packets"));
        let other = find("(other sequences)");
        assert!(
            other.contains(" 1 packets (kinds: for_testing 1)"),
            "{other}"
        );
    }
}
