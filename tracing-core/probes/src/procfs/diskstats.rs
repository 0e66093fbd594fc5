//! `/proc/diskstats`: one line per block device, `major minor name`
//! followed by 11 (old kernels), 15 (4.18+, discards) or 17 (5.5+,
//! flushes) counters.

use super::ProcError;

const FILE: &str = "/proc/diskstats";

/// The counters of one device upstream records.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DiskStat {
    /// The device name (`sda`, `vda1`, `nvme0n1`).
    pub device: String,
    /// Sectors read.
    pub read_sectors: u64,
    /// Milliseconds spent reading.
    pub read_time_ms: u64,
    /// Sectors written.
    pub write_sectors: u64,
    /// Milliseconds spent writing.
    pub write_time_ms: u64,
    /// Sectors discarded (kernels that print it).
    pub discard_sectors: Option<u64>,
    /// Milliseconds spent discarding.
    pub discard_time_ms: Option<u64>,
    /// Flush requests completed (kernels that print it).
    pub flush_count: Option<u64>,
    /// Milliseconds spent flushing.
    pub flush_time_ms: Option<u64>,
}

/// Parses `/proc/diskstats`.
pub fn parse(bytes: &[u8]) -> Result<Vec<DiskStat>, ProcError> {
    let text = std::str::from_utf8(bytes).map_err(|_| ProcError::malformed(FILE, "not text"))?;
    let mut out = Vec::new();
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        let words: Vec<&str> = line.split_ascii_whitespace().collect();
        if words.len() < 14 {
            return Err(ProcError::malformed(
                FILE,
                format!("too few fields: {line:.60?}"),
            ));
        }
        let num = |i: usize| -> Result<Option<u64>, ProcError> {
            words
                .get(i)
                .map(|w| {
                    w.parse().map_err(|_| {
                        ProcError::malformed(FILE, format!("field {i} of {line:.60?}"))
                    })
                })
                .transpose()
        };
        let req = |i: usize| num(i).map(Option::unwrap_or_default);
        out.push(DiskStat {
            device: words[2].to_owned(),
            read_sectors: req(5)?,
            read_time_ms: req(6)?,
            write_sectors: req(9)?,
            write_time_ms: req(10)?,
            discard_sectors: num(16)?,
            discard_time_ms: num(17)?,
            flush_count: num(18)?,
            flush_time_ms: num(19)?,
        });
    }
    Ok(out)
}
