//! A program never hangs because its profiler died: with `block_client`
//! and no timeout (`block_client_timeout_us` 0), a program whose helper
//! process is killed (SIGKILL) mid-session stops waiting for room in the
//! ring as soon as it would wait (the helper's liveness pipe hung up), goes
//! on unprofiled and finishes (`tests/fixture/busy_fixture.c`, which
//! allocates until its standard input closes).
#![cfg(target_os = "linux")]

mod support;

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use support::{fixture, heap_session, library, service};

/// How long the test waits for the program to finish (a bound on a hang,
/// not a measure of speed).
const HANG: Duration = Duration::from_secs(120);

/// The pid of the helper (`zt-heapprofd`) of the program run from `bin`.
fn helper_of(bin: &std::path::Path) -> Option<i32> {
    let want = bin.as_os_str().as_encoded_bytes();
    for e in std::fs::read_dir("/proc").ok()?.flatten() {
        let Ok(pid) = e.file_name().to_string_lossy().parse::<i32>() else {
            continue;
        };
        let comm = std::fs::read_to_string(format!("/proc/{pid}/comm")).unwrap_or_default();
        let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
        if comm.trim_end() == "zt-heapprofd" && cmdline.split(|b| *b == 0).next() == Some(want) {
            return Some(pid);
        }
    }
    None
}

#[test]
fn a_program_blocked_on_a_killed_helper_finishes() {
    let bin = fixture("busy_fixture");
    let mut s = service("helper-death");
    // Exact mode: the ring fills at once when no one reads it.
    s.consumer
        .enable_tracing(
            &heap_session("busy_fixture", 1, |h| {
                h.set_block_client(true).set_block_client_timeout_us(0);
            }),
            None,
        )
        .expect("session");
    let mut child = Command::new(&bin)
        .env("LD_PRELOAD", library())
        .env("PERFETTO_PRODUCER_SOCK_NAME", &s.producer_socket)
        .env("PERFETTO_HEAPPROFD_BLOCKING_INIT", "1")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("the fixture runs");
    let mut out = BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    out.read_line(&mut line).unwrap();
    assert_eq!(line, "allocating\n", "the program allocates");
    let helper = helper_of(&bin).expect("the program's helper");
    // SAFETY: sends SIGKILL to the helper process found above.
    assert_eq!(unsafe { libc::kill(helper, libc::SIGKILL) }, 0);
    // The loop ends when its input closes; a hang in malloc never does.
    drop(child.stdin.take());
    let program = child.id() as i32;
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let mut rest = String::new();
        let _ = std::io::Read::read_to_string(&mut out, &mut rest);
        let _ = tx.send((child.wait(), rest));
    });
    let Ok((status, rest)) = rx.recv_timeout(HANG) else {
        // SAFETY: sends SIGKILL to the hung fixture this test started.
        unsafe { libc::kill(program, libc::SIGKILL) };
        panic!("the program hung in malloc after its helper died");
    };
    assert!(status.unwrap().success());
    assert_eq!(rest, "done\n");
    drop(s);
}
