//! ART method trace v2 (`SLOW`, version 4 or 5, or 0xf4/0xf5 streaming;
//! 5 and 0xf5 carry a second, thread-CPU clock). A 32-byte header (start
//! time in ns at byte 6, the timestamp counter's frequency at byte 22)
//! then entries, each opened by a byte: 0 a thread's name (4-byte id,
//! 2-byte length), 1 a method (8-byte id, 2-byte length, tab-separated
//! description), 2 a block of one thread's records (4-byte thread, 3-byte
//! count, 4-byte size), 3 the summary (`key=value` lines up to `*end`,
//! stored as metadata). A record is a signed LEB128 delta of the time with
//! the action in its low two bits, a second clock's delta when dual, and
//! for an enter a delta of the method id; an exit's method is the top of
//! its thread's stack. A record cut short ends its block.

use crate::hash::HashMap;
use crate::parser::Parser;

use super::{Event, Shared};

const HEADER_LEN: usize = 32;
const THREAD_INFO: u8 = 0;
const METHOD_INFO: u8 = 1;
const TRACE_ENTRIES: u8 = 2;
const SUMMARY: u8 = 3;
const ENTER: u64 = 0;

/// A v2 trace being read.
#[derive(Debug, Default)]
pub struct V2 {
    header_read: bool,
    dual: bool,
    /// Start time, ns.
    start: i64,
    tsc_frequency: u64,
    /// Per thread: the methods entered and not exited.
    stacks: HashMap<u32, Vec<u64>>,
    /// Inside the summary: its text so far.
    summary: Option<Vec<u8>>,
    complete: bool,
}

type Fail = (usize, String);

fn le(b: &[u8]) -> u64 {
    let mut x = [0u8; 8];
    for (d, s) in x.iter_mut().zip(b) {
        *d = *s;
    }
    u64::from_le_bytes(x)
}

/// A signed LEB128 number from `b`: its value and length, or None when it
/// is cut short.
fn sleb128(b: &[u8]) -> Option<(i64, usize)> {
    let mut result: u64 = 0;
    let mut shift = 0u32;
    for (i, &byte) in b.iter().enumerate() {
        if shift < 64 {
            result |= u64::from(byte & 0x7f) << shift;
        }
        shift += 7;
        if byte & 0x80 == 0 {
            if shift < 64 && byte & 0x40 != 0 {
                result |= u64::MAX << shift;
            }
            return Some((result as i64, i + 1));
        }
        if shift >= 70 {
            return None;
        }
    }
    None
}

impl V2 {
    /// Parses what `buf` holds; the bytes used.
    pub fn parse(
        &mut self,
        p: &mut Parser,
        shared: &mut Shared,
        buf: &[u8],
    ) -> Result<usize, Fail> {
        let mut at = 0;
        if !self.header_read {
            let Some(h) = buf.get(..HEADER_LEN) else {
                return Ok(0);
            };
            let version = le(h.get(4..6).unwrap_or(&[]));
            self.dual = matches!(version, 0x05 | 0xf5);
            self.start = le(h.get(6..14).unwrap_or(&[])) as i64;
            self.tsc_frequency = le(h.get(22..30).unwrap_or(&[]));
            self.header_read = true;
            at = HEADER_LEN;
        }
        if self.complete {
            return if buf.len() > at {
                Err((at, "data after the summary".into()))
            } else {
                Ok(at)
            };
        }
        loop {
            p.storage.work.step(1);
            let rest = buf.get(at..).unwrap_or(&[]);
            if let Some(text) = &mut self.summary {
                // Only the new bytes (and three before, for a split
                // `*end`) are searched.
                let from = text.len().saturating_sub(3);
                text.extend_from_slice(rest);
                if text
                    .get(from..)
                    .is_some_and(|t| t.windows(4).any(|w| w == b"*end"))
                {
                    self.complete = true;
                    let text = self.summary.take().unwrap_or_default();
                    metadata(p, &text);
                }
                return Ok(at + rest.len());
            }
            let Some(&kind) = rest.first() else {
                return Ok(at);
            };
            match kind {
                THREAD_INFO | METHOD_INFO => {
                    let id_len = if kind == METHOD_INFO { 8 } else { 4 };
                    let Some(h) = rest.get(1..1 + id_len + 2) else {
                        return Ok(at);
                    };
                    let id = le(h.get(..id_len).unwrap_or(&[]));
                    let len = le(h.get(id_len..).unwrap_or(&[])) as usize;
                    let start = 1 + id_len + 2;
                    let Some(name) = rest.get(start..start + len) else {
                        return Ok(at);
                    };
                    let mut text = String::from_utf8_lossy(name).into_owned();
                    if text.ends_with('\n') {
                        text.pop();
                    }
                    if kind == METHOD_INFO {
                        shared.method_v2(p, id, &text);
                    } else {
                        let name = p.storage.strings.intern(&text);
                        shared.threads.insert(id, name);
                    }
                    at += start + len;
                }
                TRACE_ENTRIES => {
                    let Some(h) = rest.get(1..12) else {
                        return Ok(at);
                    };
                    let tid = le(h.get(..4).unwrap_or(&[])) as u32;
                    let count = le(h.get(4..7).unwrap_or(&[]));
                    let size = le(h.get(7..11).unwrap_or(&[])) as usize;
                    let Some(block) = rest.get(12..12 + size) else {
                        return Ok(at);
                    };
                    if !shared.threads.contains_key(&u64::from(tid)) {
                        return Err((at, format!("records of unknown thread {tid}")));
                    }
                    self.entries(p, shared, tid, count, block);
                    at += 12 + size;
                }
                SUMMARY => {
                    // The opcode and the byte after it.
                    let skip = rest.len().min(2);
                    self.summary = Some(Vec::new());
                    at += skip;
                }
                other => return Err((at, format!("unknown opcode {other}"))),
            }
        }
    }

    /// One block of a thread's records.
    fn entries(&mut self, p: &mut Parser, shared: &mut Shared, tid: u32, count: u64, block: &[u8]) {
        let stack = self.stacks.entry(tid).or_default();
        let mut pos = 0usize;
        let mut prev_method: i64 = 0;
        let mut prev_time: u64 = 0;
        for _ in 0..count {
            p.storage.work.step(1);
            let Some((diff, n)) = block.get(pos..).and_then(sleb128) else {
                break;
            };
            pos += n;
            prev_time = prev_time.wrapping_add(diff as u64);
            let action = prev_time & 3;
            if self.dual {
                let Some((_, n)) = block.get(pos..).and_then(sleb128) else {
                    break;
                };
                pos += n;
            }
            let mut ts = (prev_time >> 2) as i64;
            if self.tsc_frequency > 0 {
                let scaled = i128::from(ts) * 1_000_000_000 / i128::from(self.tsc_frequency);
                ts = i64::try_from(scaled).unwrap_or(i64::MAX);
            }
            let method = if action == ENTER {
                let Some((diff, n)) = block.get(pos..).and_then(sleb128) else {
                    break;
                };
                pos += n;
                prev_method = prev_method.wrapping_add(diff);
                stack.push(prev_method as u64);
                prev_method as u64
            } else {
                stack.pop().unwrap_or(prev_method as u64)
            };
            shared.events.push(Event {
                ts: self.start.saturating_add(ts),
                tid,
                // 1 and 2 exit; 3 is read as an exit's layout but, as
                // upstream leaves it, is no exit.
                enter: !matches!(action, 1 | 2),
                method: shared.methods.get(&method).copied().unwrap_or_default(),
            });
        }
    }

    /// Ends the trace: it must have reached its summary's `*end`.
    pub fn finish(&mut self, _p: &mut Parser, _left: &[u8]) -> Result<(), String> {
        if self.complete {
            Ok(())
        } else {
            Err("the trace is incomplete (no *end)".into())
        }
    }
}

/// The summary's `key=value` lines as metadata (integers when they read as
/// one).
fn metadata(p: &mut Parser, text: &[u8]) {
    let text = String::from_utf8_lossy(text);
    for line in text.split('\n') {
        if let Some((k, v)) = line.split_once('=') {
            match v.parse::<i64>() {
                Ok(i) => p.storage.set_metadata_int(k, i),
                Err(_) => p.storage.set_metadata_str(k, v),
            }
        }
    }
}
