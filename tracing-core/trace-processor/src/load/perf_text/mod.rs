//! `perf script` text (and simpleperf's text output) as Perfetto imports
//! it: each sample is a sample line (`sample_line.rs`) followed by its
//! frames, leaf first, one per line (`address symbol+offset (mapping)`),
//! and ended by an empty line. Every frame is a frame named by its symbol
//! (the `+offset` cut off) on a mapping named by what the parentheses hold;
//! the frames make a callsite, root first (the root at depth 1, as
//! upstream numbers them), and the sample a `perf_text` profiler sample on
//! its thread (put in its process when the line gives a pid, and named by
//! the command). Times are the monotonic clock's, in the trace's order.
//!
//! Read line by line as the bytes arrive: only the open line and the open
//! sample's frames are held, and each sample as a few ids until the trace
//! ends, when they are imported in time order. A sample without frames is
//! counted (`perf_text_importer_sample_no_frames`), as upstream counts it;
//! a line that reads as neither a sample line nor a frame is counted
//! (`perf_text_malformed_line`) and its sample dropped, where upstream
//! stops reading. A last sample without its ending empty line is not
//! read, as upstream leaves it.

pub mod sample_line;

use crate::column_store::strings::StrId;
use crate::error::TraceError;
use crate::parser::Parser;
use crate::storage::profiling_rows::{ProfilerSampleRow, TaskContextRow};
use crate::tracker::process::NamePriority;
use crate::tracker::profiler_samples::ProfilerSampleTracker;

use super::dummy_frames::DummyFrames;
use super::reader::FormatReader;
use super::text_lines::{Line, LineSplitter};

pub use sample_line::sniff;

/// The stat of a line that reads as nothing.
const MALFORMED: &str = "perf_text_malformed_line";

/// A sample read, kept until the trace ends.
#[derive(Debug, Clone, Copy)]
struct Event {
    ts: i64,
    tid: u32,
    pid: Option<u32>,
    comm: StrId,
    callsite: u32,
}

/// Where the reader is.
#[derive(Debug, Default)]
enum State {
    /// Between samples: the next line that is not empty is a sample line.
    #[default]
    Between,
    /// Inside a sample: its line, and its frames so far (leaf first).
    Sample {
        line: sample_line::SampleLine,
        frames: Vec<u32>,
    },
    /// Inside a sample that is dropped, up to its empty line.
    Dropped,
}

/// The streaming reader of `perf script` text.
#[derive(Debug, Default)]
pub struct PerfTextLoad {
    lines: LineSplitter,
    state: State,
    frames: DummyFrames,
    events: Vec<Event>,
}

/// Trims the white space upstream trims (ASCII only).
fn trim(s: &str) -> &str {
    s.trim_matches(|c| matches!(c, ' ' | '\t' | '\n' | '\x0b' | '\x0c' | '\r'))
}

/// A frame line: (symbol without its offset, mapping name).
fn frame_line(frame: &str) -> Option<(&str, &str)> {
    let symbol_start = frame.find(' ')?;
    let open = frame.rfind('(')?;
    if !frame.ends_with(')') {
        return None;
    }
    let mapping = frame.get(open + 1..frame.len() - 1)?;
    // A `(` before the first space leaves the symbol running to the end,
    // as upstream's slice of a reversed range does.
    let symbol_end = if open >= symbol_start {
        open
    } else {
        frame.len()
    };
    let with_offset = trim(frame.get(symbol_start..symbol_end)?);
    let symbol = match with_offset.rfind('+') {
        Some(plus) => with_offset.get(..plus)?,
        None => with_offset,
    };
    Some((symbol, mapping))
}

impl PerfTextLoad {
    /// Reads one line.
    fn line(&mut self, p: &mut Parser, line: Line<'_>) {
        p.storage.work.step(1);
        let text = match line {
            Line::Text(bytes) => String::from_utf8_lossy(bytes),
            Line::TooLong => {
                p.storage.stats.incr(MALFORMED);
                if !matches!(self.state, State::Between) {
                    self.state = State::Dropped;
                }
                return;
            }
        };
        let trimmed = trim(&text);
        match &mut self.state {
            State::Between => {
                if trimmed.is_empty() {
                    return;
                }
                self.state = match sample_line::parse(&text) {
                    Some(line) => State::Sample {
                        line,
                        frames: Vec::new(),
                    },
                    None => {
                        p.storage.stats.incr(MALFORMED);
                        State::Dropped
                    }
                };
            }
            State::Sample { frames, .. } => {
                if trimmed.is_empty() {
                    self.end_sample(p);
                    return;
                }
                match frame_line(trimmed) {
                    Some((symbol, mapping)) => {
                        let m = self.frames.mapping(p, mapping);
                        frames.push(self.frames.frame(p, m, symbol));
                    }
                    None => {
                        p.storage.stats.incr(MALFORMED);
                        self.state = State::Dropped;
                    }
                }
            }
            State::Dropped => {
                if trimmed.is_empty() {
                    self.state = State::Between;
                }
            }
        }
    }

    /// The open sample's empty line: the sample is kept with its callsite.
    fn end_sample(&mut self, p: &mut Parser) {
        let State::Sample { line, frames } = std::mem::take(&mut self.state) else {
            return;
        };
        if frames.is_empty() {
            p.storage.stats.incr("perf_text_importer_sample_no_frames");
            return;
        }
        let mut callsite = None;
        for (i, frame) in frames.iter().rev().enumerate() {
            let depth = u32::try_from(i + 1).unwrap_or(u32::MAX);
            callsite = Some(p.profiling.stacks.intern_callsite(
                &mut p.storage,
                callsite,
                *frame,
                depth,
            ));
        }
        let Some(callsite) = callsite else {
            return;
        };
        let comm = if line.comm.is_empty() {
            StrId::NULL
        } else {
            p.storage.strings.intern(&line.comm)
        };
        self.events.push(Event {
            ts: line.ts,
            tid: line.tid,
            pid: line.pid,
            comm,
            callsite,
        });
    }

    /// A kept sample into the tables.
    fn import(p: &mut Parser, e: &Event, source: StrId) {
        let tid = i64::from(e.tid);
        let utid = match e.pid {
            Some(pid) => p
                .processes
                .update_thread(&mut p.storage, tid, i64::from(pid)),
            None => p.processes.get_or_create_thread(&mut p.storage, tid),
        };
        let upid = e.pid.map(|pid| {
            p.processes
                .get_or_create_process(&mut p.storage, i64::from(pid))
        });
        let task = p.profiling.samples.task_context(
            &mut p.storage,
            TaskContextRow {
                upid,
                utid: Some(utid),
                async_context_id: None,
            },
        );
        if !e.comm.is_null() {
            name_thread(p, utid, e.comm);
        }
        let row = ProfilerSampleTracker::add_sample(
            &mut p.storage,
            ProfilerSampleRow {
                ts: e.ts,
                source,
                task_context_id: Some(task),
                execution_context_id: None,
                callsite_id: Some(e.callsite),
                unwind_error: StrId::NULL,
                session_id: None,
                counter_set_id: None,
            },
        );
        super::gecko::profile_facts(p, row, e.callsite);
    }
}

/// Names a thread, and its process when it is the process's main thread.
pub(crate) fn name_thread(p: &mut Parser, utid: u32, name: StrId) {
    p.processes
        .set_thread_name(&mut p.storage, utid, name, NamePriority::Other);
    let Some(thread) = p.storage.threads.get(utid as usize) else {
        return;
    };
    let (tid, upid) = (thread.tid, thread.upid);
    let Some(upid) = upid else {
        return;
    };
    if p.storage.processes.get(upid as usize).map(|r| r.pid) == Some(tid) {
        p.processes
            .set_process_name(&mut p.storage, upid, name, NamePriority::Ftrace);
    }
}

impl FormatReader for PerfTextLoad {
    fn push(&mut self, p: &mut Parser, data: &[u8]) -> Result<(), TraceError> {
        let mut lines = std::mem::take(&mut self.lines);
        lines.push(data, |l| self.line(p, l));
        self.lines = lines;
        Ok(())
    }

    fn held_bytes(&self) -> u64 {
        let open = match &self.state {
            State::Sample { frames, line } => frames.len() * 4 + line.comm.len(),
            _ => 0,
        };
        let events = self.events.len() * std::mem::size_of::<Event>();
        self.lines
            .held_bytes()
            .saturating_add(self.frames.held_bytes())
            .saturating_add((open + events) as u64)
    }

    fn finish(mut self: Box<Self>, p: &mut Parser) -> Result<(), TraceError> {
        // A last line without a line break is read; a sample it leaves
        // open (no empty line after it) is not.
        let mut lines = std::mem::take(&mut self.lines);
        lines.finish(|l| self.line(p, l));
        // Stable: equal times keep the file's order.
        self.events.sort_by_key(|e| e.ts);
        let source = p.storage.strings.intern("perf_text");
        for e in &self.events {
            p.storage.work.step(1);
            Self::import(p, e, source);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests;
