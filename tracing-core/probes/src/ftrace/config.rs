//! What an `FtraceConfig` asks of the ftrace data source, decided once and
//! without tracefs: every upstream field is implemented, refused by name,
//! or kept (see [`FTRACE_CONFIG_FIELDS`], checked against the schema this
//! crate is built from), and the config is read into [`FtraceOptions`].
//! Turning the requested names into the concrete set of tracepoints needs
//! to know which events the kernel has; [`FtraceOptions::resolve`] asks an
//! [`EventCatalog`] (tracefs, or a fake in tests).
//!
//! The behaviour follows Perfetto's `traced_probes` on Linux (facts read
//! from its ftrace config muxer and predefined tracepoints): atrace
//! categories add their kernel tracepoints and `ftrace/print` (the atrace
//! binary itself exists only on Android, so nothing else happens);
//! `group/*` is every event of the group; a bare name is looked up in the
//! kernel's events; the per-CPU buffer defaults to 2 MiB, or 8 MiB on
//! machines with at least 7 GiB of RAM; `drain_period_ms` is 100 ms unless
//! it is within 1 ms ..= 60 s; compact sched is on unless disabled.

use std::collections::BTreeSet;

use zerotrace_protos::protos::FtraceConfigDecoder;
use zerotrace_protos::upstream_tables::FTRACE_CONFIG_SCHEMA;

pub use super::atrace::{atrace_category_names, category_tracepoints};

/// How the ftrace data source treats an `FtraceConfig` field.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Handling {
    /// Done as upstream does it on Linux.
    Implemented,
    /// Refused with an error naming the field, when set to a non-default
    /// value.
    Refused,
    /// Accepted and not acted on, as upstream on Linux does not act on it
    /// either (Android-only) or it has no effect on what is recorded.
    Kept,
}

/// Every `FtraceConfig` field of upstream v51: (number, name, handling).
/// A test checks it against the schema, so no field is silently ignored.
pub const FTRACE_CONFIG_FIELDS: &[(u32, &str, Handling)] = &[
    (1, "ftrace_events", Handling::Implemented),
    // Creating kprobes changes kernel state beyond the instance.
    (30, "kprobe_events", Handling::Refused),
    (2, "atrace_categories", Handling::Implemented),
    // Passed to Android's atrace binary only (upstream logs that atrace is
    // Android-only on Linux and records nothing for them).
    (3, "atrace_apps", Handling::Kept),
    (28, "atrace_categories_prefer_sdk", Handling::Kept),
    (10, "buffer_size_kb", Handling::Implemented),
    (11, "drain_period_ms", Handling::Implemented),
    (29, "drain_buffer_percent", Handling::Implemented),
    (12, "compact_sched", Handling::Implemented),
    (22, "print_filter", Handling::Implemented),
    (13, "symbolize_ksyms", Handling::Implemented),
    // How long the symbol table stays in memory; ours lives for the session.
    (17, "ksyms_mem_policy", Handling::Kept),
    // Deprecated upstream, no effect.
    (
        14,
        "initialize_ksyms_synchronously_for_testing",
        Handling::Kept,
    ),
    // With the kernel's synthetic rss_stat_throttled event where it exists;
    // elsewhere kmem/rss_stat unthrottled, and ftrace_stats says so.
    (15, "throttle_rss_stat", Handling::Implemented),
    (32, "denser_generic_event_encoding", Handling::Refused),
    (16, "disable_generic_events", Handling::Implemented),
    // Needs the architecture's syscall name table for the kernel filter.
    (18, "syscall_events", Handling::Implemented),
    (19, "enable_function_graph", Handling::Refused),
    (20, "function_filters", Handling::Refused),
    (21, "function_graph_roots", Handling::Refused),
    (23, "preserve_ftrace_buffer", Handling::Implemented),
    (24, "use_monotonic_raw_clock", Handling::Implemented),
    (25, "instance_name", Handling::Implemented),
    (27, "buffer_size_lower_bound", Handling::Implemented),
    (31, "debug_ftrace_abi", Handling::Refused),
    (33, "function_graph_max_depth", Handling::Refused),
];

/// The per-CPU buffer upstream asks for when the config does not say, on
/// machines with less than [`HIGH_RAM_BYTES`] of RAM.
pub const DEFAULT_LOW_RAM_BUFFER_KB: u32 = 2 * 1024;
/// The per-CPU buffer upstream asks for when the config does not say, on
/// machines with at least [`HIGH_RAM_BYTES`] of RAM.
pub const DEFAULT_HIGH_RAM_BUFFER_KB: u32 = 8 * 1024;
/// Upstream's RAM threshold for the larger default (meant to catch 8 GiB
/// machines, which report a little less).
pub const HIGH_RAM_BYTES: u64 = 7 << 30;
/// The largest per-CPU buffer granted (v51 upstream has no cap of its own;
/// earlier releases capped at this). A consumer cannot make the kernel pin
/// more than this per CPU.
pub const MAX_BUFFER_KB: u32 = 64 * 1024;
/// `drain_period_ms` when unset or out of range.
pub const DEFAULT_DRAIN_PERIOD_MS: u32 = 100;
/// The shortest `drain_period_ms` accepted.
pub const MIN_DRAIN_PERIOD_MS: u32 = 1;
/// The longest `drain_period_ms` accepted.
pub const MAX_DRAIN_PERIOD_MS: u32 = 60_000;

/// Why an `FtraceConfig` is not accepted.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FtraceConfigError {
    /// The bytes are not an `FtraceConfig`.
    #[error("FtraceConfig does not decode: {0}")]
    Decode(protozero::DecodeError),
    /// An `ftrace_events` entry is not a valid event name (printable ASCII,
    /// at most one `/` neither first nor last, `*` only at the end).
    #[error("bad ftrace event name {0:?}")]
    BadEventName(String),
    /// An atrace category or app name is not printable ASCII.
    #[error("bad atrace name {0:?}")]
    BadAtraceName(String),
    /// `print_filter` does not decode.
    #[error("FtraceConfig.print_filter does not decode")]
    BadPrintFilter,
    /// `instance_name` is not a plain directory name.
    #[error("bad instance_name {0:?}")]
    BadInstanceName(String),
    /// Atrace options with a secondary instance (upstream refuses them
    /// there: they change global state).
    #[error("atrace_categories and atrace_apps are not supported with instance_name")]
    AtraceInSecondaryInstance,
}

/// One `ftrace_events` entry.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub enum EventSpec {
    /// `group/name`.
    Event {
        /// Group (`sched`).
        group: String,
        /// Name (`sched_switch`).
        name: String,
    },
    /// `group/*`: every event of the group.
    Group(String),
    /// A name without a group, looked up among the kernel's events.
    Bare(String),
}

impl EventSpec {
    /// Parses one `ftrace_events` entry, validated as upstream does.
    pub fn parse(s: &str) -> Result<Self, FtraceConfigError> {
        let bad = || FtraceConfigError::BadEventName(s.to_owned());
        if s.is_empty() || !s.bytes().all(|b| (32..127).contains(&b)) {
            return Err(bad());
        }
        if s.find('*').is_some_and(|i| i + 1 != s.len()) {
            return Err(bad());
        }
        match s.split_once('/') {
            None => Ok(EventSpec::Bare(s.to_owned())),
            Some((g, n)) if g.is_empty() || n.is_empty() || n.contains('/') => Err(bad()),
            Some((g, "*")) => Ok(EventSpec::Group(g.to_owned())),
            Some((g, n)) => Ok(EventSpec::Event {
                group: g.to_owned(),
                name: n.to_owned(),
            }),
        }
    }
}

/// `linux.ftrace` options, read from an `FtraceConfig`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FtraceOptions {
    /// `ftrace_events`, parsed.
    pub events: Vec<EventSpec>,
    /// `atrace_categories`.
    pub atrace_categories: Vec<String>,
    /// `atrace_apps` (kept: nothing to do on Linux).
    pub atrace_apps: Vec<String>,
    /// `buffer_size_kb` as asked (0: unset).
    pub buffer_size_kb: u32,
    /// `buffer_size_lower_bound`: the default is a floor, not a fallback.
    pub buffer_size_lower_bound: bool,
    /// `drain_period_ms`, defaulted and checked.
    pub drain_period_ms: u32,
    /// Whether the config set `drain_period_ms` (in range): with
    /// `drain_buffer_percent` working, an unset period reads every second
    /// only, as upstream.
    pub drain_period_set: bool,
    /// `drain_buffer_percent` (`buffer_percent`), if set.
    pub drain_buffer_percent: Option<u32>,
    /// `compact_sched`: on unless the config disables it.
    pub compact_sched: bool,
    /// `symbolize_ksyms`.
    pub symbolize_ksyms: bool,
    /// `throttle_rss_stat`.
    pub throttle_rss_stat: bool,
    /// `disable_generic_events`.
    pub disable_generic_events: bool,
    /// `use_monotonic_raw_clock`.
    pub use_monotonic_raw_clock: bool,
    /// `preserve_ftrace_buffer`: what the ring buffer holds when the first
    /// session starts is kept and read into the trace.
    pub preserve_ftrace_buffer: bool,
    /// `print_filter`: which `ftrace/print` events this session keeps.
    pub print_filter: Option<super::print_filter::PrintFilter>,
    /// `syscall_events`: the syscalls (`sys_read`) `raw_syscalls` records.
    pub syscall_events: Vec<String>,
    /// `instance_name`: a secondary instance under `instances/`.
    pub instance_name: Option<String>,
    /// The fields set in the config that these probes refuse: the data
    /// source records without them, and [`refusal`] says so in the
    /// trace's `ftrace_stats` (`failed_ftrace_events`) and to `zerotrace
    /// record`.
    pub refused: Vec<&'static str>,
}

/// What the trace says of a refused `FtraceConfig` field (an entry of
/// `FtraceStats.failed_ftrace_events`, which Perfetto's importer shows as
/// an ftrace setup error).
pub fn refusal(field: &str) -> String {
    format!("FtraceConfig.{field}: not supported by these probes, recorded without it")
}

/// Whether a refused field is set to something other than its default.
fn refused_fields(c: &FtraceConfigDecoder<'_>) -> Vec<&'static str> {
    let asks = [
        ("kprobe_events", c.has_kprobe_events()),
        (
            "denser_generic_event_encoding",
            c.denser_generic_event_encoding() == Some(true),
        ),
        (
            "enable_function_graph",
            c.enable_function_graph() == Some(true),
        ),
        ("function_filters", c.has_function_filters()),
        ("function_graph_roots", c.has_function_graph_roots()),
        ("debug_ftrace_abi", c.debug_ftrace_abi() == Some(true)),
        (
            "function_graph_max_depth",
            c.function_graph_max_depth().unwrap_or(0) != 0,
        ),
    ];
    asks.into_iter()
        .filter(|(_, asked)| *asked)
        .map(|(name, _)| name)
        .collect()
}

fn printable(s: &str) -> bool {
    s.bytes().all(|b| (32..127).contains(&b))
}

fn strings<'a>(it: protozero::RepeatedStrs<'a>) -> Result<Vec<&'a str>, FtraceConfigError> {
    let mut it = it;
    let v: Vec<&str> = it.by_ref().collect();
    match it.error() {
        Some(e) => Err(FtraceConfigError::Decode(e)),
        None => Ok(v),
    }
}

impl FtraceOptions {
    /// Reads an `FtraceConfig`; refused fields (when set) and invalid names
    /// are errors.
    pub fn from_config(bytes: &[u8]) -> Result<Self, FtraceConfigError> {
        let c = FtraceConfigDecoder::new(bytes);
        if let Some(e) = c.decode_error() {
            return Err(FtraceConfigError::Decode(e));
        }
        // Refused fields do not stop the rest: the data source records
        // without them and says so where the user looks (`refused`).
        let refused = refused_fields(&c);
        let events = strings(c.ftrace_events())?
            .into_iter()
            .map(EventSpec::parse)
            .collect::<Result<Vec<_>, _>>()?;
        let names = |it| -> Result<Vec<String>, FtraceConfigError> {
            strings(it)?
                .into_iter()
                .map(|s| {
                    if printable(s) {
                        Ok(s.to_owned())
                    } else {
                        Err(FtraceConfigError::BadAtraceName(s.to_owned()))
                    }
                })
                .collect()
        };
        let atrace_categories = names(c.atrace_categories())?;
        let atrace_apps = names(c.atrace_apps())?;
        names(c.atrace_categories_prefer_sdk())?;
        let instance_name = match c.instance_name() {
            None | Some("") => None,
            Some(n) => {
                let ok = printable(n) && !n.contains('/') && n != "." && n != "..";
                if !ok {
                    return Err(FtraceConfigError::BadInstanceName(n.to_owned()));
                }
                Some(n.to_owned())
            }
        };
        if instance_name.is_some() && !(atrace_categories.is_empty() && atrace_apps.is_empty()) {
            return Err(FtraceConfigError::AtraceInSecondaryInstance);
        }
        let drain = c.drain_period_ms().unwrap_or(0);
        let drain_period_ms = if (MIN_DRAIN_PERIOD_MS..=MAX_DRAIN_PERIOD_MS).contains(&drain) {
            drain
        } else {
            DEFAULT_DRAIN_PERIOD_MS
        };
        Ok(FtraceOptions {
            events,
            atrace_categories,
            atrace_apps,
            buffer_size_kb: c.buffer_size_kb().unwrap_or(0),
            buffer_size_lower_bound: c.buffer_size_lower_bound() == Some(true),
            drain_period_ms,
            drain_period_set: drain_period_ms == drain,
            drain_buffer_percent: c.drain_buffer_percent().filter(|&p| p > 0),
            compact_sched: c
                .compact_sched()
                .and_then(|cs| cs.enabled())
                .unwrap_or(true),
            symbolize_ksyms: c.symbolize_ksyms() == Some(true),
            throttle_rss_stat: c.throttle_rss_stat() == Some(true),
            preserve_ftrace_buffer: c.preserve_ftrace_buffer() == Some(true),
            syscall_events: names(c.syscall_events())?,
            print_filter: match c.print_filter_bytes() {
                None => None,
                Some(b) => Some(
                    super::print_filter::PrintFilter::from_config(b)
                        .ok_or(FtraceConfigError::BadPrintFilter)?,
                ),
            },
            refused,
            disable_generic_events: c.disable_generic_events() == Some(true),
            use_monotonic_raw_clock: c.use_monotonic_raw_clock() == Some(true),
            instance_name,
        })
    }

    /// The per-CPU buffer size to set, in KiB, on a machine with
    /// `ram_bytes` of RAM (`None`: unknown, the smaller default): the
    /// config's size, or the default when it is unset (or smaller and
    /// `buffer_size_lower_bound`), at least one page, at most
    /// [`MAX_BUFFER_KB`].
    pub fn buffer_size_kb(&self, ram_bytes: Option<u64>) -> u32 {
        let default = if ram_bytes.is_some_and(|r| r >= HIGH_RAM_BYTES) {
            DEFAULT_HIGH_RAM_BUFFER_KB
        } else {
            DEFAULT_LOW_RAM_BUFFER_KB
        };
        let asked = self.buffer_size_kb;
        let kb = if asked == 0 || (self.buffer_size_lower_bound && asked < default) {
            default
        } else {
            asked
        };
        kb.clamp(4, MAX_BUFFER_KB)
    }

    /// What this session asks of the instance (for
    /// [`Sessions`](super::session::Sessions)), its events resolved in
    /// `selection`, on a machine with `ram_bytes` of RAM.
    pub fn session_wants(
        &self,
        selection: &EventSelection,
        ram_bytes: Option<u64>,
    ) -> super::session::SessionWants {
        super::session::SessionWants {
            events: selection.events.clone(),
            buffer_size_kb: self.buffer_size_kb(ram_bytes),
            buffer_percent: self.drain_buffer_percent,
            mono_raw_clock: self.use_monotonic_raw_clock,
            drain_period_ms: self.drain_period_ms,
            preserve_buffer: self.preserve_ftrace_buffer,
            syscalls: selection.syscalls.clone(),
        }
    }

    /// Whether atrace is involved (`ftrace/print` is then enabled, as the
    /// userspace side writes there).
    pub fn requires_atrace(&self) -> bool {
        !self.atrace_categories.is_empty() || !self.atrace_apps.is_empty()
    }

    /// The error upstream reports in `ftrace_stats.atrace_errors` on Linux
    /// when atrace options are set (the atrace binary is Android's).
    pub fn atrace_error(&self) -> Option<&'static str> {
        self.requires_atrace()
            .then_some("atrace is only available on Android; only the categories' kernel tracepoints are enabled")
    }

    /// The concrete tracepoints this config enables on a kernel whose
    /// events `catalog` lists. `is_typed` says whether an event has a typed
    /// translation (`disable_generic_events` skips the others).
    pub fn resolve(
        &self,
        catalog: &dyn EventCatalog,
        is_typed: &dyn Fn(&str, &str) -> bool,
    ) -> EventSelection {
        let mut wanted: BTreeSet<(String, String)> = BTreeSet::new();
        let mut unknown = Vec::new();
        let add = |wanted: &mut BTreeSet<_>, g: &str, n: &str| {
            wanted.insert((g.to_owned(), n.to_owned()));
        };
        for spec in &self.events {
            match spec {
                EventSpec::Event { group, name } => {
                    if catalog.has_event(group, name) {
                        add(&mut wanted, group, name);
                    } else {
                        unknown.push(format!("{group}/{name}"));
                    }
                }
                EventSpec::Group(group) => {
                    let names = catalog.group_events(group);
                    if names.is_empty() {
                        unknown.push(format!("{group}/*"));
                    }
                    for n in names {
                        add(&mut wanted, group, &n);
                    }
                }
                EventSpec::Bare(name) => match catalog.group_of(name) {
                    Some(g) => add(&mut wanted, &g, name),
                    None => unknown.push(name.clone()),
                },
            }
        }
        if self.requires_atrace() {
            add(&mut wanted, "ftrace", "print");
        }
        for category in &self.atrace_categories {
            for (g, n) in category_tracepoints(category, catalog) {
                // Categories name what a kernel may have; absent ones are
                // skipped silently, as upstream does.
                if catalog.has_event(&g, &n) {
                    add(&mut wanted, &g, &n);
                }
            }
        }
        let mut failed = Vec::new();
        let rss_stat = ("kmem".to_owned(), "rss_stat".to_owned());
        if self.throttle_rss_stat && wanted.contains(&rss_stat) {
            if catalog.has_event("synthetic", "rss_stat_throttled") {
                wanted.remove(&rss_stat);
                add(&mut wanted, "synthetic", "rss_stat_throttled");
            } else {
                // Upstream falls back to the unthrottled event without a
                // word; the trace says it here. (Creating the synthetic
                // event and its hist trigger changes the kernel's global
                // tracing state, which these probes leave alone.)
                failed.push(
                    "FtraceConfig.throttle_rss_stat: no synthetic rss_stat_throttled event on \
                     this kernel, kmem/rss_stat recorded unthrottled"
                        .to_owned(),
                );
            }
        }
        // syscall_events: the raw_syscalls pair, filtered to these ids.
        let mut syscalls = None;
        if !self.syscall_events.is_empty() {
            for n in ["sys_enter", "sys_exit"] {
                if catalog.has_event("raw_syscalls", n) {
                    add(&mut wanted, "raw_syscalls", n);
                } else {
                    unknown.push(format!("raw_syscalls/{n}"));
                }
            }
            let mut ids = BTreeSet::new();
            for name in &self.syscall_events {
                match super::syscalls::syscall_id(name) {
                    Some(id) => {
                        ids.insert(id);
                    }
                    None => failed.push(format!(
                        "FtraceConfig.syscall_events: {name} is no syscall of this architecture"
                    )),
                }
            }
            syscalls = Some(ids);
        }
        if self.disable_generic_events {
            wanted.retain(|(g, n)| {
                let keep = is_typed(g, n);
                if !keep {
                    failed.push(format!("{g}/{n}"));
                }
                keep
            });
        }
        EventSelection {
            events: wanted,
            unknown,
            failed,
            syscalls,
        }
    }
}

/// The events of a kernel, as tracefs lists them under `events/`.
pub trait EventCatalog {
    /// Whether `events/<group>/<name>` exists.
    fn has_event(&self, group: &str, name: &str) -> bool;
    /// The events of `group`, sorted (empty when there is no such group).
    fn group_events(&self, group: &str) -> Vec<String>;
    /// The group of an event known by its bare name (the first group, in
    /// name order, that has it).
    fn group_of(&self, name: &str) -> Option<String>;
}

/// The tracepoints a config resolves to on one kernel.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct EventSelection {
    /// `(group, name)` of every event to enable, sorted.
    pub events: BTreeSet<(String, String)>,
    /// Requested events the kernel does not have
    /// (`ftrace_stats.unknown_ftrace_events`).
    pub unknown: Vec<String>,
    /// Requested events not enabled because of `disable_generic_events`
    /// (`ftrace_stats.failed_ftrace_events`).
    pub failed: Vec<String>,
    /// `syscall_events`: the syscall ids `raw_syscalls` is filtered to
    /// (`None`: every syscall, where raw_syscalls is recorded at all).
    pub syscalls: Option<BTreeSet<u32>>,
}

/// Checks that [`FTRACE_CONFIG_FIELDS`] decides exactly the fields of the
/// upstream schema; the names of the fields that are missing or extra.
pub fn undecided_fields() -> Vec<String> {
    let mut out = Vec::new();
    for (number, name) in FTRACE_CONFIG_SCHEMA {
        if !FTRACE_CONFIG_FIELDS
            .iter()
            .any(|(n, f, _)| n == number && f == name)
        {
            out.push(format!("{name} = {number} has no decision"));
        }
    }
    for (number, name, _) in FTRACE_CONFIG_FIELDS {
        if !FTRACE_CONFIG_SCHEMA
            .iter()
            .any(|(n, f)| n == number && f == name)
        {
            out.push(format!("{name} = {number} is not in the schema"));
        }
    }
    out
}

#[cfg(test)]
#[path = "config_tests.rs"]
mod tests;
