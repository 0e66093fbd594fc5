//! The pprof reader over profiles written here with the generated pprof
//! writers: what lands in which table, and hostile profiles.

use zerotrace_protos::pprof::Profile as PprofWriter;

use crate::Loader;
use crate::error::TraceError;
use crate::storage::Storage;

/// Strings of the test profile, by index.
const STRINGS: &[&str] = &[
    "",
    "samples",
    "count",
    "cpu",
    "nanoseconds",
    "main",
    "work",
    "helper",
    "/bin/app",
    "app.go",
    "abc",
];

/// A profile: samples/count and cpu/nanoseconds; one mapping
/// (`/bin/app` at 0x1000, build id `abc`); functions main, work and
/// helper (helper inlined into work at location 2); samples
/// [work+helper ← main] ×3 and [main] ×1, leaf first.
fn profile(edit: impl FnOnce(&mut PprofWriter<'_>)) -> Vec<u8> {
    let mut w = protozero::HeapWriter::new();
    {
        let mut p = PprofWriter::from_message(w.root());
        p.add_sample_type().set_type(1).set_unit(2);
        p.add_sample_type().set_type(3).set_unit(4);
        p.add_sample()
            .set_location_id([2u64, 1])
            .set_value([3i64, 30]);
        p.add_sample().set_location_id([1u64]).set_value([1i64, 10]);
        p.add_mapping()
            .set_id(1)
            .set_memory_start(0x1000)
            .set_memory_limit(0x9000)
            .set_file_offset(0)
            .set_filename(8)
            .set_build_id(10);
        {
            let mut l = p.add_location();
            l.set_id(1).set_mapping_id(1).set_address(0x1234);
            l.add_line().set_function_id(1).set_line(7);
        }
        {
            let mut l = p.add_location();
            l.set_id(2).set_mapping_id(1).set_address(0x2000);
            l.add_line().set_function_id(3).set_line(0);
            l.add_line().set_function_id(2).set_line(21);
        }
        p.add_function().set_id(1).set_name(5).set_filename(9);
        p.add_function().set_id(2).set_name(6).set_filename(9);
        p.add_function()
            .set_id(3)
            .set_name(7)
            .set_filename(9)
            .set_start_line(40);
        for s in STRINGS {
            p.add_string_table(s);
        }
        p.begin_period_type().set_type(3).set_unit(4);
        p.set_period(10);
        edit(&mut p);
    }
    w.finish().unwrap()
}

fn load(bytes: &[u8], step: usize) -> Result<Storage, TraceError> {
    let mut l = Loader::new();
    for c in bytes.chunks(step.max(1)) {
        l.push(c)?;
    }
    l.finish()
}

/// The frames of a callsite, leaf first.
fn stack(st: &Storage, callsite: u32) -> Vec<String> {
    let p = &st.profiling;
    let mut out = Vec::new();
    let mut c = Some(callsite);
    while let Some(id) = c {
        let cs = &p.callsites[id as usize];
        out.push(
            st.strings
                .get(p.frames[cs.frame_id as usize].name)
                .unwrap_or("")
                .to_owned(),
        );
        c = cs.parent_id;
    }
    out
}

/// A profile fills the aggregated profile tables (a row per sample
/// type, a value per sample and type on the callsite of its stack, root
/// first) and the stack-profile tables (the mapping with its hex build
/// id, frames at pcs relative to the mapping named by their first line,
/// each location's lines one symbol set, all but the outermost inlined,
/// a line without a number taking its function's start line), whatever
/// the chunks.
#[test]
fn a_profile_fills_the_aggregate_and_stack_profile_tables() {
    let bytes = profile(|_| {});
    for step in [bytes.len(), 1, 7] {
        let st = load(&bytes, step).unwrap();
        let s = |id| st.strings.get(id).unwrap_or("NULL").to_owned();
        let p = &st.profiling;
        let profiles: Vec<[String; 4]> = p
            .aggregate_profiles
            .iter()
            .map(|r| {
                [
                    s(r.scope),
                    s(r.name),
                    s(r.sample_type_type),
                    s(r.sample_type_unit),
                ]
            })
            .collect();
        assert_eq!(
            profiles,
            [
                ["pprof_file", "pprof samples", "samples", "count"].map(String::from),
                ["pprof_file", "pprof cpu", "cpu", "nanoseconds"].map(String::from),
            ]
        );
        let samples: Vec<(u32, Vec<String>, f64)> = p
            .aggregate_samples
            .iter()
            .map(|r| (r.aggregate_profile_id, stack(&st, r.callsite_id), r.value))
            .collect();
        // Location 2 is named by its first (innermost) line: helper.
        let work_main = vec!["helper".to_owned(), "main".to_owned()];
        let main = vec!["main".to_owned()];
        assert_eq!(
            samples,
            [
                (0, work_main.clone(), 3.0),
                (1, work_main, 30.0),
                (0, main.clone(), 1.0),
                (1, main, 10.0),
            ]
        );
        assert_eq!(p.mappings.len(), 1);
        let m = &p.mappings[0];
        assert_eq!(
            (s(m.name), s(m.build_id)),
            ("/bin/app".into(), "616263".into())
        );
        assert_eq!((m.start, m.end), (0x1000, 0x9000));
        let frames: Vec<(String, i64)> = p.frames.iter().map(|f| (s(f.name), f.rel_pc)).collect();
        assert_eq!(frames, [("main".into(), 0x234), ("helper".into(), 0x1000)]);
        // Location 2's set: helper (inlined, its start line) then work.
        let set = p.frames[1].symbol_set_id.unwrap();
        let lines: Vec<(String, String, Option<u32>, Option<u32>)> = p
            .symbols
            .iter()
            .filter(|r| r.symbol_set_id == set)
            .map(|r| (s(r.name), s(r.source_file), r.line_number, r.inlined))
            .collect();
        assert_eq!(
            lines,
            [
                ("helper".into(), "app.go".into(), Some(40), Some(1)),
                ("work".into(), "app.go".into(), Some(21), Some(0)),
            ]
        );
        let files: Vec<String> = st.trace_files.iter().map(|f| s(f.trace_type)).collect();
        assert_eq!(files, ["pprof"]);
    }
}

/// Ids and indices that point nowhere are left out and counted: a
/// string index past the table, a location's missing mapping (the
/// location gets an `[unknown]` mapping of its own), a line's missing
/// function, a sample's missing location (a sample with none left is
/// dropped), a limit below the start.
#[test]
fn dangling_ids_are_left_out_and_counted() {
    let bytes = profile(|p| {
        p.add_mapping()
            .set_id(2)
            .set_memory_start(0x5000)
            .set_memory_limit(0x10)
            .set_filename(99);
        {
            let mut l = p.add_location();
            l.set_id(3).set_mapping_id(7).set_address(0x42);
            l.add_line().set_function_id(77);
        }
        p.add_sample()
            .set_location_id([3u64, 55])
            .set_value([5i64, 50]);
        p.add_sample().set_location_id([56u64]).set_value([1i64, 1]);
        p.add_sample_type().set_type(1000).set_unit(2);
    });
    let st = load(&bytes, bytes.len()).unwrap();
    let stat = |n| st.stats.get(n);
    assert_eq!(stat("stackprofile_invalid_string_id"), 2);
    assert_eq!(stat("stackprofile_invalid_mapping_id"), 1);
    assert_eq!(stat("stackprofile_invalid_frame_id"), 3);
    assert_eq!(stat("stackprofile_empty_callstack"), 1);
    let p = &st.profiling;
    let name = |m: usize| st.strings.get(p.mappings[m].name).unwrap_or("").to_owned();
    assert_eq!(name(1), "");
    assert_eq!((p.mappings[1].start, p.mappings[1].end), (0x5000, 0x5000));
    assert_eq!(name(2), "[unknown]");
    let unknown = p.frames.last().unwrap();
    assert_eq!(st.strings.get(unknown.name), Some("[unknown]"));
    assert_eq!((unknown.mapping, unknown.rel_pc), (2, 0x42));
    // The third sample type has no row of its own in the samples (two values each).
    assert_eq!(p.aggregate_profiles.len(), 3);
    assert_eq!(p.aggregate_samples.len(), 6);
}

/// A profile with no string table is refused (pprof requires its "").
#[test]
fn a_profile_without_strings_is_refused() {
    let mut w = protozero::HeapWriter::new();
    {
        let mut p = PprofWriter::from_message(w.root());
        p.add_sample_type().set_type(1).set_unit(2);
        p.add_sample().set_location_id([1u64]).set_value([1i64]);
        p.add_function().set_id(1).set_name(5);
    }
    let bytes = w.finish().unwrap();
    let e = load(&bytes, bytes.len()).unwrap_err();
    assert!(e.to_string().contains("string table"), "{e}");
}

/// Every prefix of a profile and every single-byte change of it loads or
/// is refused without a panic.
#[test]
fn cut_or_damaged_profiles_never_panic() {
    let bytes = profile(|_| {});
    for n in 0..bytes.len() {
        let _ = load(&bytes[..n], 5);
    }
    for i in 0..bytes.len() {
        let mut b = bytes.clone();
        b[i] ^= 0xa5;
        let _ = load(&b, b.len());
    }
}
