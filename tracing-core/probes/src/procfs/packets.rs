//! The trace packets of `linux.process_stats`, `linux.sys_stats` and
//! `linux.system_info`, written from values already read and parsed (no
//! I/O here), with the writers generated from upstream's schema, with the
//! field semantics of Perfetto's `traced_probes`:
//!
//! * `process_tree`: each process's pid, ppid, uid and cmdline (a process
//!   with an empty cmdline, a kernel thread, gets its name as the only
//!   argument and `cmdline_is_comm`), then every non-main thread with its
//!   tgid and, when asked, its name; `is_kthread` where the kernel says
//!   (6.4+), the start time (ns after boot) when asked;
//! * `process_stats`: per process the `status` memory counters (kB) and
//!   `oom_score_adj`, user and kernel time (ns) when asked;
//! * `sys_stats`: meminfo and vmstat values of the selected counters
//!   (all known ones when the config lists none), `/proc/stat` CPU times in
//!   ns, irq counts (the total and each non-zero irq), softirq counts and
//!   forks; per-CPU current frequency; PSI totals in ns; thermal zones in
//!   °C; disk counters; devfreq values; buddy allocator free blocks; CPU
//!   idle state residencies (µs);
//! * `cpu_info`: each CPU's name, available frequencies, capacity and (ARM,
//!   all five given) identification.

use protozero::Message;

use super::buddyinfo::BuddyZone;
use super::cpuidle::CpuIdle;
use super::cpuinfo::CpuEntry;
use super::diskstats::DiskStat;
use super::psi::{self, PsiLine};
use super::stat::Stat;
use super::thermal::ThermalZone;
use super::walk::{ProcessInfo, ProcessMemory};
use super::{meminfo, vmstat};
use zerotrace_protos::protos::sys_stats::psi_sample::PsiResource;
use zerotrace_protos::protos::sys_stats_config::StatCounters;
use zerotrace_protos::protos::{
    CpuInfo, ProcessStats, ProcessTree, SysStats, SysStatsConfigDecoder,
};
use zerotrace_protos::upstream_tables::packet_field;

/// Nanoseconds per `/proc/stat` tick: Linux reports in `USER_HZ`, which
/// is 100 on every architecture it supports.
pub const NS_PER_USER_HZ: u64 = 1_000_000_000 / 100;

/// Writes the packet timestamp (boot-clock ns, as upstream stamps them).
fn stamp(packet: &mut Message<'_>, timestamp_ns: u64) {
    packet.append_uint64(packet_field::TIMESTAMP, timestamp_ns);
}

/// What a `process_tree` packet records beyond pids, parents, uids and
/// command lines (the `ProcessStatsConfig` options of the same names).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TreeOptions {
    /// Threads carry their names.
    pub record_thread_names: bool,
    /// Processes carry `process_start_from_boot` (ns).
    pub record_process_age: bool,
}

/// Writes a `process_tree` packet into `packet` (a `TracePacket`).
pub fn write_process_tree(
    packet: &mut Message<'_>,
    timestamp_ns: u64,
    processes: &[ProcessInfo],
    options: TreeOptions,
    collection_end_ns: Option<u64>,
) {
    stamp(packet, timestamp_ns);
    let mut tree = ProcessTree::from_message(packet.begin_nested(packet_field::PROCESS_TREE));
    for p in processes {
        let mut w = tree.add_processes();
        w.set_pid(p.pid).set_ppid(p.ppid);
        if let Some(uid) = p.uid {
            // Uids above i32::MAX wrap as upstream's int32 field does.
            w.set_uid(uid as i32);
        }
        if let Some(k) = p.kthread {
            w.set_is_kthread(k);
        }
        if let Some(ticks) = p.start_ticks.filter(|_| options.record_process_age) {
            w.set_process_start_from_boot(ticks.saturating_mul(NS_PER_USER_HZ));
        }
        if p.cmdline.is_empty() {
            w.add_cmdline(&p.name).set_cmdline_is_comm(true);
        } else {
            for arg in &p.cmdline {
                w.add_cmdline(arg);
            }
        }
    }
    for p in processes {
        for t in &p.threads {
            let mut w = tree.add_threads();
            w.set_tid(t.tid).set_tgid(p.pid);
            if options.record_thread_names {
                if let Some(name) = &t.name {
                    w.set_name(name);
                }
            }
        }
    }
    if let Some(end) = collection_end_ns {
        tree.set_collection_end_timestamp(end);
    }
}

/// Writes a `process_stats` packet into `packet` (a `TracePacket`).
pub fn write_process_stats(
    packet: &mut Message<'_>,
    timestamp_ns: u64,
    processes: &[ProcessMemory],
    record_process_runtime: bool,
    collection_end_ns: Option<u64>,
) {
    stamp(packet, timestamp_ns);
    let mut stats = ProcessStats::from_message(packet.begin_nested(packet_field::PROCESS_STATS));
    for p in processes {
        let mut w = stats.add_processes();
        w.set_pid(p.pid);
        let s = &p.status;
        if let Some(v) = s.vm_size_kb {
            w.set_vm_size_kb(v);
        }
        if let Some(v) = s.vm_rss_kb {
            w.set_vm_rss_kb(v);
        }
        if let Some(v) = s.rss_anon_kb {
            w.set_rss_anon_kb(v);
        }
        if let Some(v) = s.rss_file_kb {
            w.set_rss_file_kb(v);
        }
        if let Some(v) = s.rss_shmem_kb {
            w.set_rss_shmem_kb(v);
        }
        if let Some(v) = s.vm_swap_kb {
            w.set_vm_swap_kb(v);
        }
        if let Some(v) = s.vm_locked_kb {
            w.set_vm_locked_kb(v);
        }
        if let Some(v) = s.vm_hwm_kb {
            w.set_vm_hwm_kb(v);
        }
        if let Some(adj) = p.oom_score_adj {
            w.set_oom_score_adj(adj);
        }
        if let Some((user, kernel)) = p.runtime_ticks.filter(|_| record_process_runtime) {
            w.set_runtime_user_mode(user.saturating_mul(NS_PER_USER_HZ))
                .set_runtime_kernel_mode(kernel.saturating_mul(NS_PER_USER_HZ));
        }
        if let Some(r) = &p.smaps_rollup {
            if let Some(v) = r.rss_kb {
                w.set_smr_rss_kb(v);
            }
            if let Some(v) = r.pss_kb {
                w.set_smr_pss_kb(v);
            }
            if let Some(v) = r.pss_anon_kb {
                w.set_smr_pss_anon_kb(v);
            }
            if let Some(v) = r.pss_file_kb {
                w.set_smr_pss_file_kb(v);
            }
            if let Some(v) = r.pss_shmem_kb {
                w.set_smr_pss_shmem_kb(v);
            }
            if let Some(v) = r.swap_pss_kb {
                w.set_smr_swap_pss_kb(v);
            }
        }
        for (fd, path) in &p.fds {
            w.add_fds().set_fd(*fd).set_path(path);
        }
    }
    if let Some(end) = collection_end_ns {
        stats.set_collection_end_timestamp(end);
    }
}

/// Which `sys_stats` counters a `SysStatsConfig` selects.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Selection {
    /// Meminfo counter numbers; `None`: every known one.
    pub meminfo: Option<Vec<i32>>,
    /// Vmstat counter numbers; `None`: every known one.
    pub vmstat: Option<Vec<i32>>,
    /// `StatCounters` numbers; `None`: all of them.
    pub stat: Option<Vec<i32>>,
}

impl Selection {
    /// The selection of a `SysStatsConfig` (an empty list means all, as
    /// upstream has it).
    pub fn from_config(config: &SysStatsConfigDecoder<'_>) -> Self {
        let list = |has: bool, v: Vec<i32>| has.then_some(v);
        Selection {
            meminfo: list(
                config.has_meminfo_counters(),
                config.meminfo_counters_raw().collect(),
            ),
            vmstat: list(
                config.has_vmstat_counters(),
                config.vmstat_counters_raw().collect(),
            ),
            stat: list(
                config.has_stat_counters(),
                config.stat_counters_raw().collect(),
            ),
        }
    }

    fn wants(list: &Option<Vec<i32>>, n: i32) -> bool {
        list.as_ref().is_none_or(|l| l.contains(&n))
    }

    fn wants_stat(&self, c: StatCounters) -> bool {
        Self::wants(&self.stat, c as i32)
    }
}

/// One poll's values; `None` fields were not due (or not available) and
/// are not written.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SysStatsSample {
    /// `/proc/meminfo` lines.
    pub meminfo: Option<Vec<(String, u64)>>,
    /// `/proc/vmstat` lines.
    pub vmstat: Option<Vec<(String, u64)>>,
    /// `/proc/stat`.
    pub stat: Option<Stat>,
    /// Current kHz per CPU.
    pub cpufreq_khz: Option<Vec<u32>>,
    /// Pressure files that exist, by resource.
    pub psi: Option<Vec<(psi::Resource, Vec<PsiLine>)>>,
    /// Thermal zones.
    pub thermal: Option<Vec<ThermalZone>>,
    /// Disk counters.
    pub diskstats: Option<Vec<DiskStat>>,
    /// Buddy allocator free blocks per node and zone.
    pub buddyinfo: Option<Vec<BuddyZone>>,
    /// CPU idle state residencies.
    pub cpuidle: Option<Vec<CpuIdle>>,
    /// Devfreq devices' current frequencies (name, Hz).
    pub devfreq: Option<Vec<(String, u64)>>,
}

fn psi_resource(r: psi::Resource, k: psi::Kind) -> PsiResource {
    use psi::{Kind, Resource};
    match (r, k) {
        (Resource::Cpu, Kind::Some) => PsiResource::CpuSome,
        (Resource::Cpu, Kind::Full) => PsiResource::CpuFull,
        (Resource::Io, Kind::Some) => PsiResource::IoSome,
        (Resource::Io, Kind::Full) => PsiResource::IoFull,
        (Resource::Memory, Kind::Some) => PsiResource::MemorySome,
        (Resource::Memory, Kind::Full) => PsiResource::MemoryFull,
    }
}

/// Writes a `sys_stats` packet into `packet` (a `TracePacket`).
pub fn write_sys_stats(
    packet: &mut Message<'_>,
    timestamp_ns: u64,
    selection: &Selection,
    sample: &SysStatsSample,
    collection_end_ns: Option<u64>,
) {
    stamp(packet, timestamp_ns);
    let mut s = SysStats::from_message(packet.begin_nested(packet_field::SYS_STATS));
    for (key, value) in sample.meminfo.iter().flatten() {
        if let Some(c) =
            meminfo::counter(key).filter(|&c| Selection::wants(&selection.meminfo, c as i32))
        {
            s.add_meminfo().set_key(c).set_value(*value);
        }
    }
    for (key, value) in sample.vmstat.iter().flatten() {
        if let Some(c) = vmstat::counter(key).filter(|&c| Selection::wants(&selection.vmstat, c)) {
            s.add_vmstat().set_key_raw(c).set_value(*value);
        }
    }
    if let Some(stat) = &sample.stat {
        if selection.wants_stat(StatCounters::StatCpuTimes) {
            for c in &stat.cpus {
                let ns = |t: u64| t.saturating_mul(NS_PER_USER_HZ);
                s.add_cpu_stat()
                    .set_cpu_id(c.cpu)
                    .set_user_ns(ns(c.user))
                    .set_user_nice_ns(ns(c.nice))
                    .set_system_mode_ns(ns(c.system))
                    .set_idle_ns(ns(c.idle))
                    .set_io_wait_ns(ns(c.iowait))
                    .set_irq_ns(ns(c.irq))
                    .set_softirq_ns(ns(c.softirq))
                    .set_steal_ns(ns(c.steal));
            }
        }
        if selection.wants_stat(StatCounters::StatIrqCounts) {
            if let Some(total) = stat.intr_total {
                s.set_num_irq_total(total);
            }
            for (irq, &count) in stat.intr.iter().enumerate().filter(|(_, c)| **c > 0) {
                let irq = i32::try_from(irq).unwrap_or(i32::MAX);
                s.add_num_irq().set_irq(irq).set_count(count);
            }
        }
        if selection.wants_stat(StatCounters::StatSoftirqCounts) {
            if let Some(total) = stat.softirq_total {
                s.set_num_softirq_total(total);
            }
            for (irq, &count) in stat.softirq.iter().enumerate() {
                let irq = i32::try_from(irq).unwrap_or(i32::MAX);
                s.add_num_softirq().set_irq(irq).set_count(count);
            }
        }
        if selection.wants_stat(StatCounters::StatForkCount) {
            if let Some(forks) = stat.forks {
                s.set_num_forks(forks);
            }
        }
    }
    for &khz in sample.cpufreq_khz.iter().flatten() {
        s.add_cpufreq_khz(khz);
    }
    for (resource, lines) in sample.psi.iter().flatten() {
        for l in lines {
            s.add_psi()
                .set_resource(psi_resource(*resource, l.kind))
                .set_total_ns(l.total_us.saturating_mul(1000));
        }
    }
    for z in sample.thermal.iter().flatten() {
        let mut w = s.add_thermal_zone();
        w.set_name(&z.name);
        if let Some(t) = z.temp_millicelsius.and_then(|t| u64::try_from(t).ok()) {
            w.set_temp(t / 1000);
        }
        if let Some(ty) = &z.zone_type {
            w.set_type(ty);
        }
    }
    for d in sample.diskstats.iter().flatten() {
        let mut w = s.add_disk_stat();
        w.set_device_name(&d.device)
            .set_read_sectors(d.read_sectors)
            .set_read_time_ms(d.read_time_ms)
            .set_write_sectors(d.write_sectors)
            .set_write_time_ms(d.write_time_ms);
        if let Some(v) = d.discard_sectors {
            w.set_discard_sectors(v);
        }
        if let Some(v) = d.discard_time_ms {
            w.set_discard_time_ms(v);
        }
        if let Some(v) = d.flush_count {
            w.set_flush_count(v);
        }
        if let Some(v) = d.flush_time_ms {
            w.set_flush_time_ms(v);
        }
    }
    for (name, hz) in sample.devfreq.iter().flatten() {
        s.add_devfreq().set_key(name).set_value(*hz);
    }
    for b in sample.buddyinfo.iter().flatten() {
        let mut w = s.add_buddy_info();
        w.set_node(&b.node).set_zone(&b.zone);
        for &n in &b.order_pages {
            w.add_order_pages(n);
        }
    }
    for c in sample.cpuidle.iter().flatten() {
        let mut w = s.add_cpuidle_state();
        w.set_cpu_id(c.cpu);
        for (state, us) in &c.states {
            w.add_cpuidle_state_entry()
                .set_state(state)
                .set_duration_us(*us);
        }
    }
    if let Some(end) = collection_end_ns {
        s.set_collection_end_timestamp(end);
    }
}

/// One CPU of the `cpu_info` packet.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CpuDescription {
    /// From `/proc/cpuinfo`.
    pub entry: CpuEntry,
    /// Its available frequencies, kHz (empty where cpufreq has none).
    pub frequencies_khz: Vec<u32>,
    /// `cpuN/cpu_capacity` (heterogeneous ARM systems), where present.
    pub capacity: Option<u32>,
}

/// Writes a `cpu_info` packet into `packet` (a `TracePacket`).
pub fn write_cpu_info(packet: &mut Message<'_>, timestamp_ns: u64, cpus: &[CpuDescription]) {
    stamp(packet, timestamp_ns);
    let mut info = CpuInfo::from_message(packet.begin_nested(packet_field::CPU_INFO));
    for c in cpus {
        let mut w = info.add_cpus();
        if let Some(name) = &c.entry.name {
            w.set_processor(name);
        }
        for &f in &c.frequencies_khz {
            w.add_frequencies(f);
        }
        if let Some(capacity) = c.capacity {
            w.set_capacity(capacity);
        }
        if let Some([implementer, architecture, variant, part, revision]) = c.entry.arm.complete() {
            w.begin_arm_identifier()
                .set_implementer(implementer)
                .set_architecture(architecture)
                .set_variant(variant)
                .set_part(part)
                .set_revision(revision);
        }
    }
}
