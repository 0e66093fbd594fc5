//! One line of ftrace's text output (what `atrace`, `trace-cmd report` and
//! systrace write) split into its parts as Perfetto splits it:
//! `<task>-<pid> (<tgid>) [<cpu>] <flags> <seconds>: <event>: <args>`,
//! the tgid and the flags being optional and the task name holding any
//! character (so the line is matched from the first `-<pid>` after which
//! the rest fits, as upstream's regular expression matches it).

/// A line's parts.
#[derive(Debug, Clone, PartialEq)]
pub struct SystraceLine {
    /// The task (thread) name.
    pub task: String,
    /// The thread id.
    pub pid: u32,
    /// The tgid as written (empty when absent, dashes when unknown).
    pub tgid: String,
    /// The CPU.
    pub cpu: u32,
    /// Time, ns.
    pub ts: i64,
    /// The event's name (`sched_switch`, `tracing_mark_write`, ...).
    pub event: String,
    /// What follows the event's name, trimmed.
    pub args: String,
}

fn digits(b: &[u8], mut i: usize) -> usize {
    while b.get(i).is_some_and(u8::is_ascii_digit) {
        i += 1;
    }
    i
}

fn spaces(b: &[u8], mut i: usize) -> usize {
    while b.get(i).is_some_and(|c| c.is_ascii_whitespace()) {
        i += 1;
    }
    i
}

/// `\d+\.\d+` at `i`: its end.
fn seconds(b: &[u8], i: usize) -> Option<usize> {
    let int_end = digits(b, i);
    if int_end == i || b.get(int_end) != Some(&b'.') {
        return None;
    }
    let frac_end = digits(b, int_end + 1);
    (frac_end > int_end + 1).then_some(frac_end)
}

/// The irq/preempt flags (three of `[a-zA-Z.]`, then one or two of
/// `[0-9a-f.]`, then spaces) at `i`: the ends to try, longest first.
fn flag_ends(b: &[u8], i: usize) -> Vec<usize> {
    let first = |c: u8| c.is_ascii_alphabetic() || c == b'.';
    let second = |c: u8| c.is_ascii_digit() || (b'a'..=b'f').contains(&c) || c == b'.';
    if !(0..3).all(|k| b.get(i + k).copied().is_some_and(first)) {
        return Vec::new();
    }
    let mut out = Vec::new();
    for n in [2usize, 1] {
        if (0..n).all(|k| b.get(i + 3 + k).copied().is_some_and(second)) {
            out.push(spaces(b, i + 3 + n));
        }
    }
    out
}

/// What follows the time at `i`: `:\s+(\S+):`; the event's span and the
/// end of the match.
fn event_at(b: &[u8], i: usize) -> Option<(usize, usize, usize)> {
    if b.get(i) != Some(&b':') {
        return None;
    }
    let start = i + 1;
    let ev = spaces(b, start);
    if ev == start {
        return None;
    }
    let mut run_end = ev;
    while b.get(run_end).is_some_and(|c| !c.is_ascii_whitespace()) {
        run_end += 1;
    }
    // The longest run of non-space bytes followed by ':'.
    let colon = (ev + 1..run_end).rev().find(|&k| b.get(k) == Some(&b':'))?;
    Some((ev, colon, colon + 1))
}

/// The match at the `-` at `dash`: (pid, tgid span, cpu, ts span, event
/// span, end).
#[allow(clippy::type_complexity)]
fn match_at(
    b: &[u8],
    dash: usize,
) -> Option<(
    usize,
    (usize, usize),
    usize,
    (usize, usize),
    (usize, usize),
    usize,
)> {
    let pid_start = dash + 1;
    let pid_end = digits(b, pid_start);
    if pid_end == pid_start {
        return None;
    }
    let mut i = spaces(b, pid_end);
    if i == pid_end {
        return None;
    }
    if b.get(i) == Some(&b'(') {
        i += 1;
    }
    i = spaces(b, i);
    let tgid_start = i;
    if b.get(i).is_some_and(u8::is_ascii_digit) {
        i = digits(b, i);
    } else {
        while b.get(i) == Some(&b'-') {
            i += 1;
        }
    }
    let tgid = (tgid_start, i);
    if b.get(i) == Some(&b')') {
        i += 1;
    }
    // One optional space, then '[': try with and without it.
    let mut cpu_open = None;
    for j in [
        i + usize::from(b.get(i).is_some_and(u8::is_ascii_whitespace)),
        i,
    ] {
        if b.get(j) == Some(&b'[') {
            cpu_open = Some(j);
            break;
        }
    }
    let open = cpu_open?;
    let cpu_end = digits(b, open + 1);
    if cpu_end == open + 1 || b.get(cpu_end) != Some(&b']') {
        return None;
    }
    let cpu = (open + 1, cpu_end);
    let after = spaces(b, cpu_end + 1);
    let mut starts = flag_ends(b, after);
    starts.push(after);
    for ts_start in starts {
        let Some(ts_end) = seconds(b, ts_start) else {
            continue;
        };
        if let Some((ev_start, ev_end, end)) = event_at(b, ts_end) {
            let _ = cpu;
            return Some((
                pid_start,
                tgid,
                open + 1,
                (ts_start, ts_end),
                (ev_start, ev_end),
                end,
            ));
        }
    }
    None
}

/// Splits a line; None when it is not an ftrace event line.
pub fn tokenize(line: &str) -> Option<SystraceLine> {
    let b = line.as_bytes();
    let (dash, m) = (0..b.len())
        .filter(|&i| b.get(i) == Some(&b'-'))
        .find_map(|i| match_at(b, i).map(|m| (i, m)))?;
    let (pid_start, tgid, cpu_start, ts, ev, end) = m;
    let text = |s: usize, e: usize| line.get(s..e).unwrap_or("");
    let pid: u32 = text(pid_start, digits(b, pid_start)).parse().ok()?;
    let cpu: u32 = text(cpu_start, digits(b, cpu_start)).parse().ok()?;
    let secs: f64 = text(ts.0, ts.1).parse().ok()?;
    Some(SystraceLine {
        task: text(0, dash).trim().to_owned(),
        pid,
        tgid: text(tgid.0, tgid.1).to_owned(),
        cpu,
        ts: (secs * 1e9) as i64,
        event: text(ev.0, ev.1).to_owned(),
        args: line.get(end..).unwrap_or("").trim().to_owned(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_with_and_without_tgid_and_flags() {
        let l = tokenize(
            "kworker/u16:1-77    (   77) [004] ....   316.196720: 0: B|77|__scm_call_armv8_64|0",
        )
        .unwrap();
        assert_eq!(
            (l.task.as_str(), l.pid, l.tgid.as_str(), l.cpu),
            ("kworker/u16:1", 77, "77", 4)
        );
        assert_eq!(l.ts, 316_196_720_000);
        assert_eq!(
            (l.event.as_str(), l.args.as_str()),
            ("0", "B|77|__scm_call_armv8_64|0")
        );
        let l = tokenize("<idle>-0     [000] ...2     0.002188: task_newtask: pid=1 comm=init")
            .unwrap();
        assert_eq!((l.task.as_str(), l.pid, l.tgid.as_str()), ("<idle>", 0, ""));
        assert_eq!(l.event, "task_newtask");
        let l = tokenize("a-b-c-12 (-----) [001]  5.5: sched_switch: prev_comm=x").unwrap();
        assert_eq!(
            (l.task.as_str(), l.pid, l.tgid.as_str()),
            ("a-b-c", 12, "-----")
        );
        assert_eq!(l.ts, 5_500_000_000);
        assert!(tokenize("not a line").is_none());
    }
}
