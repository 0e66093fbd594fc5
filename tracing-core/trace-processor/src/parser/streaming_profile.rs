//! `StreamingProfilePacket` samples (one per packet, at its own time, as
//! the loader split them): the sequence's thread, the interned callstack,
//! one row of the generic sample table with source `chrome`, and the
//! process priority when not 0. A callstack that cannot be resolved counts
//! `stackprofile_parser_error`.

use protozero::Decoder;

use super::Parser;
use crate::column_store::strings::StrId;
use crate::sequence_state::Generation;
use crate::storage::args::ArgValue;
use crate::storage::profiling_rows::{ProfilerSampleRow, TaskContextRow};
use crate::tracker::profiler_samples::ProfilerSampleTracker;

/// Parses one sample.
pub fn parse(p: &mut Parser, bytes: &[u8], ts: i64, gen_idx: u32, generation: &Generation) {
    let d = Decoder::new(bytes);
    let iid = d.find_last(1).and_then(|f| f.as_u64().ok()).unwrap_or(0);
    let priority = d
        .find_last(3)
        .and_then(|f| f.as_i64().ok())
        .map_or(0, |v| v as i32);
    let (pid, tid) = generation.thread.unwrap_or((0, 0));
    let utid = p.processes.update_thread(&mut p.storage, tid, pid);
    let upid = p.processes.get_or_create_process(&mut p.storage, pid);
    let Some(callsite) =
        p.profiling
            .stacks
            .interned_callstack(&mut p.storage, gen_idx, generation, Some(upid), iid)
    else {
        let place = crate::storage::import_logs::LogPlace {
            ts: Some(ts),
            byte_offset: None,
        };
        p.storage.record_import_log_typed(
            "stackprofile_parser_error",
            place,
            &[("callstack_iid", ArgValue::Uint(iid))],
        );
        return;
    };
    let task = p.profiling.samples.task_context(
        &mut p.storage,
        TaskContextRow {
            upid: Some(upid),
            utid: Some(utid),
            async_context_id: None,
        },
    );
    let source = p.storage.strings.intern("chrome");
    let id = ProfilerSampleTracker::add_sample(
        &mut p.storage,
        ProfilerSampleRow {
            ts,
            source,
            task_context_id: Some(task),
            execution_context_id: None,
            callsite_id: Some(callsite),
            unwind_error: StrId::NULL,
            session_id: None,
            counter_set_id: None,
        },
    );
    if priority != 0 {
        p.storage
            .profiling
            .chrome_sample_extras
            .push((id, priority));
    }
}
