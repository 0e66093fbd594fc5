//! Generates Rust for `../fixtures`, `../fixtures_names`,
//! `../fixtures_protoc` (editions files, and a proto2 file of groups,
//! extensions and message sets, which only protoc read once) and
//! `../fixtures_cycles` (recursion cycles, field enum names taken) with the
//! default, pure front end into `OUT_DIR`, the way a user's build script
//! would, so this crate proves the generated code compiles (and its tests
//! check it against `protoc --encode`/`--decode`). The two front ends give
//! the same code for all of them (`tests/front_ends_agree/`).

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
        .include(&protoc_root)
        .inputs_under(&protoc_root)?
        .generate()?
        .write_to(out.join("protoc_fixtures"))?;
    let cycles_root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../fixtures_cycles");
    println!("cargo::rerun-if-changed={}", cycles_root.display());
    protozero_codegen::Config::new()
        .include(&cycles_root)
        .inputs_under(&cycles_root)?
        .generate()?
        .write_to(out.join("cycles_fixtures"))?;
    Ok(())
}
