//! Walking raw pages and reading fields allocates nothing: a counting
//! global allocator (per thread, so parallel tests do not interfere) shows
//! zero heap allocations while every fixture page is parsed and every field
//! of every record is decoded, once the format table is built.

mod ftrace_common;

use ftrace_common::{Recording, fixture_dir};
use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

/// Counts allocations made by the current thread.
struct Counting;

thread_local! {
    static ALLOCATIONS: Cell<usize> = const { Cell::new(0) };
}

fn count() {
    // `try_with`: the slot may be gone while a thread is being torn down.
    let _ = ALLOCATIONS.try_with(|c| c.set(c.get() + 1));
}

// SAFETY: every call is forwarded unchanged to the system allocator; the
// counter is a const-initialized thread-local that never allocates.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        count();
        // SAFETY: same contract as the caller's.
        unsafe { System.alloc(layout) }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        count();
        // SAFETY: same contract as the caller's.
        unsafe { System.alloc_zeroed(layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        count();
        // SAFETY: same contract as the caller's.
        unsafe { System.realloc(ptr, layout, new_size) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: same contract as the caller's.
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

#[test]
fn parsing_pages_and_fields_allocates_nothing() {
    let rec = Recording::load(&fixture_dir()).expect("fixtures");
    let (table, layout) = rec.layout();
    let before = ALLOCATIONS.with(Cell::get);
    let mut records = 0usize;
    let mut checksum = 0u64;
    for raw in &rec.raw {
        for page in layout.pages(raw) {
            let Ok(page) = page else { continue };
            for r in page.records().flatten() {
                records += 1;
                if let Ok(ev) = table.decode(&r) {
                    checksum = checksum.wrapping_add(ev.pid().map_or(0, |p| p as u64));
                    for (_, v) in ev.fields() {
                        if let Ok(v) = v {
                            checksum = checksum
                                .wrapping_add(v.as_u64().unwrap_or(0))
                                .wrapping_add(v.as_bytes().map_or(0, |b| b.len() as u64));
                        }
                    }
                    if let Ok(v) = ev.field("common_pid") {
                        checksum = checksum.wrapping_add(v.as_u64().unwrap_or(0));
                    }
                }
            }
        }
    }
    let after = ALLOCATIONS.with(Cell::get);
    assert!(records > 1000, "{records}");
    assert_eq!(after - before, 0, "{records} records, checksum {checksum}");
}
