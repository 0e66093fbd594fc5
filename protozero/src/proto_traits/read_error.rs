//! [`ReadError`]: a decode failure together with the chain of fields that led
//! to it, so "invalid UTF-8" becomes "invalid UTF-8 in `packet.payload.name`".
//!
//! The path is recorded while the error unwinds out of nested decoders
//! (innermost first) into a fixed array of references to the static
//! [`PathSegment`]s that derived code declares, so building it never
//! allocates, the error stays `Copy`, and it stays small enough (under 128
//! bytes) not to slow down the `Result`s of the success path.

use crate::error::DecodeError;

/// How many path segments a [`ReadError`] keeps; deeper paths keep the
/// innermost segments and report that outer ones were cut.
pub const MAX_PATH_DEPTH: usize = 8;

/// What went wrong, without the location. New kinds may be added in a
/// minor release (`#[non_exhaustive]`): a `match` needs a wildcard arm.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ReadErrorKind {
    /// The bytes are not valid protobuf, or a field has the wrong wire type
    /// or an invalid value.
    #[error(transparent)]
    Decode(#[from] DecodeError),
    /// Messages were nested deeper than [`super::RECURSION_LIMIT`].
    #[error("messages nested deeper than {limit} levels")]
    RecursionLimit {
        /// The limit that was hit.
        limit: u32,
    },
}

/// One step of a [`ReadError`] path: the Rust field (or variant) name and its
/// protobuf field number.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PathSegment {
    /// Field name as written in the Rust type.
    pub name: &'static str,
    /// Protobuf field number.
    pub id: u32,
}

/// A typed decode error and where in the message tree it happened.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct ReadError {
    kind: ReadErrorKind,
    /// Innermost segment first.
    segments: [&'static PathSegment; MAX_PATH_DEPTH],
    len: u8,
    truncated: bool,
}

static EMPTY_SEGMENT: PathSegment = PathSegment { name: "", id: 0 };

impl ReadError {
    /// An error at the current message (empty path).
    #[cold]
    pub fn new(kind: ReadErrorKind) -> ReadError {
        ReadError {
            kind,
            segments: [&EMPTY_SEGMENT; MAX_PATH_DEPTH],
            len: 0,
            truncated: false,
        }
    }

    /// Nesting went deeper than [`super::RECURSION_LIMIT`].
    #[cold]
    pub fn recursion_limit() -> ReadError {
        Self::new(ReadErrorKind::RecursionLimit {
            limit: super::RECURSION_LIMIT,
        })
    }

    /// Records that the error happened inside `segment` (a field or oneof
    /// member) of the enclosing message. Called while unwinding, innermost first.
    #[cold]
    #[must_use]
    pub fn in_field(mut self, segment: &'static PathSegment) -> ReadError {
        match self.segments.get_mut(usize::from(self.len)) {
            Some(slot) => {
                *slot = segment;
                self.len += 1;
            }
            None => self.truncated = true,
        }
        self
    }

    /// What went wrong.
    pub fn kind(&self) -> ReadErrorKind {
        self.kind
    }

    /// The underlying wire error, if this is one.
    pub fn decode_error(&self) -> Option<DecodeError> {
        match self.kind {
            ReadErrorKind::Decode(e) => Some(e),
            ReadErrorKind::RecursionLimit { .. } => None,
        }
    }

    /// The fields from the outermost message down to the failing one.
    pub fn path(&self) -> impl DoubleEndedIterator<Item = PathSegment> + '_ {
        self.segments[..usize::from(self.len)]
            .iter()
            .rev()
            .map(|s| **s)
    }

    /// Whether outer path segments were dropped because the path was longer
    /// than [`MAX_PATH_DEPTH`].
    pub fn path_truncated(&self) -> bool {
        self.truncated
    }
}

impl From<DecodeError> for ReadError {
    #[cold]
    fn from(e: DecodeError) -> ReadError {
        ReadError::new(ReadErrorKind::Decode(e))
    }
}

impl core::fmt::Display for ReadError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        if self.len > 0 {
            f.write_str("in `")?;
            if self.truncated {
                f.write_str("….")?;
            }
            for (i, seg) in self.path().enumerate() {
                if i > 0 {
                    f.write_str(".")?;
                }
                write!(f, "{}#{}", seg.name, seg.id)?;
            }
            f.write_str("`: ")?;
        }
        write!(f, "{}", self.kind)
    }
}

impl core::fmt::Debug for ReadError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("ReadError")
            .field("kind", &self.kind)
            .field("path", &PathDebug(self))
            .finish()
    }
}

struct PathDebug<'e>(&'e ReadError);

impl core::fmt::Debug for PathDebug<'_> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_list().entries(self.0.path()).finish()
    }
}

impl core::error::Error for ReadError {
    fn source(&self) -> Option<&(dyn core::error::Error + 'static)> {
        match &self.kind {
            ReadErrorKind::Decode(e) => Some(e),
            ReadErrorKind::RecursionLimit { .. } => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::string::ToString;

    #[test]
    fn path_is_outermost_first() {
        let e = ReadError::from(DecodeError::InvalidUtf8 { id: 2 })
            .in_field(&PathSegment {
                name: "name",
                id: 2,
            })
            .in_field(&PathSegment {
                name: "payload",
                id: 1000,
            });
        let ids: alloc::vec::Vec<u32> = e.path().map(|s| s.id).collect();
        assert_eq!(ids, [1000, 2]);
        assert_eq!(
            e.to_string(),
            "in `payload#1000.name#2`: field 2 is not valid UTF-8"
        );
        assert_eq!(e.decode_error(), Some(DecodeError::InvalidUtf8 { id: 2 }));
    }

    #[test]
    fn stays_small() {
        assert!(core::mem::size_of::<ReadError>() <= 128);
    }

    #[test]
    fn long_paths_keep_innermost() {
        static SEGMENTS: [PathSegment; MAX_PATH_DEPTH + 3] = {
            let mut all = [PathSegment { name: "f", id: 0 }; MAX_PATH_DEPTH + 3];
            let mut i = 0;
            while i < all.len() {
                all[i].id = i as u32 + 1;
                i += 1;
            }
            all
        };
        let mut e = ReadError::recursion_limit();
        for segment in &SEGMENTS {
            e = e.in_field(segment);
        }
        assert!(e.path_truncated());
        assert_eq!(e.path().count(), MAX_PATH_DEPTH);
        // Innermost (first recorded) segment kept, outermost ones dropped.
        assert_eq!(e.path().last().map(|s| s.id), Some(1));
        assert_eq!(e.path().next().map(|s| s.id), Some(MAX_PATH_DEPTH as u32));

        assert!(e.to_string().starts_with("in `…."));
    }
}
