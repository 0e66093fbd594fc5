//! A pprof `Profile` read into the tables, as Perfetto's pprof importer
//! fills them: each mapping a `stack_profile_mapping` (its file name and
//! build id from the string table, `[unknown]` when it names none), each
//! location a frame on its mapping (on a mapping of its own named
//! `[unknown]` when it names none that exists) named by its first line's
//! function, its pc made relative to the mapping's start, its lines a
//! symbol set (every line but the outermost marked inlined); each sample
//! type an `__intrinsic_aggregate_profile` row of scope `pprof_file`, and
//! each sample's values `__intrinsic_aggregate_sample` rows on the
//! callsite of its locations, root first.
//!
//! Hostile input: every index into the string table and every id of a
//! mapping, function or location is looked up, never trusted; what does
//! not resolve is left out and counted in upstream's `stackprofile_*`
//! stats (`invalid_string_id`, `invalid_mapping_id`, `invalid_frame_id`
//! for a location or function that is not there, `empty_callstack` for a
//! sample none of whose locations is, `parser_error` for bytes that stop
//! decoding). Work and memory grow with the bytes of the profile only:
//! each table entry is read once, each sample's stack once.

use crate::hash::HashMap;

use zerotrace_protos::pprof::{LocationDecoder, ProfileDecoder};

use crate::column_store::strings::StrId;
use crate::error::TraceError;
use crate::parser::Parser;
use crate::storage::profiling_rows::{AggregateProfileRow, AggregateSampleRow, SymbolRow};
use crate::tracker::stack_profile::MappingParams;

/// The name of what is not known (a mapping without a file, a location
/// without a function).
const UNKNOWN: &str = "[unknown]";

/// A function of the profile.
#[derive(Debug, Clone, Copy)]
struct Function {
    name: StrId,
    filename: StrId,
    start_line: i64,
}

/// The profile's string table, read once, and the lookups into it.
struct Strings {
    ids: Vec<StrId>,
}

impl Strings {
    /// The string at `index`, NULL (counted) when out of range.
    fn get(&self, p: &mut Parser, index: i64) -> StrId {
        match usize::try_from(index).ok().and_then(|i| self.ids.get(i)) {
            Some(id) => *id,
            None => {
                p.storage.stats.incr("stackprofile_invalid_string_id");
                StrId::NULL
            }
        }
    }

    /// The text at `index` ("" when out of range), not counted again.
    fn text<'p>(&self, p: &'p Parser, index: Option<i64>) -> &'p str {
        index
            .and_then(|i| usize::try_from(i).ok())
            .and_then(|i| self.ids.get(i))
            .and_then(|id| p.storage.strings.get(*id))
            .unwrap_or("")
    }
}

fn malformed(message: &str) -> TraceError {
    TraceError::Malformed {
        format: "pprof",
        offset: 0,
        message: message.to_owned(),
    }
}

/// Reads the profile in `bytes` into the tables.
pub(super) fn import(p: &mut Parser, bytes: &[u8]) -> Result<(), TraceError> {
    if bytes.is_empty() {
        return Err(malformed("empty profile"));
    }
    let profile = ProfileDecoder::new(bytes);
    if profile.decode_error().is_some() {
        // What came before the bad bytes is still read.
        p.storage.stats.incr("stackprofile_parser_error");
    }
    let strings = Strings {
        ids: profile
            .string_table_bytes()
            .map(|s| {
                p.storage.work.step(1);
                p.storage.strings.intern(&String::from_utf8_lossy(s))
            })
            .collect(),
    };
    if strings.ids.is_empty() {
        return Err(malformed("the string table is empty"));
    }
    let mappings = read_mappings(p, &profile, &strings);
    let functions = read_functions(p, &profile, &strings);
    let mut frames: HashMap<u64, u32> = HashMap::default();
    for loc in profile.location() {
        p.storage.work.step(1);
        if let Some((id, frame)) = read_location(p, &loc, &mappings, &functions) {
            frames.insert(id, frame);
        }
    }
    let profiles = read_sample_types(p, &profile, &strings);
    read_samples(p, &profile, &frames, &profiles);
    read_period(p, &profile, &strings);
    Ok(())
}

/// The profile's mappings by id: our mapping and its start address.
fn read_mappings(
    p: &mut Parser,
    profile: &ProfileDecoder<'_>,
    strings: &Strings,
) -> HashMap<u64, (u32, u64)> {
    let mut out = HashMap::default();
    for m in profile.mapping() {
        p.storage.work.step(1);
        let Some(id) = m.id() else { continue };
        let name = match m.filename() {
            Some(i) => {
                let s = strings.get(p, i);
                p.storage.strings.get(s).unwrap_or("").to_owned()
            }
            None => UNKNOWN.to_owned(),
        };
        let build_id = m
            .build_id()
            .map(|i| strings.get(p, i))
            .and_then(|s| p.storage.strings.get(s))
            .map(|s| s.as_bytes().to_vec());
        let start = m.memory_start().unwrap_or(0);
        // A limit below the start (which upstream aborts on) is an empty
        // range at the start.
        let end = m.memory_limit().unwrap_or(0).max(start);
        let params = MappingParams {
            build_id,
            exact_offset: m.file_offset().unwrap_or(0),
            start,
            end,
            name,
            ..MappingParams::default()
        };
        let mapping = p.profiling.stacks.intern_mapping(&mut p.storage, params);
        out.insert(id, (mapping, start));
    }
    out
}

/// The profile's functions by id.
fn read_functions(
    p: &mut Parser,
    profile: &ProfileDecoder<'_>,
    strings: &Strings,
) -> HashMap<u64, Function> {
    let mut out = HashMap::default();
    for f in profile.function() {
        p.storage.work.step(1);
        let Some(id) = f.id() else { continue };
        let name = match f.name() {
            Some(i) => strings.get(p, i),
            None => p.storage.strings.intern(UNKNOWN),
        };
        let filename = f.filename().map_or(StrId::NULL, |i| strings.get(p, i));
        out.insert(
            id,
            Function {
                name,
                filename,
                start_line: f.start_line().unwrap_or(0),
            },
        );
    }
    out
}

/// One location as a frame with its symbols: (location id, frame id).
fn read_location(
    p: &mut Parser,
    loc: &LocationDecoder<'_>,
    mappings: &HashMap<u64, (u32, u64)>,
    functions: &HashMap<u64, Function>,
) -> Option<(u64, u32)> {
    let id = loc.id()?;
    let known = loc.mapping_id().and_then(|m| {
        let found = mappings.get(&m).copied();
        if found.is_none() && m != 0 {
            p.storage.stats.incr("stackprofile_invalid_mapping_id");
        }
        found
    });
    let (mapping, start) = match known {
        Some(m) => m,
        None => {
            let params = MappingParams {
                end: u64::MAX,
                name: UNKNOWN.to_owned(),
                ..MappingParams::default()
            };
            (
                p.profiling.stacks.create_mapping(&mut p.storage, &params),
                0,
            )
        }
    };
    // The lines whose function exists, innermost first.
    let mut lines: Vec<(Function, i64)> = Vec::new();
    for line in loc.line() {
        p.storage.work.step(1);
        let Some(fid) = line.function_id() else {
            continue;
        };
        match functions.get(&fid) {
            Some(f) => lines.push((*f, line.line().unwrap_or(0))),
            None => p.storage.stats.incr("stackprofile_invalid_frame_id"),
        }
    }
    let name_id = lines
        .first()
        .map_or_else(|| p.storage.strings.intern(UNKNOWN), |(f, _)| f.name);
    let name = p.storage.strings.get(name_id).unwrap_or("").to_owned();
    let address = loc.address().unwrap_or(0);
    let rel_pc = if start > 0 && address >= start {
        address - start
    } else {
        address
    };
    let frame = p
        .profiling
        .stacks
        .intern_frame(&mut p.storage, mapping, rel_pc, &name, None, None);
    if !lines.is_empty() {
        let set = u32::try_from(p.storage.profiling.symbols.len()).unwrap_or(u32::MAX);
        let last = lines.len() - 1;
        for (i, (f, line)) in lines.iter().enumerate() {
            let number = if *line > 0 { *line } else { f.start_line };
            p.storage.profiling.symbols.push(SymbolRow {
                symbol_set_id: set,
                name: f.name,
                source_file: f.filename,
                line_number: u32::try_from(number).ok().filter(|n| *n > 0),
                // Every line but the outermost was inlined into the next.
                inlined: Some(u32::from(i < last)),
            });
        }
        if let Some(row) = p.storage.profiling.frames.get_mut(frame as usize) {
            row.symbol_set_id = Some(set);
        }
    }
    Some((id, frame))
}

/// One `__intrinsic_aggregate_profile` row per sample type, in order.
fn read_sample_types(p: &mut Parser, profile: &ProfileDecoder<'_>, strings: &Strings) -> Vec<u32> {
    let scope = p.storage.strings.intern("pprof_file");
    let mut out = Vec::new();
    for t in profile.sample_type() {
        p.storage.work.step(1);
        let ty = match t.r#type() {
            Some(i) => strings.get(p, i),
            None => p.storage.strings.intern("unknown"),
        };
        let unit = match t.unit() {
            Some(i) => strings.get(p, i),
            None => p.storage.strings.intern("count"),
        };
        let name = format!("pprof {}", p.storage.strings.get(ty).unwrap_or(""));
        let name = p.storage.strings.intern(&name);
        let rows = &mut p.storage.profiling.aggregate_profiles;
        out.push(u32::try_from(rows.len()).unwrap_or(u32::MAX));
        rows.push(AggregateProfileRow {
            scope,
            name,
            sample_type_type: ty,
            sample_type_unit: unit,
        });
    }
    out
}

/// Each sample's values on the callsite of its stack.
fn read_samples(
    p: &mut Parser,
    profile: &ProfileDecoder<'_>,
    frames: &HashMap<u64, u32>,
    profiles: &[u32],
) {
    let mut stack: Vec<u32> = Vec::new();
    for s in profile.sample() {
        p.storage.work.step(1);
        stack.clear();
        let mut ids = s.location_id();
        for id in ids.by_ref() {
            p.storage.work.step(1);
            match frames.get(&id) {
                Some(f) => stack.push(*f),
                None => p.storage.stats.incr("stackprofile_invalid_frame_id"),
            }
        }
        if ids.error().is_some() {
            p.storage.stats.incr("stackprofile_parser_error");
        }
        // pprof lists the leaf first; callsites are made from the root.
        stack.reverse();
        if stack.is_empty() {
            if s.has_location_id() {
                p.storage.stats.incr("stackprofile_empty_callstack");
            }
            continue;
        }
        let mut callsite = None;
        for (depth, frame) in stack.iter().enumerate() {
            let depth = u32::try_from(depth).unwrap_or(u32::MAX);
            callsite = Some(p.profiling.stacks.intern_callsite(
                &mut p.storage,
                callsite,
                *frame,
                depth,
            ));
        }
        let Some(callsite) = callsite else { continue };
        let mut values = s.value();
        for (profile_id, value) in profiles.iter().zip(values.by_ref()) {
            p.storage.work.step(1);
            p.storage
                .profiling
                .aggregate_samples
                .push(AggregateSampleRow {
                    aggregate_profile_id: *profile_id,
                    callsite_id: callsite,
                    value: value as f64,
                });
        }
        if values.error().is_some() {
            p.storage.stats.incr("stackprofile_parser_error");
        }
    }
}

/// For the profile views: a CPU profile's period (`cpu`/`nanoseconds`
/// per sample counted in a `samples`/`count` value) is its timebase, so
/// that `convert --format pprof` writes CPU time again.
fn read_period(p: &mut Parser, profile: &ProfileDecoder<'_>, strings: &Strings) {
    if !p.storage.profile_facts.gathered {
        return;
    }
    let Some(period_type) = profile.period_type() else {
        return;
    };
    let is_cpu_ns = strings.text(p, period_type.r#type()) == "cpu"
        && strings.text(p, period_type.unit()) == "nanoseconds";
    let counts_samples = profile
        .sample_type()
        .any(|t| strings.text(p, t.r#type()) == "samples" && strings.text(p, t.unit()) == "count");
    let Some(ns) = profile.period().and_then(|n| u64::try_from(n).ok()) else {
        return;
    };
    if is_cpu_ns && counts_samples && ns > 0 {
        use zerotrace_protos::protos::perf_events::Counter;
        p.storage.profile_facts.perf_timebases.insert(
            0,
            crate::storage::profile_facts::Timebase {
                counter: Some(Counter::SwCpuClock.as_i32()),
                period: Some(ns),
                frequency: None,
            },
        );
    }
}
