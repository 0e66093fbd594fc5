//! The rules `ftrace_rules.rs` applies, and the words they are written in
//! (a track, a name, an arg, a shape): for each `FtraceEvent` field number
//! covered, the shape upstream's ftrace parser gives the event (slice
//! begin or end, instant, state, counter), its track, name and args, with
//! the payload's field numbers as upstream's protos declare them.

/// Which track an event goes on.
#[derive(Debug, Clone, Copy)]
pub enum Track {
    /// The emitting thread's.
    Thread,
    /// The thread whose tid is this payload field.
    ThreadOf(u32),
    /// A per-CPU track: (classification, name prefix before the CPU
    /// number, the CPU: `None` the event's own, else a payload field).
    Cpu(&'static str, &'static str, Option<u32>),
    /// The one track of a classification: (classification, name).
    Global(&'static str, Option<&'static str>),
    /// A track per value of a payload field: (classification, name prefix
    /// before the value and `]`, the dimension's key, the field).
    Keyed(&'static str, &'static str, &'static str, u32),
}

/// A slice's name.
#[derive(Debug, Clone, Copy)]
pub enum Name {
    /// This text.
    Fixed(&'static str),
    /// The kernel symbol interned for the address in this field (or the
    /// address in hex).
    Symbol(u32),
    /// (prefix, field): the field's value in hex after the prefix.
    Hex(&'static str, u32),
    /// (prefix, field, suffix): the field's signed value between them.
    Int(&'static str, u32, &'static str),
}

/// One arg a rule takes from the payload.
#[derive(Debug, Clone, Copy)]
pub enum Arg {
    /// (key, field): a signed integer.
    Int(&'static str, u32),
    /// (key, field): an unsigned integer.
    Uint(&'static str, u32),
    /// (key, field): the field's kernel symbol (or its address in hex).
    Symbol(&'static str, u32),
    /// (key): the CPU the event was recorded on, signed.
    EventCpu(&'static str),
    /// (key): the CPU the event was recorded on, unsigned.
    EventCpuUint(&'static str),
    /// (key, field): a boolean.
    Bool(&'static str, u32),
}

/// What an event does.
#[derive(Debug, Clone, Copy)]
pub enum Shape {
    /// Opens a slice: (track, category, name, args).
    Begin(Track, Option<&'static str>, Name, &'static [Arg]),
    /// Closes the innermost slice open on the track, adding args.
    End(Track, &'static [Arg]),
    /// An instant (a zero-length slice): (track, name, args).
    Instant(Track, Name, &'static [Arg]),
    /// A state: closes the slice open on the track and opens one named.
    State(Track, Name),
    /// (flag field, track, name, args): a begin when the flag is set, an
    /// end when not.
    Toggle(u32, Track, Name, &'static [Arg]),
    /// A counter value (a payload field, signed) on a per-CPU or global
    /// track: (classification, name, the CPU field or none for a global
    /// track, the value's field).
    Counter(&'static str, &'static str, Option<u32>, u32),
}

/// One event's rule.
pub type Rule = (u32, Shape);

/// No args.
const NO_ARGS: &[Arg] = &[];

/// The args of a display frame's timeout or missing event.
const FRAME_ARGS: &[Arg] = &[
    Arg::Int("display_id", 1),
    Arg::Int("output_id", 2),
    Arg::Int("frames_pending", 3),
    Arg::Int("te_count", 4),
];

/// The Mali MCU's state track.
const MALI_MCU: Track = Track::Global("mali_mcu_state", None);

/// The rules, by `FtraceEvent` field number.
pub const RULES: &[Rule] = &[
    // scm_call_start {x0 2} / scm_call_end: secure monitor calls.
    (
        338,
        Shape::Begin(Track::Thread, None, Name::Hex("scm id=", 2), NO_ARGS),
    ),
    (339, Shape::End(Track::Thread, NO_ARGS)),
    // mm_vmscan_direct_reclaim_begin {order 1, may_writepage 2,
    // gfp_flags 3} / _end {nr_reclaimed 1}.
    (
        46,
        Shape::Begin(
            Track::Thread,
            None,
            Name::Fixed("mm_vmscan_direct_reclaim"),
            &[
                Arg::Int("direct_reclaim_order", 1),
                Arg::Int("direct_reclaim_may_writepage", 2),
                Arg::Uint("direct_reclaim_gfp_flags", 3),
            ],
        ),
    ),
    (
        47,
        Shape::End(
            Track::Thread,
            &[Arg::Uint("direct_reclaim_nr_reclaimed", 1)],
        ),
    ),
    // mm_vmscan_memcg_reclaim_begin / _end: the same for a memory cgroup.
    (
        607,
        Shape::Begin(
            Track::Thread,
            None,
            Name::Fixed("mm_vmscan_memcg_reclaim"),
            &[
                Arg::Int("memcg_reclaim_order", 1),
                Arg::Int("memcg_reclaim_may_writepage", 2),
                Arg::Uint("memcg_reclaim_gfp_flags", 3),
            ],
        ),
    ),
    (
        608,
        Shape::End(Track::Thread, &[Arg::Uint("memcg_reclaim_nr_reclaimed", 1)]),
    ),
    // mm_shrink_slab_start {shrink 8, total_scan 9, priority 11} /
    // _end {retval 2}.
    (
        443,
        Shape::Begin(
            Track::Thread,
            None,
            Name::Fixed("mm_vmscan_shrink_slab"),
            &[
                Arg::Symbol("shrink_name", 8),
                Arg::Uint("total_scan", 9),
                Arg::Int("priority", 11),
            ],
        ),
    ),
    (444, Shape::End(Track::Thread, &[Arg::Int("freed", 2)])),
    // workqueue_execute_start {function 2} / _end.
    (
        58,
        Shape::Begin(
            Track::Thread,
            Some("workqueue"),
            Name::Symbol(2),
            &[Arg::EventCpu("cpu")],
        ),
    ),
    (57, Shape::End(Track::Thread, NO_ARGS)),
    // hrtimer_expire_entry {function 3} / _exit, on the CPU's track.
    (
        553,
        Shape::Begin(
            Track::Cpu("cpu_hrtimer", "Hrtimer Cpu ", None),
            Some("hrtimer"),
            Name::Symbol(3),
            NO_ARGS,
        ),
    ),
    (
        554,
        Shape::End(Track::Cpu("cpu_hrtimer", "Hrtimer Cpu ", None), NO_ARGS),
    ),
    // cpuhp_enter / cpuhp_multi_enter {cpu 1, idx 3} / cpuhp_exit {cpu 1}:
    // a CPU's hotplug steps on that CPU's track.
    (
        345,
        Shape::Begin(
            Track::Cpu("cpu_hotplug", "CPU Hotplug ", Some(1)),
            Some("cpu"),
            Name::Int("cpuhp(", 3, ")"),
            &[Arg::EventCpuUint("action_cpu"), Arg::Int("cpuhp_idx", 3)],
        ),
    ),
    (
        344,
        Shape::Begin(
            Track::Cpu("cpu_hotplug", "CPU Hotplug ", Some(1)),
            Some("cpu"),
            Name::Int("cpuhp(", 3, ")"),
            &[Arg::EventCpuUint("action_cpu"), Arg::Int("cpuhp_idx", 3)],
        ),
    ),
    (
        343,
        Shape::End(Track::Cpu("cpu_hotplug", "CPU Hotplug ", Some(1)), NO_ARGS),
    ),
    // signal_generate {pid 4, sig 6}: on the receiving thread;
    // signal_deliver {sig 3}: on the emitting thread.
    (
        325,
        Shape::Instant(
            Track::ThreadOf(4),
            Name::Fixed("signal_generate"),
            &[Arg::Int("signal.sig", 6)],
        ),
    ),
    (
        324,
        Shape::Instant(
            Track::Thread,
            Name::Fixed("signal_deliver"),
            &[Arg::Int("signal.sig", 3)],
        ),
    ),
    // dcvsh_freq {cpu 1, freq 2}: a CPU's frequency throttle.
    (
        508,
        Shape::Counter("cpu_frequency_throttle", "cpufreq_throttle", Some(1), 2),
    ),
    // Mali CSF interrupts {info_val 3}, on the CPU's Mali IRQ track.
    (
        482,
        Shape::Begin(
            Track::Cpu("cpu_mali_irq", "Mali Irq Cpu ", None),
            None,
            Name::Fixed("mali_CSF_INTERRUPT"),
            &[Arg::Uint("info_val", 3)],
        ),
    ),
    (
        483,
        Shape::End(
            Track::Cpu("cpu_mali_irq", "Mali Irq Cpu ", None),
            &[Arg::Uint("info_val", 3)],
        ),
    ),
    // The Mali MCU's power states, one event per state.
    (
        510,
        Shape::State(MALI_MCU, Name::Fixed("HCTL_CORES_DOWN_SCALE_NOTIFY_PEND")),
    ),
    (
        511,
        Shape::State(MALI_MCU, Name::Fixed("HCTL_CORES_NOTIFY_PEND")),
    ),
    (
        512,
        Shape::State(MALI_MCU, Name::Fixed("HCTL_CORE_INACTIVE_PEND")),
    ),
    (
        513,
        Shape::State(MALI_MCU, Name::Fixed("HCTL_MCU_ON_RECHECK")),
    ),
    (
        514,
        Shape::State(MALI_MCU, Name::Fixed("HCTL_SHADERS_CORE_OFF_PEND")),
    ),
    (
        515,
        Shape::State(MALI_MCU, Name::Fixed("HCTL_SHADERS_PEND_OFF")),
    ),
    (
        516,
        Shape::State(MALI_MCU, Name::Fixed("HCTL_SHADERS_PEND_ON")),
    ),
    (
        517,
        Shape::State(MALI_MCU, Name::Fixed("HCTL_SHADERS_READY_OFF")),
    ),
    (518, Shape::State(MALI_MCU, Name::Fixed("IN_SLEEP"))),
    (519, Shape::State(MALI_MCU, Name::Fixed("OFF"))),
    (520, Shape::State(MALI_MCU, Name::Fixed("ON"))),
    (
        521,
        Shape::State(MALI_MCU, Name::Fixed("ON_CORE_ATTR_UPDATE_PEND")),
    ),
    (
        522,
        Shape::State(MALI_MCU, Name::Fixed("ON_GLB_REINIT_PEND")),
    ),
    (523, Shape::State(MALI_MCU, Name::Fixed("ON_HALT"))),
    (524, Shape::State(MALI_MCU, Name::Fixed("ON_HWCNT_DISABLE"))),
    (525, Shape::State(MALI_MCU, Name::Fixed("ON_HWCNT_ENABLE"))),
    (526, Shape::State(MALI_MCU, Name::Fixed("ON_PEND_HALT"))),
    (527, Shape::State(MALI_MCU, Name::Fixed("ON_PEND_SLEEP"))),
    (
        528,
        Shape::State(MALI_MCU, Name::Fixed("ON_SLEEP_INITIATE")),
    ),
    (529, Shape::State(MALI_MCU, Name::Fixed("PEND_OFF"))),
    (530, Shape::State(MALI_MCU, Name::Fixed("PEND_ON_RELOAD"))),
    (531, Shape::State(MALI_MCU, Name::Fixed("POWER_DOWN"))),
    (532, Shape::State(MALI_MCU, Name::Fixed("RESET_WAIT"))),
    // Pixel display events: instants (and the vblank IRQ's enabled span)
    // on a track per panel or display.
    (
        606,
        Shape::Instant(
            Track::Keyed(
                "disp_frame_start_timeout",
                "frame_start_timeout[",
                "panel_index",
                2,
            ),
            Name::Fixed("frame_start_timeout"),
            FRAME_ARGS,
        ),
    ),
    (
        605,
        Shape::Instant(
            Track::Keyed(
                "disp_frame_done_timeout",
                "frame_done_timeout[",
                "panel_index",
                2,
            ),
            Name::Fixed("frame_done_timeout"),
            &[
                Arg::Int("display_id", 1),
                Arg::Int("output_id", 2),
                Arg::Int("frames_pending", 3),
                Arg::Int("te_count", 4),
                Arg::Int("during_disable", 5),
            ],
        ),
    ),
    (
        610,
        Shape::Instant(
            Track::Keyed(
                "disp_frame_start_missing",
                "frame_start_missing[",
                "panel_index",
                2,
            ),
            Name::Fixed("frame_start_missing"),
            FRAME_ARGS,
        ),
    ),
    (
        609,
        Shape::Instant(
            Track::Keyed(
                "disp_frame_done_missing",
                "frame_done_missing[",
                "panel_index",
                2,
            ),
            Name::Fixed("frame_done_missing"),
            FRAME_ARGS,
        ),
    ),
    (
        550,
        Shape::Toggle(
            3,
            Track::Keyed("disp_vblank_irq_enable", "vblank_irq_en[", "display_id", 2),
            Name::Fixed("disp_vblank_irq_enable"),
            &[Arg::Int("display_id", 1), Arg::Int("output_id", 2)],
        ),
    ),
    (
        613,
        Shape::Instant(
            Track::Keyed("disp_dpu_line_underrun", "line_underrun[", "display_id", 1),
            Name::Fixed("disp_line_dpu_underrun"),
            &[Arg::Int("vsync_count", 3), Arg::Int("frames_pending", 2)],
        ),
    ),
    (
        549,
        Shape::Instant(
            Track::Keyed("disp_dpu_underrun", "underrun[", "display_id", 1),
            Name::Fixed("disp_dpu_underrun"),
            &[Arg::Int("vsync_count", 3), Arg::Int("pending_frame", 2)],
        ),
    ),
    (
        602,
        Shape::Instant(
            Track::Keyed("ddic_underrun", "ddic_underrun[", "panel_index", 1),
            Name::Fixed("ddic_underrun"),
            &[Arg::Int("collision_cnt", 2)],
        ),
    ),
    (
        611,
        Shape::Instant(
            Track::Keyed(
                "panel_settings_full",
                "panel_settings_full[",
                "panel_index",
                1,
            ),
            Name::Fixed("panel_settings_full"),
            &[
                Arg::Bool("hbm", 2),
                Arg::Int("irc", 3),
                Arg::Bool("h_pwm", 4),
                Arg::Bool("fi_auto", 5),
                Arg::Bool("fi_manual", 6),
                Arg::Bool("early_exit", 7),
                Arg::Int("min_rr", 8),
                Arg::Int("max_rr", 9),
                Arg::Int("te_freq", 10),
            ],
        ),
    ),
    (
        612,
        Shape::Instant(
            Track::Keyed(
                "panel_settings_lite",
                "panel_settings_lite[",
                "panel_index",
                1,
            ),
            Name::Fixed("panel_settings_lite"),
            &[
                Arg::Bool("vrr", 2),
                Arg::Int("min_rr", 3),
                Arg::Int("max_rr", 4),
                Arg::Int("te_freq", 5),
            ],
        ),
    ),
    // mali_gpu_power_state {to_state 3}.
    (
        548,
        Shape::Counter("mali_gpu_power_state", "mali_gpu_power_state", None, 3),
    ),
];
