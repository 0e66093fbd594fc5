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
    /// The pure-Rust parser rejected a file that may be valid for `protoc`
    /// (editions, options on extension ranges, some group and option forms).
    #[error(
        "{file}:{line}:{column}: the pure parser rejected `{source_line}`: {message}; \
         if protoc accepts this file, use the protoc front end \
         (`Config::front_end(FrontEnd::Protoc(None))`, `cargo xtask codegen --protoc`)"
    )]
    PureParse {
        /// The `.proto` file.
        file: String,
        /// 1-based line of the construct.
        line: u32,
        /// 1-based column.
        column: u32,
        /// The text of that line, trimmed.
        source_line: String,
        /// The parser's message.
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

/// Turns the pure parser's error text (`error in `FILE`: at L:C: MSG`) into
/// [`CodegenError::PureParse`], quoting the offending line; falls back to
/// [`CodegenError::Parse`] when the text has no position.
pub(crate) fn pure_parse_error(message: String) -> CodegenError {
    let located = (|| {
        let after = message.split_once("error in `")?.1;
        let (file, rest) = after.split_once('`')?;
        let rest = rest.split_once(": at ")?.1;
        let (pos, msg) = rest.split_once(": ")?;
        let (line, column) = pos.split_once(':')?;
        let line: u32 = line.trim().parse().ok()?;
        let column: u32 = column.trim().parse().ok()?;
        // The parser repeats the position in nested contexts; keep the gist.
        let msg = msg.rsplit(": ").next().unwrap_or(msg).to_owned();
        let source_line = std::fs::read_to_string(file)
            .ok()
            .and_then(|text| {
                text.lines()
                    .nth(usize::try_from(line).ok()?.checked_sub(1)?)
                    .map(|l| l.trim().to_owned())
            })
            .unwrap_or_default();
        Some(CodegenError::PureParse {
            file: file.to_owned(),
            line,
            column,
            source_line,
            message: msg,
        })
    })();
    located.unwrap_or(CodegenError::Parse { message })
}
