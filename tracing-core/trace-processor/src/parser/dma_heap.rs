//! Android's DMA-BUF heap ftrace event (`dma_heap_stat`, FtraceEvent 351)
//! as upstream imports it: the heap's total (`mem.dma_heap`), each
//! allocation or free as a change on the emitting thread's
//! `mem.dma_heap_change` counter (the buffer's inode as an arg), and each
//! buffer's life as a slice named by its size in kB on the shared
//! `mem.dma_buffer` tracks (one per buffer open at once, the inode as the
//! cookie: `tracker/track_compressor.rs`), from its allocation to its
//! free. Names and classifications are facts of upstream's ftrace parser;
//! the event is read with protozero's schema-less decoder.

use protozero::Decoder;

use super::Parser;
use super::importer::{FtraceHandler, FtraceInput};
use crate::storage::args::{ArgSetBuilder, ArgValue};
use crate::storage::rows::{CounterRow, SliceRow};
use crate::tables::opt_u32::OptU32;
use crate::tracker::tracks::{EventType, TrackSpec};

const DMA_HEAP_STAT: u32 = 351;

/// The event (gathered by `ftrace_registry.rs`).
pub const FTRACE_HANDLERS: &[(u32, FtraceHandler)] = &[(DMA_HEAP_STAT, dma_heap_stat)];

/// The buffers' track pool (`track_compressor.rs`'s key).
const BUFFERS: &str = "android_dma_allocations";

fn dma_heap_stat(p: &mut Parser, e: &FtraceInput<'_>) {
    let d = Decoder::new(e.body);
    let inode = d.find_last(1).and_then(|f| f.as_u64().ok()).unwrap_or(0);
    let len = d.find_last(2).and_then(|f| f.as_i64().ok()).unwrap_or(0);
    let total = d.find_last(3).and_then(|f| f.as_u64().ok()).unwrap_or(0);

    let spec = TrackSpec::new(Some("mem.dma_heap"), "android_dma_heap", EventType::Counter);
    let track = p.tracks.interned_counter(&mut p.storage, &spec);
    p.storage.counters.push(CounterRow {
        ts: e.ts,
        track_id: track,
        value: total as f64,
        arg_set_id: OptU32::NONE,
    });

    let utid = p.processes.get_or_create_thread(&mut p.storage, e.tid);
    let mut spec = TrackSpec::new(
        Some("mem.dma_heap_change"),
        "android_dma_heap_change",
        EventType::Counter,
    );
    spec.utid = Some(utid);
    let track = p.tracks.interned_counter(&mut p.storage, &spec);
    let key = p.storage.strings.intern("inode");
    let mut args = ArgSetBuilder::default();
    args.add(key, key, ArgValue::Uint(inode));
    let arg_set_id = p.storage.args.add_set(&args);
    p.storage.counters.push(CounterRow {
        ts: e.ts,
        track_id: track,
        value: len as f64,
        arg_set_id: arg_set_id.into(),
    });

    // The inode as the cookie, as upstream takes it (signed).
    let cookie = inode as i64;
    if len > 0 {
        let Parser {
            async_tracks,
            tracks,
            storage,
            ..
        } = p;
        let track = async_tracks.begin(BUFFERS, cookie, |idx| {
            let mut spec = TrackSpec::new(Some("mem.dma_buffer"), BUFFERS, EventType::Slice);
            spec.dimensions = vec![("track_compressor_idx", ArgValue::Int(i64::from(idx)))];
            tracks.create(storage, &spec)
        });
        let name = p.storage.strings.intern(&format!("{} kB", len / 1024));
        p.slices.begin(
            &mut p.storage,
            SliceRow {
                ts: e.ts,
                dur: -1,
                track_id: track,
                name,
                ..Default::default()
            },
        );
    } else if let Some(track) = p.async_tracks.end(BUFFERS, cookie) {
        p.slices.end(&mut p.storage, track, e.ts, None);
    }
}

#[cfg(test)]
mod tests {
    use crate::{TraceProcessor, Value};
    use zerotrace_protos::protos::TracePacket;

    #[test]
    fn a_buffer_lives_from_allocation_to_free_on_the_dma_buffer_tracks() {
        let mut w = protozero::HeapWriter::new();
        {
            let mut p = TracePacket::from_message(w.root());
            p.set_trusted_packet_sequence_id(1);
            let mut b = p.message().begin_nested(1);
            b.append_uint32(1, 0);
            for (ts, inode, len, total) in [
                (100u64, 7u64, 4096i64, 4096u64),
                (150, 8, 2048, 6144),
                (200, 7, -4096, 2048),
                (260, 8, -2048, 0),
            ] {
                let mut e = b.begin_nested(2);
                e.append_uint64(1, ts);
                e.append_uint32(2, 1);
                let mut body = e.begin_nested(super::DMA_HEAP_STAT);
                body.append_uint64(1, inode);
                body.append_int64(2, len);
                body.append_uint64(3, total);
            }
        }
        let p = w.finish().expect("writer");
        let mut t = vec![0x0a, p.len() as u8];
        t.extend_from_slice(&p);
        let tp = TraceProcessor::from_bytes(&t).expect("trace");
        let rows = |sql: &str| tp.query(sql).expect("query").rows;
        let s = |v: &str| Value::Text(v.to_owned());
        assert_eq!(
            rows(
                "SELECT s.ts, s.dur, s.name, t.name FROM slice s \
                 JOIN track t ON s.track_id = t.id ORDER BY s.ts"
            ),
            vec![
                vec![
                    Value::Int(100),
                    Value::Int(100),
                    s("4 kB"),
                    s("mem.dma_buffer")
                ],
                vec![
                    Value::Int(150),
                    Value::Int(110),
                    s("2 kB"),
                    s("mem.dma_buffer")
                ],
            ]
        );
        assert_eq!(
            rows(
                "SELECT t.name, c.value, extract_arg(c.arg_set_id, 'inode') FROM counter c \
                 JOIN counter_track t ON c.track_id = t.id WHERE c.ts = 200 ORDER BY t.name"
            ),
            vec![
                vec![s("mem.dma_heap"), Value::Real(2048.0), Value::Null],
                vec![
                    s("mem.dma_heap_change"),
                    Value::Real(-4096.0),
                    Value::Int(7)
                ],
            ]
        );
    }
}
