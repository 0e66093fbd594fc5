//! Which parser imports a packet: each parser module lists the
//! `TracePacket` payload fields it imports (`IMPORTERS`, next to its code)
//! and this registry gathers the lists into one table by field number, so
//! a packet goes straight to its importer with its payload's bytes.
//! Adding an importer is a line in its module's list and its list's line
//! here; a field claimed twice stops the build.

use super::android_aflags;
use super::android_framework_track_event;
use super::android_log;
use super::android_network_packets;
use super::app_wakelock;
use super::bluetooth;
use super::chrome_events;
use super::etw;
use super::gpu_counters;
use super::gpu_info;
use super::gpu_log_vulkan;
use super::gpu_mem_freq;
use super::gpu_render_stage;
use super::graphics_frame_event;
use super::heap_graph;
use super::importer::Importer;
use super::memory_tracker_snapshot;
use super::pixel_modem;
use super::process_descriptor;
use super::statsd_atom;
use super::v8;
use super::vulkan_memory_event;
use super::{
    android_cpu_per_uid, android_game_intervention, android_kernel_wakelocks, android_packages,
    android_power, android_system_property, chrome_metadata, concurrent_sessions, cpu_info,
    descriptor, display_state, frame_timeline, ftrace_stats, generic_kernel, interrupt_info,
    journald, process_stats, process_tree, profiling, service, sys_stats, system_info, track_event,
    winscope,
};

/// Every parser module's list.
const MODULES: &[&[(u32, Importer)]] = &[
    track_event::IMPORTERS,
    descriptor::IMPORTERS,
    ftrace_stats::IMPORTERS,
    system_info::IMPORTERS,
    process_tree::IMPORTERS,
    process_stats::IMPORTERS,
    cpu_info::IMPORTERS,
    sys_stats::IMPORTERS,
    display_state::IMPORTERS,
    concurrent_sessions::IMPORTERS,
    chrome_metadata::IMPORTERS,
    profiling::IMPORTERS,
    service::IMPORTERS,
    android_power::IMPORTERS,
    android_cpu_per_uid::IMPORTERS,
    android_system_property::IMPORTERS,
    android_packages::IMPORTERS,
    android_game_intervention::IMPORTERS,
    android_aflags::IMPORTERS,
    android_framework_track_event::IMPORTERS,
    android_network_packets::IMPORTERS,
    android_kernel_wakelocks::IMPORTERS,
    frame_timeline::IMPORTERS,
    gpu_mem_freq::IMPORTERS,
    gpu_log_vulkan::IMPORTERS,
    gpu_counters::IMPORTERS,
    gpu_render_stage::IMPORTERS,
    gpu_info::IMPORTERS,
    graphics_frame_event::IMPORTERS,
    winscope::IMPORTERS,
    generic_kernel::IMPORTERS,
    interrupt_info::IMPORTERS,
    heap_graph::IMPORTERS,
    etw::IMPORTERS,
    android_log::IMPORTERS,
    journald::IMPORTERS,
    statsd_atom::IMPORTERS,
    app_wakelock::IMPORTERS,
    memory_tracker_snapshot::IMPORTERS,
    chrome_events::IMPORTERS,
    vulkan_memory_event::IMPORTERS,
    process_descriptor::IMPORTERS,
    bluetooth::IMPORTERS,
    pixel_modem::IMPORTERS,
    v8::IMPORTERS,
];

/// Field numbers the table covers: the `TracePacket` fields and the
/// extension range (1000 to 1999).
const FIELDS: usize = 2000;

/// The importer of each field number.
static TABLE: [Option<Importer>; FIELDS] = table();

const fn table() -> [Option<Importer>; FIELDS] {
    let mut t: [Option<Importer>; FIELDS] = [None; FIELDS];
    let mut m = 0;
    while m < MODULES.len() {
        let list = MODULES[m];
        let mut i = 0;
        while i < list.len() {
            let (field, f) = list[i];
            let field = field as usize;
            assert!(field < FIELDS, "an importer's field is out of range");
            assert!(t[field].is_none(), "a field has two importers");
            t[field] = Some(f);
            i += 1;
        }
        m += 1;
    }
    t
}

/// The importer of a payload field, if any.
pub fn importer(field: u32) -> Option<Importer> {
    TABLE.get(field as usize).copied().flatten()
}

/// Whether a payload field has an importer.
pub fn has_importer(field: u32) -> bool {
    importer(field).is_some()
}
