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
//! `heap_cost [ROUNDS_OF_THE_TABLE] [WORKLOAD_ROUNDS]` (defaults 5, 40).
//! Run from `cargo xtask heap-cost`, which builds the examples first.

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Instant;

use protozero::HeapWriter;
use zerotrace_core::consumer::ConsumerClient;
use zerotrace_core::daemon::{DaemonConfig, DaemonThread};
use zerotrace_core::ipc::Endpoint;
use zerotrace_protos::protos::TraceConfig;

/// One run's figures.
#[derive(Debug, Clone, Copy)]
struct Run {
    wall: f64,
    cpu: f64,
    rss_kb: i64,
}

/// Runs `cmd` to its end; its wall time, CPU time and peak RSS.
fn timed(cmd: &mut Command) -> Result<Run, String> {
    let start = Instant::now();
    let child = cmd
        .stdout(Stdio::null())
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
    Ok(Run {
        wall,
        cpu: secs(usage.ru_utime) + secs(usage.ru_stime),
        rss_kb: usage.ru_maxrss,
    })
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
fn service_for(cmdline: &str) -> Result<(DaemonThread, ConsumerClient, Endpoint), String> {
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
        dc.begin_heapprofd_config()
            .set_sampling_interval_bytes(4096)
            .add_process_cmdline(cmdline);
    }
    consumer
        .enable_tracing(&w.finish().map_err(|e| e.to_string())?, None)
        .map_err(|e| e.to_string())?;
    Ok((service, consumer, p))
}

fn main() -> Result<(), String> {
    let args: Vec<String> = std::env::args().collect();
    let table_rounds: usize = args.get(1).and_then(|a| a.parse().ok()).unwrap_or(5);
    let work = args.get(2).cloned().unwrap_or_else(|| "40".into());
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
            "rust HeapProfiler 4096",
            Box::new({
                let (b, w) = (bin("heap_workload_profiler"), w.clone());
                move || timed(Command::new(&b).args([w.as_str(), "profiled", "4096"]))
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
            let (service, mut consumer, p) = service_for("no_such_program")?;
            let r = timed(
                Command::new(&cb)
                    .arg(&w2)
                    .env("LD_PRELOAD", &l)
                    .env("PERFETTO_PRODUCER_SOCK_NAME", p.to_string()),
            );
            let _ = consumer.disable_tracing();
            drop(service);
            r
        }),
    ));
    let (cb, w2, l) = (c_bin.clone(), work.clone(), lib.clone());
    variants.push((
        "c libzerotrace_heapprofd 4096",
        Box::new(move || {
            let (service, mut consumer, p) = service_for("heap_workload_c")?;
            let r = timed(
                Command::new(&cb)
                    .arg(&w2)
                    .env("LD_PRELOAD", &l)
                    .env("PERFETTO_PRODUCER_SOCK_NAME", p.to_string())
                    .env("PERFETTO_HEAPPROFD_BLOCKING_INIT", "1"),
            );
            let _ = consumer.disable_tracing();
            drop(service);
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
    let _ = std::fs::remove_dir_all(&tmp);
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
    Ok(())
}
