//! `loom` models of the heap profiler's allocation hook, the parts threads
//! share (`heap-profile/src/spin_lock.rs`, `record_queue.rs`, `allocator.rs`),
//! run on the very code the hook runs (its atomics are loom's under
//! `--cfg zerotrace_loom`):
//!
//! - the spin lock lets one holder in at a time, the `fork` handlers'
//!   `lock_forever`/`force_unlock` included (the value is a loom cell, so
//!   a holder that is not ordered after the previous one, through the
//!   handlers too, is a data race);
//! - the free of a sampled address, made after its allocation was recorded
//!   and the address handed to the freeing thread, is always queued, and
//!   after the allocation, whatever the filter's relaxed counts say; a
//!   free of an address never sampled is queued only while a sampled block
//!   counts in its slot (for the books to drop); a slot two live addresses
//!   share stays non-empty until both are freed, while the profiler's
//!   thread releases blocks that left its books, and empties once both
//!   did; an address whose free was queued, sampled again and handed to
//!   another thread, has that thread's free queued;
//! - a thread that sees a new sampling epoch draws its sampler with the
//!   interval (and sees the session) published before that epoch.
//!
//! At most two threads wait for the lock at once in any model: loom explores
//! a spin loop by switching to another thread at each failed attempt, and
//! with two waiters it can switch between them forever (a path it reports
//! as a model exceeding its branches), never back to the holder.
//!
//! Run: `RUSTFLAGS="--cfg zerotrace_loom" cargo test -p zerotrace-loom --release --test loom_heap`
//! (`LOOM_MAX_PREEMPTIONS=N` changes the bound on preemptions explored; default 3).
#![cfg(all(zerotrace_loom, target_os = "linux"))]

use loom::sync::Arc;
use loom::sync::atomic::{AtomicBool, AtomicU64};
use loom::thread;
use std::sync::atomic::Ordering;

use zerotrace_heap_profile::__private::{
    AllocRecord, Pushed, QueueLimits, Record, Recorder, SamplingParams, SpinLock, filter_slot,
};
use zerotrace_heap_profile::Sampler;

/// Explores interleavings with at most `LOOM_MAX_PREEMPTIONS` (default 3)
/// preemptions, which keeps each model to seconds, and says how many it
/// explored (`--nocapture` shows it).
fn model(f: impl Fn() + Sync + Send + 'static) {
    let mut b = loom::model::Builder::new();
    if b.preemption_bound.is_none() {
        b.preemption_bound = Some(3);
    }
    let runs = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let counted = runs.clone();
    b.check(move || {
        counted.fetch_add(1, Ordering::Relaxed);
        f();
    });
    eprintln!("{} interleavings explored", runs.load(Ordering::Relaxed));
}

#[test]
fn spin_lock_admits_one_holder_at_a_time_fork_handlers_included() {
    model(|| {
        let lock = Arc::new(SpinLock::new(0u32));
        // Set while the fork handlers hold the lock: no holder may see it.
        let forking = Arc::new(AtomicBool::new(false));
        let adding = {
            let (lock, forking) = (lock.clone(), forking.clone());
            thread::spawn(move || {
                let mut g = lock.lock();
                assert!(
                    !forking.load(Ordering::SeqCst),
                    "a holder got in while a fork handler held the lock"
                );
                *g += 1;
            })
        };
        let forking_between_adds = {
            let (lock, forking) = (lock.clone(), forking.clone());
            thread::spawn(move || {
                *lock.lock() += 1;
                // A fork: `prepare` takes the lock and keeps it, `parent`
                // (or `child`) releases it, and the next holder must see
                // the writes of the one before `prepare`.
                lock.lock_forever();
                forking.store(true, Ordering::SeqCst);
                forking.store(false, Ordering::SeqCst);
                // SAFETY: taken by `lock_forever` just above; no guard of it.
                unsafe { lock.force_unlock() };
                *lock.lock() += 1;
            })
        };
        adding.join().unwrap();
        forking_between_adds.join().unwrap();
        assert_eq!(*lock.lock(), 3, "an increment was lost");
    });
}

const SESSION: u32 = 1;

/// A recorder of session [`SESSION`] with room to spare.
fn recorder() -> Arc<Recorder> {
    let r = Arc::new(Recorder::new());
    r.lock().begin(
        SESSION,
        QueueLimits {
            cap: 1 << 20,
            block: false,
            block_timeout_us: 0,
            adaptive_threshold: 0,
            adaptive_max_interval: 0,
        },
    );
    r
}

/// A sampled allocation of `addr` as the hook records it (allocator.rs's
/// `queue_alloc`: `try_push` under the lock), then `addr` handed to the
/// program (malloc returns it; the program passes it to another thread,
/// which is what lets that thread free it: a Release store here).
fn allocate(r: &Recorder, addr: u64, handoff: &AtomicU64) {
    let pushed = r
        .lock()
        .try_push(SESSION, 8, AllocRecord::without_stack(addr, 8));
    assert!(
        matches!(pushed, Ok(Pushed::Queued { new_interval: None })),
        "{pushed:?}"
    );
    handoff.store(addr, Ordering::Release);
}

/// A thread that makes [`allocate`]`(addr)` and hands it over.
fn spawn_allocating(
    r: &Arc<Recorder>,
    addr: u64,
    handoff: &Arc<AtomicU64>,
) -> thread::JoinHandle<()> {
    let (r, handoff) = (r.clone(), handoff.clone());
    thread::spawn(move || allocate(&r, addr, &handoff))
}

/// The free of `addr` as the hook records it (allocator.rs's `on_free`:
/// the filter without the lock, then the queue under it).
fn free(r: &Recorder, addr: u64) {
    if r.maybe_sampled(addr) {
        r.lock().free(SESSION, addr);
    }
}

/// The address the other thread handed over, if it did yet.
fn received(handoff: &AtomicU64) -> Option<u64> {
    Some(handoff.load(Ordering::Acquire)).filter(|&a| a != 0)
}

/// The queued records, oldest first: `(is_free, addr)`.
fn drained(r: &Recorder) -> Vec<(bool, u64)> {
    r.lock()
        .drain()
        .into_iter()
        .map(|rec| match rec {
            Record::Alloc(a) => (false, a.addr),
            Record::Free { addr } => (true, addr),
        })
        .collect()
}

/// The first address after `from` (16-byte aligned, as malloc's) whose
/// filter slot satisfies `wanted`.
fn address_where(from: u64, wanted: impl Fn(usize) -> bool) -> u64 {
    (1..)
        .map(|i| from + 16 * i)
        .find(|&a| wanted(filter_slot(a)))
        .unwrap()
}

const X: u64 = 0x10_0000;

#[test]
fn a_free_after_the_allocation_is_always_queued_after_it() {
    // An address never sampled that shares X's filter slot: its free may
    // be queued, only once X counts there, and must not empty X's slot.
    let z = address_where(X, |slot| slot == filter_slot(X));
    model(move || {
        let r = recorder();
        let handoff = Arc::new(AtomicU64::new(0));
        let allocating = spawn_allocating(&r, X, &handoff);
        let freeing = {
            let (r, handoff) = (r.clone(), handoff.clone());
            thread::spawn(move || {
                free(&r, z);
                let x = received(&handoff);
                if let Some(x) = x {
                    free(&r, x);
                }
                x.is_some()
            })
        };
        allocating.join().unwrap();
        let freed = freeing.join().unwrap();
        // z's free, if the filter let it through, came after X counted.
        let records = drained(&r);
        let without_z: Vec<_> = records
            .iter()
            .copied()
            .filter(|&rec| rec != (true, z))
            .collect();
        if let Some(at) = records.iter().position(|&rec| rec == (true, z)) {
            assert!(at > 0, "z's free passed an empty slot");
        }
        if freed {
            assert_eq!(without_z, [(false, X), (true, X)], "free lost or early");
        } else {
            // The free came before the address was handed over: it did
            // not happen in the program. Made now, it is queued.
            assert_eq!(without_z, [(false, X)]);
            free(&r, X);
            assert_eq!(drained(&r), [(true, X)], "free of a live address lost");
        }
    });
}

#[test]
fn two_allocating_threads_and_one_freeing_thread_lose_no_free() {
    // Y shares X's filter slot: the two threads' counts race on one slot,
    // and the slot must not empty while either is live.
    let y = address_where(X, |slot| slot == filter_slot(X));
    model(move || {
        let r = recorder();
        let handoffs = Arc::new([AtomicU64::new(0), AtomicU64::new(0)]);
        let allocating: Vec<_> = [X, y]
            .into_iter()
            .enumerate()
            .map(|(i, addr)| {
                let (r, handoffs) = (r.clone(), handoffs.clone());
                thread::spawn(move || allocate(&r, addr, &handoffs[i]))
            })
            .collect();
        let freeing = {
            let (r, handoffs) = (r.clone(), handoffs.clone());
            thread::spawn(move || {
                let mut freed = Vec::new();
                for h in handoffs.iter() {
                    if let Some(a) = received(h) {
                        free(&r, a);
                        freed.push(a);
                    }
                }
                freed
            })
        };
        for a in allocating {
            a.join().unwrap();
        }
        let freed = freeing.join().unwrap();
        let records = drained(&r);
        for addr in [X, y] {
            let at = |is_free| records.iter().position(|&rec| rec == (is_free, addr));
            let alloc = at(false).expect("allocation queued");
            match at(true) {
                Some(free) => assert!(free > alloc, "free of {addr:#x} before its allocation"),
                None => {
                    assert!(!freed.contains(&addr), "free of {addr:#x} lost");
                    // Freed now, after the join, it is queued.
                    free(&r, addr);
                    assert_eq!(drained(&r), [(true, addr)], "free of {addr:#x} lost");
                }
            }
        }
        assert_eq!(records.len(), 2 + freed.len());
    });
}

/// The profiler's thread's side: takes the queued records into `books`
/// (the live sampled addresses), appends them to `seen`, and releases from
/// the filter the blocks that left the books (worker.rs's `drain_into`).
fn take_into_books(r: &Recorder, books: &mut Vec<u64>, seen: &mut Vec<(bool, u64)>) {
    let mut released = Vec::new();
    for rec in drained(r) {
        seen.push(rec);
        match rec {
            (false, a) => {
                if books.contains(&a) {
                    released.push(a); // reused without its free seen
                } else {
                    books.push(a);
                }
            }
            (true, a) => {
                if let Some(i) = books.iter().position(|&b| b == a) {
                    books.swap_remove(i);
                    released.push(a);
                }
            }
        }
    }
    r.lock().release(SESSION, released);
}

#[test]
fn releases_by_the_profilers_thread_never_hide_a_live_block() {
    // Y, in X's slot, was allocated and freed before the threads start:
    // the profiler's thread takes its free and releases it while X is
    // allocated in the same slot, then (as a thread of the program would,
    // once handed X) frees X. (Three threads contending for the spin lock
    // exceed loom's branches, see above: the release and the free share
    // one.)
    let y = address_where(X, |slot| slot == filter_slot(X));
    model(move || {
        let r = recorder();
        let handoff = Arc::new(AtomicU64::new(0));
        allocate(&r, y, &AtomicU64::new(0));
        free(&r, y);
        let allocating = spawn_allocating(&r, X, &handoff);
        let profiler = {
            let (r, handoff) = (r.clone(), handoff.clone());
            thread::spawn(move || {
                let (mut books, mut seen) = (Vec::new(), Vec::new());
                take_into_books(&r, &mut books, &mut seen);
                let x = received(&handoff);
                if let Some(x) = x {
                    free(&r, x);
                }
                (books, seen, x.is_some())
            })
        };
        allocating.join().unwrap();
        let (mut books, mut seen, freed_x) = profiler.join().unwrap();
        take_into_books(&r, &mut books, &mut seen);
        let at = |rec| seen.iter().position(|&s| s == rec);
        assert!(at((true, y)).is_some(), "free of the live block y lost");
        let alloc_x = at((false, X)).expect("X's allocation queued");
        if freed_x {
            let free_x = at((true, X)).expect("free of the live block X lost");
            assert!(free_x > alloc_x, "free of X before its allocation");
            assert!(books.is_empty(), "{books:?}");
            assert!(!r.maybe_sampled(X), "the slot did not empty");
        } else {
            assert_eq!(books, [X]);
            assert!(r.maybe_sampled(X), "X is live, its slot empty");
            free(&r, X);
            take_into_books(&r, &mut books, &mut seen);
            assert!(books.is_empty(), "free of the live block X lost");
            assert!(!r.maybe_sampled(X), "the slot did not empty");
        }
    });
}

#[test]
fn a_free_after_the_address_is_sampled_again_is_queued() {
    // X was sampled and freed (its free queued, so the filter notes X as
    // freed): sampled again by one thread and freed by another, the
    // second free must be queued, whatever that thread's relaxed loads
    // of the count and the note see.
    model(|| {
        let r = recorder();
        let handoff = Arc::new(AtomicU64::new(0));
        allocate(&r, X, &AtomicU64::new(0));
        free(&r, X);
        assert_eq!(drained(&r), [(false, X), (true, X)]);
        free(&r, X); // a second free, of a block not sampled: not queued
        assert_eq!(drained(&r), []);
        let allocating = spawn_allocating(&r, X, &handoff);
        let freeing = {
            let (r, handoff) = (r.clone(), handoff.clone());
            thread::spawn(move || {
                let x = received(&handoff);
                if let Some(x) = x {
                    free(&r, x);
                }
                x.is_some()
            })
        };
        allocating.join().unwrap();
        if freeing.join().unwrap() {
            assert_eq!(drained(&r), [(false, X), (true, X)], "free lost or early");
        } else {
            assert_eq!(drained(&r), [(false, X)]);
            free(&r, X);
            assert_eq!(drained(&r), [(true, X)], "free of a live address lost");
        }
    });
}

#[test]
fn a_thread_that_sees_a_new_epoch_draws_with_its_interval_and_session() {
    // The intervals and sessions in the order they are published, epochs
    // 1, 2 and 3: a sampler drawn for epoch e has the interval of e or of
    // a later one, never of an earlier one; so is the session then seen.
    const INTERVALS: [u64; 3] = [4096, 8192, 1];
    const SESSIONS: [u32; 3] = [1, 1, 2];
    fn check(epoch: u32, sampler: &Sampler, session: u32) {
        let e = epoch as usize;
        assert!((1..=3).contains(&e), "epoch {e}");
        let i = sampler.interval();
        let newest = INTERVALS.iter().position(|&x| x == i).unwrap();
        assert!(
            newest + 1 >= e,
            "drawn for epoch {e} with the interval {i} of an earlier one"
        );
        let newest = SESSIONS.iter().rposition(|&s| s == session).unwrap();
        assert!(newest + 1 >= e, "epoch {e} seen, but session {session}");
    }
    model(|| {
        let p = Arc::new(SamplingParams::new());
        p.start(SESSIONS[0], INTERVALS[0]);
        let changing = {
            let p = p.clone();
            thread::spawn(move || {
                // Adaptive sampling raises the interval, then a new
                // session starts.
                p.set_interval(INTERVALS[1]);
                p.start(SESSIONS[2], INTERVALS[2]);
            })
        };
        let sampling = {
            let p = p.clone();
            thread::spawn(move || {
                // A thread's state before its first allocation (the
                // hook's thread-local), then two allocations.
                let (mut epoch, mut sampler) = (u32::MAX, Sampler::UNSET);
                for _ in 0..2 {
                    p.redraw_if_changed(&mut epoch, &mut sampler, u64::from);
                    check(epoch, &sampler, p.session());
                }
                (epoch, sampler)
            })
        };
        changing.join().unwrap();
        let (mut epoch, mut sampler) = sampling.join().unwrap();
        // Once the change is seen to be done, the next allocation draws
        // for it.
        p.redraw_if_changed(&mut epoch, &mut sampler, u64::from);
        assert_eq!(
            (epoch, sampler.interval(), p.session()),
            (3, INTERVALS[2], SESSIONS[2])
        );
    });
}
