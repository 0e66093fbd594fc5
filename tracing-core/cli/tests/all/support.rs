//! What several modules of this binary share: the `zerotrace` command,
//! its output as text, a flame graph drawn by it, and packets framed as a
//! trace.

use std::path::Path;
use std::process::Command;

/// The `zerotrace` binary this package built.
pub fn zerotrace() -> Command {
    Command::new(env!("CARGO_BIN_EXE_zerotrace"))
}

/// Output bytes as text (invalid UTF-8 replaced).
pub fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// `zerotrace flamegraph INPUT -o SVG ARGS`, which must succeed: the SVG.
pub fn flamegraph_svg(input: &Path, svg: &Path, args: &[&str]) -> String {
    let o = zerotrace()
        .arg("flamegraph")
        .arg(input)
        .arg("-o")
        .arg(svg)
        .args(args)
        .output()
        .unwrap();
    assert!(o.status.success(), "{input:?}: {}", text(&o.stderr));
    std::fs::read_to_string(svg).unwrap()
}

/// `packets` framed as a trace (`Trace.packet` entries), for the trace
/// processor.
pub fn framed<P: AsRef<[u8]>>(packets: &[P]) -> Vec<u8> {
    let mut out = Vec::new();
    for p in packets {
        let p = p.as_ref();
        out.push(0x0a);
        let mut n = p.len() as u64;
        while n >= 0x80 {
            out.push((n as u8) | 0x80);
            n >>= 7;
        }
        out.push(n as u8);
        out.extend_from_slice(p);
    }
    out
}
