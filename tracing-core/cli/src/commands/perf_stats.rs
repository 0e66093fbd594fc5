//! The CPU samples' section of `zerotrace stats`: how many samples the
//! `linux.perf` data source took, of which processes and threads (the
//! busiest first), and everything that went missing: kernel records lost,
//! samples the recorder skipped (by reason), stacks that did not unwind
//! (by error), callstacks whose interned ids do not resolve (by kind),
//! and samples dropped because their sequence's interned state was lost.

use std::collections::HashMap;

use zerotrace_trace_processor::profile_view::Profile;

/// How many processes and threads are listed.
const TOP: usize = 10;

/// `n` of `total` as a percentage.
fn percent(n: u64, total: u64) -> f64 {
    if total == 0 {
        0.0
    } else {
        n as f64 * 100.0 / total as f64
    }
}

/// `a 3, b 1` of a name → count list.
fn listed<'a>(items: impl IntoIterator<Item = (&'a str, &'a u64)>) -> String {
    items
        .into_iter()
        .map(|(k, n)| format!("{k} {n}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The section's lines.
pub fn perf_section(profile: &Profile) -> Vec<String> {
    let c = profile.counts();
    let any_loss = c.kernel_records_lost > 0
        || !c.skipped.is_empty()
        || c.packets_without_state > 0
        || !c.producer_events.is_empty();
    if c.samples == 0 && !any_loss {
        return vec!["cpu samples (linux.perf): none".to_owned()];
    }
    let mut o = Vec::new();
    let mut head = format!("cpu samples (linux.perf): {}", c.samples);
    if c.without_callstack > 0 {
        head.push_str(&format!(", {} without a callstack", c.without_callstack));
    }
    if c.unresolved > 0 {
        let kinds = c.unresolved_by_kind.iter().map(|(k, n)| (*k, n));
        head.push_str(&format!(
            ", {} whose callstack does not resolve (by the first id that does not: {})",
            c.unresolved,
            listed(kinds)
        ));
    }
    o.push(head);
    let mut per_pid: HashMap<u32, u64> = HashMap::new();
    let mut per_tid: HashMap<(u32, u32), u64> = HashMap::new();
    for s in profile.samples() {
        *per_pid.entry(s.pid).or_default() += 1;
        *per_tid.entry((s.pid, s.tid)).or_default() += 1;
    }
    let mut pids: Vec<(u32, u64)> = per_pid.into_iter().collect();
    pids.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    let mut tids: Vec<((u32, u32), u64)> = per_tid.into_iter().collect();
    tids.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    if !pids.is_empty() {
        o.push(format!(
            "  {:<24} {:>9} {:>7}   ({} processes{})",
            "process",
            "samples",
            "share",
            pids.len(),
            if pids.len() > TOP {
                ", the busiest shown"
            } else {
                ""
            }
        ));
        for (pid, n) in pids.iter().take(TOP) {
            o.push(format!(
                "  {:<24} {n:>9} {:>6.1}%",
                format!("pid {pid}"),
                percent(*n, c.samples)
            ));
        }
        o.push(format!(
            "  {:<24} {:>9} {:>7}   ({} threads{})",
            "thread",
            "samples",
            "share",
            tids.len(),
            if tids.len() > TOP {
                ", the busiest shown"
            } else {
                ""
            }
        ));
        for ((pid, tid), n) in tids.iter().take(TOP) {
            o.push(format!(
                "  {:<24} {n:>9} {:>6.1}%",
                format!("tid {tid} (pid {pid})"),
                percent(*n, c.samples)
            ));
        }
    }
    o.push(format!("  kernel records lost: {}", c.kernel_records_lost));
    let skipped: u64 = c.skipped.values().sum();
    if skipped == 0 {
        o.push("  skipped samples: none".to_owned());
    } else {
        let reasons = c.skipped.iter().map(|(k, n)| (k.as_str(), n));
        o.push(format!(
            "  skipped samples: {skipped} ({})",
            listed(reasons)
        ));
    }
    let unwind: u64 = c.unwind_errors.values().sum();
    if unwind == 0 {
        o.push("  unwind errors: none".to_owned());
    } else {
        let kinds = c.unwind_errors.iter().map(|(k, n)| (k.as_str(), n));
        o.push(format!("  unwind errors: {unwind} ({})", listed(kinds)));
    }
    if c.packets_without_state > 0 {
        o.push(format!(
            "  samples dropped, their sequence's interned state lost or never cleared: {}",
            c.packets_without_state
        ));
    }
    if !c.producer_events.is_empty() {
        let reasons = c.producer_events.iter().map(|(k, n)| (k.as_str(), n));
        o.push(format!("  data source stopped: {}", listed(reasons)));
    }
    if c.malformed > 0 {
        o.push(format!("  malformed entries left out: {}", c.malformed));
    }
    o
}
