//! Block device I/O (`FtraceEvent.block_io_start` and `block_io_done`) as
//! upstream imports it: each request is a `block_io` slice on its
//! device's `block_io` track (one per `dev`, kept as upstream declares it,
//! a track of counter kind), from its start to its done, with its sector
//! as an arg at both ends.

use super::Parser;
use super::fields::Fields;
use super::importer::{FtraceHandler, FtraceInput};
use crate::storage::args::{ArgSetBuilder, ArgValue};
use crate::storage::rows::SliceRow;
use crate::tracker::tracks::{EventType, TrackSpec};

/// `FtraceEvent.block_io_start`.
const BLOCK_IO_START: u32 = 546;
/// `FtraceEvent.block_io_done`.
const BLOCK_IO_DONE: u32 = 547;

/// The events this module handles (gathered by `ftrace_registry.rs`).
pub const FTRACE_HANDLERS: &[(u32, FtraceHandler)] =
    &[(BLOCK_IO_START, start), (BLOCK_IO_DONE, done)];

/// The device's track, made on first use.
fn track(p: &mut Parser, dev: u64) -> u32 {
    let mut spec = TrackSpec::new(None, "block_io", EventType::Counter);
    spec.dimensions = vec![("block_device", ArgValue::Uint(dev))];
    p.tracks.interned_counter(&mut p.storage, &spec)
}

/// (dev, sector) of either event (both declare them as fields 1 and 2).
fn dev_sector(e: &FtraceInput<'_>) -> (u64, u64) {
    let f = Fields::new(e.body);
    (f.uint(1).unwrap_or(0), f.uint(2).unwrap_or(0))
}

fn start(p: &mut Parser, e: &FtraceInput<'_>) {
    let (dev, sector) = dev_sector(e);
    let track_id = track(p, dev);
    let name = p.storage.strings.intern("block_io");
    let k = p.storage.strings.intern("sector");
    let mut args = ArgSetBuilder::default();
    args.add(k, k, ArgValue::Uint(sector));
    let arg_set_id = p.storage.args.add_set(&args);
    p.slices.begin(
        &mut p.storage,
        SliceRow {
            ts: e.ts,
            dur: -1,
            track_id,
            name,
            arg_set_id: arg_set_id.into(),
            ..Default::default()
        },
    );
}

fn done(p: &mut Parser, e: &FtraceInput<'_>) {
    let (dev, sector) = dev_sector(e);
    let track_id = track(p, dev);
    let Some(id) = p.slices.end(&mut p.storage, track_id, e.ts, None) else {
        p.storage.stats.incr("misplaced_end_event");
        return;
    };
    let k = p.storage.strings.intern("sector");
    let mut args = ArgSetBuilder::default();
    if let Some(set) = p
        .storage
        .slices
        .get(id as usize)
        .and_then(|s| s.arg_set_id.get())
    {
        let old: Vec<_> = p.storage.args.set(set).copied().collect();
        for a in old {
            args.add(a.flat_key, a.key, a.value);
        }
    }
    args.add(k, k, ArgValue::Uint(sector));
    let set = p.storage.args.add_set(&args);
    if let Some(s) = p.storage.slices.get_mut(id as usize) {
        s.arg_set_id = set.into();
    }
}
