//! Generates the quick-protobuf and rust-protobuf code the decode bench
//! compares, from the very `.proto` files (`protos/proto`, the closure of
//! `perfetto/trace/trace.proto`) that zerotrace's own decoders and the prost
//! types come from, with each generator used as a library: `pb-rs` for
//! quick-protobuf, `protobuf-codegen` with its pure-Rust parser for
//! rust-protobuf. Neither needs `protoc`.
//!
//! pb-rs 0.10 needs two adaptations, both mechanical and neither changing
//! what is on the wire (see [`quick_protobuf_source`]):
//! - its enum grammar accepts only `NAME = N [deprecated = ..];` entries, so
//!   the `reserved` statements inside the enums of `builtin_clock.proto`,
//!   `clock_snapshot.proto` and `trace_config.proto` are dropped (reserving
//!   a number only forbids declaring it);
//! - it writes one Rust file per *package* and every file here shares
//!   package `perfetto.protos`, so each input file overwrote the previous
//!   one's output (and with `single_module` the per-file modules refer to
//!   each other as `perfetto::protos::X`, which does not resolve); the
//!   closure is therefore concatenated into one `.proto` file of that
//!   package first.
//!
//! Each generator's output is reached through a small wrapper file (in
//! `OUT_DIR`) of `#[path = "..."] pub mod x;` items, because generated
//! files open with inner attributes that `include!` does not accept.

use std::error::Error;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

type BuildResult<T> = Result<T, Box<dyn Error + Send + Sync>>;

/// The file every trace decodes from: `Trace` and `TracePacket` and all
/// they import.
const ROOT_FILE: &str = "perfetto/trace/trace.proto";

/// The package every file of the closure declares.
const PACKAGE: &str = "perfetto.protos";

/// Appends `file` and, depth first, every file it imports (paths relative
/// to `root`) to `out`, each once.
fn closure(root: &Path, file: &str, out: &mut Vec<String>) -> BuildResult<()> {
    if out.iter().any(|f| f == file) {
        return Ok(());
    }
    out.push(file.to_owned());
    let text = std::fs::read_to_string(root.join(file))?;
    for line in text.lines() {
        if let Some(rest) = line.trim().strip_prefix("import ") {
            let name = rest
                .trim()
                .trim_start_matches("public ")
                .trim_start_matches("weak ")
                .trim_end_matches(';')
                .trim()
                .trim_matches('"');
            closure(root, name, out)?;
        }
    }
    Ok(())
}

/// One `.proto` text holding every file of `files` (read from `root`) for
/// pb-rs: a single `syntax` and `package` header, no imports (everything is
/// in this one file), and no `reserved` statements inside enum bodies.
fn quick_protobuf_source(root: &Path, files: &[String]) -> BuildResult<String> {
    let mut merged = format!("syntax = \"proto2\";\npackage {PACKAGE};\n");
    for file in files {
        let text = std::fs::read_to_string(root.join(file))?;
        writeln!(merged, "\n// ---- {file}")?;
        // Whether each open brace opened an enum body.
        let mut braces: Vec<bool> = Vec::new();
        for line in text.lines() {
            let l = line.trim();
            if l.starts_with("syntax ") || l.starts_with("import ") {
                continue;
            }
            if let Some(package) = l.strip_prefix("package ") {
                if package.trim_end_matches(';').trim() != PACKAGE {
                    return Err(format!("{file}: package {package}, not {PACKAGE}").into());
                }
                continue;
            }
            if braces.last().copied().unwrap_or(false) && l.starts_with("reserved ") {
                continue;
            }
            let code = l.split("//").next().unwrap_or("");
            for c in code.chars() {
                match c {
                    '{' => braces.push(code.starts_with("enum ")),
                    '}' => {
                        braces.pop();
                    }
                    _ => {}
                }
            }
            merged.push_str(line);
            merged.push('\n');
        }
    }
    Ok(merged)
}

/// A path as a Rust string literal's contents.
fn literal(path: &Path) -> BuildResult<String> {
    let s = path
        .to_str()
        .ok_or_else(|| format!("{} is not UTF-8", path.display()))?;
    Ok(s.escape_default().to_string())
}

/// quick-protobuf code (borrowed `Cow<'a, str>` strings and bytes) in
/// `out/gen/perfetto/protos.rs`; returns the wrapper's text.
fn quick_protobuf(root: &Path, files: &[String], out: &Path) -> BuildResult<String> {
    let src_dir = out.join("src");
    let gen_dir = out.join("gen");
    for dir in [&src_dir, &gen_dir] {
        if dir.exists() {
            std::fs::remove_dir_all(dir)?;
        }
        std::fs::create_dir_all(dir)?;
    }
    let merged = src_dir.join("perfetto_protos.proto");
    std::fs::write(&merged, quick_protobuf_source(root, files)?)?;
    let configs = pb_rs::ConfigBuilder::new(
        std::slice::from_ref(&merged),
        None,
        Some(&gen_dir),
        std::slice::from_ref(&src_dir),
    )
    .map_err(|e| format!("pb-rs config: {e:?}"))?
    // Borrowed strings and bytes: the zero-copy use of quick-protobuf.
    .dont_use_cow(false)
    // pb-rs leaves `[deprecated = true]` fields out by default; the
    // tasks read TrackEvent's flow_ids_old and terminating_flow_ids_old.
    .add_deprecated_fields(true)
    .owned(false)
    .nostd(false)
    .single_module(false)
    .build();
    pb_rs::types::FileDescriptor::run(&configs).map_err(|e| format!("pb-rs: {e:?}"))?;
    let generated = gen_dir.join("perfetto").join("protos.rs");
    if !generated.is_file() {
        return Err(format!("pb-rs wrote no {}", generated.display()).into());
    }
    Ok(format!(
        "/// Package `perfetto`.\npub mod perfetto {{\n    \
         /// Package `perfetto.protos`, generated by pb-rs.\n    \
         #[path = \"{}\"]\n    pub mod protos;\n}}\n",
        literal(&generated)?
    ))
}

/// rust-protobuf 3 code, one module per `.proto` file, in `out`; returns
/// the wrapper's text.
fn rust_protobuf(root: &Path, files: &[String], out: &Path) -> BuildResult<String> {
    if out.exists() {
        std::fs::remove_dir_all(out)?;
    }
    std::fs::create_dir_all(out)?;
    protobuf_codegen::Codegen::new()
        .pure()
        .include(root)
        .inputs(files.iter().map(|f| root.join(f)))
        .out_dir(out)
        .run()
        .map_err(|e| format!("protobuf-codegen: {e:#}"))?;
    let mod_rs = std::fs::read_to_string(out.join("mod.rs"))?;
    let mut wrapper = String::new();
    for line in mod_rs.lines() {
        let Some(name) = line
            .trim()
            .strip_prefix("pub mod ")
            .and_then(|r| r.strip_suffix(';'))
        else {
            continue;
        };
        writeln!(
            wrapper,
            "/// Generated from the `.proto` file of the same name.\n\
             #[path = \"{}\"]\npub mod {name};",
            literal(&out.join(format!("{name}.rs")))?
        )?;
    }
    if wrapper.is_empty() {
        return Err("protobuf-codegen wrote no modules".into());
    }
    Ok(wrapper)
}

fn main() -> BuildResult<()> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../proto")
        .canonicalize()?;
    println!("cargo:rerun-if-changed={}", root.display());
    let mut files = Vec::new();
    closure(&root, ROOT_FILE, &mut files)?;
    for f in &files {
        println!("cargo:rerun-if-changed={}", root.join(f).display());
    }
    let out = PathBuf::from(std::env::var("OUT_DIR")?);
    let quick = quick_protobuf(&root, &files, &out.join("quick-protobuf"))?;
    std::fs::write(out.join("quick_protobuf.rs"), quick)?;
    let rust = rust_protobuf(&root, &files, &out.join("rust-protobuf"))?;
    std::fs::write(out.join("rust_protobuf.rs"), rust)?;
    Ok(())
}
