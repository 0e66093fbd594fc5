//! Stack profiles: mappings, frames, callsites and symbols made once each,
//! as upstream's mapping and stack-profile trackers make them. A mapping
//! is interned by everything that describes it (or made per process when
//! it has an address range and a process), a frame by (mapping, rel_pc,
//! name), a callsite by (parent, frame, depth). A sequence's interned
//! mappings, frames and callstacks (`InternedData`) resolve through here,
//! cached per generation, with upstream's stats for each missing entry.
//! A process's own mappings are also kept by address with the JIT caches
//! over them (`stack_profile/jit.rs`): a frame in generated code is the
//! frame of the function there when it is seen.

mod jit;

use crate::hash::HashMap;

use zerotrace_protos::protos::{
    CallstackDecoder, FrameDecoder, InternedStringDecoder, MappingDecoder,
};

use crate::column_store::strings::StrId;
use crate::sequence_state::Generation;
use crate::storage::Storage;
use crate::storage::profile_facts::Unresolved;
use crate::storage::profiling_rows::{CallsiteRow, FrameRow, MappingRow, SymbolRow};

/// `InternedData` field numbers of the stack-profile kinds.
pub mod interned {
    /// `function_names`.
    pub const FUNCTION_NAMES: u32 = 5;
    /// `frames`.
    pub const FRAMES: u32 = 6;
    /// `callstacks`.
    pub const CALLSTACKS: u32 = 7;
    /// `build_ids`.
    pub const BUILD_IDS: u32 = 16;
    /// `mapping_paths`.
    pub const MAPPING_PATHS: u32 = 17;
    /// `source_paths`.
    pub const SOURCE_PATHS: u32 = 18;
    /// `mappings`.
    pub const MAPPINGS: u32 = 19;
}

/// What makes a mapping, before it has an id.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
pub struct MappingParams {
    /// Raw build id (None: none given).
    pub build_id: Option<Vec<u8>>,
    /// `exact_offset`.
    pub exact_offset: u64,
    /// `start_offset`.
    pub start_offset: u64,
    /// Start address.
    pub start: u64,
    /// End address.
    pub end: u64,
    /// Load bias.
    pub load_bias: u64,
    /// Path.
    pub name: String,
}

/// The path of a mapping from its components: each after a `/`, and a
/// leading `//` made `/`.
pub fn mapping_name(components: &[&str]) -> String {
    let mut name = String::new();
    for c in components {
        name.push('/');
        name.push_str(c);
    }
    if name.starts_with("//") {
        name.remove(0);
    }
    name
}

/// Lowercase hex of a raw build id.
fn hex(bytes: &[u8]) -> String {
    use std::fmt::Write;
    let mut s = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        let _ = write!(s, "{b:02x}");
    }
    s
}

#[derive(Debug, Default)]
struct MappingState {
    frames: HashMap<(u64, StrId), u32>,
    frames_by_rel_pc: HashMap<u64, Vec<u32>>,
    dummy_frames: HashMap<(StrId, StrId, Option<u32>), u32>,
}

/// Who a dummy mapping (frames known by name alone) belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum DummyOwner {
    /// A sequence generation's interned frames without a mapping.
    Generation(u32),
    /// StackSample's inline callstacks.
    StackSampleInline,
    /// ART's OOME stacks.
    ArtProcessMetadata,
    /// TrackEvent's inline callstacks.
    TrackEventInline,
    /// A V8 legacy CPU profile session (its id) of a process (Chrome
    /// JSON's `P` events).
    LegacyV8(u64, u32),
}

impl DummyOwner {
    fn mapping_name(self) -> &'static str {
        match self {
            DummyOwner::Generation(_) | DummyOwner::LegacyV8(..) => "",
            DummyOwner::StackSampleInline => "stack_sample_inline",
            DummyOwner::ArtProcessMetadata => "art_process_metadata",
            DummyOwner::TrackEventInline => "track_event_inline",
        }
    }
}

/// Cache key: generation, process, iid.
type Key = (u32, Option<u32>, u64);

/// Makes the stack-profile rows.
#[derive(Debug, Default)]
pub struct StackProfileTracker {
    interned_mappings: HashMap<MappingParams, u32>,
    by_name_and_build_id: HashMap<(String, Option<Vec<u8>>), Vec<u32>>,
    mapping_states: Vec<MappingState>,
    callsites: HashMap<CallsiteRow, u32>,
    cached_mappings: HashMap<Key, u32>,
    cached_frames: HashMap<Key, u32>,
    cached_callstacks: HashMap<Key, u32>,
    dummy_mappings: HashMap<DummyOwner, u32>,
    user_mappings: jit::UserMappings,
}

impl StackProfileTracker {
    fn add_mapping(&mut self, storage: &mut Storage, params: &MappingParams) -> u32 {
        let build_id = params.build_id.as_deref().map(hex).unwrap_or_default();
        let row = MappingRow {
            build_id: storage.strings.intern(&build_id),
            exact_offset: params.exact_offset as i64,
            start_offset: params.start_offset as i64,
            start: params.start as i64,
            end: params.end as i64,
            load_bias: params.load_bias as i64,
            name: storage.strings.intern(&params.name),
        };
        let id = u32::try_from(storage.profiling.mappings.len()).unwrap_or(u32::MAX);
        storage.profiling.mappings.push(row);
        self.mapping_states.push(MappingState::default());
        self.by_name_and_build_id
            .entry((params.name.clone(), params.build_id.clone()))
            .or_default()
            .push(id);
        id
    }

    /// The one mapping with these params.
    pub fn intern_mapping(&mut self, storage: &mut Storage, params: MappingParams) -> u32 {
        if let Some(id) = self.interned_mappings.get(&params) {
            return *id;
        }
        let id = self.add_mapping(storage, &params);
        self.interned_mappings.insert(params, id);
        id
    }

    /// A new mapping with these params, never shared with another
    /// (upstream's dummy mappings: a pprof location without a mapping
    /// gets one of its own).
    pub fn create_mapping(&mut self, storage: &mut Storage, params: &MappingParams) -> u32 {
        self.add_mapping(storage, params)
    }

    /// Mappings of a path and build id (for symbols).
    pub fn find_mappings(&self, name: &str, build_id: Option<&[u8]>) -> Vec<u32> {
        self.by_name_and_build_id
            .get(&(name.to_owned(), build_id.map(<[u8]>::to_vec)))
            .cloned()
            .unwrap_or_default()
    }

    /// Frames of a mapping at a rel_pc.
    pub fn frames_at(&self, mapping: u32, rel_pc: u64) -> Vec<u32> {
        self.mapping_states
            .get(mapping as usize)
            .and_then(|m| m.frames_by_rel_pc.get(&rel_pc))
            .cloned()
            .unwrap_or_default()
    }

    /// A new symbol set of one line.
    pub fn create_symbol(
        storage: &mut Storage,
        name: &str,
        source_file: Option<&str>,
        line: Option<u32>,
    ) -> u32 {
        let set = u32::try_from(storage.profiling.symbols.len()).unwrap_or(u32::MAX);
        let row = SymbolRow {
            symbol_set_id: set,
            name: storage.strings.intern(name),
            source_file: storage.strings.intern_opt(source_file),
            line_number: line,
            inlined: None,
        };
        storage.profiling.symbols.push(row);
        set
    }

    /// The frame of a mapping at `rel_pc` named `name`.
    pub fn intern_frame(
        &mut self,
        storage: &mut Storage,
        mapping: u32,
        rel_pc: u64,
        name: &str,
        source_file: Option<&str>,
        line: Option<u32>,
    ) -> u32 {
        let name_id = storage.strings.intern(name);
        if let Some(id) = self
            .mapping_states
            .get(mapping as usize)
            .and_then(|m| m.frames.get(&(rel_pc, name_id)))
        {
            return *id;
        }
        let symbol_set_id = (source_file.is_some() || line.is_some())
            .then(|| Self::create_symbol(storage, name, source_file, line));
        let id = push_frame(storage, name_id, mapping, rel_pc as i64, symbol_set_id);
        if let Some(m) = self.mapping_states.get_mut(mapping as usize) {
            m.frames.insert((rel_pc, name_id), id);
            m.frames_by_rel_pc.entry(rel_pc).or_default().push(id);
        }
        id
    }

    /// A frame known by its name and source location alone, on the
    /// generation's dummy mapping.
    pub fn intern_dummy_frame(
        &mut self,
        storage: &mut Storage,
        owner: DummyOwner,
        name: &str,
        source_file: Option<&str>,
        line: Option<u32>,
    ) -> u32 {
        let mapping = self.dummy_mapping(storage, owner);
        let key = (
            storage.strings.intern(name),
            storage.strings.intern_opt(source_file),
            line,
        );
        if let Some(id) = self
            .mapping_states
            .get(mapping as usize)
            .and_then(|m| m.dummy_frames.get(&key))
        {
            return *id;
        }
        let set = Self::create_symbol(storage, name, source_file, line);
        let id = push_frame(storage, key.0, mapping, 0, Some(set));
        if let Some(m) = self.mapping_states.get_mut(mapping as usize) {
            m.dummy_frames.insert(key, id);
        }
        id
    }

    fn dummy_mapping(&mut self, storage: &mut Storage, owner: DummyOwner) -> u32 {
        if let Some(id) = self.dummy_mappings.get(&owner) {
            return *id;
        }
        let params = MappingParams {
            end: u64::MAX,
            name: owner.mapping_name().to_owned(),
            ..MappingParams::default()
        };
        let id = self.add_mapping(storage, &params);
        self.dummy_mappings.insert(owner, id);
        id
    }

    /// The callsite of `frame` under `parent`.
    pub fn intern_callsite(
        &mut self,
        storage: &mut Storage,
        parent_id: Option<u32>,
        frame_id: u32,
        depth: u32,
    ) -> u32 {
        let row = CallsiteRow {
            depth,
            parent_id,
            frame_id,
        };
        if let Some(id) = self.callsites.get(&row) {
            return *id;
        }
        let id = u32::try_from(storage.profiling.callsites.len()).unwrap_or(u32::MAX);
        storage.profiling.callsites.push(row);
        self.callsites.insert(row, id);
        id
    }

    /// The leaf callsite of frames given root first.
    pub fn callsite_of_frames(&mut self, storage: &mut Storage, frames: &[u32]) -> Option<u32> {
        let mut parent = None;
        for (depth, f) in frames.iter().enumerate() {
            let depth = u32::try_from(depth).unwrap_or(u32::MAX);
            parent = Some(self.intern_callsite(storage, parent, *f, depth));
        }
        if parent.is_none() {
            storage.stats.incr("stackprofile_empty_callstack");
        }
        parent
    }

    /// The mapping row of a sequence's interned mapping (shared by every
    /// process, as a TrackEvent's native symbols name it); None when it
    /// does not resolve (counted in the stats).
    pub fn mapping_of_interned(
        &mut self,
        storage: &mut Storage,
        generation_idx: u32,
        generation: &Generation,
        iid: u64,
    ) -> Option<u32> {
        self.interned_mapping(storage, generation_idx, generation, None, iid)
            .ok()
    }

    /// The callsite of an interned callstack of a sequence.
    pub fn interned_callstack(
        &mut self,
        storage: &mut Storage,
        generation_idx: u32,
        generation: &Generation,
        upid: Option<u32>,
        iid: u64,
    ) -> Option<u32> {
        self.resolve_callstack(storage, generation_idx, generation, upid, iid)
            .ok()
    }

    /// The callsite of an interned callstack of a sequence, or the first
    /// id that does not resolve (counted in the stats as upstream counts
    /// it).
    pub fn resolve_callstack(
        &mut self,
        storage: &mut Storage,
        generation_idx: u32,
        generation: &Generation,
        upid: Option<u32>,
        iid: u64,
    ) -> Result<u32, Unresolved> {
        let key = (generation_idx, upid, iid);
        if let Some(id) = self.cached_callstacks.get(&key) {
            return Ok(*id);
        }
        let Some(bytes) = generation.interned(interned::CALLSTACKS, iid) else {
            storage.stats.incr("stackprofile_invalid_callstack_id");
            return Err(Unresolved::Callstack(iid));
        };
        let cs = CallstackDecoder::new(bytes);
        let mut frames = Vec::new();
        for f in cs.frame_ids() {
            frames.push(self.interned_frame(storage, generation_idx, generation, upid, f)?);
        }
        let id = self
            .callsite_of_frames(storage, &frames)
            .ok_or(Unresolved::EmptyCallstack(iid))?;
        self.cached_callstacks.insert(key, id);
        Ok(id)
    }

    fn interned_frame(
        &mut self,
        storage: &mut Storage,
        generation_idx: u32,
        generation: &Generation,
        upid: Option<u32>,
        iid: u64,
    ) -> Result<u32, Unresolved> {
        let key = (generation_idx, upid, iid);
        if let Some(id) = self.cached_frames.get(&key) {
            return Ok(*id);
        }
        let Some(bytes) = generation.interned(interned::FRAMES, iid) else {
            storage.stats.incr("stackprofile_invalid_frame_id");
            return Err(Unresolved::Frame(iid));
        };
        let f = FrameDecoder::new(bytes);
        let name_iid = f.function_name_id().unwrap_or(0);
        let name = if name_iid == 0 {
            String::new()
        } else {
            interned_string(storage, generation, interned::FUNCTION_NAMES, name_iid)
                .ok_or(Unresolved::FunctionName(name_iid))?
        };
        let source_file = match f.source_path_iid() {
            Some(0) | None => None,
            Some(i) => Some(
                interned_string(storage, generation, interned::SOURCE_PATHS, i)
                    .ok_or(Unresolved::Frame(iid))?,
            ),
        };
        let line = f.line_number();
        let mut cache = true;
        let id = match f.mapping_id().unwrap_or(0) {
            0 => self.intern_dummy_frame(
                storage,
                DummyOwner::Generation(generation_idx),
                &name,
                source_file.as_deref(),
                line,
            ),
            m => {
                let mapping =
                    self.interned_mapping(storage, generation_idx, generation, upid, m)?;
                let rel_pc = f.rel_pc().unwrap_or(0);
                // A frame in generated code names what was there when it
                // was seen, so the next sample resolves it again.
                cache = !self.is_jitted(mapping);
                match self.jit_frame(storage, mapping, rel_pc, &name) {
                    Some(id) => id,
                    None => self.intern_frame(
                        storage,
                        mapping,
                        rel_pc,
                        &name,
                        source_file.as_deref(),
                        line,
                    ),
                }
            }
        };
        let kind = match f.kind_raw() {
            Some(1) => Some("native"),
            Some(2) => Some("kernel"),
            Some(3) => Some("interpreted"),
            Some(4) => Some("jit"),
            Some(5) => Some("gc"),
            Some(6) => Some("runtime"),
            Some(_) => None,
            None => f.kind_str(),
        };
        if let Some(kind) = kind {
            let k = storage.strings.intern(kind);
            if let Some(row) = storage.profiling.frames.get_mut(id as usize) {
                row.frame_type = k;
            }
        }
        if cache {
            self.cached_frames.insert(key, id);
        }
        Ok(id)
    }

    fn interned_mapping(
        &mut self,
        storage: &mut Storage,
        generation_idx: u32,
        generation: &Generation,
        upid: Option<u32>,
        iid: u64,
    ) -> Result<u32, Unresolved> {
        let key = (generation_idx, upid, iid);
        if let Some(id) = self.cached_mappings.get(&key) {
            return Ok(*id);
        }
        let Some(bytes) = generation.interned(interned::MAPPINGS, iid) else {
            storage.stats.incr("stackprofile_invalid_mapping_id");
            return Err(Unresolved::Mapping(iid));
        };
        let m = MappingDecoder::new(bytes);
        let mut components = Vec::new();
        for p in m.path_string_ids() {
            match interned_bytes(storage, generation, interned::MAPPING_PATHS, p) {
                Some(s) => components.push(String::from_utf8_lossy(s).into_owned()),
                None => break,
            }
        }
        let build_id = match m.build_id().unwrap_or(0) {
            0 => Vec::new(),
            b => interned_bytes(storage, generation, interned::BUILD_IDS, b)
                .ok_or(Unresolved::BuildId(b))?
                .to_vec(),
        };
        let parts: Vec<&str> = components.iter().map(String::as_str).collect();
        let params = MappingParams {
            build_id: (!build_id.is_empty()).then_some(build_id),
            exact_offset: m.exact_offset().unwrap_or(0),
            start_offset: m.start_offset().unwrap_or(0),
            start: m.start().unwrap_or(0),
            end: m.end().unwrap_or(0),
            load_bias: m.load_bias().unwrap_or(0),
            name: mapping_name(&parts),
        };
        let id = if let Some(upid) = upid.filter(|_| params.end > params.start) {
            // A process's own mapping: never shared with another process.
            self.add_user_mapping(storage, upid, &params)
        } else {
            self.intern_mapping(storage, params)
        };
        self.cached_mappings.insert(key, id);
        Ok(id)
    }
}

fn push_frame(
    storage: &mut Storage,
    name: StrId,
    mapping: u32,
    rel_pc: i64,
    symbol_set_id: Option<u32>,
) -> u32 {
    let id = u32::try_from(storage.profiling.frames.len()).unwrap_or(u32::MAX);
    storage.profiling.frames.push(FrameRow {
        name,
        mapping,
        rel_pc,
        symbol_set_id,
        deobfuscated_name: StrId::NULL,
        frame_type: StrId::NULL,
    });
    id
}

/// An interned string's bytes, counting `stackprofile_invalid_string_id`
/// when missing.
fn interned_bytes<'g>(
    storage: &mut Storage,
    generation: &'g Generation,
    field: u32,
    iid: u64,
) -> Option<&'g [u8]> {
    let found = generation
        .interned(field, iid)
        .and_then(|b| InternedStringDecoder::new(b).str().or(Some(&[][..])));
    if found.is_none() {
        storage.stats.incr("stackprofile_invalid_string_id");
    }
    found
}

fn interned_string(
    storage: &mut Storage,
    generation: &Generation,
    field: u32,
    iid: u64,
) -> Option<String> {
    interned_bytes(storage, generation, field, iid).map(|b| String::from_utf8_lossy(b).into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mapping_names_join_components_and_build_ids_are_hex() {
        assert_eq!(
            mapping_name(&["system", "lib64", "libc.so"]),
            "/system/lib64/libc.so"
        );
        assert_eq!(mapping_name(&["", "memfd:x"]), "/memfd:x");
        assert_eq!(mapping_name(&[]), "");
        assert_eq!(hex(&[0x00, 0xab, 0x7f]), "00ab7f");
    }

    #[test]
    fn mappings_frames_and_callsites_are_made_once() {
        let mut storage = Storage::default();
        let mut t = StackProfileTracker::default();
        let params = MappingParams {
            build_id: Some(vec![1, 2]),
            name: "/bin/x".to_owned(),
            ..MappingParams::default()
        };
        let m = t.intern_mapping(&mut storage, params.clone());
        assert_eq!(t.intern_mapping(&mut storage, params), m);
        let f1 = t.intern_frame(&mut storage, m, 0x10, "a", None, None);
        let f2 = t.intern_frame(&mut storage, m, 0x10, "b", None, None);
        assert_ne!(f1, f2);
        assert_eq!(t.intern_frame(&mut storage, m, 0x10, "a", None, None), f1);
        assert_eq!(t.frames_at(m, 0x10), vec![f1, f2]);
        assert_eq!(t.find_mappings("/bin/x", Some(&[1, 2])), vec![m]);
        assert!(t.find_mappings("/bin/x", None).is_empty());
        let leaf = t.callsite_of_frames(&mut storage, &[f1, f2]);
        assert_eq!(t.callsite_of_frames(&mut storage, &[f1, f2]), leaf);
        assert_eq!(storage.profiling.callsites.len(), 2);
        assert_eq!(t.callsite_of_frames(&mut storage, &[]), None);
        assert_eq!(storage.stats.get("stackprofile_empty_callstack"), 1);
        // A dummy frame has its name and location as a symbol.
        let d = t.intern_dummy_frame(
            &mut storage,
            DummyOwner::StackSampleInline,
            "f",
            Some("a.py"),
            Some(3),
        );
        let set = storage.profiling.frames[d as usize].symbol_set_id;
        assert_eq!(set, Some(0));
        assert_eq!(storage.profiling.symbols[0].line_number, Some(3));
    }
}
