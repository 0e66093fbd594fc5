//! Windows ETW events (`TracePacket.etw_events`), as upstream's ETW
//! importer reads them: the loader queues each `EtwTraceEvent` of a bundle
//! at its own time (`load/etw_queue.rs`), and each is imported here by the
//! member it carries: context switches and ready threads into `sched_slice`
//! and `thread_state` (`sched.rs`), memory page counts into counters
//! (`sched.rs`), file I/O operations into slices on per-thread
//! `etw_fileio` tracks (`file_io.rs`), disk I/O into slices on per-thread
//! `etw_diskio` tracks (`disk_io.rs`). The messages are newer than the
//! generated schema, so their fields are read by number (`parser/fields.rs`).

mod disk_io;
mod file_io;
mod file_io_names;
mod sched;

use super::Parser;
use super::fields::Fields;
use super::importer::{Importer, Input};
use crate::packet_fields::ETW_EVENTS;
use crate::storage::args::{ArgSetBuilder, ArgValue};

pub use file_io::FileIoState;

/// `EtwTraceEvent`'s fields.
mod event {
    pub const CPU: u32 = 4;
    pub const THREAD_ID: u32 = 5;
    pub const C_SWITCH: u32 = 2;
    pub const READY_THREAD: u32 = 3;
    pub const MEM_INFO: u32 = 6;
    pub const FILE_IO_CREATE: u32 = 7;
    pub const FILE_IO_DIR_ENUM: u32 = 8;
    pub const FILE_IO_INFO: u32 = 9;
    pub const FILE_IO_READ_WRITE: u32 = 10;
    pub const FILE_IO_SIMPLE_OP: u32 = 11;
    pub const FILE_IO_OP_END: u32 = 12;
    pub const FILE_IO_PATH_OPERATION: u32 = 14;
    pub const DISK_IO: u32 = 15;
}

/// The payload this module imports: one event of a bundle, as the loader
/// queued it.
pub const IMPORTERS: &[(u32, Importer)] = &[(ETW_EVENTS, parse_event)];

fn parse_event(p: &mut Parser, input: &Input<'_>) {
    let f = Fields::new(input.bytes);
    let ts = input.ts;
    let cpu = f.uint(event::CPU).unwrap_or(0) as u32;
    // thread_id is a uint32.
    let tid = f.uint(event::THREAD_ID).unwrap_or(0) & 0xffff_ffff;
    if let Some(b) = f.bytes(event::C_SWITCH) {
        sched::cswitch(p, ts, cpu, b);
    }
    if let Some(b) = f.bytes(event::READY_THREAD) {
        sched::ready_thread(p, ts, tid, b);
    }
    if let Some(b) = f.bytes(event::MEM_INFO) {
        sched::mem_info(p, ts, b);
    }
    let utid = p.processes.get_or_create_thread(&mut p.storage, tid as i64);
    let file_io: [(u32, file_io::Kind); 7] = [
        (event::FILE_IO_CREATE, file_io::Kind::Create),
        (event::FILE_IO_DIR_ENUM, file_io::Kind::DirEnum),
        (event::FILE_IO_INFO, file_io::Kind::Info),
        (event::FILE_IO_READ_WRITE, file_io::Kind::ReadWrite),
        (event::FILE_IO_SIMPLE_OP, file_io::Kind::SimpleOp),
        (event::FILE_IO_OP_END, file_io::Kind::OpEnd),
        (event::FILE_IO_PATH_OPERATION, file_io::Kind::PathOperation),
    ];
    for (field, kind) in file_io {
        if let Some(b) = f.bytes(field) {
            file_io::parse(p, ts, utid, kind, b);
        }
    }
    if let Some(b) = f.bytes(event::DISK_IO) {
        disk_io::parse(p, ts, utid, b);
    }
}

/// The end of the trace: file operations still waiting for their end.
pub fn finish(p: &mut Parser) {
    file_io::finish(p);
}

/// An arg set of (key, value) pairs, keys as written.
fn arg_set(p: &mut Parser, args: &[(&str, ArgValue)]) -> Option<u32> {
    let mut b = ArgSetBuilder::default();
    add_args(p, &mut b, args);
    p.storage.args.add_set(&b)
}

/// Adds (key, value) pairs to a set being built.
fn add_args(p: &mut Parser, b: &mut ArgSetBuilder, args: &[(&str, ArgValue)]) {
    for (k, v) in args {
        let k = p.storage.strings.intern(k);
        b.add(k, k, *v);
    }
}
