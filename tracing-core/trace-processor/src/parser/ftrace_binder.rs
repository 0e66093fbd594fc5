//! The kernel's binder events recorded as ftrace protobuf events, handed to
//! the binder tracker (`tracker/binder.rs`) that systrace text's binder
//! lines also feed: transactions and their replies as slices joined by
//! flows, the commands and returns that drive each thread's place in them,
//! buffer allocations, and the binder lock's waiting and held slices. A
//! transaction's code is shown as upstream writes it, `0x<hex, at least
//! two digits> Java Layer Dependent`.

use super::Parser;
use super::binder::{BinderTracker, Transaction};
use super::fields::Fields;
use super::importer::{FtraceHandler, FtraceInput};

/// `binder_transaction` {debug_id 1, target_node 2, to_proc 3,
/// to_thread 4, reply 5, code 6, flags 7}.
const TRANSACTION: u32 = 50;
/// `binder_transaction_received` {debug_id 1}.
const TRANSACTION_RECEIVED: u32 = 51;
/// `binder_lock`.
const LOCK: u32 = 53;
/// `binder_locked`.
const LOCKED: u32 = 54;
/// `binder_unlock`.
const UNLOCK: u32 = 55;
/// `binder_transaction_alloc_buf` {data_size 1, offsets_size 3}.
const ALLOC_BUF: u32 = 323;
/// `binder_command` {cmd 1}.
const COMMAND: u32 = 485;
/// `binder_return` {cmd 1}.
const RETURN: u32 = 486;

/// The events this module handles (gathered by `ftrace_registry.rs`).
pub const FTRACE_HANDLERS: &[(u32, FtraceHandler)] = &[
    (TRANSACTION, transaction),
    (TRANSACTION_RECEIVED, transaction_received),
    (LOCK, lock),
    (LOCKED, locked),
    (UNLOCK, unlock),
    (ALLOC_BUF, alloc_buf),
    (COMMAND, command),
    (RETURN, ret),
];

fn transaction(p: &mut Parser, e: &FtraceInput<'_>) {
    let f = Fields::new(e.body);
    let int = |id| f.int32(id).unwrap_or(0);
    let code = f.uint(6).unwrap_or(0) as u32;
    let code = p
        .storage
        .strings
        .intern(&format!("0x{code:02x} Java Layer Dependent"));
    let t = Transaction {
        tid: e.tid,
        id: int(1),
        dest_node: int(2),
        dest_tgid: int(3) as u32,
        dest_tid: int(4) as u32,
        is_reply: int(5) == 1,
        flags: f.uint(7).unwrap_or(0) as u32,
        code,
    };
    BinderTracker::transaction(p, e.ts, &t);
}

fn transaction_received(p: &mut Parser, e: &FtraceInput<'_>) {
    let id = Fields::new(e.body).int32(1).unwrap_or(0);
    BinderTracker::transaction_received(p, e.ts, e.tid, id);
}

fn command(p: &mut Parser, e: &FtraceInput<'_>) {
    let cmd = Fields::new(e.body).uint(1).unwrap_or(0) as u32;
    BinderTracker::command(p, e.tid, cmd);
}

fn ret(p: &mut Parser, e: &FtraceInput<'_>) {
    let cmd = Fields::new(e.body).uint(1).unwrap_or(0) as u32;
    BinderTracker::ret(p, e.ts, e.tid, cmd);
}

fn alloc_buf(p: &mut Parser, e: &FtraceInput<'_>) {
    let f = Fields::new(e.body);
    let data = f.uint(1).unwrap_or(0);
    let offsets = f.uint(3).unwrap_or(0);
    BinderTracker::alloc_buf(p, e.ts, e.tid, data, offsets);
}

fn lock(p: &mut Parser, e: &FtraceInput<'_>) {
    BinderTracker::lock(p, e.ts, e.tid);
}

fn locked(p: &mut Parser, e: &FtraceInput<'_>) {
    BinderTracker::locked(p, e.ts, e.tid);
}

fn unlock(p: &mut Parser, e: &FtraceInput<'_>) {
    BinderTracker::unlock(p, e.ts, e.tid);
}
