//! The soak runner (`cargo xtask soak` runs it): `soak [--which
//! ours|genuine|both] [--producers 16] [--threads 4] [--seconds 60]
//! [--rate 2000] [--buffer-kb 32768] [--smb-kb 512] [--table-step 5]`
//! runs `zerotrace_interop::soak` on each service in turn and prints the
//! service's resident set over time, the packet counts and the checks.
//! Exits with failure when a check failed or a process did not exit cleanly.

use std::process::ExitCode;

use zerotrace_interop::services::Which;
use zerotrace_interop::soak::{self, SoakBins, SoakOptions, SoakReport};

fn parse() -> Result<(Vec<Which>, SoakOptions, usize), String> {
    let mut which = vec![Which::Zerotraced, Which::Genuine];
    let mut o = SoakOptions::long(Which::Zerotraced);
    let mut step = 5;
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mut it = args.iter();
    while let Some(k) = it.next() {
        let v = it.next().ok_or(format!("{k} needs a value"))?;
        let num = |v: &str| v.parse::<u32>().map_err(|e| format!("{k} {v}: {e}"));
        match k.as_str() {
            "--which" => {
                which = match v.as_str() {
                    "ours" => vec![Which::Zerotraced],
                    "genuine" => vec![Which::Genuine],
                    "both" => vec![Which::Zerotraced, Which::Genuine],
                    other => return Err(format!("--which {other}: ours, genuine or both")),
                }
            }
            "--producers" => o.producers = num(v)?,
            "--threads" => o.threads = num(v)?,
            "--seconds" => o.seconds = v.parse().map_err(|e| format!("{k} {v}: {e}"))?,
            "--rate" => o.rate = num(v)?,
            "--buffer-kb" => o.buffer_kb = num(v)?,
            "--smb-kb" => o.smb_kb = num(v)?,
            "--table-step" => step = num(v)? as usize,
            other => return Err(format!("unknown argument {other}")),
        }
    }
    Ok((which, o, step))
}

fn main() -> ExitCode {
    let (which, opts, step) = match parse() {
        Ok(p) => p,
        Err(e) => {
            eprintln!("soak: {e}");
            return ExitCode::FAILURE;
        }
    };
    let bins = match SoakBins::beside_current_exe() {
        Ok(b) => b,
        Err(e) => {
            eprintln!("soak: {e}");
            return ExitCode::FAILURE;
        }
    };
    let mut reports: Vec<SoakReport> = Vec::new();
    let mut ok = true;
    for w in which {
        let o = SoakOptions {
            which: w,
            ..opts.clone()
        };
        println!("== soak of {w:?}");
        match soak::run(&o, &bins) {
            Ok(r) => {
                println!("{}", r.table(step));
                println!("{}", r.summary());
                ok &= r.problem_count == 0 && r.exits_ok;
                reports.push(r);
            }
            Err(e) => {
                eprintln!("soak of {w:?}: {e}");
                ok = false;
            }
        }
    }
    if let [ours, genuine] = reports.as_slice() {
        println!("{}", soak::report::compare(ours, genuine));
    }
    if ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}
