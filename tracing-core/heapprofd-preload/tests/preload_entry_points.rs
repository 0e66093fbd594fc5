//! The preload library's less common entry points, counted right in exact
//! mode (`tests/fixture/entry_points_fixture.c`): `pvalloc` at the size
//! glibc gives it (rounded up to a page multiple), `reallocarray` (glibc's
//! calls its own `realloc` past the library, so the library has its own),
//! and C23's `free_sized` and `free_aligned_sized`, which the library
//! exports whatever the system's glibc (before 2.39 it has neither).
#![cfg(target_os = "linux")]

mod support;

use std::process::Command;
use std::time::Duration;

use support::{fixture, heap_session, library, profile, service};

#[test]
fn pvalloc_reallocarray_and_the_sized_frees_are_counted_exactly() {
    let bin = fixture("entry_points_fixture");
    let mut s = service("entry-points");
    let session = s
        .consumer
        .enable_tracing(
            &heap_session("entry_points_fixture", 1, |h| {
                h.set_block_client(true);
            }),
            None,
        )
        .expect("session");
    let run = Command::new(&bin)
        .env("LD_PRELOAD", library())
        .env("PERFETTO_PRODUCER_SOCK_NAME", &s.producer_socket)
        .env("PERFETTO_HEAPPROFD_BLOCKING_INIT", "1")
        .output()
        .expect("the fixture runs");
    assert!(
        run.status.success(),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    s.consumer.disable_tracing().expect("disable");
    s.consumer
        .wait_for_end(session, Some(Duration::from_secs(30)))
        .expect("end");
    let trace = s.consumer.read_trace().expect("trace");
    let stdout = String::from_utf8_lossy(&run.stdout).into_owned();
    assert!(stdout.contains("overflow refused\n"), "{stdout}");
    assert!(stdout.contains("free_sized 1\n"), "exported: {stdout}");
    assert!(
        stdout.contains("free_aligned_sized 1\n"),
        "exported: {stdout}"
    );
    let page: u64 = stdout
        .lines()
        .find_map(|l| l.strip_prefix("page "))
        .and_then(|v| v.parse().ok())
        .expect("the page size");
    let rounded = 5000u64.div_ceil(page) * page;
    let functions = &["page_rounded", "array_grown", "sized_frees"];
    let (got, (from_startup, _), _) = profile(&trace, functions);
    assert!(from_startup, "profiled from its start (blocking init)");
    assert_eq!(
        got.get("page_rounded"),
        Some(&(rounded, 1, rounded, 1)),
        "pvalloc(5000) at its page-rounded size"
    );
    assert_eq!(
        got.get("array_grown"),
        Some(&(1000 + 2000, 2, 2000, 1)),
        "reallocarray: 1000 bytes, grown to 2000 (the old block freed)"
    );
    assert_eq!(
        got.get("sized_frees"),
        Some(&(700 + 640, 2, 0, 0)),
        "both blocks freed by the sized frees"
    );
}
