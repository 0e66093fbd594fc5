//! `/proc/stat`: per-CPU times (in clock ticks), the total and per-irq
//! interrupt counts, the softirq counts and the number of forks since boot.

use super::ProcError;

const FILE: &str = "/proc/stat";

/// One `cpuN` line's times, in clock ticks (`USER_HZ`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CpuTimes {
    /// N of `cpuN`.
    pub cpu: u32,
    /// user.
    pub user: u64,
    /// nice.
    pub nice: u64,
    /// system.
    pub system: u64,
    /// idle.
    pub idle: u64,
    /// iowait.
    pub iowait: u64,
    /// irq.
    pub irq: u64,
    /// softirq.
    pub softirq: u64,
    /// steal (0 where the kernel does not print it).
    pub steal: u64,
}

/// What `/proc/stat` says.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Stat {
    /// The per-CPU lines (not the aggregate `cpu` line), in file order.
    pub cpus: Vec<CpuTimes>,
    /// `intr`'s first number: all interrupts since boot.
    pub intr_total: Option<u64>,
    /// `intr`'s per-irq counts (index = irq number).
    pub intr: Vec<u64>,
    /// `softirq`'s first number.
    pub softirq_total: Option<u64>,
    /// `softirq`'s per-softirq counts.
    pub softirq: Vec<u64>,
    /// `processes`: forks since boot.
    pub forks: Option<u64>,
}

fn numbers<'a>(words: impl Iterator<Item = &'a str>, line: &str) -> Result<Vec<u64>, ProcError> {
    words
        .map(|w| {
            w.parse()
                .map_err(|_| ProcError::malformed(FILE, format!("not a number in {line:.60?}")))
        })
        .collect()
}

/// Parses `/proc/stat`; lines it does not use are skipped.
pub fn parse(bytes: &[u8]) -> Result<Stat, ProcError> {
    let text = std::str::from_utf8(bytes).map_err(|_| ProcError::malformed(FILE, "not text"))?;
    let mut stat = Stat::default();
    for line in text.lines() {
        let mut words = line.split_ascii_whitespace();
        let Some(key) = words.next() else { continue };
        if let Some(n) = key.strip_prefix("cpu").filter(|n| !n.is_empty()) {
            let cpu = n
                .parse()
                .map_err(|_| ProcError::malformed(FILE, format!("bad cpu name {key:?}")))?;
            let v = numbers(words.take(8), line)?;
            if v.len() < 7 {
                return Err(ProcError::malformed(FILE, format!("{key}: too few times")));
            }
            let at = |i: usize| v.get(i).copied().unwrap_or(0);
            stat.cpus.push(CpuTimes {
                cpu,
                user: at(0),
                nice: at(1),
                system: at(2),
                idle: at(3),
                iowait: at(4),
                irq: at(5),
                softirq: at(6),
                steal: at(7),
            });
        } else if key == "intr" || key == "softirq" {
            let v = numbers(words, line)?;
            let (total, each) = match v.split_first() {
                Some((t, rest)) => (Some(*t), rest.to_vec()),
                None => return Err(ProcError::malformed(FILE, format!("{key}: no total"))),
            };
            if key == "intr" {
                (stat.intr_total, stat.intr) = (total, each);
            } else {
                (stat.softirq_total, stat.softirq) = (total, each);
            }
        } else if key == "processes" {
            stat.forks = Some(
                numbers(words.take(1), line)?
                    .first()
                    .copied()
                    .ok_or_else(|| ProcError::malformed(FILE, "processes: no number"))?,
            );
        }
    }
    Ok(stat)
}
