//! GPU counters (`gpu_counter_event`, TracePacket field 52) as upstream
//! imports them: a counter descriptor, given inline (its counter ids then
//! hold for the whole trace) or interned per sequence
//! (`InternedData.gpu_counter_descriptors`), makes one `gpu_counter` track
//! per counter (named by the spec, its unit composed from the spec's
//! numerator and denominator units, its description a source arg, the
//! GPU as its `ugpu`/`gpu` dimensions) and puts each track in its groups
//! (`__intrinsic_gpu_counter_group`); each sample then becomes a counter
//! value. A backwards-looking counter's value covers the interval that
//! ends at its sample, so the sample writes 0 at its time and gives its
//! value to the track's previous row; a forwards-looking one is written
//! where it is.

use super::Parser;
use super::fields::Fields;
use super::gpu_log_vulkan::repeated_u64;
use super::importer::{Importer, Input};
use crate::column_store::strings::StrId;
use crate::hash::HashMap;
use crate::sequence_state::Generation;
use crate::storage::args::ArgValue;
use crate::storage::import_logs::LogPlace;
use crate::storage::rows::CounterRow;
use crate::tables::gpu::GpuCounterGroupRow;
use crate::tables::opt_u32::OptU32;
use crate::tracker::tracks::{EventType, TrackSpec};
use protozero::Decoder;

/// TracePacket.gpu_counter_event.
pub(crate) const GPU_COUNTER_EVENT: u32 = 52;
/// InternedData.gpu_counter_descriptors.
const INTERNED_GPU_COUNTER_DESCRIPTORS: u32 = 47;

/// The packets this module imports.
pub const IMPORTERS: &[(u32, Importer)] = &[(GPU_COUNTER_EVENT, gpu_counter_event)];

/// `GpuCounterEvent` fields.
const EV_DESCRIPTOR: u32 = 1;
const EV_COUNTERS: u32 = 2;
const EV_GPU_ID: u32 = 3;
const EV_DESCRIPTOR_IID: u32 = 4;
/// `GpuCounterDescriptor` fields.
const DESC_SPECS: u32 = 1;
const DESC_COUNTER_GROUPS: u32 = 6;
/// `GpuCounterSpec` fields.
const SPEC_COUNTER_ID: u32 = 1;
const SPEC_NAME: u32 = 2;
const SPEC_DESCRIPTION: u32 = 3;
const SPEC_NUMERATOR_UNITS: u32 = 7;
const SPEC_DENOMINATOR_UNITS: u32 = 8;
const SPEC_GROUPS: u32 = 10;
const SPEC_VALUE_DIRECTION: u32 = 11;
/// `GpuCounterSpec.ValueDirection.VALUE_DIRECTION_FORWARDS_LOOKING`.
const FORWARDS_LOOKING: u64 = 2;
/// `GpuCounterGroupSpec` fields.
const GROUP_ID: u32 = 1;
const GROUP_NAME: u32 = 2;
const GROUP_DESCRIPTION: u32 = 3;
const GROUP_COUNTER_IDS: u32 = 4;

/// A counter's track and how its values are read.
#[derive(Debug, Clone, Copy)]
struct CounterInfo {
    track: u32,
    forwards_looking: bool,
}

/// An interned descriptor's bytes and its counters by id.
type InternedCounters = (Vec<u8>, HashMap<u32, CounterInfo>);

/// What the GPU counters keep between packets.
#[derive(Debug, Default)]
pub struct GpuCounterState {
    /// Counters of inline descriptors, by counter id (global).
    legacy: HashMap<u32, CounterInfo>,
    /// Counters of interned descriptors, by (sequence, iid): the
    /// descriptor's bytes (a new generation may reuse the iid for another
    /// descriptor) and its counters by id.
    interned: HashMap<(u32, u64), InternedCounters>,
    /// Each track's last counter row (backwards-looking values land there).
    last_row: HashMap<u32, usize>,
}

/// The measure units' names, by `GpuCounterDescriptor.MeasureUnit` value.
fn unit_name(unit: u64) -> &'static str {
    const NAMES: [&str; 41] = [
        "",
        "bit",
        "Kb",
        "Mb",
        "Gb",
        "Tb",
        "Pb",
        "B",
        "KB",
        "MB",
        "GB",
        "TB",
        "PB",
        "Hz",
        "KHz",
        "MHz",
        "GHz",
        "THz",
        "PHz",
        "ns",
        "us",
        "ms",
        "s",
        "min",
        "h",
        "Vertex",
        "Pixel",
        "Triangle",
        "mW",
        "W",
        "kW",
        "J",
        "V",
        "A",
        "C",
        "F",
        "K",
        "%",
        "Primitive",
        "Fragment",
        "Instruction",
    ];
    usize::try_from(unit)
        .ok()
        .and_then(|u| NAMES.get(u))
        .copied()
        .unwrap_or("Unknown")
}

/// The unit of a spec: numerator units joined by `:`, then `/` and the
/// denominator units (those that name one) joined by `:`; none when the
/// spec gives no unit at all.
fn counter_unit(spec: &[u8]) -> Option<String> {
    let num = repeated_u64(spec, SPEC_NUMERATOR_UNITS);
    let den = repeated_u64(spec, SPEC_DENOMINATOR_UNITS);
    let has = |id| Decoder::new(spec).map_while(Result::ok).any(|f| f.id == id);
    if !has(SPEC_NUMERATOR_UNITS) && !has(SPEC_DENOMINATOR_UNITS) {
        return None;
    }
    let mut unit = String::new();
    for n in num {
        if !unit.is_empty() {
            unit.push(':');
        }
        unit.push_str(unit_name(n));
    }
    let mut sep = '/';
    for d in den {
        let name = unit_name(d);
        if name.is_empty() {
            continue;
        }
        unit.push(sep);
        unit.push_str(name);
        sep = ':';
    }
    Some(unit)
}

/// A string interned, the empty one as NULL (upstream's pool has no empty
/// string).
fn intern_nonempty(p: &mut Parser, s: Option<&str>) -> StrId {
    match s {
        Some(s) if !s.is_empty() => p.storage.strings.intern(s),
        _ => StrId::NULL,
    }
}

/// The `gpu_counter` track of a spec on GPU `gpu`.
fn counter_track(p: &mut Parser, gpu: u32, spec: &Fields<'_>, spec_bytes: &[u8]) -> u32 {
    let name = spec.str(SPEC_NAME).unwrap_or_default();
    let description = spec.str(SPEC_DESCRIPTION);
    let unit = counter_unit(spec_bytes);
    let ugpu = p.gpus.ugpu(&mut p.storage, p.machine, gpu);
    let name_id = intern_nonempty(p, Some(name.as_ref()));
    let desc_id = intern_nonempty(p, description.as_deref());
    let mut track = TrackSpec::new(Some(name.as_ref()), "gpu_counter", EventType::Counter);
    track.unit = unit.as_deref().filter(|u| !u.is_empty());
    track.dimensions = vec![
        ("ugpu", ArgValue::Int(i64::from(ugpu))),
        ("gpu", ArgValue::Int(i64::from(gpu))),
        ("name", ArgValue::String(name_id)),
    ];
    track.source_args = vec![("description", ArgValue::String(desc_id))];
    p.tracks.interned_counter(&mut p.storage, &track)
}

/// A descriptor's groups that carry an id: (id, name, description, its
/// counter ids).
fn groups(p: &mut Parser, desc: &[u8]) -> Vec<(i64, StrId, StrId, Vec<u64>)> {
    let mut out = Vec::new();
    for f in Decoder::new(desc)
        .map_while(Result::ok)
        .filter(|f| f.id == DESC_COUNTER_GROUPS)
    {
        let Ok(g) = f.as_bytes() else { continue };
        let gf = Fields::new(g);
        let Some(id) = gf.uint(GROUP_ID) else {
            continue;
        };
        let name = gf.str(GROUP_NAME);
        let name = name
            .as_deref()
            .map_or(StrId::NULL, |n| p.storage.strings.intern(n));
        let description = gf.str(GROUP_DESCRIPTION);
        let description = description
            .as_deref()
            .map_or(StrId::NULL, |d| p.storage.strings.intern(d));
        out.push((
            i64::from(id as u32 as i32),
            name,
            description,
            repeated_u64(g, GROUP_COUNTER_IDS),
        ));
    }
    out
}

/// The rows of a counter's own groups (its spec's `groups`, named by the
/// descriptor's groups of the same id), or of the unclassified group.
fn spec_groups(p: &mut Parser, track: u32, spec: &[u8], groups: &[(i64, StrId, StrId, Vec<u64>)]) {
    let ids = repeated_u64(spec, SPEC_GROUPS);
    if ids.is_empty() {
        p.storage.gpu.counter_groups.push(GpuCounterGroupRow {
            group_id: 0,
            track_id: track,
            ..GpuCounterGroupRow::default()
        });
        return;
    }
    for id in ids {
        let group_id = i64::from(id as u32 as i32);
        let (name, description) = groups
            .iter()
            .find(|g| g.0 == group_id)
            .map_or((StrId::NULL, StrId::NULL), |g| (g.1, g.2));
        p.storage.gpu.counter_groups.push(GpuCounterGroupRow {
            group_id,
            track_id: track,
            name,
            description,
        });
    }
}

/// The rows of the descriptor's own groups, for the counters it listed
/// that have a track.
fn custom_groups(
    p: &mut Parser,
    groups: &[(i64, StrId, StrId, Vec<u64>)],
    tracks: &HashMap<u32, u32>,
) {
    for (group_id, name, description, ids) in groups {
        for id in ids {
            let Some(&track) = u32::try_from(*id).ok().and_then(|id| tracks.get(&id)) else {
                continue;
            };
            p.storage.gpu.counter_groups.push(GpuCounterGroupRow {
                group_id: *group_id,
                track_id: track,
                name: *name,
                description: *description,
            });
        }
    }
}

/// A descriptor's specs: (counter id, its fields' bytes) for each one
/// with an id and a name; the others are counted as invalid when `count`.
fn specs<'a>(p: &mut Parser, desc: &'a [u8], count: bool) -> Vec<(u32, &'a [u8])> {
    let mut out = Vec::new();
    for f in Decoder::new(desc)
        .map_while(Result::ok)
        .filter(|f| f.id == DESC_SPECS)
    {
        let Ok(s) = f.as_bytes() else { continue };
        let sf = Fields::new(s);
        match (sf.uint(SPEC_COUNTER_ID), sf.bytes(SPEC_NAME)) {
            (Some(id), Some(_)) => out.push((id as u32, s)),
            _ if count => {
                p.storage
                    .record_import_log("gpu_counters_invalid_spec", LogPlace::default(), &[]);
            }
            _ => {}
        }
    }
    out
}

fn info(track: u32, spec: &Fields<'_>) -> CounterInfo {
    CounterInfo {
        track,
        forwards_looking: spec.uint(SPEC_VALUE_DIRECTION) == Some(FORWARDS_LOOKING),
    }
}

/// An inline descriptor: its counters' ids hold for the whole trace; an
/// id defined again is refused.
fn legacy_descriptor(p: &mut Parser, desc: &[u8], gpu: u32) {
    let groups = groups(p, desc);
    let mut tracks = HashMap::default();
    for (id, s) in specs(p, desc, true) {
        if p.gpu_counters.legacy.contains_key(&id) {
            let counter = ("counter_id", ArgValue::Uint(u64::from(id)));
            p.storage.record_import_log_typed(
                "gpu_counters_invalid_spec",
                LogPlace::default(),
                &[counter],
            );
            continue;
        }
        let sf = Fields::new(s);
        let track = counter_track(p, gpu, &sf, s);
        spec_groups(p, track, s, &groups);
        p.gpu_counters.legacy.insert(id, info(track, &sf));
        tracks.insert(id, track);
    }
    custom_groups(p, &groups, &tracks);
}

/// An interned descriptor's counters, read once per sequence and iid.
fn interned_descriptor(p: &mut Parser, generation: &Generation, iid: u64) -> bool {
    let seq = generation.sequence_id;
    let Some(bytes) = generation.interned(INTERNED_GPU_COUNTER_DESCRIPTORS, iid) else {
        p.storage.stats.incr("gpu_counters_invalid_spec");
        return false;
    };
    if let Some((known, _)) = p.gpu_counters.interned.get(&(seq, iid))
        && known.as_slice() == bytes
    {
        return true;
    }
    let f = Fields::new(bytes);
    let Some(desc) = f.bytes(2) else {
        p.storage.stats.incr("gpu_counters_invalid_spec");
        return false;
    };
    let gpu = f.int32(3).unwrap_or(0) as u32;
    let groups = groups(p, desc);
    let mut counters = HashMap::default();
    let mut tracks: HashMap<u32, u32> = HashMap::default();
    for (id, s) in specs(p, desc, false) {
        let sf = Fields::new(s);
        let track = counter_track(p, gpu, &sf, s);
        if let std::collections::hash_map::Entry::Vacant(slot) = tracks.entry(id) {
            slot.insert(track);
            spec_groups(p, track, s, &groups);
        }
        counters.insert(id, info(track, &sf));
    }
    custom_groups(p, &groups, &tracks);
    p.gpu_counters
        .interned
        .insert((seq, iid), (bytes.to_vec(), counters));
    true
}

fn push_value(p: &mut Parser, ts: i64, value: f64, c: CounterInfo) {
    let row = p.storage.counters.len();
    if c.forwards_looking {
        p.storage.counters.push(CounterRow {
            ts,
            track_id: c.track,
            value,
            arg_set_id: OptU32::NONE,
        });
    } else {
        p.storage.counters.push(CounterRow {
            ts,
            track_id: c.track,
            value: 0.0,
            arg_set_id: OptU32::NONE,
        });
        if let Some(prev) = p
            .gpu_counters
            .last_row
            .get(&c.track)
            .and_then(|&i| p.storage.counters.get_mut(i))
        {
            prev.value = value;
        }
    }
    p.gpu_counters.last_row.insert(c.track, row);
}

/// The event's descriptor section (inline or interned); false when it
/// names an interned descriptor that is missing or invalid.
fn descriptor(p: &mut Parser, bytes: &[u8], generation: &Generation) -> bool {
    let e = Fields::new(bytes);
    if let Some(iid) = e.uint(EV_DESCRIPTOR_IID) {
        return interned_descriptor(p, generation, iid);
    }
    if let Some(desc) = e.bytes(EV_DESCRIPTOR) {
        let gpu = e.int32(EV_GPU_ID).unwrap_or(0) as u32;
        legacy_descriptor(p, desc, gpu);
    }
    true
}

/// A `gpu_counter_event` packet without a timestamp, as the loader reads
/// it: its descriptor section holds all the same (upstream reads it when
/// the packet arrives, whatever its time), but its samples cannot be
/// placed in time and are dropped and counted.
pub(crate) fn untimed_gpu_counter_event(p: &mut Parser, bytes: &[u8], generation: &Generation) {
    descriptor(p, bytes, generation);
    if Fields::new(bytes).bytes(EV_COUNTERS).is_some() {
        // Read as the packet is, so at its place in the trace.
        p.storage
            .stats
            .log_tokenization("gpu_counters_missing_timestamp", &[]);
    }
}

fn gpu_counter_event(p: &mut Parser, input: &Input<'_>) {
    let e = Fields::new(input.bytes);
    let iid = e.uint(EV_DESCRIPTOR_IID);
    if !descriptor(p, input.bytes, input.generation) {
        return;
    }
    for f in Decoder::new(input.bytes)
        .map_while(Result::ok)
        .filter(|f| f.id == EV_COUNTERS)
    {
        let Ok(c) = f.as_bytes() else { continue };
        let cf = Fields::new(c);
        let Some(id) = cf.uint(1) else { continue };
        let value = match (cf.int(2), cf.real(3)) {
            (Some(v), _) => v as f64,
            (None, Some(v)) => v,
            (None, None) => continue,
        };
        let id = id as u32;
        let counter = match iid {
            Some(iid) => p
                .gpu_counters
                .interned
                .get(&(input.generation.sequence_id, iid))
                .and_then(|(_, m)| m.get(&id))
                .copied(),
            None => p.gpu_counters.legacy.get(&id).copied(),
        };
        match counter {
            Some(c) => push_value(p, input.ts, value, c),
            None if iid.is_some() => p.storage.stats.incr("gpu_counters_invalid_spec"),
            None => {}
        }
    }
}
