//! A profile as pprof's `Profile` message (`profile.proto`, what `go tool
//! pprof` and its kin read), gzip-compressed as those tools expect, written
//! with the generated protozero writers.
//!
//! What goes where: one pprof mapping per mapping (path, build id in hex,
//! addresses, file offset); one location per (mapping, `rel_pc`), its
//! lines the functions there, innermost first as pprof orders inlined
//! functions (from `ModuleSymbols` when the trace has them, else the
//! frame's name, else `mapping_basename+0xrel_pc`; frames known by name
//! alone, which share a `rel_pc`, get a location per name); one function per
//! (name, source file); samples with the same stack, process and thread
//! merged, their stacks leaf first as pprof wants, labelled `pid` and
//! `tid`. Sample types: `samples/count`, and `cpu/nanoseconds` (the
//! default) when the recorder sampled the cpu-clock by period, each sample
//! standing for one period of CPU time. Samples without a resolved
//! callstack are left out (the caller can tell how many from the
//! profile's counts). The string table starts with "" as pprof requires.

use std::collections::{BTreeMap, HashMap};
use std::io::Write as _;

use zerotrace_protos::pprof::Profile as PprofProfile;

use super::folded::Filter;
use super::profile::Profile;

/// Why a pprof profile could not be written.
#[derive(Debug, thiserror::Error)]
pub enum PprofError {
    /// The protobuf writer failed (a message too large).
    #[error("encoding the pprof profile: {0}")]
    Encode(#[from] protozero::WriteError),
    /// gzip failed.
    #[error("compressing the pprof profile: {0}")]
    Compress(#[from] std::io::Error),
}

/// pprof's string table: "" first, each string once.
#[derive(Default)]
pub(crate) struct Strings {
    list: Vec<String>,
    index: HashMap<String, i64>,
}

impl Strings {
    fn new() -> Strings {
        let mut s = Strings::default();
        s.id("");
        s
    }

    /// The string's index, added if new.
    pub(crate) fn id(&mut self, s: &str) -> i64 {
        if let Some(&i) = self.index.get(s) {
            return i;
        }
        let i = self.list.len() as i64;
        self.list.push(s.to_owned());
        self.index.insert(s.to_owned(), i);
        i
    }
}

/// A pprof location: its mapping id (0: none), address and lines
/// (function id, line number), innermost first.
struct Location {
    mapping: u64,
    address: u64,
    lines: Vec<(u64, i64)>,
}

/// The runtime address of `rel_pc` in mapping `m`, as the mapping placed
/// the file (pprof keys locations by address; ours are symbolized already).
fn address(m: &super::Mapping, rel_pc: u64) -> u64 {
    m.start
        .wrapping_add(rel_pc)
        .wrapping_sub(m.exact_offset.wrapping_sub(m.start_offset))
}

/// What pprof's samples refer to, built as samples are added: strings,
/// functions, locations (one per frame's mapping and `rel_pc`), written
/// with the profile's mappings by [`PprofTables::write`].
pub(crate) struct PprofTables<'p> {
    profile: &'p Profile,
    pub(crate) strings: Strings,
    functions: Vec<(i64, i64)>,
    function_ids: HashMap<(String, Option<String>), u64>,
    locations: Vec<Location>,
    /// (mapping, `rel_pc`, function ids of the lines) → location id.
    location_ids: HashMap<(Option<usize>, u64, Vec<u64>), u64>,
    /// Frame index → location id, worked out once per frame.
    frame_locations: HashMap<usize, u64>,
}

impl<'p> PprofTables<'p> {
    /// Empty tables over `profile`'s frames.
    pub(crate) fn new(profile: &'p Profile) -> PprofTables<'p> {
        PprofTables {
            profile,
            strings: Strings::new(),
            functions: Vec::new(),
            function_ids: HashMap::new(),
            locations: Vec::new(),
            location_ids: HashMap::new(),
            frame_locations: HashMap::new(),
        }
    }

    /// The location ids of `stack` (frame indices root first), leaf first
    /// as pprof wants them.
    pub(crate) fn locations_of(&mut self, stack: &[usize]) -> Vec<u64> {
        let mut ids = Vec::with_capacity(stack.len());
        for &f in stack.iter().rev() {
            if let Some(&id) = self.frame_locations.get(&f) {
                ids.push(id);
                continue;
            }
            let Some(frame) = self.profile.frames().get(f) else {
                continue;
            };
            let mut lines = Vec::new();
            for l in self.profile.functions(f) {
                let fkey = (l.function_name.clone(), l.source_file.clone());
                let fid = match self.function_ids.get(&fkey) {
                    Some(&id) => id,
                    None => {
                        let name = self.strings.id(&l.function_name);
                        let file = self.strings.id(l.source_file.as_deref().unwrap_or(""));
                        self.functions.push((name, file));
                        let id = self.functions.len() as u64;
                        self.function_ids.insert(fkey, id);
                        id
                    }
                };
                lines.push((fid, i64::from(l.line)));
            }
            let key = (
                frame.mapping,
                frame.rel_pc,
                lines.iter().map(|(fid, _)| *fid).collect::<Vec<_>>(),
            );
            let id = match self.location_ids.get(&key) {
                Some(&id) => id,
                None => {
                    let mapping = frame.mapping.and_then(|m| self.profile.mappings().get(m));
                    self.locations.push(Location {
                        mapping: frame.mapping.map_or(0, |m| m as u64 + 1),
                        address: mapping.map_or(frame.rel_pc, |m| address(m, frame.rel_pc)),
                        lines,
                    });
                    let id = self.locations.len() as u64;
                    self.location_ids.insert(key, id);
                    id
                }
            };
            self.frame_locations.insert(f, id);
            ids.push(id);
        }
        ids
    }

    /// Writes the mappings, locations, functions and, last, the string
    /// table into `p`.
    pub(crate) fn write(mut self, p: &mut PprofProfile<'_>) {
        for (i, m) in self.profile.mappings().iter().enumerate() {
            let filename = self.strings.id(&m.path);
            let build_id = self.strings.id(&m.build_id_hex());
            p.add_mapping()
                .set_id(i as u64 + 1)
                .set_memory_start(m.start)
                .set_memory_limit(m.end)
                .set_file_offset(m.exact_offset)
                .set_filename(filename)
                .set_build_id(build_id)
                .set_has_functions(true);
        }
        for (i, l) in self.locations.iter().enumerate() {
            let mut loc = p.add_location();
            loc.set_id(i as u64 + 1).set_address(l.address);
            if l.mapping != 0 {
                loc.set_mapping_id(l.mapping);
            }
            for &(function, line) in &l.lines {
                loc.add_line().set_function_id(function).set_line(line);
            }
        }
        for (i, &(name, file)) in self.functions.iter().enumerate() {
            p.add_function()
                .set_id(i as u64 + 1)
                .set_name(name)
                .set_system_name(name)
                .set_filename(file);
        }
        for s in &self.strings.list {
            p.add_string_table(s);
        }
    }
}

/// Encodes a `Profile` message written by `fill` and gzips it.
pub(crate) fn gzipped(fill: impl FnOnce(&mut PprofProfile<'_>)) -> Result<Vec<u8>, PprofError> {
    let mut w = protozero::HeapWriter::new();
    {
        let mut p = PprofProfile::from_message(w.root());
        fill(&mut p);
    }
    let raw = w.finish()?;
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    gz.write_all(&raw)?;
    Ok(gz.finish()?)
}

/// The samples of `profile` that `filter` keeps, as a gzip-compressed
/// pprof `Profile`.
pub fn encode_pprof(profile: &Profile, filter: &Filter) -> Result<Vec<u8>, PprofError> {
    let mut tables = PprofTables::new(profile);
    // (leaf-first location ids, pid, tid) → samples.
    let mut samples: BTreeMap<(Vec<u64>, u32, u32), i64> = BTreeMap::new();
    let (mut first_ts, mut last_ts) = (u64::MAX, 0u64);
    for s in profile.samples().iter().filter(|s| filter.accepts(s)) {
        if s.stack.is_empty() {
            continue;
        }
        first_ts = first_ts.min(s.ts);
        last_ts = last_ts.max(s.ts);
        let ids = tables.locations_of(&s.stack);
        let n = samples.entry((ids, s.pid, s.tid)).or_default();
        *n = n.saturating_add(i64::try_from(s.weight).unwrap_or(i64::MAX));
    }

    let cpu_period = profile.cpu_ns_per_sample();
    gzipped(|p| {
        let strings = &mut tables.strings;
        let samples_type = (strings.id("samples"), strings.id("count"));
        let cpu_type = (strings.id("cpu"), strings.id("nanoseconds"));
        let (pid_key, tid_key) = (strings.id("pid"), strings.id("tid"));
        p.add_sample_type()
            .set_type(samples_type.0)
            .set_unit(samples_type.1);
        if let Some(period) = cpu_period {
            p.add_sample_type()
                .set_type(cpu_type.0)
                .set_unit(cpu_type.1);
            p.begin_period_type()
                .set_type(cpu_type.0)
                .set_unit(cpu_type.1);
            p.set_period(period as i64);
            p.set_default_sample_type(cpu_type.0);
        } else {
            p.begin_period_type()
                .set_type(samples_type.0)
                .set_unit(samples_type.1);
            p.set_period(1);
        }
        for ((ids, pid, tid), n) in &samples {
            let mut s = p.add_sample();
            s.set_location_id(ids.iter().copied());
            match cpu_period {
                Some(period) => s.set_value([*n, n.saturating_mul(period as i64)]),
                None => s.set_value([*n]),
            };
            s.add_label().set_key(pid_key).set_num(i64::from(*pid));
            s.add_label().set_key(tid_key).set_num(i64::from(*tid));
        }
        if first_ts <= last_ts {
            p.set_duration_nanos(last_ts.saturating_sub(first_ts) as i64);
        }
        tables.write(p);
    })
}
