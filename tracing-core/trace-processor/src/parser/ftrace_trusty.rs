//! The Trusty TEE driver's events as slices on the emitting thread's
//! track, category `tipc`, as upstream's ftrace parser names them: calls
//! into the secure world (`trusty_smc`, `trusty_std_call32`), memory
//! sharing and reclaiming, and IPC connects and reads are slices from the
//! call to its `_done`/`_end`; the result of a call, IRQs, IPC handle
//! events, writes, polls, receives and queued no-ops are instants. An
//! error result adds an instant naming it where upstream adds one.

use super::Parser;
use super::fields::Fields;
use super::importer::{FtraceHandler, FtraceInput};
use crate::storage::rows::SliceRow;

/// The events this module handles (gathered by `ftrace_registry.rs`), by
/// `FtraceEvent` field number.
pub const FTRACE_HANDLERS: &[(u32, FtraceHandler)] = &[
    (445, smc),
    (446, smc_done),
    (447, std_call32),
    (448, std_call32_done),
    (449, share_memory),
    (450, share_memory_done),
    (451, reclaim_memory),
    (452, reclaim_memory_done),
    (453, irq),
    (454, ipc_handle_event),
    (455, ipc_connect),
    (456, ipc_connect_end),
    (457, ipc_write),
    (458, ipc_poll),
    (460, ipc_read),
    (461, ipc_read_end),
    (462, ipc_rx),
    (464, enqueue_nop),
];

/// What one event does on its thread's track.
enum Op {
    Begin,
    End,
    Instant,
}

fn on_thread(p: &mut Parser, e: &FtraceInput<'_>, op: Op, name: &str) {
    let utid = p.processes.get_or_create_thread(&mut p.storage, e.tid);
    let track_id = p.tracks.thread_track(&mut p.storage, utid);
    if let Op::End = op {
        p.slices.end(&mut p.storage, track_id, e.ts, None);
        return;
    }
    let name = p.storage.strings.intern(name);
    let category = p.storage.strings.intern("tipc");
    let row = SliceRow {
        ts: e.ts,
        dur: -1,
        track_id,
        category,
        name,
        ..SliceRow::default()
    };
    if let Op::Begin = op {
        p.slices.begin(&mut p.storage, row);
    } else {
        p.slices.instant(&mut p.storage, row);
    }
}

fn smc(p: &mut Parser, e: &FtraceInput<'_>) {
    let r0 = Fields::new(e.body).uint(1).unwrap_or(0);
    on_thread(p, e, Op::Begin, &format!("trusty_smc:r0= {r0}"));
}

fn smc_done(p: &mut Parser, e: &FtraceInput<'_>) {
    let ret = Fields::new(e.body).uint(1).unwrap_or(0);
    on_thread(p, e, Op::End, "");
    on_thread(p, e, Op::Instant, &format!("trusty_smc_done:r0= {ret}"));
}

fn std_call32(p: &mut Parser, e: &FtraceInput<'_>) {
    on_thread(p, e, Op::Begin, "trusty_std");
}

fn std_call32_done(p: &mut Parser, e: &FtraceInput<'_>) {
    let ret = Fields::new(e.body).int(1).unwrap_or(0);
    on_thread(p, e, Op::End, "");
    if ret < 0 {
        on_thread(p, e, Op::Instant, &format!("trusty_err_std: err= {ret}"));
    }
}

fn share_memory(p: &mut Parser, e: &FtraceInput<'_>) {
    let f = Fields::new(e.body);
    let (len, lend, nents) = (
        f.uint(1).unwrap_or(0),
        f.uint(2).unwrap_or(0) as u32,
        f.uint(3).unwrap_or(0) as u32,
    );
    let name = format!("trusty_share_mem: len= {len} nents= {nents} lend= {lend}");
    on_thread(p, e, Op::Begin, &name);
}

fn share_memory_done(p: &mut Parser, e: &FtraceInput<'_>) {
    let f = Fields::new(e.body);
    let (handle, ret) = (f.uint(1).unwrap_or(0), f.int32(5).unwrap_or(0));
    on_thread(p, e, Op::End, "");
    let name = format!("trusty_share_mem: handle= {handle} ret= {ret}");
    on_thread(p, e, Op::Instant, &name);
}

fn reclaim_memory(p: &mut Parser, e: &FtraceInput<'_>) {
    let id = Fields::new(e.body).uint(1).unwrap_or(0);
    on_thread(p, e, Op::Begin, &format!("trusty_reclaim_mem: id={id}"));
}

fn reclaim_memory_done(p: &mut Parser, e: &FtraceInput<'_>) {
    let ret = Fields::new(e.body).int32(2).unwrap_or(0);
    on_thread(p, e, Op::End, "");
    if ret < 0 {
        let name = format!("trusty_reclaim_mem_err: err= {ret}");
        on_thread(p, e, Op::Instant, &name);
    }
}

fn irq(p: &mut Parser, e: &FtraceInput<'_>) {
    let irq = Fields::new(e.body).int32(1).unwrap_or(0);
    on_thread(p, e, Op::Instant, &format!("trusty_irq: irq= {irq}"));
}

fn ipc_handle_event(p: &mut Parser, e: &FtraceInput<'_>) {
    let f = Fields::new(e.body);
    let chan = f.uint(1).unwrap_or(0) as u32;
    let event = f.uint(2).unwrap_or(0) as u32;
    let srv = f.str(3).unwrap_or_default();
    let name = format!("trusty_ipc_handle_event: chan={chan} srv_name={srv} event={event}");
    on_thread(p, e, Op::Instant, &name);
}

fn enqueue_nop(p: &mut Parser, e: &FtraceInput<'_>) {
    let f = Fields::new(e.body);
    let a = |id| f.uint(id).unwrap_or(0) as u32;
    let name = format!(
        "trusty_enqueue_nop: arg1= {} arg2= {} arg3={}",
        a(1),
        a(2),
        a(3)
    );
    on_thread(p, e, Op::Instant, &name);
}

fn ipc_connect(p: &mut Parser, e: &FtraceInput<'_>) {
    let port = Fields::new(e.body).str(2).unwrap_or_default().into_owned();
    on_thread(p, e, Op::Begin, &format!("tipc_connect: {port}"));
}

fn ipc_connect_end(p: &mut Parser, e: &FtraceInput<'_>) {
    let err = Fields::new(e.body).int32(2).unwrap_or(0);
    on_thread(p, e, Op::End, "");
    if err != 0 {
        on_thread(p, e, Op::Instant, &format!("tipc_err_connect:err= {err}"));
    }
}

fn ipc_write(p: &mut Parser, e: &FtraceInput<'_>) {
    let f = Fields::new(e.body);
    let srv = f.str(6).unwrap_or_default();
    let shm = f.uint(5).unwrap_or(0);
    let name = if shm > 0 {
        format!("tipc_write: {srv} shm_cnt:[{shm}]")
    } else {
        format!("tipc_write: {srv}")
    };
    on_thread(p, e, Op::Instant, &name);
    let len_or_err = f.int32(4).unwrap_or(0);
    if len_or_err < 0 {
        let name = format!("tipc_err_write:len_or_err= {len_or_err}");
        on_thread(p, e, Op::Instant, &name);
    }
}

fn ipc_read(p: &mut Parser, e: &FtraceInput<'_>) {
    let srv = Fields::new(e.body).str(2).unwrap_or_default().into_owned();
    on_thread(p, e, Op::Begin, &format!("tipc_read: {srv}"));
}

fn ipc_read_end(p: &mut Parser, e: &FtraceInput<'_>) {
    let len_or_err = Fields::new(e.body).int32(3).unwrap_or(0);
    on_thread(p, e, Op::End, "");
    if len_or_err <= 0 {
        let name = format!("tipc_err_read:len_or_err= {len_or_err}");
        on_thread(p, e, Op::Instant, &name);
    }
}

fn ipc_poll(p: &mut Parser, e: &FtraceInput<'_>) {
    let srv = Fields::new(e.body).str(3).unwrap_or_default().into_owned();
    on_thread(p, e, Op::Instant, &format!("tipc_poll: {srv}"));
}

fn ipc_rx(p: &mut Parser, e: &FtraceInput<'_>) {
    on_thread(p, e, Op::Instant, "tipc_rx");
}
