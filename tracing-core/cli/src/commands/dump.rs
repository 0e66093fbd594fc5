//! `zerotrace dump`: every packet as text, every field named through the
//! upstream schema (so packets of data sources zerotrace does not model
//! print by name too), with TrackEvents' interned names resolved per
//! sequence in a comment line above them, and each CPU sample's
//! (`perf_sample`'s) callstack resolved to function names likewise. Heap
//! samples (`profile_packet`'s) are named too, though their callstacks
//! are defined after them: the trace processor reads the whole trace
//! first, and each packet's samples get a comment line each.

use std::collections::HashMap;
use std::io::Write;
use std::path::Path;

use zerotrace_protos::protos::TracePacketDecoder;

use super::machines::{machine_of, machines};
use super::trace_reader::{Sequences, cpu_profile, packets};
use super::{CliError, read_input};
use crate::{schema, text_config};
use zerotrace_trace_processor::profile_view::{
    HeapSample, Profile, Sample, cpu_mode_name, unwind_error_name,
};

/// The names a TrackEvent refers to by iid, resolved.
fn resolved(p: &TracePacketDecoder<'_>, seqs: &mut Sequences) -> Option<String> {
    let state = seqs.update(p);
    let e = p.track_event()?;
    let mut parts = Vec::new();
    if let Some(n) = e.name_iid() {
        let name = state.names.get(&n).map_or("?", String::as_str);
        parts.push(format!("name_iid {n} = {name:?}"));
    }
    let cats: Vec<String> = e
        .category_iids()
        .map(|c| {
            let name = state.categories.get(&c).map_or("?", String::as_str);
            format!("{c} = {name:?}")
        })
        .collect();
    if !cats.is_empty() {
        parts.push(format!("category_iids {}", cats.join(", ")));
    }
    let anns: Vec<String> = e
        .debug_annotations()
        .filter_map(|a| a.name_iid())
        .map(|i| {
            let name = state.annotation_names.get(&i).map_or("?", String::as_str);
            format!("{i} = {name:?}")
        })
        .collect();
    if !anns.is_empty() {
        parts.push(format!("annotation name_iids {}", anns.join(", ")));
    }
    (!parts.is_empty()).then(|| parts.join("; "))
}

/// A CPU sample's comment line: who, where, and its callstack's names
/// root first.
fn sample_comment(s: &Sample, profile: &Profile) -> String {
    let mut line = format!(
        "perf_sample: pid {} tid {}{} {}",
        s.pid,
        s.tid,
        s.cpu.map(|c| format!(" cpu {c}")).unwrap_or_default(),
        cpu_mode_name(s.cpu_mode)
    );
    if let Some(e) = s.unwind_error {
        line.push_str(&format!(", {}", unwind_error_name(e)));
    }
    match (&s.unresolved, s.stack.is_empty()) {
        (Some(u), _) => line.push_str(&format!("; callstack does not resolve: {u}")),
        (None, true) => line.push_str("; no callstack"),
        (None, false) => {
            let names = profile.stack_names(s);
            line.push_str(&format!(
                "; callstack ({} frames, root first): {}",
                names.len(),
                names.join(" > ")
            ));
        }
    }
    line
}

/// A heap sample's comment line: its values and its callstack's names
/// root first.
fn heap_comment(s: &HeapSample, profile: &Profile) -> String {
    let mut line = format!(
        "heap sample: callstack_id {}, allocated {} freed {} ({} allocations, {} frees)",
        s.callstack_iid, s.allocated, s.freed, s.alloc_count, s.free_count
    );
    if let Some(m) = s.self_max {
        line.push_str(&format!(", {m} at the peak"));
    }
    match &s.unresolved {
        Some(u) => line.push_str(&format!("; callstack does not resolve: {u}")),
        None => {
            let names = profile.names_of(&s.stack);
            line.push_str(&format!(
                "; callstack ({} frames, root first): {}",
                names.len(),
                names.join(" > ")
            ));
        }
    }
    line
}

/// Runs `dump`.
pub fn run(path: &Path) -> Result<(), CliError> {
    let bytes = read_input(path)?;
    let name = path.display().to_string();
    let packets = packets(&name, &bytes)?;
    let mut seqs = Sequences::default();
    // The trace processor reads the whole trace first: symbols a
    // symbolizer appended at the end name the samples before them, and
    // heap samples are named once the definitions after them are read.
    // Samples by the packet that holds them.
    let profile = cpu_profile(&name, &bytes)?;
    let mut cpu: HashMap<u64, Vec<&Sample>> = HashMap::new();
    for s in profile.samples() {
        cpu.entry(s.packet).or_default().push(s);
    }
    let mut heap: HashMap<u64, Vec<&HeapSample>> = HashMap::new();
    for d in profile.heap_dumps() {
        for s in &d.samples {
            heap.entry(s.packet).or_default().push(s);
        }
    }
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    // A trace of several machines (recorded through relays) names them
    // first; each packet then says which machine it came from.
    let ms = machines(&packets);
    if ms.iter().any(|m| m.id != 0) {
        let mut head = String::from("# machines:\n");
        for m in &ms {
            head.push_str(&format!("#   {} ({} packets)\n", m.label(), m.packets));
        }
        if out.write_all(head.as_bytes()).is_err() {
            return Ok(());
        }
    }
    for (i, raw) in packets.iter().enumerate() {
        let raw: &[u8] = raw;
        let p = TracePacketDecoder::new(raw);
        let seq = p.trusted_packet_sequence_id().unwrap_or(0);
        let text =
            text_config::to_text(schema::trace_packet(), raw).map_err(|e| CliError::BadTrace {
                path: name.clone(),
                reason: format!("packet {i}: {e}"),
            })?;
        let machine = match machine_of(raw) {
            0 => String::new(),
            m => format!(", machine {m}"),
        };
        let mut block = format!(
            "packet {i} (sequence {seq}{machine}, {} bytes) {{\n",
            raw.len()
        );
        if let Some(r) = resolved(&p, &mut seqs) {
            block.push_str(&format!("  # {r}\n"));
        }
        for s in cpu.get(&(i as u64)).into_iter().flatten() {
            block.push_str(&format!("  # {}\n", sample_comment(s, &profile)));
        }
        for s in heap.get(&(i as u64)).into_iter().flatten() {
            block.push_str(&format!("  # {}\n", heap_comment(s, &profile)));
        }
        for line in text.lines() {
            block.push_str("  ");
            block.push_str(line);
            block.push('\n');
        }
        block.push_str("}\n");
        if out.write_all(block.as_bytes()).is_err() {
            // The reader went away (e.g. `| head`): stop quietly.
            return Ok(());
        }
    }
    Ok(())
}
