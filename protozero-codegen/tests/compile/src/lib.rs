//! The code `protozero-codegen` generates for its fixture schemas
//! (`protozero-codegen/tests/fixtures`), compiled from `OUT_DIR`. The tests in
//! `tests/` write every construct with the generated writers and read it back
//! with the generated decoders.

include!(concat!(env!("OUT_DIR"), "/fixtures/mod.rs"));

/// The code generated (with the protoc front end) for
/// `protozero-codegen/tests/fixtures_protoc`: groups, extensions, message
/// sets, maps, editions features, name clashes.
pub mod real_world {
    include!(concat!(env!("OUT_DIR"), "/protoc_fixtures/mod.rs"));
}

/// The code generated for `protozero-codegen/tests/fixtures_names`: file
/// names with dots and dashes, names that are Rust keywords or start with
/// an underscore and a digit.
pub mod names {
    include!(concat!(env!("OUT_DIR"), "/names_fixtures/mod.rs"));
}

/// The code generated for `protozero-codegen/tests/fixtures_cycles`:
/// messages in recursion cycles (through oneofs, maps, repeated and nested
/// messages, groups) and messages whose field enum's name `XField` another
/// type holds (issue 47: DataFusion's `Union` next to its `UnionField`).
pub mod cycles {
    include!(concat!(env!("OUT_DIR"), "/cycles_fixtures/mod.rs"));
}
