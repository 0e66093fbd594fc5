//! `process_stats` (TracePacket field 9): per-process memory, smaps
//! rollups, OOM score adjustment and CPU runtime as counters on process
//! counter tracks named as upstream names them (`mem.rss`, `mem.smaps.pss`,
//! `oom_score_adj`, `runtime.user_ns`, ...; kB values in bytes).
//!
//! Field numbers are those of upstream's `ps/process_stats.proto`, read
//! with protozero's schema-less decoder (our schemas do not carry it yet).

use protozero::Decoder;

use super::Parser;
use super::importer::{Importer, Input};
use crate::storage::rows::CounterRow;
use crate::tables::opt_u32::OptU32;
use zerotrace_protos::upstream_tables::packet_field;

/// What a process field becomes: (track name, classification, scale).
fn counter_of(field: u32) -> Option<(&'static str, &'static str, f64)> {
    Some(match field {
        2 => ("mem.virt", "process_memory", 1024.0),
        3 => ("mem.rss", "process_memory", 1024.0),
        4 => ("mem.rss.anon", "process_memory", 1024.0),
        5 => ("mem.rss.file", "process_memory", 1024.0),
        6 => ("mem.rss.shmem", "process_memory", 1024.0),
        7 => ("mem.swap", "process_memory", 1024.0),
        8 => ("mem.locked", "process_memory", 1024.0),
        9 => ("mem.rss.watermark", "process_memory", 1024.0),
        24 => ("mem.dmabuf_rss", "process_memory", 1024.0),
        10 => ("oom_score_adj", "oom_score_adj", 1.0),
        16 => ("mem.smaps.rss", "smaps", 1024.0),
        17 => ("mem.smaps.pss", "smaps", 1024.0),
        18 => ("mem.smaps.pss.anon", "smaps", 1024.0),
        19 => ("mem.smaps.pss.file", "smaps", 1024.0),
        20 => ("mem.smaps.pss.smem", "smaps", 1024.0),
        23 => ("mem.smaps.swap.pss", "smaps", 1024.0),
        21 => ("runtime.user_ns", "proc_stat_runtime", 1.0),
        22 => ("runtime.kernel_ns", "proc_stat_runtime", 1.0),
        _ => return None,
    })
}

/// The payload this module imports.
pub const IMPORTERS: &[(u32, Importer)] = &[(packet_field::PROCESS_STATS, import)];

/// Parses a packet's process stats; false when it has none.
fn import(p: &mut Parser, input: &Input<'_>) {
    let stats = input.bytes;
    let ts = input.ts;
    let mut d = Decoder::new(stats);
    while let Some(Ok(f)) = d.read_field() {
        if f.id != 1 {
            continue;
        }
        let Ok(proc_bytes) = f.as_bytes() else {
            continue;
        };
        let pid = Decoder::new(proc_bytes)
            .find_last(1)
            .and_then(|f| f.as_i32().ok())
            .unwrap_or(0);
        let mut pd = Decoder::new(proc_bytes);
        while let Some(Ok(pf)) = pd.read_field() {
            let Some((name, classification, scale)) = counter_of(pf.id) else {
                if ![1, 11, 12, 13, 14, 15].contains(&pf.id) {
                    p.storage.stats.incr("proc_stat_unknown_counters");
                }
                continue;
            };
            let Ok(v) = pf.as_i64() else { continue };
            let upid = p
                .processes
                .get_or_create_process(&mut p.storage, i64::from(pid));
            let track = p
                .tracks
                .process_counter(&mut p.storage, name, classification, Some(upid));
            p.storage.counters.push(CounterRow {
                ts,
                track_id: track,
                value: v as f64 * scale,
                arg_set_id: OptU32::NONE,
            });
        }
    }
}
