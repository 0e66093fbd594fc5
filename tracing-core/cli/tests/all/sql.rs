//! `zerotrace sql`: a trace written with zerotrace-protos' writers answers
//! `-Q` and `-q` in trace_processor_shell's CSV, and in `--format table`
//! and `json`; a script on stdin runs statement by statement; bad SQL and
//! a bad trace are errors with their exit codes, pointing at the spot.

use crate::support::zerotrace;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Output, Stdio};

use zerotrace_protos::protos::{TracePacket, track_event};

fn dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("zerotrace-sql-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn packet(f: impl FnOnce(&mut TracePacket<'_>)) -> Vec<u8> {
    let mut w = protozero::HeapWriter::new();
    {
        let mut p = TracePacket::from_message(w.root());
        f(&mut p);
    }
    let p = w.finish().unwrap();
    let mut out = vec![0x0a];
    let mut n = p.len();
    loop {
        let b = (n & 0x7f) as u8;
        n >>= 7;
        if n == 0 {
            out.push(b);
            break;
        }
        out.push(b | 0x80);
    }
    out.extend_from_slice(&p);
    out
}

fn trace() -> Vec<u8> {
    let mut t = packet(|p| {
        p.set_trusted_packet_sequence_id(1);
        p.set_sequence_flags(1);
        let mut td = p.begin_track_descriptor();
        td.set_uuid(1);
        td.set_name("main");
    });
    for (ts, ty) in [
        (100, track_event::Type::SliceBegin),
        (350, track_event::Type::SliceEnd),
    ] {
        t.extend(packet(|p| {
            p.set_trusted_packet_sequence_id(1);
            p.set_timestamp(ts);
            let mut e = p.begin_track_event();
            e.set_track_uuid(1);
            e.set_type(ty);
            if ts == 100 {
                e.set_name("work");
            }
        }));
    }
    t
}

#[test]
fn answers_like_trace_processor_shell() {
    let d = dir("ok");
    let path = d.join("t.pftrace");
    std::fs::write(&path, trace()).unwrap();
    let out = zerotrace()
        .args(["sql"])
        .arg(&path)
        .args([
            "-Q",
            "SELECT 1; SELECT name, dur, ts * 0.5 AS half, NULL AS n FROM slice",
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "\"name\",\"dur\",\"half\",\"n\"\n\"work\",250,50.000000,\"[NULL]\"\n"
    );
    let q = d.join("q.sql");
    std::fs::write(&q, "SELECT count(*) AS c FROM track").unwrap();
    let out = zerotrace()
        .arg("sql")
        .arg(&path)
        .arg("-q")
        .arg(&q)
        .output()
        .unwrap();
    assert_eq!(String::from_utf8_lossy(&out.stdout), "\"c\"\n1\n");
}

#[test]
fn bad_sql_and_bad_traces_are_errors() {
    let d = dir("bad");
    let path = d.join("t.pftrace");
    std::fs::write(&path, trace()).unwrap();
    let out = zerotrace()
        .arg("sql")
        .arg(&path)
        .args(["-Q", "SELEC 1"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("SQL error"));
    let bad = d.join("bad.pftrace");
    std::fs::write(&bad, [0x0f, 0xff, 0xff]).unwrap();
    let out = zerotrace()
        .arg("sql")
        .arg(&bad)
        .args(["-Q", "SELECT 1"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(5));
}

/// `zerotrace sql TRACE ARGS` with `stdin` as its standard input.
fn sql_with_stdin(trace: &Path, args: &[&str], stdin: &str) -> Output {
    let mut child = zerotrace()
        .arg("sql")
        .arg(trace)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(stdin.as_bytes())
        .unwrap();
    child.wait_with_output().unwrap()
}

#[test]
fn formats_table_and_json() {
    let d = dir("formats");
    let path = d.join("t.pftrace");
    std::fs::write(&path, trace()).unwrap();
    let q = "SELECT name, dur, ts * 0.5 AS half, NULL AS n, x'00ff' AS b FROM slice";
    let run = |format: &str| {
        let out = zerotrace()
            .arg("sql")
            .arg(&path)
            .args(["--format", format, "-Q", q])
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap()
    };
    assert_eq!(
        run("csv"),
        "\"name\",\"dur\",\"half\",\"n\",\"b\"\n\"work\",250,50.000000,\"[NULL]\",\"<raw bytes>\"\n"
    );
    assert_eq!(
        run("table"),
        "name  dur       half  n       b\n\
         ----  ---  ---------  ------  ---------\n\
         work  250  50.000000  [NULL]  <2 bytes>\n"
    );
    assert_eq!(
        run("json"),
        "[\n{\"name\":\"work\",\"dur\":250,\"half\":50.0,\"n\":null,\"b\":{\"base64\":\"AP8=\"}}\n]\n"
    );
    let out = zerotrace()
        .arg("sql")
        .arg(&path)
        .args(["--format", "xml", "-Q", "SELECT 1"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "clap's usage error");
}

#[test]
fn sql_errors_point_at_the_line_and_column() {
    let d = dir("caret");
    let path = d.join("t.pftrace");
    std::fs::write(&path, trace()).unwrap();
    let out = zerotrace()
        .arg("sql")
        .arg(&path)
        .args(["-Q", "SELECT 1;\nSELECT name,\n  nope FROM slice"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(out.stdout, b"");
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "zerotrace: SQL error at line 3, column 3: no such column: nope\n    nope FROM slice\n    ^\n"
    );
}

#[test]
fn a_bad_trace_names_the_file_byte_and_packet() {
    let d = dir("badtrace");
    let bad = d.join("bad.pftrace");
    // One good packet (the trace's first), then a field of wire type 7.
    let mut bytes = trace();
    let at = bytes.len();
    bytes.push(0x0f);
    std::fs::write(&bad, &bytes).unwrap();
    let out = zerotrace()
        .arg("sql")
        .arg(&bad)
        .args(["-Q", "SELECT 1"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(5));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains(&bad.display().to_string()), "{err}");
    assert!(
        err.contains(&format!("byte {at} (after 3 packets)")),
        "{err}"
    );
    let out = zerotrace()
        .arg("sql")
        .arg(d.join("missing.pftrace"))
        .args(["-Q", "SELECT 1"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(4));
}

#[test]
fn a_script_on_stdin_prints_each_statement() {
    let d = dir("script");
    let path = d.join("t.pftrace");
    std::fs::write(&path, trace()).unwrap();
    let out = sql_with_stdin(
        &path,
        &[],
        "SELECT name FROM slice;\n-- a comment\nSELECT dur\n  FROM slice;\n.format json\nSELECT 1 AS one",
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "\"name\"\n\"work\"\n\"dur\"\n250\n[\n{\"one\":1}\n]\n"
    );
    assert_eq!(out.stderr, b"", "no counts or times in a script");
    // --format sets the script's starting format; dot commands work.
    let out = sql_with_stdin(&path, &["--format", "table"], ".tables\nSELECT 2 AS two;\n");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("\nslice\n"), "{text}");
    assert!(text.ends_with("two\n---\n  2\n"), "{text}");
    // The first error stops the script, exit 1.
    let out = sql_with_stdin(&path, &[], "SELECT 1 AS a;\nSELECT nope;\nSELECT 3 AS c;\n");
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(String::from_utf8_lossy(&out.stdout), "\"a\"\n1\n");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.starts_with(
            "SQL error at line 1, column 8: no such column: nope\n  SELECT nope;\n         ^\n"
        ),
        "{err}"
    );
}

/// The rows of `file` (one Parquet file), each column as text, and its
/// Arrow schema's (name, type) pairs.
fn read_parquet(file: &Path) -> (Vec<(String, String)>, Vec<Vec<String>>) {
    use arrow_array::{Array, RecordBatchReader};
    use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
    let f = std::fs::File::open(file).unwrap();
    let reader = ParquetRecordBatchReaderBuilder::try_new(f)
        .unwrap()
        .build()
        .unwrap();
    let schema = reader.schema();
    let fields = schema
        .fields()
        .iter()
        .map(|f| (f.name().clone(), f.data_type().to_string()))
        .collect();
    let mut rows = Vec::new();
    for batch in reader {
        let batch = batch.unwrap();
        for r in 0..batch.num_rows() {
            let row = batch
                .columns()
                .iter()
                .map(|c| {
                    if c.is_null(r) {
                        "NULL".to_owned()
                    } else if let Some(a) = c.as_any().downcast_ref::<arrow_array::Int64Array>() {
                        a.value(r).to_string()
                    } else if let Some(a) = c.as_any().downcast_ref::<arrow_array::StringArray>() {
                        a.value(r).to_owned()
                    } else if let Some(a) = c.as_any().downcast_ref::<arrow_array::Float64Array>() {
                        a.value(r).to_string()
                    } else {
                        panic!("unexpected column type {}", c.data_type())
                    }
                })
                .collect();
            rows.push(row);
        }
    }
    (fields, rows)
}

#[test]
fn export_writes_a_hive_partitioned_parquet_dataset_and_names_a_bad_trace() {
    let d = dir("export");
    let traces = d.join("traces");
    std::fs::create_dir_all(&traces).unwrap();
    std::fs::write(traces.join("one.pftrace"), trace()).unwrap();
    std::fs::write(traces.join("two.pftrace"), trace()).unwrap();
    // Field 1 as a varint: not a trace.
    std::fs::write(traces.join("bad.pftrace"), [0x08, 0x01]).unwrap();
    let out = d.join("dataset");
    let o = zerotrace()
        .arg("export")
        .arg(&traces)
        .args(["--format", "parquet", "-o"])
        .arg(&out)
        .output()
        .unwrap();
    // The bad trace is named, the exit code is a bad trace's, and the
    // others are written all the same.
    assert_eq!(
        o.status.code(),
        Some(5),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("trace=bad"), "{err}");
    assert!(err.contains("exported 2 of 3 traces"), "{err}");
    assert!(!out.join("slice").join("trace=bad").exists());
    for id in ["one", "two"] {
        let part = out.join("slice").join(format!("trace={id}"));
        let files: Vec<_> = std::fs::read_dir(&part)
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        // No temporary file is left beside the finished one.
        assert_eq!(files, ["part-0.parquet"]);
        let (fields, rows) = read_parquet(&part.join("part-0.parquet"));
        // Typed as in SQL, in the view's column order, no `trace` column
        // inside the file (it is the partition's).
        assert_eq!(fields[0], ("id".to_owned(), "Int64".to_owned()));
        assert!(fields.contains(&("name".to_owned(), "Utf8".to_owned())));
        assert!(fields.contains(&("thread_dur".to_owned(), "Int64".to_owned())));
        assert!(fields.iter().all(|(n, _)| n != "trace"));
        let ts = fields.iter().position(|(n, _)| n == "ts").unwrap();
        let dur = fields.iter().position(|(n, _)| n == "dur").unwrap();
        let name = fields.iter().position(|(n, _)| n == "name").unwrap();
        assert_eq!(rows.len(), 1);
        assert_eq!(
            (
                rows[0][ts].as_str(),
                rows[0][dur].as_str(),
                rows[0][name].as_str()
            ),
            ("100", "250", "work")
        );
        // An empty table still has its file and schema.
        let (fields, rows) = read_parquet(
            &out.join("perf_sample")
                .join(format!("trace={id}"))
                .join("part-0.parquet"),
        );
        assert!(!fields.is_empty());
        assert!(rows.is_empty());
    }
    // Internal tables only when asked.
    assert!(!out.join("__intrinsic_slice").exists());
    std::fs::remove_dir_all(&d).unwrap();
}

#[test]
fn several_traces_or_a_directory_answer_as_one_set_of_tables() {
    let d = dir("many");
    let traces = d.join("traces");
    std::fs::create_dir_all(traces.join("nested")).unwrap();
    std::fs::write(traces.join("a.pftrace"), trace()).unwrap();
    std::fs::write(traces.join("nested").join("b.pftrace"), trace()).unwrap();
    let q = "SELECT trace, name, dur FROM slice ORDER BY trace";
    let o = zerotrace()
        .arg("sql")
        .arg(&traces)
        .args(["-Q", q])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(
        String::from_utf8_lossy(&o.stdout),
        "\"trace\",\"name\",\"dur\"\n\"a\",\"work\",250\n\"b\",\"work\",250\n"
    );
    // Files named one by one, the same; a bad one is named.
    std::fs::write(d.join("bad.pftrace"), [0x08, 0x01]).unwrap();
    let o = zerotrace()
        .arg("sql")
        .arg(traces.join("a.pftrace"))
        .arg(d.join("bad.pftrace"))
        .args(["-Q", q])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(5));
    assert!(String::from_utf8_lossy(&o.stderr).contains("bad.pftrace"));
    // --httpd serves one trace.
    let o = zerotrace()
        .arg("sql")
        .arg(traces.join("a.pftrace"))
        .arg(traces.join("nested").join("b.pftrace"))
        .args(["--httpd", "127.0.0.1:0"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1));
    std::fs::remove_dir_all(&d).unwrap();
}

/// `ATTACH` of a file in `dir`, a table written there, and `VACUUM INTO`.
fn file_sql(dir: &Path) -> String {
    let q = |p: PathBuf| format!("'{}'", p.display().to_string().replace('\'', "''"));
    format!(
        "ATTACH {} AS x; CREATE TABLE x.t(a); VACUUM INTO {}; SELECT 1 AS ok",
        q(dir.join("x.db")),
        q(dir.join("copy.db"))
    )
}

#[test]
fn sql_touches_no_file_unless_allowed() {
    let d = dir("file-access");
    let path = d.join("t.pftrace");
    std::fs::write(&path, trace()).unwrap();
    let tp = || std::process::Command::new(env!("CARGO_BIN_EXE_zerotrace-tp"));
    for (name, mut cmd) in [("zerotrace sql", zerotrace()), ("zerotrace-tp", tp())] {
        let files = d.join(format!("{}-files", name.replace(' ', "-")));
        std::fs::create_dir_all(&files).unwrap();
        if name == "zerotrace sql" {
            cmd.arg("sql");
        }
        let o = cmd
            .arg(&path)
            .args(["-Q", &file_sql(&files)])
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(1), "{name}: {err}");
        assert!(
            err.contains("ATTACH of a file") && err.contains("--allow-sql-file-access"),
            "{name}: {err}"
        );
        assert_eq!(std::fs::read_dir(&files).unwrap().count(), 0, "{name}");
        // With the flag, the same SQL writes both files.
        let mut cmd = if name == "zerotrace sql" {
            let mut c = zerotrace();
            c.arg("sql");
            c
        } else {
            tp()
        };
        let o = cmd
            .arg(&path)
            .arg("--allow-sql-file-access")
            .args(["-Q", &file_sql(&files)])
            .output()
            .unwrap();
        assert!(
            o.status.success(),
            "{name}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        assert_eq!(String::from_utf8_lossy(&o.stdout), "\"ok\"\n1\n", "{name}");
        assert!(
            files.join("x.db").exists() && files.join("copy.db").exists(),
            "{name}"
        );
    }
    std::fs::remove_dir_all(&d).unwrap();
}

#[test]
fn a_trace_cut_in_half_answers_and_warns_with_the_offset() {
    let d = dir("cut");
    let whole = trace();
    // Half of a packet: it claims 64 bytes and 32 came.
    let mut cut = whole.clone();
    cut.extend_from_slice(&[0x0a, 64]);
    cut.extend_from_slice(&[0; 32]);
    let path = d.join("cut.pftrace");
    std::fs::write(&path, &cut).unwrap();
    let o = zerotrace()
        .arg("sql")
        .arg(&path)
        .args(["-Q", "select count(*) from slice"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{err}");
    assert_eq!(String::from_utf8_lossy(&o.stdout), "\"count(*)\"\n1\n");
    assert!(
        err.contains("warning")
            && err.contains("cut.pftrace")
            && err.contains(&format!("at byte {}", whole.len()))
            && err.contains("dropped"),
        "{err}"
    );
    // The demo trace cut in half: what comes before the cut answers, and
    // the warning names a byte before the cut.
    let demo = d.join("demo.pftrace");
    let o = zerotrace()
        .arg("demo")
        .arg("-o")
        .arg(&demo)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let bytes = std::fs::read(&demo).unwrap();
    let half = bytes.len() / 2;
    std::fs::write(&demo, &bytes[..half]).unwrap();
    let o = zerotrace()
        .arg("sql")
        .arg(&demo)
        .args(["-Q", "select count(*) from slice"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{err}");
    assert!(String::from_utf8_lossy(&o.stdout).starts_with("\"count(*)\"\n"));
    let at: u64 = err
        .split("at byte ")
        .nth(1)
        .and_then(|r| r.split(':').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("{err}"));
    assert!(at < half as u64 && err.contains("dropped"), "{err}");
    // A whole trace: nothing on stderr.
    std::fs::write(&path, &whole).unwrap();
    let o = zerotrace()
        .arg("sql")
        .arg(&path)
        .args(["-Q", "select 1"])
        .output()
        .unwrap();
    assert!(o.status.success() && o.stderr.is_empty(), "{o:?}");
    std::fs::remove_dir_all(&d).unwrap();
}

#[test]
fn include_perfetto_module_runs_a_module_and_names_an_unknown_one() {
    let d = dir("include");
    let path = d.join("t.pftrace");
    std::fs::write(&path, trace()).unwrap();
    let o = zerotrace()
        .arg("sql")
        .arg(&path)
        .args([
            "-Q",
            "INCLUDE PERFETTO MODULE no_such_package.startups; SELECT 1",
        ])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(
        err.contains("line 1, column 1: INCLUDE: Package 'no_such_package.startups' not found"),
        "{err}"
    );
    let o = zerotrace()
        .arg("sql")
        .arg(&path)
        .args([
            "-Q",
            "INCLUDE PERFETTO MODULE time.conversion; SELECT time_to_us(5000) AS us",
        ])
        .output()
        .unwrap();
    let out = String::from_utf8_lossy(&o.stdout);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(out.contains("\"us\"\n5\n"), "{out}");
    std::fs::remove_dir_all(&d).unwrap();
}

#[test]
fn a_directory_s_files_that_are_not_traces_are_skipped() {
    let d = dir("readme");
    let traces = d.join("traces");
    std::fs::create_dir_all(&traces).unwrap();
    std::fs::write(traces.join("README.txt"), "Traces of the build farm.\n").unwrap();
    std::fs::write(traces.join("a.pftrace"), trace()).unwrap();
    let o = zerotrace()
        .arg("sql")
        .arg(&traces)
        .args(["-Q", "SELECT trace, name FROM slice"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{err}");
    assert_eq!(
        String::from_utf8_lossy(&o.stdout),
        "\"trace\",\"name\"\n\"a\",\"work\"\n"
    );
    assert!(
        err.contains("skipped 1 files that are not traces: README.txt"),
        "{err}"
    );
    std::fs::remove_dir_all(&d).unwrap();
}

/// `zerotrace sql --httpd` on an ephemeral loopback port with `extra`
/// flags: the child and the address it says it serves on.
fn serve(trace: &Path, extra: &[&str]) -> (std::process::Child, std::net::SocketAddr) {
    use std::io::BufRead;
    let mut child = zerotrace()
        .arg("sql")
        .arg(trace)
        .args(["--httpd", "127.0.0.1:0"])
        .args(extra)
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = std::io::BufReader::new(child.stderr.take().unwrap()).lines();
    let addr = loop {
        let line = lines
            .next()
            .expect("the server said where it serves")
            .unwrap();
        if let Some(rest) = line.split("http://").nth(1) {
            break rest.split_whitespace().next().unwrap().parse().unwrap();
        }
    };
    (child, addr)
}

#[test]
fn the_http_servers_sql_touches_no_file_unless_allowed() {
    let d = dir("httpd-file-access");
    let path = d.join("t.pftrace");
    std::fs::write(&path, trace()).unwrap();
    let files = d.join("files");
    std::fs::create_dir_all(&files).unwrap();
    let ask = |addr| {
        let mut conn = crate::tp_httpd::connect(addr);
        let r = crate::tp_httpd::send(
            &mut conn,
            "POST",
            "/query",
            &[],
            &crate::tp_httpd::query_args(&file_sql(&files)),
        );
        zerotrace_trace_processor::rpc::decode::decode_query_result(&r.body)
            .unwrap()
            .error
    };
    let (mut child, addr) = serve(&path, &[]);
    let e = ask(addr);
    child.kill().unwrap();
    child.wait().unwrap();
    let e = e.expect("refused");
    assert!(e.contains("--allow-sql-file-access"), "{e}");
    assert_eq!(std::fs::read_dir(&files).unwrap().count(), 0);
    let (mut child, addr) = serve(&path, &["--allow-sql-file-access"]);
    let e = ask(addr);
    child.kill().unwrap();
    child.wait().unwrap();
    assert_eq!(e, None);
    assert!(files.join("x.db").exists() && files.join("copy.db").exists());
    std::fs::remove_dir_all(&d).unwrap();
}
