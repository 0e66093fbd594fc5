//! One packet sequence's interned profiling data, under Perfetto's rules
//! for incremental state: a packet flagged `SEQ_INCREMENTAL_STATE_CLEARED`
//! empties the tables (and the sequence's defaults) and makes them valid;
//! a loss on the sequence (`previous_packet_dropped` on a packet that is
//! not its first) makes them invalid until the next clear, since what was
//! lost may have been interned data. The reader drops, and counts,
//! packets that need the state (`SEQ_NEEDS_INCREMENTAL_STATE`) while it is
//! not valid.
//!
//! Entries come from `InternedData`: `function_names`, `build_ids`,
//! `mapping_paths` (strings), `mappings`, `frames` and `callstacks`, each
//! keyed by its `iid`. A callstack lists frame iids from the root (the
//! outermost caller) to the leaf: traced_perf's callstack trie emits them
//! bottom first, and trace processor's importer makes the first one depth
//! 0 with each next one its child. Resolving a callstack copies its frames
//! into the trace-wide [`Tables`]; any iid that is not interned on the
//! sequence fails the whole callstack with an [`Unresolved`] naming it.

use std::collections::HashMap;
use std::rc::Rc;

use protozero::Decoder;
use zerotrace_protos::protos::{
    CallstackDecoder, FrameDecoder, InternedStringDecoder, MappingDecoder,
};
use zerotrace_protos::upstream_tables::interned_data_field;

use super::tables::{Frame, Mapping, Tables};

/// Why a sample's callstack does not resolve: the first iid that is not
/// interned on its sequence (inputs are untrusted; nothing here panics).
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum Unresolved {
    /// `callstack_iid` is not interned.
    #[error("callstack iid {0} is not interned")]
    Callstack(u64),
    /// A frame iid of the callstack is not interned.
    #[error("frame iid {0} is not interned")]
    Frame(u64),
    /// A frame's `mapping_id` is not interned.
    #[error("mapping iid {0} is not interned")]
    Mapping(u64),
    /// A frame's `function_name_id` is not interned.
    #[error("function name iid {0} is not interned")]
    FunctionName(u64),
    /// A mapping's `build_id` is not interned.
    #[error("build id iid {0} is not interned")]
    BuildId(u64),
    /// A mapping's path component is not interned.
    #[error("mapping path iid {0} is not interned")]
    MappingPath(u64),
    /// The callstack has no frames.
    #[error("callstack iid {0} has no frames")]
    EmptyCallstack(u64),
}

impl Unresolved {
    /// The kind of id, for counts (`"frame"`, `"mapping"`, ...).
    pub fn kind(&self) -> &'static str {
        match self {
            Unresolved::Callstack(_) => "callstack",
            Unresolved::Frame(_) => "frame",
            Unresolved::Mapping(_) => "mapping",
            Unresolved::FunctionName(_) => "function name",
            Unresolved::BuildId(_) => "build id",
            Unresolved::MappingPath(_) => "mapping path",
            Unresolved::EmptyCallstack(_) => "empty callstack",
        }
    }
}

/// An interned mapping, its strings still iids.
#[derive(Debug, Clone, PartialEq, Eq)]
struct RawMapping {
    build_id: u64,
    exact_offset: u64,
    start_offset: u64,
    start: u64,
    end: u64,
    load_bias: u64,
    path_string_ids: Vec<u64>,
}

/// An interned frame, its name and mapping still iids.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct RawFrame {
    function_name_id: u64,
    mapping_id: u64,
    rel_pc: u64,
}

/// A sequence's tables and whether they may be used.
#[derive(Debug, Default)]
pub(crate) struct Sequence {
    /// Cleared since the sequence began, and no loss since.
    pub(crate) valid: bool,
    function_names: HashMap<u64, Vec<u8>>,
    build_ids: HashMap<u64, Vec<u8>>,
    mapping_paths: HashMap<u64, Vec<u8>>,
    mappings: HashMap<u64, RawMapping>,
    frames: HashMap<u64, RawFrame>,
    callstacks: HashMap<u64, Vec<u64>>,
    /// Callstacks already resolved (emptied when an entry is redefined).
    resolved: HashMap<u64, Rc<[usize]>>,
}

/// Inserts, and says whether an earlier, different entry was replaced.
fn put<V: PartialEq>(map: &mut HashMap<u64, V>, iid: u64, v: V) -> bool {
    map.insert(iid, v).is_some_and(|old| {
        // `insert` returned the old value; compare with the new one.
        map.get(&iid).is_some_and(|new| *new != old)
    })
}

impl Sequence {
    /// Forgets every entry (a clear).
    pub(crate) fn clear(&mut self) {
        *self = Sequence {
            valid: self.valid,
            ..Sequence::default()
        };
    }

    /// Takes in an encoded `InternedData`; returns how many entries were
    /// malformed (no iid, or undecodable) and left out.
    pub(crate) fn intern(&mut self, interned: &[u8]) -> u64 {
        let mut malformed = 0;
        let mut redefined = false;
        let mut dec = Decoder::new(interned);
        while let Some(field) = dec.read_field() {
            let Ok(field) = field else {
                malformed += 1;
                break;
            };
            let id = field.id;
            let is_string = matches!(
                id,
                interned_data_field::FUNCTION_NAMES
                    | interned_data_field::BUILD_IDS
                    | interned_data_field::MAPPING_PATHS
            );
            let known = is_string
                || matches!(
                    id,
                    interned_data_field::MAPPINGS
                        | interned_data_field::FRAMES
                        | interned_data_field::CALLSTACKS
                );
            if !known {
                continue;
            }
            let Ok(bytes) = field.as_bytes() else {
                malformed += 1;
                continue;
            };
            let ok = if is_string {
                let s = InternedStringDecoder::new(bytes);
                match s.iid() {
                    Some(iid) if s.decode_error().is_none() => {
                        let v = s.str().unwrap_or_default().to_vec();
                        let map = match id {
                            interned_data_field::FUNCTION_NAMES => &mut self.function_names,
                            interned_data_field::BUILD_IDS => &mut self.build_ids,
                            _ => &mut self.mapping_paths,
                        };
                        redefined |= put(map, iid, v);
                        true
                    }
                    _ => false,
                }
            } else if id == interned_data_field::MAPPINGS {
                let m = MappingDecoder::new(bytes);
                match m.iid() {
                    Some(iid) if m.decode_error().is_none() => {
                        let raw = RawMapping {
                            build_id: m.build_id().unwrap_or(0),
                            exact_offset: m.exact_offset().unwrap_or(0),
                            start_offset: m.start_offset().unwrap_or(0),
                            start: m.start().unwrap_or(0),
                            end: m.end().unwrap_or(0),
                            load_bias: m.load_bias().unwrap_or(0),
                            path_string_ids: m.path_string_ids().collect(),
                        };
                        redefined |= put(&mut self.mappings, iid, raw);
                        true
                    }
                    _ => false,
                }
            } else if id == interned_data_field::FRAMES {
                let f = FrameDecoder::new(bytes);
                match f.iid() {
                    Some(iid) if f.decode_error().is_none() => {
                        let raw = RawFrame {
                            function_name_id: f.function_name_id().unwrap_or(0),
                            mapping_id: f.mapping_id().unwrap_or(0),
                            rel_pc: f.rel_pc().unwrap_or(0),
                        };
                        redefined |= put(&mut self.frames, iid, raw);
                        true
                    }
                    _ => false,
                }
            } else {
                let c = CallstackDecoder::new(bytes);
                match c.iid() {
                    Some(iid) if c.decode_error().is_none() => {
                        let frames: Vec<u64> = c.frame_ids().collect();
                        redefined |= put(&mut self.callstacks, iid, frames);
                        true
                    }
                    _ => false,
                }
            };
            if !ok {
                malformed += 1;
            }
        }
        if redefined {
            self.resolved.clear();
        }
        malformed
    }

    /// The frames of callstack `iid`, root first, as indices into `tables`.
    pub(crate) fn resolve(
        &mut self,
        iid: u64,
        tables: &mut Tables,
    ) -> Result<Rc<[usize]>, Unresolved> {
        if let Some(r) = self.resolved.get(&iid) {
            return Ok(Rc::clone(r));
        }
        let ids = self
            .callstacks
            .get(&iid)
            .ok_or(Unresolved::Callstack(iid))?;
        if ids.is_empty() {
            return Err(Unresolved::EmptyCallstack(iid));
        }
        let mut out = Vec::with_capacity(ids.len());
        for &fid in ids {
            let raw = *self.frames.get(&fid).ok_or(Unresolved::Frame(fid))?;
            let frame = self.frame(raw, tables)?;
            out.push(tables.intern_frame(frame));
        }
        let out: Rc<[usize]> = out.into();
        self.resolved.insert(iid, Rc::clone(&out));
        Ok(out)
    }

    /// A frame with its strings and mapping looked up (iid 0: none).
    fn frame(&self, raw: RawFrame, tables: &mut Tables) -> Result<Frame, Unresolved> {
        let name = match raw.function_name_id {
            0 => None,
            n => {
                let bytes = self
                    .function_names
                    .get(&n)
                    .ok_or(Unresolved::FunctionName(n))?;
                Some(String::from_utf8_lossy(bytes).into_owned())
            }
        };
        let mapping = match raw.mapping_id {
            0 => None,
            m => {
                let rm = self.mappings.get(&m).ok_or(Unresolved::Mapping(m))?;
                Some(tables.intern_mapping(self.mapping(rm)?))
            }
        };
        Ok(Frame {
            mapping,
            rel_pc: raw.rel_pc,
            name,
        })
    }

    /// A mapping with its path and build id looked up.
    fn mapping(&self, m: &RawMapping) -> Result<Mapping, Unresolved> {
        let build_id = match m.build_id {
            0 => Vec::new(),
            b => self
                .build_ids
                .get(&b)
                .ok_or(Unresolved::BuildId(b))?
                .clone(),
        };
        let mut path = String::new();
        for &p in &m.path_string_ids {
            let part = self
                .mapping_paths
                .get(&p)
                .ok_or(Unresolved::MappingPath(p))?;
            let part = String::from_utf8_lossy(part);
            if !part.starts_with('/') {
                path.push('/');
            }
            path.push_str(&part);
        }
        Ok(Mapping {
            path,
            build_id,
            start: m.start,
            end: m.end,
            exact_offset: m.exact_offset,
            start_offset: m.start_offset,
            load_bias: m.load_bias,
        })
    }
}
