//! The full descriptor set (`tracing-core/trace-processor/src/generated`):
//! Perfetto's upstream schema from [`DESCRIPTOR_ROOTS`] compiled by
//! Google's `protoc` (vendored), with the fields Perfetto added since v51,
//! which our schemas in `protos/proto` declare, merged into their
//! messages. `zerotrace` parses text configs and names trace fields with it.

use std::collections::{BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::process::Command;

use prost::Message;
use prost_types::{DescriptorProto, FileDescriptorProto, FileDescriptorSet};
use protozero_codegen::{Generated, GeneratedFile};

use crate::{
    DESCRIPTOR_FILE, DESCRIPTOR_ROOTS, PipelineError, TRACK_EVENT_DESCRIPTOR_FILE,
    TRACK_EVENT_DESCRIPTOR_ROOTS, WINSCOPE_DESCRIPTOR_FILE, WINSCOPE_DESCRIPTOR_ROOTS,
};

/// Upstream's roots merged with every file of `ours`.
pub(crate) fn generate(upstream_root: &Path, ours: &Path) -> Result<Generated, PipelineError> {
    let upstream = compile(upstream_root, DESCRIPTOR_ROOTS)?;
    let mut our_files = Vec::new();
    proto_files(ours, ours, &mut our_files)?;
    let our_refs: Vec<&str> = our_files.iter().map(String::as_str).collect();
    let ours = compile(ours, &our_refs)?;
    let merged = merge(upstream, &ours);
    Ok(Generated {
        files: vec![GeneratedFile {
            path: PathBuf::from(DESCRIPTOR_FILE),
            contents: merged.encode_to_vec(),
        }],
    })
}

/// The trace processor's sets: the Winscope set, upstream's
/// [`WINSCOPE_DESCRIPTOR_ROOTS`] with their imports, as `protoc` compiles
/// them, with the fields Android added since v51 that `newer` declares
/// (`protos/winscope_newer`) merged in; and the TrackEvent set, upstream's
/// [`TRACK_EVENT_DESCRIPTOR_ROOTS`] with their imports.
pub(crate) fn generate_trace_processor(
    upstream_root: &Path,
    newer: &Path,
) -> Result<Generated, PipelineError> {
    let upstream = compile(upstream_root, WINSCOPE_DESCRIPTOR_ROOTS)?;
    let mut newer_files = Vec::new();
    proto_files(newer, newer, &mut newer_files)?;
    let refs: Vec<&str> = newer_files.iter().map(String::as_str).collect();
    let set = merge(upstream, &compile(newer, &refs)?);
    let track_event = compile(upstream_root, TRACK_EVENT_DESCRIPTOR_ROOTS)?;
    Ok(Generated {
        files: vec![
            GeneratedFile {
                path: PathBuf::from(WINSCOPE_DESCRIPTOR_FILE),
                contents: set.encode_to_vec(),
            },
            GeneratedFile {
                path: PathBuf::from(TRACK_EVENT_DESCRIPTOR_FILE),
                contents: track_event.encode_to_vec(),
            },
        ],
    })
}

/// Appends every `.proto` under `dir`, relative to `root`, sorted.
fn proto_files(root: &Path, dir: &Path, out: &mut Vec<String>) -> Result<(), PipelineError> {
    let io = |source| PipelineError::Io {
        path: dir.to_path_buf(),
        source,
    };
    let mut entries = std::fs::read_dir(dir)
        .map_err(io)?
        .collect::<Result<Vec<_>, _>>()
        .map_err(io)?;
    entries.sort_by_key(|e| e.path());
    for e in entries {
        let p = e.path();
        if p.is_dir() {
            proto_files(root, &p, out)?;
        } else if p.extension().is_some_and(|x| x == "proto") {
            if let Ok(rel) = p.strip_prefix(root) {
                out.push(rel.to_string_lossy().replace('\\', "/"));
            }
        }
    }
    Ok(())
}

/// `protoc --include_imports --descriptor_set_out` over `files` in `root`.
fn compile(root: &Path, files: &[&str]) -> Result<FileDescriptorSet, PipelineError> {
    let protoc = protoc_bin_vendored::protoc_bin_path()
        .map_err(|e| PipelineError::Protoc(format!("the vendored protoc: {e}")))?;
    let dir = tempfile::tempdir().map_err(|source| PipelineError::Io {
        path: std::env::temp_dir(),
        source,
    })?;
    let out = dir.path().join("set.bin");
    let output = Command::new(&protoc)
        .current_dir(root)
        .arg("-I.")
        .arg("--include_imports")
        .arg(format!("--descriptor_set_out={}", out.display()))
        .args(files)
        .output()
        .map_err(|e| PipelineError::Protoc(format!("running {}: {e}", protoc.display())))?;
    if !output.status.success() {
        return Err(PipelineError::Protoc(format!(
            "{} in {}: {}",
            output.status,
            root.display(),
            String::from_utf8_lossy(&output.stderr).trim()
        )));
    }
    let bytes = std::fs::read(&out).map_err(|source| PipelineError::Io {
        path: out.clone(),
        source,
    })?;
    FileDescriptorSet::decode(bytes.as_slice())
        .map_err(|e| PipelineError::Protoc(format!("its descriptor set: {e}")))
}

/// Full names (`.perfetto.protos.X.Y`) of every message and enum in `set`.
fn type_names(set: &FileDescriptorSet) -> BTreeSet<String> {
    fn walk(prefix: &str, msgs: &[DescriptorProto], out: &mut BTreeSet<String>) {
        for m in msgs {
            let name = format!("{prefix}.{}", m.name());
            for e in &m.enum_type {
                out.insert(format!("{name}.{}", e.name()));
            }
            walk(&name, &m.nested_type, out);
            out.insert(name);
        }
    }
    let mut out = BTreeSet::new();
    for f in &set.file {
        let prefix = format!(".{}", f.package());
        for e in &f.enum_type {
            out.insert(format!("{prefix}.{}", e.name()));
        }
        walk(&prefix, &f.message_type, &mut out);
    }
    out
}

/// Adds to `up` (recursively) the fields, nested messages and enums of
/// `ours` it lacks; returns how many were added.
fn merge_message(
    up: &mut DescriptorProto,
    ours: &DescriptorProto,
    known: &BTreeSet<String>,
    name: &str,
) -> usize {
    let mut added = 0;
    for f in &ours.field {
        let clash = up
            .field
            .iter()
            .any(|u| u.number() == f.number() || u.name() == f.name());
        if !clash {
            let mut f = f.clone();
            // A oneof member joins the upstream oneof of the same name
            // (declared there if upstream has none).
            if let Some(i) = f.oneof_index {
                let decl = usize::try_from(i).ok().and_then(|i| ours.oneof_decl.get(i));
                f.oneof_index = decl.map(|decl| {
                    match up.oneof_decl.iter().position(|o| o.name() == decl.name()) {
                        Some(j) => j as i32,
                        None => {
                            up.oneof_decl.push(decl.clone());
                            up.oneof_decl.len() as i32 - 1
                        }
                    }
                });
            }
            up.field.push(f);
            added += 1;
        }
    }
    for e in &ours.enum_type {
        if !known.contains(&format!("{name}.{}", e.name())) {
            up.enum_type.push(e.clone());
            added += 1;
        }
    }
    for n in &ours.nested_type {
        let nested = format!("{name}.{}", n.name());
        if let Some(u) = up.nested_type.iter_mut().find(|u| u.name() == n.name()) {
            added += merge_message(u, n, known, &nested);
        } else {
            up.nested_type.push(n.clone());
            added += 1;
        }
    }
    added
}

/// Upstream, with the fields and types only our schema has merged in: new
/// fields (and nested types) into the upstream messages they extend, new
/// top-level types into the upstream file of the same path (ours are
/// `perfetto/...`, upstream's `protos/perfetto/...`), or the whole file when
/// upstream has none; then every file imports the files of the types its
/// fields use.
fn merge(mut upstream: FileDescriptorSet, ours: &FileDescriptorSet) -> FileDescriptorSet {
    let known = type_names(&upstream);
    let mut index: HashMap<String, (usize, usize)> = HashMap::new();
    for (fi, f) in upstream.file.iter().enumerate() {
        for (mi, m) in f.message_type.iter().enumerate() {
            index.insert(format!(".{}.{}", f.package(), m.name()), (fi, mi));
        }
    }
    let mut added_files = Vec::new();
    for f in &ours.file {
        // Only the config and trace schemas (not our IPC messages).
        if f.package() != "perfetto.protos" || f.name().starts_with("perfetto/ipc/") {
            continue;
        }
        let mapped = format!("protos/{}", f.name());
        let target = upstream.file.iter().position(|u| u.name() == mapped);
        let mut new_file = FileDescriptorProto {
            message_type: Vec::new(),
            enum_type: Vec::new(),
            ..f.clone()
        };
        new_file.name = Some(mapped);
        for m in &f.message_type {
            let name = format!(".{}.{}", f.package(), m.name());
            if let Some(&(fi, mi)) = index.get(&name) {
                merge_message(&mut upstream.file[fi].message_type[mi], m, &known, &name);
            } else if let Some(t) = target {
                upstream.file[t].message_type.push(m.clone());
            } else {
                new_file.message_type.push(m.clone());
            }
        }
        for e in &f.enum_type {
            if known.contains(&format!(".{}.{}", f.package(), e.name())) {
                continue;
            }
            match target {
                Some(t) => upstream.file[t].enum_type.push(e.clone()),
                None => new_file.enum_type.push(e.clone()),
            }
        }
        if target.is_none() && !(new_file.message_type.is_empty() && new_file.enum_type.is_empty())
        {
            added_files.push(new_file);
        }
    }
    upstream.file.extend(added_files);
    fix_imports(&mut upstream);
    upstream
}

/// Makes every file import exactly the files that define the types its
/// fields use (besides itself), in the set's order.
fn fix_imports(set: &mut FileDescriptorSet) {
    fn defined(
        prefix: &str,
        msgs: &[DescriptorProto],
        file: usize,
        out: &mut HashMap<String, usize>,
    ) {
        for m in msgs {
            let name = format!("{prefix}.{}", m.name());
            for e in &m.enum_type {
                out.insert(format!("{name}.{}", e.name()), file);
            }
            defined(&name, &m.nested_type, file, out);
            out.insert(name, file);
        }
    }
    fn used(msgs: &[DescriptorProto], out: &mut BTreeSet<String>) {
        for m in msgs {
            for f in &m.field {
                if !f.type_name().is_empty() {
                    out.insert(f.type_name().to_owned());
                }
            }
            used(&m.nested_type, out);
        }
    }
    let mut owner = HashMap::new();
    for (i, f) in set.file.iter().enumerate() {
        let prefix = format!(".{}", f.package());
        for e in &f.enum_type {
            owner.insert(format!("{prefix}.{}", e.name()), i);
        }
        defined(&prefix, &f.message_type, i, &mut owner);
    }
    let names: Vec<String> = set.file.iter().map(|f| f.name().to_owned()).collect();
    for (i, f) in set.file.iter_mut().enumerate() {
        let mut types = BTreeSet::new();
        used(&f.message_type, &mut types);
        let mut deps: BTreeSet<usize> = types
            .iter()
            .filter_map(|t| owner.get(t).copied())
            .filter(|&o| o != i)
            .collect();
        // Keep upstream's own imports too (options, public re-exports).
        for d in &f.dependency {
            if let Some(j) = names.iter().position(|n| n == d) {
                deps.insert(j);
            }
        }
        f.dependency = deps.into_iter().map(|j| names[j].clone()).collect();
        f.public_dependency.clear();
        f.weak_dependency.clear();
    }
}
