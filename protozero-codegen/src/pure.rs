//! The pure-Rust front end: `protox` compiles the `.proto` files (parsing,
//! name resolution, option interpretation, the checks `protoc` makes) into
//! descriptors, which then go through the same translation as `protoc`'s.
//!
//! protox reads each file through a resolver of ours that lowers what
//! protox 0.10 does not parse (editions, a few spellings; see
//! `lowering.rs`); the descriptors of editions files are raised back and
//! checked afterwards (`editions_raise.rs`). Where protox resolves a
//! relative type name differently from `protoc` (see [`compile`]), the
//! name is qualified in the text protox reads and the files compiled again.
//!
//! Three steps bring protox's output to what `protoc --include_imports
//! --descriptor_set_out` writes for the same files:
//!
//! * the descriptors are taken as protox *encodes* them
//!   ([`protox::Compiler::encode_file_descriptor_set`]), never through
//!   `prost-types`' structs, whose options messages have no room for
//!   extension fields: custom options (and anything newer than
//!   `prost-types`' copy of `descriptor.proto`) would be dropped;
//! * options with `retention = RETENTION_SOURCE` are removed
//!   (`source_retention.rs`), as `protoc` removes them from the descriptors it writes (an options message left
//!   empty by that goes too), and option values are re-encoded as `protoc`
//!   encodes them (packed where the option's field is packed);
//! * `float` and `double` defaults are spelled as `protoc` spells them
//!   (`1e-07`, not `0.0000001`; `float_defaults.rs`).
//!
//! Errors keep protox's position: `file:line:column: message`, with the
//! text of that line.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use miette::Diagnostic;
use protobuf::Message as _;
use protobuf::descriptor::{FileDescriptorProto, FileDescriptorSet};
use protox::prost_reflect::DescriptorPool;

use std::cell::RefCell;
use std::rc::Rc;

use protox::file::{File, FileResolver, GoogleFileResolver, IncludeFileResolver};

use crate::error::CodegenError;
use crate::lowered::Lowered;
use crate::lowering::{Refusal, lower};
use crate::original_text::source_text;
use crate::renamed_fields::Respelling;

/// Compiles `inputs` and everything they import, imports first.
///
/// protox resolves a relative type name against every package it has
/// loaded, where `protoc` considers only the packages of the file itself and
/// of its direct (and public) imports: a name such as
/// `common.v3.Config` in package `a.b.c` can then reach for a package
/// `a.b.common` that only an indirect import declares and fail, where
/// `protoc` goes on outwards and finds `a.common.v3.Config`. When protox
/// fails that way, the name is looked up in the outer scopes among the
/// types compiled so far and, if one has it, written fully qualified in the
/// text protox reads (`.a.common.v3.Config`, the type name `protoc` records
/// too), and that file is compiled again.
///
/// Likewise, `inf` and `nan` option values are respelled as numbers for
/// protox (`respell_values.rs`); where protox then finds a number for an
/// enum option, the value was an enum value of that name, and the file is
/// compiled again with it written as it was. And option values naming a
/// field renamed for protox are respelled (`renamed_fields.rs`).
///
/// One compiler serves every attempt: a file protox refuses is not added
/// to it (its descriptor pool rolls back), so only the refused file (and
/// its imports not yet added) is read again, not the whole set.
pub(crate) fn compile(
    includes: &[PathBuf],
    inputs: &[PathBuf],
) -> Result<Vec<FileDescriptorProto>, CodegenError> {
    let rewrites = Rc::new(RefCell::new(Rewrites::default()));
    let state = Rc::new(RefCell::new(Lowerings::default()));
    let mut compiler = protox::Compiler::with_file_resolver(EditionsResolver::new(
        includes,
        Rc::clone(&state),
        Rc::clone(&rewrites),
    ));
    compiler.include_imports(true).include_source_info(false);
    // Each retry qualifies one more name, keeps more enum values or
    // respells more option keys; a file set with more such places than
    // this is refused with protox's error.
    let mut retries = 0;
    for input in inputs {
        while let Err(e) = compiler.open_file(input) {
            let diagnosis = diagnose(&e, &compiler, includes, &state, &rewrites.borrow());
            match diagnosis {
                Diagnosis::Failed(e) => return Err(e),
                Diagnosis::Retry(_) if retries >= MAX_RETRIES => {
                    return Err(error(&e, includes, &state.borrow().files));
                }
                Diagnosis::Retry(rewrite) => {
                    retries += 1;
                    rewrites.borrow_mut().add(rewrite);
                }
            }
        }
    }
    finish(&compiler, includes, &state)
}

/// At most this many retries for one file set.
const MAX_RETRIES: usize = 256;

/// The rewrites of the text protox reads, by file: names written fully
/// qualified and option keys respelled (`(offset, length, new text)` in
/// the original text), and `inf`/`nan` option values kept as written (their
/// offsets).
#[derive(Default)]
struct Rewrites {
    names: HashMap<String, Vec<Respelling>>,
    kept: HashMap<String, Vec<usize>>,
}

impl Rewrites {
    fn add(&mut self, rewrite: Rewrite) {
        match rewrite {
            Rewrite::Names { file, names } => {
                let known = self.names.entry(file).or_default();
                for n in names {
                    if !known.contains(&n) {
                        known.push(n);
                    }
                }
            }
            Rewrite::EnumValues { file, offsets } => {
                let known = self.kept.entry(file).or_default();
                for o in offsets {
                    if !known.contains(&o) {
                        known.push(o);
                    }
                }
            }
        }
    }

    /// Whether `r` holds a rewrite not made yet (one already made cannot
    /// help again).
    fn is_new(&self, r: &Rewrite) -> bool {
        match r {
            Rewrite::Names { file, names } => {
                let known = self.names.get(file);
                names.iter().any(|n| !known.is_some_and(|k| k.contains(n)))
            }
            Rewrite::EnumValues { file, offsets } => {
                let known = self.kept.get(file);
                offsets
                    .iter()
                    .any(|o| !known.is_some_and(|k| k.contains(o)))
            }
        }
    }

    /// How many rewrites `file` has: its text is lowered again when this
    /// changes.
    fn count(&self, file: &str) -> (usize, usize) {
        (
            self.names.get(file).map_or(0, Vec::len),
            self.kept.get(file).map_or(0, Vec::len),
        )
    }
}

/// What to do about a file protox refused.
enum Diagnosis {
    /// Rewrite its text so, and try again.
    Retry(Rewrite),
    /// Give up with this error.
    Failed(CodegenError),
}

/// One more rewrite of a file's text.
enum Rewrite {
    /// Relative names protox resolved into a scope `protoc` would not
    /// consider, or option keys naming renamed fields: in `file`, each
    /// one's byte offset, its length and its new spelling.
    Names {
        file: String,
        names: Vec<(usize, usize, String)>,
    },
    /// `inf` or `nan` option values respelled as numbers where protox
    /// wants an enum value: in `file`, their offsets, to be kept as written.
    EnumValues { file: String, offsets: Vec<usize> },
}

/// Why protox refused a file, and whether a rewrite can help.
fn diagnose(
    e: &protox::Error,
    compiler: &protox::Compiler,
    includes: &[PathBuf],
    state: &Rc<RefCell<Lowerings>>,
    rewrites: &Rewrites,
) -> Diagnosis {
    let state = state.borrow();
    if let Some((name, refusal)) = &state.refused {
        return Diagnosis::Failed(located(
            includes,
            name,
            refusal.offset,
            refusal.message.clone(),
        ));
    }
    if let Some(r) = enum_values(e, &state.files)
        .map(|(file, offsets)| Rewrite::EnumValues { file, offsets })
        .filter(|r| rewrites.is_new(r))
    {
        return Diagnosis::Retry(r);
    }
    let pool = compiler.descriptor_pool();
    let names = unresolved(e, &pool, includes, &state.files)
        .map(|(file, names)| Rewrite::Names { file, names })
        .filter(|r| rewrites.is_new(r));
    // The compiler's pool is not shared while it adds the next file.
    drop(pool);
    if let Some(r) = names {
        return Diagnosis::Retry(r);
    }
    let done = e
        .file()
        .and_then(|f| rewrites.names.get(f))
        .map_or(&[][..], Vec::as_slice);
    if let Some((file, names)) = crate::renamed_fields::respellings(e, includes, &state.files, done)
    {
        return Diagnosis::Retry(Rewrite::Names { file, names });
    }
    Diagnosis::Failed(error(e, includes, &state.files))
}

/// The descriptors of every file `compiler` compiled, as `protoc` writes
/// them (see the module doc).
fn finish(
    compiler: &protox::Compiler,
    includes: &[PathBuf],
    state: &Rc<RefCell<Lowerings>>,
) -> Result<Vec<FileDescriptorProto>, CodegenError> {
    let input_names: Vec<String> = compiler
        .files()
        .filter(|f| !f.is_import())
        .map(|f| f.name().to_owned())
        .collect();
    let nan = state.borrow().files.values().any(|l| l.nan_stand_in);
    let bytes = crate::source_retention::as_protoc_writes(
        &compiler.descriptor_pool(),
        compiler.encode_file_descriptor_set(),
        nan,
    )?;
    let set = FileDescriptorSet::parse_from_bytes(&bytes).map_err(|e| CodegenError::Parse {
        message: format!("protox's descriptors do not decode: {e}"),
    })?;
    let mut files = set.file;
    for f in &mut files {
        for m in &mut f.message_type {
            crate::float_defaults::protoc_float_defaults_in(m);
        }
        for x in &mut f.extension {
            crate::float_defaults::protoc_float_default(x);
        }
    }
    let state = state.borrow();
    crate::json_names::restore(&mut files, &state.files);
    crate::method_bodies::restore(&mut files, &state.method_bodies);
    if let Err(v) = crate::editions_raise::raise(&mut files, &state.files, &input_names) {
        return Err(located(includes, &v.file, v.offset, v.message));
    }
    Ok(files)
}

/// protox's "expected a value of type ... for option ..." errors (the first
/// and those related to it) that point at an `inf` or `nan` the lowering
/// respelled as a number: the option is an enum option (`protoc` reads such
/// a word as an enum value's name for it), and the word is to be kept. The
/// error's place is the option, or its value: the respelled values inside
/// it are taken. `None` if there are none.
fn enum_values(
    e: &protox::Error,
    lowered: &HashMap<String, Lowered>,
) -> Option<(String, Vec<usize>)> {
    let file = e.file()?.to_owned();
    let l = lowered.get(&file)?;
    let mut offsets = Vec::new();
    let mut one = |d: &dyn Diagnostic| {
        if !d.to_string().starts_with("expected a value of type") {
            return;
        }
        let Some(label) = d.labels().and_then(Iterator::last) else {
            return;
        };
        let first = l.original_offset(label.offset());
        let last = l.original_offset(label.offset() + label.len().saturating_sub(1));
        for &(start, end) in &l.respelled_values {
            if start <= last && first <= end && !offsets.contains(&start) {
                offsets.push(start);
            }
        }
    };
    one(e);
    if let Some(related) = e.related() {
        for r in related {
            one(r);
        }
    }
    (!offsets.is_empty()).then_some((file, offsets))
}

/// protox's "`x` resolves to `s.x`, which is not defined" errors (the
/// first and those related to it, all in one file) as names to qualify:
/// for each, the first outer scope of `s` where the types compiled so far
/// (`pool`) define `x`. `None` if the first error is not such a name.
fn unresolved(
    e: &protox::Error,
    pool: &DescriptorPool,
    includes: &[PathBuf],
    lowered: &HashMap<String, Lowered>,
) -> Option<(String, Vec<Respelling>)> {
    let file = e.file()?.to_owned();
    let text = source_text(includes, &file)?;
    let lowering = lowered.get(&file);
    let mut names = one_unresolved(&e.to_string(), error_offset(e), pool, &text, lowering)?;
    if let Some(related) = e.related() {
        for r in related {
            names.extend(
                one_unresolved(&r.to_string(), error_offset(r), pool, &text, lowering)
                    .unwrap_or_default(),
            );
        }
    }
    Some((file, names))
}

/// One such error: the places to qualify. protox gives no place for a
/// name in a synthesized element (a map's value type): then every place
/// the name is written as a type reference.
fn one_unresolved(
    message: &str,
    at: Option<usize>,
    pool: &DescriptorPool,
    text: &str,
    lowered: Option<&Lowered>,
) -> Option<Vec<(usize, usize, String)>> {
    let mut quoted = message.split('\'').skip(1).step_by(2);
    let (relative, resolved) = (quoted.next()?, quoted.next()?);
    if !message.contains("which is not defined") || relative.starts_with('.') {
        return None;
    }
    let places = match at {
        Some(at) => {
            let at = lowered.map_or(at, |l| l.original_offset(at));
            // The name must stand there as written.
            if text.get(at..at + relative.len()) != Some(relative) {
                return None;
            }
            vec![at]
        }
        None => crate::lowering::type_references(text, relative),
    };
    if places.is_empty() {
        return None;
    }
    let scope = resolved.strip_suffix(relative)?.trim_end_matches('.');
    let mut outer = scope;
    let qualified = loop {
        let Some((up, _)) = outer.rsplit_once('.') else {
            break defines(pool, relative).then(|| format!(".{relative}"))?;
        };
        outer = up;
        let candidate = format!("{outer}.{relative}");
        if defines(pool, &candidate) {
            break format!(".{candidate}");
        }
    };
    Some(
        places
            .into_iter()
            .map(|at| (at, relative.len(), qualified.clone()))
            .collect(),
    )
}

/// Whether `pool` has a message or enum named `full_name`.
fn defines(pool: &DescriptorPool, full_name: &str) -> bool {
    pool.get_message_by_name(full_name).is_some() || pool.get_enum_by_name(full_name).is_some()
}

// --- Editions -----------------------------------------------------------------

/// The editions files protox was given in lowered form, by name, and the
/// first construct the lowering refused.
#[derive(Default)]
struct Lowerings {
    files: HashMap<String, Lowered>,
    refused: Option<(String, Refusal)>,
    /// The methods written with a body, by file (`method_bodies.rs`).
    method_bodies: HashMap<String, Vec<(String, String)>>,
}

/// protox's file system resolver (include directories, then its own copies
/// of Google's files), with editions files lowered on the way in.
struct EditionsResolver {
    dirs: Vec<(PathBuf, IncludeFileResolver)>,
    google: GoogleFileResolver,
    state: Rc<RefCell<Lowerings>>,
    /// The rewrites of each file's text (see [`compile`]).
    rewrites: Rc<RefCell<Rewrites>>,
    /// Files parsed by an earlier attempt, with their rewrite counts then:
    /// a file refused because of one of its imports is read again as it was.
    cache: RefCell<HashMap<String, Parsed>>,
}

/// A file as parsed, with its rewrite counts then ([`Rewrites::count`]).
type Parsed = ((usize, usize), File);

impl EditionsResolver {
    fn new(
        includes: &[PathBuf],
        state: Rc<RefCell<Lowerings>>,
        rewrites: Rc<RefCell<Rewrites>>,
    ) -> EditionsResolver {
        EditionsResolver {
            dirs: includes
                .iter()
                .map(|d| (d.clone(), IncludeFileResolver::new(d.clone())))
                .collect(),
            google: GoogleFileResolver::new(),
            state,
            rewrites,
            cache: RefCell::new(HashMap::new()),
        }
    }
}

impl FileResolver for EditionsResolver {
    fn resolve_path(&self, path: &Path) -> Option<String> {
        self.dirs.iter().find_map(|(_, r)| r.resolve_path(path))
    }

    fn open_file(&self, name: &str) -> Result<File, protox::Error> {
        let rewrites = self.rewrites.borrow();
        let count = rewrites.count(name);
        // The lowering of the cached text is still in `state`: a file is
        // lowered again only with more rewrites.
        if let Some((_, file)) = self.cache.borrow().get(name).filter(|(n, _)| *n == count) {
            return Ok(file.clone());
        }
        let names = rewrites.names.get(name).map_or(&[][..], Vec::as_slice);
        let kept = rewrites.kept.get(name).map_or(&[][..], Vec::as_slice);
        let file = self.open_uncached(name, names, kept)?;
        self.cache
            .borrow_mut()
            .insert(name.to_owned(), (count, file.clone()));
        Ok(file)
    }
}

impl EditionsResolver {
    /// Reads, lowers and parses the file `name`, with `names` qualified and
    /// the option values at `kept` as written.
    fn open_uncached(
        &self,
        name: &str,
        names: &[(usize, usize, String)],
        kept: &[usize],
    ) -> Result<File, protox::Error> {
        for (dir, r) in &self.dirs {
            let path = dir.join(name);
            if !path.is_file() {
                continue;
            }
            let Ok(text) = std::fs::read_to_string(&path) else {
                // protox says what is wrong with it.
                return r.open_file(name);
            };
            if text.contains("rpc") {
                let bodies = crate::method_bodies::scan(&text);
                if !bodies.is_empty() {
                    self.state
                        .borrow_mut()
                        .method_bodies
                        .insert(name.to_owned(), bodies);
                }
            }
            return match lower(&text, names, kept) {
                Ok(None) => r.open_file(name),
                Ok(Some(lowered)) => {
                    let file = File::from_source(name, &lowered.text);
                    self.state
                        .borrow_mut()
                        .files
                        .insert(name.to_owned(), lowered);
                    file
                }
                Err(refusal) => {
                    let message = refusal.message.clone();
                    self.state.borrow_mut().refused = Some((name.to_owned(), refusal));
                    Err(protox::Error::new(std::io::Error::other(message)))
                }
            };
        }
        self.google.open_file(name)
    }
}

/// An error at byte `offset` of the file `name` (original text).
fn located(includes: &[PathBuf], name: &str, offset: usize, message: String) -> CodegenError {
    let path = includes
        .iter()
        .map(|dir| dir.join(name))
        .find(|p| p.is_file());
    let Some(text) = path.as_deref().and_then(|p| std::fs::read(p).ok()) else {
        return CodegenError::Parse {
            message: format!("{name}: {message}"),
        };
    };
    let at = Position::of(&text, offset);
    CodegenError::PureParse {
        file: path.map_or_else(|| name.to_owned(), |p| p.display().to_string()),
        line: at.line,
        column: at.column,
        source_line: at.text,
        message,
    }
}

// --- Errors -----------------------------------------------------------------

/// protox's error as a [`CodegenError`]: [`CodegenError::PureParse`] with
/// file, line, column and the line's text when protox points at a place,
/// else [`CodegenError::Parse`].
fn error(
    e: &protox::Error,
    includes: &[PathBuf],
    lowered: &HashMap<String, Lowered>,
) -> CodegenError {
    let message = e.to_string();
    let Some(name) = e.file() else {
        return CodegenError::Parse { message };
    };
    let path = includes
        .iter()
        .map(|dir| dir.join(name))
        .find(|p| p.is_file());
    let text = path.as_deref().and_then(|p| std::fs::read(p).ok());
    // protox gives an unexpected end of file no place: it is the end.
    let lowering = lowered.get(name);
    let original = |o: usize| lowering.map_or(o, |l| l.original_offset(o));
    let offset = error_offset(e)
        .map(original)
        .or_else(|| (e.is_parse() && message.contains("end of file")).then_some(usize::MAX));
    let (Some(offset), Some(text)) = (offset, text) else {
        return CodegenError::Parse {
            message: format!("{name}: {message}"),
        };
    };
    let file = path
        .as_deref()
        .map_or_else(|| name.to_owned(), |p: &Path| p.display().to_string());
    let at = Position::of(&text, offset);
    let mut message = message;
    if let Some(help) = e.help() {
        message.push_str(&format!(" ({help})"));
    }
    if let Some(related) = e.related() {
        for r in related {
            match error_offset(r).map(original) {
                Some(o) => {
                    let p = Position::of(&text, o);
                    message.push_str(&format!("; {file}:{}:{}: {r}", p.line, p.column));
                }
                None => message.push_str(&format!("; {r}")),
            }
        }
    }
    // Syntax errors may be constructs only protoc reads; of the checks, one
    // protoc may pass is `inf` or `nan` as a float option's value (when
    // the lowering kept them, the error's place holding an enum option's
    // value of that name too).
    let non_finite_option = ["found 'inf'", "found '-inf'", "found 'nan'", "found '-nan'"]
        .iter()
        .any(|f| message.contains(f));
    // protox refuses two fields with one JSON name in every syntax; protoc
    // warns in proto2 where a default name is involved, and accepts every
    // clash in a message that sets `deprecated_legacy_json_field_conflicts`,
    // which the lowering takes care of (`json_names.rs`).
    let json_clash = message.contains("with JSON name")
        || (message.contains("camel-case name") && message.contains("conflicts"));
    // An option naming a field renamed for protox that the respelling
    // (`renamed_fields.rs`) could not place.
    let renamed_option = crate::renamed_fields::is_option_error(&message)
        && !crate::renamed_fields::renamed_names(lowered).is_empty();
    if e.is_parse() || non_finite_option || json_clash || renamed_option {
        message.push_str(
            "; if protoc accepts this file, use the protoc front end \
             (`Config::front_end(FrontEnd::Protoc(None))`, `cargo xtask codegen --protoc`)",
        );
    }
    CodegenError::PureParse {
        file,
        line: at.line,
        column: at.column,
        source_line: at.text,
        message,
    }
}

/// The byte offset a diagnostic points at: its last label (of two, the
/// first is where a duplicated name was first defined).
fn error_offset(d: &dyn Diagnostic) -> Option<usize> {
    d.labels()?.last().map(|l| l.offset())
}

/// A place in a file: 1-based line and column (in characters) and the
/// line's text, trimmed.
struct Position {
    line: u32,
    column: u32,
    text: String,
}

impl Position {
    fn of(source: &[u8], offset: usize) -> Position {
        let offset = offset.min(source.len());
        let before = &source[..offset];
        let start = before
            .iter()
            .rposition(|&b| b == b'\n')
            .map_or(0, |i| i + 1);
        let end = source[offset..]
            .iter()
            .position(|&b| b == b'\n')
            .map_or(source.len(), |i| offset + i);
        let lines = before.iter().filter(|&&b| b == b'\n').count();
        let column = String::from_utf8_lossy(&source[start..offset])
            .chars()
            .count();
        Position {
            line: u32::try_from(lines + 1).unwrap_or(u32::MAX),
            column: u32::try_from(column + 1).unwrap_or(u32::MAX),
            text: String::from_utf8_lossy(&source[start..end])
                .trim()
                .to_owned(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn positions_are_one_based_in_characters() {
        let text = "ab\n\u{e9}xyz\n";
        let p = Position::of(text.as_bytes(), 5);
        assert_eq!((p.line, p.column, p.text.as_str()), (2, 2, "\u{e9}xyz"));
        let end = Position::of(text.as_bytes(), text.len());
        assert_eq!((end.line, end.column, end.text.as_str()), (3, 1, ""));
    }
}
