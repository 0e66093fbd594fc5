//! The parsers: each sorted packet goes to the importer of its payload
//! (`registry.rs`), which fills the tables through the trackers.

mod art_process_metadata;
mod chrome_metadata;
mod concurrent_sessions;
mod cpu_freq_idle;
mod cpu_info;
mod debug_annotations;
mod deobfuscation;
mod descriptor;
mod display_state;
mod f2fs_iostat;
pub(crate) mod ftrace;
mod ftrace_raw;
mod ftrace_registry;
mod ftrace_stats;
mod heap_dump_facts;
mod importer;
mod module_symbols;
mod perf_sample;
mod process_stats;
mod process_tree;
mod profile_packet;
mod profiling;
pub mod registry;
mod sched;
mod service;
mod smaps;
mod stack_sample;
mod streaming_profile;
mod sys_stats;
mod system_info;
mod systrace;
pub mod task_state;
mod track_event;
mod track_event_callstack;

use crate::clock::ClockTracker;
use crate::packet_view::{Loaded, PacketSource, PacketView};
use crate::sequence_state::Generation;
use crate::storage::Storage;
use crate::tracker::process::ProcessTracker;
use crate::tracker::slices::SliceTracker;
use crate::tracker::track_resolution::{TrackResolution, Trackers};
use crate::tracker::tracks::TrackTracker;

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
    /// Which track a TrackEvent goes on (descriptor and legacy tracks).
    pub track_resolution: TrackResolution,
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
}

impl Parser {
    /// Parses the sorted packets into the storage.
    pub fn run(loaded: Loaded) -> Storage {
        let Loaded {
            packets,
            order,
            arena,
            track_events,
            track_event_times,
            inline_sched,
            generations,
            descriptors,
            mut storage,
            clocks,
            machines,
        } = loaded;
        storage.machines = machines
            .iter()
            .map(|&raw_id| crate::storage::rows::MachineRow {
                raw_id,
                ..Default::default()
            })
            .collect();
        let mut processes = ProcessTracker::new(&mut storage);
        // A proto trace maps pid 0 and tid 0 to the swapper, as upstream's
        // proto reader does for every trace.
        processes.set_pid_zero_is_idle(&mut storage);
        let mut p = Parser {
            storage,
            processes,
            tracks: TrackTracker::default(),
            slices: SliceTracker::default(),
            track_event: TrackEventState::default(),
            track_resolution: TrackResolution::new(descriptors),
            clocks,
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
        };
        let mut arena = arena;
        p.sched.tracing_started = sched::tracing_started(&packets, &arena);
        // Each packet is read once, in `order`: its bytes' memory goes back
        // as soon as the packets around them were read.
        arena.expect(
            order
                .iter()
                .filter_map(|&i| packets.get(i as usize))
                .map(|p| p.bytes),
        );
        let empty = Generation::default();
        for &i in &order {
            let Some(packet) = packets.get(i as usize) else {
                continue;
            };
            let generation = generations
                .get(packet.generation as usize)
                .unwrap_or(&empty);
            let source = PacketSource {
                arena: &arena,
                track_events: &track_events,
                track_event_times: &track_event_times,
                inline_sched: &inline_sched,
            };
            source.with_view(packet, |view| p.parse(view, generation));
            arena.release(packet.bytes);
            p.storage.work.step(1);
        }
        profiling::finish(&mut p, &generations);
        service::finish(&mut p);
        let steps = p.slices.steps() + p.async_tracks.steps() + p.clocks.steps();
        p.storage.work.step(steps);
        p.storage
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

    fn parse(&mut self, packet: &PacketView<'_>, generation: &Generation) {
        if packet.machine != self.machine {
            self.machine = packet.machine;
            self.processes.set_machine(packet.machine);
            self.tracks.set_machine(packet.machine);
        }
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
