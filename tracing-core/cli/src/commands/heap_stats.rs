//! The heap dumps' section of `zerotrace stats`: per dump (one per
//! process and heap and dump, `android.heapprofd`), the process, heap,
//! sampling interval, bytes and allocations allocated, freed and live, the
//! dump's flags (buffer_overran, hit_guardrail, client_error, ...) and the
//! profiler's stats (unwinding errors, samples); then every loss: samples
//! whose callstack does not resolve (by kind), dumps that never closed,
//! missing packets, malformed messages.

use zerotrace_trace_processor::profile_view::{HeapDump, Profile};

/// How many dumps are listed (the last ones: totals are cumulative).
const MAX_LISTED: usize = 50;

/// One dump's lines.
fn dump_lines(d: &HeapDump) -> Vec<String> {
    let (allocated, freed, allocs, frees) = d.totals();
    let mut head = format!(
        "  pid {} heap {} at {} (sequence {}): interval {} B",
        d.pid,
        d.heap_label(),
        d.ts,
        d.sequence,
        d.sampling_interval_bytes
    );
    if d.orig_sampling_interval_bytes != d.sampling_interval_bytes {
        head.push_str(&format!(
            " (configured {} B)",
            d.orig_sampling_interval_bytes
        ));
    }
    head.push_str(&format!(", {} callstacks", d.samples.len()));
    if d.unfinished {
        head.push_str(", unfinished (no closing packet)");
    }
    let mut o = vec![head];
    if d.flags.rejected_concurrent {
        o.push("    not profiled: another session profiles it (rejected_concurrent)".to_owned());
        return o;
    }
    o.push(format!(
        "    allocated {allocated} B in {allocs} allocations, freed {freed} B in {frees} frees, \
         live {} B in {} allocations",
        d.unreleased(),
        allocs.saturating_sub(frees)
    ));
    let problems = d.flags.problems();
    let flags = if problems.is_empty() {
        "none".to_owned()
    } else {
        problems.join(", ")
    };
    let stats = d.stats.as_ref().map_or_else(
        || "none".to_owned(),
        |s| {
            format!(
                "unwinding_errors {}, heap_samples {}, map_reparses {}, \
                 total_unwinding_time_us {}, client_spinlock_blocked_us {}",
                s.unwinding_errors,
                s.heap_samples,
                s.map_reparses,
                s.total_unwinding_time_us,
                s.client_spinlock_blocked_us
            )
        },
    );
    o.push(format!("    flags: {flags}; stats: {stats}"));
    o
}

/// The section's lines.
pub fn heap_section(profile: &Profile) -> Vec<String> {
    let c = profile.heap_counts();
    let dumps = profile.heap_dumps();
    let any_loss = c.missing_packets > 0
        || c.malformed > 0
        || c.legacy_packets > 0
        || c.packets_without_state > 0;
    if dumps.is_empty() && !any_loss {
        return vec!["heap dumps (android.heapprofd): none".to_owned()];
    }
    let heaps = profile.last_heap_dumps(None).len();
    let mut o = vec![format!(
        "heap dumps (android.heapprofd): {} of {heaps} processes' heaps, {} callstack lines \
         (totals are cumulative: the last dump of each heap holds the whole profile)",
        c.dumps, c.samples
    )];
    if dumps.len() > MAX_LISTED {
        o.push(format!(
            "  (the last {MAX_LISTED} dumps shown, {} before them not)",
            dumps.len() - MAX_LISTED
        ));
    }
    for d in &dumps[dumps.len().saturating_sub(MAX_LISTED)..] {
        o.extend(dump_lines(d));
    }
    if c.unresolved == 0 {
        o.push("  callstacks that do not resolve: none".to_owned());
    } else {
        let kinds: Vec<String> = c
            .unresolved_by_kind
            .iter()
            .map(|(k, n)| format!("{k} {n}"))
            .collect();
        o.push(format!(
            "  callstacks that do not resolve: {} samples (by the first id that does not: {})",
            c.unresolved,
            kinds.join(", ")
        ));
    }
    for (n, what) in [
        (
            c.unfinished,
            "dumps unfinished (the trace ended, or the sequence was cleared, before their closing packet)",
        ),
        (
            c.missing_packets,
            "profile packets missing (gaps in their index)",
        ),
        (c.rejected, "processes not profiled (rejected_concurrent)"),
        (
            c.legacy_packets,
            "profile packets in the old format (tables in the packet)",
        ),
        (
            c.packets_without_state,
            "profile packets dropped, their sequence's interned state lost or never cleared",
        ),
        (c.malformed, "malformed heap messages left out"),
    ] {
        if n > 0 {
            o.push(format!("  {what}: {n}"));
        }
    }
    o
}
