//! One stream's queue in the sort window (`sorter.rs`), which must give
//! its packets in the order of their key (time, then arrival) without
//! sorting the whole queue at the end of a trace read from a ring buffer.
//!
//! Such a queue interleaves many sequences in chunks: each sequence's
//! packets come in time order, but the queue as a whole breaks its order
//! at every chunk, so sorting it from its first break is a sort of nearly
//! all of it (a tenth of a load's CPU on millions of TrackEvents). Here a
//! queue keeps its packets in parts, one part per context (the sequence's
//! generation, machine, CPU, kind), which the part keeps once instead of
//! each packet (a queue's first [`MAX_PARTS`] contexts; packets of later
//! ones share a part that keeps each one's context beside it), so that
//! each part holds one sequence and mostly stays in order; each part is
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
use crate::hash::HashMap;

/// A queued packet with its arrival, in 24 bytes (a [`crate::packet_view::Packet`]
/// and a 64-bit arrival took 48: a ring-buffer trace's millions of packets
/// all wait here until its end); its context is its part's. The arrival is
/// kept in 32 bits: past 2^32 packets the later ones share the last number,
/// which only lets them leave at the end and ties among them in any order.
#[derive(Debug, Clone, Copy)]
pub(super) struct Queued {
    pub(super) ts: i64,
    pub(super) bytes: ByteRange,
    pub(super) extra: u32,
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
/// cut to their length (about 1 MiB of queued packets).
pub(super) const GIVE_BACK: usize = 1 << 15;

/// The most parts of one context a queue has: packets of contexts past it
/// share one part, each with its context (4 bytes more), which costs only
/// a sort of that part where their packets interleave.
const MAX_PARTS: usize = 256;

/// The heap's name of the shared part.
const MIXED: u32 = u32::MAX;

/// What a part holds and sorts by: a packet, or in the shared part a
/// packet with its context.
trait Keyed: Copy {
    fn key(&self) -> (i64, u32);
}

impl Keyed for Queued {
    fn key(&self) -> (i64, u32) {
        Queued::key(self)
    }
}

impl Keyed for (Queued, u32) {
    fn key(&self) -> (i64, u32) {
        self.0.key()
    }
}

/// Packets of one context of a queue (or of the contexts past
/// [`MAX_PARTS`]), in arrival order until the part is sorted.
#[derive(Debug)]
struct Part<E> {
    events: VecDeque<E>,
    /// Once the trace ended: the events left, sorted and then reversed, so
    /// that they leave from the back and their memory goes back as they
    /// leave (a vector is cut in place, where the deque's drained front
    /// goes back only by moving what is left).
    closed: Vec<E>,
    /// Where the arrival order first broke (events before it are sorted).
    unsorted_from: Option<usize>,
    /// The least time that broke it.
    unsorted_min: i64,
}

impl<E> Default for Part<E> {
    fn default() -> Self {
        Part {
            events: VecDeque::new(),
            closed: Vec::new(),
            unsorted_from: None,
            unsorted_min: 0,
        }
    }
}

impl<E: Keyed> Part<E> {
    fn append(&mut self, q: E) {
        if let Some(back) = self.events.back() {
            if q.key() < back.key() {
                let ts = q.key().0;
                match self.unsorted_from {
                    None => {
                        self.unsorted_from = Some(self.events.len());
                        self.unsorted_min = ts;
                    }
                    Some(_) => self.unsorted_min = self.unsorted_min.min(ts),
                }
            }
        }
        self.events.push_back(q);
    }

    fn front(&self) -> Option<&E> {
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
        let start = sorted.partition_point(|e| e.key().0 < min);
        if let Some(tail) = events.get_mut(start..) {
            // Keys are unique (the arrival), so an unstable sort is exact.
            tail.sort_unstable_by_key(E::key);
        }
    }
}

/// A stream's queue: its parts, and while packets leave, the parts that
/// have some by their earliest packet's key.
#[derive(Debug, Default)]
pub(super) struct Queue {
    /// A part per context, in the order the contexts came.
    parts: Vec<Part<Queued>>,
    /// Each part's context.
    contexts: Vec<u32>,
    /// The part of each context that has one.
    part_of: HashMap<u32, u32>,
    /// The last context appended and its part (most packets follow one of
    /// their sequence).
    last: Option<(u32, u32)>,
    /// Packets of the contexts past [`MAX_PARTS`], each with its context.
    mixed: Part<(Queued, u32)>,
    /// The merge: (the part's earliest key, the part or [`MIXED`]), least
    /// first. Built by [`Queue::prepare`]; an append empties it.
    heap: BinaryHeap<Reverse<((i64, u32), u32)>>,
}

impl Queue {
    /// Queues `q` of `context` (arriving after every packet queued before
    /// it).
    pub(super) fn append(&mut self, q: Queued, context: u32) {
        self.heap.clear();
        let part = match self.last {
            Some((c, part)) if c == context => part,
            _ => {
                let next = u32::try_from(self.parts.len()).unwrap_or(MIXED);
                let part = if self.parts.len() < MAX_PARTS {
                    *self.part_of.entry(context).or_insert(next)
                } else {
                    self.part_of.get(&context).copied().unwrap_or(MIXED)
                };
                if part == next {
                    self.parts.push(Part::default());
                    self.contexts.push(context);
                }
                self.last = Some((context, part));
                part
            }
        };
        match self.parts.get_mut(part as usize) {
            Some(p) => p.append(q),
            None => self.mixed.append((q, context)),
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
        self.mixed.sort();
        if close {
            self.mixed.close();
        }
        if let Some(e) = self.mixed.front() {
            self.heap.push(Reverse((e.key(), MIXED)));
        }
    }

    /// The earliest packet of part `i` (or the shared part) with its
    /// context.
    fn part_front(&self, i: u32) -> Option<(Queued, u32)> {
        if i == MIXED {
            return self.mixed.front().copied();
        }
        let q = *self.parts.get(i as usize)?.front()?;
        Some((q, *self.contexts.get(i as usize)?))
    }

    /// The earliest packet (of the merge [`Queue::prepare`] readied) and
    /// its context.
    pub(super) fn front(&self) -> Option<(Queued, u32)> {
        let Reverse((_, i)) = self.heap.peek()?;
        self.part_front(*i)
    }

    /// Takes the earliest packet away.
    pub(super) fn pop_front(&mut self) {
        let Some(mut top) = self.heap.peek_mut() else {
            return;
        };
        let Reverse((_, i)) = *top;
        let next = if i == MIXED {
            self.mixed.pop_front();
            self.mixed.front().map(Keyed::key)
        } else {
            self.parts.get_mut(i as usize).and_then(|part| {
                part.pop_front();
                part.front().map(Queued::key)
            })
        };
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
        let spare = GIVE_BACK / (self.parts.len() + 1);
        for part in &mut self.parts {
            part.give_back(spare);
        }
        self.mixed.give_back(spare);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn queued(ts: i64, context: u32, arrival: u32) -> (Queued, u32) {
        let q = Queued {
            ts,
            bytes: ByteRange::default(),
            extra: arrival,
            arrival,
        };
        (q, context)
    }

    /// Every packet, in the order the queue gives them, checking that each
    /// leaves with its own context (`extra` - its arrival - names it in
    /// `all`).
    fn drain(q: &mut Queue, all: &[(Queued, u32)]) -> Vec<(i64, u32)> {
        let mut out = Vec::new();
        while let Some((e, context)) = q.front() {
            assert_eq!(all.get(e.extra as usize).map(|a| a.1), Some(context));
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
            let (e, context) = queued(ts, 0, i);
            q.append(e, context);
        }
        q.prepare(true);
        assert!(q.parts[0].events.is_empty());
        let mut last = None;
        let mut peak_spare = 0;
        while let Some((e, _)) = q.front() {
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

    /// Millions of packets wait here at once: each in 24 bytes.
    #[test]
    fn a_queued_packet_is_24_bytes() {
        assert_eq!(std::mem::size_of::<Queued>(), 24);
    }

    /// Sequences interleaved in chunks, some out of order within
    /// themselves, more contexts than parts, equal times across them: the
    /// queue gives what a sort of all of it by (time, arrival) gives, each
    /// packet with its context, whether it is drained at the end or partly
    /// drained first.
    #[test]
    fn the_merge_of_the_parts_is_the_sort_of_the_queue() {
        let mut all = Vec::new();
        let mut arrival = 0u32;
        let mut x = 12345u64;
        for chunk in 0..900u32 {
            let context = (chunk * 37) % 300;
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
        let key = |e: &(Queued, u32)| e.0.key();
        let mut sorted: Vec<(i64, u32)> = all.iter().map(key).collect();
        sorted.sort_unstable();
        for close in [true, false] {
            let mut q = Queue::default();
            for (e, context) in &all {
                q.append(*e, *context);
            }
            assert_eq!(q.parts.len(), MAX_PARTS);
            assert!(!q.mixed.events.is_empty());
            q.prepare(close);
            assert_eq!(drain(&mut q, &all), sorted, "close {close}");
        }
        // Drained in two rounds, with appends between them.
        let (first, second) = all.split_at(all.len() / 2);
        let mut q = Queue::default();
        for (e, context) in first {
            q.append(*e, *context);
        }
        q.prepare(false);
        let mut got = Vec::new();
        for _ in 0..first.len() / 2 {
            got.extend(q.front().map(|(e, _)| e.key()));
            q.pop_front();
        }
        for (e, context) in second {
            q.append(*e, *context);
        }
        q.prepare(true);
        got.extend(drain(&mut q, &all));
        let mut want: Vec<(i64, u32)> = first.iter().map(key).collect();
        want.sort_unstable();
        want.truncate(first.len() / 2);
        let mut rest: Vec<(i64, u32)> = all.iter().map(key).filter(|k| !want.contains(k)).collect();
        rest.sort_unstable();
        want.extend(rest);
        assert_eq!(got, want);
    }
}
