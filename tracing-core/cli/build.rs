//! Builds the descriptor set the `zerotrace` command reads text configs and
//! names trace fields with: Perfetto's upstream schema (the `.proto` files
//! of the `perfetto_protos` crate, v51, found through `cargo metadata` by
//! `zerotrace-crate-source`, which downloads it; never copied into this
//! repository) compiled by the
//! vendored `protoc`, with the fields Perfetto added since, which our own
//! schema in `protos/proto` declares, merged into their messages.

use std::collections::{BTreeSet, HashMap};
use std::env;
use std::path::{Path, PathBuf};
use std::process::Command;

use prost::Message;
use prost_types::{DescriptorProto, FileDescriptorProto, FileDescriptorSet};

const UPSTREAM_CRATE: &str = "perfetto_protos";
const UPSTREAM_VERSION: &str = "0.51.1";
/// The roots: every config (TraceConfig and the data source configs it
/// imports), every trace packet, and the service state `query` prints.
const ROOTS: &[&str] = &[
    "protos/perfetto/config/trace_config.proto",
    "protos/perfetto/trace/trace.proto",
    "protos/perfetto/common/tracing_service_state.proto",
];

fn main() {
    let manifest = PathBuf::from(env::var("CARGO_MANIFEST_DIR").expect("manifest dir"));
    let ours = manifest.join("../../protos/proto");
    println!("cargo:rerun-if-changed={}", ours.display());
    println!("cargo:rerun-if-env-changed=ZEROTRACE_PERFETTO_PROTOS_DIR");
    let upstream_root = locate_upstream(&manifest);
    let upstream = compile(&upstream_root, ROOTS);
    let our_files: Vec<String> = proto_files(&ours, &ours);
    let our_refs: Vec<&str> = our_files.iter().map(String::as_str).collect();
    let ours = compile(&ours, &our_refs);
    let merged = merge(upstream, &ours);
    let out = PathBuf::from(env::var("OUT_DIR").expect("OUT_DIR")).join("perfetto_descriptor.bin");
    std::fs::write(&out, merged.encode_to_vec()).expect("write the descriptor set");
}

/// The root of the unpacked upstream crate (it holds `protos/perfetto/...`).
fn locate_upstream(manifest: &Path) -> PathBuf {
    zerotrace_crate_source::crate_source_dir(
        "ZEROTRACE_PERFETTO_PROTOS_DIR",
        manifest,
        UPSTREAM_CRATE,
        UPSTREAM_VERSION,
    )
    .unwrap_or_else(|e| panic!("locating {UPSTREAM_CRATE}: {e}"))
}

/// Every `.proto` under `dir`, relative to `root`, sorted.
fn proto_files(root: &Path, dir: &Path) -> Vec<String> {
    let mut out = Vec::new();
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .expect("read our proto directory")
        .flatten()
        .collect();
    entries.sort_by_key(|e| e.path());
    for e in entries {
        let p = e.path();
        if p.is_dir() {
            out.extend(proto_files(root, &p));
        } else if p.extension().is_some_and(|x| x == "proto") {
            let rel = p.strip_prefix(root).expect("under the root");
            out.push(rel.to_string_lossy().replace('\\', "/"));
        }
    }
    out
}

/// `protoc --include_imports --descriptor_set_out` over `files` in `root`.
fn compile(root: &Path, files: &[&str]) -> FileDescriptorSet {
    let protoc = protoc_bin_vendored::protoc_bin_path().expect("the vendored protoc");
    let out = PathBuf::from(env::var("OUT_DIR").expect("OUT_DIR")).join(format!(
        "set-{}.bin",
        root.file_name().map_or("x".into(), |n| n.to_string_lossy())
    ));
    let status = Command::new(protoc)
        .current_dir(root)
        .arg("-I.")
        .arg("--include_imports")
        .arg(format!("--descriptor_set_out={}", out.display()))
        .args(files)
        .status()
        .expect("run protoc");
    assert!(status.success(), "protoc failed in {}", root.display());
    let bytes = std::fs::read(&out).expect("read the descriptor set");
    FileDescriptorSet::decode(bytes.as_slice()).expect("a descriptor set")
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
                let oneof = ours.oneof_decl.get(i as usize).map(|o| o.name().to_owned());
                f.oneof_index =
                    oneof.map(
                        |name| match up.oneof_decl.iter().position(|o| o.name() == name) {
                            Some(j) => j as i32,
                            None => {
                                up.oneof_decl.push(ours.oneof_decl[i as usize].clone());
                                up.oneof_decl.len() as i32 - 1
                            }
                        },
                    );
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
