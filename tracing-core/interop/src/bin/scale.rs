//! The scale sweep's runner (`cargo xtask scale` runs it): `scale
//! [--producers 1,16,64,256] [--seconds 8] [--rate 200] [--repeat 3]
//! [--buffer-kb 32768] [--smb-kb 256] [--svg target/scale/scale.svg]` runs
//! `zerotrace_interop::soak::scale` (both services, alternately, at every
//! point), prints each run and the table of both services' CPU per MB, and
//! writes the plot. Exits with failure when a run lost or damaged packets
//! or failed; says whether the goal holds either way.

use std::path::PathBuf;
use std::process::ExitCode;

use zerotrace_interop::soak::SoakBins;
use zerotrace_interop::soak::scale::{self, ScaleOptions};

fn parse() -> Result<(ScaleOptions, PathBuf), String> {
    let mut o = ScaleOptions::default();
    let mut svg = PathBuf::from("target/scale/scale.svg");
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mut it = args.iter();
    while let Some(k) = it.next() {
        let v = it.next().ok_or(format!("{k} needs a value"))?;
        let num = |v: &str| v.parse::<u32>().map_err(|e| format!("{k} {v}: {e}"));
        match k.as_str() {
            "--producers" => {
                o.producers = v.split(',').map(num).collect::<Result<_, _>>()?;
                if o.producers.is_empty() || o.producers.contains(&0) {
                    return Err("--producers: a comma-separated list of counts above 0".into());
                }
            }
            "--seconds" => o.seconds = v.parse().map_err(|e| format!("{k} {v}: {e}"))?,
            "--rate" => o.rate = num(v)?,
            "--repeat" => o.repeat = num(v)?,
            "--buffer-kb" => o.buffer_kb = num(v)?,
            "--smb-kb" => o.smb_kb = num(v)?,
            "--svg" => svg = PathBuf::from(v),
            other => return Err(format!("unknown argument {other}")),
        }
    }
    Ok((o, svg))
}

/// 256 producer processes need some 1,000 descriptors in the runner
/// (their pipes) and the service (their sockets and buffers): the soft
/// limit is raised to the hard one, inherited by the children.
fn raise_fd_limit() {
    use rustix::process::{Resource, getrlimit, setrlimit};
    let mut l = getrlimit(Resource::Nofile);
    if l.current < l.maximum {
        l.current = l.maximum;
        let _ = setrlimit(Resource::Nofile, l);
    }
}

fn main() -> ExitCode {
    let (opts, svg_path) = match parse() {
        Ok(p) => p,
        Err(e) => {
            eprintln!("scale: {e}");
            return ExitCode::FAILURE;
        }
    };
    let bins = match SoakBins::beside_current_exe() {
        Ok(b) => b,
        Err(e) => {
            eprintln!("scale: {e}");
            return ExitCode::FAILURE;
        }
    };
    raise_fd_limit();
    println!(
        "producers {:?}, {} packets/s each, {} s a run, {} run(s) of each service a point",
        opts.producers, opts.rate, opts.seconds, opts.repeat
    );
    let mut clean = true;
    let points = scale::run(&opts, &bins, |r| {
        println!(
            "{:?} with {} producers: {:.2} MB read, service CPU {:.3} s, {:.2} ms/MB; lost {} of {}, {} problems",
            r.which,
            r.producers,
            r.bytes as f64 / 1e6,
            r.cpu_secs,
            r.ms_per_mb(),
            r.lost,
            r.written,
            r.problems
        );
        clean &= r.problems == 0 && r.lost == 0;
    });
    let points = match points {
        Ok(p) => p,
        Err(e) => {
            eprintln!("scale: {e}");
            return ExitCode::FAILURE;
        }
    };
    println!();
    print!("{}", scale::table(&points));
    let met = scale::goal_met(&points);
    println!(
        "\ngoal (ours below the genuine service at every point, growing no faster): {}",
        if met { "met" } else { "NOT met" }
    );
    if let Some(dir) = svg_path.parent() {
        let _ = std::fs::create_dir_all(dir);
    }
    match std::fs::write(&svg_path, scale::svg(&points)) {
        Ok(()) => println!("plot: {}", svg_path.display()),
        Err(e) => {
            eprintln!("scale: writing {}: {e}", svg_path.display());
            return ExitCode::FAILURE;
        }
    }
    if clean {
        ExitCode::SUCCESS
    } else {
        eprintln!("scale: packets were lost or damaged (see above)");
        ExitCode::FAILURE
    }
}
