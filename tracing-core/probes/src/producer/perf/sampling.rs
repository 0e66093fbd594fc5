//! The `linux.perf` instance's work once its events are open: reading
//! the ring buffers (or what the drain thread queued), turning each sample
//! into a `perf_sample` with its interned callstack, handing user stacks to
//! the unwinder's thread and writing what it gives back, the memory
//! guardrail and the timers, and the instance's start, poll, flush, stop
//! and stats as a [`Probe`]. The data source that opens the events and
//! makes the instance is the parent module.

use super::*;

impl PerfProbe {
    pub(super) fn new(
        options: PerfOptions,
        events: Buffers,
        ctx: ProbeContext,
        unwinder: Box<dyn UserStacks>,
        sharding: Option<ProcessSharding>,
    ) -> PerfProbe {
        PerfProbe {
            layout: layout(&options),
            options,
            events,
            ctx,
            interner: Interner::new(),
            unwinder: Some(unwinder),
            worker: None,
            unwind_capacity: unwind_queue::CAPACITY,
            kernel_symbols: None,
            sharding,
            session_token: None,
            scope: ScopeState::default(),
            memory: |f| Some(f.kb()),
            next_memory_check: None,
            buf: Vec::new(),
            next: None,
            next_clear: None,
            drain: None,
            queue_cap: crate::perf::drain::QUEUE_CAP,
            stopped: false,
            stats: PerfStats::default(),
        }
    }

    /// Reads every ring buffer now (a stop or flush) and handles what was
    /// read and queued.
    pub(super) fn read_all(&mut self, sink: &mut dyn PacketSink, now_ns: u64) {
        if let Some(d) = &self.drain {
            d.read_now();
        } else {
            let mut events = std::mem::take(&mut self.events);
            let mut footprint = 0;
            for ev in &mut events {
                self.buf.clear();
                let mut buf = std::mem::take(&mut self.buf);
                if ev.read(&mut buf, None).is_err() {
                    self.stats.malformed += 1;
                }
                self.handle_bytes(ev.cpu(), &buf, sink, now_ns, &mut footprint);
                self.buf = buf;
            }
            self.events = events;
        }
        self.handle_queued(sink, now_ns);
    }

    /// Handles the chunks the drain thread queued. The stack bytes of the
    /// samples one pass takes to unwind are the enqueued footprint that
    /// `max_enqueued_footprint_kb` bounds: samples past it are written
    /// unwound-less, as skipped.
    pub(super) fn handle_queued(&mut self, sink: &mut dyn PacketSink, now_ns: u64) {
        if let Some(d) = &self.drain {
            let chunks: Vec<Chunk> = d.take();
            let mut footprint = 0;
            for c in chunks {
                if c.malformed {
                    self.stats.malformed += 1;
                }
                self.handle_bytes(c.cpu, &c.bytes, sink, now_ns, &mut footprint);
            }
        }
        self.write_unwound(sink);
    }

    /// Writes the samples the unwinder's thread finished.
    pub(super) fn write_unwound(&mut self, sink: &mut dyn PacketSink) {
        let done = self.worker.as_ref().map(UnwindWorker::take_done);
        for u in done.unwrap_or_default() {
            self.write_one_unwound(sink, &u);
        }
    }

    pub(super) fn write_one_unwound(&mut self, sink: &mut dyn PacketSink, u: &Unwound) {
        if u.error.is_some() {
            self.stats.unwind_errors += 1;
        }
        packets::write_sample(
            sink,
            &mut self.interner,
            &u.header,
            &u.counts,
            Some(&u.frames),
            u.error,
        );
        self.stats.samples += 1;
    }

    /// Writes samples that were queued for unwinding and never unwound,
    /// as skipped by the unwinding stage.
    pub(super) fn write_not_unwound(&mut self, sink: &mut dyn PacketSink, samples: &[NotUnwound]) {
        for n in samples {
            packets::write_skipped(
                sink,
                &n.header,
                &n.counts,
                SampleSkipReason::ProfilerSkipUnwindStage,
            );
            self.stats.skipped += 1;
            self.stats.unwind_abandoned += 1;
        }
    }

    pub(super) fn for_each_event(&self, f: impl Fn(&dyn PerfBuffer)) {
        match &self.drain {
            Some(d) => d.events().iter().for_each(|e| f(e.as_ref())),
            None => self.events.iter().for_each(|e| f(e.as_ref())),
        }
    }

    pub(super) fn handle_bytes(
        &mut self,
        cpu: u32,
        bytes: &[u8],
        sink: &mut dyn PacketSink,
        now_ns: u64,
        footprint: &mut u64,
    ) {
        for rec in records(bytes) {
            let Ok(rec) = rec else {
                self.stats.malformed += 1;
                continue;
            };
            match parse_record(rec, &self.layout) {
                Ok(Record::Sample(s)) => self.handle_sample(cpu, rec, &s, footprint, sink),
                Ok(Record::Lost { lost, .. } | Record::LostSamples { lost }) => {
                    self.stats.kernel_records_lost += lost;
                    packets::write_records_lost(sink, now_ns, cpu, lost);
                }
                // A new image, or a pid free for reuse: what was cached of
                // the process (mappings, modules' CFI, its scope decision)
                // no longer holds.
                Ok(Record::Exec { pid, .. }) => self.forget(pid, false),
                Ok(Record::Exit { pid, tid }) if pid == tid => self.forget(pid, true),
                Ok(Record::Exit { .. } | Record::Throttle(_) | Record::Other { .. }) => {}
                Err(_) => self.stats.malformed += 1,
            }
        }
    }

    /// Process `pid` exec'd (`exited` false) or exited: its unwinding
    /// state goes. Its scope decision goes on exit (the pid may be reused),
    /// and on exec only if it was out of scope (a new command line may
    /// match a `target_cmdline`; one in scope keeps its place, so that an
    /// `additional_cmdline_count` slot is not taken twice).
    pub(super) fn forget(&mut self, pid: u32, exited: bool) {
        if let Some(w) = &self.worker {
            w.push_control(Task::Forget(pid));
        } else if let Some(u) = &mut self.unwinder {
            u.forget(pid);
        }
        self.scope.forget(pid, exited);
        self.stats.processes_forgotten += 1;
    }

    /// Whether sample `s` of `pid` is of a kernel thread, as upstream
    /// tells: the idle task; where the kernel walks the user frames
    /// (`UNWIND_KERNEL_FRAME_POINTER`, no user registers sampled), a
    /// callchain with no `PERF_CONTEXT_USER` marker (the kernel puts one
    /// before the user frames of every task that has a user context,
    /// whether or not it finds user frames); else no user registers
    /// where they are recorded.
    pub(super) fn is_kthread(&self, s: &Sample<'_>, pid: u32) -> bool {
        if pid == 0 {
            return true;
        }
        let kernel_walks_user = self
            .options
            .callstacks
            .as_ref()
            .is_some_and(|c| c.user_frames == UserFrames::KernelFramePointer);
        if kernel_walks_user {
            return !s
                .callchain
                .is_some_and(|chain| chain.iter().any(|ip| ip == context::USER));
        }
        self.layout.sample_type & crate::perf::abi::sample::REGS_USER != 0 && s.regs_user.is_none()
    }

    /// Whether the sample's process is in the scope (decided on its first
    /// sample).
    pub(super) fn in_scope(&mut self, cs: &Callstacks, kthread: bool, pid: u32) -> bool {
        let ctx = &self.ctx;
        self.scope.in_scope(
            &cs.scope,
            pid,
            kthread,
            cs.kernel_frames,
            self.sharding,
            || read_cmdline(ctx, pid),
        )
    }

    /// One sample, as upstream's reader stage takes it: counts only when
    /// callstacks are not sampled; a process out of scope written as
    /// skipped with its reason and counts; a user-mode sample of a
    /// kernel-only config written with its counts alone; one whose stack
    /// copy would bring `footprint` (the stack bytes taken for unwinding in
    /// this pass) to `max_enqueued_footprint_kb` skipped; else unwound.
    pub(super) fn handle_sample(
        &mut self,
        cpu: u32,
        rec: &[u8],
        s: &Sample<'_>,
        footprint: &mut u64,
        sink: &mut dyn PacketSink,
    ) {
        let h = SampleHeader {
            ts: s.time.unwrap_or(0),
            cpu,
            pid: s.pid.unwrap_or(0),
            tid: s.tid.unwrap_or(0),
            cpu_mode: s.cpu_mode,
        };
        let counts: Vec<u64> = s.read.map(|r| r.values().collect()).unwrap_or_default();
        let Some(cs) = self.options.callstacks.clone() else {
            packets::write_counts_only(sink, &h, &counts);
            self.stats.samples += 1;
            return;
        };
        let kthread = self.is_kthread(s, h.pid);
        if !self.in_scope(&cs, kthread, h.pid) {
            packets::write_skipped(sink, &h, &counts, SampleSkipReason::ProfilerSkipNotInScope);
            self.stats.skipped += 1;
            return;
        }
        if cs.user_frames == UserFrames::Skip && h.cpu_mode == CPU_MODE_USER {
            // Kernel frames only, and the sample has none.
            packets::write_counts_only(sink, &h, &counts);
            self.stats.samples += 1;
            return;
        }
        // A kernel thread now holds a pid first seen as a user process's
        // (reused): upstream's unwinder skips such a sample.
        if kthread && self.scope.was_userspace(h.pid) {
            packets::write_skipped(sink, &h, &counts, SampleSkipReason::ProfilerSkipUnwindStage);
            self.stats.skipped += 1;
            return;
        }
        let stack = s.stack_user.map_or(0, |b| b.len() as u64);
        let max = self.options.max_enqueued_footprint_bytes;
        // With the unwinder's thread, its queue weighs the stack bytes
        // enqueued (as upstream's); else those of this pass.
        if self.worker.is_none() && max != 0 && footprint.saturating_add(stack) >= max {
            packets::write_skipped(
                sink,
                &h,
                &counts,
                SampleSkipReason::ProfilerSkipUnwindEnqueue,
            );
            self.stats.skipped += 1;
            return;
        }
        *footprint = footprint.saturating_add(stack);
        let mut kernel = Vec::new();
        let mut user_chain = Vec::new();
        if let Some(chain) = s.callchain {
            let mut ctx_marker = context::KERNEL;
            for ip in chain.iter() {
                if ip >= context::MAX {
                    ctx_marker = ip;
                    continue;
                }
                match ctx_marker {
                    context::KERNEL => kernel.push(ip),
                    context::USER => user_chain.push(ip),
                    _ => {}
                }
            }
        }
        let mut frames: Vec<FrameDesc> = Vec::new();
        if cs.kernel_frames {
            // Named, never written with their address (KASLR).
            let symbols = self.kernel_symbols.as_ref();
            frames.extend(kernel.into_iter().map(|ip| kernel_frame(symbols, ip)));
        }
        // A kernel thread has kernel frames only, and no unwinding error.
        if kthread {
            packets::write_sample(sink, &mut self.interner, &h, &counts, Some(&frames), None);
            self.stats.samples += 1;
            return;
        }
        if let Some(w) = &self.worker {
            let job = UnwindJob {
                header: h,
                counts,
                record: rec.to_vec(),
                kernel_frames: frames,
                user_chain,
                mode: cs.user_frames,
                stack_bytes: stack,
            };
            if let Err(job) = w.push(job) {
                packets::write_skipped(
                    sink,
                    &job.header,
                    &job.counts,
                    SampleSkipReason::ProfilerSkipUnwindEnqueue,
                );
                self.stats.skipped += 1;
                self.stats.unwind_queue_full += 1;
            }
            return;
        }
        let (user, error) = match &mut self.unwinder {
            Some(u) => u.unwind(&UserInput {
                pid: h.pid,
                sample: s,
                fp_chain: &user_chain,
                mode: cs.user_frames,
            }),
            None => (Vec::new(), None),
        };
        frames.extend(user);
        if error.is_some() {
            self.stats.unwind_errors += 1;
        }
        packets::write_sample(sink, &mut self.interner, &h, &counts, Some(&frames), error);
        self.stats.samples += 1;
    }

    /// The sequence's first packet: defaults and fixed interned entries,
    /// the incremental state cleared.
    pub(super) fn write_defaults(&self, sink: &mut dyn PacketSink) {
        packets::write_start(
            sink,
            &Defaults {
                ts: (self.ctx.clock)(),
                clock_id: packets::builtin_clock_id(self.options.clock),
                interval: self.options.interval,
                timebase: &self.options.timebase,
                followers: &self.options.followers,
                shard: self.sharding.map(|s| (s.count, s.chosen)),
            },
        );
    }

    /// What this instance holds: the guardrail weighs it, not the
    /// process's memory, which the tracing service's buffers share when
    /// the probes run inside `zerotraced` (`perf::footprint`).
    pub(super) fn footprint(&self) -> Footprint {
        Footprint {
            queued_bytes: self.drain.as_ref().map_or(0, Drain::queued_bytes),
            interned_entries: self.interner.len() as u64,
            scope_entries: self.scope.len() as u64,
            unwinder_bytes: match (&self.worker, &self.unwinder) {
                (Some(w), _) => w.footprint_bytes(),
                (None, Some(u)) => u.footprint_bytes(),
                (None, None) => 0,
            },
        }
    }

    /// Whether the memory guardrail is due at `now_ns` (once a second, as
    /// upstream checks it) and the instance's footprint is past
    /// `max_daemon_memory_kb`.
    pub(super) fn over_memory(&mut self, now_ns: u64) -> bool {
        let guardrail = MemoryGuardrail::new(self.options.max_daemon_memory_kb);
        if guardrail.is_off() || self.next_memory_check.is_some_and(|t| now_ns < t) {
            return false;
        }
        self.next_memory_check = Some(now_ns.saturating_add(MEMORY_CHECK_PERIOD_NS));
        (self.memory)(&self.footprint()).is_some_and(|kb| guardrail.is_passed_by(kb))
    }

    /// Sets the first read, unwinder clear and memory check from the start
    /// at `now_ns`.
    pub(super) fn arm_timers(&mut self, now_ns: u64) {
        let ms = |v: u32| now_ns.saturating_add(u64::from(v) * 1_000_000);
        self.next = Some(ms(self.options.read_period_ms));
        self.next_clear = (self.options.unwind_state_clear_period_ms != 0)
            .then(|| ms(self.options.unwind_state_clear_period_ms));
        self.next_memory_check = Some(now_ns.saturating_add(MEMORY_CHECK_PERIOD_NS));
    }

    /// Moves the unwinder to its own thread when samples have callstacks
    /// to unwind (else, or where no thread can be had, it stays here).
    pub(super) fn start_unwinder(&mut self) {
        if self.options.callstacks.is_none() {
            return;
        }
        let Some(unwinder) = self.unwinder.take() else {
            return;
        };
        let queue = Handover::new(
            self.unwind_capacity,
            self.options.max_enqueued_footprint_bytes,
        );
        match UnwindWorker::start(unwinder, self.layout, queue, self.ctx.wake.clone()) {
            Ok(w) => self.worker = Some(w),
            Err((unwinder, e)) => {
                self.unwinder = Some(unwinder);
                (self.ctx.log)(&format!(
                    "{NAME}: no unwinder thread, unwinding on the probes' thread: {e}"
                ));
            }
        }
    }

    /// Clears the unwinder's state (after the samples queued before).
    pub(super) fn clear_unwinder(&mut self) {
        if let Some(w) = &self.worker {
            w.push_control(Task::Clear);
        } else if let Some(u) = &mut self.unwinder {
            u.clear();
        }
    }

    /// Stops the unwinder's thread once it unwound what was queued, or at
    /// [`STOP_UNWIND_LIMIT`]: what it unwound is written, what it did not
    /// is written as skipped, and the loss is said in the log.
    pub(super) fn finish_unwinder(&mut self, sink: &mut dyn PacketSink) {
        let Some(w) = self.worker.take() else { return };
        let (done, left) = w.finish(STOP_UNWIND_LIMIT);
        for u in &done {
            self.write_one_unwound(sink, u);
        }
        if !left.is_empty() {
            (self.ctx.log)(&format!(
                "{NAME}: {} samples not unwound within {STOP_UNWIND_LIMIT:?} of the stop: \
                 written as skipped (unwind stage)",
                left.len()
            ));
        }
        self.write_not_unwound(sink, &left);
    }

    pub(super) fn stop_events(&mut self) {
        self.for_each_event(|ev| {
            let _ = ev.disable();
        });
    }
}

impl Probe for PerfProbe {
    fn start(&mut self, now_ns: u64, sink: &mut dyn PacketSink) {
        self.write_defaults(sink);
        let log = self.ctx.log.clone();
        self.for_each_event(|ev| {
            if let Err(e) = ev.enable() {
                log(&format!("{NAME}: enabling cpu {}: {e}", ev.cpu()));
            }
        });
        self.arm_timers(now_ns);
        let period = std::time::Duration::from_millis(u64::from(self.options.read_period_ms));
        let events = std::mem::take(&mut self.events);
        // Without the thread, the events are read on the probes' thread
        // every period (as upstream reads them).
        let stack_size = (self.layout.sample_type & crate::perf::abi::sample::STACK_USER != 0)
            .then_some(u64::from(crate::perf::event::STACK_USER_BYTES));
        match Drain::start_capped(
            events,
            period,
            stack_size,
            self.queue_cap,
            self.ctx.wake.clone(),
        ) {
            Ok(d) => self.drain = Some(d),
            Err((events, e)) => {
                self.events = events;
                (self.ctx.log)(&format!(
                    "{NAME}: no drain thread, reading every period: {e}"
                ));
            }
        }
        self.start_unwinder();
    }

    fn next_deadline(&self) -> Option<u64> {
        if self.stopped {
            return None;
        }
        // What the drain thread read is unwound now.
        if self.drain.as_ref().is_some_and(Drain::has_chunks)
            || self.worker.as_ref().is_some_and(UnwindWorker::has_done)
        {
            return Some(0);
        }
        self.next
    }

    fn poll(&mut self, now_ns: u64, sink: &mut dyn PacketSink) {
        if self.stopped {
            return;
        }
        if self.over_memory(now_ns) {
            self.stop_events();
            packets::write_guardrail_stop(sink, now_ns);
            (self.ctx.log)(&format!(
                "{NAME}: stopped: memory above max_daemon_memory_kb ({} kB)",
                self.options.max_daemon_memory_kb
            ));
            self.stopped = true;
            return;
        }
        let due = self.next.is_some_and(|n| n <= now_ns);
        if self.drain.is_some() {
            self.handle_queued(sink, now_ns);
        } else {
            self.read_all(sink, now_ns);
        }
        if self.next_clear.is_some_and(|t| t <= now_ns) {
            self.clear_unwinder();
            self.next_clear =
                Some(now_ns + u64::from(self.options.unwind_state_clear_period_ms) * 1_000_000);
        }
        if due || self.drain.is_none() {
            let period = u64::from(self.options.read_period_ms) * 1_000_000;
            self.next = Some(self.next.map_or(now_ns, |n| n.max(now_ns)) + period);
        }
    }

    /// As upstream's reader stop: the events disabled, then the buffers
    /// read until empty (the drain's queue and what is left in the kernel,
    /// whatever the queue's cap), every sample handled before the stop is
    /// answered.
    fn stop(&mut self, now_ns: u64, sink: &mut dyn PacketSink) {
        self.stop_events();
        if !self.stopped {
            match self.drain.take() {
                Some(d) => {
                    let mut footprint = 0;
                    for c in d.finish() {
                        if c.malformed {
                            self.stats.malformed += 1;
                        }
                        self.handle_bytes(c.cpu, &c.bytes, sink, now_ns, &mut footprint);
                    }
                }
                None => self.read_all(sink, now_ns),
            }
        }
        self.drain = None;
        self.finish_unwinder(sink);
        self.stopped = true;
        let queue_full = self.stats.unwind_queue_full;
        if queue_full > 0 {
            (self.ctx.log)(&format!(
                "{NAME}: {queue_full} samples found the unwind queue full: written as skipped \
                 (unwind enqueue)"
            ));
        }
    }

    fn flush(&mut self, now_ns: u64, sink: &mut dyn PacketSink) {
        if !self.stopped {
            self.read_all(sink, now_ns);
        }
    }

    /// As `traced_perf`: the defaults and the fixed interned entries again
    /// (the sequence's state cleared), and every mapping, frame and
    /// callstack interned anew when next used.
    fn clear_incremental_state(&mut self, _now_ns: u64, sink: &mut dyn PacketSink) {
        if self.stopped {
            return;
        }
        self.interner = Interner::new();
        self.write_defaults(sink);
    }

    fn stats(&self) -> ProbeStats {
        ProbeStats {
            packets: self.stats.samples + self.stats.skipped,
            read_errors: self.stats.malformed,
            skipped_polls: 0,
        }
    }
}
