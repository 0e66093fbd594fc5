//! The kernel's perf_event ABI as numbers (`include/uapi/linux/perf_event.h`):
//! what a sample record holds for each `sample_type` bit, the record types,
//! the CPU mode in a record's `misc`, the callchain's context markers and
//! where the ring buffer's control fields sit in the first mmapped page.
//! The record parser and the ring reader are written against these alone,
//! so they run on bytes from any source (tests, fuzzing, the live buffer).

/// `PERF_SAMPLE_*`: the parts a `PERF_RECORD_SAMPLE` holds, in this order
/// of the bits below (the kernel writes them in a fixed order, not bit order).
pub mod sample {
    /// The instruction pointer.
    pub const IP: u64 = 1 << 0;
    /// Process and thread ids (two `u32`).
    pub const TID: u64 = 1 << 1;
    /// The timestamp, in the event's clock.
    pub const TIME: u64 = 1 << 2;
    /// A data address.
    pub const ADDR: u64 = 1 << 3;
    /// The counter values (`read_format`).
    pub const READ: u64 = 1 << 4;
    /// The kernel's callchain.
    pub const CALLCHAIN: u64 = 1 << 5;
    /// The event id.
    pub const ID: u64 = 1 << 6;
    /// The CPU (a `u32` and a reserved `u32`).
    pub const CPU: u64 = 1 << 7;
    /// The sampling period.
    pub const PERIOD: u64 = 1 << 8;
    /// The stream id.
    pub const STREAM_ID: u64 = 1 << 9;
    /// Raw tracepoint data.
    pub const RAW: u64 = 1 << 10;
    /// Branch records.
    pub const BRANCH_STACK: u64 = 1 << 11;
    /// The user registers of `sample_regs_user`.
    pub const REGS_USER: u64 = 1 << 12;
    /// A copy of the user stack.
    pub const STACK_USER: u64 = 1 << 13;
    /// The event id, first in the record.
    pub const IDENTIFIER: u64 = 1 << 16;
}

/// `PERF_FORMAT_*`: how `PERF_SAMPLE_READ` values are laid out.
pub mod read_format {
    /// The time the event was enabled.
    pub const TOTAL_TIME_ENABLED: u64 = 1 << 0;
    /// The time the event ran.
    pub const TOTAL_TIME_RUNNING: u64 = 1 << 1;
    /// Each value followed by its event id.
    pub const ID: u64 = 1 << 2;
    /// The values of the whole group (leader first).
    pub const GROUP: u64 = 1 << 3;
    /// Each value followed by its lost count.
    pub const LOST: u64 = 1 << 4;
}

/// `PERF_RECORD_*`: a record's `type`.
pub mod record {
    /// An mmap of executable memory.
    pub const MMAP: u32 = 1;
    /// Records the kernel lost because the buffer was full.
    pub const LOST: u32 = 2;
    /// A task's name changed.
    pub const COMM: u32 = 3;
    /// A task exited.
    pub const EXIT: u32 = 4;
    /// The event was throttled (too many samples).
    pub const THROTTLE: u32 = 5;
    /// The event was unthrottled.
    pub const UNTHROTTLE: u32 = 6;
    /// A task forked.
    pub const FORK: u32 = 7;
    /// A sample.
    pub const SAMPLE: u32 = 9;
    /// An mmap with inode and build id details.
    pub const MMAP2: u32 = 10;
    /// Samples the kernel dropped (not written, not lost in the buffer).
    pub const LOST_SAMPLES: u32 = 13;
}

/// `PERF_RECORD_MISC_COMM_EXEC`: a `PERF_RECORD_COMM` that an exec caused.
pub const MISC_COMM_EXEC: u16 = 1 << 13;

/// `PERF_RECORD_MISC_CPUMODE_MASK`: the CPU mode bits of a record's `misc`.
pub const MISC_CPUMODE_MASK: u16 = 0x7;

/// The CPU modes of `misc` (the same numbers as Perfetto's
/// `Profiling.CpuMode`).
pub mod cpumode {
    /// Unknown.
    pub const UNKNOWN: u16 = 0;
    /// The kernel.
    pub const KERNEL: u16 = 1;
    /// User space.
    pub const USER: u16 = 2;
    /// The hypervisor.
    pub const HYPERVISOR: u16 = 3;
    /// A guest's kernel.
    pub const GUEST_KERNEL: u16 = 4;
    /// A guest's user space.
    pub const GUEST_USER: u16 = 5;
}

/// `PERF_CONTEXT_*`: markers in a callchain saying whose frames follow
/// (values of `(u64)-N`); any entry at or above [`context::MAX`] is a marker.
pub mod context {
    /// Hypervisor frames follow.
    pub const HV: u64 = (-32i64) as u64;
    /// Kernel frames follow.
    pub const KERNEL: u64 = (-128i64) as u64;
    /// User frames follow.
    pub const USER: u64 = (-512i64) as u64;
    /// Guest frames follow.
    pub const GUEST: u64 = (-2048i64) as u64;
    /// Guest kernel frames follow.
    pub const GUEST_KERNEL: u64 = (-2176i64) as u64;
    /// Guest user frames follow.
    pub const GUEST_USER: u64 = (-2560i64) as u64;
    /// The lowest marker value.
    pub const MAX: u64 = (-4095i64) as u64;
}

/// Byte offsets in `struct perf_event_mmap_page`, the ring buffer's first page.
pub mod mmap_page {
    /// `data_head`: where the kernel will write next (read with acquire).
    pub const DATA_HEAD: usize = 1024;
    /// `data_tail`: how far the reader has read (written with release).
    pub const DATA_TAIL: usize = 1032;
    /// `data_offset`: where the data area starts in the mapping (0 on
    /// kernels older than 4.1: one page in).
    pub const DATA_OFFSET: usize = 1040;
    /// `data_size`: the data area's size (0 on older kernels).
    pub const DATA_SIZE: usize = 1048;
}

/// x86_64's user registers in perf's numbering (`asm/perf_regs.h`).
pub mod x86_64_regs {
    /// `PERF_REG_X86_BP`.
    pub const BP: u32 = 6;
    /// `PERF_REG_X86_SP`.
    pub const SP: u32 = 7;
    /// `PERF_REG_X86_IP`.
    pub const IP: u32 = 8;
}

/// `PERF_SAMPLE_REGS_ABI_*`: the ABI of the registers in a sample.
pub mod regs_abi {
    /// No registers (a kernel thread).
    pub const NONE: u64 = 0;
    /// 32-bit.
    pub const ABI_32: u64 = 1;
    /// 64-bit.
    pub const ABI_64: u64 = 2;
}
