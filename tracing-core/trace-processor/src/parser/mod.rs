//! The parsers: each packet leaving the loader's sort window goes to the
//! importer of its payload (`registry.rs`), which fills the tables through
//! the trackers, while the trace is still being read.

mod android_aflags;
mod android_cpu_per_uid;
pub(crate) mod android_framework_track_event;
mod android_fs;
mod android_game_intervention;
mod android_kernel_wakelocks;
mod android_log;
mod android_network_packets;
mod android_packages;
pub(crate) mod android_power;
pub(crate) mod android_system_property;
mod app_wakelock;
mod art_process_metadata;
pub(crate) mod binder;
mod block_io;
mod bluetooth;
mod chrome_active_processes;
mod chrome_events;
mod chrome_metadata;
mod chrome_process;
mod clock_rate;
mod cma;
mod concurrent_sessions;
mod cpu_freq_idle;
mod cpu_info;
mod cros_ec;
mod debug_annotations;
mod deobfuscation;
mod descriptor;
mod display_state;
mod dma_heap;
mod drm;
mod etw;
mod f2fs_iostat;
mod fields;
mod frame_timeline;
pub(crate) mod ftrace;
mod ftrace_adreno;
mod ftrace_binder;
mod ftrace_common;
mod ftrace_described;
mod ftrace_f2fs;
mod ftrace_funcgraph;
pub(crate) mod ftrace_generic;
mod ftrace_gpu_work;
mod ftrace_i2c;
#[cfg(test)]
mod ftrace_importers_tests;
mod ftrace_kernel_track;
mod ftrace_marks;
mod ftrace_memory;
mod ftrace_pixel;
mod ftrace_power;
mod ftrace_raw;
mod ftrace_registry;
mod ftrace_rule_table;
mod ftrace_rules;
mod ftrace_schema_newer;
mod ftrace_state;
mod ftrace_stats;
mod ftrace_thermal;
#[cfg(test)]
mod ftrace_trace_tests;
#[cfg(test)]
mod ftrace_tracks_tests;
mod ftrace_trusty;
mod generic_kernel;
mod gpu_counters;
mod gpu_info;
mod gpu_log_vulkan;
mod gpu_mem_freq;
mod gpu_render_stage;
mod graphics_frame_event;
mod heap_dump_facts;
mod heap_graph;
mod importer;
mod interned_strings;
mod interrupt_info;
mod irq;
mod journald;
mod kprobe;
mod memory_graph;
mod memory_tracker_snapshot;
mod module_symbols;
mod network;
mod perf_sample;
pub(crate) mod pigweed_detokenizer;
mod pixel_modem;
mod pkvm_hyp;
mod process_descriptor;
mod process_memory;
mod process_stats;
mod process_tree;
mod profile_packet;
mod profiling;
pub(crate) mod proto_text;
pub(crate) mod proto_to_args;
pub(crate) mod range_of_interest;
pub mod registry;
mod sched;
mod service;
mod smaps;
mod sparse_counters;
mod stack_sample;
mod statsd_atom;
mod streaming_profile;
mod suspend_resume;
mod sys_stats;
mod syscall_names;
mod syscalls;
mod system_info;
mod systrace;
mod trace_diagnostics;
mod track_event;
pub(crate) mod track_event_args;
mod track_event_callstack;
pub(crate) mod track_event_reflect;
pub(crate) mod translation_table;
mod ufs;
mod v4l2;
mod v8;
mod v8_isolates;
mod virtio_gpu;
mod virtio_video;
mod vulkan_memory_event;
pub(crate) mod winscope;

use crate::clock::ClockTracker;
use crate::descriptors::Descriptors;
use crate::packet_view::PacketView;
use crate::sequence_state::Generation;
use crate::storage::Storage;
use crate::tracker::process::ProcessTracker;
use crate::tracker::slices::SliceTracker;
use crate::tracker::track_resolution::{TrackResolution, Trackers};
use crate::tracker::track_scopes::{ScopeKey, TrackScopes};
use crate::tracker::tracks::TrackTracker;

pub(crate) use gpu_counters::{GPU_COUNTER_EVENT, untimed_gpu_counter_event};
pub use track_event::TrackEventState;

/// Everything the parsers share.
pub struct Parser {
    /// The tables.
    pub storage: Storage,
    /// Threads and processes.
    pub processes: ProcessTracker,
    /// Tracks.
    pub tracks: TrackTracker,
    /// Slices.
    pub slices: SliceTracker,
    /// TrackEvent's own state (flows, open states).
    pub track_event: TrackEventState,
    /// Which track a TrackEvent goes on (descriptor and legacy tracks), in
    /// the scope of the packet being parsed.
    /// (Boxed: moving to another scope swaps two pointers.)
    pub track_resolution: Box<TrackResolution>,
    /// The other scopes' track resolutions (each file's machines').
    pub track_scopes: TrackScopes,
    /// Clock conversion for timestamps inside packets.
    pub clocks: ClockTracker,
    /// The "Trace Triggers" track, once made.
    pub trigger_track: Option<u32>,
    /// Which kind of trigger set `trace_trigger`.
    pub trigger_kind: service::TriggerKind,
    /// The trace config's bytes (read at the end).
    pub trace_config: Option<Vec<u8>>,
    /// Whether an ftrace event was seen (a Linux system trace).
    pub saw_ftrace: bool,
    /// Concurrent tracing sessions' tracks and states.
    pub sessions: concurrent_sessions::Sessions,
    /// What sys stats keep between packets.
    pub sys_stats: sys_stats::SysStatsState,
    /// The machine of the packet being parsed (0: the host).
    pub machine: u32,
    /// Chrome metadata packets seen.
    pub chrome_metadata: chrome_metadata::ChromeMetadataState,
    /// Async slice tracks shared by cookie.
    pub async_tracks: crate::tracker::track_compressor::TrackCompressor,
    /// Scheduling state (per CPU and per thread).
    pub sched: crate::tracker::sched::SchedTracker,
    /// The profiling parsers' state.
    pub profiling: profiling::ProfilingState,
    /// Android's power data's descriptors (rails, consumers, entity states).
    pub power: android_power::PowerState,
    /// The generic kernel task states' open slices.
    pub generic_kernel: generic_kernel::GenericKernelState,
    /// Process counters reported by threads, their tracks found at the end.
    pub thread_counters: crate::tracker::thread_counters::ThreadCounters,
    /// Which thread owns each mm (`rss_stat`).
    pub mm_owners: process_memory::MmOwners,
    /// The network events' running totals and TCP streams.
    pub network: network::NetworkState,
    /// Android's network packet events, placed at the end.
    pub network_packets: android_network_packets::NetworkPacketsState,
    /// Where the kernel is in a suspend (`suspend_resume.rs`).
    pub suspend_resume: suspend_resume::SuspendResumeState,
    /// The IRQs `interrupt_info` listed so far.
    pub interrupt_mappings: interrupt_info::InterruptMappings,
    /// The android_fs reads open, by inode and offset.
    pub android_fs: android_fs::AndroidFsReads,
    /// CPU time per uid: incremental state, totals and pending values.
    pub cpu_per_uid: android_cpu_per_uid::CpuPerUidState,
    /// The package names and user ids already imported.
    pub packages: android_packages::PackagesState,
    /// Kernel wakelocks: incremental state and pending values.
    pub kernel_wakelocks: android_kernel_wakelocks::KernelWakelockState,
    /// The frame timeline's open cookies and pending flows.
    pub frame_timeline: frame_timeline::FrameTimelineState,
    /// The GPUs seen (their `ugpu` numbers).
    pub gpus: gpu_mem_freq::Gpus,
    /// The GPU counters' descriptors and last rows.
    pub gpu_counters: gpu_counters::GpuCounterState,
    /// The GPU render stages' queues, stages, tracks and debug names.
    pub gpu_render_stage: gpu_render_stage::RenderStageState,
    /// The graphics frame events' buffers and phases.
    pub graphics_frame: graphics_frame_event::GraphicsFrameState,
    /// The DRM events' scheduler rings and fence timelines.
    pub drm: drm::DrmState,
    /// The V4L2 buffers queued and not yet dequeued.
    pub v4l2: v4l2::V4l2State,
    /// The virtio GPU queues' unfenced command starts.
    pub virtio_gpu: virtio_gpu::VirtioGpuState,
    /// The virtio video command tracks.
    pub virtio_video: virtio_video::VirtioVideoState,
    /// Android's framework TrackEvents: the trace's enums, each process's row.
    pub framework_track_event: android_framework_track_event::FrameworkTrackEventState,
    /// The Winscope importers' state.
    pub winscope: winscope::WinscopeState,
    /// ETW's file operations waiting for their end.
    pub etw_file_io: etw::FileIoState,
    /// The translation tables read so far.
    pub translation: translation_table::TranslationTables,
    /// Binder transactions in flight and each thread's place in them.
    pub binder: binder::BinderTracker,
    /// The system calls' names and the writes in progress.
    pub syscalls: syscalls::SyscallState,
    /// Chrome's active-process lists and process descriptors.
    pub chrome_active_processes: chrome_active_processes::ActiveProcesses,
    /// The ftrace importers' state between events (`ftrace_state.rs`).
    pub ftrace_state: ftrace_state::FtraceState,
    /// The memory-infra dump being gathered (`memory_tracker_snapshot.rs`).
    pub memory_snapshots: memory_tracker_snapshot::MemorySnapshotState,
    /// The legacy Chrome event bundles' count (`chrome_events.rs`).
    pub chrome_events: chrome_events::ChromeEventsState,
    /// The Vulkan memory totals (`vulkan_memory_event.rs`).
    pub vulkan_memory: vulkan_memory_event::VulkanMemoryState,
    /// The pixel modem token database (`pixel_modem.rs`).
    pub pixel_modem: pixel_modem::PixelModemState,
    /// V8's isolates, scripts and functions (`v8.rs`).
    pub v8: v8::V8State,
}

impl Parser {
    /// The parsers over `storage` (what the loader wrote so far), before
    /// the first packet.
    pub fn new(mut storage: Storage) -> Self {
        let mut processes = ProcessTracker::new(&mut storage);
        // A proto trace maps pid 0 and tid 0 to the swapper, as upstream's
        // proto reader does for every trace.
        processes.set_pid_zero_is_idle(&mut storage);
        Parser {
            storage,
            processes,
            tracks: TrackTracker::default(),
            slices: SliceTracker::default(),
            track_event: TrackEventState::default(),
            track_resolution: Box::new(TrackResolution::new(Descriptors::default())),
            track_scopes: TrackScopes::default(),
            clocks: ClockTracker::default(),
            trigger_track: None,
            trigger_kind: service::TriggerKind::None,
            trace_config: None,
            saw_ftrace: false,
            sessions: concurrent_sessions::Sessions::default(),
            sys_stats: sys_stats::SysStatsState::default(),
            async_tracks: Default::default(),
            chrome_metadata: Default::default(),
            machine: 0,
            sched: Default::default(),
            profiling: profiling::ProfilingState::default(),
            power: android_power::PowerState::default(),
            generic_kernel: Default::default(),
            thread_counters: Default::default(),
            mm_owners: Default::default(),
            network: Default::default(),
            network_packets: Default::default(),
            suspend_resume: Default::default(),
            interrupt_mappings: Default::default(),
            android_fs: Default::default(),
            cpu_per_uid: android_cpu_per_uid::CpuPerUidState::default(),
            packages: android_packages::PackagesState::default(),
            kernel_wakelocks: android_kernel_wakelocks::KernelWakelockState::default(),
            frame_timeline: Default::default(),
            gpus: Default::default(),
            gpu_counters: Default::default(),
            gpu_render_stage: Default::default(),
            graphics_frame: Default::default(),
            drm: Default::default(),
            v4l2: Default::default(),
            virtio_gpu: Default::default(),
            virtio_video: Default::default(),
            framework_track_event: Default::default(),
            winscope: Default::default(),
            etw_file_io: Default::default(),
            translation: Default::default(),
            binder: Default::default(),
            syscalls: Default::default(),
            chrome_active_processes: Default::default(),
            ftrace_state: Default::default(),
            memory_snapshots: Default::default(),
            chrome_events: Default::default(),
            vulkan_memory: Default::default(),
            pixel_modem: Default::default(),
            v8: Default::default(),
        }
    }

    /// Parses one packet, in the order the sort gives, with its sequence's
    /// generation.
    pub fn parse_packet(&mut self, packet: &PacketView<'_>, generation: &Generation) {
        self.parse(packet, generation);
        self.storage.work.step(1);
    }

    /// When tracing started, as the service said (read while the trace is
    /// tokenized, so it is known before ftrace events are parsed).
    pub fn set_tracing_started(&mut self, ts: Option<i64>) {
        self.sched.tracing_started = ts;
    }

    /// The end of the trace, once every packet was parsed: what the
    /// parsers kept to the end goes into the tables.
    pub fn finish(mut self, generations: &[Generation]) -> Storage {
        memory_tracker_snapshot::finish(&mut self);
        profiling::finish(&mut self, generations);
        service::finish(&mut self);
        let machine = self.machine;
        self.thread_counters
            .resolve(&mut self.storage, &mut self.tracks, machine);
        android_cpu_per_uid::finish(&mut self);
        android_kernel_wakelocks::finish(&mut self);
        winscope::finish(&mut self);
        etw::finish(&mut self);
        // The args of slices still open, stored as upstream stores them
        // once the trace is read (before translation rewrites sets).
        self.slices.flush(&mut self.storage);
        translation_table::finish(&mut self);
        chrome_active_processes::finish(&mut self);
        syscalls::finish(&mut self);
        android_network_packets::finish(&mut self);
        let steps = self.slices.steps() + self.async_tracks.steps() + self.clocks.steps();
        self.storage.work.step(steps);
        // Every compressor pool's tracks get the pool's number.
        let pools = (self.track_scopes.all(&self.track_resolution))
            .flat_map(TrackResolution::compressors)
            .chain([&self.async_tracks])
            .flat_map(crate::tracker::track_compressor::TrackCompressor::pools);
        crate::tracker::track_groups::assign(&mut self.storage, pools);
        self.storage
    }

    /// Track resolution with the trackers it fills.
    pub fn track_resolver(&mut self) -> (&mut TrackResolution, Trackers<'_>) {
        (
            &mut self.track_resolution,
            Trackers {
                storage: &mut self.storage,
                processes: &mut self.processes,
                tracks: &mut self.tracks,
            },
        )
    }

    /// Makes what follows `machine`'s: its processes and tracks.
    pub(crate) fn set_machine(&mut self, machine: u32) {
        if machine != self.machine {
            self.machine = machine;
            self.processes.set_machine(machine);
            self.tracks.set_machine(machine);
        }
    }

    /// The descriptors of a scope, to register in.
    pub(crate) fn descriptors_of_mut(&mut self, key: ScopeKey) -> &mut Descriptors {
        self.track_scopes
            .descriptors_mut(&mut self.track_resolution, key)
    }

    fn parse(&mut self, packet: &PacketView<'_>, generation: &Generation) {
        self.set_machine(packet.machine);
        // Uuids mean what the packet's file and machine made them.
        let scope = ScopeKey {
            file: generation.file,
            machine: packet.machine,
        };
        self.track_scopes.select(&mut self.track_resolution, scope);
        // What the packet counts and sets is its machine's; what the
        // loader counts between packets stays the host's.
        self.storage.set_machine(packet.machine);
        self.parse_payload(packet, generation);
        self.storage.set_machine(0);
    }

    /// [`Parser::parse`]'s body: the packet handed to its importer.
    fn parse_payload(&mut self, packet: &PacketView<'_>, generation: &Generation) {
        if let Some(cpu) = packet.ftrace_cpu {
            match packet.inline_sched {
                Some(ev) => sched::inline(self, cpu, packet.ts, ev),
                None => ftrace::parse(self, cpu, packet.bytes, packet.ts, generation),
            }
            return;
        }
        if let Some(import) = registry::importer(packet.field) {
            import(
                self,
                &importer::Input {
                    bytes: packet.bytes,
                    ts: packet.ts,
                    packet,
                    generation,
                },
            );
        }
    }
}
