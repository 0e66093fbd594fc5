//! A trace's CPU samples and heap dumps as the views see them: every
//! sample and dump, the trace-wide frames and mappings their stacks index,
//! the counts of what was lost or did not resolve, and the sequences'
//! timebases. Built from the trace processor's storage
//! (`from_storage.rs`); the views read it through the methods here.

use std::collections::BTreeMap;

use super::heap::{HeapCounts, HeapDump};
use super::sample::{Counts, Sample, Timebase};
use super::tables::{Frame, Mapping, SymbolLine, Tables};

/// Every sample and heap dump of a trace, and what they refer to.
#[derive(Debug)]
pub struct Profile {
    pub(crate) samples: Vec<Sample>,
    pub(crate) tables: Tables,
    pub(crate) counts: Counts,
    pub(crate) timebases: BTreeMap<u32, Timebase>,
    pub(crate) heap_dumps: Vec<HeapDump>,
    pub(crate) heap_counts: HeapCounts,
}

impl Profile {
    /// Every sample, in the trace's time order.
    pub fn samples(&self) -> &[Sample] {
        &self.samples
    }

    /// What the trace lost or could not resolve.
    pub fn counts(&self) -> &Counts {
        &self.counts
    }

    /// Every heap dump (one per process and heap and dump), in the order
    /// they closed.
    pub fn heap_dumps(&self) -> &[HeapDump] {
        &self.heap_dumps
    }

    /// What the heap dumps add up to, losses included.
    pub fn heap_counts(&self) -> &HeapCounts {
        &self.heap_counts
    }

    /// The last dump of each process and heap (the latest timestamp, the
    /// later one in the trace on a tie), processes that were not profiled
    /// (`rejected_concurrent`) left out, optionally only of process
    /// `pid`; sorted by pid and heap name. Totals are cumulative, so these
    /// hold the whole profile.
    pub fn last_heap_dumps(&self, pid: Option<u64>) -> Vec<&HeapDump> {
        let mut last: BTreeMap<(u64, &str), &HeapDump> = BTreeMap::new();
        for d in &self.heap_dumps {
            if d.flags.rejected_concurrent || pid.is_some_and(|p| p != d.pid) {
                continue;
            }
            let slot = last.entry((d.pid, d.heap_name.as_str())).or_insert(d);
            if d.ts >= slot.ts {
                *slot = d;
            }
        }
        last.into_values().collect()
    }

    /// The names along `stack` (frame indices, root first), root first,
    /// inlined functions expanded: a heap sample's stack, say.
    pub fn names_of(&self, stack: &[usize]) -> Vec<String> {
        self.tables.stack_names(stack)
    }

    /// Every frame, by the index samples' stacks use.
    pub fn frames(&self) -> &[Frame] {
        self.tables.frames()
    }

    /// Every mapping, by the index frames use.
    pub fn mappings(&self) -> &[Mapping] {
        self.tables.mappings()
    }

    /// The functions at frame `index`, innermost first (several where
    /// functions were inlined), each with its source file and line when
    /// `ModuleSymbols` gave them.
    pub fn functions(&self, index: usize) -> Vec<SymbolLine> {
        if let Some(lines) = self.tables.symbol_lines(index) {
            return lines.to_vec();
        }
        self.tables
            .function_names(index)
            .into_iter()
            .map(|function_name| SymbolLine {
                function_name,
                source_file: None,
                line: 0,
            })
            .collect()
    }

    /// The names along `sample`'s stack, root first, inlined functions
    /// expanded (the caller before the function inlined into it).
    pub fn stack_names(&self, sample: &Sample) -> Vec<String> {
        self.tables.stack_names(&sample.stack)
    }

    /// Nanoseconds of CPU time each sample stands for, when every sequence
    /// that declared a timebase declared the same `SW_CPU_CLOCK` period.
    pub fn cpu_ns_per_sample(&self) -> Option<u64> {
        let mut periods = self.timebases.values().map(Timebase::cpu_ns_per_sample);
        let first = periods.next()??;
        periods.all(|p| p == Some(first)).then_some(first)
    }
}
