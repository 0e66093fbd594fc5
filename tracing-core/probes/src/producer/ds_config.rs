//! The nested config a data source reads out of the `DataSourceConfig` the
//! service sends (`process_stats_config`, `sys_stats_config`, ...), by
//! upstream's field numbers ([`zerotrace_protos::upstream_tables::data_source_field`]), with
//! a malformed message an error rather than an empty config.

use protozero::Decoder;

use super::probe::ProbeError;

/// The bytes of field `field` of the encoded `DataSourceConfig` `config`
/// (the last occurrence, as protobuf merges; empty if absent).
pub fn nested(config: &[u8], field: u32) -> Result<&[u8], ProbeError> {
    let mut last: &[u8] = &[];
    let mut d = Decoder::new(config);
    while let Some(f) = d.read_field() {
        let f = f.map_err(ProbeError::DataSourceConfig)?;
        if f.id == field {
            last = f.as_bytes().map_err(ProbeError::DataSourceConfig)?;
        }
    }
    Ok(last)
}

/// `DataSourceConfig.tracing_session_id` (field 4): which tracing session
/// an instance belongs to (`None` when absent or malformed).
pub fn tracing_session_id(config: &[u8]) -> Option<u64> {
    let mut id = None;
    let mut d = Decoder::new(config);
    while let Some(f) = d.read_field() {
        let f = f.ok()?;
        if f.id == TRACING_SESSION_ID {
            id = f.as_u64().ok();
        }
    }
    id
}

/// `DataSourceConfig.tracing_session_id`.
const TRACING_SESSION_ID: u32 = 4;

#[cfg(test)]
mod tests {
    use super::*;
    use zerotrace_protos::upstream_tables::data_source_field;

    #[test]
    fn finds_the_nested_config_by_its_upstream_number() {
        assert_eq!(data_source_field::PROCESS_STATS_CONFIG, 103);
        assert_eq!(data_source_field::SYS_STATS_CONFIG, 104);
        assert_eq!(data_source_field::FTRACE_CONFIG, 100);
        // name = "x", process_stats_config = {0x08 0x01}.
        let bytes = [0x0a, 1, b'x', 0xba, 0x06, 2, 0x08, 0x01];
        assert_eq!(nested(&bytes, 103).ok(), Some(&[0x08, 0x01][..]));
        assert_eq!(nested(&bytes, 104).ok(), Some(&[][..]));
    }

    #[test]
    fn a_truncated_config_is_an_error() {
        assert!(matches!(
            nested(&[0xba, 0x06, 9, 0x08], 103),
            Err(ProbeError::DataSourceConfig(_))
        ));
    }
}
