//! The drain thread over fake buffers: while its queue is full it waits
//! for room instead of polling descriptors that stay readable, and it
//! reads again once the data source takes from the queue. Counted in
//! passes of its loop, not timed.

use std::sync::Arc;
use std::time::{Duration, Instant};

use super::*;
use crate::perf::fake_buffer::fake_buffer;

fn wait_until(what: &str, mut done: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(30);
    while !done() {
        assert!(Instant::now() < deadline, "{what}");
        std::thread::yield_now();
    }
}

#[test]
fn a_full_queue_makes_the_thread_wait_not_poll() {
    let (buffer, kernel) = fake_buffer(0);
    // Only the watermark wakes the thread (the period is an hour).
    let d = Drain::start_capped(
        vec![Box::new(buffer)],
        Duration::from_secs(3600),
        None,
        64,
        Arc::new(|| {}),
    )
    .map_err(|(_, e)| e)
    .expect("drain");
    kernel.write(&[0u8; 64]);
    wait_until("the queue never filled", || d.room_waits() == 1);
    let reads = kernel.reads();
    // More data: the buffer's descriptor stays readable while the queue
    // is full.
    kernel.write(&[1u8; 64]);
    let passes = d.passes();
    for _ in 0..1000 {
        std::thread::yield_now();
    }
    std::thread::sleep(Duration::from_millis(20));
    assert_eq!(d.passes(), passes, "the thread polled with the queue full");
    assert_eq!(kernel.reads(), reads);
    assert_eq!(d.queued_bytes(), 64);
    // Room: it reads what waited.
    let first = d.take();
    assert_eq!(first.len(), 1);
    wait_until("the thread did not read again", || d.queued_bytes() == 64);
    assert_eq!(d.take()[0].bytes, [1u8; 64]);
    assert_eq!(kernel.pending(), 0);
}

#[test]
fn finish_hands_back_the_queue_and_the_rest() {
    let (buffer, kernel) = fake_buffer(3);
    let d = Drain::start_capped(
        vec![Box::new(buffer)],
        Duration::from_secs(3600),
        None,
        8,
        Arc::new(|| {}),
    )
    .map_err(|(_, e)| e)
    .expect("drain");
    kernel.write(&[1u8; 8]);
    wait_until("the queue never filled", || d.room_waits() == 1);
    kernel.write(&[2u8; 8]);
    let chunks = d.finish();
    let bytes: Vec<u8> = chunks.iter().flat_map(|c| c.bytes.clone()).collect();
    assert_eq!(bytes, [[1u8; 8], [2u8; 8]].concat());
    assert!(chunks.iter().all(|c| c.cpu == 3 && !c.malformed));
    assert_eq!(kernel.pending(), 0);
}
