//! One JIT cache: the address range of a process a virtual machine generates code
//! into (a V8 isolate's code range or its embedded blob) and the
//! functions whose code lies in it now. Code loaded over older code
//! deletes it (its `__intrinsic_jit_code` row gets the time as
//! `estimated_delete_ts`), code moves carry the function to its new
//! place, and a profiled frame at an address in the range becomes the
//! frame of the function there at that moment, made once per mapping
//! and pc for as long as that function stays, with a
//! `__intrinsic_jit_frame` row tying it to the code; a pc where no
//! function lies is an unknown frame (`jit_unknown_frame`).

use base64::Engine as _;

use super::address_range::{AddressRange, AddressRangeMap};
use crate::column_store::strings::StrId;
use crate::hash::HashMap;
use crate::storage::Storage;
use crate::storage::profiling_rows::{FrameRow, SymbolRow};
use crate::tables::jit::{JitCodeRow, JitFrameRow};

/// A frame's key: its mapping and pc relative to it.
type FrameKey = (u32, u64);

/// A function whose code is in the cache.
#[derive(Debug)]
struct JittedFunction {
    /// Its `__intrinsic_jit_code` row.
    jit_code_id: u32,
    /// The symbol set naming its source, when known.
    symbol_set_id: Option<u32>,
    /// The frames made in it.
    frames: HashMap<FrameKey, u32>,
}

/// Where a function's source is: the script's name and the line.
#[derive(Debug, Clone, Copy)]
pub struct SourceLocation {
    /// The file (script) name.
    pub file_name: StrId,
    /// The line.
    pub line: u32,
}

/// What a load of code says.
#[derive(Debug, Clone, Copy)]
pub struct LoadedCode<'a> {
    /// When it was loaded.
    pub ts: i64,
    /// The thread that generated it.
    pub utid: u32,
    /// Where it lies.
    pub range: AddressRange,
    /// The function's name.
    pub function_name: StrId,
    /// Where the function's source is, when known.
    pub source: Option<SourceLocation>,
    /// Its machine code (empty when not recorded).
    pub native_code: &'a [u8],
}

/// The generated code of one address range of one process.
#[derive(Debug)]
pub struct JitCache {
    /// What it holds (`v8 code`, `v8 blob`), naming the mapping made for
    /// it when a profile needs one.
    name: &'static str,
    /// Its addresses.
    range: AddressRange,
    /// The functions in it now, by their code's addresses.
    functions: AddressRangeMap<JittedFunction>,
    /// Frames at pcs where no function was.
    unknown_frames: HashMap<FrameKey, u32>,
}

impl JitCache {
    /// An empty cache of `range`.
    pub fn new(name: &'static str, range: AddressRange) -> Self {
        JitCache {
            name,
            range,
            functions: AddressRangeMap::default(),
            unknown_frames: HashMap::default(),
        }
    }

    /// What it holds.
    pub fn name(&self) -> &'static str {
        self.name
    }

    /// Its addresses.
    pub fn range(&self) -> AddressRange {
        self.range
    }

    /// Records code loaded into the cache: its `__intrinsic_jit_code` row
    /// (and a symbol for its source, when known), deleting the functions
    /// whose code it overlaps. Returns the row's id.
    pub fn load_code(&mut self, storage: &mut Storage, code: &LoadedCode<'_>) -> u32 {
        let symbol_set_id = code.source.map(|src| {
            let set = u32::try_from(storage.profiling.symbols.len()).unwrap_or(u32::MAX);
            storage.profiling.symbols.push(SymbolRow {
                symbol_set_id: set,
                name: code.function_name,
                source_file: src.file_name,
                line_number: Some(src.line),
                inlined: None,
            });
            set
        });
        let id = u32::try_from(storage.jit.code.len()).unwrap_or(u32::MAX);
        let native = base64::engine::general_purpose::STANDARD.encode(code.native_code);
        let native_code_base64 = storage.strings.intern(&native);
        storage.jit.code.push(JitCodeRow {
            create_ts: code.ts,
            estimated_delete_ts: None,
            utid: code.utid,
            start_address: code.range.start as i64,
            size: code.range.size() as i64,
            function_name: code.function_name,
            native_code_base64,
            jit_code_id: id,
        });
        let function = JittedFunction {
            jit_code_id: id,
            symbol_set_id,
            frames: HashMap::default(),
        };
        let ts = code.ts;
        self.functions
            .delete_overlaps_and_emplace(code.range, function, |_, old| {
                mark_deleted(storage, old.jit_code_id, ts);
            });
        id
    }

    /// Moves the function whose code holds `from` so that its code starts
    /// at `to`, deleting the functions it lands on. Returns its code's
    /// row, or None when no function holds `from`.
    pub fn move_code(&mut self, storage: &mut Storage, ts: i64, from: u64, to: u64) -> Option<u32> {
        let (old_range, function) = self.functions.remove_at(from)?;
        let id = function.jit_code_id;
        let new_range = AddressRange::from_start_and_size(to, old_range.size());
        self.functions
            .delete_overlaps_and_emplace(new_range, function, |_, old| {
                mark_deleted(storage, old.jit_code_id, ts);
            });
        Some(id)
    }

    /// The frame of a profiled pc at `address` (the mapping's pc
    /// `rel_pc`): the function's there, or an unknown frame named
    /// `function_name` (or by its pc). Returns the frame and whether it is
    /// new.
    pub fn intern_frame(
        &mut self,
        storage: &mut Storage,
        mapping: u32,
        rel_pc: u64,
        address: u64,
        function_name: &str,
    ) -> (u32, bool) {
        let key = (mapping, rel_pc);
        if let Some((_, f)) = self.functions.find_mut(address) {
            if let Some(id) = f.frames.get(&key) {
                return (*id, false);
            }
            let name = storage
                .jit
                .code
                .get(f.jit_code_id as usize)
                .map_or(StrId::NULL, |c| c.function_name);
            let id = push_frame(storage, name, mapping, rel_pc, f.symbol_set_id);
            f.frames.insert(key, id);
            storage.jit.frames.push(JitFrameRow {
                jit_code_id: f.jit_code_id,
                frame_id: id,
            });
            return (id, true);
        }
        if let Some(id) = self.unknown_frames.get(&key) {
            return (*id, false);
        }
        storage.stats.incr("jit_unknown_frame");
        let name = if function_name.is_empty() {
            storage.strings.intern(&format!("[+{rel_pc:#x}]"))
        } else {
            storage.strings.intern(function_name)
        };
        let id = push_frame(storage, name, mapping, rel_pc, None);
        self.unknown_frames.insert(key, id);
        (id, true)
    }
}

fn mark_deleted(storage: &mut Storage, jit_code_id: u32, ts: i64) {
    if let Some(row) = storage.jit.code.get_mut(jit_code_id as usize) {
        row.estimated_delete_ts = Some(ts);
    }
}

fn push_frame(
    storage: &mut Storage,
    name: StrId,
    mapping: u32,
    rel_pc: u64,
    symbol_set_id: Option<u32>,
) -> u32 {
    let id = u32::try_from(storage.profiling.frames.len()).unwrap_or(u32::MAX);
    storage.profiling.frames.push(FrameRow {
        name,
        mapping,
        rel_pc: rel_pc as i64,
        symbol_set_id,
        deobfuscated_name: StrId::NULL,
        frame_type: StrId::NULL,
    });
    id
}

#[cfg(test)]
mod tests {
    use super::*;

    fn load(cache: &mut JitCache, storage: &mut Storage, ts: i64, start: u64, name: &str) -> u32 {
        let function_name = storage.strings.intern(name);
        cache.load_code(
            storage,
            &LoadedCode {
                ts,
                utid: 1,
                range: AddressRange::from_start_and_size(start, 0x10),
                function_name,
                source: None,
                native_code: &[],
            },
        )
    }

    #[test]
    fn overlapping_loads_delete_and_moves_carry_functions() {
        let mut storage = Storage::default();
        let mut cache = JitCache::new("v8 code", AddressRange::new(0x1000, 0x2000));
        let a = load(&mut cache, &mut storage, 10, 0x1000, "a");
        let b = load(&mut cache, &mut storage, 20, 0x1008, "b");
        assert_eq!(storage.jit.code[a as usize].estimated_delete_ts, Some(20));
        assert_eq!(storage.jit.code[b as usize].estimated_delete_ts, None);
        // "" is the base64 of no machine code, not NULL.
        assert!(!storage.jit.code[b as usize].native_code_base64.is_null());
        assert_eq!(cache.move_code(&mut storage, 30, 0x100c, 0x1800), Some(b));
        assert_eq!(cache.move_code(&mut storage, 30, 0x100c, 0x1900), None);
        let (f, new) = cache.intern_frame(&mut storage, 7, 0x804, 0x1804, "");
        assert!(new);
        assert_eq!(
            storage
                .strings
                .get(storage.profiling.frames[f as usize].name),
            Some("b")
        );
        assert_eq!(
            cache.intern_frame(&mut storage, 7, 0x804, 0x1804, ""),
            (f, false)
        );
        assert_eq!(storage.jit.frames.len(), 1);
        // Nothing at the old place any more.
        let (u, _) = cache.intern_frame(&mut storage, 7, 0x8, 0x1008, "");
        assert_eq!(
            storage
                .strings
                .get(storage.profiling.frames[u as usize].name),
            Some("[+0x8]")
        );
        assert_eq!(storage.stats.get("jit_unknown_frame"), 1);
    }
}
