//! The first line of a sample in `perf script` text (and simpleperf's
//! text, which puts tabs after the command name): the command name, the
//! thread (`tid` or `pid/tid`), optionally its CPU as `[cpu]`, then the
//! time in seconds with exactly six decimals and a colon; what follows the
//! colon (period, event name, ...) is not read. `perf script`'s output is
//! configurable, so the line is read as upstream reads it: every colon is
//! tried, left to right, until the text before it ends in such a time and
//! what precedes the time reads as a thread. The same reading tells the
//! format: a first line that reads as a sample line is `perf script` text.

/// What a sample line says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SampleLine {
    /// The command name (empty when the line has none).
    pub comm: String,
    /// The process id, when the line gives `pid/tid`.
    pub pid: Option<u32>,
    /// The thread id.
    pub tid: u32,
    /// The CPU, when the line gives `[cpu]`.
    pub cpu: Option<u32>,
    /// The time in ns.
    pub ts: i64,
}

/// Where the time `text` ends in starts (`<space>digits.dddddd`: the
/// index after its space). The digits before the dot are scanned back to
/// the space, and the space must be right before them; a line's colons
/// each look at a digit run of their own, so trying them all is linear.
fn time_at_end(text: &[u8]) -> Option<usize> {
    let n = text.len();
    if n < 8 {
        return None;
    }
    let (frac, dot) = (text.get(n - 6..)?, *text.get(n - 7)?);
    if dot != b'.' || !frac.iter().all(u8::is_ascii_digit) {
        return None;
    }
    let whole = text.get(..n - 7)?;
    let digits = whole
        .iter()
        .rev()
        .take_while(|b| b.is_ascii_digit())
        .count();
    let start = whole.len() - digits;
    (start > 0 && whole.get(start - 1) == Some(&b' ')).then_some(start)
}

/// Seconds with a fraction as ns, computed as upstream does (the seconds
/// as a double, times 1000 three times, truncated).
fn seconds_to_ns(s: &[u8]) -> Option<i64> {
    let secs: f64 = std::str::from_utf8(s).ok()?.parse().ok()?;
    let ns = secs * 1000.0 * 1000.0 * 1000.0;
    ns.is_finite().then_some(ns as i64)
}

/// Reads a sample line, or None when it is none.
pub fn parse(line: &str) -> Option<SampleLine> {
    let b = line.as_bytes();
    b.iter()
        .enumerate()
        .filter(|(_, c)| **c == b':')
        .find_map(|(colon, _)| parse_before(line, colon))
}

/// Whether a byte separates the words before the time (simpleperf puts
/// tabs where perf puts spaces).
fn is_gap(b: u8) -> bool {
    b == b' ' || b == b'\t'
}

/// The last word of `text[..end]`: (its start, the word).
fn last_word(text: &[u8], end: usize) -> Option<(usize, &[u8])> {
    let before = text.get(..end)?;
    let stop = before.iter().rposition(|&b| !is_gap(b))? + 1;
    let start = before
        .get(..stop)?
        .iter()
        .rposition(|&b| is_gap(b))
        .map_or(0, |i| i + 1);
    Some((start, before.get(start..stop)?))
}

/// A decimal u32 of digits alone.
fn decimal_u32(s: &[u8]) -> Option<u32> {
    if s.is_empty() || !s.iter().all(u8::is_ascii_digit) {
        return None;
    }
    std::str::from_utf8(s).ok()?.parse().ok()
}

/// Reads the sample line's text before the colon at `colon`: None unless
/// it ends in a time and a thread precedes it. Words are read back from
/// the time, so a colon that fails costs only the words it looks at.
fn parse_before(line: &str, colon: usize) -> Option<SampleLine> {
    let b = line.as_bytes();
    let text = b.get(..colon)?;
    let ts_start = time_at_end(text)?;
    let ts = seconds_to_ns(text.get(ts_start..)?)?;
    let (mut at, mut word) = last_word(b, ts_start)?;
    let mut cpu = None;
    if word.len() >= 2 && word.first() == Some(&b'[') && word.last() == Some(&b']') {
        // A CPU alone, with no thread before it, is no sample line.
        cpu = Some(decimal_u32(word.get(1..word.len() - 1)?)?);
        (at, word) = last_word(b, at)?;
    }
    let mut ids = word.split(|&c| c == b'/').filter(|p| !p.is_empty());
    let (first, second, third) = (ids.next(), ids.next(), ids.next());
    let (pid, tid) = match (first, second, third) {
        (Some(tid), None, None) => (None, decimal_u32(tid)?),
        (Some(pid), Some(tid), None) => (Some(decimal_u32(pid)?), decimal_u32(tid)?),
        _ => return None,
    };
    let comm = line
        .get(..at)?
        .split([' ', '\t'])
        .filter(|w| !w.is_empty())
        .collect::<Vec<_>>()
        .join(" ");
    Some(SampleLine {
        comm,
        pid,
        tid,
        cpu,
        ts,
    })
}

/// Whether `head` opens `perf script` text: its first line, which must be
/// ended, reads as a sample line.
pub fn sniff(head: &[u8]) -> bool {
    let Some(nl) = head.iter().position(|&b| b == b'\n') else {
        return false;
    };
    let first = String::from_utf8_lossy(head.get(..nl).unwrap_or(&[]));
    parse(&first).is_some()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn perfs_line_with_pid_tid_and_cpu() {
        let s = parse("  trace_processor 3962131/3962132 [003] 303057.417513:   1 cycles/Pu:")
            .expect("a sample line");
        assert_eq!(s.comm, "trace_processor");
        assert_eq!((s.pid, s.tid, s.cpu), (Some(3962131), 3962132, Some(3)));
        assert_eq!(s.ts, 303_057_417_513_000);
    }

    #[test]
    fn a_command_of_several_words_and_a_tid_alone() {
        let s = parse("Chrome_IO thread 42 10.000001: 250000 cpu-clock:").expect("a sample line");
        assert_eq!(s.comm, "Chrome_IO thread");
        assert_eq!((s.pid, s.tid, s.cpu), (None, 42, None));
        // Truncated as upstream truncates the double.
        assert_eq!(s.ts, 10_000_000_999);
    }

    #[test]
    fn simpleperfs_tabs_and_no_command() {
        let s = parse("app_process64\t1234/1240 [1] 5.123456: 1 cpu-clock:u").expect("a sample");
        assert_eq!(s.comm, "app_process64");
        assert_eq!((s.pid, s.tid, s.cpu), (Some(1234), 1240, Some(1)));
        let s = parse("7 1.000000:").expect("a sample");
        assert_eq!((s.comm.as_str(), s.tid), ("", 7));
    }

    #[test]
    fn a_later_colon_is_tried_when_an_earlier_one_does_not_read() {
        let s = parse("a:b 9 2.500000: x").expect("a sample");
        assert_eq!((s.comm.as_str(), s.tid, s.ts), ("a:b", 9, 2_500_000_000));
    }

    #[test]
    fn lines_that_are_no_sample_line() {
        for l in [
            "",
            "\t    7f0c1 main+0x10 (/bin/true)",
            "perf 12 1.12345:",           // five decimals
            "perf 12 1.1234567:",         // seven decimals
            "perf [3] 1.123456:",         // a CPU but no thread
            "[3] 1.123456:",              // a CPU alone
            "perf 1/2/3 1.123456:",       // three ids
            "perf x12 1.123456:",         // not a number
            "perf 12 [x] 1.123456:",      // a CPU that is no number
            "perf 99999999999 1.123456:", // past u32
            "1.123456:",                  // no space before the time
            "perf 12 1.123456",           // no colon
        ] {
            assert_eq!(parse(l), None, "{l:?}");
        }
    }

    #[test]
    fn a_line_of_many_colons_is_read_in_linear_time() {
        // Each colon follows something like a time that fails as a
        // sample: every colon is tried, none rescans the line.
        let line = "x 1.000000:".repeat(20_000);
        assert_eq!(parse(&line), None);
        let line = format!("{}comm 5 1.000000:", "1.000000:".repeat(20_000));
        assert_eq!(parse(&line).map(|s| s.tid), Some(5));
    }

    #[test]
    fn the_format_is_told_by_a_whole_first_line() {
        assert!(sniff(b"perf 12 1.123456: 1 cycles:\n\tffff x (y)\n"));
        assert!(!sniff(b"perf 12 1.123456: 1 cycles:"));
        assert!(!sniff(b"# tracer: nop\n"));
    }
}
