//! `zerotrace symbolize`: names the frames of a trace's CPU samples after
//! the recording, as Perfetto's `traceconv symbolize` does. The samples
//! name each frame's mapping (path, build id) and `rel_pc`; for each such
//! module this finds the binary or its split debug file (the directories
//! of `--symbol-path` and `PERFETTO_BINARY_PATH`, each searched by the
//! build-id layout `.build-id/xx/rest.debug`, by the recorded path under
//! it and by the file's name; then, unless `--no-local-files`,
//! `/usr/lib/debug/.build-id/` and the recorded path on this machine),
//! checks its build id, names every address the samples reached (DWARF
//! with inlined functions and source lines, else the symbol table), and
//! writes the trace with `module_symbols` packets appended. Every viewer of
//! ours, and Perfetto's UI, then shows the names.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use protozero::HeapWriter;
use zerotrace_protos::protos::ModuleSymbols;
use zerotrace_protos::upstream_tables::packet_field;

use zerotrace_profiling::view::{ModuleSymbolizer, SymbolLine, build_id_of};

use super::trace_reader::cpu_profile;
use super::{CliError, read_input, write_output};

/// The largest file read as a binary or debug file.
const MAX_FILE: u64 = 4 << 30;

/// `zerotrace symbolize`'s arguments.
#[derive(Debug, clap::Args)]
pub struct SymbolizeArgs {
    /// The trace file (`-` for stdin).
    pub trace: PathBuf,
    /// The trace to write, with the symbols appended (`-` for stdout).
    #[arg(short, long)]
    pub output: PathBuf,
    /// A directory to look for binaries and debug files in (repeatable;
    /// `PERFETTO_BINARY_PATH`'s directories, `:`-separated, come after).
    #[arg(long = "symbol-path", value_name = "DIR")]
    pub symbol_paths: Vec<PathBuf>,
    /// Do not read the recorded paths, or /usr/lib/debug, on this machine.
    #[arg(long)]
    pub no_local_files: bool,
}

/// One module of the samples: its mapping's path and build id.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
struct Module {
    path: String,
    build_id: Vec<u8>,
}

impl Module {
    fn build_id_hex(&self) -> String {
        self.build_id.iter().map(|b| format!("{b:02x}")).collect()
    }
}

/// Where `m`'s file may be, in the order tried.
fn candidates(m: &Module, dirs: &[PathBuf], local: bool) -> Vec<PathBuf> {
    let hex = m.build_id_hex();
    let by_id = |root: &Path| {
        (hex.len() > 2).then(|| {
            root.join(".build-id")
                .join(&hex[..2])
                .join(format!("{}.debug", &hex[2..]))
        })
    };
    let recorded = Path::new(&m.path);
    let name = recorded.file_name();
    let mut out = Vec::new();
    for d in dirs {
        out.extend(by_id(d));
        out.push(d.join(recorded.strip_prefix("/").unwrap_or(recorded)));
        if let Some(n) = name {
            out.push(d.join(n));
        }
    }
    if local {
        out.extend(by_id(Path::new("/usr/lib/debug")));
        if recorded.is_absolute() {
            out.push(recorded.to_owned());
        }
    }
    out
}

/// The first candidate that is a readable ELF file with `m`'s build id
/// (any, when the mapping stated none).
fn find_file(m: &Module, dirs: &[PathBuf], local: bool) -> Option<(PathBuf, Vec<u8>)> {
    for c in candidates(m, dirs, local) {
        let Ok(meta) = std::fs::metadata(&c) else {
            continue;
        };
        if !meta.is_file() || meta.len() > MAX_FILE {
            continue;
        }
        let Ok(bytes) = std::fs::read(&c) else {
            continue;
        };
        let id = build_id_of(&bytes);
        let matches = m.build_id.is_empty()
            || id.as_deref() == Some(&m.build_id[..])
            || id.is_some_and(|id| {
                id.iter()
                    .map(|b| format!("{b:02x}"))
                    .collect::<String>()
                    .as_bytes()
                    == &m.build_id[..]
            });
        if matches {
            return Some((c, bytes));
        }
    }
    None
}

/// The `module_symbols` packet of one module, as a `Trace.packet` (field
/// 1) to append to a trace file.
fn packet(m: &Module, names: &BTreeMap<u64, Vec<SymbolLine>>) -> Vec<u8> {
    let mut w = HeapWriter::new();
    {
        let mut trace = w.root();
        let mut root = trace.begin_nested(1);
        let mut ms = ModuleSymbols::from_message(root.begin_nested(packet_field::MODULE_SYMBOLS));
        ms.set_path(&m.path);
        if !m.build_id.is_empty() {
            // As hex text, the form Perfetto's symbolizer writes.
            ms.set_build_id(&m.build_id_hex());
        }
        for (&address, lines) in names {
            let mut a = ms.add_address_symbols();
            a.set_address(address);
            for l in lines {
                let mut line = a.add_lines();
                line.set_function_name(&l.function_name);
                if let Some(f) = &l.source_file {
                    line.set_source_file_name(f);
                }
                if l.line != 0 {
                    line.set_line_number(l.line);
                }
            }
        }
    }
    w.finish().unwrap_or_default()
}

/// Runs `symbolize`.
pub fn run(args: &SymbolizeArgs) -> Result<(), CliError> {
    let name = args.trace.display().to_string();
    let bytes = read_input(&args.trace)?;
    let profile = cpu_profile(&name, &bytes)?;
    let mut modules: BTreeMap<Module, BTreeSet<u64>> = BTreeMap::new();
    for f in profile.frames() {
        let Some(m) = f.mapping.and_then(|i| profile.mappings().get(i)) else {
            continue;
        };
        // Kernel frames are named at record time from kallsyms.
        if m.path.is_empty() || m.path == "/kernel" || m.path.starts_with('[') {
            continue;
        }
        modules
            .entry(Module {
                path: m.path.clone(),
                build_id: m.build_id.clone(),
            })
            .or_default()
            .insert(f.rel_pc);
    }
    if modules.is_empty() {
        return Err(CliError::Usage(format!(
            "{name}: no frame of a CPU sample lies in a file mapping: nothing to symbolize"
        )));
    }
    let mut dirs = args.symbol_paths.clone();
    if let Some(p) = std::env::var_os("PERFETTO_BINARY_PATH") {
        dirs.extend(std::env::split_paths(&p));
    }
    let mut out = bytes.clone();
    let (mut found, mut named, mut with_lines, mut addresses) = (0, 0, 0, 0);
    let mut missing = Vec::new();
    for (m, pcs) in &modules {
        addresses += pcs.len();
        let Some((file, elf)) = find_file(m, &dirs, !args.no_local_files) else {
            missing.push(m);
            continue;
        };
        let sym = match ModuleSymbolizer::new(&elf) {
            Ok(s) => s,
            Err(e) => {
                eprintln!("zerotrace symbolize: {}: {e}", file.display());
                missing.push(m);
                continue;
            }
        };
        found += 1;
        let mut names = BTreeMap::new();
        for &pc in pcs {
            let lines = sym.lines(pc);
            if lines.is_empty() {
                continue;
            }
            named += 1;
            with_lines += usize::from(lines.iter().any(|l| l.line != 0));
            names.insert(pc, lines);
        }
        eprintln!(
            "zerotrace symbolize: {} ({}): {} of {} addresses named from {}{}",
            m.path,
            if m.build_id.is_empty() {
                "no build id".to_owned()
            } else {
                m.build_id_hex()
            },
            names.len(),
            pcs.len(),
            file.display(),
            if sym.has_dwarf() {
                ""
            } else {
                " (no DWARF: symbol table only)"
            }
        );
        if !names.is_empty() {
            out.extend_from_slice(&packet(m, &names));
        }
    }
    for m in &missing {
        eprintln!(
            "zerotrace symbolize: {} ({}): no file with this build id found",
            m.path,
            m.build_id_hex()
        );
    }
    eprintln!(
        "zerotrace symbolize: {found} of {} modules found; {named} of {addresses} addresses named, {with_lines} with a source line",
        modules.len()
    );
    if found == 0 {
        return Err(CliError::Usage(format!(
            "no binary or debug file found for any of the {} modules; name a directory with --symbol-path",
            modules.len()
        )));
    }
    write_output(&args.output, &out, false)
}
