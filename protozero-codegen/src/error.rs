//! Why code generation failed, naming the file and the construct involved so a
//! schema author can fix the right line.

use std::path::PathBuf;

/// A code generation failure. New kinds of failure may be added in a minor
/// release (`#[non_exhaustive]`): a `match` needs a wildcard arm.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CodegenError {
    /// No input files were given.
    #[error("no input .proto files were given")]
    NoInputs,
    /// The front end rejected the input without pointing at a place in it
    /// (a missing input file, an import cycle), or `protoc` did (its
    /// diagnostics, `file:line:column: message` lines, are the message).
    #[error("parsing .proto files failed: {message}")]
    Parse {
        /// The compiler's message.
        message: String,
    },
    /// The pure-Rust front end (protox) rejected a construct at a place in a
    /// file: a syntax error, an unknown name or import, an invalid option
    /// (and anything else `protoc` rejects too), or something only `protoc`
    /// accepts (editions), in which case the message says so and suggests
    /// the protoc front end.
    #[error("{file}:{line}:{column}: {message} (at `{source_line}`)")]
    PureParse {
        /// The `.proto` file, as found under its include directory.
        file: String,
        /// 1-based line of the construct.
        line: u32,
        /// 1-based column, in characters.
        column: u32,
        /// The text of that line, trimmed.
        source_line: String,
        /// protox's message (with any further errors it found, each
        /// `file:line:column: message`).
        message: String,
    },
    /// `protoc` could not be found or run.
    #[error("protoc is not available: {message}")]
    Protoc {
        /// Why.
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
    /// A name derived from the schema could not be made a Rust identifier.
    #[error("{file}: `{name}` is not a valid Rust identifier")]
    InvalidIdent {
        /// The `.proto` file being emitted.
        file: String,
        /// The rejected identifier text.
        name: String,
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
