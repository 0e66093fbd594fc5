//! f2fs checkpoints (`f2fs_write_checkpoint`) as slices, as upstream's
//! ftrace parser shows them: on the writing process's `f2fs_ckpt <pid>`
//! track (`f2fs_write_checkpoint`), the start phase closes anything open
//! and begins an `F2fs Write Checkpoint` slice with the device, the reason
//! bits (`reason_int`) and their names (`reason_str`, an array: Umount,
//! Fastboot, Sync, Recovery, Discard, Trimmed, Pause, Resize; `Unknown`
//! for none); the finish phase ends it; the block-ops phase between is
//! ignored.

use super::Parser;
use super::fields::Fields;
use super::importer::{FtraceHandler, FtraceInput};
use crate::storage::args::{ArgSetBuilder, ArgValue};
use crate::storage::rows::SliceRow;
use crate::tracker::tracks::{EventType, TrackSpec};

/// `FtraceEvent.f2fs_write_checkpoint` {dev 1, reason 4, phase 5}.
const F2FS_WRITE_CHECKPOINT: u32 = 272;

/// The events this module handles (gathered by `ftrace_registry.rs`).
pub const FTRACE_HANDLERS: &[(u32, FtraceHandler)] = &[(F2FS_WRITE_CHECKPOINT, write_checkpoint)];

/// The checkpoint reasons, by bit.
const REASONS: [&str; 8] = [
    "Umount", "Fastboot", "Sync", "Recovery", "Discard", "Trimmed", "Pause", "Resize",
];

/// The checkpoint's phases.
const PHASE_START: u32 = 0;
const PHASE_FINISH_BLOCK_OPS: u32 = 1;
const PHASE_FINISH: u32 = 2;

fn write_checkpoint(p: &mut Parser, e: &FtraceInput<'_>) {
    let f = Fields::new(e.body);
    let phase = f.uint(5).unwrap_or(0) as u32;
    if phase == PHASE_FINISH_BLOCK_OPS {
        return;
    }
    let pid = e.tid as u32;
    let upid = p
        .processes
        .get_or_create_process(&mut p.storage, i64::from(pid));
    let name = format!("f2fs_ckpt {pid}");
    let mut spec = TrackSpec::new(Some(&name), "f2fs_write_checkpoint", EventType::Slice);
    spec.upid = Some(upid);
    let track_id = p.tracks.interned_counter(&mut p.storage, &spec);
    match phase {
        PHASE_START => {
            p.slices.end(&mut p.storage, track_id, e.ts, None);
            let reason = f.int32(4).unwrap_or(0);
            let mut b = ArgSetBuilder::default();
            let key = |p: &mut Parser, k: &str| p.storage.strings.intern(k);
            let dev = key(p, "dev");
            b.add(dev, dev, ArgValue::Uint(f.uint(1).unwrap_or(0)));
            let reason_int = key(p, "reason_int");
            b.add(reason_int, reason_int, ArgValue::Int(i64::from(reason)));
            let reason_str = key(p, "reason_str");
            if reason == 0 {
                let unknown = key(p, "Unknown");
                b.add(reason_str, reason_str, ArgValue::String(unknown));
            } else {
                let mut index = 0;
                for (bit, text) in REASONS.iter().enumerate() {
                    if reason & (1 << bit) != 0 {
                        let k = key(p, &format!("reason_str[{index}]"));
                        let v = key(p, text);
                        b.add(reason_str, k, ArgValue::String(v));
                        index += 1;
                    }
                }
            }
            let arg_set_id = p.storage.args.add_set(&b);
            let name = p.storage.strings.intern("F2fs Write Checkpoint");
            p.slices.begin(
                &mut p.storage,
                SliceRow {
                    ts: e.ts,
                    dur: -1,
                    track_id,
                    name,
                    arg_set_id: arg_set_id.into(),
                    ..SliceRow::default()
                },
            );
        }
        PHASE_FINISH => {
            p.slices.end(&mut p.storage, track_id, e.ts, None);
        }
        _ => {}
    }
}
