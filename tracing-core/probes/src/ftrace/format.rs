//! The layouts the kernel publishes in tracefs: an event's `format` file
//! (its id and the offset, size and signedness of every field) and
//! `events/header_page` (where a ring-buffer sub-buffer keeps its timestamp,
//! its commit word and its data). Raw pages are decoded only through these
//! descriptions, so a kernel that moves a field is read correctly instead of
//! through offsets baked into the parser.

use thiserror::Error;

/// Why a `format` or `header_page` file did not parse.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum FormatError {
    /// The file has no `name:` line.
    #[error("format file has no `name:` line")]
    MissingName,
    /// The file has no `ID:` line.
    #[error("format file has no `ID:` line")]
    MissingId,
    /// The `ID:` value is not a number that fits 32 bits.
    #[error("line {line}: bad event id {value:?}")]
    BadId {
        /// 1-based line number.
        line: usize,
        /// The text after `ID:`.
        value: String,
    },
    /// A `field:` line lacks one of its parts or has a malformed one.
    #[error("line {line}: malformed field line: {reason}")]
    BadField {
        /// 1-based line number.
        line: usize,
        /// What was wrong.
        reason: &'static str,
    },
    /// Two fields of one event share a name.
    #[error("line {line}: duplicate field {name:?}")]
    DuplicateField {
        /// 1-based line number.
        line: usize,
        /// The field name.
        name: String,
    },
    /// `header_page` lacks a field every ring-buffer page has.
    #[error("header_page has no {0:?} field")]
    MissingHeaderField(&'static str),
    /// A `header_page` field has a size the page parser cannot read.
    #[error("header_page field {name:?} has unsupported size {size}")]
    BadHeaderFieldSize {
        /// The field name.
        name: &'static str,
        /// Its declared size.
        size: usize,
    },
}

/// How a field's bytes are to be read, derived from its declared type,
/// array suffix and size.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FieldKind {
    /// An integer of 1, 2, 4 or 8 bytes (its signedness is [`Field::signed`]).
    Int,
    /// `char name[N]`: a fixed array holding a NUL-terminated string.
    CharArray,
    /// A fixed array of non-`char` elements of `elem_size` bytes each.
    Array {
        /// Size of one element in bytes.
        elem_size: usize,
    },
    /// `__data_loc T[] name`: a 32-bit word whose low 16 bits are the offset
    /// of the data from the start of the event and whose high 16 bits are
    /// its length.
    DataLoc {
        /// The element type is `char`: the data is a NUL-terminated string.
        string: bool,
    },
    /// `__rel_loc T[] name`: as [`FieldKind::DataLoc`] but the offset counts
    /// from the end of this field.
    RelLoc {
        /// The element type is `char`: the data is a NUL-terminated string.
        string: bool,
    },
    /// `T name[]` with size 0: a flexible array that runs to the end of the
    /// event (`ftrace/print`'s `buf`).
    Flex {
        /// The element type is `char`: the data is a NUL-terminated string.
        string: bool,
    },
    /// Anything else (a struct, an integer of unusual size): raw bytes.
    Blob,
}

/// One field of an event as its `format` file describes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Field {
    /// The field's name (`prev_pid`).
    pub name: String,
    /// The declared type without the name or array suffix
    /// (`pid_t`, `char`, `__data_loc char[]`).
    pub type_name: String,
    /// The array suffix's length where it has a numeric one (`16` for
    /// `char prev_comm[16]`).
    pub array_len: Option<usize>,
    /// Byte offset from the start of the event's payload.
    pub offset: usize,
    /// Size in bytes (0 for a flexible array).
    pub size: usize,
    /// Whether the kernel declares the type signed.
    pub signed: bool,
    /// How its bytes are read.
    pub kind: FieldKind,
}

/// An event's `format` file: its name, id and fields.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EventFormat {
    /// The event's name (`sched_switch`).
    pub name: String,
    /// The id the kernel writes into `common_type`.
    pub id: u32,
    /// The fields every event shares (`common_type`, `common_pid`, …): those
    /// before the blank line.
    pub common_fields: Vec<Field>,
    /// The event's own fields.
    pub fields: Vec<Field>,
}

impl EventFormat {
    /// Parses the text of `events/<group>/<name>/format`.
    pub fn parse(text: &str) -> Result<Self, FormatError> {
        let mut name = None;
        let mut id = None;
        let mut common_fields: Vec<Field> = Vec::new();
        let mut fields: Vec<Field> = Vec::new();
        // Fields before the first blank line inside `format:` are common.
        let mut in_format = false;
        let mut seen_common_end = false;
        for (idx, raw) in text.lines().enumerate() {
            let line_no = idx + 1;
            let line = raw.trim();
            if let Some(rest) = line.strip_prefix("name:") {
                name = Some(rest.trim().to_owned());
            } else if let Some(rest) = line.strip_prefix("ID:") {
                let value = rest.trim();
                id = Some(value.parse::<u32>().map_err(|_| FormatError::BadId {
                    line: line_no,
                    value: value.to_owned(),
                })?);
            } else if line == "format:" {
                in_format = true;
            } else if line.starts_with("print fmt:") {
                break;
            } else if line.is_empty() {
                if in_format && !common_fields.is_empty() {
                    seen_common_end = true;
                }
            } else if line.starts_with("field:") {
                let field = parse_field_line(line, line_no)?;
                if common_fields
                    .iter()
                    .chain(fields.iter())
                    .any(|f| f.name == field.name)
                {
                    return Err(FormatError::DuplicateField {
                        line: line_no,
                        name: field.name,
                    });
                }
                if seen_common_end {
                    fields.push(field);
                } else {
                    common_fields.push(field);
                }
            }
        }
        Ok(EventFormat {
            name: name.ok_or(FormatError::MissingName)?,
            id: id.ok_or(FormatError::MissingId)?,
            common_fields,
            fields,
        })
    }

    /// The field called `name`, common or not.
    pub fn field(&self, name: &str) -> Option<&Field> {
        self.common_fields
            .iter()
            .chain(self.fields.iter())
            .find(|f| f.name == name)
    }
}

/// Parses one `field:…;\toffset:…;\tsize:…;\tsigned:…;` line.
fn parse_field_line(line: &str, line_no: usize) -> Result<Field, FormatError> {
    let bad = |reason| FormatError::BadField {
        line: line_no,
        reason,
    };
    let mut decl = None;
    let mut offset = None;
    let mut size = None;
    let mut signed = false;
    for part in line.split(';') {
        let part = part.trim();
        if let Some(rest) = part.strip_prefix("field:") {
            decl = Some(rest.trim());
        } else if let Some(rest) = part.strip_prefix("offset:") {
            offset = Some(
                rest.trim()
                    .parse::<usize>()
                    .map_err(|_| bad("bad offset"))?,
            );
        } else if let Some(rest) = part.strip_prefix("size:") {
            size = Some(rest.trim().parse::<usize>().map_err(|_| bad("bad size"))?);
        } else if let Some(rest) = part.strip_prefix("signed:") {
            signed = rest.trim().parse::<u8>().map_err(|_| bad("bad signed"))? != 0;
        }
    }
    let decl = decl.ok_or(bad("no declaration"))?;
    let offset = offset.ok_or(bad("no offset"))?;
    let size = size.ok_or(bad("no size"))?;
    if offset.checked_add(size).is_none() {
        return Err(bad("offset + size overflows"));
    }
    // The name is the last token; an array suffix sits on it.
    let (type_part, last) = match decl.rfind(|c: char| c.is_whitespace()) {
        Some(pos) => (decl[..pos].trim(), decl[pos..].trim()),
        None => return Err(bad("declaration has no type")),
    };
    if type_part.is_empty() || last.is_empty() {
        return Err(bad("declaration has no type"));
    }
    let (name, suffix) = match last.find('[') {
        Some(pos) => {
            let dims = last[pos..]
                .strip_prefix('[')
                .and_then(|s| s.strip_suffix(']'))
                .ok_or(bad("unterminated array suffix"))?;
            (&last[..pos], Some(dims))
        }
        None => (last, None),
    };
    if name.is_empty() {
        return Err(bad("empty field name"));
    }
    let array_len = suffix.and_then(|d| d.trim().parse::<usize>().ok());
    let kind = field_kind(type_part, suffix, array_len, size);
    Ok(Field {
        name: name.to_owned(),
        type_name: type_part.to_owned(),
        array_len,
        offset,
        size,
        signed,
        kind,
    })
}

/// Whether a C element type is a character type (read as a string).
fn is_char_type(type_part: &str) -> bool {
    let base = type_part
        .trim_start_matches("__data_loc")
        .trim_start_matches("__rel_loc")
        .trim()
        .trim_end_matches("[]")
        .trim();
    matches!(base, "char" | "const char")
}

/// Decides how a field is read from its declaration and size.
fn field_kind(
    type_part: &str,
    suffix: Option<&str>,
    array_len: Option<usize>,
    size: usize,
) -> FieldKind {
    let string = is_char_type(type_part);
    if type_part.starts_with("__data_loc") {
        return FieldKind::DataLoc { string };
    }
    if type_part.starts_with("__rel_loc") {
        return FieldKind::RelLoc { string };
    }
    match suffix {
        Some(dims) if dims.trim().is_empty() || size == 0 => FieldKind::Flex { string },
        Some(_) => {
            if string {
                FieldKind::CharArray
            } else {
                match array_len {
                    Some(n) if n > 0 && size % n == 0 => FieldKind::Array {
                        elem_size: size / n,
                    },
                    _ => FieldKind::Blob,
                }
            }
        }
        None if matches!(size, 1 | 2 | 4 | 8) => FieldKind::Int,
        None => FieldKind::Blob,
    }
}

/// One field of `header_page`: where it sits in a ring-buffer page.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HeaderField {
    /// Byte offset from the start of the page.
    pub offset: usize,
    /// Size in bytes.
    pub size: usize,
}

/// `events/header_page`: the layout of a ring-buffer sub-buffer's header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HeaderPage {
    /// The page's base timestamp (8 bytes).
    pub timestamp: HeaderField,
    /// The commit word: bytes of data written plus the missed-events flags.
    /// Its size (4 or 8) is the kernel's `long`, which also sizes the
    /// stored missed-events count.
    pub commit: HeaderField,
    /// The `overwrite` field the kernel publishes. The kernel prints it at
    /// `commit`'s offset with size 1: a view of the commit word's low byte,
    /// no separate information. What a page says about lost events (in
    /// overwrite mode or not) is in the commit word's missed-events flags,
    /// [`super::page::Page::missed`].
    pub overwrite: Option<HeaderField>,
    /// Where the events start; its size is the data capacity of a default
    /// (page-sized) sub-buffer.
    pub data: HeaderField,
}

impl HeaderPage {
    /// Parses the text of `events/header_page`.
    pub fn parse(text: &str) -> Result<Self, FormatError> {
        let mut timestamp = None;
        let mut commit = None;
        let mut overwrite = None;
        let mut data = None;
        for (idx, raw) in text.lines().enumerate() {
            let line = raw.trim();
            if !line.starts_with("field:") {
                continue;
            }
            let field = parse_field_line(line, idx + 1)?;
            let hf = HeaderField {
                offset: field.offset,
                size: field.size,
            };
            match field.name.as_str() {
                "timestamp" => timestamp = Some(hf),
                "commit" => commit = Some(hf),
                "overwrite" => overwrite = Some(hf),
                "data" => data = Some(hf),
                _ => {}
            }
        }
        let timestamp = timestamp.ok_or(FormatError::MissingHeaderField("timestamp"))?;
        let commit = commit.ok_or(FormatError::MissingHeaderField("commit"))?;
        let data = data.ok_or(FormatError::MissingHeaderField("data"))?;
        if timestamp.size != 8 {
            return Err(FormatError::BadHeaderFieldSize {
                name: "timestamp",
                size: timestamp.size,
            });
        }
        if commit.size != 4 && commit.size != 8 {
            return Err(FormatError::BadHeaderFieldSize {
                name: "commit",
                size: commit.size,
            });
        }
        Ok(HeaderPage {
            timestamp,
            commit,
            overwrite,
            data,
        })
    }

    /// Whether the kernel's `long` is 64 bits (the commit word's size).
    pub fn is_64bit(&self) -> bool {
        self.commit.size == 8
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SWITCH: &str = "name: sched_switch\nID: 372\nformat:\n\
\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n\
\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n\
\n\
\tfield:char prev_comm[16];\toffset:8;\tsize:16;\tsigned:0;\n\
\tfield:__data_loc char[] name;\toffset:24;\tsize:4;\tsigned:0;\n\
\tfield:char buf[];\toffset:28;\tsize:0;\tsigned:0;\n\
\tfield:u32 arr[2];\toffset:28;\tsize:8;\tsigned:0;\n\
\nprint fmt: \"x\"\n";

    #[test]
    fn parses_kinds_and_common_split() {
        let f = EventFormat::parse(SWITCH).unwrap();
        assert_eq!(f.name, "sched_switch");
        assert_eq!(f.id, 372);
        assert_eq!(f.common_fields.len(), 2);
        assert_eq!(f.fields.len(), 4);
        let k = |n: &str| f.field(n).unwrap().kind;
        assert_eq!(k("common_pid"), FieldKind::Int);
        assert!(f.field("common_pid").unwrap().signed);
        assert_eq!(k("prev_comm"), FieldKind::CharArray);
        assert_eq!(f.field("prev_comm").unwrap().array_len, Some(16));
        assert_eq!(k("name"), FieldKind::DataLoc { string: true });
        assert_eq!(k("buf"), FieldKind::Flex { string: true });
        assert_eq!(k("arr"), FieldKind::Array { elem_size: 4 });
    }

    #[test]
    fn typed_errors() {
        assert_eq!(EventFormat::parse("ID: 3\n"), Err(FormatError::MissingName));
        assert!(matches!(
            EventFormat::parse("name: x\nID: zz\n"),
            Err(FormatError::BadId { line: 2, .. })
        ));
        assert!(matches!(
            EventFormat::parse("name: x\nID: 1\nformat:\n\tfield:int a;\toffset:x;\tsize:4;\n"),
            Err(FormatError::BadField { line: 4, .. })
        ));
        assert!(matches!(
            EventFormat::parse(
                "name: x\nID: 1\nformat:\n\tfield:int a;\toffset:0;\tsize:4;\n\tfield:int a;\toffset:4;\tsize:4;\n"
            ),
            Err(FormatError::DuplicateField { .. })
        ));
    }

    #[test]
    fn header_page_32_and_64() {
        let h64 = "\tfield: u64 timestamp;\toffset:0;\tsize:8;\tsigned:0;\n\
\tfield: local_t commit;\toffset:8;\tsize:8;\tsigned:1;\n\
\tfield: int overwrite;\toffset:8;\tsize:1;\tsigned:1;\n\
\tfield: char data;\toffset:16;\tsize:4080;\tsigned:0;\n";
        let h = HeaderPage::parse(h64).unwrap();
        assert!(h.is_64bit());
        assert_eq!(h.data.offset, 16);
        let h32 = h64
            .replace("size:8;\tsigned:1", "size:4;\tsigned:1")
            .replace("offset:16", "offset:12");
        let h = HeaderPage::parse(&h32).unwrap();
        assert!(!h.is_64bit());
        assert_eq!(h.data.offset, 12);
        assert_eq!(
            HeaderPage::parse("field: u64 timestamp;\toffset:0;\tsize:8;\n"),
            Err(FormatError::MissingHeaderField("commit"))
        );
    }
}
