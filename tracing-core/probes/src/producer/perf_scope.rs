//! Which processes `linux.perf` unwinds (`CallstackSampling.scope`), as
//! upstream decides it: by pid, by a command-line glob (`/`-prefixed
//! patterns match argv0, others the binary's name; one `*`), minus the
//! exclusions, within a shard, plus `additional_cmdline_count` others;
//! decided on each process's first sample and kept, except that an exit
//! (the pid may be reused) and an exec out of scope (a new command line)
//! decide again.

use std::collections::HashMap;

use super::probe::ProbeContext;
use crate::perf::config::Scope;

/// Which processes are in scope, decided on each one's first sample.
#[derive(Debug, Default)]
pub(crate) struct ScopeState {
    decided: HashMap<u32, bool>,
    additional_taken: u32,
}

impl ScopeState {
    /// Whether `pid` is in `scope`, deciding it (reading its command line
    /// through `cmdline`) on its first sample.
    pub(crate) fn in_scope(
        &mut self,
        scope: &Scope,
        pid: u32,
        shard: Option<(u32, u32)>,
        cmdline: impl FnOnce() -> Option<String>,
    ) -> bool {
        if let Some(&d) = self.decided.get(&pid) {
            return d;
        }
        let cmdline = cmdline();
        let d = decide(
            scope,
            pid,
            cmdline.as_deref(),
            shard,
            &mut self.additional_taken,
        );
        self.decided.insert(pid, d);
        d
    }

    /// Process `pid` exec'd (`exited` false) or exited: its decision goes
    /// on exit, and on exec only if it was out of scope (one in scope keeps
    /// its place, so that an `additional_cmdline_count` slot is not taken
    /// twice).
    pub(crate) fn forget(&mut self, pid: u32, exited: bool) {
        if exited || self.decided.get(&pid) == Some(&false) {
            self.decided.remove(&pid);
        }
    }
}

/// Process `pid`'s argv0, bounded.
pub(crate) fn read_cmdline(ctx: &ProbeContext, pid: u32) -> Option<String> {
    let bytes = std::fs::read(ctx.root.path(format!("proc/{pid}/cmdline"))).ok()?;
    let bytes = &bytes[..bytes.len().min(511)];
    let argv0 = bytes.split(|&b| b == 0).next().unwrap_or_default();
    Some(String::from_utf8_lossy(argv0).into_owned())
}

/// Whether `pattern` (one `*` at most, as upstream allows) matches a
/// process whose argv0 is `argv0`: patterns starting with `/` match argv0
/// itself, others its binary name (after the last `/`).
pub fn cmdline_matches(pattern: &str, argv0: &str) -> bool {
    let subject = if pattern.starts_with('/') {
        argv0
    } else {
        argv0.rsplit('/').next().unwrap_or(argv0)
    };
    match pattern.split_once('*') {
        None => subject == pattern,
        Some((prefix, suffix)) => {
            subject.len() >= prefix.len() + suffix.len()
                && subject.starts_with(prefix)
                && subject.ends_with(suffix)
        }
    }
}

/// Whether process `pid` (argv0 `cmdline`, if readable) is in `scope`.
fn decide(
    scope: &Scope,
    pid: u32,
    cmdline: Option<&str>,
    shard: Option<(u32, u32)>,
    additional_taken: &mut u32,
) -> bool {
    let ipid = i32::try_from(pid).unwrap_or(-1);
    if scope.exclude_pids.contains(&ipid) {
        return false;
    }
    if let Some(c) = cmdline {
        if scope.exclude_cmdlines.iter().any(|p| cmdline_matches(p, c)) {
            return false;
        }
    }
    if let Some((count, chosen)) = shard {
        if pid % count != chosen {
            return false;
        }
    }
    let listed = scope.target_pids.contains(&ipid)
        || cmdline.is_some_and(|c| scope.target_cmdlines.iter().any(|p| cmdline_matches(p, c)));
    if scope.target_pids.is_empty()
        && scope.target_cmdlines.is_empty()
        && scope.additional_cmdline_count == 0
    {
        return true;
    }
    if listed {
        return true;
    }
    if *additional_taken < scope.additional_cmdline_count {
        *additional_taken += 1;
        return true;
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cmdline_patterns_follow_upstreams_glob_rule() {
        assert!(cmdline_matches("echo", "/bin/echo"));
        assert!(cmdline_matches("/bin/e*", "/bin/echo"));
        assert!(!cmdline_matches("/bin/e*", "/usr/bin/echo"));
        assert!(cmdline_matches("ec*o", "/bin/echo"));
        assert!(!cmdline_matches("echo", "/bin/echoes"));
        assert!(cmdline_matches("*", "anything"));
    }

    #[test]
    fn scope_takes_listed_then_additional_and_never_excluded() {
        let scope = Scope {
            target_pids: vec![10],
            exclude_cmdlines: vec!["bad".into()],
            additional_cmdline_count: 1,
            ..Scope::default()
        };
        let mut taken = 0;
        assert!(decide(&scope, 10, Some("/bin/x"), None, &mut taken));
        assert!(!decide(&scope, 11, Some("/usr/bin/bad"), None, &mut taken));
        assert!(
            decide(&scope, 12, Some("/bin/y"), None, &mut taken),
            "the one additional"
        );
        assert!(!decide(&scope, 13, Some("/bin/z"), None, &mut taken));
        let all = Scope::default();
        assert!(decide(&all, 99, None, Some((4, 3)), &mut 0));
        assert!(
            !decide(&all, 98, None, Some((4, 3)), &mut 0),
            "another shard"
        );
    }
}
