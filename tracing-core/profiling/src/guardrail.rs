//! A profiler's memory guardrail: a profile stops, and says so in its
//! trace, when what the profiler holds passes the config's limit
//! (`HeapprofdConfig.max_heapprofd_memory_kb`,
//! `PerfEventConfig.max_daemon_memory_kb`; 0 is no limit). What a profiler
//! holds is its own reckoning: the heap profiler's thread in the profiled
//! process counts its own allocations, its preload helper (a process of
//! its own, as upstream's daemons are) reads its anonymous and swapped
//! memory with [`anon_and_swap_kb`], and `linux.perf`, which may share its
//! process with the tracing service, weighs its instance's own footprint.
//! The same reading of `/proc/PID/status` is heapprofd's
//! `min_anonymous_memory_kb` admission.

/// A limit on what a profiler holds, in kB.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct MemoryGuardrail {
    limit_kb: u64,
}

impl MemoryGuardrail {
    /// The guardrail of a config's limit (0: none).
    pub const fn new(limit_kb: u32) -> Self {
        MemoryGuardrail {
            limit_kb: limit_kb as u64,
        }
    }

    /// Whether there is no limit.
    pub const fn is_off(&self) -> bool {
        self.limit_kb == 0
    }

    /// Whether holding `held_kb` passes the limit (never without one).
    pub const fn is_passed_by(&self, held_kb: u64) -> bool {
        !self.is_off() && held_kb > self.limit_kb
    }
}

/// Process `pid`'s anonymous resident and swapped memory (`RssAnon` and
/// `VmSwap` of `/proc/PID/status`), in kB; `None` if the file cannot be
/// read or has no `RssAnon` (a kernel thread, a process gone).
pub fn anon_and_swap_kb(pid: u32) -> Option<u64> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    anon_and_swap_kb_of(&text)
}

/// [`anon_and_swap_kb`] of a `/proc/PID/status` text.
pub fn anon_and_swap_kb_of(status: &str) -> Option<u64> {
    let field = |name: &str| {
        status
            .lines()
            .find_map(|l| l.strip_prefix(name))
            .and_then(|v| v.split_whitespace().next())
            .and_then(|v| v.parse::<u64>().ok())
    };
    field("RssAnon:")?.checked_add(field("VmSwap:").unwrap_or(0))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_limit_is_never_passed() {
        let off = MemoryGuardrail::new(0);
        assert!(off.is_off());
        assert!(!off.is_passed_by(u64::MAX));
    }

    #[test]
    fn the_limit_itself_is_not_past_it() {
        let g = MemoryGuardrail::new(100);
        assert!(!g.is_passed_by(100));
        assert!(g.is_passed_by(101));
    }

    #[test]
    fn anon_and_swap_are_summed_and_anon_is_required() {
        let status = "Name:\tx\nVmRSS:\t  900 kB\nRssAnon:\t   300 kB\nVmSwap:\t  12 kB\n";
        assert_eq!(anon_and_swap_kb_of(status), Some(312));
        assert_eq!(anon_and_swap_kb_of("RssAnon:\t 7 kB\n"), Some(7));
        assert_eq!(
            anon_and_swap_kb_of("Name:\tkthreadd\nVmSwap:\t 1 kB\n"),
            None
        );
        assert_eq!(anon_and_swap_kb_of("RssAnon:\t lots kB\n"), None);
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn this_process_has_anonymous_memory() {
        assert!(anon_and_swap_kb(std::process::id()).is_some_and(|kb| kb > 0));
    }
}
