//! Issue #40's overhead benchmark (`cargo xtask heap-cost`): an
//! allocation-heavy workload (maps of strings in Rust, a table of strings
//! in C) run in rotated rounds
//! - Rust: plain (system allocator), with `HeapProfiler` installed and no
//!   session, profiled in-process at 4096 bytes, under dhat-rs, and under
//!   heaptrack;
//! - C: plain, under `libzerotrace_heapprofd.so` with no session for it
//!   and profiled at 4096 bytes into a service run here, and under
//!   heaptrack (the preload library's helper process is not the timed
//!   child's: its CPU time is not in the CPU column);
//!
//! each timed as a child (`wait4`: wall time, CPU time, peak RSS); the
//! medians and the ratios to plain are printed, with the goals: profiled
//! at most 1.5x the plain run time, installed-but-idle at most 1.05x.
//!
//! Issue #51's allocation-heavy C program (`heap_churn.c`: 5 M
//! `malloc`/`free` pairs of 16-4096 B) plain, under the preload library
//! idle and profiled losslessly at 4096 bytes (`block_client`), and under
//! heaptrack, with the ratios to plain and to heaptrack, the samples taken,
//! the client's time blocked, and its CPU time per sample over the idle run.
//!
//! `heap_cost [ROUNDS_OF_THE_TABLE] [WORKLOAD_ROUNDS] [ONLY]` (defaults 5,
//! 40; ONLY `churn` runs the allocation-heavy table alone). Run from
//! `cargo xtask heap-cost`, which builds the examples first.

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Instant;

use protozero::HeapWriter;
use zerotrace_core::consumer::{ConsumerClient, EnableRequest};
use zerotrace_core::daemon::{DaemonConfig, DaemonThread};
use zerotrace_core::ipc::Endpoint;
use zerotrace_protos::protos::{TraceConfig, TracePacketDecoder};

/// One run's figures.
#[derive(Debug, Clone, Copy)]
struct Run {
    wall: f64,
    cpu: f64,
    rss_kb: i64,
}

/// Runs `cmd` to its end; its wall time, CPU time and peak RSS.
fn timed(cmd: &mut Command) -> Result<Run, String> {
    timed_output(cmd.stdout(Stdio::null())).map(|(r, _)| r)
}

/// As [`timed`], with what the command printed (a few lines at most: the
/// pipe is read once the command has exited).
fn timed_output(cmd: &mut Command) -> Result<(Run, String), String> {
    let start = Instant::now();
    let mut child = cmd
        .stderr(Stdio::null())
        .spawn()
        .map_err(|e| format!("{cmd:?}: {e}"))?;
    let pid = child.id() as libc::pid_t;
    let mut status = 0;
    // SAFETY: all-zero is a valid rusage; wait4 fills it.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: waits for our own child, writing into locals we own.
    let r = unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
    let wall = start.elapsed().as_secs_f64();
    if r != pid || !libc::WIFEXITED(status) || libc::WEXITSTATUS(status) != 0 {
        return Err(format!("{cmd:?} failed (status {status})"));
    }
    let secs = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    let mut printed = String::new();
    if let Some(mut out) = child.stdout.take() {
        use std::io::Read;
        let _ = out.read_to_string(&mut printed);
    }
    Ok((
        Run {
            wall,
            cpu: secs(usage.ru_utime) + secs(usage.ru_stime),
            rss_kb: usage.ru_maxrss,
        },
        printed,
    ))
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn has(tool: &str) -> bool {
    Command::new(tool)
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
}

/// A service of our own with a heapprofd session for `cmdline`.
fn service_for(cmdline: &str) -> Result<(DaemonThread, Session, Endpoint), String> {
    let base = format!("zerotrace-heap-cost-{}", std::process::id());
    let service = DaemonThread::spawn(DaemonConfig {
        producer_sockets: vec![Endpoint::Abstract(format!("{base}-p"))],
        consumer_socket: Endpoint::Abstract(format!("{base}-c")),
        log_level: 0,
        ..DaemonConfig::default()
    })
    .map_err(|e| e.to_string())?;
    let p = service.producer_endpoints()[0].clone();
    let mut consumer =
        ConsumerClient::connect(service.consumer_endpoint()).map_err(|e| e.to_string())?;
    let mut w = HeapWriter::new();
    {
        let mut c = TraceConfig::from_message(w.root());
        c.add_buffers().set_size_kb(32 * 1024);
        let mut ds = c.add_data_sources();
        let mut dc = ds.begin_config();
        dc.set_name("android.heapprofd");
        // As heapprofd's own tool has it by default: the client waits for
        // room rather than end the profile early, so the figures are
        // those of a whole profile.
        dc.begin_heapprofd_config()
            .set_sampling_interval_bytes(4096)
            .set_block_client(true)
            .add_process_cmdline(cmdline);
    }
    let id = consumer
        .enable_tracing(&w.finish().map_err(|e| e.to_string())?, None)
        .map_err(|e| e.to_string())?;
    Ok((service, Session { consumer, id }, p))
}

/// A consumer and the session it started.
struct Session {
    consumer: ConsumerClient,
    id: EnableRequest,
}

impl Session {
    /// Ends the session; its trace.
    fn end(mut self) -> Result<Vec<u8>, String> {
        self.consumer.disable_tracing().map_err(|e| e.to_string())?;
        self.consumer
            .wait_for_end(self.id, Some(std::time::Duration::from_secs(30)))
            .map_err(|e| e.to_string())?;
        self.consumer.read_trace().map_err(|e| e.to_string())
    }
}

/// Checks a trace's heap profile is whole: samples taken, the buffer never
/// overran, no guardrail hit, the stream not corrupted; the samples.
fn whole_profile(trace: &[u8]) -> Result<u64, String> {
    profile_figures(trace).map(|(samples, _, _)| samples)
}

/// As [`whole_profile`]: the samples, `client_spinlock_blocked_us` and
/// `unwinding_errors`.
fn profile_figures(trace: &[u8]) -> Result<(u64, u64, u64), String> {
    let mut samples = 0;
    let mut blocked_us = 0;
    let mut errors = 0;
    for f in protozero::Decoder::new(trace).filter_map(Result::ok) {
        let Ok(b) = f.as_bytes() else { continue };
        if f.id != 1 {
            continue;
        }
        let Some(pp) = TracePacketDecoder::new(b).profile_packet() else {
            continue;
        };
        for d in pp.process_dumps() {
            if d.buffer_overran().unwrap_or(false)
                || d.hit_guardrail().unwrap_or(false)
                || d.buffer_corrupted().unwrap_or(false)
            {
                return Err("the profile ended early (overran, guardrail or corrupted)".into());
            }
            if let Some(st) = d.stats() {
                samples = samples.max(st.heap_samples().unwrap_or(0));
                blocked_us = blocked_us.max(st.client_spinlock_blocked_us().unwrap_or(0));
                errors = errors.max(st.unwinding_errors().unwrap_or(0));
            }
        }
    }
    if samples == 0 {
        return Err("no heap samples in the profile".into());
    }
    Ok((samples, blocked_us, errors))
}

fn main() -> Result<(), String> {
    let args: Vec<String> = std::env::args().collect();
    let table_rounds: usize = args.get(1).and_then(|a| a.parse().ok()).unwrap_or(5);
    let work = args.get(2).cloned().unwrap_or_else(|| "40".into());
    let only_churn = args.get(3).is_some_and(|a| a == "churn");
    let exe = std::env::current_exe().map_err(|e| e.to_string())?;
    let dir = exe.parent().ok_or("no examples directory")?.to_path_buf();
    let bin = |name: &str| dir.join(name);
    let tmp = std::env::temp_dir().join(format!("zerotrace-heap-cost-{}", std::process::id()));
    std::fs::create_dir_all(&tmp).map_err(|e| e.to_string())?;
    let profile_dir = dir.parent().ok_or("no profile directory")?;
    let lib = [profile_dir.to_path_buf(), profile_dir.join("deps")]
        .iter()
        .map(|d| d.join("libzerotrace_heapprofd.so"))
        .find(|p| p.exists())
        .ok_or("libzerotrace_heapprofd.so not built (cargo build --release -p zerotrace-heapprofd-preload)")?;

    // The C workload, built here.
    let c_src = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/heap_workload.c");
    let c_bin = tmp.join("heap_workload_c");
    let cc = Command::new("cc")
        .args(["-O2", "-g", "-o"])
        .arg(&c_bin)
        .arg(&c_src)
        .status()
        .map_err(|e| format!("cc: {e}"))?;
    if !cc.success() {
        return Err("cc failed".into());
    }
    let heaptrack = has("heaptrack");
    if !heaptrack {
        println!("heaptrack not installed: its rows are left out (Debian package heaptrack)");
    }
    churn(&tmp, &lib, table_rounds, heaptrack)?;
    if only_churn {
        let _ = std::fs::remove_dir_all(&tmp);
        return Ok(());
    }

    type Variant = (&'static str, Box<dyn Fn() -> Result<Run, String>>);
    let w = work.clone();
    let t = tmp.clone();
    let mut variants: Vec<Variant> = vec![
        (
            "rust plain",
            Box::new({
                let (b, w) = (bin("heap_workload_plain"), w.clone());
                move || timed(Command::new(&b).arg(&w))
            }),
        ),
        (
            "rust HeapProfiler idle",
            Box::new({
                let (b, w) = (bin("heap_workload_profiler"), w.clone());
                move || timed(Command::new(&b).args([w.as_str(), "idle"]))
            }),
        ),
        (
            "rust HeapProfiler, in-process session not profiling it",
            Box::new({
                let (b, w) = (bin("heap_workload_profiler"), w.clone());
                move || timed(Command::new(&b).args([w.as_str(), "traced"]))
            }),
        ),
        (
            "rust HeapProfiler 4096",
            Box::new({
                let (b, w, t) = (bin("heap_workload_profiler"), w.clone(), t.clone());
                let trace = t.join("rust-profiled.pftrace");
                move || {
                    let r = timed(
                        Command::new(&b)
                            .args([w.as_str(), "profiled", "4096"])
                            .arg(&trace),
                    )?;
                    let bytes = std::fs::read(&trace).map_err(|e| e.to_string())?;
                    whole_profile(&bytes)?;
                    Ok(r)
                }
            }),
        ),
        (
            "rust dhat-rs",
            Box::new({
                let (b, w, t) = (bin("heap_workload_dhat"), w.clone(), t.clone());
                move || timed(Command::new(&b).arg(&w).current_dir(&t))
            }),
        ),
    ];
    if heaptrack {
        let (b, w, t) = (bin("heap_workload_plain"), work.clone(), tmp.clone());
        variants.push((
            "rust heaptrack",
            Box::new(move || {
                timed(
                    Command::new("heaptrack")
                        .arg("-o")
                        .arg(t.join("ht-rust"))
                        .arg(&b)
                        .arg(&w),
                )
            }),
        ));
    }
    let (cb, w2) = (c_bin.clone(), work.clone());
    variants.push((
        "c plain",
        Box::new(move || timed(Command::new(&cb).arg(&w2))),
    ));
    let (cb, w2, l) = (c_bin.clone(), work.clone(), lib.clone());
    variants.push((
        "c libzerotrace_heapprofd idle",
        Box::new(move || {
            // A service whose session profiles another program: the
            // library is loaded, its helper connected, nothing sampled.
            let (service, session, p) = service_for("no_such_program")?;
            let r = timed(
                Command::new(&cb)
                    .arg(&w2)
                    .env("LD_PRELOAD", &l)
                    .env("PERFETTO_PRODUCER_SOCK_NAME", p.to_string()),
            );
            let _ = session.end();
            drop(service);
            r
        }),
    ));
    let (cb, w2, l) = (c_bin.clone(), work.clone(), lib.clone());
    variants.push((
        "c libzerotrace_heapprofd 4096",
        Box::new(move || {
            let (service, session, p) = service_for("heap_workload_c")?;
            let r = timed(
                Command::new(&cb)
                    .arg(&w2)
                    .env("LD_PRELOAD", &l)
                    .env("PERFETTO_PRODUCER_SOCK_NAME", p.to_string())
                    .env("PERFETTO_HEAPPROFD_BLOCKING_INIT", "1"),
            );
            let whole = session.end().and_then(|t| whole_profile(&t));
            drop(service);
            whole?;
            r
        }),
    ));
    if heaptrack {
        let (cb, w2, t) = (c_bin.clone(), work.clone(), tmp.clone());
        variants.push((
            "c heaptrack",
            Box::new(move || {
                timed(
                    Command::new("heaptrack")
                        .arg("-o")
                        .arg(t.join("ht-c"))
                        .arg(&cb)
                        .arg(&w2),
                )
            }),
        ));
    }

    // Rotated rounds: each round runs every variant once, starting one
    // further along, so drift in the machine's speed spreads evenly.
    let mut runs: Vec<Vec<Run>> = vec![Vec::new(); variants.len()];
    let _ = (variants[0].1)(); // warm-up: page cache, binaries
    for round in 0..table_rounds {
        for k in 0..variants.len() {
            let i = (round + k) % variants.len();
            runs[i].push((variants[i].1)()?);
        }
    }
    let wall = |i: usize| median(runs[i].iter().map(|r| r.wall).collect());
    let cpu = |i: usize| median(runs[i].iter().map(|r| r.cpu).collect());
    let rss = |i: usize| median(runs[i].iter().map(|r| r.rss_kb as f64).collect());
    let base_of = |name: &str| {
        if name.starts_with("c ") {
            variants.iter().position(|v| v.0 == "c plain")
        } else {
            Some(0)
        }
    };
    println!(
        "{} rounds, workload {work} rounds; medians (wall s, CPU s, peak RSS MiB) and wall ratio to plain",
        table_rounds
    );
    println!("| variant | wall s | CPU s | peak RSS MiB | wall / plain |");
    println!("|---|---:|---:|---:|---:|");
    for (i, (name, _)) in variants.iter().enumerate() {
        let b = base_of(name).unwrap_or(0);
        println!(
            "| {name} | {:.3} | {:.3} | {:.1} | {:.2}x |",
            wall(i),
            cpu(i),
            rss(i) / 1024.0,
            wall(i) / wall(b)
        );
    }
    let ratio = |n: &str| {
        variants
            .iter()
            .position(|v| v.0 == n)
            .map(|i| wall(i) / wall(base_of(n).unwrap_or(0)))
    };
    for (n, goal) in [
        ("rust HeapProfiler idle", 1.05),
        ("rust HeapProfiler 4096", 1.5),
        ("c libzerotrace_heapprofd idle", 1.05),
        ("c libzerotrace_heapprofd 4096", 1.5),
    ] {
        if let Some(r) = ratio(n) {
            println!(
                "goal {n} <= {goal}x: {r:.2}x ({})",
                if r <= goal { "met" } else { "NOT met" }
            );
        }
    }
    memory(&bin("heap_hold"), &tmp, &lib, table_rounds.min(3))?;
    let _ = std::fs::remove_dir_all(&tmp);
    Ok(())
}

/// The profiler's own memory against the profiled heap: peak RSS with
/// and without the profiler, holding 64, 256 and 1024 MiB of small blocks
/// live, sampled at 4096 bytes; the growth is fitted (least squares) as a
/// fixed cost plus a share of the heap (the goal: at most 1% plus a fixed
/// cost). Peak RSS swings by a MiB or so from run to run, which over 64 to
/// 256 MiB alone moved the fitted share by half a point; up to 1024 MiB
/// it moves it by a tenth. For the preload library, the helper process's
/// peak RSS counts too.
fn memory(rust: &Path, tmp: &Path, lib: &Path, rounds: usize) -> Result<(), String> {
    let c_src = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/heap_hold.c");
    let c_bin = tmp.join("heap_hold_c");
    std::fs::create_dir_all(tmp).map_err(|e| e.to_string())?;
    let cc = Command::new("cc")
        .args(["-O2", "-o"])
        .arg(&c_bin)
        .arg(&c_src)
        .status()
        .map_err(|e| format!("cc: {e}"))?;
    if !cc.success() {
        return Err("cc failed".into());
    }
    let sizes = [64u64, 256, 1024];
    let peak = |cmd: &mut Command| -> Result<f64, String> {
        let (r, out) = timed_output(cmd.stdout(Stdio::piped()))?;
        let helper: f64 = out
            .rsplit("helper ")
            .next()
            .and_then(|v| v.trim().parse().ok())
            .unwrap_or(0.0);
        Ok((r.rss_kb as f64 + helper) / 1024.0)
    };
    println!();
    println!("Profiler memory: peak RSS MiB (the preload's helper included), 4096-byte sampling");
    println!("| variant | heap MiB | without | with | growth MiB | growth / heap |");
    println!("|---|---:|---:|---:|---:|---:|");
    let mut fits = Vec::new();
    for lang in ["rust HeapProfiler", "c libzerotrace_heapprofd"] {
        let mut growth = Vec::new();
        for mib in sizes {
            let m = mib.to_string();
            let (mut without, mut with) = (Vec::new(), Vec::new());
            for _ in 0..rounds {
                if lang.starts_with("rust") {
                    without.push(peak(Command::new(rust).args([m.as_str(), "idle"]))?);
                    let trace = tmp.join("hold.pftrace");
                    with.push(peak(
                        Command::new(rust)
                            .args([m.as_str(), "profiled"])
                            .arg(&trace),
                    )?);
                    whole_profile(&std::fs::read(&trace).map_err(|e| e.to_string())?)?;
                } else {
                    without.push(peak(Command::new(&c_bin).arg(&m))?);
                    let (service, session, p) = service_for("heap_hold_c")?;
                    let r = peak(
                        Command::new(&c_bin)
                            .arg(&m)
                            .env("LD_PRELOAD", lib)
                            .env("PERFETTO_PRODUCER_SOCK_NAME", p.to_string())
                            .env("PERFETTO_HEAPPROFD_BLOCKING_INIT", "1"),
                    );
                    let whole = session.end().and_then(|t| whole_profile(&t));
                    drop(service);
                    whole?;
                    with.push(r?);
                }
            }
            let (a, b) = (median(without), median(with));
            growth.push(b - a);
            println!(
                "| {lang} | {mib} | {a:.1} | {b:.1} | {:.1} | {:.2}% |",
                b - a,
                (b - a) / mib as f64 * 100.0
            );
        }
        let (share, fixed) = line_fit(&sizes.map(|m| m as f64), &growth);
        fits.push((lang, share, fixed));
    }
    for (lang, share, fixed) in fits {
        println!(
            "goal {lang} memory <= 1% of the heap + fixed: {:.2}% + {fixed:.1} MiB ({})",
            share * 100.0,
            if share <= 0.01 { "met" } else { "NOT met" }
        );
    }
    Ok(())
}

/// The least-squares line through `(x, y)`: (slope, intercept).
fn line_fit(x: &[f64], y: &[f64]) -> (f64, f64) {
    let n = x.len().min(y.len()) as f64;
    let (mx, my) = (x.iter().sum::<f64>() / n, y.iter().sum::<f64>() / n);
    let sxy: f64 = x.iter().zip(y).map(|(a, b)| (a - mx) * (b - my)).sum();
    let sxx: f64 = x.iter().map(|a| (a - mx) * (a - mx)).sum();
    let slope = if sxx > 0.0 { sxy / sxx } else { 0.0 };
    (slope, my - slope * mx)
}

/// Issue #51's table: the allocation-heavy C program (`heap_churn.c`)
/// plain, preload idle, preload lossless at 4096 bytes, heaptrack, in
/// rotated rounds; the medians, the ratios and the goals.
fn churn(tmp: &Path, lib: &Path, rounds: usize, heaptrack: bool) -> Result<(), String> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/heap_churn.c");
    let bin = tmp.join("heap_churn_c");
    let cc = Command::new("cc")
        .args(["-O2", "-g", "-o"])
        .arg(&bin)
        .arg(&src)
        .status()
        .map_err(|e| format!("cc: {e}"))?;
    if !cc.success() {
        return Err("cc failed".into());
    }
    let names: Vec<&str> = [
        "plain",
        "preload idle",
        "preload 4096 lossless",
        "heaptrack",
    ]
    .into_iter()
    .filter(|n| heaptrack || *n != "heaptrack")
    .collect();
    let mut runs: Vec<Vec<Run>> = vec![Vec::new(); names.len()];
    let mut figures: Vec<(u64, u64, u64)> = Vec::new();
    let _ = timed(&mut Command::new(&bin)); // warm-up
    for round in 0..rounds {
        for k in 0..names.len() {
            let i = (round + k) % names.len();
            let r = match names[i] {
                "plain" => timed(&mut Command::new(&bin))?,
                "preload idle" => {
                    let (service, session, p) = service_for("no_such_program")?;
                    let r = timed(
                        Command::new(&bin)
                            .env("LD_PRELOAD", lib)
                            .env("PERFETTO_PRODUCER_SOCK_NAME", p.to_string()),
                    );
                    let _ = session.end();
                    drop(service);
                    r?
                }
                "preload 4096 lossless" => {
                    let (service, session, p) = service_for("heap_churn_c")?;
                    let r = timed(
                        Command::new(&bin)
                            .env("LD_PRELOAD", lib)
                            .env("PERFETTO_PRODUCER_SOCK_NAME", p.to_string())
                            .env("PERFETTO_HEAPPROFD_BLOCKING_INIT", "1"),
                    );
                    let f = session.end().and_then(|t| profile_figures(&t));
                    drop(service);
                    figures.push(f?);
                    r?
                }
                _ => timed(
                    Command::new("heaptrack")
                        .arg("-o")
                        .arg(tmp.join("ht-churn"))
                        .arg(&bin),
                )?,
            };
            runs[i].push(r);
        }
    }
    let wall = |i: usize| median(runs[i].iter().map(|r| r.wall).collect());
    let cpu = |i: usize| median(runs[i].iter().map(|r| r.cpu).collect());
    println!();
    println!(
        "Allocation-heavy C program (5 M malloc/free pairs, 16-4096 B), {rounds} rounds; medians"
    );
    println!("| variant | wall s | CPU s | wall / plain |");
    println!("|---|---:|---:|---:|");
    for (i, n) in names.iter().enumerate() {
        println!(
            "| {n} | {:.3} | {:.3} | {:.2}x |",
            wall(i),
            cpu(i),
            wall(i) / wall(0)
        );
    }
    let at = |n: &str| names.iter().position(|v| *v == n);
    let (Some(idle), Some(prof)) = (at("preload idle"), at("preload 4096 lossless")) else {
        return Ok(());
    };
    let samples = median(figures.iter().map(|f| f.0 as f64).collect());
    let blocked = median(figures.iter().map(|f| f.1 as f64).collect());
    let errors = median(figures.iter().map(|f| f.2 as f64).collect());
    let vs_plain = wall(prof) / wall(0);
    println!(
        "samples {samples:.0}, unwinding_errors {errors:.0}, client_spinlock_blocked_us {blocked:.0}, client CPU per sample over idle {:.3} us",
        (cpu(prof) - cpu(idle)).max(0.0) / samples * 1e6
    );
    println!(
        "goal churn lossless 4096 <= 2.5x plain: {vs_plain:.2}x ({})",
        if vs_plain <= 2.5 { "met" } else { "NOT met" }
    );
    println!(
        "goal churn idle <= 1.05x plain: {:.2}x",
        wall(idle) / wall(0)
    );
    if let Some(ht) = at("heaptrack") {
        let r = wall(prof) / wall(ht);
        println!(
            "goal churn lossless 4096 <= 0.55x heaptrack: {r:.2}x ({})",
            if r <= 0.55 { "met" } else { "NOT met" }
        );
    }
    Ok(())
}
