//! Device frequencies from sysfs, `/sys/class/devfreq/<device>/cur_freq`
//! (GPUs, memory buses and other devfreq-scaled devices; Hz).

use super::ProcRoot;

const DIR: &str = "sys/class/devfreq";

/// Every devfreq device with a readable `cur_freq`, by name. No devfreq
/// class: empty.
pub fn read_all(root: &ProcRoot) -> Vec<(String, u64)> {
    let Ok(names) = root.list(DIR) else {
        return Vec::new();
    };
    names
        .into_iter()
        .filter_map(|name| {
            let bytes = root.read(format!("{DIR}/{name}/cur_freq"), 4096).ok()?;
            let hz = std::str::from_utf8(&bytes).ok()?.trim().parse().ok()?;
            Some((name, hz))
        })
        .collect()
}
