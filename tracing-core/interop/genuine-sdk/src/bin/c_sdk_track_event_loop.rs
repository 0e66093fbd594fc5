//! `c_sdk_track_event_loop`: the genuine Perfetto C SDK's cost per slice
//! (begin + end), counted by callgrind exactly as our `trace_event!` is
//! (`tracing-core/hot-paths/src/bin/trace_event_loop.rs`), so that the
//! issues' goal "TRACE_EVENT ≤ 0.2× the C SDK" has a figure that does not
//! move with the machine. `cargo xtask instructions --genuine` builds and
//! runs it:
//!
//! ```sh
//! cargo build --profile hot-paths -p zerotrace-genuine-sdk --bin c_sdk_track_event_loop
//! valgrind --tool=callgrind --toggle-collect='c_sdk_track_event_loop::run_*' \
//!     target/hot-paths/c_sdk_track_event_loop 4000 two_args
//! ```
//!
//! The same event as ours: category `bench` enabled, a slice named
//! `slice` begun and ended on the thread's track, with no annotation
//! (`no_args`) or with an int `count` and a string `what` (`two_args`),
//! recorded by an in-process session into a ring buffer, `N` times in a
//! function of its own (`run_*`). Variants:
//!
//! * `no_args`, `two_args`: what the C SDK's `PERFETTO_TE(cat,
//!   PERFETTO_TE_SLICE_BEGIN("slice"), PERFETTO_TE_ARG_INT64(...),
//!   PERFETTO_TE_ARG_STRING(...))` and `PERFETTO_TE(cat,
//!   PERFETTO_TE_SLICE_END())` expand to: a relaxed load of the
//!   category's enabled flag, then `PerfettoTeHlEmitImpl` with the extras
//!   on the stack and a null-terminated array of pointers to them (the
//!   crate ships the SDK's ABI, not its C macro header, so the expansion
//!   is written out here);
//! * `rust_no_args`, `rust_two_args`: the same through upstream's Rust
//!   binding's `track_event_begin!`/`track_event_end!` (`perfetto-sdk`),
//!   as the criterion bench (`benches/track_event.rs`) times it; the
//!   binding adds a lock and heap allocations per event on top of the C
//!   SDK's work.
//!
//! It refuses to run (exit 1) unless the category is enabled when the loop
//! starts, so that a count is never that of the disabled path.

use std::ffi::CStr;
use std::hint::black_box;
use std::ptr;
use std::sync::atomic::{AtomicBool, Ordering};

use perfetto_sdk::heap_buffer::HeapBuffer;
use perfetto_sdk::pb_msg::{PbMsg, PbMsgWriter};
use perfetto_sdk::producer::{Backends, Producer, ProducerInitArgsBuilder};
use perfetto_sdk::protos::config::data_source_config::DataSourceConfig;
use perfetto_sdk::protos::config::trace_config::{
    BufferConfigFillPolicy, TraceConfig, TraceConfigBufferConfig, TraceConfigDataSource,
};
use perfetto_sdk::protos::config::track_event::track_event_config::TrackEventConfig;
use perfetto_sdk::tracing_session::TracingSession;
use perfetto_sdk::track_event::{EventContext, TrackEvent, TrackEventDebugArg};
use perfetto_sdk::{track_event_begin, track_event_categories, track_event_end};
use perfetto_sdk_sys::{
    PerfettoTeCategoryDescriptor, PerfettoTeCategoryImpl, PerfettoTeCategoryImplCreate,
    PerfettoTeCategoryImplGetEnabled, PerfettoTeHlEmitImpl, PerfettoTeHlExtra,
    PerfettoTeHlExtraDebugArgInt64, PerfettoTeHlExtraDebugArgString,
    PerfettoTeHlExtraType_PERFETTO_TE_HL_EXTRA_TYPE_DEBUG_ARG_INT64,
    PerfettoTeHlExtraType_PERFETTO_TE_HL_EXTRA_TYPE_DEBUG_ARG_STRING, PerfettoTePublishCategories,
    PerfettoTeType_PERFETTO_TE_TYPE_SLICE_BEGIN, PerfettoTeType_PERFETTO_TE_TYPE_SLICE_END,
};

/// The binding's category for the `rust_*` variants (its macro writes the
/// module).
#[allow(missing_docs)]
mod binding_categories {
    use super::track_event_categories;
    track_event_categories! {
        pub mod loop_te_ns {
            ("bench_rs", "Slices through the Rust binding", []),
        }
    }
}
use binding_categories::loop_te_ns as perfetto_te_ns;

/// A category registered with the C SDK, as the C macros hold it: its
/// implementation and the flag the SDK sets while a session enables it.
#[derive(Clone, Copy)]
struct CCategory {
    imp: *mut PerfettoTeCategoryImpl,
    enabled: *const AtomicBool,
}

impl CCategory {
    /// Registers `bench` (`PERFETTO_TE_REGISTER_CATEGORIES`'s work for one
    /// category), or `None` if the SDK refused it.
    fn register() -> Option<Self> {
        // The descriptor must outlive the category: leaked, as a C
        // program's static one lives for the process.
        let desc: &'static mut PerfettoTeCategoryDescriptor =
            Box::leak(Box::new(PerfettoTeCategoryDescriptor {
                name: c"bench".as_ptr(),
                desc: c"Slices counted by callgrind".as_ptr(),
                tags: ptr::null_mut(),
                num_tags: 0,
            }));
        // SAFETY: `desc` names null-terminated strings that live for the
        // process, with no tags; the SDK is initialised (`main`).
        let imp = unsafe { PerfettoTeCategoryImplCreate(desc) };
        if imp.is_null() {
            return None;
        }
        // SAFETY: `imp` was just created by PerfettoTeCategoryImplCreate.
        let enabled = unsafe { PerfettoTeCategoryImplGetEnabled(imp) };
        if enabled.is_null() {
            return None;
        }
        // SAFETY: FFI call with no precondition beyond an initialised SDK.
        unsafe { PerfettoTePublishCategories() };
        // The flag is a C11 atomic_bool, one byte like `bool` (the sys
        // crate's build checks the sizes match), read with atomics as the
        // C macro does.
        Some(Self {
            imp,
            enabled: enabled.cast_const().cast::<AtomicBool>(),
        })
    }

    /// The C macro's test: a relaxed load of the flag.
    #[inline(always)]
    fn is_enabled(self) -> bool {
        // SAFETY: `enabled` points to the category's flag, which the SDK
        // keeps for as long as the category is registered (the process).
        unsafe { (*self.enabled).load(Ordering::Relaxed) }
    }

    /// `PerfettoTeHlEmitImpl` with `extras` (null-terminated).
    #[inline(always)]
    fn emit(self, te_type: u32, name: Option<&CStr>, extras: &[*mut PerfettoTeHlExtra]) {
        debug_assert!(extras.last().is_some_and(|e| e.is_null()));
        // SAFETY: `imp` is a registered category; `name` is
        // null-terminated or null; `extras` is a null-terminated array of
        // extras that live across the call.
        unsafe {
            PerfettoTeHlEmitImpl(
                self.imp,
                te_type as i32,
                name.map_or(ptr::null(), CStr::as_ptr),
                extras.as_ptr(),
            )
        };
    }
}

/// `PERFETTO_TE(cat, PERFETTO_TE_SLICE_END())`.
#[inline(always)]
fn c_slice_end(cat: CCategory) {
    if cat.is_enabled() {
        cat.emit(
            PerfettoTeType_PERFETTO_TE_TYPE_SLICE_END,
            None,
            &[ptr::null_mut()],
        );
    }
}

#[inline(never)]
fn run_no_args(n: u64, cat: CCategory) {
    for _ in 0..n {
        // PERFETTO_TE(cat, PERFETTO_TE_SLICE_BEGIN("slice"))
        if cat.is_enabled() {
            cat.emit(
                PerfettoTeType_PERFETTO_TE_TYPE_SLICE_BEGIN,
                Some(c"slice"),
                &[ptr::null_mut()],
            );
        }
        c_slice_end(cat);
    }
}

#[inline(never)]
fn run_two_args(n: u64, cat: CCategory) {
    for i in 0..n {
        let (count, what) = (black_box(i as i64), black_box(c"parse"));
        // PERFETTO_TE(cat, PERFETTO_TE_SLICE_BEGIN("slice"),
        //             PERFETTO_TE_ARG_INT64("count", count),
        //             PERFETTO_TE_ARG_STRING("what", what))
        if cat.is_enabled() {
            let mut int_arg = PerfettoTeHlExtraDebugArgInt64 {
                header: PerfettoTeHlExtra {
                    type_: PerfettoTeHlExtraType_PERFETTO_TE_HL_EXTRA_TYPE_DEBUG_ARG_INT64,
                },
                name: c"count".as_ptr(),
                value: count,
            };
            let mut str_arg = PerfettoTeHlExtraDebugArgString {
                header: PerfettoTeHlExtra {
                    type_: PerfettoTeHlExtraType_PERFETTO_TE_HL_EXTRA_TYPE_DEBUG_ARG_STRING,
                },
                name: c"what".as_ptr(),
                value: what.as_ptr(),
            };
            cat.emit(
                PerfettoTeType_PERFETTO_TE_TYPE_SLICE_BEGIN,
                Some(c"slice"),
                &[
                    (&raw mut int_arg).cast::<PerfettoTeHlExtra>(),
                    (&raw mut str_arg).cast::<PerfettoTeHlExtra>(),
                    ptr::null_mut(),
                ],
            );
        }
        c_slice_end(cat);
    }
}

#[inline(never)]
fn run_rust_no_args(n: u64) {
    for _ in 0..n {
        track_event_begin!("bench_rs", "slice");
        track_event_end!("bench_rs");
    }
}

#[inline(never)]
fn run_rust_two_args(n: u64) {
    for i in 0..n {
        let (count, what) = (black_box(i as i64), black_box("parse"));
        track_event_begin!("bench_rs", "slice", |ctx: &mut EventContext| {
            ctx.add_debug_arg("count", TrackEventDebugArg::Int64(count));
            ctx.add_debug_arg("what", TrackEventDebugArg::String(what));
        });
        track_event_end!("bench_rs");
    }
}

/// The session's config: a 32 MiB ring buffer (as the criterion bench's),
/// the track event data source with both categories enabled and every
/// other disabled.
fn trace_config() -> Result<Vec<u8>, String> {
    let writer = PbMsgWriter::new();
    let hb = HeapBuffer::new(writer.stream_writer());
    let mut msg = PbMsg::new(&writer).map_err(|e| format!("config message: {e:?}"))?;
    {
        let mut cfg = TraceConfig { msg: &mut msg };
        cfg.set_buffers(|b: &mut TraceConfigBufferConfig| {
            b.set_size_kb(32 * 1024);
            b.set_fill_policy(BufferConfigFillPolicy::RingBuffer);
        });
        cfg.set_data_sources(|ds: &mut TraceConfigDataSource| {
            ds.set_config(|c: &mut DataSourceConfig| {
                c.set_name("track_event");
                c.set_track_event_config(|te: &mut TrackEventConfig| {
                    te.set_enabled_categories("bench");
                    te.set_enabled_categories("bench_rs");
                    te.set_disabled_categories("*");
                });
            });
        });
    }
    msg.finalize();
    let mut bytes = vec![0u8; writer.stream_writer().get_written_size()];
    hb.copy_into(&mut bytes);
    Ok(bytes)
}

fn main() -> Result<(), String> {
    let mut args = std::env::args().skip(1);
    let n: u64 = args
        .next()
        .as_deref()
        .unwrap_or("100000")
        .parse()
        .map_err(|e| format!("iteration count: {e}"))?;
    let variant = args.next().unwrap_or_else(|| "two_args".into());

    Producer::init(
        ProducerInitArgsBuilder::new()
            .backends(Backends::IN_PROCESS)
            .build(),
    );
    TrackEvent::init();
    let cat = CCategory::register().ok_or("the C SDK refused the category")?;
    perfetto_te_ns::register().map_err(|e| format!("binding's categories: {e:?}"))?;
    let mut session = TracingSession::in_process().map_err(|e| format!("session: {e:?}"))?;
    session.setup(&trace_config()?);
    session.start_blocking();
    if !cat.is_enabled() || !perfetto_te_ns::is_category_enabled(0) {
        return Err("the session did not enable the categories: nothing would be recorded".into());
    }

    match variant.as_str() {
        "no_args" => run_no_args(n, cat),
        "two_args" => run_two_args(n, cat),
        "rust_no_args" => run_rust_no_args(n),
        "rust_two_args" => run_rust_two_args(n),
        other => return Err(format!("unknown variant {other}")),
    }

    session.stop_blocking();
    let size = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let sink = size.clone();
    session.read_trace_blocking(move |data, _more| {
        sink.fetch_add(data.len(), Ordering::Relaxed);
    });
    let size = size.load(Ordering::Relaxed);
    println!("{n} slices ({variant}): a trace of {size} bytes");
    Ok(())
}
