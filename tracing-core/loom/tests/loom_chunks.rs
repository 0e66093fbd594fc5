//! `loom` models of the chunk state machine: producers acquiring and releasing
//! chunks while a service thread reads and frees them, all through the very
//! CAS code used on real shared memory (`abi::state_machine`).
//!
//! Chunk payloads are `loom` cells, so loom reports a data race if the
//! acquire/release orderings fail to order a producer's writes before the
//! service's reads, or if two parties ever own one chunk at once.
//!
//! Run: `RUSTFLAGS="--cfg zerotrace_loom" cargo test -p zerotrace-loom --release --test loom_chunks`
//! (`LOOM_MAX_PREEMPTIONS=N` changes the bound on preemptions explored; default 3).
#![cfg(zerotrace_loom)]

use loom::cell::UnsafeCell;
use loom::sync::Arc;
use loom::sync::atomic::AtomicU32;
use loom::thread;
use std::sync::atomic::Ordering;

use zerotrace_core::abi::__private::{
    release_chunk_as_complete, release_chunk_as_free, try_acquire_chunk_for_reading,
    try_acquire_chunk_for_writing, try_partition_page,
};
use zerotrace_core::abi::{ChunkState, PageHeaderWord, PageLayout};

/// Explores interleavings with at most `LOOM_PREEMPTIONS` (default 3)
/// preemptions, which keeps each model to seconds or minutes.
fn model(f: impl Fn() + Sync + Send + 'static) {
    let mut b = loom::model::Builder::new();
    if b.preemption_bound.is_none() {
        b.preemption_bound = Some(3);
    }
    b.check(f);
}

struct Page {
    word: AtomicU32,
    payload: [UnsafeCell<u32>; 2],
}

impl Page {
    fn new(word: u32) -> Arc<Page> {
        Arc::new(Page {
            word: AtomicU32::new(word),
            payload: [UnsafeCell::new(0), UnsafeCell::new(0)],
        })
    }
}

/// A producer: partition the page if free, take any free chunk, write, complete.
fn produce(page: &Page, value: u32) -> Option<usize> {
    for _ in 0..2 {
        if page.word.load(Ordering::Acquire) == 0 {
            let _ = try_partition_page(&page.word, 0, PageLayout::Div2);
        }
        for idx in 0..2 {
            if try_acquire_chunk_for_writing(&page.word, 0, idx).is_ok() {
                page.payload[idx].with_mut(|p| {
                    // SAFETY: the chunk is BeingWritten and owned by this thread.
                    unsafe { *p = value };
                });
                release_chunk_as_complete(&page.word, 0, idx).unwrap();
                return Some(idx);
            }
        }
    }
    None
}

/// The service: read and free every complete chunk it finds, `rounds` times.
fn consume(page: &Page, rounds: usize) -> Vec<u32> {
    let mut seen = Vec::new();
    for _ in 0..rounds {
        for idx in 0..2 {
            if try_acquire_chunk_for_reading(&page.word, 0, idx).is_ok() {
                let v = page.payload[idx].with(|p| {
                    // SAFETY: the chunk is BeingRead and owned by this thread.
                    unsafe { *p }
                });
                assert_ne!(v, 0, "read a chunk nobody wrote");
                page.payload[idx].with_mut(|p| {
                    // SAFETY: still owned (BeingRead) by this thread.
                    unsafe { *p = 0 };
                });
                release_chunk_as_free(&page.word, 0, idx).unwrap();
                seen.push(v);
            }
        }
    }
    seen
}

#[test]
fn two_producers_one_service_no_double_ownership_no_lost_chunk() {
    model(|| {
        let page = Page::new(0);
        let p1 = {
            let page = page.clone();
            thread::spawn(move || produce(&page, 1))
        };
        let p2 = {
            let page = page.clone();
            thread::spawn(move || produce(&page, 2))
        };
        let s = {
            let page = page.clone();
            thread::spawn(move || consume(&page, 1))
        };
        let r1 = p1.join().unwrap();
        let r2 = p2.join().unwrap();
        let seen = s.join().unwrap();
        // Two chunks, two producers: each gets one (the service can only free a
        // chunk after it was completed, so no producer runs out). They may get
        // the same index if the service freed it in between.
        assert!(r1.is_some() && r2.is_some());
        // Drain what the service did not see; every written value shows up once.
        let mut all = seen;
        all.extend(consume(&page, 1));
        all.sort_unstable();
        assert_eq!(all, [1, 2]);
        // Everything read and freed: the page is de-partitioned.
        assert_eq!(page.word.load(Ordering::Acquire), 0);
    });
}

#[test]
fn concurrent_write_and_free_on_one_page_lose_no_state() {
    model(|| {
        // Div2: chunk 0 complete (value 7 written), chunk 1 free.
        let start =
            PageHeaderWord::partitioned(PageLayout::Div2).with_chunk_state(0, ChunkState::Complete);
        let page = Page::new(start.raw());
        page.payload[0].with_mut(|p| {
            // SAFETY: no other thread exists yet.
            unsafe { *p = 7 };
        });
        let producer = {
            let page = page.clone();
            thread::spawn(move || {
                if try_acquire_chunk_for_writing(&page.word, 0, 1).is_ok() {
                    page.payload[1].with_mut(|p| {
                        // SAFETY: chunk 1 is BeingWritten and owned here.
                        unsafe { *p = 9 };
                    });
                    release_chunk_as_complete(&page.word, 0, 1).unwrap();
                    true
                } else {
                    false
                }
            })
        };
        let service = {
            let page = page.clone();
            thread::spawn(move || consume(&page, 1))
        };
        let wrote = producer.join().unwrap();
        let seen = service.join().unwrap();
        let word = PageHeaderWord(page.word.load(Ordering::Acquire));
        if wrote {
            // Chunk 1 is complete unless the service already took it.
            assert!(seen.contains(&7));
            match word.raw() {
                0 => assert_eq!(seen, [7, 9]),
                _ => {
                    assert_eq!(word.chunk_state(0), ChunkState::Free);
                    assert_eq!(word.chunk_state(1), ChunkState::Complete);
                    assert_eq!(word.layout(), Ok(PageLayout::Div2));
                }
            }
        } else {
            // The producer came after the service freed chunk 0 while chunk 1 was
            // free: the page was de-partitioned under it.
            assert_eq!(seen, [7]);
            assert_eq!(word.raw(), 0);
        }
    });
}

#[test]
fn producer_racing_partition_and_departition() {
    model(|| {
        // One chunk complete in a Div2 page; the service frees it (and
        // de-partitions) while a producer partitions/acquires.
        let start =
            PageHeaderWord::partitioned(PageLayout::Div2).with_chunk_state(1, ChunkState::Complete);
        let page = Page::new(start.raw());
        page.payload[1].with_mut(|p| {
            // SAFETY: no other thread exists yet.
            unsafe { *p = 5 };
        });
        let producer = {
            let page = page.clone();
            thread::spawn(move || produce(&page, 3))
        };
        let service = {
            let page = page.clone();
            thread::spawn(move || consume(&page, 1))
        };
        let got = producer.join().unwrap();
        let mut seen = service.join().unwrap();
        assert!(got.is_some(), "a free chunk always exists for the producer");
        seen.extend(consume(&page, 1));
        seen.sort_unstable();
        assert_eq!(seen, [3, 5]);
        assert_eq!(page.word.load(Ordering::Acquire), 0);
    });
}
