//! One line of `strace -f -ttt` output split into what it says: the
//! thread (`-f`'s leading pid), the time (`-ttt`: Unix seconds with an
//! optional fraction in microseconds), the syscall, its argument text and
//! its return value, and whether the line is a whole call, the start of
//! an interrupted one (`<unfinished ...>`), its end (`<... name
//! resumed>`), or both. Lines that are no syscall (signals, exit banners,
//! anything else) read as nothing; `-t`/`-tt` times of day are told apart
//! so that they can be counted as such.

/// What a syscall line does to its thread's slices.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A whole call: an instant slice.
    Complete,
    /// A call interrupted before it returned: a slice opens.
    Unfinished,
    /// The return of an interrupted call: the open slice ends.
    Resumed,
    /// A resumed call interrupted again: the open slice ends, another
    /// opens.
    ResumedThenUnfinished,
}

/// A syscall line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StraceLine<'a> {
    /// Unix time in ns.
    pub ts: i64,
    /// The pid `strace -f` puts first, if any.
    pub pid: Option<u32>,
    /// The syscall's name (for a resumed line, the name in its marker).
    pub syscall: &'a str,
    /// The argument text (empty when there is none).
    pub args: &'a str,
    /// The text after `=` of a call that returned.
    pub ret: Option<&'a str>,
    /// What the line does.
    pub kind: Kind,
}

/// Why a line is no syscall line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Rejected {
    /// Not a syscall line at all.
    NotSyscall,
    /// A syscall line with a `-t`/`-tt` time of day, which has no date.
    TimeOfDay,
}

const NS_PER_S: i64 = 1_000_000_000;

fn trim(s: &str) -> &str {
    s.trim_matches(|c: char| c.is_ascii_whitespace() || c == '\x0b')
}

fn digits(s: &str) -> Option<i64> {
    if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    s.parse::<i64>().ok()
}

/// `-ttt`'s time: whole seconds, then optionally `.` and microseconds
/// (however many digits are printed, the number counts microseconds).
fn epoch_ns(tok: &str) -> Option<i64> {
    let (whole, frac) = match tok.split_once('.') {
        Some((w, f)) => (w, Some(f)),
        None => (tok, None),
    };
    let mut ns = digits(whole)?.checked_mul(NS_PER_S)?;
    if let Some(frac) = frac.filter(|f| !f.is_empty()) {
        let us = digits(frac).filter(|us| *us <= 999_999)?;
        ns = ns.checked_add(us * 1000)?;
    }
    Some(ns)
}

/// Reads one line (without or with its line break).
pub fn parse(line: &str) -> Result<StraceLine<'_>, Rejected> {
    use Rejected::NotSyscall;
    let mut rest = trim(line);
    if rest.is_empty() || rest.starts_with('-') || rest.starts_with('+') {
        return Err(NotSyscall);
    }
    // A leading run of fewer than 10 digits is `-f`'s pid; ten digits or
    // more are the time itself (Unix seconds have ten digits until 2286,
    // pids at most seven).
    let mut pid = None;
    if let Some((head, tail)) = rest.split_once(' ') {
        if !head.is_empty() && head.len() < 10 && head.bytes().all(|b| b.is_ascii_digit()) {
            pid = Some(head.parse::<u32>().map_err(|_| NotSyscall)?);
            rest = trim(tail);
        }
    }
    let (tok, tail) = rest.split_once(' ').ok_or(NotSyscall)?;
    let Some(ts) = epoch_ns(tok) else {
        return Err(if tok.contains(':') {
            Rejected::TimeOfDay
        } else {
            NotSyscall
        });
    };
    rest = trim(tail);
    if rest.is_empty() {
        return Err(NotSyscall);
    }
    let resumed;
    let syscall;
    if let Some(marked) = rest.strip_prefix("<... ") {
        let (name, tail) = marked.split_once(" resumed>").ok_or(NotSyscall)?;
        syscall = name;
        resumed = true;
        rest = trim(tail);
    } else {
        let (name, tail) = rest.split_once('(').ok_or(NotSyscall)?;
        syscall = name;
        resumed = false;
        rest = tail;
    }
    if let Some((args, _)) = rest.split_once("<unfinished ...>") {
        let args = trim(args).trim_end_matches(',');
        let kind = if resumed {
            Kind::ResumedThenUnfinished
        } else {
            Kind::Unfinished
        };
        return Ok(StraceLine {
            ts,
            pid,
            syscall,
            args,
            ret: None,
            kind,
        });
    }
    let kind = if resumed {
        Kind::Resumed
    } else {
        Kind::Complete
    };
    // The call's own closing parenthesis is the first one followed by
    // blanks and `=` (the return value may hold parentheses too, and the
    // `=` column is padded).
    let close = rest.match_indices(')').map(|(i, _)| i).find(|&i| {
        rest.get(i + 1..)
            .map(|t| t.trim_start_matches(|c: char| c.is_ascii_whitespace() || c == '\x0b'))
            .is_some_and(|t| t.starts_with('='))
    });
    let (args, after) = match close {
        Some(i) => (
            trim(rest.get(..i).unwrap_or("")),
            rest.get(i + 1..).unwrap_or(""),
        ),
        // A resumed call with nothing left of its arguments.
        None => ("", rest),
    };
    let (_, ret) = after.split_once('=').ok_or(NotSyscall)?;
    Ok(StraceLine {
        ts,
        pid,
        syscall,
        args,
        ret: Some(trim(ret)),
        kind,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn whole_calls_read_with_their_thread_time_args_and_return_value() {
        let l = parse("1234 1700000000.000250 openat(AT_FDCWD, \"/x\", O_RDONLY) = 3\n").unwrap();
        assert_eq!(l.pid, Some(1234));
        assert_eq!(l.ts, 1_700_000_000_000_250_000);
        assert_eq!(l.syscall, "openat");
        assert_eq!(l.args, "AT_FDCWD, \"/x\", O_RDONLY");
        assert_eq!(l.ret, Some("3"));
        assert_eq!(l.kind, Kind::Complete);
        let l = parse(
            "1700000000 connect(3, {sa_family=AF_INET}, 16) = -1 ECONNREFUSED (Connection refused)",
        )
        .unwrap();
        assert_eq!((l.pid, l.ts), (None, 1_700_000_000 * NS_PER_S));
        assert_eq!(l.args, "3, {sa_family=AF_INET}, 16");
        assert_eq!(l.ret, Some("-1 ECONNREFUSED (Connection refused)"));
        let l = parse("7 1.5 close(2)        = 0").unwrap();
        assert_eq!((l.ts, l.args, l.ret), (NS_PER_S + 5_000, "2", Some("0")));
    }

    #[test]
    fn interrupted_calls_are_told_apart() {
        let l = parse("5 1.000000 read(3,  <unfinished ...>").unwrap();
        assert_eq!((l.kind, l.args, l.ret), (Kind::Unfinished, "3", None));
        let l = parse("5 1.000500 <... futex resumed>)  = 0").unwrap();
        assert_eq!(
            (l.kind, l.syscall, l.args, l.ret),
            (Kind::Resumed, "futex", "", Some("0"))
        );
        let l = parse("5 1.000500 <... epoll_wait resumed>[], 1, 10 <unfinished ...>").unwrap();
        assert_eq!(
            (l.kind, l.syscall),
            (Kind::ResumedThenUnfinished, "epoll_wait")
        );
    }

    #[test]
    fn other_lines_are_rejected_and_times_of_day_named() {
        for l in [
            "",
            "   ",
            "--- SIGCHLD {si_signo=SIGCHLD} ---",
            "+++ exited with 0 +++",
            "openat(AT_FDCWD) = 3",
            "-5 read(3) = 3",
            "1234 -5 read(3) = 3",
            "99999999999999999999 read(3) = 3",
            "1700000000.99999999999 read(3) = 3",
            "1700000000.-12 read(3) = 3",
            "1700000000.1 nothing here",
        ] {
            assert_eq!(parse(l), Err(Rejected::NotSyscall), "{l:?}");
        }
        assert_eq!(parse("14:32:01 read(3) = 3"), Err(Rejected::TimeOfDay));
        assert_eq!(
            parse("9 14:32:01.123456 read(3) = 3"),
            Err(Rejected::TimeOfDay)
        );
    }
}
