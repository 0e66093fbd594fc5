//! Contiguous memory allocations (CMA) as upstream imports them on the
//! kernels whose events it reads (5.10 up to 6.1, the kernel version from
//! `system_info`): `cma_alloc_start` (FtraceEvent 465) opens an
//! `mm_cma_alloc` slice on the allocating thread's track and
//! `cma_alloc_info` (466) closes it with the allocation's facts as args
//! (`cma_name`, `cma_pfn`, `cma_req_pages`, pages migrated, reclaimed and
//! mapped, and the isolate, migrate and test failures). From 6.1 the
//! kernel closes it with `cma_alloc_finish` (576) instead, the migration
//! facts coming before it in `mm_alloc_contig_migrate_range_info` (577),
//! kept per thread and reset by each start. The version bounds,
//! names and args are facts of upstream's ftrace parser; the events are
//! read with protozero's schema-less decoder.

use protozero::Decoder;

use super::Parser;
use super::importer::{FtraceHandler, FtraceInput};
use crate::storage::args::{ArgSetBuilder, ArgValue};
use crate::storage::rows::SliceRow;

const CMA_ALLOC_START: u32 = 465;
const CMA_ALLOC_INFO: u32 = 466;
/// `cma_alloc_finish` {name 1, pfn 2, count 4} (kernels from 6.1).
const CMA_ALLOC_FINISH: u32 = 576;
/// `mm_alloc_contig_migrate_range_info` {nr_migrated 3, nr_reclaimed 4,
/// nr_mapped 5} (kernels from 6.1).
const MIGRATE_RANGE_INFO: u32 = 577;

/// The events (gathered by `ftrace_registry.rs`).
pub const FTRACE_HANDLERS: &[(u32, FtraceHandler)] = &[
    (CMA_ALLOC_START, cma_alloc_start),
    (CMA_ALLOC_INFO, cma_alloc_info),
    (CMA_ALLOC_FINISH, cma_alloc_finish),
    (MIGRATE_RANGE_INFO, migrate_range_info),
];

/// Whether the trace's kernel is at least `(major, minor)` (an unknown
/// kernel is older than every version, as upstream compares).
fn at_least(p: &Parser, version: (u32, u32)) -> bool {
    p.sched.kernel_version.is_some_and(|v| v >= version)
}

fn cma_alloc_start(p: &mut Parser, e: &FtraceInput<'_>) {
    if !at_least(p, (5, 10)) {
        return;
    }
    let utid = p.processes.get_or_create_thread(&mut p.storage, e.tid);
    let track = p.tracks.thread_track(&mut p.storage, utid);
    if at_least(p, (6, 1)) {
        // A new allocation starts with no migration facts.
        p.ftrace_state.cma_migration.insert(utid, [0; 3]);
    }
    let name = p.storage.strings.intern("mm_cma_alloc");
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
}

fn cma_alloc_info(p: &mut Parser, e: &FtraceInput<'_>) {
    if !at_least(p, (5, 10)) || at_least(p, (6, 1)) {
        return;
    }
    let utid = p.processes.get_or_create_thread(&mut p.storage, e.tid);
    let track = p.tracks.thread_track(&mut p.storage, utid);
    let Some(id) = p.slices.end(&mut p.storage, track, e.ts, None) else {
        return;
    };
    let d = Decoder::new(e.body);
    let uint = |id: u32| d.find_last(id).and_then(|f| f.as_u64().ok()).unwrap_or(0);
    let name = d
        .find_last(6)
        .and_then(|f| f.as_bytes().ok())
        .map(|b| String::from_utf8_lossy(b).into_owned())
        .unwrap_or_default();
    let mut b = ArgSetBuilder::default();
    let existing = p
        .storage
        .slices
        .get(id as usize)
        .and_then(|s| s.arg_set_id.get());
    if let Some(set) = existing {
        let args: Vec<_> = p.storage.args.set(set).copied().collect();
        for a in args {
            b.add(a.flat_key, a.key, a.value);
        }
    }
    let name = p.storage.strings.intern(&name);
    let k = p.storage.strings.intern("cma_name");
    b.add(k, k, ArgValue::String(name));
    for (key, field, width32) in [
        ("cma_pfn", 10, false),
        ("cma_req_pages", 2, true),
        ("cma_nr_migrated", 8, false),
        ("cma_nr_reclaimed", 9, false),
        ("cma_nr_mapped", 7, false),
        ("cma_nr_isolate_fail", 3, true),
        ("cma_nr_migrate_fail", 4, true),
        ("cma_nr_test_fail", 5, true),
    ] {
        let v = uint(field);
        let v = if width32 { u64::from(v as u32) } else { v };
        let k = p.storage.strings.intern(key);
        b.add(k, k, ArgValue::Uint(v));
    }
    let set = p.storage.args.add_set(&b);
    if let Some(s) = p.storage.slices.get_mut(id as usize) {
        s.arg_set_id = set.into();
    }
}

/// The migration facts of the thread's allocation in progress.
fn migrate_range_info(p: &mut Parser, e: &FtraceInput<'_>) {
    if !at_least(p, (6, 1)) {
        return;
    }
    let d = Decoder::new(e.body);
    let uint = |id: u32| d.find_last(id).and_then(|f| f.as_u64().ok()).unwrap_or(0);
    let facts = [uint(3), uint(4), uint(5)];
    let utid = p.processes.get_or_create_thread(&mut p.storage, e.tid);
    p.ftrace_state.cma_migration.insert(utid, facts);
}

/// Closes the thread's `mm_cma_alloc` slice with the allocation's name,
/// first page frame and pages asked for, and the migration facts the
/// thread reported since (zero without any).
fn cma_alloc_finish(p: &mut Parser, e: &FtraceInput<'_>) {
    if !at_least(p, (6, 1)) {
        return;
    }
    let utid = p.processes.get_or_create_thread(&mut p.storage, e.tid);
    let track = p.tracks.thread_track(&mut p.storage, utid);
    let facts = p
        .ftrace_state
        .cma_migration
        .get(&utid)
        .copied()
        .unwrap_or_default();
    let Some(id) = p.slices.end(&mut p.storage, track, e.ts, None) else {
        return;
    };
    let d = Decoder::new(e.body);
    let uint = |id: u32| d.find_last(id).and_then(|f| f.as_u64().ok()).unwrap_or(0);
    let name = d
        .find_last(1)
        .and_then(|f| f.as_bytes().ok())
        .map(|b| String::from_utf8_lossy(b).into_owned())
        .unwrap_or_default();
    let mut b = ArgSetBuilder::default();
    if let Some(set) = p
        .storage
        .slices
        .get(id as usize)
        .and_then(|s| s.arg_set_id.get())
    {
        let args: Vec<_> = p.storage.args.set(set).copied().collect();
        for a in args {
            b.add(a.flat_key, a.key, a.value);
        }
    }
    let name = p.storage.strings.intern(&name);
    let k = p.storage.strings.intern("cma_name");
    b.add(k, k, ArgValue::String(name));
    for (key, v) in [
        ("cma_pfn", uint(2)),
        ("cma_req_pages", uint(4)),
        ("cma_nr_migrated", facts[0]),
        ("cma_nr_reclaimed", facts[1]),
        ("cma_nr_mapped", facts[2]),
    ] {
        let k = p.storage.strings.intern(key);
        b.add(k, k, ArgValue::Uint(v));
    }
    let set = p.storage.args.add_set(&b);
    if let Some(s) = p.storage.slices.get_mut(id as usize) {
        s.arg_set_id = set.into();
    }
}

#[cfg(test)]
mod tests {
    use crate::{TraceProcessor, Value};
    use zerotrace_protos::protos::TracePacket;

    fn framed(out: &mut Vec<u8>, f: impl FnOnce(&mut TracePacket<'_>)) {
        let mut w = protozero::HeapWriter::new();
        {
            let mut p = TracePacket::from_message(w.root());
            f(&mut p);
        }
        let p = w.finish().expect("writer");
        out.push(0x0a);
        out.push(p.len() as u8);
        out.extend_from_slice(&p);
    }

    fn trace(release: Option<&str>) -> TraceProcessor {
        let mut t = Vec::new();
        if let Some(release) = release {
            framed(&mut t, |p| {
                p.begin_system_info()
                    .begin_utsname()
                    .set_sysname("Linux")
                    .set_release(release);
            });
        }
        framed(&mut t, |p| {
            p.set_trusted_packet_sequence_id(1);
            let mut b = p.message().begin_nested(1);
            b.append_uint32(1, 2);
            {
                let mut e = b.begin_nested(2);
                e.append_uint64(1, 1000);
                e.append_uint32(2, 537);
                e.begin_nested(super::CMA_ALLOC_START).append_uint32(2, 16);
            }
            let mut e = b.begin_nested(2);
            e.append_uint64(1, 1600);
            e.append_uint32(2, 537);
            let mut info = e.begin_nested(super::CMA_ALLOC_INFO);
            info.append_uint32(2, 16);
            info.append_string(6, "camera");
            info.append_uint64(8, 12);
            info.append_uint64(10, 4096);
        });
        TraceProcessor::from_bytes(&t).expect("trace")
    }

    #[test]
    fn an_allocation_is_a_slice_of_its_thread_on_the_kernels_that_report_it() {
        let tp = trace(Some("5.10.0"));
        let r = tp
            .query(
                "SELECT s.ts, s.dur, s.name, t.tid, extract_arg(s.arg_set_id, 'cma_name'), \
                 extract_arg(s.arg_set_id, 'cma_pfn'), extract_arg(s.arg_set_id, 'cma_req_pages'), \
                 extract_arg(s.arg_set_id, 'cma_nr_migrated') \
                 FROM slice s JOIN thread_track tt ON s.track_id = tt.id JOIN thread t USING (utid)",
            )
            .expect("query")
            .rows;
        assert_eq!(
            r,
            vec![vec![
                Value::Int(1000),
                Value::Int(600),
                Value::Text("mm_cma_alloc".to_owned()),
                Value::Int(537),
                Value::Text("camera".to_owned()),
                Value::Int(4096),
                Value::Int(16),
                Value::Int(12),
            ]]
        );
        // Before 5.10, after 6.1 (info no longer closes it) and with no
        // known kernel: nothing, or an open slice.
        let count = |tp: &TraceProcessor| {
            tp.query("SELECT count(*), max(dur) FROM slice")
                .expect("query")
                .rows
        };
        assert_eq!(
            count(&trace(Some("5.4.0"))),
            vec![vec![Value::Int(0), Value::Null]]
        );
        assert_eq!(count(&trace(None)), vec![vec![Value::Int(0), Value::Null]]);
        assert_eq!(
            count(&trace(Some("6.1.0"))),
            vec![vec![Value::Int(1), Value::Int(-1)]]
        );
    }
}
