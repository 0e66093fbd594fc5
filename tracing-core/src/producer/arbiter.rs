//! [`SharedMemoryArbiter`]: hands out chunks of the shared memory buffer to the
//! trace writers of a process and batches what they return into
//! `CommitDataRequest`s.
//!
//! Writers touch the arbiter only when they need a chunk (theirs is full) or
//! return one, so its lock is off the per-packet path. Chunks are searched
//! round-robin from the page used last; a free page is partitioned with the
//! configured layout (one chunk per page by default, like Perfetto). When no
//! chunk is free the writer's [`BufferExhaustedPolicy`] decides between
//! dropping and stalling with a bounded back-off. Returned chunks are marked
//! Complete at once and listed in a pending request; the request goes to the
//! [`CommitSink`] on a flush, immediately when a patch was queued or half of
//! the buffer is waiting, or while a writer stalls.
//!
//! For startup tracing an arbiter can also start *unbound*
//! ([`SharedMemoryArbiter::new_unbound`]): over a buffer the producer made
//! itself, with no sink yet. Its startup writers write for reservations
//! (see [`crate::producer::startup`]); nothing is committed until
//! [`SharedMemoryArbiter::bind_to_sink`], and a reservation's commits wait
//! for [`SharedMemoryArbiter::bind_startup_target_buffer`] (or are freed by
//! [`SharedMemoryArbiter::abort_startup_reservation`]). Writers of an arbiter
//! that was ever unbound never stall: they drop.

use std::sync::{Arc, Mutex, MutexGuard, OnceLock, PoisonError};
use std::time::Duration;

use crate::abi::{Chunk, ChunkFlags, ChunkHeader, PageLayout, SharedMemoryAbi};
use crate::producer::buffer_exhausted_policy::{BufferExhaustedPolicy, StallConfig};
use crate::producer::commit_sink::{CommitSink, FlushCallback};
use crate::producer::error::ProducerError;
use crate::producer::patch_list::{Patch, PatchList};
use crate::producer::smb_view::SmbView;
use crate::producer::startup::{Release, Route, StartupRegistry, discard_chunk, split_held};
use crate::producer::trace_writer::TraceWriter;
use crate::producer::writer_id_allocator::WriterIdAllocator;
use crate::protocol::WriterId;
use crate::protocol::{ChunkToMove, ChunkToPatch, CommitDataRequest, PatchData};
use crate::shm::SharedMemoryRegion;

/// Arbiter settings.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ArbiterConfig {
    /// Layout used to partition free pages (Perfetto: `Div1`).
    pub page_layout: PageLayout,
    /// Back-off of the stalling policies.
    pub stall: StallConfig,
    /// Apply patches in the SMB while the patched chunk is still in the
    /// uncommitted batch (Perfetto's direct SMB patching, which every service
    /// supports). Such chunks stay BeingWritten until patched or flushed, and
    /// no patch has to be sent, so no immediate commit is needed.
    pub direct_patching: bool,
}

impl Default for ArbiterConfig {
    fn default() -> Self {
        ArbiterConfig {
            page_layout: PageLayout::Div1,
            stall: StallConfig::default(),
            direct_patching: true,
        }
    }
}

/// Counters kept by the arbiter.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ArbiterStats {
    /// Chunks handed to writers.
    pub chunks_acquired: u64,
    /// Chunks returned by writers.
    pub chunks_returned: u64,
    /// Acquisitions that found no free chunk and gave up (drop).
    pub acquire_failures: u64,
    /// Back-off rounds spent waiting for a chunk.
    pub stalls: u64,
    /// Requests passed to the sink.
    pub commits_sent: u64,
    /// Returned chunks whose state transition was refused (a peer broke the ABI).
    pub abi_errors: u64,
    /// Patches applied directly in the SMB.
    pub patches_applied_directly: u64,
    /// Patches queued for the service.
    pub patches_sent: u64,
    /// Chunks of aborted startup reservations freed without being committed.
    pub startup_chunks_discarded: u64,
    /// Startup reservations aborted here (their chunks freed, their writers
    /// refused chunks from then on).
    pub startup_reservations_aborted: u64,
}

#[derive(Debug, Default)]
struct ArbiterState {
    page_idx: usize,
    writer_ids: WriterIdAllocator,
    pending: Option<CommitDataRequest>,
    /// Requests already sent, emptied, for the next batches to fill (a
    /// batch can fill while the one before is being sent).
    spares: Vec<CommitDataRequest>,
    /// Emptied patch lists of sent requests, for the next patch groups.
    patch_lists: Vec<Vec<PatchData>>,
    bytes_pending_commit: usize,
    /// Chunks of the pending batch kept BeingWritten because they await patches.
    unpatched: Vec<Chunk<'static>>,
    stats: ArbiterStats,
    /// Startup reservations and their writers.
    startup: StartupRegistry,
}

/// Requests kept ready for batches: one being sent, one filling, and one
/// more for a flush a writer thread makes itself meanwhile.
const SPARE_REQUESTS: usize = 3;
/// Patch lists kept ready (one per chunk with patches in a batch).
const SPARE_PATCH_LISTS: usize = 64;
/// Most entries reserved up front in a request's lists.
const MAX_RESERVED_CHUNKS: usize = 4096;

impl ArbiterState {
    /// A state whose batch storage is allocated up front for an SMB of
    /// `chunks` chunks, so writers allocate nothing even while commits lag.
    fn preallocated(chunks: usize) -> ArbiterState {
        let chunks = chunks.clamp(1, MAX_RESERVED_CHUNKS);
        let request = || {
            let mut r = CommitDataRequest::default();
            r.chunks_to_move.reserve(chunks);
            r.chunks_to_patch.reserve(chunks.min(SPARE_PATCH_LISTS));
            r
        };
        ArbiterState {
            spares: (0..SPARE_REQUESTS).map(|_| request()).collect(),
            patch_lists: (0..SPARE_PATCH_LISTS)
                .map(|_| Vec::with_capacity(8))
                .collect(),
            unpatched: Vec::with_capacity(chunks),
            ..ArbiterState::default()
        }
    }
}

/// Applies `patch` in place if its chunk is still in the batch (`unpatched`);
/// when no more patches for it follow, clears its NeedsPatching flag and
/// completes it.
fn try_direct_patch(
    unpatched: &mut Vec<Chunk<'static>>,
    stats: &mut ArbiterStats,
    abi: &SharedMemoryAbi,
    writer_id: u16,
    patch: &Patch,
    more: bool,
) -> bool {
    let Some(i) = unpatched
        .iter()
        .rposition(|c| c.writer_id() == writer_id && c.chunk_id() == patch.chunk_id)
    else {
        return false;
    };
    if !unpatched[i].write_payload(usize::from(patch.offset), &patch.data) {
        return false;
    }
    stats.patches_applied_directly += 1;
    if !more {
        let mut chunk = unpatched.swap_remove(i);
        chunk.clear_flags(ChunkFlags::CHUNK_NEEDS_PATCHING);
        if abi.release_chunk_as_complete(chunk).is_err() {
            stats.abi_errors += 1;
        }
    }
    true
}

/// Appends the entries of `more` to `req`.
fn append_request(req: &mut CommitDataRequest, mut more: CommitDataRequest) {
    req.chunks_to_move.append(&mut more.chunks_to_move);
    req.chunks_to_patch.append(&mut more.chunks_to_patch);
}

/// Chunk allocator and commit batcher for one shared memory buffer.
pub struct SharedMemoryArbiter {
    /// The buffer (its ABI view and the region keeping it mapped), shared
    /// with the commit path of the connection it came with.
    smb: Arc<SmbView>,
    /// Where commits go; unset while an arbiter made unbound waits for it.
    sink: OnceLock<Arc<dyn CommitSink>>,
    /// Made unbound: its writers never stall.
    ever_unbound: bool,
    config: ArbiterConfig,
    state: Mutex<ArbiterState>,
    /// Held while a request is taken and handed to the sink, so requests reach
    /// the sink in the order they were taken (patches after their chunk).
    commit_order: Mutex<()>,
}

impl core::fmt::Debug for SharedMemoryArbiter {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("SharedMemoryArbiter")
            .field("abi", &self.smb.abi)
            .field("config", &self.config)
            .finish_non_exhaustive()
    }
}

mod startup_api;

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

impl SharedMemoryArbiter {
    /// An arbiter over `region` cut into pages of `page_size`, committing to `sink`.
    pub fn new(
        region: Arc<dyn SharedMemoryRegion>,
        page_size: usize,
        sink: Arc<dyn CommitSink>,
        config: ArbiterConfig,
    ) -> Result<Arc<SharedMemoryArbiter>, ProducerError> {
        let sink_cell = OnceLock::new();
        let _ = sink_cell.set(sink);
        Self::build(region, page_size, sink_cell, config)
    }

    /// An *unbound* arbiter over a buffer the producer made itself, for
    /// startup tracing: it hands out chunks to startup writers
    /// ([`Self::create_startup_trace_writer`]) but commits nothing until
    /// [`Self::bind_to_sink`]. Its writers always drop when the buffer is
    /// full (stalling could wait for a service that is not there).
    pub fn new_unbound(
        region: Arc<dyn SharedMemoryRegion>,
        page_size: usize,
        config: ArbiterConfig,
    ) -> Result<Arc<SharedMemoryArbiter>, ProducerError> {
        Self::build(region, page_size, OnceLock::new(), config)
    }

    fn build(
        region: Arc<dyn SharedMemoryRegion>,
        page_size: usize,
        sink: OnceLock<Arc<dyn CommitSink>>,
        config: ArbiterConfig,
    ) -> Result<Arc<SharedMemoryArbiter>, ProducerError> {
        // Checked before the region is claimed, so a refused layout leaves
        // it free.
        if config.page_layout == PageLayout::NotPartitioned {
            return Err(ProducerError::InvalidLayout);
        }
        Self::over(SmbView::claim(region, page_size)?, sink, config)
    }

    /// An arbiter over the claimed buffer `smb` (the client's commit path
    /// holds it too), committing to `sink` once it is set.
    pub(crate) fn over(
        smb: Arc<SmbView>,
        sink: OnceLock<Arc<dyn CommitSink>>,
        config: ArbiterConfig,
    ) -> Result<Arc<SharedMemoryArbiter>, ProducerError> {
        if config.page_layout == PageLayout::NotPartitioned {
            return Err(ProducerError::InvalidLayout);
        }
        let ever_unbound = sink.get().is_none();
        let state =
            ArbiterState::preallocated(smb.abi.num_pages() * config.page_layout.num_chunks());
        Ok(Arc::new(SharedMemoryArbiter {
            smb,
            sink,
            ever_unbound,
            config,
            state: Mutex::new(state),
            commit_order: Mutex::new(()),
        }))
    }

    /// The buffer, for a commit path that must reach its chunks.
    pub(crate) fn smb(&self) -> &Arc<SmbView> {
        &self.smb
    }

    /// The ABI view of the buffer (an in-process service reads chunks through it).
    pub fn abi(&self) -> &SharedMemoryAbi {
        &self.smb.abi
    }

    /// The memory region.
    pub fn region(&self) -> &Arc<dyn SharedMemoryRegion> {
        &self.smb.region
    }

    /// The settings.
    pub fn config(&self) -> &ArbiterConfig {
        &self.config
    }

    /// A snapshot of the counters.
    pub fn stats(&self) -> ArbiterStats {
        lock(&self.state).stats
    }

    /// Whether the arbiter has a sink (it was made bound, or bound since).
    pub fn is_bound(&self) -> bool {
        self.sink.get().is_some()
    }

    /// Whether the arbiter was made unbound (then its writers never stall).
    pub fn was_ever_unbound(&self) -> bool {
        self.ever_unbound
    }

    /// Creates a writer with a fresh id that writes into `target_buffer` and
    /// registers it with the sink. An unbound arbiter has no sink to
    /// register with: it refuses ([`ProducerError::NotBound`]).
    pub fn create_trace_writer(
        self: &Arc<Self>,
        target_buffer: u16,
        policy: BufferExhaustedPolicy,
    ) -> Result<TraceWriter, ProducerError> {
        let sink = self.sink.get().ok_or(ProducerError::NotBound)?;
        let id = lock(&self.state)
            .writer_ids
            .allocate()
            .ok_or(ProducerError::WriterIdsExhausted)?
            .get();
        sink.register_trace_writer(id, target_buffer);
        Ok(TraceWriter::new(
            Arc::clone(self),
            id,
            target_buffer,
            policy,
        ))
    }

    /// Gives a writer id back (the writer was dropped).
    pub(crate) fn release_writer_id(&self, id: u16) {
        let registered = {
            let mut st = lock(&self.state);
            let registered = match st.startup.remove_writer(id) {
                Release::NotStartup => true,
                Release::Now { registered } => registered,
                // Its held chunks still need the id (see `Release`).
                Release::Deferred => return,
            };
            if let Some(id) = WriterId::new(id) {
                st.writer_ids.release(id);
            }
            registered
        };
        if let (true, Some(sink)) = (registered, self.sink.get()) {
            sink.unregister_trace_writer(id);
        }
    }

    fn try_acquire_any(&self, header: &ChunkHeader) -> Option<Chunk<'static>> {
        let mut st = lock(&self.state);
        if !st.startup.has_no_writers()
            && st.startup.route(header.writer_id) == Some(Route::Discard)
        {
            // A writer of an aborted reservation: its data goes nowhere.
            return None;
        }
        let n = self.smb.abi.num_pages();
        let start = st.page_idx;
        for i in 0..n {
            let page = (start + i) % n;
            if self.smb.abi.is_page_free(page) {
                // Losing this race to another partitioner is fine.
                let _ = self
                    .smb
                    .abi
                    .try_partition_page(page, self.config.page_layout);
            }
            let mut free = self.smb.abi.free_chunks(page);
            while free != 0 {
                let idx = free.trailing_zeros() as usize;
                free &= free - 1;
                if let Ok(chunk) = self
                    .smb
                    .abi
                    .try_acquire_chunk_for_writing(page, idx, header)
                {
                    st.page_idx = page;
                    st.stats.chunks_acquired += 1;
                    // SAFETY: chunks handed out here live only in this
                    // arbiter's state and in trace writers, which hold an
                    // `Arc` to the arbiter, and the arbiter keeps `region`
                    // (the mapping) alive until it is dropped.
                    return Some(unsafe { chunk.detach() });
                }
            }
        }
        None
    }

    /// Finds a free chunk and writes `header` into it, applying `policy` when
    /// none is free. `None` means the caller must drop data.
    pub(crate) fn get_new_chunk(
        &self,
        header: &ChunkHeader,
        policy: BufferExhaustedPolicy,
    ) -> Option<Chunk<'static>> {
        let policy = if self.ever_unbound {
            BufferExhaustedPolicy::Drop
        } else {
            policy
        };
        let mut stalls: u32 = 0;
        let mut interval = Duration::ZERO;
        loop {
            if let Some(c) = self.try_acquire_any(header) {
                return Some(c);
            }
            let give_up = match policy {
                BufferExhaustedPolicy::Drop => true,
                BufferExhaustedPolicy::StallThenDrop | BufferExhaustedPolicy::StallThenAbort => {
                    stalls >= self.config.stall.max_stalls
                }
            };
            if give_up && policy == BufferExhaustedPolicy::StallThenAbort {
                self.abort_stalled(stalls);
            }
            if give_up {
                lock(&self.state).stats.acquire_failures += 1;
                return None;
            }
            stalls = stalls.saturating_add(1);
            let has_pending = {
                let mut st = lock(&self.state);
                st.stats.stalls += 1;
                st.pending.is_some()
            };
            let Some(sink) = self.sink.get() else {
                // Unreachable: only an arbiter made unbound lacks a sink,
                // and its writers drop instead of stalling.
                return None;
            };
            if has_pending && !sink.commits_in_background() {
                // Completed chunks the service was not told about cannot be
                // freed: send them before waiting.
                self.flush_pending_commit_data_requests(None);
            } else if has_pending {
                // Or have the committer send them, and wait as long as the
                // back-off says (the stall limit counts these waits too).
                sink.commit_urgent();
                if interval.is_zero() {
                    std::thread::yield_now();
                } else {
                    std::thread::sleep(interval);
                }
            } else if interval.is_zero() {
                std::thread::yield_now();
            } else {
                std::thread::sleep(interval);
            }
            interval = self.config.stall.next_interval(interval);
        }
    }

    /// STALL_THEN_ABORT gave up: the service has not freed a chunk for the
    /// whole stall limit. Like Perfetto's client library, end the process,
    /// saying why (the data source's config chose this over dropping).
    #[cold]
    fn abort_stalled(&self, stalls: u32) -> ! {
        eprintln!(
            "zerotrace: the shared memory buffer ({} bytes) stayed full for {stalls} attempts; \
             the tracing service is not freeing chunks. The data source's \
             buffer_exhausted_policy is STALL_THEN_ABORT, so the process aborts \
             (STALL_THEN_DROP or DROP would drop packets instead).",
            self.smb.abi.size()
        );
        std::process::abort()
    }

    /// Marks `chunk` Complete, queues it for the service together with the
    /// ready patches at the head of `patch_list`.
    pub(crate) fn return_completed_chunk(
        &self,
        chunk: Chunk<'static>,
        target_buffer: u16,
        patch_list: &mut PatchList,
    ) {
        let writer_id = chunk.writer_id();
        self.update_commit_data_request(Some(chunk), writer_id, target_buffer, patch_list);
    }

    /// Queues the ready patches at the head of `patch_list`.
    pub(crate) fn send_patches(
        &self,
        writer_id: u16,
        target_buffer: u16,
        patch_list: &mut PatchList,
    ) {
        self.update_commit_data_request(None, writer_id, target_buffer, patch_list);
    }

    fn update_commit_data_request(
        &self,
        chunk: Option<Chunk<'static>>,
        writer_id: u16,
        target_buffer: u16,
        patch_list: &mut PatchList,
    ) {
        let (urgent, new_batch) = {
            let mut guard = lock(&self.state);
            let ArbiterState {
                pending,
                spares,
                patch_lists,
                bytes_pending_commit,
                unpatched,
                stats,
                startup,
                ..
            } = &mut *guard;
            let target = if startup.has_no_writers() {
                u32::from(target_buffer)
            } else {
                match startup.route(writer_id) {
                    None => u32::from(target_buffer),
                    Some(Route::Commit(t)) => t,
                    Some(Route::Discard) => {
                        // An aborted reservation: free the chunk, forget
                        // the patches.
                        if let Some(chunk) = chunk {
                            stats.chunks_returned += 1;
                            let (page, index) = (chunk.page_index(), chunk.chunk_index());
                            if discard_chunk(&self.smb.abi, page, index, Some(chunk)) {
                                stats.startup_chunks_discarded += 1;
                            } else {
                                stats.abi_errors += 1;
                            }
                        }
                        while patch_list.pop_ready().is_some() {}
                        return;
                    }
                }
            };
            let new_batch = pending.is_none();
            let req = pending.get_or_insert_with(|| spares.pop().unwrap_or_default());
            if let Some(chunk) = chunk {
                stats.chunks_returned += 1;
                let size = chunk.size();
                let index = chunk.chunk_index() as u32;
                let keep = self.config.direct_patching
                    && chunk
                        .packets()
                        .flags
                        .contains(ChunkFlags::CHUNK_NEEDS_PATCHING);
                let released = if keep {
                    let page = chunk.page_index();
                    unpatched.push(chunk);
                    Ok(page)
                } else {
                    self.smb.abi.release_chunk_as_complete(chunk)
                };
                match released {
                    Ok(page) => {
                        *bytes_pending_commit += size;
                        req.chunks_to_move.push(ChunkToMove {
                            page: page as u32,
                            chunk: index,
                            target_buffer: target,
                            ..ChunkToMove::default()
                        });
                    }
                    Err(_) => stats.abi_errors += 1,
                }
            }
            let mut last: Option<usize> = None;
            while let Some(p) = patch_list.pop_ready() {
                let more = patch_list.front().is_some_and(|f| f.chunk_id == p.chunk_id);
                if self.config.direct_patching
                    && try_direct_patch(unpatched, stats, &self.smb.abi, writer_id, &p, more)
                {
                    continue;
                }
                stats.patches_sent += 1;
                let i = match last {
                    Some(i) if req.chunks_to_patch[i].chunk_id == p.chunk_id => i,
                    _ => {
                        req.chunks_to_patch.push(ChunkToPatch {
                            target_buffer: target,
                            writer_id: u32::from(writer_id),
                            chunk_id: p.chunk_id,
                            patches: patch_lists.pop().unwrap_or_default(),
                            has_more_patches: false,
                        });
                        req.chunks_to_patch.len() - 1
                    }
                };
                req.chunks_to_patch[i].patches.push(PatchData {
                    offset: u32::from(p.offset),
                    data: p.data,
                });
                last = Some(i);
            }
            if let Some(i) = last {
                let group = &mut req.chunks_to_patch[i];
                group.has_more_patches = patch_list
                    .front()
                    .is_some_and(|f| f.chunk_id == group.chunk_id);
            }
            let urgent = last.is_some() || *bytes_pending_commit >= self.smb.abi.size() / 2;
            (urgent, new_batch)
        };
        let Some(sink) = self.sink.get() else {
            // Unbound: everything waits for `bind_to_sink`.
            return;
        };
        if urgent && !sink.commits_in_background() {
            self.flush_pending_commit_data_requests(None);
        } else if urgent {
            sink.commit_urgent();
        } else if new_batch {
            sink.commit_pending();
        }
    }

    /// Sends the pending request (or an empty one when only a callback is
    /// given, so that the callback fires once the service acks). Commits of
    /// unbound startup reservations stay behind; an unbound arbiter sends
    /// nothing and keeps the callback until it is bound.
    pub fn flush_pending_commit_data_requests(&self, callback: Option<FlushCallback>) {
        let Some(sink) = self.sink.get() else {
            if let Some(cb) = callback {
                lock(&self.state).startup.held_callbacks.push(cb);
            }
            return;
        };
        let _order = lock(&self.commit_order);
        let req = {
            let mut st = lock(&self.state);
            st.bytes_pending_commit = 0;
            // Batched chunks still awaiting patches go to the service as they
            // are (flag set); their patches follow in a later request.
            let ArbiterState {
                unpatched, stats, ..
            } = &mut *st;
            for chunk in unpatched.drain(..) {
                if self.smb.abi.release_chunk_as_complete(chunk).is_err() {
                    stats.abi_errors += 1;
                }
            }
            let mut req = st.pending.take();
            if let Some(r) = req.as_mut()
                && st.startup.has_unbound()
            {
                let held = split_held(r);
                append_request(&mut st.startup.held, held);
                if r.is_empty() {
                    req = None;
                }
            }
            if req.is_some() || callback.is_some() {
                st.stats.commits_sent += 1;
            }
            req
        };
        if req.is_none() && callback.is_none() {
            return;
        }
        let mut req = req.unwrap_or_default();
        sink.commit_data(&mut req, callback);
        let mut lists: Vec<Vec<PatchData>> = req
            .chunks_to_patch
            .drain(..)
            .map(|mut g| {
                g.patches.clear();
                g.patches.reserve(8);
                g.patches
            })
            .collect();
        req.clear();
        // Room for every chunk of the buffer, reserved here (on the thread
        // that sends), so writers fill it without allocating.
        let mut st = lock(&self.state);
        if st.spares.len() < SPARE_REQUESTS {
            st.spares.push(req);
        }
        lists.truncate(SPARE_PATCH_LISTS.saturating_sub(st.patch_lists.len()));
        st.patch_lists.append(&mut lists);
    }

    /// Acknowledges service flush `id` with the next commit (sent now).
    pub fn notify_flush_complete(&self, id: u64) {
        {
            let mut st = lock(&self.state);
            let req = st.pending.get_or_insert_with(CommitDataRequest::default);
            req.flush_request_id = Some(req.flush_request_id.map_or(id, |old| old.max(id)));
        }
        self.flush_pending_commit_data_requests(None);
    }
}
