//! The names the UI shows for this process's tracks: a thread track's
//! `thread_name` and the process track's `process_name`, read from the
//! system as Perfetto's SDK reads them, so a trace shows `worker-3` and
//! the program's name instead of bare ids.
//!
//! A thread is named by its Rust name (`std::thread::Builder::name`, or
//! `main`), else on Linux by the kernel's `comm` of the thread
//! (`/proc/self/task/TID/comm`, which also names threads that C code or
//! `prctl` named). The process is named by the first element of
//! `/proc/self/cmdline` (what Perfetto's SDK writes), else by its `comm`;
//! outside Linux by `argv[0]`. Every read is bounded: these files are the
//! kernel's, but a name longer than a track name needs is cut, never
//! trusted to be short.

/// The most bytes of `/proc/self/cmdline` read for the process name (its
/// first element; the rest are arguments).
#[cfg(target_os = "linux")]
const CMDLINE_LIMIT: u64 = 4096;

/// The most bytes of a `comm` file read: the kernel keeps 16 (15 and the
/// NUL), newer kernels up to 64 for some threads.
#[cfg(target_os = "linux")]
const COMM_LIMIT: u64 = 64;

/// Reads at most `limit` bytes of `path`.
#[cfg(target_os = "linux")]
fn read_bounded(path: &str, limit: u64) -> Option<Vec<u8>> {
    use std::io::Read;
    let mut out = Vec::new();
    std::fs::File::open(path)
        .ok()?
        .take(limit)
        .read_to_end(&mut out)
        .ok()?;
    Some(out)
}

/// A `comm` file's content as a name: up to the first newline or NUL,
/// trimmed, `None` when empty.
#[cfg_attr(not(target_os = "linux"), allow(dead_code))]
pub(crate) fn parse_comm(raw: &[u8]) -> Option<String> {
    let end = raw
        .iter()
        .position(|&b| b == b'\n' || b == 0)
        .unwrap_or(raw.len());
    let name = String::from_utf8_lossy(&raw[..end]);
    let name = name.trim();
    (!name.is_empty()).then(|| name.to_owned())
}

/// The first element of a `cmdline` file (NUL-separated arguments), `None`
/// when empty.
#[cfg_attr(not(target_os = "linux"), allow(dead_code))]
pub(crate) fn parse_cmdline(raw: &[u8]) -> Option<String> {
    let end = raw.iter().position(|&b| b == 0).unwrap_or(raw.len());
    let name = String::from_utf8_lossy(&raw[..end]);
    (!name.is_empty()).then(|| name.into_owned())
}

/// The calling thread's name: its Rust name, else (Linux) the kernel's
/// `comm` for thread `tid`. Looked up once per thread by the backend.
pub(crate) fn current_thread_name(tid: i64) -> Option<String> {
    if let Some(n) = std::thread::current().name()
        && !n.is_empty()
    {
        return Some(n.to_owned());
    }
    #[cfg(target_os = "linux")]
    {
        let raw = read_bounded(&format!("/proc/self/task/{tid}/comm"), COMM_LIMIT)?;
        parse_comm(&raw)
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = tid;
        None
    }
}

/// This process's name: the first element of `/proc/self/cmdline`, else
/// its `comm` (Linux); `argv[0]` elsewhere.
pub(crate) fn current_process_name() -> Option<String> {
    #[cfg(target_os = "linux")]
    {
        read_bounded("/proc/self/cmdline", CMDLINE_LIMIT)
            .and_then(|raw| parse_cmdline(&raw))
            .or_else(|| {
                read_bounded("/proc/self/comm", COMM_LIMIT).and_then(|raw| parse_comm(&raw))
            })
    }
    #[cfg(not(target_os = "linux"))]
    {
        std::env::args_os()
            .next()
            .map(|a| a.to_string_lossy().into_owned())
            .filter(|a| !a.is_empty())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn comm_stops_at_newline_or_nul_and_drops_empty() {
        assert_eq!(parse_comm(b"worker-1\n").as_deref(), Some("worker-1"));
        assert_eq!(parse_comm(b"abc\0garbage").as_deref(), Some("abc"));
        assert_eq!(parse_comm(b"\n"), None);
        assert_eq!(parse_comm(b""), None);
        // Not UTF-8: kept, with replacement characters.
        assert_eq!(parse_comm(b"a\xffb\n").as_deref(), Some("a\u{fffd}b"));
    }

    #[test]
    fn cmdline_names_the_first_argument() {
        assert_eq!(
            parse_cmdline(b"/usr/bin/app\0--flag\0").as_deref(),
            Some("/usr/bin/app")
        );
        assert_eq!(parse_cmdline(b"app").as_deref(), Some("app"));
        assert_eq!(parse_cmdline(b"\0x\0"), None);
        assert_eq!(parse_cmdline(b""), None);
    }

    #[test]
    fn named_threads_and_this_process_have_names() {
        let name = std::thread::Builder::new()
            .name("a-rather-long-thread-name".into())
            .spawn(|| current_thread_name(crate::platform::current_thread_id()))
            .map(|h| h.join().ok().flatten())
            .ok()
            .flatten();
        // The Rust name, not the kernel's 15-byte cut.
        assert_eq!(name.as_deref(), Some("a-rather-long-thread-name"));
        assert!(current_process_name().is_some());
    }

    // Miri's thread ids are its own, not the kernel's, so /proc cannot be
    // consulted for them there.
    #[cfg(all(target_os = "linux", not(miri)))]
    #[test]
    fn unnamed_threads_take_the_kernels_name() {
        // A thread without a Rust name is named by its kernel comm (read
        // in that same thread, so nothing else can rename it between).
        let (name, comm) = std::thread::spawn(|| {
            let name = current_thread_name(crate::platform::current_thread_id());
            let comm =
                read_bounded("/proc/thread-self/comm", COMM_LIMIT).and_then(|r| parse_comm(&r));
            (name, comm)
        })
        .join()
        .expect("thread");
        assert!(name.is_some());
        assert_eq!(name, comm);
    }
}
