//! Generates Rust for `../fixtures` and `../fixtures_names` (pure front
//! end, protox) and `../fixtures_protoc` (protoc front end: its editions
//! files are beyond protox 0.10; its proto2 file of groups, extensions and
//! message sets, which only protoc read before protox, stays with them) into
//! `OUT_DIR`, the way a user's build script would, so this crate proves the
//! generated code compiles.

use std::error::Error;
use std::path::PathBuf;

fn main() -> Result<(), Box<dyn Error>> {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../fixtures");
    println!("cargo::rerun-if-changed={}", root.display());
    let out = PathBuf::from(std::env::var_os("OUT_DIR").ok_or("OUT_DIR is not set")?);
    protozero_codegen::Config::new()
        .include(&root)
        .inputs_under(&root)?
        .descriptor_set("descriptor_set.bin")
        .generate()?
        .write_to(out.join("fixtures"))?;
    let names_root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../fixtures_names");
    println!("cargo::rerun-if-changed={}", names_root.display());
    protozero_codegen::Config::new()
        .include(&names_root)
        .inputs_under(&names_root)?
        .generate()?
        .write_to(out.join("names_fixtures"))?;
    let protoc_root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../fixtures_protoc");
    println!("cargo::rerun-if-changed={}", protoc_root.display());
    protozero_codegen::Config::new()
        .front_end(protozero_codegen::FrontEnd::Protoc(None))
        .include(&protoc_root)
        .inputs_under(&protoc_root)?
        .generate()?
        .write_to(out.join("protoc_fixtures"))?;
    Ok(())
}
