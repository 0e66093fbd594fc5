//! The genuine SDK clients (`genuine-producer`, `genuine-consumer` of the
//! `zerotrace-genuine-sdk` package) as child processes of a test.
//!
//! They cannot be linked into this package's binaries (which hold the
//! genuine service: one copy of Perfetto's amalgamation per binary), and
//! cargo builds another package's binaries for a test only when asked. So
//! [`bins`] asks: it runs `cargo build -p zerotrace-genuine-sdk --bins` with
//! the same cargo, workspace and target directory as the test run (a no-op
//! when they are fresh; the C SDK compiles once per target directory, see
//! the workspace's profile overrides) and takes the executables' paths from
//! cargo's JSON messages. `ZEROTRACE_GENUINE_SDK_BINS=<dir>` points at
//! prebuilt ones instead.

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::OnceLock;
use std::sync::mpsc::{Receiver, channel};
use std::time::Duration;

/// Paths of the two programs.
#[derive(Debug, Clone)]
pub struct SdkBins {
    /// `genuine-producer`.
    pub producer: PathBuf,
    /// `genuine-consumer`.
    pub consumer: PathBuf,
}

/// The genuine SDK programs, built on first use (see the module docs).
pub fn bins() -> &'static SdkBins {
    static BINS: OnceLock<SdkBins> = OnceLock::new();
    BINS.get_or_init(|| build().unwrap_or_else(|e| panic!("genuine SDK programs: {e}")))
}

fn build() -> Result<SdkBins, String> {
    if let Some(dir) = std::env::var_os("ZEROTRACE_GENUINE_SDK_BINS") {
        let dir = PathBuf::from(dir);
        return Ok(SdkBins {
            producer: dir.join("genuine-producer"),
            consumer: dir.join("genuine-consumer"),
        });
    }
    let workspace = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let out = Command::new(cargo)
        .current_dir(&workspace)
        .args([
            "build",
            "-p",
            "zerotrace-genuine-sdk",
            "--bins",
            "--message-format=json-render-diagnostics",
        ])
        .stderr(Stdio::inherit())
        .output()
        .map_err(|e| format!("running cargo: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "cargo build -p zerotrace-genuine-sdk: {}",
            out.status
        ));
    }
    let mut producer = None;
    let mut consumer = None;
    for line in out.stdout.split(|b| *b == b'\n') {
        let Ok(msg) = serde_json::from_slice::<serde_json::Value>(line) else {
            continue;
        };
        let (Some(name), Some(exe)) = (msg["target"]["name"].as_str(), msg["executable"].as_str())
        else {
            continue;
        };
        match name {
            "genuine-producer" => producer = Some(PathBuf::from(exe)),
            "genuine-consumer" => consumer = Some(PathBuf::from(exe)),
            _ => {}
        }
    }
    Ok(SdkBins {
        producer: producer.ok_or("cargo built no genuine-producer")?,
        consumer: consumer.ok_or("cargo built no genuine-consumer")?,
    })
}

/// A genuine SDK program running as a child of the test, killed when
/// dropped if still running. Its stdout lines (progress words) arrive on a
/// channel; its stderr goes to the test's.
#[derive(Debug)]
pub struct SdkProcess {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: Receiver<String>,
    name: &'static str,
}

impl SdkProcess {
    fn spawn(
        name: &'static str,
        exe: &Path,
        args: &[&str],
        producer_socket: &str,
        consumer_socket: &str,
    ) -> SdkProcess {
        let mut child = Command::new(exe)
            .args(args)
            .env("PERFETTO_PRODUCER_SOCK_NAME", producer_socket)
            .env("PERFETTO_CONSUMER_SOCK_NAME", consumer_socket)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap_or_else(|e| panic!("spawning {}: {e}", exe.display()));
        let stdout = child.stdout.take().expect("piped stdout");
        let (tx, lines) = channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        SdkProcess {
            stdin: child.stdin.take(),
            child,
            lines,
            name,
        }
    }

    /// Starts `genuine-producer` against the given sockets.
    pub fn producer(producer_socket: &str, consumer_socket: &str) -> SdkProcess {
        SdkProcess::spawn(
            "genuine-producer",
            &bins().producer,
            &["--timeout-s", "60"],
            producer_socket,
            consumer_socket,
        )
    }

    /// Starts `genuine-consumer` recording with the encoded TraceConfig in
    /// `config` into `out`; it waits for [`SdkProcess::proceed`] between
    /// starting and flushing.
    pub fn consumer(
        producer_socket: &str,
        consumer_socket: &str,
        config: &Path,
        out: &Path,
    ) -> SdkProcess {
        let config = config.to_str().expect("a UTF-8 path");
        let out = out.to_str().expect("a UTF-8 path");
        SdkProcess::spawn(
            "genuine-consumer",
            &bins().consumer,
            &["--config", config, "--out", out, "--wait-stdin"],
            producer_socket,
            consumer_socket,
        )
    }

    /// Waits for the progress line starting with `word`; returns it.
    pub fn expect(&mut self, word: &str, timeout: Duration) -> String {
        let deadline = std::time::Instant::now() + timeout;
        loop {
            let left = deadline.saturating_duration_since(std::time::Instant::now());
            match self.lines.recv_timeout(left) {
                Ok(line) if line.starts_with(word) => return line,
                Ok(_) => {}
                Err(_) => panic!(
                    "{} did not say {word:?} within {timeout:?} (exit status: {:?})",
                    self.name,
                    self.child.try_wait().ok().flatten()
                ),
            }
        }
    }

    /// The process id.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Lets a waiting consumer go on (a line on its stdin).
    pub fn proceed(&mut self) {
        if let Some(mut s) = self.stdin.take() {
            let _ = s.write_all(b"go\n");
        }
    }

    /// Waits for the process to exit successfully.
    pub fn wait_success(mut self, timeout: Duration) {
        let deadline = std::time::Instant::now() + timeout;
        loop {
            match self.child.try_wait().expect("wait for a child") {
                Some(status) => {
                    assert!(status.success(), "{} exited with {status}", self.name);
                    return;
                }
                None if std::time::Instant::now() > deadline => {
                    panic!("{} still running after {timeout:?}", self.name)
                }
                None => std::thread::sleep(Duration::from_millis(10)),
            }
        }
    }
}

impl Drop for SdkProcess {
    fn drop(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}
