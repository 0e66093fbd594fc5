//! The driver between the kernel and the sans-IO reader: a perf event
//! opened on one CPU (with its followers as a group), its ring buffer
//! mapped, and the bytes between the reader's tail and the kernel's head
//! copied out and released. The attribute follows traced_perf's choices
//! (what a sample holds, a 64 KiB stack copy for DWARF unwinding, the
//! clock); everything it reads is then parsed by `ring` and `records`.

use std::ffi::CString;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::path::Path;
use std::ptr::NonNull;
use std::sync::atomic::{AtomicU64, Ordering};

use perf_event_open_sys::bindings as sys;

use super::abi::{mmap_page, read_format, sample, x86_64_regs};
use super::compact::{TwoRuns, copy_compacted};
use super::config::{EventKind, EventSpec, Interval, PerfOptions, UserFrames};
use super::records::SampleLayout;
use super::ring::{RingError, span};
use zerotrace_protos::protos::perf_events::{Counter, PerfClock};

/// The user stack bytes copied per sample: the most the kernel takes
/// (below 64 KiB, a multiple of 256), as upstream asks.
pub const STACK_USER_BYTES: u32 = (1 << 16) - 256;

/// Why an event could not be set up.
#[derive(Debug, thiserror::Error)]
pub enum PerfOpenError {
    /// `perf_event_open` failed.
    #[error("perf_event_open({what}) on cpu {cpu}: {source}")]
    Open {
        /// The event.
        what: String,
        /// The CPU.
        cpu: u32,
        /// The error (ENOENT/EOPNOTSUPP: no such event here, e.g. a
        /// hardware counter on a machine without a PMU; EACCES: not allowed).
        source: std::io::Error,
    },
    /// The kernel has no such event on this machine (ENOENT, ENODEV or
    /// EOPNOTSUPP): typically a hardware counter where no PMU counts it,
    /// as in most virtual machines.
    #[error(
        "{what} is not counted on this machine (cpu {cpu}: {source}); a virtual \
         machine often has no hardware counters: sample a software counter \
         such as SW_CPU_CLOCK instead"
    )]
    NotCounted {
        /// The event.
        what: String,
        /// The CPU.
        cpu: u32,
        /// The error.
        source: std::io::Error,
    },
    /// A tracepoint's id could not be read from tracefs.
    #[error("tracepoint {group}/{name}: {source} (is tracefs mounted, and does the event exist?)")]
    Tracepoint {
        /// The group.
        group: String,
        /// The name.
        name: String,
        /// The error.
        source: std::io::Error,
    },
    /// A raw event's `pmu_name` names no PMU this kernel has.
    #[error(
        "raw_event.pmu_name {name:?}: {source} (no such PMU under /sys/bus/event_source/devices)"
    )]
    Pmu {
        /// The name.
        name: String,
        /// The error.
        source: std::io::Error,
    },
    /// The kernel refused the tracepoint's filter.
    #[error("tracepoint filter {filter:?}: {source}")]
    Filter {
        /// The filter.
        filter: String,
        /// The error.
        source: std::io::Error,
    },
    /// The ring buffer could not be mapped.
    #[error("mmap of the ring buffer on cpu {cpu}: {source}")]
    Mmap {
        /// The CPU.
        cpu: u32,
        /// The error.
        source: std::io::Error,
    },
    /// This architecture's registers are not known to the unwinder.
    #[error("callstack sampling is not supported on this architecture")]
    Arch,
}

impl PerfOpenError {
    /// Whether `perf_event_open` said EINVAL, as it does when the event's
    /// PMU may sample in NMI context and the clock asked for (BOOTTIME,
    /// REALTIME) cannot be read there.
    pub fn is_invalid_argument(&self) -> bool {
        matches!(self, PerfOpenError::Open { source, .. } if source.raw_os_error() == Some(22))
    }
}

/// The perf_event_attr `type` and `config` of `kind`, tracepoints resolved
/// through tracefs at `tracefs`.
fn type_and_config(
    kind: &EventKind,
    tracefs: &Path,
) -> Result<(u32, u64, u64, u64), PerfOpenError> {
    Ok(match kind {
        EventKind::Counter(c) => {
            let (t, config) = counter_numbers(*c);
            (t, config, 0, 0)
        }
        EventKind::Tracepoint { group, name, .. } => {
            let path = tracefs.join("events").join(group).join(name).join("id");
            let id = std::fs::read_to_string(&path)
                .and_then(|s| {
                    s.trim()
                        .parse::<u64>()
                        .map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidData, e))
                })
                .map_err(|source| PerfOpenError::Tracepoint {
                    group: group.clone(),
                    name: name.clone(),
                    source,
                })?;
            (sys::PERF_TYPE_TRACEPOINT, id, 0, 0)
        }
        EventKind::Raw {
            kind,
            pmu,
            config,
            config1,
            config2,
        } => {
            let kind = match pmu {
                Some(name) => pmu_type(name)?,
                None => *kind,
            };
            (kind, *config, *config1, *config2)
        }
    })
}

/// Reads the `type` of each raw event given by `pmu_name` into its
/// `kind`, so that the defaults describe the event as it is opened.
pub fn resolve_pmus(options: &mut PerfOptions) -> Result<(), PerfOpenError> {
    for spec in std::iter::once(&mut options.timebase).chain(options.followers.iter_mut()) {
        if let EventKind::Raw {
            kind,
            pmu: Some(name),
            ..
        } = &mut spec.kind
        {
            *kind = pmu_type(name)?;
        }
    }
    Ok(())
}

/// The `type` of the dynamic PMU `name`, from
/// `/sys/bus/event_source/devices/NAME/type` (a name with a `/` or
/// starting with `..` is not looked up).
fn pmu_type(name: &str) -> Result<u32, PerfOpenError> {
    let bad = || PerfOpenError::Pmu {
        name: name.to_owned(),
        source: std::io::Error::from(std::io::ErrorKind::InvalidInput),
    };
    if name.contains('/') || name.starts_with("..") {
        return Err(bad());
    }
    let path = Path::new("/sys/bus/event_source/devices")
        .join(name)
        .join("type");
    let text = std::fs::read_to_string(path).map_err(|source| PerfOpenError::Pmu {
        name: name.to_owned(),
        source,
    })?;
    text.trim().parse().map_err(|_| bad())
}

/// `PERF_TYPE_*` and `PERF_COUNT_*` of a counter.
fn counter_numbers(c: Counter) -> (u32, u64) {
    let sw = |n: u32| (sys::PERF_TYPE_SOFTWARE, u64::from(n));
    let hw = |n: u32| (sys::PERF_TYPE_HARDWARE, u64::from(n));
    match c {
        Counter::SwCpuClock | Counter::UnknownCounter => sw(sys::PERF_COUNT_SW_CPU_CLOCK),
        Counter::SwTaskClock => sw(sys::PERF_COUNT_SW_TASK_CLOCK),
        Counter::SwPageFaults => sw(sys::PERF_COUNT_SW_PAGE_FAULTS),
        Counter::SwContextSwitches => sw(sys::PERF_COUNT_SW_CONTEXT_SWITCHES),
        Counter::SwCpuMigrations => sw(sys::PERF_COUNT_SW_CPU_MIGRATIONS),
        Counter::SwPageFaultsMin => sw(sys::PERF_COUNT_SW_PAGE_FAULTS_MIN),
        Counter::SwPageFaultsMaj => sw(sys::PERF_COUNT_SW_PAGE_FAULTS_MAJ),
        Counter::SwAlignmentFaults => sw(sys::PERF_COUNT_SW_ALIGNMENT_FAULTS),
        Counter::SwEmulationFaults => sw(sys::PERF_COUNT_SW_EMULATION_FAULTS),
        Counter::SwDummy => sw(sys::PERF_COUNT_SW_DUMMY),
        Counter::HwCpuCycles => hw(sys::PERF_COUNT_HW_CPU_CYCLES),
        Counter::HwInstructions => hw(sys::PERF_COUNT_HW_INSTRUCTIONS),
        Counter::HwCacheReferences => hw(sys::PERF_COUNT_HW_CACHE_REFERENCES),
        Counter::HwCacheMisses => hw(sys::PERF_COUNT_HW_CACHE_MISSES),
        Counter::HwBranchInstructions => hw(sys::PERF_COUNT_HW_BRANCH_INSTRUCTIONS),
        Counter::HwBranchMisses => hw(sys::PERF_COUNT_HW_BRANCH_MISSES),
        Counter::HwBusCycles => hw(sys::PERF_COUNT_HW_BUS_CYCLES),
        Counter::HwStalledCyclesFrontend => hw(sys::PERF_COUNT_HW_STALLED_CYCLES_FRONTEND),
        Counter::HwStalledCyclesBackend => hw(sys::PERF_COUNT_HW_STALLED_CYCLES_BACKEND),
        Counter::HwRefCpuCycles => hw(sys::PERF_COUNT_HW_REF_CPU_CYCLES),
    }
}

/// The `clockid_t` of a perf clock.
fn clock_id(c: PerfClock) -> i32 {
    match c {
        PerfClock::Realtime => 0,
        PerfClock::Monotonic => 1,
        PerfClock::MonotonicRaw => 4,
        PerfClock::Boottime | PerfClock::UnknownPerfClock => 7,
    }
}

/// The x86_64 registers a DWARF unwind starts from.
pub const REGS_USER_MASK: u64 =
    (1 << x86_64_regs::BP) | (1 << x86_64_regs::SP) | (1 << x86_64_regs::IP);

/// What the timebase event's samples hold for `options` (the layout the
/// reader parses them by).
pub fn layout(options: &PerfOptions) -> SampleLayout {
    let mut sample_type = sample::TID | sample::TIME | sample::READ;
    let mut regs_user_mask = 0;
    if let Some(cs) = &options.callstacks {
        match cs.user_frames {
            UserFrames::Dwarf | UserFrames::FramePointer => {
                sample_type |= sample::STACK_USER | sample::REGS_USER;
                regs_user_mask = REGS_USER_MASK;
            }
            // The kernel walks the user frame-pointer chain into the callchain.
            UserFrames::KernelFramePointer => sample_type |= sample::CALLCHAIN,
            UserFrames::Skip => {}
        }
        if cs.kernel_frames {
            sample_type |= sample::CALLCHAIN;
        }
    }
    SampleLayout {
        sample_type,
        read_format: read_format::GROUP,
        regs_user_mask,
    }
}

/// One event's `perf_event_attr`: the timebase (`leader`) samples, a
/// follower only counts.
fn attr(
    spec: &EventSpec,
    options: &PerfOptions,
    leader: bool,
    tracefs: &Path,
) -> Result<sys::perf_event_attr, PerfOpenError> {
    let (kind, config, config1, config2) = type_and_config(&spec.kind, tracefs)?;
    let mut a = sys::perf_event_attr {
        size: sys::PERF_ATTR_SIZE_VER8,
        type_: kind,
        config,
        ..sys::perf_event_attr::default()
    };
    a.__bindgen_anon_3.config1 = config1;
    a.__bindgen_anon_4.config2 = config2;
    // `modifiers`: only the levels listed count.
    if let Some(m) = spec.modifiers {
        a.set_exclude_user(u64::from(!m.user));
        a.set_exclude_kernel(u64::from(!m.kernel));
        a.set_exclude_hv(u64::from(!m.hypervisor));
    }
    if leader {
        let l = layout(options);
        a.sample_type = l.sample_type;
        a.read_format = l.read_format;
        a.sample_regs_user = l.regs_user_mask;
        if l.sample_type & sample::STACK_USER != 0 {
            a.sample_stack_user = STACK_USER_BYTES;
        }
        let cs = options.callstacks.as_ref();
        // Execs and exits (as side-band records): a process's unwinding
        // state and scope decision are dropped when it execs or exits.
        if cs.is_some() {
            a.set_comm(1);
            a.set_comm_exec(1);
            a.set_task(1);
        }
        // Kernel frames only: the user part comes from unwinding the copy.
        if cs.is_some_and(|c| c.kernel_frames && c.user_frames != UserFrames::KernelFramePointer) {
            a.set_exclude_callchain_user(1);
        }
        match options.interval {
            Interval::Frequency(f) => {
                a.set_freq(1);
                a.__bindgen_anon_1.sample_freq = f;
            }
            Interval::Period(p) => a.__bindgen_anon_1.sample_period = p,
        }
        // Wake pollers of the leader when a quarter of its ring buffer is
        // used, so that a busy CPU is read well before it overflows, not
        // only every `ring_buffer_read_period_ms` (DWARF samples carry a
        // stack copy of 64 KiB: a 1 MiB buffer holds 16 of them).
        a.set_watermark(1);
        let ring = u64::from(options.ring_buffer_pages) * rustix::param::page_size() as u64;
        a.__bindgen_anon_2.wakeup_watermark = u32::try_from(ring / 4).unwrap_or(u32::MAX);
        a.set_disabled(1);
    } else {
        // As upstream's followers: the leader's sample type, and its clock
        // (the kernel refuses a group whose members' clocks differ).
        a.sample_type = layout(options).sample_type;
    }
    a.set_use_clockid(1);
    a.clockid = clock_id(options.clock);
    Ok(a)
}

fn open(
    a: &mut sys::perf_event_attr,
    cpu: u32,
    group: i32,
    what: &str,
) -> Result<OwnedFd, PerfOpenError> {
    let cpu_arg = i32::try_from(cpu).map_err(|_| PerfOpenError::Open {
        what: what.to_owned(),
        cpu,
        source: std::io::Error::from(std::io::ErrorKind::InvalidInput),
    })?;
    // SAFETY: `a` is a valid, initialised perf_event_attr whose `size`
    // says how much of it the kernel may read; the kernel only writes back
    // `size` on E2BIG, within the struct.
    let fd = unsafe {
        perf_event_open_sys::perf_event_open(
            a,
            -1,
            cpu_arg,
            group,
            libc_ulong(sys::PERF_FLAG_FD_CLOEXEC),
        )
    };
    if fd < 0 {
        let source = std::io::Error::last_os_error();
        // ENOENT, ENODEV, EOPNOTSUPP: no such event here.
        if matches!(source.raw_os_error(), Some(2 | 19 | 95)) {
            return Err(PerfOpenError::NotCounted {
                what: what.to_owned(),
                cpu,
                source,
            });
        }
        return Err(PerfOpenError::Open {
            what: what.to_owned(),
            cpu,
            source,
        });
    }
    // SAFETY: the syscall returned a new file descriptor that nothing else owns.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

fn libc_ulong(v: u32) -> std::os::raw::c_ulong {
    std::os::raw::c_ulong::from(v)
}

fn describe(spec: &EventSpec) -> String {
    match &spec.kind {
        EventKind::Counter(c) => c.as_str_name().to_owned(),
        EventKind::Tracepoint { group, name, .. } => format!("{group}/{name}"),
        EventKind::Raw {
            pmu: Some(pmu),
            config,
            ..
        } => format!("raw pmu {pmu} config {config:#x}"),
        EventKind::Raw { kind, config, .. } => format!("raw type {kind} config {config:#x}"),
    }
}

/// A perf event group on one CPU and its mapped ring buffer.
#[derive(Debug)]
pub struct CpuEvent {
    cpu: u32,
    leader: OwnedFd,
    _followers: Vec<OwnedFd>,
    map: NonNull<u8>,
    map_len: usize,
    data_offset: usize,
    data_size: usize,
}

// SAFETY: the mapping is owned by this value alone (unmapped in `drop`);
// the kernel's concurrent writes are only read through atomics (head) or
// after the head's acquire load says they are complete.
unsafe impl Send for CpuEvent {}

impl CpuEvent {
    /// Opens `options`' timebase (and followers) on `cpu`, with a ring
    /// buffer of `options.ring_buffer_pages` data pages; disabled until
    /// [`CpuEvent::enable`].
    pub fn open(
        options: &PerfOptions,
        cpu: u32,
        tracefs: &Path,
    ) -> Result<CpuEvent, PerfOpenError> {
        if options.callstacks.is_some() && !cfg!(target_arch = "x86_64") {
            return Err(PerfOpenError::Arch);
        }
        let mut a = attr(&options.timebase, options, true, tracefs)?;
        let leader = open(&mut a, cpu, -1, &describe(&options.timebase))?;
        if let EventKind::Tracepoint {
            filter: Some(f), ..
        } = &options.timebase.kind
        {
            set_filter(&leader, f)?;
        }
        let mut followers = Vec::new();
        for f in &options.followers {
            let mut fa = attr(f, options, false, tracefs)?;
            let fd = open(&mut fa, cpu, leader.as_raw_fd(), &describe(f))?;
            if let EventKind::Tracepoint {
                filter: Some(flt), ..
            } = &f.kind
            {
                set_filter(&fd, flt)?;
            }
            followers.push(fd);
        }
        let page = rustix::param::page_size();
        let pages = usize::try_from(options.ring_buffer_pages).unwrap_or(usize::MAX);
        let map_len = pages
            .checked_add(1)
            .and_then(|p| p.checked_mul(page))
            .ok_or_else(|| PerfOpenError::Mmap {
                cpu,
                source: std::io::Error::from(std::io::ErrorKind::InvalidInput),
            })?;
        // SAFETY: a fresh shared mapping of the event's fd, of the size the
        // kernel expects (1 + 2^n pages); nothing else aliases it.
        let ptr = unsafe {
            rustix::mm::mmap(
                std::ptr::null_mut(),
                map_len,
                rustix::mm::ProtFlags::READ | rustix::mm::ProtFlags::WRITE,
                rustix::mm::MapFlags::SHARED,
                &leader,
                0,
            )
        }
        .map_err(|e| PerfOpenError::Mmap {
            cpu,
            source: e.into(),
        })?;
        let map = NonNull::new(ptr.cast::<u8>()).ok_or(PerfOpenError::Mmap {
            cpu,
            source: std::io::Error::from(std::io::ErrorKind::InvalidData),
        })?;
        let mut ev = CpuEvent {
            cpu,
            leader,
            _followers: followers,
            map,
            map_len,
            data_offset: page,
            data_size: map_len - page,
        };
        // Kernels since 4.1 say where the data area is; trust them only
        // within the mapping.
        let (off, size) = (
            ev.control(mmap_page::DATA_OFFSET),
            ev.control(mmap_page::DATA_SIZE),
        );
        if let (Ok(off), Ok(size)) = (usize::try_from(off), usize::try_from(size)) {
            if off != 0
                && size.is_power_of_two()
                && off.checked_add(size).is_some_and(|end| end <= map_len)
            {
                ev.data_offset = off;
                ev.data_size = size;
            }
        }
        Ok(ev)
    }

    /// The CPU.
    pub fn cpu(&self) -> u32 {
        self.cpu
    }

    /// A second descriptor of the group's leader, for a thread that polls
    /// it: readable when the ring buffer passed its wake-up watermark (a
    /// quarter full).
    pub fn watch_fd(&self) -> std::io::Result<OwnedFd> {
        self.leader.try_clone()
    }

    /// Starts counting and sampling.
    pub fn enable(&self) -> std::io::Result<()> {
        // SAFETY: an ioctl without pointer arguments on an fd we own.
        let r = unsafe { perf_event_open_sys::ioctls::ENABLE(self.leader.as_raw_fd(), 0) };
        if r < 0 {
            return Err(std::io::Error::last_os_error());
        }
        Ok(())
    }

    /// Stops counting and sampling (what is in the buffer stays readable).
    pub fn disable(&self) -> std::io::Result<()> {
        // SAFETY: as in `enable`.
        let r = unsafe { perf_event_open_sys::ioctls::DISABLE(self.leader.as_raw_fd(), 0) };
        if r < 0 {
            return Err(std::io::Error::last_os_error());
        }
        Ok(())
    }

    fn control_atomic(&self, offset: usize) -> &AtomicU64 {
        // SAFETY: `offset` is one of the control page's 8-byte aligned u64
        // fields (mmap_page), inside the first page of our live mapping;
        // the kernel updates them concurrently, so they are only accessed
        // atomically, and the reference lives no longer than `self`.
        unsafe { AtomicU64::from_ptr(self.map.as_ptr().add(offset).cast::<u64>()) }
    }

    fn control(&self, offset: usize) -> u64 {
        self.control_atomic(offset).load(Ordering::Acquire)
    }

    /// Appends to `out` every byte the kernel has written since the last
    /// call and gives that space back to the kernel; returns how many.
    /// Positions the kernel would never write are an error (the buffer is
    /// then skipped to the head).
    pub fn read_into(&mut self, out: &mut Vec<u8>) -> Result<usize, RingError> {
        self.read_with(|runs| {
            // One allocation for both runs (a wrapped span would otherwise
            // grow the vector, and copy the first run again, for the second).
            out.reserve(runs.first.len() + runs.second.len());
            out.extend_from_slice(runs.first);
            out.extend_from_slice(runs.second);
            Ok(runs.first.len() + runs.second.len())
        })
    }

    /// As [`CpuEvent::read_into`], each sample's stack copy of
    /// `stack_size` requested bytes cut to what the kernel filled
    /// ([`copy_compacted`]).
    pub fn read_compacted_into(
        &mut self,
        out: &mut Vec<u8>,
        stack_size: u64,
    ) -> Result<usize, RingError> {
        self.read_with(|runs| copy_compacted(runs, stack_size, out))
    }

    /// Hands the bytes the kernel has written since the last read to `f`
    /// (as the ring's two runs), then gives that space back to the kernel.
    /// Positions the kernel would never write are an error (the buffer is
    /// then skipped to the head).
    fn read_with(
        &mut self,
        f: impl FnOnce(TwoRuns<'_>) -> Result<usize, RingError>,
    ) -> Result<usize, RingError> {
        let head = self.control(mmap_page::DATA_HEAD);
        let tail = self.control(mmap_page::DATA_TAIL);
        let s = match span(tail, head, self.data_size) {
            Ok(s) => s,
            Err(e) => {
                self.control_atomic(mmap_page::DATA_TAIL)
                    .store(head, Ordering::Release);
                return Err(e);
            }
        };
        let run = |(start, len): (usize, usize)| -> &[u8] {
            if len == 0 {
                return &[];
            }
            // SAFETY: `span` keeps `start + len <= data_size`, and the data
            // area lies inside the mapping (checked in `open`). The bytes
            // between tail and head were completely written before the head
            // was published (acquire load above) and the kernel does not
            // touch them until the tail moves past them (below, after the
            // last use of the slices).
            unsafe {
                std::slice::from_raw_parts(self.map.as_ptr().add(self.data_offset + start), len)
            }
        };
        let result = f(TwoRuns {
            first: run(s.first),
            second: run(s.second),
        });
        self.control_atomic(mmap_page::DATA_TAIL)
            .store(head, Ordering::Release);
        result
    }
}

fn set_filter(fd: &OwnedFd, filter: &str) -> Result<(), PerfOpenError> {
    let c = CString::new(filter).map_err(|_| PerfOpenError::Filter {
        filter: filter.to_owned(),
        source: std::io::Error::from(std::io::ErrorKind::InvalidInput),
    })?;
    // SAFETY: the kernel reads the NUL-terminated string during the call;
    // `c` outlives it and is not written through the pointer.
    let r =
        unsafe { perf_event_open_sys::ioctls::SET_FILTER(fd.as_raw_fd(), c.as_ptr().cast_mut()) };
    if r < 0 {
        return Err(PerfOpenError::Filter {
            filter: filter.to_owned(),
            source: std::io::Error::last_os_error(),
        });
    }
    Ok(())
}

impl Drop for CpuEvent {
    fn drop(&mut self) {
        // SAFETY: the mapping was made in `open` with this length and is
        // unmapped once; no reference into it outlives `self`.
        let _ = unsafe { rustix::mm::munmap(self.map.as_ptr().cast(), self.map_len) };
    }
}
