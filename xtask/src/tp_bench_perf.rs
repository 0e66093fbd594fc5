//! A large `perf script` text trace for `cargo xtask tp-bench --perf-text`
//! (issue 65), made up deterministically: samples of several processes'
//! threads on several CPUs, each a sample line as `perf script` prints it
//! (`comm pid/tid [cpu] secs.usecs: period event:`) and its frames leaf
//! first (`\t    address symbol+0xoff (mapping)`), ended by an empty line.
//! Stacks are drawn from a fixed set of call paths with random leaves (so
//! callsites repeat as a profile's do), in user and kernel mappings, some
//! frames `[unknown]`.

use std::fmt::Write as _;
use std::io::Write as _;
use std::path::Path;

use crate::tp_bench_json::Rng;

const COMMS: [&str; 6] = [
    "chrome",
    "surfaceflinger",
    "rustc",
    "java",
    "kworker/3:1",
    "perf",
];
const MAPPINGS: [&str; 8] = [
    "/usr/lib/x86_64-linux-gnu/libc.so.6",
    "/usr/bin/app",
    "/usr/lib/libstdc++.so.6.0.32",
    "/usr/lib/x86_64-linux-gnu/libm.so.6",
    "/opt/app/lib/libengine.so",
    "/opt/app/lib/libui.so",
    "[vdso]",
    "/usr/lib/jvm/lib/server/libjvm.so",
];
const PARTS: [&str; 16] = [
    "run", "poll", "dispatch", "render", "compute", "alloc", "free", "parse", "hash", "copy",
    "sort", "read", "write", "lock", "wait", "submit",
];

/// Call paths to draw stacks from.
const PATHS: u64 = 400;
/// Processes, and threads in each.
const PROCESSES: u64 = 10;
const THREADS: u64 = 6;

/// One user frame: its address, symbol and mapping indexes.
fn frame(out: &mut String, r: &mut Rng, sym: u64) {
    let map = (sym % MAPPINGS.len() as u64) as usize;
    let a = PARTS[(sym % 16) as usize];
    let b = PARTS[((sym / 16) % 16) as usize];
    let _ = writeln!(
        out,
        "\t    {:x} {a}_{b}_{}+0x{:x} ({})",
        0x55d4_a3c0_0000u64 + sym * 0x140 + r.below(0x100),
        sym % 97,
        r.below(0x200),
        MAPPINGS[map]
    );
}

/// Writes a trace of about `mb` MB to `path`; its size.
pub fn write(path: &Path, mb: u64) -> Result<u64, String> {
    let target = mb.saturating_mul(1_000_000);
    let file = std::fs::File::create(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let mut w = std::io::BufWriter::with_capacity(1 << 20, file);
    let mut r = Rng::new(0x7065_7266_7465_7874);
    // Each path: its frames, root first, as symbol numbers.
    let paths: Vec<Vec<u64>> = (0..PATHS)
        .map(|_| {
            let depth = 4 + r.below(28);
            (0..depth).map(|d| d * 50 + r.below(60)).collect()
        })
        .collect();
    let mut out = String::with_capacity(1 << 20);
    let mut written: u64 = 0;
    let mut now_us: u64 = 3_600_000_000;
    while written + (out.len() as u64) < target {
        now_us += 1 + r.below(250);
        let p = r.below(PROCESSES);
        let pid = 2000 + p * 101;
        let tid = pid + r.below(THREADS) * 7;
        let comm = COMMS[(p % COMMS.len() as u64) as usize];
        let _ = writeln!(
            out,
            "{comm} {pid}/{tid} [{:03}] {}.{:06}:     250000 cpu-clock:u: ",
            r.below(8),
            now_us / 1_000_000,
            now_us % 1_000_000
        );
        if r.chance(15) {
            // Kernel frames first, on the leaf side.
            for k in 0..(1 + r.below(4)) {
                let _ = writeln!(
                    out,
                    "\tffffffff8{:07x} {}_kernel_{k}+0x{:x} ([kernel.kallsyms])",
                    r.below(0xfff_ffff),
                    PARTS[r.below(16) as usize],
                    r.below(0x80)
                );
            }
        }
        // A leaf or two of its own, then the path leaf to root.
        for _ in 0..(1 + r.below(2)) {
            let sym = 2000 + r.below(300);
            frame(&mut out, &mut r, sym);
        }
        let path = r.pick(&paths);
        let keep = path.len() - r.below(3) as usize;
        for &sym in path.iter().take(keep).rev() {
            if r.chance(2) {
                let _ = writeln!(out, "\t    {:x} [unknown] ([unknown])", r.next() >> 20);
            } else {
                frame(&mut out, &mut r, sym);
            }
        }
        out.push('\n');
        if out.len() >= 1 << 20 {
            w.write_all(out.as_bytes()).map_err(|e| e.to_string())?;
            written += out.len() as u64;
            out.clear();
        }
    }
    w.write_all(out.as_bytes()).map_err(|e| e.to_string())?;
    written += out.len() as u64;
    w.flush().map_err(|e| e.to_string())?;
    Ok(written)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The text is the same each time, about the size asked for, and
    /// loads as `perf script` text with every sample kept.
    #[test]
    fn the_text_is_deterministic_and_loads_every_sample() {
        let dir = tempfile::tempdir().unwrap();
        let (a, b) = (dir.path().join("a.txt"), dir.path().join("b.txt"));
        let n = write(&a, 1).unwrap();
        write(&b, 1).unwrap();
        let text = std::fs::read(&a).unwrap();
        assert_eq!(text, std::fs::read(&b).unwrap());
        assert!((1_000_000..1_100_000).contains(&n), "{n}");
        let samples = text.windows(2).filter(|w| w == b"\n\n").count();
        let tp = zerotrace_trace_processor::TraceProcessor::open(&a).unwrap();
        let got = tp
            .query("SELECT COUNT(*) FROM cpu_profile_stack_sample")
            .unwrap();
        assert_eq!(format!("{:?}", got.rows[0][0]), format!("Int({samples})"));
    }
}
