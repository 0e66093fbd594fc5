//! Heap dumps as a pprof `Profile` in Go's heap-profile convention: four
//! sample types, `alloc_objects/count`, `alloc_space/bytes`,
//! `inuse_objects/count` and `inuse_space/bytes` (the default), period
//! type `space/bytes` with the sampling interval as the period. The
//! values are heapprofd's, already scaled from sampled to estimated
//! bytes, so pprof shows them as they are. One pprof sample per
//! callstack, process and heap of the last dump of each process and heap
//! (their totals are cumulative), labelled `pid` and `heap`; with
//! `dump_at_max`, `inuse_space` is the bytes live at the peak. Locations,
//! functions and mappings as for CPU samples ([`super::pprof`]).
//! Samples without a resolved callstack are left out.

use std::collections::BTreeMap;

use super::pprof::{PprofError, PprofTables, gzipped};
use super::profile::Profile;

/// The last heap dump of each process and heap (of process `pid` only, if
/// given) as a gzip-compressed pprof `Profile`.
pub fn encode_heap_pprof(profile: &Profile, pid: Option<u64>) -> Result<Vec<u8>, PprofError> {
    let mut tables = PprofTables::new(profile);
    // (leaf-first location ids, pid, heap) → the four values.
    let mut samples: BTreeMap<(Vec<u64>, u64, String), [i64; 4]> = BTreeMap::new();
    let mut period = 0u64;
    let (mut first_ts, mut last_ts) = (u64::MAX, 0u64);
    for d in profile.last_heap_dumps(pid) {
        period = period.max(d.sampling_interval_bytes);
        first_ts = first_ts.min(d.ts);
        last_ts = last_ts.max(d.ts);
        for s in &d.samples {
            if s.stack.is_empty() {
                continue;
            }
            let ids = tables.locations_of(&s.stack);
            let v = samples
                .entry((ids, d.pid, d.heap_name.clone()))
                .or_default();
            let add = [s.alloc_count, s.allocated, s.live_count(), s.unreleased()];
            for (t, a) in v.iter_mut().zip(add) {
                *t = t.saturating_add(i64::try_from(a).unwrap_or(i64::MAX));
            }
        }
    }
    gzipped(|p| {
        let strings = &mut tables.strings;
        let types = [
            ("alloc_objects", "count"),
            ("alloc_space", "bytes"),
            ("inuse_objects", "count"),
            ("inuse_space", "bytes"),
        ]
        .map(|(t, u)| (strings.id(t), strings.id(u)));
        let space = (strings.id("space"), strings.id("bytes"));
        let (pid_key, heap_key) = (strings.id("pid"), strings.id("heap"));
        let mut heap_names = BTreeMap::new();
        for (_, _, heap) in samples.keys() {
            heap_names
                .entry(heap.clone())
                .or_insert_with(|| strings.id(heap));
        }
        for (t, u) in types {
            p.add_sample_type().set_type(t).set_unit(u);
        }
        p.begin_period_type().set_type(space.0).set_unit(space.1);
        p.set_period(i64::try_from(period).unwrap_or(i64::MAX));
        p.set_default_sample_type(types[3].0);
        for ((ids, pid, heap), values) in &samples {
            let mut s = p.add_sample();
            s.set_location_id(ids.iter().copied());
            s.set_value(values.iter().copied());
            s.add_label()
                .set_key(pid_key)
                .set_num(i64::try_from(*pid).unwrap_or(i64::MAX));
            if let Some(&h) = heap_names.get(heap) {
                s.add_label().set_key(heap_key).set_str(h);
            }
        }
        if first_ts < last_ts {
            p.set_duration_nanos(i64::try_from(last_ts - first_ts).unwrap_or(i64::MAX));
        }
        tables.write(p);
    })
}
