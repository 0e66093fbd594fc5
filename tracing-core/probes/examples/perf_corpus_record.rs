//! Records the unwinding corpus the `perf_unwind_corpus` bench replays
//! without root: samples of the oracle's fixture program
//! (`tests/perf_fixture/fixture.rs`, `cpu` mode), built without and with
//! frame pointers, as `linux.perf` gives them to its unwinder (the user
//! registers and the stack copy), with the process's maps and the fixture
//! binary laid out as a `/proc` root the unwinder reads as it reads the
//! real one:
//!
//! ```text
//! OUT/proc/1/maps                  the no-frame-pointer build's maps
//! OUT/proc/1/root/fixture_nofp     its binary
//! OUT/proc/1/samples               its samples
//! OUT/proc/2/...                   the same for the frame-pointer build
//! ```
//!
//! Only the fixture (our own program) is kept: its DWARF debug sections
//! are stripped at build time (`-C strip=debuginfo`; `.eh_frame` and
//! `.symtab` stay), its maps lines renamed to `/fixture_nofp` (or `_fp`)
//! with inode 0 so the replay opens the copy. Libc, the loader and the
//! vdso stay in the maps but not in the corpus, so an unwind that reaches
//! them ends there with `INVALID_ELF`. The fixture runs with an empty
//! environment and without address randomization (`ADDR_NO_RANDOMIZE`:
//! the kernel then does not move the stack top by up to 8 KiB), so the
//! stack copies (from the sampled sp to the end of `[stack]`) are small.
//!
//! `samples` is `ZTPERFC1`, then per sample the little-endian `ip`, `sp`,
//! `bp` (u64), a flags word (u32, bit 0: the copy filled the kernel's
//! maximum) and the copy's length (u32), then that many stack bytes.
//!
//! Run as root (perf events of every CPU), with `rustc` on the path:
//!
//! ```sh
//! cargo run --release -p zerotrace-probes --example perf_corpus_record -- \
//!     tracing-core/probes/benches/perf-corpus 300
//! ```

use std::io::{BufRead, BufReader, Write};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Mutex;
use std::time::Duration;

use protozero::{HeapWriter, Message};
use zerotrace_probes::perf::unwind::UserRegs;
use zerotrace_probes::producer::perf::{DwarfStacks, PerfSource, UserInput, UserStacks};
use zerotrace_probes::producer::{BufferSink, DataSource, ProbeContext};
use zerotrace_protos::protos::PerfEventConfig;
use zerotrace_protos::protos::perf_event_config::UnwindMode;
use zerotrace_protos::protos::perf_events::Counter;
use zerotrace_protos::protos::profiling::StackUnwindError;
use zerotrace_protos::upstream_tables::data_source_field;

/// The fixture's source.
const FIXTURE_SOURCE: &str = include_str!("../tests/perf_fixture/fixture.rs");

/// The samples file's first bytes.
const MAGIC: &[u8; 8] = b"ZTPERFC1";

/// One captured sample.
struct Captured {
    pid: u32,
    regs: UserRegs,
    maxed: bool,
    stack: Vec<u8>,
    /// Frames the live unwinder (libc and all) found.
    live_frames: usize,
}

/// What the recording unwinder captured (its factory is a plain `fn`).
static CAPTURED: Mutex<Vec<Captured>> = Mutex::new(Vec::new());

/// The data source's own DWARF unwinder, keeping each sample's input.
#[derive(Default)]
struct Recording(DwarfStacks);

impl UserStacks for Recording {
    fn unwind(
        &mut self,
        input: &UserInput<'_>,
    ) -> (
        Vec<zerotrace_probes::perf::intern::FrameDesc>,
        Option<StackUnwindError>,
    ) {
        let out = self.0.unwind(input);
        let s = input.sample;
        if let (Some(r), Some(stack)) = (s.regs_user, s.stack_user) {
            let mask = zerotrace_probes::perf::event::REGS_USER_MASK;
            let values: Vec<u64> = (0..64u32)
                .filter(|b| mask & (1 << b) != 0)
                .filter_map(|b| r.get(b))
                .collect();
            if let Ok(regs) = UserRegs::from_perf_x86_64(r.abi, mask, &values) {
                let maxed = stack.len() >= zerotrace_probes::perf::event::STACK_USER_BYTES as usize;
                CAPTURED
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .push(Captured {
                        pid: input.pid,
                        regs,
                        maxed,
                        stack: stack.to_vec(),
                        live_frames: out.0.len(),
                    });
            }
        }
        out
    }

    fn clear(&mut self) {
        self.0.clear();
    }
}

fn config(pid: u32) -> Vec<u8> {
    let mut w = HeapWriter::new();
    {
        let mut root: Message<'_> = w.root();
        root.append_string(data_source_field::NAME, "linux.perf");
        let mut c =
            PerfEventConfig::from_message(root.begin_nested(data_source_field::PERF_EVENT_CONFIG));
        c.begin_timebase()
            .set_frequency(1000)
            .set_counter(Counter::SwCpuClock);
        let mut cs = c.begin_callstack_sampling();
        cs.set_user_frames(UnwindMode::UnwindDwarf);
        cs.begin_scope().add_target_pid(pid as i32);
    }
    w.finish().expect("the config encodes")
}

/// Builds the fixture (`-C opt-level=2`, debug sections stripped, frame
/// pointers forced when `fp`) as `dir/name`.
fn build(dir: &Path, name: &str, fp: bool) -> PathBuf {
    let src = dir.join("fixture.rs");
    std::fs::write(&src, FIXTURE_SOURCE).expect("the fixture's source");
    let bin = dir.join(name);
    let mut rustc = Command::new("rustc");
    rustc
        .args([
            "--edition",
            "2024",
            "-C",
            "opt-level=2",
            "-C",
            "strip=debuginfo",
            "-o",
        ])
        .arg(&bin)
        .arg(&src);
    if fp {
        rustc.args(["-C", "force-frame-pointers=yes"]);
    }
    assert!(
        rustc.status().expect("rustc runs").success(),
        "the fixture builds"
    );
    bin
}

/// The maps text with the fixture's lines renamed to `/NAME`, inode 0.
fn normalize_maps(text: &str, bin: &Path, name: &str) -> String {
    let path = bin.to_string_lossy();
    let mut out = String::new();
    for line in text.lines() {
        if line.ends_with(path.as_ref()) {
            let fields: Vec<&str> = line.split_whitespace().collect();
            out.push_str(&format!(
                "{} {} {} {} 0 /{name}\n",
                fields[0], fields[1], fields[2], fields[3]
            ));
        } else {
            out.push_str(line);
            out.push('\n');
        }
    }
    out
}

/// Samples `bin` for `ms` and writes the first `keep` of its samples, its
/// maps and the binary under `out/proc/ID/`.
fn record(bin: &Path, name: &str, id: u32, ms: u64, keep: usize, out: &Path) {
    let mut cmd = Command::new(bin);
    cmd.arg("cpu").env_clear().stdout(Stdio::piped());
    // SAFETY: personality(2) is async-signal-safe and touches no memory
    // of the parent; between fork and exec nothing else runs.
    unsafe {
        cmd.pre_exec(|| {
            libc::personality(libc::ADDR_NO_RANDOMIZE as libc::c_ulong);
            Ok(())
        });
    }
    let mut child = cmd.spawn().expect("the fixture starts");
    let mut line = String::new();
    BufReader::new(child.stdout.take().expect("its stdout"))
        .read_line(&mut line)
        .expect("the fixture is ready");
    let pid = child.id();
    let maps = std::fs::read_to_string(format!("/proc/{pid}/maps")).expect("its maps");
    CAPTURED.lock().unwrap_or_else(|e| e.into_inner()).clear();
    let ctx = ProbeContext::system();
    let now = zerotrace_core::platform::boottime_ns;
    let mut probe = PerfSource::system()
        .with_unwinder(|| Box::new(Recording::default()))
        .create(&config(pid), &ctx)
        .expect("linux.perf starts (root?)");
    let mut sink = BufferSink::default();
    probe.start(now(), &mut sink);
    let end = now() + ms * 1_000_000;
    while now() < end {
        std::thread::sleep(Duration::from_millis(20));
        probe.poll(now(), &mut sink);
    }
    probe.stop(now(), &mut sink);
    let _ = child.kill();
    let _ = child.wait();

    let dir = out.join(format!("proc/{id}"));
    std::fs::create_dir_all(dir.join("root")).expect("the corpus directory");
    std::fs::write(dir.join("maps"), normalize_maps(&maps, bin, name)).expect("maps");
    std::fs::copy(bin, dir.join("root").join(name)).expect("the binary");
    let captured = std::mem::take(&mut *CAPTURED.lock().unwrap_or_else(|e| e.into_inner()));
    let mine: Vec<&Captured> = captured
        .iter()
        .filter(|c| c.pid == pid)
        .take(keep)
        .collect();
    let mut f =
        std::io::BufWriter::new(std::fs::File::create(dir.join("samples")).expect("samples"));
    f.write_all(MAGIC).expect("write");
    for c in &mine {
        for v in [c.regs.ip, c.regs.sp, c.regs.bp] {
            f.write_all(&v.to_le_bytes()).expect("write");
        }
        f.write_all(&u32::from(c.maxed).to_le_bytes())
            .expect("write");
        f.write_all(&(c.stack.len() as u32).to_le_bytes())
            .expect("write");
        f.write_all(&c.stack).expect("write");
    }
    f.flush().expect("write");
    let n = mine.len().max(1);
    println!(
        "{name}: {} samples kept of {}, stack copies {} bytes on average (max {}), \
         live unwinding {:.1} frames on average",
        mine.len(),
        captured.len(),
        mine.iter().map(|c| c.stack.len()).sum::<usize>() / n,
        mine.iter().map(|c| c.stack.len()).max().unwrap_or(0),
        mine.iter().map(|c| c.live_frames).sum::<usize>() as f64 / n as f64,
    );
}

fn main() {
    let mut args = std::env::args().skip(1);
    let out = PathBuf::from(
        args.next()
            .unwrap_or_else(|| "tracing-core/probes/benches/perf-corpus".into()),
    );
    let keep: usize = args.next().and_then(|s| s.parse().ok()).unwrap_or(300);
    let work = std::env::temp_dir().join(format!("zt-perf-corpus-{}", std::process::id()));
    std::fs::create_dir_all(&work).expect("a work directory");
    for (name, id, fp) in [("fixture_nofp", 1, false), ("fixture_fp", 2, true)] {
        let bin = build(&work, name, fp);
        record(&bin, name, id, 1500, keep, &out);
    }
    let _ = std::fs::remove_dir_all(&work);
}
