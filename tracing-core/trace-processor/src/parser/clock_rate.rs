//! The kernel's clock ftrace events as upstream imports them: a clock's
//! rate (`clock_set_rate`, FtraceEvent 16) is a counter on
//! `<clock> Frequency`, its enable state (`clock_enable` 14,
//! `clock_disable` 15) a counter on `<clock> State`, one track per clock
//! (the `linux_device` dimension). DVFS domains (`domain@N`) and devfreq
//! devices report through them; `android.dvfs` reads the frequencies.

use protozero::Decoder;

use super::Parser;
use super::importer::{FtraceHandler, FtraceInput};
use crate::storage::args::ArgValue;
use crate::storage::rows::CounterRow;
use crate::tables::opt_u32::OptU32;
use crate::tracker::tracks::{EventType, TrackSpec};

const CLOCK_ENABLE: u32 = 14;
const CLOCK_DISABLE: u32 = 15;
const CLOCK_SET_RATE: u32 = 16;

/// The events (gathered by `ftrace_registry.rs`).
pub const FTRACE_HANDLERS: &[(u32, FtraceHandler)] = &[
    (CLOCK_ENABLE, state),
    (CLOCK_DISABLE, state),
    (CLOCK_SET_RATE, rate),
];

fn rate(p: &mut Parser, e: &FtraceInput<'_>) {
    counter(p, e, "Frequency", "clock_frequency");
}

fn state(p: &mut Parser, e: &FtraceInput<'_>) {
    counter(p, e, "State", "clock_state");
}

/// The event's `state` on the clock's `<name> <suffix>` counter track.
fn counter(p: &mut Parser, e: &FtraceInput<'_>, suffix: &str, classification: &str) {
    let d = Decoder::new(e.body);
    let clock = d
        .find_last(1)
        .and_then(|f| f.as_bytes().ok())
        .map(|b| String::from_utf8_lossy(b).into_owned())
        .unwrap_or_default();
    let value = d.find_last(2).and_then(|f| f.as_u64().ok()).unwrap_or(0);
    let name = format!("{clock} {suffix}");
    let device = p.storage.strings.intern(&clock);
    let mut spec = TrackSpec::new(Some(&name), classification, EventType::Counter);
    spec.dimensions = vec![("linux_device", ArgValue::String(device))];
    let track_id = p.tracks.interned_counter(&mut p.storage, &spec);
    p.storage.counters.push(CounterRow {
        ts: e.ts,
        track_id,
        value: value as f64,
        arg_set_id: OptU32::NONE,
    });
}
