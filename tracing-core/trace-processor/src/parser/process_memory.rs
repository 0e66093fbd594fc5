//! A process's memory as the kernel reports it through ftrace:
//! `rss_stat` (FtraceEvent 313) and Android's `rss_stat_throttled` (359)
//! give one memory counter (`mem.rss.file`, `mem.rss.anon`, `mem.swap`,
//! `mem.rss.shmem`, `mem.unreclaimable`), and `oom_score_adj_update` (326)
//! the OOM score adjustment, each a process counter reported by a thread
//! (`tracker/thread_counters.rs` finds its process at the end).
//!
//! Whose memory an `rss_stat` is needs its `mm_id`: with `curr` set the
//! emitting thread owns the mm and is remembered as its owner; without,
//! the event is about another thread's mm (or the thread's own mm being
//! torn down), so it goes to the remembered owner while that one lives,
//! and is counted in `rss_stat_unknown_thread_for_mm_id` otherwise. A
//! negative size is counted in `rss_stat_negative_size`. Legacy events
//! without `mm_id` or `curr` go to the emitting thread. These rules are
//! facts of upstream's rss stat tracker; the events are read with
//! protozero's schema-less decoder.

use protozero::Decoder;

use super::Parser;
use super::importer::{FtraceHandler, FtraceInput};
use crate::hash::HashMap;
use crate::tracker::thread_counters::ProcessCounter;

/// `FtraceEvent.rss_stat`: {member 1, size 2, curr 3, mm_id 4}.
const RSS_STAT: u32 = 313;
/// `FtraceEvent.oom_score_adj_update`: {comm 1, oom_score_adj 2, pid 3}.
const OOM_SCORE_ADJ_UPDATE: u32 = 326;
/// `FtraceEvent.rss_stat_throttled`: {curr 1, member 2, mm_id 3, size 4}.
const RSS_STAT_THROTTLED: u32 = 359;

/// The events (gathered by `ftrace_registry.rs`).
pub const FTRACE_HANDLERS: &[(u32, FtraceHandler)] = &[
    (RSS_STAT, rss_stat),
    (RSS_STAT_THROTTLED, rss_stat_throttled),
    (OOM_SCORE_ADJ_UPDATE, oom_score_adj_update),
];

/// Which thread owns each mm, as the last event with `curr` set said.
#[derive(Debug, Default)]
pub struct MmOwners {
    owners: HashMap<i64, u32>,
}

/// The memory counter a `member` of `rss_stat` is.
fn memory_key(member: i64) -> &'static str {
    match member {
        0 => "rss.file",
        1 => "rss.anon",
        2 => "swap",
        3 => "rss.shmem",
        4 => "unreclaimable",
        _ => "unknown",
    }
}

fn rss_stat(p: &mut Parser, e: &FtraceInput<'_>) {
    let d = Decoder::new(e.body);
    let int = |id: u32| d.find_last(id).and_then(|f| f.as_i64().ok());
    let member = int(1).unwrap_or(0);
    let size = int(2).unwrap_or(0);
    let curr = int(3).map(|c| c != 0);
    let mm_id = int(4);
    parse(p, e, member, size, curr, mm_id);
}

fn rss_stat_throttled(p: &mut Parser, e: &FtraceInput<'_>) {
    let d = Decoder::new(e.body);
    let int = |id: u32| d.find_last(id).and_then(|f| f.as_i64().ok());
    // Both are always read for this event: absent ones are 0.
    let curr = Some(int(1).unwrap_or(0) != 0);
    let member = int(2).unwrap_or(0);
    let mm_id = Some(int(3).unwrap_or(0));
    let size = int(4).unwrap_or(0);
    parse(p, e, member, size, curr, mm_id);
}

fn parse(
    p: &mut Parser,
    e: &FtraceInput<'_>,
    member: i64,
    size: i64,
    curr: Option<bool>,
    mm_id: Option<i64>,
) {
    // int32 as upstream reads it, then unsigned: a negative member is
    // unknown too.
    let key = memory_key(i64::from(member as i32 as u32));
    if size < 0 {
        p.storage.stats.incr("rss_stat_negative_size");
        return;
    }
    let utid = match (mm_id, curr) {
        (Some(mm_id), Some(curr)) => owner(p, mm_id, curr, e.tid),
        _ => Some(p.processes.get_or_create_thread(&mut p.storage, e.tid)),
    };
    let Some(utid) = utid else {
        p.storage.stats.incr("rss_stat_unknown_thread_for_mm_id");
        return;
    };
    p.thread_counters.push(
        &mut p.storage,
        p.machine,
        e.ts,
        size as f64,
        utid,
        ProcessCounter::Memory(key),
    );
}

/// The thread whose mm `mm_id` is: the emitting thread `tid` when `curr`,
/// else the mm's remembered owner while it lives.
fn owner(p: &mut Parser, mm_id: i64, curr: bool, tid: i64) -> Option<u32> {
    if curr {
        let utid = p.processes.get_or_create_thread(&mut p.storage, tid);
        p.mm_owners.owners.insert(mm_id, utid);
        return Some(utid);
    }
    let utid = *p.mm_owners.owners.get(&mm_id)?;
    if !p.processes.is_thread_alive(&p.storage, utid) {
        p.mm_owners.owners.remove(&mm_id);
        return None;
    }
    Some(utid)
}

fn oom_score_adj_update(p: &mut Parser, e: &FtraceInput<'_>) {
    let d = Decoder::new(e.body);
    let int = |id: u32| d.find_last(id).and_then(|f| f.as_i64().ok());
    // Older tracers wrote negative values badly: upstream keeps the low 16
    // bits, signed.
    let adj = int(2).unwrap_or(0) as i16;
    let pid = int(3).unwrap_or(0) as i32 as u32;
    let utid = p
        .processes
        .get_or_create_thread(&mut p.storage, i64::from(pid));
    p.thread_counters.push(
        &mut p.storage,
        p.machine,
        e.ts,
        f64::from(adj),
        utid,
        ProcessCounter::OomScoreAdj,
    );
}

#[cfg(test)]
mod tests {
    use crate::{TraceProcessor, Value};
    use zerotrace_protos::protos::TracePacket;

    /// One ftrace event of CPU 0: (ts, emitting pid, event field, writer).
    type Event<'a> = (u64, u32, u32, &'a dyn Fn(&mut protozero::Message<'_>));

    /// A packet holding a process tree of (pid, ppid, name).
    fn processes(list: &[(i32, i32, &str)]) -> Vec<u8> {
        framed(|p| {
            let mut tree = p.message().begin_nested(2);
            for &(pid, ppid, name) in list {
                let mut proc_ = tree.begin_nested(1);
                proc_.append_int32(1, pid);
                proc_.append_int32(2, ppid);
                proc_.append_string(3, name);
            }
        })
    }

    /// A packet holding one ftrace bundle of CPU 0 with `events`.
    fn bundle(events: &[Event<'_>]) -> Vec<u8> {
        framed(|p| {
            p.set_trusted_packet_sequence_id(1);
            let mut b = p.message().begin_nested(1);
            b.append_uint32(1, 0);
            for (ts, pid, field, f) in events {
                let mut e = b.begin_nested(2);
                e.append_uint64(1, *ts);
                e.append_uint32(2, *pid);
                let mut body = e.begin_nested(*field);
                f(&mut body);
            }
        })
    }

    fn framed(f: impl FnOnce(&mut TracePacket<'_>)) -> Vec<u8> {
        let mut w = protozero::HeapWriter::new();
        {
            let mut p = TracePacket::from_message(w.root());
            f(&mut p);
        }
        let p = w.finish().expect("writer");
        let mut out = vec![0x0a];
        let mut n = p.len();
        while n >= 0x80 {
            out.push((n as u8) | 0x80);
            n >>= 7;
        }
        out.push(n as u8);
        out.extend_from_slice(&p);
        out
    }

    fn rss(member: i32, size: i64, mm: Option<(u32, u32)>) -> impl Fn(&mut protozero::Message<'_>) {
        move |m| {
            m.append_int32(1, member);
            m.append_int64(2, size);
            if let Some((curr, mm_id)) = mm {
                m.append_uint32(3, curr);
                m.append_uint32(4, mm_id);
            }
        }
    }

    fn rows(tp: &TraceProcessor, sql: &str) -> Vec<Vec<Value>> {
        tp.query(sql).expect("query").rows
    }

    fn s(v: &str) -> Value {
        Value::Text(v.to_owned())
    }

    #[test]
    fn rss_stat_goes_to_the_owner_of_its_mm_and_oom_adj_to_the_process() {
        let (own, other, legacy, negative, orphan) = (
            rss(0, 100, Some((1, 0x1234))),
            // Emitted by pid 20 about pid 10's mm.
            rss(1, 50, Some((0, 0x1234))),
            rss(2, 7, None),
            rss(0, -1, None),
            // An mm never owned: counted, dropped.
            rss(0, 5, Some((0, 0x9999))),
        );
        let oom = |m: &mut protozero::Message<'_>| {
            m.append_int32(2, -300);
            m.append_int32(3, 10);
        };
        let mut t = processes(&[(10, 1, "ten"), (20, 1, "twenty")]);
        t.extend(bundle(&[
            (100, 10, super::RSS_STAT, &own),
            (110, 20, super::RSS_STAT, &other),
            (120, 20, super::RSS_STAT, &legacy),
            (130, 20, super::RSS_STAT, &negative),
            (140, 20, super::RSS_STAT, &orphan),
            (150, 0, super::OOM_SCORE_ADJ_UPDATE, &oom),
        ]));
        // A thread no process tree names: its own fallback track.
        t.extend(bundle(&[(160, 30, super::RSS_STAT, &legacy)]));
        let tp = TraceProcessor::from_bytes(&t).expect("trace");
        assert_eq!(
            rows(
                &tp,
                "SELECT c.ts, t.name, p.pid, c.value FROM counter c \
                 JOIN process_counter_track t ON c.track_id = t.id \
                 JOIN process p USING (upid) ORDER BY c.ts"
            ),
            vec![
                vec![
                    Value::Int(100),
                    s("mem.rss.file"),
                    Value::Int(10),
                    Value::Real(100.0)
                ],
                vec![
                    Value::Int(110),
                    s("mem.rss.anon"),
                    Value::Int(10),
                    Value::Real(50.0)
                ],
                vec![
                    Value::Int(120),
                    s("mem.swap"),
                    Value::Int(20),
                    Value::Real(7.0)
                ],
                vec![
                    Value::Int(150),
                    s("oom_score_adj"),
                    Value::Int(10),
                    Value::Real(-300.0)
                ],
            ]
        );
        assert_eq!(
            rows(
                &tp,
                "SELECT c.ts, t.name, t.type, th.tid FROM counter c \
                 JOIN thread_counter_track t ON c.track_id = t.id \
                 JOIN thread th USING (utid)"
            ),
            vec![vec![
                Value::Int(160),
                s("mem.swap"),
                s("process_memory_thread_fallback"),
                Value::Int(30)
            ]]
        );
        assert_eq!(
            rows(
                &tp,
                "SELECT name, value FROM stats WHERE name LIKE 'rss_stat%' AND value > 0 \
                 ORDER BY name"
            ),
            vec![
                vec![s("rss_stat_negative_size"), Value::Int(1)],
                vec![s("rss_stat_unknown_thread_for_mm_id"), Value::Int(1)],
            ]
        );
        assert_eq!(
            rows(
                &tp,
                "SELECT extract_arg(arg_set_id, 'utid') FROM counter WHERE ts = 110"
            ),
            rows(&tp, "SELECT utid FROM thread WHERE tid = 10")
        );
    }
}
