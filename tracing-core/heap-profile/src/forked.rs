//! What a process forked off the profiled program (the helper, its
//! guardian) needs to live beside it: the program's standard input and
//! output put away, only its own descriptors kept, the program's going
//! seen (a pidfd, and a pipe the program holds), and short tries at the
//! service so that waiting for one never hides the program's exit.

use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::time::Duration;

/// How long one attempt to reach the service may take (with no service,
/// the helper and its guardian try again each second, and between tries
/// see the program go: they must not outlive it by a long connect).
pub(super) const CONNECT_TRY: Duration = Duration::from_millis(200);

/// Whether the program exited (its pidfd is readable) or exec'd (the pipe
/// it held closed), waiting at most `wait`.
pub(super) fn program_gone(pidfd: Option<&OwnedFd>, pipe: &OwnedFd, wait: Duration) -> bool {
    use rustix::event::{PollFd, PollFlags, poll};
    let mut fds = vec![PollFd::new(pipe, PollFlags::IN | PollFlags::HUP)];
    if let Some(p) = pidfd {
        fds.push(PollFd::new(p, PollFlags::IN));
    }
    let timeout = rustix::time::Timespec {
        tv_sec: 0,
        tv_nsec: wait.subsec_nanos().into(),
    };
    match poll(&mut fds, Some(&timeout)) {
        Ok(n) => n > 0,
        Err(rustix::io::Errno::INTR) => false,
        Err(_) => true,
    }
}

/// Moves `fds` to descriptors 3, 4, ... in order, and closes every other
/// descriptor above stderr the program had open: the helper and its
/// guardian hold none of its files. (Where a move fails, all stay where
/// they are, and so do the others.)
pub(super) fn keep_only<const N: usize>(fds: [OwnedFd; N]) -> [OwnedFd; N] {
    // Out of the way first, so that no move closes another.
    let high: Vec<OwnedFd> = fds.iter().filter_map(|fd| dup_above(fd, 10)).collect();
    let Ok(high) = <[OwnedFd; N]>::try_from(high) else {
        return fds;
    };
    drop(fds);
    let kept: Vec<OwnedFd> = (0..N)
        .filter_map(|i| dup_onto(&high[i], 3 + i as i32))
        .collect();
    let Ok(kept) = <[OwnedFd; N]>::try_from(kept) else {
        return high;
    };
    drop(high);
    // SAFETY: closes the descriptors above the kept ones, none of which
    // this process's own code holds yet.
    unsafe { libc::syscall(libc::SYS_close_range, 3 + N as u32, u32::MAX, 0u32) };
    kept
}

/// A close-on-exec copy of `fd` at `min` or above.
fn dup_above(fd: &OwnedFd, min: i32) -> Option<OwnedFd> {
    // SAFETY: duplicates a descriptor we own; the copy is new.
    let r = unsafe { libc::fcntl(fd.as_raw_fd(), libc::F_DUPFD_CLOEXEC, min) };
    // SAFETY: fcntl just made descriptor `r` ours.
    (r >= 0).then(|| unsafe { OwnedFd::from_raw_fd(r) })
}

/// A close-on-exec copy of `fd` at descriptor `target` (closing whatever
/// the program had there: the helper keeps none of its files).
fn dup_onto(fd: &OwnedFd, target: i32) -> Option<OwnedFd> {
    // SAFETY: duplicates a descriptor we own onto `target`.
    let r = unsafe { libc::dup3(fd.as_raw_fd(), target, libc::O_CLOEXEC) };
    // SAFETY: dup3 just made descriptor `target` ours.
    (r == target).then(|| unsafe { OwnedFd::from_raw_fd(target) })
}

pub(super) fn quiet_stdio() {
    // SAFETY: opens /dev/null and moves it over stdin and stdout (the
    // program's output is not the helper's); stderr stays for messages.
    unsafe {
        let null = libc::open(c"/dev/null".as_ptr(), libc::O_RDWR);
        if null >= 0 {
            libc::dup2(null, 0);
            libc::dup2(null, 1);
            if null > 2 {
                libc::close(null);
            }
        }
    }
}
