//! Fuchsia's binary trace format (FXT, what `ffx trace` writes) as Perfetto
//! reads it. The file is a stream of records, each a header word (type in
//! bits 0-3, size in words in bits 4-15) and its words. They are read as
//! the bytes arrive; a record split across pushes waits in a buffer of at
//! most one record (32 KiB). Per trace provider (metadata records switch
//! between them) the reader keeps the string and thread tables and the
//! initialization record's ticks per second, and resolves every table
//! reference when a record is read. Kernel object records name processes
//! and threads at once; event and scheduler records are kept with their
//! time and imported in time order at the end (`import.rs`, `sched.rs`).
//!
//! What cannot be read is counted with upstream's stat names: a record or
//! argument running past its record (`fuchsia_record_read_error`), a table
//! reference to no string (`fuchsia_invalid_string_ref`), a record before
//! any valid provider (`fuchsia_invalid_event`), a time past i64
//! (`fuchsia_timestamp_overflow`). A record of size 0 ends the load with an
//! error, as upstream's does. A blob record of the Perfetto type (3)
//! carries protobuf trace bytes (`TracePacket`s, as a `Trace` holds them):
//! its payload is handed to the protobuf loading core as it is read
//! (`FormatReader::take_embedded_proto`), so those packets load into the
//! same tables as a Perfetto trace's; other blobs are skipped, as
//! upstream skips them.

mod import;
pub mod record;
mod sched;

use crate::column_store::strings::StrId;
use crate::error::TraceError;
use crate::hash::HashMap;
use crate::parser::Parser;
use crate::tracker::process::NamePriority;

use super::reader::FormatReader;
use record::{RawArg, StrRef, Value, Words, field, field32};

/// The magic number record every FXT file opens with.
pub const MAGIC: [u8; 8] = [0x10, 0x00, 0x04, 0x46, 0x78, 0x54, 0x16, 0x00];

const FORMAT: &str = "fuchsia";

/// Record types.
const METADATA: u32 = 0;
const INITIALIZATION: u32 = 1;
const STRING: u32 = 2;
const THREAD: u32 = 3;
const EVENT: u32 = 4;
const BLOB: u32 = 5;
const KERNEL_OBJECT: u32 = 7;

/// The blob type of Perfetto protobuf trace bytes.
const PERFETTO_BLOB: u32 = 3;
const SCHEDULER: u32 = 8;

/// Metadata record types.
const PROVIDER_INFO: u32 = 1;
const PROVIDER_SECTION: u32 = 2;

/// Kernel object types.
const OBJ_PROCESS: u32 = 1;
const OBJ_THREAD: u32 = 2;

/// The default rate of a provider without an initialization record.
const DEFAULT_TICKS_PER_SECOND: u64 = 1_000_000_000;

/// A process and thread koid.
pub type ThreadInfo = (u64, u64);

/// One trace provider's tables.
#[derive(Debug)]
struct Provider {
    strings: HashMap<u32, StrId>,
    threads: HashMap<u32, ThreadInfo>,
    ticks_per_second: u64,
}

impl Default for Provider {
    fn default() -> Self {
        Provider {
            strings: HashMap::default(),
            threads: HashMap::default(),
            ticks_per_second: DEFAULT_TICKS_PER_SECOND,
        }
    }
}

/// An argument with its strings interned.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum ArgValue {
    /// No value.
    Null,
    /// A signed 32-bit integer.
    I32(i32),
    /// An unsigned 32-bit integer.
    U32(u32),
    /// A signed 64-bit integer.
    I64(i64),
    /// An unsigned 64-bit integer.
    U64(u64),
    /// A double.
    F64(f64),
    /// A string.
    Str(StrId),
    /// A pointer.
    Pointer(u64),
    /// A kernel object id.
    Koid(u64),
    /// A boolean.
    Bool(bool),
    /// A type this reader does not know.
    Unknown,
}

/// A named argument.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Arg {
    /// Its name (NULL when a kernel object named an unknown string).
    pub name: StrId,
    /// Its value.
    pub value: ArgValue,
}

/// What an event record carries beyond its common part.
#[derive(Debug, Clone)]
pub struct EventRecord {
    /// Event type (bits 16-19): instant, counter, duration, async, flow.
    pub kind: u32,
    /// Process and thread.
    pub thread: ThreadInfo,
    /// Category.
    pub category: StrId,
    /// Name.
    pub name: StrId,
    /// Arguments.
    pub args: Vec<Arg>,
    /// The word after the arguments (counter id, end ticks in ns,
    /// correlation id); None when the record ends before it.
    pub extra: Option<u64>,
    /// A complete event's end, in ns (None past i64).
    pub end_ts: Option<i64>,
}

/// A scheduler record's content.
#[derive(Debug, Clone)]
pub enum SchedRecord {
    /// The legacy context switch (priorities and thread references).
    LegacySwitch {
        /// CPU.
        cpu: u32,
        /// The outgoing thread's state.
        outgoing_state: u32,
        /// The outgoing thread.
        outgoing: ThreadInfo,
        /// The incoming thread.
        incoming: ThreadInfo,
        /// The outgoing thread's priority.
        outgoing_priority: i32,
        /// The incoming thread's priority.
        incoming_priority: i32,
    },
    /// A context switch (thread ids, weights in arguments).
    Switch {
        /// CPU.
        cpu: u32,
        /// The outgoing thread's state.
        outgoing_state: u32,
        /// The outgoing thread's koid.
        outgoing_tid: u64,
        /// The incoming thread's koid.
        incoming_tid: u64,
        /// Arguments.
        args: Vec<Arg>,
    },
    /// A thread wakeup.
    Wakeup {
        /// CPU.
        cpu: u32,
        /// The woken thread's koid.
        tid: u64,
        /// Arguments.
        args: Vec<Arg>,
    },
}

/// A record kept for the sorted import.
#[derive(Debug, Clone)]
pub enum Kept {
    /// An event record.
    Event(EventRecord),
    /// A scheduler record.
    Sched(SchedRecord),
}

/// Why a record's strings could not be resolved.
enum Unread {
    /// It ran past its end.
    Short,
    /// It named a string its provider's table does not hold.
    BadRef,
}

/// The streaming reader of FXT.
#[derive(Debug)]
pub struct FuchsiaLoad {
    /// Bytes of the record being read.
    pending: Vec<u8>,
    /// Bytes read before `pending`'s first byte.
    offset: u64,
    /// Providers by id; None for a section naming a provider never
    /// described.
    providers: HashMap<u32, Option<Provider>>,
    /// The provider whose section is being read.
    current: Option<u32>,
    /// Records kept with their time, in file order.
    kept: Vec<(i64, Kept)>,
    /// Bytes `kept` holds, about.
    kept_bytes: u64,
    /// Process koids kernel object records gave threads, by thread koid.
    thread_pids: HashMap<u64, u64>,
    /// Perfetto blob payloads read and not yet handed on.
    embedded: Vec<u8>,
    /// Perfetto blob bytes read in all.
    embedded_total: u64,
}

impl Default for FuchsiaLoad {
    fn default() -> Self {
        let mut providers = HashMap::default();
        providers.insert(0, Some(Provider::default()));
        FuchsiaLoad {
            pending: Vec::new(),
            offset: 0,
            providers,
            current: Some(0),
            kept: Vec::new(),
            kept_bytes: 0,
            thread_pids: HashMap::default(),
            embedded: Vec::new(),
            embedded_total: 0,
        }
    }
}

/// Whether `head` opens an FXT file.
pub fn sniff(head: &[u8]) -> bool {
    head.starts_with(&MAGIC)
}

/// A record's size in bytes, from its header word.
fn record_len(header: u64) -> usize {
    field(header, 4, 15) as usize * 8
}

impl FuchsiaLoad {
    fn provider(&self) -> Option<&Provider> {
        self.providers.get(&self.current?)?.as_ref()
    }

    fn provider_mut(&mut self) -> Option<&mut Provider> {
        self.providers.get_mut(&self.current?)?.as_mut()
    }

    /// The StrId a string reference names: inline bytes interned, a table
    /// index looked up.
    fn resolve(&self, p: &mut Parser, s: StrRef<'_>) -> Option<StrId> {
        match s {
            StrRef::Inline(b) => Some(p.storage.strings.intern(&String::from_utf8_lossy(b))),
            StrRef::Table(i) => self.provider()?.strings.get(&i).copied(),
        }
    }

    /// Arguments with their strings resolved. `strict`: a table reference
    /// to no string fails the record (events and scheduler records); else
    /// it is a NULL string, counted (kernel objects).
    fn args(&self, p: &mut Parser, raw: &[RawArg<'_>], strict: bool) -> Result<Vec<Arg>, Unread> {
        let mut out = Vec::with_capacity(raw.len());
        for a in raw {
            let mut get = |s: StrRef<'_>| match self.resolve(p, s) {
                Some(id) => Ok(id),
                None if strict => Err(Unread::BadRef),
                None => {
                    p.storage.stats.incr("fuchsia_invalid_string_ref");
                    Ok(StrId::NULL)
                }
            };
            let name = get(a.name)?;
            let value = match a.value {
                Value::Null => ArgValue::Null,
                Value::I32(v) => ArgValue::I32(v),
                Value::U32(v) => ArgValue::U32(v),
                Value::I64(v) => ArgValue::I64(v),
                Value::U64(v) => ArgValue::U64(v),
                Value::F64(v) => ArgValue::F64(v),
                Value::Str(s) => ArgValue::Str(get(s)?),
                Value::Pointer(v) => ArgValue::Pointer(v),
                Value::Koid(v) => ArgValue::Koid(v),
                Value::Bool(v) => ArgValue::Bool(v),
                Value::Unknown => ArgValue::Unknown,
            };
            out.push(Arg { name, value });
        }
        Ok(out)
    }

    fn ticks_per_second(&self) -> u64 {
        self.provider()
            .map_or(DEFAULT_TICKS_PER_SECOND, |p| p.ticks_per_second)
    }

    /// Counts why a record was not read.
    fn count(p: &mut Parser, why: Unread) {
        p.storage.stats.incr(match why {
            Unread::Short => "fuchsia_record_read_error",
            Unread::BadRef => "fuchsia_invalid_string_ref",
        });
    }

    /// One whole record.
    fn record(&mut self, p: &mut Parser, bytes: &[u8]) {
        p.storage.work.step(1);
        let mut w = Words::new(bytes);
        let Some(header) = w.word() else {
            p.storage.stats.incr("fuchsia_record_read_error");
            return;
        };
        let kind = field32(header, 0, 3);
        if kind != METADATA && self.provider().is_none() {
            p.storage.stats.incr("fuchsia_invalid_event");
            return;
        }
        let res = match kind {
            METADATA => self.metadata(header, &mut w),
            INITIALIZATION => match w.word() {
                Some(tps) => {
                    if let Some(prov) = self.provider_mut() {
                        prov.ticks_per_second = tps;
                    }
                    Ok(())
                }
                None => Err(Unread::Short),
            },
            STRING => self.string(p, header, &mut w),
            THREAD => {
                let index = field32(header, 16, 23);
                if index == 0 {
                    Ok(())
                } else {
                    match w.thread() {
                        Some(t) => {
                            if let Some(prov) = self.provider_mut() {
                                prov.threads.insert(index, t);
                            }
                            Ok(())
                        }
                        None => Err(Unread::Short),
                    }
                }
            }
            EVENT => self.event(p, header, &mut w),
            BLOB => self.blob(header, &mut w),
            KERNEL_OBJECT => self.kernel_object(p, header, &mut w),
            SCHEDULER => self.scheduler(p, header, &mut w),
            _ => Ok(()),
        };
        if let Err(why) = res {
            Self::count(p, why);
        }
    }

    /// A blob record: a Perfetto blob's payload is kept to hand on (its
    /// name, when inline, is read past first).
    fn blob(&mut self, header: u64, w: &mut Words<'_>) -> Result<(), Unread> {
        if field32(header, 48, 55) != PERFETTO_BLOB {
            return Ok(());
        }
        let name = field32(header, 16, 31);
        if record::is_inline_string(name) {
            w.inline_string(name).ok_or(Unread::Short)?;
        }
        let size = field(header, 32, 46) as usize;
        let payload = w.string(size).ok_or(Unread::Short)?;
        self.embedded.extend_from_slice(payload);
        self.embedded_total = self.embedded_total.saturating_add(payload.len() as u64);
        Ok(())
    }

    fn metadata(&mut self, header: u64, w: &mut Words<'_>) -> Result<(), Unread> {
        let id = field32(header, 20, 51);
        match field32(header, 16, 19) {
            PROVIDER_INFO => {
                let len = field(header, 52, 59) as usize;
                w.string(len).ok_or(Unread::Short)?;
                self.providers.insert(id, Some(Provider::default()));
                self.current = Some(id);
            }
            PROVIDER_SECTION => {
                self.providers.entry(id).or_insert(None);
                self.current = Some(id);
            }
            _ => {}
        }
        Ok(())
    }

    fn string(&mut self, p: &mut Parser, header: u64, w: &mut Words<'_>) -> Result<(), Unread> {
        let index = field32(header, 16, 30);
        if index == 0 {
            return Ok(());
        }
        let len = field(header, 32, 46) as usize;
        let s = w.string(len).ok_or(Unread::Short)?;
        let id = p.storage.strings.intern(&String::from_utf8_lossy(s));
        if let Some(prov) = self.provider_mut() {
            prov.strings.insert(index, id);
        }
        Ok(())
    }

    /// A thread reference: inline koids, or the table's (0, 0 when it
    /// holds none).
    fn thread_ref(&self, w: &mut Words<'_>, r: u32) -> Result<ThreadInfo, Unread> {
        if record::is_inline_thread(r) {
            w.thread().ok_or(Unread::Short)
        } else {
            Ok(self
                .provider()
                .and_then(|prov| prov.threads.get(&r).copied())
                .unwrap_or((0, 0)))
        }
    }

    fn keep(&mut self, ts: i64, k: Kept) {
        let args = match &k {
            Kept::Event(e) => e.args.len(),
            Kept::Sched(SchedRecord::Switch { args, .. } | SchedRecord::Wakeup { args, .. }) => {
                args.len()
            }
            Kept::Sched(SchedRecord::LegacySwitch { .. }) => 0,
        };
        let size = std::mem::size_of::<(i64, Kept)>() + args * std::mem::size_of::<Arg>();
        self.kept_bytes = self.kept_bytes.saturating_add(size as u64);
        self.kept.push((ts, k));
    }

    fn event(&mut self, p: &mut Parser, header: u64, w: &mut Words<'_>) -> Result<(), Unread> {
        let tps = self.ticks_per_second();
        let ticks = w.word().ok_or(Unread::Short)?;
        let Some(ts) = record::ticks_to_ns(ticks, tps) else {
            p.storage.stats.incr("fuchsia_timestamp_overflow");
            return Ok(());
        };
        let thread = self.thread_ref(w, field32(header, 24, 31))?;
        let cat = record::read_string(w, field32(header, 32, 47)).ok_or(Unread::Short)?;
        let name = record::read_string(w, field32(header, 48, 63)).ok_or(Unread::Short)?;
        let category = self.resolve(p, cat).ok_or(Unread::BadRef)?;
        let name = self.resolve(p, name).ok_or(Unread::BadRef)?;
        let raw = record::read_args(w, field32(header, 20, 23)).ok_or(Unread::Short)?;
        let args = self.args(p, &raw, true)?;
        let extra = w.word();
        let kind = field32(header, 16, 19);
        let end_ts = extra.and_then(|t| record::ticks_to_ns(t, tps));
        self.keep(
            ts,
            Kept::Event(EventRecord {
                kind,
                thread,
                category,
                name,
                args,
                extra,
                end_ts,
            }),
        );
        Ok(())
    }

    fn kernel_object(
        &mut self,
        p: &mut Parser,
        header: u64,
        w: &mut Words<'_>,
    ) -> Result<(), Unread> {
        let obj_type = field32(header, 16, 23);
        let koid = w.word().ok_or(Unread::Short)?;
        let name_ref = record::read_string(w, field32(header, 24, 39)).ok_or(Unread::Short)?;
        let name = self.resolve(p, name_ref).ok_or(Unread::BadRef)?;
        match obj_type {
            OBJ_PROCESS => {
                // Tables hold 32-bit pids and tids; koids are cut to them
                // as upstream cuts them.
                let upid = p
                    .processes
                    .get_or_create_process(&mut p.storage, i64::from(koid as u32));
                p.processes
                    .set_process_name(&mut p.storage, upid, name, NamePriority::Other);
            }
            OBJ_THREAD => {
                let raw = record::read_args(w, field32(header, 40, 43)).ok_or(Unread::Short)?;
                let args = self.args(p, &raw, false)?;
                let process = p.storage.strings.intern("process");
                let mut pid = 0;
                for a in &args {
                    if a.name == process {
                        let ArgValue::Koid(k) = a.value else {
                            p.storage.stats.incr("fuchsia_invalid_event_arg_type");
                            return Ok(());
                        };
                        pid = k;
                    }
                }
                self.thread_pids.insert(koid, pid);
                let utid = p.processes.update_thread(
                    &mut p.storage,
                    i64::from(koid as u32),
                    i64::from(pid as u32),
                );
                p.processes
                    .set_thread_name(&mut p.storage, utid, name, NamePriority::Other);
            }
            _ => {}
        }
        Ok(())
    }

    fn scheduler(&mut self, p: &mut Parser, header: u64, w: &mut Words<'_>) -> Result<(), Unread> {
        let tps = self.ticks_per_second();
        let ticks = w.word().ok_or(Unread::Short)?;
        let Some(ts) = record::ticks_to_ns(ticks, tps) else {
            p.storage.stats.incr("fuchsia_timestamp_overflow");
            return Ok(());
        };
        let rec = match field32(header, 60, 63) {
            0 => {
                let outgoing = self.thread_ref(w, field32(header, 28, 35))?;
                let incoming = self.thread_ref(w, field32(header, 36, 43))?;
                SchedRecord::LegacySwitch {
                    cpu: field32(header, 16, 23),
                    outgoing_state: field32(header, 24, 27),
                    outgoing,
                    incoming,
                    outgoing_priority: field32(header, 44, 51) as i32,
                    incoming_priority: field32(header, 52, 59) as i32,
                }
            }
            1 => {
                let outgoing_tid = w.word().ok_or(Unread::Short)?;
                let incoming_tid = w.word().ok_or(Unread::Short)?;
                let raw = record::read_args(w, field32(header, 16, 19)).ok_or(Unread::Short)?;
                SchedRecord::Switch {
                    cpu: field32(header, 20, 35),
                    outgoing_state: field32(header, 36, 39),
                    outgoing_tid,
                    incoming_tid,
                    args: self.args(p, &raw, true)?,
                }
            }
            2 => {
                let tid = w.word().ok_or(Unread::Short)?;
                let raw = record::read_args(w, field32(header, 16, 19)).ok_or(Unread::Short)?;
                SchedRecord::Wakeup {
                    cpu: field32(header, 20, 35),
                    tid,
                    args: self.args(p, &raw, true)?,
                }
            }
            _ => return Ok(()),
        };
        self.keep(ts, Kept::Sched(rec));
        Ok(())
    }

    fn size_zero(&self, at: u64) -> TraceError {
        TraceError::Malformed {
            format: FORMAT,
            offset: at,
            message: "a record of size 0".into(),
        }
    }
}

impl FormatReader for FuchsiaLoad {
    fn push(&mut self, p: &mut Parser, data: &[u8]) -> Result<(), TraceError> {
        let mut rest = data;
        // A record begun in an earlier push.
        if !self.pending.is_empty() {
            let need_header = 8usize.saturating_sub(self.pending.len());
            let (head, tail) = rest.split_at(need_header.min(rest.len()));
            self.pending.extend_from_slice(head);
            rest = tail;
            let Some(h) = self.pending.get(..8) else {
                return Ok(());
            };
            let header = u64::from_le_bytes(h.try_into().unwrap_or_default());
            let len = record_len(header);
            if len == 0 {
                return Err(self.size_zero(self.offset));
            }
            let missing = len.saturating_sub(self.pending.len());
            let (body, tail) = rest.split_at(missing.min(rest.len()));
            self.pending.extend_from_slice(body);
            rest = tail;
            if self.pending.len() < len {
                return Ok(());
            }
            let bytes = std::mem::take(&mut self.pending);
            self.record(p, &bytes);
            self.offset = self.offset.saturating_add(len as u64);
        }
        while let Some(h) = rest.get(..8) {
            let header = u64::from_le_bytes(h.try_into().unwrap_or_default());
            let len = record_len(header);
            if len == 0 {
                return Err(self.size_zero(self.offset));
            }
            let Some(bytes) = rest.get(..len) else {
                break;
            };
            self.record(p, bytes);
            self.offset = self.offset.saturating_add(len as u64);
            rest = rest.get(len..).unwrap_or(&[]);
        }
        self.pending.extend_from_slice(rest);
        Ok(())
    }

    fn held_bytes(&self) -> u64 {
        self.kept_bytes
            .saturating_add(self.pending.len() as u64)
            .saturating_add(self.embedded.len() as u64)
    }

    fn take_embedded_proto(&mut self) -> Vec<u8> {
        std::mem::take(&mut self.embedded)
    }

    fn embedded_proto_bytes(&self) -> u64 {
        self.embedded_total
    }

    /// The kept records in time order (equal times in file order) go into
    /// the tables; a record cut short by the end of the file is not read,
    /// as upstream leaves it.
    fn finish(mut self: Box<Self>, p: &mut Parser) -> Result<(), TraceError> {
        let mut kept = std::mem::take(&mut self.kept);
        kept.sort_by_key(|(ts, _)| *ts);
        let mut events = import::EventImport::default();
        let mut sched = sched::SchedImport::new(p, std::mem::take(&mut self.thread_pids));
        for (ts, k) in kept {
            p.storage.work.step(1);
            match k {
                Kept::Event(e) => events.event(p, ts, e),
                Kept::Sched(s) => sched.record(p, ts, s),
            }
        }
        events.finish(p);
        Ok(())
    }
}

#[cfg(test)]
mod tests;
