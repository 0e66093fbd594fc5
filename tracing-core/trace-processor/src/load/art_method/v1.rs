//! ART method trace v1, in its two layouts. With a text header: lines
//! `*version`, the version (1 to 3), `key=value` options (`clock=wall` or
//! `dual`), `*threads` (`tid\tname`), `*methods` (`0xid\tclass\t...`),
//! `*end`, then a 32-byte binary header (`SLOW`, the same version, the
//! start time in µs at byte 8, v3's record size at byte 16) and records of
//! a thread id (1 byte in v1, else 2), a method id with the action in its
//! low two bits (0 enter, 1 and 2 exit) and µs time deltas (the wall
//! clock's second when `dual`). Streaming: the binary header first
//! (version | 0xf0), then records whose thread 0 marks a method line, a
//! thread name or the summary holding the options, which ends the file;
//! the records are kept until the summary says which clock they carry.

use crate::parser::Parser;

use super::{Event, Shared};

/// The binary header's size.
const HEADER_LEN: usize = 32;
/// The smallest record v3 may declare.
const MIN_V3_RECORD: usize = 14;
/// Thread 0's record codes (streaming).
const METHODS: u8 = 1;
const THREADS: u8 = 2;
const SUMMARY: u8 = 3;

/// Which section of the text header is being read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Section {
    Start,
    Version,
    Options,
    Threads,
    Methods,
    /// The binary header after `*end`.
    DataHeader,
    /// Records.
    Data,
    /// Streaming: past the summary.
    Done,
}

/// A v1 trace being read.
#[derive(Debug)]
pub struct V1 {
    streaming: bool,
    section: Section,
    version: u32,
    /// Whether records carry two clocks (`clock=dual`).
    dual: bool,
    /// The start time, µs.
    start: i64,
    record_size: usize,
    /// Streaming: the records (thread id and body), read at the end.
    raw: Vec<u8>,
}

/// An error with the offset in the bytes parsed.
type Fail = (usize, String);

fn u16_at(b: &[u8], at: usize) -> u16 {
    b.get(at..at + 2)
        .and_then(|s| s.try_into().ok())
        .map_or(0, u16::from_le_bytes)
}

fn u32_at(b: &[u8], at: usize) -> u32 {
    b.get(at..at + 4)
        .and_then(|s| s.try_into().ok())
        .map_or(0, u32::from_le_bytes)
}

fn u64_at(b: &[u8], at: usize) -> u64 {
    b.get(at..at + 8)
        .and_then(|s| s.try_into().ok())
        .map_or(0, u64::from_le_bytes)
}

impl V1 {
    /// A reader of the streaming layout (else the text header's).
    pub fn new(streaming: bool) -> Self {
        V1 {
            streaming,
            section: if streaming {
                Section::DataHeader
            } else {
                Section::Start
            },
            version: 0,
            dual: false,
            start: 0,
            record_size: 0,
            raw: Vec::new(),
        }
    }

    /// Bytes held beyond the input buffer.
    pub fn held_bytes(&self) -> u64 {
        self.raw.len() as u64
    }

    /// An option line (`key=value`).
    fn option(&mut self, line: &str) -> Result<(), String> {
        let parts: Vec<&str> = line.split('=').collect();
        let [key, value] = parts[..] else {
            return Err(format!("option line {line:?}"));
        };
        if key == "clock" {
            self.dual = match value {
                "dual" => true,
                "wall" => false,
                "thread-cpu" => return Err("the thread-cpu clock is not supported".into()),
                other => return Err(format!("unknown clock {other}")),
            };
        }
        Ok(())
    }

    /// A section line (`*...`).
    fn section_line(&mut self, line: &str) -> Result<(), String> {
        self.section = match line {
            "*version" => Section::Version,
            "*threads" => Section::Threads,
            "*methods" => Section::Methods,
            "*end" => Section::DataHeader,
            other => return Err(format!("unexpected line {other:?} for a section header")),
        };
        Ok(())
    }

    /// The binary header.
    fn data_header(&mut self, h: &[u8]) -> Result<(), String> {
        if !h.starts_with(super::MAGIC) {
            return Err("no SLOW magic in the data header".into());
        }
        let version = u32::from(u16_at(h, 4));
        if self.streaming {
            self.version = version ^ 0xf0;
        } else if version != self.version {
            return Err("the data's version is not the header's".into());
        }
        self.start = u64_at(h, 8) as i64;
        self.record_size = match self.version {
            1 => 9,
            2 => 10,
            3 => {
                let size = usize::from(u16_at(h, 16));
                if size < MIN_V3_RECORD {
                    return Err(format!("record size {size} below {MIN_V3_RECORD}"));
                }
                size
            }
            v => return Err(format!("version {v}")),
        };
        self.section = Section::Data;
        Ok(())
    }

    /// The bytes of a record after its thread id into an event.
    fn record(&self, shared: &mut Shared, tid: u32, body: &[u8]) {
        let word = u32_at(body, 0);
        let delta = if self.dual {
            u32_at(body, 8)
        } else {
            u32_at(body, 4)
        };
        let method = shared
            .methods
            .get(&u64::from(word & !3))
            .copied()
            .unwrap_or_default();
        let us = self.start.saturating_add(i64::from(delta));
        shared.events.push(Event {
            ts: us.saturating_mul(1000),
            tid,
            // Actions 1 and 2 exit; 0 (and 3, which upstream leaves as
            // its default) enter.
            enter: !matches!(word & 3, 1 | 2),
            method,
        });
    }

    /// Parses what `buf` holds; the bytes used.
    pub fn parse(
        &mut self,
        p: &mut Parser,
        shared: &mut Shared,
        buf: &[u8],
    ) -> Result<usize, Fail> {
        let mut at = 0;
        loop {
            p.storage.work.step(1);
            let rest = buf.get(at..).unwrap_or(&[]);
            match self.section {
                Section::Start
                | Section::Version
                | Section::Options
                | Section::Threads
                | Section::Methods => {
                    let Some(nl) = rest.iter().position(|&b| b == b'\n') else {
                        return Ok(at);
                    };
                    let line = String::from_utf8_lossy(rest.get(..nl).unwrap_or(&[])).into_owned();
                    let line_at = at;
                    let fail = move |m: String| (line_at, m);
                    at += nl + 1;
                    match self.section {
                        Section::Start => self.section_line(&line).map_err(fail)?,
                        Section::Version => {
                            let v: u32 = line
                                .parse()
                                .ok()
                                .filter(|v| (1..=3).contains(v))
                                .ok_or_else(|| fail(format!("version {line:?} not supported")))?;
                            self.version = v;
                            self.section = Section::Options;
                        }
                        _ if line.starts_with('*') => self.section_line(&line).map_err(fail)?,
                        Section::Options => self.option(&line).map_err(fail)?,
                        Section::Threads => {
                            let parts: Vec<&str> = line.split('\t').collect();
                            let [tid, name] = parts[..] else {
                                return Err(fail(format!("thread line {line:?}")));
                            };
                            let tid: u32 = tid
                                .parse()
                                .map_err(|_| fail(format!("thread id {tid:?}")))?;
                            let name = p.storage.strings.intern(name);
                            shared.threads.insert(u64::from(tid), name);
                        }
                        _ => shared.method_line(p, &line, true).map_err(fail)?,
                    }
                }
                Section::DataHeader => {
                    let Some(h) = rest.get(..HEADER_LEN) else {
                        return Ok(at);
                    };
                    self.data_header(h).map_err(|m| (at, m))?;
                    at += HEADER_LEN;
                }
                Section::Data if !self.streaming => {
                    let n = self.record_size;
                    let mut used = 0;
                    while let Some(r) = rest.get(used..used + n) {
                        let (tid, body) = if self.version == 1 {
                            (
                                u32::from(r.first().copied().unwrap_or(0)),
                                r.get(1..).unwrap_or(&[]),
                            )
                        } else {
                            (u32::from(u16_at(r, 0)), r.get(2..).unwrap_or(&[]))
                        };
                        self.record(shared, tid, body);
                        used += n;
                    }
                    return Ok(at + used);
                }
                Section::Data => {
                    let Some(tid) = rest.get(..2).map(|b| u16_at(b, 0)) else {
                        return Ok(at);
                    };
                    if tid != 0 {
                        let Some(r) = rest.get(..self.record_size) else {
                            return Ok(at);
                        };
                        self.raw.extend_from_slice(r);
                        at += self.record_size;
                        continue;
                    }
                    let Some(&code) = rest.get(2) else {
                        return Ok(at);
                    };
                    match code {
                        METHODS => {
                            let Some(len) = rest.get(3..5).map(|b| usize::from(u16_at(b, 0)))
                            else {
                                return Ok(at);
                            };
                            let Some(line) = rest.get(5..5 + len) else {
                                return Ok(at);
                            };
                            let line = String::from_utf8_lossy(line).into_owned();
                            shared.method_line(p, &line, true).map_err(|m| (at, m))?;
                            at += 5 + len;
                        }
                        THREADS => {
                            let Some(h) = rest.get(3..7) else {
                                return Ok(at);
                            };
                            let tid = u16_at(h, 0);
                            let len = usize::from(u16_at(h, 2));
                            let Some(name) = rest.get(7..7 + len) else {
                                return Ok(at);
                            };
                            let name = p.storage.strings.intern(&String::from_utf8_lossy(name));
                            shared.threads.insert(u64::from(tid), name);
                            at += 7 + len;
                        }
                        SUMMARY => {
                            let Some(len) = rest.get(3..7).map(|b| u32_at(b, 0) as usize) else {
                                return Ok(at);
                            };
                            let Some(text) = rest.get(7..7usize.saturating_add(len)) else {
                                return Ok(at);
                            };
                            let text = String::from_utf8_lossy(text).into_owned();
                            self.summary(&text).map_err(|m| (at, m))?;
                            at += 7 + len;
                            self.section = Section::Done;
                        }
                        other => return Err((at, format!("unknown opcode {other}"))),
                    }
                }
                Section::Done => {
                    if rest.is_empty() {
                        return Ok(at);
                    }
                    return Err((at, "data after the summary".into()));
                }
            }
        }
    }

    /// The streaming summary: its options from the third line up to
    /// `*threads`.
    fn summary(&mut self, text: &str) -> Result<(), String> {
        let mut lines = text.split('\n').skip(2);
        loop {
            match lines.next() {
                Some("*threads") => return Ok(()),
                Some(l) => self.option(l)?,
                None => return Err("the summary ends before *threads".into()),
            }
        }
    }

    /// Ends the trace: a streaming one's records become events now that
    /// the clock is known; an incomplete trace is an error.
    pub fn finish(
        &mut self,
        _p: &mut Parser,
        shared: &mut Shared,
        left: &[u8],
    ) -> Result<(), String> {
        if self.streaming {
            if self.section != Section::Done {
                return Err("the trace is incomplete (no summary)".into());
            }
            let raw = std::mem::take(&mut self.raw);
            let n = self.record_size.max(2);
            for r in raw.chunks_exact(n) {
                self.record(shared, u32::from(u16_at(r, 0)), r.get(2..).unwrap_or(&[]));
            }
            return Ok(());
        }
        if self.section != Section::Data || !left.is_empty() {
            return Err("the trace is incomplete".into());
        }
        Ok(())
    }
}
