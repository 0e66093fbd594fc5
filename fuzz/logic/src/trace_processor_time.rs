//! The trace processor's loader on any bytes, for time rather than
//! crashes: a trace crafted so that each event makes the loader walk a
//! structure the earlier events grew (ending a slice under thousands of
//! complete ones, one more cookie among thousands open) loads in time
//! quadratic in its size, which a crash-only target never notices. The
//! loader counts its work as it goes (`Storage::work`: packets read, slice
//! stack entries touched, track slots searched) with the bytes it took in
//! (after every decompression); the invariant is that the work stays
//! within a constant per byte. No table is built: the load alone is timed,
//! so the target stays cheap in CI's smoke run.

use zerotrace_trace_processor::Loader;

/// Most steps per byte taken in: a packet is at least two bytes and costs
/// two steps (read, parsed); a slice begin or end a few more.
pub const STEPS_PER_BYTE: u64 = 8;
/// Steps allowed whatever the size (the parsers' fixed work).
pub const BASE_STEPS: u64 = 1024;

/// The `trace_processor_time` target: the input is the trace.
pub fn trace_processor_time(data: &[u8]) {
    let mut loader = Loader::new();
    if loader.push(data).is_err() {
        return;
    }
    let Ok(storage) = loader.finish() else {
        return;
    };
    let w = storage.work;
    assert!(
        w.bytes >= data.len() as u64,
        "{} bytes taken in for {} pushed",
        w.bytes,
        data.len()
    );
    let bound = w
        .bytes
        .saturating_mul(STEPS_PER_BYTE)
        .saturating_add(BASE_STEPS);
    assert!(
        w.steps <= bound,
        "{} steps for {} bytes: more than {STEPS_PER_BYTE} a byte",
        w.steps,
        w.bytes
    );
}
