//! Which processes `linux.perf` unwinds (`CallstackSampling.scope`), as
//! upstream's `traced_perf` decides it on a process's first sample:
//! excluded command lines, then excluded pids, are out; listed command
//! lines, then listed pids, are in; with nothing listed (no pids, no
//! command lines, no `additional_cmdline_count`, no sharding) everything
//! is in; otherwise the chosen process shard decides, or, unsharded, the
//! first `additional_cmdline_count` distinct command lines seen are in.
//! Patterns are `fnmatch` globs ([`crate::perf::glob`]) over argv0 when
//! they start with `/`, else over the binary's name. A kernel thread has
//! no command line (pids alone decide it), and is out unless kernel frames
//! are recorded. The decision is kept, except that an exit (the pid may be
//! reused) and an exec out of scope (a new command line) decide again.

use std::collections::{HashMap, HashSet};

use super::probe::ProbeContext;
use crate::perf::config::Scope;
use crate::perf::glob::glob_match;

/// `process_shard_count` and the shard chosen for a tracing session.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ProcessSharding {
    /// How many shards (`pid % count`).
    pub count: u32,
    /// The one whose processes are unwound (`< count`).
    pub chosen: u32,
}

/// A process's command line as upstream reads it: the first 511 bytes of
/// `/proc/PID/cmdline`, NUL separators and all.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub struct Cmdline(pub Vec<u8>);

impl Cmdline {
    /// The bytes upstream reads at most.
    pub const MAX: usize = 511;

    /// argv0: up to the first NUL (all of it when there is none, as after
    /// a process rewrote its command line).
    pub fn argv0(&self) -> &[u8] {
        let end = self.0.iter().position(|&b| b == 0).unwrap_or(self.0.len());
        &self.0[..end]
    }

    /// The binary's name: argv0 after its last `/`.
    pub fn binary_name(&self) -> &[u8] {
        let argv0 = self.argv0();
        match argv0.iter().rposition(|&b| b == b'/') {
            Some(i) => &argv0[i + 1..],
            None => argv0,
        }
    }
}

/// Whether `pattern` matches command line `cmdline`: a pattern starting
/// with `/` is matched against argv0, any other against the binary's name.
pub fn cmdline_matches(pattern: &str, cmdline: &Cmdline) -> bool {
    let subject = if pattern.starts_with('/') {
        cmdline.argv0()
    } else {
        cmdline.binary_name()
    };
    glob_match(pattern.as_bytes(), subject)
}

/// Which processes are in scope, decided on each one's first sample.
#[derive(Debug, Default)]
pub(crate) struct ScopeState {
    /// Each process's decision, and whether it was taken for a process
    /// with user-space state.
    decided: HashMap<u32, (bool, bool)>,
    additional_cmdlines: HashSet<Cmdline>,
}

impl ScopeState {
    /// Whether `pid` is in `scope`, deciding it on its first sample:
    /// `kthread` says the sample has no user-space state (then its command
    /// line is not read), `kernel_frames` whether kernel callstacks are
    /// recorded, and `cmdline` reads the command line.
    pub(crate) fn in_scope(
        &mut self,
        scope: &Scope,
        pid: u32,
        kthread: bool,
        kernel_frames: bool,
        sharding: Option<ProcessSharding>,
        cmdline: impl FnOnce() -> Option<Cmdline>,
    ) -> bool {
        if let Some(&(d, _)) = self.decided.get(&pid) {
            return d;
        }
        let d = if kthread && !kernel_frames {
            // Nothing of it to unwind.
            false
        } else {
            let cmdline = if kthread { None } else { cmdline() };
            accepted(
                scope,
                pid,
                cmdline.as_ref(),
                sharding,
                &mut self.additional_cmdlines,
            )
        };
        self.decided.insert(pid, (d, !kthread));
        d
    }

    /// How many processes' decisions are kept.
    pub(crate) fn len(&self) -> usize {
        self.decided.len()
    }

    /// Whether `pid` is in scope as a process with user-space state.
    pub(crate) fn was_userspace(&self, pid: u32) -> bool {
        self.decided.get(&pid) == Some(&(true, true))
    }

    /// Process `pid` exec'd (`exited` false) or exited: its decision goes
    /// on exit, and on exec only if it was out of scope (one in scope keeps
    /// its place).
    pub(crate) fn forget(&mut self, pid: u32, exited: bool) {
        if exited || self.decided.get(&pid).is_some_and(|&(d, _)| !d) {
            self.decided.remove(&pid);
        }
    }
}

/// Process `pid`'s command line, as upstream reads it (`None`: unreadable).
pub(crate) fn read_cmdline(ctx: &ProbeContext, pid: u32) -> Option<Cmdline> {
    use std::io::Read;
    let f = std::fs::File::open(ctx.root.path(format!("proc/{pid}/cmdline"))).ok()?;
    let mut bytes = Vec::with_capacity(64);
    f.take(Cmdline::MAX as u64).read_to_end(&mut bytes).ok()?;
    Some(Cmdline(bytes))
}

/// Whether process `pid` (its command line `cmdline`, if read) is in
/// `scope`, in upstream's order of rules.
fn accepted(
    scope: &Scope,
    pid: u32,
    cmdline: Option<&Cmdline>,
    sharding: Option<ProcessSharding>,
    additional_cmdlines: &mut HashSet<Cmdline>,
) -> bool {
    let ipid = i32::try_from(pid).unwrap_or(-1);
    let any = |patterns: &[String]| {
        cmdline.is_some_and(|c| patterns.iter().any(|p| cmdline_matches(p, c)))
    };
    if any(&scope.exclude_cmdlines) || scope.exclude_pids.contains(&ipid) {
        return false;
    }
    if any(&scope.target_cmdlines) || scope.target_pids.contains(&ipid) {
        return true;
    }
    if scope.target_cmdlines.is_empty()
        && scope.target_pids.is_empty()
        && scope.additional_cmdline_count == 0
        && sharding.is_none()
    {
        return true;
    }
    if let Some(s) = sharding {
        return pid % s.count == s.chosen;
    }
    let Some(c) = cmdline else { return false };
    if additional_cmdlines.contains(c) {
        return true;
    }
    if additional_cmdlines.len() < scope.additional_cmdline_count as usize {
        additional_cmdlines.insert(c.clone());
        return true;
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cmd(s: &str) -> Cmdline {
        Cmdline(s.as_bytes().to_vec())
    }

    fn decide(scope: &Scope, pid: u32, c: Option<&str>, taken: &mut HashSet<Cmdline>) -> bool {
        accepted(scope, pid, c.map(cmd).as_ref(), None, taken)
    }

    /// Upstream's own kind of cases: patterns over the binary name or
    /// (starting with `/`) argv0, with `*`, `?` and brackets.
    #[test]
    fn cmdline_patterns_follow_upstreams_glob_rule() {
        let sf = cmd("/system/bin/surfaceflinger\0--arg\0");
        assert!(cmdline_matches("surfaceflinger", &sf));
        assert!(cmdline_matches("???faceflinger", &sf));
        assert!(cmdline_matches("*flinger", &sf));
        assert!(cmdline_matches("/system/bin/*", &sf));
        assert!(cmdline_matches("/system/*/surface[a-z]linger", &sf));
        assert!(!cmdline_matches("/bin/*", &sf));
        assert!(!cmdline_matches("--arg", &sf), "arguments are not matched");
        assert!(!cmdline_matches("surfaceflinger*arg", &sf));
        // A command line rewritten without NULs is matched whole.
        let rewritten = cmd("com.example.app:remote");
        assert!(cmdline_matches("com.example.*", &rewritten));
        assert!(cmdline_matches("echo", &cmd("/bin/echo")));
        assert!(!cmdline_matches("echo", &cmd("/bin/echoes")));
        assert!(cmdline_matches("*", &cmd("")));
    }

    #[test]
    fn exclusions_first_then_listed_then_additional() {
        let scope = Scope {
            target_pids: vec![10],
            exclude_cmdlines: vec!["bad".into()],
            exclude_pids: vec![14],
            additional_cmdline_count: 1,
            ..Scope::default()
        };
        let mut taken = HashSet::new();
        assert!(decide(&scope, 10, Some("/bin/x"), &mut taken));
        // An exclusion wins over a listed pid.
        assert!(!decide(&scope, 10, Some("/usr/bin/bad"), &mut taken));
        assert!(!decide(&scope, 14, Some("/bin/q"), &mut taken));
        assert!(
            decide(&scope, 12, Some("/bin/y\0a"), &mut taken),
            "the one additional"
        );
        // The same command line again: in, without taking a slot.
        assert!(decide(&scope, 13, Some("/bin/y\0a"), &mut taken));
        // Another, with the same argv0 but other arguments: a distinct
        // command line, and no slot is left.
        assert!(!decide(&scope, 15, Some("/bin/y\0b"), &mut taken));
        // No command line (unreadable): never an additional one.
        let mut fresh = HashSet::new();
        assert!(!decide(&scope, 16, None, &mut fresh));
        assert!(fresh.is_empty());
        // Nothing listed: everything not excluded.
        let all = Scope {
            exclude_pids: vec![3],
            ..Scope::default()
        };
        assert!(decide(&all, 99, None, &mut HashSet::new()));
        assert!(!decide(&all, 3, None, &mut HashSet::new()));
    }

    /// Sharding applies after the lists, and then no additional command
    /// lines are taken.
    #[test]
    fn the_shard_decides_what_the_lists_do_not() {
        let s = Some(ProcessSharding {
            count: 4,
            chosen: 3,
        });
        let mut taken = HashSet::new();
        let scope = Scope {
            target_pids: vec![8],
            additional_cmdline_count: 5,
            process_shard_count: 4,
            ..Scope::default()
        };
        assert!(accepted(&scope, 8, None, s, &mut taken), "listed");
        assert!(accepted(&scope, 99, Some(&cmd("a")), s, &mut taken));
        assert!(!accepted(&scope, 98, Some(&cmd("b")), s, &mut taken));
        assert!(taken.is_empty(), "sharded: no additional command lines");
        let all = Scope {
            process_shard_count: 4,
            ..Scope::default()
        };
        assert!(!accepted(&all, 98, None, s, &mut taken), "another shard");
    }

    #[test]
    fn kernel_threads_need_kernel_frames_and_are_decided_by_pid() {
        let scope = Scope {
            target_cmdlines: vec!["*".into()],
            ..Scope::default()
        };
        let mut st = ScopeState::default();
        let never = || -> Option<Cmdline> { panic!("a kernel thread's command line is not read") };
        assert!(!st.in_scope(&scope, 2, true, false, None, never));
        let mut st = ScopeState::default();
        assert!(
            !st.in_scope(&scope, 2, true, true, None, never),
            "no command line to match"
        );
        let mut st = ScopeState::default();
        assert!(st.in_scope(&Scope::default(), 2, true, true, None, never));
        // Kept: not decided again.
        assert!(st.in_scope(&Scope::default(), 2, true, false, None, never));
    }
}
