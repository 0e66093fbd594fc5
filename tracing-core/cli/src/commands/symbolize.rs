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
//! ours, and Perfetto's UI, then shows the names. A Firefox profiler
//! profile (samply's) is named in place instead (`symbolize_gecko.rs`).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use protozero::HeapWriter;
use zerotrace_protos::protos::ModuleSymbols;
use zerotrace_protos::upstream_tables::packet_field;

use zerotrace_profiling::view::{ModuleSymbolizer, SymbolLine, build_id_of, image_base_of};

use super::symbolize_gecko::{self, Lib};
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
    if let Some(profile) = gecko_profile(&bytes) {
        return run_gecko(args, &name, profile);
    }
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

/// The file's Firefox profiler profile (plain or gzip JSON), if it is one.
fn gecko_profile(bytes: &[u8]) -> Option<serde_json::Value> {
    let text: std::borrow::Cow<'_, [u8]> = if bytes.starts_with(&[0x1f, 0x8b]) {
        let mut out = Vec::new();
        let mut gz = std::io::Read::take(flate2::read::MultiGzDecoder::new(bytes), MAX_FILE);
        std::io::Read::read_to_end(&mut gz, &mut out).ok()?;
        out.into()
    } else {
        bytes.into()
    };
    let first = text.iter().find(|b| !b.is_ascii_whitespace())?;
    if *first != b'{' {
        return None;
    }
    let v: serde_json::Value = serde_json::from_slice(&text).ok()?;
    symbolize_gecko::is_gecko_profile(&v).then_some(v)
}

/// `symbolize` of a Firefox profiler profile: its libraries' binaries
/// name its frames, and the profile is written back as JSON.
fn run_gecko(
    args: &SymbolizeArgs,
    name: &str,
    mut profile: serde_json::Value,
) -> Result<(), CliError> {
    let mut dirs = args.symbol_paths.clone();
    if let Some(p) = std::env::var_os("PERFETTO_BINARY_PATH") {
        dirs.extend(std::env::split_paths(&p));
    }
    let libs: Vec<Lib> = symbolize_gecko::libs(&profile);
    // Each library's file, read once: (its bytes, its image base).
    let files: Vec<Option<(PathBuf, Vec<u8>, u64)>> = libs
        .iter()
        .map(|l| {
            let m = Module {
                path: l.path.clone(),
                build_id: l.code_id.clone(),
            };
            let (path, bytes) = find_file(&m, &dirs, !args.no_local_files)?;
            let base = image_base_of(&bytes)?;
            Some((path, bytes, base))
        })
        .collect();
    let symbolizers: Vec<Option<(ModuleSymbolizer<'_>, u64)>> = files
        .iter()
        .zip(&libs)
        .map(|(f, l)| {
            let (path, bytes, base) = f.as_ref()?;
            match ModuleSymbolizer::new(bytes) {
                Ok(s) => {
                    eprintln!(
                        "zerotrace symbolize: {}: reading {}",
                        l.path,
                        path.display()
                    );
                    Some((s, *base))
                }
                Err(e) => {
                    eprintln!("zerotrace symbolize: {}: {e}", path.display());
                    None
                }
            }
        })
        .collect();
    for (l, s) in libs.iter().zip(&symbolizers) {
        if s.is_none() {
            eprintln!(
                "zerotrace symbolize: {} ({}): no file with this build id found",
                l.path,
                String::from_utf8_lossy(&l.code_id)
            );
        }
    }
    let named = symbolize_gecko::symbolize(&mut profile, |lib, address| {
        symbolizers
            .get(lib)
            .and_then(Option::as_ref)
            .map(|(s, base)| s.lines(address.wrapping_add(*base)))
            .unwrap_or_default()
    })
    .map_err(|e| CliError::Usage(format!("{name}: {e}")))?;
    eprintln!(
        "zerotrace symbolize: {} of {} native frames named ({} inlined frames added); {} of {} libraries found",
        named.named,
        named.frames,
        named.inlined,
        symbolizers.iter().filter(|s| s.is_some()).count(),
        libs.len()
    );
    if named.named == 0 {
        return Err(CliError::Usage(format!(
            "{name}: no frame was named; name a directory with the profile's binaries with --symbol-path"
        )));
    }
    let out = symbolize_gecko::to_json(&profile)
        .map_err(|e| CliError::Usage(format!("{name}: writing the profile: {e}")))?;
    write_output(&args.output, &out, false)
}
