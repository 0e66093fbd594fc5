//! What a soak found, and the figures it is judged by: the service's peak
//! resident set and its overhead over the configured buffer, whether the
//! resident set grew while the producers wrote, and the packet counts.

use super::SoakOptions;
use super::check::CheckCounts;
use super::rss::{Phase, Sample};
use crate::services::Which;

/// The outcome of one soak.
#[derive(Debug, Clone)]
pub struct SoakReport {
    /// What ran.
    pub options: SoakOptions,
    /// The service's memory, once a second and at the phase changes.
    pub samples: Vec<Sample>,
    /// `VmHWM` at the end of the session (before its buffers were freed).
    pub peak_hwm_kb: u64,
    /// Packets the producers wrote (dropped in their SMBs or not).
    pub written: u64,
    /// Writer threads that reported.
    pub writers: u64,
    /// Sum of the writers' drop counts (times they started dropping because
    /// their SMB was full).
    pub producer_drops: u64,
    /// What the consumer read.
    pub counts: CheckCounts,
    /// The first problems the checks found.
    pub problems: Vec<String>,
    /// How many in all.
    pub problem_count: u64,
    /// ReadBuffers calls.
    pub reads: u64,
    /// How long the producers wrote (from EnableTracing to the last flush).
    pub writing_secs: f64,
    /// How the session ended (the EnableTracing reply).
    pub session_end: String,
    /// The buffer's stats when writing was over.
    pub buffer_stats: Vec<(&'static str, u64)>,
    /// The buffer's stats halfway.
    pub buffer_stats_mid: Vec<(&'static str, u64)>,
    /// Whether the service and every producer exited with success.
    pub exits_ok: bool,
    /// The service's CPU time (user + system) from EnableTracing to the
    /// last read, if /proc could be read.
    pub service_cpu_secs: Option<f64>,
}

const MIB: f64 = 1024.0;

impl SoakReport {
    /// The service's name.
    pub fn service(&self) -> &'static str {
        match self.options.which {
            Which::Zerotraced => "zerotraced",
            Which::Genuine => "genuine",
        }
    }

    /// Peak resident set over the configured buffer, in KiB (negative when
    /// the buffer was never all touched).
    pub fn overhead_kb(&self) -> i64 {
        self.peak_hwm_kb as i64 - i64::from(self.options.buffer_kb)
    }

    fn writing(&self) -> Vec<&Sample> {
        self.samples
            .iter()
            .filter(|s| s.phase == Phase::Writing)
            .collect()
    }

    /// Growth of the resident set while writing, in KiB: the mean of the
    /// last third of the writing samples minus that of the middle third
    /// (the first third is the warm-up, while the ring is first filled).
    /// `None` with fewer than three samples.
    pub fn growth_kb(&self) -> Option<i64> {
        let w = self.writing();
        if w.len() < 3 {
            return None;
        }
        let third = w.len() / 3;
        let mean =
            |s: &[&Sample]| s.iter().map(|s| s.memory.rss_kb as f64).sum::<f64>() / s.len() as f64;
        let middle = mean(&w[third..2 * third]);
        let last = mean(&w[w.len() - third..]);
        Some((last - middle).round() as i64)
    }

    /// The largest resident set while writing, in KiB.
    pub fn max_rss_writing_kb(&self) -> u64 {
        self.writing()
            .iter()
            .map(|s| s.memory.rss_kb)
            .max()
            .unwrap_or(0)
    }

    /// The largest anonymous resident memory (buffers, heap) while writing
    /// minus the configured buffer, in KiB: the service's own overhead,
    /// without the producers' SMBs (shared memory) and its program's pages.
    pub fn anon_overhead_kb(&self) -> i64 {
        let anon = self
            .writing()
            .iter()
            .map(|s| s.memory.anon_kb)
            .max()
            .unwrap_or(0);
        anon as i64 - i64::from(self.options.buffer_kb)
    }

    /// The resident set over time as a markdown table (every `step`-th
    /// writing sample, and every sample of the other phases).
    pub fn table(&self, step: usize) -> String {
        let mut out = String::from(
            "| t (s) | phase | VmRSS (MiB) | RssAnon | RssShmem | RssFile | VmHWM | packets read | lost |\n|---:|---|---:|---:|---:|---:|---:|---:|---:|\n",
        );
        let mut writing = 0usize;
        for s in &self.samples {
            if s.phase == Phase::Writing {
                writing += 1;
                if (writing - 1) % step.max(1) != 0 {
                    continue;
                }
            }
            let m = &s.memory;
            out.push_str(&format!(
                "| {:.1} | {} | {:.1} | {:.1} | {:.1} | {:.1} | {:.1} | {} | {} |\n",
                s.t,
                s.phase.name(),
                m.rss_kb as f64 / MIB,
                m.anon_kb as f64 / MIB,
                m.shmem_kb as f64 / MIB,
                m.file_kb as f64 / MIB,
                m.hwm_kb as f64 / MIB,
                s.packets_read,
                s.packets_lost
            ));
        }
        out
    }

    /// The summary: options, packets, losses, memory figures, problems.
    pub fn summary(&self) -> String {
        let o = &self.options;
        let c = &self.counts;
        let stats = |v: &[(&str, u64)]| {
            v.iter()
                .map(|(k, v)| format!("{k} {v}"))
                .collect::<Vec<_>>()
                .join(", ")
        };
        let mut s = format!(
            "{}: {} producers × {} threads × {} s at {} packets/s/thread, ring buffer {} KiB, SMB {} KiB, read every {:?}\n",
            self.service(),
            o.producers,
            o.threads,
            o.seconds,
            o.rate,
            o.buffer_kb,
            o.smb_kb,
            o.read_every
        );
        s += &format!(
            "  packets: written {} by {} writers (writers entered drop mode {} times); read {} soak packets ({} MiB of packets in all, {} reads, {} service packets); lost {} in {} flagged gaps ({:.2} %); {} flagged packets without a gap\n",
            self.written,
            self.writers,
            self.producer_drops,
            c.test_packets,
            c.bytes / (1024 * 1024),
            self.reads,
            c.other_packets,
            c.lost,
            c.gaps,
            if self.written > 0 {
                100.0 * c.lost as f64 / self.written as f64
            } else {
                0.0
            },
            c.flagged_without_gap
        );
        s += &format!(
            "  memory: peak VmHWM {:.1} MiB, overhead over the buffer {:.1} MiB; max VmRSS while writing {:.1} MiB; growth (last third − middle third of writing) {}\n",
            self.peak_hwm_kb as f64 / MIB,
            self.overhead_kb() as f64 / MIB,
            self.max_rss_writing_kb() as f64 / MIB,
            self.growth_kb()
                .map_or("n/a".into(), |g| format!("{:+.1} MiB", g as f64 / MIB))
        );
        s += &format!(
            "  buffer stats halfway: {}\n",
            stats(&self.buffer_stats_mid)
        );
        s += &format!("  buffer stats at the end: {}\n", stats(&self.buffer_stats));
        s += &format!(
            "  session end: {}; exits ok: {}; wrote for {:.1} s\n",
            self.session_end, self.exits_ok, self.writing_secs
        );
        if self.problem_count == 0 {
            s += "  checks: every packet intact, in order per sequence, every loss flagged\n";
        } else {
            s += &format!("  checks: {} PROBLEMS, the first:\n", self.problem_count);
            for p in &self.problems {
                s += &format!("    {p}\n");
            }
        }
        s
    }
}

/// The two services side by side: peak, overhead over the buffer, growth.
pub fn compare(ours: &SoakReport, genuine: &SoakReport) -> String {
    let row = |r: &SoakReport| {
        format!(
            "| {} | {:.1} | {:.1} | {:.1} | {:.1} | {} | {} | {} | {} |\n",
            r.service(),
            r.peak_hwm_kb as f64 / MIB,
            r.overhead_kb() as f64 / MIB,
            r.anon_overhead_kb() as f64 / MIB,
            r.max_rss_writing_kb() as f64 / MIB,
            r.growth_kb()
                .map_or("n/a".into(), |g| format!("{:+.1}", g as f64 / MIB)),
            r.counts.test_packets,
            r.counts.lost,
            r.problem_count
        )
    };
    let mut s = String::from(
        "| service | peak VmHWM (MiB) | overhead over buffer (MiB) | max RssAnon − buffer (MiB) | max VmRSS writing (MiB) | growth (MiB) | packets read | lost (flagged) | problems |\n|---|---:|---:|---:|---:|---:|---:|---:|---:|\n",
    );
    s += &row(ours);
    s += &row(genuine);
    s += &format!(
        "ours − genuine overhead: {:+.1} MiB\n",
        (ours.overhead_kb() - genuine.overhead_kb()) as f64 / MIB
    );
    s
}
