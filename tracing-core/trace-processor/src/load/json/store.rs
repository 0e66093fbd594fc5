//! The events of a JSON trace held from their reading to the end of the
//! trace, when they are sorted and parsed: a whole trace is held, so the
//! form they are held in decides the load's memory. Each event is written
//! into one byte arena as a few varints (only the fields it has, a bit
//! each in a flags word; a slice's args as interned key and value ids, a
//! counter's or metadata event's as their raw bytes), and the sort moves
//! 24-byte index entries (time, order key, offset), not events. Once
//! sorted, the events' bytes are copied, each after its time, into blocks
//! in their sorted order and the index is dropped: the parse reads the
//! blocks in order and frees each once past it, so the tables grow as the
//! held events shrink.

use crate::column_store::strings::StrId;
use crate::storage::args::{Arg, ArgValue};

use super::event::{CookieKind, Id, JsonEvent, Scope};

/// Presence bits of an encoded event's flags word.
const DUR: u32 = 1;
const TTS: u32 = 1 << 1;
const TDUR: u32 = 1 << 2;
const PID_EXISTS: u32 = 1 << 3;
const TID_EXISTS: u32 = 1 << 4;
const PID_NAME: u32 = 1 << 5;
const TID_NAME: u32 = 1 << 6;
const ID: u32 = 1 << 7;
const ID_STR: u32 = 1 << 8;
const BIND: u32 = 1 << 9;
const BIND_STR: u32 = 1 << 10;
const FLOW_IN: u32 = 1 << 11;
const FLOW_OUT: u32 = 1 << 12;
const BIND_ENCLOSING: u32 = 1 << 13;
const COOKIE: u32 = 1 << 14;
const COOKIE_LOCAL: u32 = 1 << 15;
const ARGS: u32 = 1 << 16;
/// The scope takes two bits from here.
const SCOPE_SHIFT: u32 = 17;
/// The args as a list of keyed, interned args.
const ARG_LIST: u32 = 1 << 19;
/// Reading the args into the list failed part way.
const ARGS_FAILED: u32 = 1 << 20;

/// An arg's value kind in its tag byte (the low three bits); the next bit
/// says its key is its flat key.
const TAG_SAME_KEY: u8 = 1 << 3;

/// Bits of a sort entry's offset that hold the event's length (0 when it
/// does not fit them).
const LEN_BITS: u32 = 24;

/// Bytes of a block of sorted events (an event larger goes alone in one).
/// The parse keeps the block it reads until its last event, while the
/// tables grow: the load's peak is at the end of the parse, and it held
/// up to a whole block more than the events still to read (32 MiB blocks
/// were a tenth of a 300 MB trace's peak).
const BLOCK: usize = 1 << 20;

/// Bytes of blocks freed between two requests to the allocator to return
/// its free memory: blocks this small come from glibc's heap, where a
/// freed one stays resident until the heap is trimmed (see `arena.rs`).
const TRIM_EVERY: usize = 16 << 20;

/// The events read so far, in the order read.
#[derive(Debug, Default)]
pub struct EventStore {
    /// Per event (before the sort): its time, its order among events of
    /// one time, and where it starts in `bytes`.
    index: Vec<(i64, i64, u64)>,
    bytes: Vec<u8>,
    /// After the sort: each event's time and bytes, in sorted order.
    blocks: Vec<Vec<u8>>,
    /// Where the sorted reading is: the block, the offset in it (blocks
    /// before it were freed).
    cursor: (usize, usize),
    sorted: bool,
    /// An arg list being written.
    scratch: Vec<u8>,
    /// The block size when not [`BLOCK`] (the tests' small blocks).
    block_bytes: Option<usize>,
    /// Bytes of blocks freed since the allocator last returned its free
    /// memory.
    untrimmed: usize,
}

/// Where an event of `phase` (lasting `dur`) sorts among the events of
/// its time once the trace has complete events: ends first, then complete
/// events longest first, then the rest (as read).
fn order_key(phase: u8, dur: Option<i64>) -> i64 {
    match phase {
        b'E' => i64::MIN,
        b'X' => i64::MAX.saturating_sub(dur.unwrap_or(0)),
        _ => i64::MAX,
    }
}

fn put_varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

fn put_signed(out: &mut Vec<u8>, v: i64) {
    put_varint(out, ((v << 1) ^ (v >> 63)) as u64);
}

/// Writes one keyed arg: a tag byte (the value's kind, whether the key
/// is the flat key), the key ids, the value (a double as its 8 bytes, the
/// rest as a varint).
fn put_arg(out: &mut Vec<u8>, a: &Arg) {
    let (kind, bits) = a.value.hash_key();
    let same = a.key == a.flat_key;
    out.push(kind | if same { TAG_SAME_KEY } else { 0 });
    put_varint(out, u64::from(a.flat_key.0));
    if !same {
        put_varint(out, u64::from(a.key.0));
    }
    match a.value {
        ArgValue::Real(_) => out.extend_from_slice(&bits.to_le_bytes()),
        ArgValue::Int(v) => put_signed(out, v),
        _ => put_varint(out, bits),
    }
}

/// Reads an event's bytes back; the arena is ours, so a short read means
/// a bug, and gives zeros rather than a panic.
struct Reader<'a> {
    b: &'a [u8],
    pos: usize,
}

impl Reader<'_> {
    fn varint(&mut self) -> u64 {
        let mut v = 0u64;
        let mut shift = 0;
        while let Some(&c) = self.b.get(self.pos) {
            self.pos += 1;
            if shift < 64 {
                v |= u64::from(c & 0x7f) << shift;
            }
            shift += 7;
            if c < 0x80 {
                break;
            }
        }
        v
    }

    fn signed(&mut self) -> i64 {
        let v = self.varint();
        ((v >> 1) as i64) ^ -((v & 1) as i64)
    }

    fn str_id(&mut self) -> StrId {
        StrId(u32::try_from(self.varint()).unwrap_or(0))
    }

    fn fixed64(&mut self) -> u64 {
        let mut c = [0u8; 8];
        if let Some(b) = self.b.get(self.pos..self.pos + 8) {
            c.copy_from_slice(b);
        }
        self.pos += 8;
        u64::from_le_bytes(c)
    }

    /// One arg written by [`put_arg`].
    fn arg(&mut self) -> Arg {
        let tag = self.b.get(self.pos).copied().unwrap_or(0);
        self.pos += 1;
        let flat_key = self.str_id();
        let key = if tag & TAG_SAME_KEY != 0 {
            flat_key
        } else {
            self.str_id()
        };
        let value = match tag & 7 {
            0 => ArgValue::Int(self.signed()),
            1 => ArgValue::Uint(self.varint()),
            2 => ArgValue::String(self.str_id()),
            3 => ArgValue::Real(f64::from_bits(self.fixed64())),
            4 => ArgValue::Pointer(self.varint()),
            5 => ArgValue::Bool(self.varint() != 0),
            6 => ArgValue::Json(self.str_id()),
            _ => {
                self.varint();
                ArgValue::Null
            }
        };
        Arg {
            flat_key,
            key,
            value,
        }
    }

    /// Steps over the event starting here; its length.
    fn skip_event(&mut self) -> usize {
        let start = self.pos;
        self.pos += 1;
        let flags = u32::try_from(self.varint()).unwrap_or(0);
        // pid, tid, cat, name, then one varint per optional field.
        let varints = 4 + [DUR, TTS, TDUR, PID_NAME, TID_NAME, ID, BIND]
            .iter()
            .filter(|&&b| flags & b != 0)
            .count();
        for _ in 0..varints {
            self.varint();
        }
        if flags & COOKIE != 0 {
            self.pos += 8;
        }
        if flags & ARGS != 0 {
            let len = usize::try_from(self.varint()).unwrap_or(0);
            self.pos = self.pos.saturating_add(len);
        }
        if flags & ARG_LIST != 0 {
            let len = usize::try_from(self.varint()).unwrap_or(0);
            self.pos = self.pos.saturating_add(len);
        }
        self.pos.min(self.b.len()) - start
    }

    fn id(&mut self, is_str: bool) -> Id {
        if is_str {
            Id::Str(self.str_id())
        } else {
            Id::Int(self.varint())
        }
    }
}

impl EventStore {
    /// Bytes held (the index and the arena).
    pub fn held_bytes(&self) -> u64 {
        let entry = std::mem::size_of::<(i64, i64, u64)>() as u64;
        let blocks: usize = self.blocks.iter().map(Vec::len).sum();
        (self.index.len() as u64)
            .saturating_mul(entry)
            .saturating_add(self.bytes.len() as u64)
            .saturating_add(blocks as u64)
    }

    /// Keeps `e` at `ts` (before the sort), with `raw_args` (its args as
    /// bytes, for the phases that read them as fields) and `arg_list` (its
    /// args keyed, read back as [`JsonEvent::arg_list`]); `e.args` and
    /// `e.arg_list` are not looked at.
    pub fn push(&mut self, ts: i64, e: &JsonEvent, raw_args: Option<&[u8]>, arg_list: &[Arg]) {
        if self.sorted {
            return;
        }
        let start = self.bytes.len() as u64;
        self.index.push((ts, order_key(e.phase, e.dur), start));
        let out = &mut self.bytes;
        let mut flags = 0u32;
        let mut bit = |on: bool, b: u32| {
            if on {
                flags |= b;
            }
        };
        bit(e.dur.is_some(), DUR);
        bit(e.tts.is_some(), TTS);
        bit(e.tdur.is_some(), TDUR);
        bit(e.pid_exists, PID_EXISTS);
        bit(e.tid_exists, TID_EXISTS);
        bit(e.pid_name.is_some(), PID_NAME);
        bit(e.tid_name.is_some(), TID_NAME);
        bit(e.id.is_some(), ID);
        bit(matches!(e.id, Some(Id::Str(_))), ID_STR);
        bit(e.bind_id.is_some(), BIND);
        bit(matches!(e.bind_id, Some(Id::Str(_))), BIND_STR);
        bit(e.flow_in, FLOW_IN);
        bit(e.flow_out, FLOW_OUT);
        bit(e.bind_enclosing, BIND_ENCLOSING);
        bit(e.cookie.is_some(), COOKIE);
        bit(
            matches!(e.cookie, Some((CookieKind::Local, _))),
            COOKIE_LOCAL,
        );
        bit(raw_args.is_some(), ARGS);
        bit(!arg_list.is_empty(), ARG_LIST);
        bit(e.args_failed, ARGS_FAILED);
        let scope = match e.scope {
            Scope::None => 0,
            Scope::Global => 1,
            Scope::Process => 2,
            Scope::Thread => 3,
        };
        flags |= scope << SCOPE_SHIFT;
        out.push(e.phase);
        put_varint(out, u64::from(flags));
        put_signed(out, e.pid);
        put_signed(out, e.tid);
        put_varint(out, u64::from(e.cat.0));
        put_varint(out, u64::from(e.name.0));
        for v in [e.dur, e.tts, e.tdur].into_iter().flatten() {
            put_signed(out, v);
        }
        for s in [e.pid_name, e.tid_name].into_iter().flatten() {
            put_varint(out, u64::from(s.0));
        }
        for id in [e.id, e.bind_id].into_iter().flatten() {
            match id {
                Id::Str(s) => put_varint(out, u64::from(s.0)),
                Id::Int(i) => put_varint(out, i),
            }
        }
        if let Some((_, c)) = e.cookie {
            out.extend_from_slice(&c.to_le_bytes());
        }
        if let Some(a) = raw_args {
            put_varint(out, a.len() as u64);
            out.extend_from_slice(a);
        }
        if !arg_list.is_empty() {
            // Its length first, so that the sort steps over it.
            let list = &mut self.scratch;
            list.clear();
            for a in arg_list {
                put_arg(list, a);
            }
            put_varint(out, list.len() as u64);
            out.extend_from_slice(list);
        }
    }

    /// Moves every event to `time(ts)`.
    pub fn map_times(&mut self, time: &mut dyn FnMut(i64) -> i64) {
        for (ts, _, _) in &mut self.index {
            *ts = time(*ts);
        }
    }

    /// Sorts the events by time; at one time, when `by_phase`, by
    /// [`order_key`]; else (and at equal keys) in the order read. Then
    /// moves them (each after its time) into blocks in that order and
    /// drops the index. Events pushed after the sort are not kept.
    pub fn sort(&mut self, by_phase: bool) {
        if self.sorted {
            return;
        }
        // Each event's length, known now from where the next one starts
        // (the arena holds them one after another, in the order read),
        // goes in the low bits of its offset, so that the copy below does
        // not decode the event to find its end; the offsets still order
        // the entries as before.
        let packed = (self.bytes.len() as u64) < 1 << (64 - LEN_BITS);
        if packed {
            let mut next = self.bytes.len() as u64;
            for entry in self.index.iter_mut().rev() {
                let at = entry.2;
                let len = next.saturating_sub(at);
                next = at;
                entry.2 = (at << LEN_BITS) | if len < 1 << LEN_BITS { len } else { 0 };
            }
        }
        // The offsets grow in the order read: they make the sort stable.
        if by_phase {
            self.index.sort_unstable();
        } else {
            self.index.sort_unstable_by_key(|&(ts, _, at)| (ts, at));
        }
        let bytes = std::mem::take(&mut self.bytes);
        let index = std::mem::take(&mut self.index);
        let size = self.block_bytes.unwrap_or(BLOCK);
        let mut block: Vec<u8> = Vec::new();
        for &(ts, _, at) in &index {
            let (at, len) = if packed {
                (at >> LEN_BITS, at & ((1 << LEN_BITS) - 1))
            } else {
                (at, 0)
            };
            let at = usize::try_from(at).unwrap_or(usize::MAX);
            // 0: not known (no event is empty).
            let len = match usize::try_from(len) {
                Ok(len) if len > 0 => len,
                _ => Reader { b: &bytes, pos: at }.skip_event(),
            };
            // The time, then the event.
            let need = len + 10;
            if block.len() + need > size && !block.is_empty() {
                self.blocks.push(std::mem::take(&mut block));
            }
            if block.capacity() == 0 {
                block.reserve_exact(size.max(need));
            }
            put_signed(&mut block, ts);
            block.extend_from_slice(bytes.get(at..at.saturating_add(len)).unwrap_or(&[]));
        }
        if !block.is_empty() {
            self.blocks.push(block);
        }
        self.sorted = true;
    }

    /// The next event in sorted order (after [`EventStore::sort`]) written
    /// into `e` (its buffers reused), and its time; None past the last.
    /// Each block is freed once its last event is read.
    pub fn next_sorted(&mut self, e: &mut JsonEvent) -> Option<i64> {
        loop {
            let (b, at) = self.cursor;
            let block = self.blocks.get_mut(b)?;
            if at < block.len() {
                break;
            }
            self.untrimmed += std::mem::take(block).capacity();
            if self.untrimmed >= TRIM_EVERY {
                self.untrimmed = 0;
                crate::free_memory::release();
            }
            self.cursor = (b + 1, 0);
        }
        let (b, at) = self.cursor;
        let mut r = Reader {
            b: self.blocks.get(b).map_or(&[], Vec::as_slice),
            pos: at,
        };
        let ts = r.signed();
        read_event(&mut r, e);
        self.cursor.1 = r.pos.max(at + 1);
        Some(ts)
    }
}

/// Reads the event at `r` into `e`, reusing its buffers.
fn read_event(r: &mut Reader<'_>, e: &mut JsonEvent) {
    let phase = r.b.get(r.pos).copied().unwrap_or(0);
    r.pos += 1;
    let flags = u32::try_from(r.varint()).unwrap_or(0);
    let has = |b: u32| flags & b != 0;
    let mut args = e.args.take().unwrap_or_default();
    let mut list = std::mem::take(&mut e.arg_list);
    list.clear();
    *e = JsonEvent {
        phase,
        pid: r.signed(),
        tid: r.signed(),
        cat: r.str_id(),
        name: r.str_id(),
        pid_exists: has(PID_EXISTS),
        tid_exists: has(TID_EXISTS),
        flow_in: has(FLOW_IN),
        flow_out: has(FLOW_OUT),
        bind_enclosing: has(BIND_ENCLOSING),
        args_failed: has(ARGS_FAILED),
        scope: match (flags >> SCOPE_SHIFT) & 3 {
            1 => Scope::Global,
            2 => Scope::Process,
            3 => Scope::Thread,
            _ => Scope::None,
        },
        ..JsonEvent::default()
    };
    if has(DUR) {
        e.dur = Some(r.signed());
    }
    if has(TTS) {
        e.tts = Some(r.signed());
    }
    if has(TDUR) {
        e.tdur = Some(r.signed());
    }
    if has(PID_NAME) {
        e.pid_name = Some(r.str_id());
    }
    if has(TID_NAME) {
        e.tid_name = Some(r.str_id());
    }
    if has(ID) {
        e.id = Some(r.id(has(ID_STR)));
    }
    if has(BIND) {
        e.bind_id = Some(r.id(has(BIND_STR)));
    }
    if has(COOKIE) {
        let c = r.fixed64();
        let kind = if has(COOKIE_LOCAL) {
            CookieKind::Local
        } else {
            CookieKind::Global
        };
        e.cookie = Some((kind, c as i64));
    }
    if has(ARGS) {
        let len = usize::try_from(r.varint()).unwrap_or(0);
        args.clear();
        args.extend_from_slice(r.b.get(r.pos..r.pos.saturating_add(len)).unwrap_or(&[]));
        e.args = Some(args);
        r.pos = r.pos.saturating_add(len);
    }
    if has(ARG_LIST) {
        let len = usize::try_from(r.varint()).unwrap_or(0);
        let end = r.pos.saturating_add(len).min(r.b.len());
        while r.pos < end {
            list.push(r.arg());
        }
        r.pos = end;
    }
    e.arg_list = list;
}

#[cfg(test)]
mod tests {
    use super::*;

    fn full() -> JsonEvent {
        JsonEvent {
            phase: b'X',
            dur: Some(-5),
            tts: Some(1 << 40),
            tdur: Some(7),
            pid: -1,
            tid: 4_000_000_000,
            pid_exists: true,
            tid_exists: false,
            pid_name: Some(StrId(9)),
            tid_name: Some(StrId(10)),
            cat: StrId(3),
            name: StrId(u32::MAX),
            id: Some(Id::Int(u64::MAX)),
            bind_id: Some(Id::Str(StrId(12))),
            flow_in: true,
            flow_out: false,
            scope: Scope::Thread,
            bind_enclosing: true,
            cookie: Some((CookieKind::Local, i64::MIN)),
            args: Some(br#"{"a":1}"#.to_vec()),
            arg_list: vec![
                Arg {
                    flat_key: StrId(4),
                    key: StrId(4),
                    value: ArgValue::Int(-7),
                },
                Arg {
                    flat_key: StrId(5),
                    key: StrId(600),
                    value: ArgValue::Real(-2.5),
                },
                Arg {
                    flat_key: StrId(6),
                    key: StrId(6),
                    value: ArgValue::String(StrId(70_000)),
                },
                Arg {
                    flat_key: StrId(7),
                    key: StrId(7),
                    value: ArgValue::Bool(true),
                },
                Arg {
                    flat_key: StrId(8),
                    key: StrId(9),
                    value: ArgValue::Uint(u64::MAX),
                },
                Arg {
                    flat_key: StrId(8),
                    key: StrId(9),
                    value: ArgValue::Null,
                },
            ],
            args_failed: true,
        }
    }

    fn same(a: &JsonEvent, b: &JsonEvent) -> bool {
        format!("{a:?}") == format!("{b:?}")
    }

    /// Every field comes back as it went in, from a full event and an
    /// empty one, and a reused event's stale fields do not leak.
    #[test]
    fn events_read_back_as_written() {
        let mut s = EventStore::default();
        let empty = JsonEvent {
            phase: b'i',
            ..JsonEvent::default()
        };
        s.push(5, &full(), full().args.as_deref(), &full().arg_list);
        s.push(-3, &empty, None, &[]);
        s.sort(false);
        let mut e = JsonEvent::default();
        assert_eq!(s.next_sorted(&mut e), Some(-3));
        assert!(same(&e, &empty), "{e:?}");
        assert_eq!(s.next_sorted(&mut e), Some(5));
        assert!(same(&e, &full()));
        assert_eq!(s.next_sorted(&mut e), None);
    }

    /// Sorted into blocks, every event reads back as written (large
    /// ones alone in a block), and freeing the blocks behind the reading
    /// leaves the events ahead readable.
    #[test]
    fn sorted_blocks_read_back_and_free_behind_the_reading() {
        const SMALL: usize = 16 << 10;
        let mut s = EventStore {
            block_bytes: Some(SMALL),
            ..EventStore::default()
        };
        let mut want = Vec::new();
        for i in 0..3000i64 {
            let mut e = full();
            e.tid = i;
            e.args = Some(vec![
                b'x';
                if i % 500 == 7 {
                    SMALL + 3
                } else {
                    (i % 300) as usize
                }
            ]);
            if i % 3 == 0 {
                e.args = None;
                e.cookie = None;
            }
            s.push(3000 - i, &e, e.args.as_deref(), &e.arg_list);
            want.push(e);
        }
        s.sort(false);
        assert!(s.blocks.len() > 3);
        let all = s.held_bytes();
        let mut e = JsonEvent::default();
        for i in 0..3000 {
            assert_eq!(s.next_sorted(&mut e), Some(i as i64 + 1));
            assert!(same(&e, &want[2999 - i]), "{i}");
            if i == 2000 {
                // A third is left to read; the blocks behind were freed.
                assert!(s.held_bytes() < all / 2, "{} of {all}", s.held_bytes());
            }
        }
        assert_eq!(s.next_sorted(&mut e), None);
        assert_eq!(s.held_bytes(), 0);
    }

    /// An event too long for its length to ride in its sort entry is
    /// measured by decoding it, and reads back whole between short ones.
    #[test]
    fn an_event_longer_than_the_packed_length_reads_back() {
        let mut s = EventStore::default();
        let mut long = full();
        long.args = Some(vec![b'y'; (1 << LEN_BITS) + 5]);
        let short = full();
        s.push(3, &short, short.args.as_deref(), &short.arg_list);
        s.push(2, &long, long.args.as_deref(), &long.arg_list);
        s.push(1, &short, short.args.as_deref(), &short.arg_list);
        s.sort(true);
        let mut e = JsonEvent::default();
        for (ts, want) in [(1, &short), (2, &long), (3, &short)] {
            assert_eq!(s.next_sorted(&mut e), Some(ts));
            assert!(same(&e, want), "{ts}");
        }
        assert_eq!(s.next_sorted(&mut e), None);
    }

    /// The sort is by time, stable, and at one time (by phase) ends
    /// first and longer complete events before shorter ones.
    #[test]
    fn the_sort_orders_by_time_then_phase_then_reading() {
        let ev = |phase: u8, dur: Option<i64>, tid: i64| JsonEvent {
            phase,
            dur,
            tid,
            ..JsonEvent::default()
        };
        let mut s = EventStore::default();
        s.push(2, &ev(b'B', None, 1), None, &[]);
        s.push(1, &ev(b'X', Some(5), 2), None, &[]);
        s.push(1, &ev(b'i', None, 3), None, &[]);
        s.push(1, &ev(b'X', Some(10), 4), None, &[]);
        s.push(1, &ev(b'E', None, 5), None, &[]);
        s.push(1, &ev(b'i', None, 6), None, &[]);
        let order = |s: &mut EventStore| -> Vec<i64> {
            let mut e = JsonEvent::default();
            std::iter::from_fn(|| s.next_sorted(&mut e).map(|_| e.tid)).collect()
        };
        let mut by_time = EventStore {
            index: s.index.clone(),
            bytes: s.bytes.clone(),
            ..EventStore::default()
        };
        by_time.sort(false);
        assert_eq!(order(&mut by_time), [2, 3, 4, 5, 6, 1]);
        s.sort(true);
        assert_eq!(order(&mut s), [5, 4, 2, 3, 6, 1]);
    }
}
