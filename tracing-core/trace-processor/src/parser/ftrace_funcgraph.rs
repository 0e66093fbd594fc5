//! The function graph tracer (`funcgraph_entry`/`funcgraph_exit`): each
//! traced kernel function is a slice named by its symbol (interned by the
//! recorder, else its address in hex), on the thread's `Funcgraph` track
//! (`thread_funcgraph`); the idle tasks, all tid 0, get a track per CPU
//! instead (`swapper<cpu> -funcgraph`, `cpu_funcgraph`), since several run
//! at once.

use super::Parser;
use super::fields::Fields;
use super::importer::{FtraceHandler, FtraceInput};
use crate::storage::args::ArgValue;
use crate::storage::rows::SliceRow;
use crate::tracker::tracks::{EventType, TrackSpec};

/// `FtraceEvent.funcgraph_entry` {func 2}.
const FUNCGRAPH_ENTRY: u32 = 437;
/// `FtraceEvent.funcgraph_exit`.
const FUNCGRAPH_EXIT: u32 = 438;

/// The events this module handles (gathered by `ftrace_registry.rs`).
pub const FTRACE_HANDLERS: &[(u32, FtraceHandler)] =
    &[(FUNCGRAPH_ENTRY, entry), (FUNCGRAPH_EXIT, exit)];

fn track(p: &mut Parser, e: &FtraceInput<'_>) -> u32 {
    if e.tid != 0 {
        let utid = p.processes.get_or_create_thread(&mut p.storage, e.tid);
        let mut spec = TrackSpec::new(Some("Funcgraph"), "thread_funcgraph", EventType::Slice);
        spec.utid = Some(utid);
        p.tracks.interned_counter(&mut p.storage, &spec)
    } else {
        let name = format!("swapper{} -funcgraph", e.cpu);
        let mut spec = TrackSpec::new(Some(&name), "cpu_funcgraph", EventType::Slice);
        spec.dimensions = vec![("cpu", ArgValue::Int(i64::from(e.cpu)))];
        p.tracks.interned_counter(&mut p.storage, &spec)
    }
}

fn entry(p: &mut Parser, e: &FtraceInput<'_>) {
    let func = Fields::new(e.body).uint(2).unwrap_or(0);
    let name = match super::sched::kernel_symbol(p, e.generation, func) {
        Some(s) => s,
        None => p.storage.strings.intern(&format!("{func:#x}")),
    };
    let track_id = track(p, e);
    p.slices.begin(
        &mut p.storage,
        SliceRow {
            ts: e.ts,
            dur: -1,
            track_id,
            name,
            ..SliceRow::default()
        },
    );
}

fn exit(p: &mut Parser, e: &FtraceInput<'_>) {
    let track_id = track(p, e);
    p.slices.end(&mut p.storage, track_id, e.ts, None);
}
