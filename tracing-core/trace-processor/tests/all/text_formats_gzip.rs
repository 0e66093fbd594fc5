//! Every reader of a format other than Perfetto's protobuf loads a trace
//! through gzip to the same tables as the plain file: `perf script` text,
//! collapsed stacks, systrace text, strace text, ART method traces,
//! pprof and Instruments XML, each a small trace written here from the
//! format's description, opened as a file and as its `.gz`.

use zerotrace_trace_processor::{TraceProcessor, Value};

use crate::common::rows;

const PERF_SCRIPT: &str = "\
app 10/11 [001] 5.000001:     250000 cpu-clock:u: \n\
\t    5555000010 work+0x10 (/tmp/app)\n\
\t    5555000200 main+0x20 (/tmp/app)\n\
\n\
app 10/10 [000] 5.000251:     250000 cpu-clock:u: \n\
\t    5555000200 main+0x20 (/tmp/app)\n\
\n";

const COLLAPSED: &str = "main;work;leaf 4\nmain;work 3\nmain;idle 2\n";

const SYSTRACE: &str = "\
# tracer: nop\n\
#\n\
#           TASK-PID    CPU#  ||||    TIMESTAMP  FUNCTION\n\
#              | |        |   ||||       |         |\n\
          app-10    [000] ...1     1.000000: tracing_mark_write: B|10|draw\n\
          app-10    [000] ...1     1.000500: tracing_mark_write: E|10\n";

const STRACE: &str = "\
10 1700000000.000000 openat(AT_FDCWD, \"/etc/hosts\", O_RDONLY) = 3\n\
11 1700000000.000100 read(3, \"abc\", 3) = 3\n";

/// An ART method trace (v1: the text header, then `SLOW` records of
/// thread, method | action and two µs clock deltas).
fn art() -> Vec<u8> {
    let mut b = b"*version\n3\ndata-file-overflow=false\nclock=dual\n*threads\n7\tmain\n\
*methods\n0x1000\tcom/example/Main\trun\t()V\tMain.java\t12\n*end\n"
        .to_vec();
    let mut h = b"SLOW".to_vec();
    h.extend_from_slice(&3u16.to_le_bytes());
    h.extend_from_slice(&32u16.to_le_bytes());
    h.extend_from_slice(&1_000u64.to_le_bytes());
    h.extend_from_slice(&14u16.to_le_bytes());
    h.resize(32, 0);
    b.extend(h);
    for (action, wall) in [(0u32, 10u32), (1, 50)] {
        b.extend_from_slice(&7u16.to_le_bytes());
        b.extend_from_slice(&(0x1000 | action).to_le_bytes());
        b.extend_from_slice(&(wall / 2).to_le_bytes());
        b.extend_from_slice(&wall.to_le_bytes());
    }
    b
}

/// A pprof profile: samples/count, one function in one location, 3
/// samples.
fn pprof() -> Vec<u8> {
    use zerotrace_protos::pprof::Profile;
    let mut w = protozero::HeapWriter::new();
    {
        let mut p = Profile::from_message(w.root());
        p.add_sample_type().set_type(1).set_unit(2);
        p.add_sample().set_location_id([1u64]).set_value([3i64]);
        {
            let mut l = p.add_location();
            l.set_id(1).set_address(0x10);
            l.add_line().set_function_id(1).set_line(3);
        }
        p.add_function().set_id(1).set_name(3);
        for s in ["", "samples", "count", "main"] {
            p.add_string_table(s);
        }
    }
    w.finish().expect("pprof writer")
}

const INSTRUMENTS: &str = "<?xml version=\"1.0\"?>\n<trace-query-result><node><row>\
<sample-time id=\"1\">100</sample-time><thread id=\"2\" fmt=\"Main\"><tid id=\"3\">5</tid>\
<process id=\"4\" fmt=\"app\"><pid id=\"5\">5</pid></process></thread>\
<backtrace id=\"6\"><frame id=\"7\" name=\"main\" addr=\"0x10\"/></backtrace></row>\
</node></trace-query-result>\n";

/// What a load put in the tables, in a few numbers and names.
const SIGNATURE: &str = "SELECT
  (SELECT COUNT(*) FROM slice),
  (SELECT GROUP_CONCAT(name, ',') FROM (SELECT name FROM slice ORDER BY ts, id)),
  (SELECT COUNT(*) FROM __intrinsic_profiler_sample),
  (SELECT CAST(SUM(value) AS INT) FROM __intrinsic_aggregate_sample),
  (SELECT GROUP_CONCAT(name, ',') FROM (SELECT name FROM stack_profile_frame ORDER BY id)),
  (SELECT COUNT(*) FROM thread)";

fn gzip(bytes: &[u8]) -> Vec<u8> {
    let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    std::io::Write::write_all(&mut enc, bytes).expect("gzip");
    enc.finish().expect("gzip")
}

#[test]
fn each_reader_loads_through_gzip() {
    let d = std::env::temp_dir().join(format!("zt-text-gzip-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).expect("dir");
    // (format, bytes, the signature's column that must not be empty).
    let cases: Vec<(&str, Vec<u8>, usize)> = vec![
        ("perf_text", PERF_SCRIPT.as_bytes().to_vec(), 2),
        ("collapsed_stack", COLLAPSED.as_bytes().to_vec(), 3),
        ("systrace", SYSTRACE.as_bytes().to_vec(), 1),
        ("strace", STRACE.as_bytes().to_vec(), 1),
        ("art_method", art(), 1),
        ("pprof", pprof(), 3),
        ("instruments_xml", INSTRUMENTS.as_bytes().to_vec(), 2),
    ];
    for (name, bytes, key) in cases {
        let plain = d.join(name);
        let gz = d.join(format!("{name}.gz"));
        std::fs::write(&plain, &bytes).expect("write");
        std::fs::write(&gz, gzip(&bytes)).expect("write");
        let a = TraceProcessor::open(&plain).unwrap_or_else(|e| panic!("{name}: {e}"));
        let b = TraceProcessor::open(&gz).unwrap_or_else(|e| panic!("{name}.gz: {e}"));
        let sig = rows(&a, SIGNATURE);
        assert_eq!(rows(&b, SIGNATURE), sig, "{name}");
        let v = &sig[0][key];
        let empty = matches!(v, Value::Null | Value::Int(0));
        assert!(!empty, "{name} loaded nothing: {sig:?}");
    }
    let _ = std::fs::remove_dir_all(&d);
}
