//! Concurrent ftrace sessions on one tracefs instance, as a pure state
//! machine: sessions come in and go out, tracefs writes come out. The
//! instance records the union of the sessions' events; its prior state
//! (tracing on or off, the events enabled, the buffer size, the clock,
//! `buffer_percent`) is saved when the first session starts and restored
//! when the last one stops. No I/O here: the caller reads the instance's
//! state ([`InstanceState`], parsed from tracefs text by the functions
//! below) and applies the [`Write`]s; tests drive it without tracefs.
//!
//! As upstream: the first session clears the buffer, stops recording while
//! it sets the clock (`boot`, else `global`, else `local`; `mono_raw` when
//! asked and available) and the buffer size; later sessions only add
//! events (and lower `buffer_percent`); events of the `ftrace` group
//! (`print`, ...) have no enable file and are always recorded.

use std::collections::{BTreeMap, BTreeSet};

/// An event as `(group, name)`.
pub type EventId = (String, String);

/// The clocks upstream prefers, in order.
pub const PREFERRED_CLOCKS: &[&str] = &["boot", "global", "local"];

/// The per-CPU ring-buffer size of an instance.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BufferSize {
    /// Every CPU has this many KiB.
    Uniform(u32),
    /// The CPUs differ (`buffer_size_kb` reads `X`): each CPU's size, by
    /// CPU number.
    PerCpu(Vec<u32>),
}

/// What an instance is doing, read before the first session starts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InstanceState {
    /// `tracing_on`.
    pub tracing_on: bool,
    /// The enabled events (`set_event`).
    pub enabled_events: BTreeSet<EventId>,
    /// `buffer_size_kb`.
    pub buffer_size: BufferSize,
    /// The current `trace_clock`.
    pub clock: String,
    /// Every clock `trace_clock` offers.
    pub available_clocks: Vec<String>,
    /// `buffer_percent`, where the kernel has it.
    pub buffer_percent: Option<u32>,
}

/// One change to make to the instance.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Write {
    /// `tracing_on`.
    TracingOn(bool),
    /// Truncate `trace` (empties the ring buffers).
    ClearTrace,
    /// `trace_clock`.
    Clock(String),
    /// `buffer_size_kb` (every CPU).
    BufferSizeKb(u32),
    /// `per_cpu/cpuN/buffer_size_kb`.
    CpuBufferSizeKb {
        /// The CPU.
        cpu: usize,
        /// KiB.
        kb: u32,
    },
    /// `buffer_percent`.
    BufferPercent(u32),
    /// `events/raw_syscalls/sys_{enter,exit}/filter` (`0` clears it).
    SyscallFilter(String),
    /// `events/G/N/enable`.
    Event {
        /// The event.
        event: EventId,
        /// `1` or `0`.
        enable: bool,
    },
}

/// What one session asks of the instance.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SessionWants {
    /// The events to record.
    pub events: BTreeSet<EventId>,
    /// The per-CPU buffer size (used when this session is the first).
    pub buffer_size_kb: u32,
    /// `drain_buffer_percent`.
    pub buffer_percent: Option<u32>,
    /// `use_monotonic_raw_clock`.
    pub mono_raw_clock: bool,
    /// `drain_period_ms`.
    pub drain_period_ms: u32,
    /// `preserve_ftrace_buffer` (used when this session is the first):
    /// nothing that clears the ring buffer is written (no clear, no clock
    /// or size change), and events already on stay on.
    pub preserve_buffer: bool,
    /// `syscall_events`: the syscall ids its `raw_syscalls` events are
    /// for (`None`: all of them).
    pub syscalls: Option<BTreeSet<u32>>,
}

/// A session call that does not fit the machine's state.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SessionError {
    /// `start` with an id already started.
    #[error("session {0} already started")]
    AlreadyStarted(u64),
    /// `stop` with an id not started.
    #[error("session {0} not started")]
    NotStarted(u64),
}

/// The sessions on one instance and what was there before them.
#[derive(Debug, Default)]
pub struct Sessions {
    active: BTreeMap<u64, SessionWants>,
    saved: Option<InstanceState>,
    /// Events this machine has enabled (the union, minus `ftrace/*`).
    enabled: BTreeSet<EventId>,
    clock: Option<String>,
    buffer_percent: Option<u32>,
    /// The raw_syscalls filter written, if any.
    syscall_filter: Option<String>,
}

/// Whether an event has an `enable` file (the `ftrace` group's do not).
fn has_enable(e: &EventId) -> bool {
    e.0 != "ftrace"
}

impl Sessions {
    /// No sessions yet.
    pub fn new() -> Self {
        Sessions::default()
    }

    /// Whether no session is active.
    pub fn is_idle(&self) -> bool {
        self.active.is_empty()
    }

    /// The union of the active sessions' events.
    pub fn union(&self) -> BTreeSet<EventId> {
        self.active
            .values()
            .flat_map(|w| w.events.iter().cloned())
            .collect()
    }

    /// The clock the instance records with, while sessions are active.
    pub fn clock(&self) -> Option<&str> {
        self.clock.as_deref()
    }

    /// The drain period: the shortest the active sessions ask for.
    pub fn drain_period_ms(&self) -> Option<u32> {
        self.active.values().map(|w| w.drain_period_ms).min()
    }

    /// The state saved when the first session started.
    pub fn saved(&self) -> Option<&InstanceState> {
        self.saved.as_ref()
    }

    fn wanted_percent(&self) -> Option<u32> {
        self.active.values().filter_map(|w| w.buffer_percent).min()
    }

    /// Event writes that take the enabled set to the current union.
    fn sync_events(&mut self, out: &mut Vec<Write>) {
        let want: BTreeSet<EventId> = self.union().into_iter().filter(has_enable).collect();
        for e in self.enabled.difference(&want) {
            out.push(Write::Event {
                event: e.clone(),
                enable: false,
            });
        }
        for e in want.difference(&self.enabled) {
            out.push(Write::Event {
                event: e.clone(),
                enable: true,
            });
        }
        self.enabled = want;
    }

    /// The raw_syscalls filter the sessions that record raw_syscalls
    /// want: the union of their syscalls, or none if one wants all.
    fn sync_syscalls(&mut self, out: &mut Vec<Write>) {
        let recording = |w: &SessionWants| w.events.iter().any(|e| e.0 == "raw_syscalls");
        let wishes: Vec<Option<&BTreeSet<u32>>> = self
            .active
            .values()
            .filter(|w| recording(w))
            .map(|w| w.syscalls.as_ref())
            .collect();
        if wishes.is_empty() && self.syscall_filter.is_none() {
            return;
        }
        let text = super::syscalls::filter_text(super::syscalls::union(wishes).as_ref());
        if self.syscall_filter.as_deref() != Some(text.as_str()) {
            // Nothing written before and nothing to filter: leave it.
            if !(self.syscall_filter.is_none() && text == "0") {
                out.push(Write::SyscallFilter(text.clone()));
                self.syscall_filter = Some(text);
            }
        }
    }

    fn sync_percent(&mut self, out: &mut Vec<Write>) {
        let want = self.wanted_percent();
        if let Some(p) = want {
            if self.buffer_percent != Some(p) {
                out.push(Write::BufferPercent(p));
                self.buffer_percent = Some(p);
            }
        }
    }

    /// Session `id` starts; `current` is the instance as it is now (only
    /// read when this is the first session). Returns the writes to apply,
    /// in order.
    pub fn start(
        &mut self,
        id: u64,
        wants: SessionWants,
        current: &InstanceState,
    ) -> Result<Vec<Write>, SessionError> {
        if self.active.contains_key(&id) {
            return Err(SessionError::AlreadyStarted(id));
        }
        let mut out = Vec::new();
        if self.active.is_empty() && wants.preserve_buffer {
            // What the ring buffer holds stays: the clock, the size and
            // `tracing_on` as they are, no clear, and events someone else
            // enabled stay on (the last stop puts the rest back).
            self.saved = Some(current.clone());
            self.buffer_percent = current.buffer_percent;
            self.enabled = current.enabled_events.clone();
            self.active.insert(id, wants);
            self.clock = Some(current.clock.clone());
            let mut events = Vec::new();
            self.sync_events(&mut events);
            self.sync_percent(&mut out);
            self.sync_syscalls(&mut out);
            out.extend(
                events
                    .into_iter()
                    .filter(|w| matches!(w, Write::Event { enable: true, .. })),
            );
            out.push(Write::TracingOn(true));
        } else if self.active.is_empty() {
            let first = wants.clone();
            self.saved = Some(current.clone());
            self.buffer_percent = current.buffer_percent;
            out.push(Write::TracingOn(false));
            // Nothing of what was enabled stays on unless a session asks.
            self.enabled = current.enabled_events.clone();
            self.active.insert(id, wants);
            let mut events = Vec::new();
            self.sync_events(&mut events);
            let (disable, enable): (Vec<Write>, Vec<Write>) = events
                .into_iter()
                .partition(|w| matches!(w, Write::Event { enable: false, .. }));
            out.extend(disable);
            out.push(Write::ClearTrace);
            let has = |c: &str| current.available_clocks.iter().any(|a| a == c);
            let clock = if first.mono_raw_clock && has("mono_raw") {
                Some("mono_raw")
            } else {
                PREFERRED_CLOCKS.iter().copied().find(|c| has(c))
            };
            match clock {
                Some(c) if c != current.clock => {
                    out.push(Write::Clock(c.to_owned()));
                    self.clock = Some(c.to_owned());
                }
                _ => self.clock = Some(current.clock.clone()),
            }
            if current.buffer_size != BufferSize::Uniform(first.buffer_size_kb) {
                out.push(Write::BufferSizeKb(first.buffer_size_kb));
            }
            self.sync_percent(&mut out);
            self.sync_syscalls(&mut out);
            out.extend(enable);
            out.push(Write::TracingOn(true));
        } else {
            self.active.insert(id, wants);
            // The filter first: newly enabled events record only what
            // some session wants.
            self.sync_syscalls(&mut out);
            self.sync_events(&mut out);
            self.sync_percent(&mut out);
        }
        Ok(out)
    }

    /// Session `id` stops. The last one restores the saved state.
    pub fn stop(&mut self, id: u64) -> Result<Vec<Write>, SessionError> {
        if self.active.remove(&id).is_none() {
            return Err(SessionError::NotStarted(id));
        }
        let mut out = Vec::new();
        if !self.active.is_empty() {
            self.sync_events(&mut out);
            self.sync_percent(&mut out);
            self.sync_syscalls(&mut out);
            return Ok(out);
        }
        let Some(saved) = self.saved.take() else {
            return Ok(out);
        };
        out.push(Write::TracingOn(false));
        for e in std::mem::take(&mut self.enabled) {
            out.push(Write::Event {
                event: e,
                enable: false,
            });
        }
        out.push(Write::ClearTrace);
        // A filter these sessions wrote is cleared (upstream too).
        if self.syscall_filter.take().is_some_and(|f| f != "0") {
            out.push(Write::SyscallFilter("0".to_owned()));
        }
        if let Some(clock) = self.clock.take() {
            if clock != saved.clock {
                out.push(Write::Clock(saved.clock.clone()));
            }
        }
        match &saved.buffer_size {
            BufferSize::Uniform(kb) => out.push(Write::BufferSizeKb(*kb)),
            BufferSize::PerCpu(sizes) => {
                for (cpu, kb) in sizes.iter().enumerate() {
                    out.push(Write::CpuBufferSizeKb { cpu, kb: *kb });
                }
            }
        }
        if let (Some(now), Some(before)) = (self.buffer_percent.take(), saved.buffer_percent) {
            if now != before {
                out.push(Write::BufferPercent(before));
            }
        }
        for e in saved.enabled_events.iter().filter(|e| has_enable(e)) {
            out.push(Write::Event {
                event: e.clone(),
                enable: true,
            });
        }
        out.push(Write::TracingOn(saved.tracing_on));
        Ok(out)
    }
}

/// A tracefs text that does not have its expected shape.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{file}: unexpected contents {text:?}")]
pub struct ParseError {
    /// Which file.
    pub file: &'static str,
    /// The text (cut to 80 bytes).
    pub text: String,
}

fn bad(file: &'static str, text: &str) -> ParseError {
    let mut end = text.len().min(80);
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    ParseError {
        file,
        text: text[..end].to_owned(),
    }
}

/// `tracing_on` (`0` or `1`).
pub fn parse_bool(file: &'static str, text: &str) -> Result<bool, ParseError> {
    match text.trim() {
        "0" => Ok(false),
        "1" => Ok(true),
        _ => Err(bad(file, text)),
    }
}

/// A number file (`buffer_percent`, `buffer_subbuf_size_kb`, a CPU's
/// `buffer_size_kb`).
pub fn parse_u32(file: &'static str, text: &str) -> Result<u32, ParseError> {
    text.trim().parse().map_err(|_| bad(file, text))
}

/// `buffer_size_kb`: `N`, `N (expanded: M)` (a buffer not yet allocated
/// beyond its minimum; `M` is what it will be, and what is restored) or
/// `X` (CPUs differ: `None`, read each CPU's file).
pub fn parse_buffer_size_kb(text: &str) -> Result<Option<u32>, ParseError> {
    const FILE: &str = "buffer_size_kb";
    let t = text.trim();
    if t == "X" {
        return Ok(None);
    }
    if let Some((_, rest)) = t.split_once("(expanded:") {
        let m = rest.trim().trim_end_matches(')').trim();
        return m.parse().map(Some).map_err(|_| bad(FILE, text));
    }
    t.parse().map(Some).map_err(|_| bad(FILE, text))
}

/// `trace_clock`: the clocks offered and the current one (in brackets).
pub fn parse_trace_clock(text: &str) -> Result<(String, Vec<String>), ParseError> {
    let mut current = None;
    let mut all = Vec::new();
    for word in text.split_whitespace() {
        let name = match word.strip_prefix('[').and_then(|w| w.strip_suffix(']')) {
            Some(n) => {
                current = Some(n.to_owned());
                n
            }
            None => word,
        };
        all.push(name.to_owned());
    }
    match current {
        Some(c) => Ok((c, all)),
        None => Err(bad("trace_clock", text)),
    }
}

/// `set_event`: one `group:name` per enabled event.
pub fn parse_set_event(text: &str) -> Result<BTreeSet<EventId>, ParseError> {
    text.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .map(|l| {
            l.split_once(':')
                .filter(|(g, n)| !g.is_empty() && !n.is_empty())
                .map(|(g, n)| (g.to_owned(), n.to_owned()))
                .ok_or_else(|| bad("set_event", l))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ev(g: &str, n: &str) -> EventId {
        (g.to_owned(), n.to_owned())
    }

    fn state() -> InstanceState {
        InstanceState {
            tracing_on: true,
            enabled_events: [ev("irq", "irq_handler_entry"), ev("sched", "sched_switch")]
                .into_iter()
                .collect(),
            buffer_size: BufferSize::Uniform(1408),
            clock: "local".into(),
            available_clocks: ["local", "global", "boot", "mono_raw"]
                .map(String::from)
                .to_vec(),
            buffer_percent: Some(50),
        }
    }

    fn wants(events: &[(&str, &str)], kb: u32) -> SessionWants {
        SessionWants {
            events: events.iter().map(|(g, n)| ev(g, n)).collect(),
            buffer_size_kb: kb,
            buffer_percent: None,
            mono_raw_clock: false,
            drain_period_ms: 100,
            preserve_buffer: false,
            syscalls: None,
        }
    }

    fn on(g: &str, n: &str) -> Write {
        Write::Event {
            event: ev(g, n),
            enable: true,
        }
    }

    fn off(g: &str, n: &str) -> Write {
        Write::Event {
            event: ev(g, n),
            enable: false,
        }
    }

    /// Applies writes to a simulated instance.
    fn apply(s: &mut InstanceState, writes: &[Write]) {
        for w in writes {
            match w {
                Write::TracingOn(b) => s.tracing_on = *b,
                Write::ClearTrace => {}
                Write::Clock(c) => s.clock = c.clone(),
                Write::BufferSizeKb(kb) => s.buffer_size = BufferSize::Uniform(*kb),
                Write::CpuBufferSizeKb { cpu, kb } => {
                    let mut v = match &s.buffer_size {
                        BufferSize::PerCpu(v) => v.clone(),
                        BufferSize::Uniform(u) => vec![*u; 2],
                    };
                    v[*cpu] = *kb;
                    s.buffer_size = if v.iter().all(|x| *x == v[0]) {
                        BufferSize::Uniform(v[0])
                    } else {
                        BufferSize::PerCpu(v)
                    };
                }
                Write::BufferPercent(p) => s.buffer_percent = Some(*p),
                Write::SyscallFilter(_) => {}
                Write::Event { event, enable } => {
                    assert_ne!(event.0, "ftrace", "ftrace events have no enable file");
                    if *enable {
                        s.enabled_events.insert(event.clone());
                    } else {
                        s.enabled_events.remove(event);
                    }
                }
            }
        }
    }

    #[test]
    fn first_session_sets_up_and_last_restores() {
        let before = state();
        let mut inst = before.clone();
        let mut s = Sessions::new();
        let w = s
            .start(
                1,
                wants(&[("sched", "sched_switch"), ("ftrace", "print")], 4096),
                &inst,
            )
            .expect("start");
        assert_eq!(
            w,
            vec![
                Write::TracingOn(false),
                off("irq", "irq_handler_entry"),
                Write::ClearTrace,
                Write::Clock("boot".into()),
                Write::BufferSizeKb(4096),
                Write::TracingOn(true),
            ]
        );
        apply(&mut inst, &w);
        assert_eq!(s.clock(), Some("boot"));
        let w = s.stop(1).expect("stop");
        apply(&mut inst, &w);
        assert_eq!(inst, before, "restored exactly");
        assert!(s.is_idle());
        assert!(s.saved().is_none());
    }

    /// `preserve_ftrace_buffer`: nothing that clears the ring buffer
    /// (tracing off, a clear, the clock, the size), events already on stay
    /// on; the last stop restores the rest.
    #[test]
    fn a_first_session_that_preserves_the_buffer_clears_nothing() {
        let before = state();
        let mut inst = before.clone();
        let mut s = Sessions::new();
        let mut w1 = wants(&[("sched", "sched_waking"), ("ftrace", "print")], 4096);
        w1.preserve_buffer = true;
        let w = s.start(1, w1, &inst).expect("start");
        assert_eq!(w, vec![on("sched", "sched_waking"), Write::TracingOn(true)]);
        apply(&mut inst, &w);
        assert_eq!(s.clock(), Some("local"), "the clock it had");
        assert!(
            inst.enabled_events
                .contains(&ev("irq", "irq_handler_entry"))
        );
        let w = s.stop(1).expect("stop");
        apply(&mut inst, &w);
        assert_eq!(inst, before, "restored exactly");
    }

    /// `syscall_events`: the kernel filter is the union of the sessions
    /// that record raw_syscalls (none if one wants every syscall), set
    /// before their events are enabled and cleared by the last stop.
    #[test]
    fn the_syscall_filter_is_the_union_of_the_sessions() {
        let inst = state();
        let mut s = Sessions::new();
        let raw = [("raw_syscalls", "sys_enter"), ("raw_syscalls", "sys_exit")];
        let mut a = wants(&raw, 1024);
        a.syscalls = Some([0, 1].into());
        let w = s.start(1, a, &inst).expect("start");
        let filter = w
            .iter()
            .position(|w| *w == Write::SyscallFilter("id == 0 || id == 1".into()))
            .expect("filter written");
        let enable = w
            .iter()
            .position(|w| *w == on("raw_syscalls", "sys_enter"))
            .expect("enabled");
        assert!(filter < enable, "{w:?}");
        let mut b = wants(&raw, 1024);
        b.syscalls = Some([1, 39].into());
        let w = s.start(2, b, &inst).expect("start");
        assert_eq!(
            w,
            vec![Write::SyscallFilter(
                "id == 0 || id == 1 || id == 39".into()
            )]
        );
        // A session of other events changes nothing; one of every
        // syscall clears the filter.
        let w = s
            .start(3, wants(&[("sched", "sched_switch")], 1024), &inst)
            .expect("start");
        assert!(
            !w.iter().any(|w| matches!(w, Write::SyscallFilter(_))),
            "{w:?}"
        );
        let w = s.start(4, wants(&raw, 1024), &inst).expect("start");
        assert_eq!(w, vec![Write::SyscallFilter("0".into())]);
        let w = s.stop(4).expect("stop");
        assert_eq!(
            w,
            vec![Write::SyscallFilter(
                "id == 0 || id == 1 || id == 39".into()
            )]
        );
        s.stop(1).expect("stop");
        s.stop(3).expect("stop");
        let w = s.stop(2).expect("stop");
        assert!(w.contains(&Write::SyscallFilter("0".into())), "{w:?}");
    }

    #[test]
    fn concurrent_sessions_get_the_union() {
        let before = state();
        let mut inst = before.clone();
        let mut s = Sessions::new();
        let mut a = wants(&[("sched", "sched_waking")], 2048);
        a.buffer_percent = Some(40);
        a.drain_period_ms = 250;
        let w = s.start(1, a, &inst.clone()).expect("a");
        apply(&mut inst, &w);
        assert_eq!(inst.buffer_percent, Some(40));
        let mut b = wants(&[("sched", "sched_waking"), ("power", "cpu_idle")], 8192);
        b.buffer_percent = Some(20);
        b.drain_period_ms = 50;
        let w = s.start(2, b, &inst.clone()).expect("b");
        // Only the new event and the lower percent; the buffer stays.
        assert_eq!(w, vec![on("power", "cpu_idle"), Write::BufferPercent(20)]);
        apply(&mut inst, &w);
        assert_eq!(s.drain_period_ms(), Some(50));
        assert_eq!(
            inst.enabled_events,
            [ev("power", "cpu_idle"), ev("sched", "sched_waking")]
                .into_iter()
                .collect()
        );
        // A stopping: B's events stay, A's percent goes with it.
        let w = s.stop(1).expect("stop a");
        assert_eq!(w, vec![]);
        let w2 = s.stop(2).expect("stop b");
        apply(&mut inst, &w2);
        assert_eq!(inst, before);
        assert_eq!(s.stop(2), Err(SessionError::NotStarted(2)));
    }

    #[test]
    fn stopping_one_session_drops_only_its_own_events() {
        let mut inst = state();
        let mut s = Sessions::new();
        let w = s
            .start(1, wants(&[("a", "x"), ("b", "y")], 64), &inst.clone())
            .expect("1");
        apply(&mut inst, &w);
        let w = s
            .start(2, wants(&[("b", "y"), ("c", "z")], 64), &inst.clone())
            .expect("2");
        apply(&mut inst, &w);
        assert_eq!(
            s.start(2, wants(&[], 64), &inst.clone()),
            Err(SessionError::AlreadyStarted(2))
        );
        let w = s.stop(1).expect("stop 1");
        assert_eq!(w, vec![off("a", "x")]);
        apply(&mut inst, &w);
        assert!(inst.tracing_on);
        assert_eq!(
            inst.enabled_events,
            [ev("b", "y"), ev("c", "z")].into_iter().collect()
        );
    }

    #[test]
    fn clock_choice_and_per_cpu_restore() {
        let mut before = state();
        before.available_clocks = vec!["local".into(), "global".into()];
        before.buffer_size = BufferSize::PerCpu(vec![100, 200]);
        before.tracing_on = false;
        before.buffer_percent = None;
        let mut inst = before.clone();
        let mut s = Sessions::new();
        let w = s.start(7, wants(&[], 512), &inst.clone()).expect("start");
        assert!(w.contains(&Write::Clock("global".into())), "{w:?}");
        apply(&mut inst, &w);
        apply(&mut inst, &s.stop(7).expect("stop"));
        assert_eq!(inst, before);

        let mut m = state();
        m.clock = "boot".into();
        let mut s = Sessions::new();
        let mut raw = wants(&[], 1408);
        raw.mono_raw_clock = true;
        let w = s.start(1, raw, &m).expect("start");
        assert!(w.contains(&Write::Clock("mono_raw".into())), "{w:?}");
        assert!(
            !w.iter().any(|w| matches!(w, Write::BufferSizeKb(_))),
            "{w:?}"
        );
        let mut s = Sessions::new();
        let w = s.start(1, wants(&[], 1408), &m).expect("start");
        assert!(
            !w.iter().any(|w| matches!(w, Write::Clock(_))),
            "boot kept: {w:?}"
        );
    }

    #[test]
    fn parses_tracefs_texts() {
        assert_eq!(parse_bool("tracing_on", "1\n"), Ok(true));
        assert!(parse_bool("tracing_on", "2\n").is_err());
        assert!(parse_bool("tracing_on", "").is_err());
        assert_eq!(parse_buffer_size_kb("1408\n"), Ok(Some(1408)));
        assert_eq!(parse_buffer_size_kb("7 (expanded: 1408)\n"), Ok(Some(1408)));
        assert_eq!(parse_buffer_size_kb("X\n"), Ok(None));
        assert!(parse_buffer_size_kb("7 (expanded: ").is_err());
        assert!(parse_buffer_size_kb("").is_err());
        let (cur, all) = parse_trace_clock(
            "local global counter uptime perf mono mono_raw [boot] x86-tsc tai\n",
        )
        .expect("clock");
        assert_eq!(cur, "boot");
        assert_eq!(all.len(), 10);
        assert!(all.contains(&"boot".to_owned()));
        assert!(
            parse_trace_clock("local global").is_err(),
            "no current clock"
        );
        assert_eq!(
            parse_set_event("sched:sched_switch\nirq:irq_handler_entry\n"),
            Ok(
                [ev("irq", "irq_handler_entry"), ev("sched", "sched_switch")]
                    .into_iter()
                    .collect()
            )
        );
        assert_eq!(parse_set_event(""), Ok(BTreeSet::new()));
        assert!(parse_set_event("sched\n").is_err());
        assert!(parse_u32("buffer_percent", "50\n").is_ok());
        let long = "é".repeat(100);
        assert!(parse_u32("x", &long).is_err(), "cut on a char boundary");
    }
}
