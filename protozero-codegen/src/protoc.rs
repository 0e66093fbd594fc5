//! The `protoc` front end: Google's compiler writes the descriptors
//! (`--include_imports --descriptor_set_out`), which are read back.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::Command;

use protobuf::Message as _;
use protobuf::descriptor::{FileDescriptorProto, FileDescriptorSet};

use crate::error::CodegenError;

/// Runs `protoc` (`explicit`, else `$PROTOC`, else the vendored one) on
/// `inputs`; the descriptors of every file, imports first.
pub(crate) fn compile(
    explicit: Option<&Path>,
    includes: &[PathBuf],
    inputs: &[PathBuf],
) -> Result<Vec<FileDescriptorProto>, CodegenError> {
    let protoc = protoc_path(explicit)?;
    let dir = tempfile::tempdir().map_err(|source| CodegenError::Io {
        path: std::env::temp_dir(),
        source,
    })?;
    let out = dir.path().join("descriptor_set.pb");
    let mut cmd = Command::new(&protoc);
    for include in includes {
        let mut arg = OsString::from("--proto_path=");
        arg.push(include);
        cmd.arg(arg);
    }
    let mut arg = OsString::from("--descriptor_set_out=");
    arg.push(&out);
    cmd.arg("--include_imports").arg(arg).args(inputs);
    let output = cmd.output().map_err(|e| CodegenError::Protoc {
        message: format!("running {}: {e}", protoc.display()),
    })?;
    if !output.status.success() {
        // protoc's own diagnostics (`file:line:column: message` lines).
        let stderr = String::from_utf8_lossy(&output.stderr);
        return Err(CodegenError::Parse {
            message: match stderr.trim() {
                "" => format!("{} exited with {}", protoc.display(), output.status),
                text => text.to_owned(),
            },
        });
    }
    let bytes = std::fs::read(&out).map_err(|source| CodegenError::Io {
        path: out.clone(),
        source,
    })?;
    let set = FileDescriptorSet::parse_from_bytes(&bytes).map_err(|e| CodegenError::Protoc {
        message: format!("protoc's descriptor set does not decode: {e}"),
    })?;
    Ok(set.file)
}

/// The `protoc` to run: `explicit`, else `$PROTOC`, else the vendored one.
fn protoc_path(explicit: Option<&Path>) -> Result<PathBuf, CodegenError> {
    if let Some(p) = explicit {
        return Ok(p.to_path_buf());
    }
    if let Some(p) = std::env::var_os("PROTOC") {
        return Ok(PathBuf::from(p));
    }
    vendored_protoc()
}

#[cfg(feature = "vendored-protoc")]
fn vendored_protoc() -> Result<PathBuf, CodegenError> {
    protoc_bin_vendored::protoc_bin_path().map_err(|e| CodegenError::Protoc {
        message: e.to_string(),
    })
}

#[cfg(not(feature = "vendored-protoc"))]
fn vendored_protoc() -> Result<PathBuf, CodegenError> {
    Err(CodegenError::Protoc {
        message: "no protoc given, $PROTOC is unset and feature `vendored-protoc` is off"
            .to_owned(),
    })
}
