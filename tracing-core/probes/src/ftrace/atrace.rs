//! The atrace categories on Linux: which kernel tracepoints each category
//! stands for (facts from Perfetto's predefined tracepoints), and their
//! expansion against the events a kernel has. Kept apart from the config
//! decisions because it is a table a reader looks up on its own.

use super::config::EventCatalog;

/// Whole groups (`"*"`) and single events each atrace category stands for,
/// as upstream's predefined tracepoints list them.
const CATEGORIES: &[(&str, &[(&str, &str)])] = &[
    (
        "gfx",
        &[
            ("mdss", "*"),
            ("mali", "*"),
            ("sde", "*"),
            ("dpu", "*"),
            ("g2d", "*"),
            ("panel", "*"),
        ],
    ),
    ("ion", &[("kmem", "ion_alloc_buffer_start")]),
    (
        "sched",
        &[
            ("sched", "sched_switch"),
            ("sched", "sched_waking"),
            ("sched", "sched_blocked_reason"),
            ("sched", "sched_cpu_hotplug"),
            ("sched", "sched_pi_setprio"),
            ("sched", "sched_process_exit"),
            ("cgroup", "*"),
            ("oom", "oom_score_adj_update"),
            ("task", "task_rename"),
            ("task", "task_newtask"),
            ("systrace", "*"),
            ("scm", "*"),
        ],
    ),
    ("irq", &[("irq", "*"), ("ipi", "*")]),
    (
        "irqoff",
        &[("preemptirq", "irq_enable"), ("preemptirq", "irq_disable")],
    ),
    (
        "preemptoff",
        &[
            ("preemptirq", "preempt_enable"),
            ("preemptirq", "preempt_disable"),
        ],
    ),
    ("i2c", &[("i2c", "*")]),
    (
        "freq",
        &[
            ("power", "cpu_frequency"),
            ("power", "gpu_frequency"),
            ("power", "clock_set_rate"),
            ("power", "clock_disable"),
            ("power", "clock_enable"),
            ("clk", "clk_set_rate"),
            ("clk", "clk_disable"),
            ("clk", "clk_enable"),
            ("power", "cpu_frequency_limits"),
            ("power", "suspend_resume"),
            ("cpuhp", "cpuhp_enter"),
            ("cpuhp", "cpuhp_exit"),
            ("cpuhp", "cpuhp_pause"),
            ("msm_bus", "*"),
        ],
    ),
    ("membus", &[("memory_bus", "*")]),
    ("idle", &[("power", "cpu_idle")]),
    (
        "disk",
        &[
            ("f2fs", "f2fs_sync_file_enter"),
            ("f2fs", "f2fs_sync_file_exit"),
            ("f2fs", "f2fs_write_begin"),
            ("f2fs", "f2fs_write_end"),
            ("f2fs", "f2fs_iostat"),
            ("f2fs", "f2fs_iostat_latency"),
            ("ext4", "ext4_da_write_begin"),
            ("ext4", "ext4_da_write_end"),
            ("ext4", "ext4_sync_file_enter"),
            ("ext4", "ext4_sync_file_exit"),
            ("block", "block_bio_queue"),
            ("block", "block_bio_complete"),
            ("ufs", "ufshcd_command"),
        ],
    ),
    ("mmc", &[("mmc", "*")]),
    ("load", &[("cpufreq_interactive", "*")]),
    ("sync", &[("sync", "*"), ("fence", "*"), ("dma_fence", "*")]),
    ("workq", &[("workqueue", "*")]),
    (
        "memreclaim",
        &[
            ("vmscan", "mm_vmscan_direct_reclaim_begin"),
            ("vmscan", "mm_vmscan_direct_reclaim_end"),
            ("vmscan", "mm_vmscan_kswapd_wake"),
            ("vmscan", "mm_vmscan_kswapd_sleep"),
            ("lowmemorykiller", "*"),
        ],
    ),
    ("regulators", &[("regulator", "*")]),
    (
        "binder_driver",
        &[
            ("binder", "binder_transaction"),
            ("binder", "binder_transaction_received"),
            ("binder", "binder_transaction_alloc_buf"),
            ("binder", "binder_set_priority"),
        ],
    ),
    (
        "binder_lock",
        &[
            ("binder", "binder_lock"),
            ("binder", "binder_locked"),
            ("binder", "binder_unlock"),
        ],
    ),
    ("pagecache", &[("filemap", "*")]),
    (
        "memory",
        &[
            // `synthetic/rss_stat_throttled` instead where the kernel has it.
            ("kmem", "rss_stat"),
            ("kmem", "ion_heap_grow"),
            ("kmem", "ion_heap_shrink"),
            ("ion", "ion_stat"),
            ("mm_event", "mm_event_record"),
            ("dmabuf_heap", "dma_heap_stat"),
            ("gpu_mem", "gpu_mem_total"),
        ],
    ),
    (
        "thermal",
        &[
            ("thermal", "thermal_temperature"),
            ("thermal", "cdev_update"),
        ],
    ),
    ("camera", &[("lwis", "*")]),
];

/// The atrace category names that enable kernel tracepoints.
pub fn atrace_category_names() -> impl Iterator<Item = &'static str> {
    CATEGORIES.iter().map(|(c, _)| *c)
}

/// The tracepoints an atrace category stands for on a kernel whose events
/// `catalog` lists (whole groups expanded; single events listed whether
/// the kernel has them or not). Unknown categories stand for none.
pub fn category_tracepoints(category: &str, catalog: &dyn EventCatalog) -> Vec<(String, String)> {
    let Some((_, entries)) = CATEGORIES.iter().find(|(c, _)| *c == category) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for &(group, name) in *entries {
        if name == "*" {
            out.extend(
                catalog
                    .group_events(group)
                    .into_iter()
                    .map(|n| (group.to_owned(), n)),
            );
        } else if group == "kmem"
            && name == "rss_stat"
            && catalog.has_event("synthetic", "rss_stat_throttled")
        {
            out.push(("synthetic".to_owned(), "rss_stat_throttled".to_owned()));
        } else {
            out.push((group.to_owned(), name.to_owned()));
        }
    }
    out
}
