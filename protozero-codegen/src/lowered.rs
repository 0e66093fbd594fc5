//! What the lowering of a `.proto` file for protox (`lowering.rs`) hands
//! to everything after it: the lowered text with the record of its edits,
//! one edit, and the fields given stand-in names. A leaf that the
//! lowering, the JSON-name stand-ins, the respelled values, the renamed
//! fields and the raising all read, so that none of them imports another
//! to know these shapes.

/// A file rewritten for protox.
#[derive(Debug, Clone)]
pub(crate) struct Lowered {
    /// The text protox reads.
    pub text: String,
    /// `google.protobuf.Edition` number of an editions file.
    pub edition: Option<u64>,
    /// The rewrite's edits, in order: `(original offset, original length,
    /// new length)`.
    pub(crate) edits: Vec<(usize, usize, usize)>,
    /// `export`/`local` written before a message or enum: its name path
    /// from the file's top (nested names in order), whether it is an enum,
    /// and whether it is exported.
    pub visibility: Vec<(Vec<String>, bool, bool)>,
    /// Files imported with `import option`.
    pub option_imports: Vec<String>,
    /// Where each field statement starts in the original text, by the name
    /// path of its message (or of the scope of its `extend` block) and its
    /// name, for errors the raising step finds.
    pub fields: Vec<(Vec<String>, String, usize)>,
    /// Where each enum starts, by name path.
    pub enums: Vec<(Vec<String>, usize)>,
    /// Where each message starts, by name path.
    pub messages: Vec<(Vec<String>, usize)>,
    /// Fields given a stand-in JSON name or name (see `json_names.rs`).
    pub json_stand_ins: Vec<StandIn>,
    /// Whether a `nan` option value was respelled as
    /// [`crate::non_finite::NAN_STAND_IN`].
    pub nan_stand_in: bool,
    /// Where each `inf`, `-inf`, `nan` or `-nan` option value respelled is
    /// in the original text: its first and last byte.
    pub respelled_values: Vec<(usize, usize)>,
}

/// One replacement in the original text.
pub(crate) struct Edit {
    pub(crate) at: usize,
    pub(crate) old: usize,
    pub(crate) new: String,
}

/// A field whose name or JSON name protox read as a stand-in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct StandIn {
    /// Its message's name path from the file's top.
    pub message: Vec<String>,
    /// Its name in the text protox reads.
    pub read_as: String,
    /// Its name.
    pub name: String,
    /// The JSON name `protoc` records for it.
    pub json_name: String,
}
