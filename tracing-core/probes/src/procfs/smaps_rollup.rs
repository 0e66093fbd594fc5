//! `/proc/PID/smaps_rollup`: a process's memory summed over its mappings,
//! with the proportional set size (PSS: each shared page divided by the
//! processes that map it) that `status` does not give. Read when
//! `ProcessStatsConfig.scan_smaps_rollup` asks (it costs a walk of the
//! page tables in the kernel).

use super::{first_u64, key_values};

/// The counters of `smaps_rollup` that `process_stats` carries, kB.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SmapsRollup {
    /// `Rss`.
    pub rss_kb: Option<u64>,
    /// `Pss`.
    pub pss_kb: Option<u64>,
    /// `Pss_Anon`.
    pub pss_anon_kb: Option<u64>,
    /// `Pss_File`.
    pub pss_file_kb: Option<u64>,
    /// `Pss_Shmem`.
    pub pss_shmem_kb: Option<u64>,
    /// `SwapPss`.
    pub swap_pss_kb: Option<u64>,
}

/// Parses `smaps_rollup` (the header line of the rolled-up range, then
/// `Key:   N kB` lines); counters it lacks stay `None`.
pub fn parse(bytes: &[u8]) -> SmapsRollup {
    let text = String::from_utf8_lossy(bytes);
    let mut s = SmapsRollup::default();
    for (key, value) in key_values(&text, ':') {
        let v = first_u64(value);
        match key {
            "Rss" => s.rss_kb = v,
            "Pss" => s.pss_kb = v,
            "Pss_Anon" => s.pss_anon_kb = v,
            "Pss_File" => s.pss_file_kb = v,
            "Pss_Shmem" => s.pss_shmem_kb = v,
            "SwapPss" => s.swap_pss_kb = v,
            _ => {}
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_rollup() {
        let text =
            b"55d0c0a00000-7ffd2a1f9000 ---p 00000000 00:00 0                          [rollup]
Rss:                2048 kB
Pss:                1029 kB
Pss_Dirty:           300 kB
Pss_Anon:            500 kB
Pss_File:            520 kB
Pss_Shmem:             9 kB
Shared_Clean:       1000 kB
Swap:                  0 kB
SwapPss:               4 kB
Locked:                0 kB
";
        assert_eq!(
            parse(text),
            SmapsRollup {
                rss_kb: Some(2048),
                pss_kb: Some(1029),
                pss_anon_kb: Some(500),
                pss_file_kb: Some(520),
                pss_shmem_kb: Some(9),
                swap_pss_kb: Some(4),
            }
        );
        assert_eq!(parse(b""), SmapsRollup::default());
    }
}
