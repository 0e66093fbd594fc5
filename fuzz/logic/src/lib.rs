//! The logic of every zerotrace fuzz target, in one place: the cargo-fuzz
//! binaries in `fuzz/fuzz_targets/` are one-line calls into this crate, and
//! `tests/corpus.rs` runs every committed seed, regression input and local
//! corpus or crash file through the same functions under a plain
//! `cargo test`. No libFuzzer here: the crate builds on stable as a member
//! of the workspace.
//!
//! Each target is `pub fn <target>(data: &[u8])`: it feeds `data` to the
//! code under test and asserts an invariant beyond "no crash" (see each
//! module's documentation and `fuzz/README.md`); a failed assertion or any
//! other panic is a finding. [`TARGETS`] lists them by name.
//!
//! Every binary that links this crate (the cargo-fuzz binaries, its tests)
//! allocates through `zerotrace-test-alloc`'s counting allocator, the
//! system one counted per thread, so a target can assert that the code it
//! runs allocates nothing (`trace_full_schema` does, for the generated
//! decoders).

mod chunk_fragments;
#[cfg(feature = "codegen")]
mod codegen_frontend;
mod commit_data_request;
mod consumer_port;
mod decoder;
pub mod derive_decoders;
pub mod ftrace_page;
mod ipc_frames;
#[cfg(feature = "cli")]
mod json_trace;
#[cfg(feature = "cli")]
mod other_formats;
mod perf_records;
mod perf_unwind;
mod procfs;
mod producer_endpoint;
mod producer_port;
mod smb_abi;
pub mod support;
#[cfg(feature = "cli")]
mod systrace_text;
#[cfg(feature = "cli")]
mod text_config;
pub mod trace_buffer;
mod trace_config;
#[cfg(feature = "cli")]
mod trace_file;
#[cfg(feature = "full-schema")]
pub mod trace_full_schema;
mod trace_packet;
#[cfg(feature = "cli")]
mod trace_processor;
#[cfg(feature = "cli")]
mod trace_processor_time;
mod typed_decoder;

pub use chunk_fragments::chunk_fragments;
#[cfg(feature = "codegen")]
pub use codegen_frontend::codegen_frontend;
pub use commit_data_request::commit_data_request;
pub use consumer_port::consumer_port;
pub use decoder::decoder;
pub use derive_decoders::derive_decoders;
pub use ftrace_page::ftrace_page;
pub use ipc_frames::ipc_frames;
#[cfg(feature = "cli")]
pub use json_trace::json_trace;
#[cfg(feature = "cli")]
pub use other_formats::other_formats;
pub use perf_records::perf_records;
pub use perf_unwind::perf_unwind;
pub use procfs::procfs;
pub use producer_endpoint::producer_endpoint;
pub use producer_port::producer_port;
pub use smb_abi::smb_abi;
pub use support::{Cursor, FakeEnv, ScratchDir, World, scribble, with_stdout_silenced};
#[cfg(feature = "cli")]
pub use systrace_text::systrace_text;
#[cfg(feature = "cli")]
pub use text_config::text_config;
pub use trace_buffer::trace_buffer;
pub use trace_config::trace_config;
#[cfg(feature = "cli")]
pub use trace_file::trace_file;
#[cfg(feature = "full-schema")]
pub use trace_full_schema::trace_full_schema;
pub use trace_packet::trace_packet;
#[cfg(feature = "cli")]
pub use trace_processor::trace_processor;
#[cfg(feature = "cli")]
pub use trace_processor_time::trace_processor_time;
pub use typed_decoder::typed_decoder;

/// The allocator of every binary linking the targets (see the crate docs).
#[global_allocator]
static ALLOCATOR: zerotrace_test_alloc::CountingAlloc = zerotrace_test_alloc::CountingAlloc;

/// A target: its name (the cargo-fuzz binary's and the corpus
/// directories') and its logic.
pub type Target = (&'static str, fn(&[u8]));

/// Every target, by name.
pub const TARGETS: &[Target] = &[
    ("decoder", decoder),
    ("typed_decoder", typed_decoder),
    ("trace_packet", trace_packet),
    #[cfg(feature = "full-schema")]
    ("trace_full_schema", trace_full_schema),
    ("commit_data_request", commit_data_request),
    ("chunk_fragments", chunk_fragments),
    ("smb_abi", smb_abi),
    ("trace_buffer", trace_buffer),
    ("ipc_frames", ipc_frames),
    ("producer_port", producer_port),
    ("producer_endpoint", producer_endpoint),
    ("consumer_port", consumer_port),
    ("trace_config", trace_config),
    #[cfg(feature = "cli")]
    ("text_config", text_config),
    #[cfg(feature = "codegen")]
    ("codegen_frontend", codegen_frontend),
    ("derive_decoders", derive_decoders),
    #[cfg(feature = "cli")]
    ("trace_file", trace_file),
    ("procfs", procfs),
    ("ftrace_page", ftrace_page),
    ("perf_records", perf_records),
    ("perf_unwind", perf_unwind),
    #[cfg(feature = "cli")]
    ("trace_processor", trace_processor),
    #[cfg(feature = "cli")]
    ("trace_processor_time", trace_processor_time),
    #[cfg(feature = "cli")]
    ("json_trace", json_trace),
    #[cfg(feature = "cli")]
    ("systrace_text", systrace_text),
    #[cfg(feature = "cli")]
    ("other_formats", other_formats),
];
