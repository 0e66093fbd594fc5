//! Naming frames after the recording, from the binaries' debug information.
//! A sampler on a production machine writes each frame's mapping (path,
//! build id) and `rel_pc`, but a stripped binary gives it no name; the
//! unstripped binary, or its split `.debug` file, on the developer's
//! machine holds the DWARF that names each address, with inlined functions
//! and source lines. This module turns the bytes of one such ELF file and
//! the addresses the samples reached into `ModuleSymbols` entries, as
//! Perfetto's `traceconv symbolize` appends them (the trace processor then
//! names the frames with them). It reads no file itself.
//!
//! DWARF is read by `addr2line` over `gimli` (inlined frames innermost
//! first, file and line); where a binary has no DWARF for an address, its
//! symbol table names the function. Every read is bounds-checked by those
//! crates; a malformed file is an error, never a panic.

use object::{Object, ObjectSection, ObjectSymbol};

use zerotrace_unwind::demangle;

/// One function at an address: the innermost comes first when functions
/// were inlined into each other, as `AddressSymbols.lines` orders them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SymbolLine {
    /// The function's name (demangled).
    pub function_name: String,
    /// The source file, when the debug information knew it.
    pub source_file: Option<String>,
    /// The line in that file (0 when unknown).
    pub line: u32,
}

/// Why a file cannot name addresses.
#[derive(Debug, thiserror::Error)]
pub enum SymbolizeError {
    /// Not an ELF (or other object) file `object` reads.
    #[error("not an object file: {0}")]
    NotObject(String),
    /// Its DWARF does not load.
    #[error("malformed DWARF: {0}")]
    Dwarf(String),
}

/// The GNU build id of an ELF file's bytes, if it states one.
pub fn build_id_of(bytes: &[u8]) -> Option<Vec<u8>> {
    let file = object::File::parse(bytes).ok()?;
    file.build_id().ok().flatten().map(<[u8]>::to_vec)
}

/// The address an ELF file's first loadable segment states: the base that
/// profilers such as samply count their "relative addresses" from (an
/// address as the ELF states it is the relative one plus this base).
/// None for bytes that are no object file.
pub fn image_base_of(bytes: &[u8]) -> Option<u64> {
    use object::ObjectSegment;
    let file = object::File::parse(bytes).ok()?;
    Some(file.segments().next().map_or(0, |s| s.address()))
}

/// The DWARF reader: sections copied out of the file (decompressed where
/// they are compressed), shared by the context's units.
type Reader = gimli::EndianRcSlice<gimli::RunTimeEndian>;

/// One ELF file's debug information and symbols, ready to name addresses.
pub struct ModuleSymbolizer<'a> {
    dwarf: Option<addr2line::Context<Reader>>,
    /// Function symbols, sorted by address: (address, size, raw name).
    symbols: Vec<(u64, u64, &'a str)>,
}

impl std::fmt::Debug for ModuleSymbolizer<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ModuleSymbolizer")
            .field("dwarf", &self.dwarf.is_some())
            .field("symbols", &self.symbols.len())
            .finish()
    }
}

impl<'a> ModuleSymbolizer<'a> {
    /// Reads `bytes`, an ELF file (a binary or its split debug file).
    pub fn new(bytes: &'a [u8]) -> Result<ModuleSymbolizer<'a>, SymbolizeError> {
        let file =
            object::File::parse(bytes).map_err(|e| SymbolizeError::NotObject(e.to_string()))?;
        let endian = if file.is_little_endian() {
            gimli::RunTimeEndian::Little
        } else {
            gimli::RunTimeEndian::Big
        };
        let mut symbols: Vec<(u64, u64, &'a str)> = file
            .symbols()
            .chain(file.dynamic_symbols())
            .filter(|s| s.kind() == object::SymbolKind::Text && s.address() != 0)
            .filter_map(|s| Some((s.address(), s.size(), s.name().ok()?)))
            .collect();
        symbols.sort_unstable();
        symbols.dedup_by_key(|s| s.0);
        let dwarf = if file.section_by_name(".debug_info").is_some() {
            let load = |id: gimli::SectionId| -> Result<Reader, SymbolizeError> {
                let data = match file.section_by_name(id.name()) {
                    Some(s) => s
                        .uncompressed_data()
                        .map_err(|e| SymbolizeError::Dwarf(format!("{}: {e}", id.name())))?,
                    None => std::borrow::Cow::Borrowed(&[][..]),
                };
                Ok(gimli::EndianRcSlice::new(std::rc::Rc::from(&*data), endian))
            };
            let sections = gimli::Dwarf::load(load)?;
            Some(
                addr2line::Context::from_dwarf(sections)
                    .map_err(|e| SymbolizeError::Dwarf(e.to_string()))?,
            )
        } else {
            None
        };
        Ok(ModuleSymbolizer { dwarf, symbols })
    }

    /// Whether the file has DWARF (else only its symbol table names).
    pub fn has_dwarf(&self) -> bool {
        self.dwarf.is_some()
    }

    /// The functions at `address` (an address as the ELF states it, which
    /// is a frame's `rel_pc`), innermost first, with file and line where
    /// the DWARF has them; empty where nothing names it.
    pub fn lines(&self, address: u64) -> Vec<SymbolLine> {
        let mut out = Vec::new();
        if let Some(ctx) = &self.dwarf {
            if let Ok(mut frames) = ctx.find_frames(address).skip_all_loads() {
                while let Ok(Some(f)) = frames.next() {
                    // A frame the DWARF has a line for but no function
                    // (line-tables-only builds) takes the symbol table's
                    // name, as LLVM's symbolizer names it.
                    let name = f
                        .function
                        .as_ref()
                        .and_then(|n| n.raw_name().ok())
                        .map(|n| demangle(n.as_ref()))
                        .or_else(|| {
                            f.location.as_ref()?;
                            self.symbol_at(address).map(demangle)
                        });
                    let Some(function_name) = name else { continue };
                    let (source_file, line) = f.location.map_or((None, 0), |l| {
                        (l.file.map(str::to_owned), l.line.unwrap_or(0))
                    });
                    out.push(SymbolLine {
                        function_name,
                        source_file,
                        line,
                    });
                }
            }
        }
        if out.is_empty() {
            if let Some(name) = self.symbol_at(address) {
                out.push(SymbolLine {
                    function_name: demangle(name),
                    source_file: None,
                    line: 0,
                });
            }
        }
        out
    }

    fn symbol_at(&self, address: u64) -> Option<&'a str> {
        let i = self
            .symbols
            .partition_point(|s| s.0 <= address)
            .checked_sub(1)?;
        let (start, size, name) = *self.symbols.get(i)?;
        // A symbol without a size covers up to the next one.
        let end = if size > 0 {
            start.saturating_add(size)
        } else {
            self.symbols.get(i + 1).map_or(u64::MAX, |n| n.0)
        };
        (address < end).then_some(name)
    }
}
