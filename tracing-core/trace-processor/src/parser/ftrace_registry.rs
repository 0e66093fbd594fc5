//! Which handler imports an ftrace event: each parser module lists the
//! `FtraceEvent` payload fields it handles (`FTRACE_HANDLERS`, next to its
//! code) and this registry gathers the lists into one table by field
//! number, as `registry.rs` does for `TracePacket` payloads. The event is
//! walked once (`ftrace.rs`) and its payload goes straight to its handler,
//! so which event kind an event is gets decided once, by its field
//! number, and no order of tries decides it. Adding a handler is a line
//! in its module's list (and the list's line here); a field claimed twice
//! stops the build.

use super::clock_rate;
use super::drm;
use super::ftrace_adreno;
use super::ftrace_binder;
use super::ftrace_f2fs;
use super::ftrace_funcgraph;
use super::ftrace_gpu_work;
use super::ftrace_i2c;
use super::ftrace_marks;
use super::ftrace_memory;
use super::ftrace_pixel;
use super::ftrace_power;
use super::ftrace_thermal;
use super::ftrace_trusty;
use super::gpu_mem_freq;
use super::importer::FtraceHandler;
use super::pkvm_hyp;
use super::suspend_resume;
use super::v4l2;
use super::virtio_gpu;
use super::virtio_video;
use super::{
    android_fs, cma, cpu_freq_idle, cros_ec, dma_heap, f2fs_iostat, ftrace_common, network,
    process_memory, sched, ufs,
};
use super::{block_io, irq, kprobe, syscalls};

/// Every module's list.
const MODULES: &[&[(u32, FtraceHandler)]] = &[
    sched::FTRACE_HANDLERS,
    cpu_freq_idle::FTRACE_HANDLERS,
    f2fs_iostat::FTRACE_HANDLERS,
    ftrace_common::FTRACE_HANDLERS,
    process_memory::FTRACE_HANDLERS,
    network::FTRACE_HANDLERS,
    ufs::FTRACE_HANDLERS,
    gpu_mem_freq::FTRACE_HANDLERS,
    virtio_gpu::FTRACE_HANDLERS,
    drm::FTRACE_HANDLERS,
    v4l2::FTRACE_HANDLERS,
    virtio_video::FTRACE_HANDLERS,
    cros_ec::FTRACE_HANDLERS,
    dma_heap::FTRACE_HANDLERS,
    cma::FTRACE_HANDLERS,
    android_fs::FTRACE_HANDLERS,
    kprobe::FTRACE_HANDLERS,
    block_io::FTRACE_HANDLERS,
    suspend_resume::FTRACE_HANDLERS,
    pkvm_hyp::FTRACE_HANDLERS,
    clock_rate::FTRACE_HANDLERS,
    irq::FTRACE_HANDLERS,
    syscalls::FTRACE_HANDLERS,
    ftrace_adreno::FTRACE_HANDLERS,
    ftrace_binder::FTRACE_HANDLERS,
    ftrace_f2fs::FTRACE_HANDLERS,
    ftrace_funcgraph::FTRACE_HANDLERS,
    ftrace_gpu_work::FTRACE_HANDLERS,
    ftrace_i2c::FTRACE_HANDLERS,
    ftrace_marks::FTRACE_HANDLERS,
    ftrace_memory::FTRACE_HANDLERS,
    ftrace_pixel::FTRACE_HANDLERS,
    ftrace_power::FTRACE_HANDLERS,
    ftrace_thermal::FTRACE_HANDLERS,
    ftrace_trusty::FTRACE_HANDLERS,
];

/// Field numbers the table covers (upstream's `FtraceEvent` ends below
/// 600; an event past this has no handler, only its raw row).
const FIELDS: usize = 1024;

/// The handler of each field number.
static TABLE: [Option<FtraceHandler>; FIELDS] = table();

const fn table() -> [Option<FtraceHandler>; FIELDS] {
    let mut t: [Option<FtraceHandler>; FIELDS] = [None; FIELDS];
    let mut m = 0;
    while m < MODULES.len() {
        let list = MODULES[m];
        let mut i = 0;
        while i < list.len() {
            let (field, f) = list[i];
            let field = field as usize;
            assert!(field < FIELDS, "an ftrace handler's field is out of range");
            assert!(t[field].is_none(), "an ftrace event has two handlers");
            t[field] = Some(f);
            i += 1;
        }
        m += 1;
    }
    t
}

/// The handler of an `FtraceEvent` payload field, if any.
pub fn handler(field: u32) -> Option<FtraceHandler> {
    TABLE.get(field as usize).copied().flatten()
}
