//! The ftrace events upstream added after the schema we generate from
//! (`perfetto_protos` 0.51.1 ends at `FtraceEvent` field 575): their
//! names, field numbers and field types, as upstream's protos declare
//! them, so that each gets its `ftrace_event` row with typed args as the
//! older events do (`ftrace_raw.rs`). Ordered by field number.

use zerotrace_protos::upstream_tables::{ArgType, SchemaEvent, SchemaField};

/// The event upstream declares at `FtraceEvent` field `field`, past the
/// generated schema.
pub fn event(field: u32) -> Option<&'static SchemaEvent> {
    NEWER_EVENTS
        .binary_search_by_key(&field, |e| e.field)
        .ok()
        .and_then(|i| NEWER_EVENTS.get(i))
}

/// A field of an event.
const fn f(name: &'static str, number: u32, ty: ArgType) -> SchemaField {
    SchemaField { name, number, ty }
}

/// The events, by field number.
#[rustfmt::skip]
static NEWER_EVENTS: &[SchemaEvent] = &[
    SchemaEvent { name: "cma_alloc_finish", field: 576, fields: &[
        f("name", 1, ArgType::String), f("pfn", 2, ArgType::Uint), f("page", 3, ArgType::Uint),
        f("count", 4, ArgType::Uint), f("align", 5, ArgType::Uint), f("errorno", 6, ArgType::Int),
    ] },
    SchemaEvent { name: "mm_alloc_contig_migrate_range_info", field: 577, fields: &[
        f("start", 1, ArgType::Uint), f("end", 2, ArgType::Uint),
        f("nr_migrated", 3, ArgType::Uint), f("nr_reclaimed", 4, ArgType::Uint),
        f("nr_mapped", 5, ArgType::Uint), f("migratetype", 6, ArgType::Int),
    ] },
    SchemaEvent { name: "host_ffa_call", field: 578, fields: &[
        f("func_id", 1, ArgType::Uint), f("res_a1", 2, ArgType::Uint),
        f("res_a2", 3, ArgType::Uint), f("res_a3", 4, ArgType::Uint), f("res_a4", 5, ArgType::Uint),
        f("handled", 6, ArgType::Int), f("err", 7, ArgType::Int),
    ] },
    SchemaEvent { name: "dmabuf_rss_stat", field: 579, fields: &[
        f("rss", 1, ArgType::Uint), f("rss_delta", 2, ArgType::Int), f("i_ino", 3, ArgType::Uint),
    ] },
    SchemaEvent { name: "iommu_idmap", field: 580, fields: &[
        f("from", 1, ArgType::Uint), f("to", 2, ArgType::Uint), f("prot", 3, ArgType::Int),
    ] },
    SchemaEvent { name: "psci_mem_protect", field: 581, fields: &[
        f("count", 1, ArgType::Uint), f("was", 2, ArgType::Uint),
    ] },
    SchemaEvent { name: "hypervisor_host_hcall", field: 582, fields: &[
        f("id", 1, ArgType::Uint), f("invalid", 2, ArgType::Uint),
    ] },
    SchemaEvent { name: "hypervisor_host_smc", field: 583, fields: &[
        f("id", 1, ArgType::Uint), f("forwarded", 2, ArgType::Uint),
    ] },
    SchemaEvent { name: "hypervisor_hyp_exit", field: 584, fields: &[
    ] },
    SchemaEvent { name: "hypervisor_iommu_idmap", field: 585, fields: &[
        f("from", 1, ArgType::Uint), f("to", 2, ArgType::Uint), f("prot", 3, ArgType::Int),
    ] },
    SchemaEvent { name: "hypervisor_psci_mem_protect", field: 586, fields: &[
        f("count", 1, ArgType::Uint), f("was", 2, ArgType::Uint),
    ] },
    SchemaEvent { name: "hypervisor_host_mem_abort", field: 587, fields: &[
        f("esr", 1, ArgType::Uint), f("addr", 2, ArgType::Uint),
    ] },
    SchemaEvent { name: "hypervisor_hyp_enter", field: 588, fields: &[
    ] },
    SchemaEvent { name: "hypervisor_vcpu_illegal_trap", field: 590, fields: &[
        f("esr", 1, ArgType::Uint),
    ] },
    SchemaEvent { name: "drm_sched_job_add_dep", field: 591, fields: &[
        f("fence_context", 1, ArgType::Uint), f("fence_seqno", 2, ArgType::Uint),
        f("ctx", 3, ArgType::Uint), f("seqno", 4, ArgType::Uint),
    ] },
    SchemaEvent { name: "drm_sched_job_done", field: 592, fields: &[
        f("fence_context", 1, ArgType::Uint), f("fence_seqno", 2, ArgType::Uint),
    ] },
    SchemaEvent { name: "drm_sched_job_queue", field: 593, fields: &[
        f("name", 1, ArgType::String), f("job_count", 2, ArgType::Uint),
        f("hw_job_count", 3, ArgType::Int), f("dev", 4, ArgType::String),
        f("fence_context", 5, ArgType::Uint), f("fence_seqno", 6, ArgType::Uint),
        f("client_id", 7, ArgType::Uint),
    ] },
    SchemaEvent { name: "drm_sched_job_run", field: 594, fields: &[
        f("name", 1, ArgType::String), f("job_count", 2, ArgType::Uint),
        f("hw_job_count", 3, ArgType::Int), f("dev", 4, ArgType::String),
        f("fence_context", 5, ArgType::Uint), f("fence_seqno", 6, ArgType::Uint),
        f("client_id", 7, ArgType::Uint),
    ] },
    SchemaEvent { name: "drm_sched_job_unschedulable", field: 595, fields: &[
        f("fence_context", 1, ArgType::Uint), f("fence_seqno", 2, ArgType::Uint),
        f("ctx", 3, ArgType::Uint), f("seqno", 4, ArgType::Uint),
    ] },
    SchemaEvent { name: "fwtp_perfetto_counter", field: 596, fields: &[
        f("timestamp", 1, ArgType::Uint), f("track_id", 2, ArgType::Uint),
        f("category", 3, ArgType::String), f("name", 4, ArgType::String),
        f("value", 5, ArgType::Uint),
    ] },
    SchemaEvent { name: "scsi_dispatch_cmd_error", field: 597, fields: &[
        f("host_no", 1, ArgType::Uint), f("channel", 2, ArgType::Uint), f("id", 3, ArgType::Uint),
        f("lun", 4, ArgType::Uint), f("rtn", 5, ArgType::Int), f("opcode", 6, ArgType::Uint),
        f("cmd_len", 7, ArgType::Uint), f("data_sglen", 8, ArgType::Uint),
        f("prot_sglen", 9, ArgType::Uint), f("prot_op", 10, ArgType::Uint),
        f("driver_tag", 12, ArgType::Int), f("scheduler_tag", 13, ArgType::Int),
        f("cmnd", 14, ArgType::String),
    ] },
    SchemaEvent { name: "scsi_dispatch_cmd_timeout", field: 598, fields: &[
        f("host_no", 1, ArgType::Uint), f("channel", 2, ArgType::Uint), f("id", 3, ArgType::Uint),
        f("lun", 4, ArgType::Uint), f("result", 5, ArgType::Int), f("opcode", 6, ArgType::Uint),
        f("cmd_len", 7, ArgType::Uint), f("data_sglen", 8, ArgType::Uint),
        f("prot_sglen", 9, ArgType::Uint), f("prot_op", 10, ArgType::Uint),
        f("driver_tag", 12, ArgType::Int), f("scheduler_tag", 13, ArgType::Int),
        f("sense_key", 14, ArgType::Uint), f("asc", 15, ArgType::Uint),
        f("ascq", 16, ArgType::Uint), f("cmnd", 17, ArgType::String),
    ] },
    SchemaEvent { name: "scsi_eh_wakeup", field: 599, fields: &[
        f("host_no", 1, ArgType::Uint),
    ] },
    SchemaEvent { name: "fwtp_perfetto_slice", field: 600, fields: &[
        f("timestamp", 1, ArgType::Uint), f("track_id", 2, ArgType::Uint),
        f("category", 3, ArgType::String), f("name", 4, ArgType::String),
        f("begin", 5, ArgType::Uint),
    ] },
    SchemaEvent { name: "gpu_power_state", field: 601, fields: &[
        f("old_state", 1, ArgType::Int), f("new_state", 2, ArgType::Int),
    ] },
    SchemaEvent { name: "gram_collision", field: 602, fields: &[
        f("panel_index", 1, ArgType::Int), f("collision_cnt", 2, ArgType::Uint),
    ] },
    SchemaEvent { name: "f2fs_lock_elapsed_time", field: 603, fields: &[
        f("dev", 1, ArgType::Uint), f("comm", 2, ArgType::String), f("pid", 3, ArgType::Int),
        f("prio", 4, ArgType::Int), f("ioprio_class", 5, ArgType::Int),
        f("ioprio_data", 6, ArgType::Int), f("lock_name", 7, ArgType::Uint),
        f("is_write", 8, ArgType::Uint), f("total_time", 9, ArgType::Uint),
        f("running_time", 10, ArgType::Uint), f("runnable_time", 11, ArgType::Uint),
        f("io_sleep_time", 12, ArgType::Uint), f("other_time", 13, ArgType::Uint),
    ] },
    SchemaEvent { name: "sched_group_tracker", field: 604, fields: &[
        f("comm", 1, ArgType::String), f("pid", 2, ArgType::Int), f("group", 3, ArgType::String),
        f("group_num", 4, ArgType::Int),
    ] },
    SchemaEvent { name: "dpu_disp_frame_done_timeout", field: 605, fields: &[
        f("display_id", 1, ArgType::Int), f("output_id", 2, ArgType::Uint),
        f("frames_pending", 3, ArgType::Int), f("te_count", 4, ArgType::Int),
        f("during_disable", 5, ArgType::Uint),
    ] },
    SchemaEvent { name: "dpu_disp_frame_start_timeout", field: 606, fields: &[
        f("display_id", 1, ArgType::Int), f("output_id", 2, ArgType::Uint),
        f("frames_pending", 3, ArgType::Int), f("te_count", 4, ArgType::Int),
    ] },
    SchemaEvent { name: "mm_vmscan_memcg_reclaim_begin", field: 607, fields: &[
        f("order", 1, ArgType::Int), f("may_writepage", 2, ArgType::Int),
        f("gfp_flags", 3, ArgType::Uint),
    ] },
    SchemaEvent { name: "mm_vmscan_memcg_reclaim_end", field: 608, fields: &[
        f("nr_reclaimed", 1, ArgType::Uint),
    ] },
    SchemaEvent { name: "dpu_disp_frame_done_missing", field: 609, fields: &[
        f("display_id", 1, ArgType::Int), f("output_id", 2, ArgType::Uint),
        f("frames_pending", 3, ArgType::Int), f("te_count", 4, ArgType::Int),
    ] },
    SchemaEvent { name: "dpu_disp_frame_start_missing", field: 610, fields: &[
        f("display_id", 1, ArgType::Int), f("output_id", 2, ArgType::Uint),
        f("frames_pending", 3, ArgType::Int), f("te_count", 4, ArgType::Int),
    ] },
    SchemaEvent { name: "panel_settings_full", field: 611, fields: &[
        f("panel_index", 1, ArgType::Int), f("hbm", 2, ArgType::Uint), f("irc", 3, ArgType::Uint),
        f("h_pwm", 4, ArgType::Uint), f("fi_auto", 5, ArgType::Uint),
        f("fi_manual", 6, ArgType::Uint), f("early_exit", 7, ArgType::Uint),
        f("min_rr", 8, ArgType::Uint), f("max_rr", 9, ArgType::Uint),
        f("te_freq", 10, ArgType::Uint),
    ] },
    SchemaEvent { name: "panel_settings_lite", field: 612, fields: &[
        f("panel_index", 1, ArgType::Int), f("vrr", 2, ArgType::Uint),
        f("min_rr", 3, ArgType::Uint), f("max_rr", 4, ArgType::Uint),
        f("te_freq", 5, ArgType::Uint),
    ] },
    SchemaEvent { name: "dpu_disp_dpu_line_underrun", field: 613, fields: &[
        f("id", 1, ArgType::Int), f("frames_pending", 2, ArgType::Int),
        f("vsync_count", 3, ArgType::Int),
    ] },
    SchemaEvent { name: "psci_domain_idle_exit", field: 614, fields: &[
        f("cpu_id", 1, ArgType::Uint), f("state", 2, ArgType::Uint), f("s2idle", 3, ArgType::Uint),
    ] },
    SchemaEvent { name: "psci_domain_idle_enter", field: 615, fields: &[
        f("cpu_id", 1, ArgType::Uint), f("state", 2, ArgType::Uint), f("s2idle", 3, ArgType::Uint),
    ] },
    SchemaEvent { name: "long_irq", field: 616, fields: &[
        f("irq", 1, ArgType::Int), f("latency", 2, ArgType::Uint), f("count", 3, ArgType::Uint),
    ] },
    SchemaEvent { name: "long_softirq", field: 617, fields: &[
        f("vec_nr", 1, ArgType::Int), f("latency", 2, ArgType::Uint), f("count", 3, ArgType::Uint),
    ] },
];

#[cfg(test)]
mod tests {
    #[test]
    fn sorted_past_the_generated_schema_and_found() {
        assert!(
            super::NEWER_EVENTS
                .windows(2)
                .all(|w| w[0].field < w[1].field)
        );
        for e in super::NEWER_EVENTS {
            assert!(zerotrace_protos::upstream_tables::ftrace_event_schema(e.field).is_none());
        }
        assert_eq!(super::event(576).map(|e| e.name), Some("cma_alloc_finish"));
        assert!(super::event(575).is_none());
    }
}
