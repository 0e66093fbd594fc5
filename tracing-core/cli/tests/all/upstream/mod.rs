//! The upstream Perfetto schema for the tests: where `cargo metadata`
//! unpacked it (as the schema pipeline finds it) and `protoc --encode` over it.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// The root of the unpacked upstream crate (holding `protos/perfetto/...`),
/// as the schema pipeline finds it.
pub fn upstream_root() -> PathBuf {
    zerotrace_schema_pipeline::upstream_root().expect("the upstream schema")
}

/// `protoc --encode=<message> -I<root> <proto>` of `text`: the encoding,
/// or protoc's complaint.
pub fn protoc_encode(
    root: &Path,
    proto: &str,
    message: &str,
    text: &str,
) -> Result<Vec<u8>, String> {
    let protoc = protoc_bin_vendored::protoc_bin_path().expect("the vendored protoc");
    let mut child = Command::new(protoc)
        .current_dir(root)
        .arg(format!("--encode={message}"))
        .arg("-I.")
        .arg(proto)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run protoc");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(text.as_bytes())
        .expect("write to protoc");
    let out = child.wait_with_output().expect("wait for protoc");
    if out.status.success() {
        Ok(out.stdout)
    } else {
        Err(String::from_utf8_lossy(&out.stderr).into_owned())
    }
}
