//! Binder transactions as slices, as upstream's binder tracker makes them
//! from the kernel's binder events (read from systrace text, and usable by
//! any importer of the same events): a synchronous call is a `binder
//! transaction` slice on the caller's thread from the send to the reply's
//! arrival, the callee's work a `binder reply` slice from the arrival to the
//! reply, joined by a flow; a one-way call is two instants (`binder
//! transaction async`, `binder async rcv`). Each thread keeps a stack of the
//! transactions it is in, driven by the `binder_command`/`binder_return`
//! codes, so that a failed reply (`BR_FAILED_REPLY`, `BR_DEAD_REPLY`, ...)
//! still closes the caller's slice. `binder_lock`/`locked`/`unlock` are the
//! `binder lock waiting` and `binder lock held` slices.

use crate::hash::HashMap;

use crate::column_store::strings::StrId;
use crate::parser::Parser;
use crate::storage::args::{ArgSetBuilder, ArgValue};
use crate::storage::rows::{FlowRow, SliceRow};

const ONE_WAY: u32 = 0x01;
const ROOT_OBJECT: u32 = 0x04;
const STATUS_CODE: u32 = 0x08;
const ACCEPT_FDS: u32 = 0x10;

/// Commands a thread gives the driver.
const BC_TRANSACTION: u32 = 0x4040_6300;
const BC_REPLY: u32 = 0x4040_6301;
const BC_TRANSACTION_SG: u32 = 0x4048_6311;
const BC_REPLY_SG: u32 = 0x4048_6312;
/// Returns the driver gives a thread.
const BR_TRANSACTION_SEC_CTX: u32 = 0x8048_7202;
const BR_TRANSACTION: u32 = 0x8040_7202;
const BR_REPLY: u32 = 0x8040_7203;
const BR_DEAD_REPLY: u32 = 0x7205;
const BR_TRANSACTION_COMPLETE: u32 = 0x7206;
const BR_FAILED_REPLY: u32 = 0x7211;
const BR_FROZEN_REPLY: u32 = 0x7212;
const BR_ONEWAY_SPAM_SUSPECT: u32 = 0x7213;
const BR_TRANSACTION_PENDING_FROZEN: u32 = 0x7214;

/// Where a thread is in one transaction (sender or receiver side).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    SndAfterBcTransaction,
    SndAfterTransaction,
    SndAfterBrTransactionComplete,
    SndAfterTransactionReceived,
    RcvAfterTransactionReceived,
    RcvAfterBrTransaction,
    RcvAfterBcReply,
    RcvAfterTransaction,
}

/// One transaction a thread is in.
#[derive(Debug, Clone, Copy)]
struct Frame {
    state: State,
    /// (one way, reply) once the transaction event was seen.
    kind: Option<(bool, bool)>,
}

/// A transaction sent and not yet received.
#[derive(Debug)]
struct Outstanding {
    is_reply: bool,
    is_oneway: bool,
    args: ArgSetBuilder,
    send_track: u32,
    send_slice: Option<u32>,
}

/// One `binder_transaction` event.
#[derive(Debug, Clone, Copy)]
pub struct Transaction {
    /// The sending thread.
    pub tid: i64,
    /// The transaction's id (`transaction=`).
    pub id: i32,
    /// `dest_node=`.
    pub dest_node: i32,
    /// `dest_proc=`.
    pub dest_tgid: u32,
    /// `dest_thread=`.
    pub dest_tid: u32,
    /// `reply=1`.
    pub is_reply: bool,
    /// `flags=` (hex).
    pub flags: u32,
    /// The `code` arg's text.
    pub code: StrId,
}

/// The binder state between events.
#[derive(Debug, Default)]
pub struct BinderTracker {
    outstanding: HashMap<i32, Outstanding>,
    /// Per utid: the transactions it is in, innermost last.
    frames: HashMap<u32, Vec<Frame>>,
    /// Threads waiting for the binder lock.
    attempt_lock: HashMap<i64, i64>,
    /// Threads holding it.
    lock_acquired: HashMap<i64, i64>,
}

/// `flags` as upstream spells them: hex, then what each bit means.
fn flags_text(flags: u32) -> String {
    let mut s = format!("0x{flags:02x} ");
    if flags & ONE_WAY != 0 {
        s.push_str("this is a one-way call: async, no return; ");
    }
    if flags & ROOT_OBJECT != 0 {
        s.push_str("contents are the components root object; ");
    }
    if flags & STATUS_CODE != 0 {
        s.push_str("contents are a 32-bit status code; ");
    }
    if flags & ACCEPT_FDS != 0 {
        s.push_str("allow replies with file descriptors; ");
    }
    if flags == 0 {
        s.push_str("No Flags Set");
    }
    s
}

fn add(p: &mut Parser, b: &mut ArgSetBuilder, key: &str, value: ArgValue) {
    let k = p.storage.strings.intern(key);
    b.add(k, k, value);
}

/// Appends `extra` to a slice's args.
fn merge_args(p: &mut Parser, slice: u32, extra: &ArgSetBuilder) {
    let Some(row) = p.storage.slices.get(slice as usize) else {
        return;
    };
    let mut merged = ArgSetBuilder::default();
    if let Some(set) = row.arg_set_id.get() {
        let existing: Vec<_> = p.storage.args.set(set).copied().collect();
        for a in existing {
            merged.add(a.flat_key, a.key, a.value);
        }
    }
    for a in extra.args() {
        merged.add(a.flat_key, a.key, a.value);
    }
    let id = p.storage.args.add_set(&merged);
    if let Some(s) = p.storage.slices.get_mut(slice as usize) {
        s.arg_set_id = id.into();
    }
}

impl BinderTracker {
    fn utid(p: &mut Parser, tid: i64) -> u32 {
        p.processes.get_or_create_thread(&mut p.storage, tid)
    }

    fn track(p: &mut Parser, tid: i64) -> u32 {
        let utid = Self::utid(p, tid);
        p.tracks.thread_track(&mut p.storage, utid)
    }

    fn top(p: &mut Parser, tid: i64) -> Option<&mut Frame> {
        let utid = Self::utid(p, tid);
        p.binder.frames.get_mut(&utid)?.last_mut()
    }

    fn push(p: &mut Parser, tid: i64, state: State, kind: Option<(bool, bool)>) {
        let utid = Self::utid(p, tid);
        p.binder
            .frames
            .entry(utid)
            .or_default()
            .push(Frame { state, kind });
    }

    fn pop(p: &mut Parser, tid: i64) {
        let utid = Self::utid(p, tid);
        if let Some(stack) = p.binder.frames.get_mut(&utid) {
            stack.pop();
            if stack.is_empty() {
                p.binder.frames.remove(&utid);
            }
        }
    }

    /// The innermost slice on `track` when it is open and named `name` in
    /// the `binder` category.
    fn open_named(p: &mut Parser, track: u32, ts: i64, name: &str) -> Option<u32> {
        let top = p.slices.topmost(&mut p.storage, track, ts)?;
        let row = p.storage.slices.get(top as usize)?;
        let named = p.storage.strings.get(row.name) == Some(name)
            && p.storage.strings.get(row.category) == Some("binder");
        named.then_some(top)
    }

    fn slice(p: &mut Parser, ts: i64, dur: i64, track: u32, name: &str) -> SliceRow {
        SliceRow {
            ts,
            dur,
            track_id: track,
            category: p.storage.strings.intern("binder"),
            name: p.storage.strings.intern(name),
            ..Default::default()
        }
    }

    /// The destination thread's args (its tid and, once known, name).
    fn dest_args(p: &mut Parser, tid: i64, value: ArgValue) -> ArgSetBuilder {
        let utid = Self::utid(p, tid);
        let mut b = ArgSetBuilder::default();
        add(p, &mut b, "destination thread", value);
        let name = p.storage.threads.get(utid as usize).map(|t| t.name);
        if let Some(name) = name.filter(|n| !n.is_null()) {
            add(p, &mut b, "destination name", ArgValue::String(name));
        }
        b
    }

    /// A `binder_transaction` event at `ts`.
    pub fn transaction(p: &mut Parser, ts: i64, t: &Transaction) {
        let track = Self::track(p, t.tid);
        let mut args = ArgSetBuilder::default();
        add(
            p,
            &mut args,
            "transaction id",
            ArgValue::Int(i64::from(t.id)),
        );
        add(
            p,
            &mut args,
            "destination node",
            ArgValue::Int(i64::from(t.dest_node)),
        );
        add(
            p,
            &mut args,
            "destination process",
            ArgValue::Int(i64::from(t.dest_tgid)),
        );
        add(
            p,
            &mut args,
            "reply transaction?",
            ArgValue::Bool(t.is_reply),
        );
        let flags = p.storage.strings.intern(&flags_text(t.flags));
        add(p, &mut args, "flags", ArgValue::String(flags));
        add(p, &mut args, "code", ArgValue::String(t.code));
        add(p, &mut args, "calling tid", ArgValue::Uint(t.tid as u64));

        let is_oneway = t.flags & ONE_WAY == ONE_WAY;
        let send_slice = if t.is_reply {
            // The reply ends the callee's `binder reply` slice.
            let dest = Self::dest_args(
                p,
                i64::from(t.dest_tid),
                ArgValue::Int(i64::from(t.dest_tid)),
            );
            if let Some(open) = Self::open_named(p, track, ts, "binder reply") {
                merge_args(p, open, &dest);
            }
            let ended = p.slices.end(&mut p.storage, track, ts, None);
            if let Some(id) = ended {
                merge_args(p, id, &args);
            }
            ended
        } else {
            let dur = if is_oneway { 0 } else { -1 };
            let name = if is_oneway {
                "binder transaction async"
            } else {
                "binder transaction"
            };
            let mut row = Self::slice(p, ts, dur, track, name);
            row.arg_set_id = p.storage.args.add_set(&args).into();
            p.slices.begin(&mut p.storage, row)
        };
        p.binder.outstanding.insert(
            t.id,
            Outstanding {
                is_reply: t.is_reply,
                is_oneway,
                args,
                send_track: track,
                send_slice,
            },
        );
        let kind = Some((is_oneway, t.is_reply));
        let Some(state) = Self::top(p, t.tid).map(|f| f.state) else {
            return;
        };
        let next = match state {
            State::SndAfterBcTransaction => State::SndAfterTransaction,
            State::RcvAfterBcReply => State::RcvAfterTransaction,
            // Commands are not traced: the frame will not move on.
            State::RcvAfterTransactionReceived => {
                Self::pop(p, t.tid);
                return;
            }
            _ => return,
        };
        if let Some(frame) = Self::top(p, t.tid) {
            frame.state = next;
            frame.kind = kind;
        }
    }

    /// A `binder_transaction_received` event at `ts` on thread `tid`.
    pub fn transaction_received(p: &mut Parser, ts: i64, tid: i64, id: i32) {
        // A transaction never seen sent cannot be placed.
        let Some(t) = p.binder.outstanding.remove(&id) else {
            return;
        };
        let track = Self::track(p, tid);
        if !t.is_oneway {
            if !t.is_reply {
                Self::push(
                    p,
                    tid,
                    State::RcvAfterTransactionReceived,
                    Some((t.is_oneway, t.is_reply)),
                );
            } else if let Some(frame) = Self::top(p, tid) {
                if frame.state == State::SndAfterBrTransactionComplete {
                    frame.state = State::SndAfterTransactionReceived;
                }
            }
        }
        if t.is_reply {
            // The reply arrived: the caller's slice ends.
            p.slices.end(&mut p.storage, track, ts, None);
            return;
        }
        let recv = if t.is_oneway {
            let mut row = Self::slice(p, ts, 0, track, "binder async rcv");
            row.arg_set_id = p.storage.args.add_set(&t.args).into();
            p.slices.begin(&mut p.storage, row)
        } else {
            let dest = Self::dest_args(p, tid, ArgValue::Uint(tid as u64));
            if let Some(open) = Self::open_named(p, t.send_track, ts, "binder transaction") {
                merge_args(p, open, &dest);
            }
            let row = Self::slice(p, ts, -1, track, "binder reply");
            p.slices.begin(&mut p.storage, row)
        };
        if let (Some(out), Some(inn)) = (t.send_slice, recv) {
            p.storage.flows.push(FlowRow {
                slice_out: out,
                slice_in: inn,
                trace_id: None,
                arg_set_id: None,
            });
        }
    }

    /// A `binder_command` event: a thread's command to the driver.
    pub fn command(p: &mut Parser, tid: i64, cmd: u32) {
        match cmd {
            BC_TRANSACTION | BC_TRANSACTION_SG => {
                Self::push(p, tid, State::SndAfterBcTransaction, None);
            }
            BC_REPLY | BC_REPLY_SG => {
                if let Some(frame) = Self::top(p, tid) {
                    if frame.state == State::RcvAfterBrTransaction {
                        frame.state = State::RcvAfterBcReply;
                    }
                }
            }
            _ => {}
        }
    }

    /// A `binder_return` event at `ts`: the driver's answer to a thread.
    pub fn ret(p: &mut Parser, ts: i64, tid: i64, cmd: u32) {
        let Some(frame) = Self::top(p, tid).copied() else {
            return;
        };
        match cmd {
            BR_DEAD_REPLY | BR_FAILED_REPLY | BR_FROZEN_REPLY | BR_TRANSACTION_PENDING_FROZEN => {
                match frame.state {
                    // Failed before the transaction: no slice was opened.
                    State::SndAfterBcTransaction => Self::pop(p, tid),
                    State::RcvAfterBcReply
                    | State::SndAfterTransaction
                    | State::RcvAfterTransaction
                    | State::SndAfterBrTransactionComplete => {
                        if frame.kind == Some((false, false)) {
                            let track = Self::track(p, tid);
                            p.slices.end(&mut p.storage, track, ts, None);
                        }
                        Self::pop(p, tid);
                    }
                    State::SndAfterTransactionReceived
                    | State::RcvAfterTransactionReceived
                    | State::RcvAfterBrTransaction => {}
                }
            }
            BR_TRANSACTION_COMPLETE | BR_ONEWAY_SPAM_SUSPECT => match frame.state {
                State::RcvAfterTransaction | State::SndAfterBcTransaction => Self::pop(p, tid),
                State::SndAfterTransaction => {
                    if frame.kind.is_some_and(|(oneway, _)| !oneway) {
                        if let Some(f) = Self::top(p, tid) {
                            f.state = State::SndAfterBrTransactionComplete;
                        }
                    } else {
                        // A one-way call ends here; it opened no slice.
                        Self::pop(p, tid);
                    }
                }
                _ => {}
            },
            BR_REPLY if frame.state == State::SndAfterTransactionReceived => {
                Self::pop(p, tid);
            }
            BR_TRANSACTION | BR_TRANSACTION_SEC_CTX
                if frame.state == State::RcvAfterTransactionReceived =>
            {
                if let Some(f) = Self::top(p, tid) {
                    f.state = State::RcvAfterBrTransaction;
                }
            }
            _ => {}
        }
    }

    /// `binder_lock`: the thread waits for the lock.
    pub fn lock(p: &mut Parser, ts: i64, tid: i64) {
        p.binder.attempt_lock.insert(tid, ts);
        let track = Self::track(p, tid);
        let row = Self::slice(p, ts, -1, track, "binder lock waiting");
        p.slices.begin(&mut p.storage, row);
    }

    /// `binder_locked`: the thread got the lock.
    pub fn locked(p: &mut Parser, ts: i64, tid: i64) {
        Self::utid(p, tid);
        if p.binder.attempt_lock.remove(&tid).is_none() {
            return;
        }
        let track = Self::track(p, tid);
        p.slices.end(&mut p.storage, track, ts, None);
        let row = Self::slice(p, ts, -1, track, "binder lock held");
        p.slices.begin(&mut p.storage, row);
        p.binder.lock_acquired.insert(tid, ts);
    }

    /// `binder_unlock`: the thread let the lock go.
    pub fn unlock(p: &mut Parser, ts: i64, tid: i64) {
        Self::utid(p, tid);
        if p.binder.lock_acquired.remove(&tid).is_none() {
            return;
        }
        let track = Self::track(p, tid);
        if Self::open_named(p, track, ts, "binder lock held").is_some() {
            p.slices.end(&mut p.storage, track, ts, None);
        }
    }

    /// `binder_transaction_alloc_buf`: the sizes of the buffer of the
    /// thread's open transaction.
    pub fn alloc_buf(p: &mut Parser, ts: i64, tid: i64, data_size: u64, offsets_size: u64) {
        let track = Self::track(p, tid);
        let Some(open) = Self::open_named(p, track, ts, "binder transaction") else {
            return;
        };
        let mut b = ArgSetBuilder::default();
        add(p, &mut b, "data size", ArgValue::Uint(data_size));
        add(p, &mut b, "offsets size", ArgValue::Uint(offsets_size));
        merge_args(p, open, &b);
    }
}
