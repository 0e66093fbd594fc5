//! `zerotrace record`: a session from a config file (binary or text) or
//! from light options, as Perfetto's `perfetto` command takes them.

use std::collections::BTreeSet;
use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use clap::Args;
use prost_reflect::{DynamicMessage, ReflectMessage, Value};
use protozero::HeapWriter;
use zerotrace_core::consumer::{ConsumerClient, EnableRequest, SessionEnd};
use zerotrace_protos::protos::{FtraceConfig, ProcessStatsConfig};
use zerotrace_protos::protos::{TraceConfig, TraceConfigDecoder, TracingServiceStateDecoder};
use zerotrace_protos::upstream_tables::data_source_field;

use super::summary::{buffer_summary, human_bytes, per_data_source};
use super::{CliError, background, connect, read_input, setup_errors, write_output};
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
    /// Light config: how long to record (e.g. 10s, 500ms, 2m) [default: 10s]
    #[arg(short, long)]
    pub time: Option<String>,
    /// Light config: the buffer size (e.g. 32mb, 512kb) [default: 32mb]
    #[arg(short, long)]
    pub buffer: Option<String>,
    /// Light config: write into the file while recording, up to this size.
    #[arg(short, long)]
    pub size: Option<String>,
    /// Light config: another data source to enable (by name; repeatable).
    #[arg(long = "ds")]
    pub data_sources: Vec<String>,
    /// Light config, as Perfetto's `perfetto` command reads its events:
    /// `group/name` or `group/*` is an ftrace event; an atrace category
    /// name (sched, freq, idle, irq, workq, ...) is that category's kernel
    /// tracepoints (and adds linux.process_stats and linux.system_info);
    /// anything else, or any word prefixed `te:`, is a TrackEvent category
    /// glob (none: the defaults, everything not tagged slow or debug).
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

/// The positional words of the light config, sorted by what they name.
#[derive(Debug, Default, PartialEq, Eq)]
struct LightEvents<'a> {
    /// `group/name` and `group/*`: ftrace events.
    ftrace: Vec<&'a str>,
    /// Atrace category names: their kernel tracepoints.
    atrace: Vec<&'a str>,
    /// TrackEvent category globs.
    track_event: Vec<&'a str>,
}

impl<'a> LightEvents<'a> {
    fn of(words: &'a [String]) -> Self {
        let mut out = LightEvents::default();
        for w in words {
            if let Some(cat) = w.strip_prefix("te:") {
                out.track_event.push(cat);
            } else if w.contains('/') {
                out.ftrace.push(w);
            } else if zerotrace_probes::ftrace::config::atrace_category_names().any(|c| c == w) {
                out.atrace.push(w);
            } else {
                out.track_event.push(w);
            }
        }
        out
    }

    fn has_kernel(&self) -> bool {
        !self.ftrace.is_empty() || !self.atrace.is_empty()
    }
}

/// The config of the light options.
fn light_config(args: &RecordArgs) -> Result<Vec<u8>, CliError> {
    let duration = parse_duration(args.time.as_deref().unwrap_or("10s"))?;
    let buffer_kb = (parse_size(args.buffer.as_deref().unwrap_or("32mb"))? / 1024).max(4);
    let max_file = args.size.as_deref().map(parse_size).transpose()?;
    let mut w = HeapWriter::new();
    {
        let mut c = TraceConfig::from_message(w.root());
        // RING_BUFFER, as the perfetto command's light configs.
        c.add_buffers()
            .set_size_kb(buffer_kb.min(u32::MAX as u64) as u32)
            .set_fill_policy_raw(1);
        c.set_duration_ms(duration.as_millis().min(u32::MAX as u128) as u32);
        let light = LightEvents::of(&args.categories);
        // TrackEvent unless only kernel events were named.
        if !light.track_event.is_empty() || !light.has_kernel() {
            let mut te = c.add_data_sources();
            let mut cfg = te.begin_config();
            cfg.set_name("track_event");
            if !light.track_event.is_empty() {
                let mut t = cfg.begin_track_event_config();
                for cat in &light.track_event {
                    t.add_enabled_categories(cat);
                }
                t.add_disabled_categories("*");
            }
        }
        if light.has_kernel() {
            {
                let mut ds = c.add_data_sources();
                let mut cfg = ds.begin_config();
                cfg.set_name("linux.ftrace");
                let mut f = FtraceConfig::from_message(
                    cfg.message().begin_nested(data_source_field::FTRACE_CONFIG),
                );
                for e in &light.ftrace {
                    f.add_ftrace_events(e);
                }
                for a in &light.atrace {
                    f.add_atrace_categories(a);
                }
            }
            if !light.atrace.is_empty() {
                for name in ["linux.process_stats", "linux.system_info"] {
                    let mut ds = c.add_data_sources();
                    let mut cfg = ds.begin_config();
                    cfg.set_name(name);
                    if name == "linux.process_stats" {
                        ProcessStatsConfig::from_message(
                            cfg.message()
                                .begin_nested(data_source_field::PROCESS_STATS_CONFIG),
                        )
                        .set_scan_all_processes_on_start(true);
                    }
                }
            }
        }
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

/// A top-level field of an encoded TraceConfig, by name.
fn config_field(config: &[u8], name: &str) -> Option<Value> {
    let m = DynamicMessage::decode(schema::trace_config(), config).ok()?;
    let f = m.descriptor().get_field_by_name(name)?;
    m.has_field(&f).then(|| m.get_field(&f).into_owned())
}

/// Whether the config asks the service to write the file itself.
fn writes_into_file(config: &[u8]) -> bool {
    matches!(
        config_field(config, "write_into_file"),
        Some(Value::Bool(true))
    )
}

/// The config's `output_path` (the file the service creates), if any.
fn output_path(config: &[u8]) -> Option<String> {
    match config_field(config, "output_path") {
        Some(Value::String(p)) if !p.is_empty() => Some(p),
        _ => None,
    }
}

/// Options that would be parsed and then dropped are refused, before
/// anything else happens.
fn check_options(args: &RecordArgs) -> Result<(), CliError> {
    let light: Vec<&str> = [
        (args.time.is_some(), "-t/--time"),
        (args.buffer.is_some(), "-b/--buffer"),
        (args.size.is_some(), "-s/--size"),
        (!args.data_sources.is_empty(), "--ds"),
        (!args.categories.is_empty(), "categories"),
    ]
    .into_iter()
    .filter_map(|(given, name)| given.then_some(name))
    .collect();
    if args.attach.is_some() {
        if args.detach.is_some() {
            return Err(CliError::Usage(
                "--attach and --detach cannot be combined".into(),
            ));
        }
        if args.config.is_some() || args.txt || !light.is_empty() {
            return Err(CliError::Usage(
                "--attach takes no config (-c, --txt, -t, -b, -s, --ds, categories): the \
                 detached session has its own"
                    .into(),
            ));
        }
    }
    if args.config.is_some() && !light.is_empty() {
        return Err(CliError::Usage(format!(
            "-c/--config is the whole TraceConfig: {} would be ignored; put it in the config \
             or drop -c",
            light.join(", ")
        )));
    }
    if args.txt && args.config.is_none() {
        return Err(CliError::Usage(
            "--txt says the -c config file is text, but no -c was given".into(),
        ));
    }
    if args.background {
        if args.detach.is_some() || args.attach.is_some() {
            return Err(CliError::Usage(format!(
                "{} and --background cannot be combined",
                if args.detach.is_some() {
                    "--detach"
                } else {
                    "--attach"
                }
            )));
        }
        if args.out.as_deref() == Some(Path::new("-")) {
            return Err(CliError::Usage(
                "--background with -o -: the recorder's stdout goes nowhere once the command \
                 returns; give -o FILE"
                    .into(),
            ));
        }
    }
    Ok(())
}

/// Where the trace of a session ends up.
#[derive(Debug, Clone)]
enum Output {
    /// Read back over IPC when the session ends, into this file (`-`:
    /// stdout).
    Read(PathBuf),
    /// The service writes it while recording (`write_into_file`), into
    /// this file, when known (an `--attach` may not know it).
    ByService(Option<PathBuf>),
}

/// Where `--detach` notes the file a `write_into_file` session writes
/// into, so that `--attach` can say it (the service knows only the fd):
/// `$XDG_RUNTIME_DIR/zerotrace/detached/KEY`, else under `~/.cache`. The
/// key is hex-encoded into the name.
fn detach_note(key: &str) -> Option<PathBuf> {
    let base = std::env::var_os("XDG_RUNTIME_DIR")
        .filter(|d| !d.is_empty())
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")))?;
    let name: String = key.bytes().map(|b| format!("{b:02x}")).collect();
    Some(base.join("zerotrace").join("detached").join(name))
}

/// Notes where a detached session writes (best effort: the note only
/// serves the message of a later `--attach`).
fn write_detach_note(key: &str, file: &Path) {
    let Some(note) = detach_note(key) else { return };
    let file = std::fs::canonicalize(file).unwrap_or_else(|_| file.to_owned());
    if let Some(dir) = note.parent() {
        let _ = std::fs::create_dir_all(dir);
    }
    let _ = std::fs::write(&note, file.as_os_str().as_encoded_bytes());
}

/// The file a `--detach` noted for `key` (and forgets the note).
fn take_detach_note(key: &str) -> Option<PathBuf> {
    let note = detach_note(key)?;
    let bytes = std::fs::read(&note).ok()?;
    let _ = std::fs::remove_file(&note);
    String::from_utf8(bytes).ok().map(PathBuf::from)
}

/// Runs `record`.
pub fn run(socket: &str, args: RecordArgs) -> Result<(), CliError> {
    check_options(&args)?;
    if args.background {
        return background::start();
    }
    if let Some(key) = &args.attach {
        return attach(socket, key, args.out.as_deref(), args.no_clobber);
    }
    // The config is checked before the service is asked for anything.
    let config = config_bytes(&args)?;
    let into_file = writes_into_file(&config);
    let service_path = output_path(&config).filter(|_| into_file);
    let out = args.out.clone();
    if let Some(path) = &service_path {
        // As Perfetto's command: the config names the file, and the
        // service never replaces one.
        if out.is_some() {
            return Err(CliError::Usage(format!(
                "the config's output_path ({path}) names the trace file: drop -o"
            )));
        }
        if Path::new(path).exists() {
            return Err(CliError::io(
                path,
                "exists, and the service does not overwrite files (output_path)",
            ));
        }
    } else if args.detach.is_some() {
        if out.is_some() && !into_file {
            return Err(CliError::Usage(
                "--detach with -o: nothing would write that file, as the session is read back \
                 when it ends; give -o to `record --attach KEY` instead, or make the service \
                 write the file while recording (-s SIZE, or write_into_file in the config)"
                    .into(),
            ));
        }
        if out.is_none() && into_file {
            return Err(CliError::Usage(
                "the config writes into a file (write_into_file): -o FILE names it".into(),
            ));
        }
    } else if out.is_none() {
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
    let mut consumer = connect(socket)?;
    report_unserved(&mut consumer, &config);
    // What the probes will not do of this config, before it runs.
    for (ds, line) in setup_errors::refusals_of_config(&config) {
        eprintln!("zerotrace: warning: {ds}: {line}");
    }
    let (file, output) = match (&out, into_file, &service_path) {
        (_, true, Some(path)) => (None, Output::ByService(Some(PathBuf::from(path)))),
        (Some(path), true, None) if path.as_os_str() != "-" => (
            Some(std::fs::File::create(path).map_err(|e| CliError::io(path.display(), e))?),
            Output::ByService(Some(path.clone())),
        ),
        (_, true, None) => {
            return Err(CliError::Usage(
                "write_into_file needs a file, not stdout: -o FILE".into(),
            ));
        }
        (Some(path), false, _) => (None, Output::Read(path.clone())),
        // Detached, read back by a later --attach.
        (None, false, _) => (None, Output::Read(PathBuf::from("-"))),
    };
    let req = consumer
        .enable_tracing(&config, file.as_ref())
        .map_err(|e| CliError::Session(e.to_string()))?;
    if background::is_child() {
        // The parent returns once the session runs: one round trip after
        // EnableTracing, which the service answers in order, so a refusal
        // has come by then.
        let _ = consumer.trace_stats();
        if let Some(SessionEnd::Error(e)) = consumer
            .poll_end(req, Duration::ZERO)
            .map_err(|e| CliError::Session(e.to_string()))?
        {
            return Err(CliError::Session(e));
        }
        background::started();
    }
    if let Some(key) = &args.detach {
        consumer
            .detach(key)
            .map_err(|e| CliError::Session(format!("detach {key:?}: {e}")))?;
        match &output {
            Output::ByService(Some(path)) => {
                if file.is_some() {
                    write_detach_note(key, path);
                }
                eprintln!(
                    "zerotrace: session detached as {key:?}; the service writes it into {}; wait \
                     for its end with: zerotrace record --attach {key}",
                    path.display()
                );
            }
            _ => eprintln!(
                "zerotrace: session detached as {key:?}; get it with: zerotrace record --attach \
                 {key} -o FILE"
            ),
        }
        return Ok(());
    }
    finish(&mut consumer, req, &output, &config, args.no_clobber)
}

/// `--attach KEY`: waits for the detached session, then writes it to `-o`
/// (or, for a session the service writes into a file, says where).
fn attach(socket: &str, key: &str, out: Option<&Path>, no_clobber: bool) -> Result<(), CliError> {
    if let Some(out) = out
        && no_clobber
        && out.as_os_str() != "-"
        && out.exists()
    {
        // Before attaching: the session stays detached for another try.
        return Err(CliError::io(
            out.display(),
            "exists (and --no-clobber was given)",
        ));
    }
    let mut consumer = connect(socket)?;
    let config = consumer
        .attach(key)
        .map_err(|e| CliError::Session(format!("attach {key:?}: {e}")))?;
    let output = if writes_into_file(&config) {
        let path = output_path(&config)
            .map(PathBuf::from)
            .or_else(|| take_detach_note(key));
        if let Some(o) = out {
            eprintln!(
                "zerotrace: warning: -o {} is not used: the service writes this session into \
                 its own file",
                o.display()
            );
        }
        match &path {
            Some(p) => eprintln!(
                "zerotrace: attached to {key:?}; the service writes it into {}",
                p.display()
            ),
            None => eprintln!(
                "zerotrace: attached to {key:?}; the service writes it into the file named \
                 when it was detached"
            ),
        }
        Output::ByService(path)
    } else {
        let Some(out) = out else {
            // Leaving now would end the session: detach it again first.
            let again = consumer.detach(key);
            let kept = if again.is_ok() {
                "it stays detached"
            } else {
                "it could not be detached again"
            };
            return Err(CliError::Usage(format!(
                "session {key:?} is read back when it ends: give -o FILE ({kept})"
            )));
        };
        Output::Read(out.to_owned())
    };
    let req = consumer
        .enable_attach_notification()
        .map_err(|e| CliError::Session(e.to_string()))?;
    finish(&mut consumer, req, &output, &config, no_clobber)
}

/// Says which data sources of `config` no connected producer serves (a
/// config asking for `linux.ftrace` with no `traced_probes` records
/// nothing of it). Quiet if the service cannot be asked.
fn report_unserved(consumer: &mut ConsumerClient, config: &[u8]) {
    let Ok(state) = consumer.query_service_state() else {
        return;
    };
    let served: BTreeSet<String> = TracingServiceStateDecoder::new(&state)
        .data_sources()
        .filter_map(|d| d.ds_descriptor().and_then(|d| d.name().map(str::to_owned)))
        .collect();
    let mut unserved: Vec<String> = Vec::new();
    for ds in TraceConfigDecoder::new(config).data_sources() {
        if let Some(name) = ds.config().and_then(|c| c.name())
            && !served.contains(name)
            && !unserved.iter().any(|u| u == name)
        {
            unserved.push(name.to_owned());
        }
    }
    if !unserved.is_empty() {
        eprintln!(
            "zerotrace: warning: no connected producer serves {}: the trace holds nothing of \
             it unless a producer of it connects while recording",
            unserved.join(", ")
        );
    }
}

/// Waits for the session to end (Ctrl-C ends it early), then writes it.
fn finish(
    consumer: &mut ConsumerClient,
    req: EnableRequest,
    output: &Output,
    config: &[u8],
    no_clobber: bool,
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
    let out = match output {
        Output::ByService(None) => {
            eprintln!("zerotrace: the session ended; the service wrote it into its file");
            return Ok(());
        }
        Output::ByService(Some(path)) => {
            let trace = std::fs::read(path).unwrap_or_default();
            eprintln!(
                "zerotrace: the service wrote {} bytes to {}",
                trace.len(),
                path.display()
            );
            report_per_data_source(&trace, config);
            return Ok(());
        }
        Output::Read(out) => out,
    };
    let trace = consumer
        .read_trace()
        .map_err(|e| CliError::Session(format!("reading the trace: {e}")))?;
    write_output(out, &trace, no_clobber)?;
    if out.as_os_str() != "-" {
        eprintln!(
            "zerotrace: wrote {} bytes to {}",
            trace.len(),
            out.display()
        );
    }
    report_per_data_source(&trace, config);
    Ok(())
}

/// Says how many packets each data source wrote, counted in the trace:
/// see [`per_data_source`] for how sequences are attributed.
fn report_per_data_source(trace: &[u8], config: &[u8]) {
    let Ok(packets) = super::trace_reader::packets("the trace", trace) else {
        return;
    };
    let configured: Vec<String> = TraceConfigDecoder::new(config)
        .data_sources()
        .filter_map(|d| d.config().and_then(|c| c.name().map(str::to_owned)))
        .collect();
    let mut o = String::from(
        "zerotrace: packets per data source (sequences attributed by the packets they carry):\n",
    );
    for line in per_data_source(&packets, &configured) {
        o.push_str("  ");
        o.push_str(&line);
        o.push('\n');
    }
    // The setup errors the ftrace data source wrote into the trace (the
    // refused fields were said before the session started).
    let said: Vec<String> = setup_errors::refusals_of_config(config)
        .into_iter()
        .map(|(_, l)| l)
        .collect();
    let errors: Vec<String> = setup_errors::ftrace_setup_errors(packets.iter().map(|p| &p[..]))
        .into_iter()
        .filter(|e| !said.contains(e))
        .collect();
    if !errors.is_empty() {
        o.push_str("zerotrace: linux.ftrace setup errors (the trace's ftrace_stats):\n");
        for e in errors {
            o.push_str("  ");
            o.push_str(&e);
            o.push('\n');
        }
    }
    eprint!("{o}");
}

/// One progress line on the terminal: elapsed time, bytes in the buffers,
/// how full they are, and losses so far.
fn progress(consumer: &mut ConsumerClient, elapsed: Duration) {
    let Ok(stats) = consumer.trace_stats() else {
        return;
    };
    let s = buffer_summary(&stats);
    eprint!(
        "\r{:>6.1}s  {} received  buffers {:.0}% full  {} lost   ",
        elapsed.as_secs_f64(),
        human_bytes(s.bytes_written),
        s.fill_percent(),
        s.losses(),
    );
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

    fn light_text(words: &[&str]) -> String {
        #[derive(clap::Parser)]
        struct Cmd {
            #[command(flatten)]
            record: RecordArgs,
        }
        let args = <Cmd as clap::Parser>::parse_from(
            std::iter::once("record").chain(words.iter().copied()),
        );
        let cfg = light_config(&args.record).unwrap();
        crate::text_config::to_text(schema::trace_config(), &cfg).unwrap()
    }

    #[test]
    fn light_words_are_ftrace_events_atrace_categories_or_track_event_globs() {
        let words = [
            "sched/sched_switch",
            "power/*",
            "freq",
            "render*",
            "te:sched",
        ];
        let owned = words.map(String::from);
        let l = LightEvents::of(&owned);
        assert_eq!(l.ftrace, ["sched/sched_switch", "power/*"]);
        assert_eq!(l.atrace, ["freq"]);
        assert_eq!(l.track_event, ["render*", "sched"]);

        let text = light_text(&words);
        for want in [
            "name: \"linux.ftrace\"",
            "ftrace_events: [\"sched/sched_switch\", \"power/*\"]",
            "atrace_categories: [\"freq\"]",
            "name: \"linux.process_stats\"",
            "scan_all_processes_on_start: true",
            "name: \"linux.system_info\"",
            "name: \"track_event\"",
            "enabled_categories: [\"render*\", \"sched\"]",
        ] {
            assert!(text.contains(want), "{want} in\n{text}");
        }
        // Kernel events alone: no TrackEvent, and without atrace
        // categories no process_stats either.
        let text = light_text(&["sched/sched_switch"]);
        assert!(!text.contains("track_event"), "{text}");
        assert!(!text.contains("linux.process_stats"), "{text}");
        // No words: TrackEvent with its defaults, as before.
        let text = light_text(&[]);
        assert!(text.contains("name: \"track_event\""), "{text}");
        assert!(!text.contains("linux.ftrace"), "{text}");
    }
}
