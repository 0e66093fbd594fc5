//! `/proc/vmstat`: `key value` lines, keys mapped to upstream's
//! `VmstatCounters` numbers by the table the schema pipeline derives from
//! the upstream enum (`zerotrace_protos::upstream_tables`).

use super::ProcError;

const FILE: &str = "/proc/vmstat";

/// The `VmstatCounters` number of a `/proc/vmstat` key, if upstream names one.
pub fn counter(key: &str) -> Option<i32> {
    zerotrace_protos::upstream_tables::vmstat_counter(key)
}

/// Every `key value` line of `/proc/vmstat`, in file order.
pub fn parse(bytes: &[u8]) -> Result<Vec<(String, u64)>, ProcError> {
    let text = std::str::from_utf8(bytes).map_err(|_| ProcError::malformed(FILE, "not text"))?;
    let mut out = Vec::new();
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        let mut words = line.split_whitespace();
        let (Some(key), Some(value), None) = (words.next(), words.next(), words.next()) else {
            return Err(ProcError::malformed(
                FILE,
                format!("not `key value`: {line:?}"),
            ));
        };
        let value = value
            .parse()
            .map_err(|_| ProcError::malformed(FILE, format!("not a number: {line:?}")))?;
        out.push((key.to_owned(), value));
    }
    Ok(out)
}
