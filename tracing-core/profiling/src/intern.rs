//! Interning a sequence's callstacks as Perfetto's profilers do (the CPU
//! profiler `linux.perf` and the heap profiler alike): each
//! build id, path component and function name, mapping, frame and
//! callstack gets an id the first time it is seen on the sequence, and the
//! packet that first uses it carries its definition in `interned_data`
//! (strings before the mapping, the mapping before its frame, frames
//! before the callstack). Id 0 of each string table is the empty string,
//! defined by the sequence's first packet. Sans-IO: samples in, the new
//! definitions out, written by [`Interner::write_new`].

use std::collections::HashMap;

use protozero::Message;

use zerotrace_protos::protos::{Callstack, Frame, InternedData, InternedString, Mapping};

/// `InternedData`'s and `InternedString`'s field numbers used here.
mod interned_data_field {
    use super::{InternedData, InternedString};
    pub const BUILD_IDS: u32 = InternedData::FIELD_BUILD_IDS;
    pub const MAPPING_PATHS: u32 = InternedData::FIELD_MAPPING_PATHS;
    pub const FUNCTION_NAMES: u32 = InternedData::FIELD_FUNCTION_NAMES;
    pub const MAPPINGS: u32 = InternedData::FIELD_MAPPINGS;
    pub const FRAMES: u32 = InternedData::FIELD_FRAMES;
    pub const CALLSTACKS: u32 = InternedData::FIELD_CALLSTACKS;
    pub const IID: u32 = InternedString::FIELD_IID;
    pub const STR: u32 = InternedString::FIELD_STR;
}
use interned_data_field as interned_string_field;

/// A mapping as the trace describes it.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub struct MappingDesc {
    /// The ELF's build id (raw bytes), empty when unknown.
    pub build_id: Vec<u8>,
    /// The mapped file's path (`/kernel` for kernel frames).
    pub path: String,
    /// The first address.
    pub start: u64,
    /// The address past the end.
    pub end: u64,
    /// The file offset of `start` (`pgoff`).
    pub exact_offset: u64,
    /// The file offset the ELF starts at in the mapped file.
    pub start_offset: u64,
    /// The ELF's load bias.
    pub load_bias: u64,
}

impl MappingDesc {
    /// The mapping upstream gives kernel frames: no range, no build id,
    /// named `/kernel`.
    pub fn kernel() -> MappingDesc {
        MappingDesc {
            path: "/kernel".to_owned(),
            ..MappingDesc::default()
        }
    }
}

/// One frame of a sample, leaf first in [`Interner::callstack`].
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct FrameDesc {
    /// Its mapping.
    pub mapping: MappingDesc,
    /// The pc relative to the mapping's ELF.
    pub rel_pc: u64,
    /// The function's name, if known at record time.
    pub function: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum StrKind {
    BuildId,
    MappingPath,
    FunctionName,
}

/// A definition to write into the next packet's `interned_data`.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Def {
    Str(StrKind, u64, Vec<u8>),
    Mapping {
        iid: u64,
        desc: MappingDesc,
        build_id: u64,
        paths: Vec<u64>,
    },
    Frame {
        iid: u64,
        function: u64,
        mapping: u64,
        rel_pc: u64,
    },
    Callstack {
        iid: u64,
        frames: Vec<u64>,
    },
}

impl Def {
    /// About the bytes this definition encodes to (an upper bound for the
    /// numbers: ten bytes a varint, plus tags and lengths).
    fn size_estimate(&self) -> usize {
        match self {
            Def::Str(_, _, b) => 16 + b.len(),
            Def::Mapping { paths, .. } => 90 + 11 * paths.len(),
            Def::Frame { .. } => 48,
            Def::Callstack { frames, .. } => 16 + 11 * frames.len(),
        }
    }
}

/// The interning state of one packet sequence.
#[derive(Debug, Default)]
pub struct Interner {
    strings: HashMap<(StrKind, Vec<u8>), u64>,
    mappings: HashMap<MappingDesc, u64>,
    frames: HashMap<(u64, u64, u64), u64>,
    callstacks: HashMap<Vec<u64>, u64>,
    next_string: u64,
    next_mapping: u64,
    next_frame: u64,
    next_callstack: u64,
    pending: Vec<Def>,
}

impl Interner {
    /// A fresh sequence's state (id 0 of each string table is "", which
    /// [`write_fixed`] defines).
    pub fn new() -> Interner {
        let mut i = Interner {
            next_string: 1,
            next_mapping: 1,
            next_frame: 1,
            next_callstack: 1,
            ..Interner::default()
        };
        for kind in [
            StrKind::BuildId,
            StrKind::MappingPath,
            StrKind::FunctionName,
        ] {
            i.strings.insert((kind, Vec::new()), 0);
        }
        i
    }

    /// How many callstacks, frames and mappings are interned (the state's size).
    pub fn len(&self) -> usize {
        self.callstacks.len() + self.frames.len() + self.mappings.len() + self.strings.len()
    }

    /// Whether nothing beyond the fixed strings is interned.
    pub fn is_empty(&self) -> bool {
        self.len() == 3
    }

    /// The id of the callstack of `frames` (leaf first), queueing the
    /// definitions the sequence has not seen.
    pub fn callstack(&mut self, frames: &[FrameDesc]) -> u64 {
        // Root first, as the trace stores callstacks.
        let ids: Vec<u64> = frames.iter().rev().map(|f| self.frame(f)).collect();
        if let Some(&iid) = self.callstacks.get(&ids) {
            return iid;
        }
        let iid = self.next_callstack;
        self.next_callstack += 1;
        self.callstacks.insert(ids.clone(), iid);
        self.pending.push(Def::Callstack { iid, frames: ids });
        iid
    }

    /// The id of the callstack of the frames `ids` (interned with
    /// [`Interner::frame`], root first), queueing its definition if new.
    pub fn callstack_of(&mut self, ids: &[u64]) -> u64 {
        if let Some(&iid) = self.callstacks.get(ids) {
            return iid;
        }
        let iid = self.next_callstack;
        self.next_callstack += 1;
        self.callstacks.insert(ids.to_vec(), iid);
        self.pending.push(Def::Callstack {
            iid,
            frames: ids.to_vec(),
        });
        iid
    }

    /// The id of frame `f`, queueing its (and its mapping's and strings')
    /// definitions the sequence has not seen.
    pub fn frame(&mut self, f: &FrameDesc) -> u64 {
        let mapping = self.mapping(&f.mapping);
        let function = self.string(
            StrKind::FunctionName,
            f.function.as_deref().unwrap_or("").as_bytes(),
        );
        let key = (mapping, f.rel_pc, function);
        if let Some(&iid) = self.frames.get(&key) {
            return iid;
        }
        let iid = self.next_frame;
        self.next_frame += 1;
        self.frames.insert(key, iid);
        self.pending.push(Def::Frame {
            iid,
            function,
            mapping,
            rel_pc: f.rel_pc,
        });
        iid
    }

    fn mapping(&mut self, m: &MappingDesc) -> u64 {
        if let Some(&iid) = self.mappings.get(m) {
            return iid;
        }
        let paths: Vec<u64> = m
            .path
            .split('/')
            .filter(|c| !c.is_empty())
            .map(|c| self.string(StrKind::MappingPath, c.as_bytes()))
            .collect();
        let build_id = self.string(StrKind::BuildId, &m.build_id);
        let iid = self.next_mapping;
        self.next_mapping += 1;
        self.mappings.insert(m.clone(), iid);
        self.pending.push(Def::Mapping {
            iid,
            desc: m.clone(),
            build_id,
            paths,
        });
        iid
    }

    fn string(&mut self, kind: StrKind, s: &[u8]) -> u64 {
        if let Some(&iid) = self.strings.get(&(kind, s.to_vec())) {
            return iid;
        }
        let iid = self.next_string;
        self.next_string += 1;
        self.strings.insert((kind, s.to_vec()), iid);
        self.pending.push(Def::Str(kind, iid, s.to_vec()));
        iid
    }

    /// Whether definitions wait to be written.
    pub fn has_new(&self) -> bool {
        !self.pending.is_empty()
    }

    /// Writes the queued definitions into `interned_data` (a nested
    /// `InternedData` of the packet) and forgets them.
    pub fn write_new(&mut self, interned_data: &mut Message<'_>) {
        self.write_new_bounded(interned_data, usize::MAX);
    }

    /// Writes queued definitions, in order, until about `budget` bytes are
    /// written (at least one), and forgets those; whether more are queued
    /// (for the next packet: a definition never comes before what it
    /// names, so splitting in order keeps every packet readable).
    pub fn write_new_bounded(&mut self, interned_data: &mut Message<'_>, budget: usize) -> bool {
        let mut used = 0usize;
        let mut n = 0;
        for def in &self.pending {
            if n > 0 && used >= budget {
                break;
            }
            used = used.saturating_add(def.size_estimate());
            n += 1;
        }
        for def in self.pending.drain(..n) {
            Self::write_def(def, interned_data);
        }
        !self.pending.is_empty()
    }

    fn write_def(def: Def, interned_data: &mut Message<'_>) {
        match def {
            Def::Str(kind, iid, bytes) => {
                let field = match kind {
                    StrKind::BuildId => interned_data_field::BUILD_IDS,
                    StrKind::MappingPath => interned_data_field::MAPPING_PATHS,
                    StrKind::FunctionName => interned_data_field::FUNCTION_NAMES,
                };
                let mut s = interned_data.begin_nested(field);
                s.append_varint(interned_string_field::IID, iid);
                s.append_bytes(interned_string_field::STR, &bytes);
            }
            Def::Mapping {
                iid,
                desc,
                build_id,
                paths,
            } => {
                let mut m = Mapping::from_message(
                    interned_data.begin_nested(interned_data_field::MAPPINGS),
                );
                m.set_iid(iid)
                    .set_build_id(build_id)
                    .set_exact_offset(desc.exact_offset)
                    .set_start_offset(desc.start_offset)
                    .set_start(desc.start)
                    .set_end(desc.end)
                    .set_load_bias(desc.load_bias);
                for p in paths {
                    m.add_path_string_ids(p);
                }
            }
            Def::Frame {
                iid,
                function,
                mapping,
                rel_pc,
            } => {
                Frame::from_message(interned_data.begin_nested(interned_data_field::FRAMES))
                    .set_iid(iid)
                    .set_function_name_id(function)
                    .set_mapping_id(mapping)
                    .set_rel_pc(rel_pc);
            }
            Def::Callstack { iid, frames } => {
                let mut c = Callstack::from_message(
                    interned_data.begin_nested(interned_data_field::CALLSTACKS),
                );
                c.set_iid(iid);
                for f in frames {
                    c.add_frame_ids(f);
                }
            }
        }
    }
}

/// Defines id 0 of each string table as the empty string (so an unset
/// string reads as ""), in a sequence's first `interned_data`.
pub fn write_fixed(interned_data: &mut Message<'_>) {
    for field in [
        interned_data_field::BUILD_IDS,
        interned_data_field::MAPPING_PATHS,
        interned_data_field::FUNCTION_NAMES,
    ] {
        let mut s = interned_data.begin_nested(field);
        s.append_varint(interned_string_field::IID, 0);
        s.append_bytes(interned_string_field::STR, b"");
    }
}

#[cfg(test)]
mod tests {
    use protozero::HeapWriter;

    use super::*;
    use zerotrace_protos::protos::{
        CallstackDecoder, FrameDecoder, InternedStringDecoder, MappingDecoder,
    };

    fn frame(path: &str, rel_pc: u64, name: Option<&str>) -> FrameDesc {
        FrameDesc {
            mapping: MappingDesc {
                path: path.into(),
                build_id: vec![0xab, 0xcd],
                start: 0x1000,
                end: 0x2000,
                ..MappingDesc::default()
            },
            rel_pc,
            function: name.map(str::to_owned),
        }
    }

    fn written(i: &mut Interner) -> Vec<u8> {
        let mut w = HeapWriter::new();
        {
            let mut m = w.root();
            i.write_new(&mut m);
        }
        w.finish().unwrap()
    }

    #[test]
    fn a_callstack_is_defined_once_root_first_with_its_parts_before_it() {
        let mut i = Interner::new();
        let stack = [
            frame("/usr/bin/app", 0x10, Some("leaf")),
            frame("/usr/bin/app", 0x20, Some("main")),
        ];
        let id = i.callstack(&stack);
        assert_eq!(id, 1);
        let bytes = written(&mut i);
        let d = protozero::Decoder::new(&bytes);
        let mut order = Vec::new();
        let mut callstack = None;
        let mut frames = HashMap::new();
        let mut names = HashMap::new();
        let mut paths = Vec::new();
        for f in d {
            let f = f.unwrap();
            order.push(f.id);
            let b = f.as_bytes().unwrap();
            match f.id {
                interned_data_field::CALLSTACKS => callstack = Some(CallstackDecoder::new(b)),
                interned_data_field::FRAMES => {
                    let fr = FrameDecoder::new(b);
                    frames.insert(fr.iid().unwrap(), fr.function_name_id().unwrap());
                }
                interned_data_field::FUNCTION_NAMES => {
                    let s = InternedStringDecoder::new(b);
                    names.insert(s.iid().unwrap(), s.str().unwrap().to_vec());
                }
                interned_data_field::MAPPING_PATHS => {
                    paths.push(InternedStringDecoder::new(b).str().unwrap().to_vec());
                }
                interned_data_field::MAPPINGS => {
                    let m = MappingDecoder::new(b);
                    assert_eq!(m.path_string_ids().count(), 3);
                    assert_eq!((m.start(), m.end()), (Some(0x1000), Some(0x2000)));
                }
                _ => {}
            }
        }
        assert_eq!(paths, [b"usr".to_vec(), b"bin".to_vec(), b"app".to_vec()]);
        let mapping_at = order
            .iter()
            .position(|&x| x == interned_data_field::MAPPINGS);
        let frame_at = order.iter().position(|&x| x == interned_data_field::FRAMES);
        assert!(mapping_at < frame_at);
        assert_eq!(order.last(), Some(&interned_data_field::CALLSTACKS));
        let ids: Vec<u64> = callstack.unwrap().frame_ids().collect();
        let names_in_order: Vec<&[u8]> = ids.iter().map(|f| names[&frames[f]].as_slice()).collect();
        assert_eq!(names_in_order, [b"main".as_slice(), b"leaf".as_slice()]);
        // The same callstack again: the same id, nothing new to write.
        assert_eq!(i.callstack(&stack), 1);
        assert!(!i.has_new());
        // A new leaf under the same caller: only the new parts.
        assert_eq!(
            i.callstack(&[frame("/usr/bin/app", 0x30, None), stack[1].clone()]),
            2
        );
        let again = written(&mut i);
        let kinds: Vec<u32> = protozero::Decoder::new(&again)
            .map(|f| f.unwrap().id)
            .collect();
        assert_eq!(
            kinds,
            [interned_data_field::FRAMES, interned_data_field::CALLSTACKS]
        );
    }
}
