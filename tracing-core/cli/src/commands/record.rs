//! `zerotrace record`: a session from a config file (binary or text) or
//! from light options, as Perfetto's `perfetto` command takes them.

use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use clap::Args;
use prost_reflect::{DynamicMessage, ReflectMessage, Value};
use protozero::HeapWriter;
use zerotrace_core::consumer::{ConsumerClient, EnableRequest, SessionEnd};
use zerotrace_protos::protos::TraceConfig;

use super::{CliError, connect, read_input, write_output};
use crate::{schema, text_config};

/// What `record` takes.
#[derive(Debug, Clone, Args)]
pub struct RecordArgs {
    /// A TraceConfig file (`-` for stdin): binary, or text with --txt.
    #[arg(short, long)]
    pub config: Option<PathBuf>,
    /// The config is text format.
    #[arg(long)]
    pub txt: bool,
    /// Where to write the trace (`-` for stdout).
    #[arg(short, long)]
    pub out: Option<PathBuf>,
    /// Light config: how long to record (e.g. 10s, 500ms, 2m).
    #[arg(short, long, default_value = "10s")]
    pub time: String,
    /// Light config: the buffer size (e.g. 32mb, 512kb).
    #[arg(short, long, default_value = "32mb")]
    pub buffer: String,
    /// Light config: write into the file while recording, up to this size.
    #[arg(short, long)]
    pub size: Option<String>,
    /// Light config: another data source to enable (by name; repeatable).
    #[arg(long = "ds")]
    pub data_sources: Vec<String>,
    /// Light config: TrackEvent categories to enable (globs; none: the
    /// defaults, everything not tagged slow or debug).
    pub categories: Vec<String>,
    /// Start, print the pid of the process that goes on recording, exit.
    #[arg(long)]
    pub background: bool,
    /// Start, then detach the session under KEY and exit (see --attach).
    #[arg(long, value_name = "KEY")]
    pub detach: Option<String>,
    /// Attach to the session detached under KEY, wait for it, write it.
    #[arg(long, value_name = "KEY")]
    pub attach: Option<String>,
    /// Refuse to overwrite an existing output file.
    #[arg(long)]
    pub no_clobber: bool,
}

/// Parses `10s`, `500ms`, `2m`, `1h` (a bare number is seconds).
fn parse_duration(s: &str) -> Result<Duration, CliError> {
    let bad = || CliError::Usage(format!("invalid duration {s:?} (use e.g. 10s, 500ms, 2m)"));
    let s = s.trim();
    let (num, unit) = s
        .find(|c: char| !c.is_ascii_digit())
        .map_or((s, ""), |i| s.split_at(i));
    let n: u64 = num.parse().map_err(|_| bad())?;
    let ms = match unit {
        "ms" => n,
        "" | "s" => n * 1000,
        "m" => n * 60_000,
        "h" => n * 3_600_000,
        _ => return Err(bad()),
    };
    Ok(Duration::from_millis(ms))
}

/// Parses `32mb`, `512kb`, `1gb`, `4096` (bytes) into bytes.
fn parse_size(s: &str) -> Result<u64, CliError> {
    let bad = || CliError::Usage(format!("invalid size {s:?} (use e.g. 32mb, 512kb)"));
    let lower = s.trim().to_ascii_lowercase();
    let (num, unit) = lower
        .find(|c: char| !c.is_ascii_digit())
        .map_or((lower.as_str(), ""), |i| lower.split_at(i));
    let n: u64 = num.parse().map_err(|_| bad())?;
    let mult = match unit {
        "" | "b" => 1,
        "k" | "kb" => 1 << 10,
        "m" | "mb" => 1 << 20,
        "g" | "gb" => 1 << 30,
        _ => return Err(bad()),
    };
    Ok(n * mult)
}

/// The config of the light options.
fn light_config(args: &RecordArgs) -> Result<Vec<u8>, CliError> {
    let duration = parse_duration(&args.time)?;
    let buffer_kb = (parse_size(&args.buffer)? / 1024).max(4);
    let max_file = args.size.as_deref().map(parse_size).transpose()?;
    let mut w = HeapWriter::new();
    {
        let mut c = TraceConfig::from_message(w.root());
        // RING_BUFFER, as the perfetto command's light configs.
        c.add_buffers()
            .set_size_kb(buffer_kb.min(u32::MAX as u64) as u32)
            .set_fill_policy_raw(1);
        c.set_duration_ms(duration.as_millis().min(u32::MAX as u128) as u32);
        let mut te = c.add_data_sources();
        let mut cfg = te.begin_config();
        cfg.set_name("track_event");
        if !args.categories.is_empty() {
            let mut t = cfg.begin_track_event_config();
            for cat in &args.categories {
                t.add_enabled_categories(cat);
            }
            t.add_disabled_categories("*");
        }
        drop(cfg);
        drop(te);
        for ds in &args.data_sources {
            c.add_data_sources().begin_config().set_name(ds);
        }
        if let Some(max) = max_file {
            c.set_write_into_file(true);
            c.set_max_file_size_bytes(max);
        }
    }
    w.finish()
        .map_err(|e| CliError::Usage(format!("light config: {e}")))
}

/// The config to record with, binary.
fn config_bytes(args: &RecordArgs) -> Result<Vec<u8>, CliError> {
    let Some(path) = &args.config else {
        return light_config(args);
    };
    let raw = read_input(path)?;
    if !args.txt {
        // Validate it: a binary config that does not decode is refused here.
        DynamicMessage::decode(schema::trace_config(), raw.as_slice()).map_err(|e| {
            CliError::Usage(format!(
                "{}: not a binary TraceConfig ({e}); pass --txt for a text config",
                path.display()
            ))
        })?;
        return Ok(raw);
    }
    let text = String::from_utf8(raw)
        .map_err(|_| CliError::Usage(format!("{}: the config is not UTF-8", path.display())))?;
    let name = if path.as_os_str() == "-" {
        "stdin".to_owned()
    } else {
        path.display().to_string()
    };
    text_config::parse(&name, &text).map_err(|e| CliError::Usage(e.to_string()))
}

/// Whether the config asks the service to write the file itself.
fn writes_into_file(config: &[u8]) -> bool {
    DynamicMessage::decode(schema::trace_config(), config)
        .ok()
        .and_then(|m| {
            let f = m.descriptor().get_field_by_name("write_into_file")?;
            Some(matches!(m.get_field(&f).as_ref(), Value::Bool(true)))
        })
        .unwrap_or(false)
}

/// Runs `record`.
pub fn run(socket: &str, args: RecordArgs) -> Result<(), CliError> {
    if args.background {
        return background(&args);
    }
    let out = args.out.clone();
    if args.detach.is_none() && out.is_none() {
        return Err(CliError::Usage(
            "record needs an output file: -o FILE (or - for stdout)".into(),
        ));
    }
    if let Some(out) = &out
        && args.no_clobber
        && out.as_os_str() != "-"
        && out.exists()
    {
        return Err(CliError::io(
            out.display(),
            "exists (and --no-clobber was given)",
        ));
    }
    // The config is checked before the service is asked for anything.
    let config = match args.attach {
        Some(_) => Vec::new(),
        None => config_bytes(&args)?,
    };
    let mut consumer = connect(socket)?;
    if let Some(key) = &args.attach {
        let _config = consumer
            .attach(key)
            .map_err(|e| CliError::Session(format!("attach {key:?}: {e}")))?;
        let req = consumer
            .enable_attach_notification()
            .map_err(|e| CliError::Session(e.to_string()))?;
        return finish(&mut consumer, req, out.as_deref(), false);
    }
    let into_file = writes_into_file(&config);
    let file = match (&out, into_file) {
        (Some(path), true) if path.as_os_str() != "-" => {
            Some(std::fs::File::create(path).map_err(|e| CliError::io(path.display(), e))?)
        }
        (_, true) => {
            return Err(CliError::Usage(
                "write_into_file needs a file, not stdout: -o FILE".into(),
            ));
        }
        _ => None,
    };
    let req = consumer
        .enable_tracing(&config, file.as_ref())
        .map_err(|e| CliError::Session(e.to_string()))?;
    if let Some(key) = &args.detach {
        consumer
            .detach(key)
            .map_err(|e| CliError::Session(format!("detach {key:?}: {e}")))?;
        eprintln!(
            "zerotrace: session detached as {key:?}; get it with: zerotrace record --attach {key} -o FILE"
        );
        return Ok(());
    }
    finish(&mut consumer, req, out.as_deref(), into_file)
}

/// Waits for the session to end (Ctrl-C ends it early), then writes it.
fn finish(
    consumer: &mut ConsumerClient,
    req: EnableRequest,
    out: Option<&Path>,
    into_file: bool,
) -> Result<(), CliError> {
    let stop = Arc::new(AtomicBool::new(false));
    for sig in [signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM] {
        signal_hook::flag::register(sig, stop.clone())
            .map_err(|e| CliError::Usage(format!("cannot handle signals: {e}")))?;
    }
    let tty = std::io::stderr().is_terminal();
    let start = Instant::now();
    let mut stopping = false;
    let mut last_progress = Instant::now();
    let end = loop {
        match consumer.poll_end(req, Duration::from_millis(100)) {
            Ok(Some(end)) => break end,
            Ok(None) => {}
            Err(e) => return Err(CliError::Session(e.to_string())),
        }
        if stop.load(Ordering::Relaxed) && !stopping {
            stopping = true;
            if tty {
                eprintln!();
            }
            eprintln!("zerotrace: stopping the session (interrupted)");
            consumer
                .disable_tracing()
                .map_err(|e| CliError::Session(e.to_string()))?;
        }
        if tty && !stopping && last_progress.elapsed() >= Duration::from_millis(500) {
            last_progress = Instant::now();
            progress(consumer, start.elapsed());
        }
    };
    if tty {
        eprintln!();
    }
    if let SessionEnd::Error(e) = end {
        return Err(CliError::Session(e));
    }
    if into_file {
        if let Some(out) = out {
            let len = std::fs::metadata(out).map_or(0, |m| m.len());
            eprintln!(
                "zerotrace: the service wrote {len} bytes to {}",
                out.display()
            );
        }
        return Ok(());
    }
    let trace = consumer
        .read_trace()
        .map_err(|e| CliError::Session(format!("reading the trace: {e}")))?;
    let Some(out) = out else { return Ok(()) };
    write_output(out, &trace)?;
    if out.as_os_str() != "-" {
        eprintln!(
            "zerotrace: wrote {} bytes to {}",
            trace.len(),
            out.display()
        );
    }
    Ok(())
}

/// One progress line on the terminal: elapsed time, bytes in the buffers,
/// how full they are, and losses so far.
fn progress(consumer: &mut ConsumerClient, elapsed: Duration) {
    let Ok(stats) = consumer.trace_stats() else {
        return;
    };
    let s = super::stats::buffer_summary(&stats);
    eprint!(
        "\r{:>6.1}s  {} received  buffers {:.0}% full  {} lost   ",
        elapsed.as_secs_f64(),
        human_bytes(s.bytes_written),
        s.fill_percent(),
        s.losses(),
    );
}

/// `1.5 MB`-style sizes.
pub(crate) fn human_bytes(n: u64) -> String {
    const UNITS: [&str; 4] = ["B", "KB", "MB", "GB"];
    let mut v = n as f64;
    let mut u = 0;
    while v >= 1024.0 && u + 1 < UNITS.len() {
        v /= 1024.0;
        u += 1;
    }
    if u == 0 {
        format!("{n} B")
    } else {
        format!("{v:.1} {}", UNITS[u])
    }
}

/// `--background`: the same command without it, in a child that outlives
/// us, detached from the terminal (its output goes nowhere; the trace file
/// is the result).
fn background(_args: &RecordArgs) -> Result<(), CliError> {
    let exe = std::env::current_exe().map_err(|e| CliError::io("the zerotrace binary", e))?;
    let rest: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| a != "--background")
        .collect();
    let child = std::process::Command::new(exe)
        .args(rest)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .map_err(|e| CliError::io("the background recorder", e))?;
    println!("{}", child.id());
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_and_sizes() {
        assert_eq!(parse_duration("10s").unwrap(), Duration::from_secs(10));
        assert_eq!(parse_duration("250ms").unwrap(), Duration::from_millis(250));
        assert_eq!(parse_duration("2m").unwrap(), Duration::from_secs(120));
        assert_eq!(parse_duration("3").unwrap(), Duration::from_secs(3));
        assert!(parse_duration("ten").is_err());
        assert_eq!(parse_size("32mb").unwrap(), 32 << 20);
        assert_eq!(parse_size("512KB").unwrap(), 512 << 10);
        assert_eq!(parse_size("4096").unwrap(), 4096);
        assert!(parse_size("5 parsecs").is_err());
        assert_eq!(human_bytes(1536), "1.5 KB");
    }
}
