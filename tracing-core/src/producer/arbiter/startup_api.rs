//! The startup-tracing half of [`SharedMemoryArbiter`]'s API: reservations,
//! startup writers, and binding an unbound arbiter (to its sink) and its
//! reservations (to service buffers), or aborting them. The bookkeeping
//! itself lives in [`crate::producer::startup`].

use std::sync::Arc;

use super::{SharedMemoryArbiter, lock};
use crate::producer::buffer_exhausted_policy::BufferExhaustedPolicy;
use crate::producer::commit_sink::{CommitSink, FlushCallback};
use crate::producer::error::ProducerError;
use crate::producer::startup::{
    ReservationState, discard_chunk, placeholder_buffer, rebind_request, remove_reservation,
    split_held,
};
use crate::producer::trace_writer::TraceWriter;
use crate::protocol::{CommitDataRequest, WriterId};

impl SharedMemoryArbiter {
    /// Opens a new startup reservation: a target for startup writers until
    /// a session's buffer is known.
    pub fn create_startup_reservation(&self) -> Result<u16, ProducerError> {
        lock(&self.state).startup.new_reservation()
    }

    /// Where `reservation` stands (`None`: unknown, or settled and forgotten
    /// once its last writer was dropped).
    pub fn startup_reservation_state(&self, reservation: u16) -> Option<ReservationState> {
        lock(&self.state).startup.state(reservation)
    }

    /// Creates a startup writer for `reservation`. It writes at once; its
    /// chunks are committed with the reservation's placeholder id and held
    /// until the reservation is bound (or freed if it is aborted). Its
    /// policy is always DROP, and [`TraceWriter::target_buffer`] reads 0
    /// while the reservation is unbound. A writer for an already bound
    /// reservation is registered right away.
    pub fn create_startup_trace_writer(
        self: &Arc<Self>,
        reservation: u16,
    ) -> Result<TraceWriter, ProducerError> {
        let (id, bound) = {
            let mut st = lock(&self.state);
            let id = st
                .writer_ids
                .allocate()
                .ok_or(ProducerError::WriterIdsExhausted)?;
            match st.startup.add_writer(id.get(), reservation) {
                Ok(bound) => {
                    if bound.is_some() && self.sink.get().is_some() {
                        st.startup.set_registered(id.get());
                    }
                    (id.get(), bound)
                }
                Err(e) => {
                    st.writer_ids.release(id);
                    return Err(e);
                }
            }
        };
        if let (Some(buffer), Some(sink)) = (bound, self.sink.get()) {
            sink.register_trace_writer(id, buffer);
        }
        Ok(TraceWriter::new(
            Arc::clone(self),
            id,
            bound.unwrap_or(0),
            BufferExhaustedPolicy::Drop,
        ))
    }

    /// Gives an unbound arbiter its sink: the writers of already bound
    /// reservations are registered, and every commit not waiting for a
    /// reservation goes out (flush callbacks held meanwhile run once the
    /// service acked).
    pub fn bind_to_sink(&self, sink: Arc<dyn CommitSink>) -> Result<(), ProducerError> {
        self.sink
            .set(sink)
            .map_err(|_| ProducerError::AlreadyBound)?;
        let (writers, callbacks) = {
            let mut st = lock(&self.state);
            let writers = st.startup.unregistered_bound();
            for &(id, _) in &writers {
                st.startup.set_registered(id);
            }
            (writers, std::mem::take(&mut st.startup.held_callbacks))
        };
        if let Some(sink) = self.sink.get() {
            for (id, buffer) in writers {
                sink.register_trace_writer(id, buffer);
            }
        }
        let callback: Option<FlushCallback> = if callbacks.is_empty() {
            None
        } else {
            Some(Box::new(move || callbacks.into_iter().for_each(|cb| cb())))
        };
        self.flush_pending_commit_data_requests(callback);
        self.release_settled_writers();
        Ok(())
    }

    /// Releases the ids of startup writers dropped before their reservation
    /// settled, now that it has (unregistering those that were registered,
    /// after their chunks went out).
    fn release_settled_writers(&self) {
        let done = {
            let mut st = lock(&self.state);
            let done = st.startup.take_dropped_settled();
            for id in done.iter().filter_map(|&(id, _)| WriterId::new(id)) {
                st.writer_ids.release(id);
            }
            done
        };
        if let Some(sink) = self.sink.get() {
            for (id, registered) in done {
                if registered {
                    sink.unregister_trace_writer(id);
                }
            }
        }
    }

    /// Binds `reservation` to the service buffer `target_buffer` (the
    /// session that started the data source names it): its held commits
    /// are rewritten to that id and, once the arbiter is bound, its writers
    /// are registered and the commits sent.
    pub fn bind_startup_target_buffer(
        &self,
        reservation: u16,
        target_buffer: u16,
    ) -> Result<(), ProducerError> {
        let writers = {
            let mut guard = lock(&self.state);
            let st = &mut *guard;
            let writers = st.startup.bind(reservation, target_buffer)?;
            let placeholder = placeholder_buffer(reservation);
            rebind_request(&mut st.startup.held, placeholder, target_buffer);
            if let Some(p) = st.pending.as_mut() {
                rebind_request(p, placeholder, target_buffer);
            }
            // What was held for this reservation goes first: it is older
            // than anything its writers returned since.
            let mut ready = std::mem::take(&mut st.startup.held);
            st.startup.held = split_held(&mut ready);
            if !ready.is_empty() {
                let p = st.pending.get_or_insert_with(CommitDataRequest::default);
                ready.chunks_to_move.append(&mut p.chunks_to_move);
                ready.chunks_to_patch.append(&mut p.chunks_to_patch);
                p.chunks_to_move = ready.chunks_to_move;
                p.chunks_to_patch = ready.chunks_to_patch;
            }
            if self.sink.get().is_none() {
                return Ok(());
            }
            for &id in &writers {
                st.startup.set_registered(id);
            }
            writers
        };
        if let Some(sink) = self.sink.get() {
            for id in writers {
                sink.register_trace_writer(id, target_buffer);
            }
        }
        self.flush_pending_commit_data_requests(None);
        self.release_settled_writers();
        Ok(())
    }

    /// Gives up `reservation` (no session claimed it): its held chunks are
    /// freed without being committed, and its writers get no more chunks
    /// (they drop whatever they write). Returns how many chunks were freed.
    pub fn abort_startup_reservation(&self, reservation: u16) -> Result<usize, ProducerError> {
        let mut guard = lock(&self.state);
        let st = &mut *guard;
        st.startup.abort(reservation)?;
        st.stats.startup_reservations_aborted += 1;
        let placeholder = placeholder_buffer(reservation);
        let mut chunks = remove_reservation(&mut st.startup.held, placeholder);
        if let Some(p) = st.pending.as_mut() {
            chunks.extend(remove_reservation(p, placeholder));
        }
        let mut freed = 0;
        for (page, chunk) in chunks {
            let (page, chunk) = (page as usize, chunk as usize);
            let owned = st
                .unpatched
                .iter()
                .position(|c| c.page_index() == page && c.chunk_index() == chunk)
                .map(|i| st.unpatched.swap_remove(i));
            if discard_chunk(&self.smb.abi, page, chunk, owned) {
                freed += 1;
            } else {
                st.stats.abi_errors += 1;
            }
        }
        st.stats.startup_chunks_discarded += freed as u64;
        // Writers dropped meanwhile were never registered: just free the ids.
        for (id, _) in st.startup.take_dropped_settled() {
            if let Some(id) = WriterId::new(id) {
                st.writer_ids.release(id);
            }
        }
        Ok(freed)
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::{Arc, mpsc};

    use super::*;
    use crate::abi::ChunkState;
    use crate::producer::commit_sink::{ChannelCommitSink, SinkMessage};
    use crate::producer::startup::placeholder_buffer;
    use crate::producer::{ArbiterConfig, StallConfig};
    use crate::shm::HeapShm;

    fn unbound(pages: usize) -> Arc<SharedMemoryArbiter> {
        let region = Arc::new(HeapShm::new(pages * 4096).unwrap());
        SharedMemoryArbiter::new_unbound(region, 4096, ArbiterConfig::default()).unwrap()
    }

    fn bind(a: &SharedMemoryArbiter) -> mpsc::Receiver<SinkMessage> {
        let (sink, rx) = ChannelCommitSink::new();
        a.bind_to_sink(Arc::new(sink)).unwrap();
        rx
    }

    /// Writes `n` packets of about 1.5 KiB (two and a bit per 4 KiB chunk).
    fn write(w: &mut TraceWriter, from: u64, n: u64) {
        for i in from..from + n {
            w.packet(|p| {
                p.set_timestamp(i);
                p.message().append_bytes(900, &[i as u8; 1500]);
            });
        }
    }

    fn moves(rx: &mpsc::Receiver<SinkMessage>) -> Vec<(u32, u32)> {
        rx.try_iter()
            .filter_map(|m| match m {
                SinkMessage::Commit(c) => Some(c),
                _ => None,
            })
            .flat_map(|c| c.chunks_to_move)
            .map(|m| (m.page, m.target_buffer))
            .collect()
    }

    fn free_pages(a: &SharedMemoryArbiter) -> usize {
        let abi = a.abi();
        (0..abi.num_pages())
            .filter(|&p| abi.is_page_free(p))
            .count()
    }

    #[test]
    fn held_until_the_reservation_is_bound_then_sent_in_order() {
        let a = unbound(16);
        assert!(!a.is_bound() && a.was_ever_unbound());
        assert_eq!(
            a.create_trace_writer(1, BufferExhaustedPolicy::Drop).err(),
            Some(ProducerError::NotBound)
        );
        let r = a.create_startup_reservation().unwrap();
        let mut w = a.create_startup_trace_writer(r).unwrap();
        assert_eq!(w.target_buffer(), 0);
        write(&mut w, 0, 10);
        let acked = Arc::new(AtomicBool::new(false));
        let flag = acked.clone();
        w.flush(Some(Box::new(move || flag.store(true, Ordering::SeqCst))));
        assert!(!acked.load(Ordering::SeqCst), "nobody to ack yet");
        assert_eq!(a.stats().commits_sent, 0);

        // Bound to a sink: the held callback runs, the chunks stay held.
        let rx = bind(&a);
        assert!(acked.load(Ordering::SeqCst));
        assert_eq!(moves(&rx), vec![]);
        assert_eq!(
            a.startup_reservation_state(r),
            Some(ReservationState::Unbound)
        );

        // Bound to buffer 3: the writer is registered, then every chunk goes
        // out with the real id, in the order written.
        write(&mut w, 10, 2);
        a.bind_startup_target_buffer(r, 3).unwrap();
        let msgs: Vec<SinkMessage> = rx.try_iter().collect();
        assert_eq!(
            msgs[0],
            SinkMessage::RegisterTraceWriter {
                writer_id: w.writer_id(),
                target_buffer: 3
            }
        );
        let sent: Vec<(u32, u32)> = msgs
            .iter()
            .filter_map(|m| match m {
                SinkMessage::Commit(c) => Some(c.chunks_to_move.clone()),
                _ => None,
            })
            .flatten()
            .map(|m| (m.page, m.target_buffer))
            .collect();
        let pages: Vec<u32> = sent.iter().map(|&(p, _)| p).collect();
        assert!(sent.iter().all(|&(_, b)| b == 3), "{sent:?}");
        assert_eq!(pages, (0..pages.len() as u32).collect::<Vec<_>>());
        assert!(pages.len() >= 4, "{pages:?}");
        // Later chunks go straight to buffer 3.
        write(&mut w, 12, 3);
        w.flush(None);
        assert!(moves(&rx).iter().all(|&(_, b)| b == 3));
        assert_eq!(
            a.bind_startup_target_buffer(r, 4),
            Err(ProducerError::ReservationAlreadyBound)
        );
        drop(w);
        assert_eq!(
            rx.try_iter().last(),
            Some(SinkMessage::UnregisterTraceWriter { writer_id: 1 })
        );
    }

    #[test]
    fn a_writer_dropped_before_the_bind_is_registered_for_its_chunks() {
        let a = unbound(16);
        let rx = bind(&a);
        let r = a.create_startup_reservation().unwrap();
        let mut w = a.create_startup_trace_writer(r).unwrap();
        let id = w.writer_id();
        write(&mut w, 0, 5);
        drop(w);
        // Its id stays taken while its chunks wait.
        let other = a.create_startup_trace_writer(r).unwrap();
        assert_ne!(other.writer_id(), id);
        assert_eq!(rx.try_iter().count(), 0, "nothing sent while unbound");
        a.bind_startup_target_buffer(r, 9).unwrap();
        let msgs: Vec<SinkMessage> = rx.try_iter().collect();
        let at = |m: &SinkMessage| msgs.iter().position(|x| x == m);
        let registered = at(&SinkMessage::RegisterTraceWriter {
            writer_id: id,
            target_buffer: 9,
        })
        .expect("registered");
        let commit = msgs
            .iter()
            .position(|m| matches!(m, SinkMessage::Commit(c) if !c.chunks_to_move.is_empty()))
            .expect("committed");
        let unregistered =
            at(&SinkMessage::UnregisterTraceWriter { writer_id: id }).expect("unregistered");
        assert!(registered < commit && commit < unregistered, "{msgs:?}");
        drop(other);
        // A bound reservation cannot be aborted any more.
        assert!(matches!(
            a.abort_startup_reservation(r),
            Err(ProducerError::ReservationAlreadyBound | ProducerError::UnknownReservation)
        ));
    }

    #[test]
    fn aborted_reservation_frees_its_chunks_and_drops_later_writes() {
        let a = unbound(8);
        let r = a.create_startup_reservation().unwrap();
        let mut w = a.create_startup_trace_writer(r).unwrap();
        write(&mut w, 0, 8);
        w.flush(None);
        let used = 8 - free_pages(&a);
        assert!(used >= 3, "{used}");
        let freed = a.abort_startup_reservation(r).unwrap();
        assert_eq!(freed, used);
        assert_eq!(free_pages(&a), 8, "every page free again");
        assert_eq!(a.stats().startup_chunks_discarded, used as u64);

        // The writer goes on, dropping, without taking chunks.
        write(&mut w, 8, 50);
        assert!(w.drop_count() > 0);
        w.flush(None);
        assert_eq!(free_pages(&a), 8);
        assert_eq!(
            a.create_startup_trace_writer(r).err(),
            Some(ProducerError::ReservationAborted)
        );

        // Binding later sends nothing of it; a new reservation works.
        let rx = bind(&a);
        assert_eq!(
            a.bind_startup_target_buffer(r, 1),
            Err(ProducerError::ReservationAborted)
        );
        assert_eq!(moves(&rx), vec![]);
        let r2 = a.create_startup_reservation().unwrap();
        let mut w2 = a.create_startup_trace_writer(r2).unwrap();
        write(&mut w2, 0, 3);
        w2.flush(None);
        a.bind_startup_target_buffer(r2, 2).unwrap();
        let sent = moves(&rx);
        assert!(!sent.is_empty() && sent.iter().all(|&(_, b)| b == 2));
        drop(w);
        assert_eq!(a.startup_reservation_state(r), None, "forgotten");
    }

    #[test]
    fn abort_frees_a_chunk_held_for_patching() {
        let a = unbound(8);
        let r = a.create_startup_reservation().unwrap();
        let mut w = a.create_startup_trace_writer(r).unwrap();
        // A packet spanning chunks leaves a chunk that needs patching.
        w.packet(|p| {
            let mut nested = p.message().begin_nested(900);
            nested.append_bytes(1, &[7u8; 6000]);
        });
        w.flush(None);
        assert!(a.abort_startup_reservation(r).unwrap() >= 2);
        assert_eq!(free_pages(&a), 8);
        for page in 0..8 {
            assert_ne!(
                a.abi().chunk_state(page, 0).ok(),
                Some(ChunkState::BeingWritten)
            );
        }
    }

    #[test]
    fn normal_writers_are_not_held_back_by_an_unbound_reservation() {
        let a = unbound(16);
        let rx = bind(&a);
        let r = a.create_startup_reservation().unwrap();
        let mut startup = a.create_startup_trace_writer(r).unwrap();
        let mut normal = a
            .create_trace_writer(5, BufferExhaustedPolicy::Drop)
            .unwrap();
        write(&mut startup, 0, 6);
        write(&mut normal, 0, 6);
        startup.flush(None);
        normal.flush(None);
        let sent = moves(&rx);
        assert!(!sent.is_empty());
        assert!(sent.iter().all(|&(_, b)| b == 5), "{sent:?}");
        // The placeholder never leaves the arbiter.
        assert!(sent.iter().all(|&(_, b)| b != placeholder_buffer(r)));
        a.bind_startup_target_buffer(r, 6).unwrap();
        let sent = moves(&rx);
        assert!(!sent.is_empty() && sent.iter().all(|&(_, b)| b == 6));
    }

    #[test]
    fn writers_of_an_ever_unbound_arbiter_drop_instead_of_stalling() {
        let region = Arc::new(HeapShm::new(2 * 4096).unwrap());
        let config = ArbiterConfig {
            stall: StallConfig {
                max_stalls: u32::MAX,
                ..StallConfig::default()
            },
            ..ArbiterConfig::default()
        };
        let a = SharedMemoryArbiter::new_unbound(region, 4096, config).unwrap();
        let _rx = bind(&a);
        let mut w = a
            .create_trace_writer(1, BufferExhaustedPolicy::StallThenAbort)
            .unwrap();
        let r = a.create_startup_reservation().unwrap();
        let mut s = a.create_startup_trace_writer(r).unwrap();
        // The held startup chunks fill the buffer; neither writer waits.
        write(&mut s, 0, 10);
        assert!(s.drop_count() > 0);
        write(&mut w, 0, 10);
        assert!(w.drop_count() > 0);
    }
}
