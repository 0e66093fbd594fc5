//! `cpu_per_uid_data` (TracePacket field 119): Android's CPU time per uid
//! and cluster, as counter tracks named and dimensioned as upstream's
//! (`CPU for UID <uid> CL<cluster>`, `CPU for System|Apps CL<cluster>`, in
//! ms) and the `__intrinsic_android_cpu_per_uid_track` table (each uid and
//! cluster's track and its CPU time over the trace).
//!
//! A packet lists, for each uid, one time per cluster: since boot the first
//! time a sequence's incremental state names the uid and cluster, the
//! increase since its previous packet after that. Isolated and shared-range
//! uids are grouped onto their range's first uid, whose track sums them.
//! Values are kept sparse as upstream keeps them (`sparse_counters.rs`).

use std::collections::BTreeMap;

use crate::hash::HashMap;

use protozero::Decoder;

use super::Parser;
use super::importer::{Importer, Input};
use super::sparse_counters::SparseCounters;
use crate::storage::args::ArgValue;
use crate::tables::android::AndroidCpuPerUidTrackRow;
use crate::tracker::tracks::{EventType, TrackSpec};

/// TracePacket.cpu_per_uid_data.
const CPU_PER_UID_DATA: u32 = 119;

/// The payload this module imports.
pub const IMPORTERS: &[(u32, Importer)] = &[(CPU_PER_UID_DATA, import)];

/// One sequence generation's incremental state.
#[derive(Debug, Default)]
struct GenerationState {
    cluster_count: u32,
    /// Since-boot time by (uid, cluster).
    last_values: BTreeMap<(u32, u32), u64>,
}

/// What the importer keeps across packets and to the end of the trace.
#[derive(Debug, Default)]
pub struct CpuPerUidState {
    generations: HashMap<u32, GenerationState>,
    /// The last since-boot time by (uid, cluster), whatever the sequence.
    last_value: HashMap<(u32, u32), u64>,
    /// CPU time over the trace by (grouped uid, cluster).
    cumulative: BTreeMap<(u32, u32), u64>,
    /// System (uids below 10000) and app totals by cluster.
    system_totals: BTreeMap<u32, u64>,
    app_totals: BTreeMap<u32, u64>,
    /// The tracks' values, kept sparse.
    sparse: SparseCounters,
}

/// The uid without its user part.
fn app_id(uid: u32) -> u32 {
    uid % 100_000
}

/// Whether a uid is in a range shared by many (shared or isolated uids).
fn is_grouped(uid: u32) -> bool {
    let id = app_id(uid);
    (50_000..60_000).contains(&id) || (90_000..100_000).contains(&id)
}

/// The uid a grouped uid is counted under: its range's first.
fn grouped_uid(uid: u32) -> u32 {
    if is_grouped(uid) {
        uid - uid % 10_000
    } else {
        uid
    }
}

fn uid_track(p: &mut Parser, uid: u32, cluster: u32) -> u32 {
    let name = format!("CPU for UID {uid} CL{cluster}");
    let mut spec = TrackSpec::new(Some(&name), "android_cpu_per_uid", EventType::Counter);
    spec.unit = Some("ms");
    spec.dimensions = vec![
        ("uid", ArgValue::Int(i64::from(uid))),
        ("cluster", ArgValue::Int(i64::from(cluster))),
    ];
    p.tracks.interned_counter(&mut p.storage, &spec)
}

fn totals_track(p: &mut Parser, kind: &str, cluster: u32) -> u32 {
    let name = format!("CPU for {kind} CL{cluster}");
    let kind_id = p.storage.strings.intern(kind);
    let mut spec = TrackSpec::new(
        Some(&name),
        "android_cpu_per_uid_totals",
        EventType::Counter,
    );
    spec.unit = Some("ms");
    spec.dimensions = vec![
        ("type", ArgValue::String(kind_id)),
        ("cluster", ArgValue::Int(i64::from(cluster))),
    ];
    p.tracks.interned_counter(&mut p.storage, &spec)
}

fn sparse_push(p: &mut Parser, ts: i64, track: u32, value: f64) {
    p.cpu_per_uid.sparse.push(ts, track, value);
}

/// Reads a packed (or unpacked) list of varints.
fn varints(d: Decoder<'_>, id: u32) -> Vec<u64> {
    let mut out = Vec::new();
    for f in d.map_while(Result::ok).filter(|f| f.id == id) {
        match f.packed_varints() {
            Ok(packed) => out.extend(packed),
            Err(_) => out.extend(f.as_u64().ok()),
        }
    }
    out
}

fn import(p: &mut Parser, input: &Input<'_>) {
    let generation = input.packet.generation;
    let count = Decoder::new(input.bytes)
        .find_last(1)
        .and_then(|f| f.as_u32().ok());
    let uids = varints(Decoder::new(input.bytes), 2);
    let times = varints(Decoder::new(input.bytes), 3);
    let ts = input.ts;
    let s = &mut p.cpu_per_uid;
    let state = s.generations.entry(generation).or_default();
    if let Some(c) = count {
        state.cluster_count = c;
    }
    let clusters = state.cluster_count.max(1);
    let mut uid_at = 0usize;
    let mut cluster = 0u32;
    for &raw in &times {
        let Some(&uid) = uids.get(uid_at) else { break };
        let uid = uid as u32;
        let key = (uid, cluster);
        let value = state
            .last_values
            .entry(key)
            .and_modify(|v| *v = v.saturating_add(raw))
            .or_insert(raw);
        let value = *value;
        let last = s.last_value.entry(key).or_insert(value);
        let delta = value.saturating_sub(*last);
        *last = value;
        let grouped = grouped_uid(uid);
        let total = s.cumulative.entry((grouped, cluster)).or_insert(0);
        *total = total.saturating_add(delta);
        let side = if app_id(grouped) < 10_000 {
            &mut s.system_totals
        } else {
            &mut s.app_totals
        };
        let t = side.entry(cluster).or_insert(0);
        *t = t.saturating_add(delta);
        cluster += 1;
        if cluster >= clusters {
            cluster = 0;
            uid_at += 1;
        }
    }
    let system: Vec<_> = s.system_totals.iter().map(|(c, v)| (*c, *v)).collect();
    let apps: Vec<_> = s.app_totals.iter().map(|(c, v)| (*c, *v)).collect();
    let grouped: Vec<_> = s
        .cumulative
        .iter()
        .filter(|((uid, _), _)| is_grouped(*uid))
        .map(|(k, v)| (*k, *v))
        .collect();
    let own: Vec<_> = s
        .generations
        .get(&generation)
        .map(|g| {
            g.last_values
                .iter()
                .filter(|((uid, _), _)| !is_grouped(*uid))
                .map(|(k, v)| (*k, *v))
                .collect()
        })
        .unwrap_or_default();
    for (cluster, v) in system {
        let track = totals_track(p, "System", cluster);
        sparse_push(p, ts, track, v as f64);
    }
    for (cluster, v) in apps {
        let track = totals_track(p, "Apps", cluster);
        sparse_push(p, ts, track, v as f64);
    }
    for ((uid, cluster), v) in grouped.into_iter().chain(own) {
        let track = uid_track(p, uid, cluster);
        sparse_push(p, ts, track, v as f64);
    }
}

/// The end of the trace: the values in time order, and the table of
/// tracks.
pub fn finish(p: &mut Parser) {
    p.cpu_per_uid.sparse.flush(&mut p.storage);
    let cumulative: Vec<_> = p
        .cpu_per_uid
        .cumulative
        .iter()
        .map(|(k, v)| (*k, *v))
        .collect();
    let mut rows = Vec::with_capacity(cumulative.len());
    for ((uid, cluster), total) in cumulative {
        rows.push(AndroidCpuPerUidTrackRow {
            track_id: uid_track(p, uid, cluster),
            uid: i64::from(uid),
            cluster: i64::from(cluster),
            total_cpu_millis: i64::try_from(total).unwrap_or(i64::MAX),
        });
    }
    rows.sort_by_key(|r| r.track_id);
    p.storage.android.cpu_per_uid_tracks.extend(rows);
}
