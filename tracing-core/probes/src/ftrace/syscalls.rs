//! `FtraceConfig.syscall_events`: record only the named syscalls through
//! `raw_syscalls/sys_enter` and `sys_exit`. The kernel filters them (each
//! event's `filter`: `id == N || ...`, the union of the sessions'), and a
//! session sharing the instance with others keeps only its own ids as its
//! records are translated, as upstream's probes do. Names are upstream's
//! (`sys_read`); numbers are this architecture's (crate `syscalls`).

use std::collections::BTreeSet;
use std::str::FromStr;

/// The number of syscall `name` (`sys_read` or `read`) on this
/// architecture.
pub fn syscall_id(name: &str) -> Option<u32> {
    let bare = name.strip_prefix("sys_").unwrap_or(name);
    ::syscalls::Sysno::from_str(bare)
        .ok()
        .and_then(|s| u32::try_from(s.id()).ok())
}

/// The text for `events/raw_syscalls/sys_{enter,exit}/filter`: `None` for
/// every syscall (`0` clears a filter), else the ids or'ed.
pub fn filter_text(ids: Option<&BTreeSet<u32>>) -> String {
    match ids {
        None => "0".to_owned(),
        Some(ids) if ids.is_empty() => "0".to_owned(),
        Some(ids) => ids
            .iter()
            .map(|id| format!("id == {id}"))
            .collect::<Vec<_>>()
            .join(" || "),
    }
}

/// The kernel filter of the sessions' wishes: `None` (no filter) when one
/// of them records every syscall, else the union of their ids. `wishes`
/// holds one entry per session that records `raw_syscalls`.
pub fn union<'a>(
    wishes: impl IntoIterator<Item = Option<&'a BTreeSet<u32>>>,
) -> Option<BTreeSet<u32>> {
    let mut all = BTreeSet::new();
    for w in wishes {
        all.extend(w?.iter().copied());
    }
    Some(all)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_filters_and_unions() {
        assert!(syscall_id("sys_read").is_some());
        assert_eq!(syscall_id("sys_read"), syscall_id("read"));
        assert_ne!(syscall_id("sys_read"), syscall_id("sys_write"));
        assert_eq!(syscall_id("sys_no_such_call"), None);
        #[cfg(target_arch = "x86_64")]
        assert_eq!(
            (syscall_id("sys_read"), syscall_id("sys_getppid")),
            (Some(0), Some(110))
        );
        let a: BTreeSet<u32> = [3, 1].into();
        let b: BTreeSet<u32> = [2].into();
        assert_eq!(filter_text(Some(&a)), "id == 1 || id == 3");
        assert_eq!(filter_text(None), "0");
        assert_eq!(union([Some(&a), Some(&b)]), Some([1, 2, 3].into()));
        assert_eq!(union([Some(&a), None]), None);
    }
}
