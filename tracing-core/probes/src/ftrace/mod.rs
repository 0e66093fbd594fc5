//! Ftrace's binary side: the layouts the kernel publishes in tracefs and
//! the raw per-CPU ring-buffer pages parsed with them.
//!
//! * [`format`]: an event's `format` file and `events/header_page`.
//! * [`page`]: one raw sub-buffer from `per_cpu/cpuN/trace_pipe_raw`,
//!   walked into records with absolute timestamps.
//! * [`decode`]: a record's field values by name through its format (the
//!   generic event).

pub mod decode;
pub mod format;
pub mod page;

pub use decode::{DecodeError, Event, FormatTable, Value};
pub use format::{EventFormat, Field, FieldKind, FormatError, HeaderField, HeaderPage};
pub use page::{MissedEvents, Page, PageError, PageLayout, Record, Records};
