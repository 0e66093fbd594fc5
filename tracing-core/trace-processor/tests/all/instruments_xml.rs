//! Instruments XML exports written here from the format's description (an
//! `xctrace export` of a Time Profiler table: a `<node>` with the table's
//! `<schema>`, then a `<row>` per sample; every value written out once
//! with an `id` and pointed back to with `ref` after), loaded whole, in
//! small pushes, through gzip, and damaged.

use std::collections::HashMap;
use std::fmt::Write as _;

use zerotrace_trace_processor::{Loader, TraceProcessor, Value};

/// A frame to write: address, name, binary (path, UUID, load address).
#[derive(Clone)]
struct F {
    addr: u64,
    name: &'static str,
    binary: Option<(&'static str, &'static str, u64)>,
}

/// A sample to write.
struct S {
    time: i64,
    tid: i32,
    thread: &'static str,
    pid: i32,
    process: &'static str,
    core: u32,
    /// Leaf first.
    frames: Vec<F>,
}

/// Writes an export as xctrace lays it out.
#[derive(Default)]
struct Export {
    out: String,
    next: u64,
    ids: HashMap<String, u64>,
}

impl Export {
    fn new() -> Self {
        let mut e = Export::default();
        e.out
            .push_str("<?xml version=\"1.0\"?>\n<trace-query-result>\n");
        e.out
            .push_str("<node xpath='//trace-toc[1]/run[1]/data[1]/table[7]'>");
        e.out.push_str(
            "<schema name=\"time-profile\"><col><mnemonic>time</mnemonic>\
             <name>Sample Time</name><engineering-type>sample-time</engineering-type></col>\
             <col><mnemonic>thread</mnemonic><name>Thread</name>\
             <engineering-type>thread</engineering-type></col></schema>\n",
        );
        e
    }

    /// `<tag id="n" attrs>` + body + `</tag>` the first time `key` is
    /// written, `<tag ref="n"/>` after.
    fn value(&mut self, tag: &str, key: String, attrs: &str, body: impl FnOnce(&mut Self)) {
        if let Some(id) = self.ids.get(&key) {
            let _ = write!(self.out, "<{tag} ref=\"{id}\"/>");
            return;
        }
        self.next += 1;
        let id = self.next;
        self.ids.insert(key, id);
        let _ = write!(self.out, "<{tag} id=\"{id}\"{attrs}>");
        body(self);
        let _ = write!(self.out, "</{tag}>");
    }

    fn sample(&mut self, s: &S) {
        self.out.push_str("<row>");
        let t = s.time;
        self.value(
            "sample-time",
            format!("t{t}"),
            &format!(" fmt=\"00:00.{t}\""),
            |e| {
                let _ = write!(e.out, "{t}");
            },
        );
        let (tid, pid) = (s.tid, s.pid);
        let (thread, process) = (s.thread, s.process);
        self.value(
            "thread",
            format!("thread{tid}"),
            &format!(" fmt=\"{thread}\""),
            |e| {
                e.value("tid", format!("tid{tid}"), " fmt=\"tid\"", |e| {
                    let _ = write!(e.out, "{tid}");
                });
                e.value(
                    "process",
                    format!("process{pid}"),
                    &format!(" fmt=\"{process}\""),
                    |e| {
                        e.value("pid", format!("pid{pid}"), "", |e| {
                            let _ = write!(e.out, "{pid}");
                        });
                    },
                );
            },
        );
        let core = s.core;
        self.value(
            "core",
            format!("core{core}"),
            &format!(" fmt=\"CPU {core}\""),
            |e| {
                let _ = write!(e.out, "{core}");
            },
        );
        self.out
            .push_str("<thread-state ref=\"999\"/><weight fmt=\"1.00 ms\">1000000</weight>");
        let key: Vec<String> = s.frames.iter().map(|f| format!("{:x}", f.addr)).collect();
        let frames = s.frames.clone();
        self.value("backtrace", format!("bt{}", key.join(",")), "", |e| {
            for f in &frames {
                let name = f.name.replace('&', "&amp;").replace('<', "&lt;");
                let attrs = format!(" name=\"{name}\" addr=\"0x{:x}\"", f.addr);
                let binary = f.binary;
                e.value("frame", format!("frame{:x}", f.addr), &attrs, |e| {
                    if let Some((path, uuid, load)) = binary {
                        e.value(
                            "binary",
                            format!("binary{path}"),
                            &format!(
                                " name=\"b\" UUID=\"{uuid}\" arch=\"arm64\" \
                                 load-addr=\"0x{load:x}\" path=\"{path}\""
                            ),
                            |_| {},
                        );
                    }
                });
            }
        });
        self.out.push_str("</row>\n");
    }

    /// A points-of-interest row (no backtrace): not a sample; a
    /// `dev.perfetto.clock_sync` signpost carrying BOOTTIME's value (the
    /// subsystem written once, pointed back to after).
    fn signpost(&mut self, t: i64, boottime: u64) {
        self.next += 1;
        let _ = write!(
            self.out,
            "<row><event-time id=\"{}\">{t}</event-time>",
            self.next
        );
        self.value("subsystem", "subsystem".to_owned(), "", |e| {
            e.out.push_str("dev.perfetto.clock_sync");
        });
        let (m, u) = (self.next + 1, self.next + 2);
        self.next += 2;
        let _ = writeln!(
            self.out,
            "<os-log-metadata id=\"{m}\"><uint64 id=\"{u}\">{boottime}</uint64>\
             </os-log-metadata></row>"
        );
    }

    fn finish(mut self) -> Vec<u8> {
        self.out.push_str("</node></trace-query-result>\n");
        self.out.into_bytes()
    }
}

const APP: (&str, &str, u64) = (
    "/private/tmp/test",
    "C3B3BDBD-3487-30F1-8F9D-DD08B7708D49",
    0x1_0000_0000,
);
const DYLD: (&str, &str, u64) = ("/usr/lib/dyld", "0123456789ABCDEF", 0x1_8000_0000);

fn f(addr: u64, name: &'static str, binary: Option<(&'static str, &'static str, u64)>) -> F {
    F { addr, name, binary }
}

/// Three samples on two threads of one process; the third repeats the
/// first's backtrace by reference; times out of order.
fn export() -> Vec<u8> {
    let mut e = Export::new();
    let main = f(0x1_0000_3ee0, "main", Some(APP));
    let start = f(0x1_8000_1000, "start", Some(DYLD));
    let fib = f(0x1_0000_3e80, "fib(int)", Some(APP));
    e.signpost(50, 5678);
    e.sample(&S {
        time: 2000,
        tid: 11,
        thread: "Main Thread",
        pid: 7,
        process: "test",
        core: 3,
        frames: vec![fib.clone(), main.clone(), start.clone()],
    });
    e.sample(&S {
        time: 1000,
        tid: 12,
        thread: "worker <1>",
        pid: 7,
        process: "test",
        core: 1,
        frames: vec![f(0x1234, "", None), main.clone(), start.clone()],
    });
    e.sample(&S {
        time: 3000,
        tid: 11,
        thread: "Main Thread",
        pid: 7,
        process: "test",
        core: 3,
        frames: vec![fib, main, start],
    });
    e.finish()
}

fn rows(tp: &TraceProcessor, sql: &str) -> Vec<Vec<Value>> {
    tp.query(sql).expect(sql).rows
}

fn t(s: &str) -> Value {
    Value::Text(s.to_owned())
}

/// Each sample's stack, root first, as `rel_pc:name` (upstream's query
/// walks the callsites the same way).
const STACKS: &str = "
  WITH RECURSIVE child AS (
    SELECT s.id AS root, spc.id, spc.parent_id, f.rel_pc || ':' || f.name AS path
    FROM instruments_sample s
    JOIN stack_profile_callsite spc ON s.callsite_id = spc.id
    JOIN stack_profile_frame f ON f.id = spc.frame_id
    UNION ALL
    SELECT child.root, parent.id, parent.parent_id,
      f.rel_pc || ':' || f.name || ',' || child.path
    FROM child
    JOIN stack_profile_callsite parent ON child.parent_id = parent.id
    JOIN stack_profile_frame f ON f.id = parent.frame_id)
  SELECT s.ts, thread.tid, thread.name, s.cpu, c.path
  FROM instruments_sample s JOIN child c ON c.root = s.id
  JOIN thread USING (utid)
  WHERE c.parent_id IS NULL ORDER BY s.id";

fn expected() -> Vec<Vec<Value>> {
    // The leaf's pc is its offset in its binary; a caller's is one less.
    let main_root = "4095:start,16095:main";
    vec![
        vec![
            Value::Int(1000),
            Value::Int(12),
            t("worker <1>"),
            Value::Int(0),
            t(&format!("{main_root},4660:")),
        ],
        vec![
            Value::Int(2000),
            Value::Int(11),
            t("Main Thread"),
            Value::Int(0),
            t(&format!("{main_root},16000:fib(int)")),
        ],
        vec![
            Value::Int(3000),
            Value::Int(11),
            t("Main Thread"),
            Value::Int(3),
            t(&format!("{main_root},16000:fib(int)")),
        ],
    ]
}

#[test]
fn samples_fill_upstreams_tables() {
    let tp = TraceProcessor::from_bytes(&export()).expect("loads");
    // A core written out keeps its own row on core 0, as upstream reads
    // it; a row pointing back to it gets its number.
    assert_eq!(rows(&tp, STACKS), expected());
    assert_eq!(
        rows(
            &tp,
            "SELECT name, build_id, start, end, exact_offset FROM stack_profile_mapping ORDER BY id"
        ),
        vec![
            vec![
                t("/usr/lib/dyld"),
                t("0123456789abcdef"),
                Value::Int(0x1_8000_0000),
                Value::Int(0x1_8000_1000),
                Value::Int(0x1_8000_0000),
            ],
            vec![
                t("/private/tmp/test"),
                t("c3b3bdbd348730f18f9ddd08b7708d49"),
                Value::Int(0x1_0000_0000),
                Value::Int(0x1_0000_3ee0),
                Value::Int(0x1_0000_0000),
            ],
            vec![t(""), t(""), Value::Int(0), Value::Int(-1), Value::Int(0),],
        ]
    );
    assert_eq!(
        rows(
            &tp,
            "SELECT p.pid, p.name, COUNT(DISTINCT s.utid) FROM instruments_sample s \
             JOIN thread USING (utid) JOIN process p USING (upid) GROUP BY p.upid"
        ),
        vec![vec![Value::Int(7), t("test"), Value::Int(2)]]
    );
    // The signpost row is no sample; the samples are no other view's.
    assert_eq!(
        rows(&tp, "SELECT COUNT(*) FROM cpu_profile_stack_sample"),
        vec![vec![Value::Int(0)]]
    );
    assert_eq!(
        rows(&tp, "SELECT trace_type FROM trace_file"),
        vec![vec![t("instruments_xml")]]
    );
}

#[test]
fn pushes_split_anywhere_and_gzip_load_the_same() {
    let bytes = export();
    for step in [1, 7, 64, 4096] {
        let mut l = Loader::new();
        for c in bytes.chunks(step) {
            l.push(c).expect("push");
        }
        let tp = TraceProcessor::from_storage(l.finish().expect("finish")).expect("tables");
        assert_eq!(rows(&tp, STACKS), expected(), "step {step}");
    }
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    std::io::Write::write_all(&mut gz, &bytes).expect("gzip");
    let gz = gz.finish().expect("gzip");
    let path = std::env::temp_dir().join(format!("zt-instruments-{}.xml.gz", std::process::id()));
    std::fs::write(&path, gz).expect("write");
    let tp = TraceProcessor::open(&path).expect("gzip loads");
    let _ = std::fs::remove_file(&path);
    assert_eq!(rows(&tp, STACKS), expected());
}

#[test]
fn dangling_references_are_counted() {
    let mut doc = String::from("<?xml version=\"1.0\"?>\n<trace-query-result><node>");
    // No thread; a thread of no process; an unknown frame.
    doc.push_str("<row><sample-time>1</sample-time><backtrace id=\"1\"><frame id=\"2\" addr=\"0x10\"/></backtrace></row>");
    doc.push_str("<row><sample-time>2</sample-time><thread id=\"3\"><tid>5</tid></thread><backtrace ref=\"1\"/></row>");
    doc.push_str("<row><sample-time>3</sample-time><thread id=\"4\"><tid>6</tid><process id=\"5\"><pid>6</pid></process></thread>\
                  <backtrace id=\"6\"><frame ref=\"77\"/><frame ref=\"2\"/></backtrace></row>");
    doc.push_str("</node></trace-query-result>");
    let tp = TraceProcessor::from_bytes(doc.as_bytes()).expect("loads");
    let stat = |name: &str| {
        rows(
            &tp,
            &format!("SELECT value FROM stats WHERE name = '{name}'"),
        )
    };
    assert_eq!(
        stat("instruments_row_missing_thread"),
        vec![vec![Value::Int(1)]]
    );
    assert_eq!(
        stat("instruments_row_missing_process"),
        vec![vec![Value::Int(1)]]
    );
    assert_eq!(
        stat("instruments_row_missing_frame"),
        vec![vec![Value::Int(1)]]
    );
    // The one sample kept has its known frame (on the process's unnamed
    // mapping; not in the leaf's place, so its address less one).
    assert_eq!(
        rows(
            &tp,
            "SELECT s.ts, f.rel_pc, m.name FROM instruments_sample s \
             JOIN stack_profile_callsite c ON c.id = s.callsite_id \
             JOIN stack_profile_frame f ON f.id = c.frame_id \
             JOIN stack_profile_mapping m ON m.id = f.mapping"
        ),
        vec![vec![Value::Int(3), Value::Int(15), t("")]]
    );
}

#[test]
fn damaged_exports_are_errors_not_panics() {
    let bytes = export();
    // Cut anywhere: an error (the document is unfinished), never a panic.
    for cut in (HEAD_LEN..bytes.len() - 2).step_by(97) {
        let r = TraceProcessor::from_bytes(&bytes[..cut]);
        assert!(r.is_err(), "cut at {cut}");
    }
    let bad = b"<?xml version=\"1.0\"?>\n<trace-query-result><row><sample-time>x</sample-time></row></trace-query-result>";
    let Err(e) = TraceProcessor::from_bytes(bad) else {
        panic!("a time that is no number loaded");
    };
    assert!(e.to_string().contains("no number"), "{e}");
    let mut flipped = bytes.clone();
    for i in (HEAD_LEN..flipped.len()).step_by(31) {
        flipped[i] ^= 0x55;
        // Whatever the damage, the load ends.
        let _ = TraceProcessor::from_bytes(&flipped);
    }
}

const HEAD_LEN: usize = "<?xml version=\"1.0\"?>\n<trace-query-result>".len();

/// Samples around clock-sync signposts: BOOTTIME 10 µs at time 50, one
/// going back (skipped), BOOTTIME 20 µs at time 2500.
fn synced_export() -> Vec<u8> {
    let mut e = Export::new();
    let main = f(0x1_0000_3ee0, "main", Some(APP));
    let sample = |time: i64| S {
        time,
        tid: 11,
        thread: "Main Thread",
        pid: 7,
        process: "test",
        core: 3,
        frames: vec![main.clone()],
    };
    e.signpost(50, 10_000);
    e.sample(&sample(1000));
    e.signpost(1500, 9_000);
    e.signpost(2500, 20_000);
    e.sample(&sample(2000));
    e.sample(&sample(3000));
    e.finish()
}

/// A file on its own is its own timeline whatever its signposts say; in
/// a zip beside a protobuf trace (which claims BOOTTIME) each sample
/// moves by the signpost at or before it, one whose BOOTTIME went back
/// left out, as upstream's clock tracker places them.
#[test]
fn clock_sync_signposts_place_samples_on_boottime_beside_a_perfetto_trace() {
    let times = |tp: &TraceProcessor| -> Vec<Vec<Value>> {
        rows(tp, "SELECT ts FROM instruments_sample ORDER BY ts")
    };
    let alone = TraceProcessor::from_bytes(&synced_export()).expect("loads");
    assert_eq!(
        times(&alone),
        vec![
            vec![Value::Int(1000)],
            vec![Value::Int(2000)],
            vec![Value::Int(3000)]
        ]
    );
    let proto = crate::common::trace(&[crate::common::packet(|p| {
        p.set_timestamp(5);
        p.message().append_uint32(10, 1);
    })]);
    let mut w = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    for (name, bytes) in [("a.pftrace", proto), ("b.xml", synced_export())] {
        w.start_file(name, zip::write::SimpleFileOptions::default())
            .expect("zip");
        std::io::Write::write_all(&mut w, &bytes).expect("zip");
    }
    let zipped = w.finish().expect("zip").into_inner();
    let tp = TraceProcessor::from_bytes(&zipped).expect("the zip loads");
    assert_eq!(
        times(&tp),
        vec![
            vec![Value::Int(10_950)],
            vec![Value::Int(11_950)],
            vec![Value::Int(20_500)]
        ]
    );
}

#[test]
fn the_samples_summary_tree_counts_each_stacks_samples() {
    let tp = TraceProcessor::from_bytes(&export()).expect("loads");
    // Two samples end in fib(int) and one in the unnamed frame (named
    // `unknown`, as the callstack modules name a frame without a name),
    // all under start and main.
    assert_eq!(
        rows(
            &tp,
            "INCLUDE PERFETTO MODULE appleos.instruments.samples;
             SELECT t.name, p.name, t.mapping_name, t.self_count, t.cumulative_count
             FROM appleos_instruments_samples_summary_tree t
             LEFT JOIN appleos_instruments_samples_summary_tree p ON p.id = t.parent_id
             ORDER BY t.cumulative_count DESC, t.self_count DESC"
        ),
        vec![
            vec![
                t("start"),
                Value::Null,
                t("/usr/lib/dyld"),
                Value::Int(0),
                Value::Int(3)
            ],
            vec![
                t("main"),
                t("start"),
                t("/private/tmp/test"),
                Value::Int(0),
                Value::Int(3)
            ],
            vec![
                t("fib(int)"),
                t("main"),
                t("/private/tmp/test"),
                Value::Int(2),
                Value::Int(2)
            ],
            vec![t("unknown"), t("main"), t(""), Value::Int(1), Value::Int(1)],
        ]
    );
}
