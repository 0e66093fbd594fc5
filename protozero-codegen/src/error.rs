//! Why code generation failed, naming the file and the construct involved so a
//! schema author can fix the right line.

use std::path::PathBuf;

/// A code generation failure.
#[derive(Debug, thiserror::Error)]
pub enum CodegenError {
    /// No input files were given.
    #[error("no input .proto files were given")]
    NoInputs,
    /// The `.proto` parser rejected the input (syntax, unresolved import or type).
    #[error("parsing .proto files failed: {message}")]
    Parse {
        /// The parser's full error chain.
        message: String,
    },
    /// A construct the generator does not support (for example proto2 groups).
    #[error("{file}: {construct} is not supported: {reason}")]
    Unsupported {
        /// The `.proto` file.
        file: String,
        /// The element, e.g. `field perfetto.protos.Foo.bar`.
        construct: String,
        /// What is unsupported.
        reason: String,
    },
    /// A type name that appears in no loaded file.
    #[error("{file}: {construct} refers to unknown type `{type_name}`")]
    UnknownType {
        /// The `.proto` file.
        file: String,
        /// The referring element.
        construct: String,
        /// The unresolved fully qualified name.
        type_name: String,
    },
    /// Two elements map to the same Rust name in one scope.
    #[error("{file}: {first} and {second} both map to Rust name `{rust_name}` in `{scope}`")]
    NameCollision {
        /// The `.proto` file of the second element.
        file: String,
        /// The Rust module path of the scope.
        scope: String,
        /// The clashing Rust name.
        rust_name: String,
        /// The first element.
        first: String,
        /// The second element.
        second: String,
    },
    /// The emitted tokens did not form valid Rust (a generator bug).
    #[error("{file}: generated code does not parse as Rust: {message}")]
    Format {
        /// The `.proto` file being emitted.
        file: String,
        /// The syntax error.
        message: String,
    },
    /// Serializing the FileDescriptorSet failed.
    #[error("serializing the FileDescriptorSet failed: {message}")]
    Descriptor {
        /// The serializer's message.
        message: String,
    },
    /// Reading or writing a file failed.
    #[error("{path}: {source}")]
    Io {
        /// The file or directory.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
}
