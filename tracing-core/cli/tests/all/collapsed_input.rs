//! Collapsed (folded) stacks as input to the profile commands: `zerotrace
//! flamegraph` draws a folded file with each stack weighed by its count,
//! and `convert --format pprof` writes a profile that loads back to the
//! same stacks and counts, from the plain file and from its gzip. And an
//! Instruments XML export (`xctrace export` of a Time Profiler table)
//! draws as its samples' stacks.

use crate::support::{flamegraph_svg, text, zerotrace};

use std::path::PathBuf;

use zerotrace_trace_processor::profile_view::{Filter, Profile, folded};

/// A private directory for one test.
fn dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("zt-collapsed-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// 10 samples: `main` in all, `work` in 7 (`leaf` the leaf of 4).
const STACKS: &str = "# made by hand\nmain;work;leaf 4\nmain;work 3\nmain;idle 2\nmain 1\n";

/// The stacks as written, sorted.
fn written() -> Vec<String> {
    let mut v: Vec<String> = STACKS
        .lines()
        .filter(|l| !l.starts_with('#'))
        .map(str::to_owned)
        .collect();
    v.sort();
    v
}

#[test]
fn flamegraph_and_pprof_read_collapsed_stacks() {
    let d = dir("views");
    let plain = d.join("stacks.folded");
    std::fs::write(&plain, STACKS).unwrap();
    let gz = d.join("stacks.folded.gz");
    let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    std::io::Write::write_all(&mut enc, STACKS.as_bytes()).unwrap();
    std::fs::write(&gz, enc.finish().unwrap()).unwrap();

    for input in [&plain, &gz] {
        let s = flamegraph_svg(input, &d.join("stacks.svg"), &[]);
        for want in [
            "main (10 samples, 100.00%)",
            "work (7 samples, 70.00%)",
            "leaf (4 samples, 40.00%)",
            "idle (2 samples, 20.00%)",
        ] {
            assert!(s.contains(want), "{want} not in the SVG of {input:?}");
        }

        let out = d.join("stacks.pb.gz");
        let o = zerotrace()
            .args(["convert", "--format", "pprof"])
            .arg(input)
            .arg("-o")
            .arg(&out)
            .output()
            .unwrap();
        assert!(o.status.success(), "{input:?}: {}", text(&o.stderr));
        let bytes = std::fs::read(&out).unwrap();
        assert_eq!(
            &bytes[..2],
            &[0x1f, 0x8b],
            "pprof is written gzip-compressed"
        );
        let loaded = Profile::from_trace(&bytes).unwrap();
        let f = folded(&loaded, &Filter::default());
        assert_eq!(f.samples(), 10);
        let mut lines = f.lines();
        lines.sort();
        assert_eq!(lines, written(), "{input:?}");
    }
}

/// Two samples of `main` calling `work` (one `work`'s leaf `leaf`), in an
/// export laid out as `xctrace export` writes it: values with an `id`
/// once, `ref` after.
const INSTRUMENTS: &str = "<?xml version=\"1.0\"?>\n<trace-query-result>\n<node><row>\
<sample-time id=\"1\">100</sample-time><thread id=\"2\" fmt=\"Main Thread\"><tid id=\"3\">5</tid>\
<process id=\"4\" fmt=\"app\"><pid id=\"5\">5</pid></process></thread>\
<backtrace id=\"6\"><frame id=\"7\" name=\"leaf\" addr=\"0x100003e80\">\
<binary id=\"8\" name=\"app\" UUID=\"C3B3BDBD-3487-30F1-8F9D-DD08B7708D49\" load-addr=\"0x100000000\" path=\"/tmp/app\"/></frame>\
<frame id=\"9\" name=\"work\" addr=\"0x100003ec0\"><binary ref=\"8\"/></frame>\
<frame id=\"10\" name=\"main\" addr=\"0x100003ee0\"><binary ref=\"8\"/></frame></backtrace></row>\n\
<row><sample-time id=\"11\">200</sample-time><thread ref=\"2\"/>\
<backtrace id=\"12\"><frame ref=\"9\"/><frame ref=\"10\"/></backtrace></row>\n\
</node></trace-query-result>\n";

#[test]
fn flamegraph_draws_an_instruments_export() {
    let d = dir("instruments");
    let xml = d.join("samples.xml");
    std::fs::write(&xml, INSTRUMENTS).unwrap();
    let s = flamegraph_svg(&xml, &d.join("samples.svg"), &[]);
    for want in [
        "main (2 samples, 100.00%)",
        "work (2 samples, 100.00%)",
        "leaf (1 samples, 50.00%)",
    ] {
        assert!(s.contains(want), "{want} not in the SVG");
    }
}
