//! `linux.perf` against the running kernel: a syscall-heavy child sampled
//! on the CPU clock with kernel frames (named from kallsyms), and a child
//! that blocks, found by the off-CPU config (`sched/sched_switch` as the
//! timebase). perf events need root (or a permissive
//! `perf_event_paranoid`); where they cannot be opened the tests say so in
//! one line and pass, unless `ZEROTRACE_REQUIRE_PERF=1`.
//! (Its own test binary, not a module of `all/`: its samplers must not
//! share the CPUs with other tests' work.)

mod producer_common;

use std::collections::HashMap;
use std::process::{Child, Command};
use std::time::Duration;

use producer_common::ds_config;
use protozero::Decoder;
use zerotrace_probes::perf::config::UserFrames;
use zerotrace_probes::producer::perf::PerfSource;
use zerotrace_probes::producer::{BufferSink, DataSource, ProbeContext};
use zerotrace_protos::protos::perf_event_config::UnwindMode;
use zerotrace_protos::protos::perf_events::Counter;
use zerotrace_protos::protos::{
    CallstackDecoder, FrameDecoder, InternedStringDecoder, MappingDecoder, PerfEventConfig,
    PerfSampleDecoder,
};
use zerotrace_protos::upstream_tables::{
    data_source_field, interned_data_field, packet_defaults_field, packet_field,
};

fn required() -> bool {
    std::env::var("ZEROTRACE_REQUIRE_PERF").is_ok_and(|v| v == "1")
}

/// A sample read back: pid and its frames' function names, leaf first.
#[derive(Debug)]
struct Back {
    pid: u32,
    names: Vec<String>,
}

/// Reads the samples of `packets`, resolving callstacks through the
/// sequence's interned data.
fn read_back(packets: &[Vec<u8>]) -> (Vec<Back>, bool) {
    let mut names: HashMap<u64, String> = HashMap::new();
    let mut frames: HashMap<u64, u64> = HashMap::new();
    let mut stacks: HashMap<u64, Vec<u64>> = HashMap::new();
    let mut out = Vec::new();
    let mut defaults = false;
    for p in packets {
        for f in Decoder::new(p) {
            let f = f.expect("packet decodes");
            match f.id {
                packet_field::TRACE_PACKET_DEFAULTS => defaults = true,
                packet_field::INTERNED_DATA => {
                    for g in Decoder::new(f.as_bytes().unwrap()) {
                        let g = g.expect("interned data decodes");
                        let b = g.as_bytes().unwrap();
                        match g.id {
                            interned_data_field::FUNCTION_NAMES => {
                                let s = InternedStringDecoder::new(b);
                                names.insert(
                                    s.iid().unwrap(),
                                    String::from_utf8_lossy(s.str().unwrap_or_default()).into(),
                                );
                            }
                            interned_data_field::FRAMES => {
                                let fr = FrameDecoder::new(b);
                                frames
                                    .insert(fr.iid().unwrap(), fr.function_name_id().unwrap_or(0));
                            }
                            interned_data_field::CALLSTACKS => {
                                let c = CallstackDecoder::new(b);
                                stacks.insert(c.iid().unwrap(), c.frame_ids().collect());
                            }
                            _ => {}
                        }
                    }
                }
                packet_field::PERF_SAMPLE => {
                    let s = PerfSampleDecoder::new(f.as_bytes().unwrap());
                    let Some(cs) = s.callstack_iid() else {
                        continue;
                    };
                    let mut n: Vec<String> = stacks[&cs]
                        .iter()
                        .map(|fr| names[&frames[fr]].clone())
                        .collect();
                    n.reverse();
                    out.push(Back {
                        pid: s.pid().unwrap(),
                        names: n,
                    });
                }
                _ => {}
            }
        }
    }
    (out, defaults)
}

/// A kernel frame as written: its function name, `rel_pc`, and its
/// mapping's start, end and load bias.
type KernelFrame = (String, u64, u64, u64, u64);

/// The interned frames of `packets` whose mapping is the kernel's (its
/// path the one component `kernel`, as upstream names it).
fn kernel_frames(packets: &[Vec<u8>]) -> Vec<KernelFrame> {
    let mut names: HashMap<u64, String> = HashMap::new();
    let mut paths: HashMap<u64, String> = HashMap::new();
    // iid → (path ids, start, end, load bias)
    let mut mappings: HashMap<u64, (Vec<u64>, u64, u64, u64)> = HashMap::new();
    // (function id, rel_pc, mapping id)
    let mut frames: Vec<(u64, u64, u64)> = Vec::new();
    for p in packets {
        for f in Decoder::new(p).filter_map(Result::ok) {
            if f.id != packet_field::INTERNED_DATA {
                continue;
            }
            for g in Decoder::new(f.as_bytes().unwrap()).filter_map(Result::ok) {
                let b = g.as_bytes().unwrap();
                let string = |b| {
                    let s = InternedStringDecoder::new(b);
                    let text = String::from_utf8_lossy(s.str().unwrap_or_default()).into_owned();
                    (s.iid().unwrap(), text)
                };
                match g.id {
                    interned_data_field::FUNCTION_NAMES => {
                        let (iid, text) = string(b);
                        names.insert(iid, text);
                    }
                    interned_data_field::MAPPING_PATHS => {
                        let (iid, text) = string(b);
                        paths.insert(iid, text);
                    }
                    interned_data_field::MAPPINGS => {
                        let m = MappingDecoder::new(b);
                        mappings.insert(
                            m.iid().unwrap(),
                            (
                                m.path_string_ids().collect(),
                                m.start().unwrap_or(0),
                                m.end().unwrap_or(0),
                                m.load_bias().unwrap_or(0),
                            ),
                        );
                    }
                    interned_data_field::FRAMES => {
                        let fr = FrameDecoder::new(b);
                        frames.push((
                            fr.function_name_id().unwrap_or(0),
                            fr.rel_pc().unwrap_or(0),
                            fr.mapping_id().unwrap_or(0),
                        ));
                    }
                    _ => {}
                }
            }
        }
    }
    frames
        .into_iter()
        .filter_map(|(name, rel_pc, mapping)| {
            let (path, start, end, bias) = &mappings[&mapping];
            let path: Vec<&str> = path.iter().map(|p| paths[p].as_str()).collect();
            (path == ["kernel"]).then(|| (names[&name].clone(), rel_pc, *start, *end, *bias))
        })
        .collect()
}

/// Issue 47: no kernel address in the trace. Every kernel frame has
/// `rel_pc` 0 in a mapping with no range or bias, and kernel frames are
/// one per function (two frames never share a name).
fn assert_no_kernel_address(packets: &[Vec<u8>]) {
    let frames = kernel_frames(packets);
    assert!(!frames.is_empty(), "kernel frames were recorded");
    for f in &frames {
        assert_eq!((f.1, f.2, f.3, f.4), (0, 0, 0, 0), "{f:?}");
    }
    let mut names: Vec<&str> = frames.iter().map(|f| f.0.as_str()).collect();
    names.sort_unstable();
    let all = names.len();
    names.dedup();
    assert_eq!(names.len(), all, "one frame per kernel function");
}

/// A syscall-heavy child: `dd` copying one byte at a time.
fn dd() -> Child {
    Command::new("dd")
        .args(["if=/dev/zero", "of=/dev/null", "bs=1", "count=2000000000"])
        .spawn()
        .expect("dd runs")
}

/// Records `config` for `ms` milliseconds while `child` runs; `None` when
/// perf events cannot be opened here (said in one line).
fn record(test: &str, config: Vec<u8>, child: &mut Child, ms: u64) -> Option<Vec<Vec<u8>>> {
    let ctx = ProbeContext::system();
    let mut probe = match PerfSource::system().create(&config, &ctx) {
        Ok(p) => p,
        Err(e) => {
            let _ = child.kill();
            assert!(!required(), "ZEROTRACE_REQUIRE_PERF=1 but {e}");
            println!("{test} did not run: {e}");
            return None;
        }
    };
    let mut sink = BufferSink::default();
    let now = || zerotrace_core::platform::boottime_ns();
    probe.start(now(), &mut sink);
    for _ in 0..ms / 50 {
        std::thread::sleep(Duration::from_millis(50));
        probe.poll(now(), &mut sink);
    }
    probe.stop(now(), &mut sink);
    let _ = child.kill();
    let _ = child.wait();
    Some(sink.packets)
}

fn perf_config(pid: u32, f: impl FnOnce(&mut PerfEventConfig<'_>)) -> Vec<u8> {
    ds_config("linux.perf", |m| {
        let mut c =
            PerfEventConfig::from_message(m.begin_nested(data_source_field::PERF_EVENT_CONFIG));
        f(&mut c);
        let mut cs = c.begin_callstack_sampling();
        cs.set_kernel_frames(true)
            .set_user_frames(UnwindMode::UnwindFramePointer);
        cs.begin_scope().add_target_pid(pid as i32);
    })
}

#[test]
fn cpu_clock_samples_a_syscall_loop_with_named_kernel_frames() {
    let mut child = dd();
    let pid = child.id();
    let config = perf_config(pid, |c| {
        let mut tb = c.begin_timebase();
        tb.set_frequency(1000).set_counter(Counter::SwCpuClock);
    });
    let Some(packets) = record("cpu_clock_samples_a_syscall_loop", config, &mut child, 600) else {
        return;
    };
    let (samples, defaults) = read_back(&packets);
    assert!(defaults, "the first packet carries trace_packet_defaults");
    assert!(samples.len() >= 50, "{} samples of dd", samples.len());
    assert!(samples.iter().all(|s| s.pid == pid), "only the target pid");
    let syscall_frames = samples
        .iter()
        .filter(|s| {
            s.names
                .iter()
                .any(|n| n.contains("sys_read") || n.contains("sys_write"))
        })
        .count();
    assert!(
        syscall_frames * 4 >= samples.len(),
        "{syscall_frames} of {} samples under a read/write syscall: {:?}",
        samples.len(),
        samples.first()
    );
    assert_no_kernel_address(&packets);
    let _ = UserFrames::FramePointer;
}

#[test]
fn the_off_cpu_config_finds_where_a_thread_blocks() {
    let mut child = Command::new("sh")
        .args(["-c", "while :; do sleep 0.01; done"])
        .spawn()
        .expect("sh runs");
    let pid = child.id();
    let config = ds_config("linux.perf", |m| {
        let mut c =
            PerfEventConfig::from_message(m.begin_nested(data_source_field::PERF_EVENT_CONFIG));
        {
            let mut tb = c.begin_timebase();
            tb.set_period(1);
            tb.begin_tracepoint().set_name("sched/sched_switch");
        }
        let mut cs = c.begin_callstack_sampling();
        cs.set_kernel_frames(true)
            .set_user_frames(UnwindMode::UnwindSkip);
        cs.begin_scope().add_target_pid(pid as i32);
    });
    let Some(packets) = record(
        "the_off_cpu_config_finds_where_a_thread_blocks",
        config,
        &mut child,
        500,
    ) else {
        return;
    };
    let (samples, _) = read_back(&packets);
    assert!(
        samples.len() >= 5,
        "{} switches of the shell",
        samples.len()
    );
    // The shell blocks in wait4 for its child: the switch out is under it.
    assert!(
        samples
            .iter()
            .any(|s| s.names.iter().any(|n| n.contains("schedule"))
                && s.names.iter().any(|n| n.contains("wait"))),
        "{:?}",
        samples.iter().take(3).collect::<Vec<_>>()
    );
    assert_no_kernel_address(&packets);
}

#[test]
fn dwarf_unwinding_names_user_frames_of_the_sampled_binary() {
    let mut child = dd();
    let pid = child.id();
    let config = ds_config("linux.perf", |m| {
        let mut c =
            PerfEventConfig::from_message(m.begin_nested(data_source_field::PERF_EVENT_CONFIG));
        c.begin_timebase().set_frequency(500);
        let mut cs = c.begin_callstack_sampling();
        cs.set_user_frames(UnwindMode::UnwindDwarf);
        cs.begin_scope().add_target_pid(pid as i32);
    });
    let Some(packets) = record("dwarf_unwinding_names_user_frames", config, &mut child, 500) else {
        return;
    };
    let (samples, _) = read_back(&packets);
    assert!(samples.len() >= 20, "{} samples of dd", samples.len());
    // dd's loop calls libc's read and write: named from libc's dynamic
    // symbols, with dd's own main (or its libc start) further out.
    let named = samples
        .iter()
        .filter(|s| {
            s.names.iter().any(|n| {
                n == "read"
                    || n == "__read"
                    || n == "write"
                    || n == "__write"
                    || n.contains("libc_start")
            })
        })
        .count();
    assert!(
        named * 2 >= samples.len(),
        "{named} of {} samples with a named libc frame: {:?}",
        samples.len(),
        samples.iter().take(2).collect::<Vec<_>>()
    );
}

/// Whether this machine's PMU samples CPU cycles on CPU 0: `Some(true)`
/// when `perf_event_open` of them opens, `Some(false)` when the kernel says
/// there is no such event (ENOENT, ENODEV, EOPNOTSUPP), `None` when perf
/// events are not allowed at all.
fn pmu_samples_cycles() -> Option<bool> {
    use perf_event_open_sys::bindings as sys;
    let mut a = sys::perf_event_attr {
        size: sys::PERF_ATTR_SIZE_VER5,
        type_: sys::PERF_TYPE_HARDWARE,
        config: u64::from(sys::PERF_COUNT_HW_CPU_CYCLES),
        ..sys::perf_event_attr::default()
    };
    a.set_disabled(1);
    a.set_freq(1);
    a.__bindgen_anon_1.sample_freq = 100;
    // SAFETY: a valid attr whose size says how much the kernel may read.
    let fd = unsafe { perf_event_open_sys::perf_event_open(&mut a, -1, 0, -1, 0) };
    if fd >= 0 {
        // SAFETY: the fd was just opened and is owned here.
        drop(unsafe { <std::os::fd::OwnedFd as std::os::fd::FromRawFd>::from_raw_fd(fd) });
        return Some(true);
    }
    match std::io::Error::last_os_error().raw_os_error() {
        Some(2 | 19 | 95) => Some(false),
        _ => None,
    }
}

/// A hardware counter samples where the machine's PMU counts cycles (as
/// `perf_event_open` of them says), and where it does not, is refused with
/// the error that says so (most virtual machines, this CI's among them).
#[test]
fn a_hardware_counter_samples_or_is_refused_clearly() {
    let Some(counted) = pmu_samples_cycles() else {
        assert!(
            !required(),
            "ZEROTRACE_REQUIRE_PERF=1 but perf events do not open"
        );
        println!("a_hardware_counter_samples_or_is_refused_clearly did not run");
        return;
    };
    let mut child = dd();
    let pid = child.id();
    let config = ds_config("linux.perf", |m| {
        let mut c =
            PerfEventConfig::from_message(m.begin_nested(data_source_field::PERF_EVENT_CONFIG));
        c.begin_timebase()
            .set_frequency(100)
            .set_counter(Counter::HwCpuCycles);
        let mut cs = c.begin_callstack_sampling();
        cs.set_kernel_frames(true);
        cs.begin_scope().add_target_pid(pid as i32);
    });
    let ctx = ProbeContext::system();
    let created = PerfSource::system().create(&config, &ctx);
    if counted {
        let mut probe = created.expect("the PMU counts cycles: the source starts");
        let mut sink = BufferSink::default();
        let now = || zerotrace_core::platform::boottime_ns();
        probe.start(now(), &mut sink);
        std::thread::sleep(Duration::from_millis(300));
        probe.stop(now(), &mut sink);
        let _ = child.kill();
        let _ = child.wait();
        let (samples, _) = read_back(&sink.packets);
        assert!(
            !samples.is_empty(),
            "cycles sampled where the PMU counts them"
        );
        println!("HW_CPU_CYCLES: {} samples", samples.len());
    } else {
        let _ = child.kill();
        let _ = child.wait();
        let e = created
            .err()
            .expect("no PMU counts cycles here: the source is refused")
            .to_string();
        assert!(
            e.contains("not counted on this machine")
                && e.contains("HW_CPU_CYCLES")
                && e.contains("SW_CPU_CLOCK"),
            "{e}"
        );
        println!("HW_CPU_CYCLES refused here: {e}");
    }
}

/// `modifiers: EVENT_MODIFIER_COUNT_USERSPACE` (field 12 of the timebase,
/// newer than the schema here): the CPU clock counts only while the
/// process runs its own code, so none of `dd`'s samples is taken in its
/// read/write syscalls (a third of them or more otherwise, as above).
#[test]
fn a_user_space_modifier_keeps_samples_out_of_the_kernel() {
    let mut child = dd();
    let pid = child.id();
    let config = perf_config(pid, |c| {
        let mut tb = c.begin_timebase();
        tb.set_frequency(1000).set_counter(Counter::SwCpuClock);
        tb.message().append_varint(12, 1);
    });
    let Some(packets) = record("a_user_space_modifier", config, &mut child, 400) else {
        return;
    };
    let (samples, _) = read_back(&packets);
    assert!(samples.len() >= 20, "{} samples of dd", samples.len());
    let in_kernel = samples
        .iter()
        .filter(|s| {
            s.names
                .iter()
                .any(|n| n.contains("sys_read") || n.contains("sys_write"))
        })
        .count();
    assert_eq!(in_kernel, 0, "{:?}", samples.first());
}

/// The clock of the defaults (`trace_packet_defaults.timestamp_clock_id`)
/// and the samples' timestamps, of `packets`.
fn clock_and_times(packets: &[Vec<u8>]) -> (Option<u64>, Vec<u64>) {
    let mut clock = None;
    let mut times = Vec::new();
    for p in packets {
        let mut ts = None;
        let mut is_sample = false;
        for f in Decoder::new(p) {
            let f = f.expect("packet decodes");
            match f.id {
                packet_field::TIMESTAMP => ts = f.as_u64().ok(),
                packet_field::PERF_SAMPLE => {
                    let s = PerfSampleDecoder::new(f.as_bytes().unwrap());
                    is_sample = s.kernel_records_lost().is_none();
                }
                packet_field::TRACE_PACKET_DEFAULTS => {
                    for g in Decoder::new(f.as_bytes().unwrap()) {
                        let g = g.expect("defaults decode");
                        if g.id == packet_defaults_field::TIMESTAMP_CLOCK_ID {
                            clock = g.as_u64().ok();
                        }
                    }
                }
                _ => {}
            }
        }
        if let (true, Some(ts)) = (is_sample, ts) {
            times.push(ts);
        }
    }
    (clock, times)
}

/// Now on the clock `BuiltinClock` id `id` names.
fn now_on(id: u64) -> u64 {
    use rustix::time::{ClockId, clock_gettime};
    let c = match id {
        1 => ClockId::Realtime,
        3 => ClockId::Monotonic,
        5 => ClockId::MonotonicRaw,
        6 => ClockId::Boottime,
        other => panic!("clock {other}"),
    };
    let t = clock_gettime(c);
    t.tv_sec as u64 * 1_000_000_000 + t.tv_nsec as u64
}

/// Samples are on BOOTTIME (the clock of the session's other packets)
/// unless the config names a clock or the kernel refuses BOOTTIME for the
/// event (tracepoints and hardware counters may sample in NMI context):
/// then MONOTONIC_RAW, said in the defaults. A named clock is used as
/// named, and where the kernel refuses it the source does not start. The
/// samples' times lie on the clock the defaults name.
#[test]
fn samples_are_on_boottime_unless_named_or_refused_by_the_kernel() {
    use zerotrace_protos::protos::perf_events::PerfClock;
    let run = |tracepoint: bool, clock: Option<PerfClock>| {
        let mut child = dd();
        let config = ds_config("linux.perf", |m| {
            let mut c =
                PerfEventConfig::from_message(m.begin_nested(data_source_field::PERF_EVENT_CONFIG));
            {
                let mut tb = c.begin_timebase();
                if tracepoint {
                    tb.set_period(1);
                    tb.begin_tracepoint().set_name("syscalls/sys_enter_read");
                } else {
                    tb.set_frequency(1000).set_counter(Counter::SwCpuClock);
                }
                if let Some(clock) = clock {
                    tb.set_timestamp_clock(clock);
                }
            }
        });
        let ctx = ProbeContext::system();
        let result = PerfSource::system().create(&config, &ctx).map(|mut probe| {
            let mut sink = BufferSink::default();
            let now = || zerotrace_core::platform::boottime_ns();
            probe.start(now(), &mut sink);
            std::thread::sleep(Duration::from_millis(200));
            probe.stop(now(), &mut sink);
            sink.packets
        });
        let _ = child.kill();
        let _ = child.wait();
        result
    };
    let check = |packets: &[Vec<u8>], before: u64, want: u64| {
        let (clock, times) = clock_and_times(packets);
        assert_eq!(clock, Some(want));
        assert!(!times.is_empty(), "samples");
        let after = now_on(want);
        assert!(
            times.iter().all(|&t| t >= before && t <= after),
            "samples within [{before}, {after}] of clock {want}: {:?}",
            &times[..times.len().min(3)]
        );
    };
    // The CPU clock: BOOTTIME by default, the named clock otherwise.
    for (named, id) in [
        (None, 6),
        (Some(PerfClock::Boottime), 6),
        (Some(PerfClock::MonotonicRaw), 5),
        (Some(PerfClock::Monotonic), 3),
    ] {
        let before = now_on(id);
        match run(false, named) {
            Ok(packets) => check(&packets, before, id),
            Err(e) => {
                assert!(!required(), "ZEROTRACE_REQUIRE_PERF=1 but {e}");
                println!("samples_are_on_boottime did not run: {e}");
                return;
            }
        }
    }
    // A tracepoint: BOOTTIME where the kernel takes it for tracepoints,
    // else MONOTONIC_RAW; named BOOTTIME then fails to start.
    let before_boot = now_on(6);
    let before_raw = now_on(5);
    let packets = run(true, None).expect("a tracepoint opens");
    let (clock, _) = clock_and_times(&packets);
    match clock {
        Some(6) => {
            check(&packets, before_boot, 6);
            assert!(run(true, Some(PerfClock::Boottime)).is_ok());
        }
        Some(5) => {
            check(&packets, before_raw, 5);
            let e = run(true, Some(PerfClock::Boottime))
                .expect_err("named BOOTTIME, refused by the kernel: the source does not start")
                .to_string();
            assert!(e.contains("perf_event_open"), "{e}");
        }
        other => panic!("clock {other:?}"),
    }
}

/// `raw_event.pmu_name` (field 5, newer than the schema here): the PMU's
/// type is read from sysfs (`software`, config 0: the CPU clock).
#[test]
fn a_raw_event_by_pmu_name_samples() {
    let mut child = dd();
    let pid = child.id();
    let config = perf_config(pid, |c| {
        let mut tb = c.begin_timebase();
        tb.set_frequency(1000);
        let mut r = tb.begin_raw_event();
        r.set_config(0);
        r.message().append_string(5, "software");
    });
    let Some(packets) = record("a_raw_event_by_pmu_name", config, &mut child, 300) else {
        return;
    };
    let (samples, _) = read_back(&packets);
    assert!(samples.len() >= 20, "{} samples of dd", samples.len());
    // A PMU this kernel does not have: the source does not start, and says
    // which name.
    let bad = perf_config(pid, |c| {
        let mut tb = c.begin_timebase();
        let mut r = tb.begin_raw_event();
        r.message().append_string(5, "no_such_pmu");
    });
    let e = PerfSource::system()
        .create(&bad, &ProbeContext::system())
        .err()
        .map(|e| e.to_string())
        .unwrap_or_default();
    assert!(e.contains("no_such_pmu"), "{e}");
}

/// A sample's counts: (cpu, pid, timebase_count, follower_counts).
type Counts = (u32, u32, Option<u64>, Vec<u64>);

/// Each sample's counts.
fn counts(packets: &[Vec<u8>]) -> Vec<Counts> {
    let mut out = Vec::new();
    for p in packets {
        for f in Decoder::new(p) {
            let f = f.expect("packet decodes");
            if f.id != packet_field::PERF_SAMPLE {
                continue;
            }
            let s = PerfSampleDecoder::new(f.as_bytes().unwrap());
            if s.kernel_records_lost().is_some() || s.pid().is_none() {
                continue;
            }
            out.push((
                s.cpu().unwrap_or(0),
                s.pid().unwrap(),
                s.timebase_count(),
                s.follower_counts().collect(),
            ));
        }
    }
    out
}

/// Records `config` for `ms` milliseconds, `child` killed after; `None`
/// where perf events cannot be opened.
fn record_counts(test: &str, config: Vec<u8>, child: &mut Child, ms: u64) -> Option<Vec<Counts>> {
    record(test, config, child, ms).map(|p| counts(&p))
}

/// Followers are read with every sample: each sample carries one count
/// per follower, and a follower that counts time on its CPU (the CPU
/// clock) only grows from one sample to the next on that CPU.
#[test]
fn follower_counts_are_read_back_with_each_sample() {
    let mut child = dd();
    let config = ds_config("linux.perf", |m| {
        let mut c =
            PerfEventConfig::from_message(m.begin_nested(data_source_field::PERF_EVENT_CONFIG));
        c.begin_timebase()
            .set_frequency(500)
            .set_counter(Counter::SwCpuClock);
        c.add_followers().set_counter(Counter::SwCpuClock);
        c.add_followers().set_counter(Counter::SwContextSwitches);
    });
    let Some(samples) = record_counts("follower_counts", config, &mut child, 300) else {
        return;
    };
    assert!(samples.len() >= 20, "{} samples", samples.len());
    assert!(
        samples
            .iter()
            .all(|(_, _, tb, f)| tb.is_some() && f.len() == 2),
        "{:?}",
        samples.first()
    );
    let mut last: HashMap<u32, u64> = HashMap::new();
    let mut grew = 0;
    for (cpu, _, _, f) in &samples {
        if let Some(&prev) = last.get(cpu) {
            assert!(f[0] >= prev, "cpu {cpu}: {} after {prev}", f[0]);
            grew += usize::from(f[0] > prev);
        }
        last.insert(*cpu, f[0]);
    }
    assert!(grew > 0, "the CPU clock follower counted time");
}

/// A tracepoint's `filter` is applied by the kernel: a `sched_switch`
/// timebase filtered to one process's switches samples that process only
/// (no callstacks, so nothing of ours filters by pid).
#[test]
fn a_tracepoint_filter_is_applied_in_the_kernel() {
    let mut child = Command::new("sh")
        .args(["-c", "while :; do sleep 0.01; done"])
        .spawn()
        .expect("sh runs");
    let pid = child.id();
    let config = ds_config("linux.perf", |m| {
        let mut c =
            PerfEventConfig::from_message(m.begin_nested(data_source_field::PERF_EVENT_CONFIG));
        let mut tb = c.begin_timebase();
        tb.set_period(1);
        tb.begin_tracepoint()
            .set_name("sched/sched_switch")
            .set_filter(&format!("prev_pid == {pid}"));
    });
    let Some(samples) = record_counts("a_tracepoint_filter", config, &mut child, 300) else {
        return;
    };
    assert!(
        samples.len() >= 5,
        "{} switches of the shell",
        samples.len()
    );
    assert!(
        samples.iter().all(|(_, p, _, _)| *p == pid),
        "only pid {pid}: {:?}",
        samples.iter().find(|(_, p, _, _)| *p != pid)
    );
}
