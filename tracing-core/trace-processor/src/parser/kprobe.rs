//! Kernel probes (`FtraceEvent.kprobe_event`) as upstream imports them: a
//! probe named by the event begins, ends or marks an instant slice of
//! that name on the probing thread's track, by the probe's type; a probe
//! of unknown type is left out, as upstream leaves it.

use super::Parser;
use super::fields::Fields;
use super::importer::{FtraceHandler, FtraceInput};
use crate::storage::rows::SliceRow;

/// `FtraceEvent.kprobe_event`.
const KPROBE_EVENT: u32 = 542;

/// The event this module handles (gathered by `ftrace_registry.rs`).
pub const FTRACE_HANDLERS: &[(u32, FtraceHandler)] = &[(KPROBE_EVENT, kprobe)];

/// `KprobeEvent.KprobeType`'s values.
const BEGIN: u64 = 1;
const END: u64 = 2;
const INSTANT: u64 = 3;

fn kprobe(p: &mut Parser, e: &FtraceInput<'_>) {
    let f = Fields::new(e.body);
    let name = f.str(1).unwrap_or_default();
    let kind = f.uint(2).unwrap_or(0);
    let name = p.storage.strings.intern(&name);
    let utid = p.processes.get_or_create_thread(&mut p.storage, e.tid);
    let track_id = p.tracks.thread_track(&mut p.storage, utid);
    let row = |dur| SliceRow {
        ts: e.ts,
        dur,
        track_id,
        name,
        ..Default::default()
    };
    match kind {
        BEGIN => {
            p.slices.begin(&mut p.storage, row(-1));
        }
        END => {
            let _ = p.slices.end(&mut p.storage, track_id, e.ts, None);
        }
        INSTANT => {
            p.slices.begin(&mut p.storage, row(0));
        }
        _ => {}
    }
}
