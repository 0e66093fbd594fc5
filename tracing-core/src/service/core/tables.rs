//! The service's sub-states that own their records and hand out their own
//! ids: the producers, the sessions (with their data source instances'
//! ids), the trace buffers and the pending flushes. Each table keeps its
//! id counter beside its records, so an id is made where its records live
//! and nowhere else; reading a table is reading its map.

use std::collections::BTreeMap;
use std::ops::{Deref, DerefMut};

use super::state::{PendingFlush, Producer, Session};
use crate::protocol::BufferId;
use crate::service::ids::{DataSourceInstanceId, FlushRequestId, ProducerId, SessionId};
use crate::service::trace_buffer::TraceBuffer;

/// Derefs a table to its map, so that lookups read as map lookups.
macro_rules! map_table {
    ($table:ident, $field:ident, $k:ty, $v:ty) => {
        impl Deref for $table {
            type Target = BTreeMap<$k, $v>;
            fn deref(&self) -> &Self::Target {
                &self.$field
            }
        }
        impl DerefMut for $table {
            fn deref_mut(&mut self) -> &mut Self::Target {
                &mut self.$field
            }
        }
    };
}

/// The connected producers, by the id this table gave each.
#[derive(Default)]
pub(super) struct Producers {
    map: BTreeMap<ProducerId, Producer>,
    last_id: u16,
}
map_table!(Producers, map, ProducerId, Producer);

impl Producers {
    /// The next id no producer holds and `in_use` does not claim (a
    /// departed producer's id is still in use while a buffer holds its
    /// chunks); `None` once all 65,535 are taken.
    pub(super) fn free_id(&mut self, in_use: impl Fn(ProducerId) -> bool) -> Option<ProducerId> {
        for _ in 0..u16::MAX {
            self.last_id = self.last_id.wrapping_add(1).max(1);
            let id = ProducerId(self.last_id);
            if !self.map.contains_key(&id) && !in_use(id) {
                return Some(id);
            }
        }
        None
    }
}

/// The tracing sessions, and the ids of their data source instances.
#[derive(Default)]
pub(super) struct Sessions {
    map: BTreeMap<SessionId, Session>,
    last_id: u64,
    last_instance_id: u64,
}
map_table!(Sessions, map, SessionId, Session);

impl Sessions {
    /// A session id never given before.
    pub(super) fn new_id(&mut self) -> SessionId {
        self.last_id += 1;
        SessionId(self.last_id)
    }

    /// A data source instance id never given before.
    pub(super) fn new_instance_id(&mut self) -> DataSourceInstanceId {
        self.last_instance_id += 1;
        DataSourceInstanceId(self.last_instance_id)
    }
}

/// The trace buffers by global id, each with its session.
#[derive(Default)]
pub(super) struct Buffers {
    map: BTreeMap<BufferId, (SessionId, TraceBuffer)>,
    last_id: u16,
}
map_table!(Buffers, map, BufferId, (SessionId, TraceBuffer));

impl Buffers {
    /// The next id no buffer holds (callers make sure one is free).
    pub(super) fn free_id(&mut self) -> BufferId {
        loop {
            self.last_id = self.last_id.wrapping_add(1).max(1);
            let id = BufferId(self.last_id);
            if !self.map.contains_key(&id) {
                return id;
            }
        }
    }

    /// Bytes of every buffer of the sessions `of` picks.
    pub(super) fn bytes_of(&self, of: impl Fn(SessionId) -> bool) -> u64 {
        self.map
            .values()
            .filter(|(sid, _)| of(*sid))
            .map(|(_, b)| b.size() as u64)
            .sum()
    }
}

/// The flushes waiting for their producers' answers.
#[derive(Default)]
pub(super) struct Flushes {
    pending: BTreeMap<FlushRequestId, PendingFlush>,
    last_id: u64,
}
map_table!(Flushes, pending, FlushRequestId, PendingFlush);

impl Flushes {
    /// A flush id never given before.
    pub(super) fn new_id(&mut self) -> FlushRequestId {
        self.last_id += 1;
        FlushRequestId(self.last_id)
    }
}
