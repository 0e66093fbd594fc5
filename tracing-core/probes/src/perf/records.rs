//! Parsing the records the kernel writes into a perf event's ring buffer
//! (`PERF_RECORD_SAMPLE` by the event's `sample_type`, and the loss
//! records), from bytes alone. A record is untrusted: every length and
//! count is checked against the record's own size, a record that does not
//! fit its layout is a typed error, and nothing here panics or allocates.

use super::abi::{read_format, record, regs_abi, sample};

/// What the event was opened with: which parts a sample holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct SampleLayout {
    /// `perf_event_attr.sample_type`.
    pub sample_type: u64,
    /// `perf_event_attr.read_format`.
    pub read_format: u64,
    /// `perf_event_attr.sample_regs_user`.
    pub regs_user_mask: u64,
}

/// One record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Record<'a> {
    /// A sample.
    Sample(Sample<'a>),
    /// `PERF_RECORD_LOST`: records lost because the buffer was full.
    Lost {
        /// The event's id.
        id: u64,
        /// How many.
        lost: u64,
    },
    /// `PERF_RECORD_LOST_SAMPLES`: samples the kernel dropped.
    LostSamples {
        /// How many.
        lost: u64,
    },
    /// `PERF_RECORD_THROTTLE` (`true`) or `UNTHROTTLE` (`false`).
    Throttle(bool),
    /// `PERF_RECORD_COMM` with `PERF_RECORD_MISC_COMM_EXEC`: thread `tid`
    /// of process `pid` exec'd (its process's mappings are new).
    Exec {
        /// The process.
        pid: u32,
        /// The thread.
        tid: u32,
    },
    /// `PERF_RECORD_EXIT`: thread `tid` of process `pid` exited (the
    /// process itself when they are equal).
    Exit {
        /// The process.
        pid: u32,
        /// The thread.
        tid: u32,
    },
    /// A record of another type (mmap, comm, fork, ...), not read here.
    Other {
        /// Its `PERF_RECORD_*` type.
        kind: u32,
    },
}

/// A `PERF_RECORD_SAMPLE`, borrowing its variable parts.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Sample<'a> {
    /// The CPU mode from the header's `misc` (Perfetto's `CpuMode` numbers).
    pub cpu_mode: u16,
    /// `PERF_SAMPLE_IP`.
    pub ip: Option<u64>,
    /// `PERF_SAMPLE_TID`: the process id.
    pub pid: Option<u32>,
    /// `PERF_SAMPLE_TID`: the thread id.
    pub tid: Option<u32>,
    /// `PERF_SAMPLE_TIME`.
    pub time: Option<u64>,
    /// `PERF_SAMPLE_CPU`.
    pub cpu: Option<u32>,
    /// `PERF_SAMPLE_PERIOD`.
    pub period: Option<u64>,
    /// `PERF_SAMPLE_READ`: the counter values, leader first.
    pub read: Option<ReadValues<'a>>,
    /// `PERF_SAMPLE_CALLCHAIN`: the kernel's callchain (with context markers).
    pub callchain: Option<U64s<'a>>,
    /// `PERF_SAMPLE_RAW`: a tracepoint's raw data.
    pub raw: Option<&'a [u8]>,
    /// `PERF_SAMPLE_REGS_USER`: `None` when the record has none (its ABI
    /// is `NONE`: a kernel thread).
    pub regs_user: Option<UserRegs<'a>>,
    /// `PERF_SAMPLE_STACK_USER`: the valid bytes of the stack copy (from
    /// the stack pointer up), `None` when the record has none.
    pub stack_user: Option<&'a [u8]>,
}

/// A run of native-endian `u64`s inside a record.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct U64s<'a>(&'a [u8]);

impl<'a> U64s<'a> {
    /// How many.
    pub fn len(&self) -> usize {
        self.0.len() / 8
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The `i`th value.
    pub fn get(&self, i: usize) -> Option<u64> {
        let b = self
            .0
            .get(i.checked_mul(8)?..i.checked_mul(8)?.checked_add(8)?)?;
        Some(u64::from_ne_bytes(b.try_into().ok()?))
    }

    /// The values, in order.
    pub fn iter(self) -> impl Iterator<Item = u64> + 'a {
        self.0
            .chunks_exact(8)
            .map(|c| u64::from_ne_bytes([c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7]]))
    }
}

/// The counter values of `PERF_SAMPLE_READ`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReadValues<'a> {
    /// Each value's stride in `u64`s (the value, then its id and lost
    /// count when the read format has them).
    stride: usize,
    values: U64s<'a>,
}

impl<'a> ReadValues<'a> {
    /// The counter values, the group leader (the timebase) first.
    pub fn values(self) -> impl Iterator<Item = u64> + 'a {
        let stride = self.stride.max(1);
        (0..self.values.len() / stride).filter_map(move |i| self.values.get(i * stride))
    }
}

/// The user registers of a sample, in `sample_regs_user` bit order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct UserRegs<'a> {
    /// `PERF_SAMPLE_REGS_ABI_*`.
    pub abi: u64,
    mask: u64,
    regs: U64s<'a>,
}

impl UserRegs<'_> {
    /// Register `reg` (perf's number for it), if the mask asked for it.
    pub fn get(&self, reg: u32) -> Option<u64> {
        if reg >= 64 || self.mask & (1 << reg) == 0 {
            return None;
        }
        let index = (self.mask & ((1u64 << reg) - 1)).count_ones() as usize;
        self.regs.get(index)
    }
}

/// Why a record could not be read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum RecordError {
    /// Fewer bytes than the 8-byte header, or than the header's size.
    #[error("record truncated: {have} bytes, {need} needed")]
    Truncated {
        /// Bytes there are.
        have: usize,
        /// Bytes the header or layout needs.
        need: usize,
    },
    /// A count or size inside the record runs past its end.
    #[error("{what} runs past the end of its {size}-byte record")]
    Overrun {
        /// The part.
        what: &'static str,
        /// The record's size.
        size: usize,
    },
    /// The layout asks for a part this parser does not read.
    #[error("sample_type {0:#x} has parts this reader does not parse")]
    Unsupported(u64),
}

/// The sample parts this parser reads (others make [`RecordError::Unsupported`]).
const READABLE: u64 = sample::IDENTIFIER
    | sample::IP
    | sample::TID
    | sample::TIME
    | sample::ADDR
    | sample::ID
    | sample::STREAM_ID
    | sample::CPU
    | sample::PERIOD
    | sample::READ
    | sample::CALLCHAIN
    | sample::RAW
    | sample::REGS_USER
    | sample::STACK_USER;

/// The size of the record that starts `bytes` (its header's `size`), if
/// the header is there.
pub fn record_size(bytes: &[u8]) -> Option<usize> {
    let b = bytes.get(6..8)?;
    Some(u16::from_ne_bytes([b[0], b[1]]) as usize)
}

/// Reads the record `bytes` holds (exactly one record, header included).
pub fn parse_record<'a>(bytes: &'a [u8], layout: &SampleLayout) -> Result<Record<'a>, RecordError> {
    if bytes.len() < 8 {
        return Err(RecordError::Truncated {
            have: bytes.len(),
            need: 8,
        });
    }
    let kind = u32::from_ne_bytes([bytes[0], bytes[1], bytes[2], bytes[3]]);
    let misc = u16::from_ne_bytes([bytes[4], bytes[5]]);
    let size = u16::from_ne_bytes([bytes[6], bytes[7]]) as usize;
    if size < 8 || bytes.len() < size {
        return Err(RecordError::Truncated {
            have: bytes.len(),
            need: size.max(8),
        });
    }
    let mut c = Cursor {
        bytes: &bytes[..size],
        pos: 8,
    };
    match kind {
        record::SAMPLE => parse_sample(&mut c, misc, layout).map(Record::Sample),
        record::LOST => Ok(Record::Lost {
            id: c.u64("lost id")?,
            lost: c.u64("lost count")?,
        }),
        record::LOST_SAMPLES => Ok(Record::LostSamples {
            lost: c.u64("lost samples")?,
        }),
        record::COMM if misc & super::abi::MISC_COMM_EXEC != 0 => Ok(Record::Exec {
            pid: c.u32("comm pid")?,
            tid: c.u32("comm tid")?,
        }),
        record::EXIT => {
            let pid = c.u32("exit pid")?;
            let _ppid = c.u32("exit ppid")?;
            Ok(Record::Exit {
                pid,
                tid: c.u32("exit tid")?,
            })
        }
        record::THROTTLE => Ok(Record::Throttle(true)),
        record::UNTHROTTLE => Ok(Record::Throttle(false)),
        other => Ok(Record::Other { kind: other }),
    }
}

fn parse_sample<'a>(
    c: &mut Cursor<'a>,
    misc: u16,
    layout: &SampleLayout,
) -> Result<Sample<'a>, RecordError> {
    let t = layout.sample_type;
    if t & !READABLE != 0 {
        return Err(RecordError::Unsupported(t & !READABLE));
    }
    let mut s = Sample {
        cpu_mode: misc & super::abi::MISC_CPUMODE_MASK,
        ..Sample::default()
    };
    if t & sample::IDENTIFIER != 0 {
        c.u64("identifier")?;
    }
    if t & sample::IP != 0 {
        s.ip = Some(c.u64("ip")?);
    }
    if t & sample::TID != 0 {
        s.pid = Some(c.u32("pid")?);
        s.tid = Some(c.u32("tid")?);
    }
    if t & sample::TIME != 0 {
        s.time = Some(c.u64("time")?);
    }
    if t & sample::ADDR != 0 {
        c.u64("addr")?;
    }
    if t & sample::ID != 0 {
        c.u64("id")?;
    }
    if t & sample::STREAM_ID != 0 {
        c.u64("stream id")?;
    }
    if t & sample::CPU != 0 {
        s.cpu = Some(c.u32("cpu")?);
        c.u32("cpu reserved")?;
    }
    if t & sample::PERIOD != 0 {
        s.period = Some(c.u64("period")?);
    }
    if t & sample::READ != 0 {
        s.read = Some(read_values(c, layout.read_format)?);
    }
    if t & sample::CALLCHAIN != 0 {
        let nr = c.u64("callchain length")?;
        s.callchain = Some(U64s(c.u64s(nr, "callchain")?));
    }
    if t & sample::RAW != 0 {
        let size = c.u32("raw size")?;
        s.raw = Some(c.take(size as usize, "raw data")?);
    }
    if t & sample::REGS_USER != 0 {
        let abi = c.u64("regs abi")?;
        if abi != regs_abi::NONE {
            let n = u64::from(layout.regs_user_mask.count_ones());
            s.regs_user = Some(UserRegs {
                abi,
                mask: layout.regs_user_mask,
                regs: U64s(c.u64s(n, "user registers")?),
            });
        }
    }
    if t & sample::STACK_USER != 0 {
        let size = c.u64("stack size")?;
        if size != 0 {
            let size = usize::try_from(size).map_err(|_| c.overrun("stack copy"))?;
            let data = c.take(size, "stack copy")?;
            let dyn_size = c.u64("stack dyn_size")?;
            let valid = usize::try_from(dyn_size).unwrap_or(usize::MAX).min(size);
            s.stack_user = Some(&data[..valid]);
        }
    }
    Ok(s)
}

fn read_values<'a>(c: &mut Cursor<'a>, format: u64) -> Result<ReadValues<'a>, RecordError> {
    let stride = 1
        + usize::from(format & read_format::ID != 0)
        + usize::from(format & read_format::LOST != 0);
    let times = usize::from(format & read_format::TOTAL_TIME_ENABLED != 0)
        + usize::from(format & read_format::TOTAL_TIME_RUNNING != 0);
    if format & read_format::GROUP != 0 {
        let nr = c.u64("read group size")?;
        for _ in 0..times {
            c.u64("read times")?;
        }
        let n = nr
            .checked_mul(stride as u64)
            .ok_or_else(|| c.overrun("read values"))?;
        Ok(ReadValues {
            stride,
            values: U64s(c.u64s(n, "read values")?),
        })
    } else {
        // value, [enabled], [running], [id], [lost]: keep the value alone.
        let value = c.take(8, "read value")?;
        for _ in 0..times + stride - 1 {
            c.u64("read value details")?;
        }
        Ok(ReadValues {
            stride: 1,
            values: U64s(value),
        })
    }
}

/// A bounds-checked reader over one record.
struct Cursor<'a> {
    bytes: &'a [u8],
    pos: usize,
}

impl<'a> Cursor<'a> {
    fn overrun(&self, what: &'static str) -> RecordError {
        RecordError::Overrun {
            what,
            size: self.bytes.len(),
        }
    }

    fn take(&mut self, n: usize, what: &'static str) -> Result<&'a [u8], RecordError> {
        let end = self.pos.checked_add(n).ok_or_else(|| self.overrun(what))?;
        let b = self
            .bytes
            .get(self.pos..end)
            .ok_or_else(|| self.overrun(what))?;
        self.pos = end;
        Ok(b)
    }

    fn u64s(&mut self, n: u64, what: &'static str) -> Result<&'a [u8], RecordError> {
        let bytes = usize::try_from(n)
            .ok()
            .and_then(|n| n.checked_mul(8))
            .ok_or_else(|| self.overrun(what))?;
        self.take(bytes, what)
    }

    fn u64(&mut self, what: &'static str) -> Result<u64, RecordError> {
        let b = self.take(8, what)?;
        Ok(u64::from_ne_bytes([
            b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7],
        ]))
    }

    fn u32(&mut self, what: &'static str) -> Result<u32, RecordError> {
        let b = self.take(4, what)?;
        Ok(u32::from_ne_bytes([b[0], b[1], b[2], b[3]]))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::perf::abi::x86_64_regs;
    use proptest::prelude::*;

    /// A record with header (`kind`, `misc`) and body `words`/`bytes`.
    fn rec(kind: u32, misc: u16, body: &[u8]) -> Vec<u8> {
        let mut v = Vec::new();
        v.extend(kind.to_ne_bytes());
        v.extend(misc.to_ne_bytes());
        v.extend(((8 + body.len()) as u16).to_ne_bytes());
        v.extend(body);
        v
    }

    fn words(w: &[u64]) -> Vec<u8> {
        w.iter().flat_map(|x| x.to_ne_bytes()).collect()
    }

    fn full_layout() -> SampleLayout {
        SampleLayout {
            sample_type: sample::TID
                | sample::TIME
                | sample::READ
                | sample::CALLCHAIN
                | sample::REGS_USER
                | sample::STACK_USER,
            read_format: read_format::GROUP,
            regs_user_mask: (1 << x86_64_regs::BP)
                | (1 << x86_64_regs::SP)
                | (1 << x86_64_regs::IP),
        }
    }

    fn full_body(stack: &[u8], dyn_size: u64) -> Vec<u8> {
        let mut body = Vec::new();
        body.extend(7u32.to_ne_bytes()); // pid
        body.extend(8u32.to_ne_bytes()); // tid
        body.extend(words(&[1234])); // time
        body.extend(words(&[2, 100, 5])); // group of 2: timebase 100, follower 5
        body.extend(words(&[
            3,
            crate::perf::abi::context::KERNEL,
            0xffff_1000,
            0xffff_2000,
        ]));
        body.extend(words(&[regs_abi::ABI_64, 0xb0, 0x5000, 0x1234])); // bp, sp, ip
        body.extend(words(&[stack.len() as u64]));
        body.extend(stack);
        body.extend(words(&[dyn_size]));
        body
    }

    #[test]
    fn a_sample_reads_every_part_in_the_kernels_order() {
        let stack: Vec<u8> = (0..32).collect();
        let bytes = rec(record::SAMPLE, 2, &full_body(&stack, 24));
        let Record::Sample(s) = parse_record(&bytes, &full_layout()).unwrap() else {
            panic!("not a sample");
        };
        assert_eq!(
            (s.cpu_mode, s.pid, s.tid, s.time),
            (2, Some(7), Some(8), Some(1234))
        );
        assert_eq!(s.read.unwrap().values().collect::<Vec<_>>(), [100, 5]);
        let chain: Vec<u64> = s.callchain.unwrap().iter().collect();
        assert_eq!(chain[1..], [0xffff_1000, 0xffff_2000]);
        let regs = s.regs_user.unwrap();
        assert_eq!(regs.get(x86_64_regs::BP), Some(0xb0));
        assert_eq!(regs.get(x86_64_regs::SP), Some(0x5000));
        assert_eq!(regs.get(x86_64_regs::IP), Some(0x1234));
        assert_eq!(regs.get(0), None);
        assert_eq!(
            s.stack_user,
            Some(&stack[..24]),
            "only dyn_size bytes are valid"
        );
    }

    #[test]
    fn a_kernel_thread_has_no_registers_and_no_stack() {
        let layout = SampleLayout {
            sample_type: sample::TID | sample::REGS_USER | sample::STACK_USER,
            read_format: 0,
            regs_user_mask: 0x1c0,
        };
        let mut body = words(&[0]); // pid/tid
        body.extend(words(&[regs_abi::NONE, 0]));
        let bytes = rec(record::SAMPLE, 1, &body);
        let Record::Sample(s) = parse_record(&bytes, &layout).unwrap() else {
            panic!("not a sample");
        };
        assert_eq!((s.regs_user, s.stack_user), (None, None));
    }

    #[test]
    fn execs_and_exits_are_read_other_comms_are_not() {
        // comm: pid, tid, the name (NUL padded to 8 bytes).
        let mut comm = Vec::new();
        comm.extend_from_slice(&42u32.to_ne_bytes());
        comm.extend_from_slice(&42u32.to_ne_bytes());
        comm.extend_from_slice(b"dd\0\0\0\0\0\0");
        let exec = rec(record::COMM, crate::perf::abi::MISC_COMM_EXEC, &comm);
        assert_eq!(
            parse_record(&exec, &full_layout()),
            Ok(Record::Exec { pid: 42, tid: 42 })
        );
        let rename = rec(record::COMM, 0, &comm);
        assert_eq!(
            parse_record(&rename, &full_layout()),
            Ok(Record::Other { kind: record::COMM })
        );
        // exit: pid, ppid, tid, ptid, time.
        let mut exit = Vec::new();
        for v in [42u32, 1, 43, 1] {
            exit.extend_from_slice(&v.to_ne_bytes());
        }
        exit.extend(words(&[99]));
        assert_eq!(
            parse_record(&rec(record::EXIT, 0, &exit), &full_layout()),
            Ok(Record::Exit { pid: 42, tid: 43 })
        );
        // Cut short: an error, not a guess.
        assert!(parse_record(&rec(record::EXIT, 0, &exit[..4]), &full_layout()).is_err());
    }

    #[test]
    fn losses_are_read() {
        let lost = rec(record::LOST, 0, &words(&[9, 42]));
        assert_eq!(
            parse_record(&lost, &full_layout()),
            Ok(Record::Lost { id: 9, lost: 42 })
        );
        let dropped = rec(record::LOST_SAMPLES, 0, &words(&[3]));
        assert_eq!(
            parse_record(&dropped, &full_layout()),
            Ok(Record::LostSamples { lost: 3 })
        );
        assert_eq!(
            parse_record(&rec(record::MMAP2, 0, &[0; 8]), &full_layout()),
            Ok(Record::Other {
                kind: record::MMAP2
            })
        );
    }

    #[test]
    fn counts_past_the_record_are_errors() {
        // A callchain claiming 2^61 entries.
        let mut body = full_body(&[], 0);
        body[40..48].copy_from_slice(&(1u64 << 61).to_ne_bytes());
        let err = parse_record(&rec(record::SAMPLE, 2, &body), &full_layout()).unwrap_err();
        assert_eq!(
            err,
            RecordError::Overrun {
                what: "callchain",
                size: body.len() + 8
            }
        );
        // Header size beyond the bytes.
        let mut short = rec(record::SAMPLE, 2, &full_body(&[], 0));
        short.truncate(20);
        assert!(matches!(
            parse_record(&short, &full_layout()),
            Err(RecordError::Truncated { .. })
        ));
        let branch = SampleLayout {
            sample_type: sample::BRANCH_STACK,
            ..SampleLayout::default()
        };
        assert_eq!(
            parse_record(&rec(record::SAMPLE, 0, &[]), &branch),
            Err(RecordError::Unsupported(sample::BRANCH_STACK))
        );
    }

    proptest! {
        #[test]
        fn any_bytes_parse_or_fail_without_panicking(
            bytes in proptest::collection::vec(any::<u8>(), 0..512),
            sample_type in any::<u64>(),
            read_format in 0u64..32,
            mask in any::<u64>(),
        ) {
            let layout = SampleLayout { sample_type, read_format, regs_user_mask: mask };
            let _ = parse_record(&bytes, &layout);
            let _ = parse_record(&bytes, &full_layout());
        }
    }
}
