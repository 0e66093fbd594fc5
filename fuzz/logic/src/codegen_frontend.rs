//! The code generator's front end (`protozero-codegen`, pure-Rust protox)
//! on arbitrary `.proto` text: generation ends in `Ok` or a
//! `CodegenError`, never a panic; the error is never "the generated code
//! does not parse as Rust" (a generator bug); a positioned parse error in
//! the input points at one of its lines; and generating the same input
//! twice gives the same files.

use protozero_codegen::{CodegenError, Config, Generated};

use crate::support::ScratchDir;

/// The name the input is parsed under (inside a scratch include directory).
const FILE: &str = "fuzz.proto";

/// The `codegen_frontend` target: the input is the text of `fuzz.proto`,
/// the only file in the include directory (it may import itself or the
/// well-known types).
pub fn codegen_frontend(data: &[u8]) {
    let dir = ScratchDir::new("codegen").expect("a scratch directory");
    let file = dir.path().join(FILE);
    std::fs::write(&file, data).expect("write the input .proto");
    let generate = || -> Result<Generated, CodegenError> {
        Config::new()
            .include(dir.path())
            .input(&file)
            .descriptor_set("descriptor.bin")
            .generate()
    };
    match generate() {
        Ok(first) => {
            assert!(
                first.files.len() >= 3,
                "a root file, the input's code and the descriptor set"
            );
            assert!(first.file("mod.rs").is_some(), "the root file is there");
            let again = generate().expect("what generated once generates again");
            assert!(first == again, "generating twice gave different files");
        }
        Err(e) => check_error(data, &e),
    }
}

/// What an error for a parseable or unparseable input may be.
fn check_error(data: &[u8], e: &CodegenError) {
    let shown = e.to_string();
    match e {
        CodegenError::Format { .. } => panic!("a generator bug: {shown}"),
        CodegenError::NoInputs | CodegenError::Protoc { .. } | CodegenError::Io { .. } => {
            panic!("not an error of the input: {shown}")
        }
        CodegenError::PureParse { file, line, .. } if file.ends_with(FILE) => {
            // The line the parser names is one of the input's (or the end).
            let lines = data.split(|&b| b == b'\n').count();
            let line = usize::try_from(*line).unwrap_or(usize::MAX);
            assert!(
                (1..=lines).contains(&line),
                "line {line} of a {lines}-line input: {shown}"
            );
        }
        _ => {}
    }
}
