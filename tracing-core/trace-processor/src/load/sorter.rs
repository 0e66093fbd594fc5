//! The sort window: packets wait here between their reading and their
//! parsing, and leave in the order upstream's sorter gives, as soon as
//! its rule lets them, so that a trace is not held whole until its end.
//!
//! Upstream's sorter (`sorter/trace_sorter.{h,cc}`), as read for these
//! facts:
//! - It keeps one queue per stream (here: the trace packets, the
//!   TrackEvents, and per CPU the ftrace events, the compact sched_switches
//!   and the compact sched_wakings, each queue made when its first event
//!   arrives). A queue is appended to in arrival order; it remembers where
//!   its order first broke and the least time that broke it, and before
//!   events leave it sorts only from the first event not earlier than that
//!   time to its end, by time then arrival.
//! - Events leave by a merge: take the queue whose earliest event is
//!   earliest (the first such queue on a tie) and drain it up to and
//!   including the earliest time of any other queue, then look again. So
//!   events of equal time on two queues come in the order that draining
//!   gives, not in arrival order, and parsers see it.
//! - There is no time window. A proto trace is sorted in the default mode,
//!   in which events leave early only on the tracing service's word: each
//!   `all_data_sources_flushed` service event is counted, and a
//!   `read_tracing_buffers_completed` one, once two flushes were counted
//!   since the last time events left, lets leave every event that arrived
//!   before the previous such point (the point moves to the current end,
//!   the count restarts). Everything left leaves at the end of the trace.
//!   A drain stops at the first event that arrived past the point, and the
//!   merge stops when the earliest queue cannot give an event. The service
//!   flushes every data source twice and read all buffers since the events
//!   before the previous point were written, so nothing earlier can come
//!   later: this is what makes the early order the full sort's. A trace
//!   written from a ring buffer at its end has no such points and is
//!   sorted whole, as before.
//! - An event earlier than the last one that left is dropped, counted in
//!   `sorter_push_event_out_of_order` (a trace breaking the service's
//!   word).
//! - A packet whose clock does not convert yet switches the sorter to full
//!   sort, in which nothing leaves before the end, and waits for the end
//!   to be converted; once events have left the switch is refused and the
//!   packet is lost (`clock_sync_failure_undeferrable_packet_loss`).
//!
//! Descriptors, clock snapshots and interned data are read when their
//! packets are read, not when they leave the window: a packet leaving sees
//! all of them that arrived before it (and those that arrived while it
//! waited), as upstream's tokenizer-side state gives.
//!
//! Here each packet's arrival is a number (its place in the stream); a
//! packet held for its clock keeps the number it arrived with, so that
//! once converted it sorts where the full sort put it. The queues wait in
//! a heap by their earliest event, so a drain costs a logarithm of the
//! queues. Inside a queue, packets wait in parts by their sequence's
//! context and are merged as they leave (`sorter/queue.rs`): the order is
//! the sort of the whole queue by time then arrival, at the cost of a
//! merge of a few sequences rather than a sort of a ring buffer's
//! interleaved chunks.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use crate::hash::HashMap;

mod queue;

use queue::{Queue, Queued};

use crate::arena::ByteRange;
use crate::packet_view::{InlineSched, Packet, PacketKind};

/// The stream a packet is queued on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Stream {
    /// Trace packets of any kind but those below.
    Packets,
    /// TrackEvents.
    TrackEvents,
    /// A CPU's ftrace events.
    Ftrace(u32),
    /// A CPU's compact sched_switches.
    InlineSwitch(u32),
    /// A CPU's compact sched_wakings.
    InlineWaking(u32),
}

impl Stream {
    /// The stream of `p` (`inline`: its `compact_sched` event, if it is
    /// one).
    pub fn of(p: &Packet, inline: Option<&InlineSched>) -> Stream {
        match p.kind {
            PacketKind::Packet => Stream::Packets,
            PacketKind::TrackEvent => Stream::TrackEvents,
            PacketKind::Ftrace => Stream::Ftrace(p.cpu),
            PacketKind::InlineSched => match inline {
                Some(InlineSched::Switch { .. }) => Stream::InlineSwitch(p.cpu),
                _ => Stream::InlineWaking(p.cpu),
            },
        }
    }
}

/// A packet leaving the window.
#[derive(Debug, Clone, Copy)]
pub enum Leaving {
    /// In order: to be parsed.
    InOrder(Packet),
    /// Earlier than a packet that already left: dropped
    /// (`sorter_push_event_out_of_order`).
    OutOfOrder(Packet),
}

/// What most packets of a queue share: their sequence's generation, their
/// machine, CPU, kind and payload field. Kept once in the sorter's list
/// and named by its index in each queued packet.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
struct Context {
    generation: u32,
    machine: u32,
    cpu: u32,
    field: u16,
    kind: u8,
}

impl Context {
    fn of(p: &Packet) -> Context {
        Context {
            generation: p.generation,
            machine: p.machine,
            cpu: p.cpu,
            field: p.field,
            kind: match p.kind {
                PacketKind::Packet => 0,
                PacketKind::TrackEvent => 1,
                PacketKind::Ftrace => 2,
                PacketKind::InlineSched => 3,
            },
        }
    }

    fn packet(self, ts: i64, bytes: ByteRange, extra: u32) -> Packet {
        Packet {
            ts,
            bytes,
            generation: self.generation,
            machine: self.machine,
            cpu: self.cpu,
            extra,
            kind: match self.kind {
                0 => PacketKind::Packet,
                1 => PacketKind::TrackEvent,
                2 => PacketKind::Ftrace,
                _ => PacketKind::InlineSched,
            },
            field: self.field,
        }
    }
}

/// The contexts queued packets name, each once.
#[derive(Debug, Default)]
struct Contexts {
    list: Vec<Context>,
    ids: HashMap<Context, u32>,
    /// The last context named (most packets follow one of their sequence).
    last: Option<(Context, u32)>,
}

impl Contexts {
    fn id(&mut self, c: Context) -> u32 {
        if let Some((last, id)) = self.last {
            if last == c {
                return id;
            }
        }
        let next = u32::try_from(self.list.len()).unwrap_or(u32::MAX);
        let id = *self.ids.entry(c).or_insert(next);
        if id == next {
            self.list.push(c);
        }
        self.last = Some((c, id));
        id
    }

    fn packet(&self, q: &Queued, context: u32) -> Packet {
        self.list
            .get(context as usize)
            .copied()
            .unwrap_or_default()
            .packet(q.ts, q.bytes, q.extra)
    }
}

/// The window's counts, for tests and the bench.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct WindowStats {
    /// Packets waiting now.
    pub held: u64,
    /// The most packets waiting at once.
    pub high_water: u64,
    /// Packets that left before the end of the trace.
    pub left_early: u64,
    /// The most bytes the packets' arena held at once (filled by the
    /// loader).
    pub arena_high_water_bytes: u64,
}

/// The sort window.
#[derive(Debug)]
pub struct Sorter {
    index: HashMap<Stream, usize>,
    queues: Vec<Queue>,
    contexts: Contexts,
    /// The next packet's arrival.
    next_arrival: u64,
    /// Packets that arrived before this may leave at the next
    /// `read_tracing_buffers_completed` (after two flushes).
    point: u64,
    flushes: u32,
    full_sort: bool,
    /// The time of the last packet that left.
    latest_left: Option<i64>,
    stats: WindowStats,
}

impl Default for Sorter {
    fn default() -> Self {
        // The two streams made first, then the others as they arrive.
        let mut index = HashMap::default();
        index.insert(Stream::Packets, 0);
        index.insert(Stream::TrackEvents, 1);
        Sorter {
            index,
            queues: vec![Queue::default(), Queue::default()],
            contexts: Contexts::default(),
            next_arrival: 0,
            point: 0,
            flushes: 0,
            full_sort: false,
            latest_left: None,
            stats: WindowStats::default(),
        }
    }
}

impl Sorter {
    fn queue(&mut self, s: Stream) -> usize {
        // The two streams made first (`default`) are found without the map:
        // nearly every packet is on one of them.
        match s {
            Stream::Packets => return 0,
            Stream::TrackEvents => return 1,
            _ => {}
        }
        let next = self.queues.len();
        let q = *self.index.entry(s).or_insert(next);
        if q == next {
            self.queues.push(Queue::default());
        }
        q
    }

    /// The next arrival, taken by a packet of stream `s` (whose queue is
    /// made now if it is the first): for a packet held until the end,
    /// which [`Self::push_arrived`] queues then.
    pub fn arrive(&mut self, s: Stream) -> u64 {
        self.queue(s);
        let a = self.next_arrival;
        self.next_arrival += 1;
        a
    }

    /// Queues `packet` on stream `s`, arriving now; its arrival.
    pub fn push(&mut self, s: Stream, packet: Packet) -> u64 {
        let arrival = self.arrive(s);
        self.push_arrived(s, arrival, packet);
        arrival
    }

    /// Queues `packet`, which arrived as `arrival` (from [`Self::arrive`]).
    pub fn push_arrived(&mut self, s: Stream, arrival: u64, packet: Packet) {
        let q = self.queue(s);
        let context = self.contexts.id(Context::of(&packet));
        if let Some(queue) = self.queues.get_mut(q) {
            let queued = Queued {
                ts: packet.ts,
                bytes: packet.bytes,
                extra: packet.extra,
                arrival: u32::try_from(arrival).unwrap_or(u32::MAX),
            };
            queue.append(queued, context);
            self.stats.held += 1;
            self.stats.high_water = self.stats.high_water.max(self.stats.held);
        }
    }

    /// Switches to full sort (nothing leaves before the end), for a packet
    /// whose clock does not convert yet; false once packets have left.
    pub fn set_full_sort(&mut self) -> bool {
        if self.latest_left.is_some() {
            return self.full_sort;
        }
        self.full_sort = true;
        true
    }

    /// An `all_data_sources_flushed` service event was read.
    pub fn on_flush(&mut self) {
        self.flushes = self.flushes.saturating_add(1);
    }

    /// A `read_tracing_buffers_completed` service event was read: after
    /// two flushes, the packets that arrived before the previous such
    /// point leave, in order, to `sink`.
    pub fn on_read_buffers(&mut self, sink: &mut impl FnMut(Leaving)) {
        if self.full_sort || self.flushes < 2 {
            return;
        }
        let before = self.stats.held;
        self.extract(self.point, sink);
        self.stats.left_early += before.saturating_sub(self.stats.held);
        self.point = self.next_arrival;
        self.flushes = 0;
    }

    /// The end of the trace: every packet left leaves, in order.
    pub fn finish(&mut self, sink: &mut impl FnMut(Leaving)) {
        self.extract(u64::MAX, sink);
    }

    /// The window's counts.
    pub fn stats(&self) -> WindowStats {
        self.stats
    }

    /// The merge: packets that arrived before `limit` leave in order.
    fn extract(&mut self, limit: u64, sink: &mut impl FnMut(Leaving)) {
        for q in &mut self.queues {
            q.prepare(limit == u64::MAX);
        }
        let mut heap: BinaryHeap<Reverse<(i64, usize)>> = self
            .queues
            .iter()
            .enumerate()
            .filter_map(|(i, q)| q.front().map(|(e, _)| Reverse((e.ts, i))))
            .collect();
        while let Some(Reverse((_, i))) = heap.pop() {
            let second = heap.peek().map_or(i64::MAX, |Reverse((ts, _))| *ts);
            let Some(q) = self.queues.get_mut(i) else {
                break;
            };
            let mut taken = 0u64;
            while let Some((e, context)) = q.front() {
                if e.arrived() >= limit || e.ts > second {
                    break;
                }
                q.pop_front();
                taken += 1;
                let packet = self.contexts.packet(&e, context);
                if self.latest_left.is_some_and(|t| e.ts < t) {
                    sink(Leaving::OutOfOrder(packet));
                    continue;
                }
                self.latest_left = Some(e.ts);
                sink(Leaving::InOrder(packet));
            }
            self.stats.held = self.stats.held.saturating_sub(taken);
            q.give_back();
            // The earliest queue cannot give an event before the limit.
            if taken == 0 {
                break;
            }
            if let Some((e, _)) = q.front() {
                heap.push(Reverse((e.ts, i)));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ftrace(ts: i64, cpu: u32) -> Packet {
        Packet {
            ts,
            bytes: Default::default(),
            generation: 0,
            machine: 0,
            cpu,
            extra: crate::packet_view::NO_EXTRA,
            kind: PacketKind::Ftrace,
            field: 0,
        }
    }

    /// Pushes `packets` (in stream order) and gives the order they leave
    /// in at the end: indices into `packets`.
    fn full(packets: &[Packet]) -> Vec<usize> {
        let mut s = Sorter::default();
        for (i, p) in packets.iter().enumerate() {
            let mut p = *p;
            p.extra = i as u32;
            s.push(Stream::of(&p, None), p);
        }
        let mut out = Vec::new();
        s.finish(&mut |l| match l {
            Leaving::InOrder(p) => out.push(p.extra as usize),
            Leaving::OutOfOrder(_) => panic!("nothing left before"),
        });
        out
    }

    /// A packet leaves as it came, whatever context it shares with others.
    #[test]
    fn a_packet_leaves_as_it_came() {
        let mut s = Sorter::default();
        let mut a = ftrace(3, 1);
        a.generation = 7;
        a.machine = 2;
        a.extra = 11;
        let mut b = a;
        b.ts = 4;
        b.kind = PacketKind::TrackEvent;
        b.field = 11;
        b.cpu = 0;
        s.push(Stream::of(&a, None), a);
        s.push(Stream::of(&b, None), b);
        s.push(Stream::of(&a, None), a);
        let mut out = Vec::new();
        s.finish(&mut |l| {
            if let Leaving::InOrder(p) = l {
                out.push((
                    p.ts,
                    p.generation,
                    p.machine,
                    p.cpu,
                    p.extra,
                    p.kind,
                    p.field,
                ));
            }
        });
        let t = |p: &Packet| {
            (
                p.ts,
                p.generation,
                p.machine,
                p.cpu,
                p.extra,
                p.kind,
                p.field,
            )
        };
        assert_eq!(out, vec![t(&a), t(&a), t(&b)]);
    }

    #[test]
    fn a_queue_drains_through_ties_with_the_next() {
        // cpu 2 arrives first; both CPUs have events at 60 and 900.
        let packets = vec![ftrace(60, 2), ftrace(900, 2), ftrace(60, 3), ftrace(900, 3)];
        // cpu 2 gives 60; cpu 3 then drains 60 and 900 (up to cpu 2's 900).
        assert_eq!(full(&packets), vec![0, 2, 3, 1]);
    }

    #[test]
    fn times_ascend() {
        let packets = vec![ftrace(5, 0), ftrace(1, 1), ftrace(3, 0)];
        let ts: Vec<i64> = full(&packets).iter().map(|&i| packets[i].ts).collect();
        assert_eq!(ts, vec![1, 3, 5]);
    }

    /// Events spread over many CPUs' queues a few at a time come out in
    /// time order, ties in queue order, as the queue-by-queue scan gave.
    #[test]
    fn many_queues_merge_in_time_then_queue_order() {
        let mut packets = Vec::new();
        for round in 0..50i64 {
            for cpu in (0..200u32).rev() {
                packets.push(ftrace(round * 10 + i64::from(cpu % 3), cpu));
            }
        }
        let order = full(&packets);
        assert_eq!(order.len(), packets.len());
        let keys: Vec<(i64, u32)> = order
            .iter()
            .map(|&i| (packets[i].ts, 199 - packets[i].cpu))
            .collect();
        let mut sorted = keys.clone();
        sorted.sort_unstable();
        assert_eq!(keys, sorted);
    }

    /// A queue whose order broke late is sorted from the first event not
    /// earlier than the breaking time, arrival order kept among equals.
    #[test]
    fn a_queue_sorts_only_its_broken_tail() {
        let packets = vec![
            ftrace(1, 0),
            ftrace(5, 0),
            ftrace(5, 0),
            ftrace(9, 0),
            ftrace(5, 0),
            ftrace(2, 0),
        ];
        assert_eq!(full(&packets), vec![0, 5, 1, 2, 4, 3]);
    }

    /// Packets leave at a read of the buffers after two flushes, only those
    /// that arrived before the previous such point; without the flushes
    /// nothing leaves.
    #[test]
    fn packets_leave_at_the_services_points() {
        let mut s = Sorter::default();
        let mut left = Vec::new();
        let mut sink = |l: Leaving| match l {
            Leaving::InOrder(p) => left.push(p.ts),
            Leaving::OutOfOrder(p) => left.push(-p.ts),
        };
        let point = |s: &mut Sorter, sink: &mut dyn FnMut(Leaving)| {
            s.on_flush();
            s.on_flush();
            s.on_read_buffers(&mut |l| sink(l));
        };
        s.push(Stream::Ftrace(0), ftrace(10, 0));
        // One flush is not enough.
        s.on_flush();
        s.on_read_buffers(&mut sink);
        // The first point: nothing arrived before the start.
        point(&mut s, &mut sink);
        assert_eq!(s.stats().held, 1);
        s.push(Stream::Ftrace(0), ftrace(20, 0));
        // 10 arrived before the previous point and leaves; 20 waits.
        point(&mut s, &mut sink);
        assert_eq!(s.stats().held, 1);
        s.push(Stream::Ftrace(1), ftrace(5, 1));
        // The earliest queue's first packet (5) arrived past the point:
        // nothing leaves.
        point(&mut s, &mut sink);
        assert_eq!(s.stats().held, 2);
        // 5 is earlier than 10, which left: dropped.
        s.finish(&mut sink);
        assert_eq!(left, vec![10, -5, 20]);
        assert_eq!(s.stats().high_water, 2);
        assert_eq!(s.stats().left_early, 1);
    }

    /// A packet held for its clock keeps its arrival: queued at the end,
    /// it sorts where it arrived among packets of equal time.
    #[test]
    fn a_held_packet_sorts_by_its_arrival() {
        let mut s = Sorter::default();
        assert!(s.set_full_sort());
        let held = s.arrive(Stream::Ftrace(0));
        let mut p = ftrace(7, 0);
        p.extra = 1;
        s.push(Stream::Ftrace(0), p);
        let mut first = ftrace(7, 0);
        first.extra = 0;
        s.push_arrived(Stream::Ftrace(0), held, first);
        let mut out = Vec::new();
        s.finish(&mut |l| {
            if let Leaving::InOrder(p) = l {
                out.push(p.extra);
            }
        });
        assert_eq!(out, vec![0, 1]);
    }

    /// In full sort nothing leaves before the end; once packets left, the
    /// switch is refused.
    #[test]
    fn full_sort_is_refused_once_packets_left() {
        let mut s = Sorter::default();
        for _ in 0..2 {
            s.push(Stream::Packets, ftrace(1, 0));
            s.on_flush();
            s.on_flush();
            s.on_read_buffers(&mut |_| {});
        }
        assert_eq!(s.stats().left_early, 1);
        assert!(!s.set_full_sort());
        let mut s = Sorter::default();
        assert!(s.set_full_sort());
        for _ in 0..2 {
            s.push(Stream::Packets, ftrace(1, 0));
            s.on_flush();
            s.on_flush();
            s.on_read_buffers(&mut |_| {});
        }
        assert_eq!(s.stats().left_early, 0);
    }
}
