//! Instruments samples into the tables, in time order (on the trace's
//! timeline, see `clock_sync.rs`), as upstream's row
//! parser writes them: the thread (in its process, both named by their
//! `fmt`), a callsite of the backtrace root first (root at depth 0), and
//! an `instruments` profiler sample on the thread and its process, on the
//! sampled core.
//!
//! A frame's pc is relative to its binary's load address, less one for
//! every frame but the leaf (a return address points past its call). Its
//! mapping is the process's mapping covering that pc, if one does;
//! otherwise its binary's, made on first use (one per binary, covering
//! the load address up to the highest frame address seen, the load
//! address as its offset, the UUID as its build id, registered in the
//! process where first used); a frame without a binary is on the
//! process's unnamed mapping of every address. A sample without a thread,
//! a thread without a process and a backtrace's unknown frame are counted
//! (`instruments_row_missing_*`). A core number past upstream's 4096 CPUs
//! per machine leaves the sample without a CPU (upstream aborts).
//!
//! A backtrace many rows point back to is walked once per process (again
//! only when a mapping was added to the process since): its callsite and
//! missing frames are remembered, so a row costs its own bytes' work.

use std::collections::BTreeMap;

use crate::column_store::strings::StrId;
use crate::hash::HashMap;
use crate::parser::Parser;
use crate::storage::profiling_rows::{ExecutionContextRow, ProfilerSampleRow, TaskContextRow};
use crate::tracker::process::NamePriority;
use crate::tracker::profiler_samples::{ProfilerSampleTracker, ucpu};
use crate::tracker::stack_profile::MappingParams;

use super::rows::{Row, RowData};

/// Upstream's CPUs per machine.
const MAX_CPUS: u32 = 4096;

/// The user mappings made by this import, by process: start → (end, id).
#[derive(Debug, Default)]
struct UserMappings {
    by_process: HashMap<u32, BTreeMap<u64, (u64, u32)>>,
}

impl UserMappings {
    /// The mapping of `upid` covering `addr`.
    fn find(&self, upid: u32, addr: u64) -> Option<u32> {
        let ranges = self.by_process.get(&upid)?;
        let (_, &(end, id)) = ranges.range(..=addr).next_back()?;
        (addr < end).then_some(id)
    }

    /// Adds `[start, end)` of `upid`: what it overlaps of earlier mappings
    /// is cut from them.
    fn insert(&mut self, upid: u32, start: u64, end: u64, id: u32) {
        if start >= end {
            return;
        }
        let ranges = self.by_process.entry(upid).or_default();
        let overlapping: Vec<(u64, (u64, u32))> = ranges
            .range(..end)
            .rev()
            .take_while(|(_, (e, _))| *e > start)
            .map(|(s, v)| (*s, *v))
            .collect();
        for (s, (e, m)) in overlapping {
            ranges.remove(&s);
            if s < start {
                ranges.insert(s, (start, m));
            }
            if e > end {
                ranges.insert(end, (e, m));
            }
        }
        ranges.insert(start, (end, id));
    }
}

/// A backtrace walked for a process: its leaf callsite, the frames it
/// misses, and the process's mapping generation then.
#[derive(Debug, Clone, Copy)]
struct Walked {
    callsite: Option<u32>,
    missing: i64,
    generation: u64,
}

/// The import's state.
#[derive(Debug, Default)]
struct Import {
    user: UserMappings,
    by_binary: HashMap<u32, u32>,
    dummy: HashMap<u32, u32>,
    /// Mappings added to each process so far.
    generation: HashMap<u32, u64>,
    walked: HashMap<(u32, u32), Walked>,
}

/// Writes every sample of `data` into the tables.
pub fn import(p: &mut Parser, data: &mut RowData) {
    let mut rows = std::mem::take(&mut data.rows);
    for r in &mut rows {
        r.ts = data.clock.trace_time(p, r.ts);
    }
    // Stable: equal times keep the file's order.
    rows.sort_by_key(|r| r.ts);
    let source = p.storage.strings.intern("instruments");
    let mut st = Import::default();
    for row in &rows {
        p.storage.work.step(1);
        st.row(p, data, row, source);
    }
}

impl Import {
    fn row(&mut self, p: &mut Parser, data: &RowData, row: &Row, source: StrId) {
        let Some(thread) = data.threads.get(row.thread).copied() else {
            p.storage.stats.incr("instruments_row_missing_thread");
            return;
        };
        let Some(process) = data.processes.get(thread.process).copied() else {
            p.storage.stats.incr("instruments_row_missing_process");
            return;
        };
        // Upstream reads them as ints and keeps them as unsigned.
        let tid = i64::from(thread.tid as u32);
        let pid = i64::from(process.pid as u32);
        let utid = p.processes.update_thread(&mut p.storage, tid, pid);
        let upid = p.processes.get_or_create_process(&mut p.storage, pid);
        p.processes
            .set_thread_name(&mut p.storage, utid, thread.fmt, NamePriority::Other);
        p.processes
            .set_process_name(&mut p.storage, upid, process.fmt, NamePriority::Other);
        let Some(frames) = data.backtraces.get(row.backtrace) else {
            p.storage.stats.incr("instruments_row_missing_backtrace");
            return;
        };
        let generation = self.generation.get(&upid).copied().unwrap_or(0);
        let walked = match self.walked.get(&(row.backtrace, upid)) {
            Some(w) if w.generation == generation => *w,
            _ => {
                let w = self.walk(p, data, frames, upid);
                let generation = self.generation.get(&upid).copied().unwrap_or(0);
                let w = Walked { generation, ..w };
                self.walked.insert((row.backtrace, upid), w);
                w
            }
        };
        if walked.missing > 0 {
            p.storage
                .stats
                .add("instruments_row_missing_frame", walked.missing);
        }
        let callsite = walked.callsite;
        self.sample(p, row, source, utid, upid, callsite);
    }

    /// The callsite of a backtrace's frames (leaf first) in `upid`, root
    /// at depth 0.
    fn walk(&mut self, p: &mut Parser, data: &RowData, frames: &[u32], upid: u32) -> Walked {
        let mut callsite = None;
        let mut missing = 0i64;
        let mut depth = 0u32;
        for (i, &frame_id) in frames.iter().enumerate().rev() {
            p.storage.work.step(1);
            let Some(frame) = data.frames.get(frame_id) else {
                missing += 1;
                continue;
            };
            let binary = data.binaries.get(frame.binary);
            let mut pc = frame.addr as u64;
            if let Some(b) = binary {
                pc = pc.wrapping_sub(b.load_addr as u64);
            }
            if pc != 0 && i != 0 {
                pc -= 1;
            }
            let mapping = match self.user.find(upid, pc) {
                Some(m) => m,
                None => match binary {
                    None => self.dummy_mapping(p, upid),
                    Some(b) => match self.by_binary.get(&frame.binary) {
                        Some(m) => *m,
                        None => {
                            let (start, end) = (b.load_addr as u64, b.max_addr as u64);
                            let m = p.profiling.stacks.create_mapping(
                                &mut p.storage,
                                &MappingParams {
                                    build_id: b.uuid.clone(),
                                    exact_offset: start,
                                    start,
                                    end,
                                    name: b.path.clone(),
                                    ..MappingParams::default()
                                },
                            );
                            self.user.insert(upid, start, end, m);
                            *self.generation.entry(upid).or_default() += 1;
                            self.by_binary.insert(frame.binary, m);
                            m
                        }
                    },
                },
            };
            // Every mapping here has its start as its offset (or both 0):
            // the relative pc is the pc.
            let frame_row = p.profiling.stacks.intern_frame(
                &mut p.storage,
                mapping,
                pc,
                &frame.name,
                None,
                None,
            );
            callsite = Some(p.profiling.stacks.intern_callsite(
                &mut p.storage,
                callsite,
                frame_row,
                depth,
            ));
            depth = depth.saturating_add(1);
        }
        Walked {
            callsite,
            missing,
            generation: 0,
        }
    }

    /// The sample row.
    fn sample(
        &mut self,
        p: &mut Parser,
        row: &Row,
        source: StrId,
        utid: u32,
        upid: u32,
        callsite: Option<u32>,
    ) {
        let task = p.profiling.samples.task_context(
            &mut p.storage,
            TaskContextRow {
                upid: Some(upid),
                utid: Some(utid),
                async_context_id: None,
            },
        );
        let cpu = (row.core < MAX_CPUS).then(|| ucpu(&mut p.storage, row.core));
        let execution = cpu.map(|ucpu| {
            p.profiling.samples.execution_context(
                &mut p.storage,
                ExecutionContextRow {
                    ucpu: Some(ucpu),
                    cpu_mode: StrId::NULL,
                },
            )
        });
        let sample = ProfilerSampleTracker::add_sample(
            &mut p.storage,
            ProfilerSampleRow {
                ts: row.ts,
                source,
                task_context_id: Some(task),
                execution_context_id: execution,
                callsite_id: callsite,
                unwind_error: StrId::NULL,
                session_id: None,
                counter_set_id: None,
            },
        );
        if let Some(c) = callsite {
            crate::load::gecko::profile_facts(p, sample, c);
        }
    }

    /// The process's mapping of frames without a binary.
    fn dummy_mapping(&mut self, p: &mut Parser, upid: u32) -> u32 {
        if let Some(m) = self.dummy.get(&upid) {
            return *m;
        }
        let m = p.profiling.stacks.create_mapping(
            &mut p.storage,
            &MappingParams {
                end: u64::MAX,
                ..MappingParams::default()
            },
        );
        self.dummy.insert(upid, m);
        m
    }
}

#[cfg(test)]
mod tests {
    use super::UserMappings;

    #[test]
    fn a_new_mapping_cuts_what_it_overlaps() {
        let mut u = UserMappings::default();
        u.insert(1, 100, 200, 7);
        u.insert(1, 150, 160, 8);
        u.insert(1, 300, 300, 9);
        assert_eq!(u.find(1, 120), Some(7));
        assert_eq!(u.find(1, 155), Some(8));
        assert_eq!(u.find(1, 170), Some(7));
        assert_eq!(u.find(1, 200), None);
        assert_eq!(u.find(1, 300), None);
        assert_eq!(u.find(2, 120), None);
        u.insert(1, 0, 1000, 10);
        assert_eq!(u.find(1, 155), Some(10));
        assert_eq!(u.find(1, 120), Some(10));
    }
}
