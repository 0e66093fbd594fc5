//! Decoded ftrace records turned into Perfetto's `ftrace_events` packets
//! (`FtraceEventBundle`) as traced_probes writes them: the events upstream
//! knows go to their typed messages, each field taken from the kernel's
//! `format` file by the proto field's name and written only where the
//! kernel type fits the proto type (upstream's translation strategies);
//! `sched_switch` and `sched_waking` go to `compact_sched` when it is on;
//! any other event becomes a `GenericFtraceEvent` with its name and named
//! fields (upstream's default, "legacy" generic encoding); a page that says
//! events were lost starts a bundle flagged `lost_events`.
//!
//! Plans are built once per format table, so translating a record reads
//! its payload at offsets the format file gave, bounds-checked, without
//! looking names up again. Nothing here panics on hostile input: a field
//! whose kernel type does not fit is left out and counted, a record too
//! short for its format is skipped and counted.

use super::decode::FormatTable;
use super::format::{EventFormat, Field, FieldKind};
use super::page::{MissedEvents, Page, PageError, read_uint};
use protozero::Message;
use std::collections::HashMap;
use thiserror::Error;
use zerotrace_protos::protos::FtraceParseStatus;
use zerotrace_protos::upstream_tables::{FTRACE_EVENT_MESSAGES, ProtoType, packet_field};

/// `FtraceEvent` fields (upstream numbers; checked against the generated
/// writer in the tests).
use super::compact_buffer::{COMM_LEN, CompactBuffer};

mod event_field {
    pub(super) const TIMESTAMP: u32 = zerotrace_protos::protos::FtraceEvent::FIELD_TIMESTAMP;
    pub(super) const PID: u32 = zerotrace_protos::protos::FtraceEvent::FIELD_PID;
    pub(super) const GENERIC: u32 = zerotrace_protos::protos::FtraceEvent::FIELD_GENERIC;
}
use super::pointer_hash::PointerHasher;
use super::print_filter::PrintFilter;
use std::collections::BTreeSet;
use zerotrace_protos::protos::generic_ftrace_event::Field as GF;
use zerotrace_protos::protos::{FtraceEventBundle as B, GenericFtraceEvent as G};

/// Upstream flushes a bundle once its comm table has more entries than
/// this (checked between pages), keeping interning cheap.
pub const COMPACT_INTERNER_THRESHOLD: usize = 64;
/// Event ids at or above this are not planned (the kernel's are 16-bit).
const MAX_ID: usize = 1 << 16;

/// Why a translator could not be built.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum TranslateError {
    /// The table has no `common_pid` field of 4 bytes.
    #[error("the formats have no 4-byte common_pid")]
    NoCommonPid,
}

/// What the translator was asked to do.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Options {
    /// `compact_sched` (upstream's default: on). Used only when the
    /// kernel's `sched_switch` and `sched_waking` formats both have the
    /// fields and types the compact encoding assumes.
    pub compact_sched: bool,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            compact_sched: true,
        }
    }
}

/// What translation met, cumulative over a translator's life.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Stats {
    /// Events written as typed `FtraceEvent`s.
    pub typed: u64,
    /// Events written as `GenericFtraceEvent`s.
    pub generic: u64,
    /// `sched_switch` events put into `compact_sched`.
    pub compact_switch: u64,
    /// `sched_waking` events put into `compact_sched`.
    pub compact_waking: u64,
    /// Records whose id is in no format (skipped).
    pub unknown_ids: u64,
    /// Records shorter than their format's fields (skipped).
    pub short_records: u64,
    /// Fields left out because they did not decode (a `__data_loc` out of
    /// the record).
    pub bad_fields: u64,
    /// Pages whose records stopped at a parse error (the rest of the page
    /// is skipped).
    pub page_errors: u64,
    /// Bundles flagged `lost_events`.
    pub lost_bundles: u64,
    /// `ftrace/print` events `print_filter` left out.
    pub filtered_prints: u64,
    /// `raw_syscalls` records of syscalls the session did not ask for.
    pub filtered_syscalls: u64,
}

/// How one kernel field is read, after upstream's `InferFtraceType`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// `char name[N]`.
    FixedStr,
    /// `char name[]` of size 0: to the NUL or the record's end.
    CStr,
    /// `__data_loc char[]`.
    DataLoc,
    /// `char *` / `char[]` pointers into the kernel's printk formats
    /// (written as an empty string: the formats are not read).
    StrPtr,
    /// A signed integer of 1, 2, 4 or 8 bytes (`pid_t`, `common_pid`).
    Signed,
    /// An unsigned integer (bool and inode numbers too).
    Unsigned,
    /// `dev_t`: the kernel's encoding, turned into userspace's.
    DevId,
    /// A kernel code address (`void *` or not, see
    /// `translate_plan::is_code_address`): written as its interning index.
    SymAddr,
    /// A kernel data pointer (`struct page *`, a kmalloc's `void *ptr`):
    /// written as its keyed hash ([`PointerHasher`]), never raw.
    DataPtr,
    /// `unsigned long args[6]` with elements of this many bytes.
    Args(usize),
}

/// One field to write: where it is read, how, and its proto number.
#[derive(Debug, Clone)]
struct Step {
    offset: usize,
    size: usize,
    kind: Kind,
    number: u32,
    /// The kernel name (generic events write it).
    name: String,
}

/// How one event id is written.
#[derive(Debug, Clone)]
enum Plan {
    /// A typed message under `FtraceEvent` field `field`.
    Typed { field: u32, steps: Vec<Step> },
    /// A `GenericFtraceEvent`.
    Generic { name: String, steps: Vec<Step> },
    /// Into `compact_sched`'s switch columns.
    CompactSwitch,
    /// Into `compact_sched`'s waking columns.
    CompactWaking,
}

/// An event's plan with the bytes a record must have for it.
#[derive(Debug, Clone)]
struct EventPlan {
    plan: Plan,
    size: usize,
    /// For `task_rename` and `sched_process_exec`: where the pid of the
    /// task whose name or image changed is (its description is stale).
    renames: Option<usize>,
}

/// Offsets compact_sched reads, validated as upstream does.
#[derive(Debug, Clone, Copy)]
struct CompactFormat {
    switch_id: u32,
    switch_size: usize,
    prev_state: (usize, usize),
    next_pid: usize,
    next_prio: usize,
    next_comm: usize,
    waking_id: u32,
    waking_size: usize,
    pid: usize,
    target_cpu: usize,
    prio: usize,
    comm: usize,
    common_flags: usize,
}

/// Turns decoded ftrace records into `FtraceEventBundle`s.
#[derive(Debug, Clone)]
pub struct Translator {
    /// The plans, indexed by `index`.
    plans: Vec<EventPlan>,
    /// Event id → position in `plans` (`u32::MAX` for none); ids from
    /// format files are small (the kernel's are 16-bit).
    index: Vec<u32>,
    common_pid: usize,
    compact: Option<CompactFormat>,
    buf: CompactBuffer,
    kernel_addrs: HashMap<u64, u32>,
    /// This instance's key for kernel data pointers.
    pointers: PointerHasher,
    bundle_end: HashMap<u32, u64>,
    stats: Stats,
    /// With pid collection on: the pids of the records translated since
    /// the last [`Translator::take_pids`].
    seen_pids: Option<Vec<i32>>,
    /// With pid collection on: the tasks renamed or exec'd since the last
    /// [`Translator::take_renamed_pids`].
    renamed_pids: Vec<i32>,
    /// The `FtraceParseStatus` numbers met, as bits (all are below 32).
    parse_errors: u32,
    /// Where the ring buffer's clock is not `boot`: the clock and a pair
    /// of readings that every bundle carries.
    clock: Option<ClockSnapshot>,
    /// `print_filter`: the id of `ftrace/print`, the offset of its `buf`,
    /// and the rules.
    print_filter: Option<(u32, usize, PrintFilter)>,
    /// `syscall_events`: the ids of `raw_syscalls/sys_enter` and
    /// `sys_exit` with the offset of their `id` field, and the syscalls
    /// this session keeps.
    syscall_filter: Option<(Vec<SyscallEvent>, BTreeSet<u32>)>,
}

/// A `raw_syscalls` event's id and the offset of its `id` field.
type SyscallEvent = (u32, usize);

/// The ftrace clock of bundles whose clock is not `boot` (upstream's
/// `FtraceClock`), and a reading of it taken at the same instant as one
/// of CLOCK_BOOTTIME, so that a reader converts their timestamps:
/// `boot = ts - ftrace_ts + boot_ts`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ClockSnapshot {
    /// `FtraceClock`: 1 unknown, 2 global, 3 local, 4 mono_raw.
    pub clock: i32,
    /// The ftrace clock's reading, ns.
    pub ftrace_ts: i64,
    /// CLOCK_BOOTTIME's, ns.
    pub boot_ts: i64,
}

/// The `FtraceClock` number of tracefs clock `name`: `None` for `boot`,
/// which bundles leave unsaid.
pub fn ftrace_clock_of(name: &str) -> Option<i32> {
    match name {
        "boot" => None,
        "global" => Some(2),
        "local" => Some(3),
        "mono_raw" => Some(4),
        _ => Some(1),
    }
}

impl Translator {
    /// Plans the translation of every format in `table`.
    pub fn new(table: &FormatTable, options: Options) -> Result<Self, TranslateError> {
        let first = table.formats().next();
        let common: Vec<Field> = first.map(|f| f.common_fields.clone()).unwrap_or_default();
        let common_pid = common
            .iter()
            .find(|f| f.name == "common_pid" && f.size == 4)
            .map(|f| f.offset);
        let common_pid = match (common_pid, first) {
            (Some(o), _) => o,
            // An empty table translates nothing; any offset will do.
            (None, None) => 0,
            (None, Some(_)) => return Err(TranslateError::NoCommonPid),
        };
        let common_end = common.iter().map(end_of).max().unwrap_or(0);
        let compact = if options.compact_sched {
            compact_format(table, &common)
        } else {
            None
        };
        let mut plans = Vec::new();
        let mut index = Vec::new();
        for format in table.formats() {
            let plan = match compact {
                Some(c) if format.id == c.switch_id => EventPlan {
                    plan: Plan::CompactSwitch,
                    size: c.switch_size,
                    renames: None,
                },
                Some(c) if format.id == c.waking_id => EventPlan {
                    plan: Plan::CompactWaking,
                    size: c.waking_size,
                    renames: None,
                },
                _ => plan_event(format, common_end),
            };
            let Ok(id) = usize::try_from(format.id) else {
                continue;
            };
            if id >= MAX_ID {
                // An id no kernel hands out: its records count as unknown.
                continue;
            }
            if index.len() <= id {
                index.resize(id + 1, u32::MAX);
            }
            index[id] = plans.len() as u32;
            let mut plan = plan;
            if matches!(format.name.as_str(), "task_rename" | "sched_process_exec") {
                plan.renames = format
                    .field("pid")
                    .filter(|f| f.size == 4)
                    .map(|f| f.offset);
            }
            plans.push(plan);
        }
        Ok(Translator {
            plans,
            index,
            common_pid,
            compact,
            buf: CompactBuffer::default(),
            kernel_addrs: HashMap::new(),
            pointers: PointerHasher::new(),
            bundle_end: HashMap::new(),
            stats: Stats::default(),
            seen_pids: None,
            renamed_pids: Vec::new(),
            parse_errors: 0,
            clock: None,
            print_filter: None,
            syscall_filter: None,
        })
    }

    /// Whether `sched_switch`/`sched_waking` go to `compact_sched`.
    pub fn compact_sched(&self) -> bool {
        self.compact.is_some()
    }

    /// Keeps only the `ftrace/print` events `filter` allows (of the print
    /// event in `table`, whose `buf` it reads). Returns false, filtering
    /// nothing, where `table` has no print event with a `buf` text.
    pub fn set_print_filter(&mut self, table: &FormatTable, filter: PrintFilter) -> bool {
        let print = table.formats().find(|f| {
            f.name == "print"
                && f.fields
                    .iter()
                    .any(|x| x.name == "buf" && x.type_name.starts_with("char"))
        });
        let Some(f) = print else { return false };
        let Some(buf) = f.fields.iter().find(|x| x.name == "buf") else {
            return false;
        };
        self.print_filter = Some((f.id, buf.offset, filter));
        true
    }

    /// Keeps only the `raw_syscalls` records of syscalls `ids` (other
    /// sessions on the instance may have the kernel record more).
    pub fn set_syscall_filter(&mut self, table: &FormatTable, ids: BTreeSet<u32>) {
        let events: Vec<SyscallEvent> = table
            .formats()
            .filter(|f| f.name == "sys_enter" || f.name == "sys_exit")
            .filter_map(|f| {
                let id = f.fields.iter().find(|x| x.name == "id" && x.size == 8)?;
                Some((f.id, id.offset))
            })
            .collect();
        self.syscall_filter = Some((events, ids));
    }

    /// The clock readings the next bundles carry (`None`: the clock is
    /// `boot`, and bundles say nothing of it).
    pub fn set_clock_snapshot(&mut self, clock: Option<ClockSnapshot>) {
        self.clock = clock;
    }

    /// Starts collecting the pid of every record translated (the task
    /// that was running, and the task switched to or woken for the
    /// compact sched events), for describing new processes.
    pub fn collect_pids(&mut self) {
        self.seen_pids.get_or_insert_with(Vec::new);
    }

    /// The pids collected since the last call, sorted and without
    /// duplicates (empty when collection is off).
    pub fn take_pids(&mut self) -> Vec<i32> {
        let Some(v) = self.seen_pids.as_mut() else {
            return Vec::new();
        };
        let mut out = std::mem::take(v);
        out.sort_unstable();
        out.dedup();
        out
    }

    /// Records a page that could not be parsed at all (its header), so
    /// the trace's end stats list its status.
    pub fn note_page_error(&mut self, e: &PageError) {
        self.stats.page_errors += 1;
        self.note_status(parse_status(e));
    }

    fn note_status(&mut self, s: FtraceParseStatus) {
        self.parse_errors |= 1u32.checked_shl(s as u32).unwrap_or(0);
    }

    /// Every kind of parse error met so far
    /// (`ftrace_stats.ftrace_parse_errors`), in status order.
    pub fn parse_errors(&self) -> Vec<FtraceParseStatus> {
        PARSE_STATUSES
            .iter()
            .copied()
            .filter(|&s| self.parse_errors & 1u32.checked_shl(s as u32).unwrap_or(0) != 0)
            .collect()
    }

    /// The tasks renamed (`task_rename`) or that exec'd
    /// (`sched_process_exec`) since the last call, sorted and without
    /// duplicates (empty when pid collection is off): what describes them
    /// is stale.
    pub fn take_renamed_pids(&mut self) -> Vec<i32> {
        let mut out = std::mem::take(&mut self.renamed_pids);
        out.sort_unstable();
        out.dedup();
        out
    }

    /// What translation met so far.
    pub fn stats(&self) -> Stats {
        self.stats
    }

    /// The kernel code addresses seen (`void *` ones and those
    /// [`holds_kernel_address`] names), with the index each was written
    /// as (never the address).
    pub fn kernel_addrs(&self) -> &HashMap<u64, u32> {
        &self.kernel_addrs
    }

    /// The value this instance writes for kernel data pointer `ptr`
    /// (fields [`holds_data_pointer`] says hold one).
    pub fn pointer_hash(&self, ptr: u64) -> u64 {
        self.pointers.hash(ptr)
    }

    /// Writes one `ftrace_events` bundle into `packet` (a `TracePacket`)
    /// from the leading pages of `pages` (one read of CPU `cpu`'s
    /// `trace_pipe_raw`), and returns how many pages it took. As upstream,
    /// a bundle ends before a later page that says events were lost (that
    /// page starts the next bundle, flagged `lost_events`) and, with
    /// compact_sched, once its comm table passes
    /// [`COMPACT_INTERNER_THRESHOLD`] at a page boundary. Call again with
    /// the rest, into a new packet, until every page is taken.
    pub fn write_bundle(
        &mut self,
        packet: &mut Message<'_>,
        cpu: u32,
        pages: &[Page<'_>],
    ) -> usize {
        let lost = pages
            .first()
            .is_some_and(|p| p.missed != MissedEvents::None);
        let mut bundle = B::from_message(packet.begin_nested(packet_field::FTRACE_EVENTS));
        bundle.set_cpu(cpu);
        if let Some(c) = self.clock {
            bundle
                .set_ftrace_clock_raw(c.clock)
                .set_ftrace_timestamp(c.ftrace_ts)
                .set_boot_timestamp(c.boot_ts);
        }
        if lost {
            bundle.set_lost_events(true);
            self.stats.lost_bundles += 1;
        }
        let end = self.bundle_end.entry(cpu).or_insert(0);
        bundle.set_previous_bundle_end_timestamp(*end);
        let mut last = *end;
        self.buf.reset();
        let mut taken = 0;
        for (i, page) in pages.iter().enumerate() {
            if i > 0
                && (page.missed != MissedEvents::None
                    || self.buf.comms.len() > COMPACT_INTERNER_THRESHOLD)
            {
                break;
            }
            taken += 1;
            for record in page.records() {
                match record {
                    Ok(r) => {
                        if self.write_record(bundle.message(), r.id, r.timestamp, r.payload) {
                            last = r.timestamp;
                        }
                    }
                    Err(e) => {
                        // The rest of the page is skipped; the bundle says
                        // why, at the page's time, as upstream does.
                        self.stats.page_errors += 1;
                        let status = parse_status(&e);
                        self.note_status(status);
                        bundle
                            .add_error()
                            .set_timestamp(page.timestamp)
                            .set_status(status);
                    }
                }
            }
        }
        self.bundle_end.insert(cpu, last);
        if !self.buf.is_empty() {
            self.buf.write(&mut bundle.begin_compact_sched());
        }
        taken
    }

    /// Translates one record into `bundle` (or the compact buffer);
    /// whether it was written.
    fn write_record(&mut self, bundle: &mut Message<'_>, id: u32, ts: u64, payload: &[u8]) -> bool {
        if let Some((print, at, filter)) = &self.print_filter
            && id == *print
            && !filter.allows(payload.get(*at..).unwrap_or_default())
        {
            self.stats.filtered_prints += 1;
            return false;
        }
        if let Some((events, ids)) = &self.syscall_filter
            && let Some(&(_, at)) = events.iter().find(|(e, _)| *e == id)
        {
            let nr = payload
                .get(at..at + 8)
                .and_then(|b| <[u8; 8]>::try_from(b).ok())
                .map(i64::from_ne_bytes);
            if !nr.is_some_and(|n| u32::try_from(n).is_ok_and(|n| ids.contains(&n))) {
                self.stats.filtered_syscalls += 1;
                return false;
            }
        }
        let plan = usize::try_from(id)
            .ok()
            .and_then(|i| self.index.get(i))
            .and_then(|&p| self.plans.get(p as usize));
        let Some(plan) = plan else {
            self.stats.unknown_ids += 1;
            return false;
        };
        if payload.len() < plan.size {
            self.stats.short_records += 1;
            self.note_status(FtraceParseStatus::FtraceStatusInvalidEvent);
            return false;
        }
        if let Some(pids) = self.seen_pids.as_mut() {
            pids.push(sint(payload, self.common_pid, 4) as i32);
            if let Some(at) = plan.renames {
                self.renamed_pids.push(sint(payload, at, 4) as i32);
            }
            if let Some(c) = self.compact {
                match plan.plan {
                    Plan::CompactSwitch => pids.push(int(payload, c.next_pid, 4) as i32),
                    Plan::CompactWaking => pids.push(int(payload, c.pid, 4) as i32),
                    _ => {}
                }
            }
        }
        match &plan.plan {
            Plan::CompactSwitch => {
                let Some(c) = self.compact else { return false };
                let b = &mut self.buf;
                b.switch_ts.push(ts.wrapping_sub(b.last_switch));
                b.last_switch = ts;
                b.next_pid.push(int(payload, c.next_pid, 4));
                b.next_prio.push(int(payload, c.next_prio, 4));
                b.prev_state
                    .push(sint(payload, c.prev_state.0, c.prev_state.1));
                let idx = b.intern(comm(payload, c.next_comm));
                b.next_comm.push(idx);
                self.stats.compact_switch += 1;
            }
            Plan::CompactWaking => {
                let Some(c) = self.compact else { return false };
                let b = &mut self.buf;
                b.waking_ts.push(ts.wrapping_sub(b.last_waking));
                b.last_waking = ts;
                b.waking_pid.push(int(payload, c.pid, 4));
                b.target_cpu.push(int(payload, c.target_cpu, 4));
                b.waking_prio.push(int(payload, c.prio, 4));
                let idx = b.intern(comm(payload, c.comm));
                b.waking_comm.push(idx);
                b.common_flags
                    .push(read_uint(payload, c.common_flags, 1).unwrap_or(0));
                self.stats.compact_waking += 1;
            }
            Plan::Typed { field, steps } => {
                let mut ev = bundle.begin_nested(B::FIELD_EVENT);
                ev.append_uint64(event_field::TIMESTAMP, ts);
                ev.append_varint(event_field::PID, sint(payload, self.common_pid, 4));
                let mut msg = ev.begin_nested(*field);
                for s in steps {
                    if !write_step(
                        &mut msg,
                        s,
                        payload,
                        s.number,
                        &mut self.kernel_addrs,
                        &self.pointers,
                    ) {
                        self.stats.bad_fields += 1;
                    }
                }
                self.stats.typed += 1;
            }
            Plan::Generic { name, steps } => {
                let mut ev = bundle.begin_nested(B::FIELD_EVENT);
                ev.append_uint64(event_field::TIMESTAMP, ts);
                ev.append_varint(event_field::PID, sint(payload, self.common_pid, 4));
                let mut g = ev.begin_nested(event_field::GENERIC);
                g.append_string(G::FIELD_EVENT_NAME, name);
                for s in steps {
                    let mut f = g.begin_nested(G::FIELD_FIELD);
                    f.append_string(GF::FIELD_NAME, &s.name);
                    let number = match s.kind {
                        Kind::FixedStr | Kind::CStr | Kind::DataLoc | Kind::StrPtr => {
                            GF::FIELD_STR_VALUE
                        }
                        Kind::Signed => GF::FIELD_INT_VALUE,
                        _ => GF::FIELD_UINT_VALUE,
                    };
                    if !write_step(
                        &mut f,
                        s,
                        payload,
                        number,
                        &mut self.kernel_addrs,
                        &self.pointers,
                    ) {
                        self.stats.bad_fields += 1;
                    }
                }
                self.stats.generic += 1;
            }
        }
        true
    }
}

/// Whether events called `name` have a typed translation (an
/// `FtraceEvent` field of their own); others are written generic.
pub fn has_typed_translation(name: &str) -> bool {
    FTRACE_EVENT_MESSAGES.iter().any(|m| m.name == name)
}

/// Whether kernel field `f` holds a kernel address (`void *`, or a code
/// address such as the print's `ip` or kmem's `call_site`): it is written
/// as the address's interning index ([`Translator::kernel_addrs`]), named
/// under `symbolize_ksyms`, never as the address.
pub fn holds_kernel_address(f: &Field) -> bool {
    plan::kind_of(f) == Some(Kind::SymAddr)
}

/// Whether kernel field `f` holds a kernel data pointer (a `struct page
/// *`, a kmalloc's `void *ptr`, an `skbaddr`): it is written as the
/// pointer's keyed hash ([`Translator::pointer_hash`]), equal pointers
/// giving equal values within the instance, never as the pointer.
pub fn holds_data_pointer(f: &Field) -> bool {
    plan::kind_of(f) == Some(Kind::DataPtr)
}

/// The statuses a parse error can have here, in their numeric order.
const PARSE_STATUSES: &[FtraceParseStatus] = &[
    FtraceParseStatus::FtraceStatusAbiInvalidPageHeader,
    FtraceParseStatus::FtraceStatusAbiShortTimeStamp,
    FtraceParseStatus::FtraceStatusAbiShortEventId,
    FtraceParseStatus::FtraceStatusAbiEndOverflow,
    FtraceParseStatus::FtraceStatusInvalidEvent,
];

/// Upstream's `FtraceParseStatus` for a page error.
pub fn parse_status(e: &PageError) -> FtraceParseStatus {
    match e {
        PageError::BadLayout(_)
        | PageError::TruncatedHeader { .. }
        | PageError::CommitPastEnd { .. }
        | PageError::MissedCountPastEnd => FtraceParseStatus::FtraceStatusAbiInvalidPageHeader,
        PageError::RecordPastCommit { .. } => FtraceParseStatus::FtraceStatusAbiEndOverflow,
        PageError::NoEventId { .. } => FtraceParseStatus::FtraceStatusAbiShortEventId,
        // A time-extend or absolute timestamp whose value cannot be right:
        // the closest of upstream's statuses.
        PageError::TimestampOverflow { .. } => FtraceParseStatus::FtraceStatusAbiShortTimeStamp,
    }
}

#[path = "translate_plan.rs"]
mod plan;
use plan::{compact_format, end_of, plan_event};

#[path = "translate_fields.rs"]
mod fields;
use fields::{comm, int, sint, write_step};

#[cfg(test)]
#[path = "translate_tests.rs"]
mod tests;
