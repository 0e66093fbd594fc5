//! One stream's queue in the sort window (`sorter.rs`), which must give
//! its packets in the order of their key (time, then arrival) without
//! sorting the whole queue at the end of a trace read from a ring buffer.
//!
//! Such a queue interleaves many sequences in chunks: each sequence's
//! packets come in time order, but the queue as a whole breaks its order
//! at every chunk, so sorting it from its first break is a sort of nearly
//! all of it (a tenth of a load's CPU on millions of TrackEvents). Here a
//! queue keeps its packets in parts, a packet going to the part its
//! context (the sequence's generation, machine, CPU, kind) names, so that
//! each part holds a few sequences and mostly stays in order; each part is
//! sorted from where its own order broke, as the whole queue was, and the
//! parts are merged as the packets leave, the part with the least key
//! first. Keys are unique (the arrival), so the merge gives exactly the
//! order a sort of the whole queue gives, whichever parts packets went to;
//! only the work differs: a merge of k parts costs a logarithm of k per
//! packet where the sort cost one of the queue's length.

use std::cmp::Reverse;
use std::collections::binary_heap::PeekMut;
use std::collections::{BinaryHeap, VecDeque};

use crate::arena::ByteRange;

/// A queued packet with its arrival, in 32 bytes (a [`crate::packet_view::Packet`]
/// and a 64-bit arrival took 48: a ring-buffer trace's millions of packets
/// all wait here until its end). The arrival is kept in 32 bits: past 2^32
/// packets the later ones share the last number, which only lets them
/// leave at the end and ties among them in any order.
#[derive(Debug, Clone, Copy)]
pub(super) struct Queued {
    pub(super) ts: i64,
    pub(super) bytes: ByteRange,
    pub(super) extra: u32,
    pub(super) context: u32,
    pub(super) arrival: u32,
}

impl Queued {
    /// The order packets leave in: time, then arrival.
    pub(super) fn key(&self) -> (i64, u32) {
        (self.ts, self.arrival)
    }

    /// The arrival as the limits compare it: a saturated one is later than
    /// any point, so it leaves only at the end.
    pub(super) fn arrived(&self) -> u64 {
        if self.arrival == u32::MAX {
            u64::MAX - 1
        } else {
            u64::from(self.arrival)
        }
    }
}

/// Elements a closed queue's parts may have spare in all before they are
/// cut to their length (1 MiB of queued packets).
pub(super) const GIVE_BACK: usize = 1 << 15;

/// The most parts a queue has: contexts past it share parts (modulo), which
/// costs only a sort of the part where their packets interleave.
const MAX_PARTS: usize = 64;

/// Packets of some contexts of one queue, in arrival order until the
/// part is sorted.
#[derive(Debug, Default)]
struct Part {
    events: VecDeque<Queued>,
    /// Once the trace ended: the events left, sorted and then reversed, so
    /// that they leave from the back and their memory goes back as they
    /// leave (a vector is cut in place, where the deque's drained front
    /// goes back only by moving what is left).
    closed: Vec<Queued>,
    /// Where the arrival order first broke (events before it are sorted).
    unsorted_from: Option<usize>,
    /// The least time that broke it.
    unsorted_min: i64,
}

impl Part {
    fn append(&mut self, q: Queued) {
        if let Some(back) = self.events.back() {
            if q.key() < back.key() {
                match self.unsorted_from {
                    None => {
                        self.unsorted_from = Some(self.events.len());
                        self.unsorted_min = q.ts;
                    }
                    Some(_) => self.unsorted_min = self.unsorted_min.min(q.ts),
                }
            }
        }
        self.events.push_back(q);
    }

    fn front(&self) -> Option<&Queued> {
        self.closed.last().or_else(|| self.events.front())
    }

    fn pop_front(&mut self) {
        if self.closed.pop().is_none() {
            self.events.pop_front();
        }
    }

    fn close(&mut self) {
        let mut v = Vec::from(std::mem::take(&mut self.events));
        v.reverse();
        // Events closed before (none, as the loader ends a trace once)
        // leave first.
        v.extend_from_slice(&self.closed);
        self.closed = v;
    }

    /// Gives back the memory of the events that left, a closed part's
    /// once `spare` elements are (the queue's [`GIVE_BACK`] shared among
    /// its parts).
    fn give_back(&mut self, spare: usize) {
        if self.closed.capacity() - self.closed.len() >= spare {
            self.closed.shrink_to_fit();
        }
        if self.events.len() <= self.events.capacity() / 2 {
            self.events.shrink_to_fit();
        }
    }

    /// Sorts the events from the first not earlier than the least time
    /// that broke the order.
    fn sort(&mut self) {
        let Some(from) = self.unsorted_from.take() else {
            return;
        };
        let min = self.unsorted_min;
        let events = self.events.make_contiguous();
        let sorted = events.get(..from).unwrap_or(&[]);
        let start = sorted.partition_point(|e| e.ts < min);
        if let Some(tail) = events.get_mut(start..) {
            // Keys are unique (the arrival), so an unstable sort is exact.
            tail.sort_unstable_by_key(Queued::key);
        }
    }
}

/// A stream's queue: its parts, and while packets leave, the parts that
/// have some by their earliest packet's key.
#[derive(Debug, Default)]
pub(super) struct Queue {
    parts: Vec<Part>,
    /// The merge: (the part's earliest key, the part), least first. Built
    /// by [`Queue::prepare`]; an append empties it.
    heap: BinaryHeap<Reverse<((i64, u32), u32)>>,
}

impl Queue {
    /// Queues `q` (arriving after every packet queued before it).
    pub(super) fn append(&mut self, q: Queued) {
        self.heap.clear();
        let i = q.context as usize % MAX_PARTS;
        if self.parts.len() <= i {
            self.parts.resize_with(i + 1, Part::default);
        }
        if let Some(part) = self.parts.get_mut(i) {
            part.append(q);
        }
    }

    /// Sorts each part where its order broke; at the end of the trace
    /// (`close`) moves its events to leave from the back of a vector; then
    /// readies the merge. [`Queue::front`] and [`Queue::pop_front`] read
    /// the merge, so this comes after the last append and before them.
    pub(super) fn prepare(&mut self, close: bool) {
        self.heap.clear();
        for (i, part) in self.parts.iter_mut().enumerate() {
            part.sort();
            if close {
                part.close();
            }
            if let Some(e) = part.front() {
                self.heap.push(Reverse((e.key(), i as u32)));
            }
        }
    }

    /// The earliest packet (of the merge [`Queue::prepare`] readied).
    pub(super) fn front(&self) -> Option<&Queued> {
        let Reverse((_, i)) = self.heap.peek()?;
        self.parts.get(*i as usize)?.front()
    }

    /// Takes the earliest packet away.
    pub(super) fn pop_front(&mut self) {
        let Some(mut top) = self.heap.peek_mut() else {
            return;
        };
        let Reverse((_, i)) = *top;
        let next = self.parts.get_mut(i as usize).and_then(|part| {
            part.pop_front();
            part.front().map(Queued::key)
        });
        match next {
            Some(key) => *top = Reverse((key, i)),
            None => {
                PeekMut::pop(top);
            }
        }
    }

    /// Gives back the memory of the events that left: a closed part's
    /// every [`GIVE_BACK`] events shared among the parts, the deque's once its drained front is
    /// half of it (moving what is left, twice its length in all), so that
    /// the tables the parsers grow meanwhile take its place rather than
    /// add to it.
    pub(super) fn give_back(&mut self) {
        let spare = GIVE_BACK / self.parts.len().max(1);
        for part in &mut self.parts {
            part.give_back(spare);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn queued(ts: i64, context: u32, arrival: u32) -> Queued {
        Queued {
            ts,
            bytes: ByteRange::default(),
            extra: arrival,
            context,
            arrival,
        }
    }

    /// Every packet, in the order the queue gives them.
    fn drain(q: &mut Queue) -> Vec<(i64, u32)> {
        let mut out = Vec::new();
        while let Some(e) = q.front().copied() {
            out.push(e.key());
            q.pop_front();
        }
        out
    }

    /// At the end a part leaves from its closed vector, whose memory goes
    /// back as its events leave; their order is the sort's.
    #[test]
    fn a_closed_queue_gives_its_memory_back_as_it_drains() {
        let mut q = Queue::default();
        let n = 3 * GIVE_BACK as u32;
        for i in 0..n {
            // Arrivals out of time order, so the close follows a sort.
            let ts = i64::from((i * 7919) % n);
            q.append(queued(ts, 0, i));
        }
        q.prepare(true);
        assert!(q.parts[0].events.is_empty());
        let mut last = None;
        let mut peak_spare = 0;
        while let Some(e) = q.front().copied() {
            assert!(last.is_none_or(|l| l < e.key()));
            last = Some(e.key());
            q.pop_front();
            q.give_back();
            let part = &q.parts[0];
            peak_spare = peak_spare.max(part.closed.capacity() - part.closed.len());
        }
        assert_eq!(last.map(|k| k.0), Some(i64::from(n - 1)));
        assert!(peak_spare < GIVE_BACK);
        assert!(q.parts[0].closed.capacity() < GIVE_BACK);
    }

    /// Millions of packets wait here at once: each in 32 bytes.
    #[test]
    fn a_queued_packet_is_32_bytes() {
        assert_eq!(std::mem::size_of::<Queued>(), 32);
    }

    /// Sequences interleaved in chunks, some out of order within
    /// themselves, more contexts than parts, equal times across them: the
    /// queue gives what a sort of all of it by (time, arrival) gives,
    /// whether it is drained at the end or partly drained first.
    #[test]
    fn the_merge_of_the_parts_is_the_sort_of_the_queue() {
        let mut all = Vec::new();
        let mut arrival = 0u32;
        let mut x = 12345u64;
        for chunk in 0..400u32 {
            let context = (chunk * 37) % 150;
            for i in 0..(chunk % 13) {
                x = x
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                // Mostly ascending per context, with ties and some breaks.
                let jitter = (x >> 60) as i64 - 3;
                let ts = i64::from(chunk) * 10 + i64::from(i) + jitter;
                all.push(queued(ts, context, arrival));
                arrival += 1;
            }
        }
        let mut sorted: Vec<(i64, u32)> = all.iter().map(Queued::key).collect();
        sorted.sort_unstable();
        for close in [true, false] {
            let mut q = Queue::default();
            for e in &all {
                q.append(*e);
            }
            q.prepare(close);
            assert_eq!(drain(&mut q), sorted, "close {close}");
        }
        // Drained in two rounds, with appends between them.
        let (first, second) = all.split_at(all.len() / 2);
        let mut q = Queue::default();
        for e in first {
            q.append(*e);
        }
        q.prepare(false);
        let mut got = Vec::new();
        for _ in 0..first.len() / 2 {
            got.extend(q.front().map(Queued::key));
            q.pop_front();
        }
        for e in second {
            q.append(*e);
        }
        q.prepare(true);
        got.extend(drain(&mut q));
        let mut want: Vec<(i64, u32)> = first.iter().map(Queued::key).collect();
        want.sort_unstable();
        want.truncate(first.len() / 2);
        let mut rest: Vec<(i64, u32)> = all
            .iter()
            .map(Queued::key)
            .filter(|k| !want.contains(k))
            .collect();
        rest.sort_unstable();
        want.extend(rest);
        assert_eq!(got, want);
    }
}
