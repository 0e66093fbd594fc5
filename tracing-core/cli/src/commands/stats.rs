//! `zerotrace stats`: packets per sequence and per data source, the
//! service's buffer stats, every data loss the trace records, the CPU
//! samples' section (`perf_stats.rs`) and the heap dumps' (`heap_stats.rs`).

use std::collections::{BTreeMap, HashMap};
use std::path::Path;

use super::heap_stats::heap_section;
use super::machines::machines;
use super::packet_facts::scan;
use super::perf_stats::perf_section;
use super::setup_errors::setup_errors_of_trace;
use super::summary::{buffer_summary, human_bytes, kind_name};
use super::trace_reader::{cpu_profile, packets};
use super::{CliError, print_out, read_input};

/// A sequence's packets, bytes and packets per kind.
type SequenceTally = (u64, u64, BTreeMap<String, u64>);

/// A sequence's packets, bytes and packets per kind while counting: kinds
/// by the number of their field (named once, at the end).
type KindTally = (u64, u64, HashMap<Option<u32>, u64>);

/// Runs `stats`.
pub fn run(path: &Path) -> Result<(), CliError> {
    let mut o = String::new();
    let bytes = read_input(path)?;
    let name = path.display().to_string();
    let packets = packets(&name, &bytes)?;
    // Per (machine, sequence): sequence ids are per machine. Each packet
    // is read once, field by field (`packet_facts.rs`).
    let mut counting: HashMap<(u32, u32), KindTally> = HashMap::new();
    let mut dropped = Vec::new();
    let mut last_stats = None;
    for (i, raw) in packets.iter().enumerate() {
        let p = scan(raw);
        let e = counting.entry((p.machine, p.sequence)).or_default();
        e.0 += 1;
        e.1 += raw.len() as u64;
        *e.2.entry(p.kind).or_default() += 1;
        // A sequence's first packet says so (first_packet_on_sequence);
        // only a drop flag on a later packet marks a loss.
        if !p.first_on_sequence && p.previous_dropped {
            dropped.push((i, p.sequence, p.machine));
        }
        if let Some(s) = p.trace_stats {
            last_stats = Some(s);
        }
    }
    let mut names: HashMap<Option<u32>, String> = HashMap::new();
    let mut per_seq: BTreeMap<(u32, u32), SequenceTally> = BTreeMap::new();
    let mut per_kind: BTreeMap<String, u64> = BTreeMap::new();
    for (key, (n, b, kinds)) in counting {
        let mut named = BTreeMap::new();
        for (kind, count) in kinds {
            let name = names.entry(kind).or_insert_with(|| kind_name(kind));
            *named.entry(name.clone()).or_default() += count;
            *per_kind.entry(name.clone()).or_default() += count;
        }
        per_seq.insert(key, (n, b, named));
    }
    outln!(
        o,
        "{name}: {} packets, {}",
        packets.len(),
        human_bytes(bytes.len() as u64)
    );
    let ms = machines(&packets);
    let several = ms.len() > 1 || ms.iter().any(|m| m.id != 0);
    outln!(o);
    outln!(
        o,
        "{:<44} {:>9} {:>10}  clock exchanges",
        "machine",
        "packets",
        "bytes"
    );
    for m in &ms {
        outln!(
            o,
            "{:<44} {:>9} {:>10}  {}",
            m.label(),
            m.packets,
            human_bytes(m.bytes),
            m.clock_exchanges
        );
    }
    outln!(o);
    outln!(
        o,
        "{:<10} {:>9} {:>10}  kinds",
        "sequence",
        "packets",
        "bytes"
    );
    for ((machine, seq), (n, b, kinds)) in &per_seq {
        let kinds: Vec<String> = kinds.iter().map(|(k, n)| format!("{k} {n}")).collect();
        // Sequence ids are per machine: name the machine where there are
        // several.
        let seq = if several && *machine != 0 {
            format!("{seq}@m{machine}")
        } else {
            seq.to_string()
        };
        outln!(
            o,
            "{seq:<10} {n:>9} {:>10}  {}",
            human_bytes(*b),
            kinds.join(", ")
        );
    }
    outln!(o);
    outln!(o, "{:<32} {:>9}", "packet kind (data source)", "packets");
    for (k, n) in &per_kind {
        outln!(o, "{k:<32} {n:>9}");
    }
    outln!(o);
    match last_stats {
        Some(s) => {
            let b = buffer_summary(s);
            outln!(
                o,
                "buffers: {} of {} written, {} overwritten; chunks overwritten {}, discarded {}; \
                 packets lost in producers {}; ABI violations {}; late patches {}",
                human_bytes(b.bytes_written),
                human_bytes(b.size),
                human_bytes(b.bytes_overwritten),
                b.chunks_overwritten,
                b.chunks_discarded,
                b.writer_packet_loss,
                b.abi_violations,
                b.patches_failed
            );
        }
        None => outln!(o, "buffers: the trace holds no trace_stats packet"),
    }
    if dropped.is_empty() {
        outln!(
            o,
            "data losses: none marked (no packet says previous_packet_dropped)"
        );
    } else {
        outln!(
            o,
            "data losses: {} packets follow a loss on their sequence:",
            dropped.len()
        );
        for (i, seq, machine) in dropped.iter().take(20) {
            if *machine == 0 {
                outln!(o, "  packet {i} (sequence {seq})");
            } else {
                outln!(o, "  packet {i} (sequence {seq} of machine {machine})");
            }
        }
    }
    let errors = setup_errors_of_trace(packets.iter().map(|p| &p[..]));
    if errors.is_empty() {
        outln!(o, "setup errors: none recorded");
    } else {
        outln!(
            o,
            "setup errors: {} (what data sources could not do as configured):",
            errors.len()
        );
        for e in &errors {
            outln!(o, "  {e}");
        }
    }
    outln!(o);
    let profile = cpu_profile(&name, &bytes)?;
    for line in perf_section(&profile) {
        outln!(o, "{line}");
    }
    for line in heap_section(&profile) {
        outln!(o, "{line}");
    }
    print_out(o.as_bytes())
}
