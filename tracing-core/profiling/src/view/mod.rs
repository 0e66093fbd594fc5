//! Symbols for the profiles a trace holds: [`ModuleSymbolizer`] reads a
//! binary's (or its debug file's) DWARF and symbol table and names the
//! addresses CPU samples and heap dumps reached, for `zerotrace symbolize`
//! to append as `TracePacket.module_symbols`.
//!
//! Reading a trace's samples and heap dumps back is the trace processor's
//! (`zerotrace_trace_processor::profile_view`): one reader of traces.

mod symbolizer;

pub use symbolizer::{ModuleSymbolizer, SymbolLine, SymbolizeError, build_id_of, image_base_of};
