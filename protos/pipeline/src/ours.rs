//! Our own schemas (`protos/proto`, every file), parsed: the model the
//! generator emits with the upstream set, and their descriptor set (ours
//! alone: the service reads our `TraceConfig`'s declared fields from it).

use std::path::Path;

use protozero_codegen::{Schema, parse};

use crate::{PipelineError, front_end};

/// Parses every schema under `proto_dir`: the model and the encoded
/// descriptor set of those files.
pub(crate) fn parse(proto_dir: &Path, protoc: bool) -> Result<(Schema, Vec<u8>), PipelineError> {
    let inputs = parse::find_proto_files(proto_dir)?;
    let parsed = parse::parse_files(&[proto_dir.to_path_buf()], &inputs, &front_end(protoc))?;
    Ok((parsed.schema, parsed.descriptors.to_bytes()?))
}
