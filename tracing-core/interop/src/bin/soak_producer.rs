//! A producer process of a soak (see `zerotrace_interop::soak`), on our
//! `ProducerClient`, which speaks to both services: `soak_producer --socket
//! P --id N --threads T --seconds S [--rate R] [--smb-kb K]` registers the
//! data source `zerotrace.soak`, and once a session starts it, writes from T
//! threads (one TraceWriter each) for S seconds, R packets a second per
//! thread (0: as fast as it can), the packets of
//! `zerotrace_interop::soak::payload`.
//!
//! It reports on stdout, a line each: `ready` (registered), `started`,
//! `written <thread> <packets> <drop_count>` per thread, `flushed` (the
//! service acknowledged the last commit); then it stays connected until its
//! stdin closes.

use std::io::{Read, Write};
use std::process::ExitCode;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use zerotrace_core::ipc::Endpoint;
use zerotrace_core::producer::{
    DataSourceSpec, Instance, ProducerClient, ProducerOptions, TraceWriter,
};
use zerotrace_interop::soak::{DATA_SOURCE, payload};

struct Args {
    socket: String,
    id: u32,
    threads: u32,
    seconds: f64,
    rate: u32,
    smb_kb: u32,
}

fn parse() -> Result<Args, String> {
    let mut a = Args {
        socket: String::new(),
        id: 0,
        threads: 4,
        seconds: 60.0,
        rate: 0,
        smb_kb: 0,
    };
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mut it = args.iter();
    while let Some(k) = it.next() {
        let v = it.next().ok_or(format!("{k} needs a value"))?;
        let num = |v: &str| v.parse::<u32>().map_err(|e| format!("{k} {v}: {e}"));
        match k.as_str() {
            "--socket" => a.socket = v.clone(),
            "--id" => a.id = num(v)?,
            "--threads" => a.threads = num(v)?,
            "--seconds" => a.seconds = v.parse().map_err(|e| format!("{k} {v}: {e}"))?,
            "--rate" => a.rate = num(v)?,
            "--smb-kb" => a.smb_kb = num(v)?,
            other => return Err(format!("unknown argument {other}")),
        }
    }
    if a.socket.is_empty() {
        return Err("--socket is required".into());
    }
    Ok(a)
}

fn say(out: &Mutex<std::io::Stdout>, line: &str) {
    let mut out = out
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let _ = writeln!(out, "{line}");
    let _ = out.flush();
}

/// Writes packet `seq` of writer `tag`; `true` if it reached the SMB (the
/// writer was not dropping when it ended).
fn write(w: &mut TraceWriter, tag: u64, seq: u32, last: bool, text: &mut String) -> bool {
    payload::fill(text, tag, seq);
    w.packet(|p| {
        p.set_timestamp(payload::timestamp(seq));
        let mut t = p.begin_for_testing();
        t.set_str(text);
        t.set_seq_value(seq);
        t.set_counter(tag);
        if last {
            t.set_is_last(true);
        }
    });
    !w.is_dropping()
}

/// One writer thread: packets for `seconds`, then final packets until one
/// lands (a dropped last packet could not be flagged by a later one).
fn writer_thread(mut w: TraceWriter, tag: u64, seconds: f64, rate: u32) -> (u32, u64) {
    let mut text = String::new();
    let start = Instant::now();
    let end = start + Duration::from_secs_f64(seconds);
    let mut seq = 0u32;
    loop {
        let now = Instant::now();
        if now >= end {
            break;
        }
        write(&mut w, tag, seq, false, &mut text);
        seq += 1;
        if rate > 0 {
            let due = start + Duration::from_secs_f64(f64::from(seq) / f64::from(rate));
            if due > now + Duration::from_millis(1) {
                std::thread::sleep(due - now);
            }
        }
    }
    loop {
        let landed = write(&mut w, tag, seq, true, &mut text);
        seq += 1;
        if landed {
            break;
        }
        std::thread::sleep(Duration::from_millis(1));
    }
    let drops = w.drop_count();
    let (tx, rx) = std::sync::mpsc::channel();
    w.flush(Some(Box::new(move || {
        let _ = tx.send(());
    })));
    let _ = rx.recv_timeout(Duration::from_secs(30));
    (seq, drops)
}

fn run(a: Args) -> Result<(), String> {
    let out = Arc::new(Mutex::new(std::io::stdout()));
    let producer = ProducerClient::connect(
        &Endpoint::Path(a.socket.clone().into()),
        ProducerOptions {
            name: format!("zerotrace-soak-{}", a.id),
            smb_size_hint: a.smb_kb * 1024,
            ..ProducerOptions::default()
        },
    )
    .map_err(|e| format!("connect: {e}"))?;
    producer
        .register_data_source(
            DataSourceSpec {
                name: DATA_SOURCE.into(),
                ..Default::default()
            },
            |_| {},
        )
        .map_err(|e| format!("register: {e}"))?;
    say(&out, "ready");
    let instance: Instance = producer
        .wait_for_start(DATA_SOURCE, Duration::from_secs(120))
        .map_err(|e| format!("waiting for the start: {e}"))?;
    say(&out, "started");
    let mut threads = Vec::new();
    for t in 0..a.threads {
        let w = producer
            .create_trace_writer_for(&instance)
            .map_err(|e| format!("writer: {e}"))?;
        let tag = payload::writer_tag(a.id, t);
        let (seconds, rate, out) = (a.seconds, a.rate, out.clone());
        threads.push(std::thread::spawn(move || {
            let (n, drops) = writer_thread(w, tag, seconds, rate);
            say(&out, &format!("written {t} {n} {drops}"));
        }));
    }
    for t in threads {
        t.join().map_err(|_| "a writer thread panicked")?;
    }
    producer
        .flush_blocking(Duration::from_secs(30))
        .map_err(|e| format!("flush: {e}"))?;
    say(&out, "flushed");
    let mut sink = [0u8; 64];
    let mut stdin = std::io::stdin();
    while matches!(stdin.read(&mut sink), Ok(n) if n > 0) {}
    drop(producer);
    Ok(())
}

fn main() -> ExitCode {
    match parse().and_then(run) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("soak_producer: {e}");
            ExitCode::FAILURE
        }
    }
}
