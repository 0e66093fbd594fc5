//! Walking raw pages and reading fields allocates nothing: the binary's
//! counting global allocator (`main.rs`; per thread, so parallel tests do
//! not interfere) shows
//! zero heap allocations while every fixture page is parsed and every field
//! of every record is decoded, once the format table is built.

use crate::ftrace_common;

use ftrace_common::{Recording, fixture_dir};

#[test]
fn parsing_pages_and_fields_allocates_nothing() {
    let rec = Recording::load(&fixture_dir()).expect("fixtures");
    let (table, layout) = rec.layout();
    let before = zerotrace_test_alloc::allocations();
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
    let after = zerotrace_test_alloc::allocations();
    assert!(records > 1000, "{records}");
    assert_eq!(after - before, 0, "{records} records, checksum {checksum}");
}
