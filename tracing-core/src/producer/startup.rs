//! Startup tracing, producer side: writing before any tracing session (or
//! even the service) exists.
//!
//! A producer that wants to trace its own start-up cannot wait for the
//! service to send it a shared memory buffer. It allocates the buffer itself
//! and runs an *unbound* arbiter over it (no [`CommitSink`] yet); its
//! startup writers do not know their service buffer either, so they write
//! for a *reservation*. On the wire of a not yet sent commit, a reservation
//! stands in for the buffer as a `MaybeUnboundBufferID`: the reservation id
//! in the upper 16 bits of the 32-bit `target_buffer`
//! ([`placeholder_buffer`]), a value no real buffer id (16 bits) can take.
//!
//! Commits naming a placeholder are held in the arbiter, however long the
//! arbiter has been bound to the service. When a session starts the data
//! source, the reservation is bound to the session's buffer: the held
//! entries are rewritten to the real id and sent, and the reservation's
//! writers are registered with the service. When no session comes within
//! the producer's timeout the reservation is aborted instead: the held
//! chunks are freed without ever being committed, and whatever its writers
//! write afterwards is dropped (they get no more chunks).
//!
//! This module keeps the bookkeeping (which writer belongs to which
//! reservation, and each reservation's state) and the edits of a pending
//! [`CommitDataRequest`]; the arbiter applies them under its lock.
//!
//! [`CommitSink`]: crate::producer::CommitSink

use std::collections::HashMap;

use crate::abi::{Chunk, SharedMemoryAbi};
use crate::producer::commit_sink::FlushCallback;
use crate::producer::error::ProducerError;
use crate::protocol::CommitDataRequest;

/// Bits a reservation id is shifted by in a `MaybeUnboundBufferID`.
pub const RESERVATION_SHIFT: u32 = 16;

/// The `MaybeUnboundBufferID` that stands for `reservation` until it is
/// bound: the reservation id in the upper 16 bits (always ≥ 2^16, as
/// reservation ids start at 1).
pub const fn placeholder_buffer(reservation: u16) -> u32 {
    (reservation as u32) << RESERVATION_SHIFT
}

/// Whether a commit's `target_buffer` is a reservation placeholder rather
/// than a real (16-bit) buffer id.
pub const fn is_placeholder(target_buffer: u32) -> bool {
    target_buffer >> RESERVATION_SHIFT != 0
}

/// Where a startup reservation stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReservationState {
    /// No session has claimed it yet: its commits are held.
    Unbound,
    /// Bound to this service buffer: its commits go there.
    Bound(u16),
    /// Given up: its data was freed, its writers drop what they write.
    Aborted,
}

/// Where a returned chunk (or a patch) of a writer goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Route {
    /// Into a commit for this target (a real id or a placeholder).
    Commit(u32),
    /// Nowhere: free the chunk, forget the patch.
    Discard,
}

#[derive(Debug)]
struct Reservation {
    state: ReservationState,
    /// Live writers of the reservation.
    writers: usize,
}

#[derive(Debug, Clone, Copy)]
struct StartupWriter {
    reservation: u16,
    /// Whether `RegisterTraceWriter` went to the service.
    registered: bool,
    /// The writer was dropped while its reservation was unbound: its id
    /// stays taken until the reservation settles, so that its held chunks
    /// reach the service under a registered id no other writer reuses.
    dropped: bool,
}

/// What to do with the id of a dropped writer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Release {
    /// Not a startup writer: release it (and unregister it).
    NotStartup,
    /// Release it now; unregister it if it was registered.
    Now {
        /// `RegisterTraceWriter` went to the service.
        registered: bool,
    },
    /// Keep it until the reservation settles
    /// ([`StartupRegistry::take_dropped_settled`]).
    Deferred,
}

/// Reservations and startup writers of one arbiter.
#[derive(Default)]
pub(crate) struct StartupRegistry {
    last_reservation: u16,
    reservations: HashMap<u16, Reservation>,
    writers: HashMap<u16, StartupWriter>,
    /// Flush callbacks that arrived while the arbiter was unbound.
    pub(crate) held_callbacks: Vec<FlushCallback>,
    /// Commits of unbound reservations, taken out of sent batches.
    pub(crate) held: CommitDataRequest,
}

impl core::fmt::Debug for StartupRegistry {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("StartupRegistry")
            .field("reservations", &self.reservations)
            .field("writers", &self.writers)
            .finish_non_exhaustive()
    }
}

impl StartupRegistry {
    /// A new unbound reservation (ids 1..=65535, reused once forgotten).
    pub(crate) fn new_reservation(&mut self) -> Result<u16, ProducerError> {
        for _ in 0..u16::MAX {
            self.last_reservation = self.last_reservation.checked_add(1).unwrap_or(1);
            let id = self.last_reservation;
            if let std::collections::hash_map::Entry::Vacant(e) = self.reservations.entry(id) {
                e.insert(Reservation {
                    state: ReservationState::Unbound,
                    writers: 0,
                });
                return Ok(id);
            }
        }
        Err(ProducerError::ReservationsExhausted)
    }

    /// The state of `reservation`, if it is known.
    pub(crate) fn state(&self, reservation: u16) -> Option<ReservationState> {
        self.reservations.get(&reservation).map(|r| r.state)
    }

    /// Whether any reservation still holds its commits.
    pub(crate) fn has_unbound(&self) -> bool {
        self.reservations
            .values()
            .any(|r| r.state == ReservationState::Unbound)
    }

    /// Whether no startup writer is alive (the fast path of the arbiter).
    pub(crate) fn has_no_writers(&self) -> bool {
        self.writers.is_empty()
    }

    /// Records `writer` as writing for `reservation`; returns the buffer to
    /// register it with now, if the reservation is already bound.
    pub(crate) fn add_writer(
        &mut self,
        writer: u16,
        reservation: u16,
    ) -> Result<Option<u16>, ProducerError> {
        let r = self
            .reservations
            .get_mut(&reservation)
            .ok_or(ProducerError::UnknownReservation)?;
        let bound = match r.state {
            ReservationState::Aborted => return Err(ProducerError::ReservationAborted),
            ReservationState::Unbound => None,
            ReservationState::Bound(b) => Some(b),
        };
        r.writers += 1;
        self.writers.insert(
            writer,
            StartupWriter {
                reservation,
                registered: false,
                dropped: false,
            },
        );
        Ok(bound)
    }

    /// Marks `writer` registered with the service.
    pub(crate) fn set_registered(&mut self, writer: u16) {
        if let Some(w) = self.writers.get_mut(&writer) {
            w.registered = true;
        }
    }

    /// `writer` was dropped: forgotten now, or (reservation still unbound)
    /// once the reservation settles.
    pub(crate) fn remove_writer(&mut self, writer: u16) -> Release {
        let Some(w) = self.writers.get_mut(&writer) else {
            return Release::NotStartup;
        };
        if self.reservations.get(&w.reservation).map(|r| r.state) == Some(ReservationState::Unbound)
        {
            w.dropped = true;
            return Release::Deferred;
        }
        let registered = w.registered;
        self.forget(writer);
        Release::Now { registered }
    }

    fn forget(&mut self, writer: u16) {
        let Some(w) = self.writers.remove(&writer) else {
            return;
        };
        if let Some(r) = self.reservations.get_mut(&w.reservation) {
            r.writers = r.writers.saturating_sub(1);
            // A settled reservation without writers has nothing left to do.
            if r.writers == 0 && r.state != ReservationState::Unbound {
                self.reservations.remove(&w.reservation);
            }
        }
    }

    /// Forgets the dropped writers whose reservation settled: aborted, or
    /// bound and registered (their held chunks went out). Returns their ids
    /// (to release) and whether each was registered (to unregister).
    pub(crate) fn take_dropped_settled(&mut self) -> Vec<(u16, bool)> {
        let done: Vec<(u16, bool)> = self
            .writers
            .iter()
            .filter(|(_, w)| w.dropped)
            .filter(|(_, w)| match self.state(w.reservation) {
                Some(ReservationState::Bound(_)) => w.registered,
                Some(ReservationState::Unbound) => false,
                Some(ReservationState::Aborted) | None => true,
            })
            .map(|(&id, w)| (id, w.registered))
            .collect();
        for &(id, _) in &done {
            self.forget(id);
        }
        done
    }

    /// Where the chunks and patches of `writer` go; `None` for a writer
    /// that is not a startup writer (it knows its buffer).
    pub(crate) fn route(&self, writer: u16) -> Option<Route> {
        let w = self.writers.get(&writer)?;
        Some(
            match self.reservations.get(&w.reservation).map(|r| r.state) {
                Some(ReservationState::Unbound) => Route::Commit(placeholder_buffer(w.reservation)),
                Some(ReservationState::Bound(b)) => Route::Commit(u32::from(b)),
                Some(ReservationState::Aborted) | None => Route::Discard,
            },
        )
    }

    /// Binds `reservation` to `buffer`; returns its writers not yet
    /// registered with the service.
    pub(crate) fn bind(
        &mut self,
        reservation: u16,
        buffer: u16,
    ) -> Result<Vec<u16>, ProducerError> {
        let r = self
            .reservations
            .get_mut(&reservation)
            .ok_or(ProducerError::UnknownReservation)?;
        match r.state {
            ReservationState::Unbound => r.state = ReservationState::Bound(buffer),
            ReservationState::Bound(_) => return Err(ProducerError::ReservationAlreadyBound),
            ReservationState::Aborted => return Err(ProducerError::ReservationAborted),
        }
        Ok(self
            .writers
            .iter()
            .filter(|(_, w)| !w.registered && w.reservation == reservation)
            .map(|(&id, _)| id)
            .collect())
    }

    /// Writers of bound reservations not yet registered with the service,
    /// with their buffers.
    pub(crate) fn unregistered_bound(&self) -> Vec<(u16, u16)> {
        self.writers
            .iter()
            .filter(|(_, w)| !w.registered)
            .filter_map(|(&id, w)| match self.state(w.reservation) {
                Some(ReservationState::Bound(b)) => Some((id, b)),
                _ => None,
            })
            .collect()
    }

    /// Aborts `reservation` (an unbound one; aborting twice is fine).
    pub(crate) fn abort(&mut self, reservation: u16) -> Result<(), ProducerError> {
        let r = self
            .reservations
            .get_mut(&reservation)
            .ok_or(ProducerError::UnknownReservation)?;
        match r.state {
            ReservationState::Bound(_) => Err(ProducerError::ReservationAlreadyBound),
            _ => {
                r.state = ReservationState::Aborted;
                if r.writers == 0 {
                    self.reservations.remove(&reservation);
                }
                Ok(())
            }
        }
    }
}

/// Rewrites every entry of `req` that names `placeholder` to `buffer`.
pub(crate) fn rebind_request(req: &mut CommitDataRequest, placeholder: u32, buffer: u16) {
    for m in &mut req.chunks_to_move {
        if m.target_buffer == placeholder {
            m.target_buffer = u32::from(buffer);
        }
    }
    for p in &mut req.chunks_to_patch {
        if p.target_buffer == placeholder {
            p.target_buffer = u32::from(buffer);
        }
    }
}

/// Moves the entries of `req` that still name a placeholder into a new
/// request (to keep), leaving in `req` what can be sent. A writer's entries
/// all name the same target, so each writer's order is kept on both sides.
pub(crate) fn split_held(req: &mut CommitDataRequest) -> CommitDataRequest {
    let mut held = CommitDataRequest::default();
    let (keep, send): (Vec<_>, Vec<_>) = std::mem::take(&mut req.chunks_to_move)
        .into_iter()
        .partition(|m| is_placeholder(m.target_buffer));
    req.chunks_to_move = send;
    held.chunks_to_move = keep;
    let (keep, send): (Vec<_>, Vec<_>) = std::mem::take(&mut req.chunks_to_patch)
        .into_iter()
        .partition(|p| is_placeholder(p.target_buffer));
    req.chunks_to_patch = send;
    held.chunks_to_patch = keep;
    held
}

/// Removes the entries of `req` naming `placeholder`; returns the
/// `(page, chunk)` of the removed moves (chunks to free).
pub(crate) fn remove_reservation(req: &mut CommitDataRequest, placeholder: u32) -> Vec<(u32, u32)> {
    let mut removed = Vec::new();
    req.chunks_to_move.retain(|m| {
        let keep = m.target_buffer != placeholder;
        if !keep {
            removed.push((m.page, m.chunk));
        }
        keep
    });
    req.chunks_to_patch
        .retain(|p| p.target_buffer != placeholder);
    removed
}

/// Frees a chunk this process wrote but will never commit: Complete (or
/// BeingWritten, when `owned` is given) → Free, as a reader would leave it.
pub(crate) fn discard_chunk(
    abi: &SharedMemoryAbi,
    page: usize,
    chunk: usize,
    owned: Option<Chunk<'_>>,
) -> bool {
    if let Some(c) = owned {
        if abi.release_chunk_as_complete(c).is_err() {
            return false;
        }
    }
    match abi.try_acquire_chunk_for_reading(page, chunk) {
        Ok(c) => abi.release_chunk_as_free(c).is_ok(),
        Err(_) => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::{ChunkToMove, ChunkToPatch};

    fn mv(page: u32, target_buffer: u32) -> ChunkToMove {
        ChunkToMove {
            page,
            target_buffer,
            ..ChunkToMove::default()
        }
    }

    #[test]
    fn placeholders_never_collide_with_buffer_ids() {
        assert_eq!(placeholder_buffer(1), 0x1_0000);
        assert_eq!(placeholder_buffer(0xFFFF), 0xFFFF_0000);
        assert!(is_placeholder(placeholder_buffer(1)));
        assert!(!is_placeholder(u32::from(u16::MAX)));
    }

    #[test]
    fn registry_routes_by_state() {
        let mut r = StartupRegistry::default();
        let a = r.new_reservation().unwrap();
        let b = r.new_reservation().unwrap();
        assert_ne!(a, b);
        assert_eq!(r.add_writer(7, a), Ok(None));
        assert_eq!(r.add_writer(8, b), Ok(None));
        assert_eq!(r.route(9), None);
        assert_eq!(r.route(7), Some(Route::Commit(placeholder_buffer(a))));
        assert!(r.has_unbound());
        assert_eq!(r.bind(a, 3), Ok(vec![7]));
        assert_eq!(r.bind(a, 4), Err(ProducerError::ReservationAlreadyBound));
        assert_eq!(r.route(7), Some(Route::Commit(3)));
        r.set_registered(7);
        assert!(r.unregistered_bound().is_empty());
        assert_eq!(r.abort(b), Ok(()));
        assert_eq!(r.route(8), Some(Route::Discard));
        assert!(!r.has_unbound());
        assert_eq!(r.add_writer(9, b), Err(ProducerError::ReservationAborted));
        assert_eq!(r.add_writer(9, 999), Err(ProducerError::UnknownReservation));
        assert_eq!(r.abort(a), Err(ProducerError::ReservationAlreadyBound));
        assert_eq!(r.remove_writer(7), Release::Now { registered: true });
        assert_eq!(r.remove_writer(8), Release::Now { registered: false });
        assert_eq!(r.remove_writer(8), Release::NotStartup);
        // Settled reservations without writers are forgotten.
        assert_eq!(r.state(a), None);
        assert_eq!(r.state(b), None);
    }

    #[test]
    fn writers_dropped_while_unbound_keep_their_ids_until_settled() {
        let mut r = StartupRegistry::default();
        let a = r.new_reservation().unwrap();
        let b = r.new_reservation().unwrap();
        r.add_writer(1, a).unwrap();
        r.add_writer(2, b).unwrap();
        assert_eq!(r.remove_writer(1), Release::Deferred);
        assert_eq!(r.remove_writer(2), Release::Deferred);
        assert!(r.take_dropped_settled().is_empty());
        // Bound, but not registered yet (no sink): still kept.
        assert_eq!(r.bind(a, 3), Ok(vec![1]));
        assert!(r.take_dropped_settled().is_empty());
        r.set_registered(1);
        assert_eq!(r.take_dropped_settled(), vec![(1, true)]);
        r.abort(b).unwrap();
        assert_eq!(r.take_dropped_settled(), vec![(2, false)]);
        assert_eq!(r.state(a), None);
        assert_eq!(r.state(b), None);
    }

    #[test]
    fn request_edits() {
        let p = placeholder_buffer(2);
        let mut req = CommitDataRequest {
            chunks_to_move: vec![mv(0, 1), mv(1, p), mv(2, 1), mv(3, p)],
            chunks_to_patch: vec![ChunkToPatch {
                target_buffer: p,
                ..ChunkToPatch::default()
            }],
            flush_request_id: Some(4),
        };
        let mut copy = req.clone();
        let held = split_held(&mut req);
        assert_eq!(req.chunks_to_move, vec![mv(0, 1), mv(2, 1)]);
        assert!(req.chunks_to_patch.is_empty());
        assert_eq!(req.flush_request_id, Some(4));
        assert_eq!(held.chunks_to_move, vec![mv(1, p), mv(3, p)]);
        assert_eq!(held.chunks_to_patch.len(), 1);

        let mut bound = copy.clone();
        rebind_request(&mut bound, p, 5);
        assert_eq!(bound.chunks_to_move[1], mv(1, 5));
        assert_eq!(bound.chunks_to_patch[0].target_buffer, 5);
        assert_eq!(remove_reservation(&mut copy, p), vec![(1, 0), (3, 0)]);
        assert_eq!(copy.chunks_to_move, vec![mv(0, 1), mv(2, 1)]);
        assert!(copy.chunks_to_patch.is_empty());
    }
}
