//! What an Instruments XML export says, gathered element by element as
//! upstream's tokenizer gathers it: threads (with their `tid` and
//! process), processes (`pid`), binaries (path, UUID, load address),
//! frames (address, name, binary), backtraces (frames, leaf first), and
//! each `<row>` with a backtrace as a sample (time, core, thread,
//! backtrace). xctrace writes a value once with an `id` attribute and
//! points back to it later with `ref`; the `id` or `ref` has to be the
//! element's first attribute. Every value is cached under its id, and a
//! `ref` to an id never written reads as nothing (a sample without a
//! thread, time 0, core 0), as upstream's maps read.
//!
//! Upstream's quirks are kept where they decide what loads: a `<core>`
//! written out (with an `id`) sets the cache but not its own row, which
//! keeps core 0; `<tid>` and `<pid>` count only inside a thread or
//! process written out. Numbers read as C's `stoll` reads them (leading
//! digits); element text that holds none is an error, where upstream's
//! reader throws. Rows without a backtrace (the clock-sync signposts of
//! the points-of-interest table) are not samples: a row whose `subsystem`
//! is `dev.perfetto.clock_sync` gives a clock snapshot, its time and its
//! `os-log-metadata`'s `uint64` (BOOTTIME), both cached by id as the
//! rest (a `uint64` and an `os-log-metadata` share one cache, as
//! upstream's do).

use crate::column_store::strings::StrId;
use crate::hash::HashMap;
use crate::parser::Parser;

use super::clock_sync::{CLOCK_SYNC_SUBSYSTEM, ClockSync};
use super::xml_stream::XmlHandler;

/// The id no value has.
pub const NULL: u32 = 0;

/// A binary image a frame is in.
#[derive(Debug, Clone, Default)]
pub struct Binary {
    /// Its path.
    pub path: String,
    /// Its UUID as raw bytes (None: no valid UUID).
    pub uuid: Option<Vec<u8>>,
    /// Where it is loaded.
    pub load_addr: i64,
    /// The highest frame address seen in it (at least `load_addr`).
    pub max_addr: i64,
}

/// One frame.
#[derive(Debug, Clone, Default)]
pub struct Frame {
    /// Its address.
    pub addr: i64,
    /// Its function's name, when Instruments symbolized it.
    pub name: String,
    /// Its binary ([`NULL`]: none).
    pub binary: u32,
}

/// A process.
#[derive(Debug, Clone, Copy, Default)]
pub struct Process {
    /// Its pid.
    pub pid: i32,
    /// Its name (`fmt`).
    pub fmt: StrId,
}

/// A thread.
#[derive(Debug, Clone, Copy, Default)]
pub struct Thread {
    /// Its tid.
    pub tid: i32,
    /// Its name (`fmt`).
    pub fmt: StrId,
    /// Its process ([`NULL`]: none).
    pub process: u32,
}

/// A `<row>`: one sample when it has a backtrace.
#[derive(Debug, Clone, Copy, Default)]
pub struct Row {
    /// `sample-time` (ns from the recording's start).
    pub ts: i64,
    /// The core.
    pub core: u32,
    /// The thread ([`NULL`]: none).
    pub thread: u32,
    /// The backtrace ([`NULL`]: none).
    pub backtrace: u32,
}

/// Values by 1-based id.
#[derive(Debug)]
pub struct Table<T>(Vec<T>);

impl<T> Default for Table<T> {
    fn default() -> Self {
        Table(Vec::new())
    }
}

impl<T> Table<T> {
    fn add(&mut self, v: T) -> u32 {
        self.0.push(v);
        u32::try_from(self.0.len()).unwrap_or(NULL)
    }

    /// The value of `id`.
    pub fn get(&self, id: u32) -> Option<&T> {
        self.0.get(id.checked_sub(1)? as usize)
    }

    fn get_mut(&mut self, id: u32) -> Option<&mut T> {
        self.0.get_mut(id.checked_sub(1)? as usize)
    }

    /// How many.
    pub fn len(&self) -> usize {
        self.0.len()
    }
}

/// How an element names its value.
enum Cached {
    /// Written out, under this id.
    New(u64),
    /// A reference to this id.
    Ref(u64),
    /// Neither: written out and not cached.
    Plain,
}

fn cached(attrs: &[(String, String)]) -> Cached {
    match attrs.first() {
        Some((k, v)) if k == "id" => Cached::New(c_ulong(v)),
        Some((k, v)) if k == "ref" => Cached::Ref(c_ulong(v)),
        _ => Cached::Plain,
    }
}

fn attr<'a>(attrs: &'a [(String, String)], key: &str) -> Option<&'a str> {
    attrs
        .iter()
        .find(|(k, _)| k == key)
        .map(|(_, v)| v.as_str())
}

/// Leading decimal digits as C's `strtoul` reads them (0 when none,
/// saturated).
fn c_ulong(s: &str) -> u64 {
    let digits = s.trim_start().bytes().take_while(u8::is_ascii_digit);
    digits.fold(0u64, |n, d| {
        n.saturating_mul(10).saturating_add(u64::from(d - b'0'))
    })
}

/// A hexadecimal address as C's `strtoll(s, NULL, 16)` reads it: an
/// optional sign and `0x`, then hex digits; 0 when none, saturated.
pub fn c_hex(s: &str) -> i64 {
    let s = s.trim_start();
    let (neg, s) = match s.as_bytes().first() {
        Some(b'-') => (true, &s[1..]),
        Some(b'+') => (false, &s[1..]),
        _ => (false, s),
    };
    let s = s
        .strip_prefix("0x")
        .or_else(|| s.strip_prefix("0X"))
        .filter(|r| r.bytes().next().is_some_and(|b| b.is_ascii_hexdigit()))
        .unwrap_or(s);
    let mut v: i128 = 0;
    for b in s.bytes() {
        let Some(d) = (b as char).to_digit(16) else {
            break;
        };
        v = (v * 16 + i128::from(d)).min(i128::from(i64::MAX) + 1);
    }
    let v = if neg { -v } else { v };
    i64::try_from(v.clamp(i128::from(i64::MIN), i128::from(i64::MAX))).unwrap_or(0)
}

/// A signed decimal as C++'s `stoll` reads it: an optional sign and at
/// least one digit (what follows is ignored); None when there is no
/// digit or the value overflows.
fn c_signed(s: &str) -> Option<i128> {
    let (neg, rest) = match s.as_bytes().first() {
        Some(b'-') => (true, &s[1..]),
        Some(b'+') => (false, &s[1..]),
        _ => (false, s),
    };
    let digits: Vec<u8> = rest.bytes().take_while(u8::is_ascii_digit).collect();
    if digits.is_empty() {
        return None;
    }
    let mut v: i128 = 0;
    for d in digits {
        v = v.checked_mul(10)?.checked_add(i128::from(d - b'0'))?;
        if v > i128::from(u64::MAX) {
            return None;
        }
    }
    Some(if neg { -v } else { v })
}

/// A UUID (hex digits, dashes between byte pairs ignored) as raw bytes.
pub fn uuid_bytes(s: &str) -> Option<Vec<u8>> {
    let digits: Vec<u32> = s
        .chars()
        .filter(|&c| c != '-')
        .map(|c| c.to_digit(16))
        .collect::<Option<_>>()?;
    let mut out = Vec::with_capacity(digits.len().div_ceil(2));
    let mut rest = digits.as_slice();
    if rest.len() % 2 == 1 {
        out.push(*rest.first()? as u8);
        rest = rest.get(1..)?;
    }
    for pair in rest.chunks(2) {
        out.push((pair.first()? * 16 + pair.get(1)?) as u8);
    }
    Some(out)
}

/// Everything read so far.
#[derive(Debug, Default)]
pub struct RowData {
    /// Threads by id.
    pub threads: Table<Thread>,
    /// Processes by id.
    pub processes: Table<Process>,
    /// Frames by id.
    pub frames: Table<Frame>,
    /// Backtraces (frame ids, leaf first) by id.
    pub backtraces: Table<Vec<u32>>,
    /// Binaries by id.
    pub binaries: Table<Binary>,
    /// The samples, in file order.
    pub rows: Vec<Row>,
    thread_ids: HashMap<u64, u32>,
    process_ids: HashMap<u64, u32>,
    core_ids: HashMap<u64, u32>,
    times: HashMap<u64, i64>,
    binary_ids: HashMap<u64, u32>,
    frame_ids: HashMap<u64, u32>,
    backtrace_ids: HashMap<u64, u32>,
    row: Row,
    new_thread: u32,
    new_process: u32,
    new_frame: u32,
    /// A `<core>` or time written out: the id its text is cached under.
    pending_core: Option<Option<u64>>,
    pending_time: Option<Option<u64>>,
    /// Text of the innermost element since its last child.
    text: Vec<u8>,
    /// Frame references in backtraces.
    frame_refs: usize,
    /// Text that should have been a number: where its element ends, and
    /// what it was.
    pub failed: Option<(u64, String)>,
    /// Subsystems by id.
    subsystems: HashMap<u64, String>,
    /// `os-log-metadata` and `uint64` values by id.
    log_values: HashMap<u64, u64>,
    /// The row's subsystem: under its id, or its own (None) in
    /// `own_subsystem`.
    row_subsystem: Option<Option<u64>>,
    own_subsystem: String,
    /// A `<subsystem>` written out: where its text goes.
    pending_subsystem: Option<Option<u64>>,
    /// The row's `os-log-metadata`: under its id, or its own (None) in
    /// `own_metadata`.
    row_metadata: Option<Option<u64>>,
    own_metadata: u64,
    /// A `<uint64>` written out: the id its text is cached under.
    pending_uint64: Option<Option<u64>>,
    /// The clock-sync signposts read.
    pub clock: ClockSync,
}

/// A value cached under an id: written out (stored), or looked up.
fn lookup<T: Copy + Default>(map: &mut HashMap<u64, T>, c: &Cached, new: impl FnOnce() -> T) -> T {
    match c {
        Cached::New(id) => {
            let v = new();
            map.insert(*id, v);
            v
        }
        Cached::Ref(id) => *map.entry(*id).or_default(),
        Cached::Plain => new(),
    }
}

impl RowData {
    /// Bytes held (an estimate for the load's budget).
    pub fn held_bytes(&self) -> u64 {
        let names: usize = self.frames.0.iter().map(|f| f.name.len()).sum::<usize>()
            + self.binaries.0.iter().map(|b| b.path.len()).sum::<usize>()
            + self.subsystems.values().map(String::len).sum::<usize>();
        let caches = self.thread_ids.len()
            + self.process_ids.len()
            + self.core_ids.len()
            + self.times.len()
            + self.binary_ids.len()
            + self.frame_ids.len()
            + self.backtrace_ids.len();
        let fixed = self.threads.len() * 12
            + self.processes.len() * 8
            + self.frames.len() * 40
            + self.backtraces.len() * 24
            + self.binaries.len() * 80
            + self.rows.len() * std::mem::size_of::<Row>()
            + self.frame_refs * 4
            + caches * 24
            + (self.subsystems.len() + self.log_values.len()) * 32
            + self.clock.snapshots().len() * 16;
        (names + fixed + self.text.capacity()) as u64
    }

    fn fail(&mut self, element: &str, text: &str, at: u64) {
        if self.failed.is_none() {
            let shown: String = text.chars().take(40).collect();
            self.failed = Some((at, format!("<{element}> holds no number: {shown:?}")));
        }
    }

    /// A number of an element's text (its end tag at `at`), as C++'s
    /// `stoll`/`stoul` read it, within `min..=max`.
    fn number(&mut self, element: &str, text: &str, at: u64, min: i128, max: i128) -> Option<i128> {
        match c_signed(text).filter(|v| (min..=max).contains(v)) {
            Some(v) => Some(v),
            None => {
                self.fail(element, text, at);
                None
            }
        }
    }

    fn start(&mut self, p: &mut Parser, name: &str, attrs: &[(String, String)]) {
        self.text.clear();
        let c = cached(attrs);
        let fmt = |p: &mut Parser| {
            attr(attrs, "fmt").map_or(StrId::NULL, |f| p.storage.strings.intern(f))
        };
        match name {
            "row" => self.row = Row::default(),
            "thread" => {
                let mut made = NULL;
                let id = lookup(&mut self.thread_ids, &c, || {
                    made = self.threads.add(Thread {
                        fmt: fmt(p),
                        ..Thread::default()
                    });
                    made
                });
                if made != NULL {
                    self.new_thread = made;
                }
                self.row.thread = id;
            }
            "process" => {
                let mut made = NULL;
                let id = lookup(&mut self.process_ids, &c, || {
                    made = self.processes.add(Process {
                        pid: 0,
                        fmt: fmt(p),
                    });
                    made
                });
                if made != NULL {
                    self.new_process = made;
                }
                if let Some(t) = self.threads.get_mut(self.new_thread) {
                    t.process = id;
                }
            }
            "core" => match c {
                Cached::Ref(id) => self.row.core = *self.core_ids.entry(id).or_default(),
                Cached::New(id) => {
                    self.core_ids.insert(id, 0);
                    self.pending_core = Some(Some(id));
                }
                Cached::Plain => self.pending_core = Some(None),
            },
            "sample-time" | "event-time" => match c {
                Cached::Ref(id) => self.row.ts = *self.times.entry(id).or_default(),
                Cached::New(id) => {
                    self.times.insert(id, 0);
                    self.pending_time = Some(Some(id));
                }
                Cached::Plain => self.pending_time = Some(None),
            },
            "subsystem" => {
                let slot = match c {
                    Cached::New(id) => {
                        self.subsystems.insert(id, String::new());
                        Some(id)
                    }
                    Cached::Ref(id) => {
                        self.subsystems.entry(id).or_default();
                        Some(id)
                    }
                    Cached::Plain => {
                        self.own_subsystem.clear();
                        None
                    }
                };
                self.row_subsystem = Some(slot);
                self.pending_subsystem = Some(slot);
            }
            "os-log-metadata" => {
                let slot = match c {
                    Cached::New(id) => {
                        self.log_values.insert(id, 0);
                        Some(id)
                    }
                    Cached::Ref(id) => {
                        self.log_values.entry(id).or_default();
                        Some(id)
                    }
                    Cached::Plain => {
                        self.own_metadata = 0;
                        None
                    }
                };
                self.row_metadata = Some(slot);
            }
            "uint64" => match c {
                Cached::New(id) => {
                    self.log_values.insert(id, 0);
                    self.pending_uint64 = Some(Some(id));
                }
                Cached::Ref(id) => {
                    let v = *self.log_values.entry(id).or_default();
                    self.set_metadata(v);
                }
                Cached::Plain => self.pending_uint64 = Some(None),
            },
            "backtrace" | "tagged-backtrace" => {
                self.row.backtrace = lookup(&mut self.backtrace_ids, &c, || {
                    self.backtraces.add(Vec::new())
                });
            }
            "frame" => {
                let mut made = NULL;
                let id = lookup(&mut self.frame_ids, &c, || {
                    made = self.frames.add(Frame {
                        addr: attr(attrs, "addr").map_or(0, c_hex),
                        name: attr(attrs, "name").unwrap_or("").to_owned(),
                        binary: NULL,
                    });
                    made
                });
                if made != NULL {
                    self.new_frame = made;
                }
                if let Some(b) = self.backtraces.get_mut(self.row.backtrace) {
                    b.push(id);
                    self.frame_refs += 1;
                }
            }
            "binary" => {
                let id = lookup(&mut self.binary_ids, &c, || {
                    let load_addr = attr(attrs, "load-addr").map_or(0, c_hex);
                    self.binaries.add(Binary {
                        path: attr(attrs, "path").unwrap_or("").to_owned(),
                        uuid: attr(attrs, "UUID").and_then(uuid_bytes),
                        load_addr,
                        max_addr: load_addr,
                    })
                });
                if let Some(f) = self.frames.get_mut(self.new_frame) {
                    f.binary = id;
                }
            }
            _ => {}
        }
    }

    fn end(&mut self, name: &str, at: u64) {
        let raw = std::mem::take(&mut self.text);
        let text = String::from_utf8_lossy(&raw);
        let text = text.trim_matches(|c: char| c.is_ascii_whitespace());
        match name {
            "sample-time" | "event-time" => {
                if let Some(key) = self.pending_time.take() {
                    if !text.is_empty() {
                        let range = (i128::from(i64::MIN), i128::from(i64::MAX));
                        if let Some(v) = self.number(name, text, at, range.0, range.1) {
                            let v = i64::try_from(v).unwrap_or(0);
                            self.row.ts = v;
                            if let Some(k) = key {
                                self.times.insert(k, v);
                            }
                        }
                    }
                }
            }
            "tid" | "pid" if !text.is_empty() => {
                let is_tid = name == "tid";
                let target = if is_tid {
                    self.new_thread
                } else {
                    self.new_process
                };
                if target != NULL {
                    let range = (i128::from(i32::MIN), i128::from(i32::MAX));
                    let v = self
                        .number(name, text, at, range.0, range.1)
                        .and_then(|v| i32::try_from(v).ok());
                    if let Some(v) = v {
                        if is_tid {
                            if let Some(t) = self.threads.get_mut(target) {
                                t.tid = v;
                            }
                        } else if let Some(p) = self.processes.get_mut(target) {
                            p.pid = v;
                        }
                    }
                }
            }
            "core" => {
                if let Some(key) = self.pending_core.take() {
                    if !text.is_empty() {
                        let range = (-i128::from(u64::MAX), i128::from(u64::MAX));
                        if let Some(v) = self.number(name, text, at, range.0, range.1) {
                            // `stoul` wraps a negative value; the id is the
                            // low 32 bits, as upstream's cast keeps them.
                            let v = (v.rem_euclid(1i128 << 64) & 0xFFFF_FFFF) as u32;
                            if let Some(k) = key {
                                self.core_ids.insert(k, v);
                            }
                        }
                    }
                }
            }
            "frame" => {
                if let Some(f) = self.frames.get(self.new_frame) {
                    let (addr, binary) = (f.addr, f.binary);
                    if let Some(b) = self.binaries.get_mut(binary) {
                        b.max_addr = b.max_addr.max(addr);
                    }
                }
                self.new_frame = NULL;
            }
            "subsystem" => {
                if let Some(slot) = self.pending_subsystem.take() {
                    if !raw.is_empty() {
                        let text = text.to_owned();
                        match slot {
                            Some(id) => {
                                self.subsystems.insert(id, text);
                            }
                            None => self.own_subsystem = text,
                        }
                    }
                }
            }
            "uint64" => {
                if let Some(slot) = self.pending_uint64.take() {
                    if !text.is_empty() && self.row_metadata.is_some() {
                        let range = (-i128::from(u64::MAX), i128::from(u64::MAX));
                        if let Some(v) = self.number(name, text, at, range.0, range.1) {
                            // `stoull` wraps a negative value.
                            let v = v.rem_euclid(1i128 << 64) as u64;
                            if let Some(id) = slot {
                                self.log_values.insert(id, v);
                            }
                            self.set_metadata(v);
                        }
                    }
                }
            }
            "thread" => self.new_thread = NULL,
            "process" => self.new_process = NULL,
            "row" if self.row.backtrace != NULL => self.rows.push(self.row),
            "row" => self.end_signpost(),
            _ => {}
        }
    }

    /// Sets the value of the row's `os-log-metadata`, if it has one.
    fn set_metadata(&mut self, v: u64) {
        match self.row_metadata {
            Some(Some(id)) => {
                self.log_values.insert(id, v);
            }
            Some(None) => self.own_metadata = v,
            None => {}
        }
    }

    /// The end of a row without a backtrace: a clock-sync signpost gives
    /// a snapshot; what the row named is forgotten.
    fn end_signpost(&mut self) {
        let Some(subsystem) = self.row_subsystem.take() else {
            return;
        };
        let name = match subsystem {
            Some(id) => self.subsystems.get(&id).map_or("", String::as_str),
            None => self.own_subsystem.as_str(),
        };
        if name == CLOCK_SYNC_SUBSYSTEM {
            let value = match self.row_metadata {
                Some(Some(id)) => self.log_values.get(&id).copied(),
                Some(None) => Some(self.own_metadata),
                None => None,
            };
            if let Some(v) = value {
                self.clock.add(self.row.ts, v);
            }
        }
        self.row_metadata = None;
        self.pending_uint64 = None;
    }
}

/// The rows fed by the XML stream, with the parser for names.
pub struct Feed<'a> {
    /// What is gathered.
    pub data: &'a mut RowData,
    /// The parser (strings, work).
    pub p: &'a mut Parser,
}

impl XmlHandler for Feed<'_> {
    fn start(&mut self, name: &str, attrs: &[(String, String)]) {
        self.p.storage.work.step(1);
        self.data.start(self.p, name, attrs);
    }

    fn end(&mut self, name: &str, at: u64) {
        self.data.end(name, at);
    }

    fn stopped(&self) -> bool {
        self.data.failed.is_some()
    }

    fn text(&mut self, text: &[u8]) {
        self.data.text.extend_from_slice(text);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_read_as_cs_functions_read_them() {
        assert_eq!(c_hex("0x100003ebf"), 0x1_0000_3ebf);
        assert_eq!(c_hex("1f"), 31);
        assert_eq!(c_hex("0x"), 0);
        assert_eq!(c_hex("zz"), 0);
        assert_eq!(c_hex("-0x10"), -16);
        assert_eq!(c_hex("0xffffffffffffffffff"), i64::MAX);
        assert_eq!(c_ulong("12abc"), 12);
        assert_eq!(c_ulong("x"), 0);
        assert_eq!(c_signed("42 ns"), Some(42));
        assert_eq!(c_signed("-7"), Some(-7));
        assert_eq!(c_signed("abc"), None);
        assert_eq!(c_signed("99999999999999999999999"), None);
        assert_eq!(
            uuid_bytes("C3B3BDBD-3487-30F1-8F9D-DD08B7708D49"),
            Some(vec![
                0xc3, 0xb3, 0xbd, 0xbd, 0x34, 0x87, 0x30, 0xf1, 0x8f, 0x9d, 0xdd, 0x08, 0xb7, 0x70,
                0x8d, 0x49
            ])
        );
        assert_eq!(uuid_bytes("abc"), Some(vec![0x0a, 0xbc]));
        assert_eq!(uuid_bytes("not hex"), None);
    }
}
