//! Ftrace's binary side: the layouts the kernel publishes in tracefs and
//! the raw per-CPU ring-buffer pages parsed with them.
//!
//! * [`format`](mod@format): an event's `format` file and `events/header_page`.
//! * [`page`]: one raw sub-buffer from `per_cpu/cpuN/trace_pipe_raw`,
//!   walked into records with absolute timestamps.
//! * [`config`]: what an `FtraceConfig` asks, every field decided.
//! * [`session`]: concurrent sessions merged on one instance, its prior
//!   state restored (a pure state machine).
//! * [`tracefs`]: a tracefs instance read and written (bounded reads,
//!   typed errors), driven by the session machine.
//! * [`cpu_reader`]: per-CPU `trace_pipe_raw` pages and `stats`, and the
//!   `ftrace_stats` packet.
//! * [`ksyms`]: `/proc/kallsyms` for `symbolize_ksyms`.
//! * [`pointer_hash`]: kernel data pointers written as a keyed hash.
//! * [`decode`]: a record's field values by name through its format (the
//!   generic event).
//! * [`translate`]: decoded records written as Perfetto's `ftrace_events`
//!   bundles, typed, compact or generic, as traced_probes writes them.
//!
//! A fact for whoever reads these files from tracefs: read each text file
//! (`header_page`, `format`) with one large read. Linux 6.18 answers a read
//! of `events/header_page` that does not start at offset 0 with end-of-file,
//! so a small first read (`std::fs::read_to_string` probes with 32 bytes)
//! returns a truncated file.

mod atrace;
mod compact_buffer;
pub mod config;
pub mod cpu_reader;
pub mod decode;
pub mod format;
pub mod ksyms;
pub mod page;
pub mod pointer_hash;
pub mod print_filter;
pub mod session;
pub mod syscalls;
pub mod tracefs;
pub mod translate;
pub mod watermark;

pub use decode::{DecodeError, Event, FormatTable, Value};
pub use format::{EventFormat, Field, FieldKind, FormatError, HeaderField, HeaderPage};
pub use page::{MissedEvents, Page, PageError, PageLayout, Record, Records};
pub use translate::{
    Options, Stats, TranslateError, Translator, holds_data_pointer, holds_kernel_address,
};
