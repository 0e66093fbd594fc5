//! Frames known by a function name alone, on mappings known by a name
//! alone, as the text profile formats give them (`perf script` text,
//! collapsed stacks): each mapping name gets one mapping covering every
//! address, and each function name one frame on it at address 0 with a
//! symbol of that name, as upstream's dummy mappings intern them.

use crate::column_store::strings::StrId;
use crate::hash::HashMap;
use crate::parser::Parser;
use crate::storage::profiling_rows::FrameRow;
use crate::tracker::stack_profile::{MappingParams, StackProfileTracker};

/// The mappings and frames made so far by one reader.
#[derive(Debug, Default)]
pub struct DummyFrames {
    mappings: HashMap<String, u32>,
    frames: HashMap<(u32, StrId), u32>,
}

impl DummyFrames {
    /// The mapping named `name`, made on first use.
    pub fn mapping(&mut self, p: &mut Parser, name: &str) -> u32 {
        if let Some(m) = self.mappings.get(name) {
            return *m;
        }
        let m = p.profiling.stacks.intern_mapping(
            &mut p.storage,
            MappingParams {
                end: u64::MAX,
                name: name.to_owned(),
                ..MappingParams::default()
            },
        );
        self.mappings.insert(name.to_owned(), m);
        m
    }

    /// The frame of function `function` on `mapping`, made on first use.
    pub fn frame(&mut self, p: &mut Parser, mapping: u32, function: &str) -> u32 {
        let name = p.storage.strings.intern(function);
        if let Some(f) = self.frames.get(&(mapping, name)) {
            return *f;
        }
        let set = StackProfileTracker::create_symbol(&mut p.storage, function, None, None);
        let id = u32::try_from(p.storage.profiling.frames.len()).unwrap_or(u32::MAX);
        p.storage.profiling.frames.push(FrameRow {
            name,
            mapping,
            rel_pc: 0,
            symbol_set_id: Some(set),
            deobfuscated_name: StrId::NULL,
            frame_type: StrId::NULL,
        });
        self.frames.insert((mapping, name), id);
        id
    }

    /// Bytes held by the maps (an estimate for the load's budget).
    pub fn held_bytes(&self) -> u64 {
        let names: usize = self.mappings.keys().map(String::len).sum();
        let per = 48usize;
        (names + per * (self.mappings.len() + self.frames.len())) as u64
    }
}
