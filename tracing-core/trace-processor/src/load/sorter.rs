//! The order packets reach the parsers in, as upstream's sorter gives it.
//! Upstream keeps one queue per stream (the trace packets, the TrackEvents,
//! and per CPU the ftrace events, the compact sched_switches and the
//! compact sched_wakings, each queue made when its first event arrives),
//! each sorted by time then arrival. It then repeatedly takes the queue
//! whose earliest event is earliest (the first such queue on a tie) and
//! drains it up to and including the earliest time of any other queue. So
//! events of equal time on two queues come in the order that draining
//! gives, not in arrival order, and parsers see it (which thread's state
//! row comes first at one timestamp, say). The queues wait in a heap by
//! their earliest event, so a drain costs a logarithm of the queues.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use crate::hash::HashMap;

use crate::packet_view::InlineSched;
use crate::packet_view::{Packet, PacketKind};

/// The stream a packet is queued on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Stream {
    Packets,
    TrackEvents,
    Ftrace(u32),
    InlineSwitch(u32),
    InlineWaking(u32),
}

fn stream(p: &Packet, inline: &[InlineSched]) -> Option<Stream> {
    Some(match p.kind {
        PacketKind::Packet => Stream::Packets,
        PacketKind::TrackEvent => Stream::TrackEvents,
        PacketKind::Ftrace => Stream::Ftrace(p.cpu),
        PacketKind::InlineSched => match inline.get(p.extra as usize) {
            Some(InlineSched::Switch { .. }) => Stream::InlineSwitch(p.cpu),
            _ => Stream::InlineWaking(p.cpu),
        },
        PacketKind::Dropped => return None,
    })
}

/// The order upstream's sorter would hand `packets` (in stream order,
/// each with its time) to the parsers: indices into `packets`. Dropped
/// packets are left out. Only 12-byte keys are sorted and moved, never
/// the packets.
pub fn sort(packets: &[Packet], inline: &[InlineSched]) -> Vec<u32> {
    // The two streams made first, then the others as their events arrive.
    let mut index: HashMap<Stream, usize> = HashMap::default();
    index.insert(Stream::Packets, 0);
    index.insert(Stream::TrackEvents, 1);
    let mut queues: Vec<Vec<(i64, u32)>> = vec![Vec::new(), Vec::new()];
    for (i, p) in packets.iter().enumerate() {
        let Some(s) = stream(p, inline) else {
            continue;
        };
        let Ok(i) = u32::try_from(i) else {
            break;
        };
        let next = queues.len();
        let q = *index.entry(s).or_insert(next);
        if q == queues.len() {
            queues.push(Vec::new());
        }
        if let Some(q) = queues.get_mut(q) {
            q.push((p.ts, i));
        }
    }
    let total = queues.iter().map(Vec::len).sum();
    for q in &mut queues {
        // Keys are unique (the index), so an unstable sort keeps arrival
        // order among equal times; most queues arrive nearly sorted.
        q.sort_unstable();
    }
    // The queues by their earliest unread event, earliest first (then the
    // first queue): a heap, so that each drain costs a logarithm of the
    // queues rather than a look at all of them (a trace spreading its
    // events over a thousand CPUs' queues, a few at a time, paid a
    // thousand looks per event).
    let mut heads = vec![0usize; queues.len()];
    let mut heap: BinaryHeap<Reverse<(i64, usize)>> = queues
        .iter()
        .enumerate()
        .filter_map(|(i, q)| q.first().map(|&(ts, _)| Reverse((ts, i))))
        .collect();
    let mut out = Vec::with_capacity(total);
    while let Some(Reverse((_, i))) = heap.pop() {
        let second = heap.peek().map_or(i64::MAX, |Reverse((ts, _))| *ts);
        let (Some(q), Some(h)) = (queues.get(i), heads.get_mut(i)) else {
            break;
        };
        while let Some(&(ts, idx)) = q.get(*h) {
            if ts > second {
                break;
            }
            out.push(idx);
            *h += 1;
        }
        if let Some(&(ts, _)) = q.get(*h) {
            heap.push(Reverse((ts, i)));
        }
    }
    out
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

    #[test]
    fn a_queue_drains_through_ties_with_the_next() {
        // cpu 2 arrives first; both CPUs have events at 60 and 900.
        let packets = vec![ftrace(60, 2), ftrace(900, 2), ftrace(60, 3), ftrace(900, 3)];
        let order = sort(&packets, &[]);
        // cpu 2 gives 60; cpu 3 then drains 60 and 900 (up to cpu 2's 900).
        assert_eq!(order, vec![0, 2, 3, 1]);
    }

    #[test]
    fn dropped_packets_are_left_out() {
        let mut packets = vec![ftrace(5, 0), ftrace(1, 0)];
        packets[0].kind = PacketKind::Dropped;
        assert_eq!(sort(&packets, &[]), vec![1]);
    }

    #[test]
    fn times_ascend() {
        let packets = vec![ftrace(5, 0), ftrace(1, 1), ftrace(3, 0)];
        let ts: Vec<i64> = sort(&packets, &[])
            .iter()
            .map(|&i| packets[i as usize].ts)
            .collect();
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
        let order = sort(&packets, &[]);
        assert_eq!(order.len(), packets.len());
        let keys: Vec<(i64, u32)> = order
            .iter()
            .map(|&i| (packets[i as usize].ts, 199 - packets[i as usize].cpu))
            .collect();
        let mut sorted = keys.clone();
        sorted.sort_unstable();
        assert_eq!(keys, sorted);
    }
}
