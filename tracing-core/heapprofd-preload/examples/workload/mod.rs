//! The allocation-heavy workload every variant of the heap-cost benchmark
//! runs: maps of strings built and dropped, round after round.

use std::collections::{BTreeMap, HashMap};

/// Runs `rounds` rounds; a checksum, so nothing is optimised away.
pub fn run(rounds: usize) -> usize {
    let mut checksum = 0usize;
    for r in 0..rounds {
        let mut map: HashMap<String, Vec<String>> = HashMap::new();
        for i in 0..20_000 {
            let values: Vec<String> = (0..4).map(|j| format!("value {i}.{j} of {r}")).collect();
            map.insert(format!("key-{r}-{i}"), values);
        }
        let mut ordered: BTreeMap<usize, String> = BTreeMap::new();
        for (k, v) in &map {
            ordered.insert(k.len() * 31 + v.len(), k.clone());
        }
        checksum = checksum
            .wrapping_add(map.values().map(Vec::len).sum::<usize>())
            .wrapping_add(ordered.len());
    }
    checksum
}

/// The rounds from the first argument (default 40).
pub fn rounds() -> usize {
    std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(40)
}
