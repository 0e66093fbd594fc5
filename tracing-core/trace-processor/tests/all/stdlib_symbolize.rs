//! `callstacks.symbolize`: frames named from their binary's DWARF. The
//! binary is this test's own (built with debug information): a function of
//! it, found by its address at run time and turned into the address the
//! ELF file states, must come back with its name, this source file and
//! the line it is written on; a binary that names nothing answers
//! `<invalid>`; a file that is no binary gives NULLs; and without SQL file
//! access nothing is read.

use zerotrace_trace_processor::{TraceProcessor, Value};

use crate::common;
use common::{i, rows, s};

/// A function to look up; returns the line it is declared on (its body
/// is the two lines after).
#[inline(never)]
fn symbolize_marker_function() -> u32 {
    line!() - 1
}

/// This test binary's path, and the ELF address of `f`: its run-time
/// address less where the binary's first segment is mapped, plus the
/// address the ELF gives that segment.
fn elf_address_of(f: fn() -> u32) -> (String, i64) {
    let exe = std::env::current_exe().expect("current exe");
    let exe_s = exe.to_string_lossy().into_owned();
    let maps = std::fs::read_to_string("/proc/self/maps").expect("maps");
    // The mapping of the file at offset 0.
    let start = maps
        .lines()
        .find_map(|l| {
            let mut parts = l.split_whitespace();
            let range = parts.next()?;
            let _perms = parts.next()?;
            let offset = parts.next()?;
            let path = parts.nth(2)?;
            (path == exe_s && u64::from_str_radix(offset, 16).ok()? == 0)
                .then(|| u64::from_str_radix(range.split('-').next()?, 16).ok())
                .flatten()
        })
        .expect("the binary's first mapping");
    let bytes = std::fs::read(&exe).expect("binary");
    let base = zerotrace_profiling::view::image_base_of(&bytes).expect("ELF");
    let runtime = f as usize as u64;
    (exe_s, (runtime - start + base) as i64)
}

/// The 64 bytes of an x86-64 ELF header: a shared object with no
/// segment and no section.
fn bare_elf() -> Vec<u8> {
    let mut b = vec![0x7f, b'E', b'L', b'F', 2, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0];
    b.extend_from_slice(&3u16.to_le_bytes()); // e_type: shared object
    b.extend_from_slice(&0x3eu16.to_le_bytes()); // e_machine: x86-64
    b.extend_from_slice(&1u32.to_le_bytes()); // e_version
    b.extend_from_slice(&[0; 24]); // e_entry, e_phoff, e_shoff
    b.extend_from_slice(&0u32.to_le_bytes()); // e_flags
    for half in [64u16, 56, 0, 64, 0, 0] {
        // e_ehsize, e_phentsize, e_phnum, e_shentsize, e_shnum, e_shstrndx
        b.extend_from_slice(&half.to_le_bytes());
    }
    b
}

fn symbolize(tp: &TraceProcessor, file: &str, rel_pc: i64) -> Vec<Vec<Value>> {
    rows(
        tp,
        &format!(
            "INCLUDE PERFETTO MODULE callstacks.symbolize;
             SELECT function_name, file_name, line_number, mapping_id, address
             FROM _callstack_frame_symbolize!((
               SELECT '{}' AS file_name, {rel_pc} AS rel_pc, 7 AS mapping_id, 1234 AS address
             ))",
            file.replace('\'', "''")
        ),
    )
}

#[test]
fn a_function_of_this_binary_is_named_with_its_file_and_line() {
    let tp = TraceProcessor::from_bytes(&[]).expect("empty trace");
    tp.set_sql_file_access(true);
    let (exe, pc) = elf_address_of(symbolize_marker_function);
    let got = symbolize(&tp, &exe, pc);
    assert_eq!(got.len(), 1, "{got:?}");
    let row = &got[0];
    let Value::Text(name) = &row[0] else {
        panic!("no name: {row:?}")
    };
    assert!(name.contains("symbolize_marker_function"), "{name}");
    let Value::Text(file) = &row[1] else {
        panic!("no file: {row:?}")
    };
    assert!(file.ends_with("stdlib_symbolize.rs"), "{file}");
    let Value::Int(line) = row[2] else {
        panic!("no line: {row:?}")
    };
    let declared = i64::from(symbolize_marker_function());
    assert!(
        (declared..=declared + 2).contains(&line),
        "line {line}, declared on {declared}"
    );
    assert_eq!(row[3..], [i(7), i(1234)]);
}

#[test]
fn unnamed_addresses_and_unreadable_files_are_told_apart() {
    let tp = TraceProcessor::from_bytes(&[]).expect("empty trace");
    tp.set_sql_file_access(true);
    // An ELF file with neither debug information nor symbols names nothing.
    let dir = std::env::temp_dir().join(format!("zerotrace-symbolize-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("dir");
    let bare = dir.join("bare-elf");
    std::fs::write(&bare, bare_elf()).expect("write");
    assert_eq!(
        symbolize(&tp, &bare.to_string_lossy(), 16),
        vec![vec![s("<invalid>"), s("<invalid>"), i(0), i(7), i(1234)]]
    );
    let not_elf = dir.join("not-elf");
    std::fs::write(&not_elf, b"plain text").expect("write");
    for file in [
        not_elf.to_string_lossy().into_owned(),
        dir.join("missing").to_string_lossy().into_owned(),
    ] {
        assert_eq!(
            symbolize(&tp, &file, 16),
            vec![vec![Value::Null, Value::Null, Value::Null, i(7), i(1234)]],
            "{file}"
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn without_sql_file_access_no_binary_is_read() {
    let tp = TraceProcessor::from_bytes(&[]).expect("empty trace");
    let (exe, pc) = elf_address_of(symbolize_marker_function);
    let err = tp
        .query(&format!(
            "INCLUDE PERFETTO MODULE callstacks.symbolize;
             SELECT * FROM _callstack_frame_symbolize!((
               SELECT '{exe}' AS file_name, {pc} AS rel_pc, 1 AS mapping_id, 2 AS address))"
        ))
        .expect_err("refused");
    assert!(err.to_string().contains("--allow-sql-file-access"), "{err}");
    // No frames: nothing to read, no error.
    assert_eq!(
        rows(
            &tp,
            "SELECT count(*) FROM _callstack_frame_symbolize!((
               SELECT 'x' AS file_name, 1 AS rel_pc, 1 AS mapping_id, 2 AS address WHERE 0))"
        ),
        vec![vec![i(0)]]
    );
}
