//! `TraceConfig.data_sources`: which data source goes to which producers
//! (name, regex and machine filters) and into which buffer.

use zerotrace_protos::protos::TraceConfigDecoder;

use super::{BufferSpec, ConfigError, anchored, invalid};

/// One `data_sources` entry.
#[derive(Debug, Clone)]
pub struct DataSourceSpec {
    /// The DataSourceConfig's bytes as the consumer wrote them.
    pub config: Vec<u8>,
    /// Its `name`.
    pub name: String,
    /// Index into `buffers` (from `target_buffer` or `target_buffer_name`).
    pub buffer_index: usize,
    /// `producer_name_filter`.
    pub producer_name_filter: Vec<String>,
    /// `producer_name_regex_filter`, compiled and anchored.
    pub producer_name_regex_filter: Vec<regex::Regex>,
    /// `machine_name_filter`.
    pub machine_name_filter: Vec<String>,
}

impl DataSourceSpec {
    /// Whether a producer named `producer` passes the name filters.
    pub fn matches_producer(&self, producer: &str) -> bool {
        self.producer_name_filter.is_empty() && self.producer_name_regex_filter.is_empty()
            || self.producer_name_filter.iter().any(|f| f == producer)
            || self
                .producer_name_regex_filter
                .iter()
                .any(|r| r.is_match(producer))
    }

    /// Whether a producer of the machine named `machine` (`local`: this
    /// one) gets it, by Perfetto's rules since v54: a `machine_name_filter`
    /// matches the machine's name, and "host" always matches this machine;
    /// without a filter only local producers get it, unless the session
    /// sets `trace_all_machines`.
    pub fn matches_machine(&self, machine: &str, local: bool, trace_all_machines: bool) -> bool {
        if self.machine_name_filter.is_empty() {
            return local || trace_all_machines;
        }
        self.machine_name_filter
            .iter()
            .any(|m| m == machine || local && m == "host")
    }
}

/// The `data_sources` of `d`: each named, aimed at one of `buffers` (by
/// index or name), its producer-name regexes compiled; the consumer's
/// DataSourceConfig bytes kept whole.
pub(super) fn parse_data_sources(
    d: &TraceConfigDecoder<'_>,
    buffers: &[BufferSpec],
) -> Result<Vec<DataSourceSpec>, ConfigError> {
    let mut data_sources = Vec::new();
    for (i, ds) in d.data_sources().enumerate() {
        let config = ds.config_bytes().unwrap_or(&[]);
        let cfg = ds
            .config()
            .ok_or_else(|| invalid(format!("data_sources[{i}] has no config")))?;
        let name = cfg
            .name()
            .filter(|n| !n.is_empty())
            .ok_or_else(|| invalid(format!("data_sources[{i}].config has no name")))?;
        let buffer_index = match cfg.target_buffer_name().filter(|n| !n.is_empty()) {
            Some(bn) => buffers
                .iter()
                .position(|b| b.name.as_deref() == Some(bn))
                .ok_or_else(|| {
                    invalid(format!(
                        "data_sources[{i}].config.target_buffer_name {bn:?} names no buffer"
                    ))
                })?,
            None => cfg.target_buffer().unwrap_or(0) as usize,
        };
        if buffer_index >= buffers.len() {
            return Err(invalid(format!(
                "data_sources[{i}] ({name}) targets buffer {buffer_index}, the config has {}",
                buffers.len()
            )));
        }
        // Perfetto's service runs a ProtoVM over the buffer for it.
        if cfg.has_protovm_config() {
            return Err(ConfigError::Unsupported(
                "data_sources.config.protovm_config",
            ));
        }
        let mut regexes = Vec::new();
        for r in ds.producer_name_regex_filter() {
            regexes.push(anchored(r, "producer_name_regex_filter")?);
        }
        data_sources.push(DataSourceSpec {
            config: config.to_vec(),
            name: name.to_owned(),
            buffer_index,
            producer_name_filter: ds.producer_name_filter().map(str::to_owned).collect(),
            producer_name_regex_filter: regexes,
            machine_name_filter: ds.machine_name_filter().map(str::to_owned).collect(),
        });
    }
    Ok(data_sources)
}
