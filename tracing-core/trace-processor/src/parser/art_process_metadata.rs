//! `ArtProcessMetadata`: what ART says of a process (name, uid) when it
//! dumps its heap, and on an OutOfMemoryError the failed allocation and
//! the throwing thread's Java stack. Each packet is a `heap_graph` row;
//! an OOME adds its details and the stack as a callsite of frames known by
//! method name and source location (on one dummy mapping), root first.

use protozero::Decoder;

use super::Parser;
use crate::column_store::strings::StrId;
use crate::storage::profiling_rows::{HeapGraphRow, HeapGraphThreadCallsiteRow, OomeDetailsRow};
use crate::tracker::process::NamePriority;
use crate::tracker::stack_profile::DummyOwner;

fn last_u64(msg: &[u8], id: u32) -> Option<u64> {
    Decoder::new(msg)
        .find_last(id)
        .and_then(|f| f.as_u64().ok())
}

fn last_str(msg: &[u8], id: u32) -> Option<&str> {
    Decoder::new(msg)
        .find_last(id)
        .and_then(|f| f.as_str().ok())
}

/// `void a.b.C.m(int)` → `a.b.C.m`: the name before the arguments, after
/// the return type.
fn method_name(frame: &str) -> &str {
    let name = frame.split('(').next().unwrap_or(frame);
    name.rsplit(' ').next().unwrap_or(name)
}

/// Parses one `ArtProcessMetadata` at `ts`.
pub fn parse(p: &mut Parser, bytes: &[u8], ts: i64) {
    let pid = i64::from(last_u64(bytes, 1).unwrap_or(0) as u32);
    p.processes.update_thread(&mut p.storage, pid, pid);
    let upid = p.processes.get_or_create_process(&mut p.storage, pid);
    if let Some(name) = last_str(bytes, 3) {
        let name = p.storage.strings.intern(name);
        p.processes
            .set_process_name(&mut p.storage, upid, name, NamePriority::TrackDescriptor);
    }
    if let Some(uid) = last_u64(bytes, 2) {
        let uid = i64::from(uid as u32);
        if let Some(row) = p.storage.processes.get_mut(upid as usize) {
            row.uid = Some(uid);
            row.android_appid = Some(uid % 100_000);
            row.android_user_id = Some(uid / 100_000);
        }
    }
    let oome_size = last_u64(bytes, 5);
    let graph = u32::try_from(p.storage.profiling.heap_graphs.len()).unwrap_or(u32::MAX);
    let dump_reason = if oome_size.is_some() {
        p.storage.strings.intern("OOME")
    } else {
        StrId::NULL
    };
    p.storage.profiling.heap_graphs.push(HeapGraphRow {
        ts,
        upid,
        dump_reason,
        heap_size: None,
        truncated: None,
    });
    let Some(size) = oome_size else {
        return;
    };
    let error_msg = p.storage.strings.intern_opt(last_str(bytes, 9));
    p.storage.profiling.oome_details.push(OomeDetailsRow {
        heap_graph_id: graph,
        allocation_size_bytes: size as i64,
        total_bytes_free: last_u64(bytes, 6).unwrap_or(0) as i64,
        free_bytes_until_oom: last_u64(bytes, 7).unwrap_or(0) as i64,
        error_msg,
    });
    let Some(stack) = Decoder::new(bytes)
        .find_last(8)
        .and_then(|f| f.as_bytes().ok())
    else {
        return;
    };
    let mut frames = Vec::new();
    let mut d = Decoder::new(stack);
    while let Some(Ok(f)) = d.read_field() {
        if f.id == 1 {
            if let Ok(b) = f.as_bytes() {
                frames.push(b);
            }
        }
    }
    let mut callsite = None;
    let mut depth = 0u32;
    for frame in frames.iter().rev() {
        let Some(raw) = last_str(frame, 1) else {
            continue;
        };
        let name = method_name(raw).to_owned();
        let file = last_str(frame, 2).map(str::to_owned);
        let line = last_u64(frame, 3).map(|l| l as u32);
        let id = p.profiling.stacks.intern_dummy_frame(
            &mut p.storage,
            DummyOwner::ArtProcessMetadata,
            &name,
            file.as_deref(),
            line,
        );
        callsite = Some(
            p.profiling
                .stacks
                .intern_callsite(&mut p.storage, callsite, id, depth),
        );
        depth += 1;
    }
    let utid = p.processes.update_thread(&mut p.storage, pid, pid);
    p.storage
        .profiling
        .heap_graph_thread_callsites
        .push(HeapGraphThreadCallsiteRow {
            heap_graph_id: graph,
            utid,
            callsite_id: callsite,
        });
}
