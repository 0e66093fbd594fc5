//! ART method traces (what `Debug.startMethodTracing` and Android Studio's
//! Java/Kotlin method recording write) as Perfetto reads them, in their
//! three layouts: v1 with a text header (`*version`, options, `*threads`,
//! `*methods`, `*end`) then a `SLOW` binary header and fixed-size records;
//! v1 streaming (`SLOW` first, threads and methods as records of thread 0,
//! the options in a summary at the end, `v1.rs`); and v2 (`SLOW` with
//! version 4 or 5, LEB128-packed entries per thread, `v2.rs`). Each method
//! enter and exit is kept with its time and, at the end, in time order,
//! opens or closes a slice named `class.method: signature` (args
//! `pathname`, `line_number`) on its thread's `art_method_tracing` track.
//! Layouts this reader cannot follow are errors, as upstream's are.

mod v1;
mod v2;

use crate::column_store::strings::StrId;
use crate::error::TraceError;
use crate::hash::HashMap;
use crate::parser::Parser;
use crate::storage::args::{ArgSetBuilder, ArgValue};
use crate::storage::rows::SliceRow;
use crate::tracker::process::NamePriority;
use crate::tracker::tracks::{EventType, TrackSpec};

use super::reader::FormatReader;

const FORMAT: &str = "art method";

/// The binary header's magic (`SLOW`, little-endian).
pub const MAGIC: &[u8; 4] = b"SLOW";

/// Whether `head` opens an ART method trace: the text header's first line,
/// or the `SLOW` magic.
pub fn sniff(head: &[u8]) -> bool {
    head.starts_with(b"*version\n") || head.starts_with(MAGIC)
}

/// Whether a `SLOW` header's version (bytes 4-5) is one of the v2 format.
fn is_v2(head: &[u8]) -> Option<bool> {
    let v = u16::from_le_bytes(head.get(4..6)?.try_into().ok()?);
    Some(matches!(v, 0x04 | 0x05 | 0xf4 | 0xf5))
}

/// A method as slices name it.
#[derive(Debug, Clone, Copy, Default)]
pub struct Method {
    /// `class.method: signature`.
    pub name: StrId,
    /// The source file.
    pub pathname: Option<StrId>,
    /// The line.
    pub line: Option<u32>,
}

/// A method enter or exit.
#[derive(Debug, Clone, Copy)]
pub struct Event {
    /// Time, ns.
    pub ts: i64,
    /// Thread.
    pub tid: u32,
    /// Enter (else exit).
    pub enter: bool,
    /// The method.
    pub method: Method,
}

/// What both layouts' readers share: methods, thread names and the events.
#[derive(Debug, Default)]
pub struct Shared {
    /// Methods by id.
    pub methods: HashMap<u64, Method>,
    /// Thread names by id.
    pub threads: HashMap<u64, StrId>,
    /// The events, in file order.
    pub events: Vec<Event>,
}

impl Shared {
    /// A method's description (tab-separated: class, then name and
    /// signature and optionally file and line, or file and line) under
    /// `id`. `with_id`: the line starts with the id in hex (v1).
    fn method_line(&mut self, p: &mut Parser, line: &str, with_id: bool) -> Result<(), String> {
        let mut tokens: Vec<&str> = line
            .trim_matches([' ', '\t', '\n', '\r'])
            .split('\t')
            .collect();
        let id = if with_id {
            if tokens.len() < 2 {
                return Err(format!("method line with {} tokens", tokens.len()));
            }
            let raw = tokens.remove(0);
            let hex = raw.trim_start_matches("0x");
            u64::from(u32::from_str_radix(hex, 16).map_err(|_| format!("method id {raw:?}"))?)
        } else {
            0
        };
        self.method_tokens(p, id, &tokens, with_id)?;
        Ok(())
    }

    /// A method from its tokens after the id.
    fn method_tokens(
        &mut self,
        p: &mut Parser,
        id: u64,
        t: &[&str],
        strict: bool,
    ) -> Result<(), String> {
        let class = t.first().copied().unwrap_or("");
        let (mut method, mut signature, mut pathname, mut line) = ("", "", None, None);
        let s = &mut p.storage.strings;
        if t.len() == 5 {
            method = t.get(1).copied().unwrap_or("");
            signature = t.get(2).copied().unwrap_or("");
            let file = t.get(3).copied().unwrap_or("");
            pathname = Some(s.intern(&full_path(class, file)));
            line = t.get(4).and_then(|l| l.parse().ok());
        } else if t.len() >= 3 {
            let third = t.get(2).copied().unwrap_or("");
            if third.starts_with('(') {
                method = t.get(1).copied().unwrap_or("");
                signature = third;
                pathname = t.get(3).map(|f| s.intern(f));
            } else {
                pathname = t.get(1).map(|f| s.intern(f));
                line = third.parse().ok();
            }
        } else if t.len() == 2 && strict {
            return Err(format!("method line with 3 tokens ({})", t.join("\t")));
        }
        let name = s.intern(&format!("{class}.{method}: {signature}"));
        self.methods.insert(
            id,
            Method {
                name,
                pathname,
                line,
            },
        );
        Ok(())
    }

    /// A v2 method: `method_tokens` under its own id.
    fn method_v2(&mut self, p: &mut Parser, id: u64, text: &str) {
        let tokens: Vec<&str> = if text.is_empty() {
            Vec::new()
        } else {
            text.split('\t').collect()
        };
        // v2's lines have no id; the count rules are the same one token on.
        let _ = self.method_tokens(p, id, &tokens, false);
    }

    fn held_bytes(&self) -> u64 {
        (self.events.len() * std::mem::size_of::<Event>()
            + self.methods.len() * std::mem::size_of::<(u64, Method)>()) as u64
    }
}

/// A `.java` file's path under its class's package (`a/b/C` and `C.java`
/// give `a/b/C.java`); other files as they are.
fn full_path(class: &str, file: &str) -> String {
    match class.rfind('/') {
        Some(i) if file.ends_with(".java") => format!("{}{file}", &class[..=i]),
        _ => file.to_owned(),
    }
}

/// The layout, once told.
#[derive(Debug)]
enum Layout {
    /// Not enough bytes yet.
    Unknown,
    /// v1, text header or streaming.
    V1(Box<v1::V1>),
    /// v2.
    V2(Box<v2::V2>),
}

/// The reader of ART method traces.
#[derive(Debug)]
pub struct ArtMethodLoad {
    /// Bytes not consumed yet.
    buf: Vec<u8>,
    /// Bytes consumed before `buf`.
    offset: u64,
    layout: Layout,
    shared: Shared,
}

impl Default for ArtMethodLoad {
    fn default() -> Self {
        ArtMethodLoad {
            buf: Vec::new(),
            offset: 0,
            layout: Layout::Unknown,
            shared: Shared::default(),
        }
    }
}

/// An error of this format at `offset`.
fn malformed(offset: u64, message: impl Into<String>) -> TraceError {
    TraceError::Malformed {
        format: FORMAT,
        offset,
        message: message.into(),
    }
}

impl FormatReader for ArtMethodLoad {
    fn push(&mut self, p: &mut Parser, data: &[u8]) -> Result<(), TraceError> {
        self.buf.extend_from_slice(data);
        if matches!(self.layout, Layout::Unknown) {
            if self.buf.len() < 6 && !self.buf.starts_with(b"*") {
                return Ok(());
            }
            self.layout = if is_v2(&self.buf) == Some(true) {
                Layout::V2(Box::default())
            } else {
                Layout::V1(Box::new(v1::V1::new(self.buf.starts_with(MAGIC))))
            };
        }
        let used = match &mut self.layout {
            Layout::V1(r) => r.parse(p, &mut self.shared, &self.buf),
            Layout::V2(r) => r.parse(p, &mut self.shared, &self.buf),
            Layout::Unknown => Ok(0),
        }
        .map_err(|(at, m)| malformed(self.offset + at as u64, m))?;
        self.buf.drain(..used.min(self.buf.len()));
        self.offset += used as u64;
        Ok(())
    }

    fn held_bytes(&self) -> u64 {
        let layout = match &self.layout {
            Layout::V1(r) => r.held_bytes(),
            _ => 0,
        };
        (self.buf.len() as u64)
            .saturating_add(self.shared.held_bytes())
            .saturating_add(layout)
    }

    fn finish(mut self: Box<Self>, p: &mut Parser) -> Result<(), TraceError> {
        let end = self.offset + self.buf.len() as u64;
        match &mut self.layout {
            Layout::V1(r) => r.finish(p, &mut self.shared, &self.buf),
            Layout::V2(r) => r.finish(p, &self.buf),
            Layout::Unknown => Err("the trace is incomplete".to_owned()),
        }
        .map_err(|m| malformed(end, m))?;
        import(p, self.shared);
        Ok(())
    }
}

/// The events in time order (equal times in file order) into slices.
fn import(p: &mut Parser, mut shared: Shared) {
    shared.events.sort_by_key(|e| e.ts);
    let pathname = p.storage.strings.intern("pathname");
    let line_number = p.storage.strings.intern("line_number");
    let mut tracks: HashMap<u32, u32> = HashMap::default();
    for e in &shared.events {
        p.storage.work.step(1);
        let track = match tracks.get(&e.tid) {
            Some(t) => *t,
            None => {
                let utid = p
                    .processes
                    .get_or_create_thread(&mut p.storage, i64::from(e.tid));
                if let Some(name) = shared.threads.get(&u64::from(e.tid)) {
                    p.processes
                        .set_thread_name(&mut p.storage, utid, *name, NamePriority::Other);
                }
                let mut spec = TrackSpec::new(None, "art_method_tracing", EventType::Slice);
                spec.utid = Some(utid);
                let t = p.tracks.create(&mut p.storage, &spec);
                tracks.insert(e.tid, t);
                t
            }
        };
        if e.enter {
            let mut b = ArgSetBuilder::default();
            if let Some(f) = e.method.pathname {
                b.add(pathname, pathname, ArgValue::String(f));
            }
            if let Some(l) = e.method.line {
                b.add(line_number, line_number, ArgValue::Int(i64::from(l)));
            }
            let row = SliceRow {
                ts: e.ts,
                dur: -1,
                track_id: track,
                name: e.method.name,
                arg_set_id: p.storage.args.add_set(&b).into(),
                ..Default::default()
            };
            p.slices.begin(&mut p.storage, row);
        } else {
            p.slices.end(&mut p.storage, track, e.ts, None);
        }
    }
}

#[cfg(test)]
mod tests;
