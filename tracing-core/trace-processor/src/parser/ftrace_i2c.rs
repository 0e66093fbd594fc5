//! I2C transfers as slices on the thread's track, as upstream's I2C
//! tracker makes them: the first `i2c_read` or `i2c_write` of a thread
//! with no transfer open begins an `i2c-<adapter>` slice and expects the
//! transfer's messages (`msg_nr` + 1; later messages of the same transfer
//! raise the count); the `i2c_result` naming the same adapter and message
//! count ends it. A result that does not match is ignored, as is an
//! adapter number of 256 or more.

use super::Parser;
use super::fields::Fields;
use super::importer::{FtraceHandler, FtraceInput};
use crate::storage::rows::SliceRow;

/// `FtraceEvent.i2c_read` {adapter_nr 1, msg_nr 2}.
const I2C_READ: u32 = 27;
/// `FtraceEvent.i2c_write` {adapter_nr 1, msg_nr 2}.
const I2C_WRITE: u32 = 28;
/// `FtraceEvent.i2c_result` {adapter_nr 1, nr_msgs 2}.
const I2C_RESULT: u32 = 29;

/// Adapters upstream names.
const MAX_ADAPTERS: u32 = 256;

/// The events this module handles (gathered by `ftrace_registry.rs`).
pub const FTRACE_HANDLERS: &[(u32, FtraceHandler)] =
    &[(I2C_READ, enter), (I2C_WRITE, enter), (I2C_RESULT, exit)];

/// (adapter, message count) of the transfer a thread has open.
pub type OpenTransfer = (u32, u32);

fn enter(p: &mut Parser, e: &FtraceInput<'_>) {
    let f = Fields::new(e.body);
    let adapter = f.int32(1).unwrap_or(0) as u32;
    let msg = f.int32(2).unwrap_or(0) as u32;
    let utid = p.processes.get_or_create_thread(&mut p.storage, e.tid);
    if adapter >= MAX_ADAPTERS {
        return;
    }
    let track_id = p.tracks.thread_track(&mut p.storage, utid);
    match p.ftrace_state.i2c.get_mut(&utid) {
        Some(open) => open.1 = open.1.max(msg.wrapping_add(1)),
        None => {
            let name = p.storage.strings.intern(&format!("i2c-{adapter}"));
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
            p.ftrace_state
                .i2c
                .insert(utid, (adapter, msg.wrapping_add(1)));
        }
    }
}

fn exit(p: &mut Parser, e: &FtraceInput<'_>) {
    let f = Fields::new(e.body);
    let adapter = f.int32(1).unwrap_or(0) as u32;
    let msgs = f.int32(2).unwrap_or(0) as u32;
    let utid = p.processes.get_or_create_thread(&mut p.storage, e.tid);
    if adapter >= MAX_ADAPTERS || p.ftrace_state.i2c.get(&utid) != Some(&(adapter, msgs)) {
        return;
    }
    p.ftrace_state.i2c.remove(&utid);
    let track_id = p.tracks.thread_track(&mut p.storage, utid);
    p.slices.end(&mut p.storage, track_id, e.ts, None);
}
