//! A `sched_switch` `prev_state` (the kernel's task state bits, whose
//! layout changed across kernel versions) as the text Perfetto writes in
//! `thread_state.state` and `sched_slice.end_state`: `R`, `R+` (preempted),
//! `S`, `D`, `T`, ... joined, or None for bits no kernel reports.
//!
//! Bits up to 0x20 (`EXIT_ZOMBIE`) mean the same on every kernel. From 4.14
//! on the kernel reports 0x40 parked, 0x80 idle (uninterruptible without
//! load) and 0x100 preempted; before it, 0x40 dead, 0x80 wakekill, 0x100
//! waking, 0x200 parked, 0x400 noload, and preemption at 0x1000 (4.8 to
//! 4.14) or 0x800 (older). Without a known kernel version the older layout
//! (4.4) is assumed, as upstream does for traces that do not say.

/// A kernel version (major, minor).
pub type KernelVersion = (u32, u32);

/// The version assumed when the trace names none.
const DEFAULT_VERSION: KernelVersion = (4, 4);

// The decoded flags (one bit each, in the order their letters print).
const SLEEPING: u32 = 0x1;
const DISK_SLEEP: u32 = 0x2;
const STOPPED: u32 = 0x4;
const TRACED: u32 = 0x8;
const EXIT_DEAD: u32 = 0x10;
const EXIT_ZOMBIE: u32 = 0x20;
const PARKED: u32 = 0x40;
const TASK_DEAD: u32 = 0x80;
const WAKE_KILL: u32 = 0x100;
const WAKING: u32 = 0x200;
const NO_LOAD: u32 = 0x400;
const IDLE: u32 = 0x4000;
const PREEMPTED: u32 = 0x8000;

/// The letters of each flag, in print order.
const LETTERS: [(u32, char); 12] = [
    (SLEEPING, 'S'),
    (DISK_SLEEP, 'D'),
    (STOPPED, 'T'),
    (TRACED, 't'),
    (EXIT_DEAD, 'X'),
    (EXIT_ZOMBIE, 'Z'),
    (PARKED, 'P'),
    (TASK_DEAD, 'x'),
    (WAKE_KILL, 'K'),
    (WAKING, 'W'),
    (NO_LOAD, 'N'),
    (IDLE, 'I'),
];

/// Decodes `prev_state` into flags; None when invalid for the version.
fn decode(raw: i64, version: Option<KernelVersion>) -> Option<u32> {
    // Upstream reads the state as 16 bits.
    let raw = (raw as u64 & 0xffff) as u32;
    let version = version.unwrap_or(DEFAULT_VERSION);
    let mut flags = raw & 0x3f;
    if version >= (4, 14) {
        for (bit, flag) in [(0x40, PARKED), (0x80, IDLE), (0x100, PREEMPTED)] {
            if raw & bit != 0 {
                flags |= flag;
            }
        }
        return (raw & 0xfe00 == 0).then_some(flags);
    }
    for (bit, flag) in [
        (0x40, TASK_DEAD),
        (0x80, WAKE_KILL),
        (0x100, WAKING),
        (0x200, PARKED),
        (0x400, NO_LOAD),
    ] {
        if raw & bit != 0 {
            flags |= flag;
        }
    }
    if flags == DISK_SLEEP | NO_LOAD {
        flags = IDLE;
    }
    let preempt_bit = if version >= (4, 8) { 0x1000 } else { 0x800 };
    if raw & preempt_bit != 0 {
        flags |= PREEMPTED;
    }
    Some(flags)
}

/// The text of a `prev_state`, or None when the bits are invalid (upstream
/// then stores NULL and counts `task_state_invalid`).
pub fn task_state_text(raw: i64, version: Option<KernelVersion>) -> Option<String> {
    task_state_text_sep(raw, version, None)
}

/// [`task_state_text`] with the letters of a blocked state joined by
/// `sep` (`S|K`, as `to_ftrace` prints them).
pub fn task_state_text_sep(
    raw: i64,
    version: Option<KernelVersion>,
    sep: impl Into<Option<char>>,
) -> Option<String> {
    let sep = sep.into();
    let flags = decode(raw, version)?;
    if flags & !PREEMPTED == 0 {
        return Some(if flags & PREEMPTED != 0 { "R+" } else { "R" }.to_string());
    }
    let mut out = String::new();
    for (_, c) in LETTERS.iter().filter(|(f, _)| flags & f != 0) {
        if let (Some(s), false) = (sep, out.is_empty()) {
            out.push(s);
        }
        out.push(*c);
    }
    // Upstream's text holds at most three characters.
    Some(out.chars().take(3).collect())
}

/// The kernel version of a `utsname` as upstream reads it: only for
/// `Linux`, the release's first two dot-separated numbers
/// (`6.18.44-fc` → (6, 18)); None when either is not a plain number.
pub fn kernel_version(sysname: &str, release: &str) -> Option<KernelVersion> {
    if sysname != "Linux" {
        return None;
    }
    let mut parts = release.splitn(3, '.');
    let number = |s: Option<&str>| -> Option<u32> {
        let s = s?;
        if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        s.parse().ok()
    };
    Some((number(parts.next())?, number(parts.next())?))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn old_layout_by_default() {
        assert_eq!(task_state_text(0, None).as_deref(), Some("R"));
        assert_eq!(task_state_text(1, None).as_deref(), Some("S"));
        assert_eq!(task_state_text(2, None).as_deref(), Some("D"));
        assert_eq!(task_state_text(0x800, None).as_deref(), Some("R+"));
        assert_eq!(task_state_text(0x402, None).as_deref(), Some("I"));
        assert_eq!(task_state_text(0x100, None).as_deref(), Some("W"));
        assert_eq!(task_state_text(0x82, None).as_deref(), Some("DK"));
    }

    #[test]
    fn new_layout_from_4_14() {
        let v = Some((6, 1));
        assert_eq!(task_state_text(0x100, v).as_deref(), Some("R+"));
        assert_eq!(task_state_text(0x80, v).as_deref(), Some("I"));
        assert_eq!(task_state_text(0x40, v).as_deref(), Some("P"));
        assert_eq!(task_state_text(0x201, v), None);
        assert_eq!(task_state_text(0x1000, Some((4, 9))).as_deref(), Some("R+"));
    }

    #[test]
    fn releases() {
        assert_eq!(kernel_version("Linux", "6.1.0-13-amd64"), Some((6, 1)));
        assert_eq!(kernel_version("Linux", "4.14"), Some((4, 14)));
        assert_eq!(kernel_version("Linux", "6.1-rc1"), None);
        assert_eq!(kernel_version("Darwin", "6.1.0"), None);
        assert_eq!(kernel_version("Linux", "x"), None);
    }

    #[test]
    fn separated_letters() {
        assert_eq!(task_state_text_sep(0x81, None, '|').as_deref(), Some("S|K"));
        assert_eq!(task_state_text_sep(0x800, None, '|').as_deref(), Some("R+"));
        assert_eq!(task_state_text_sep(0x2, None, '|').as_deref(), Some("D"));
    }
}
