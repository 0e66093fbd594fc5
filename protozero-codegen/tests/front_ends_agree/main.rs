//! The pure front end (protox) and the protoc front end (the vendored
//! `protoc`, the oracle) agree: for every fixture set of this crate and
//! for the project's schemas (`protos/proto`), both compile the same
//! files to (a) the same descriptors, field for field, unknown fields (the
//! custom options) included, and (b) byte-identical generated code.
//!
//! Source info is cleared on both sides (neither front end asks for it),
//! and nothing else: `json_name`, `syntax`, defaults, options (the empty
//! options message protoc gives a method written with a body among them)
//! and the file order must match as they are.
//!
//! Both front ends see protoc's include directory (from
//! `protoc-bin-vendored`): its `descriptor.proto` (with one-number extension
//! ranges with options, a form the pure front end respells for protox), its
//! feature sets and well-known types. Left to themselves, each front end
//! brings its own copy and only the code generated for
//! `google/protobuf/*.proto` differs (`with_their_own_descriptor_proto_...`).
//! Editions files agree like the others; editions mistakes `protoc` refuses
//! are refused by the pure front end too, at their line.

use std::fs;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use protobuf::descriptor::{FileDescriptorProto, FileDescriptorSet};
use protobuf::{Message as _, MessageField, UnknownValueRef};
use protozero_codegen::model::{FieldDef, MessageDef, Presence, ProtoFile, Syntax};
use protozero_codegen::parse::{FrontEnd, Parsed, find_proto_files, parse_files};
use protozero_codegen::{CodegenError, DEFAULT_HEADER, GeneratedFile, generate_rust};

mod editions;
mod fixtures;
mod protox_gaps;

fn tests_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests")
}

/// `protoc`'s include directory (from `protoc-bin-vendored`): its
/// `descriptor.proto`, feature sets and well-known types, which both front
/// ends then read.
fn shared_wkt() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| protoc_bin_vendored::include_path().unwrap())
}

fn compile(includes: &[PathBuf], inputs: &[PathBuf], front_end: FrontEnd) -> Parsed {
    parse_files(includes, inputs, &front_end)
        .unwrap_or_else(|e| panic!("{front_end:?} on {inputs:?}: {e}"))
}

/// A run's descriptors, decoded from the encoded set the API hands out.
fn descriptors(parsed: &Parsed) -> Vec<FileDescriptorProto> {
    let bytes = parsed.descriptors.to_bytes().unwrap();
    FileDescriptorSet::parse_from_bytes(&bytes).unwrap().file
}

/// The descriptors as compared: source info cleared.
fn normalised(files: &[FileDescriptorProto]) -> Vec<FileDescriptorProto> {
    let mut files = files.to_vec();
    for f in &mut files {
        f.source_code_info = MessageField::none();
    }
    files
}

/// A readable account of how two descriptors differ: the first differing
/// line of their text forms, with context.
fn first_difference(a: &FileDescriptorProto, b: &FileDescriptorProto) -> String {
    let (ta, tb) = (
        protobuf::text_format::print_to_string_pretty(a),
        protobuf::text_format::print_to_string_pretty(b),
    );
    let (la, lb): (Vec<&str>, Vec<&str>) = (ta.lines().collect(), tb.lines().collect());
    let at = la
        .iter()
        .zip(&lb)
        .position(|(x, y)| x != y)
        .unwrap_or(la.len().min(lb.len()));
    let from = at.saturating_sub(8);
    format!(
        "pure:\n{}\nprotoc:\n{}\n(unknown fields differ if the text is the same)",
        la[from..(at + 4).min(la.len())].join("\n"),
        lb[from..(at + 4).min(lb.len())].join("\n"),
    )
}

fn assert_same_descriptors(pure: &[FileDescriptorProto], protoc: &[FileDescriptorProto]) {
    let names = |fs: &[FileDescriptorProto]| -> Vec<String> {
        fs.iter().map(|f| f.name().to_owned()).collect()
    };
    assert_eq!(names(pure), names(protoc), "files or their order differ");
    for (a, b) in normalised(pure).iter().zip(&normalised(protoc)) {
        assert!(a == b, "{} differs:\n{}", a.name(), first_difference(a, b));
    }
}

fn generated(parsed: &Parsed) -> Vec<GeneratedFile> {
    generate_rust(
        &parsed.schema,
        DEFAULT_HEADER,
        "mod.rs",
        Some("descriptor_set.bin"),
    )
    .unwrap()
}

fn assert_same_code(pure: &Parsed, protoc: &Parsed) {
    let (a, b) = (generated(pure), generated(protoc));
    let paths =
        |g: &[GeneratedFile]| -> Vec<PathBuf> { g.iter().map(|f| f.path.clone()).collect() };
    assert_eq!(paths(&a), paths(&b));
    for (x, y) in a.iter().zip(&b) {
        assert!(
            x.contents == y.contents,
            "{} differs between the front ends",
            x.path.display()
        );
        let text = std::str::from_utf8(&x.contents).unwrap();
        syn::parse_file(text).unwrap_or_else(|e| panic!("{}: {e}", x.path.display()));
    }
}

/// Compiles `inputs` under `root` (after the shared `descriptor.proto`)
/// with both front ends and checks that they agree; the pure result.
fn agree(root: &Path, inputs: &[PathBuf]) -> Parsed {
    assert!(!inputs.is_empty());
    let includes = [shared_wkt().to_path_buf(), root.to_path_buf()];
    let pure = compile(&includes, inputs, FrontEnd::Pure);
    let protoc = compile(&includes, inputs, FrontEnd::Protoc(None));
    assert_same_descriptors(&descriptors(&pure), &descriptors(&protoc));
    assert_same_code(&pure, &protoc);
    pure
}

fn agree_on_fixture_set(set: &str) -> Parsed {
    let root = tests_dir().join(set);
    let inputs: Vec<PathBuf> = find_proto_files(&root).unwrap().into_iter().collect();
    agree(&root, &inputs)
}

const EDITIONS: &[(&str, u32)] = &[
    ("fixture/delta/editions.proto", 2023),
    ("fixture/epsilon/features2023.proto", 2023),
    ("fixture/epsilon/features2024.proto", 2024),
];

/// Writes `files` (name, text) into a fresh include directory.
fn snippet_dir(files: &[(&str, &str)]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for (name, text) in files {
        let path = dir.path().join(name);
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(path, text).unwrap();
    }
    dir
}

/// The model of `name` (under `fixtures_protoc`) from the protoc front
/// end, with `(message.field, utf8_validation)` read from the descriptors
/// (the model has no use for it).
fn protoc_file(name: &str) -> (ProtoFile, Vec<(String, u64)>) {
    let root = tests_dir().join("fixtures_protoc");
    let parsed = compile(
        std::slice::from_ref(&root),
        &[root.join(name)],
        FrontEnd::Protoc(None),
    );
    let utf8 = descriptors(&parsed)
        .iter()
        .find(|f| f.name() == name)
        .map(utf8_validations)
        .unwrap();
    let file = parsed
        .schema
        .files
        .into_iter()
        .find(|f| f.name == name)
        .unwrap();
    (file, utf8)
}

/// `(message.field, utf8_validation)` for every field whose own `features`
/// set `utf8_validation` (`FeatureSet` field 4: 2 = VERIFY, 3 = NONE).
fn utf8_validations(f: &FileDescriptorProto) -> Vec<(String, u64)> {
    let mut out = Vec::new();
    for m in &f.message_type {
        for field in &m.field {
            let Some(o) = field.options.as_ref() else {
                continue;
            };
            // `FieldOptions.features` = 21.
            if let Some(UnknownValueRef::LengthDelimited(set)) =
                o.special_fields.unknown_fields().get(21)
            {
                let mut i = 0;
                while i + 1 < set.len() {
                    if set[i] == 4 << 3 {
                        out.push((
                            format!("{}.{}", m.name(), field.name()),
                            u64::from(set[i + 1]),
                        ));
                    }
                    i += 2;
                }
            }
        }
    }
    out
}

fn message<'f>(file: &'f ProtoFile, name: &str) -> &'f MessageDef {
    file.messages.iter().find(|m| m.name == name).unwrap()
}

fn nested<'m>(m: &'m MessageDef, name: &str) -> &'m MessageDef {
    m.messages.iter().find(|n| n.name == name).unwrap()
}

fn field<'m>(m: &'m MessageDef, name: &str) -> &'m FieldDef {
    m.fields.iter().find(|f| f.name == name).unwrap()
}

/// (presence, packed, delimited) of `message.field`.
fn shape(file: &ProtoFile, message_name: &str, field_name: &str) -> (Presence, bool, bool) {
    let f = field(message(file, message_name), field_name);
    (f.presence, f.packed, f.delimited)
}

fn closed(file: &ProtoFile, enum_name: &str) -> bool {
    file.enums
        .iter()
        .find(|e| e.name == enum_name)
        .unwrap()
        .closed
}
