//! The thread that unwinds `linux.perf`'s samples, so that the probes'
//! thread never waits on unwinding (a first sample of a big binary can take
//! seconds to unwind while flushes and ftrace's buffers wait). A thin loop
//! around the [`Handover`] queue (`perf::unwind_queue`): it takes a task,
//! runs it on the instance's [`UserStacks`] with no lock held, hands the
//! result back and wakes the probes' thread when there was nothing to take
//! before.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use super::perf_user_stacks::{UserInput, UserStacks};
use super::probe::Waker;
use crate::perf::records::{Record, SampleLayout, parse_record};
use crate::perf::unwind_queue::{Handover, NotUnwound, Task, UnwindJob, Unwound};
use zerotrace_protos::protos::profiling::StackUnwindError;

struct Shared {
    queue: Mutex<Handover>,
    /// Signalled when a task is queued, when one is finished, and at the stop.
    changed: Condvar,
    stop: AtomicBool,
    /// The unwinder's cached state, as it reckons it (the guardrail's).
    footprint_bytes: AtomicU64,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// An instance's unwinder, on a thread of its own.
pub(super) struct UnwindWorker {
    shared: Arc<Shared>,
    thread: Option<JoinHandle<()>>,
}

impl UnwindWorker {
    /// Moves `unwinder` to a new thread that unwinds the samples of
    /// `layout` queued in `queue` and calls `wake` when unwound samples
    /// are ready; where no thread can be had, the unwinder comes back with
    /// the reason.
    pub(super) fn start(
        unwinder: Box<dyn UserStacks>,
        layout: SampleLayout,
        queue: Handover,
        wake: Waker,
    ) -> Result<UnwindWorker, (Box<dyn UserStacks>, std::io::Error)> {
        let shared = Arc::new(Shared {
            queue: Mutex::new(queue),
            changed: Condvar::new(),
            stop: AtomicBool::new(false),
            footprint_bytes: AtomicU64::new(unwinder.footprint_bytes()),
        });
        // The unwinder comes back through this slot if the spawn fails.
        let slot = Arc::new(Mutex::new(Some(unwinder)));
        let (s, for_thread) = (shared.clone(), slot.clone());
        let spawned = std::thread::Builder::new()
            .name("zerotrace-perf-unwind".into())
            .spawn(move || {
                if let Some(u) = lock(&for_thread).take() {
                    run(&s, u, &layout, &wake);
                }
            });
        match spawned {
            Ok(thread) => Ok(UnwindWorker {
                shared,
                thread: Some(thread),
            }),
            Err(e) => match lock(&slot).take() {
                Some(u) => Err((u, e)),
                // Unreachable: a thread that was not spawned took nothing.
                None => Err((Box::new(super::perf_user_stacks::ChainOnly), e)),
            },
        }
    }

    /// Queues a sample, or gives it back when the queue is full.
    pub(super) fn push(&self, job: UnwindJob) -> Result<(), Box<UnwindJob>> {
        let r = lock(&self.shared.queue).push(job);
        if r.is_ok() {
            self.shared.changed.notify_all();
        }
        r
    }

    /// Queues a state change of the unwinder, after the samples queued.
    pub(super) fn push_control(&self, task: Task) {
        lock(&self.shared.queue).push_control(task);
        self.shared.changed.notify_all();
    }

    /// The samples unwound since the last take, in order.
    pub(super) fn take_done(&self) -> Vec<Unwound> {
        lock(&self.shared.queue).take_done()
    }

    /// Whether unwound samples wait to be written.
    pub(super) fn has_done(&self) -> bool {
        lock(&self.shared.queue).has_done()
    }

    /// The unwinder's cached state in bytes, as of its last task.
    pub(super) fn footprint_bytes(&self) -> u64 {
        self.shared.footprint_bytes.load(Ordering::Relaxed)
    }

    /// Waits until every queued sample is unwound or `limit` has passed,
    /// then stops the thread: what was unwound, and what was not (given
    /// up on). A thread still inside a slow unwind is left to end on its
    /// own (its result dropped), never waited for past `limit`.
    pub(super) fn finish(mut self, limit: Duration) -> (Vec<Unwound>, Vec<NotUnwound>) {
        let deadline = Instant::now() + limit;
        let mut q = lock(&self.shared.queue);
        while !q.is_idle() {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                break;
            }
            q = self
                .shared
                .changed
                .wait_timeout(q, left)
                .map_or_else(|e| e.into_inner().0, |(g, _)| g);
        }
        let done = q.take_done();
        let idle = q.is_idle();
        let abandoned = q.abandon();
        drop(q);
        self.shared.stop.store(true, Ordering::SeqCst);
        self.shared.changed.notify_all();
        if idle {
            if let Some(t) = self.thread.take() {
                let _ = t.join();
            }
        }
        (done, abandoned)
    }
}

impl Drop for UnwindWorker {
    fn drop(&mut self) {
        lock(&self.shared.queue).abandon();
        self.shared.stop.store(true, Ordering::SeqCst);
        self.shared.changed.notify_all();
        // Not joined: it may be inside a slow unwind; it ends after it.
        self.thread.take();
    }
}

/// The thread's loop: one task at a time, no lock held while unwinding.
fn run(shared: &Shared, mut unwinder: Box<dyn UserStacks>, layout: &SampleLayout, wake: &Waker) {
    loop {
        let task = {
            let mut q = lock(&shared.queue);
            loop {
                if shared.stop.load(Ordering::SeqCst) {
                    return;
                }
                if let Some(t) = q.next_task() {
                    break t;
                }
                q = shared
                    .changed
                    .wait(q)
                    .unwrap_or_else(std::sync::PoisonError::into_inner);
            }
        };
        match task {
            Task::Unwind(job) => {
                let unwound = unwind(unwinder.as_mut(), layout, job);
                let first = lock(&shared.queue).finished(unwound);
                shared.changed.notify_all();
                if first {
                    wake();
                }
            }
            Task::Forget(pid) => unwinder.forget(pid),
            Task::Clear => unwinder.clear(),
        }
        shared
            .footprint_bytes
            .store(unwinder.footprint_bytes(), Ordering::Relaxed);
    }
}

/// Unwinds one sample: its kernel frames then its user frames.
pub(super) fn unwind(
    unwinder: &mut dyn UserStacks,
    layout: &SampleLayout,
    job: UnwindJob,
) -> Unwound {
    let UnwindJob {
        header,
        counts,
        record,
        mut kernel_frames,
        user_chain,
        mode,
        ..
    } = job;
    let (user, error) = match parse_record(&record, layout) {
        Ok(Record::Sample(sample)) => unwinder.unwind(&UserInput {
            pid: header.pid,
            sample: &sample,
            fp_chain: &user_chain,
            mode,
        }),
        // The record parsed on the reader's side; it cannot change here.
        _ => (
            Vec::new(),
            Some(StackUnwindError::UnwindErrorInvalidParameter),
        ),
    };
    kernel_frames.extend(user);
    Unwound {
        header,
        counts,
        frames: kernel_frames,
        error,
    }
}
