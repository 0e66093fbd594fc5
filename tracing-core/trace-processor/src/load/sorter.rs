//! The order packets reach the parsers in, as upstream's sorter gives it.
//! Upstream keeps one queue per stream (the trace packets, the TrackEvents,
//! and per CPU the ftrace events, the compact sched_switches and the
//! compact sched_wakings, each queue made when its first event arrives),
//! each sorted by time then arrival. It then repeatedly takes the queue
//! whose earliest event is earliest (the first such queue on a tie) and
//! drains it up to and including the earliest time of any other queue. So
//! events of equal time on two queues come in the order that draining
//! gives, not in arrival order, and parsers see it (which thread's state
//! row comes first at one timestamp, say).

use std::collections::{HashMap, VecDeque};

use super::loaded::Packet;

/// The stream a packet is queued on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Stream {
    Packets,
    TrackEvents,
    Ftrace(u32),
    InlineSwitch(u32),
    InlineWaking(u32),
}

fn stream(p: &Packet) -> Stream {
    match (p.ftrace_cpu, &p.inline_sched, &p.track_event) {
        (Some(cpu), Some(super::ftrace_bundle::InlineSched::Switch { .. }), _) => {
            Stream::InlineSwitch(cpu)
        }
        (Some(cpu), Some(_), _) => Stream::InlineWaking(cpu),
        (Some(cpu), None, _) => Stream::Ftrace(cpu),
        (None, _, Some(_)) => Stream::TrackEvents,
        (None, _, None) => Stream::Packets,
    }
}

/// Orders `packets` (each with its time and arrival order) as upstream's
/// sorter would hand them to the parsers.
pub fn sort(mut packets: Vec<Packet>) -> Vec<Packet> {
    packets.sort_by_key(|p| p.order);
    // The two streams made first, then the others as their events arrive.
    let mut index: HashMap<Stream, usize> = HashMap::new();
    index.insert(Stream::Packets, 0);
    index.insert(Stream::TrackEvents, 1);
    let mut queues: Vec<Vec<Packet>> = vec![Vec::new(), Vec::new()];
    let total = packets.len();
    for p in packets {
        let s = stream(&p);
        let next = queues.len();
        let i = *index.entry(s).or_insert(next);
        if i == queues.len() {
            queues.push(Vec::new());
        }
        if let Some(q) = queues.get_mut(i) {
            q.push(p);
        }
    }
    let mut queues: Vec<VecDeque<Packet>> = queues
        .into_iter()
        .map(|mut q| {
            q.sort_by_key(|p| (p.ts, p.order));
            VecDeque::from(q)
        })
        .collect();
    let mut out = Vec::with_capacity(total);
    loop {
        let mut min: Option<(usize, i64)> = None;
        let mut second = i64::MAX;
        for (i, q) in queues.iter().enumerate() {
            let Some(front) = q.front() else {
                continue;
            };
            match min {
                Some((_, m)) if front.ts >= m => second = second.min(front.ts),
                Some((_, m)) => {
                    second = m;
                    min = Some((i, front.ts));
                }
                None => min = Some((i, front.ts)),
            }
        }
        let Some((i, _)) = min else {
            break;
        };
        let Some(q) = queues.get_mut(i) else {
            break;
        };
        while q.front().is_some_and(|p| p.ts <= second) {
            if let Some(p) = q.pop_front() {
                out.push(p);
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ftrace(ts: i64, order: u64, cpu: u32) -> Packet {
        Packet {
            ts,
            bytes: Vec::new(),
            generation: 0,
            track_event: None,
            order,
            index: 0,
            ftrace_cpu: Some(cpu),
            inline_sched: None,
            machine: 0,
        }
    }

    #[test]
    fn a_queue_drains_through_ties_with_the_next() {
        // cpu 2 arrives first; both CPUs have events at 60 and 900.
        let packets = vec![
            ftrace(60, 0, 2),
            ftrace(900, 1, 2),
            ftrace(60, 2, 3),
            ftrace(900, 3, 3),
        ];
        let order: Vec<u64> = sort(packets).iter().map(|p| p.order).collect();
        // cpu 2 gives 60; cpu 3 then drains 60 and 900 (up to cpu 2's 900).
        assert_eq!(order, vec![0, 2, 3, 1]);
    }

    #[test]
    fn times_ascend() {
        let packets = vec![ftrace(5, 0, 0), ftrace(1, 1, 1), ftrace(3, 2, 0)];
        let ts: Vec<i64> = sort(packets).iter().map(|p| p.ts).collect();
        assert_eq!(ts, vec![1, 3, 5]);
    }
}
