//! Android's file system read tracing as upstream imports it:
//! `android_fs_dataread_start` (FtraceEvent 432) opens an
//! `android_fs_data_read` slice on the shared `android_fs` tracks (one per
//! reading thread at once, the thread as the cookie:
//! `tracker/track_compressor.rs`) with the file, offset and size as args,
//! and `android_fs_dataread_end` (431) closes the read of the same inode
//! and offset, adding its own offset and size. An end whose start was not
//! seen is ignored. Names and args are facts of upstream's ftrace parser;
//! the events are read with protozero's schema-less decoder.

use protozero::Decoder;

use super::Parser;
use super::importer::{FtraceHandler, FtraceInput};
use crate::hash::HashMap;
use crate::storage::args::{ArgSetBuilder, ArgValue};
use crate::storage::rows::SliceRow;
use crate::tracker::tracks::{EventType, TrackSpec};

const ANDROID_FS_DATAREAD_END: u32 = 431;
const ANDROID_FS_DATAREAD_START: u32 = 432;

/// The tracks' pool (`track_compressor.rs`'s key) and their name.
const POOL: &str = "android_fs";

/// The events (gathered by `ftrace_registry.rs`).
pub const FTRACE_HANDLERS: &[(u32, FtraceHandler)] = &[
    (ANDROID_FS_DATAREAD_END, dataread_end),
    (ANDROID_FS_DATAREAD_START, dataread_start),
];

/// The thread reading each (inode, offset) until its end.
#[derive(Debug, Default)]
pub struct AndroidFsReads {
    readers: HashMap<(u64, i64), i64>,
}

fn dataread_start(p: &mut Parser, e: &FtraceInput<'_>) {
    let d = Decoder::new(e.body);
    let bytes = d.find_last(1).and_then(|f| f.as_i32().ok()).unwrap_or(0);
    let ino = d.find_last(4).and_then(|f| f.as_u64().ok()).unwrap_or(0);
    let offset = d.find_last(5).and_then(|f| f.as_i64().ok()).unwrap_or(0);
    let path = d
        .find_last(6)
        .and_then(|f| f.as_bytes().ok())
        .map(|b| String::from_utf8_lossy(b).into_owned())
        .unwrap_or_default();
    p.android_fs.readers.insert((ino, offset), e.tid);
    let Parser {
        async_tracks,
        tracks,
        storage,
        ..
    } = p;
    let track = async_tracks.begin(POOL, e.tid, |idx| {
        let mut spec = TrackSpec::new(Some(POOL), POOL, EventType::Slice);
        spec.dimensions = vec![("track_compressor_idx", ArgValue::Int(i64::from(idx)))];
        tracks.create(storage, &spec)
    });
    let path = p.storage.strings.intern(&path);
    let mut args = ArgSetBuilder::default();
    for (key, value) in [
        ("file_path", ArgValue::String(path)),
        ("offset_start", ArgValue::Int(offset)),
        ("bytes_read_start", ArgValue::Int(i64::from(bytes))),
    ] {
        let k = p.storage.strings.intern(key);
        args.add(k, k, value);
    }
    let arg_set_id = p.storage.args.add_set(&args);
    let name = p.storage.strings.intern("android_fs_data_read");
    p.slices.begin(
        &mut p.storage,
        SliceRow {
            ts: e.ts,
            dur: -1,
            track_id: track,
            name,
            arg_set_id: arg_set_id.into(),
            ..Default::default()
        },
    );
}

fn dataread_end(p: &mut Parser, e: &FtraceInput<'_>) {
    let d = Decoder::new(e.body);
    let bytes = d.find_last(1).and_then(|f| f.as_i32().ok()).unwrap_or(0);
    let ino = d.find_last(2).and_then(|f| f.as_u64().ok()).unwrap_or(0);
    let offset = d.find_last(3).and_then(|f| f.as_i64().ok()).unwrap_or(0);
    let Some(tid) = p.android_fs.readers.remove(&(ino, offset)) else {
        return;
    };
    let Some(track) = p.async_tracks.end(POOL, tid) else {
        return;
    };
    let Some(id) = p.slices.end(&mut p.storage, track, e.ts, None) else {
        return;
    };
    let mut args = ArgSetBuilder::default();
    let existing = p
        .storage
        .slices
        .get(id as usize)
        .and_then(|s| s.arg_set_id.get());
    if let Some(set) = existing {
        let old: Vec<_> = p.storage.args.set(set).copied().collect();
        for a in old {
            args.add(a.flat_key, a.key, a.value);
        }
    }
    for (key, value) in [("offset_end", offset), ("bytes_read_end", i64::from(bytes))] {
        let k = p.storage.strings.intern(key);
        args.add(k, k, ArgValue::Int(value));
    }
    let set = p.storage.args.add_set(&args);
    if let Some(s) = p.storage.slices.get_mut(id as usize) {
        s.arg_set_id = set.into();
    }
}

#[cfg(test)]
mod tests {
    use crate::{TraceProcessor, Value};
    use zerotrace_protos::protos::TracePacket;

    #[test]
    fn a_read_is_a_slice_from_its_start_to_the_end_of_the_same_inode_and_offset() {
        let mut w = protozero::HeapWriter::new();
        {
            let mut p = TracePacket::from_message(w.root());
            p.set_trusted_packet_sequence_id(1);
            let mut b = p.message().begin_nested(1);
            b.append_uint32(1, 0);
            {
                let mut e = b.begin_nested(2);
                e.append_uint64(1, 1000);
                e.append_uint32(2, 77);
                let mut s = e.begin_nested(super::ANDROID_FS_DATAREAD_START);
                s.append_int32(1, 4096);
                s.append_uint64(4, 9);
                s.append_int64(5, 8192);
                s.append_string(6, "/data/app/base.apk");
            }
            for (ts, offset) in [(1300u64, 0i64), (1500, 8192)] {
                let mut e = b.begin_nested(2);
                e.append_uint64(1, ts);
                e.append_uint32(2, 78);
                let mut end = e.begin_nested(super::ANDROID_FS_DATAREAD_END);
                end.append_int32(1, 4096);
                end.append_uint64(2, 9);
                end.append_int64(3, offset);
            }
        }
        let p = w.finish().expect("writer");
        let mut t = vec![0x0a, p.len() as u8];
        t.extend_from_slice(&p);
        let tp = TraceProcessor::from_bytes(&t).expect("trace");
        let rows = tp
            .query(
                "SELECT s.ts, s.dur, s.name, t.name, extract_arg(s.arg_set_id, 'file_path'), \
                 extract_arg(s.arg_set_id, 'offset_end') FROM slice s \
                 JOIN track t ON s.track_id = t.id",
            )
            .expect("query")
            .rows;
        assert_eq!(
            rows,
            vec![vec![
                Value::Int(1000),
                Value::Int(500),
                Value::Text("android_fs_data_read".to_owned()),
                Value::Text("android_fs".to_owned()),
                Value::Text("/data/app/base.apk".to_owned()),
                Value::Int(8192),
            ]]
        );
    }
}
