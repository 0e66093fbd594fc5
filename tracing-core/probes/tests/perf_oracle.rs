//! `linux.perf` against `perf` itself. The fixture program
//! (`tests/perf_fixture/fixture.rs`, built with and without frame pointers)
//! is sampled by our data source and, at the same time, by `perf record`
//! read back through `perf script`; the two must agree on each hot
//! function's share (within 5 points), on the caller chains from each leaf
//! to `main`, on the kernel frames of a syscall loop, and on where a
//! blocked thread waits (the off-CPU config). Root (perf events of another
//! process, kallsyms); where perf, rustc or perf events are missing each
//! test says so in one line, and fails under `ZEROTRACE_REQUIRE_PERF=1`.
//! (Its own test binary, not a module of `all/`: its samplers must not
//! share the CPUs with other tests' work.)

mod perf_fixture;

use std::collections::HashMap;

use perf_fixture::{
    Ours, PerfRecord, Running, Stack, fixture, leaf_shares, perf_config, read_back, records_lost,
    serial, state_clears, top_chain, unavailable,
};
use zerotrace_protos::protos::perf_event_config::UnwindMode;
use zerotrace_protos::protos::perf_events::Counter;

const LEAVES: [(&str, &str, f64); 3] = [
    ("fixture::leaf_a", "fixture::caller_a", 60.0),
    ("fixture::leaf_b", "fixture::caller_b", 30.0),
    ("fixture::leaf_c", "fixture::caller_c", 10.0),
];

/// `UNWIND_KERNEL_FRAME_POINTER` (upstream's value, newer than the schema).
const UNWIND_KERNEL_FRAME_POINTER: i32 = 4;

/// A 1 kHz CPU-clock config on `pid`, user frames by `mode` (raw value).
fn cpu_config(pid: u32, mode: i32, kernel_frames: bool) -> Vec<u8> {
    perf_config(|c| {
        c.begin_timebase()
            .set_frequency(1000)
            .set_counter(Counter::SwCpuClock);
        let mut cs = c.begin_callstack_sampling();
        cs.set_kernel_frames(kernel_frames)
            .set_user_frames_raw(mode);
        cs.begin_scope().add_target_pid(pid as i32);
    })
}

fn tmp(name: &str) -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join(name)
}

/// Each leaf's share in `ours` is within 5 points of perf's, and perf's
/// within 10 of the fixture's design (60/30/10: the oracle works).
fn assert_shares(what: &str, ours: &[Stack], perf: &[Stack], pid: u32) {
    let (o, p) = (leaf_shares(ours, pid), leaf_shares(perf, pid));
    let n_ours = ours.iter().filter(|s| s.pid == pid).count();
    let n_perf = perf.iter().filter(|s| s.pid == pid).count();
    assert!(n_ours >= 500, "{what}: {n_ours} samples of ours");
    assert!(n_perf >= 500, "{what}: {n_perf} samples of perf's");
    for (leaf, _, design) in LEAVES {
        let (so, sp) = (
            o.get(leaf).copied().unwrap_or(0.0),
            p.get(leaf).copied().unwrap_or(0.0),
        );
        println!("{what}: {leaf}: ours {so:.1}% ({n_ours} samples), perf {sp:.1}% ({n_perf})");
        assert!(
            (so - sp).abs() <= 5.0,
            "{what}: {leaf} {so:.1}% of ours, {sp:.1}% of perf's\nours {o:?}\nperf {p:?}"
        );
        assert!(
            (sp - design).abs() <= 10.0,
            "{what}: perf finds {leaf} at {sp:.1}%, the fixture means {design}%: {p:?}"
        );
    }
}

/// The most frequent chain under each leaf is the same in both, and is
/// `expected(leaf, caller)`.
fn assert_chains(
    what: &str,
    ours: &[Stack],
    perf: &[Stack],
    pid: u32,
    expected: impl Fn(&str, &str) -> Vec<String>,
) {
    for (leaf, caller, _) in LEAVES {
        let o = top_chain(ours, pid, leaf);
        let p = top_chain(perf, pid, leaf);
        assert_eq!(o, p, "{what}: the chains under {leaf}: ours, then perf's");
        assert_eq!(
            o,
            Some(expected(leaf, caller)),
            "{what}: the chain under {leaf}"
        );
    }
}

fn full_chain(leaf: &str, caller: &str) -> Vec<String> {
    vec![leaf.into(), caller.into(), "fixture::main".into()]
}

#[test]
fn dwarf_unwinding_agrees_with_perf_on_shares_and_chains() {
    let _g = serial();
    let test = "dwarf_unwinding_agrees_with_perf_on_shares_and_chains";
    if unavailable(test).is_some() {
        return;
    }
    let bin = fixture(false);
    let run = Running::start(&bin, "cpu");
    let pid = run.pid();
    let data = tmp("oracle_dwarf.data");
    let perf = PerfRecord::start(pid, &["-F", "1000", "--call-graph", "dwarf"], &data);
    let Some(mut ours) = Ours::start(
        test,
        &[cpu_config(pid, UnwindMode::UnwindDwarf as i32, false)],
    ) else {
        return;
    };
    // Halfway, the service's periodic clear of incremental state: the
    // samples after it resolve through entries interned anew.
    ours.run_for(1000);
    ours.clear_incremental_state();
    ours.run_for(1000);
    let packets = ours.stop();
    let theirs = perf.finish();
    drop(run);
    assert_eq!(state_clears(&packets[0]), 2, "the start and the clear");
    let ours = read_back(&packets[0]);
    // The ring buffers are drained when a quarter full: at 1 kHz with
    // 64 KiB stack copies and the default 256 pages nothing is lost on a
    // quiet machine (`cargo xtask perf-cost` counts it); here, beside perf
    // on two cores and whatever else runs, a few, and said.
    let lost = records_lost(&packets[0]);
    println!("kernel records lost: {lost}");
    assert!(
        lost * 10 <= ours.len() as u64,
        "{lost} records lost for {} samples",
        ours.len()
    );
    assert_shares("DWARF, no frame pointers", &ours, &theirs, pid);
    assert_chains("DWARF, no frame pointers", &ours, &theirs, pid, full_chain);
    // Bytes per sample: the trace's (interned callstacks) against
    // perf.data's (a copy of each stack).
    let trace_bytes: usize = packets[0].iter().map(|p| p.len() + 3).sum();
    let perf_bytes = PerfRecord::data_size(&data);
    let (n_ours, n_perf) = (ours.len().max(1), theirs.len().max(1));
    println!(
        "bytes per sample: ours {:.1}, perf.data {:.1}",
        trace_bytes as f64 / n_ours as f64,
        perf_bytes as f64 / n_perf as f64
    );
    let _ = std::fs::remove_file(&data);
}

/// The frame-pointer build, three ways at once: our `FRAME_POINTER` (the
/// chain walked in the stack copy), `KERNEL_FRAME_POINTER` (the kernel's
/// walk) and DWARF, against `perf --call-graph fp`. A frame-pointer walk
/// cannot see the caller of a leaf that sets up no frame (`leaf_c`), in
/// perf as in ours; DWARF can.
#[test]
fn frame_pointer_modes_agree_with_perf_and_dwarf_sees_past_a_frameless_leaf() {
    let _g = serial();
    let test = "frame_pointer_modes_agree_with_perf";
    if unavailable(test).is_some() {
        return;
    }
    let bin = fixture(true);
    let run = Running::start(&bin, "cpu");
    let pid = run.pid();
    let data = tmp("oracle_fp.data");
    let perf = PerfRecord::start(pid, &["-F", "1000", "--call-graph", "fp"], &data);
    let Some(mut ours) = Ours::start(
        test,
        &[
            cpu_config(pid, UnwindMode::UnwindFramePointer as i32, false),
            cpu_config(pid, UNWIND_KERNEL_FRAME_POINTER, false),
            cpu_config(pid, UnwindMode::UnwindDwarf as i32, false),
        ],
    ) else {
        return;
    };
    ours.run_for(2000);
    let packets = ours.stop();
    let theirs = perf.finish();
    drop(run);
    let _ = std::fs::remove_file(&data);
    let fp_chain = |leaf: &str, caller: &str| {
        if leaf == "fixture::leaf_c" {
            vec![leaf.into(), "fixture::main".into()]
        } else {
            full_chain(leaf, caller)
        }
    };
    for (i, what) in ["FRAME_POINTER", "KERNEL_FRAME_POINTER"].iter().enumerate() {
        let ours = read_back(&packets[i]);
        assert_shares(what, &ours, &theirs, pid);
        assert_chains(what, &ours, &theirs, pid, fp_chain);
    }
    let dwarf = read_back(&packets[2]);
    assert_shares("DWARF, frame pointers", &dwarf, &theirs, pid);
    for (leaf, caller, _) in LEAVES {
        assert_eq!(
            top_chain(&dwarf, pid, leaf),
            Some(full_chain(leaf, caller)),
            "DWARF on the frame-pointer build, under {leaf}"
        );
    }
}

/// Each kernel function's share of the samples (anywhere in the stack).
fn kernel_function_shares(stacks: &[Stack], pid: u32) -> HashMap<String, f64> {
    let mine: Vec<&Stack> = stacks.iter().filter(|s| s.pid == pid).collect();
    let mut counts: HashMap<String, usize> = HashMap::new();
    for s in &mine {
        let mut seen: Vec<&str> = s.kernel_names();
        seen.sort_unstable();
        seen.dedup();
        for n in seen {
            *counts.entry(n.to_owned()).or_default() += 1;
        }
    }
    counts
        .into_iter()
        .map(|(k, v)| (k, 100.0 * v as f64 / mine.len().max(1) as f64))
        .collect()
}

#[test]
fn kernel_frames_of_a_syscall_loop_are_named_as_perf_names_them() {
    let _g = serial();
    let test = "kernel_frames_of_a_syscall_loop_are_named_as_perf_names_them";
    if unavailable(test).is_some() {
        return;
    }
    let bin = fixture(false);
    let run = Running::start(&bin, "syscalls");
    let pid = run.pid();
    let data = tmp("oracle_syscalls.data");
    let perf = PerfRecord::start(pid, &["-F", "1000", "--call-graph", "dwarf"], &data);
    let Some(mut ours) = Ours::start(
        test,
        &[cpu_config(pid, UnwindMode::UnwindDwarf as i32, true)],
    ) else {
        return;
    };
    ours.run_for(1500);
    let packets = ours.stop();
    let theirs = perf.finish();
    drop(run);
    let _ = std::fs::remove_file(&data);
    let ours = read_back(&packets[0]);
    let (o, p) = (
        kernel_function_shares(&ours, pid),
        kernel_function_shares(&theirs, pid),
    );
    let mut hot: Vec<(&String, &f64)> = p.iter().filter(|(_, s)| **s >= 10.0).collect();
    hot.sort_by(|a, b| b.1.total_cmp(a.1));
    assert!(
        hot.len() >= 3,
        "perf sees the write syscall's kernel functions: {p:?}"
    );
    // Both sample the same loop, at different moments: a share's two
    // estimates differ by the sampling error of each (a binomial's), so the
    // bound is four of the difference's standard errors, and never under
    // 5 points (about 1,500 samples each gives about 7).
    let n_ours = ours.iter().filter(|s| s.pid == pid).count().max(1) as f64;
    let n_perf = theirs.iter().filter(|s| s.pid == pid).count().max(1) as f64;
    for (name, sp) in hot {
        let so = o.get(name).copied().unwrap_or(0.0);
        let q = sp / 100.0;
        let se = 100.0 * (q * (1.0 - q) * (1.0 / n_ours + 1.0 / n_perf)).sqrt();
        let bound = (4.0 * se).max(5.0);
        println!(
            "kernel {name}: ours {so:.1}% of {n_ours}, perf {sp:.1}% of {n_perf} (bound {bound:.1})"
        );
        assert!(
            (so - sp).abs() <= bound,
            "{name}: in {so:.1}% of our {n_ours} samples, {sp:.1}% of perf's {n_perf} (bound {bound:.1})\nours {o:?}"
        );
    }
    // Under the kernel frames, the user frames reach the loop.
    let in_loop = ours
        .iter()
        .filter(|s| s.user().contains(&"fixture::syscall_loop"))
        .count();
    assert!(
        in_loop * 10 >= ours.len() * 9,
        "{in_loop} of {} samples under fixture::syscall_loop",
        ours.len()
    );
}

#[test]
fn the_off_cpu_config_finds_the_blocking_function_as_perf_does() {
    let _g = serial();
    let test = "the_off_cpu_config_finds_the_blocking_function_as_perf_does";
    if unavailable(test).is_some() {
        return;
    }
    let bin = fixture(false);
    let run = Running::start(&bin, "block");
    let pid = run.pid();
    let data = tmp("oracle_block.data");
    let perf = PerfRecord::start(
        pid,
        &[
            "-e",
            "sched:sched_switch",
            "-c",
            "1",
            "--call-graph",
            "dwarf",
        ],
        &data,
    );
    let Some(mut ours) = Ours::start(
        test,
        &[perf_config(|c| {
            {
                let mut tb = c.begin_timebase();
                tb.set_period(1);
                tb.begin_tracepoint().set_name("sched/sched_switch");
            }
            let mut cs = c.begin_callstack_sampling();
            cs.set_kernel_frames(true)
                .set_user_frames(UnwindMode::UnwindDwarf);
            cs.begin_scope().add_target_pid(pid as i32);
        })],
    ) else {
        return;
    };
    ours.run_for(1000);
    let packets = ours.stop();
    let theirs = perf.finish();
    drop(run);
    let _ = std::fs::remove_file(&data);
    let ours = read_back(&packets[0]);
    // The main thread (tid = pid) blocks only in `wait_on_pipe`; the other
    // thread only sleeps in `pace_writer`.
    for (who, stacks) in [("ours", &ours), ("perf's", &theirs)] {
        let main: Vec<&Stack> = stacks
            .iter()
            .filter(|s| s.pid == pid && s.tid == pid)
            .collect();
        let waiting = main
            .iter()
            .filter(|s| s.user().contains(&"fixture::wait_on_pipe"))
            .count();
        assert!(
            main.len() >= 50 && waiting * 10 >= main.len() * 9,
            "{who}: {waiting} of {} switches of the main thread under fixture::wait_on_pipe: {:?}",
            main.len(),
            main.first()
        );
        let pacing = stacks
            .iter()
            .filter(|s| s.pid == pid && s.tid != pid)
            .filter(|s| s.user().contains(&"fixture::pace_writer"))
            .count();
        assert!(pacing >= 50, "{who}: {pacing} switches under pace_writer");
        println!(
            "off-CPU, {who}: {waiting} of {} main-thread switches in wait_on_pipe, {pacing} in pace_writer",
            main.len()
        );
    }
    // The switch out is a kernel frame of ours too.
    assert!(
        ours.iter()
            .any(|s| s.kernel_names().iter().any(|n| n.contains("schedule"))),
        "kernel frames under the switch"
    );
}
