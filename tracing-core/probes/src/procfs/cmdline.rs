//! `/proc/PID/cmdline` (NUL-separated arguments, usually NUL-terminated,
//! empty for kernel threads and zombies) and `/proc/PID/task/TID/comm`
//! (a thread's name and a newline).

/// The arguments of a `cmdline` file: split at NULs, one trailing NUL
/// dropped (a process that rewrote its arguments may leave none, or
/// several in a row, which then give empty arguments as upstream keeps
/// them). Empty input gives no arguments.
pub fn parse(bytes: &[u8]) -> Vec<String> {
    let body = bytes.strip_suffix(&[0]).unwrap_or(bytes);
    if body.is_empty() {
        return Vec::new();
    }
    body.split(|&b| b == 0)
        .map(|a| String::from_utf8_lossy(a).into_owned())
        .collect()
}

/// A thread's name from its `comm` file (the trailing newline dropped).
pub fn parse_comm(bytes: &[u8]) -> String {
    let body = bytes.strip_suffix(b"\n").unwrap_or(bytes);
    String::from_utf8_lossy(body).into_owned()
}
