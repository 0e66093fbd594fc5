//! [`DescriptorSet`]: the descriptors a front end compiled, behind a type of
//! our own. The crate reads descriptors with the `protobuf` library, a
//! private dependency: were its `FileDescriptorProto` in our API, every
//! major release of that library would be a breaking release of ours, and
//! callers would have to use its version. They get the encoded
//! `google.protobuf.FileDescriptorSet` instead, which any protobuf library
//! decodes.

use protobuf::Message as _;
use protobuf::descriptor::{FileDescriptorProto, FileDescriptorSet};

use crate::error::CodegenError;

/// The descriptors of every file one run loaded (the inputs and everything
/// they import), imports first: what [`crate::Config::descriptor_set`]
/// writes.
///
/// Opaque on purpose: [`DescriptorSet::to_bytes`] gives the binary
/// `google.protobuf.FileDescriptorSet`, to decode with any protobuf
/// library (`prost-types`, `protobuf`, ...), and
/// [`DescriptorSet::file_names`] the files it holds.
#[derive(Debug, Clone)]
pub struct DescriptorSet {
    /// The descriptors as a front end produced them, imports first.
    files: Vec<FileDescriptorProto>,
}

impl DescriptorSet {
    /// Wraps a front end's descriptors (imports first).
    pub(crate) fn new(files: Vec<FileDescriptorProto>) -> Self {
        DescriptorSet { files }
    }

    /// How many files the set holds.
    pub fn len(&self) -> usize {
        self.files.len()
    }

    /// Whether the set holds no file.
    pub fn is_empty(&self) -> bool {
        self.files.is_empty()
    }

    /// The files' names, as found under their include directory (e.g.
    /// `perfetto/trace/trace.proto`), imports first.
    pub fn file_names(&self) -> impl ExactSizeIterator<Item = &str> + '_ {
        self.files.iter().map(|f| f.name())
    }

    /// The set encoded as a binary `google.protobuf.FileDescriptorSet`, as
    /// `protoc --include_imports --descriptor_set_out` writes one (without
    /// source code info).
    pub fn to_bytes(&self) -> Result<Vec<u8>, CodegenError> {
        let mut set = FileDescriptorSet::new();
        set.file = self.files.clone();
        set.write_to_bytes().map_err(|e| CodegenError::Descriptor {
            message: e.to_string(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(name: &str) -> FileDescriptorProto {
        let mut f = FileDescriptorProto::new();
        f.set_name(name.to_owned());
        f
    }

    #[test]
    fn names_and_bytes_keep_the_order() {
        let set = DescriptorSet::new(vec![file("a/dep.proto"), file("b/main.proto")]);
        assert_eq!(set.len(), 2);
        assert!(!set.is_empty());
        assert_eq!(
            set.file_names().collect::<Vec<_>>(),
            ["a/dep.proto", "b/main.proto"]
        );
        let decoded = FileDescriptorSet::parse_from_bytes(&set.to_bytes().unwrap()).unwrap();
        assert_eq!(decoded.file, [file("a/dep.proto"), file("b/main.proto")]);
    }

    #[test]
    fn an_empty_set_encodes_to_nothing() {
        let set = DescriptorSet::new(Vec::new());
        assert!(set.is_empty());
        assert_eq!(set.to_bytes().unwrap(), Vec::<u8>::new());
    }
}
