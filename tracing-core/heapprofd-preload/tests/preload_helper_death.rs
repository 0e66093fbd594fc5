//! A program never hangs because its profiler died: with `block_client`
//! and no timeout (`block_client_timeout_us` 0), a program whose helper
//! process is killed (SIGKILL) mid-session stops waiting for room in the
//! ring as soon as it would wait (the helper's liveness pipe hung up), goes
//! on unprofiled and finishes (`tests/fixture/busy_fixture.c`, which
//! allocates until its standard input closes). The profile says so: the
//! helper's guardian (`zt-heapguard`) answers the session with a dump of
//! the program marked `disconnected`, and goes when the program does.
#![cfg(target_os = "linux")]

mod support;

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use support::{dump_flags, fixture, heap_session, library, service};

/// How long the test waits for the program to finish (a bound on a hang,
/// not a measure of speed).
const HANG: Duration = Duration::from_secs(120);

/// The pid of the helper (`zt-heapprofd`) of the program run from `bin`.
fn helper_of(bin: &std::path::Path) -> Option<i32> {
    process_named("zt-heapprofd", bin)
}

/// The pid of the process named `comm` whose command line starts with
/// `bin`.
fn process_named(comm: &str, bin: &std::path::Path) -> Option<i32> {
    let want = bin.as_os_str().as_encoded_bytes();
    for e in std::fs::read_dir("/proc").ok()?.flatten() {
        let Ok(pid) = e.file_name().to_string_lossy().parse::<i32>() else {
            continue;
        };
        let comm_of = std::fs::read_to_string(format!("/proc/{pid}/comm")).unwrap_or_default();
        let comm_of = comm_of.trim_end();
        let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
        if comm_of == comm && cmdline.split(|b| *b == 0).next() == Some(want) {
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
    assert!(
        process_named("zt-heapguard", &bin).is_some(),
        "the helper's guardian"
    );
    // SAFETY: sends SIGKILL to the helper process found above.
    assert_eq!(unsafe { libc::kill(helper, libc::SIGKILL) }, 0);
    // The session hears of it while the program still runs: the guardian's
    // dump of the program, marked `disconnected`. (The helper wrote no
    // dump before it died: the session has no dump interval.)
    let program = child.id() as u64;
    let start = std::time::Instant::now();
    let mut trace = Vec::new();
    let marked = loop {
        s.consumer.flush(5000).expect("flush");
        trace.extend(s.consumer.read_trace().expect("read"));
        let dumps = dump_flags(&trace);
        if let Some(d) = dumps.iter().find(|d| d.0 == program) {
            break *d;
        }
        assert!(start.elapsed() < HANG, "no dump says the helper died");
        std::thread::sleep(Duration::from_millis(50));
    };
    assert_eq!(
        marked,
        (program, true, false, 0, false),
        "(pid, disconnected, buffer_overran, client_error, rejected_concurrent)"
    );
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
    // The guardian goes with the program.
    let start = std::time::Instant::now();
    while process_named("zt-heapguard", &bin).is_some() {
        assert!(start.elapsed() < HANG, "the guardian outlived the program");
        std::thread::sleep(Duration::from_millis(20));
    }
    drop(s);
}
