//! `TraceConfig.trigger_config`: sessions that start, stop or are cloned
//! when a named trigger comes, and the rules Perfetto's service sets on
//! them.

use zerotrace_protos::protos::TraceConfigDecoder;

use super::{ConfigError, anchored, invalid};

/// `trigger_config.trigger_mode`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TriggerMode {
    /// The session waits for a trigger to start its data sources.
    StartTracing,
    /// The session stops (after `stop_delay_ms`) on a trigger.
    StopTracing,
    /// A trigger tells the consumer to clone the session.
    CloneSnapshot,
}

/// One trigger of `trigger_config`.
#[derive(Debug, Clone)]
pub struct TriggerSpec {
    /// The trigger's name.
    pub name: String,
    /// Only producers whose name matches (anchored), if set.
    pub producer_name_regex: Option<regex::Regex>,
    /// Delay between the trigger and the stop.
    pub stop_delay_ms: u32,
    /// `max_per_24_h` (0 = no limit): hits of this trigger's name, across
    /// sessions, after which it is ignored for 24 hours.
    pub max_per_24_h: u32,
    /// `skip_probability`: the chance that a hit is ignored.
    pub skip_probability: f64,
}

/// A session's `trigger_config`, interpreted.
#[derive(Debug, Clone, Default)]
pub(super) struct Triggers {
    /// `trigger_mode`.
    pub mode: Option<TriggerMode>,
    /// `triggers`.
    pub triggers: Vec<TriggerSpec>,
    /// `trigger_timeout_ms`.
    pub timeout_ms: u32,
}

/// The `trigger_config` of `d`, checked as Perfetto's service checks it
/// (against `duration_ms`, `max_duration` and `write_into_file`).
pub(super) fn parse_triggers(
    d: &TraceConfigDecoder<'_>,
    duration_ms: u32,
    max_duration: u64,
    write_into_file: bool,
) -> Result<Triggers, ConfigError> {
    let (mut trigger_mode, mut triggers, mut trigger_timeout_ms) = (None, Vec::new(), 0);
    if let Some(tc) = d.trigger_config() {
        trigger_mode = match tc.trigger_mode_raw().unwrap_or(0) {
            0 => None,
            1 => Some(TriggerMode::StartTracing),
            2 => Some(TriggerMode::StopTracing),
            4 => Some(TriggerMode::CloneSnapshot),
            m => return Err(invalid(format!("trigger_config.trigger_mode {m}"))),
        };
        for t in tc.triggers() {
            let name = t.name().unwrap_or("");
            if name.is_empty() {
                return Err(invalid("trigger_config.triggers entry without a name"));
            }
            let producer_name_regex = match t.producer_name_regex().filter(|r| !r.is_empty()) {
                Some(r) => Some(anchored(r, "trigger_config.triggers.producer_name_regex")?),
                None => None,
            };
            let skip_probability = t.skip_probability().unwrap_or(0.0);
            if !(0.0..=1.0).contains(&skip_probability) {
                return Err(invalid(format!(
                    "trigger_config.triggers.skip_probability {skip_probability} is not in [0, 1]"
                )));
            }
            triggers.push(TriggerSpec {
                name: name.to_owned(),
                producer_name_regex,
                stop_delay_ms: t.stop_delay_ms().unwrap_or(0),
                max_per_24_h: t.max_per_24_h().unwrap_or(0),
                skip_probability,
            });
        }
        // A config for services older than CLONE_SNAPSHOT: STOP_TRACING
        // there, CLONE_SNAPSHOT here (as Perfetto's).
        if tc.use_clone_snapshot_if_available().unwrap_or(false) {
            if trigger_mode != Some(TriggerMode::StopTracing) {
                return Err(invalid(
                    "trigger_config.use_clone_snapshot_if_available needs trigger_mode STOP_TRACING",
                ));
            }
            trigger_mode = Some(TriggerMode::CloneSnapshot);
        }
        trigger_timeout_ms = tc.trigger_timeout_ms().unwrap_or(0);
        if trigger_mode.is_some() && trigger_timeout_ms == 0 {
            return Err(invalid("trigger_config needs trigger_timeout_ms"));
        }
        // As Perfetto's: the timeout within the longest duration, no
        // duration of its own, one trigger per name, and no
        // STOP_TRACING or CLONE_SNAPSHOT session into a file.
        if trigger_mode.is_some() {
            if trigger_timeout_ms as u64 > max_duration {
                return Err(ConfigError::Limit(format!(
                    "trigger_config.trigger_timeout_ms {trigger_timeout_ms} exceeds {max_duration}"
                )));
            }
            if duration_ms != 0 {
                return Err(invalid(
                    "duration_ms must not be set with a trigger_config (trigger_timeout_ms bounds it)",
                ));
            }
            if write_into_file && trigger_mode != Some(TriggerMode::StartTracing) {
                return Err(invalid(
                    "trigger_mode STOP_TRACING or CLONE_SNAPSHOT cannot write_into_file",
                ));
            }
        }
        for (i, t) in triggers.iter().enumerate() {
            if triggers[..i].iter().any(|u| u.name == t.name) {
                return Err(invalid(format!(
                    "trigger_config.triggers: duplicate trigger name {:?}",
                    t.name
                )));
            }
        }
        if trigger_mode.is_none() && !triggers.is_empty() {
            return Err(invalid("trigger_config.triggers without a trigger_mode"));
        }
    }
    Ok(Triggers {
        mode: trigger_mode,
        triggers,
        timeout_ms: trigger_timeout_ms,
    })
}
