//! Folded stacks, the input of flamegraph tools: one line per distinct
//! callstack, its frames root first joined by `;`, then a space and how
//! many samples had it (`main;work;leaf 12`). Samples are chosen by
//! process, thread and time ([`Filter`]); samples without a resolved
//! callstack have no line and are counted apart. Heap dumps fold the same
//! way ([`heap_folded`]), each line's number a [`HeapValue`] of the
//! last dump of each process and heap.

use std::collections::BTreeMap;

use super::heap::HeapValue;
use super::profile::Profile;
use super::sample::Sample;

/// Which samples to keep; `None` keeps all.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Filter {
    /// Only this process.
    pub pid: Option<u32>,
    /// Only this thread.
    pub tid: Option<u32>,
    /// Only samples at or after this timestamp (ns, the samples' clock).
    pub from: Option<u64>,
    /// Only samples at or before this timestamp.
    pub to: Option<u64>,
}

impl Filter {
    /// Whether `s` is kept.
    pub fn accepts(&self, s: &Sample) -> bool {
        self.pid.is_none_or(|p| p == s.pid)
            && self.tid.is_none_or(|t| t == s.tid)
            && self.from.is_none_or(|f| s.ts >= f)
            && self.to.is_none_or(|t| s.ts <= t)
    }
}

/// The folded stacks of the samples a filter keeps.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Folded {
    /// Stack (`root;...;leaf`) → samples, sorted by stack.
    pub stacks: BTreeMap<String, u64>,
    /// Kept samples without a resolved callstack (no line).
    pub without_stack: u64,
}

impl Folded {
    /// The lines, `stack count` each, in order.
    pub fn lines(&self) -> Vec<String> {
        self.stacks
            .iter()
            .map(|(s, n)| format!("{s} {n}"))
            .collect()
    }

    /// Samples with a line.
    pub fn samples(&self) -> u64 {
        self.stacks.values().sum()
    }
}

/// A frame name made safe for a folded line: `;` separates frames and a
/// line ends at a newline, so both become something else.
fn clean(name: &str) -> String {
    name.replace(';', ":").replace(['\n', '\r'], " ")
}

/// Folds the samples of `profile` that `filter` keeps.
pub fn folded(profile: &Profile, filter: &Filter) -> Folded {
    let mut out = Folded::default();
    for s in profile.samples().iter().filter(|s| filter.accepts(s)) {
        if s.stack.is_empty() {
            out.without_stack += 1;
            continue;
        }
        let names: Vec<String> = profile.stack_names(s).iter().map(|n| clean(n)).collect();
        let e = out.stacks.entry(names.join(";")).or_default();
        *e = e.saturating_add(s.weight);
    }
    out
}

/// Folds the last heap dump of each process and heap (of process `pid`
/// only, if given): each callstack's `value`, summed over the dumps;
/// stacks whose value is 0 have no line. `without_stack` counts the
/// samples whose callstack does not resolve and whose value is not 0.
pub fn heap_folded(profile: &Profile, pid: Option<u64>, value: HeapValue) -> Folded {
    let mut out = Folded::default();
    for d in profile.last_heap_dumps(pid) {
        for s in &d.samples {
            let v = value.of(s);
            if v == 0 {
                continue;
            }
            if s.stack.is_empty() {
                out.without_stack += 1;
                continue;
            }
            let names: Vec<String> = profile
                .names_of(&s.stack)
                .iter()
                .map(|n| clean(n))
                .collect();
            let e = out.stacks.entry(names.join(";")).or_default();
            *e = e.saturating_add(v);
        }
    }
    out
}
