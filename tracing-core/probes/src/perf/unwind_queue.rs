//! The hand-over between `linux.perf`'s reader and its unwinder. Unwinding
//! a sample can take long (the first sample of a process loads and parses
//! every ELF file it maps), so it does not run on the probes' thread, which
//! must answer flushes and keep ftrace's buffers drained whatever perf
//! does: the reader queues each sample to unwind here, a thread of its own
//! unwinds them in order, and the reader writes what was unwound at its
//! next poll.
//!
//! This is the queue alone, with no thread and no clock (the thread is a
//! thin loop around it, `producer::perf_unwinder`). It is bounded as
//! upstream's unwind queue is: at most a fixed number of samples at once
//! (queued, being unwound, or unwound and not yet taken), and, when the
//! config sets `max_enqueued_footprint_kb`, at most that many stack bytes
//! queued. A sample refused is given back, for the reader to write as
//! skipped (`PROFILER_SKIP_UNWIND_ENQUEUE`) and count: nothing is dropped
//! unsaid. At a stop that cannot wait any longer, the samples not unwound
//! are given back too ([`Handover::abandon`]), for the reader to write as
//! skipped by the unwinding stage, as upstream writes the samples its
//! unwinder gives up on.

use std::collections::VecDeque;

use zerotrace_protos::protos::profiling::StackUnwindError;

use super::config::UserFrames;
use super::intern::FrameDesc;
use super::packets::SampleHeader;

/// Samples held at once (upstream's unwind queue capacity).
pub const CAPACITY: usize = 1024;

/// A sample to unwind, owning what the unwinder reads of it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnwindJob {
    /// Who and where it was taken.
    pub header: SampleHeader,
    /// Its counts, timebase first.
    pub counts: Vec<u64>,
    /// The whole record as the kernel wrote it (the unwinder parses its
    /// registers and stack copy from it).
    pub record: Vec<u8>,
    /// The kernel frames, already named, leaf first.
    pub kernel_frames: Vec<FrameDesc>,
    /// The user part of the kernel's callchain, leaf first.
    pub user_chain: Vec<u64>,
    /// How user frames are found.
    pub mode: UserFrames,
    /// The bytes of its stack copy (what the footprint bound weighs).
    pub stack_bytes: u64,
}

/// What the unwinder is asked, in order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Task {
    /// Unwind a sample.
    Unwind(UnwindJob),
    /// Process `pid` exec'd or exited: drop its state (after the samples
    /// queued before).
    Forget(u32),
    /// Drop every process's state (`unwind_state_clear_period_ms`).
    Clear,
}

/// A sample unwound, ready to be written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unwound {
    /// Who and where it was taken.
    pub header: SampleHeader,
    /// Its counts, timebase first.
    pub counts: Vec<u64>,
    /// Kernel frames then user frames, leaf first.
    pub frames: Vec<FrameDesc>,
    /// How unwinding ended (`None`: it reached the outermost frame).
    pub error: Option<StackUnwindError>,
}

/// A sample given back without its callstack: who and its counts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NotUnwound {
    /// Who and where it was taken.
    pub header: SampleHeader,
    /// Its counts, timebase first.
    pub counts: Vec<u64>,
}

/// The queue between the reader and the unwinder.
#[derive(Debug)]
pub struct Handover {
    tasks: VecDeque<Task>,
    done: VecDeque<Unwound>,
    /// The sample being unwound (given back if abandoned).
    in_flight: Option<NotUnwound>,
    /// Samples queued, in flight, or done and not taken.
    held: usize,
    /// Stack bytes of the queued samples.
    queued_stack_bytes: u64,
    capacity: usize,
    max_stack_bytes: u64,
    /// Set by [`Handover::abandon`]: what is still unwound is dropped.
    abandoned: bool,
    refused: u64,
}

impl Handover {
    /// Holds at most `capacity` samples and, unless `max_stack_bytes` is 0,
    /// queues stack copies up to that many bytes.
    pub fn new(capacity: usize, max_stack_bytes: u64) -> Self {
        Handover {
            tasks: VecDeque::new(),
            done: VecDeque::new(),
            in_flight: None,
            held: 0,
            queued_stack_bytes: 0,
            capacity,
            max_stack_bytes,
            abandoned: false,
            refused: 0,
        }
    }

    /// Queues `job`, or gives it back when the queue is full (counted).
    pub fn push(&mut self, job: UnwindJob) -> Result<(), Box<UnwindJob>> {
        let over_footprint = self.max_stack_bytes != 0
            && self.queued_stack_bytes.saturating_add(job.stack_bytes) >= self.max_stack_bytes;
        if self.abandoned || self.held >= self.capacity || over_footprint {
            self.refused = self.refused.saturating_add(1);
            return Err(Box::new(job));
        }
        self.held += 1;
        self.queued_stack_bytes = self.queued_stack_bytes.saturating_add(job.stack_bytes);
        self.tasks.push_back(Task::Unwind(job));
        Ok(())
    }

    /// Queues a state change of the unwinder (never refused: it holds no
    /// sample).
    pub fn push_control(&mut self, task: Task) {
        if !matches!(task, Task::Unwind(_)) {
            self.tasks.push_back(task);
        }
    }

    /// The unwinder takes the next task; a sample is in flight until
    /// [`Handover::finished`].
    pub fn next_task(&mut self) -> Option<Task> {
        let task = self.tasks.pop_front()?;
        if let Task::Unwind(job) = &task {
            self.queued_stack_bytes = self.queued_stack_bytes.saturating_sub(job.stack_bytes);
            self.in_flight = Some(NotUnwound {
                header: job.header,
                counts: job.counts.clone(),
            });
        }
        Some(task)
    }

    /// The unwinder is done with the sample in flight; whether the reader
    /// had nothing to take before (then it is worth waking).
    pub fn finished(&mut self, unwound: Unwound) -> bool {
        if self.in_flight.take().is_none() || self.abandoned {
            // Given back already by an abandon.
            return false;
        }
        let was_empty = self.done.is_empty();
        self.done.push_back(unwound);
        was_empty
    }

    /// The reader takes every unwound sample, in order; their places free.
    pub fn take_done(&mut self) -> Vec<Unwound> {
        let done: Vec<Unwound> = self.done.drain(..).collect();
        self.held = self.held.saturating_sub(done.len());
        done
    }

    /// Whether unwound samples wait to be taken.
    pub fn has_done(&self) -> bool {
        !self.done.is_empty()
    }

    /// Whether nothing is queued or being unwound.
    pub fn is_idle(&self) -> bool {
        self.tasks.is_empty() && self.in_flight.is_none()
    }

    /// Gives up on what is queued and in flight (a stop that cannot wait
    /// longer): those samples, in order, the one in flight first; its
    /// result, when it comes, is dropped, and nothing more is taken.
    pub fn abandon(&mut self) -> Vec<NotUnwound> {
        self.abandoned = true;
        let mut out: Vec<NotUnwound> = self.in_flight.take().into_iter().collect();
        out.extend(self.tasks.drain(..).filter_map(|t| match t {
            Task::Unwind(job) => Some(NotUnwound {
                header: job.header,
                counts: job.counts,
            }),
            Task::Forget(_) | Task::Clear => None,
        }));
        self.queued_stack_bytes = 0;
        self.held = self.held.saturating_sub(out.len());
        out
    }

    /// Samples refused because the queue was full.
    pub fn refused(&self) -> u64 {
        self.refused
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn job(ts: u64, stack_bytes: u64) -> UnwindJob {
        UnwindJob {
            header: SampleHeader {
                ts,
                ..SampleHeader::default()
            },
            counts: vec![ts],
            record: Vec::new(),
            kernel_frames: Vec::new(),
            user_chain: Vec::new(),
            mode: UserFrames::Dwarf,
            stack_bytes,
        }
    }

    fn unwound(ts: u64) -> Unwound {
        Unwound {
            header: SampleHeader {
                ts,
                ..SampleHeader::default()
            },
            counts: vec![ts],
            frames: Vec::new(),
            error: None,
        }
    }

    fn ts_of(t: Option<Task>) -> Option<u64> {
        match t {
            Some(Task::Unwind(j)) => Some(j.header.ts),
            _ => None,
        }
    }

    #[test]
    fn a_sample_holds_its_place_until_the_reader_takes_it() {
        let mut h = Handover::new(2, 0);
        assert!(h.push(job(1, 0)).is_ok());
        assert!(h.push(job(2, 0)).is_ok());
        // Full: refused and counted.
        assert_eq!(h.push(job(3, 0)).map_err(|j| j.header.ts), Err(3));
        assert_eq!(ts_of(h.next_task()), Some(1));
        assert!(h.finished(unwound(1)));
        assert_eq!(ts_of(h.next_task()), Some(2));
        // Unwound but not taken: still no room.
        assert!(h.push(job(4, 0)).is_err());
        assert_eq!(h.refused(), 2);
        let done = h.take_done();
        assert_eq!(done.len(), 1);
        assert!(h.push(job(5, 0)).is_ok());
        assert!(!h.is_idle());
    }

    #[test]
    fn the_footprint_bounds_the_queued_stack_bytes() {
        let mut h = Handover::new(CAPACITY, 100);
        assert!(h.push(job(1, 60)).is_ok());
        assert!(h.push(job(2, 40)).is_err());
        assert!(h.push(job(3, 39)).is_ok());
        // Taken by the unwinder: its bytes are no longer queued.
        assert_eq!(ts_of(h.next_task()), Some(1));
        assert!(h.push(job(4, 60)).is_ok());
        assert_eq!(h.refused(), 1);
    }

    #[test]
    fn state_changes_keep_their_place_among_the_samples() {
        let mut h = Handover::new(1, 0);
        h.push_control(Task::Clear);
        assert!(h.push(job(1, 0)).is_ok());
        h.push_control(Task::Forget(7));
        assert_eq!(h.next_task(), Some(Task::Clear));
        assert_eq!(ts_of(h.next_task()), Some(1));
        assert_eq!(h.next_task(), Some(Task::Forget(7)));
        assert_eq!(h.next_task(), None);
    }

    #[test]
    fn an_abandon_gives_back_what_was_not_unwound_and_drops_late_results() {
        let mut h = Handover::new(CAPACITY, 0);
        for ts in 1..=3 {
            assert!(h.push(job(ts, 8)).is_ok());
        }
        assert_eq!(ts_of(h.next_task()), Some(1));
        let back: Vec<u64> = h.abandon().iter().map(|n| n.header.ts).collect();
        assert_eq!(back, [1, 2, 3]);
        assert!(h.is_idle());
        // The result of the sample that was in flight comes too late.
        assert!(!h.finished(unwound(1)));
        assert!(h.take_done().is_empty());
        assert!(h.push(job(4, 0)).is_err());
    }
}
