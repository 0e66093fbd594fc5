//! Chrome's JSON trace format (what `tracing-chrome`, browsers, PyTorch
//! write): an array of events, or an object holding `traceEvents` beside
//! `metadata`, `displayTimeUnit`, `systemTraceEvents` and other keys. The
//! bytes arrive in chunks split anywhere; they are read as they come, one
//! event object at a time (never the whole file as one tree), each event
//! kept in a compact form until the end of the trace, when the events are
//! sorted by time as Perfetto sorts them (at one time, end events first and
//! longer complete events before shorter ones, once the trace has complete
//! events) and parsed into the tables through the trackers.
//!
//! `scan.rs` reads JSON leniently, `event.rs` turns an event object into
//! its fields, `args.rs` its `args` into an arg set, `slices.rs` keeps the
//! slice stacks, `parse.rs` puts each event into the tables,
//! `v8_profile.rs` reads V8's CPU profiles (`P` events); `phase_tests.rs`
//! tests what is read past (object phases, `stackFrames`, `samples`),
//! `load_tests.rs` whole traces loaded.

pub mod args;
pub mod event;
pub mod parse;
pub mod scan;
pub mod slices;
pub mod store;
pub mod v8_profile;

#[cfg(test)]
mod phase_tests;

use crate::error::TraceError;
use crate::parser::Parser;
use crate::storage::args::ArgSetBuilder;

use event::{JsonEvent, Read};
use scan::{ScanError, Value};
use store::EventStore;

/// Bytes of a new chunk appended at a time (at least) to an item the last
/// chunk cut.
const TAIL_PIECE: usize = 64 << 10;

/// Where in the document the reading is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Position {
    /// Before the first `{` or `[`.
    Start,
    /// Between the keys of the outer object.
    DictKey,
    /// Inside the `traceEvents` array (or the outer array).
    Events,
    /// Inside the `systemTraceEvents` string.
    SystemTrace,
    /// Past the end of the document.
    Eof,
    /// Stopped at an event whose time does not read.
    Stalled,
}

/// The streaming reader of one JSON trace.
#[derive(Debug)]
pub struct JsonLoad {
    /// Bytes read but not yet consumed (at most the item being read).
    pending: Vec<u8>,
    /// Bytes consumed before `pending`.
    offset: u64,
    position: Position,
    /// The document is a bare array of events.
    array_only: bool,
    /// Events read, with their times.
    events: EventStore,
    /// A complete (`X`) event was read: equal times sort by phase.
    saw_complete: bool,
    /// The text of `systemTraceEvents` read so far, line by line.
    system_lines: Vec<String>,
    /// The line of `systemTraceEvents` being read.
    system_line: Vec<u8>,
    /// How far the event object at the start of `pending` was scanned.
    event_scan: scan::BlockScan,
    /// V8 CPU profile sessions (`P` events).
    v8: v8_profile::V8Profiles,
    /// The args of the event being kept, keyed.
    arg_scratch: ArgSetBuilder,
    /// The args' keys met so far.
    key_cache: args::KeyCache,
    /// The event being read (one, reused).
    event: JsonEvent,
}

impl Default for JsonLoad {
    fn default() -> Self {
        JsonLoad {
            pending: Vec::new(),
            offset: 0,
            position: Position::Start,
            array_only: false,
            events: EventStore::default(),
            saw_complete: false,
            system_lines: Vec::new(),
            system_line: Vec::new(),
            event_scan: scan::BlockScan::default(),
            v8: v8_profile::V8Profiles::default(),
            arg_scratch: ArgSetBuilder::default(),
            key_cache: args::KeyCache::new("args"),
            event: JsonEvent::default(),
        }
    }
}

fn broken(offset: u64, message: impl Into<String>) -> TraceError {
    TraceError::Json {
        offset,
        message: message.into(),
    }
}

impl JsonLoad {
    /// Memory held: bytes waiting and the events read.
    pub fn held_bytes(&self) -> u64 {
        (self.pending.len() as u64).saturating_add(self.events.held_bytes())
    }

    /// Reads the next bytes.
    pub fn push(&mut self, p: &mut Parser, data: &[u8]) -> Result<(), TraceError> {
        if matches!(self.position, Position::Eof | Position::Stalled) {
            if let (Position::Eof, Some(i)) =
                (self.position, data.iter().position(|&b| !scan::is_space(b)))
            {
                return Err(broken(
                    self.offset + i as u64,
                    "data after the end of the JSON document",
                ));
            }
            self.offset += data.len() as u64;
            return Ok(());
        }
        let mut data = data;
        // An item cut by the last chunk's end is completed in `pending`
        // from the next bytes, a piece at a time; once the reading is past
        // it, the rest is read where it lies in `data`, and only what the
        // chunk's end cuts again is copied.
        while !self.pending.is_empty() && !data.is_empty() {
            let old = self.pending.len();
            // At least as many bytes as held: an item read again from its
            // start (a large `metadata` value) is read a bounded number of
            // times over.
            let take = data.len().min(TAIL_PIECE.max(old));
            self.pending
                .extend_from_slice(data.get(..take).unwrap_or(&[]));
            let consumed = self.run(p)?;
            self.offset += consumed as u64;
            if consumed >= old {
                // The reading left the old bytes: it goes on in `data`
                // where it stopped (an item it began there is read again
                // from its start, its scan state kept).
                self.pending.clear();
                data = data.get(consumed - old..).unwrap_or(&[]);
                break;
            }
            self.pending.drain(..consumed);
            data = data.get(take..).unwrap_or(&[]);
        }
        if self.pending.is_empty() && !data.is_empty() {
            let consumed = self.run_on(p, data)?;
            self.offset += consumed as u64;
            self.pending
                .extend_from_slice(data.get(consumed..).unwrap_or(&[]));
        }
        Ok(())
    }

    /// Consumes what it can of `pending`; how many bytes.
    fn run(&mut self, p: &mut Parser) -> Result<usize, TraceError> {
        let buf = std::mem::take(&mut self.pending);
        let res = self.run_on(p, &buf);
        self.pending = buf;
        res
    }

    fn err_at(&self, pos: usize, e: ScanError) -> TraceError {
        match e {
            ScanError::Incomplete => broken(self.offset + pos as u64, "incomplete JSON"),
            ScanError::Invalid(m) => broken(self.offset + pos as u64, m),
        }
    }

    fn run_on(&mut self, p: &mut Parser, buf: &[u8]) -> Result<usize, TraceError> {
        let mut pos = 0;
        loop {
            match self.position {
                Position::Start => {
                    pos = scan::skip_space(buf, pos);
                    match buf.get(pos) {
                        None => return Ok(pos),
                        Some(b'{') => self.position = Position::DictKey,
                        Some(b'[') => {
                            self.array_only = true;
                            self.position = Position::Events;
                        }
                        Some(_) => {
                            return Err(broken(
                                self.offset + pos as u64,
                                "a JSON trace starts with '{' or '['",
                            ));
                        }
                    }
                    pos += 1;
                }
                Position::DictKey => {
                    while buf
                        .get(pos)
                        .is_some_and(|&b| scan::is_space(b) || b == b',')
                    {
                        pos += 1;
                    }
                    match buf.get(pos) {
                        None => return Ok(pos),
                        Some(b'}') => {
                            self.position = Position::Eof;
                            pos += 1;
                            continue;
                        }
                        _ => {}
                    }
                    let (key, after_key) = match scan::string(buf, pos) {
                        Ok(k) => k,
                        Err(ScanError::Incomplete) => return Ok(pos),
                        Err(e) => return Err(self.err_at(pos, e)),
                    };
                    let colon = scan::skip_space(buf, after_key);
                    match buf.get(colon) {
                        None => return Ok(pos),
                        Some(b':') => {}
                        Some(_) => return Err(broken(self.offset + colon as u64, "expected ':'")),
                    }
                    let vpos = scan::skip_space(buf, colon + 1);
                    if vpos >= buf.len() {
                        return Ok(pos);
                    }
                    match &*key {
                        "traceEvents" => {
                            if buf.get(vpos) != Some(&b'[') {
                                return Err(broken(
                                    self.offset + vpos as u64,
                                    "traceEvents is not an array",
                                ));
                            }
                            self.position = Position::Events;
                            pos = vpos + 1;
                        }
                        "systemTraceEvents" => {
                            if buf.get(vpos) != Some(&b'"') {
                                return Err(broken(
                                    self.offset + vpos as u64,
                                    "systemTraceEvents is not a string",
                                ));
                            }
                            self.position = Position::SystemTrace;
                            pos = vpos + 1;
                        }
                        other => {
                            let (v, end) = match scan::value(buf, vpos) {
                                Ok(v) => v,
                                Err(ScanError::Incomplete) => return Ok(pos),
                                Err(e) => return Err(self.err_at(vpos, e)),
                            };
                            match other {
                                "displayTimeUnit" => {
                                    // Only how the UI shows times: counted.
                                    p.storage.stats.incr("json_display_time_unit");
                                }
                                "metadata" => {
                                    if let Value::Object(o) = v {
                                        metadata(p, o);
                                    }
                                }
                                _ => {}
                            }
                            pos = end;
                        }
                    }
                }
                Position::Events => {
                    pos = scan::skip_space(buf, pos);
                    if buf.get(pos) == Some(&b',') {
                        pos = scan::skip_space(buf, pos + 1);
                    }
                    match buf.get(pos) {
                        None => return Ok(pos),
                        Some(b']') => {
                            pos += 1;
                            self.position = if self.array_only {
                                Position::Eof
                            } else {
                                Position::DictKey
                            };
                            continue;
                        }
                        Some(b'{') => {}
                        Some(_) => {
                            return Err(broken(
                                self.offset + pos as u64,
                                "expected an event object",
                            ));
                        }
                    }
                    // The scan goes on where the last piece left it: the
                    // object then starts `pending`.
                    if pos != 0 {
                        self.event_scan = scan::BlockScan::default();
                    }
                    // The object is read where it lies, its end found by
                    // the reading; only when the bytes end inside it (at
                    // most once a chunk) or it does not read is its end
                    // found first, piece by piece, and the object read
                    // once whole, so that an error is told where it was.
                    let rest = buf.get(pos..).unwrap_or(&[]);
                    let direct = if self.event_scan.is_fresh() {
                        let sink = event::ArgSink {
                            cache: &mut self.key_cache,
                            out: &mut self.arg_scratch,
                        };
                        event::read_at(&mut p.storage, rest, Some(sink), &mut self.event).ok()
                    } else {
                        None
                    };
                    let (read, end) = match direct {
                        Some(r) => {
                            let end = pos + r.end;
                            (Ok(r), end)
                        }
                        None => {
                            let Some(len) = self.event_scan.advance(rest) else {
                                return Ok(pos);
                            };
                            self.event_scan = scan::BlockScan::default();
                            let obj = buf.get(pos..pos + len).unwrap_or(&[]);
                            let sink = event::ArgSink {
                                cache: &mut self.key_cache,
                                out: &mut self.arg_scratch,
                            };
                            (
                                event::read_at(&mut p.storage, obj, Some(sink), &mut self.event),
                                pos + len,
                            )
                        }
                    };
                    p.storage.work.step(1);
                    let read = match read {
                        Ok(r) => r,
                        Err(e) => return Err(self.err_at(pos, e)),
                    };
                    match read.read {
                        Read::Event(_) if self.event.phase == b'P' => {
                            self.event.args = read.args.map(<[u8]>::to_vec);
                            self.v8.read(p, &self.event, &mut self.events);
                        }
                        Read::Event(ts) => {
                            if ts < 0 {
                                p.storage
                                    .stats
                                    .incr("trace_sorter_negative_timestamp_dropped");
                            } else {
                                self.saw_complete |= self.event.phase == b'X';
                                self.keep(p, ts, read.args, read.args_keyed);
                            }
                        }
                        Read::Skip(stat) => {
                            if let Some(s) = stat {
                                p.storage.stats.incr(s);
                            }
                        }
                        Read::Stall(stat) => {
                            p.storage.stats.incr(stat);
                            self.position = Position::Stalled;
                            return Ok(buf.len());
                        }
                    }
                    pos = end;
                }
                Position::SystemTrace => {
                    // Lines end at an escaped newline; the string at its
                    // closing quote.
                    let mut i = pos;
                    loop {
                        let Some(&c) = buf.get(i) else {
                            self.take_system_bytes(buf.get(pos..i).unwrap_or(&[]));
                            return Ok(i);
                        };
                        if c == b'"' {
                            self.take_system_bytes(buf.get(pos..i).unwrap_or(&[]));
                            self.end_system_line();
                            self.position = Position::DictKey;
                            pos = i + 1;
                            break;
                        }
                        if c == b'\\' {
                            let Some(&n) = buf.get(i + 1) else {
                                self.take_system_bytes(buf.get(pos..i).unwrap_or(&[]));
                                return Ok(i);
                            };
                            self.take_system_bytes(buf.get(pos..i).unwrap_or(&[]));
                            match n {
                                b'n' => self.end_system_line(),
                                b't' => self.system_line.push(b'\t'),
                                b'r' => self.system_line.push(b'\r'),
                                b'"' | b'\\' | b'/' => self.system_line.push(n),
                                _ => {}
                            }
                            i += 2;
                            pos = i;
                            continue;
                        }
                        i += 1;
                    }
                }
                Position::Eof => {
                    let rest = scan::skip_space(buf, pos);
                    if rest < buf.len() {
                        return Err(broken(
                            self.offset + rest as u64,
                            "data after the end of the JSON document",
                        ));
                    }
                    return Ok(buf.len());
                }
                Position::Stalled => return Ok(buf.len()),
            }
        }
    }

    /// Holds an event read at `ts` until the sort: the args of a slice or
    /// instant keyed and interned now (so that they are read once, and held
    /// as ids rather than text; `keyed`: already, while the event was read,
    /// and whether that failed), a counter's, thread state's or metadata
    /// event's as their bytes, any other's not at all.
    fn keep(&mut self, p: &mut Parser, ts: i64, args: Option<&[u8]>, keyed: Option<bool>) {
        let e = &mut self.event;
        let mut raw = None;
        let mut keyed_now = false;
        if let Some(a) = args {
            if event::keeps_arg_set(e.phase) {
                keyed_now = true;
                e.args_failed = match keyed {
                    Some(failed) => failed,
                    None => {
                        self.arg_scratch.clear();
                        args::add_cached(
                            &mut p.storage,
                            &mut self.key_cache,
                            a,
                            &mut self.arg_scratch,
                        )
                        .is_err()
                    }
                };
            } else if event::keeps_raw_args(e.phase) {
                raw = Some(a);
            }
        }
        let list = if keyed_now {
            self.arg_scratch.args()
        } else {
            &[]
        };
        self.events.push(ts, e, raw, list);
    }

    fn take_system_bytes(&mut self, b: &[u8]) {
        self.system_line.extend_from_slice(b);
    }

    fn end_system_line(&mut self) {
        let line = String::from_utf8_lossy(&self.system_line).into_owned();
        self.system_line.clear();
        if !line.is_empty() && !line.starts_with('#') {
            self.system_lines.push(line);
        }
    }

    /// Moves every event read to `time(ts)` (an archive member's own
    /// timeline placed on the merged one).
    pub fn map_times(&mut self, time: &mut dyn FnMut(i64) -> i64) {
        self.events.map_times(time);
    }

    /// The end of the trace: sorts the events and parses them.
    pub fn finish(mut self, p: &mut Parser) -> Result<(), TraceError> {
        let complete = self.position == Position::Eof
            || (self.array_only && matches!(self.position, Position::Events | Position::Stalled));
        if !complete {
            // The offset of what was left unread (the last byte at most).
            let total = self.offset + self.pending.len() as u64;
            return Err(broken(
                self.offset.min(total.saturating_sub(1)),
                "the JSON trace is incomplete",
            ));
        }
        let mut events = std::mem::take(&mut self.events);
        events.sort(self.saw_complete);
        // The systrace text's lines, merged with the events by time (an
        // event before a line of the same time).
        let mut lines = Vec::new();
        for l in &self.system_lines {
            match super::systrace::line::tokenize(l) {
                Some(line) => lines.push(line),
                None => p.storage.stats.incr("systrace_parse_failure"),
            }
        }
        lines.sort_by_key(|l| l.ts);
        let mut lines = lines.into_iter().peekable();
        let mut parser = parse::JsonParser::default();
        parser.v8 = std::mem::take(&mut self.v8);
        let mut e = JsonEvent::default();
        while let Some(ts) = events.next_sorted(&mut e) {
            while let Some(l) = lines.next_if(|l| l.ts < ts) {
                super::systrace::events::import(p, &l);
            }
            parser.parse(p, ts, &e);
            p.storage.work.step(1);
        }
        drop(events);
        for l in lines {
            super::systrace::events::import(p, &l);
        }
        parser.finish(p);
        Ok(())
    }
}

/// The `metadata` object: each member as `json_metadata.<key>`.
fn metadata(p: &mut Parser, obj: &[u8]) {
    let Ok(mut f) = scan::Fields::new(obj, 0) else {
        return;
    };
    while let Ok(Some((k, v))) = f.next_field() {
        let name = format!("json_metadata.{k}");
        match v {
            Value::Bool(b) => p.storage.set_metadata_int(&name, i64::from(b)),
            Value::Int(i) => p.storage.set_metadata_int(&name, i),
            Value::Float(d) => {
                if d == d.trunc() && d.abs() < 9.2e18 {
                    p.storage.set_metadata_int(&name, d as i64);
                } else {
                    p.storage.set_metadata_str(&name, &format_g(d));
                }
            }
            Value::Str(s) => p.storage.set_metadata_str(&name, &s),
            Value::Object(raw) | Value::Array(raw) => {
                p.storage
                    .set_metadata_str(&name, &String::from_utf8_lossy(raw));
            }
            Value::Null => {}
        }
    }
}

/// A double as C's `%g` prints it (six significant digits).
fn format_g(d: f64) -> String {
    if d == 0.0 {
        return "0".to_owned();
    }
    let exp = d.abs().log10().floor() as i32;
    if (-5..6).contains(&exp) {
        let decimals = (5 - exp).max(0) as usize;
        let s = format!("{d:.decimals$}");
        if s.contains('.') {
            s.trim_end_matches('0').trim_end_matches('.').to_owned()
        } else {
            s
        }
    } else {
        let s = format!("{d:.5e}");
        // Rust writes 1.50000e7; C writes 1.5e+07.
        let (m, e) = s.split_once('e').unwrap_or((&s, "0"));
        let m = if m.contains('.') {
            m.trim_end_matches('0').trim_end_matches('.')
        } else {
            m
        };
        let ev: i32 = e.parse().unwrap_or(0);
        format!("{m}e{}{:02}", if ev < 0 { '-' } else { '+' }, ev.abs())
    }
}

#[cfg(test)]
mod load_tests;
