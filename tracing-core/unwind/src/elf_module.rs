//! One ELF file, read once, reduced to what unwinding and symbolization
//! need: its GNU build id, its CFI sections (`.eh_frame`, `.eh_frame_hdr`,
//! `.debug_frame`) with their addresses, its function symbols, and how file
//! offsets become the ELF's own virtual addresses.
//!
//! `rel_pc` follows libunwindstack, which `traced_perf` uses: the load bias
//! is `p_vaddr - p_offset` of the first executable `PT_LOAD`, and a pc in a
//! mapping of `start` and file offset `pgoff` has
//! `rel_pc = pc - start + pgoff + load_bias` (the ELF starting at file
//! offset 0, as on Linux). That is the pc as the ELF's own headers address
//! it, the same address space as its symbols and CFI, so one number serves
//! the trace, the symbol lookup and the unwind tables.
//!
//! Files are read through `object`'s read cache: only the headers and the
//! sections kept are read, each bounded by the file's size, and a file that
//! is not a well-formed x86-64 ELF is an [`ElfError`], never a panic.

use std::ops::Range;
use std::sync::Arc;

use object::read::elf::{ElfFile64, ProgramHeader};

pub use super::section_data::SectionData;
use object::{Object, ObjectSection, ObjectSymbol, ReadRef};

use super::eh_frame_hdr_check::table_is_sound;
use super::symbols::{Symbol, SymbolTable};

/// Why a file did not load as an ELF module.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ElfError {
    /// The file could not be opened or read.
    #[error("cannot read the file: {0}")]
    Io(String),
    /// The bytes do not start with the ELF magic.
    #[error("not an ELF file")]
    NotElf,
    /// ELF, but not 64-bit little-endian.
    #[error("not a 64-bit little-endian ELF")]
    WrongClass,
    /// ELF for another machine than the one unwound.
    #[error("ELF for another machine")]
    WrongMachine,
    /// The headers or a section do not fit the file.
    #[error("malformed ELF: {0}")]
    Malformed(String),
}

impl From<object::Error> for ElfError {
    fn from(e: object::Error) -> Self {
        ElfError::Malformed(e.to_string())
    }
}

/// A `PT_LOAD` segment.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LoadSegment {
    /// `p_offset`.
    pub offset: u64,
    /// `p_vaddr`.
    pub vaddr: u64,
    /// `p_filesz`.
    pub filesz: u64,
    /// Whether `PF_X` is set.
    pub exec: bool,
}

/// What the unwinder and symbolizer keep of one ELF file.
#[derive(Debug)]
pub struct ElfModule {
    build_id: Option<Vec<u8>>,
    load_bias: u64,
    loads: Vec<LoadSegment>,
    /// `.text`'s range, if the file has section headers.
    pub text: Option<Range<u64>>,
    /// `.got`'s range.
    pub got: Option<Range<u64>>,
    /// `.eh_frame`.
    pub eh_frame: Option<SectionData>,
    /// `.eh_frame_hdr`, where its search table is sound.
    pub eh_frame_hdr: Option<SectionData>,
    /// `.debug_frame` (uncompressed only).
    pub debug_frame: Option<SectionData>,
    symbols: SymbolTable,
}

#[cfg(target_arch = "x86_64")]
const NATIVE: object::Architecture = object::Architecture::X86_64;
#[cfg(target_arch = "aarch64")]
const NATIVE: object::Architecture = object::Architecture::Aarch64;
#[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
const NATIVE: object::Architecture = object::Architecture::Unknown;

impl ElfModule {
    /// Reads a module from anything `object` reads: a byte slice (the vdso,
    /// tests) or a [`object::ReadCache`] over a file.
    pub fn parse<'data, R: ReadRef<'data>>(data: R) -> Result<Self, ElfError> {
        let ident = data.read_bytes_at(0, 6).map_err(|()| ElfError::NotElf)?;
        if ident.get(..4) != Some(&b"\x7fELF"[..]) {
            return Err(ElfError::NotElf);
        }
        // EI_CLASS 2 (64-bit), EI_DATA 1 (little-endian).
        if ident.get(4..6) != Some(&[2u8, 1][..]) {
            return Err(ElfError::WrongClass);
        }
        let file = ElfFile64::<object::Endianness, R>::parse(data)?;
        if file.architecture() != NATIVE {
            return Err(ElfError::WrongMachine);
        }
        let endian = file.endian();

        let mut loads = Vec::new();
        for ph in file.elf_program_headers() {
            if ph.p_type(endian) != object::elf::PT_LOAD {
                continue;
            }
            loads.push(LoadSegment {
                offset: ph.p_offset(endian),
                vaddr: ph.p_vaddr(endian),
                filesz: ph.p_filesz(endian),
                exec: ph.p_flags(endian) & object::elf::PF_X != 0,
            });
        }
        // libunwindstack's rule: the first executable PT_LOAD's
        // p_vaddr - p_offset (wrapping, as it computes in uint64_t).
        let load_bias = loads
            .iter()
            .find(|l| l.exec)
            .map_or(0, |l| l.vaddr.wrapping_sub(l.offset));

        let build_id = file.build_id().ok().flatten().map(<[u8]>::to_vec);

        let range_of = |name: &str| {
            let s = file.section_by_name(name)?;
            let start = s.address();
            Some(start..start.checked_add(s.size())?)
        };
        let data_of = |name: &str| -> Option<SectionData> {
            let s = file.section_by_name(name)?;
            let range = s.compressed_file_range().ok()?;
            if range.format != object::CompressionFormat::None {
                return None;
            }
            let bytes = s.data().ok()?;
            let start = s.address();
            let end = start.checked_add(bytes.len() as u64)?;
            Some(SectionData {
                svma: start..end,
                data: Arc::from(bytes),
            })
        };

        let mut symbols = Vec::new();
        for sym in file.symbols().chain(file.dynamic_symbols()) {
            if sym.kind() != object::SymbolKind::Text || sym.is_undefined() || sym.address() == 0 {
                continue;
            }
            if let Ok(name) = sym.name_bytes() {
                symbols.push((sym.address(), sym.size(), name));
            }
        }
        let symbols = SymbolTable::build(symbols);

        let text = range_of(".text");
        let got = range_of(".got");
        let eh_frame = data_of(".eh_frame");
        // A search table that is not sound is left out (framehop then
        // indexes `.eh_frame` itself): see eh_frame_hdr_check.rs.
        let eh_frame_hdr = data_of(".eh_frame_hdr").filter(|hdr| {
            eh_frame
                .as_ref()
                .is_some_and(|eh| table_is_sound(hdr, eh, text.as_ref(), got.as_ref()))
        });
        Ok(ElfModule {
            build_id,
            load_bias,
            loads,
            text,
            got,
            eh_frame,
            eh_frame_hdr,
            debug_frame: data_of(".debug_frame"),
            symbols,
        })
    }

    /// The GNU build id (`NT_GNU_BUILD_ID`), raw bytes.
    pub fn build_id(&self) -> Option<&[u8]> {
        self.build_id.as_deref()
    }

    /// The build id as lowercase hex, as Perfetto writes it in a mapping.
    pub fn build_id_hex(&self) -> String {
        self.build_id()
            .unwrap_or_default()
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect()
    }

    /// `p_vaddr - p_offset` of the first executable `PT_LOAD` (libunwindstack's
    /// load bias; Perfetto's `Mapping.load_bias`).
    pub fn load_bias(&self) -> u64 {
        self.load_bias
    }

    /// The `PT_LOAD` segments.
    pub fn loads(&self) -> &[LoadSegment] {
        &self.loads
    }

    /// Whether any CFI section was found.
    pub fn has_unwind_info(&self) -> bool {
        self.eh_frame.is_some() || self.debug_frame.is_some()
    }

    /// How many function symbols were kept.
    pub fn symbol_count(&self) -> usize {
        self.symbols.len()
    }

    /// The function holding `rel_pc` (an address as the ELF states it),
    /// name demangled; `None` for a stripped module or an address between
    /// functions.
    pub fn symbolize(&self, rel_pc: u64) -> Option<Symbol> {
        self.symbols.lookup(rel_pc)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn own_exe() -> Vec<u8> {
        std::fs::read("/proc/self/exe").unwrap()
    }

    #[test]
    fn loads_the_test_binary() {
        let bytes = own_exe();
        let m = ElfModule::parse(&bytes[..]).unwrap();
        assert!(m.has_unwind_info());
        assert!(m.eh_frame_hdr.is_some());
        assert!(m.symbol_count() > 100);
        assert!(m.loads().iter().any(|l| l.exec));
        assert!(m.build_id().is_none_or(|b| !b.is_empty()));
    }

    #[test]
    fn non_elf_and_truncated_are_typed() {
        assert_eq!(ElfModule::parse(&b""[..]).unwrap_err(), ElfError::NotElf);
        assert_eq!(
            ElfModule::parse(&b"#!/bin/sh\n"[..]).unwrap_err(),
            ElfError::NotElf
        );
        assert_eq!(
            ElfModule::parse(&b"\x7fELF\x01\x01"[..]).unwrap_err(),
            ElfError::WrongClass
        );
        let bytes = own_exe();
        assert!(matches!(
            ElfModule::parse(&bytes[..40]).unwrap_err(),
            ElfError::Malformed(_)
        ));
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(256))]
        // A real header with bytes flipped anywhere in the first 64 KiB
        // (headers, tables, notes) and the file cut anywhere.
        #[test]
        fn corrupt_elf_never_panics(
            flips in proptest::collection::vec((0usize..65536, any::<u8>()), 1..32),
            cut in 0usize..200_000,
        ) {
            thread_local!(static EXE: Vec<u8> = own_exe());
            EXE.with(|exe| {
                let mut bytes = exe[..exe.len().min(cut.max(64))].to_vec();
                for (at, v) in &flips {
                    if let Some(b) = bytes.get_mut(*at) {
                        *b ^= v;
                    }
                }
                if let Ok(m) = ElfModule::parse(&bytes[..]) {
                    let _ = m.symbolize(0x1000);
                }
            });
        }

        #[test]
        fn arbitrary_bytes_after_magic_never_panic(tail in proptest::collection::vec(any::<u8>(), 0..2048)) {
            let mut bytes = b"\x7fELF\x02\x01".to_vec();
            bytes.extend_from_slice(&tail);
            let _ = ElfModule::parse(&bytes[..]);
        }
    }
}
