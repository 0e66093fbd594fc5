//! Every fixture set of this crate and the project's schemas, through both
//! front ends.

use super::*;

#[test]
fn fixtures() {
    agree_on_fixture_set("fixtures");
}

#[test]
fn fixtures_names() {
    agree_on_fixture_set("fixtures_names");
}

/// Recursion cycles and field enums whose usual name a type holds (issue
/// 47, DataFusion's `Union` next to its `UnionField`, reported with the
/// pure front end; the cause was the naming, which does not depend on the
/// front end): both give the same code, `XField_` where `XField` is taken.
#[test]
fn fixtures_cycles() {
    let parsed = agree_on_fixture_set("fixtures_cycles");
    let code = generated(&parsed);
    let datafusion = code
        .iter()
        .find(|f| f.path.ends_with("fixture/cycles/datafusion.rs"))
        .expect("datafusion.rs generated");
    let text = String::from_utf8_lossy(&datafusion.contents);
    assert!(text.contains("pub enum UnionField_<'a>"));
    assert!(text.contains("MessageFields<'a> for UnionDecoder<'a>"));
}

/// The real-world proto2 file of `fixtures_protoc` (groups, extensions,
/// message sets) and its editions files were protoc's alone before protox
/// and the editions lowering; they no longer are.
#[test]
fn fixtures_protoc() {
    let parsed = agree_on_fixture_set("fixtures_protoc");
    assert!(
        parsed
            .schema
            .files
            .iter()
            .any(|f| f.name == "fixture/gamma/legacy.proto")
    );
}

/// Extension declarations, custom options of every type on every element,
/// groups everywhere, `import public` (twice over) and `import weak`, and
/// defaults in every spelling.
#[test]
fn fixtures_front_ends() {
    let parsed = agree_on_fixture_set("fixtures_front_ends");
    let names: Vec<&str> = parsed
        .schema
        .files
        .iter()
        .map(|f| f.name.as_str())
        .collect();
    for want in [
        "google/protobuf/descriptor.proto",
        "fixture/front/custom_options.proto",
        "fixture/front/declarations.proto",
        "fixture/front/groups.proto",
        "fixture/front/imports.proto",
        "fixture/front/public_root.proto",
        "fixture/front/weak_dep.proto",
        "fixture/front/defaults.proto",
    ] {
        assert!(names.contains(&want), "{want} not among {names:?}");
    }
}

/// What protoc leaves out and the pure front end must leave out too:
/// source-retention options (custom ones, nested ones inside an option's
/// value, extension declarations), an options message emptied by that.
#[test]
fn source_retention_options_are_dropped_as_protoc_drops_them() {
    let parsed = agree_on_fixture_set("fixtures_front_ends");
    let files = descriptors(&parsed);
    let file = |name: &str| files.iter().find(|f| f.name() == name).unwrap();
    let declared = &file("fixture/front/declarations.proto").message_type[0];
    // `declaration` and `verification` both have source retention.
    for range in &declared.extension_range {
        assert!(range.options.is_none(), "{range:?}");
    }
    let annotated = &file("fixture/front/custom_options.proto").message_type[0];
    let options = annotated.options.as_ref().unwrap();
    let unknown = options.special_fields.unknown_fields();
    // (message_source_only) = 50006 is gone, (message_flag) = 50005 stays.
    assert!(unknown.get(50006).is_none());
    assert!(matches!(
        unknown.get(50005),
        Some(UnknownValueRef::Varint(1))
    ));
    // The second (message_list) lost its `note` (field 9): `number: 2` only.
    let list: Vec<_> = unknown
        .iter()
        .filter(|(n, _)| *n == 50003)
        .map(|(_, v)| v)
        .collect();
    assert!(
        list.contains(&UnknownValueRef::LengthDelimited(&[0x08, 2])),
        "{list:?}"
    );
}

#[test]
fn our_schemas() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../protos/proto");
    let inputs = find_proto_files(&root).unwrap();
    assert!(inputs.len() > 40, "{} files", inputs.len());
    agree(&root, &inputs);
}

/// With nothing shared, each front end compiles `descriptor.proto` from its
/// own copy (protox: prost-types' build of it; protoc: its include
/// directory): everything else agrees.
#[test]
fn with_their_own_descriptor_proto_only_its_code_differs() {
    let root = tests_dir().join("fixtures_names");
    let includes = [root.clone()];
    let inputs = find_proto_files(&root).unwrap();
    let pure = compile(&includes, &inputs, FrontEnd::Pure);
    let protoc = compile(&includes, &inputs, FrontEnd::Protoc(None));
    let own = |f: &FileDescriptorProto| !f.name().starts_with("google/protobuf/");
    let mine = |fs: &[FileDescriptorProto]| -> Vec<FileDescriptorProto> {
        fs.iter().filter(|f| own(f)).cloned().collect()
    };
    assert_same_descriptors(&mine(&descriptors(&pure)), &mine(&descriptors(&protoc)));
    let (a, b) = (generated(&pure), generated(&protoc));
    let differing: Vec<String> = a
        .iter()
        .zip(&b)
        .filter(|(x, y)| x.contents != y.contents)
        .map(|(x, _)| x.path.display().to_string())
        .collect();
    assert!(
        differing
            .iter()
            .all(|p| p == "google/protobuf/descriptor.rs"),
        "{differing:?}"
    );
}

// --- What protoc reads and protox 0.10 does not ----------------------------
